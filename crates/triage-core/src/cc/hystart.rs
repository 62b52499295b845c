//! HyStart++ (RFC 9406): a delay-based exit from the initial slow start.
//!
//! Read first: RFC 9406 §4.2 (the algorithm) and §4.3 (the constants). Slow start doubles the
//! window every round and overshoots the path by up to a window of losses; HyStart++ watches
//! the minimum RTT of each round, and when it has grown by `RttThresh` over the previous
//! round's, leaves standard slow start for Conservative Slow Start (CSS), which grows at a
//! quarter of the rate for at most `CSS_ROUNDS` rounds before congestion avoidance. A drop of
//! the RTT back below the CSS baseline says the exit was spurious and resumes slow start.
//!
//! The controller owns one [`HyStart`] and feeds it every sent packet and every ACK while it
//! is in its initial slow start (§4.2: "only for the initial slow start"); any loss, ECN
//! echo or timeout ends it for the rest of the connection ([`HyStart::disable`]).
//!
//! Rounds are counted as §4.2 defines them: `windowEnd` is `SND.NXT` when a round starts, so
//! the round ends when the first packet sent in it is acknowledged. The controller sees
//! packets only through `on_packet_sent` and ACKs through the connection's delivered-byte
//! count, so this module counts payload bytes sent; a round ends once the bytes delivered
//! reach the end of the packet sent first in it. In the loss-free slow start where HyStart++
//! runs, nothing is retransmitted and those byte counts are TCP's sequence space.

/// RFC 9406 §4.3: lower bound of the RTT increase that ends slow start (4 ms).
pub const MIN_RTT_THRESH_NS: u64 = 4_000_000;
/// RFC 9406 §4.3: upper bound of the RTT increase that ends slow start (16 ms).
pub const MAX_RTT_THRESH_NS: u64 = 16_000_000;
/// RFC 9406 §4.3: the RTT increase threshold is the last round's minimum RTT over this.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3: RTT samples a round needs before its minimum is compared.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS grows the window this many times slower than slow start.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: rounds of CSS before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: `L`, the most segments one ACK may add in slow start when the sender does
/// not pace (a paced sender uses infinity; our CUBIC does not pace).
pub const NON_PACED_L: u64 = 8;

/// Where HyStart++ is in the initial slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start, watching for an RTT increase (§4.2).
    SlowStart,
    /// Conservative Slow Start: growth divided by `CSS_GROWTH_DIVISOR`; `rounds` counts the
    /// rounds that ended since CSS began (the partial round of the entry counts, §4.2).
    Css {
        /// Rounds ended in CSS so far.
        rounds: u32,
    },
    /// Finished: congestion avoidance was entered, or a congestion signal ended slow start.
    Done,
}

/// What one ACK asks of the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Bytes to add to cwnd for this ACK.
    pub grow_bytes: u64,
    /// True when CSS has run `CSS_ROUNDS` rounds: set ssthresh to cwnd and enter
    /// congestion avoidance (§4.2).
    pub enter_congestion_avoidance: bool,
}

/// HyStart++ state (RFC 9406 §4.2). Times in nanoseconds; `u64::MAX` is "infinity".
#[derive(Clone, Debug)]
pub struct HyStart {
    mss_bytes: u64,
    phase: Phase,
    last_round_min_rtt_ns: u64,
    current_round_min_rtt_ns: u64,
    rtt_sample_count: u32,
    css_baseline_min_rtt_ns: u64,
    /// Payload bytes sent so far (the sender's `SND.NXT` in the loss-free slow start).
    sent_bytes: u64,
    /// The next packet sent starts a round: its end becomes `window_end_bytes`.
    mark_next_sent: bool,
    /// The round ends once this many bytes are delivered (`windowEnd` acknowledged).
    window_end_bytes: Option<u64>,
    /// CSS growth not yet applied, in quarter bytes.
    css_remainder: u64,
    /// Rounds started so far (for traces and tests).
    rounds: u64,
}

