//! VCP end host: Xia, Subramanian, Stoica & Kalyanaraman, "One more bit is enough"
//! (SIGCOMM 2005), §3.2-§3.4. The third baseline of the EECN paper (§6.1).
//!
//! Routers code their load factor in the two ECN bits (low-load `01`, high-load `10`,
//! overload `11`; see `triage_sim::queue::vcp`); the receiver echoes the highest code of the
//! data an ACK covers in ECE/CWR (see [`crate::ecn`]); the connection hands it to this
//! controller in [`AckSample::ecn_echo`]. The sender then
//! - **low-load**: multiplicative increase, cwnd ← cwnd·(1 + ξ_s) per RTT with
//!   ξ_s = (1 + ξ)^(RTT/t_ρ) − 1, ξ = 0.0625 (RTT scaling of §3.4), spread over the ACKs of
//!   a window (each ACK adds ξ_s·acked bytes);
//! - **high-load**: additive increase, α = 1 segment per RTT (α·SZ·acked/cwnd per ACK);
//! - **overload**: multiplicative decrease, cwnd ← β·cwnd with β = 0.875, then no decrease
//!   and no increase until a hold time has passed: one RTT, stretched to t_ρ by default
//!   (`hold_t_rho`). VCP's routers refresh the code once per t_ρ = 200 ms, so on a path
//!   whose RTT is ~2 ms the code seen after an MD still describes the load before it;
//!   holding for one RTT only would apply ~80 decreases to one overloaded interval.
//! - **loss and timeout**: as NewReno.
//!
//! Our choice, documented: a connection starts in TCP slow start (cwnd += acked bytes, at
//! most 2 segments per ACK) until the first high-load or overload echo or loss. VCP's MI at
//! ξ_s ≈ 0.07 % per 2 ms RTT would otherwise need ~14 s to fill 100 Mbps here.

use super::{AckSample, CongestionController, CongestionSignal};

/// VCP parameters (§3.4 / §4 defaults).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VcpConfig {
    /// MI factor ξ per t_ρ. Paper: 0.0625.
    pub xi: f64,
    /// AI in segments per RTT. Paper: 1.0.
    pub alpha: f64,
    /// MD factor. Paper: 0.875.
    pub beta: f64,
    /// The routers' load-measurement interval t_ρ. Paper: 200 ms.
    pub t_rho_ns: u64,
    /// Hold after an MD for max(RTT, t_ρ) instead of one RTT.
    pub hold_t_rho: bool,
    /// Start with TCP slow start until the first high-load/overload echo (see module docs).
    pub slow_start: bool,
}

/// Largest t_ρ [`VcpConfig::validate`] accepts (and the VCP router's): 10 s, fifty times the
/// paper's 200 ms. Interval ends are `now + t_ρ`.
pub const MAX_T_RHO_NS: u64 = 10_000_000_000;

impl VcpConfig {
    /// Checks ranges: 0 < ξ ≤ 1, 0 ≤ α ≤ 100 segments, 0 < β < 1, 0 < t_ρ ≤
    /// [`MAX_T_RHO_NS`]. The error reads `FIELD: what was expected`, with the field named as
    /// in a scenario's `transport.vcp` table.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.xi > 0.0 && self.xi <= 1.0) {
            return Err(format!("xi: expected 0 < ξ <= 1, got {}", self.xi));
        }
        if !(self.alpha >= 0.0 && self.alpha <= 100.0) {
            return Err(format!("alpha: expected 0..100 segments, got {}", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta: expected 0 < β < 1, got {}", self.beta));
        }
        if !(1..=MAX_T_RHO_NS).contains(&self.t_rho_ns) {
            return Err(format!("t_rho: expected a positive duration of at most 10s, got {} ns", self.t_rho_ns));
        }
        Ok(())
    }
}

impl Default for VcpConfig {
    fn default() -> Self {
        Self { xi: 0.0625, alpha: 1.0, beta: 0.875, t_rho_ns: 200_000_000, hold_t_rho: true, slow_start: true }
    }
}

/// VCP load codes as echoed (§3.1).
pub mod load {
    /// Low load (ρ < 80 %): multiplicative increase.
    pub const LOW: u8 = 1;
    /// High load (80 % ≤ ρ < 100 %): additive increase.
    pub const HIGH: u8 = 2;
    /// Overload (ρ ≥ 100 %): multiplicative decrease.
    pub const OVERLOAD: u8 = 3;
}

/// The VCP controller.
#[derive(Debug, Clone)]
pub struct Vcp {
    cfg: VcpConfig,
    mss_bytes: u64,
    cwnd: f64,
    ssthresh: f64,
    slow_start: bool,
    hold_until_ns: u64,
    in_recovery: bool,
    last_load: u8,
}

impl Vcp {
    /// A controller with an initial window of `initial_window_segments`.
    pub fn new(mss_bytes: u64, initial_window_segments: u64, cfg: VcpConfig) -> Self {
        let mss = mss_bytes.max(1);
        let slow_start = cfg.slow_start;
        Self {
            cfg,
            mss_bytes: mss,
            cwnd: (initial_window_segments.max(1) * mss) as f64,
            ssthresh: f64::INFINITY,
            slow_start,
            hold_until_ns: 0,
            in_recovery: false,
            last_load: 0,
        }
    }

    fn floor(&self) -> f64 {
        2.0 * self.mss_bytes as f64
    }

