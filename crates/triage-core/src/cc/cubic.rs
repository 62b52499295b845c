//! CUBIC congestion control (RFC 9438), as Linux `tcp_cubic` and quinn run it, with
//! HyStart++ (RFC 9406, [`super::hystart`]) as an option for the initial slow start.
//!
//! Read first: RFC 9438 §4.1-4.8. After a congestion event the window follows a cubic
//! function of the time since congestion avoidance began, `W_cubic(t) = C·(t − K)³ + W_max`
//! (eq. 1): concave up to the window of the last congestion event (`W_max`, reached after
//! `K` seconds, eq. 2), then convex beyond it. Where Reno would grow faster (short RTTs),
//! the window follows Reno's estimate `W_est` instead (§4.3). A loss or ECN echo multiplies
//! the window by `beta_cubic = 0.7` (§4.6) and, when the window had not regained the last
//! `W_max`, lowers `W_max` further to release bandwidth to newer flows (fast convergence,
//! §4.7). Windows are in bytes here (the RFC counts segments: one segment is `mss_bytes`),
//! time is the `now_ns` of each sample (no clock), and the constants are exact ratios:
//! `C = 4/10`, `beta_cubic = 7/10`, `alpha_cubic = 3(1 − beta)/(1 + beta) = 9/17`. Only the
//! cube root of eq. 2 uses floating point.
//!
//! The controller is mode-neutral: it sees what the connection measured (sent packets,
//! ACK samples, congestion signals), never a TCP or QUIC header. As NewReno, it leaves the
//! window alone during fast recovery (the connection runs PRR towards `ssthresh`) and sets
//! `cwnd = ssthresh` when recovery ends; an ECN echo reduces at once (the connection allows
//! one reaction per window of data).

use super::hystart::{HyStart, Phase};
use super::{AckSample, CongestionController, CongestionSignal};

/// RFC 9438 §4.1: `C = 0.4` (segments per second³), as numerator and denominator.
const C_NUM: i128 = 4;
/// Denominator of `C`.
const C_DEN: i128 = 10;
/// RFC 9438 §4.1: `beta_cubic = 0.7`, numerator.
const BETA_NUM: u64 = 7;
/// Denominator of `beta_cubic`.
const BETA_DEN: u64 = 10;
/// RFC 9438 §4.3: `alpha_cubic = 3(1 − 0.7)/(1 + 0.7) = 0.9/1.7 = 9/17`, numerator.
const ALPHA_NUM: u64 = 9;
/// Denominator of `alpha_cubic`.
const ALPHA_DEN: u64 = 17;
/// Nanoseconds per second, for the cubic's time unit.
const NS_PER_SEC: f64 = 1e9;

/// CUBIC's settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CubicConfig {
    /// Run HyStart++ (RFC 9406) in the initial slow start (default off, as in the
    /// references this controller is checked against).
    pub hystart: bool,
}

/// RFC 9438 eq. 2: `K = ∛((W_max − cwnd_epoch) / C)`, the time in nanoseconds the cubic
/// takes to climb from `cwnd_epoch` back to `W_max`, with windows in bytes and `C` scaled
/// to bytes by `mss_bytes`. Zero when `cwnd_epoch` is at or above `W_max` (Linux's choice:
/// the epoch then starts at the plateau and grows convexly).
pub fn k_ns(w_max_bytes: u64, cwnd_epoch_bytes: u64, mss_bytes: u64) -> u64 {
    if cwnd_epoch_bytes >= w_max_bytes || mss_bytes == 0 {
        return 0;
    }
    let segments_over_c = (w_max_bytes - cwnd_epoch_bytes) as f64 * C_DEN as f64 / (C_NUM as f64 * mss_bytes as f64);
    let k = (segments_over_c.cbrt() * NS_PER_SEC).round();
    if k.is_finite() && k < u64::MAX as f64 {
        k as u64
    } else {
        u64::MAX
    }
}

/// RFC 9438 eq. 1: `W_cubic(t) = C·(t − K)³ + W_max` in bytes, for `t` and `K` in
/// nanoseconds. Exact integer arithmetic (`C·mss·(t − K)³ / 10²⁷`, truncated towards zero);
/// saturates at 0 and `u64::MAX` far from the plateau.
pub fn w_cubic_bytes(t_ns: u64, k_ns: u64, w_max_bytes: u64, mss_bytes: u64) -> u64 {
    let d = t_ns as i128 - k_ns as i128;
    let scale = C_NUM * mss_bytes as i128;
    // 10^27: seconds³ in nanoseconds³, times C's denominator.
    let den = C_DEN * 1_000_000_000_000_000_000_000_000_000i128;
    let offset = d
        .checked_mul(d)
        .and_then(|x| x.checked_mul(d))
        .and_then(|x| x.checked_mul(scale))
        .map(|x| x / den)
        .unwrap_or(if d < 0 { i128::MIN } else { i128::MAX });
    (w_max_bytes as i128).saturating_add(offset).clamp(0, u64::MAX as i128) as u64
}

/// One congestion-avoidance stage (RFC 9438 §4.2 `t_epoch`, `cwnd_epoch`, `K`, and the
/// Reno estimate `W_est` of §4.3).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    start_ns: u64,
    w_max_bytes: u64,
    k_ns: u64,
    w_est_bytes: u64,
    /// `W_est` growth not yet applied, in units of 1/(ALPHA_DEN·cwnd) bytes.
    w_est_remainder: u64,
}

