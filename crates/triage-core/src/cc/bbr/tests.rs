//! Controller-level tests with hand-made ACKs.

use super::super::{AckSample, CongestionController, CongestionSignal, RateSample};
use super::pacing::bw_to_pacing_rate;
use super::probe_bw::PACING_GAIN_CYCLE;
use super::*;

pub(super) const MSS: u64 = 1448;
const RTT: u64 = 40_000_000;
const BW: u64 = 10_000_000;
/// 10 Mbps × 40 ms.
const BDP: u64 = 50_000;
const BUDGET: u64 = 3 * MSS;

/// One hand-made ACK of one MSS.
#[derive(Clone, Copy, Debug)]
struct Ack {
    dt_ns: u64,
    /// Delivery rate of the sample; a multiple of 8 so it is exact.
    bw_bps: u64,
    new_round: bool,
    app_limited: bool,
    prior_in_flight: u64,
    in_flight: u64,
    rtt_ns: u64,
    lost: u64,
    in_recovery: bool,
}

impl Default for Ack {
    fn default() -> Self {
        Self {
            dt_ns: 1_000_000,
            bw_bps: BW,
            new_round: true,
            app_limited: false,
            prior_in_flight: 200 * MSS,
            in_flight: 200 * MSS,
            rtt_ns: RTT,
            lost: 0,
            in_recovery: false,
        }
    }
}

/// Feeds hand-made ACKs to a controller, keeping time and `C.delivered`.
struct Feeder {
    bbr: Bbr,
    now: u64,
    delivered: u64,
}

impl Feeder {
    fn new(seed: u64) -> Self {
        Self { bbr: Bbr::new(BbrConfig::new(MSS, 10).with_seed(seed)), now: 0, delivered: 0 }
    }

    fn feed(&mut self, a: Ack) {
        self.now += a.dt_ns;
        // A new round needs a packet sent after the round began; 0 is before any.
        let prior_delivered = if a.new_round { self.delivered } else { 0 };
        self.delivered += MSS;
        let rate = RateSample {
            prior_delivered_bytes: prior_delivered,
            delivered_bytes: a.bw_bps / 8,
            interval_ns: 1_000_000_000,
            is_app_limited: a.app_limited,
            rtt_ns: Some(a.rtt_ns),
        };
        self.bbr.on_ack(&AckSample {
            now_ns: self.now,
            newly_acked_bytes: MSS,
            newly_lost_bytes: a.lost,
            delivered_total_bytes: self.delivered,
            prior_in_flight_bytes: a.prior_in_flight,
            bytes_in_flight: a.in_flight,
            rtt_ns: Some(a.rtt_ns),
            min_rtt_ns: Some(a.rtt_ns),
            srtt_ns: Some(a.rtt_ns),
            rate: Some(rate),
            in_recovery: a.in_recovery,
            app_limited: a.app_limited,
            ecn_echo: 0,
            sack_only: false,
            newly_sacked: false,
            pre_recovery_bytes: 0,
            handshake_only: false,
        });
    }

    /// A baseline round and three flat rounds at 10 Mbps: the pipe is full, inflight
    /// still high, so BBR is in DRAIN.
    fn to_drain(seed: u64) -> Self {
        let mut f = Self::new(seed);
        for _ in 0..4 {
            f.feed(Ack::default());
        }
        assert_eq!(f.bbr.state(), "drain");
        f
    }

    /// DRAIN, then one ACK that brings inflight to the BDP: PROBE_BW.
    fn to_probe_bw(seed: u64) -> Self {
        let mut f = Self::to_drain(seed);
        f.feed(Ack { new_round: false, in_flight: BDP, ..Ack::default() });
        assert_eq!(f.bbr.state(), "probe_bw");
        f
    }
}

