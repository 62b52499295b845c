//! Scenario syntax for queue kinds and ECN transports: the eecn-dumbbell file runs, and
//! bad input gives one error naming the field.

use triage_sim::scenario::Scenario;

mod common;
use common::repo;

fn build_err(text: &str) -> String {
    match Scenario::parse(text, "t.toml") {
        Err(e) => e.to_string(),
        Ok(s) => s.build("t.toml", None).err().map(|e| e.to_string()).unwrap_or_default(),
    }
}

const BASE: &str = r#"
name = "t"
[transport]
cc = "eecn"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "1ms", queue = QUEUE }
access = { rate = "100Mbps", delay = "0ms" }
[[flows]]
name = "f"
client = "s0"
server = "c0"
client_app = { kind = "bulk", size = "100KB" }
"#;

#[test]
fn eecn_dumbbell_file_runs_red() {
    let path = repo().join("scenarios/eecn-dumbbell.toml");
    let s = Scenario::from_file(&path).unwrap();
    let mut b = s.build("eecn-dumbbell.toml", None).unwrap();
    b.sim.run(b.stop_ns, |_| {});
    assert!(b.sim.flow_results().iter().all(|f| f.completed_ns.is_some()));
    let q = b.sim.network().links[0].queue().stats();
    assert!(q.dropped_packets > 0 && q.marked_packets == 0, "RED drops, ECN off");
}

#[test]
fn every_queue_kind_parses_and_runs() {
    for q in [
        "{ packets = 50 }",
        r#"{ kind = "red", packets = 100, min_th = 30, max_th = 60, ecn = true }"#,
        r#"{ kind = "eecn", packets = 100, th1 = 0.3, th2 = 0.5, horizon = "100ms" }"#,
        r#"{ kind = "vcp", packets = 100, t_rho = "200ms" }"#,
    ] {
        let text = BASE.replace("QUEUE", q);
        let s = Scenario::parse(&text, "t.toml").unwrap();
        let mut b = s.build("t.toml", None).unwrap_or_else(|e| panic!("{q}: {e}"));
        b.sim.run(b.stop_ns, |_| {});
        assert!(b.sim.flow_results()[0].completed_ns.is_some(), "{q}");
    }
}

#[test]
fn bad_queue_and_transport_input_names_the_field() {
    let cases = [
        (r#"{ kind = "red", packets = 100, th1 = 0.3 }"#, "topology.bottleneck.queue.th1"),
        (r#"{ kind = "red", packets = 100, min_th = 70, max_th = 60 }"#, "topology.bottleneck.queue"),
        (r#"{ kind = "eecn", packets = 100, th1 = 0.6, th2 = 0.5 }"#, "th1"),
        (r#"{ kind = "eecn", bytes = "150KB" }"#, "topology.bottleneck.queue.bytes"),
        (r#"{ kind = "codel" }"#, "expected one of `droptail`, `red`, `eecn`, `vcp`"),
        ("{ packets = 0 }", "topology.bottleneck.queue"),
    ];
    for (q, field) in cases {
        let e = build_err(&BASE.replace("QUEUE", q));
        assert!(e.contains(field), "{q}: {e}");
    }
    let e = build_err(
        &BASE.replace("QUEUE", "{ packets = 10 }").replace("cc = \"eecn\"", "cc = \"eecn\"\neecn = { d = 1 }"),
    );
    assert!(e.contains("transport.eecn") && e.contains("d:"), "{e}");
    let e = build_err(&BASE.replace("QUEUE", "{ packets = 10 }").replace("cc = \"eecn\"", "ecn = \"l4s\""));
    assert!(e.contains("ecn"), "{e}");
}
