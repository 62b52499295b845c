//! PROBE_BW: the eight-phase pacing-gain cycle.
//!
//! BBR (Cardwell et al. 2016) §"ProbeBW": pace at 5/4 × BtlBw for about one RTprop to
//! probe for more bandwidth, then at 3/4 to drain any queue that created, then at 1 for
//! six RTprops. Linux `bbr_update_cycle_phase` refines the phase ends: the 5/4 phase
//! also waits until inflight reaches its 5/4 target (or a loss says it won't fit), and
//! the 3/4 phase ends early once inflight is down to the BDP.

use rand::RngExt;

use super::gain::{Gain, UNIT};
use super::state::Mode;
use super::Bbr;

/// Phases in the gain cycle (Linux `CYCLE_LEN`).
pub(super) const CYCLE_LEN: usize = 8;

/// The pacing gains of the cycle, in order (Linux `bbr_pacing_gain[]`).
pub(super) const PACING_GAIN_CYCLE: [Gain; CYCLE_LEN] =
    [Gain::new(5, 4), Gain::new(3, 4), UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];

/// The random start phase is drawn among this many phases (Linux `bbr_cycle_rand`):
/// every phase but the 3/4 one.
const CYCLE_RAND: usize = 7;

/// What an ACK tells the gain cycle.
#[derive(Clone, Copy, Debug)]
pub(super) struct CycleInput {
    /// Time of the ACK (Linux uses `tp->delivered_mstamp`).
    pub(super) now_ns: u64,
    /// Bytes in flight before the ACK (Linux `rs->prior_in_flight`).
    pub(super) prior_in_flight_bytes: u64,
    /// True when the ACK marked packets lost (Linux `rs->losses`).
    pub(super) had_losses: bool,
}

impl Bbr {
    /// Enters PROBE_BW at a random phase other than 3/4 (Linux
    /// `bbr_reset_probe_bw_mode`: `cycle_idx = CYCLE_LEN - 1 - prandom_u32_max(7)`,
    /// then advance one phase, so the start is uniform over {0, 2, 3, ..., 7}).
    pub(super) fn enter_probe_bw(&mut self, now_ns: u64) {
        self.mode = Mode::ProbeBw;
        let draw = self.rng.random_range(0..CYCLE_RAND);
        self.cycle_index = CYCLE_LEN - 1 - draw;
        self.advance_cycle_phase(now_ns);
    }

    /// Moves to the next phase (Linux `bbr_advance_cycle_phase`).
    fn advance_cycle_phase(&mut self, now_ns: u64) {
        self.cycle_index = (self.cycle_index + 1) % CYCLE_LEN;
        self.cycle_stamp_ns = now_ns;
    }

    /// The pacing gain of the current phase.
    pub(super) fn cycle_pacing_gain(&self) -> Gain {
        PACING_GAIN_CYCLE[self.cycle_index]
    }

    /// Advances the cycle when the current phase is over (Linux
    /// `bbr_update_cycle_phase`).
    pub(super) fn update_cycle_phase(&mut self, input: CycleInput) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(input) {
            self.advance_cycle_phase(input.now_ns);
        }
    }

    /// Linux `bbr_is_next_cycle_phase`: gain-1 phases last one min_rtt; the 5/4 phase
    /// lasts at least one min_rtt and until inflight reaches `inflight(5/4)` or a loss;
    /// the 3/4 phase lasts at most one min_rtt, ending early once inflight is at most
    /// `inflight(1)`.
    fn is_next_cycle_phase(&self, input: CycleInput) -> bool {
        let is_full_length =
            self.min_rtt.get().is_some_and(|min_rtt| input.now_ns.saturating_sub(self.cycle_stamp_ns) > min_rtt);
        let gain = self.cycle_pacing_gain();
        if gain.is_unit() {
            return is_full_length;
        }
        let bw = self.max_bw_bps();
        let inflight = input.prior_in_flight_bytes;
        if gain.is_above_unit() {
            return is_full_length && (input.had_losses || inflight >= self.inflight_target(bw, gain));
        }
        is_full_length || inflight <= self.inflight_target(bw, UNIT)
    }
}