#[test]
fn initial_state_and_outputs() {
    let bbr = Bbr::new(BbrConfig::new(MSS, 10));
    assert_eq!(bbr.name(), "bbr");
    assert_eq!(bbr.state(), "startup");
    assert!(!bbr.uses_prr());
    assert_eq!(bbr.window_bytes(), 10 * MSS);
    // HIGH_GAIN × 14,480 B / 1 ms × 0.99.
    assert_eq!(bbr.pacing_rate_bps(), Some(330_856_416));
    assert_eq!(bbr.ssthresh_bytes(), u64::MAX);
    // An initial window below 4 segments is raised to BBR's minimum.
    assert_eq!(Bbr::new(BbrConfig::new(MSS, 2)).window_bytes(), 4 * MSS);
}

#[test]
fn handshake_rtt_initializes_pacing() {
    let mut bbr = Bbr::new(BbrConfig::new(MSS, 10));
    bbr.on_handshake_feedback(super::super::HandshakeFeedback { congestion_level: 0, rtt_ns: Some(RTT) });
    assert_eq!(bbr.pacing_rate_bps(), Some(8_271_410));
}

#[test]
fn startup_exits_after_exactly_three_rounds_without_growth() {
    let mut f = Feeder::new(0);
    f.feed(Ack::default()); // round 1: baseline
    f.feed(Ack::default()); // flat 1
    f.feed(Ack { new_round: false, ..Ack::default() }); // not a round end
    f.feed(Ack { new_round: false, ..Ack::default() });
    f.feed(Ack::default()); // flat 2
    assert_eq!(f.bbr.state(), "startup");
    assert!(!f.bbr.is_full_pipe());
    f.feed(Ack::default()); // flat 3
    assert!(f.bbr.is_full_pipe());
    assert_eq!(f.bbr.state(), "drain");
    assert_eq!(f.bbr.round_count(), 4);
}

#[test]
fn startup_continues_while_bandwidth_grows_25_percent() {
    let mut f = Feeder::new(0);
    let mut bw = 1_000_000u64;
    for round in 0..30 {
        if round > 0 {
            // Exactly 25% more, rounded up to a whole byte per second.
            bw = (bw * 5 / 4).div_ceil(8) * 8;
        }
        f.feed(Ack { bw_bps: bw, ..Ack::default() });
        assert_eq!(f.bbr.state(), "startup");
    }
    // 20% more is not growth: three such rounds end STARTUP (the baseline stays at
    // the last round that grew by 25%, so flat means flat against it).
    bw = (bw * 120 / 100).div_ceil(8) * 8;
    for i in 0..3 {
        assert_eq!(f.bbr.state(), "startup");
        f.feed(Ack { bw_bps: bw, ..Ack::default() });
        assert_eq!(f.bbr.is_full_pipe(), i == 2);
    }
}

#[test]
fn startup_app_limited_rounds_do_not_count() {
    let mut f = Feeder::new(0);
    f.feed(Ack::default());
    f.feed(Ack::default());
    f.feed(Ack::default());
    for _ in 0..10 {
        f.feed(Ack { app_limited: true, ..Ack::default() });
        assert_eq!(f.bbr.state(), "startup");
    }
    f.feed(Ack::default());
    assert_eq!(f.bbr.state(), "drain");
}

#[test]
fn startup_pacing_and_cwnd_hand_computed() {
    let mut f = Feeder::new(0);
    f.feed(Ack::default());
    // HIGH_GAIN × 10 Mbps × 0.99, above the initial rate from srtt (8.27 Mbps).
    assert_eq!(f.bbr.pacing_rate_bps(), Some(28_561_500));
    // cwnd target 2.885 × 50,000 + 3 × 1448; cwnd grew by the acked MSS.
    assert_eq!(f.bbr.target_window_bytes(), 144_250 + BUDGET);
    assert_eq!(f.bbr.window_bytes(), 11 * MSS);
    // The pacing rate does not decrease in STARTUP while the pipe is not full.
    f.feed(Ack { bw_bps: BW / 2, app_limited: true, new_round: false, ..Ack::default() });
    assert_eq!(f.bbr.pacing_rate_bps(), Some(28_561_500));
}

