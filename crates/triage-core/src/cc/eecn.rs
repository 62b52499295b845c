//! The EECN sender: Ali, Hong & Kim, "A Multilevel Network-assisted Congestion Feedback
//! Mechanism for Network Congestion Control", §4.4 (Algorithms 1 and 2, eq. (2)).
//!
//! Read first: §4.4.1 (initial window from the handshake), §4.4.2 and Algorithm 1 (the
//! response to CL(1) and CL(2)), §4.4.3-§4.4.4 and Algorithm 2 (slow start and congestion
//! avoidance). The connection decodes the levels (see [`crate::ecn`]) and calls
//! [`CongestionController::on_congestion`] with `Ecn { level }` at most once per window
//! (a higher level passes at once).
//!
//! # Choices the paper leaves open (all in [`EecnConfig`])
//! - **cRTT** is the newest RTT sample (the one this ACK produced, or the latest before it).
//! - **avgRTT** is, by default, the connection's smoothed RTT (RFC 6298 SRTT, an EWMA with
//!   gain 1/8) — the "average RTT" a TCP stack keeps; [`AvgRtt::Mean`] uses the mean of
//!   every sample since the connection opened instead.
//! - **β = cRTT − avgRTT** is taken in seconds by default (`beta_unit_ns` = 10⁹): the
//!   congestion-avoidance decay of Algorithm 2 runs on every ACK, and with β in
//!   milliseconds one ACK 3 ms above average would cut the window by e⁻³ ≈ 95 %.
//! - Growth is per ACK, as the paper writes it ("per ACK received"), not per acknowledged
//!   segment; it applies only while the window is in use (RFC 7661), as NewReno's does.
//! - Loss and timeout are NewReno's (RFC 5681 eq. (4); one segment after an RTO): the paper
//!   changes only the ECN response and the growth.
//! - The window never falls below 2 segments after an ECN response (Algorithm 1's floor),
//!   nor below 1 segment after an RTO.

use super::{AckSample, CongestionController, CongestionSignal, HandshakeFeedback};

/// How avgRTT of Algorithms 1 and 2 is averaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AvgRtt {
    /// The connection's smoothed RTT (RFC 6298 SRTT, gain 1/8).
    #[default]
    Srtt,
    /// Arithmetic mean of every RTT sample of the connection.
    Mean,
}

/// What Algorithm 2 does when cRTT equals avgRTT (β = 0), where the paper's listing and its
/// prose part (§4.4.3-§4.4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZeroBeta {
    /// The listing (Algorithm 2 lines 3 and 10, `cRTT ≥ avgRTT`): the slow-start increment
    /// is σ·SZ and congestion avoidance decays by e^0, no change. Where the RTT is exactly
    /// constant, which a deterministic simulation reaches, the window then never moves.
    #[default]
    Hold,
    /// The prose ("we apply the decay function when β is positive"): β = 0 counts as below
    /// the average, so the window grows by the full SZ in slow start and σ·SZ in congestion
    /// avoidance.
    Grow,
}

/// EECN parameters (paper values by default).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EecnConfig {
    /// Algorithm 1: the divisor d for CL(2) when cRTT ≥ avgRTT (d/2 otherwise). Paper: 8.
    pub d: u32,
    /// Algorithm 2 / §4.4.3: slow-start smoothing factor σ when cRTT ≥ avgRTT. Paper: 0.3.
    pub sigma_slow_start: f64,
    /// Algorithm 2 / §4.4.4: congestion-avoidance increment factor σ. Paper: 0.02.
    pub sigma_congestion_avoidance: f64,
    /// Nanoseconds per unit of β in e^−β (eq. (2)): 10⁹ takes β in seconds, 10⁶ in ms.
    pub beta_unit_ns: u64,
    /// How avgRTT is averaged.
    pub avg_rtt: AvgRtt,
    /// §4.4.1: initial window in segments after CL(1) and CL(2) on the handshake (no mark:
    /// the connection's `initial_window_segments`, 10 in the paper). Paper: 5 and 1.
    pub initial_window_cl: [u32; 2],
    /// §4.4.2: ACKs on which the receiver repeats a CL(1) echo. Paper: 3.
    pub cl1_echo_acks: u32,
    /// Algorithm 2 at β = 0 (see [`ZeroBeta`]). Default: the listing's.
    #[serde(default)]
    pub zero_beta: ZeroBeta,
}

