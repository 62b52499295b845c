//! RTT estimation for QUIC (RFC 9002 §5).

/// Timer granularity (RFC 9002 §6.1.2: 1 ms recommended).
pub const GRANULARITY_NS: u64 = 1_000_000;

/// RFC 9002 §5: min_rtt, smoothed_rtt, rttvar and latest_rtt, with the peer's ack delay
/// subtracted from samples when that keeps them at or above min_rtt (§5.3).
#[derive(Clone, Debug)]
pub struct QuicRtt {
    initial_rtt_ns: u64,
    latest_ns: u64,
    min_ns: u64,
    smoothed_ns: u64,
    var_ns: u64,
    has_sample: bool,
}

impl QuicRtt {
    /// Before any sample: smoothed_rtt = kInitialRtt, rttvar = kInitialRtt / 2 (§5.3, §6.2.2).
    pub fn new(initial_rtt_ns: u64) -> Self {
        Self {
            initial_rtt_ns,
            latest_ns: 0,
            min_ns: 0,
            smoothed_ns: initial_rtt_ns,
            var_ns: initial_rtt_ns / 2,
            has_sample: false,
        }
    }

    /// RFC 9002 §5.3: a new sample. `ack_delay_ns` is already limited to max_ack_delay
    /// by the caller once the handshake is confirmed (and 0 for Initial packets).
    pub fn update(&mut self, latest_ns: u64, ack_delay_ns: u64) {
        self.latest_ns = latest_ns;
        if !self.has_sample {
            self.has_sample = true;
            self.min_ns = latest_ns;
            self.smoothed_ns = latest_ns;
            self.var_ns = latest_ns / 2;
            return;
        }
        self.min_ns = self.min_ns.min(latest_ns);
        let mut adjusted = latest_ns;
        if latest_ns >= self.min_ns.saturating_add(ack_delay_ns) {
            adjusted = latest_ns - ack_delay_ns;
        }
        // rttvar = 3/4 rttvar + 1/4 |smoothed - adjusted|; smoothed = 7/8 smoothed + 1/8 adjusted.
        let diff = self.smoothed_ns.abs_diff(adjusted);
        self.var_ns = (3 * self.var_ns + diff) / 4;
        self.smoothed_ns = (7 * self.smoothed_ns + adjusted) / 8;
    }

    /// True once a sample was taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// smoothed_rtt (kInitialRtt before any sample).
    pub fn smoothed_ns(&self) -> u64 {
        self.smoothed_ns
    }

    /// rttvar.
    pub fn var_ns(&self) -> u64 {
        self.var_ns
    }

    /// min_rtt, once sampled.
    pub fn min_ns(&self) -> Option<u64> {
        self.has_sample.then_some(self.min_ns)
    }

    /// latest_rtt, once sampled.
    pub fn latest_ns(&self) -> Option<u64> {
        self.has_sample.then_some(self.latest_ns)
    }

    /// The initial RTT this estimator started from.
    pub fn initial_ns(&self) -> u64 {
        self.initial_rtt_ns
    }

    /// RFC 9002 §6.2.1: PTO = smoothed_rtt + max(4 * rttvar, kGranularity) (+ max_ack_delay,
    /// added by the caller for the application data space).
    pub fn pto_base_ns(&self) -> u64 {
        self.smoothed_ns.saturating_add((4 * self.var_ns).max(GRANULARITY_NS))
    }

    /// RFC 9002 §6.1.2: the time threshold, max(9/8 * max(smoothed_rtt, latest_rtt), kGranularity).
    pub fn loss_delay_ns(&self, num: u64, den: u64) -> u64 {
        let rtt = self.smoothed_ns.max(self.latest_ns);
        (rtt.saturating_mul(num) / den.max(1)).max(GRANULARITY_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_and_ewma() {
        let ms = 1_000_000;
        let mut r = QuicRtt::new(333 * ms);
        assert_eq!(r.smoothed_ns(), 333 * ms);
        assert_eq!(r.pto_base_ns(), 333 * ms + 4 * 166_500_000);
        r.update(100 * ms, 0);
        assert_eq!((r.smoothed_ns(), r.var_ns(), r.min_ns()), (100 * ms, 50 * ms, Some(100 * ms)));
        // 120 ms with 10 ms of ack delay: adjusted 110 (>= min 100 + 10).
        // rttvar = (3*50 + |100-110|)/4 = 40; srtt = (7*100 + 110)/8 = 101.25.
        r.update(120 * ms, 10 * ms);
        assert_eq!(r.var_ns(), 40 * ms);
        assert_eq!(r.smoothed_ns(), 101_250_000);
        // 105 ms with 10 ms delay: 105 < 100 + 10, so the delay is not subtracted.
        r.update(105 * ms, 10 * ms);
        assert_eq!(r.smoothed_ns(), (7 * 101_250_000 + 105 * ms) / 8);
        // Time threshold: 9/8 * max(srtt, latest).
        assert_eq!(r.loss_delay_ns(9, 8), r.smoothed_ns().max(105 * ms) * 9 / 8);
    }
}
