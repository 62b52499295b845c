//! The receiver's out-of-order segments, held by start until the hole below them fills
//! (RFC 9293 §3.10.7.4: segments beyond RCV.NXT are held for later processing).
//!
//! A receiver mostly holds a few segments, one loss's worth of a small window; a receiver
//! of a large lossy window holds thousands. Both in a [`ChunkedMap`]: a few segments are
//! one sorted list, thousands a list of such lists, and neither allocates once the most it
//! has held is reached (a tree allocated a node when a hole opened and freed it when it
//! closed, so a lossy run allocated per loss however long it ran).

use super::chunked::ChunkedMap;

/// Segments held, by start (starts are unique).
#[derive(Clone, Debug)]
pub(super) struct Held<V> {
    map: ChunkedMap<V>,
}

impl<V> Default for Held<V> {
    fn default() -> Self {
        Self { map: ChunkedMap::default() }
    }
}

impl<V> Held<V> {
    /// No segment held.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of segments held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// The segment starting at `start`.
    #[inline]
    pub(super) fn get(&self, start: u64) -> Option<&V> {
        self.map.get(start)
    }

    /// Holds `v` at `start`, replacing a segment held there.
    #[inline]
    pub(super) fn insert(&mut self, start: u64, v: V) {
        self.map.insert(start, v);
    }

    /// Removes and returns the lowest segment if it starts at or below `at`.
    #[inline]
    pub(super) fn pop_first_at_or_below(&mut self, at: u64) -> Option<(u64, V)> {
        if self.map.first()?.0 <= at {
            return self.map.pop_first();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn pops_in_order_only_at_or_below_the_point_and_keeps_its_memory() {
        let mut h = Held::default();
        // Every other slot, from the top down (each insertion in front), past one chunk.
        let n = super::super::chunked::CHUNK as u64 + 1;
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
