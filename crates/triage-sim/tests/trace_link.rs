//! Links whose rate follows a Mahimahi trace.

mod common;

use common::*;
use triage_core::wire::Packet;
use triage_sim::link::{Link, RateModel};
use triage_sim::loss::{LossModel, LossProcess};
use triage_sim::queue::{DropTail, Limit, SimPacket};
use triage_sim::report::RunReport;
use triage_sim::rng::component_rng;
use triage_sim::scenario::Scenario;
use triage_sim::trace::{MahimahiTrace, TraceCursor};

fn trace_link(text: &str) -> Link {
    let t = MahimahiTrace::parse(text).unwrap();
    Link::new(
        "t".into(),
        0,
        1,
        RateModel::trace(TraceCursor::new(t)),
        0,
        LossProcess::new(LossModel::None, component_rng(1, "t")),
        DropTail::new(Limit::Packets(100)).into(),
    )
}

fn pkt(payload: u32) -> SimPacket {
    SimPacket::new(Packet { payload_bytes: payload, ..Default::default() }, 0)
}

/// Drains the link, returning when each packet left.
fn departures(link: &mut Link, first: Option<u64>) -> Vec<u64> {
    let mut out = Vec::new();
    let mut next = first;
    while let Some(t) = next {
        out.push(t);
        next = link.on_tx_done(t).1;
    }
    out
}

#[test]
fn each_opportunity_carries_one_mtu_and_small_packets_share_one() {
    // Opportunities at 1, 1, 3, 7 ms; the trace loops every 7 ms.
    let mut l = trace_link("1\n1\n3\n7\n");
    let first = l.enqueue(0, pkt(1448)).tx_done_ns();
    for _ in 0..4 {
        l.enqueue(0, pkt(1448));
    }
    let ms = 1_000_000;
    assert_eq!(
        departures(&mut l, first),
        vec![ms, ms, 3 * ms, 7 * ms, 8 * ms],
        "full packets: one per opportunity, looping"
    );
    // Thirty 52-byte ACKs: 1500 / 52 = 28 fit in one opportunity, the rest take the next.
    let mut l = trace_link("1\n1\n3\n7\n");
    let first = l.enqueue(0, pkt(0)).tx_done_ns();
    for _ in 0..29 {
        l.enqueue(0, pkt(0));
    }
    let d = departures(&mut l, first);
    assert_eq!(d.iter().filter(|&&t| t == ms).count(), 30, "the two opportunities at 1 ms carry all thirty");
}

#[test]
fn bulk_flow_over_a_cellular_trace_gets_the_traces_capacity() {
    assert!(repo().join("../shared/data/traces").is_dir(), "the shared data folder is missing");
    let text = r#"
name = "lte"
seed = 1
stop = "120s"
[transport]
cc = "bbr"
min_rto = "200ms"
[measure]
interval = "0ms"
[topology]
kind = "dumbbell"
bottleneck = { delay = "20ms", trace = "../../shared/data/traces/Verizon-LTE-short.down", reverse_trace = "../../shared/data/traces/Verizon-LTE-short.up", queue = { packets = 200 } }
access = { rate = "1Gbps", delay = "0ms" }
[[flows]]
name = "bulk"
client = "c0"
server = "s0"
server_app = { kind = "bulk", size = "20MB" }
"#;
    let s = Scenario::parse(text, "lte.toml").unwrap();
    let b = s.build("lte.toml", Some(&repo().join("scenarios"))).unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    let r = RunReport::new(&s.name, s.seed, &sim);
    let goodput = r.flows[0].goodput_mbps.expect("complete");
    let trace = MahimahiTrace::from_file(&repo().join("../shared/data/traces/Verizon-LTE-short.down")).unwrap();
    // What the trace could carry while the flow ran: one 1448-byte payload per delivery
    // opportunity between the flow's start and its completion.
    let fct_ms = r.flows[0].fct_ms.unwrap();
    assert!(fct_ms < trace.period_ms() as f64, "the transfer fits in one loop of the trace");
    let opportunities = trace.opportunities_ms().iter().filter(|&&t| (t as f64) <= fct_ms).count();
    let capacity = opportunities as f64 * 1448.0 * 8.0 / (fct_ms / 1e3) / 1e6;
    assert!(
        goodput > 0.80 * capacity && goodput <= capacity * 1.001,
        "goodput {goodput:.3} Mbps vs the trace's payload capacity over the transfer {capacity:.3} Mbps"
    );
}
