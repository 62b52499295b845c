//! RFC 6298: computing TCP's retransmission timer.

/// Smoothed RTT, RTT variance and the retransmission timeout (RFC 6298 §2), with a
/// configurable floor (§2.4 says 1 s; Linux uses 200 ms) and exponential backoff (§5.5).
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
    min_rtt_ns: Option<u64>,
    latest_rtt_ns: Option<u64>,
    initial_rto_ns: u64,
    min_rto_ns: u64,
    max_rto_ns: u64,
    /// Clock granularity G of §2 (we use 1 ms, like ns-3's default timestamp resolution).
    granularity_ns: u64,
    backoff_shift: u32,
}

impl RttEstimator {
    /// A fresh estimator: RTO starts at `initial_rto_ns` (RFC 6298 §2.1: 1 s).
    pub fn new(initial_rto_ns: u64, min_rto_ns: u64, max_rto_ns: u64) -> Self {
        Self {
            srtt_ns: None,
            rttvar_ns: 0,
            min_rtt_ns: None,
            latest_rtt_ns: None,
            initial_rto_ns,
            min_rto_ns,
            max_rto_ns,
            granularity_ns: 1_000_000,
            backoff_shift: 0,
        }
    }

    /// RFC 6298 §2.2 (first sample) and §2.3 (later samples), alpha = 1/8, beta = 1/4.
    pub fn on_sample(&mut self, rtt_ns: u64) {
        self.latest_rtt_ns = Some(rtt_ns);
        self.min_rtt_ns = Some(self.min_rtt_ns.map_or(rtt_ns, |m| m.min(rtt_ns)));
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(rtt_ns);
                self.rttvar_ns = rtt_ns / 2;
            }
            Some(srtt) => {
                let diff = srtt.abs_diff(rtt_ns);
                self.rttvar_ns = (3 * self.rttvar_ns + diff) / 4;
                self.srtt_ns = Some((7 * srtt + rtt_ns) / 8);
            }
        }
    }

    /// A new RTT sample also collapses the backoff (§5.7 after a fresh sample).
    pub fn reset_backoff(&mut self) {
        self.backoff_shift = 0;
    }

    /// §5.5: double the RTO after a timeout, up to the maximum.
    pub fn back_off(&mut self) {
        if self.backoff_shift < 16 {
            self.backoff_shift += 1;
        }
    }

    /// Current RTO: (SRTT + max(G, 4·RTTVAR)) clamped to [min, max], times the backoff.
    pub fn rto_ns(&self) -> u64 {
        let base = match self.srtt_ns {
            None => self.initial_rto_ns,
            Some(srtt) => (srtt + self.granularity_ns.max(4 * self.rttvar_ns)).max(self.min_rto_ns),
        };
        // Never below the clock granularity: an RTO of 0 would fire at the same instant forever.
        base.saturating_mul(1 << self.backoff_shift).min(self.max_rto_ns).max(self.granularity_ns)
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt_ns(&self) -> Option<u64> {
        self.srtt_ns
    }

    /// RTT variance.
    pub fn rttvar_ns(&self) -> u64 {
        self.rttvar_ns
    }

    /// Smallest RTT sample seen.
    pub fn min_rtt_ns(&self) -> Option<u64> {
        self.min_rtt_ns
    }

    /// Most recent sample.
    pub fn latest_rtt_ns(&self) -> Option<u64> {
        self.latest_rtt_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS);
        assert_eq!(r.rto_ns(), 1000 * MS, "§2.1 initial RTO");
        r.on_sample(100 * MS);
        assert_eq!(r.srtt_ns(), Some(100 * MS));
        assert_eq!(r.rttvar_ns(), 50 * MS);
        assert_eq!(r.rto_ns(), 300 * MS, "100 + 4*50");
        r.on_sample(60 * MS);
        // RTTVAR = 3/4*50 + 1/4*|100-60| = 37.5+10 = 47.5; SRTT = 7/8*100 + 1/8*60 = 95
        assert_eq!(r.rttvar_ns(), 47_500_000);
        assert_eq!(r.srtt_ns(), Some(95 * MS));
        assert_eq!(r.rto_ns(), 285 * MS);
        assert_eq!(r.min_rtt_ns(), Some(60 * MS));
    }

    #[test]
    fn floor_and_backoff() {
        let mut r = RttEstimator::new(1000 * MS, 1000 * MS, 60_000 * MS);
        r.on_sample(10 * MS);
        assert_eq!(r.rto_ns(), 1000 * MS, "§2.4 floor");
        r.back_off();
        r.back_off();
        assert_eq!(r.rto_ns(), 4000 * MS);
        for _ in 0..10 {
            r.back_off();
        }
        assert_eq!(r.rto_ns(), 60_000 * MS, "capped");
        r.reset_backoff();
        assert_eq!(r.rto_ns(), 1000 * MS);
    }
}
