//! The losses of the reference's link emulator (`../shared/reference/linux/tunlink.py`), draw
//! for draw, so that one of our runs can meet exactly the losses one reference run met.
//!
//! tunlink.py keeps one Python `random.Random(seed * 2 + i)` per direction (`i` = 0 for
//! server → client, "down"; 1 for client → server, "up") and, as each packet finishes
//! serialization, loses it when `random() < loss`. Python's `Random` is MT19937 seeded by
//! `init_by_array` with the seed's 32-bit words, and `random()` takes two outputs:
//! `((a >> 5) · 2²⁶ + (b >> 6)) / 2⁵³` (CPython `Modules/_randommodule.c`). The draws do not
//! depend on the traffic: the n-th packet a direction serializes meets the n-th draw.
//!
//! The first draw of each direction goes to a packet that is not the connection's: the IPv6
//! packet the kernel sends when the emulator brings its TUN device up (seen in every run
//! logged here, 0.1 ms after the link starts, long before the connection's first packet).
//! So the connection's k-th packet (from 0) in a direction meets draw k + 1. The reference's
//! link counters confirm the generator: over the 120 runs of `docs/data/linuxtcp-loss5.jsonl`,
//! both directions' `lost` counts equal the draws below `loss` among the first `in` draws.
//! (The kernel sends another such packet about 4.3 s after the link starts; a run still
//! sending then meets the later draws one packet early. Runs that long are rare at 2 Mbps
//! and above.)

use rand_mt::Mt;

/// Draws the emulator spends before the connection's first packet, per direction.
pub const DRAWS_BEFORE_CONNECTION: u64 = 1;

/// The direction of a packet through the emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Server to client (`down`: the page's data).
    Down,
    /// Client to server (`up`: requests and acknowledgments).
    Up,
}

/// Python's `random.Random(seed)` for a non-negative integer seed.
struct PyRandom(Mt);

impl PyRandom {
    fn new(seed: u64) -> Self {
        // `init_by_array` with the seed's 32-bit words, least significant first, as many as
        // the number needs (one for 0).
        let words: Vec<u32> = if seed >> 32 == 0 { vec![seed as u32] } else { vec![seed as u32, (seed >> 32) as u32] };
        PyRandom(Mt::new_with_key(words))
    }

    /// `random()`: a double in [0, 1) from two 32-bit outputs.
    fn random(&mut self) -> f64 {
        let a = (self.0.next_u32() >> 5) as f64;
        let b = (self.0.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// The positions (0-based, counting the connection's packets in that direction in the order
/// they finish serialization) that the emulator with this `seed` and `loss` loses, among the
/// first `packets` of them.
pub fn lost_positions(seed: u64, direction: Direction, loss: f64, packets: u64) -> Vec<u64> {
    lost_draws(seed, direction, loss, packets.saturating_add(DRAWS_BEFORE_CONNECTION))
        .into_iter()
        .filter_map(|d| d.checked_sub(DRAWS_BEFORE_CONNECTION))
        .collect()
}

/// The draws (0-based, every packet the emulator serialized in that direction, the
/// connection's and the others) among the first `draws` that lose their packet.
pub fn lost_draws(seed: u64, direction: Direction, loss: f64, draws: u64) -> Vec<u64> {
    let stream = seed.saturating_mul(2).saturating_add(matches!(direction, Direction::Up) as u64);
    let mut rng = PyRandom::new(stream);
    (0..draws).filter(|_| rng.random() < loss).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPython 3.12: `random.Random(2).random()` etc., three draws each.
    #[test]
    fn matches_pythons_random() {
        let cases: [(u64, [f64; 3]); 3] = [
            (2, [0.9560342718892494, 0.9478274870593494, 0.05655136772680869]),
            (23001, [0.7636204103467864, 0.23043774513934123, 0.8530394111589855]),
            (0, [0.8444218515250481, 0.7579544029403025, 0.420571580830845]),
        ];
        for (seed, want) in cases {
            let mut r = PyRandom::new(seed);
            let got = [r.random(), r.random(), r.random()];
            assert_eq!(got, want, "seed {seed}");
        }
    }

    /// A run logged here packet by packet (`tunlink.py 2e6 25 1000 --loss 0.05 --seed 1`,
    /// Linux reno): the connection's lost packets in each direction.
    #[test]
    fn matches_a_logged_run() {
        assert_eq!(lost_positions(1, Direction::Down, 0.05, 110), [19, 20, 28, 99, 105, 107]);
        assert_eq!(lost_positions(1, Direction::Up, 0.05, 92), [5, 24, 74, 76, 86, 91]);
    }

    /// A seed past 32 bits takes two words, as Python's does.
    #[test]
    fn a_wide_seed_matches_pythons_random() {
        let mut r = PyRandom::new(1 << 40 | 7);
        assert_eq!(r.random(), 0.6137037779936511);
    }
}
