//! stub
#![allow(missing_docs)]
use rand::SeedableRng;
pub fn component_rng(seed: u64, component: &str) -> rand_chacha::ChaCha8Rng { let mut h = seed; for b in component.bytes() { h = h.wrapping_mul(31).wrapping_add(b as u64); } rand_chacha::ChaCha8Rng::seed_from_u64(h) }
