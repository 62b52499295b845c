//! Property test: random but consistent sequences of controller calls.

use proptest::collection::vec;
use proptest::prelude::*;

use super::super::{AckSample, CongestionController, CongestionSignal, RateSample};
use super::{Bbr, BbrConfig};

#[derive(Clone, Debug)]
enum Op {
    Send { segments: u64, app_limited: bool, dt_ns: u64 },
    Ack(AckOp),
    Loss,
    Timeout,
    RecoveryExit,
    Ecn,
    Idle { dt_ns: u64 },
}

#[derive(Clone, Debug)]
struct AckOp {
    segments: u64,
    lost_segments: u64,
    rtt_ns: Option<u64>,
    dt_ns: u64,
    /// How far back (in segments of `C.delivered`) the sampled packet was sent.
    sample_back: u64,
    /// The sample's interval: from one of a few link rates, or arbitrary.
    interval: Interval,
    app_limited: bool,
    has_rate: bool,
}

#[derive(Clone, Copy, Debug)]
enum Interval {
    /// Consistent with a link of this many bits per second.
    Rate(u64),
    /// Any interval, including 0 (an invalid sample).
    Raw(u64),
}

fn interval() -> impl Strategy<Value = Interval> {
    prop_oneof![
        6 => Just(Interval::Rate(10_000_000)),
        1 => Just(Interval::Rate(1_000_000)),
        1 => Just(Interval::Rate(1_000_000_000)),
        2 => (0..3_000_000_000u64).prop_map(Interval::Raw),
    ]
}

fn ack_op() -> impl Strategy<Value = AckOp> {
    (
        (0..=20u64, prop_oneof![3 => Just(0u64), 1 => 0..=5u64], proptest::option::weighted(0.9, 1..200_000_000u64)),
        (0..50_000_000u64, 0..=60u64, interval()),
        (proptest::bool::weighted(0.2), proptest::bool::weighted(0.9)),
    )
        .prop_map(
            |((segments, lost_segments, rtt_ns), (dt_ns, sample_back, interval), (app_limited, has_rate))| AckOp {
                segments,
                lost_segments,
                rtt_ns,
                dt_ns,
                sample_back,
                interval,
                app_limited,
                has_rate,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1..=20u64, proptest::bool::weighted(0.2), 0..5_000_000u64)
            .prop_map(|(segments, app_limited, dt_ns)| Op::Send { segments, app_limited, dt_ns }),
        8 => ack_op().prop_map(Op::Ack),
        1 => Just(Op::Loss),
        1 => Just(Op::Timeout),
        1 => Just(Op::RecoveryExit),
        1 => Just(Op::Ecn),
        1 => (0..12_000_000_000u64).prop_map(|dt_ns| Op::Idle { dt_ns }),
    ]
}

/// What the connection knows, kept consistent across calls.
#[derive(Default)]
struct Conn {
    now: u64,
    in_flight: u64,
    delivered: u64,
    in_recovery: bool,
    after_timeout: bool,
    min_rtt: Option<u64>,
    srtt: Option<u64>,
}

