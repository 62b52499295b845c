//! `triage sweep`: every run's rows equal `triage run` with the same overrides and seed;
//! shards concatenate to the whole; `--resume` runs only what is missing; a failing point is
//! recorded and the sweep goes on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn triage() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_triage"));
    c.current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("triage-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const PLAN: &str = "scenario = \"scenarios/cats-fifo.toml\"\nseeds = [1, 7]\n\
                    metrics = [\"message.*.completed_ms\", \"flow.*.fct_ms\", \"flow.*.retransmissions\"]\n\
                    [grid]\n\"topology.bottleneck.rate\" = [\"2Mbps\", \"3Mbps\"]\n\
                    \"topology.bottleneck.loss\" = [\"{ kind = \\\"none\\\" }\", \"{ kind = \\\"bernoulli\\\", loss_prob = 0.03 }\"]\n";

fn sweep(dir: &Path, plan: &str, extra: &[&str]) -> Output {
    let file = dir.join("plan.toml");
    std::fs::write(&file, plan).unwrap();
    // The plan names its scenario relative to the repository (the current directory).
    triage().arg("sweep").arg(&file).arg("--out").arg(dir.join("out")).args(extra).output().unwrap()
}

fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records().map(|rec| head.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect()).collect()
}

#[test]
fn every_row_equals_triage_run_with_the_same_overrides_and_seed() {
    let dir = scratch("equal");
    let out = sweep(&dir, PLAN, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = csv_rows(&dir.join("out/runs.csv"));
    // 4 points x 2 seeds x (5 messages + fct + retransmissions).
    assert_eq!(rows.len(), 4 * 2 * 7);
    let mut checked = 0;
    for rate in ["2Mbps", "3Mbps"] {
        for loss in ["{ kind = \"none\" }", "{ kind = \"bernoulli\", loss_prob = 0.03 }"] {
            for seed in ["1", "7"] {
                let run = triage()
                    .args(["run", "scenarios/cats-fifo.toml", "--json", "--seed", seed])
                    .args(["--set", &format!("topology.bottleneck.rate={rate}")])
                    .args(["--set", &format!("topology.bottleneck.loss={loss}")])
                    .output()
                    .unwrap();
                assert!(run.status.success());
                let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
                let v = &doc["variants"][0]["report"];
                let mut want: BTreeMap<String, f64> = BTreeMap::new();
                for m in v["messages"].as_array().unwrap() {
                    want.insert(
                        format!("message.{}.completed_ms", m["name"].as_str().unwrap()),
                        m["completed_ms"].as_f64().unwrap(),
                    );
                }
                let f = &v["flows"][0];
                want.insert("flow.page.fct_ms".into(), f["fct_ms"].as_f64().unwrap());
                want.insert("flow.page.retransmissions".into(), f["retransmissions"].as_f64().unwrap());
                let got: BTreeMap<String, f64> = rows
                    .iter()
                    .filter(|r| {
                        r["topology.bottleneck.rate"] == rate
                            && r["topology.bottleneck.loss"] == loss
                            && r["seed"] == seed
                    })
                    .map(|r| {
                        assert_eq!((r["status"].as_str(), r["scenario"].as_str()), ("ok", "scenarios/cats-fifo.toml"));
                        (r["metric"].clone(), r["value"].parse().unwrap())
                    })
                    .collect();
                assert_eq!(got, want, "{rate} {loss} seed {seed}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 8);
    // Loss made a difference (the grid was applied), and seeds differ under loss.
    let retrans: Vec<&str> =
        rows.iter().filter(|r| r["metric"] == "flow.page.retransmissions").map(|r| r["value"].as_str()).collect();
    assert!(retrans.iter().any(|v| *v != "0"), "{retrans:?}");
    // The summary has n = 2 per point and metric.
    let summary = csv_rows(&dir.join("out/summary.csv"));
    assert_eq!(summary.len(), 4 * 7);
    assert!(summary.iter().all(|s| s["n"] == "2"));
    let jsonl = std::fs::read_to_string(dir.join("out/runs.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), rows.len());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shards_and_resume_give_the_whole_sweep() {
    let whole = scratch("whole");
    assert!(sweep(&whole, PLAN, &[]).status.success());
    let all = std::fs::read_to_string(whole.join("out/runs.csv")).unwrap();
    // Two shards into one directory, the second resuming the first's output.
    let parts = scratch("parts");
    let first = sweep(&parts, PLAN, &["--shard", "0/2"]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let half = csv_rows(&parts.join("out/runs.csv"));
    assert_eq!(half.len(), 4 * 7, "every other run of 8");
    let second = sweep(&parts, PLAN, &["--resume"]);
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let mut a: Vec<String> = all.lines().map(String::from).collect();
    let mut b: Vec<String> =
        std::fs::read_to_string(parts.join("out/runs.csv")).unwrap().lines().map(String::from).collect();
    assert_eq!(a[0], b[0]);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // Resuming a complete sweep runs nothing and keeps the file.
    let again = sweep(&parts, PLAN, &["--resume"]);
    assert!(again.status.success());
    assert_eq!(csv_rows(&parts.join("out/runs.csv")).len(), 8 * 7);
    // Another plan's output is not resumed.
    let other = PLAN
        .replace("\"topology.bottleneck.loss\"", "\"topology.bottleneck.delay\"")
        .replace("[\"{ kind = \\\"none\\\" }\", \"{ kind = \\\"bernoulli\\\", loss_prob = 0.03 }\"]", "[\"10ms\"]");
    let e = sweep(&parts, &other, &["--resume"]);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr).contains("--resume continues the same plan"));
    std::fs::remove_dir_all(&whole).ok();
    std::fs::remove_dir_all(&parts).ok();
}

#[test]
fn a_failing_point_is_recorded_and_the_sweep_goes_on() {
    let dir = scratch("fail");
    let plan = "scenario = \"cats\"\nmetrics = [\"flow.*.fct_ms\"]\n[grid]\n\"topology.bottleneck.rate\" = [\"2Mbps\", \"fast\", \"4Mbps\"]\n";
    let out = sweep(&dir, plan, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 of 3 runs failed"), "{err}");
    assert!(err.contains("topology.bottleneck.rate: expected a rate like"), "{err}");
    let rows = csv_rows(&dir.join("out/runs.csv"));
    let status: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["topology.bottleneck.rate"].as_str(), r["status"].as_str())).collect();
    assert_eq!(status, [("2Mbps", "ok"), ("fast", "error"), ("4Mbps", "ok")]);
    assert!(rows[1]["error"].contains("expected a rate like"), "{:?}", rows[1]);
    assert_eq!(rows[1]["value"], "");
    // Plan errors name the file and field.
    let bad = sweep(&dir, "scenario = \"cats\"\n[grid]\n\"transport.cc\" = \"bbr\"\n", &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("plan.toml: grid.\"transport.cc\": expected a list of values")
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Points that set different parameters (`[[points]]`): a point's identity is its value of every
/// parameter column (empty where it sets none), so --resume recognises the runs it already has
/// and runs none of them twice.
#[test]
fn resume_recognises_points_that_set_different_parameters() {
    let plan = "scenario = \"cats\"\nseeds = [1, 2]\nmetrics = [\"flow.*.fct_ms\"]\n\
                [[points]]\n\"topology.bottleneck.rate\" = \"3Mbps\"\n\
                [[points]]\n\"topology.bottleneck.delay\" = \"10ms\"\n";
    let whole = scratch("points-whole");
    assert!(sweep(&whole, plan, &[]).status.success());
    let mut all: Vec<String> =
        std::fs::read_to_string(whole.join("out/runs.csv")).unwrap().lines().map(String::from).collect();
    assert_eq!(all.len(), 1 + 4);
    let parts = scratch("points-parts");
    assert!(sweep(&parts, plan, &["--shard", "1/2"]).status.success());
    let out = sweep(&parts, plan, &["--resume"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut resumed: Vec<String> =
        std::fs::read_to_string(parts.join("out/runs.csv")).unwrap().lines().map(String::from).collect();
    all.sort();
    resumed.sort();
    assert_eq!(resumed, all);
    std::fs::remove_dir_all(&whole).ok();
    std::fs::remove_dir_all(&parts).ok();
}
