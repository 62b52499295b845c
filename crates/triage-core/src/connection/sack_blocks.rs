//! The receiver's SACK blocks (RFC 2018), kept up to date as out-of-order data arrives and
//! leaves, so that building an ACK takes the most recent blocks without walking the
//! out-of-order data.
//!
//! A block is a maximal run of held out-of-order segments that overlap or touch (RFC 2018
//! §3: "each contiguous block of data queued at the data receiver"); its recency is the
//! latest arrival of any segment in it. RFC 2018 §4 orders the blocks of an ACK by
//! recency: the block of the segment that triggered the ACK first, then the others by how
//! recently they changed. Arrival numbers are unique and increasing, so the order is a
//! strict one and the blocks an ACK carries are exactly those of sorting every block by
//! recency.

use super::chunked::ChunkedMap;
use crate::wire::SackBlock;

/// The blocks, sorted by start (a list: a receiver holds a few, one per hole the network
/// made in its window), and the same blocks by recency (an ordered map from the latest
/// arrival in each to its start, [`ChunkedMap`]: it allocates nothing once it has held its
/// most, where a tree allocated and freed nodes as holes opened and closed), so that an ACK
/// takes its few most recent blocks from the map's end.
/// Picking them by a pass over the list per block carried cost a pass per ACK over every
/// hole: with hundreds of holes in a large lossy window (a BBR flow at 10 Gbps with 2%
/// loss) those passes were nearly half the run. An insertion merging blocks, and
/// `advance`, keep both. Full-sized segments in a 2 MiB buffer make at most 725 blocks; a
/// peer that sends one-byte segments around one-byte holes can make up to a million, and
/// then an insertion in the middle of the list moves them (a CPU cost the simulator's own
/// peers never cause; a real-socket receiver would cap the holes).
#[derive(Clone, Debug, Default)]
pub(super) struct SackBlocks {
    /// (start, end, most recent arrival), sorted by start; blocks neither overlap nor
    /// touch.
    by_start: Vec<(u64, u64, u64)>,
    /// Most recent arrival -> start, one entry per block (arrival numbers are unique).
    by_recent: ChunkedMap<u64>,
}

impl SackBlocks {
    /// A held segment `[start, end)` (`end > start`) arrived, or arrived again, with arrival
    /// number `arrival`, greater than every earlier one: it joins the blocks it overlaps or
    /// touches.
    pub(super) fn insert(&mut self, start: u64, end: u64, arrival: u64) {
        let (mut lo, mut hi, mut recent) = (start, end, arrival);
        // The blocks from `first` on are those starting after `start`.
        let mut first = self.by_start.partition_point(|b| b.0 <= start);
        // The walk below starts at the first block after `start`, whether or not the one
        // before merges.
        let mut last = first;
        // The block starting at or before `start` merges when it reaches `start`...
        if first > 0 {
            let (s, e, r) = self.by_start[first - 1];
            if e >= start {
                first -= 1;
                (lo, hi, recent) = (s, hi.max(e), recent.max(r));
                self.by_recent.remove(r);
            }
        }
        // ...and so does every block starting within the merged range (blocks do not
        // touch each other, so those before the one above cannot).
        while let Some(&(s, e, r)) = self.by_start.get(last) {
            if s > hi {
                break;
            }
            (hi, recent) = (hi.max(e), recent.max(r));
            self.by_recent.remove(r);
            last += 1;
        }
        self.by_recent.insert(recent, lo);
        match last - first {
            0 => self.by_start.insert(first, (lo, hi, recent)),
            1 => self.by_start[first] = (lo, hi, recent),
            _ => {
                self.by_start[first] = (lo, hi, recent);
                self.by_start.drain(first + 1..last);
            }
        }
    }

    /// The cumulative point advanced to `rcv_nxt` and the segments below it were handed
    /// on: their blocks go (whole blocks: delivery consumes every segment a block chains
    /// from one below `rcv_nxt`).
    pub(super) fn advance(&mut self, rcv_nxt: u64) {
        let gone = self.by_start.partition_point(|b| b.0 <= rcv_nxt);
        debug_assert!(self.by_start[..gone].iter().all(|b| b.1 <= rcv_nxt), "a block is delivered whole");
        for b in &self.by_start[..gone] {
            self.by_recent.remove(b.2);
        }
        self.by_start.drain(..gone);
    }

