//! The flows of a run's report: `delivered_bytes` for every flow, and a goodput also for a
//! flow still open when the run stopped (long-lived flows, as a fairness experiment runs
//! them): the bytes delivered over the time from its start to the end of the run.

mod common;

use triage_sim::report::RunReport;

/// Two bulk senders from the start and a third from 1.9 s, over a 10 Mbps bottleneck, run
/// until `until_ns` (the scenario's stop at most).
fn long_flows(stop: &str, size: &str, until_ns: u64) -> RunReport {
    let flow = |i: usize, start: &str| {
        format!(
            "[[flows]]\nname = \"f{i}\"\nclient = \"s{i}\"\nserver = \"c{i}\"\nstart = \"{start}\"\n\
             client_app = {{ kind = \"bulk\", size = \"{size}\" }}\n"
        )
    };
    let text = format!(
        r#"
name = "long"
seed = 1
stop = "{stop}"
[transport]
min_rto = "200ms"
[topology]
kind = "dumbbell"
pairs = 3
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {{ packets = 100 }} }}
access = {{ rate = "1Gbps", delay = "0ms" }}
{}{}{}"#,
        flow(0, "0ms"),
        flow(1, "5ms"),
        flow(2, "1900ms"),
    );
    let b = triage_sim::scenario::Scenario::parse(&text, "t.toml").unwrap().build("t.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(until_ns.min(b.stop_ns), |_| {});
    RunReport::new("long", 1, &sim)
}

/// The goodput the report gives for `bytes` over `ns` (kbps rounded, in Mbps).
fn mbps(bytes: u64, ns: u64) -> f64 {
    ((bytes as f64 * 8.0 / (ns as f64 / 1e9)) / 1e3).round() / 1e3
}

#[test]
fn an_open_flow_has_its_delivered_bytes_and_a_goodput_over_the_time_it_ran() {
    // Run to 1.5 s of the scenario's 2 s, as a caller of the library may: the third flow
    // has not started.
    let r = long_flows("2s", "1GB", 1_500_000_000);
    assert_eq!(r.end_ms, 1500.0);
    let (f0, f1, f2) = (&r.flows[0], &r.flows[1], &r.flows[2]);
    assert!(f0.completed_ms.is_none() && f1.completed_ms.is_none());
    assert_eq!((f0.fct_ms, f1.fct_ms), (None, None));
    // What each receiving end took in order: the server end's counter (the client end
    // receives no application bytes from a bulk upload).
    for (i, f) in [f0, f1].into_iter().enumerate() {
        assert_eq!(f.bytes, 1_000_000_000);
        assert!(f.delivered_bytes > 0 && f.delivered_bytes < f.bytes);
        assert_eq!(f.delivered_bytes % 1448, 0, "whole segments: {}", f.delivered_bytes);
        let start_ns = [0, 5_000_000][i];
        assert_eq!(f.goodput_mbps, Some(mbps(f.delivered_bytes, 1_500_000_000 - start_ns)), "{}", f.name);
    }
    // Together they cannot beat the bottleneck: 10 Mbps of 1,500-byte packets carrying
    // 1,448 bytes each (timestamps off) for 1.5 s is 1,810,000 bytes; after the handshakes
    // and slow start they reach most of it.
    let total = f0.delivered_bytes + f1.delivered_bytes;
    assert!(total <= 1_810_000 && total > 1_500_000, "{total}");
    // The flow that had not started when the run stopped: nothing delivered, no goodput.
    assert_eq!((f2.delivered_bytes, f2.goodput_mbps), (0, None));
}

#[test]
fn a_complete_flow_delivered_its_bytes_and_keeps_its_goodput_over_its_completion_time() {
    let r = long_flows("60s", "500000B", u64::MAX);
    for f in &r.flows {
        let fct_ms = f.fct_ms.expect("complete");
        assert_eq!(f.delivered_bytes, 500_000);
        assert_eq!(f.goodput_mbps, Some(mbps(500_000, (fct_ms * 1e6).round() as u64)));
    }
}
