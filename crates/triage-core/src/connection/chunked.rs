//! An ordered map from `u64` keys that keeps its memory: the entries in key order, in one
//! sorted list while they fit in [`CHUNK`], past that in chunks of at most [`CHUNK`] sorted
//! entries, the buffers of chunks that emptied kept for the next chunk a split needs.
//!
//! The receiver's bookkeeping of a lossy window (its held out-of-order segments, its SACK
//! blocks by recency) inserts and removes entries all the time while the number it holds
//! stays about the same. `std`'s `BTreeMap` allocates a node when it grows past a node's
//! capacity and frees one when it shrinks, so such a map allocates in steady state however
//! long it runs (a BBR flow with thousands of segments held: 0.05 allocations per
//! packet-hop). Here a chunk is a `VecDeque` whose buffer outlives its entries: once the map
//! has held its largest number of entries it allocates nothing more. An insertion or a
//! removal moves at most a chunk's entries and the chunk list's handles (23 to 46 chunks
//! for the 1,449 full-sized segments a 2 MiB window holds). A map of a few entries, the
//! common case, is one list, one pointer away, as the receiver's held segments were before.

use std::collections::VecDeque;

/// Most entries in a chunk: an insertion in a full chunk splits it in two halves.
pub(super) const CHUNK: usize = 64;

/// Entries by key (keys unique), in order: in one sorted list while they fit in a chunk
/// (`one`: a receiver's few held segments, its few SACK blocks, one pointer away as in a
/// plain list), in a list of chunks past that (`chunks`, then `one` is empty).
#[derive(Clone, Debug)]
pub(super) struct ChunkedMap<V> {
    /// The entries while `chunks` is empty.
    one: VecDeque<(u64, V)>,
    /// Two or more non-empty chunks, each sorted by key, every key of a chunk below every
    /// key of the next; back to `one` when one chunk is left.
    chunks: Chunks<V>,
    /// Empty chunks, their buffers kept for the next split.
    spare: Vec<VecDeque<(u64, V)>>,
    len: usize,
}

impl<V> Default for ChunkedMap<V> {
    fn default() -> Self {
        Self { one: VecDeque::new(), chunks: Chunks { v: Vec::new(), head: 0 }, spare: Vec::new(), len: 0 }
    }
}

impl<V> ChunkedMap<V> {
    /// Number of entries.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// No entry.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunk `ci` (`one` in the list form).
    #[inline(always)]
    fn chunk(&self, ci: usize) -> &VecDeque<(u64, V)> {
        if self.chunks.is_empty() {
            &self.one
        } else {
            &self.chunks[ci]
        }
    }

    #[inline(always)]
    fn chunk_mut(&mut self, ci: usize) -> &mut VecDeque<(u64, V)> {
        if self.chunks.is_empty() {
            &mut self.one
        } else {
            &mut self.chunks[ci]
        }
    }

    /// The chunk that holds `key` if any does: the last one starting at or below it (`None`
    /// when `key` is below every entry).
    #[inline(always)]
    fn chunk_of(&self, key: u64) -> Option<usize> {
        let n = self.chunks.len();
        if n == 0 {
            return self.one.front().is_some_and(|e| e.0 <= key).then_some(0);
        }
        // The last chunk for keys above all others.
        if self.chunks[n - 1][0].0 <= key {
            return Some(n - 1);
        }
        let i = self.chunks.live().partition_point(|c| c[0].0 <= key);
        i.checked_sub(1)
    }

    /// The entry at `key`.
    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<&V> {
        let c = self.chunk(self.chunk_of(key)?);
        // Mostly a key above all (a new segment past the last held).
        let last = c.back()?;
        if last.0 <= key {
            return (last.0 == key).then_some(&last.1);
        }
        let j = c.partition_point(|e| e.0 < key);
        c.get(j).filter(|e| e.0 == key).map(|e| &e.1)
    }