    /// The most recent blocks, most recent first, into `out`; returns how many: the
    /// recency tree's last entries, each block's end found by its start.
    pub(super) fn fill(&self, out: &mut [SackBlock]) -> usize {
        // Mostly nothing held (every ACK of an in-order run asks).
        if self.by_recent.is_empty() {
            return 0;
        }
        let mut n = 0;
        for (slot, (_, &start)) in out.iter_mut().zip(self.by_recent.iter_rev()) {
            let i = self.by_start.partition_point(|b| b.0 < start);
            *slot = SackBlock { start, end: self.by_start[i].1 };
            n += 1;
        }
        n
    }

    /// Number of blocks.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.by_start.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn blocks(b: &SackBlocks) -> Vec<(u64, u64)> {
        let mut out = [SackBlock::default(); 64];
        let n = b.fill(&mut out);
        out[..n].iter().map(|s| (s.start, s.end)).collect()
    }

    #[test]
    fn merges_touching_and_overlapping_segments_and_orders_by_recency() {
        let mut b = SackBlocks::default();
        b.insert(10, 20, 1);
        b.insert(30, 40, 2);
        b.insert(50, 60, 3);
        assert_eq!(blocks(&b), vec![(50, 60), (30, 40), (10, 20)]);
        // Touching the first block (20 == 20): it grows and becomes the most recent.
        b.insert(20, 25, 4);
        assert_eq!(blocks(&b), vec![(10, 25), (50, 60), (30, 40)]);
        // Bridging two blocks (overlapping one, touching the other): one block.
        b.insert(38, 50, 5);
        assert_eq!(blocks(&b), vec![(30, 60), (10, 25)]);
        assert_eq!(b.len(), 2);
        // A duplicate inside a block refreshes its recency only.
        b.insert(10, 20, 6);
        assert_eq!(blocks(&b), vec![(10, 25), (30, 60)]);
    }

    /// The blocks of a naive walk over the held segments (start → (end, latest arrival)):
    /// merge runs that overlap or touch, sort by recency, most recent first.
    fn walked(held: &BTreeMap<u64, (u64, u64)>) -> Vec<(u64, u64)> {
        let mut blocks: Vec<(u64, u64, u64)> = Vec::new();
        for (&s, &(e, a)) in held {
            match blocks.last_mut() {
                Some(b) if s <= b.1 => {
                    b.1 = b.1.max(e);
                    b.2 = b.2.max(a);
                }
                _ => blocks.push((s, e, a)),
            }
        }
        blocks.sort_by_key(|b| std::cmp::Reverse(b.2));
        blocks.into_iter().map(|b| (b.0, b.1)).collect()
    }

    /// A receiver's life in random steps (segments of random length arriving out of order,
    /// again, and in order), against the naive walk after every step.
    #[test]
    fn matches_a_walk_over_the_held_segments() {
        let mut state = 7u64;
        let mut rnd = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut b = SackBlocks::default();
        let mut held: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        let mut rcv_nxt = 0u64;
        let mut arrival = 0u64;
        for step in 0..20_000 {
            let start = rcv_nxt + rnd(40);
            let end = start + 1 + rnd(6);
            arrival += 1;
            if start > rcv_nxt {
                // Out of order: held, or a duplicate that refreshes its block.
                match held.get_mut(&start) {
                    Some(h) => {
                        h.1 = arrival;
                        b.insert(start, h.0, arrival);
                    }
                    None => {
                        held.insert(start, (end, arrival));
                        b.insert(start, end, arrival);
                    }
                }
            } else {
                // In order: deliver, then what it joins up with.
                rcv_nxt = rcv_nxt.max(end);
                while let Some((&s, &(e, _))) = held.first_key_value() {
                    if s > rcv_nxt {
                        break;
                    }
                    held.remove(&s);
                    rcv_nxt = rcv_nxt.max(e);
                }
                b.advance(rcv_nxt);
            }
            assert_eq!(blocks(&b), walked(&held), "step {step}");
            // One recency entry per block, naming its start.
            assert_eq!(b.by_recent.len(), b.by_start.len(), "step {step}");
            assert!(
                b.by_recent.iter_rev().all(|(r, s)| b.by_start.iter().any(|x| x.0 == *s && x.2 == r)),
                "step {step}"
            );
        }
    }

    #[test]
    fn advance_drops_whole_blocks_below_the_cumulative_point() {
        let mut b = SackBlocks::default();
        b.insert(10, 20, 1);
        b.insert(30, 40, 2);
        b.advance(5);
        assert_eq!(b.len(), 2);
        b.advance(20);
        assert_eq!(blocks(&b), vec![(30, 40)]);
        b.advance(40);
        assert_eq!(b.len(), 0);
        assert_eq!(blocks(&b), vec![]);
    }
}
