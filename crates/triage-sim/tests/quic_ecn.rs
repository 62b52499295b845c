//! `transport.ecn` in QUIC mode: classic ECN and EECN mark and react there too (RFC 9000
//! §13.4's counts), where the setting was once silently ignored; VCP, whose load codes need
//! TCP's ECE/CWR flags, is refused with the field named.

use triage_sim::scenario::Scenario;

fn text(transport: &str, queue: &str) -> String {
    format!(
        r#"
name = "t"
seed = 1
stop = "30s"
[transport]
mode = "quic"
{transport}
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ rate = "100Mbps", delay = "1ms", queue = {{ {queue} }} }}
access = {{ rate = "1Gbps", delay = "100us", queue = {{ packets = 100 }} }}
[[flows]]
name = "a"
client = "s0"
server = "c0"
client_app = {{ kind = "bulk", size = "20MB" }}
[[flows]]
name = "b"
client = "s1"
server = "c1"
client_app = {{ kind = "bulk", size = "20MB" }}
"#
    )
}

/// (drops, marks at the bottleneck, congestion events of both senders) of one run.
fn run(transport: &str, queue: &str) -> (u64, u64, u64) {
    let s = Scenario::parse(&text(transport, queue), "t.toml").unwrap();
    let b = s.build("t.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let bottleneck = b.sim.network().links.iter().position(|l| l.name == "r1->r2").unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    assert!(sim.flow_results().iter().all(|f| f.completed_ns.is_some()), "{transport}: both transfers complete");
    let st = sim.network().links[bottleneck].queue().stats();
    let events =
        (0..2).map(|f| sim.endpoint(f, false).and_then(|e| e.quic()).unwrap().quic_stats().congestion_events).sum();
    (st.dropped_packets, st.marked_packets, events)
}

#[test]
fn classic_ecn_and_eecn_mark_and_react_in_quic_mode() {
    let red = "kind = \"red\", ecn = true, packets = 100, min_th = 30, max_th = 60";
    // Off: RED drops what it would mark, and the senders react to the losses only.
    let (drops_off, marks_off, _) = run("cc = \"newreno\"", red);
    assert_eq!(marks_off, 0);
    assert!(drops_off > 0);
    // Classic: ECT(0) datagrams are marked instead of dropped, and the senders react to CE.
    let (drops_ecn, marks_ecn, events_ecn) = run("cc = \"newreno\"\necn = \"classic\"", red);
    assert!(marks_ecn > 0 && drops_ecn < drops_off, "classic: {drops_ecn} drops, {marks_ecn} marks");
    assert!(events_ecn >= 1);
    // EECN (the controller's own ECN) through the EECN router: two levels, no drop.
    let (drops_eecn, marks_eecn, events_eecn) = run("cc = \"eecn\"", "kind = \"eecn\", packets = 100");
    assert!(marks_eecn > 0 && events_eecn > 0 && drops_eecn == 0, "eecn: {drops_eecn} drops, {marks_eecn} marks");
}

#[test]
fn vcp_is_refused_in_quic_mode_naming_the_field() {
    for (transport, field) in [("cc = \"vcp\"", "transport.cc"), ("cc = \"newreno\"\necn = \"vcp\"", "transport.ecn")] {
        let e = Scenario::parse(&text(transport, "packets = 100"), "bad.toml")
            .and_then(|s| s.build("bad.toml", None).map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(field) && e.contains("no QUIC form") && e.contains("bad.toml"), "{e}");
    }
}