    /// Puts `v` at `key`; returns the value it replaced.
    #[inline]
    pub(super) fn insert(&mut self, key: u64, v: V) -> Option<V> {
        let ci = self.chunk_of(key).unwrap_or(0);
        let c = self.chunk_mut(ci);
        // Mostly a key above every one in its chunk (a window moving on past a hole, a
        // newer arrival).
        let j = match c.back() {
            Some(e) if e.0 < key => c.len(),
            _ => c.partition_point(|e| e.0 < key),
        };
        if let Some(e) = c.get_mut(j).filter(|e| e.0 == key) {
            return Some(std::mem::replace(&mut e.1, v));
        }
        if c.len() < CHUNK {
            if j == c.len() {
                c.push_back((key, v));
            } else {
                c.insert(j, (key, v));
            }
            self.len += 1;
            return None;
        }
        self.len += 1;
        // Full: the upper half goes to a chunk of its own, after this one (the list form's
        // one list becoming the first chunk).
        if self.chunks.is_empty() {
            let one = std::mem::take(&mut self.one);
            self.chunks.push_back(one);
        }
        let mut upper = self.take_spare();
        let c = &mut self.chunks[ci];
        upper.extend(c.drain(CHUNK / 2..));
        if j <= CHUNK / 2 {
            c.insert(j, (key, v));
        } else {
            upper.insert(j - CHUNK / 2, (key, v));
        }
        self.chunks.insert(ci + 1, upper);
        None
    }

    /// Removes the entry at `key`; returns its value.
    #[inline]
    pub(super) fn remove(&mut self, key: u64) -> Option<V> {
        let ci = self.chunk_of(key)?;
        let c = self.chunk_mut(ci);
        // Mostly the last entry (a SACK block's recency when the block grows again).
        let j = match c.back() {
            Some(e) if e.0 == key => c.len() - 1,
            _ => c.partition_point(|e| e.0 < key),
        };
        if c.get(j).is_none_or(|e| e.0 != key) {
            return None;
        }
        let e = match j {
            0 => c.pop_front(),
            _ if j + 1 == c.len() => c.pop_back(),
            _ => c.remove(j),
        };
        let (_, v) = e.unwrap_or_else(|| unreachable!("found above"));
        self.len -= 1;
        self.tidy(ci);
        Some(v)
    }

    /// The first entry.
    #[inline]
    pub(super) fn first(&self) -> Option<(u64, &V)> {
        self.chunk(0).front().map(|(k, v)| (*k, v))
    }

    /// Removes the first entry.
    #[inline]
    pub(super) fn pop_first(&mut self) -> Option<(u64, V)> {
        let e = self.chunk_mut(0).pop_front()?;
        self.len -= 1;
        self.tidy(0);
        Some(e)
    }

    /// Removes and returns the first entry if its key is at or below `at` (the receiver's
    /// lowest held segment, once the cumulative point reaches it: RFC 9293 §3.10.7.4).
    #[inline]
    pub(super) fn pop_first_at_or_below(&mut self, at: u64) -> Option<(u64, V)> {
        if self.first()?.0 <= at {
            return self.pop_first();
        }
        None
    }

    /// The entries from the last key down.
    #[inline]
    pub(super) fn iter_rev(&self) -> RevIter<'_, V> {
        if self.chunks.is_empty() {
            let (a, b) = self.one.as_slices();
            return RevIter { chunks: [].iter(), front: a.iter(), back: b.iter() };
        }
        RevIter { chunks: self.chunks.live().iter(), front: [].iter(), back: [].iter() }
    }

    /// Chunk `ci` lost an entry: an empty chunk leaves the list (its buffer kept), one that
    /// fits in half a chunk with a neighbour joins it (so that removals spread over the
    /// window do not leave a long list of near-empty chunks), and the last chunk left
    /// becomes the list form's one list.
    #[inline]
    fn tidy(&mut self, ci: usize) {
        if self.chunks.is_empty() {
            return;
        }
        let n = self.chunks[ci].len();
        if n == 0 {
            let c = self.chunks.remove(ci);
            self.keep_spare(c);
        } else if n <= CHUNK / 4 {
            if self.chunks.live().get(ci + 1).is_some_and(|next| n + next.len() <= CHUNK / 2) {
                self.join_next(ci);
            } else if ci > 0 && self.chunks[ci - 1].len() + n <= CHUNK / 2 {
                self.join_next(ci - 1);
            }
        }
        if self.chunks.len() == 1 {
            self.one = self.chunks.remove(0);
        }
    }

    /// Moves chunk `ci + 1`'s entries to the end of chunk `ci` and keeps its buffer.
    fn join_next(&mut self, ci: usize) {
        let mut next = self.chunks.remove(ci + 1);
        self.chunks[ci].extend(next.drain(..));
        self.keep_spare(next);
    }

    /// An empty chunk: a kept one if any.
    #[inline]
    fn take_spare(&mut self) -> VecDeque<(u64, V)> {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps an emptied chunk's buffer.
    #[inline]
    fn keep_spare(&mut self, c: VecDeque<(u64, V)>) {
        debug_assert!(c.is_empty());
        self.spare.push(c);
    }

    /// Number of chunks in use (the list form's one list counts).
    #[cfg(test)]
    pub(super) fn chunk_count(&self) -> usize {
        self.chunks.len().max(1)
    }
}

