//! The congestion window.
//!
//! BBR (Cardwell et al. 2016) §"Congestion window": cwnd targets `cwnd_gain × BDP`
//! (BDP = BtlBw × RTprop) plus, as in Linux `bbr_quantization_budget`, three MSS so
//! that the sender and receiver can keep full-sized segments in flight. Linux
//! `bbr_set_cwnd`: while the pipe is not full cwnd grows by the bytes acknowledged;
//! once full it grows by them but never above the target; it never drops below four
//! packets; PROBE_RTT caps it at four packets.

use super::gain::Gain;
use super::recovery::CwndUpdate;
use super::state::Mode;
use super::Bbr;

/// Minimum cwnd in segments (Linux `bbr_cwnd_min_target`).
pub(super) const CWND_MIN_TARGET_SEGMENTS: u64 = 4;

/// Segments added to every inflight target (Linux `bbr_quantization_budget`:
/// `3 * bbr_tso_segs_goal(sk)` with one-segment "TSO" bursts).
pub(super) const QUANTIZATION_BUDGET_SEGMENTS: u64 = 3;

/// Extra segments in the 5/4 phase so gain cycling lifts inflight above the BDP even
/// when the BDP is small (Linux `bbr_quantization_budget`, `cycle_idx == 0`).
pub(super) const PROBE_BW_UP_EXTRA_SEGMENTS: u64 = 2;

/// `ceil(bw × min_rtt × gain)` in bytes for `bw` in bits per second (Linux `bbr_bdp`).
pub(super) fn bdp_bytes(bw_bps: u64, min_rtt_ns: u64, gain: Gain) -> u64 {
    let Some(num) = (bw_bps as u128 * min_rtt_ns as u128).checked_mul(gain.numerator() as u128) else {
        return u64::MAX;
    };
    let den = 8 * 1_000_000_000 * gain.denominator() as u128;
    num.div_ceil(den).min(u64::MAX as u128) as u64
}

impl Bbr {
    /// Four segments: the floor of cwnd and PROBE_RTT's cap.
    pub(super) fn cwnd_min_target(&self) -> u64 {
        CWND_MIN_TARGET_SEGMENTS * self.config.mss_bytes
    }

    /// `gain × BDP`, or the initial window before any RTT sample (Linux `bbr_bdp`
    /// returns `TCP_INIT_CWND` then, unscaled by the gain).
    pub(super) fn bdp_target(&self, bw_bps: u64, gain: Gain) -> u64 {
        match self.min_rtt.get() {
            Some(min_rtt) => bdp_bytes(bw_bps, min_rtt, gain),
            None => self.initial_window_bytes(),
        }
    }

    /// Linux `bbr_inflight`: the BDP target plus the quantization budget (three MSS,
    /// and two more in PROBE_BW's 5/4 phase). Linux's rounding up to an even number
    /// of packets is not applied: the window is in bytes.
    pub(super) fn inflight_target(&self, bw_bps: u64, gain: Gain) -> u64 {
        let mss = self.config.mss_bytes;
        let mut target = self.bdp_target(bw_bps, gain).saturating_add(QUANTIZATION_BUDGET_SEGMENTS * mss);
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            target = target.saturating_add(PROBE_BW_UP_EXTRA_SEGMENTS * mss);
        }
        target
    }

    /// Linux `bbr_set_cwnd` for one ACK of `acked` bytes.
    pub(super) fn set_cwnd(&mut self, update: CwndUpdate, bw_bps: u64, gain: Gain) {
        if update.acked_bytes > 0 {
            let (cwnd, conserving) = self.recover_or_restore(update);
            // Deviation: Linux does not apply the 4-segment floor below under packet
            // conservation; here cwnd never drops below it except right after an RTO.
            let cwnd = if conserving {
                cwnd
            } else {
                let target = self.inflight_target(bw_bps, gain);
                if self.full_pipe.is_reached() {
                    cwnd.saturating_add(update.acked_bytes).min(target)
                } else if cwnd < target || update.delivered_total_bytes < self.initial_window_bytes() {
                    cwnd.saturating_add(update.acked_bytes)
                } else {
                    cwnd
                }
            };
            self.cwnd_bytes = cwnd.max(self.cwnd_min_target());
        }
        self.apply_probe_rtt_cap();
    }

    /// PROBE_RTT holds cwnd at four segments (end of Linux `bbr_set_cwnd`).
    pub(super) fn apply_probe_rtt_cap(&mut self) {
        if self.mode == Mode::ProbeRtt {
            self.cwnd_bytes = self.cwnd_bytes.min(self.cwnd_min_target());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::gain::{CWND_GAIN, UNIT};
    use super::*;

    #[test]
    fn bdp_hand_computed() {
        // 10 Mbps × 40 ms = 400,000 bits = 50,000 bytes.
        assert_eq!(bdp_bytes(10_000_000, 40_000_000, UNIT), 50_000);
        assert_eq!(bdp_bytes(10_000_000, 40_000_000, CWND_GAIN), 100_000);
        assert_eq!(bdp_bytes(10_000_000, 40_000_000, Gain::new(5, 4)), 62_500);
        // Rounds up: 1 bps × 1 ns is a tiny fraction of a byte.
        assert_eq!(bdp_bytes(1, 1, UNIT), 1);
        assert_eq!(bdp_bytes(0, 40_000_000, UNIT), 0);
        assert_eq!(bdp_bytes(u64::MAX, u64::MAX, CWND_GAIN), u64::MAX);
    }
}
