//! The sender's scoreboard work per ACK (RFC 6675 §4 Update() and IsLost()): an ACK looks
//! at the segments it newly SACKs and a few more, not at every segment its blocks span or
//! that lies above a hole, so a loss in a large window costs a walk as long as the window
//! once, not once per ACK.

use super::*;
use proptest::prelude::*;

/// `seen` built from `ranges` by `add`, in order.
fn seen_of(ranges: &[(u64, u64)]) -> SackSeen {
    let mut seen = SackSeen::default();
    for &(a, b) in ranges {
        seen.add(a, b);
    }
    seen
}

#[test]
fn uncovered_parts_of_a_block_hand_computed() {
    let seen = seen_of(&[(10, 20), (30, 40)]);
    assert_eq!(seen.uncovered(0, 50).collect::<Vec<_>>(), vec![(0, 10), (20, 30), (40, 50)]);
    assert_eq!(seen.uncovered(12, 35).collect::<Vec<_>>(), vec![(20, 30)]);
    assert_eq!(seen.uncovered(12, 18).count(), 0);
    assert_eq!(seen.uncovered(40, 45).collect::<Vec<_>>(), vec![(40, 45)]);
    assert_eq!(SackSeen::default().uncovered(5, 9).collect::<Vec<_>>(), vec![(5, 9)]);
}

#[test]
fn touching_or_overlapping_ranges_keep_only_the_longest() {
    // [10, 20) and [20, 35) touch: a segment [15, 25) lies in their union and in neither,
    // so they must not be merged into [10, 35).
    let seen = seen_of(&[(10, 20), (20, 35)]);
    assert_eq!(seen.ranges[..seen.len as usize], [(20, 35)]);
    assert_eq!(seen.uncovered(10, 35).collect::<Vec<_>>(), vec![(10, 20)]);
    let seen = seen_of(&[(0, 50), (40, 45), (60, 70)]);
    assert_eq!(seen.ranges[..seen.len as usize], [(0, 50), (60, 70)]);
    // Empty ranges are not kept.
    assert_eq!(seen_of(&[(7, 7)]).len, 0);
}

proptest! {
    /// The uncovered parts are ascending, disjoint, non-empty and inside the block, and
    /// cover exactly its points outside every range; the ranges stay sorted with a gap
    /// between any two, each one of those added.
    #[test]
    fn uncovered_is_the_blocks_complement(
        ranges in proptest::collection::vec((0u64..64, 0u64..16), 0..=MAX_SACK_BLOCKS),
        start in 0u64..80,
        len in 0u64..40,
    ) {
        let ranges: Vec<(u64, u64)> = ranges.into_iter().map(|(a, l)| (a, a + l)).collect();
        let seen = seen_of(&ranges);
        let kept = &seen.ranges[..seen.len as usize];
        for w in kept.windows(2) {
            prop_assert!(w[0].1 < w[1].0, "no gap: {kept:?}");
        }
        for r in kept {
            prop_assert!(r.0 < r.1 && ranges.contains(r));
        }
        let end = start + len;
        let parts: Vec<(u64, u64)> = seen.uncovered(start, end).collect();
        let mut last = start;
        for &(u, v) in &parts {
            prop_assert!(u >= last && u < v && v <= end, "{parts:?}");
            last = v;
        }
        for x in start..end {
            let covered = kept.iter().any(|&(a, b)| a <= x && x < b);
            let listed = parts.iter().any(|&(u, v)| u <= x && x < v);
            prop_assert_eq!(covered, !listed, "point {}", x);
        }
    }
}

/// A 50 MB transfer on a 1 Gbps path with 10 ms one-way delay (a window of about 1,700
/// segments), losing the server's `nth` packet. Returns the harness after the run.
fn one_loss_in_a_large_window(nth: u64) -> Harness {
    let cfg =
        ConnectionConfig { controller: ControllerKind::NewReno, receive_buffer_bytes: 64 << 20, ..Default::default() };
    let mut h = Harness::new(cfg, 1_000_000_000, 10 * MS);
    h.drop = Box::new(move |_, c2s, _, n| !c2s && n == nth);
    let msgs = vec![MessageMeta { id: 1, len_bytes: 50_000_000, priority: 0 }];
    h.run(100_000 * MS, serve_page(msgs));
    h
}

