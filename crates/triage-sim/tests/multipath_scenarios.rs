//! Multipath in scenario files: `[[paths]]`, presets, `transport.multipath`, the per-path
//! report, the example `scenarios/multipath-wifi-lte.toml` and the README's snippet, and the
//! errors, each naming its field and pointing at its line.
//!
//! The LTE presets read ../shared/data/traces: these tests fail, never skip, without it.

mod common;

use common::*;
use triage_core::quic::{PathPrior, PathSchedulerKind};
use triage_sim::report::RunReport;
use triage_sim::scenario::Scenario;
use triage_sim::trace::MahimahiTrace;

fn shared_traces() -> std::path::PathBuf {
    let dir = repo().join("../shared/data/traces");
    assert!(dir.is_dir(), "the shared data folder is missing: expected Mahimahi traces in {}", dir.display());
    dir
}

/// Runs every variant of `text` (as a file in `scenarios/`); returns each variant's name and
/// `--json`-style report text.
fn run_all(text: &str) -> Vec<(String, RunReport)> {
    let s = Scenario::parse(text, "mp.toml").unwrap_or_else(|e| panic!("{e}"));
    let variants = s.build_variants("mp.toml", Some(&repo().join("scenarios"))).unwrap_or_else(|e| panic!("{e}"));
    variants
        .into_iter()
        .map(|(name, b)| {
            let mut sim = b.sim;
            sim.run(b.stop_ns, |_| {});
            (name, RunReport::new(&s.name, s.seed, &sim).with_path_names(&b.path_names))
        })
        .collect()
}

fn example() -> String {
    std::fs::read_to_string(repo().join("scenarios/multipath-wifi-lte.toml")).unwrap()
}

#[test]
fn the_example_runs_every_variant_over_both_paths_deterministically() {
    shared_traces();
    let runs = run_all(&example());
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["priority_bucket", "lrf", "sa_ecf", "wifi_only"]);
    for (name, r) in &runs {
        let f = &r.flows[0];
        let page = f.page.as_ref().expect("a page load");
        assert_eq!((page.delivered, page.objects), (25, 25), "{name}: every object arrives");
        assert!(f.completed_ms.is_some(), "{name}");
        let paths = f.paths.as_ref().expect("a multipath flow reports its paths");
        let carried: Vec<u64> = paths.iter().map(|p| p.data_bytes_sent[0]).collect();
        eprintln!(
            "{name}: render {:?} ms, load {:?} ms, server data per path {carried:?}",
            page.first_render_ms, page.plt_ms
        );
        if *name == "wifi_only" {
            assert_eq!(paths.len(), 1, "the single-path scheduler opens no other path");
            assert_eq!(paths[0].name, "wifi");
        } else {
            let names: Vec<&str> = paths.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names, ["wifi", "lte-tmobile"]);
            assert!(carried.iter().all(|&b| b > 0), "{name}: each path carries data: {carried:?}");
        }
        // Every byte of the page went out at least once, over the paths together.
        let objects: u64 = r.messages.iter().filter(|m| m.from == "server").map(|m| m.bytes).sum();
        assert!(carried.iter().sum::<u64>() >= objects, "{name}: {carried:?} < {objects}");
    }
    // The same seed gives byte-identical JSON.
    let again = run_all(&example());
    for ((n, a), (_, b)) in runs.iter().zip(&again) {
        assert_eq!(serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap(), "{n}");
    }
    // The JSON names the per-path fields as the README lists them.
    let json = serde_json::to_value(&runs[0].1).unwrap();
    let p1 = &json["flows"][0]["paths"][1];
    for k in [
        "id",
        "name",
        "packets_sent",
        "bytes_sent",
        "data_bytes_sent",
        "packets_received",
        "packets_lost",
        "pto_count",
        "failures",
        "srtt_ms",
        "cwnd_bytes",
    ] {
        assert!(!p1[k].is_null(), "{k} missing from {p1}");
    }
    assert!(p1["data_bytes_sent"][0].as_u64().unwrap() > 0);
}