/// CUBIC state (RFC 9438).
#[derive(Debug, Clone)]
pub struct Cubic {
    mss_bytes: u64,
    cwnd_bytes: u64,
    ssthresh_bytes: u64,
    /// `W_max`: the window just before the last reduction (after fast convergence); `None`
    /// before any congestion event and after a timeout (§4.8).
    w_max_bytes: Option<u64>,
    /// `cwnd_prev`: cwnd when ssthresh was last set (§4.3's switch of `alpha_cubic` to 1).
    cwnd_prev_bytes: u64,
    epoch: Option<Epoch>,
    /// Congestion-avoidance growth not yet applied, in units of 1/cwnd bytes.
    ca_remainder: u64,
    in_recovery: bool,
    /// A timeout's recovery is under way: a further timeout keeps ssthresh (RFC 5681 §3.1).
    in_timeout_recovery: bool,
    hystart: Option<HyStart>,
    /// QUIC's reduction in bytes ([`Cubic::for_quic`]) instead of TCP's in whole segments.
    quic: bool,
    /// quinn-proto's slow start and congestion avoidance ([`Cubic::as_quinn`]).
    quinn: bool,
    /// quinn ([`Cubic::as_quinn`]): the congestion-avoidance time origin, quinn-proto's
    /// `recovery_start_time` (the last reduction, or the first ACK in congestion avoidance
    /// when none came since the start or persistent congestion).
    quinn_origin_ns: Option<u64>,
    /// quinn: `K` in seconds, as quinn-proto computes it at a reduction (∛(W_max·(1−β)/C)).
    quinn_k_s: f64,
    /// quinn: quinn-proto's `cwnd_inc`, the growth owed in bytes; a datagram is added once it
    /// reaches one.
    quinn_cwnd_inc_bytes: u64,
}

impl Cubic {
    /// A controller with an initial window of `initial_window_segments` full segments.
    pub fn new(mss_bytes: u64, initial_window_segments: u64, config: CubicConfig) -> Self {
        let mss_bytes = mss_bytes.max(1);
        let cwnd_bytes = initial_window_segments.max(1).saturating_mul(mss_bytes);
        Self {
            mss_bytes,
            cwnd_bytes,
            ssthresh_bytes: u64::MAX,
            w_max_bytes: None,
            cwnd_prev_bytes: cwnd_bytes,
            epoch: None,
            ca_remainder: 0,
            in_recovery: false,
            in_timeout_recovery: false,
            hystart: config.hystart.then(|| HyStart::new(mss_bytes)),
            quic: false,
            quinn: false,
            quinn_origin_ns: None,
            quinn_k_s: 0.0,
            quinn_cwnd_inc_bytes: 0,
        }
    }

    /// The same controller reducing its window in bytes, as QUIC stacks do (quinn-proto
    /// 0.11: `window · 0.7`; RFC 9438 §4.6 writes it for bytes too), where TCP's reduction
    /// keeps whole segments.
    pub fn for_quic(mut self) -> Self {
        self.quic = true;
        self
    }

    /// QUIC mode's controller as `triage reproduce quic`'s reference, quinn-proto 0.11's
    /// `Cubic`, runs it ([`QuicConfig::cubic_as_quinn`](crate::quic::QuicConfig)): the
    /// reduction in bytes ([`for_quic`](Self::for_quic)), slow start adding every byte
    /// acknowledged (past ssthresh too), and RFC 8312's congestion avoidance as quinn has it
    /// (`quinn_congestion_avoidance`), where the default
    /// is RFC 9438's (as Linux, and as quiche's ACK-counted Reno estimate).
    pub fn as_quinn(mut self) -> Self {
        self.quic = true;
        self.quinn = true;
        self
    }

    /// `W_max` of the last congestion event, if any.
    pub fn w_max_bytes(&self) -> Option<u64> {
        self.w_max_bytes
    }

    /// `K` of the current congestion-avoidance stage, once it has begun.
    pub fn epoch_k_ns(&self) -> Option<u64> {
        self.epoch.map(|e| e.k_ns)
    }

    /// The HyStart++ phase, when HyStart++ is configured.
    pub fn hystart_phase(&self) -> Option<Phase> {
        self.hystart.as_ref().map(|h| h.phase())
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd_bytes < self.ssthresh_bytes
    }

    fn stop_hystart(&mut self) {
        if let Some(h) = self.hystart.as_mut() {
            h.disable();
        }
    }

