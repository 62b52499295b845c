//! RED in packet mode (Floyd & Jacobson 1993), with ns-3's `RedQueueDisc` semantics where
//! the EECN paper (§6.1: "RED queue discipline \[30\] in packet mode having a queue size of
//! 100 packets ... minimum threshold 30, maximum threshold 60") says nothing: averaging
//! weight QW = 0.002, LInterm = 50 (max_p = 1/50), gentle mode, "wait" between drops,
//! hard drops above the gentle range, and the idle-time correction that ages the average
//! as if `ptc` small packets had been sent while the queue was empty (ns-3's LinkBandwidth
//! default of 1.5 Mbps with MeanPktSize 500 bytes: 375 packets/s).
//!
//! Per arrival, with `n` packets queued:
//! 1. avg ← avg·(1 − w)^(m+1) + w·n, with m the idle packets (0 unless the queue was idle);
//! 2. count += 1;
//! 3. if avg ≥ min_th and n > 1: forced (drop) when avg ≥ 2·max_th (gentle; max_th
//!    otherwise); else on the first packet above min_th count ← 1; else an early drop or
//!    mark with probability p_a (below); otherwise (avg < min_th) the early phase ends;
//! 4. early: p_b = max_p·(avg − min_th)/(max_th − min_th) below max_th, and
//!    max_p + (1 − max_p)·(avg − max_th)/max_th from max_th to 2·max_th (gentle);
//!    p_a = 0 when count·p_b < 1, p_b/(2 − count·p_b) when it is < 2, 1 otherwise ("wait");
//!    an early hit resets count to 0;
//! 5. with ECN on, an early hit on an ECN-capable packet marks CE instead of dropping; a
//!    forced one drops (hard drop);
//! 6. a full queue drops.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use triage_core::wire::Ecn;

use super::{Backlog, Carried, QueueDiscipline, QueueStats, SimPacket, Verdict};

/// RED parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Queue capacity in packets.
    pub limit_packets: u64,
    /// Minimum threshold (packets).
    pub min_th: f64,
    /// Maximum threshold (packets).
    pub max_th: f64,
    /// Largest early-drop probability at max_th (ns-3: 1/LInterm = 1/50).
    pub max_p: f64,
    /// Averaging weight (ns-3 QW: 0.002).
    pub qw: f64,
    /// Gentle mode: p ramps from max_p to 1 between max_th and 2·max_th.
    pub gentle: bool,
    /// Mark ECN-capable packets (CE) instead of dropping them early.
    pub ecn: bool,
    /// Rate used to age the average over idle time, in bits per second (ns-3 default 1.5 Mbps).
    pub idle_rate_bps: u64,
    /// Packet size for the idle-time correction (ns-3 MeanPktSize: 500 bytes).
    pub mean_packet_bytes: u64,
}

impl Default for RedConfig {
    fn default() -> Self {
        Self {
            limit_packets: 100,
            min_th: 30.0,
            max_th: 60.0,
            max_p: 1.0 / 50.0,
            qw: 0.002,
            gentle: true,
            ecn: false,
            idle_rate_bps: 1_500_000,
            mean_packet_bytes: 500,
        }
    }
}

