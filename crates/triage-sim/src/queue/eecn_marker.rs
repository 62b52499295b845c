//! The EECN router (EECN §4.3, eq. (1); §5 for coexistence with classic ECN).
//!
//! On every arriving ECN-capable packet the router computes the congestion level
//!
//! ```text
//! CL = (current queue + (γ/10 − α/10)) / total queue length          (eq. (1))
//! ```
//!
//! where γ and α are the measured arrival and departure rates in packets per second, so
//! γ/10 − α/10 is the change of the queue predicted over the next 100 ms. The rates are
//! measured over a sliding window (default 100 ms, ten 10 ms buckets): γ/10 is the number
//! of arrivals (accepted or not) in the window times `horizon / window`, and likewise α/10
//! for departures. Then (Th1 = 0.3, Th2 = 0.5, Table 3's choice):
//! - CL < Th1: no congestion; Th1 ≤ CL < Th2: CL(1), codepoint `10`; CL ≥ Th2: CL(2), `11`;
//! - a packet arriving with CL(2) (`11`, which is also a classic router's CE) passes
//!   unchanged; one with CL(1) (`10`, also classic ECT(0)) is raised to CL(2) when this
//!   router is at or above Th2 and passes unchanged otherwise; one with ECT(1) (`01`) gets
//!   this router's level; Not-ECT packets are never marked;
//! - packets are dropped only when the queue is full.
//!
//! A classic ECN flow's ECT(0) packets read as CL(1) here: they are raised to CE at CL(2),
//! which its receiver reads as congestion, so classic ECN keeps working through an EECN
//! router (§5, Fig. 5).

use triage_core::ecn::{eecn_codepoint, eecn_level_of};
use triage_core::wire::Ecn;

use super::{Backlog, Carried, QueueDiscipline, QueueStats, SimPacket, Verdict};

/// EECN router parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EecnMarkerConfig {
    /// Queue capacity in packets ("total length of the queue" in eq. (1)).
    pub limit_packets: u64,
    /// Th1 (CL(1) from here). Paper: 0.3.
    pub th1: f64,
    /// Th2 (CL(2) from here). Paper: 0.5.
    pub th2: f64,
    /// How far ahead eq. (1) predicts the queue. Paper: 100 ms.
    pub horizon_ns: u64,
    /// Window over which arrival and departure rates are measured.
    pub rate_window_ns: u64,
    /// Buckets the window is divided into.
    pub rate_buckets: u32,
}

impl Default for EecnMarkerConfig {
    fn default() -> Self {
        Self {
            limit_packets: 100,
            th1: 0.3,
            th2: 0.5,
            horizon_ns: 100_000_000,
            rate_window_ns: 100_000_000,
            rate_buckets: 10,
        }
    }
}

impl EecnMarkerConfig {
    /// Checks 0 < Th1 ≤ Th2, positive sizes and durations.
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 {
            return Err("packets: expected a positive queue size".into());
        }
        if !(self.th1 > 0.0 && self.th1 <= self.th2) {
            return Err(format!("th1/th2: expected 0 < th1 <= th2, got {} and {}", self.th1, self.th2));
        }
        for (name, d) in [("horizon", self.horizon_ns), ("rate_window", self.rate_window_ns)] {
            if !(1..=60_000_000_000).contains(&d) {
                return Err(format!("{name}: expected a positive duration of at most 60s, got {d} ns"));
            }
        }
        if self.rate_buckets == 0 || self.rate_buckets > 10_000 || self.rate_window_ns < self.rate_buckets as u64 {
            return Err("rate_buckets: expected 1..10000 buckets of at least 1 ns".into());
        }
        Ok(())
    }

    /// Eq. (1): the congestion level from the queue, the arrivals and departures counted
    /// over the rate window.
    pub fn congestion_level(&self, queue_packets: u64, arrivals: u64, departures: u64) -> f64 {
        let scale = self.horizon_ns as f64 / self.rate_window_ns as f64;
        (queue_packets as f64 + (arrivals as f64 - departures as f64) * scale) / self.limit_packets as f64
    }

    /// The level for a CL value: 0 below Th1, 1 below Th2, 2 from Th2.
    pub fn level(&self, cl: f64) -> u8 {
        if cl >= self.th2 {
            2
        } else if cl >= self.th1 {
            1
        } else {
            0
        }
    }
}

