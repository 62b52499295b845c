//! Hash maps keyed by integers (message ids, stream ids, addresses) with a fast fixed hasher
//! instead of std's SipHash with a random key: the QUIC connection looks a message or stream
//! up several times per packet (SipHash was about 8% of a QUIC-mode run), and the simulator
//! demultiplexes every packet a host receives by its addresses. Their keys are small
//! integers, not input an adversary chooses, so SipHash's flooding resistance buys nothing.
//! No output depends on these maps' iteration order (it was random before).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// The Fx hash (as in rustc: rotate, xor the word, multiply by a 64-bit odd constant).
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

impl IntHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for IntHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map from `u32` ids to values for ids handed out in order from 0 (a connection's
/// message and stream-credit entries): ids `0..n` with no gap are kept in a `Vec`, looked up
/// by index, and any other id in an [`IntMap`] until the ids below it have all arrived. A
/// lookup by index costs a bounds check where a hash map hashes and probes (the QUIC send
/// path looks an entry up several times per chunk of stream data it sends).
///
/// Entries are only added, never removed (what its users need: an entry stays so that data
/// it describes can be found again after a loss).
#[derive(Clone, Debug)]
pub struct IdMap<V> {
    /// The values of ids `0..dense.len()`.
    dense: Vec<V>,
    /// The values of ids above `dense.len()` (never equal to it: such an id moves to `dense`).
    sparse: IntMap<u32, V>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        Self { dense: Vec::new(), sparse: IntMap::default() }
    }
}

impl<V> IdMap<V> {
    /// The value of `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&V> {
        match self.dense.get(id as usize) {
            Some(v) => Some(v),
            None if self.sparse.is_empty() => None,
            None => self.sparse.get(&id),
        }
    }

    /// The value of `id`, to change.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut V> {
        match self.dense.get_mut(id as usize) {
            Some(v) => Some(v),
            None if self.sparse.is_empty() => None,
            None => self.sparse.get_mut(&id),
        }
    }

    /// True when `id` has a value.
    #[inline]
    pub fn contains_key(&self, id: u32) -> bool {
        self.get(id).is_some()
    }

    /// Adds `value` for `id` unless `id` has one already (then `value` is dropped and the
    /// map is unchanged); true when it was added.
    pub fn insert_new(&mut self, id: u32, value: V) -> bool {
        if self.contains_key(id) {
            return false;
        }
        if id as usize == self.dense.len() {
            self.dense.push(value);
            // Ids that came early and now follow without a gap move over.
            while !self.sparse.is_empty() {
                let Some(v) = self.sparse.remove(&(self.dense.len() as u32)) else { break };
                self.dense.push(v);
            }
        } else {
            self.sparse.insert(id, value);
        }
        true
    }

    /// The value of `id`, added by `make` first if it has none.
    pub fn get_or_insert_with(&mut self, id: u32, make: impl FnOnce() -> V) -> &mut V {
        if !self.contains_key(id) {
            self.insert_new(id, make());
        }
        self.get_mut(id).expect("present: found or just added")
    }

    /// Number of ids with a value.
    pub fn len(&self) -> usize {
        self.dense.len() + self.sparse.len()
    }

    /// True when no id has a value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::{IdMap, IntMap};

    #[test]
    fn id_map_keeps_ids_in_order_dense_and_others_aside_until_the_gap_closes() {
        let mut m: IdMap<u32> = IdMap::default();
        assert!(m.insert_new(0, 10));
        assert!(m.insert_new(1, 11));
        assert!(m.insert_new(3, 13));
        assert!(!m.insert_new(1, 99), "an id with a value keeps it");
        assert_eq!((m.dense.len(), m.sparse.len()), (2, 1));
        assert_eq!(m.get(3), Some(&13));
        assert_eq!(m.get(2), None);
        assert!(m.insert_new(2, 12));
        // 3 followed 2 without a gap: both are in the vector now.
        assert_eq!((m.dense.len(), m.sparse.len()), (4, 0));
        assert_eq!(m.dense, vec![10, 11, 12, 13]);
        *m.get_or_insert_with(7, || 17) += 1;
        assert_eq!(m.get(7), Some(&18));
        assert_eq!(*m.get_or_insert_with(7, || 0), 18);
        assert_eq!(m.len(), 5);
    }

    proptest! {
        /// Any order of ids (in-order runs, early ids, repeats) gives what a `BTreeMap`
        /// gives, and every id below the vector's length is in the vector.
        #[test]
        fn id_map_behaves_as_an_ordered_map(ops in proptest::collection::vec((0u32..48, any::<u16>(), any::<bool>()), 0..200)) {
            let mut m: IdMap<u16> = IdMap::default();
            let mut model: BTreeMap<u32, u16> = BTreeMap::new();
            for (id, v, upsert) in ops {
                if upsert {
                    let got = *m.get_or_insert_with(id, || v);
                    prop_assert_eq!(got, *model.entry(id).or_insert(v));
                } else {
                    let added = m.insert_new(id, v);
                    prop_assert_eq!(added, !model.contains_key(&id));
                    model.entry(id).or_insert(v);
                }
                prop_assert_eq!(m.len(), model.len());
                prop_assert!(m.sparse.keys().all(|&k| k as usize > m.dense.len()));
                for k in 0..50u32 {
                    prop_assert_eq!(m.get(k), model.get(&k));
                }
                if let Some(x) = m.get_mut(id) {
                    *x = x.wrapping_add(1);
                    *model.get_mut(&id).unwrap() = model[&id].wrapping_add(1);
                }
            }
        }
    }

    #[test]
    fn works_as_a_map() {
        let mut m: IntMap<u64, u64> = IntMap::default();
        for k in 0..1000u64 {
            m.insert(k * 4, k);
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get(&396), Some(&99));
        assert_eq!(m.get(&397), None);
        assert_eq!(m.remove(&0), Some(0));
    }
}
