//! The `triage` binary end to end: run, reproduce, errors.

use std::path::PathBuf;
use std::process::Command;

fn triage() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_triage"));
    c.current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = triage().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn run_json_reports_every_message_and_flow() {
    let v = json(&["run", "scenarios/cats-fifo.toml", "--json"]);
    let msgs = v["messages"].as_array().unwrap();
    let names: Vec<&str> = msgs.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["P4", "P3", "P2", "P1", "P0"]);
    for m in msgs {
        for k in ["name", "bytes", "written_ms", "completed_ms"] {
            assert!(!m[k].is_null(), "{k} missing in {m}");
        }
    }
    let f = &v["flows"][0];
    assert_eq!(f["bytes"], 289_792);
    assert_eq!(f["retransmissions"], 0);
    assert!(f["fct_ms"].as_f64().unwrap() > 1000.0);
}

#[test]
fn built_in_scenarios_run_by_name_and_json_is_deterministic() {
    let a = triage().args(["run", "cats", "--json"]).output().unwrap();
    let b = triage().args(["run", "cats", "--json"]).output().unwrap();
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    // The Conductor's priority option lets the client see every priority.
    for m in v["messages"].as_array().unwrap() {
        assert_eq!(m["received_priority"], m["priority"]);
    }
}

#[test]
fn reproduce_cats_json_has_the_documented_shape() {
    let v = json(&["reproduce", "cats", "--json"]);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 5);
    assert_eq!(groups[0]["name"], "P0");
    for g in groups {
        for k in ["name", "priority", "bytes", "fifo_ms", "cats_ms", "oracle_ms", "paper_fifo_ms", "paper_cats_ms"] {
            assert!(!g[k].is_null(), "{k} missing in {g}");
        }
    }
    for m in ["fcp", "tti", "lcp"] {
        assert!(v["metrics"][m]["fifo_ms"].as_f64().unwrap() > v["metrics"][m]["cats_ms"].as_f64().unwrap());
    }
    assert!(v["plt"]["fifo_ms"].is_number() && v["plt"]["cats_ms"].is_number());
    assert_eq!(groups[0]["paper_cats_ms"], 130.0);
}

#[test]
fn reproduce_cats_on_another_network_has_no_paper_numbers() {
    let v = json(&["reproduce", "cats", "--rate", "5Mbps", "--rtt", "100ms", "--cc", "newreno", "--json"]);
    assert!(v["groups"][0]["paper_cats_ms"].is_null());
    assert_eq!(v["network"]["cc"], "newreno");
    assert_eq!(v["network"]["rate_bps"], 5_000_000);
}

