//! The VCP router (Xia et al., "One more bit is enough", SIGCOMM 2005, §3.1-§3.3).
//!
//! Once per interval t_ρ = 200 ms the router computes its load factor
//!
//! ```text
//! ρ = (λ + κ_q · q̃) / (γ · C · t_ρ)
//! ```
//!
//! with λ the bits that arrived in the interval, q̃ the persistent queue in bits, γ = 0.98
//! the target utilization, κ_q = 0.5 and C the link rate. It codes ρ in the two ECN bits
//! of every ECN-capable packet it forwards: low-load `01` (ρ < 80 %), high-load `10`
//! (80 % ≤ ρ < 100 %), overload `11` (ρ ≥ 100 %), raising the code only (a packet keeps
//! the most loaded router's code along its path). The code computed at the end of one
//! interval is stamped during the next.
//!
//! Our choice for q̃: the smallest backlog seen during the interval (the queue that did not
//! drain), VCP's "persistent queue" without its separate 10 ms low-pass filter. Drops only
//! on overflow. The queue's `marked_packets` counts packets raised to overload (the code
//! that makes senders decrease, VCP's counterpart of CE); raises to high-load are counted
//! in [`VcpRouter::high_load_packets`].

use triage_core::wire::Ecn;

use super::{Backlog, Carried, QueueDiscipline, QueueStats, SimPacket, Verdict};

/// VCP router parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcpRouterConfig {
    /// Queue capacity in packets.
    pub limit_packets: u64,
    /// Load-measurement interval t_ρ. Paper: 200 ms.
    pub t_rho_ns: u64,
    /// Target utilization γ. Paper: 0.98.
    pub target_utilization: f64,
    /// Queue weight κ_q. Paper: 0.5.
    pub kappa_q: f64,
    /// Load factor from which the code is high-load. Paper: 0.8.
    pub high_load: f64,
    /// Load factor from which the code is overload. Paper: 1.0.
    pub overload: f64,
}

impl Default for VcpRouterConfig {
    fn default() -> Self {
        Self {
            limit_packets: 100,
            t_rho_ns: 200_000_000,
            target_utilization: 0.98,
            kappa_q: 0.5,
            high_load: 0.8,
            overload: 1.0,
        }
    }
}

impl VcpRouterConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 {
            return Err("packets: expected a positive queue size".into());
        }
        if !(1..=triage_core::cc::vcp::MAX_T_RHO_NS).contains(&self.t_rho_ns) {
            return Err(format!("t_rho: expected a positive duration of at most 10s, got {} ns", self.t_rho_ns));
        }
        if !(self.target_utilization > 0.0 && self.target_utilization <= 1.0) {
            return Err(format!("target_utilization: expected 0 < γ <= 1, got {}", self.target_utilization));
        }
        let ordered = self.high_load > 0.0 && self.high_load <= self.overload;
        if !ordered || self.kappa_q.is_nan() || self.kappa_q < 0.0 {
            return Err("high_load/overload/kappa_q: expected 0 < high_load <= overload and kappa_q >= 0".into());
        }
        Ok(())
    }

    /// The load factor ρ for `arrived_bytes` in one interval with a persistent queue of
    /// `queue_bytes` on a link of `rate_bps`.
    pub fn load_factor(&self, arrived_bytes: u64, queue_bytes: u64, rate_bps: u64) -> f64 {
        let cap = self.target_utilization * rate_bps as f64 * self.t_rho_ns as f64 / 1e9;
        (arrived_bytes as f64 * 8.0 + self.kappa_q * queue_bytes as f64 * 8.0) / cap
    }

    /// The code for a load factor: 1 low, 2 high, 3 overload.
    pub fn code(&self, rho: f64) -> u8 {
        if rho >= self.overload {
            3
        } else if rho >= self.high_load {
            2
        } else {
            1
        }
    }
}

/// The VCP router queue.
#[derive(Debug)]
pub struct VcpRouter {
    cfg: VcpRouterConfig,
    rate_bps: u64,
    backlog: Backlog,
    interval_end_ns: u64,
    arrived_bytes: u64,
    min_queue_bytes: u64,
    code: u8,
    last_rho: f64,
    high_load_packets: u64,
}

impl VcpRouter {
    /// A VCP router in front of a link of `rate_bps`.
    pub fn new(cfg: VcpRouterConfig, rate_bps: u64) -> Self {
        let end = cfg.t_rho_ns;
        Self {
            cfg,
            rate_bps: rate_bps.max(1),
            backlog: Backlog::new(),
            interval_end_ns: end,
            arrived_bytes: 0,
            min_queue_bytes: 0,
            code: 1,
            last_rho: 0.0,
            high_load_packets: 0,
        }
    }

