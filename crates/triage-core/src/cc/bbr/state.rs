//! BBR's four modes and the gains each one applies.

use super::gain::{Gain, CWND_GAIN, DRAIN_GAIN, HIGH_GAIN, UNIT};

/// The BBR state machine's modes (BBR, Cardwell et al. 2016, §"Putting it together";
/// Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up quickly to fill the pipe.
    Startup,
    /// Drain the queue STARTUP created.
    Drain,
    /// Cycle the pacing gain to probe for and share bandwidth.
    ProbeBw,
    /// Cut inflight to a minimum to probe the propagation RTT.
    ProbeRtt,
}

impl Mode {
    /// Name for traces: `"startup"`, `"drain"`, `"probe_bw"` or `"probe_rtt"`.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }

    /// `(pacing_gain, cwnd_gain)` in this mode; PROBE_BW's pacing gain is the current
    /// phase's, passed in (Linux `bbr_update_gains`).
    pub(super) fn gains(self, probe_bw_pacing_gain: Gain) -> (Gain, Gain) {
        match self {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (probe_bw_pacing_gain, CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        }
    }
}
