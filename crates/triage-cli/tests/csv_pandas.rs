//! Every CSV file triage writes loads with `pandas.read_csv` into the documented columns,
//! numeric columns as numbers, names with commas and quotes intact (issue 15, must-show 2).
//!
//! Needs python3 with pandas (`.ci/run` installs pandas when it is missing). Without them
//! the test says so and passes, except under CI (`CI=true`), where it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn triage(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_triage"))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A flow name and an object URL that break hand-written CSV.
const FLOW: &str = "page, \"main\"";
const URL_WITH_COMMA: &str = "https://www.example.com/app,v2/\"quoted\".js";

/// A HAR of three objects: the document, a script whose URL holds a comma and quotes, an
/// image.
fn har() -> String {
    let entry = |url: &str, mime: &str, size: u64, start: &str| {
        serde_json::json!({
            "pageref": "page_1",
            "startedDateTime": start,
            "time": 50.0,
            "request": {"method": "GET", "url": url, "headers": []},
            "response": {"status": 200, "headers": [], "content": {"size": size, "mimeType": mime}, "bodySize": size, "headersSize": 200},
            "timings": {"send": 1.0, "wait": 20.0, "receive": 29.0},
            "_priority": "High"
        })
    };
    serde_json::json!({"log": {
        "version": "1.2",
        "creator": {"name": "test", "version": "1"},
        "pages": [{"id": "page_1", "title": "https://www.example.com/", "startedDateTime": "2024-01-01T00:00:00.000Z", "pageTimings": {}}],
        "entries": [
            entry("https://www.example.com/", "text/html", 20_000, "2024-01-01T00:00:00.000Z"),
            entry(URL_WITH_COMMA, "application/javascript", 30_000, "2024-01-01T00:00:00.100Z"),
            entry("https://www.example.com/hero.jpg", "image/jpeg", 60_000, "2024-01-01T00:00:00.200Z"),
        ]
    }})
    .to_string()
}

const SCENARIO: &str = r#"
name = "csv, \"quoted\" scenario"
seed = 3
stop = "60s"

[measure]
interval = "10ms"
packet_trace = true

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "5Mbps", delay = "20ms", queue = { packets = 50 } }
access = { rate = "100Mbps", delay = "1ms", queue = { packets = 1000 } }

[[flows]]
name = "page, \"main\""
client = "c0"
server = "s0"
page = "page.har"

[[variants]]
name = "fifo"
transport = { scheduler = "fifo" }

[[variants]]
name = "cats, prio"
transport = { scheduler = "cats", priority_option = true }
"#;

/// The reader: for each file, its columns, pandas' dtype per column, its row count and the
/// distinct values of its text columns of interest.
const READER: &str = r#"
import json, sys, os
import pandas as pd
out = {}
for path in sys.argv[1:]:
    df = pd.read_csv(path)
    texts = {}
    for c in ("flow", "url", "variant", "scenario", "message", "path"):
        if c in df.columns:
            texts[c] = sorted(set(str(v) for v in df[c].dropna()))
    empty = [c for c in df.columns if df[c].isna().all()]
    out[path] = {"columns": list(df.columns), "dtypes": {c: df[c].dtype.kind for c in df.columns}, "rows": len(df), "texts": texts, "empty": empty}
print(json.dumps(out))
"#;

/// Columns that hold text (everything else must parse as a number).
const TEXT_COLUMNS: &[&str] = &[
    "scenario",
    "variant",
    "triage_version",
    "flow",
    "from",
    "message",
    "discard_reason",
    "link",
    "page",
    "lcp_element",
    "cls",
    "url",
    "type",
    "browser_priority",
    "essential",
    "connection",
    "end",
    "cc_state",
    "state",
    "event",
    "src",
    "dst",
    "flags",
    "path",
    "group",
    "metric",
    "topology",
    "scheme",
    "kind",
    "mode",
    "cc",
    "network",
    "policy",
    "version",
    "setting",
    "scheduler",
    "case",
    "unreliable",
    "complete",
    "datagram",
];