/// Counts of events over a sliding window of fixed buckets.
#[derive(Debug, Clone)]
struct WindowCounter {
    width_ns: u64,
    slots: Vec<u64>,
    epoch: u64,
    total: u64,
}

impl WindowCounter {
    fn new(window_ns: u64, buckets: u32) -> Self {
        Self { width_ns: (window_ns / buckets as u64).max(1), slots: vec![0; buckets as usize], epoch: 0, total: 0 }
    }

    fn advance(&mut self, now_ns: u64) {
        let e = now_ns / self.width_ns;
        if e <= self.epoch {
            return;
        }
        let n = self.slots.len() as u64;
        if e - self.epoch >= n {
            self.slots.iter_mut().for_each(|s| *s = 0);
            self.total = 0;
        } else {
            for k in self.epoch + 1..=e {
                let i = (k % n) as usize;
                self.total -= self.slots[i];
                self.slots[i] = 0;
            }
        }
        self.epoch = e;
    }

    fn add(&mut self, now_ns: u64) {
        self.advance(now_ns);
        let i = (self.epoch % self.slots.len() as u64) as usize;
        self.slots[i] += 1;
        self.total += 1;
    }

    fn count(&mut self, now_ns: u64) -> u64 {
        self.advance(now_ns);
        self.total
    }
}

/// Per-level mark counters of an EECN router.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct EecnMarks {
    /// Packets set to CL(1).
    pub cl1: u64,
    /// Packets set to CL(2) (from ECT(1) or raised from CL(1)).
    pub cl2: u64,
}

/// The EECN marking queue.
#[derive(Debug)]
pub struct EecnMarker {
    cfg: EecnMarkerConfig,
    backlog: Backlog,
    arrivals: WindowCounter,
    departures: WindowCounter,
    marks: EecnMarks,
}

impl EecnMarker {
    /// An EECN router queue.
    pub fn new(cfg: EecnMarkerConfig) -> Self {
        let arrivals = WindowCounter::new(cfg.rate_window_ns, cfg.rate_buckets);
        let departures = arrivals.clone();
        Self { cfg, backlog: Backlog::new(), arrivals, departures, marks: EecnMarks::default() }
    }

    /// Marks per level.
    pub fn marks(&self) -> &EecnMarks {
        &self.marks
    }

    /// Eq. (1) now (counting the packet being admitted as an arrival).
    pub fn current_cl(&mut self, now_ns: u64) -> f64 {
        let a = self.arrivals.count(now_ns);
        let d = self.departures.count(now_ns);
        self.cfg.congestion_level(self.backlog.len_packets(), a, d)
    }
}

impl QueueDiscipline for EecnMarker {
    fn enqueue(&mut self, now_ns: u64, mut pkt: SimPacket) -> Verdict {
        let size = pkt.wire_bytes();
        self.arrivals.add(now_ns);
        if self.backlog.len_packets() >= self.cfg.limit_packets {
            return self.backlog.record_drop(pkt);
        }
        let mut verdict = Verdict::Enqueued;
        let ecn = pkt.pkt.ecn;
        if ecn != Ecn::NotEct && ecn != Ecn::Ce {
            let cl = self.current_cl(now_ns);
            let router = self.cfg.level(cl);
            let have = eecn_level_of(ecn);
            if router > have && (have == 0 || router == 2) {
                pkt.pkt.ecn = eecn_codepoint(router);
                if router == 2 {
                    self.marks.cl2 += 1;
                } else {
                    self.marks.cl1 += 1;
                }
                self.backlog.record_mark(size);
                verdict = Verdict::Marked;
            }
        }
        self.backlog.push(now_ns, pkt);
        verdict
    }

    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket> {
        let p = self.backlog.pop(now_ns)?;
        self.departures.add(now_ns);
        Some(p)
    }

    fn len_packets(&self) -> u64 {
        self.backlog.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.backlog.len_bytes()
    }

    fn stats(&self) -> &QueueStats {
        self.backlog.stats()
    }