impl HyStart {
    /// A HyStart++ at the start of a connection: in slow start, the first packet sent
    /// starts the first round (`windowEnd` initialized to `SND.NXT`).
    pub fn new(mss_bytes: u64) -> Self {
        Self {
            mss_bytes: mss_bytes.max(1),
            phase: Phase::SlowStart,
            last_round_min_rtt_ns: u64::MAX,
            current_round_min_rtt_ns: u64::MAX,
            rtt_sample_count: 0,
            css_baseline_min_rtt_ns: u64::MAX,
            sent_bytes: 0,
            mark_next_sent: true,
            window_end_bytes: None,
            css_remainder: 0,
            rounds: 0,
        }
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Rounds started since the connection began.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// True until congestion avoidance or a congestion signal ends HyStart++.
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// §4.2: "If loss or ECN-marking is observed anytime during standard slow start or
    /// CSS", the controller's own response takes over, and HyStart++ is used only for the
    /// initial slow start, so it stops for good.
    pub fn disable(&mut self) {
        self.phase = Phase::Done;
    }

    /// A packet of `bytes` payload was sent. The first one after a round starts marks
    /// `windowEnd`.
    pub fn on_packet_sent(&mut self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.sent_bytes = self.sent_bytes.saturating_add(bytes);
        if self.mark_next_sent {
            self.mark_next_sent = false;
            self.window_end_bytes = Some(self.sent_bytes);
            self.rounds += 1;
        }
    }

    /// RFC 9406 §4.2 for one ACK that acknowledged `acked_bytes` (N), with the connection's
    /// delivered total after it and the ACK's RTT sample. The sample counts in the round
    /// the acknowledged packet was sent in, so the round-end check comes after it.
    pub fn on_ack(&mut self, acked_bytes: u64, delivered_total_bytes: u64, rtt_ns: Option<u64>) -> Step {
        let mut step = Step { grow_bytes: 0, enter_congestion_avoidance: false };
        if self.phase == Phase::Done {
            return step;
        }
        // cwnd += min(N, L*SMSS), divided by CSS_GROWTH_DIVISOR in CSS.
        let n = acked_bytes.min(NON_PACED_L * self.mss_bytes);
        step.grow_bytes = match self.phase {
            Phase::Css { .. } => {
                self.css_remainder += n;
                let g = self.css_remainder / CSS_GROWTH_DIVISOR;
                self.css_remainder %= CSS_GROWTH_DIVISOR;
                g
            }
            _ => n,
        };
        if let Some(rtt) = rtt_ns {
            self.current_round_min_rtt_ns = self.current_round_min_rtt_ns.min(rtt);
            self.rtt_sample_count = self.rtt_sample_count.saturating_add(1);
        }
        if self.rtt_sample_count >= N_RTT_SAMPLE && self.current_round_min_rtt_ns != u64::MAX {
            match self.phase {
                Phase::SlowStart if self.last_round_min_rtt_ns != u64::MAX => {
                    let thresh = rtt_thresh_ns(self.last_round_min_rtt_ns);
                    if self.current_round_min_rtt_ns >= self.last_round_min_rtt_ns.saturating_add(thresh) {
                        self.css_baseline_min_rtt_ns = self.current_round_min_rtt_ns;
                        self.phase = Phase::Css { rounds: 0 };
                        self.css_remainder = 0;
                    }
                }
                Phase::Css { .. } if self.current_round_min_rtt_ns < self.css_baseline_min_rtt_ns => {
                    // The exit was spurious: resume slow start, HyStart++ included.
                    self.css_baseline_min_rtt_ns = u64::MAX;
                    self.phase = Phase::SlowStart;
                }
                _ => {}
            }
        }
        if self.window_end_bytes.is_some_and(|end| delivered_total_bytes >= end) {
            // windowEnd acknowledged: the round ends, the next packet sent starts another.
            self.window_end_bytes = None;
            self.mark_next_sent = true;
            self.last_round_min_rtt_ns = self.current_round_min_rtt_ns;
            self.current_round_min_rtt_ns = u64::MAX;
            self.rtt_sample_count = 0;
            if let Phase::Css { rounds } = self.phase {
                let rounds = rounds + 1;
                if rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    step.enter_congestion_avoidance = true;
                } else {
                    self.phase = Phase::Css { rounds };
                }
            }
        }
        step
    }
}