    /// Packets raised to high-load (not counted as marks).
    pub fn high_load_packets(&self) -> u64 {
        self.high_load_packets
    }

    /// The code stamped now (1 low, 2 high, 3 overload) and the ρ it came from.
    pub fn load(&self) -> (u8, f64) {
        (self.code, self.last_rho)
    }

    fn roll(&mut self, now_ns: u64) {
        while now_ns >= self.interval_end_ns {
            let rho = self.cfg.load_factor(self.arrived_bytes, self.min_queue_bytes, self.rate_bps);
            self.last_rho = rho;
            self.code = self.cfg.code(rho);
            self.arrived_bytes = 0;
            self.min_queue_bytes = self.backlog.len_bytes();
            self.interval_end_ns = self.interval_end_ns.saturating_add(self.cfg.t_rho_ns.max(1));
            if now_ns >= self.interval_end_ns {
                // Whole idle intervals: nothing arrived.
                let skip = (now_ns - self.interval_end_ns) / self.cfg.t_rho_ns.max(1);
                self.interval_end_ns = self.interval_end_ns.saturating_add(skip.saturating_mul(self.cfg.t_rho_ns));
                let rho = self.cfg.load_factor(0, self.backlog.len_bytes(), self.rate_bps);
                self.last_rho = rho;
                self.code = self.cfg.code(rho);
            }
        }
    }
}

impl QueueDiscipline for VcpRouter {
    fn enqueue(&mut self, now_ns: u64, mut pkt: SimPacket) -> Verdict {
        self.roll(now_ns);
        let size = pkt.wire_bytes();
        self.arrived_bytes += size;
        if self.backlog.len_packets() >= self.cfg.limit_packets {
            return self.backlog.record_drop(pkt);
        }
        let mut verdict = Verdict::Enqueued;
        let have = pkt.pkt.ecn as u8;
        if have != 0 && self.code > have {
            pkt.pkt.ecn = match self.code {
                2 => Ecn::Ect0,
                _ => Ecn::Ce,
            };
            if self.code == 3 {
                // Marks count congestion signals (overload, VCP's counterpart of CE);
                // high-load codes are counted apart.
                self.backlog.record_mark(size);
                verdict = Verdict::Marked;
            } else {
                self.high_load_packets += 1;
            }
        }
        self.backlog.push(now_ns, pkt);
        verdict
    }

    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket> {
        self.roll(now_ns);
        let p = self.backlog.pop(now_ns)?;
        self.min_queue_bytes = self.min_queue_bytes.min(self.backlog.len_bytes());
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

    #[test]
    fn load_factor_and_codes_by_hand() {
        let c = VcpRouterConfig::default();
        // 100 Mbps for 200 ms at 98 %: 19.6 Mbit. 2 MB arrived (16 Mbit), 100 kB queued (0.4 Mbit
        // after κ = 0.5): ρ = 16.4 / 19.6 = 0.8367.
        let rho = c.load_factor(2_000_000, 100_000, 100_000_000);
        assert!((rho - 16.4 / 19.6).abs() < 1e-12);
        assert_eq!(c.code(rho), 2);
        assert_eq!(c.code(0.5), 1);
        assert_eq!(c.code(1.0), 3);
    }

    #[test]
    fn stamps_the_previous_interval_code_and_raises_only() {
        let mut q = VcpRouter::new(VcpRouterConfig { limit_packets: 100_000, ..Default::default() }, 1_000_000);
        let p = |ecn| SimPacket::new(Packet { payload_bytes: 1448, ecn, ..Default::default() }, 0);
        // 1 Mbps · 0.98 · 0.2 s = 196 kbit = 24500 bytes: send 30 kB in the first interval.
        for _ in 0..20 {
            assert_eq!(q.enqueue(0, p(Ecn::Ect1)), Verdict::Enqueued, "first interval: low-load");
        }
        assert_eq!(q.enqueue(200 * MS, p(Ecn::Ect1)), Verdict::Marked);
        assert_eq!(q.load().0, 3);
        assert_eq!(q.backlog.back().unwrap().pkt.ecn, Ecn::Ce);
        assert_eq!(q.enqueue(200 * MS, p(Ecn::NotEct)), Verdict::Enqueued, "not VCP-capable: untouched");
    }
}
