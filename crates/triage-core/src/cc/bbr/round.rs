//! Round-trip counting by delivered bytes.
//!
//! BBR (Cardwell et al. 2016) §"Delivery rate": a packet-timed round trip ends when an
//! ACK delivers a packet that was sent after the round started, i.e. whose
//! `P.delivered` is at least the connection's delivered count when the round started.
//! Linux `bbr_update_bw` keeps this as `next_rtt_delivered` / `rtt_cnt` / `round_start`.

/// Counts packet-timed round trips (Linux `next_rtt_delivered`, `rtt_cnt`, `round_start`).
#[derive(Clone, Debug, Default)]
pub(super) struct RoundCounter {
    /// `C.delivered` at which the next round ends.
    next_round_delivered: u64,
    /// Rounds counted so far.
    count: u64,
    /// True when the ACK being processed started a new round.
    round_start: bool,
}

impl RoundCounter {
    /// Clears the round-start flag at the beginning of an ACK (Linux `bbr_update_bw`).
    pub(super) fn begin_ack(&mut self) {
        self.round_start = false;
    }

    /// Processes a valid rate sample: starts a new round when the sampled packet was sent
    /// after the current round began (`prior_delivered >= next_round_delivered`).
    /// Returns true when a round started.
    pub(super) fn on_rate_sample(&mut self, prior_delivered: u64, delivered_total: u64) -> bool {
        if prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = delivered_total;
            self.count += 1;
            self.round_start = true;
        }
        self.round_start
    }

    /// Starts a round now: the next round ends once a packet sent from now on is
    /// delivered (Linux sets `next_rtt_delivered = tp->delivered` on entering recovery
    /// and on PROBE_RTT's low-inflight point).
    pub(super) fn restart_at(&mut self, delivered_total: u64) {
        self.next_round_delivered = delivered_total;
    }

    /// True when the ACK being processed started a round.
    pub(super) fn is_round_start(&self) -> bool {
        self.round_start
    }

    /// Rounds counted so far.
    pub(super) fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_end_when_a_packet_sent_after_the_round_start_is_delivered() {
        let mut r = RoundCounter::default();
        r.begin_ack();
        assert!(r.on_rate_sample(0, 1000)); // first ACK starts round 1
        assert_eq!(r.count(), 1);
        r.begin_ack();
        assert!(!r.on_rate_sample(500, 2000)); // sent before C.delivered reached 1000
        r.begin_ack();
        assert!(r.on_rate_sample(1000, 3000));
        assert_eq!(r.count(), 2);
        r.restart_at(5000);
        r.begin_ack();
        assert!(!r.on_rate_sample(4000, 6000));
        assert!(!r.is_round_start());
        r.begin_ack();
        assert!(r.on_rate_sample(5000, 7000));
        assert_eq!(r.count(), 3);
    }
}
