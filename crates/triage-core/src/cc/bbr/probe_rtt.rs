//! PROBE_RTT: refresh RTprop by briefly draining the pipe.
//!
//! BBR (Cardwell et al. 2016) §"ProbeRTT": when RTprop has not been refreshed for 10 s,
//! cut cwnd to 4 packets for at least max(200 ms, one round) once inflight is that low,
//! then return to PROBE_BW (or STARTUP if the pipe was never filled). Linux
//! `bbr_update_min_rtt` and `bbr_check_probe_rtt_done`.
//!
//! Linux also marks the connection app-limited throughout PROBE_RTT
//! (`tp->app_limited = tp->delivered + tcp_packets_in_flight(tp)`), so that the low
//! delivery rates it causes neither lower BtlBw nor count as flat STARTUP rounds. The
//! connection owns that flag here, so BBR applies the same rule to the rate samples
//! itself: a sample is app-limited when its packet was sent while the mark was set,
//! i.e. when its `P.delivered` lies between `C.delivered` at PROBE_RTT entry and the
//! last mark.

use super::state::Mode;
use super::Bbr;

/// Minimum time spent at the low inflight (Linux `bbr_probe_rtt_mode_ms`).
pub(super) const PROBE_RTT_DURATION_NS: u64 = 200_000_000;

/// What an ACK tells the RTprop logic.
#[derive(Clone, Copy, Debug)]
pub(super) struct MinRttInput {
    /// Time of the ACK.
    pub(super) now_ns: u64,
    /// RTT sample of the ACK (Linux `rs->rtt_us`).
    pub(super) rtt_ns: Option<u64>,
    /// Bytes in flight after the ACK (Linux `tcp_packets_in_flight`).
    pub(super) bytes_in_flight: u64,
    /// `C.delivered` after the ACK.
    pub(super) delivered_total_bytes: u64,
    /// True when the ACK delivered data (Linux `rs->delivered > 0`).
    pub(super) delivered_data: bool,
}

impl Bbr {
    /// Linux `bbr_update_min_rtt`: refresh the RTprop estimate, enter PROBE_RTT when it
    /// expired, and run PROBE_RTT's timer and round.
    pub(super) fn update_min_rtt(&mut self, input: MinRttInput) {
        let now = input.now_ns;
        let expired = self.min_rtt.is_expired(now);
        self.min_rtt.update(now, input.rtt_ns, expired);

        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_ns = None;
            self.probe_rtt_app_limited = Some((input.delivered_total_bytes, input.delivered_total_bytes));
        }

        if self.mode == Mode::ProbeRtt {
            // Mark packets sent from now on app-limited, until C.delivered passes
            // what is delivered and in flight now.
            let mark = input.delivered_total_bytes.saturating_add(input.bytes_in_flight);
            if let Some((_, end)) = self.probe_rtt_app_limited.as_mut() {
                *end = mark;
            }
            match self.probe_rtt_done_ns {
                None if input.bytes_in_flight <= self.cwnd_min_target() => {
                    // Inflight is down to the minimum: hold it for 200 ms and a round.
                    self.probe_rtt_done_ns = Some(now.saturating_add(PROBE_RTT_DURATION_NS));
                    self.probe_rtt_round_done = false;
                    self.round.restart_at(input.delivered_total_bytes);
                }
                None => {}
                Some(_) => {
                    if self.round.is_round_start() {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done {
                        self.check_probe_rtt_done(now);
                    }
                }
            }
        }

        // Restart after idle ends only once we process a new ACK for data.
        if input.delivered_data {
            self.idle_restart = false;
        }
    }

    /// True when a rate sample's packet was sent while PROBE_RTT had the connection
    /// marked app-limited (`prior_delivered` is the packet's `P.delivered`).
    pub(super) fn is_probe_rtt_app_limited(&self, prior_delivered: u64) -> bool {
        self.probe_rtt_app_limited.is_some_and(|(start, end)| (start..=end).contains(&prior_delivered))
    }

    /// Leaves PROBE_RTT once its timer has run out (Linux `bbr_check_probe_rtt_done`):
    /// refresh the RTprop timestamp, restore the saved cwnd, and resume.
    pub(super) fn check_probe_rtt_done(&mut self, now_ns: u64) {
        match self.probe_rtt_done_ns {
            Some(done) if now_ns > done => {}
            _ => return,
        }
        self.min_rtt.refresh_stamp(now_ns);
        self.cwnd_bytes = self.cwnd_bytes.max(self.prior_cwnd_bytes);
        self.reset_mode(now_ns);
    }

    /// STARTUP if the pipe was never filled, else PROBE_BW (Linux `bbr_reset_mode`).
    fn reset_mode(&mut self, now_ns: u64) {
        if self.full_pipe.is_reached() {
            self.enter_probe_bw(now_ns);
        } else {
            self.enter_startup();
        }
    }
}