#[test]
fn drain_paces_at_the_inverse_gain_and_leaves_at_bdp() {
    let mut f = Feeder::to_drain(0);
    assert_eq!(f.bbr.pacing_gain(), Gain::new(1000, 2885));
    assert_eq!(f.bbr.pacing_gain(), DRAIN_GAIN);
    assert_eq!(f.bbr.cwnd_gain(), HIGH_GAIN);
    // 10 Mbps × 1000/2885 × 0.99.
    assert_eq!(f.bbr.pacing_rate_bps(), Some(3_431_542));
    assert_eq!(f.bbr.ssthresh_bytes(), BDP + BUDGET);
    // Inflight one byte above the gain-1 target: still draining.
    f.feed(Ack { new_round: false, in_flight: BDP + BUDGET + 1, ..Ack::default() });
    assert_eq!(f.bbr.state(), "drain");
    f.feed(Ack { new_round: false, in_flight: BDP + BUDGET, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
}

#[test]
fn probe_bw_cycles_through_the_gains_one_phase_per_min_rtt() {
    let mut f = Feeder::to_probe_bw(3);
    let start = f.bbr.cycle_index().unwrap();
    for step in 1..=16 {
        // Within one min_rtt nothing changes, whatever the phase.
        f.feed(Ack { dt_ns: RTT / 2, prior_in_flight: 200 * MSS, ..Ack::default() });
        let idx = (start + step - 1) % 8;
        assert_eq!(f.bbr.cycle_index(), Some(idx));
        // Then a min_rtt has passed: next phase (inflight is high enough for 5/4 and
        // too high for the 3/4 phase to end early).
        f.feed(Ack { dt_ns: RTT / 2 + 1, prior_in_flight: 200 * MSS, ..Ack::default() });
        let idx = (start + step) % 8;
        assert_eq!(f.bbr.cycle_index(), Some(idx));
        assert_eq!(f.bbr.pacing_gain(), PACING_GAIN_CYCLE[idx]);
        assert_eq!(f.bbr.pacing_rate_bps(), Some(bw_to_pacing_rate(BW, PACING_GAIN_CYCLE[idx])));
        assert_eq!(f.bbr.cwnd_gain(), CWND_GAIN);
    }
    assert_eq!(PACING_GAIN_CYCLE[0], Gain::new(5, 4));
    assert_eq!(PACING_GAIN_CYCLE[1], Gain::new(3, 4));
    assert!(PACING_GAIN_CYCLE[2..].iter().all(|g| *g == UNIT));
}

/// Advances a PROBE_BW controller to phase `idx` by whole min_rtts.
fn advance_to_phase(f: &mut Feeder, idx: usize) {
    while f.bbr.cycle_index() != Some(idx) {
        f.feed(Ack { dt_ns: RTT + 1, prior_in_flight: 200 * MSS, ..Ack::default() });
    }
}

#[test]
fn probe_bw_up_phase_waits_for_inflight_or_loss() {
    let mut f = Feeder::to_probe_bw(1);
    advance_to_phase(&mut f, 0);
    // inflight(5/4) = 62,500 + 3 MSS + 2 MSS (the up phase's extra).
    let up_target = 62_500 + 5 * MSS;
    f.feed(Ack { dt_ns: RTT + 1, prior_in_flight: up_target - 1, ..Ack::default() });
    assert_eq!(f.bbr.cycle_index(), Some(0));
    f.feed(Ack { dt_ns: RTT, prior_in_flight: up_target - 1, lost: MSS, ..Ack::default() });
    assert_eq!(f.bbr.cycle_index(), Some(1), "a loss ends the up phase");

    advance_to_phase(&mut f, 0);
    f.feed(Ack { dt_ns: RTT + 1, prior_in_flight: up_target - 1, ..Ack::default() });
    assert_eq!(f.bbr.cycle_index(), Some(0));
    f.feed(Ack { dt_ns: 1, prior_in_flight: up_target, ..Ack::default() });
    assert_eq!(f.bbr.cycle_index(), Some(1), "reaching 5/4 × BDP ends the up phase");
}

#[test]
fn probe_bw_down_phase_ends_early_at_bdp() {
    let mut f = Feeder::to_probe_bw(1);
    advance_to_phase(&mut f, 1);
    f.feed(Ack { dt_ns: 1, prior_in_flight: BDP + BUDGET + 1, ..Ack::default() });
    assert_eq!(f.bbr.cycle_index(), Some(1));
    f.feed(Ack { dt_ns: 1, prior_in_flight: BDP + BUDGET, ..Ack::default() });
    assert_eq!(f.bbr.cycle_index(), Some(2));
}

#[test]
fn probe_bw_start_phase_is_random_but_never_the_down_phase() {
    let mut seen = [0u32; 8];
    for seed in 0..700 {
        let f = Feeder::to_probe_bw(seed);
        seen[f.bbr.cycle_index().unwrap()] += 1;
    }
    assert_eq!(seen[1], 0, "never start in the 3/4 phase: {seen:?}");
    for (idx, n) in seen.iter().enumerate() {
        if idx != 1 {
            // Uniform over 7 phases: 100 expected each.
            assert!((50..=150).contains(n), "phase {idx} drawn {n} times: {seen:?}");
        }
    }
}

#[test]
fn same_seed_same_start_phase() {
    for seed in [0, 1, 42, u64::MAX] {
        let a = Feeder::to_probe_bw(seed);
        let b = Feeder::to_probe_bw(seed);
        assert_eq!(a.bbr.cycle_index(), b.bbr.cycle_index());
    }
}

#[test]
fn probe_bw_cwnd_and_pacing_hand_computed() {
    // bw 10 Mbps, min_rtt 40 ms, MSS 1448: BDP = 50,000 B.
    let mut f = Feeder::to_probe_bw(5);
    advance_to_phase(&mut f, 2);
    for _ in 0..100 {
        f.feed(Ack { dt_ns: 1000, ..Ack::default() });
    }
    assert_eq!(f.bbr.cycle_index(), Some(2));
    assert_eq!(f.bbr.btl_bw_bps(), BW);
    assert_eq!(f.bbr.min_rtt_ns(), Some(RTT));
    // 2 × 50,000 + 3 × 1448 = 104,344.
    assert_eq!(f.bbr.target_window_bytes(), 104_344);
    assert_eq!(f.bbr.window_bytes(), 104_344);
    assert_eq!(f.bbr.pacing_rate_bps(), Some(9_900_000));
    advance_to_phase(&mut f, 0);
    // The up phase adds two MSS to the target: 107,240.
    assert_eq!(f.bbr.target_window_bytes(), 107_240);
    assert_eq!(f.bbr.pacing_rate_bps(), Some(12_375_000));
    advance_to_phase(&mut f, 1);
    assert_eq!(f.bbr.pacing_rate_bps(), Some(7_425_000));
    assert_eq!(f.bbr.window_bytes(), 104_344, "cwnd is cut back to the target");
}

#[test]
fn probe_rtt_after_ten_seconds_without_min_rtt_refresh() {
    let mut f = Feeder::to_probe_bw(0);
    // min_rtt was last refreshed by the first ACK, at 1 ms.
    let stamp = 1_000_000;
    assert!(f.now < stamp + 10_000_000_000);
    // Equal RTT samples do not refresh it; run to exactly 10 s after the stamp.
    while f.now + RTT < stamp + 10_000_000_000 {
        f.feed(Ack { dt_ns: RTT, ..Ack::default() });
        assert_eq!(f.bbr.state(), "probe_bw");
    }
    let dt = stamp + 10_000_000_000 - f.now;
    f.feed(Ack { dt_ns: dt, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw", "not before the 10 s are over");
    let cwnd_before = f.bbr.window_bytes();
    f.feed(Ack { dt_ns: 1, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt");
    assert_eq!(f.bbr.window_bytes(), 4 * MSS);
    assert_eq!(f.bbr.pacing_gain(), UNIT);
    assert_eq!(f.bbr.cwnd_gain(), UNIT);

    // Inflight still high: the 200 ms do not start.
    f.feed(Ack { dt_ns: 300_000_000, in_flight: 5 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt");
    // Inflight at 4 packets: 200 ms and a round from now.
    f.feed(Ack { dt_ns: 1_000_000, new_round: false, in_flight: 4 * MSS, ..Ack::default() });
    let t0 = f.now;
    // A round passes early, but not the 200 ms.
    f.feed(Ack { dt_ns: 50_000_000, in_flight: 4 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt");
    f.feed(Ack { dt_ns: t0 + 200_000_000 - f.now, new_round: false, in_flight: 4 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt", "200 ms exactly is not over");
    assert_eq!(f.bbr.window_bytes(), 4 * MSS);
    f.feed(Ack { dt_ns: 1, new_round: false, in_flight: 4 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
    assert!(f.bbr.window_bytes() >= cwnd_before.min(104_344));
    // The stamp was refreshed: no PROBE_RTT for another 10 s.
    f.feed(Ack { dt_ns: 9_000_000_000, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
}

#[test]
fn probe_rtt_waits_for_a_round_after_the_200_ms() {
    let mut f = Feeder::to_probe_bw(0);
    f.feed(Ack { dt_ns: 10_000_000_001, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt");
    f.feed(Ack { dt_ns: 1, new_round: false, in_flight: 3 * MSS, ..Ack::default() });
    f.feed(Ack { dt_ns: 250_000_000, new_round: false, in_flight: 3 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt", "no round since inflight got low");
    f.feed(Ack { dt_ns: 1, new_round: true, in_flight: 3 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
}

#[test]
fn probe_rtt_returns_to_startup_if_the_pipe_was_never_full() {
    let mut f = Feeder::new(0);
    f.feed(Ack::default());
    f.feed(Ack { dt_ns: 10_000_000_001, bw_bps: BW * 2, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt");
    f.feed(Ack { dt_ns: 1, new_round: false, in_flight: 4 * MSS, ..Ack::default() });
    f.feed(Ack { dt_ns: 200_000_001, new_round: true, in_flight: 4 * MSS, ..Ack::default() });
    assert_eq!(f.bbr.state(), "startup");
}

#[test]
fn fast_recovery_conserves_packets_and_restores_cwnd() {
    let mut f = Feeder::to_probe_bw(5);
    for _ in 0..100 {
        f.feed(Ack { dt_ns: 1000, ..Ack::default() });
    }
    let before = f.bbr.window_bytes();
    assert!(before > 40 * MSS);
    f.bbr.on_congestion(f.now, CongestionSignal::Loss, 50 * MSS);
    assert_eq!(f.bbr.window_bytes(), before, "the cut waits for the next ACK");
    // First ACK of recovery: cwnd = inflight + acked.
    f.feed(Ack {
        dt_ns: 1000,
        new_round: false,
        lost: 2 * MSS,
        in_flight: 20 * MSS,
        in_recovery: true,
        ..Ack::default()
    });
    assert_eq!(f.bbr.window_bytes(), 21 * MSS);
    // Packet conservation: never below inflight + acked, no growth beyond it.
    f.feed(Ack { dt_ns: 1000, new_round: false, in_flight: 15 * MSS, in_recovery: true, ..Ack::default() });
    assert_eq!(f.bbr.window_bytes(), 21 * MSS);
    f.feed(Ack { dt_ns: 1000, new_round: false, in_flight: 25 * MSS, in_recovery: true, ..Ack::default() });
    assert_eq!(f.bbr.window_bytes(), 26 * MSS);
    // Losses are deducted.
    f.feed(Ack {
        dt_ns: 1000,
        new_round: false,
        lost: 3 * MSS,
        in_flight: 5 * MSS,
        in_recovery: true,
        ..Ack::default()
    });
    assert_eq!(f.bbr.window_bytes(), 23 * MSS);
    // After a round, packet conservation ends and cwnd grows by acked bytes again.
    f.feed(Ack { dt_ns: 1000, new_round: true, in_flight: 5 * MSS, in_recovery: true, ..Ack::default() });
    assert_eq!(f.bbr.window_bytes(), 24 * MSS);
    f.bbr.on_recovery_exit(f.now);
    assert_eq!(f.bbr.window_bytes(), before);
    assert_eq!(f.bbr.state(), "probe_bw");
}

#[test]
fn timeout_drops_cwnd_to_one_mss_then_grows_and_restores() {
    let mut f = Feeder::to_probe_bw(5);
    for _ in 0..100 {
        f.feed(Ack { dt_ns: 1000, ..Ack::default() });
    }
    let before = f.bbr.window_bytes();
    f.bbr.on_congestion(f.now, CongestionSignal::Timeout, 50 * MSS);
    assert_eq!(f.bbr.window_bytes(), MSS);
    assert!(f.bbr.pacing_rate_bps().unwrap() > 0);
    // A second timeout does not overwrite the saved cwnd.
    f.bbr.on_congestion(f.now, CongestionSignal::Timeout, 0);
    f.feed(Ack { dt_ns: 1000, new_round: false, in_flight: 0, in_recovery: true, ..Ack::default() });
    assert_eq!(f.bbr.window_bytes(), 4 * MSS, "grows by acked, floored at 4 MSS");
    f.feed(Ack { dt_ns: 1000, new_round: false, in_flight: 0, in_recovery: true, ..Ack::default() });
    assert_eq!(f.bbr.window_bytes(), 5 * MSS);
    f.bbr.on_recovery_exit(f.now);
    assert_eq!(f.bbr.window_bytes(), before);
}

#[test]
fn an_ack_outside_recovery_ends_a_recovery_never_exited() {
    let mut f = Feeder::to_probe_bw(5);
    for _ in 0..100 {
        f.feed(Ack { dt_ns: 1000, ..Ack::default() });
    }
    let before = f.bbr.window_bytes();
    f.bbr.on_congestion(f.now, CongestionSignal::Timeout, 50 * MSS);
    f.feed(Ack { dt_ns: 1000, in_recovery: false, ..Ack::default() });
    assert_eq!(f.bbr.window_bytes(), before);
}

#[test]
fn ecn_is_ignored() {
    let mut f = Feeder::to_probe_bw(5);
    let before = (f.bbr.window_bytes(), f.bbr.pacing_rate_bps(), f.bbr.state());
    f.bbr.on_congestion(f.now, CongestionSignal::Ecn { level: 1 }, 50 * MSS);
    assert_eq!(before, (f.bbr.window_bytes(), f.bbr.pacing_rate_bps(), f.bbr.state()));
}

#[test]
fn idle_restart_in_probe_bw_paces_at_btl_bw() {
    let mut f = Feeder::to_probe_bw(1);
    advance_to_phase(&mut f, 0);
    assert_eq!(f.bbr.pacing_rate_bps(), Some(12_375_000));
    f.bbr.on_packet_sent(f.now, MSS, MSS + 1, true); // something was in flight
    assert_eq!(f.bbr.pacing_rate_bps(), Some(12_375_000));
    f.bbr.on_packet_sent(f.now, MSS, MSS, false); // not app-limited
    assert_eq!(f.bbr.pacing_rate_bps(), Some(12_375_000));
    f.bbr.on_packet_sent(f.now, MSS, MSS, true);
    assert_eq!(f.bbr.pacing_rate_bps(), Some(9_900_000));
}

#[test]
fn idle_restart_skips_probe_rtt_and_takes_the_fresh_rtt() {
    // Without idle: an expired min_rtt means PROBE_RTT.
    let mut f = Feeder::to_probe_bw(1);
    f.feed(Ack { dt_ns: 10_000_000_001, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_rtt");

    // Restarting from idle (Linux `idle_restart`): the first ACK for data takes the
    // new RTT sample as min_rtt instead of entering PROBE_RTT.
    let mut f = Feeder::to_probe_bw(1);
    f.now += 10_000_000_000;
    f.bbr.on_packet_sent(f.now, MSS, MSS, true);
    // An ACK that delivers nothing keeps the restart flag.
    f.bbr.on_ack(&AckSample { now_ns: f.now + 1, delivered_total_bytes: f.delivered, ..AckSample::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
    f.feed(Ack { dt_ns: 1, rtt_ns: RTT + 5, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
    assert_eq!(f.bbr.min_rtt_ns(), Some(RTT + 5));
    f.feed(Ack { dt_ns: 1, ..Ack::default() });
    assert_eq!(f.bbr.state(), "probe_bw");
    assert_eq!(f.bbr.min_rtt_ns(), Some(RTT));
}