/// A single-path QUIC flow reports no `paths`: its JSON is as it was before multipath.
#[test]
fn a_single_path_flow_reports_no_paths() {
    let text = "name = \"t\"\n[transport]\nmode = \"quic\"\n[measure]\ninterval = \"0ms\"\n[topology]\nkind = \"profile\"\nname = \"wpt-lte\"\n[[flows]]\nname = \"f\"\nclient = \"c0\"\nserver = \"s0\"\nserver_app = { kind = \"bulk\", size = \"10KB\" }\n";
    let runs = run_all(text);
    assert!(runs[0].1.flows[0].paths.is_none());
    assert!(!serde_json::to_string(&runs[0].1).unwrap().contains("\"paths\""));
}

/// The README's "Multipath" snippet parses and builds as it is printed.
#[test]
fn the_readme_snippet_builds() {
    shared_traces();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = &readme[readme.find("\n## Multipath\n").expect("a Multipath section")..];
    let start = section.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let text = &section[start..start + section[start..].find("```").unwrap()];
    let s = Scenario::parse(text, "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.paths.len(), 2);
    let b = s.build("README.md", Some(&repo())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.path_names, ["wifi", "lte-verizon"]);
    let spec = b.sim.flow_spec(0).unwrap();
    assert!(matches!(spec.server_transport.quic.multipath.scheduler, PathSchedulerKind::PriorityBucket(_)));
    assert_eq!(spec.extra_paths.len(), 1);
}

/// Priors: RTT twice the one-way delay; bandwidth the rate each end sends at, a trace's mean.
#[test]
fn priors_come_from_each_paths_rates_and_delays() {
    let dir = shared_traces();
    let text = format!(
        r#"
name = "priors"
[transport]
mode = "quic"
[[paths]]
rate = "20Mbps"
reverse_rate = "5Mbps"
delay = "10ms"
[[paths]]
trace = "{0}/Verizon-LTE-short.down"
reverse_trace = "{0}/Verizon-LTE-short.up"
delay = "35ms"
[[flows]]
name = "f"
client = "c.0"
server = "s.0"
server_app = {{ kind = "bulk", size = "100KB" }}
"#,
        dir.display()
    );
    let s = Scenario::parse(&text, "p.toml").unwrap();
    let b = s.build("p.toml", None).unwrap();
    let spec = b.sim.flow_spec(0).unwrap();
    let mean = |f: &str| MahimahiTrace::from_file(&dir.join(f)).unwrap().mean_rate_bps();
    let server = &spec.server_transport.quic.multipath;
    let client = &spec.client_transport.quic.multipath;
    assert_eq!(server.scheduler, PathSchedulerKind::Lrf, "LRF by default over two paths");
    assert_eq!(
        server.priors,
        [
            PathPrior { rtt_ns: Some(20 * MS), bandwidth_bps: 20_000_000 },
            PathPrior { rtt_ns: Some(70 * MS), bandwidth_bps: mean("Verizon-LTE-short.down") }
        ]
    );
    assert_eq!(
        client.priors,
        [
            PathPrior { rtt_ns: Some(20 * MS), bandwidth_bps: 5_000_000 },
            PathPrior { rtt_ns: Some(70 * MS), bandwidth_bps: mean("Verizon-LTE-short.up") }
        ]
    );
    let nodes: Vec<&str> = b.sim.network().nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(nodes, ["s.0", "c.0", "s.1", "c.1"]);
    let (c1, s1) = (b.sim.network().node("c.1").unwrap(), b.sim.network().node("s.1").unwrap());
    assert_eq!(spec.extra_paths, [(c1, s1)]);
}

/// `down_at` takes both directions of a path down; the flow finishes on the other path and
/// the report counts the failure.
#[test]
fn an_outage_moves_the_data_to_the_live_path() {
    let text = r#"
name = "outage"
seed = 1
stop = "60s"
[transport]
mode = "quic"
cc = "cubic"
multipath = { scheduler = "lrf" }
[measure]
interval = "0ms"
[[paths]]
rate = "10Mbps"
delay = "10ms"
queue = { packets = 50 }
[[paths]]
name = "dies"
rate = "10Mbps"
delay = "10ms"
queue = { packets = 50 }
down_at = "1300ms"
[[flows]]
name = "bulk"
client = "c.0"
server = "s.0"
server_app = { kind = "messages", messages = [{ name = "bulk", size = "8MB", at = "300ms" }] }
"#;
    let s = Scenario::parse(text, "o.toml").unwrap();
    let b = s.build("o.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    let r = RunReport::new(&s.name, s.seed, &sim).with_path_names(&b.path_names);
    assert!(r.messages[0].completed_ms.is_some(), "the message arrives");
    assert_eq!(sim.stats().repeated_completions, 0);
    let paths = r.flows[0].paths.as_ref().unwrap();
    assert_eq!(paths[1].name, "dies");
    assert!(paths[1].failures[0] >= 1, "the server declares the dead path failed: {:?}", paths[1]);
    assert!(paths[0].data_bytes_sent[0] > 4_000_000, "the live path carries the rest: {:?}", paths[0]);
    for name in ["s.1->c.1", "c.1->s.1"] {
        let l = sim.network().links.iter().find(|l| l.name == name).unwrap();
        assert!(l.stats().outage_packets > 0, "{name}: both directions go down");
    }
    let l = sim.network().links.iter().find(|l| l.name == "s.0->c.0").unwrap();
    assert_eq!(l.stats().outage_packets, 0);
}

const GOOD: &str = r#"
name = "mp"
[transport]
mode = "quic"
[[paths]]
rate = "20Mbps"
delay = "10ms"
[[paths]]
rate = "10Mbps"
delay = "30ms"
[[flows]]
name = "f"
client = "c.0"
server = "s.0"
server_app = { kind = "bulk", size = "10KB" }
"#;

fn err(text: &str) -> String {
    match Scenario::parse(text, "bad.toml").and_then(|s| s.build("bad.toml", None).map(|_| ())) {
        Ok(()) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_good_one_builds() {
    let s = Scenario::parse(GOOD, "good.toml").unwrap();
    let b = s.build("good.toml", None).unwrap();
    assert_eq!(b.path_names, ["path0", "path1"]);
}

/// Each error names the field and points at the line (and column) of the value.
#[test]
fn errors_name_the_field_and_its_line() {
    let nine: String = (0..9).map(|_| "[[paths]]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n").collect();
    let cases = [
        // Without QUIC mode: at the first [[paths]].
        (GOOD.replace("mode = \"quic\"\n", ""), "line 4, column 1", "paths: [[paths]] need QUIC mode"),
        // TCP mode named anywhere: at that value.
        (GOOD.replace("mode = \"quic\"", "mode = \"tcp\""), "line 4, column 8", "transport.mode: expected \"quic\""),
        (
            format!("{GOOD}[[variants]]\nname = \"v\"\ntransport = {{ mode = \"tcp\" }}\n"),
            "line 18, column 22",
            "variants[0].transport.mode: expected \"quic\"",
        ),
        // A rate with a trace.
        (
            GOOD.replace("rate = \"10Mbps\"", "rate = \"10Mbps\"\ntrace = \"x.down\""),
            "line 9, column 8",
            "paths[1].rate: `rate` and `trace` together",
        ),
        // Nine paths: at the ninth.
        (GOOD.replace("[[paths]]\nrate = \"20Mbps\"\ndelay = \"10ms\"\n", &nine), "line 29, column 1", "paths[8]: expected 1 to 8 paths"),
        // An unknown preset (the parser's own error).
        (
            GOOD.replace("rate = \"10Mbps\"\ndelay = \"30ms\"", "preset = \"5g\""),
            "line 9, column 10",
            "paths[1].preset: unknown variant `5g`, expected one of `wifi`, `lte-tmobile`, `lte-verizon`, `lte-att`",
        ),
        // Paths and a topology.
        (
            GOOD.replace("[[flows]]", "[topology]\nkind = \"profile\"\nname = \"wpt-lte\"\n[[flows]]"),
            "line 11, column 1",
            "topology: a scenario with [[paths]] has no [topology]",
        ),
        // A preset with a rate.
        (
            GOOD.replace("rate = \"20Mbps\"", "preset = \"wifi\"\nrate = \"20Mbps\""),
            "line 7, column 8",
            "paths[0].rate: preset \"wifi\" sets the path's rate",
        ),
        // No rate, no delay.
        (GOOD.replace("rate = \"10Mbps\"\n", ""), "line 8, column 1", "paths[1]: missing `rate` (or `trace`)"),
        (GOOD.replace("delay = \"30ms\"\n", ""), "line 8, column 1", "paths[1]: missing `delay`"),
        // Outage times.
        (
            GOOD.replace("delay = \"30ms\"", "delay = \"30ms\"\ndown_at = \"2s\"\nup_at = \"1s\""),
            "line 12, column 9",
            "paths[1].up_at: expected a time after down_at (2s), got 1s",
        ),
        (GOOD.replace("delay = \"30ms\"", "delay = \"30ms\"\nup_at = \"1s\""), "line 11", "paths[1].up_at: "),
        // Two paths of one name.
        (
            GOOD.replace("delay = \"30ms\"", "delay = \"30ms\"\nname = \"path0\""),
            "line 11, column 8",
            "paths[1].name: \"path0\" also names paths[0]",
        ),
        // A flow off path 0.
        (GOOD.replace("client = \"c.0\"", "client = \"c.1\""), "line 13, column 10", "flows[0].client: a flow over [[paths]]"),
        // Scheduler options.
        (
            GOOD.replace("mode = \"quic\"", "mode = \"quic\"\nmultipath = { scheduler = \"sa_ecf\", sa_ecf = { beta = [1, 0] } }"),
            "line 5, column 55",
            "transport.multipath.sa_ecf.beta: expected [numerator, denominator]",
        ),
        (
            GOOD.replace("mode = \"quic\"", "mode = \"quic\"\nmultipath = { scheduler = \"lrf\", priority_bucket = { min_share_bytes = 0 } }"),
            "line 5, column 52",
            "transport.multipath.priority_bucket: PriorityBucket's options need scheduler = \"priority_bucket\"",
        ),
        (
            GOOD.replace("mode = \"quic\"", "mode = \"quic\"\nmultipath = { scheduler = \"fastest\" }"),
            "line 5, column 27",
            "transport.multipath.scheduler: unknown variant `fastest`",
        ),
        // Multipath settings without paths.
        (
            "name = \"t\"\n[transport]\nmode = \"quic\"\nmultipath = { scheduler = \"lrf\" }\n[topology]\nkind = \"profile\"\nname = \"wpt-lte\"\n[[flows]]\nname = \"f\"\nclient = \"c0\"\nserver = \"s0\"\n".to_string(),
            "line 4, column 13",
            "transport.multipath: needs [[paths]]",
        ),
    ];
    let mut wrong = Vec::new();
    for (text, at, message) in cases {
        let e = err(&text);
        if !(e.starts_with("bad.toml: ") && e.contains(at) && e.contains(message)) {
            wrong.push(format!("expected {at:?} and {message:?} in:\n{e}\nfor:\n{text}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    // Neither a topology nor paths.
    let e = err("name = \"t\"\nflows = []\n");
    assert!(e.contains("topology: missing; a scenario needs a [topology] table or [[paths]] tables"), "{e}");
}
