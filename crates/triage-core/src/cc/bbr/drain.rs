//! DRAIN: leave STARTUP once the pipe is full and drain the queue it built.
//!
//! BBR (Cardwell et al. 2016) §"Drain": pace at the inverse of STARTUP's gain until
//! inflight falls to the estimated BDP, then enter PROBE_BW (Linux `bbr_check_drain`).

use super::gain::UNIT;
use super::state::Mode;
use super::Bbr;

impl Bbr {
    /// STARTUP → DRAIN once the pipe is full, and DRAIN → PROBE_BW once
    /// `bytes_in_flight` is at most the gain-1 inflight target (BDP plus the
    /// quantization budget; Linux `bbr_inflight(sk, bw, BBR_UNIT)`). Both transitions
    /// can happen on the same ACK. Entering DRAIN also sets ssthresh to that target,
    /// as Linux does.
    pub(super) fn check_drain(&mut self, now_ns: u64, bytes_in_flight: u64) {
        if self.mode == Mode::Startup && self.full_pipe.is_reached() {
            self.mode = Mode::Drain;
            self.ssthresh_bytes = self.inflight_target(self.max_bw_bps(), UNIT);
        }
        if self.mode == Mode::Drain && bytes_in_flight <= self.inflight_target(self.max_bw_bps(), UNIT) {
            self.enter_probe_bw(now_ns);
        }
    }
}
