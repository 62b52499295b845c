//! NewReno congestion control: RFC 5681 §3.1 (slow start, congestion avoidance) with the
//! RFC 6582 fast-recovery semantics (one window reduction per recovery episode; the
//! connection decides when recovery starts and ends, and runs PRR inside it).

use serde::{Deserialize, Serialize};

use super::{AckSample, CongestionController, CongestionSignal};

/// How the window grows per ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    /// RFC 3465 appropriate byte counting with L = 2, as Linux does: slow start adds the
    /// bytes acknowledged (at most two segments per ACK); congestion avoidance adds one SMSS
    /// per window of acknowledged bytes. With delayed ACKs the window doubles per round trip.
    #[default]
    Bytes,
    /// One SMSS per ACK in slow start and SMSS²/cwnd per ACK in congestion avoidance,
    /// however much the ACK covers, as ns-3's TcpNewReno (3.37) does: with delayed ACKs slow
    /// start grows 1.5× per round trip. As in ns-3, an ACK that newly SACKs data grows
    /// nothing even when it also moves snd_una (ns-3 counts it a duplicate ACK).
    PerAck,
}

/// NewReno state; the window grows as [`Growth`] says.
#[derive(Debug, Clone)]
pub struct NewReno {
    mss_bytes: u64,
    growth: Growth,
    cwnd_bytes: u64,
    ssthresh_bytes: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance.
    ca_acked_bytes: u64,
    in_recovery: bool,
    /// QUIC's byte counting ([`NewReno::for_quic`]) instead of TCP's.
    quic: bool,
}

impl NewReno {
    /// A controller with an initial window of `initial_window_segments` full segments
    /// (RFC 5681 §3.1 allows up to 4, RFC 6928 raises it to 10).
    pub fn new(mss_bytes: u64, initial_window_segments: u64) -> Self {
        Self {
            mss_bytes,
            cwnd_bytes: initial_window_segments.max(1) * mss_bytes,
            ssthresh_bytes: u64::MAX,
            ca_acked_bytes: 0,
            in_recovery: false,
            growth: Growth::Bytes,
            quic: false,
        }
    }

    /// The same controller counting bytes as QUIC does (RFC 9002 §7.3, Appendix B.5, and
    /// quinn-proto 0.11's `NewReno`), where [`Growth::Bytes`] applies:
    /// - slow start adds every byte acknowledged, with no per-ACK cap (RFC 3465's L = 2 is
    ///   TCP's), and the window may pass ssthresh by what the last packet brought, which
    ///   then counts toward congestion avoidance;
    /// - congestion avoidance adds one max datagram per window of acknowledged bytes,
    ///   counted packet by packet (at most one datagram per packet acknowledged);
    /// - a congestion event (a loss, ECN, persistent congestion) leaves the count as it was,
    ///   where TCP (RFC 5681, Linux) starts it again from zero. With windows of a few
    ///   packets, as under 5% loss, the count is what lets the window grow one round trip
    ///   after a reduction instead of two: over 30 seeds at 2 Mbps / 25 ms, NewReno, fifo,
    ///   the whole page's median completion went from 23% above quinn's to 2.5% above
    ///   (README, "QUIC mode").
    pub fn for_quic(mut self) -> Self {
        self.quic = true;
        self
    }

    fn quic_counting(&self) -> bool {
        self.quic && self.growth == Growth::Bytes
    }

    /// RFC 9002 Appendix B.5 (`OnPacketsAcked`) with quinn's integer congestion avoidance:
    /// the acknowledged bytes taken a datagram at a time, as quinn calls its controller once
    /// per packet acknowledged.
    fn quic_on_ack(&mut self, mut acked_bytes: u64) {
        while acked_bytes > 0 {
            let piece = acked_bytes.min(self.mss_bytes);
            acked_bytes -= piece;
            if self.in_slow_start() {
                self.cwnd_bytes += piece;
                if self.cwnd_bytes >= self.ssthresh_bytes {
                    self.ca_acked_bytes = self.cwnd_bytes - self.ssthresh_bytes;
                }
            } else {
                self.ca_acked_bytes += piece;
                if self.ca_acked_bytes >= self.cwnd_bytes {
                    self.ca_acked_bytes -= self.cwnd_bytes;
                    self.cwnd_bytes += self.mss_bytes;
                }
            }
        }
    }