impl Default for EecnConfig {
    fn default() -> Self {
        Self {
            d: 8,
            sigma_slow_start: 0.3,
            sigma_congestion_avoidance: 0.02,
            beta_unit_ns: 1_000_000_000,
            avg_rtt: AvgRtt::Srtt,
            initial_window_cl: [5, 1],
            cl1_echo_acks: 3,
            zero_beta: ZeroBeta::Hold,
        }
    }
}

impl EecnConfig {
    /// Checks ranges: d ≥ 2, 0 < σ ≤ 1, a positive β unit and initial windows ≥ 1. The error
    /// reads `FIELD: what was expected`, with the field named as in a scenario's
    /// `transport.eecn` table.
    pub fn validate(&self) -> Result<(), String> {
        if self.d < 2 {
            return Err(format!("d: expected at least 2, got {}", self.d));
        }
        for (n, v) in [
            ("sigma_slow_start", self.sigma_slow_start),
            ("sigma_congestion_avoidance", self.sigma_congestion_avoidance),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(format!("{n}: expected 0 < σ ≤ 1, got {v}"));
            }
        }
        if self.beta_unit_ns == 0 {
            return Err("beta_unit: expected a positive duration".into());
        }
        for (k, &w) in self.initial_window_cl.iter().enumerate() {
            if w == 0 {
                return Err(format!("initial_window_cl{}: expected at least 1 segment", k + 1));
            }
        }
        Ok(())
    }
}

/// The EECN controller.
#[derive(Debug, Clone)]
pub struct Eecn {
    cfg: EecnConfig,
    mss_bytes: u64,
    initial_window_segments: u64,
    /// Kept as f64 bytes: σ·SZ and e^−β are fractional.
    cwnd: f64,
    ssthresh: f64,
    c_rtt_ns: Option<u64>,
    srtt_ns: Option<u64>,
    rtt_sum_ns: u128,
    rtt_count: u64,
    in_recovery: bool,
    acked_any: bool,
}

impl Eecn {
    /// A controller; `initial_window_segments` is the window without handshake marks.
    pub fn new(mss_bytes: u64, initial_window_segments: u64, cfg: EecnConfig) -> Self {
        let mss = mss_bytes.max(1);
        Self {
            cfg,
            mss_bytes: mss,
            initial_window_segments: initial_window_segments.max(1),
            cwnd: (initial_window_segments.max(1) * mss) as f64,
            ssthresh: f64::INFINITY,
            c_rtt_ns: None,
            srtt_ns: None,
            rtt_sum_ns: 0,
            rtt_count: 0,
            in_recovery: false,
            acked_any: false,
        }
    }

    fn mss(&self) -> f64 {
        self.mss_bytes as f64
    }

    /// avgRTT as configured.
    pub fn avg_rtt_ns(&self) -> Option<u64> {
        match self.cfg.avg_rtt {
            AvgRtt::Srtt => self.srtt_ns,
            AvgRtt::Mean => (self.rtt_count > 0).then(|| (self.rtt_sum_ns / self.rtt_count as u128) as u64),
        }
    }

    /// (cRTT ≥ avgRTT, β) for Algorithms 1 and 2; (false, 0) before any sample.
    fn rtt_state(&self) -> (bool, f64) {
        match (self.c_rtt_ns, self.avg_rtt_ns()) {
            (Some(c), Some(a)) if c > a || (c == a && self.cfg.zero_beta == ZeroBeta::Hold) => {
                (true, (c - a) as f64 / self.cfg.beta_unit_ns as f64)
            }
            _ => (false, 0.0),
        }
    }

    fn floor(&self) -> f64 {
        2.0 * self.mss()
    }

    /// Algorithm 1 for one level (exposed for tests).
    fn respond(&mut self, level: u8) {
        let (above, beta) = self.rtt_state();
        if level >= 2 {
            // Algorithm 1 lines 1-9: ssthresh = cwnd = max(2, cwnd / d) (d/2 when cRTT < avgRTT).
            let d = if above { self.cfg.d } else { (self.cfg.d / 2).max(1) } as f64;
            self.ssthresh = (self.cwnd / d).max(self.floor());
            self.cwnd = self.ssthresh;
        } else if level == 1 && above {
            // Algorithm 1 lines 10-14, eq. (2): ssthresh = cwnd = cwnd · e^−β.
            self.ssthresh = (self.cwnd * (-beta).exp()).max(self.floor());
            self.cwnd = self.ssthresh;
        }
        // Lines 15-21: CL(1) below the average RTT, or no mark: no change.
    }
}

