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

#[cfg(test)]
mod tests {
    use super::IntMap;

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