fn apply(bbr: &mut Bbr, c: &mut Conn, mss: u64, op: &Op) {
    match op {
        Op::Send { segments, app_limited, dt_ns } => {
            for _ in 0..*segments {
                c.now += dt_ns;
                c.in_flight += mss;
                bbr.on_packet_sent(c.now, mss, c.in_flight, *app_limited);
            }
        }
        Op::Ack(a) => {
            c.now += a.dt_ns;
            let acked = (a.segments * mss).min(c.in_flight);
            let lost = (a.lost_segments * mss).min(c.in_flight - acked);
            let prior_in_flight = c.in_flight;
            c.in_flight -= acked + lost;
            let prior_delivered = c.delivered.saturating_sub(a.sample_back * mss);
            c.delivered += acked;
            if let Some(rtt) = a.rtt_ns {
                c.min_rtt = Some(c.min_rtt.map_or(rtt, |m| m.min(rtt)));
                c.srtt = Some(c.srtt.map_or(rtt, |s| (7 * s + rtt) / 8));
            }
            let delivered_bytes = c.delivered - prior_delivered;
            let interval_ns = match a.interval {
                Interval::Rate(bps) => delivered_bytes * 8 * 1_000_000_000 / bps,
                Interval::Raw(ns) => ns,
            };
            let rate = (a.has_rate && acked > 0).then_some(RateSample {
                prior_delivered_bytes: prior_delivered,
                delivered_bytes,
                interval_ns,
                is_app_limited: a.app_limited,
                rtt_ns: a.rtt_ns,
            });
            bbr.on_ack(&AckSample {
                now_ns: c.now,
                newly_acked_bytes: acked,
                newly_lost_bytes: lost,
                delivered_total_bytes: c.delivered,
                prior_in_flight_bytes: prior_in_flight,
                bytes_in_flight: c.in_flight,
                rtt_ns: a.rtt_ns,
                min_rtt_ns: c.min_rtt,
                srtt_ns: c.srtt,
                rate,
                in_recovery: c.in_recovery,
                app_limited: a.app_limited,
                ecn_echo: 0,
                sack_only: false,
                newly_sacked: false,
                pre_recovery_bytes: 0,
                handshake_only: false,
            });
            if acked > 0 {
                c.after_timeout = false;
            }
        }
        Op::Loss => {
            c.in_recovery = true;
            bbr.on_congestion(c.now, CongestionSignal::Loss, c.in_flight);
        }
        Op::Timeout => {
            bbr.on_congestion(c.now, CongestionSignal::Timeout, c.in_flight);
            // Everything outstanding is marked lost.
            c.in_flight = 0;
            c.in_recovery = true;
            c.after_timeout = true;
        }
        Op::RecoveryExit => {
            c.in_recovery = false;
            bbr.on_recovery_exit(c.now);
        }
        Op::Ecn => bbr.on_congestion(c.now, CongestionSignal::Ecn { level: 1 }, c.in_flight),
        Op::Idle { dt_ns } => c.now += dt_ns,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn random_operation_sequences_keep_invariants(
        seed in any::<u64>(),
        mss in 500..9000u64,
        iw in 1..20u64,
        ops in vec(op(), 1..400),
    ) {
        let mut bbr = Bbr::new(BbrConfig::new(mss, iw).with_seed(seed));
        let mut c = Conn::default();
        for op in &ops {
            apply(&mut bbr, &mut c, mss, op);
            let cwnd = bbr.window_bytes();
            let floor = if c.after_timeout { mss } else { 4 * mss };
            prop_assert!(cwnd >= floor, "cwnd {} < {} after {:?}", cwnd, floor, op);
            let pacing = bbr.pacing_rate_bps();
            prop_assert!(pacing.is_some_and(|p| p > 0), "pacing {:?} after {:?}", pacing, op);
            prop_assert!(["startup", "drain", "probe_bw", "probe_rtt"].contains(&bbr.state()));
            prop_assert!(!bbr.uses_prr());
            prop_assert_eq!(bbr.cycle_index().is_some(), bbr.state() == "probe_bw");
        }
    }

    #[test]
    fn same_seed_same_behaviour(seed in any::<u64>(), ops in vec(op(), 1..200)) {
        let mut a = Bbr::new(BbrConfig::new(1448, 10).with_seed(seed));
        let mut b = Bbr::new(BbrConfig::new(1448, 10).with_seed(seed));
        let (mut ca, mut cb) = (Conn::default(), Conn::default());
        for op in &ops {
            apply(&mut a, &mut ca, 1448, op);
            apply(&mut b, &mut cb, 1448, op);
            prop_assert_eq!(a.window_bytes(), b.window_bytes());
            prop_assert_eq!(a.pacing_rate_bps(), b.pacing_rate_bps());
            prop_assert_eq!(a.state(), b.state());
            prop_assert_eq!(a.cycle_index(), b.cycle_index());
        }
    }
}
