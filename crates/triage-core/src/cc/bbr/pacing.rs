//! The pacing rate.
//!
//! BBR (Cardwell et al. 2016) §"Pacing rate": `pacing_gain × BtlBw`, which Linux
//! (`bbr_bw_to_pacing_rate`) paces about 1% below so the bottleneck queue stays empty.
//! Before any bandwidth sample the rate comes from the initial window over the RTT
//! (Linux `bbr_init_pacing_rate_from_rtt`), and in STARTUP the rate never decreases
//! until the pipe is full (Linux `bbr_set_pacing_rate`).

use super::gain::{Gain, HIGH_GAIN};
use super::Bbr;

/// Pace this many percent below `pacing_gain × BtlBw` (Linux
/// `bbr_pacing_margin_percent`).
pub(super) const PACING_MARGIN_PERCENT: u64 = 1;

/// RTT assumed before any RTT sample (Linux uses `USEC_PER_MSEC`).
pub(super) const DEFAULT_RTT_NS: u64 = 1_000_000;

/// `gain × bw × (100 − margin)%` in bits per second (Linux `bbr_bw_to_pacing_rate`).
pub(super) fn bw_to_pacing_rate(bw_bps: u64, gain: Gain) -> u64 {
    let num = bw_bps as u128 * gain.numerator() as u128 * (100 - PACING_MARGIN_PERCENT) as u128;
    let den = gain.denominator() as u128 * 100;
    (num / den).min(u64::MAX as u128) as u64
}

/// `HIGH_GAIN × cwnd / rtt × (100 − margin)%` in bits per second.
pub(super) fn initial_pacing_rate(cwnd_bytes: u64, rtt_ns: u64) -> u64 {
    let bw_bps = cwnd_bytes as u128 * 8 * 1_000_000_000 / rtt_ns.max(1) as u128;
    bw_to_pacing_rate(bw_bps.min(u64::MAX as u128) as u64, HIGH_GAIN)
}

impl Bbr {
    /// Linux `bbr_init_pacing_rate_from_rtt`: `HIGH_GAIN × cwnd / srtt`, with 1 ms
    /// standing in for an unknown RTT.
    pub(super) fn init_pacing_rate_from_rtt(&mut self, srtt_ns: Option<u64>) {
        let rtt = match srtt_ns {
            Some(rtt) => {
                self.has_seen_rtt = true;
                rtt.max(1)
            }
            None => DEFAULT_RTT_NS,
        };
        self.pacing_rate_bps = initial_pacing_rate(self.cwnd_bytes, rtt).max(1);
    }

    /// Linux `bbr_set_pacing_rate`: re-initialize from the first RTT sample, then take
    /// `gain × bw` if the pipe is full or it is an increase. A zero rate (no bandwidth
    /// sample yet) never replaces the current one.
    pub(super) fn set_pacing_rate(&mut self, bw_bps: u64, gain: Gain, srtt_ns: Option<u64>) {
        let rate = bw_to_pacing_rate(bw_bps, gain);
        if !self.has_seen_rtt && srtt_ns.is_some() {
            self.init_pacing_rate_from_rtt(srtt_ns);
        }
        if rate > 0 && (self.full_pipe.is_reached() || rate > self.pacing_rate_bps) {
            self.pacing_rate_bps = rate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::gain::{DRAIN_GAIN, UNIT};
    use super::*;

    #[test]
    fn pacing_rate_hand_computed() {
        // 10 Mbps: gain 1 → 9.9 Mbps; 5/4 → 12.375 Mbps; 3/4 → 7.425 Mbps.
        assert_eq!(bw_to_pacing_rate(10_000_000, UNIT), 9_900_000);
        assert_eq!(bw_to_pacing_rate(10_000_000, Gain::new(5, 4)), 12_375_000);
        assert_eq!(bw_to_pacing_rate(10_000_000, Gain::new(3, 4)), 7_425_000);
        // STARTUP: 10e6 × 2.885 × 0.99 = 28,561,500.
        assert_eq!(bw_to_pacing_rate(10_000_000, HIGH_GAIN), 28_561_500);
        // DRAIN: 10e6 × 1000/2885 × 0.99 = 3,431,542.46… → 3,431,542.
        assert_eq!(bw_to_pacing_rate(10_000_000, DRAIN_GAIN), 3_431_542);
        assert_eq!(bw_to_pacing_rate(u64::MAX, HIGH_GAIN), u64::MAX);
    }

    #[test]
    fn initial_pacing_rate_hand_computed() {
        // IW 10 × 1448 B over 1 ms: 115.84 Mbps × 2.885 × 0.99 = 330,856,416 bps.
        assert_eq!(initial_pacing_rate(14_480, DEFAULT_RTT_NS), 330_856_416);
        // Over 40 ms: 2.896 Mbps × 2.885 × 0.99 = 8,271,410.4 → 8,271,410.
        assert_eq!(initial_pacing_rate(14_480, 40_000_000), 8_271_410);
    }
}