impl RedConfig {
    /// Checks 0 ≤ min_th < max_th, 0 < max_p ≤ 1, 0 < qw ≤ 1, a positive limit.
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 {
            return Err("packets: expected a positive queue size".into());
        }
        if !(self.min_th >= 0.0 && self.min_th < self.max_th) {
            return Err(format!(
                "min_th/max_th: expected 0 <= min_th < max_th, got {} and {}",
                self.min_th, self.max_th
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p: expected 0 < max_p <= 1, got {}", self.max_p));
        }
        if !(self.qw > 0.0 && self.qw <= 1.0) {
            return Err(format!("qw: expected 0 < qw <= 1, got {}", self.qw));
        }
        if self.mean_packet_bytes == 0 {
            return Err("mean_packet_bytes: expected a positive size".into());
        }
        Ok(())
    }

    /// The unmodified early probability p_b at average `avg` (step 4 of the module docs).
    pub fn p_b(&self, avg: f64) -> f64 {
        let p = if avg >= self.max_th {
            if self.gentle {
                self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
            } else {
                1.0
            }
        } else {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        };
        p.clamp(0.0, 1.0)
    }

    /// p_a after `count` packets since the last early hit ("wait" variant, ns-3 default).
    pub fn p_a(&self, p_b: f64, count: u64) -> f64 {
        let c = count as f64 * p_b;
        if c < 1.0 {
            0.0
        } else if c < 2.0 {
            p_b / (2.0 - c)
        } else {
            1.0
        }
    }
}

/// A RED queue.
#[derive(Debug)]
pub struct Red {
    cfg: RedConfig,
    backlog: Backlog,
    avg: f64,
    count: u64,
    old: bool,
    idle: bool,
    idle_since_ns: u64,
    /// The shortest idle time for which step 1's `m` is not 0 (`u64::MAX`: never), so that
    /// most arrivals after an idle spell skip its floating-point arithmetic.
    idle_m_from_ns: u64,
    rng: ChaCha8Rng,
}

/// Step 1's idle packets after `idle_ns` idle at `ptc` packets/s, as ns-3 computes them.
#[inline]
fn idle_packets(ptc: f64, idle_ns: u64) -> u64 {
    (ptc * idle_ns as f64 / 1e9) as u64
}

/// `ptc`: the packets/s an idle queue is aged by.
fn idle_ptc(cfg: &RedConfig) -> f64 {
    cfg.idle_rate_bps as f64 / (8.0 * cfg.mean_packet_bytes as f64)
}

/// The shortest idle time whose [`idle_packets`] is not 0 (`u64::MAX` when none is):
/// `idle_packets` never decreases as the idle time grows (each step of it, the conversion,
/// the product, the quotient and the truncation, is monotone), so a bisection finds it.
fn idle_m_from_ns(ptc: f64) -> u64 {
    if idle_packets(ptc, u64::MAX) == 0 {
        return u64::MAX;
    }
    let (mut lo, mut hi) = (0u64, u64::MAX);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if idle_packets(ptc, mid) == 0 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Red {
    /// A RED queue drawing its early decisions from `rng`.
    pub fn new(cfg: RedConfig, rng: ChaCha8Rng) -> Self {
        let idle_m_from_ns = idle_m_from_ns(idle_ptc(&cfg));
        Self {
            cfg,
            backlog: Backlog::new(),
            avg: 0.0,
            count: 0,
            old: false,
            idle: true,
            idle_since_ns: 0,
            idle_m_from_ns,
            rng,
        }
    }

    /// The average queue length.
    pub fn avg(&self) -> f64 {
        self.avg
    }
}

#[derive(PartialEq)]
enum Hit {
    None,
    Early,
    Forced,
}

impl Red {
    /// Steps 1-6 for an arrival at `now_ns`: the verdict, the packet marked if it is, and
    /// every counter but the backlog's, which count its acceptance or drop (the caller's).
    #[inline(always)]
    fn decide(&mut self, now_ns: u64, pkt: &mut SimPacket) -> Verdict {
        let size = pkt.wire_bytes();
        let n = self.backlog.len_packets() as f64;
        let mut m = 0u64;
        if self.idle {
            let idle_ns = now_ns.saturating_sub(self.idle_since_ns);
            if idle_ns >= self.idle_m_from_ns {
                m = idle_packets(idle_ptc(&self.cfg), idle_ns);
            }
            self.idle = false;
        }
        // (1 − w)^(m+1): a busy queue (m = 0, every arrival but the first after an idle
        // period) needs no `powf`; x^1 is exactly x, so the result is the same bit for bit.
        let decay = if m == 0 { 1.0 - self.cfg.qw } else { (1.0 - self.cfg.qw).powf((m + 1) as f64) };
        self.avg = self.avg * decay + self.cfg.qw * n;
        self.count += 1;
        let mut hit = Hit::None;
        if self.avg >= self.cfg.min_th && self.backlog.len_packets() > 1 {
            let top = if self.cfg.gentle { 2.0 * self.cfg.max_th } else { self.cfg.max_th };
            if self.avg >= top {
                hit = Hit::Forced;
            } else if !self.old {
                self.count = 1;
                self.old = true;
            } else {
                let p = self.cfg.p_a(self.cfg.p_b(self.avg), self.count);
                let u: f64 = self.rng.random();
                if u <= p {
                    self.count = 0;
                    hit = Hit::Early;
                }
            }
        } else {
            self.old = false;
        }
        if self.backlog.len_packets() >= self.cfg.limit_packets {
            return Verdict::Dropped;
        }
        match hit {
            Hit::None => Verdict::Enqueued,
            Hit::Forced => Verdict::Dropped,
            Hit::Early => {
                if self.cfg.ecn && pkt.pkt.ecn != Ecn::NotEct {
                    pkt.pkt.ecn = Ecn::Ce;
                    self.backlog.record_mark(size);
                    Verdict::Marked
                } else {
                    Verdict::Dropped
                }
            }
        }
    }
}

impl QueueDiscipline for Red {
    fn enqueue(&mut self, now_ns: u64, mut pkt: SimPacket) -> Verdict {
        let verdict = self.decide(now_ns, &mut pkt);
        if verdict == Verdict::Dropped {
            return self.backlog.record_drop(pkt);
        }
        self.backlog.push(now_ns, pkt);
        verdict
    }

    /// Into an empty queue and out at once: the same verdict and counters as
    /// [`enqueue`](QueueDiscipline::enqueue) then [`dequeue`](QueueDiscipline::dequeue)
    /// (the dequeue finds the packet, so the queue is not idle after it).
    fn enqueue_and_dequeue(&mut self, now_ns: u64, mut pkt: SimPacket) -> Option<SimPacket> {
        if self.backlog.len_packets() > 0 {
            if self.enqueue(now_ns, pkt) == Verdict::Dropped {
                return None;
            }
            return self.dequeue(now_ns);
        }
        if self.decide(now_ns, &mut pkt) == Verdict::Dropped {
            return None;
        }
        Some(self.backlog.pass_through(now_ns, pkt))
    }

    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket> {
        let p = self.backlog.pop(now_ns);
        if p.is_none() && !self.idle {
            self.idle = true;
            self.idle_since_ns = now_ns;
        }
        p
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
    use rand::SeedableRng;
    use triage_core::wire::Packet;

    fn pkt(ecn: Ecn) -> SimPacket {
        SimPacket::new(Packet { payload_bytes: 1448, ecn, ..Default::default() }, 0)
    }

    #[test]
    fn drop_probability_by_hand() {
        let c = RedConfig::default();
        // Halfway between 30 and 60: max_p / 2 = 0.01.
        assert!((c.p_b(45.0) - 0.01).abs() < 1e-12);
        assert_eq!(c.p_b(29.0), 0.0);
        // Gentle: at 90 (halfway from 60 to 120): 0.02 + 0.98 · 0.5 = 0.51.
        assert!((c.p_b(90.0) - 0.51).abs() < 1e-12);
        assert_eq!(c.p_b(130.0), 1.0);
        assert_eq!(RedConfig { gentle: false, ..c.clone() }.p_b(61.0), 1.0);
        // "wait": count·p_b = 0.5 → 0; 1.5 → 0.01 / 0.5 = 0.02; ≥ 2 → 1.
        assert_eq!(c.p_a(0.01, 50), 0.0);
        assert!((c.p_a(0.01, 150) - 0.02).abs() < 1e-12);
        assert_eq!(c.p_a(0.01, 200), 1.0);
    }

    #[test]
    fn average_follows_ewma_and_idle_ages_it() {
        let mut q = Red::new(RedConfig::default(), ChaCha8Rng::seed_from_u64(1));
        // The first arrival finds an idle queue since t=0: at t=0, m = 0.
        q.enqueue(0, pkt(Ecn::NotEct));
        assert_eq!(q.avg(), 0.0);
        q.enqueue(0, pkt(Ecn::NotEct)); // n = 1
        assert!((q.avg() - 0.002).abs() < 1e-12);
        q.enqueue(0, pkt(Ecn::NotEct)); // n = 2: 0.002·0.998 + 0.004
        assert!((q.avg() - (0.002 * 0.998 + 0.004)).abs() < 1e-12);
        let before = q.avg();
        while q.dequeue(1_000_000).is_some() {}
        assert!(q.dequeue(1_000_000).is_none(), "empty: idle from 1 ms");
        // 1 s idle at 375 packets/s: m = 375; avg·0.998^376 + 0.
        q.enqueue(1_001_000_000, pkt(Ecn::NotEct));
        assert!((q.avg() - before * 0.998f64.powi(376)).abs() < 1e-12);
    }

    #[test]
    fn idle_packets_start_at_one_packet_time() {
        // 375 packets/s: m becomes 1 at 1e9 / 375 = 2,666,666.7 ns idle.
        let ptc = idle_ptc(&RedConfig::default());
        assert_eq!(ptc, 375.0);
        assert_eq!(idle_m_from_ns(ptc), 2_666_667);
        assert_eq!(idle_packets(ptc, 2_666_666), 0);
        assert_eq!(idle_packets(ptc, 2_666_667), 1);
        assert_eq!(idle_m_from_ns(0.0), u64::MAX, "no ageing: m is always 0");
        // Arrivals just below and at the threshold age the average as ns-3 does.
        for (idle_ns, decay) in [(2_666_666, 0.998), (2_666_667, 0.998f64.powf(2.0))] {
            let mut q = Red::new(RedConfig::default(), ChaCha8Rng::seed_from_u64(1));
            q.avg = 10.0;
            q.idle_since_ns = 1_000;
            q.enqueue(1_000 + idle_ns, pkt(Ecn::NotEct));
            assert_eq!(q.avg(), 10.0 * decay);
        }
    }

    #[test]
    fn marks_ecn_capable_and_drops_others_when_average_is_high() {
        for (ecn, expect) in [(Ecn::Ect0, Verdict::Marked), (Ecn::NotEct, Verdict::Dropped)] {
            let cfg = RedConfig { ecn: true, qw: 1.0, limit_packets: 1000, ..Default::default() };
            let mut q = Red::new(cfg, ChaCha8Rng::seed_from_u64(3));
            let mut seen = Vec::new();
            for _ in 0..2000 {
                seen.push(q.enqueue(0, pkt(ecn)));
            }
            // With qw = 1 the average is the queue: early hits between 30 and 120, forced
            // drops from 120 on.
            assert!(seen.contains(&expect));
            assert_eq!(seen[1999], Verdict::Dropped, "forced above 2·max_th");
            assert!(q.len_packets() <= 121);
        }
    }
}