    /// RFC 9438 §4.6 and §4.7: ssthresh = cwnd·beta_cubic (at least 2 segments; in TCP mode
    /// whole segments, rounded down); `W_max` =
    /// cwnd, or cwnd·(1 + beta)/2 when cwnd had not regained the previous `W_max` (fast
    /// convergence); the next congestion-avoidance stage starts a new epoch.
    fn reduce(&mut self) {
        let cwnd = self.cwnd_bytes;
        self.w_max_bytes = Some(match self.w_max_bytes {
            Some(w) if cwnd < w => mul_ratio(cwnd, BETA_DEN + BETA_NUM, 2 * BETA_DEN),
            _ => cwnd,
        });
        self.cwnd_prev_bytes = cwnd;
        self.ssthresh_bytes = if self.quic {
            mul_ratio(cwnd, BETA_NUM, BETA_DEN).max(2 * self.mss_bytes)
        } else {
            // TCP counts its window in whole segments: Linux's `bictcp_recalc_ssthresh`
            // (max(cwnd·717/1024, 2)) and ns-3's `TcpCubic::GetSsThresh` (max(cwnd·0.7, 2)) take
            // the segments of cwnd times beta, rounded down. Under loss, where windows are a
            // few segments, the fraction kept otherwise is worth a segment per reduction.
            (cwnd / self.mss_bytes * BETA_NUM / BETA_DEN).max(2) * self.mss_bytes
        };
        self.epoch = None;
        self.ca_remainder = 0;
        if self.quinn {
            // quinn-proto: K = ∛(W_max/mss · (1 − β) / C); cwnd_inc scaled by β.
            let w_max_segments = self.w_max_bytes.unwrap_or(cwnd) as f64 / self.mss_bytes as f64;
            self.quinn_k_s =
                (w_max_segments * (BETA_DEN - BETA_NUM) as f64 / BETA_DEN as f64 * C_DEN as f64 / C_NUM as f64).cbrt();
            self.quinn_cwnd_inc_bytes = mul_ratio(self.quinn_cwnd_inc_bytes, BETA_NUM, BETA_DEN);
        }
        self.stop_hystart();
    }

    /// Congestion avoidance as quinn-proto 0.11's `Cubic::on_ack` (RFC 8312
    /// §4.1-4.3): with `t` from the last reduction ([`quinn_origin_ns`](Self::quinn_origin_ns)),
    /// `W_cubic(t + srtt)` against the Reno estimate `W_est(t) = W_max·β + 3(1−β)/(1+β) ·
    /// t/srtt` (in datagrams, a function of time, where RFC 9438 §4.3 counts acknowledged
    /// bytes); for each datagram acknowledged the window it asks for (`W_est` in the
    /// Reno-friendly region, cwnd + (W_cubic − cwnd)/cwnd datagrams otherwise) adds its
    /// excess over cwnd to `cwnd_inc`, and once that reaches a datagram the window grows by
    /// one and the count starts again. In the Reno-friendly region the excess is counted at
    /// every ACK, so the window climbs to `W_est` and past it by up to a datagram within a
    /// few ACKs.
    fn quinn_congestion_avoidance(&mut self, ack: &AckSample, mut acked_bytes: u64) {
        let mss = self.mss_bytes;
        let origin_ns = match self.quinn_origin_ns {
            Some(t) => t,
            None => {
                self.quinn_origin_ns = Some(ack.now_ns);
                self.w_max_bytes = Some(self.cwnd_bytes);
                self.quinn_k_s = 0.0;
                ack.now_ns
            }
        };
        let w_max_segments = self.w_max_bytes.unwrap_or(self.cwnd_bytes) as f64 / mss as f64;
        let t_s = ack.now_ns.saturating_sub(origin_ns) as f64 / NS_PER_SEC;
        let rtt_s = ack.srtt_ns.or(ack.rtt_ns).unwrap_or(0) as f64 / NS_PER_SEC;
        let (c, beta) = (C_NUM as f64 / C_DEN as f64, BETA_NUM as f64 / BETA_DEN as f64);
        let w_cubic = (c * (t_s + rtt_s - self.quinn_k_s).powi(3) + w_max_segments) * mss as f64;
        let w_est = if rtt_s > 0.0 {
            (w_max_segments * beta + 3.0 * (1.0 - beta) / (1.0 + beta) * t_s / rtt_s) * mss as f64
        } else {
            0.0
        };
        while acked_bytes > 0 {
            acked_bytes = acked_bytes.saturating_sub(mss);
            let cwnd = self.cwnd_bytes;
            let mut asked = cwnd;
            if w_cubic < w_est {
                asked = asked.max(w_est as u64);
            } else if asked < w_cubic as u64 {
                asked = asked.saturating_add(((w_cubic - cwnd as f64) / cwnd as f64 * mss as f64) as u64);
            }
            self.quinn_cwnd_inc_bytes = self.quinn_cwnd_inc_bytes.saturating_add(asked - cwnd);
            if self.quinn_cwnd_inc_bytes >= mss {
                self.cwnd_bytes = cwnd.saturating_add(mss);
                self.quinn_cwnd_inc_bytes = 0;
            }
        }
    }

