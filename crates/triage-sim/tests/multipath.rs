//! Multipath QUIC (RFC 10069) in the simulator: two paths carry one connection's data
//! together, and a path that fails mid-transfer loses nothing.
//!
//! Topology: two multi-homed hosts over two disjoint duplex links (PriorityBucket Fig. 2,
//! [`triage_sim::topology::multipath`]). The server writes one bulk message once both paths
//! are validated; goodput is the message's bytes over the time from its write to its
//! arrival at the client.

mod common;

use common::*;
use triage_core::cc::ControllerKind;
use triage_core::quic::{MultipathConfig, PathSchedulerKind, QuicConfig};
use triage_core::{ConnectionConfig, TransportMode};
use triage_sim::app::{AppSpec, MessageSpec};
use triage_sim::topology::{multipath, multipath_flow, path_priors, LinkParams};
use triage_sim::Simulator;

const BULK_BYTES: u64 = 8_000_000;
/// The message is written this long after the flow starts: both paths are validated by then.
const WRITE_AT_NS: u64 = 300 * MS;

fn quic(scheduler: PathSchedulerKind, paths: &[LinkParams], cc: ControllerKind) -> ConnectionConfig {
    ConnectionConfig {
        mode: TransportMode::Quic,
        controller: cc,
        quic: QuicConfig {
            // 16 MB windows (PriorityBucket §5.1): flow control never limits the paths.
            stream_receive_window_bytes: 16_000_000,
            multipath: MultipathConfig { scheduler, priors: path_priors(paths), ..Default::default() },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// One bulk message from the server over `paths`; `outage` takes path 1 down (both
/// directions) from that time on.
fn bulk(scheduler: PathSchedulerKind, paths: &[LinkParams], outage_ns: Option<u64>) -> Simulator {
    let (mut net, ends) = multipath(1, paths);
    if let Some(t) = outage_ns {
        for l in net.links.iter_mut().filter(|l| l.name.contains(".1")) {
            l.set_outage(t, u64::MAX);
        }
    }
    let cfg = quic(scheduler, paths, ControllerKind::Cubic);
    let mut sim = Simulator::new(net, 0);
    sim.set_packet_trace(true);
    let bulk = AppSpec::Messages(vec![MessageSpec {
        name: "bulk".into(),
        bytes: BULK_BYTES,
        priority: Some(2),
        at_ns: Some(WRITE_AT_NS),
        unreliable: false,
        same_stream_as: None,
    }]);
    sim.add_flow(multipath_flow("bulk", &ends, cfg, AppSpec::Sink, bulk));
    sim.run(120_000 * MS, |_| {});
    sim
}

/// Goodput of the bulk message, Mbps.
fn goodput_mbps(sim: &Simulator) -> f64 {
    let m = &sim.recorder().messages[0];
    let done = m.completed_ns.expect("the bulk message arrives");
    BULK_BYTES as f64 * 8.0 / ((done - m.written_ns.expect("written")) as f64 / 1e9) / 1e6
}

fn schedulers() -> [PathSchedulerKind; 3] {
    [
        PathSchedulerKind::Lrf,
        PathSchedulerKind::SaEcf(Default::default()),
        PathSchedulerKind::PriorityBucket(Default::default()),
    ]
}

#[test]
fn two_equal_paths_carry_close_to_the_sum_of_their_rates() {
    // Two 10 Mbps / 10 ms paths, queues of one bandwidth-delay product (17 packets) and more.
    let paths = [LinkParams::new(10_000_000, 10 * MS, 50), LinkParams::new(10_000_000, 10 * MS, 50)];
    for s in schedulers() {
        let sim = bulk(s, &paths, None);
        let g = goodput_mbps(&sim);
        let [_, server] = sim.flow_path_stats(0);
        assert_eq!(server.len(), 2, "{s:?}: the server knows both paths");
        let data: Vec<u64> = server.iter().map(|p| p.data_bytes_sent).collect();
        let total: u64 = data.iter().sum();
        eprintln!("{}: {g:.2} Mbps, data bytes per path {data:?}", s.name());
        assert!(g >= 0.9 * 20.0, "{s:?}: goodput {g:.2} Mbps is under 90% of the 20 Mbps the two paths carry");
        for (i, d) in data.iter().enumerate() {
            assert!(*d as f64 >= 0.4 * total as f64, "{s:?}: path {i} carried {d} of {total} bytes");
        }
        assert_eq!(sim.stats().repeated_completions, 0);
    }
}

#[test]
fn a_path_that_fails_mid_transfer_loses_no_byte() {
    let paths = [LinkParams::new(10_000_000, 10 * MS, 50), LinkParams::new(10_000_000, 10 * MS, 50)];
    let fail_ns = WRITE_AT_NS + 1_000 * MS;
    for s in schedulers() {
        let sim = bulk(s, &paths, Some(fail_ns));
        // Every byte arrives exactly once: the message completes, once, with its length.
        let m = &sim.recorder().messages[0];
        assert!(m.completed_ns.is_some(), "{s:?}: the message never completed");
        assert_eq!(m.bytes, BULK_BYTES);
        assert_eq!(sim.stats().repeated_completions, 0, "{s:?}");
        let [_, server] = sim.flow_path_stats(0);
        assert!(server[1].failures >= 1, "{s:?}: path 1 was never declared failed");
        // Traffic moves to the live path within a few RTTs: after the failure, data packets
        // (anything bigger than a probe) enter the dead path's server-side link for at most
        // three of its smoothed RTTs: its window fills within one, and the path is declared
        // failed after one PTO (SRTT + 4 RTTVAR + max_ack_delay).
        let dead = sim.network().links.iter().position(|l| l.name == "s.1->c.1").expect("link") as u32;
        let last_data_ns = sim
            .recorder()
            .packets
            .iter()
            .filter(|p| p.link == dead && p.wire_bytes > 200 && p.t_ns >= fail_ns)
            .map(|p| p.t_ns)
            .max()
            .unwrap_or(fail_ns);
        let after_ms = (last_data_ns - fail_ns) as f64 / 1e6;
        // The path's smoothed RTT when it died (no sample came after), queueing included.
        let srtt_ms = server[1].srtt_ns as f64 / 1e6;
        let done_ms = m.completed_ns.unwrap() as f64 / 1e6;
        eprintln!("{}: last data on the dead path {after_ms:.1} ms after the failure (SRTT {srtt_ms:.1} ms); done at {done_ms:.1} ms", s.name());
        assert!(after_ms <= 3.0 * srtt_ms, "{s:?}: data kept going on the dead path for {after_ms:.1} ms");
        // And the live path carries the rest at its rate: 8 MB at 10 Mbps after the failure
        // would take 6.4 s; what was left finishes well within that.
        let done_after_fail_ms = (m.completed_ns.unwrap() - fail_ns) as f64 / 1e6;
        assert!(done_after_fail_ms < 6_400.0, "{s:?}: {done_after_fail_ms:.0} ms after the failure");
    }
}

#[test]
fn the_handshake_takes_the_same_time_with_every_path_scheduler() {
    // Path 0 alone carries the handshake: its duration must not depend on the scheduler (a
    // path scheduler that only names paths with stream data once left the client's Finished
    // to the 25 ms ACK timer).
    let paths = [LinkParams::new(10_000_000, 10 * MS, 50), LinkParams::new(40_000_000, 25 * MS, 200)];
    let done: Vec<u64> = schedulers()
        .into_iter()
        .map(|s| {
            let sim = bulk(s, &paths, None);
            // The server's handshake completes when the client's Finished arrives.
            let server = sim.endpoint(0, true).and_then(|e| e.quic()).expect("a QUIC server");
            server.quic_stats().handshake_done_ns.expect("the handshake completed")
        })
        .collect();
    // One and a half round trips on path 0 (30 ms) plus serialization.
    assert!(done.iter().all(|&t| t == done[0] && t < 35 * MS), "{done:?}");
}
