//! STARTUP and its exit: estimating when the pipe is full.
//!
//! BBR (Cardwell et al. 2016) §"Startup": pace and size cwnd at `2/ln 2` × the
//! estimate, doubling the sending rate each round, until BtlBw stops growing: three
//! consecutive rounds (not app-limited) without 25% growth mean the pipe is full
//! (Linux `bbr_check_full_bw_reached`).

use super::gain::Gain;
use super::state::Mode;
use super::Bbr;

/// Growth that counts as "still growing" (Linux `bbr_full_bw_thresh` = 5/4).
pub(super) const FULL_BW_THRESH: Gain = Gain::new(5, 4);

/// Rounds without growth that mean the pipe is full (Linux `bbr_full_bw_cnt`).
pub(super) const FULL_BW_COUNT: u32 = 3;

/// Full-pipe estimator (Linux `full_bw`, `full_bw_cnt`, `full_bw_reached`).
#[derive(Clone, Debug, Default)]
pub(super) struct FullPipe {
    /// BtlBw at the last round that grew it by at least 25%.
    full_bw_bps: u64,
    /// Rounds since then without such growth.
    count: u32,
    /// Set once, never cleared: the pipe has been filled at least once.
    reached: bool,
}

impl FullPipe {
    /// Updates the estimator at the end of an ACK (Linux `bbr_check_full_bw_reached`):
    /// only at round starts, only for samples that were not app-limited.
    pub(super) fn on_ack(&mut self, max_bw_bps: u64, round_start: bool, is_app_limited: bool) {
        if self.reached || !round_start || is_app_limited {
            return;
        }
        let threshold = FULL_BW_THRESH.apply(self.full_bw_bps);
        if max_bw_bps >= threshold {
            self.full_bw_bps = max_bw_bps;
            self.count = 0;
            return;
        }
        self.count += 1;
        self.reached = self.count >= FULL_BW_COUNT;
    }

    /// True once the pipe has been filled (Linux `bbr_full_bw_reached`).
    pub(super) fn is_reached(&self) -> bool {
        self.reached
    }

    /// Forgets the growth baseline (Linux `bbr_set_state` on RTO: `full_bw = 0`).
    pub(super) fn reset_baseline(&mut self) {
        self.full_bw_bps = 0;
    }
}

impl Bbr {
    /// Enters STARTUP (Linux `bbr_reset_startup_mode`).
    pub(super) fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_flat_rounds_fill_the_pipe() {
        let mut f = FullPipe::default();
        f.on_ack(100, true, false); // baseline
        f.on_ack(124, true, false); // < 125: flat 1
        f.on_ack(124, false, false); // not a round start
        f.on_ack(124, true, true); // app-limited
        f.on_ack(124, true, false); // flat 2
        assert!(!f.is_reached());
        f.on_ack(124, true, false); // flat 3
        assert!(f.is_reached());
    }

    #[test]
    fn growth_resets_the_count() {
        let mut f = FullPipe::default();
        f.on_ack(100, true, false);
        f.on_ack(100, true, false);
        f.on_ack(100, true, false);
        f.on_ack(125, true, false); // exactly 25%: growth
        f.on_ack(125, true, false);
        f.on_ack(125, true, false);
        assert!(!f.is_reached());
        f.on_ack(125, true, false);
        assert!(f.is_reached());
    }
}