#[test]
fn a_loss_in_a_large_window_costs_a_walk_per_segment_not_per_ack() {
    let h = one_loss_in_a_large_window(6_000);
    let server = h.server.as_ref().expect("connected");
    let stats = server.stats();
    assert_eq!(h.completions().len(), 1, "the transfer completes");
    assert_eq!(stats.retransmitted_segments, 1, "one loss, one fast retransmission");
    assert_eq!(stats.fast_recoveries, 1);
    // The ACKs after the loss each carry one block, [hole end, highest received), one
    // segment longer each time, for a round trip (about a window of ACKs). Walking each
    // block whole, and every SACKed segment above the hole in IsLost(), costs about
    // window² / 2 steps each (millions); remembered, each segment is looked at a few times.
    let segments = stats.data_segments_sent;
    assert!(
        server.scoreboard_steps <= 3 * segments,
        "{} scoreboard steps for {} segments",
        server.scoreboard_steps,
        segments
    );
}

/// A 2 MB transfer over 100 Mbps with 5 ms one-way delay, data packets and ACKs lost at
/// random (`bernoulli`, handshake spared), the sender walking its scoreboard
/// the short way or the long way.
fn lossy_bulk(loss_per_mille: u64, seed: u64, naive: bool) -> Harness {
    let cfg = ConnectionConfig {
        controller: ControllerKind::NewReno,
        min_rto_ns: 200 * MS,
        receive_buffer_bytes: 1 << 20,
        ..Default::default()
    };
    let mut h = Harness::new(cfg, 100_000_000, 5 * MS);
    h.drop = bernoulli(loss_per_mille, seed);
    let msgs = vec![MessageMeta { id: 1, len_bytes: 2_000_000, priority: 0 }];
    let mut serve = serve_page(msgs);
    h.run(100_000 * MS, move |t, is_client, ev, c| {
        c.naive_scoreboard = naive;
        serve(t, is_client, ev, c)
    });
    h
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Walking the scoreboard the short way sends exactly the packets the long way sends,
    /// at the same times, under random loss of data and ACKs (holes come and go, blocks
    /// jump when ACKs are lost), and does fewer steps.
    #[test]
    fn the_short_walk_sends_what_the_long_walk_sends(loss in 0u64..80, seed in any::<u64>()) {
        let fast = lossy_bulk(loss, seed, false);
        let slow = lossy_bulk(loss, seed, true);
        prop_assert_eq!(fast.completions(), slow.completions());
        prop_assert!(fast.log == slow.log, "packet logs differ");
        let (f, s) = (fast.server.as_ref().unwrap(), slow.server.as_ref().unwrap());
        prop_assert_eq!(f.stats().retransmitted_segments, s.stats().retransmitted_segments);
        prop_assert!(f.scoreboard_steps <= s.scoreboard_steps);
    }
}

#[test]
fn the_long_walk_is_longer_under_loss() {
    let fast = lossy_bulk(30, 1, false);
    let slow = lossy_bulk(30, 1, true);
    let (f, s) = (fast.server.as_ref().unwrap(), slow.server.as_ref().unwrap());
    assert!(f.stats().retransmitted_segments > 20, "{} retransmissions", f.stats().retransmitted_segments);
    assert!(f.scoreboard_steps < s.scoreboard_steps, "{} against {}", f.scoreboard_steps, s.scoreboard_steps);
    assert!(fast.log == slow.log);
}

#[test]
fn a_sent_segment_is_one_cache_line() {
    // Every ACK that covers a segment reads its record; with many flows each record read is
    // a miss, so it stays one 64-byte line (docs/performance-history.md, sixteenth round),
    // `resent_in_flight` included.
    assert_eq!(std::mem::size_of::<SentSeg>(), 64);
    assert_eq!(std::mem::align_of::<SentSeg>(), 64);
}
