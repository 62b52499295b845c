use triage_core::cc::ControllerKind;
use triage_core::ConnectionConfig;
use triage_sim::app::{AppSpec, MessageSpec};
use triage_sim::topology::{dumbbell, LinkParams};
use triage_sim::{FlowSpec, Simulator};

const MS: u64 = 1_000_000;

#[test]
fn quick() {
    for cc in [ControllerKind::NewReno, ControllerKind::Bbr] {
    for (mbps, owd) in [(2u64, 25u64), (5, 50), (10, 10), (1, 150), (20, 20)] {
        let (net, s, c) = dumbbell(1, 1, &LinkParams::new(100_000_000, 0, 1000), &LinkParams::new(mbps * 1_000_000, owd * MS, 100));
        let mut sim = Simulator::new(net, 10 * MS);
        let cfg = ConnectionConfig { controller: cc.clone(), ..Default::default() };
        let msgs = [("P4", 150u64), ("P3", 60), ("P2", 40), ("P1", 25), ("P0", 8)]
            .iter()
            .map(|(n, k)| MessageSpec { name: n.to_string(), bytes: k * 1024, priority: n[1..].parse().unwrap(), at_ns: None })
            .collect();
        sim.add_flow(FlowSpec {
            name: "page".into(),
            client: c[0],
            server: s[0],
            start_ns: 0,
            client_transport: cfg.clone(),
            server_transport: cfg,
            client_app: AppSpec::Sink,
            server_app: AppSpec::Messages(msgs),
        });
        sim.run(20_000 * MS, |_| {});
        let v: Vec<u64> = sim.recorder().messages.iter().map(|m| m.completed_ns.unwrap() / MS).collect();
        println!("{cc:?} {mbps}/{owd}: {v:?} events {}", sim.stats().events);
    }
    }
}