/// RFC 9406 §4.2: `RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
/// MAX_RTT_THRESH))`: an eighth of the last round's minimum RTT, clamped to 4..16 ms.
pub fn rtt_thresh_ns(last_round_min_rtt_ns: u64) -> u64 {
    (last_round_min_rtt_ns / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_NS, MAX_RTT_THRESH_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    /// Sends `packets` full segments, then acknowledges them two at a time (delayed ACK)
    /// with RTT `rtt_ns`; returns the summed growth and whether CA was asked for. `delivered`
    /// is the running delivered total. The first ACK of the batch acknowledges the round's
    /// first packet, so each call is one round.
    fn round(h: &mut HyStart, delivered: &mut u64, packets: u64, rtt_ns: u64) -> (u64, bool) {
        for _ in 0..packets {
            h.on_packet_sent(MSS);
        }
        let (mut grow, mut ca) = (0, false);
        for _ in 0..packets / 2 {
            *delivered += 2 * MSS;
            let s = h.on_ack(2 * MSS, *delivered, Some(rtt_ns));
            grow += s.grow_bytes;
            ca |= s.enter_congestion_avoidance;
        }
        (grow, ca)
    }

    #[test]
    fn rtt_threshold_is_an_eighth_clamped_to_4_and_16_ms() {
        assert_eq!(rtt_thresh_ns(20 * MS), 4 * MS, "20/8 = 2.5 ms, raised to 4");
        assert_eq!(rtt_thresh_ns(40 * MS), 5 * MS, "40/8 = 5 ms");
        assert_eq!(rtt_thresh_ns(100 * MS), 12_500_000, "100/8 = 12.5 ms");
        assert_eq!(rtt_thresh_ns(200 * MS), 16 * MS, "200/8 = 25 ms, capped at 16");
    }

    /// A scripted slow start at a 40 ms base RTT, driven by [`round`]: each batch's first
    /// ACK acknowledges the packet that started the round (its `windowEnd`), so a round's
    /// samples are ACKs 2..n of one batch plus ACK 1 of the next, and the exit checks run
    /// once a round has N_RTT_SAMPLE = 8 samples.
    #[test]
    fn delay_increase_enters_css_and_css_ends_slow_start_after_five_rounds() {
        let mut h = HyStart::new(MSS);
        let mut d = 0;
        // Batch 1 (10 packets, 5 ACKs of 2 segments): ACK 1 ends round 1 with one sample
        // (last = 40 ms); 4 samples follow. Growth 5 x 2000.
        assert_eq!(round(&mut h, &mut d, 10, 40 * MS), (10 * MSS, false));
        // Batch 2 (10 ACKs at 40 ms): 40 < 40 + max(4, 40/8 = 5) = 45 ms: no exit.
        assert_eq!(round(&mut h, &mut d, 20, 40 * MS), (20 * MSS, false));
        assert_eq!(h.phase(), Phase::SlowStart);
        // Batch 3 at 44.999999 ms, still against last = 40 ms: 44.999999 < 45.
        round(&mut h, &mut d, 20, 44_999_999);
        assert_eq!(h.phase(), Phase::SlowStart, "44.999999 ms < the 45 ms threshold");
        // Batch 4 at 50.6 ms: last = 44.999999 ms, threshold 44999999/8 = 5624999 ns, so the
        // exit needs 50.624998 ms; 50.6 ms stays in slow start.
        round(&mut h, &mut d, 20, 50_600_000);
        assert_eq!(h.phase(), Phase::SlowStart);
        // Batch 5 at 56.925 ms: last = 50.6 ms, threshold 50.6/8 = 6.325 ms, exit at exactly
        // 56.925 ms, on ACK 9 (the round's 8th sample). ACKs 1..9 grow 2000 each, ACK 10 in
        // CSS grows 2000/4 = 500: 18500.
        assert_eq!(round(&mut h, &mut d, 20, 56_925_000), (18_500, false));
        assert_eq!(h.phase(), Phase::Css { rounds: 0 });
        // Each further batch ends one CSS round on its ACK 1 (the entry round counts) and
        // grows 10 x 2000/4 = 5000; the RTT never drops below the 56.925 ms baseline.
        for r in 1..=4 {
            assert_eq!(round(&mut h, &mut d, 20, 56_925_000), (5_000, false), "CSS round {r}");
            assert_eq!(h.phase(), Phase::Css { rounds: r });
        }
        // The fifth round end (ACK 1: +500) asks for congestion avoidance; HyStart++ then
        // adds nothing for ACKs 2..10.
        assert_eq!(round(&mut h, &mut d, 20, 56_925_000), (500, true));
        assert_eq!(h.phase(), Phase::Done);
        assert_eq!(h.on_ack(2 * MSS, d + 2 * MSS, Some(MS)).grow_bytes, 0, "done: no more growth");
    }

    /// §4.2: an RTT back below the CSS baseline says the exit was spurious.
    #[test]
    fn rtt_below_the_baseline_resumes_slow_start() {
        let mut h = HyStart::new(MSS);
        let mut d = 0;
        round(&mut h, &mut d, 20, 40 * MS);
        round(&mut h, &mut d, 20, 45 * MS);
        // ACK 9 of batch 2 is the round's 8th sample at 45 ms >= 40 + 5: CSS, baseline 45 ms.
        assert_eq!(h.phase(), Phase::Css { rounds: 0 });
        // ACK 1 of batch 3 brings that round's minimum to 44 ms (10 samples): 44 < 45
        // resumes slow start.
        round(&mut h, &mut d, 20, 44 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn one_ack_grows_at_most_l_segments_and_disable_stops_everything() {
        let mut h = HyStart::new(MSS);
        h.on_packet_sent(20 * MSS);
        assert_eq!(h.on_ack(20 * MSS, 20 * MSS, None).grow_bytes, 8 * MSS, "L = 8 segments");
        h.disable();
        assert!(!h.active());
        assert_eq!(h.on_ack(2 * MSS, 22 * MSS, Some(MS)).grow_bytes, 0);
    }
}