    fn take_dropped(&mut self) -> Option<Box<Carried>> {
        self.backlog.take_dropped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use triage_core::wire::Packet;

    const MS: u64 = 1_000_000;

    fn pkt(ecn: Ecn) -> SimPacket {
        SimPacket::new(Packet { payload_bytes: 1448, ecn, ..Default::default() }, 0)
    }

    #[test]
    fn equation_1_by_hand() {
        let c = EecnMarkerConfig::default();
        // The paper's example: 60 of 100 queued, equal rates: CL = 0.6, CL(2).
        assert!((c.congestion_level(60, 500, 500) - 0.6).abs() < 1e-12);
        assert_eq!(c.level(0.6), 2);
        // 20 queued, 900 arrivals and 885 departures in the last 100 ms: (20 + 15)/100.
        assert!((c.congestion_level(20, 900, 885) - 0.35).abs() < 1e-12);
        assert_eq!(c.level(0.35), 1);
        // Draining: 40 queued, 800 in, 830 out: (40 − 30)/100 = 0.1, no congestion.
        assert_eq!(c.level(c.congestion_level(40, 800, 830)), 0);
        // A 50 ms window predicting 100 ms doubles the measured change.
        let half = EecnMarkerConfig { rate_window_ns: 50 * MS, rate_buckets: 5, ..c.clone() };
        assert!((half.congestion_level(20, 100, 90) - 0.4).abs() < 1e-12);
        assert_eq!(c.level(0.3), 1, "Th1 itself is CL(1)");
        assert_eq!(c.level(0.5), 2, "Th2 itself is CL(2)");
    }

    #[test]
    fn marks_by_level_and_raises_only() {
        let mut q = EecnMarker::new(EecnMarkerConfig { limit_packets: 10, ..Default::default() });
        // Arrivals only (no departures): CL grows by (queued + arrivals)/10.
        // 1st: queue 0, 1 arrival → 0.1: none.
        assert_eq!(q.enqueue(0, pkt(Ecn::Ect1)), Verdict::Enqueued);
        // 2nd: queue 1 + 2 arrivals = 0.3 → CL(1).
        assert_eq!(q.enqueue(0, pkt(Ecn::Ect1)), Verdict::Marked);
        assert_eq!(q.backlog.back().unwrap().pkt.ecn, Ecn::Ect0);
        // 3rd: 2 + 3 = 0.5 → CL(2); a CL(1) packet is raised.
        assert_eq!(q.enqueue(0, pkt(Ecn::Ect0)), Verdict::Marked);
        assert_eq!(q.backlog.back().unwrap().pkt.ecn, Ecn::Ce);
        // CL(2) packets pass unchanged, Not-ECT is never marked.
        assert_eq!(q.enqueue(0, pkt(Ecn::Ce)), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, pkt(Ecn::NotEct)), Verdict::Enqueued);
        assert_eq!(q.marks(), &EecnMarks { cl1: 1, cl2: 1 });
        // Full: drops only on overflow.
        for _ in 0..5 {
            q.enqueue(0, pkt(Ecn::NotEct));
        }
        assert_eq!(q.enqueue(0, pkt(Ecn::Ect1)), Verdict::Dropped);
    }

    #[test]
    fn cl1_packet_below_th2_keeps_cl1() {
        let mut q = EecnMarker::new(EecnMarkerConfig { limit_packets: 10, ..Default::default() });
        q.enqueue(0, pkt(Ecn::NotEct)); // 0.1
        assert_eq!(q.enqueue(0, pkt(Ecn::Ect0)), Verdict::Enqueued, "0.3: CL(1) stays CL(1)");
        assert_eq!(q.backlog.back().unwrap().pkt.ecn, Ecn::Ect0);
    }

    #[test]
    fn window_forgets_old_counts() {
        let mut q = EecnMarker::new(EecnMarkerConfig { limit_packets: 10, ..Default::default() });
        for _ in 0..4 {
            q.enqueue(0, pkt(Ecn::NotEct));
        }
        while q.dequeue(MS).is_some() {}
        // 4 in, 4 out in the window: CL = 0.
        assert!(q.current_cl(2 * MS).abs() < 1e-12);
        // 200 ms later the window is empty too.
        assert_eq!(q.current_cl(200 * MS), 0.0);
        assert_eq!(q.arrivals.count(200 * MS), 0);
    }
}