impl CongestionController for Eecn {
    fn name(&self) -> &'static str {
        "eecn"
    }

    fn state(&self) -> &'static str {
        if self.in_recovery {
            "recovery"
        } else if self.cwnd < self.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }

    /// Algorithm 2: slow start grows by σ·SZ (σ = 0.3) per ACK when cRTT ≥ avgRTT, by SZ
    /// otherwise; congestion avoidance decays by e^−β when cRTT ≥ avgRTT and grows by σ·SZ
    /// (σ = 0.02) otherwise.
    fn on_ack(&mut self, ack: &AckSample) {
        if let Some(r) = ack.rtt_ns {
            self.c_rtt_ns = Some(r);
            self.rtt_sum_ns += r as u128;
            self.rtt_count += 1;
        }
        if ack.srtt_ns.is_some() {
            self.srtt_ns = ack.srtt_ns;
        }
        if ack.newly_acked_bytes > 0 && !ack.handshake_only {
            self.acked_any = true;
        }
        if self.in_recovery || ack.newly_acked_bytes == 0 {
            return;
        }
        if ack.app_limited && (ack.prior_in_flight_bytes as f64) < self.cwnd / 2.0 {
            return;
        }
        let (above, beta) = self.rtt_state();
        let sz = self.mss();
        if self.cwnd < self.ssthresh {
            self.cwnd += if above { self.cfg.sigma_slow_start * sz } else { sz };
        } else if above {
            self.cwnd = (self.cwnd * (-beta).exp()).max(self.floor());
        } else {
            self.cwnd += self.cfg.sigma_congestion_avoidance * sz;
        }
    }

    fn on_congestion(&mut self, _now_ns: u64, signal: CongestionSignal, bytes_in_flight: u64) {
        match signal {
            CongestionSignal::Ecn { level } => {
                if !self.in_recovery {
                    self.respond(level);
                }
            }
            CongestionSignal::Loss => {
                if self.in_recovery {
                    return;
                }
                self.ssthresh = ((bytes_in_flight / 2) as f64).max(self.floor());
                self.in_recovery = true;
            }
            CongestionSignal::Timeout => {
                self.ssthresh = ((bytes_in_flight / 2) as f64).max(self.floor());
                self.cwnd = self.mss();
                self.in_recovery = false;
            }
            CongestionSignal::PersistentCongestion => {
                // RFC 9002 §7.6.2: kMinimumWindow; ssthresh as the loss response left it.
                self.cwnd = 2.0 * self.mss();
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

    /// §4.4.1: 10 segments when the handshake saw no mark, 5 after CL(1), 1 after CL(2).
    fn on_handshake_feedback(&mut self, feedback: HandshakeFeedback) {
        if let Some(r) = feedback.rtt_ns {
            if self.c_rtt_ns.is_none() {
                self.c_rtt_ns = Some(r);
            }
        }
        if self.acked_any {
            return;
        }
        let segs = match feedback.congestion_level {
            0 => self.initial_window_segments,
            1 => self.cfg.initial_window_cl[0] as u64,
            _ => self.cfg.initial_window_cl[1] as u64,
        };
        self.cwnd = (segs.max(1) * self.mss_bytes) as f64;
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

    fn ack(rtt_ms: u64, srtt_ms: u64) -> AckSample {
        AckSample {
            newly_acked_bytes: 1000,
            prior_in_flight_bytes: 1_000_000,
            rtt_ns: Some(rtt_ms * MS),
            srtt_ns: Some(srtt_ms * MS),
            ..Default::default()
        }
    }

    fn eecn() -> Eecn {
        Eecn::new(1000, 10, EecnConfig::default())
    }

    /// Algorithm 2 at cRTT = avgRTT (β = 0): the listing's `≥` holds the window in congestion
    /// avoidance and grows it by σ·SZ in slow start; the prose's reading (`ZeroBeta::Grow`)
    /// grows by σ·SZ and SZ. Either way a positive β decays and a negative one grows.
    #[test]
    fn zero_beta_holds_by_the_listing_and_grows_by_the_prose() {
        for (zero_beta, ca_gain, ss_gain) in [(ZeroBeta::Hold, 0.0, 300.0), (ZeroBeta::Grow, 20.0, 1000.0)] {
            let cfg = EecnConfig { zero_beta, ..Default::default() };
            // Congestion avoidance: cwnd 20000, ssthresh 10000.
            let mut c = Eecn::new(1000, 10, cfg.clone());
            (c.cwnd, c.ssthresh) = (20_000.0, 10_000.0);
            c.on_ack(&ack(10, 10));
            assert!((c.cwnd - (20_000.0 + ca_gain)).abs() < 1e-9, "{zero_beta:?}: {}", c.cwnd);
            c.on_ack(&ack(12, 10));
            assert!(c.cwnd < 20_000.0 + ca_gain, "{zero_beta:?}: β > 0 decays");
            // Slow start.
            let mut c = Eecn::new(1000, 10, cfg);
            c.on_ack(&ack(10, 10));
            assert!((c.cwnd - (10_000.0 + ss_gain)).abs() < 1e-9, "{zero_beta:?}: {}", c.cwnd);
        }
    }

    #[test]
    fn initial_window_follows_handshake_level() {
        for (level, segs) in [(0u8, 10u64), (1, 5), (2, 1)] {
            let mut c = eecn();
            c.on_handshake_feedback(HandshakeFeedback { congestion_level: level, rtt_ns: Some(MS) });
            assert_eq!(c.window_bytes(), segs * 1000, "level {level}");
        }
    }

    #[test]
    fn algorithm_1_cl2_divides_by_d_or_half_d() {
        // cRTT 12 ms ≥ avgRTT 10 ms: 40000 / 8 = 5000.
        let mut c = eecn();
        c.cwnd = 40_000.0;
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(12, 10) });
        c.on_congestion(0, CongestionSignal::Ecn { level: 2 }, 40_000);
        assert_eq!(c.window_bytes(), 5_000);
        assert_eq!(c.ssthresh_bytes(), 5_000);
        // cRTT 8 ms < avgRTT 10 ms: 40000 / 4 = 10000.
        let mut c = eecn();
        c.cwnd = 40_000.0;
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(8, 10) });
        c.on_congestion(0, CongestionSignal::Ecn { level: 2 }, 40_000);
        assert_eq!(c.window_bytes(), 10_000);
        // Floor: max(2 segments, 12000 / 8 = 1500) = 2000.
        let mut c = eecn();
        c.cwnd = 12_000.0;
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(12, 10) });
        c.on_congestion(0, CongestionSignal::Ecn { level: 2 }, 12_000);
        assert_eq!(c.window_bytes(), 2_000);
    }

    #[test]
    fn algorithm_1_cl1_decays_by_exp_minus_beta() {
        // β = 12 ms − 10 ms = 0.002 s: 40000 · e^−0.002 = 39920.07.
        let mut c = eecn();
        c.cwnd = 40_000.0;
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(12, 10) });
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 40_000);
        assert_eq!(c.window_bytes(), 39_920);
        // With β in milliseconds: 40000 · e^−2 = 5413.4.
        let mut c = Eecn::new(1000, 10, EecnConfig { beta_unit_ns: MS, ..Default::default() });
        c.cwnd = 40_000.0;
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(12, 10) });
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 40_000);
        assert_eq!(c.window_bytes(), 5_413);
        // Below the average: no change.
        let mut c = eecn();
        c.cwnd = 40_000.0;
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(9, 10) });
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 40_000);
        assert_eq!(c.window_bytes(), 40_000);
        assert_eq!(c.ssthresh_bytes(), u64::MAX);
    }

    #[test]
    fn algorithm_2_slow_start_and_avoidance() {
        let mut c = eecn();
        c.on_ack(&ack(9, 10)); // below average: + SZ
        assert_eq!(c.window_bytes(), 11_000);
        c.on_ack(&ack(11, 10)); // above: + 0.3 SZ
        assert_eq!(c.window_bytes(), 11_300);
        c.ssthresh = 5_000.0; // congestion avoidance from here
        c.on_ack(&ack(9, 10)); // + 0.02 SZ
        assert_eq!(c.window_bytes(), 11_320);
        c.on_ack(&ack(15, 10)); // · e^−0.005 = 11263.55
        assert_eq!(c.window_bytes(), 11_263);
    }

    #[test]
    fn mean_average_uses_every_sample() {
        let mut c = Eecn::new(1000, 10, EecnConfig { avg_rtt: AvgRtt::Mean, ..Default::default() });
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(10, 99) });
        c.on_ack(&AckSample { newly_acked_bytes: 0, ..ack(20, 99) });
        assert_eq!(c.avg_rtt_ns(), Some(15 * MS));
    }

    #[test]
    fn loss_and_timeout_are_newreno() {
        let mut c = eecn();
        c.on_congestion(0, CongestionSignal::Loss, 30_000);
        assert_eq!(c.ssthresh_bytes(), 15_000);
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 15_000);
        c.on_congestion(0, CongestionSignal::Timeout, 30_000);
        assert_eq!(c.window_bytes(), 1_000);
    }
}