    /// RFC 9438 §4.2-4.5: one ACK in congestion avoidance.
    fn congestion_avoidance(&mut self, ack: &AckSample, acked_bytes: u64) {
        let cwnd = self.cwnd_bytes;
        let mss = self.mss_bytes;
        let epoch = *self.epoch.get_or_insert_with(|| {
            // §4.2: t_epoch and cwnd_epoch at the start of the stage; §4.8: with no W_max
            // (first stage, or after a timeout), K = 0 and W_max = cwnd_epoch. Linux does
            // the same whenever cwnd_epoch is already at or above W_max.
            let w_max = self.w_max_bytes.map_or(cwnd, |w| w.max(cwnd));
            Epoch {
                start_ns: ack.now_ns,
                w_max_bytes: w_max,
                k_ns: k_ns(w_max, cwnd, mss),
                w_est_bytes: cwnd,
                w_est_remainder: 0,
            }
        });
        let t_ns = ack.now_ns.saturating_sub(epoch.start_ns);
        // §4.3 eq. 4: W_est += alpha_cubic · segments_acked / cwnd (in segments), with
        // alpha_cubic = 1 once W_est has reached cwnd_prev.
        let (a_num, a_den) = if epoch.w_est_bytes >= self.cwnd_prev_bytes { (1, 1) } else { (ALPHA_NUM, ALPHA_DEN) };
        let den = a_den * cwnd;
        let num = (acked_bytes as u128 * mss as u128 * a_num as u128 + epoch.w_est_remainder as u128)
            .min(u64::MAX as u128) as u64;
        let w_est = epoch.w_est_bytes.saturating_add(num / den);
        let w_est_remainder = if a_den == ALPHA_DEN { num % den } else { 0 };
        self.epoch = Some(Epoch { w_est_bytes: w_est, w_est_remainder, ..epoch });

        let w_now = w_cubic_bytes(t_ns, epoch.k_ns, epoch.w_max_bytes, mss);
        if w_now < w_est {
            // §4.3: the Reno-friendly region: cwnd follows W_est (never down, as quinn).
            self.cwnd_bytes = cwnd.max(w_est);
            self.ca_remainder = 0;
            return;
        }
        // §4.4-4.5 (concave and convex alike): target = W_cubic(t + RTT), clamped to
        // [cwnd, 1.5·cwnd]; cwnd grows by (target − cwnd)/cwnd per segment acknowledged.
        // RTT is the smoothed RTT, as quinn uses (Linux adds its minimum RTT instead; the
        // two differ by the queueing delay, which only shifts the target by that much).
        let rtt_ns = ack.srtt_ns.or(ack.min_rtt_ns).or(ack.rtt_ns).unwrap_or(0);
        let target = w_cubic_bytes(t_ns.saturating_add(rtt_ns), epoch.k_ns, epoch.w_max_bytes, mss)
            .clamp(cwnd, cwnd.saturating_add(cwnd / 2));
        let num = (target - cwnd) as u128 * acked_bytes as u128 + self.ca_remainder as u128;
        let grow = (num / cwnd as u128).min(u64::MAX as u128) as u64;
        self.ca_remainder = (num % cwnd as u128) as u64;
        self.cwnd_bytes = cwnd.saturating_add(grow);
    }
}

/// `x · num / den` without overflow, truncated.
fn mul_ratio(x: u64, num: u64, den: u64) -> u64 {
    (x as u128 * num as u128 / den as u128) as u64
}

