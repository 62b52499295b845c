//! Per-component random streams derived from one scenario seed.
//!
//! Every simulator component (a link's loss process, a host's jitter, a flow's start time)
//! draws from its own [`ChaCha8Rng`], derived from the scenario seed and the component's
//! name. Adding, removing or reordering components therefore never shifts another
//! component's stream, which keeps runs reproducible and comparable (ns-3's per-object
//! random streams serve the same purpose).
//!
//! # Derivation (frozen: changing it changes every simulation result)
//!
//! 1. `h = FNV-1a-64(name as UTF-8 bytes)` (offset basis `0xcbf29ce484222325`,
//!    prime `0x100000001b3`).
//! 2. `state = splitmix64_mix(seed) ^ h`, where `splitmix64_mix` is SplitMix64's output
//!    function applied to `seed + 0x9e3779b97f4a7c15`: mixing the seed first keeps nearby
//!    seeds (1, 2, 3…) and the name hash from cancelling each other in the XOR.
//! 3. Four successive outputs of a SplitMix64 generator started at `state`, each written
//!    little-endian, form the 32-byte ChaCha8 key ([`SeedableRng::from_seed`]).
//!
//! A test pins the first output for `(seed 1, "link0")` so the derivation cannot change
//! silently.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const SPLITMIX_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// FNV-1a, 64-bit.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET_BASIS, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

/// SplitMix64's output function (Steele, Lea & Flood 2014; constants from Vigna's
/// `splitmix64.c`).
fn splitmix64_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The ChaCha8 key for `(seed, component)`; see the [module docs](self).
fn component_key(seed: u64, component: &str) -> [u8; 32] {
    let mut state = splitmix64_mix(seed.wrapping_add(SPLITMIX_GAMMA)) ^ fnv1a64(component.as_bytes());
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        state = state.wrapping_add(SPLITMIX_GAMMA);
        chunk.copy_from_slice(&splitmix64_mix(state).to_le_bytes());
    }
    key
}

/// The random stream of the simulator component named `component` in a run with `seed`.
///
/// Deterministic and stable across platforms and releases: the same `(seed, component)`
/// always gives the same stream, and different names give independent-looking streams.
/// Use a stable, unique name per component, e.g. `"link0"`, `"host1/jitter"`.
pub fn component_rng(seed: u64, component: &str) -> ChaCha8Rng {
    ChaCha8Rng::from_seed(component_key(seed, component))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn first_outputs(seed: u64, name: &str) -> Vec<u64> {
        let mut rng = component_rng(seed, name);
        (0..8).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn fnv1a64_matches_reference_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn splitmix64_matches_reference_output() {
        // First output of Vigna's splitmix64.c seeded with 1234567.
        assert_eq!(splitmix64_mix(1_234_567u64.wrapping_add(SPLITMIX_GAMMA)), 6_457_827_717_110_365_317);
    }

    #[test]
    fn same_inputs_give_the_same_stream() {
        assert_eq!(first_outputs(42, "link0"), first_outputs(42, "link0"));
    }

    #[test]
    fn different_names_or_seeds_give_different_streams() {
        let base = first_outputs(1, "link0");
        for (seed, name) in [(1, "link1"), (1, "link0 "), (1, ""), (2, "link0"), (0, "link0")] {
            let other = first_outputs(seed, name);
            assert_ne!(base, other, "({seed}, {name:?})");
            assert!(
                base.iter().zip(&other).all(|(a, b)| a != b),
                "({seed}, {name:?}) shares outputs with (1, \"link0\")"
            );
        }
    }

    #[test]
    fn many_components_get_distinct_keys() {
        let mut keys: Vec<[u8; 32]> =
            (0..1000u64).flat_map(|seed| (0..10).map(move |i| component_key(seed, &format!("link{i}")))).collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }

    #[test]
    fn derivation_is_pinned() {
        // Computed once from this derivation (and cross-checked against an independent
        // Python implementation of FNV-1a + SplitMix64 + ChaCha8); if this fails, every
        // simulation result changes.
        assert_eq!(component_rng(1, "link0").next_u64(), PINNED_SEED1_LINK0);
    }

    const PINNED_SEED1_LINK0: u64 = 1_250_284_058_051_103_688;
}
