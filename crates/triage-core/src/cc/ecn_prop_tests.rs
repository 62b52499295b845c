//! Operation-sequence property tests for the ECN controllers (NewReno+ECN, EECN, VCP):
//! random ACKs (with any RTT, echo code and recovery flag), losses, timeouts, recovery
//! exits, ECN signals of every level and handshake feedback never panic, and the window
//! never falls below its floor (1 segment; 2 after an ECN response that is not a timeout).

use proptest::collection::vec;
use proptest::prelude::*;

use super::{
    AckSample, CongestionController, CongestionSignal, Eecn, EecnConfig, HandshakeFeedback, NewRenoEcn, Vcp, VcpConfig,
};

const MSS: u64 = 1448;

#[derive(Clone, Debug)]
enum Op {
    Ack {
        segments: u64,
        rtt_ns: Option<u64>,
        srtt_ns: Option<u64>,
        echo: u8,
        in_recovery: bool,
        app_limited: bool,
        dt_ns: u64,
    },
    Loss {
        flight_segments: u64,
    },
    Timeout {
        flight_segments: u64,
    },
    RecoveryExit,
    Ecn {
        level: u8,
        flight_segments: u64,
    },
    Handshake {
        level: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..=4u64, proptest::option::weighted(0.9, 1..500_000_000u64), proptest::option::weighted(0.9, 1..500_000_000u64),
              0..=3u8, proptest::bool::weighted(0.1), proptest::bool::weighted(0.1), 0..300_000_000u64)
            .prop_map(|(segments, rtt_ns, srtt_ns, echo, in_recovery, app_limited, dt_ns)| Op::Ack { segments, rtt_ns, srtt_ns, echo, in_recovery, app_limited, dt_ns }),
        1 => (0..=200u64).prop_map(|flight_segments| Op::Loss { flight_segments }),
        1 => (0..=200u64).prop_map(|flight_segments| Op::Timeout { flight_segments }),
        1 => Just(Op::RecoveryExit),
        2 => (0..=3u8, 0..=200u64).prop_map(|(level, flight_segments)| Op::Ecn { level, flight_segments }),
        1 => (0..=3u8).prop_map(|level| Op::Handshake { level }),
    ]
}

fn run(c: &mut dyn CongestionController, ops: &[Op]) {
    let mut now = 0u64;
    let mut delivered = 0u64;
    for o in ops {
        match *o {
            Op::Ack { segments, rtt_ns, srtt_ns, echo, in_recovery, app_limited, dt_ns } => {
                now += dt_ns;
                delivered += segments * MSS;
                c.on_ack(&AckSample {
                    now_ns: now,
                    newly_acked_bytes: segments * MSS,
                    delivered_total_bytes: delivered,
                    prior_in_flight_bytes: c.window_bytes(),
                    bytes_in_flight: c.window_bytes().saturating_sub(segments * MSS),
                    rtt_ns,
                    srtt_ns,
                    in_recovery,
                    app_limited,
                    ecn_echo: echo,
                    ..Default::default()
                });
            }
            Op::Loss { flight_segments } => c.on_congestion(now, CongestionSignal::Loss, flight_segments * MSS),
            Op::Timeout { flight_segments } => c.on_congestion(now, CongestionSignal::Timeout, flight_segments * MSS),
            Op::RecoveryExit => c.on_recovery_exit(now),
            Op::Ecn { level, flight_segments } => {
                c.on_congestion(now, CongestionSignal::Ecn { level }, flight_segments * MSS)
            }
            Op::Handshake { level } => {
                c.on_handshake_feedback(HandshakeFeedback { congestion_level: level, rtt_ns: Some(1_000_000) })
            }
        }
        assert!(c.window_bytes() >= MSS, "{}: cwnd {} below one segment after {o:?}", c.name(), c.window_bytes());
        assert!(
            c.ssthresh_bytes() >= 2 * MSS,
            "{}: ssthresh {} below two segments after {o:?}",
            c.name(),
            c.ssthresh_bytes()
        );
        let _ = c.state();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn newreno_ecn_never_panics(ops in vec(op(), 0..300)) {
        run(&mut NewRenoEcn::new(MSS, 10), &ops);
    }

    #[test]
    fn eecn_never_panics(ops in vec(op(), 0..300), ms_beta in any::<bool>(), mean in any::<bool>()) {
        let cfg = EecnConfig {
            beta_unit_ns: if ms_beta { 1_000_000 } else { 1_000_000_000 },
            avg_rtt: if mean { super::AvgRtt::Mean } else { super::AvgRtt::Srtt },
            ..Default::default()
        };
        run(&mut Eecn::new(MSS, 10, cfg), &ops);
    }

    #[test]
    fn vcp_never_panics(ops in vec(op(), 0..300), ss in any::<bool>(), hold in any::<bool>()) {
        run(&mut Vcp::new(MSS, 10, VcpConfig { slow_start: ss, hold_t_rho: hold, ..Default::default() }), &ops);
    }
}
