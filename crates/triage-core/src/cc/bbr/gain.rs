//! Gains as exact ratios.
//!
//! Linux `tcp_bbr.c` keeps gains in fixed point (`BBR_UNIT` = 256), which rounds
//! `2/ln 2` to 739/256; here every gain is an exact `numerator / denominator` ratio and
//! is applied with 128-bit intermediates, so no float ever enters the controller.

/// A gain as an exact ratio `numerator / denominator`, applied with integer arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gain {
    /// Numerator of the ratio.
    numerator: u64,
    /// Denominator of the ratio, never 0.
    denominator: u64,
}

impl Gain {
    /// The gain `numerator / denominator`. A zero denominator is replaced by 1.
    pub const fn new(numerator: u64, denominator: u64) -> Self {
        let denominator = if denominator == 0 { 1 } else { denominator };
        Self { numerator, denominator }
    }

    /// The ratio's numerator.
    pub const fn numerator(self) -> u64 {
        self.numerator
    }

    /// The ratio's denominator.
    pub const fn denominator(self) -> u64 {
        self.denominator
    }

    /// `floor(value × gain)`, saturating at `u64::MAX`.
    pub fn apply(self, value: u64) -> u64 {
        let v = value as u128 * self.numerator as u128 / self.denominator as u128;
        v.min(u64::MAX as u128) as u64
    }

    /// True when the gain is above 1 (a probing gain such as 5/4).
    pub const fn is_above_unit(self) -> bool {
        self.numerator > self.denominator
    }

    /// True when the gain is exactly 1.
    pub const fn is_unit(self) -> bool {
        self.numerator == self.denominator
    }
}

/// Gain 1 (Linux `BBR_UNIT`).
pub const UNIT: Gain = Gain::new(1, 1);

/// BBR (Cardwell et al. 2016) §"Startup": `2/ln 2` ≈ 2.885, the smallest gain that
/// doubles the sending rate each round (Linux `bbr_high_gain`). Used for both pacing
/// and cwnd in STARTUP, and for cwnd in DRAIN.
pub const HIGH_GAIN: Gain = Gain::new(2885, 1000);

/// BBR §"Drain": the inverse of [`HIGH_GAIN`], draining in one round the queue STARTUP
/// built (Linux `bbr_drain_gain`).
pub const DRAIN_GAIN: Gain = Gain::new(1000, 2885);

/// BBR §"ProbeBW": cwnd gain 2, so that delayed and stretched ACKs do not starve the
/// pipe (Linux `bbr_cwnd_gain`).
pub const CWND_GAIN: Gain = Gain::new(2, 1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_is_exact_floor() {
        assert_eq!(HIGH_GAIN.apply(1000), 2885);
        assert_eq!(DRAIN_GAIN.apply(2885), 1000);
        assert_eq!(Gain::new(5, 4).apply(10), 12);
        assert_eq!(Gain::new(3, 4).apply(u64::MAX), u64::MAX / 4 * 3 + 2);
        assert_eq!(HIGH_GAIN.apply(u64::MAX), u64::MAX);
        assert!(Gain::new(5, 4).is_above_unit());
        assert!(!Gain::new(3, 4).is_above_unit());
        assert!(UNIT.is_unit());
    }
}
