//! QUIC mode end to end in the simulator: delivery under loss, datagram accounting, and
//! the absence of head-of-line blocking across streams (against TCP mode on the same path).

use proptest::prelude::*;
use triage_sim::experiments::quic::{build, run, QuicSetting};

fn setting(mode: &str, loss: f64, seed: u64) -> QuicSetting {
    QuicSetting {
        mode: mode.into(),
        cc: "newreno".into(),
        rate_bps: 2_000_000,
        owd_ms: 25.0,
        loss,
        seed,
        replay_seed: None,
    }
}

const PAGE_BYTES: u64 = (150 + 60 + 40 + 25 + 8) * 1024;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Under 5% random loss each way every stream byte reaches the application exactly once
    /// and every stream group completes.
    #[test]
    fn streams_deliver_every_byte_once_under_loss(seed in 1u64..10_000, mode in prop::sample::select(vec!["fifo", "rr", "prio"])) {
        let s = setting(mode, 0.05, seed);
        let mut sim = build(&s).unwrap();
        sim.run(600_000_000_000, |_| {});
        let client = sim.endpoint(0, false).unwrap();
        prop_assert_eq!(client.stats().bytes_delivered, PAGE_BYTES);
        for m in sim.recorder().messages.iter().filter(|m| m.from_server) {
            prop_assert!(m.completed_ns.is_some(), "{} incomplete", m.name);
        }
        prop_assert_eq!(client.state(), triage_core::State::Closed);
    }

    /// Datagram chunks are never sent again, and the sender's count of lost chunks equals
    /// the chunks the receiver never got, per message.
    #[test]
    fn datagram_losses_are_counted_exactly(seed in 1u64..10_000, mode in prop::sample::select(vec!["dgall", "dg01"])) {
        let s = setting(mode, 0.05, seed);
        let mut sim = build(&s).unwrap();
        sim.run(600_000_000_000, |_| {});
        let client = sim.endpoint(0, false).unwrap().quic().unwrap();
        let server = sim.endpoint(0, true).unwrap().quic().unwrap();
        let objects = client.datagram_objects();
        for (id, chunks, acked, lost) in server.datagram_fates() {
            prop_assert_eq!(acked + lost, chunks, "message {} has chunks of unknown fate", id);
            let missing = objects.iter().find(|p| p.msg_id == id).map_or(chunks, |p| p.chunks_missing());
            prop_assert_eq!(lost, missing, "message {}", id);
        }
        prop_assert_eq!(server.quic_stats().datagrams_sent, server.quic_stats().datagrams_acked + server.quic_stats().datagrams_lost);
        let r = run(&s).unwrap();
        for (_, g) in r.groups.iter().filter(|(_, g)| g.datagram) {
            prop_assert!(g.lost <= g.chunks);
        }
    }
}

/// qlog: both ends of a lossy connection write traces the reader takes back unchanged, with
/// one packet_sent per packet sent and one packet_lost per packet declared lost.
#[test]
fn qlog_traces_account_for_every_packet() {
    use triage_core::qlog::EventData;
    let s = setting("rr", 0.05, 7);
    let mut sim = triage_sim::experiments::quic::build_with_qlog(&s, true).unwrap();
    sim.run(600_000_000_000, |_| {});
    for server in [false, true] {
        let q = sim.endpoint(0, server).unwrap().quic().unwrap();
        let trace = q.qlog_trace().expect("qlog on");
        let mut buf = Vec::new();
        triage_sim::qlog::write(trace, &mut buf).unwrap();
        assert_eq!(buf[0], 0x1e, "JSON-SEQ records start with RS");
        let back = triage_sim::qlog::read(&buf[..]).unwrap();
        assert_eq!(&back, trace);
        let count = |f: fn(&EventData) -> bool| trace.events.iter().filter(|e| f(&e.data)).count() as u64;
        let sent: u64 = q.quic_stats().packets_sent.iter().sum();
        assert_eq!(count(|d| matches!(d, EventData::PacketSent(_))), sent);
        assert_eq!(count(|d| matches!(d, EventData::PacketLost { .. })), q.quic_stats().packets_lost);
        assert!(count(|d| matches!(d, EventData::MetricsUpdated(_))) > 0);
        if server {
            assert!(q.quic_stats().packets_lost > 0, "seed 7 loses packets");
        }
    }
}

