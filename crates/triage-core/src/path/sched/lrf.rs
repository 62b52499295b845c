//! Lowest-RTT-First (LRF), the default scheduler of multipath QUIC.
//!
//! PriorityBucket §5.2: "LRF \[6\] round-robinly packs data of all the streams for a single
//! packet. Upon sending the packet, an LRF sender needs to select a path for it. It
//! maintains a smoothed round-trip time (RTT) estimation of each path. Each time sending a
//! packet, it prefers the lowest RTT path with available congestion window."
//!
//! The two halves live apart here: the round-robin packing is the send scheduler's job
//! (`sched::stream::round_robin`), and this file only names the path. As in mp-quic
//! (`scheduler.go::selectPathLowLatency`, REPRODUCTION-pb-partial.md A.2.1) a path whose
//! window is full is skipped, and when every path is blocked nothing is sent.
//!
//! Two mp-quic details are not needed here: its unprobed paths (smoothed RTT 0) are served
//! by fewest packets sent, while ours start from the prior RTT (§4.1, PB-2) and so always
//! have a smoothed RTT; and it never uses path 0 once a second path exists, because in its
//! topology path 0 duplicates one of the others, which ours does not.

use super::{lowest_srtt, PathId, PathScheduler, PathView};

/// Lowest-RTT-First (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Lrf;

impl Lrf {
    /// An LRF scheduler (it keeps no state).
    pub fn new() -> Self {
        Self
    }
}

impl PathScheduler for Lrf {
    fn name(&self) -> &'static str {
        "lrf"
    }

    /// §5.2: "it prefers the lowest RTT path with available congestion window"; ties go to
    /// the lower path ID.
    fn choose(&mut self, _now_ns: u64, paths: &[PathView]) -> Option<PathId> {
        lowest_srtt(paths, |p| p.can_send).map(|p| p.id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{blocked, view};
    use super::*;

    #[test]
    fn picks_the_lowest_smoothed_rtt() {
        let mut s = Lrf::new();
        // Table 2 "High": 10 Mbps / 10 ms and 40 Mbps / 50 ms; bandwidth does not matter.
        let paths = [view(0, 40, 50), view(1, 10, 10)];
        assert_eq!(s.choose(0, &paths), Some(PathId(1)));
    }

    #[test]
    fn skips_a_path_whose_window_is_full() {
        let mut s = Lrf::new();
        let paths = [view(0, 40, 50), blocked(view(1, 10, 10))];
        assert_eq!(s.choose(0, &paths), Some(PathId(0)));
    }

    #[test]
    fn sends_nothing_when_every_path_is_blocked() {
        let mut s = Lrf::new();
        let paths = [blocked(view(0, 40, 50)), blocked(view(1, 10, 10))];
        assert_eq!(s.choose(0, &paths), None);
        assert_eq!(s.choose(0, &[]), None);
    }

    #[test]
    fn equal_rtts_go_to_the_lower_path_id() {
        let mut s = Lrf::new();
        // Table 2 "Low": two 25 Mbps / 10 ms paths.
        let paths = [view(1, 25, 10), view(0, 25, 10)];
        assert_eq!(s.choose(0, &paths), Some(PathId(0)));
    }

    #[test]
    fn follows_the_smoothed_rtt_not_the_minimum() {
        let mut s = Lrf::new();
        let mut a = view(0, 25, 10);
        a.srtt_ns = 30_000_000; // queueing raised path 0's smoothed RTT
        let b = view(1, 25, 20);
        assert_eq!(s.choose(0, &[a, b]), Some(PathId(1)));
    }
}