    /// The same controller with another growth rule.
    pub fn with_growth(mut self, growth: Growth) -> Self {
        self.growth = growth;
        self
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd_bytes < self.ssthresh_bytes
    }
}

impl CongestionController for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn state(&self) -> &'static str {
        if self.in_recovery {
            "recovery"
        } else if self.in_slow_start() {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }

    /// RFC 5681 §3.1: window growth, only outside recovery and only while cwnd-limited
    /// (RFC 7661's caution against growing an unused window).
    fn on_ack(&mut self, ack: &AckSample) {
        // Only fast recovery holds growth back: after a timeout slow start restarts from the
        // loss window (RFC 5681 §3.1), while the connection is still repairing.
        let acked_bytes = ack.growth_bytes();
        if self.in_recovery || acked_bytes == 0 {
            return;
        }
        if ack.app_limited && ack.prior_in_flight_bytes < self.cwnd_bytes / 2 {
            return;
        }
        if self.growth == Growth::PerAck {
            // ns-3 3.37 (`TcpSocketBase::ProcessAck`): an ACK that newly SACKs data is a
            // duplicate ACK (RFC 6675 §2, §5) even when it also moves snd_una; it takes the
            // sender to Disorder, where the window does not grow.
            if ack.newly_sacked {
                return;
            }
            if self.in_slow_start() {
                self.cwnd_bytes = (self.cwnd_bytes + self.mss_bytes).min(self.ssthresh_bytes.max(self.cwnd_bytes));
            } else {
                self.cwnd_bytes += (self.mss_bytes * self.mss_bytes / self.cwnd_bytes).max(1);
            }
            return;
        }
        if self.quic_counting() {
            self.quic_on_ack(acked_bytes);
            return;
        }
        if self.in_slow_start() {
            // RFC 3465 §2.2: cwnd += min(N, L*SMSS) with L = 2.
            let inc = acked_bytes.min(2 * self.mss_bytes);
            self.cwnd_bytes = (self.cwnd_bytes + inc).min(self.ssthresh_bytes.max(self.cwnd_bytes));
            if self.cwnd_bytes >= self.ssthresh_bytes {
                self.cwnd_bytes = self.ssthresh_bytes;
            }
        } else {
            // RFC 5681 eq. (3) in byte counting form: one SMSS per cwnd of acked bytes.
            self.ca_acked_bytes += acked_bytes;
            while self.ca_acked_bytes >= self.cwnd_bytes {
                self.ca_acked_bytes -= self.cwnd_bytes;
                self.cwnd_bytes += self.mss_bytes;
            }
        }
    }

    /// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS). A timeout also drops cwnd
    /// to the loss window of one segment (§3.1); ECN reduces as a loss does (RFC 3168 §6.1.2).
    fn on_congestion(&mut self, _now_ns: u64, signal: CongestionSignal, bytes_in_flight: u64) {
        match signal {
            CongestionSignal::Loss => {
                if self.in_recovery {
                    return;
                }
                self.ssthresh_bytes = (bytes_in_flight / 2).max(2 * self.mss_bytes);
                self.in_recovery = true;
            }
            CongestionSignal::Ecn { .. } => {
                // RFC 3168 §6.1.2: no retransmission follows an ECN-Echo, so there is no
                // recovery to exit: reduce at once (the connection limits this to once
                // per window and ignores ECE during loss recovery).
                if self.in_recovery {
                    return;
                }
                self.ssthresh_bytes = (bytes_in_flight / 2).max(2 * self.mss_bytes);
                self.cwnd_bytes = self.ssthresh_bytes;
                if !self.quic_counting() {
                    self.ca_acked_bytes = 0;
                }
            }
            CongestionSignal::Timeout => {
                self.ssthresh_bytes = (bytes_in_flight / 2).max(2 * self.mss_bytes);
                self.cwnd_bytes = self.mss_bytes;
                self.ca_acked_bytes = 0;
                self.in_recovery = false;
            }
            CongestionSignal::PersistentCongestion => {
                // RFC 9002 §7.6.2, Appendix B.8: congestion_window = kMinimumWindow.
                self.cwnd_bytes = 2 * self.mss_bytes;
                if !self.quic_counting() {
                    self.ca_acked_bytes = 0;
                }
                self.in_recovery = false;
            }
        }
    }

    /// RFC 6582 §3.2 step 3: on full acknowledgement, cwnd = ssthresh.
    fn on_recovery_exit(&mut self, _now_ns: u64) {
        if self.in_recovery {
            self.cwnd_bytes = self.ssthresh_bytes;
            if !self.quic_counting() {
                self.ca_acked_bytes = 0;
            }
            self.in_recovery = false;
        }
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(bytes: u64, inflight: u64) -> AckSample {
        AckSample { newly_acked_bytes: bytes, prior_in_flight_bytes: inflight, ..Default::default() }
    }

    #[test]
    fn slow_start_grows_by_acked_bytes_capped_at_two_segments() {
        let mut c = NewReno::new(1000, 10);
        c.on_ack(&ack(2000, 10_000));
        assert_eq!(c.window_bytes(), 12_000);
        c.on_ack(&ack(5000, 10_000));
        assert_eq!(c.window_bytes(), 14_000, "ABC caps one ACK's growth at 2 SMSS");
    }

    #[test]
    fn per_ack_growth_ignores_how_much_an_ack_covers() {
        let mut c = NewReno::new(1000, 10).with_growth(Growth::PerAck);
        c.on_ack(&ack(2000, 10_000));
        assert_eq!(c.window_bytes(), 11_000, "one SMSS per ACK in slow start");
        c.on_congestion(0, CongestionSignal::Loss, 20_000);
        c.on_recovery_exit(0);
        c.on_ack(&ack(2000, 10_000));
        assert_eq!(c.window_bytes(), 10_100, "SMSS^2/cwnd = 100 per ACK in congestion avoidance");
    }

    /// RFC 5681 §3.1 and Linux's `tcp_may_raise_cwnd`: a duplicate ACK whose SACK blocks
    /// delivered data does not grow the window; the next ACK that moves `snd_una` does.
    #[test]
    fn a_sack_only_ack_does_not_grow_the_window() {
        let mut c = NewReno::new(1000, 10);
        c.on_ack(&AckSample { sack_only: true, ..ack(1000, 10_000) });
        assert_eq!(c.window_bytes(), 10_000);
        c.on_ack(&ack(1000, 10_000));
        assert_eq!(c.window_bytes(), 11_000);
    }

    /// ns-3 3.37's NewReno (per-ACK growth): an ACK that moves snd_una and newly SACKs data
    /// is a duplicate ACK (RFC 6675 §5, "regardless of its status as a cumulative
    /// acknowledgment") and grows nothing; byte counting, as Linux, grows on it.
    #[test]
    fn per_ack_growth_skips_an_ack_that_also_newly_sacks() {
        let mut c = NewReno::new(1000, 10).with_growth(Growth::PerAck);
        c.on_ack(&AckSample { newly_sacked: true, ..ack(2000, 10_000) });
        assert_eq!(c.window_bytes(), 10_000);
        c.on_ack(&ack(2000, 10_000));
        assert_eq!(c.window_bytes(), 11_000);
        let mut c = NewReno::new(1000, 10);
        c.on_ack(&AckSample { newly_sacked: true, ..ack(2000, 10_000) });
        assert_eq!(c.window_bytes(), 12_000);
    }

    /// RFC 9002 Appendix B.5: the bytes of packets sent before the recovery period began
    /// grow nothing, the rest of the same ACK grows the window.
    #[test]
    fn packets_sent_before_recovery_grow_nothing() {
        let mut c = NewReno::new(1000, 10).for_quic();
        c.on_congestion(0, CongestionSignal::Loss, 10_000);
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 5_000);
        // 3,000 bytes acknowledged, all sent before the recovery began: nothing.
        c.on_ack(&AckSample { pre_recovery_bytes: 3_000, ..ack(3_000, 5_000) });
        assert_eq!(c.window_bytes(), 5_000);
        // 6,000 bytes of which 1,000 were sent before: 5,000 count, one window's worth.
        c.on_ack(&AckSample { pre_recovery_bytes: 1_000, ..ack(6_000, 5_000) });
        assert_eq!(c.window_bytes(), 6_000);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut c = NewReno::new(1000, 10);
        c.on_congestion(0, CongestionSignal::Loss, 20_000);
        assert_eq!(c.ssthresh_bytes(), 10_000);
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 10_000);
        for _ in 0..4 {
            c.on_ack(&ack(2000, 10_000));
        }
        assert_eq!(c.window_bytes(), 10_000, "8000 of 10000 bytes acked: no growth yet");
        c.on_ack(&ack(2000, 10_000));
        assert_eq!(c.window_bytes(), 11_000);
    }

    #[test]
    fn one_reduction_per_recovery_and_timeout_to_one_segment() {
        let mut c = NewReno::new(1000, 10);
        c.on_congestion(0, CongestionSignal::Loss, 40_000);
        c.on_congestion(0, CongestionSignal::Loss, 10_000);
        assert_eq!(c.ssthresh_bytes(), 20_000, "second loss in the same episode is ignored");
        c.on_congestion(0, CongestionSignal::Timeout, 3_000);
        assert_eq!(c.ssthresh_bytes(), 2_000, "floor of 2 SMSS");
        assert_eq!(c.window_bytes(), 1_000);
    }

    #[test]
    fn persistent_congestion_collapses_to_two_packets_and_keeps_ssthresh() {
        // RFC 9002 §7.6.2 / B.8: the loss response first (ssthresh = flight / 2), then
        // congestion_window = kMinimumWindow = 2 × max_datagram_size.
        let mut c = NewReno::new(1000, 10);
        c.on_congestion(0, CongestionSignal::Loss, 40_000);
        c.on_congestion(0, CongestionSignal::PersistentCongestion, 40_000);
        assert_eq!(c.ssthresh_bytes(), 20_000);
        assert_eq!(c.window_bytes(), 2_000);
        // Slow start again from there: every acknowledged byte adds one.
        c.on_ack(&ack(1000, 2_000));
        assert_eq!(c.window_bytes(), 3_000);
    }

    #[test]
    fn quic_slow_start_adds_every_acknowledged_byte() {
        // RFC 9002 B.5: no per-ACK cap (TCP's gives 12_000 here, the test above).
        let mut c = NewReno::new(1000, 10).for_quic();
        c.on_ack(&ack(5000, 10_000));
        assert_eq!(c.window_bytes(), 15_000);
    }

    #[test]
    fn quic_keeps_the_congestion_avoidance_count_through_a_reduction() {
        let mut q = NewReno::new(1000, 10).for_quic();
        let mut t = NewReno::new(1000, 10);
        for c in [&mut q, &mut t] {
            c.on_congestion(0, CongestionSignal::Loss, 20_000);
            c.on_recovery_exit(0);
            for _ in 0..4 {
                c.on_ack(&ack(2000, 10_000));
            }
            assert_eq!(c.window_bytes(), 10_000, "8000 of 10000 bytes counted");
            c.on_congestion(0, CongestionSignal::Loss, 10_000);
            c.on_recovery_exit(0);
            assert_eq!(c.window_bytes(), 5_000);
            c.on_ack(&ack(1000, 5_000));
        }
        // QUIC: 8000 + 1000 >= 5000: one datagram more, 4000 left in the count.
        assert_eq!(q.window_bytes(), 6_000);
        // TCP: the count started again at the reduction: 1000 of 5000.
        assert_eq!(t.window_bytes(), 5_000);
        // Two packets in one ACK: 5000 < 6000 after the first, 6000 >= 6000 after the
        // second: one datagram, the count back to 0.
        q.on_ack(&ack(2000, 6_000));
        assert_eq!(q.window_bytes(), 7_000);
        for _ in 0..3 {
            q.on_ack(&ack(2000, 7_000));
        }
        assert_eq!(q.window_bytes(), 7_000, "6000 of 7000 counted");
        q.on_ack(&ack(1000, 7_000));
        assert_eq!(q.window_bytes(), 8_000);
    }

    #[test]
    fn quic_adds_at_most_one_datagram_per_packet_acknowledged() {
        let mut c = NewReno::new(1000, 10).for_quic();
        c.on_congestion(0, CongestionSignal::Loss, 8_000);
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 4_000);
        // 3000 counted, then a reduction to the 2-datagram floor keeps them.
        c.on_ack(&ack(3000, 4_000));
        c.on_congestion(0, CongestionSignal::Loss, 2_000);
        c.on_recovery_exit(0);
        assert_eq!(c.window_bytes(), 2_000);
        // One packet: 4000 >= 2000 gives one datagram (3000), not two; 2000 stay counted.
        c.on_ack(&ack(1000, 2_000));
        assert_eq!(c.window_bytes(), 3_000);
        c.on_ack(&ack(1000, 3_000));
        assert_eq!(c.window_bytes(), 4_000, "3000 >= 3000: the count back to 0");
        for _ in 0..3 {
            c.on_ack(&ack(1000, 4_000));
        }
        assert_eq!(c.window_bytes(), 4_000, "3000 of 4000 counted");
        c.on_ack(&ack(1000, 4_000));
        assert_eq!(c.window_bytes(), 5_000);
    }

    #[test]
    fn quic_slow_start_passes_ssthresh_and_counts_the_overshoot() {
        let mut c = NewReno::new(1000, 10).for_quic();
        c.on_congestion(0, CongestionSignal::Loss, 16_000);
        c.on_congestion(0, CongestionSignal::PersistentCongestion, 16_000);
        assert_eq!((c.window_bytes(), c.ssthresh_bytes()), (2_000, 8_000));
        c.on_ack(&ack(5000, 2_000));
        assert_eq!(c.window_bytes(), 7_000);
        // 1500 acknowledged: the first 1000 reach ssthresh (count 0), the next 500 count.
        c.on_ack(&ack(1500, 7_000));
        assert_eq!(c.window_bytes(), 8_000);
        c.on_ack(&ack(7000, 8_000));
        assert_eq!(c.window_bytes(), 8_000, "7500 of 8000 counted");
        c.on_ack(&ack(500, 8_000));
        assert_eq!(c.window_bytes(), 9_000);
    }

    #[test]
    fn quic_counting_leaves_per_ack_growth_alone() {
        let mut q = NewReno::new(1000, 10).with_growth(Growth::PerAck).for_quic();
        let mut t = NewReno::new(1000, 10).with_growth(Growth::PerAck);
        for c in [&mut q, &mut t] {
            c.on_ack(&ack(5000, 10_000));
            c.on_congestion(0, CongestionSignal::Loss, 20_000);
            c.on_recovery_exit(0);
            c.on_ack(&ack(2000, 10_000));
        }
        assert_eq!(q.window_bytes(), t.window_bytes());
    }
}
