//! The receiver's out-of-order segments, held by start until the hole below them fills
//! (RFC 9293 §3.10.7.4: segments beyond RCV.NXT are held for later processing).
//!
//! Two forms, one in use at a time. A receiver mostly holds a few segments, one loss's
//! worth of a small window: a list sorted by start keeps its memory from one loss to the
//! next, so a lossy run allocates nothing per loss (a tree allocates a node when a hole
//! opens and frees it when it closes, and splits and merges nodes as it grows and shrinks).
//! A receiver of a large lossy window holds thousands: there a segment that fills a later
//! hole would move half the list, and a tree takes it in logarithmic time. The list turns
//! into the tree when it would pass [`LIST_MAX`] segments; the tree is used until it
//! empties, and the list (with its memory) after that.

use std::collections::{BTreeMap, VecDeque};

/// The most segments the list holds before the segments move into the tree: an insertion
/// in the middle then moves at most this many entries.
pub(super) const LIST_MAX: usize = 64;

/// Segments held, by start (starts are unique).
#[derive(Clone, Debug)]
pub(super) struct Held<V> {
    /// Sorted by start; the form in use while `tree` is empty.
    list: VecDeque<(u64, V)>,
    /// The form in use when it is not empty (and then `list` is).
    tree: BTreeMap<u64, V>,
}

impl<V> Default for Held<V> {
    fn default() -> Self {
        Self { list: VecDeque::new(), tree: BTreeMap::new() }
    }
}

impl<V> Held<V> {
    /// No segment held.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty() && self.tree.is_empty()
    }

    /// Number of segments held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.list.len() + self.tree.len()
    }

    /// Whether the tree is the form in use.
    #[cfg(test)]
    pub(super) fn in_tree(&self) -> bool {
        !self.tree.is_empty()
    }

    /// The segment starting at `start`.
    #[inline]
    pub(super) fn get(&self, start: u64) -> Option<&V> {
        if !self.tree.is_empty() {
            return self.tree.get(&start);
        }
        let i = self.list.partition_point(|(s, _)| *s < start);
        self.list.get(i).filter(|(s, _)| *s == start).map(|(_, v)| v)
    }

    /// Holds `v` at `start`, replacing a segment held there.
    #[inline]
    pub(super) fn insert(&mut self, start: u64, v: V) {
        if !self.tree.is_empty() {
            self.tree.insert(start, v);
            return;
        }
        // Mostly a segment above every one held (the window moving on past a hole).
        let i = match self.list.back() {
            Some((s, _)) if *s < start => self.list.len(),
            _ => self.list.partition_point(|(s, _)| *s < start),
        };
        if let Some(e) = self.list.get_mut(i).filter(|(s, _)| *s == start) {
            e.1 = v;
            return;
        }
        if self.list.len() < LIST_MAX {
            self.list.insert(i, (start, v));
            return;
        }
        self.tree.extend(self.list.drain(..));
        self.tree.insert(start, v);
    }

    /// Removes and returns the lowest segment if it starts at or below `at`.
    #[inline]
    pub(super) fn pop_first_at_or_below(&mut self, at: u64) -> Option<(u64, V)> {
        if !self.tree.is_empty() {
            let e = self.tree.first_entry()?;
            return (*e.key() <= at).then(|| e.remove_entry());
        }
        if self.list.front().is_some_and(|(s, _)| *s <= at) {
            return self.list.pop_front();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn moves_into_the_tree_past_the_list_s_size_and_back_when_empty() {
        let mut h = Held::default();
        // Every other slot, from the top down: each insertion goes in front.
        for k in (0..LIST_MAX as u64).rev() {
            h.insert(10 * k + 10, k);
        }
        assert!(!h.in_tree());
        assert_eq!(h.len(), LIST_MAX);
        assert_eq!(h.get(10), Some(&0));
        assert_eq!(h.get(15), None);
        h.insert(15, 99);
        assert!(h.in_tree(), "one more than the list holds");
        assert_eq!((h.len(), h.get(15), h.get(10)), (LIST_MAX + 1, Some(&99), Some(&0)));
        assert_eq!(h.pop_first_at_or_below(9), None);
        assert_eq!(h.pop_first_at_or_below(10), Some((10, 0)));
        assert_eq!(h.pop_first_at_or_below(20), Some((15, 99)));
        while h.pop_first_at_or_below(u64::MAX).is_some() {}
        assert!(h.is_empty() && !h.in_tree());
        // Back to the list, which kept its memory.
        let cap = h.list.capacity();
        assert!(cap >= LIST_MAX);
        h.insert(5, 1);
        assert!(!h.in_tree());
        assert_eq!(h.list.capacity(), cap);
    }

    #[test]
    fn a_segment_held_again_replaces_the_one_held() {
        let mut h = Held::default();
        h.insert(100, 'a');
        h.insert(300, 'b');
        h.insert(100, 'c');
        assert_eq!((h.len(), h.get(100)), (2, Some(&'c')));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, u32),
        Pop(u64),
        Get(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Starts in a narrow range so that replacements, pops and lookups hit.
        prop_oneof![
            4 => (0u64..300, any::<u32>()).prop_map(|(s, v)| Op::Insert(s, v)),
            1 => (0u64..300).prop_map(Op::Pop),
            1 => (0u64..300).prop_map(Op::Get),
        ]
    }

    proptest! {
        /// Whatever the mix of insertions, replacements, pops and lookups, and whichever
        /// form is in use, the answers are a plain ordered map's.
        #[test]
        fn answers_as_an_ordered_map_does(ops in proptest::collection::vec(op(), 0..600)) {
            let mut h = Held::default();
            let mut m = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Insert(s, v) => {
                        h.insert(s, v);
                        m.insert(s, v);
                    }
                    Op::Pop(at) => {
                        let want = m.first_key_value().filter(|(k, _)| **k <= at).map(|(k, v)| (*k, *v));
                        if let Some((k, _)) = want {
                            m.remove(&k);
                        }
                        prop_assert_eq!(h.pop_first_at_or_below(at), want);
                    }
                    Op::Get(s) => prop_assert_eq!(h.get(s), m.get(&s)),
                }
                prop_assert_eq!(h.len(), m.len());
                prop_assert_eq!(h.is_empty(), m.is_empty());
            }
        }
    }
}
