//! The scenario key `transport.linux_ack` (Linux's receiver ACK policy, TCP mode): off by
//! default, on with `linux_ack = true`, an error in QUIC mode; and what it changes: the
//! receiver (here the server end, `c0`, taking a bulk transfer) acknowledges more of the
//! segments at once, its first ones among them.

mod common;

use triage_sim::scenario::Scenario;

fn text(transport: &str) -> String {
    common::bulk_dumbbell_text(1, transport, r#"rate = "10Mbps", delay = "10ms""#, "2896000B")
}

/// (the receiver's ACKs, the data segments it took, whether the policy ran, completion ms).
fn run(transport: &str) -> (u64, u64, bool, f64) {
    let sim = common::run_text(&text(transport));
    let receiver = sim.connection(0, true).unwrap();
    let on = receiver.config().linux_ack;
    let st = receiver.stats().clone();
    let done = sim.flow_results()[0].completed_ns.expect("the transfer completes") as f64 / 1e6;
    (st.pure_acks_sent, st.packets_received, on, done)
}

#[test]
fn linux_acks_are_off_by_default_on_when_asked_and_refused_in_quic_mode() {
    let (acks_off, segs_off, on_off, done_off) = run("");
    let (acks_on, segs_on, on_on, done_on) = run("linux_ack = true");
    assert!(!on_off && on_on);
    // 2,000 segments without loss: every second one acknowledged (RFC 5681), about 1,000
    // ACKs. With Linux's policy the first 22 go one by one (16 quick ACKs and six growth
    // steps of the threshold, 65,160 -> 80,896 bytes): 11 ACKs more. No more than that here:
    // the receiver's RTT is its handshake's (20 ms), in which at most 25,000 bytes arrive at
    // 10 Mbps, and autotuning raises the clamp only for more than half of it (80,896 bytes);
    // Linux measures the RTT from timestamp echoes, the queue included, and would grow it
    // (the limit said in `linux_ack.rs` and the README).
    assert!(segs_off >= 2_000 && segs_on >= 2_000, "{segs_off} {segs_on}");
    assert!((acks_off as f64) < 0.52 * segs_off as f64, "{acks_off} ACKs for {segs_off} packets");
    assert_eq!(acks_on, acks_off + 11);
    // More ACKs, no slower.
    assert!(done_on <= done_off, "{done_on} ms against {done_off} ms");
    let e = Scenario::parse(&text("mode = \"quic\"\nlinux_ack = true"), "bad.toml")
        .and_then(|s| s.build("bad.toml", None).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("transport.linux_ack") && e.contains("TCP mode"), "{e}");
}
