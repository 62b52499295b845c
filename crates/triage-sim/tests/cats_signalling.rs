//! CATS §II-D-2 in the simulator: DSCP by priority and the option, visible in the packet
//! trace; Save-Data discards in the run report.

mod common;

use common::*;
use triage_sim::report::RunReport;
use triage_sim::scenario::Scenario;

fn cats_with(extra: &str) -> String {
    let base = std::fs::read_to_string(repo().join("scenarios/cats.toml")).unwrap();
    base.replace("priority_option = true", &format!("priority_option = true\n{extra}"))
        .replace("interval = \"10ms\"", "interval = \"10ms\"\npacket_trace = true")
}

#[test]
fn dscp_follows_priority_and_shows_in_the_packet_trace() {
    let s = Scenario::parse(&cats_with("dscp = [46, 34, 26, 18, 8]"), "t.toml").unwrap();
    let b = s.build("t.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    let data: Vec<_> = sim.recorder().packets.iter().filter(|p| p.payload_bytes > 0 && p.event == "enqueue").collect();
    assert!(!data.is_empty());
    let map = [46u8, 34, 26, 18, 8];
    for p in &data {
        let prio = p.priority_option.expect("every data segment carries the option");
        assert_eq!(p.dscp, map[prio as usize], "{p:?}");
        assert_eq!(p.wire_bytes, p.payload_bytes + 56);
    }
    // ACKs carry neither.
    assert!(sim
        .recorder()
        .packets
        .iter()
        .filter(|p| p.payload_bytes == 0)
        .all(|p| p.dscp == 0 && p.priority_option.is_none()));
}

#[test]
fn save_data_in_a_scenario_reports_each_discarded_message() {
    let s = Scenario::parse(&cats_with("save_data = 2"), "t.toml").unwrap();
    let b = s.build("t.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    let r = RunReport::new(&s.name, s.seed, &sim);
    let discarded: Vec<(&str, Option<u64>)> = r.messages.iter().map(|m| (m.name.as_str(), m.discarded_bytes)).collect();
    assert_eq!(discarded, [("P4", Some(153_600)), ("P3", Some(61_440)), ("P2", None), ("P1", None), ("P0", None)]);
    assert!(r.messages[..2].iter().all(|m| m.completed_ms.is_none()));
    assert!(r.messages[2..].iter().all(|m| m.completed_ms.is_some()));
    assert!(r.flows[0].completed_ms.is_some(), "a flow whose remaining messages were discarded completes");
}
