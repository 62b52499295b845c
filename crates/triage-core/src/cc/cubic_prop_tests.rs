//! Operation-sequence property tests for CUBIC (RFC 9438), with and without HyStart++: random
//! sends, ACKs (any RTT, app-limited or not), losses, recovery exits, ECN echoes, timeouts
//! and idle time never panic, and after every step
//! - the window is at least one segment, and at least two unless a timeout came after the
//!   last time the window was set to ssthresh;
//! - ssthresh is at least two segments;
//! - the window never exceeds `max(initial window, 2 segments) + every byte acknowledged so
//!   far`: slow start adds at most the bytes an ACK acknowledges, the cubic at most half of
//!   them (the 1.5·cwnd target cap), `W_est` at most all of them (alpha ≤ 1, cwnd ≥ 1
//!   segment), and every reduction only lowers the window (its 2-segment floor is within
//!   the initial window).

use proptest::collection::vec;
use proptest::prelude::*;

use super::{AckSample, CongestionController, CongestionSignal, Cubic, CubicConfig};

const MSS: u64 = 1448;
const IW: u64 = 10;

#[derive(Clone, Debug)]
enum Op {
    Send { segments: u64 },
    Ack { segments: u64, rtt_ns: Option<u64>, app_limited: bool, dt_ns: u64 },
    Loss,
    RecoveryExit,
    Ecn,
    Timeout,
    Idle { dt_ns: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..=20u64).prop_map(|segments| Op::Send { segments }),
        8 => (0..=16u64, proptest::option::weighted(0.9, 1..400_000_000u64), proptest::bool::weighted(0.1),
              0..100_000_000u64)
            .prop_map(|(segments, rtt_ns, app_limited, dt_ns)| Op::Ack { segments, rtt_ns, app_limited, dt_ns }),
        1 => Just(Op::Loss),
        1 => Just(Op::RecoveryExit),
        1 => Just(Op::Ecn),
        1 => Just(Op::Timeout),
        1 => (0..20_000_000_000u64).prop_map(|dt_ns| Op::Idle { dt_ns }),
    ]
}

fn run(c: &mut Cubic, ops: &[Op]) {
    let mut now = 0u64;
    let mut delivered = 0u64;
    let mut in_flight = 0u64;
    let mut acked_total = 0u64;
    // A timeout since the window was last set to ssthresh (the only way below 2 segments).
    let mut after_timeout = false;
    for o in ops {
        let was_in_recovery = c.state() == "recovery";
        match *o {
            Op::Send { segments } => {
                for _ in 0..segments {
                    in_flight += MSS;
                    c.on_packet_sent(now, MSS, in_flight, false);
                }
            }
            Op::Ack { segments, rtt_ns, app_limited, dt_ns } => {
                now += dt_ns;
                let bytes = (segments * MSS).min(in_flight);
                let prior = in_flight;
                in_flight -= bytes;
                delivered += bytes;
                acked_total += bytes;
                c.on_ack(&AckSample {
                    now_ns: now,
                    newly_acked_bytes: bytes,
                    delivered_total_bytes: delivered,
                    prior_in_flight_bytes: prior,
                    bytes_in_flight: in_flight,
                    rtt_ns,
                    min_rtt_ns: rtt_ns,
                    srtt_ns: rtt_ns,
                    app_limited,
                    ..Default::default()
                });
            }
            Op::Loss => c.on_congestion(now, CongestionSignal::Loss, in_flight),
            Op::RecoveryExit => c.on_recovery_exit(now),
            Op::Ecn => c.on_congestion(now, CongestionSignal::Ecn { level: 1 }, in_flight),
            Op::Timeout => {
                c.on_congestion(now, CongestionSignal::Timeout, in_flight);
                in_flight = 0;
            }
            Op::Idle { dt_ns } => now += dt_ns,
        }
        match o {
            Op::Timeout => after_timeout = true,
            Op::Ecn if !was_in_recovery => after_timeout = false,
            Op::RecoveryExit if was_in_recovery => after_timeout = false,
            _ => {}
        }
        let w = c.window_bytes();
        assert!(w >= MSS, "cwnd {w} below one segment after {o:?}");
        if !after_timeout {
            assert!(w >= 2 * MSS, "cwnd {w} below two segments after {o:?}");
        }
        assert!(c.ssthresh_bytes() >= 2 * MSS, "ssthresh {} below two segments after {o:?}", c.ssthresh_bytes());
        let bound = (IW * MSS).max(2 * MSS) + acked_total;
        assert!(w <= bound, "cwnd {w} above IW + acknowledged bytes {bound} after {o:?}");
        let _ = c.state();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn cubic_window_stays_within_its_floor_and_bound(ops in vec(op(), 0..400)) {
        run(&mut Cubic::new(MSS, IW, CubicConfig::default()), &ops);
    }

    #[test]
    fn cubic_with_hystart_window_stays_within_its_floor_and_bound(ops in vec(op(), 0..400)) {
        run(&mut Cubic::new(MSS, IW, CubicConfig { hystart: true }), &ops);
    }

    /// quinn-proto's congestion avoidance (`Cubic::as_quinn`): at most a datagram per
    /// datagram acknowledged, and the same floors.
    #[test]
    fn quinn_cubic_window_stays_within_its_floor_and_bound(ops in vec(op(), 0..400)) {
        run(&mut Cubic::new(MSS, IW, CubicConfig::default()).as_quinn(), &ops);
    }
}