fn pandas_available() -> bool {
    Command::new("python3").args(["-c", "import pandas"]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn every_csv_loads_in_pandas_with_its_columns_and_dtypes() {
    if !pandas_available() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but python3 with pandas is missing (.ci/run installs it with pip)"
        );
        eprintln!("skipped: python3 with pandas is missing (pip install pandas)");
        return;
    }
    let root = std::env::temp_dir().join(format!("triage-csv-pandas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("page.har"), har()).unwrap();
    std::fs::write(root.join("scenario.toml"), SCENARIO).unwrap();
    let scenario = root.join("scenario.toml");
    let run_dir = root.join("run");
    triage(&run_dir, &["run", scenario.to_str().unwrap()]);
    // A sweep of the same scenario: runs.csv and summary.csv (their own layout, checked
    // below: the plan's parameter columns hold dots).
    std::fs::write(
        root.join("plan.toml"),
        "scenario = \"scenario.toml\"\nseeds = [3]\nmetrics = [\"page.*\"]\n[grid]\n\"topology.bottleneck.rate\" = [\"5Mbps\", \"2Mbps\"]\n",
    )
    .unwrap();
    let plan = root.join("plan.toml");
    let sweep_dir = root.join("sweep");
    triage(&sweep_dir, &["sweep", plan.to_str().unwrap()]);
    let dirs: Vec<(PathBuf, Vec<&str>)> = vec![
        // A multipath page load: paths.csv.
        (root.join("mp"), vec!["run", "scenarios/multipath-wifi-lte.toml"]),
        (root.join("cats"), vec!["reproduce", "cats"]),
        (root.join("eecn"), vec!["reproduce", "eecn"]),
        (root.join("quic"), vec!["reproduce", "quic", "--runs", "2", "--modes", "tcp,dg01"]),
        (
            root.join("partial"),
            vec!["reproduce", "partial", "--runs", "2", "--networks", "12Mbps", "--policies", "fonts"],
        ),
        (root.join("pb"), vec!["reproduce", "priority-bucket", "--runs", "2"]),
        (root.join("bench"), vec!["bench", "--scenario", "eecn-dumbbell", "--repeat", "2", "--reference", "true"]),
    ];
    for (d, args) in &dirs {
        triage(d, args);
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for d in [&run_dir, &sweep_dir].into_iter().chain(dirs.iter().map(|d| &d.0)) {
        let mut here: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            // The multipath run is here for paths.csv (it records no time series).
            .filter(|p| !p.starts_with(root.join("mp")) || p.ends_with("paths.csv"))
            .collect();
        here.sort();
        files.extend(here);
    }
    let script = root.join("read.py");
    std::fs::write(&script, READER).unwrap();
    let out = Command::new("python3").arg(&script).args(&files).output().unwrap();
    assert!(out.status.success(), "pandas failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let name = |p: &Path| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
    let by_name: BTreeMap<String, &serde_json::Value> =
        files.iter().map(|f| (name(f), &got[f.to_str().unwrap()])).collect();

    // Every file: the parameter columns first, no duplicate or unnamed column, every
    // column that is not text parsed as a number (an empty column as float NaN).
    for (file, v) in by_name.iter().filter(|(f, _)| !f.starts_with("sweep/")) {
        let cols: Vec<&str> = v["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        assert_eq!(&cols[..4], ["scenario", "variant", "seed", "triage_version"], "{file}");
        for c in &cols {
            assert!(!c.starts_with("Unnamed") && !c.contains('.'), "{file}: column {c}");
        }
        assert!(v["rows"].as_u64().unwrap() > 0, "{file} has no rows");
        for c in &cols {
            let kind = v["dtypes"][c].as_str().unwrap();
            if TEXT_COLUMNS.contains(c) {
                continue;
            }
            assert!(matches!(kind, "i" | "u" | "f"), "{file}: column {c} parsed as {kind}, not as a number");
        }
    }
    let want = [
        "run/cc_states.csv",
        "run/flows.csv",
        "run/links.csv",
        "run/messages.csv",
        "run/objects.csv",
        "run/packets.csv",
        "run/pages.csv",
        "run/queues.csv",
        "run/timeseries.csv",
        "sweep/runs.csv",
        "sweep/summary.csv",
        "mp/paths.csv",
        "cats/table1.csv",
        "cats/table2.csv",
        "eecn/flows.csv",
        "eecn/table4.csv",
        "quic/runs.csv",
        "partial/objects.csv",
        "partial/results.csv",
        "partial/runs.csv",
        "pb/reference.csv",
        "pb/results.csv",
        "pb/runs.csv",
        "bench/runs.csv",
        "bench/scenarios.csv",
    ];
    for f in want {
        assert!(by_name.contains_key(f), "{f} not written; got {:?}", by_name.keys().collect::<Vec<_>>());
    }
    let cols = |f: &str| -> Vec<String> {
        by_name[f]["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect()
    };
    let kind = |f: &str, c: &str| by_name[f]["dtypes"][c].as_str().unwrap().to_string();
    assert_eq!(
        cols("run/pages.csv")[4..],
        [
            "flow",
            "page",
            "objects",
            "delivered_objects",
            "fcp_ms",
            "first_render_ms",
            "lcp_ms",
            "tti_ms",
            "speed_index_ms",
            "tbt_ms",
            "page_load_ms",
            "lcp_element",
            "cls"
        ]
    );
    assert_eq!(
        cols("run/objects.csv")[4..],
        [
            "flow",
            "object_id",
            "url",
            "type",
            "bytes",
            "browser_priority",
            "cats_level",
            "essential",
            "parent_id",
            "connection",
            "connection_start_ms",
            "connected_ms",
            "discovered_ms",
            "request_ms",
            "response_start_ms",
            "first_byte_ms",
            "complete_ms"
        ]
    );
    assert_eq!(kind("run/objects.csv", "object_id"), "i");
    assert_eq!(kind("run/objects.csv", "complete_ms"), "f");
    assert_eq!(kind("run/pages.csv", "fcp_ms"), "f");
    // Total blocking time is not modelled (no CPU model): an empty column, which pandas
    // reads as float NaN, so that files with and without it concatenate.
    assert_eq!(kind("run/pages.csv", "tbt_ms"), "f");
    assert_eq!(by_name["run/pages.csv"]["empty"], serde_json::json!(["tbt_ms"]));
    assert_eq!(
        cols("mp/paths.csv")[4..],
        [
            "flow",
            "path_id",
            "path",
            "end",
            "packets_sent",
            "bytes_sent",
            "data_bytes_sent",
            "packets_received",
            "packets_lost",
            "pto_count",
            "failures",
            "srtt_ms",
            "cwnd_bytes"
        ]
    );
    assert_eq!(kind("mp/paths.csv", "path_id"), "i");
    assert_eq!(kind("mp/paths.csv", "srtt_ms"), "f");
    assert_eq!(by_name["mp/paths.csv"]["texts"]["path"], serde_json::json!(["lte-tmobile", "wifi"]));
    // The sweep's files: the scenario, the plan's parameter (named by its path), then the
    // run's columns; names with commas and quotes come back whole there too.
    assert_eq!(
        cols("sweep/runs.csv"),
        ["scenario", "topology.bottleneck.rate", "seed", "variant", "version", "status", "metric", "value", "error"]
    );
    assert_eq!(kind("sweep/runs.csv", "seed"), "i");
    assert_eq!(kind("sweep/runs.csv", "value"), "f");
    assert_eq!(
        cols("sweep/summary.csv"),
        [
            "scenario",
            "topology.bottleneck.rate",
            "variant",
            "metric",
            "n",
            "mean",
            "ci95_low",
            "ci95_high",
            "median",
            "p10",
            "p90"
        ]
    );
    assert_eq!(kind("sweep/summary.csv", "n"), "i");
    for c in ["mean", "ci95_low", "ci95_high", "median", "p10", "p90"] {
        assert_eq!(kind("sweep/summary.csv", c), "f", "summary.csv {c}");
    }
    for f in ["sweep/runs.csv", "sweep/summary.csv"] {
        assert_eq!(by_name[f]["texts"]["variant"], serde_json::json!(["cats, prio", "fifo"]), "{f}");
        assert!(by_name[f]["rows"].as_u64().unwrap() > 0, "{f}");
    }
    assert_eq!(kind("run/links.csv", "ecn_marked_packets"), "i");
    assert_eq!(kind("run/flows.csv", "seed"), "i");
    // Two variants, 3 objects each; the page loads' rows per variant.
    assert_eq!(by_name["run/objects.csv"]["rows"], 6);
    assert_eq!(by_name["run/pages.csv"]["rows"], 2);
    // Names with commas and quotes come back whole.
    for f in ["run/flows.csv", "run/pages.csv", "run/objects.csv", "run/timeseries.csv", "run/messages.csv"] {
        assert_eq!(by_name[f]["texts"]["flow"], serde_json::json!([FLOW]), "{f}");
        assert_eq!(by_name[f]["texts"]["variant"], serde_json::json!(["cats, prio", "fifo"]), "{f}");
        assert_eq!(by_name[f]["texts"]["scenario"], serde_json::json!(["csv, \"quoted\" scenario"]), "{f}");
    }
    let urls = by_name["run/objects.csv"]["texts"]["url"].as_array().unwrap();
    assert!(urls.iter().any(|u| u == URL_WITH_COMMA), "{urls:?}");
    let messages = by_name["run/messages.csv"]["texts"]["message"].as_array().unwrap();
    assert!(messages.iter().any(|m| m == "www.example.com/app,v2/\"quoted\".js"), "{messages:?}");
    // Reproductions: no scenario file, so the command is the scenario and a per-run seed
    // (where there is one) is the seed column.
    assert_eq!(by_name["cats/table1.csv"]["texts"]["scenario"], serde_json::json!(["reproduce cats"]));
    assert_eq!(kind("quic/runs.csv", "seed"), "i");
    assert_eq!(kind("cats/table1.csv", "seed"), "f", "no seed: an empty column");
    let _ = std::fs::remove_dir_all(&root);
}
