//! A path's bandwidth estimate (PriorityBucket §4.1: "we set up initial values of RTT and
//! bandwidth based on prior knowledge on creating a path ... the bandwidth estimation is
//! based on \[16\]", BBR).
//!
//! BBR's BtlBw filter (draft-ietf-ccwg-bbr §4.5.2.2 "BBR.max_bw"): the largest delivery-rate
//! sample over a window of about 10 round trips. Here the window is 10 smoothed RTTs of the
//! path, kept as a monotonic queue (each sample removes the smaller ones before it, so the
//! front is the window's maximum). The prior counts as a sample until 10 RTTs after the
//! first real one, so a path starts from what is known of it and then follows what it
//! delivers: on a lossy path whose controller never reaches the link rate, the estimate falls
//! to what the path carries. With no sample in the window (an idle path) the most recent
//! sample stands.

use std::collections::VecDeque;

/// Round trips the window spans.
pub const WINDOW_RTTS: u64 = 10;

/// Samples kept at most (the monotonic queue rarely holds more than a few).
const MAX_SAMPLES: usize = 64;

/// Windowed-max bandwidth filter seeded with a prior (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct BandwidthFilter {
    prior_bps: u64,
    /// The prior stops counting at this time (set by the first sample).
    prior_until_ns: Option<u64>,
    /// (time, rate) with rates strictly decreasing from the front.
    window: VecDeque<(u64, u64)>,
    last_bps: u64,
}

impl BandwidthFilter {
    /// A filter that starts from `prior_bps` (0: no prior).
    pub fn new(prior_bps: u64) -> Self {
        Self { prior_bps, ..Self::default() }
    }

    /// A delivery-rate sample at `now_ns`; `srtt_ns` sets the window.
    pub fn on_sample(&mut self, now_ns: u64, bps: u64, srtt_ns: u64) {
        let span = srtt_ns.saturating_mul(WINDOW_RTTS);
        self.prior_until_ns.get_or_insert(now_ns.saturating_add(span));
        while self.window.back().is_some_and(|&(_, b)| b <= bps) {
            self.window.pop_back();
        }
        if self.window.len() == MAX_SAMPLES {
            self.window.pop_front();
        }
        self.window.push_back((now_ns, bps));
        self.last_bps = bps;
        self.expire(now_ns, span);
    }

    fn expire(&mut self, now_ns: u64, span: u64) {
        let start = now_ns.saturating_sub(span);
        while self.window.len() > 1 && self.window.front().is_some_and(|&(t, _)| t < start) {
            self.window.pop_front();
        }
    }

    /// The estimate at `now_ns`.
    pub fn estimate_bps(&self, now_ns: u64, srtt_ns: u64) -> u64 {
        let start = now_ns.saturating_sub(srtt_ns.saturating_mul(WINDOW_RTTS));
        let in_window = self.window.iter().filter(|&&(t, _)| t >= start).map(|&(_, b)| b).max();
        let prior = match self.prior_until_ns {
            None => self.prior_bps,
            Some(u) if now_ns < u => self.prior_bps,
            Some(_) => 0,
        };
        in_window.unwrap_or(self.last_bps).max(prior)
    }

    /// The prior it started from.
    pub fn prior_bps(&self) -> u64 {
        self.prior_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn starts_from_the_prior_then_follows_the_samples() {
        let mut f = BandwidthFilter::new(40_000_000);
        assert_eq!(f.estimate_bps(0, 50 * MS), 40_000_000);
        // Slow-start samples below the prior: the prior holds for 10 RTTs (500 ms).
        f.on_sample(100 * MS, 5_000_000, 50 * MS);
        f.on_sample(150 * MS, 9_000_000, 50 * MS);
        assert_eq!(f.estimate_bps(599 * MS, 50 * MS), 40_000_000);
        // Then the largest sample of the last 500 ms.
        assert_eq!(f.estimate_bps(600 * MS, 50 * MS), 9_000_000);
        assert_eq!(f.estimate_bps(650 * MS, 50 * MS), 9_000_000);
        // 150 ms + 500 ms < 651 ms: the 9 Mbps sample has left the window; the 5 Mbps one
        // had been removed by it, so the last sample stands until a new one comes.
        assert_eq!(f.estimate_bps(651 * MS, 50 * MS), 9_000_000);
        f.on_sample(700 * MS, 3_000_000, 50 * MS);
        assert_eq!(f.estimate_bps(700 * MS, 50 * MS), 3_000_000);
        f.on_sample(750 * MS, 2_000_000, 50 * MS);
        assert_eq!(f.estimate_bps(750 * MS, 50 * MS), 3_000_000);
    }

    #[test]
    fn an_idle_path_keeps_its_last_sample() {
        let mut f = BandwidthFilter::new(0);
        f.on_sample(10 * MS, 7_000_000, 10 * MS);
        assert_eq!(f.estimate_bps(10_000 * MS, 10 * MS), 7_000_000);
    }

    #[test]
    fn a_larger_sample_replaces_smaller_older_ones() {
        let mut f = BandwidthFilter::new(0);
        for (i, b) in [1u64, 3, 2, 5, 4].iter().enumerate() {
            f.on_sample(i as u64 * MS, b * 1_000_000, 100 * MS);
        }
        assert_eq!(f.estimate_bps(5 * MS, 100 * MS), 5_000_000);
        assert_eq!(f.window.len(), 2, "5 and 4 remain");
    }
}