#[test]
fn reproduce_cats_writes_figures_and_tables() {
    let dir = std::env::temp_dir().join(format!("triage-cats-{}", std::process::id()));
    let out = triage().args(["reproduce", "cats", "--out", dir.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Table I") && text.contains("Table II") && text.contains("FCP"));
    for f in ["fig2_completion.svg", "fig3_throughput.svg", "table1.csv", "table2.csv"] {
        let p = dir.join(f);
        assert!(std::fs::metadata(&p).map(|m| m.len() > 100).unwrap_or(false), "{f}");
    }
    let svg = std::fs::read_to_string(dir.join("fig2_completion.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("CATS"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_bad_scenario_fails_with_one_clear_error() {
    let dir = std::env::temp_dir().join(format!("triage-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.toml");
    std::fs::write(&f, "name = \"x\"\n[topology]\nkind = \"ring\"\n").unwrap();
    let out = triage().args(["run", f.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: ") && err.contains("bad.toml"), "{err}");
    assert_eq!(err.matches("error: ").count(), 1, "one error: {err}");
    assert!(
        err.contains("line 3") && err.contains("ring") && err.contains("dumbbell"),
        "names the line, the value and what was expected: {err}"
    );
    assert!(!err.contains("panicked"));
    let out = triage().args(["run", "no-such-scenario"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8(out.stderr).unwrap().contains("no such file"));
    std::fs::remove_dir_all(dir).ok();
}

/// At 1 bps nothing completes within the reproduction's hour: an error, not 18446744073709.6 ms.
#[test]
fn reproduce_cats_refuses_a_network_where_the_page_never_completes() {
    let out = triage().args(["reproduce", "cats", "--rate", "1bps"]).output().unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "printed: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("error: --rate 1bps --rtt 50ms: FIFO P4") && err.contains("did not complete within 3600 s"),
        "{err}"
    );
}

#[test]
fn bench_refuses_zero_repetitions() {
    let out = triage().args(["bench", "--repeat", "0"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--repeat") && err.contains("0 is not in 1.."), "{err}");
}

#[test]
fn every_subcommand_has_help() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["bench", "--help"],
        vec!["reproduce", "--help"],
        vec!["reproduce", "cats", "--help"],
        vec!["scenarios", "--help"],
    ] {
        let out = triage().args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert!(String::from_utf8(out.stdout).unwrap().contains("Usage"), "{args:?}");
    }
}

#[test]
fn run_writes_one_qlog_per_quic_connection_end() {
    let dir = std::env::temp_dir().join(format!("triage-qlog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = triage().args(["run", "scenarios/cats-page-slow4g-quic.toml", "--qlog"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    // Three QUIC variants, two ends each; the TCP variants write none.
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.contains(&"quic-rfc9218_page_server.sqlog".to_string()), "{names:?}");
    let text = std::fs::read(dir.join("quic-cats_page_client.sqlog")).unwrap();
    assert_eq!(text[0], 0x1e);
    let head = String::from_utf8_lossy(&text[..200]);
    assert!(head.contains("\"qlog_format\":\"JSON-SEQ\""), "{head}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_writes_a_capture_per_node_pair_and_variant() {
    let dir = std::env::temp_dir().join(format!("triage-pcap-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = triage().args(["run", "scenarios/cats-fifo.toml", "--pcap"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    // A dumbbell with one pair: c0-r2, r1-r2 and s0-r1, each with its drops file.
    assert_eq!(
        names,
        [
            "r1-r2.drops.pcapng",
            "r1-r2.pcapng",
            "r2-c0.drops.pcapng",
            "r2-c0.pcapng",
            "s0-r1.drops.pcapng",
            "s0-r1.pcapng"
        ]
    );
    // pcapng: a Section Header Block first (type 0x0A0D0D0A).
    let bytes = std::fs::read(dir.join("r1-r2.pcapng")).unwrap();
    assert_eq!(&bytes[..4], &[0x0A, 0x0D, 0x0D, 0x0A]);
    // The same scenario and seed give the same bytes.
    let _ = std::fs::remove_dir_all(&dir);
    let out = triage().args(["run", "scenarios/cats-fifo.toml", "--pcap"]).arg(&dir).output().unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read(dir.join("r1-r2.pcapng")).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
    // With variants, one directory each.
    let out = triage().args(["run", "scenarios/cats-page-slow4g-quic.toml", "--pcap"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("quic-cats/s0-r1.pcapng").exists() && dir.join("tcp-fifo/s0-r1.pcapng").exists());
    let _ = std::fs::remove_dir_all(&dir);
    // A directory that cannot be made is an error naming it, before anything runs.
    let file = std::env::temp_dir().join(format!("triage-pcap-file-{}", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let out = triage().args(["run", "scenarios/cats-fifo.toml", "--json", "--pcap"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: ") && err.contains(&file.display().to_string()), "{err}");
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_file(&file);
}

/// Exit status 3: the run ended with a flow not complete; the results are still printed, and
/// stderr names the flow. `--help` documents the statuses.
#[test]
fn a_run_that_stops_before_its_flows_complete_exits_3_with_its_results() {
    let dir = std::env::temp_dir().join(format!("triage-exit3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/cats-fifo.toml"))
            .unwrap();
    let short = regex_free_replace_stop(&text, "stop = \"300ms\"");
    let path = dir.join("short.toml");
    std::fs::write(&path, short).unwrap();
    let out = triage().args(["run", path.to_str().unwrap(), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("results still printed");
    assert!(v["flows"][0]["completed_ms"].is_null());
    assert!(String::from_utf8_lossy(&out.stderr).contains("flows not complete when the run stopped: page"));
    let help = triage().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("3 the run ended with flows not complete"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The scenario with its `stop` line replaced (or added after `seed` when it has none).
fn regex_free_replace_stop(text: &str, stop: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    match lines.iter().position(|l| l.starts_with("stop")) {
        Some(i) => lines[i] = stop.to_string(),
        None => {
            let i = lines.iter().position(|l| l.starts_with("seed")).expect("a seed line");
            lines.insert(i + 1, stop.to_string());
        }
    }
    lines.join("\n")
}

#[test]
fn completions_are_printed_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = triage().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("triage") && text.contains("reproduce"), "{shell}: {text}");
    }
}

/// ECN marks are in the link table and links.csv, equal to the JSON's counts.
#[test]
fn ecn_marks_appear_in_the_link_table_and_links_csv() {
    let dir = std::env::temp_dir().join(format!("triage-ecn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/eecn-dumbbell.toml"))
            .unwrap()
            .replace("cc = \"newreno\"", "cc = \"newreno_ecn\"")
            .replace("device_packets = 100 }", "device_packets = 100, ecn = true }");
    let path = dir.join("ecn.toml");
    std::fs::write(&path, text).unwrap();
    let v = json(&["run", path.to_str().unwrap(), "--json"]);
    let link = v["links"].as_array().unwrap().iter().find(|l| l["name"] == "r1->r2").unwrap().clone();
    let marked = link["queue"]["marked_packets"].as_u64().unwrap();
    assert!(marked > 0, "{link}");
    let out =
        triage().args(["run", path.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(table.contains("ecn_marks"), "{table}");
    let row: Vec<&str> = table.lines().find(|l| l.starts_with("r1->r2")).unwrap().split_whitespace().collect();
    assert_eq!(row[5], marked.to_string(), "{table}");
    let csv = std::fs::read_to_string(dir.join("o/links.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "ecn_marked_packets").unwrap();
    let r: Vec<&str> = csv.lines().find(|l| l.starts_with("r1->r2")).unwrap().split(',').collect();
    assert_eq!(r[col], marked.to_string());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `[[paths]]` scenario: the table has a per-path section, `--json` is byte-identical run
/// to run and has `paths` per flow, `--out` writes `paths.csv` (the LTE path reads
/// ../shared/data/traces).
#[test]
fn multipath_run_prints_paths_and_writes_paths_csv() {
    let file = "scenarios/multipath-wifi-lte.toml";
    let out = triage().args(["run", file]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("flow         path         end"), "{table}");
    assert!(table.contains("1 lte-tmobil server"), "{table}");
    let a = triage().args(["run", file, "--json"]).output().unwrap();
    let b = triage().args(["run", file, "--json"]).output().unwrap();
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout, "the same seed gives the same JSON");
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let paths = &v["variants"][0]["report"]["flows"][0]["paths"];
    assert_eq!(paths[0]["name"], "wifi");
    assert_eq!(paths[1]["name"], "lte-tmobile");
    let dir = std::env::temp_dir().join(format!("triage-mp-out-{}", std::process::id()));
    let out = triage().args(["run", file, "--out"]).arg(&dir).output().unwrap();
    assert!(out.status.success());
    let csv = std::fs::read_to_string(dir.join("lrf/paths.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("flow,path_id,path,end,packets_sent,bytes_sent,data_bytes_sent"), "{csv}");
    assert_eq!(lines.len(), 1 + 2 * 2, "a line per path and end: {csv}");
    assert!(lines[3].starts_with("page,1,lte-tmobile,server,"), "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}
