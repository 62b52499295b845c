//! Shared helpers for the simulator's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use triage_core::cc::ControllerKind;
use triage_core::ConnectionConfig;
use triage_sim::app::{AppSpec, MessageSpec};
use triage_sim::loss::LossModel;
use triage_sim::topology::{one_flow_dumbbell, LinkParams};
use triage_sim::Simulator;

pub const MS: u64 = 1_000_000;

/// The repository root (two levels above this crate).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The CATS page: P4 150 KiB ... P0 8 KiB, written in reverse priority order.
pub fn cats_page() -> Vec<MessageSpec> {
    [("P4", 150u64), ("P3", 60), ("P2", 40), ("P1", 25), ("P0", 8)]
        .iter()
        .map(|(n, k)| MessageSpec {
            name: n.to_string(),
            bytes: k * 1024,
            priority: Some(n[1..].parse().unwrap()),
            at_ns: None,
            unreliable: false,
            same_stream_as: None,
        })
        .collect()
}

/// One flow over a dumbbell: 100 Mbps / 0 ms access, the given bottleneck; the client
/// opens at t=0 and the server writes `app`.
pub fn one_flow(cfg: ConnectionConfig, bottleneck: LinkParams, app: AppSpec, sample_ns: u64) -> Simulator {
    one_flow_dumbbell("flow", cfg, &bottleneck, app, sample_ns)
}

/// Completion times (ms) of the CATS page's groups, P4 first.
pub fn cats_fifo_ms(cc: ControllerKind, mbps: u64, owd_ms: u64) -> Vec<f64> {
    let cfg = ConnectionConfig { controller: cc, ..Default::default() };
    let mut sim = one_flow(cfg, LinkParams::new(mbps * 1_000_000, owd_ms * MS, 100), AppSpec::Messages(cats_page()), 0);
    sim.run(60_000 * MS, |_| {});
    sim.recorder().messages.iter().map(|m| m.completed_ns.expect("complete") as f64 / 1e6).collect()
}

/// A lossy link.
pub fn lossy(mut p: LinkParams, loss: LossModel) -> LinkParams {
    p.loss = loss;
    p
}

/// Runs every variant of `scenarios/FILE` to its stop: (variant name, report) for each.
pub fn run_scenario_file(file: &str) -> Vec<(String, triage_sim::report::RunReport)> {
    let path = repo().join("scenarios").join(file);
    let s = triage_sim::scenario::Scenario::from_file(&path).unwrap();
    s.build_variants(file, path.parent())
        .unwrap()
        .into_iter()
        .map(|(name, b)| {
            let mut sim = b.sim;
            sim.run(b.stop_ns, |_| {});
            (name, triage_sim::report::RunReport::new(&s.name, s.seed, &sim))
        })
        .collect()
}

/// Loads the page recorded in `har` (HAR or DevTools text) once, over a 1 Gbps dumbbell with
/// a 100 ms RTT and 10 Gbps access links, NewReno, and returns the report. `transport`: more
/// lines of `[transport]`; `flow`: more lines of the `[[flows]]` table; `browser`: the lines of
/// `[flows.browser]` (None: no table).
pub fn run_page_har(har: &str, transport: &str, flow: &str, browser: Option<&str>) -> triage_sim::report::RunReport {
    // A directory per call: the tests run in parallel.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("triage-page-har-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("page.har"), har).unwrap();
    let table = browser.map(|b| format!("[flows.browser]\n{b}\n")).unwrap_or_default();
    let text = format!(
        r#"name = "page"
seed = 1
stop = "60s"
[transport]
cc = "newreno"
{transport}
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "1Gbps", delay = "50ms" }}
access = {{ rate = "10Gbps", delay = "0ms" }}
[measure]
interval = "0ms"
[[flows]]
name = "page"
client = "c0"
server = "s0"
page = "page.har"
{flow}
{table}"#
    );
    let s = triage_sim::scenario::Scenario::parse(&text, "page.toml").unwrap();
    let mut b = s.build("page.toml", Some(&dir)).unwrap();
    b.sim.run(b.stop_ns, |_| {});
    let _ = std::fs::remove_dir_all(&dir);
    triage_sim::report::RunReport::new(&s.name, s.seed, &b.sim)
}

/// A scenario of one bulk transfer over a dumbbell (access links 1 Gbps / 0 ms, a
/// 1000-packet bottleneck queue), the sender `s0` sending `size` to `c0`, with a 200 ms
/// minimum RTO and a 40 ms delayed-ACK timer as Linux's. `transport`: more lines of
/// `[transport]`; `bottleneck`: the bottleneck's other fields (rate, delay, loss).
pub fn bulk_dumbbell_text(seed: u64, transport: &str, bottleneck: &str, size: &str) -> String {
    format!(
        r#"
name = "t"
seed = {seed}
stop = "60s"
[transport]
min_rto = "200ms"
delayed_ack_timeout = "40ms"
{transport}
[topology]
kind = "dumbbell"
bottleneck = {{ {bottleneck}, queue = {{ packets = 1000 }} }}
access = {{ rate = "1Gbps", delay = "0ms" }}
[[flows]]
name = "f"
client = "s0"
server = "c0"
client_app = {{ kind = "bulk", size = "{size}" }}
"#
    )
}

/// Builds a scenario's text (one variant) and runs it to its stop.
pub fn run_text(text: &str) -> Simulator {
    let s = triage_sim::scenario::Scenario::parse(text, "t.toml").unwrap();
    let b = s.build("t.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    sim
}