    /// ξ scaled to one RTT (§3.4): (1 + ξ)^(RTT/t_ρ) − 1.
    pub fn xi_scaled(&self, rtt_ns: u64) -> f64 {
        (1.0 + self.cfg.xi).powf(rtt_ns as f64 / self.cfg.t_rho_ns as f64) - 1.0
    }

    /// The last load code echoed.
    pub fn last_load(&self) -> u8 {
        self.last_load
    }
}

impl CongestionController for Vcp {
    fn name(&self) -> &'static str {
        "vcp"
    }

    fn state(&self) -> &'static str {
        if self.in_recovery {
            "recovery"
        } else if self.slow_start {
            "slow_start"
        } else {
            match self.last_load {
                load::LOW => "mi",
                load::OVERLOAD => "md",
                _ => "ai",
            }
        }
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let code = ack.ecn_echo;
        if code != 0 {
            self.last_load = code;
        }
        if self.in_recovery {
            return;
        }
        let rtt = ack.srtt_ns.or(ack.rtt_ns).unwrap_or(self.cfg.t_rho_ns);
        if code == load::OVERLOAD {
            self.slow_start = false;
            if ack.now_ns >= self.hold_until_ns {
                self.cwnd = (self.cwnd * self.cfg.beta).max(self.floor());
                self.ssthresh = self.cwnd;
                let hold = if self.cfg.hold_t_rho { rtt.max(self.cfg.t_rho_ns) } else { rtt };
                self.hold_until_ns = ack.now_ns.saturating_add(hold);
            }
            return;
        }
        if ack.now_ns < self.hold_until_ns || ack.newly_acked_bytes == 0 {
            return;
        }
        if ack.app_limited && (ack.prior_in_flight_bytes as f64) < self.cwnd / 2.0 {
            return;
        }
        let acked = ack.newly_acked_bytes as f64;
        let mss = self.mss_bytes as f64;
        if code == load::HIGH || code == 0 {
            self.slow_start = false;
            self.cwnd += self.cfg.alpha * mss * acked / self.cwnd;
        } else if self.slow_start && self.cwnd < self.ssthresh {
            self.cwnd += acked.min(2.0 * mss);
        } else {
            self.cwnd += self.xi_scaled(rtt) * acked;
        }
    }

    fn on_congestion(&mut self, _now_ns: u64, signal: CongestionSignal, bytes_in_flight: u64) {
        match signal {
            CongestionSignal::Ecn { .. } => {}
            CongestionSignal::Loss => {
                if self.in_recovery {
                    return;
                }
                self.slow_start = false;
                self.ssthresh = ((bytes_in_flight / 2) as f64).max(self.floor());
                self.in_recovery = true;
            }
            CongestionSignal::Timeout => {
                self.slow_start = false;
                self.ssthresh = ((bytes_in_flight / 2) as f64).max(self.floor());
                self.cwnd = self.mss_bytes as f64;
                self.in_recovery = false;
            }
            CongestionSignal::PersistentCongestion => {
                // RFC 9002 §7.6.2: kMinimumWindow; ssthresh as the loss response left it.
                self.slow_start = false;
                self.cwnd = 2.0 * self.mss_bytes as f64;
                self.in_recovery = false;
            }
        }
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        if self.in_recovery {
            self.cwnd = self.ssthresh;
            self.in_recovery = false;
        }
    }

    fn window_bytes(&self) -> u64 {
        (self.cwnd as u64).max(self.mss_bytes)
    }

    fn ssthresh_bytes(&self) -> u64 {
        if self.ssthresh.is_finite() {
            self.ssthresh as u64
        } else {
            u64::MAX
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn ack(now_ms: u64, code: u8) -> AckSample {
        AckSample {
            now_ns: now_ms * MS,
            newly_acked_bytes: 1000,
            prior_in_flight_bytes: 1_000_000,
            srtt_ns: Some(200 * MS),
            ecn_echo: code,
            ..Default::default()
        }
    }

    #[test]
    fn mi_ai_md() {
        let mut c = Vcp::new(1000, 10, VcpConfig { slow_start: false, ..Default::default() });
        // RTT = t_ρ: ξ_s = ξ; one window of ACKs grows cwnd by 6.25 %.
        assert!((c.xi_scaled(200 * MS) - 0.0625).abs() < 1e-12);
        c.on_ack(&ack(0, load::LOW));
        assert_eq!(c.window_bytes(), 10_062);
        c.on_ack(&ack(1, load::HIGH)); // + 1000·1000/10062.5 = 99.4
        assert_eq!(c.window_bytes(), 10_161);
        c.on_ack(&ack(2, load::OVERLOAD)); // · 0.875
        assert_eq!(c.window_bytes(), 8_891);
        c.on_ack(&ack(3, load::OVERLOAD)); // held
        assert_eq!(c.window_bytes(), 8_891);
        c.on_ack(&ack(203, load::OVERLOAD));
        assert_eq!(c.window_bytes(), 7_780);
    }

    #[test]
    fn slow_start_until_high_load() {
        let mut c = Vcp::new(1000, 10, VcpConfig::default());
        c.on_ack(&AckSample { newly_acked_bytes: 2000, ..ack(0, load::LOW) });
        assert_eq!(c.window_bytes(), 12_000);
        c.on_ack(&ack(1, load::HIGH));
        assert_eq!(c.state(), "ai");
    }
}
