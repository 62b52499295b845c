//! EECN §5: coexistence with classic ECN and with hosts that do not speak EECN.

use triage_core::cc::ControllerKind;
use triage_core::ecn::EcnMode;
use triage_core::ConnectionConfig;
use triage_sim::app::AppSpec;
use triage_sim::queue::{EecnMarkerConfig, QueueKind, RedConfig};
use triage_sim::topology::{dumbbell, LinkParams};
use triage_sim::{FlowSpec, Simulator};

const MS: u64 = 1_000_000;

fn cfg(kind: ControllerKind) -> ConnectionConfig {
    ConnectionConfig { controller: kind, receive_buffer_bytes: 4 << 20, ..Default::default() }
}

/// Two 5 MB flows s0→c0, s1→c1 over a 20 Mbps / 2 ms bottleneck with `queue`.
fn run(client: ConnectionConfig, server: ConnectionConfig, queue: QueueKind) -> Simulator {
    let bottleneck = LinkParams::new(20_000_000, 2 * MS, 100).with_queue(queue);
    let (net, s, c) = dumbbell(1, 2, &LinkParams::new(1_000_000_000, 100_000, 100), &bottleneck);
    let mut sim = Simulator::new(net, 0);
    for i in 0..2 {
        sim.add_flow(FlowSpec {
            name: format!("f{i}"),
            client: s[i],
            server: c[i],
            start_ns: 0,
            client_transport: client.clone(),
            server_transport: server.clone(),
            client_app: AppSpec::Bulk { bytes: 5_000_000 },
            server_app: AppSpec::Sink,
            extra_paths: Vec::new(),
        });
    }
    sim.run(120_000 * MS, |_| {});
    assert!(sim.flow_results().iter().all(|f| f.completed_ns.is_some()), "every flow completes");
    sim
}

fn bottleneck_stats(sim: &Simulator) -> triage_sim::queue::QueueStats {
    sim.network().links[0].queue().stats().clone()
}

#[test]
fn eecn_sender_facing_a_plain_receiver_falls_back() {
    let sim =
        run(cfg(ControllerKind::Eecn), cfg(ControllerKind::NewReno), QueueKind::Eecn(EecnMarkerConfig::default()));
    let c = sim.connection(0, false).unwrap();
    assert_eq!(c.ecn_mode(), EcnMode::Off);
    let q = bottleneck_stats(&sim);
    assert_eq!(q.marked_packets, 0, "Not-ECT packets are never marked");
    assert!(q.dropped_packets > 0, "without ECN the queue overflows and drops");
    assert_eq!(c.stats().ecn_responses, [0; 4]);
}

#[test]
fn classic_ecn_router_on_an_eecn_path_reads_as_cl2() {
    let red = RedConfig { ecn: true, min_th: 5.0, max_th: 15.0, ..Default::default() };
    let sim = run(cfg(ControllerKind::Eecn), cfg(ControllerKind::Eecn), QueueKind::Red(red));
    let q = bottleneck_stats(&sim);
    assert!(q.marked_packets > 0, "the RED router marks CE");
    let c = sim.connection(0, false).unwrap();
    assert_eq!(c.ecn_mode(), EcnMode::Eecn);
    let r = c.stats().ecn_responses;
    assert!(r[2] > 0 && r[1] == 0, "CE is answered as CL(2), never CL(1): {r:?}");
}

#[test]
fn classic_ecn_flow_through_an_eecn_router_still_works() {
    let sim = run(
        cfg(ControllerKind::NewRenoEcn),
        cfg(ControllerKind::NewRenoEcn),
        QueueKind::Eecn(EecnMarkerConfig::default()),
    );
    let q = bottleneck_stats(&sim);
    assert!(q.marked_packets > 0, "ECT(0) reads as CL(1) and is raised to CE at Th2");
    let c = sim.connection(0, false).unwrap();
    assert_eq!(c.ecn_mode(), EcnMode::Classic);
    assert!(c.stats().ecn_responses[1] > 0, "the classic sender reduces on ECE");
    let d =
        run(cfg(ControllerKind::NewReno), cfg(ControllerKind::NewReno), QueueKind::Eecn(EecnMarkerConfig::default()));
    assert!(q.dropped_packets < bottleneck_stats(&d).dropped_packets, "ECN keeps drops below plain NewReno's");
}
