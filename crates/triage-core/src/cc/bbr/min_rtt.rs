//! The round-trip propagation time (RTprop) estimate.
//!
//! BBR (Cardwell et al. 2016) §"Estimating RTprop": the minimum RTT over a 10-second
//! window. Like Linux `bbr_update_min_rtt`, this keeps the minimum and the time it was
//! last refreshed rather than a full windowed filter: once the minimum is older than
//! the window, the next sample replaces it whatever its value, and PROBE_RTT runs to
//! give that sample a chance to see an empty queue.

/// The RTprop filter window (Linux `bbr_min_rtt_win_sec` = 10 s).
pub(super) const MIN_RTT_WINDOW_NS: u64 = 10_000_000_000;

/// Minimum RTT and its timestamp (Linux `min_rtt_us`, `min_rtt_stamp`).
#[derive(Clone, Debug, Default)]
pub(super) struct MinRttFilter {
    /// The minimum RTT, `None` before any sample.
    min_rtt_ns: Option<u64>,
    /// When it was last refreshed.
    stamp_ns: Option<u64>,
}

impl MinRttFilter {
    /// The current estimate, `None` before any RTT sample.
    pub(super) fn get(&self) -> Option<u64> {
        self.min_rtt_ns
    }

    /// True when the estimate was not refreshed for more than the window
    /// (Linux `after(tcp_jiffies32, min_rtt_stamp + bbr_min_rtt_win_sec * HZ)`).
    pub(super) fn is_expired(&self, now_ns: u64) -> bool {
        self.stamp_ns.is_some_and(|stamp| now_ns > stamp.saturating_add(MIN_RTT_WINDOW_NS))
    }

    /// Takes an RTT sample: it replaces the estimate when lower, or when the estimate
    /// had expired (`expired`, evaluated before this ACK).
    pub(super) fn update(&mut self, now_ns: u64, rtt_ns: Option<u64>, expired: bool) {
        let Some(rtt) = rtt_ns else { return };
        let is_lower = match self.min_rtt_ns {
            Some(min) => rtt < min,
            None => true,
        };
        if is_lower || expired {
            self.min_rtt_ns = Some(rtt);
            self.stamp_ns = Some(now_ns);
        }
    }

    /// Marks the estimate as fresh without a new sample (Linux
    /// `bbr_check_probe_rtt_done`: "wait a while until PROBE_RTT").
    pub(super) fn refresh_stamp(&mut self, now_ns: u64) {
        self.stamp_ns = Some(now_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_minimum_until_it_expires() {
        let mut f = MinRttFilter::default();
        assert!(!f.is_expired(u64::MAX));
        f.update(0, Some(50), false);
        f.update(1, Some(60), f.is_expired(1));
        assert_eq!(f.get(), Some(50));
        f.update(2, Some(50), f.is_expired(2)); // equal does not refresh
        assert!(!f.is_expired(MIN_RTT_WINDOW_NS));
        assert!(f.is_expired(MIN_RTT_WINDOW_NS + 1));
        let now = MIN_RTT_WINDOW_NS + 1;
        f.update(now, Some(80), f.is_expired(now));
        assert_eq!(f.get(), Some(80));
        assert!(!f.is_expired(now + 1));
    }
}
