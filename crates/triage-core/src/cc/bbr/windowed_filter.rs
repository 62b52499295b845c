//! Kathleen Nichols' windowed min/max filter, as in Linux `lib/minmax.c`.
//!
//! The filter keeps the best, second-best and third-best samples from three sub-windows
//! of the window, so finding the best value over the window is O(1) in time and space:
//! when the best sample ages out, the second choice (which is from a later sub-window)
//! takes over. Time can be any monotonic unit: BBR uses round counts for its bandwidth
//! filter.

/// One timestamped sample (`struct minmax_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sample {
    /// When the sample was taken.
    time: u64,
    /// The measurement.
    value: u64,
}

/// Whether the filter tracks the maximum or the minimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Running max (`minmax_running_max`).
    Max,
    /// Running min (`minmax_running_min`).
    Min,
}

/// A windowed running max or min filter (Linux `struct minmax`).
#[derive(Clone, Debug)]
pub struct WindowedFilter {
    /// Max or min.
    kind: Kind,
    /// Window length in the caller's time unit.
    window: u64,
    /// Best, second and third choices; `None` before the first sample.
    samples: Option<[Sample; 3]>,
}

impl WindowedFilter {
    /// A running-max filter over `window` time units (Linux `minmax_running_max`).
    pub fn new_max(window: u64) -> Self {
        Self { kind: Kind::Max, window, samples: None }
    }

    /// A running-min filter over `window` time units (Linux `minmax_running_min`).
    pub fn new_min(window: u64) -> Self {
        Self { kind: Kind::Min, window, samples: None }
    }

    /// The best value in the window, or `None` before the first sample
    /// (Linux `minmax_get`).
    pub fn get(&self) -> Option<u64> {
        self.samples.map(|s| s[0].value)
    }

    /// Forgets every sample and starts over from `value` at `time` (Linux `minmax_reset`).
    pub fn reset(&mut self, time: u64, value: u64) -> u64 {
        let sample = Sample { time, value };
        self.samples = Some([sample; 3]);
        value
    }

    /// True when `a` is at least as good as `b` for this filter's kind.
    fn at_least_as_good(&self, a: u64, b: u64) -> bool {
        match self.kind {
            Kind::Max => a >= b,
            Kind::Min => a <= b,
        }
    }

    /// Adds a measurement and returns the new best (Linux `minmax_running_max` /
    /// `minmax_running_min`). Time going backwards is treated as no time passing.
    pub fn update(&mut self, time: u64, value: u64) -> u64 {
        let Some(mut s) = self.samples else {
            return self.reset(time, value);
        };
        let val = Sample { time, value };
        // A new best, or nothing left in the window: forget earlier samples.
        if self.at_least_as_good(value, s[0].value) || time.saturating_sub(s[2].time) > self.window {
            return self.reset(time, value);
        }
        if self.at_least_as_good(value, s[1].value) {
            s[1] = val;
            s[2] = val;
        } else if self.at_least_as_good(value, s[2].value) {
            s[2] = val;
        }
        self.subwin_update(s, val)
    }

    /// As time advances, update the 1st, 2nd and 3rd choices (Linux
    /// `minmax_subwin_update`).
    fn subwin_update(&mut self, mut s: [Sample; 3], val: Sample) -> u64 {
        let win = self.window;
        let dt = val.time.saturating_sub(s[0].time);
        if dt > win {
            // Passed the entire window without a new best: promote the 2nd and 3rd
            // choices. The new 2nd choice may also be out of the window (the 3rd was
            // checked on entry), so this may happen twice.
            s[0] = s[1];
            s[1] = s[2];
            s[2] = val;
            if val.time.saturating_sub(s[0].time) > win {
                s[0] = s[1];
                s[1] = s[2];
                s[2] = val;
            }
        } else if s[1].time == s[0].time && dt > win / 4 {
            // A quarter of the window passed without a new best: take a 2nd choice
            // from the 2nd quarter of the window.
            s[1] = val;
            s[2] = val;
        } else if s[2].time == s[1].time && dt > win / 2 {
            // Half the window passed without a new best: take a 3rd choice from the
            // last half of the window.
            s[2] = val;
        }
        self.samples = Some(s);
        s[0].value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_hand_computed_sequence_with_expiry() {
        // Window of 10 rounds, as BBR's bandwidth filter.
        let mut f = WindowedFilter::new_max(10);
        assert_eq!(f.get(), None);
        assert_eq!(f.update(0, 100), 100); // s = [100@0, 100@0, 100@0]
        assert_eq!(f.update(1, 80), 100); // 80 >= s1 (100)? no; >= s2? no. dt=1 <= 2.5: s unchanged
        assert_eq!(f.update(3, 90), 100); // dt=3 > 10/4 and s1.t == s0.t: s1 = s2 = 90@3
        assert_eq!(f.update(4, 70), 100); // below every choice
        assert_eq!(f.update(6, 85), 100); // 85 >= s2 (90)? no; dt=6 > 5, s2.t == s1.t: s2 = 85@6
        assert_eq!(f.update(10, 60), 100); // still within the window of the best (dt=10)
                                           // dt = 11 > 10: the best (100@0) expires, 90@3 takes over, 85@6 becomes 2nd.
        assert_eq!(f.update(11, 50), 90);
        // dt from 90@3 = 11 > 10: 85@6 takes over.
        assert_eq!(f.update(14, 40), 85);
        // dt from 85@6 = 11: the 3rd choice (50@11 or later) takes over.
        assert_eq!(f.update(17, 30), 50);
        // A new max resets the whole filter.
        assert_eq!(f.update(18, 120), 120);
        assert_eq!(f.update(19, 10), 120);
        // Nothing left in the window (dt from the 3rd choice > 10): reset to the sample.
        assert_eq!(f.update(40, 5), 5);
    }

    #[test]
    fn max_filter_equal_value_refreshes_timestamp() {
        let mut f = WindowedFilter::new_max(10);
        f.update(0, 100);
        f.update(9, 100); // equal counts as a new max (minmax.c uses >=)
        assert_eq!(f.update(15, 1), 100);
        assert_eq!(f.update(20, 1), 1);
    }

    #[test]
    fn min_filter_hand_computed_sequence() {
        let mut f = WindowedFilter::new_min(100);
        assert_eq!(f.update(0, 50), 50);
        assert_eq!(f.update(10, 60), 50);
        assert_eq!(f.update(30, 55), 50); // dt > 25: 2nd = 3rd = 55@30
        assert_eq!(f.update(60, 58), 50); // dt > 50: 3rd = 58@60
        assert_eq!(f.update(101, 70), 55); // best 50@0 expires
        assert_eq!(f.update(131, 70), 58); // 55@30 expires
        assert_eq!(f.update(140, 40), 40); // new min
    }

    #[test]
    fn time_going_backwards_does_not_expire() {
        let mut f = WindowedFilter::new_max(10);
        f.update(100, 7);
        assert_eq!(f.update(50, 3), 7);
    }
}
