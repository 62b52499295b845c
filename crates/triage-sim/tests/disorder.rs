//! Links that reorder, duplicate and lose packets (issue 10: "links that only keep order"):
//! whatever the path does, the application receives every message exactly once and, on one
//! byte stream (TCP) or one QUIC stream, in write order.

use proptest::prelude::*;
use triage_sim::scenario::Scenario;

/// A scenario: one flow over a 10 Mbps / 40 ms dumbbell whose bottleneck jitters (uniform or
/// exponential), duplicates and loses packets in both directions; the server writes
/// `sizes` on one stream.
fn scenario(quic: bool, seed: u64, jitter: &str, dup: f64, loss: f64, sizes: &[u64]) -> String {
    let messages: Vec<String> =
        sizes.iter().enumerate().map(|(i, s)| format!("{{ name = \"m{i}\", size = {s}, stream = \"one\" }}")).collect();
    format!(
        r#"
name = "disorder"
seed = {seed}
stop = "3000s"
[transport]
mode = "{mode}"
min_rto = "200ms"
[measure]
interval = "0ms"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", jitter = {jitter}, duplicate = {dup}, loss = {{ kind = "bernoulli", loss_prob = {loss} }} }}
access = {{ rate = "100Mbps", delay = "0ms" }}
[[flows]]
name = "f"
client = "c0"
server = "s0"
server_app = {{ kind = "messages", messages = [{messages}] }}
"#,
        mode = if quic { "quic" } else { "tcp" },
        messages = messages.join(", "),
    )
}

struct Outcome {
    /// When the run ended (all connections closed), or the stop time.
    end_ns: u64,
    events: u64,
    completed: Vec<Option<u64>>,
    repeated: u64,
    delivered_bytes: u64,
    reordered: u64,
    duplicated: u64,
}

fn run(text: &str) -> Outcome {
    let b = Scenario::parse(text, "disorder.toml").unwrap().build("disorder.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    let client = sim.endpoint(0, false).expect("client");
    let links = &sim.network().links;
    Outcome {
        end_ns: sim.now_ns(),
        events: sim.stats().events,
        completed: sim.recorder().messages.iter().map(|m| m.completed_ns).collect(),
        repeated: sim.stats().repeated_completions,
        delivered_bytes: client.stats().bytes_delivered,
        reordered: links.iter().map(|l| l.stats().reordered_packets).sum(),
        duplicated: links.iter().map(|l| l.stats().duplicated_packets).sum(),
    }
}

fn jitter() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..30).prop_map(|ms| format!("{{ kind = \"uniform\", max = \"{ms}ms\" }}")),
        (1u64..10).prop_map(|ms| format!("{{ kind = \"exponential\", mean = \"{ms}ms\" }}")),
    ]
}

#[test]
fn a_disordering_link_reorders_and_duplicates() {
    let text = scenario(false, 1, "{ kind = \"uniform\", max = \"15ms\" }", 0.05, 0.0, &[300_000]);
    let o = run(&text);
    assert!(o.reordered > 50 && o.duplicated > 10, "reordered {}, duplicated {}", o.reordered, o.duplicated);
    assert_eq!(o.delivered_bytes, 300_000);
    // Without jitter and duplication the same link keeps order.
    let o = run(&scenario(false, 1, "{ kind = \"uniform\", max = \"0ms\" }", 0.0, 0.0, &[300_000]));
    assert_eq!((o.reordered, o.duplicated), (0, 0));
}

/// Found by the property below: two QUIC ends that both sent CONNECTION_CLOSE answered each
/// other's forever, and duplication multiplied the exchange (735 million events before the
/// 3,000 s stop). RFC 9000 §10.2: the closing end answers less and less, the draining one not
/// at all.
#[test]
fn closing_quic_ends_stop_answering_each_other() {
    let jitter = "{ kind = \"uniform\", max = \"25ms\" }";
    let o = run(&scenario(true, 772, jitter, 0.022, 0.015, &[20242, 68140, 47538, 1389]));
    assert!(o.completed.iter().all(Option::is_some));
    assert!(o.events < 10_000, "{} events", o.events);
    assert!(o.end_ns < 10_000_000_000, "ended at {} ms", o.end_ns / 1_000_000);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Reordering, duplication and loss together: every message completes exactly once, in
    /// write order, and the application holds exactly the bytes written (TCP and QUIC).
    #[test]
    fn exactly_once_and_in_order_under_reordering_duplication_and_loss(
        quic in any::<bool>(),
        seed in 0u64..1000,
        jitter in jitter(),
        dup in 0.0f64..0.15,
        loss in 0.0f64..0.1,
        sizes in prop::collection::vec(1u64..80_000, 1..6),
    ) {
        let o = run(&scenario(quic, seed, &jitter, dup, loss, &sizes));
        prop_assert_eq!(o.repeated, 0, "a message completed twice");
        prop_assert!(o.completed.iter().all(Option::is_some), "every message completes: {:?}", o.completed);
        let done: Vec<u64> = o.completed.iter().flatten().copied().collect();
        prop_assert!(done.windows(2).all(|w| w[0] <= w[1]), "write order: {:?}", done);
        prop_assert_eq!(o.delivered_bytes, sizes.iter().sum::<u64>(), "each byte once");
        let last = done.last().copied().unwrap_or(0);
        prop_assert!(o.end_ns < last + 120_000_000_000, "both ends close: ran to {} ms, done at {} ms", o.end_ns / 1_000_000, last / 1_000_000);
    }
}