/// The 5%-loss sweep of the README (CUBIC, fifo and prio, 30 seeds at 2/25 and 10/10) ends
/// with every connection closed. A HANDSHAKE_DONE held for data once left a deadline in the
/// past that the simulator served forever at the same instant.
#[test]
fn lossy_sweep_terminates_and_closes() {
    for (rate_bps, owd_ms) in [(2_000_000, 25.0), (10_000_000, 10.0)] {
        for mode in ["fifo", "prio"] {
            for seed in 1..=30 {
                let s = QuicSetting {
                    mode: mode.into(),
                    cc: "cubic".into(),
                    rate_bps,
                    owd_ms,
                    loss: 0.05,
                    seed,
                    replay_seed: None,
                };
                let mut sim = build(&s).unwrap();
                sim.run(600_000_000_000, |_| {});
                for server in [false, true] {
                    assert_eq!(sim.endpoint(0, server).unwrap().state(), triage_core::State::Closed, "{s:?}");
                }
                assert!(sim.stats().events < 2_000_000, "{s:?}: {} events", sim.stats().events);
            }
        }
    }
}

/// Messages labelled with one `stream` travel on one stream in write order: behind a lost
/// packet of the first, the second waits; a message on a stream of its own does not.
#[test]
fn scenario_stream_labels_share_a_stream_in_order() {
    let text = r#"
name = "shared-stream"
seed = 3
[transport]
mode = "quic"
scheduler = "rr"
[topology]
kind = "dumbbell"
bottleneck = { rate = "5Mbps", delay = "20ms", loss = { kind = "bernoulli", loss_prob = 0.05 } }
access = { rate = "100Mbps", delay = "0ms" }
[[flows]]
name = "f"
client = "c0"
server = "s0"
server_app = { kind = "messages", messages = [
  { name = "a1", size = "40KB", stream = "a" },
  { name = "b", size = "40KB" },
  { name = "a2", size = "2KB", stream = "a" },
] }
"#;
    let mut done = 0;
    for seed in 1..=20u64 {
        let t = text.replace("seed = 3", &format!("seed = {seed}"));
        let s = triage_sim::scenario::Scenario::parse(&t, "s.toml").unwrap();
        let mut b = s.build("s.toml", None).unwrap();
        b.sim.run(b.stop_ns, |_| {});
        let r = triage_sim::report::RunReport::new(&s.name, s.seed, &b.sim);
        let at = |n: &str| r.messages.iter().find(|m| m.name == n).unwrap().completed_ms.unwrap();
        // a2 is written last but would finish first on a stream of its own (2 KB against 40).
        assert!(at("a2") >= at("a1"), "seed {seed}: a2 {} before a1 {}", at("a2"), at("a1"));
        done += 1;
    }
    assert_eq!(done, 20);
    // Without the label a2 finishes long before a1 (round robin gives it a full share).
    let t = text.replace(", stream = \"a\"", "");
    let s = triage_sim::scenario::Scenario::parse(&t, "s.toml").unwrap();
    let mut b = s.build("s.toml", None).unwrap();
    b.sim.run(b.stop_ns, |_| {});
    let r = triage_sim::report::RunReport::new(&s.name, s.seed, &b.sim);
    let at = |n: &str| r.messages.iter().find(|m| m.name == n).unwrap().completed_ms.unwrap();
    assert!(at("a2") < at("a1") / 2.0, "a2 {} a1 {}", at("a2"), at("a1"));
}
