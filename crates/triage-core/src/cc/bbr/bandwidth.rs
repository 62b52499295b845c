//! The bottleneck-bandwidth (BtlBw) estimate.
//!
//! BBR (Cardwell et al. 2016) §"Estimating BtlBw": the maximum delivery rate over the
//! last ~10 round trips. App-limited samples underestimate the bottleneck, so they only
//! enter the filter when they are at least the current maximum (Linux `bbr_update_bw`).

use super::windowed_filter::WindowedFilter;

/// Length of the bandwidth filter in rounds (Linux `bbr_bw_rtts` = `CYCLE_LEN + 2`).
pub(super) const BW_FILTER_ROUNDS: u64 = 10;

/// Windowed max of delivery-rate samples, in bits per second, timed in rounds.
#[derive(Clone, Debug)]
pub(super) struct BandwidthFilter {
    /// Max filter timed in rounds.
    filter: WindowedFilter,
}

impl BandwidthFilter {
    /// An empty filter.
    pub(super) fn new() -> Self {
        Self { filter: WindowedFilter::new_max(BW_FILTER_ROUNDS) }
    }

    /// Adds a delivery-rate sample taken in round `round` (Linux `bbr_update_bw`:
    /// `if (!rs->is_app_limited || bw >= bbr_max_bw(sk)) minmax_running_max(...)`).
    pub(super) fn update(&mut self, round: u64, bw_bps: u64, is_app_limited: bool) {
        if !is_app_limited || bw_bps >= self.max_bps() {
            self.filter.update(round, bw_bps);
        }
    }

    /// The current BtlBw estimate in bits per second, 0 before any sample
    /// (Linux `bbr_max_bw`).
    pub(super) fn max_bps(&self) -> u64 {
        self.filter.get().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_limited_samples_only_count_when_not_below_the_max() {
        let mut f = BandwidthFilter::new();
        f.update(1, 1000, false);
        f.update(2, 900, true); // ignored
        f.update(3, 1200, true); // raises the max
        assert_eq!(f.max_bps(), 1200);
        // After the window the app-limited 900 would have been the survivor had it
        // been admitted; instead the filter restarts from the next real sample.
        f.update(14, 700, false);
        assert_eq!(f.max_bps(), 700);
    }
}