/// The chunk list: a `Vec` whose first `head` places are emptied chunks not yet removed, so
/// that the first chunk (the receiver's lowest held segments, delivered first) leaves in
/// constant time, while the others are found by plain indexing (a `VecDeque` of chunks cost
/// 1% more instructions per packet-hop in runs that hold a few segments).
#[derive(Clone, Debug)]
struct Chunks<V> {
    v: Vec<VecDeque<(u64, V)>>,
    head: usize,
}

impl<V> Chunks<V> {
    #[inline]
    fn live(&self) -> &[VecDeque<(u64, V)>] {
        &self.v[self.head..]
    }

    #[inline]
    fn len(&self) -> usize {
        self.v.len() - self.head
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn push_back(&mut self, c: VecDeque<(u64, V)>) {
        self.v.push(c);
    }

    /// Puts `c` at live place `i`.
    #[inline]
    fn insert(&mut self, i: usize, c: VecDeque<(u64, V)>) {
        self.v.insert(self.head + i, c);
    }

    /// Takes the chunk at live place `i` out.
    #[inline]
    fn remove(&mut self, i: usize) -> VecDeque<(u64, V)> {
        if i > 0 {
            return self.v.remove(self.head + i);
        }
        let c = std::mem::take(&mut self.v[self.head]);
        self.head += 1;
        if self.head == self.v.len() {
            // The emptied places hold empty rings without buffers: clearing frees nothing.
            self.v.clear();
            self.head = 0;
        } else if self.head >= 16 && 2 * self.head >= self.v.len() {
            self.v.drain(..self.head);
            self.head = 0;
        }
        c
    }
}

impl<V> std::ops::Index<usize> for Chunks<V> {
    type Output = VecDeque<(u64, V)>;
    #[inline]
    fn index(&self, i: usize) -> &Self::Output {
        &self.v[self.head + i]
    }
}

impl<V> std::ops::IndexMut<usize> for Chunks<V> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut Self::Output {
        &mut self.v[self.head + i]
    }
}

/// [`ChunkedMap::iter_rev`]: the chunks not reached yet, and the two slices of the current
/// one's ring (`back` first).
pub(super) struct RevIter<'a, V> {
    chunks: std::slice::Iter<'a, VecDeque<(u64, V)>>,
    front: std::slice::Iter<'a, (u64, V)>,
    back: std::slice::Iter<'a, (u64, V)>,
}

