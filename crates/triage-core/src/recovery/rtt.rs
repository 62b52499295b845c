//! RFC 6298: computing TCP's retransmission timer, and Linux's variant of it.

/// Smoothed RTT, RTT variance and the retransmission timeout (RFC 6298 §2), with a
/// configurable floor (§2.4 says 1 s; Linux uses 200 ms) and exponential backoff (§5.5);
/// or, [`RttEstimator::linux`], the timeout as Linux computes it.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
    /// Linux's estimator ([`RttEstimator::linux`]) when set: its state (boxed: a
    /// connection's hot state stays as small as it was without it).
    linux: Option<Box<LinuxRto>>,
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
            linux: None,
        }
    }

    /// The timeout as Linux computes it (`tcp_rtt_estimator`, `tcp_set_rto` in
    /// net/ipv4/tcp_input.c), where RFC 6298's floor is a floor on the variance term:
    /// RTO = SRTT + RTTVAR', with RTTVAR' the largest 4·MDEV seen in the current flight but
    /// at least `min_rto` (200 ms), and decaying a quarter of the way toward that per flight
    /// of data acknowledged. So the timeout is at least SRTT + 200 ms (RFC 6298: max(SRTT +
    /// 4·RTTVAR, 200 ms)), and a falling RTT shrinks MDEV eight times more slowly than a
    /// rising one grows it. Samples come with the sequence numbers that delimit flights
    /// ([`on_sample_at`](Self::on_sample_at)).
    pub fn linux(mut self) -> Self {
        self.linux = Some(Box::default());
        self
    }

    /// A sample from an ACK that left `snd_una` where it is now, with `snd_nxt` the next
    /// sequence number to send: the same as [`on_sample`](Self::on_sample) for RFC 6298;
    /// Linux's estimator updates its variance term once per flight, when `snd_una` passes
    /// the `snd_nxt` of the last update.
    pub fn on_sample_at(&mut self, rtt_ns: u64, snd_una: u64, snd_nxt: u64) {
        let Some(l) = self.linux.as_mut() else {
            self.on_sample(rtt_ns);
            return;
        };
        self.latest_rtt_ns = Some(rtt_ns);
        self.min_rtt_ns = Some(self.min_rtt_ns.map_or(rtt_ns, |m| m.min(rtt_ns)));
        let floor = self.min_rto_ns;
        match self.srtt_ns {
            None => {
                // "make sure rto = 3*rtt": 4·MDEV = 2·RTT.
                self.srtt_ns = Some(rtt_ns);
                l.mdev4_ns = 2 * rtt_ns;
                l.rttvar_ns = l.mdev4_ns.max(floor);
                l.mdev4_max_ns = l.rttvar_ns;
                l.rtt_seq = snd_nxt;
            }
            Some(srtt) => {
                // In Linux's fixed point (srtt ×8, mdev ×4): srtt += err / 8; mdev4 += |err|
                // - mdev4 / 4, with the change divided by 8 more when the RTT fell and the
                // error still exceeds mdev4 / 4.
                let err = rtt_ns as i64 - srtt as i64;
                self.srtt_ns = Some((srtt as i64 + err / 8).max(1) as u64);
                let mut m = err.abs() - (l.mdev4_ns / 4) as i64;
                if err < 0 && m > 0 {
                    m >>= 3;
                }
                l.mdev4_ns = (l.mdev4_ns as i64 + m).max(0) as u64;
                if l.mdev4_ns > l.mdev4_max_ns {
                    l.mdev4_max_ns = l.mdev4_ns;
                    l.rttvar_ns = l.rttvar_ns.max(l.mdev4_max_ns);
                }
                if snd_una > l.rtt_seq {
                    if l.mdev4_max_ns < l.rttvar_ns {
                        l.rttvar_ns -= (l.rttvar_ns - l.mdev4_max_ns) / 4;
                    }
                    l.rtt_seq = snd_nxt;
                    l.mdev4_max_ns = floor;
                }
            }
        }
        self.rttvar_ns = l.mdev4_ns / 4;
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
        let base = match (self.srtt_ns, &self.linux) {
            (None, _) => self.initial_rto_ns,
            (Some(srtt), Some(l)) => srtt + l.rttvar_ns,
            (Some(srtt), None) => (srtt + self.granularity_ns.max(4 * self.rttvar_ns)).max(self.min_rto_ns),
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

/// Linux's RTO state (`struct tcp_sock`: `mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq`).
#[derive(Debug, Clone, Copy, Default)]
struct LinuxRto {
    /// 4·MDEV.
    mdev4_ns: u64,
    /// The largest 4·MDEV in this flight, at least the RTO floor.
    mdev4_max_ns: u64,
    /// The variance term of the RTO.
    rttvar_ns: u64,
    /// The flight ends when `snd_una` passes this.
    rtt_seq: u64,
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

    /// Linux's `tcp_rtt_estimator` by hand (min RTO 200 ms), sample by sample: the variance
    /// term is at least 200 ms and only decays once per flight (`snd_una` past `rtt_seq`).
    #[test]
    fn linux_estimator_by_hand() {
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS).linux();
        // First sample: SRTT 50, 4·MDEV = 100, RTTVAR = max(100, 200); RFC 6298 gives 200.
        r.on_sample_at(50 * MS, 0, 10);
        assert_eq!(r.rto_ns(), 250 * MS);
        // +10 ms, same flight: SRTT 51.25; 4·MDEV 100 + (10 − 25) = 85; RTTVAR stays 200.
        r.on_sample_at(60 * MS, 5, 15);
        assert_eq!(r.rto_ns(), 51_250_000 + 200 * MS);
        // −11.25 ms, a new flight (12 > 10): SRTT 49.84375; 4·MDEV 85 − 10 = 75 (the error
        // is below MDEV, so no eighth); RTTVAR 200 (its floor, nothing to decay).
        r.on_sample_at(40 * MS, 12, 30);
        assert_eq!(r.rto_ns(), 49_843_750 + 200 * MS);
        // A 500 ms spike: SRTT += 450.15625 / 8 (truncated to the ns); 4·MDEV 75 + 450.15625
        // − 18.75 = 506.40625, which raises the flight's maximum and RTTVAR at once.
        r.on_sample_at(500 * MS, 20, 40);
        let srtt = 49_843_750 + 56_269_531;
        assert_eq!(r.srtt_ns(), Some(srtt));
        assert_eq!(r.rto_ns(), srtt + 506_406_250);
        // No error, a new flight: 4·MDEV 506.40625 − 126.601562 = 379.804688; RTTVAR equals
        // the flight's maximum, so it does not decay; the maximum resets to 200.
        r.on_sample_at(srtt, 41, 50);
        assert_eq!(r.rto_ns(), srtt + 506_406_250);
        // Again: 4·MDEV 379.804688 − 94.951172 = 284.853516 (the flight's maximum); at the
        // flight's end RTTVAR decays a quarter of the way to it: 506.40625 − 55.388183.
        r.on_sample_at(srtt, 51, 60);
        assert_eq!(r.rto_ns(), srtt + 451_018_067);
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