impl CongestionController for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn state(&self) -> &'static str {
        if self.in_recovery {
            "recovery"
        } else if self.in_slow_start() {
            match self.hystart_phase() {
                Some(Phase::Css { .. }) => "css",
                _ => "slow_start",
            }
        } else {
            "congestion_avoidance"
        }
    }

    /// HyStart++ counts rounds by the packets sent (RFC 9406 §4.2).
    fn on_packet_sent(&mut self, _now_ns: u64, bytes: u64, _bytes_in_flight: u64, _app_limited: bool) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_packet_sent(bytes);
        }
    }

    /// RFC 9438 §4.10 slow start (byte counting, as Linux and quinn: cwnd grows by the
    /// bytes acknowledged, up to ssthresh; HyStart++ limits and may end it), then §4.2-4.5
    /// congestion avoidance. No growth in fast recovery, nor while the window is not used
    /// (RFC 7661, as NewReno).
    fn on_ack(&mut self, ack: &AckSample) {
        let acked = ack.growth_bytes();
        if self.in_recovery || acked == 0 {
            return;
        }
        if ack.app_limited && ack.prior_in_flight_bytes < self.cwnd_bytes / 2 {
            return;
        }
        if self.in_slow_start() {
            let mut grow = acked;
            if let Some(h) = self.hystart.as_mut().filter(|h| h.active()) {
                let step = h.on_ack(acked, ack.delivered_total_bytes, ack.rtt_ns);
                grow = step.grow_bytes;
                if step.enter_congestion_avoidance {
                    // RFC 9406 §4.2: after CSS_ROUNDS of CSS, ssthresh = cwnd.
                    self.cwnd_bytes = self.cwnd_bytes.saturating_add(grow);
                    self.ssthresh_bytes = self.cwnd_bytes;
                    return;
                }
            }
            if self.quinn {
                // quinn-proto: every byte, past ssthresh too.
                self.cwnd_bytes = self.cwnd_bytes.saturating_add(grow);
            } else {
                self.cwnd_bytes = self.cwnd_bytes.saturating_add(grow).min(self.ssthresh_bytes);
            }
            return;
        }
        if self.quinn {
            self.quinn_congestion_avoidance(ack, acked);
        } else {
            self.congestion_avoidance(ack, acked);
        }
    }

    /// RFC 9438 §4.6-4.8. Loss: reduce once per recovery episode; cwnd stays while PRR runs
    /// and becomes ssthresh when recovery ends. ECN (RFC 9438 §4.6, RFC 3168 §6.1.2): the
    /// same reduction at once, none during recovery. Timeout (§4.8): ssthresh as for a loss,
    /// except that it is kept when fast recovery had already reduced it (as Linux) and when
    /// the timer expires again before the last timeout's recovery ended (RFC 5681 §3.1);
    /// cwnd drops to one segment, and the next congestion-avoidance stage starts with K = 0
    /// from its own cwnd.
    fn on_congestion(&mut self, now_ns: u64, signal: CongestionSignal, _bytes_in_flight: u64) {
        match signal {
            CongestionSignal::Loss => {
                if self.in_recovery {
                    return;
                }
                self.reduce();
                self.quinn_origin_ns = Some(now_ns);
                self.in_recovery = true;
            }
            CongestionSignal::Ecn { .. } => {
                if self.in_recovery {
                    return;
                }
                self.reduce();
                self.quinn_origin_ns = Some(now_ns);
                self.cwnd_bytes = self.ssthresh_bytes;
            }
            CongestionSignal::Timeout => {
                if !self.in_recovery && !self.in_timeout_recovery {
                    self.reduce();
                }
                self.in_timeout_recovery = true;
                self.w_max_bytes = None;
                self.quinn_origin_ns = None;
                self.epoch = None;
                self.ca_remainder = 0;
                self.cwnd_bytes = self.mss_bytes;
                self.in_recovery = false;
                self.stop_hystart();
            }
            CongestionSignal::PersistentCongestion => {
                // RFC 9002 §7.6.2: the window collapses to kMinimumWindow (2 packets) and the
                // cubic epoch starts over; ssthresh stays where the loss response put it.
                self.w_max_bytes = None;
                self.quinn_origin_ns = None;
                self.epoch = None;
                self.ca_remainder = 0;
                self.cwnd_bytes = 2 * self.mss_bytes;
                self.in_recovery = false;
                self.stop_hystart();
            }
        }
    }

    /// RFC 9438 §4.6 / RFC 6582 §3.2 step 3: cwnd = ssthresh once recovery ends.
    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.in_timeout_recovery = false;
        if self.in_recovery {
            self.cwnd_bytes = self.ssthresh_bytes;
            self.ca_remainder = 0;
            self.in_recovery = false;
        }
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;
    const SEC: u64 = 1_000_000_000;

    fn ack(now_ns: u64, bytes: u64, srtt_ns: u64) -> AckSample {
        AckSample {
            now_ns,
            newly_acked_bytes: bytes,
            prior_in_flight_bytes: u64::MAX / 4,
            srtt_ns: Some(srtt_ns),
            rtt_ns: Some(srtt_ns),
            ..Default::default()
        }
    }

    /// A controller in congestion avoidance after one loss at `cwnd_segments`, recovery over.
    fn after_loss(cwnd_segments: u64) -> Cubic {
        let mut c = Cubic::new(MSS, cwnd_segments, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Loss, cwnd_segments * MSS);
        c.on_recovery_exit(0);
        c
    }

    /// quinn-proto's congestion avoidance ([`Cubic::as_quinn`]) against hand-computed values. A loss
    /// at 10 datagrams (t = 0): W_max = 10, cwnd 7, K = ∛(10·0.3/0.4) = ∛7.5 = 1.957434 s.
    /// At t = 100 ms with srtt 100 ms: W_cubic(0.2 s) = 0.4·(0.2 − 1.957434)³ + 10 = 7.8288
    /// datagrams above W_est(0.1 s) = 7 + (0.9/1.7)·1 = 7.5294: the cubic region, each
    /// datagram acknowledged owes (7828.8 − 7000)/7000 · 1000 = 118 bytes; nine of them
    /// owe 1062 ≥ 1000 at the ninth: one datagram more, the count back to 0. At t = 1 s:
    /// W_cubic(1.1 s) = 9.7478 below W_est(1 s) = 7 + 0.5294·10 = 12.2941, the Reno-friendly
    /// region: each datagram owes W_est − cwnd, a whole datagram at once, so three datagrams
    /// acknowledged take 8000 to 11000.
    #[test]
    fn quinns_congestion_avoidance() {
        let mut c = Cubic::new(MSS, 10, CubicConfig::default()).as_quinn();
        c.on_congestion(0, CongestionSignal::Loss, 10 * MSS);
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 7_000);
        assert!((c.quinn_k_s - 7.5f64.cbrt()).abs() < 1e-12);
        c.on_ack(&ack(100 * MS, 8 * MSS, 100 * MS));
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes), (7_000, 8 * 118));
        c.on_ack(&ack(100 * MS, MSS, 100 * MS));
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes), (8_000, 0));
        c.on_ack(&ack(SEC, 3 * MSS, 100 * MS));
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes), (11_000, 0));
        // W_est is 12294: 1294 owed by the next datagram (12000), then 294 by each, until
        // the window passes W_est; above it nothing is owed.
        c.on_ack(&ack(SEC, 3 * MSS, 100 * MS));
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes), (12_000, 588));
        c.on_ack(&ack(SEC, 2 * MSS, 100 * MS));
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes), (13_000, 0));
        c.on_ack(&ack(SEC, 10 * MSS, 100 * MS));
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes), (13_000, 0));
        // The next reduction keeps β of the count and times the stage from itself; the
        // window is above the last W_max, so W_max = 13000 (no fast convergence).
        c.quinn_cwnd_inc_bytes = 500;
        c.on_congestion(2 * SEC, CongestionSignal::Loss, 13 * MSS);
        c.on_recovery_exit(2 * SEC);
        assert_eq!((c.window_bytes(), c.quinn_cwnd_inc_bytes, c.w_max_bytes()), (9_100, 350, Some(13_000)));
        assert_eq!(c.quinn_origin_ns, Some(2 * SEC));
    }

    /// TCP keeps whole segments when it reduces (Linux: max(cwnd·717/1024, 2), ns-3:
    /// max(cwnd·0.7, 2), in segments, rounded down); QUIC keeps the bytes (quinn-proto).
    #[test]
    fn tcp_reduces_to_whole_segments_and_quic_to_bytes() {
        for (cwnd, tcp, quic) in [(11, 7 * MSS, 7_700), (10, 7 * MSS, 7_000), (3, 2 * MSS, 2_100), (5, 3 * MSS, 3_500)]
        {
            let mut t = Cubic::new(MSS, cwnd, CubicConfig::default());
            let mut q = Cubic::new(MSS, cwnd, CubicConfig::default()).for_quic();
            for c in [&mut t, &mut q] {
                c.on_congestion(0, CongestionSignal::Loss, cwnd * MSS);
                c.on_recovery_exit(0);
            }
            assert_eq!((t.window_bytes(), q.window_bytes()), (tcp, quic), "cwnd {cwnd} segments");
        }
        // A window in bytes between segments counts its whole segments only: 10.9 → 7.
        let mut t = Cubic::new(MSS, 10, CubicConfig::default());
        t.cwnd_bytes = 10_900;
        t.on_congestion(0, CongestionSignal::Loss, 10_900);
        assert_eq!(t.ssthresh_bytes(), 7 * MSS);
    }

    /// A duplicate ACK (SACK only) does not grow the window in slow start or after it.
    #[test]
    fn a_sack_only_ack_does_not_grow_the_window() {
        let mut c = Cubic::new(MSS, 10, CubicConfig::default());
        c.on_ack(&AckSample { sack_only: true, ..ack(0, 2 * MSS, 50 * MS) });
        assert_eq!(c.window_bytes(), 10 * MSS);
        c.on_ack(&ack(0, 2 * MSS, 50 * MS));
        assert_eq!(c.window_bytes(), 12 * MSS);
    }

    #[test]
    fn k_is_the_cube_root_of_the_window_deficit_over_c() {
        // (W_max − cwnd_epoch)/C = 3.2 segments / 0.4 = 8 s³: K = 2 s.
        assert_eq!(k_ns(100_000, 96_800, MSS), 2 * SEC);
        // After a loss at 100 segments: cwnd_epoch = 70, (100 − 70)/0.4 = 75, ∛75 =
        // 4.217163326508746 s.
        assert_eq!(k_ns(100_000, 70_000, MSS), 4_217_163_327);
        // 1448-byte segments: 30 segments of deficit give the same K.
        assert_eq!(k_ns(100 * 1448, 70 * 1448, 1448), 4_217_163_327);
        assert_eq!(k_ns(70_000, 80_000, MSS), 0, "no deficit: K = 0");
    }

    #[test]
    fn w_cubic_follows_eq_1() {
        // K = 2 s, W_max = 100 segments: W(t) = 0.4·(t − 2)³ + 100 segments.
        assert_eq!(w_cubic_bytes(2 * SEC, 2 * SEC, 100_000, MSS), 100_000, "plateau at t = K");
        assert_eq!(w_cubic_bytes(0, 2 * SEC, 100_000, MSS), 96_800, "0.4·(−8) = −3.2 segments");
        assert_eq!(w_cubic_bytes(SEC, 2 * SEC, 100_000, MSS), 99_600, "0.4·(−1) = −0.4 segments");
        assert_eq!(w_cubic_bytes(3 * SEC, 2 * SEC, 100_000, MSS), 100_400, "0.4·1 = 0.4 segments");
        assert_eq!(w_cubic_bytes(5 * SEC, 2 * SEC, 100_000, MSS), 110_800, "0.4·27 = 10.8 segments");
        // 2.5 s: 0.4·0.125 = 0.05 segments = 50 bytes.
        assert_eq!(w_cubic_bytes(2_500 * MS, 2 * SEC, 100_000, MSS), 100_050);
        // Far from the plateau it saturates instead of overflowing.
        assert_eq!(w_cubic_bytes(0, u64::MAX, 100_000, MSS), 0);
        assert_eq!(w_cubic_bytes(u64::MAX, 0, 100_000, MSS), u64::MAX);
    }

    #[test]
    fn loss_reduces_to_seven_tenths_and_recovery_exit_applies_it() {
        let mut c = Cubic::new(MSS, 100, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Loss, 50_000);
        // 0.7 · 100 segments, from cwnd (not the 50-segment flight), as Linux and quinn.
        assert_eq!(c.ssthresh_bytes(), 70_000);
        assert_eq!(c.window_bytes(), 100_000, "PRR runs the window during recovery");
        assert_eq!(c.state(), "recovery");
        c.on_congestion(0, CongestionSignal::Loss, 10_000);
        assert_eq!(c.ssthresh_bytes(), 70_000, "one reduction per recovery episode");
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 70_000);
        assert_eq!(c.w_max_bytes(), Some(100_000), "first event: W_max = cwnd");
        assert_eq!(c.state(), "congestion_avoidance");
        // 1448-byte segments, IW 10: 0.7 · 14480 = 10136.
        let mut c = Cubic::new(1448, 10, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Loss, 14_480);
        assert_eq!(c.ssthresh_bytes(), 10_136);
        // Floor of two segments.
        let mut c = Cubic::new(MSS, 2, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 2_000);
        assert_eq!((c.ssthresh_bytes(), c.window_bytes()), (2_000, 2_000), "0.7·2 = 1.4 raised to 2");
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_cwnd_had_not_regained_it() {
        let mut c = after_loss(100);
        assert_eq!(c.w_max_bytes(), Some(100_000));
        // A second loss at cwnd 70 segments < W_max 100: W_max = 70·(1 + 0.7)/2 = 59.5
        // segments; ssthresh = 0.7·70 = 49 segments.
        c.on_congestion(0, CongestionSignal::Loss, 70_000);
        assert_eq!(c.w_max_bytes(), Some(59_500));
        assert_eq!(c.ssthresh_bytes(), 49_000);
        c.on_recovery_exit(0);
        // cwnd_epoch 49 < W_max 59.5: K = ∛(10.5/0.4) = ∛26.25 = 2.971960976 s, set by the
        // first ACK of the stage.
        c.on_ack(&ack(SEC, MSS, 100 * MS));
        assert_eq!(c.epoch_k_ns(), Some(2_971_960_976));
        // A loss above W_max (no fast convergence): W_max = cwnd.
        let mut c = after_loss(10);
        c.cwnd_bytes = 20_000;
        c.on_congestion(0, CongestionSignal::Loss, 20_000);
        assert_eq!(c.w_max_bytes(), Some(20_000));
    }

    /// The concave region: from cwnd_epoch = 70 segments below W_max = 100 (K = ∛75 s =
    /// 4.217163327 s). The first ACK, at the epoch's start (t = 0), is in the Reno-friendly
    /// region: W_cubic(0) = 70 000 < W_est = 70 000 + 9·1000·1000/(17·70 000) = 70 007.
    /// At t = 1 s, W_cubic(1 s) = 100 − 0.4·3.217163³ = 86.681 segments is above W_est
    /// (≈ 70 015), so CUBIC aims at W_cubic(1.1 s) = 100 − 0.4·3.117163³ = 100 − 12.1154 =
    /// 87.8846 segments (87 885 bytes: the negative offset truncates towards zero), below
    /// 1.5·cwnd; one 1000-byte ACK adds (87 885 − 70 007)·1000/70 007 = 255.36: 255 bytes.
    #[test]
    fn concave_region_grows_towards_w_max_by_target_minus_cwnd_over_cwnd() {
        let mut c = after_loss(100);
        assert_eq!(c.window_bytes(), 70_000);
        c.on_ack(&ack(0, MSS, 100 * MS));
        assert_eq!(c.window_bytes(), 70_007, "Reno-friendly at t = 0");
        assert_eq!(w_cubic_bytes(SEC, 4_217_163_327, 100_000, MSS), 86_681);
        assert_eq!(w_cubic_bytes(1_100 * MS, 4_217_163_327, 100_000, MSS), 87_885);
        c.on_ack(&ack(SEC, MSS, 100 * MS));
        assert_eq!(c.window_bytes(), 70_007 + 255);
        assert_eq!(c.state(), "congestion_avoidance");
    }

    /// The convex region and the 1.5·cwnd cap: at t = 60 s, W_cubic(t + RTT) = 0.4·55.9³ +
    /// 100 ≈ 70 000 segments, far above 1.5·cwnd, so the target is 1.5·70 007 = 105 010
    /// (truncated) and a 10 000-byte ACK adds 35 003·10 000/70 007 = 4999.93: 4999 bytes.
    #[test]
    fn convex_region_is_capped_at_one_and_a_half_cwnd() {
        let mut c = after_loss(100);
        c.on_ack(&ack(0, MSS, 100 * MS));
        assert_eq!(c.window_bytes(), 70_007);
        c.on_ack(&ack(60 * SEC, 10_000, 100 * MS));
        assert_eq!(c.window_bytes(), 70_007 + 4_999);
    }

    /// §4.3: with a short RTT and a large deficit, Reno's estimate grows faster than the
    /// cubic: W_est starts at cwnd_epoch and grows by alpha = 9/17 segment per window.
    #[test]
    fn reno_friendly_region_follows_w_est() {
        // W_max = 100 segments, cwnd_epoch = 70. ACKs at the epoch's start keep t = 0, so
        // W_cubic(0) = 70 000 while W_est = 70 segments + 9/17·(acked/cwnd) segments pulls
        // ahead.
        let mut c = after_loss(100);
        c.on_ack(&ack(0, 70_000, MS));
        // W_cubic(0) = 70000 < W_est = 70000 + 9·1000·70000/(17·70000) = 70529.41: Reno.
        assert_eq!(c.window_bytes(), 70_529);
        // The first ACK left 630 000 000 mod 1 190 000 = 490 000 (of 1/(17·cwnd) bytes); the
        // next window-sized ACK adds (630 000 000 + 490 000)/(17·70 529) = 525.85: 525.
        c.on_ack(&ack(0, 70_000, MS));
        assert_eq!(c.window_bytes(), 71_054);
        // Once W_est reaches cwnd_prev (100 segments) alpha is 1: one segment per window.
        let mut c = after_loss(100);
        c.cwnd_prev_bytes = 70_000;
        c.on_ack(&ack(0, 70_000, MS));
        assert_eq!(c.window_bytes(), 71_000, "alpha = 1: one segment per window of ACKs");
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum_window() {
        // RFC 9002 §7.6.2 after the loss response (β = 0.7): cwnd = 2 packets, ssthresh kept.
        let mut c = Cubic::new(MSS, 100, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Loss, 100_000);
        assert_eq!(c.ssthresh_bytes(), 70_000);
        c.on_congestion(0, CongestionSignal::PersistentCongestion, 100_000);
        assert_eq!((c.window_bytes(), c.ssthresh_bytes()), (2 * MSS, 70_000));
        assert_eq!(c.w_max_bytes(), None, "the cubic epoch starts over");
    }

    #[test]
    fn timeout_collapses_to_one_segment_and_restarts_with_k_zero() {
        let mut c = Cubic::new(MSS, 100, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Timeout, 100_000);
        assert_eq!((c.window_bytes(), c.ssthresh_bytes()), (MSS, 70_000));
        assert_eq!(c.w_max_bytes(), None, "§4.8: W_max will be cwnd at the start of CA");
        c.on_congestion(0, CongestionSignal::Timeout, MSS);
        assert_eq!(c.ssthresh_bytes(), 70_000, "RFC 5681 §3.1: a repeated timeout keeps ssthresh");
        c.on_recovery_exit(0);
        // Slow start back to ssthresh: 1000 + 69000 acknowledged.
        c.on_ack(&ack(0, 69_000, 50 * MS));
        assert_eq!(c.window_bytes(), 70_000);
        c.on_ack(&ack(SEC, MSS, 50 * MS));
        assert_eq!(c.epoch_k_ns(), Some(0), "K = 0, W_max = cwnd_epoch = 70000");
        // A timeout during fast recovery keeps fast recovery's ssthresh.
        let mut c = Cubic::new(MSS, 100, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Loss, 100_000);
        c.on_congestion(0, CongestionSignal::Timeout, 100_000);
        assert_eq!((c.window_bytes(), c.ssthresh_bytes(), c.state()), (MSS, 70_000, "slow_start"));
    }

    #[test]
    fn ecn_reduces_at_once_but_not_during_recovery() {
        let mut c = Cubic::new(MSS, 100, CubicConfig::default());
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 40_000);
        assert_eq!((c.window_bytes(), c.ssthresh_bytes()), (70_000, 70_000));
        assert_eq!(c.state(), "congestion_avoidance");
        c.on_congestion(0, CongestionSignal::Loss, 70_000);
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 70_000);
        assert_eq!(c.ssthresh_bytes(), 49_000, "ECN during recovery is ignored");
    }

    #[test]
    fn slow_start_adds_the_bytes_acknowledged_up_to_ssthresh() {
        let mut c = Cubic::new(MSS, 10, CubicConfig::default());
        c.on_ack(&ack(0, 2_000, MS));
        assert_eq!(c.window_bytes(), 12_000);
        c.on_ack(&ack(0, 5_000, MS));
        assert_eq!(c.window_bytes(), 17_000, "no per-ACK cap without HyStart++ (as Linux)");
        let mut app_limited = ack(0, 2_000, MS);
        app_limited.app_limited = true;
        app_limited.prior_in_flight_bytes = 8_000;
        c.on_ack(&app_limited);
        assert_eq!(c.window_bytes(), 17_000, "an unused window does not grow");
    }

    /// HyStart++ inside CUBIC: on a scripted RTT increase (40 ms, then 45 ms = 40 + 40/8),
    /// slow start turns into CSS, and five CSS rounds later CUBIC sets ssthresh = cwnd.
    #[test]
    fn hystart_ends_slow_start_on_a_delay_increase() {
        let mut c = Cubic::new(MSS, 10, CubicConfig { hystart: true });
        let mut delivered = 0;
        let mut now = 0;
        let mut batch = |c: &mut Cubic, packets: u64, rtt_ns: u64| {
            for _ in 0..packets {
                c.on_packet_sent(now, MSS, 0, false);
            }
            now += rtt_ns;
            for _ in 0..packets / 2 {
                delivered += 2 * MSS;
                let mut a = ack(now, 2 * MSS, rtt_ns);
                a.delivered_total_bytes = delivered;
                c.on_ack(&a);
            }
        };
        batch(&mut c, 20, 40 * MS);
        batch(&mut c, 20, 40 * MS);
        assert_eq!(c.state(), "slow_start");
        assert_eq!(c.window_bytes(), 50_000, "10 + 20 + 20 segments");
        // The round's 8th sample at 45 ms (ACK 9): ACKs 1..9 add 2000, ACK 10 adds 500.
        batch(&mut c, 20, 45 * MS);
        assert_eq!(c.state(), "css");
        assert_eq!(c.window_bytes(), 50_000 + 18_500);
        // Five round ends in CSS (one per batch, on its first ACK); the fifth sets ssthresh.
        for _ in 0..4 {
            batch(&mut c, 20, 45 * MS);
        }
        assert_eq!(c.window_bytes(), 68_500 + 4 * 5_000);
        batch(&mut c, 20, 45 * MS);
        // +500 on the round end, then ssthresh = cwnd = 89000 and CUBIC's congestion
        // avoidance (W_max = cwnd_epoch, K = 0) for ACKs 2..10.
        assert_eq!(c.ssthresh_bytes(), 89_000);
        assert_eq!(c.state(), "congestion_avoidance");
        assert_eq!(c.epoch_k_ns(), Some(0));
        assert!(c.window_bytes() > 89_000 && c.window_bytes() < 89_000 + 9 * 2_000);
    }
}