impl<'a, V> Iterator for RevIter<'a, V> {
    type Item = (u64, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((k, v)) = self.back.next_back().or_else(|| self.front.next_back()) {
                return Some((*k, v));
            }
            let (a, b) = self.chunks.next_back()?.as_slices();
            (self.front, self.back) = (a.iter(), b.iter());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn splits_a_full_chunk_and_keeps_emptied_buffers() {
        let mut m = ChunkedMap::default();
        for k in 0..CHUNK as u64 {
            assert_eq!(m.insert(10 * k, k), None);
        }
        assert_eq!((m.len(), m.chunk_count()), (CHUNK, 1));
        // One more in the middle: two halves, the new entry in the lower one.
        assert_eq!(m.insert(15, 99), None);
        assert_eq!((m.len(), m.chunk_count()), (CHUNK + 1, 2));
        assert_eq!(m.get(15), Some(&99));
        assert_eq!(m.insert(15, 7), Some(99), "a key held again replaces its value");
        let keys: Vec<u64> = m.iter_rev().map(|(k, _)| k).collect();
        let mut want: Vec<u64> = (0..CHUNK as u64).map(|k| 10 * k).chain([15]).collect();
        want.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(keys, want);
        // Emptying gives every chunk back but the last, which stays; holding as many again
        // takes them, not new ones.
        while m.pop_first().is_some() {}
        assert!(m.is_empty() && m.chunk_count() == 1 && m.first().is_none());
        assert_eq!(m.spare.len(), 1);
        assert_eq!((m.get(0), m.iter_rev().count()), (None, 0));
        assert_eq!(m.remove(0), None);
        for k in 0..=CHUNK as u64 {
            m.insert(k, k);
        }
        assert!(m.chunk_count() == 2 && m.spare.is_empty());
    }

    #[test]
    fn removals_spread_over_the_keys_merge_small_neighbours() {
        let mut m = ChunkedMap::default();
        for k in 0..1000u64 {
            m.insert(k, ());
        }
        let before = m.chunk_count();
        // Keep one key in 32: the chunks shrink and merge.
        for k in 0..1000u64 {
            if k % 32 != 0 {
                assert_eq!(m.remove(k), Some(()));
            }
        }
        assert_eq!(m.len(), 32);
        assert!(m.chunk_count() <= before / 4, "{} chunks of {before}", m.chunk_count());
        assert_eq!(m.remove(1), None);
        assert_eq!(m.first(), Some((0, &())));
    }

    #[test]
    fn pops_in_order_only_at_or_below_the_point() {
        let mut h = ChunkedMap::default();
        // Every other slot, from the top down (each insertion in front), past one chunk.
        let n = CHUNK as u64 + 1;
        for k in (0..n).rev() {
            h.insert(10 * k + 10, k);
        }
        assert_eq!(h.len(), n as usize);
        assert_eq!((h.get(10), h.get(15)), (Some(&0), None));
        h.insert(15, 99);
        assert_eq!(h.pop_first_at_or_below(9), None);
        assert_eq!(h.pop_first_at_or_below(10), Some((10, 0)));
        assert_eq!(h.pop_first_at_or_below(20), Some((15, 99)));
        while h.pop_first_at_or_below(u64::MAX).is_some() {}
        assert!(h.is_empty());
        assert_eq!(h.pop_first_at_or_below(u64::MAX), None);
    }

    #[test]
    fn a_segment_held_again_replaces_the_one_held() {
        let mut h = ChunkedMap::default();
        h.insert(100, 'a');
        h.insert(300, 'b');
        h.insert(100, 'c');
        assert_eq!((h.len(), h.get(100)), (2, Some(&'c')));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, u32),
        Remove(u64),
        PopFirst,
        PopAtOrBelow(u64),
        Get(u64),
    }

    fn op(range: u64) -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => (0..range, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            2 => (0..range).prop_map(Op::Remove),
            1 => Just(Op::PopFirst),
            1 => (0..range).prop_map(Op::PopAtOrBelow),
            1 => (0..range).prop_map(Op::Get),
        ]
    }

    proptest! {
        /// Whatever the mix of insertions, replacements, removals and lookups, over few keys
        /// (one chunk) or many (splits and merges), the answers are an ordered map's.
        #[test]
        fn answers_as_an_ordered_map_does(
            ops in prop_oneof![
                proptest::collection::vec(op(100), 0..400),
                proptest::collection::vec(op(3000), 0..3000),
            ]
        ) {
            let mut m = ChunkedMap::default();
            let mut r = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Insert(k, v) => prop_assert_eq!(m.insert(k, v), r.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(m.remove(k), r.remove(&k)),
                    Op::PopFirst => prop_assert_eq!(m.pop_first(), r.pop_first()),
                    Op::PopAtOrBelow(at) => {
                        let want = r.first_key_value().filter(|(k, _)| **k <= at).map(|(k, v)| (*k, *v));
                        if let Some((k, _)) = want {
                            r.remove(&k);
                        }
                        prop_assert_eq!(m.pop_first_at_or_below(at), want);
                    }
                    Op::Get(k) => prop_assert_eq!(m.get(k), r.get(&k)),
                }
                prop_assert_eq!(m.len(), r.len());
                prop_assert_eq!(m.is_empty(), r.is_empty());
                prop_assert_eq!(m.first(), r.first_key_value().map(|(k, v)| (*k, v)));
                // Chunks within bounds: none empty or over-full.
                prop_assert!(m.one.len() <= CHUNK && m.chunks.live().iter().all(|c| c.len() <= CHUNK));
                // The list form, or two or more non-empty chunks and no list.
                prop_assert!(
                    m.chunks.is_empty()
                        || (m.chunks.len() >= 2 && m.one.capacity() == 0 && m.chunks.live().iter().all(|c| !c.is_empty()))
                );
                prop_assert!(m.chunks.v[..m.chunks.head].iter().all(|c| c.capacity() == 0));
            }
            let all: Vec<(u64, u32)> = m.iter_rev().map(|(k, v)| (k, *v)).collect();
            let want: Vec<(u64, u32)> = r.iter().rev().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(all, want);
        }
    }
}
