//! The `triage` binary end to end: run, reproduce, errors.

mod common;

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
    let doc = json(&["run", "scenarios/cats-fifo.toml", "--json"]);
    let v = &doc["variants"][0]["report"];
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
    for m in v["variants"][0]["report"]["messages"].as_array().unwrap() {
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
    // Group names under the bars; the paper's values as dots on the bars they belong to.
    for label in ["P0", "P1", "P2", "P3", "P4", "paper (on the bar it belongs to)", "completion (ms)"] {
        assert!(svg.contains(label), "fig2 lacks {label}");
    }
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
    assert!(v["variants"][0]["report"]["flows"][0]["completed_ms"].is_null());
    assert!(String::from_utf8_lossy(&out.stderr).contains("flows not complete when the run stopped: page"));
    let help = triage().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("3 the run ended with flows not complete"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Twelve long flows stopped at 1 s: stderr names ten and counts the rest; the flows table
/// gives each its delivered bytes and a goodput over the second it ran.
#[test]
fn many_open_flows_are_counted_and_each_has_a_goodput() {
    let dir = std::env::temp_dir().join(format!("triage-long-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = common::long_flows_text("long", "1s", 12, "12Mbps", "");
    let path = dir.join("long.toml");
    std::fs::write(&path, text).unwrap();
    let out = triage().args(["run", path.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error: flows not complete when the run stopped: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 2 more (12 in all)\n"),
        "{err}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let header = table.lines().find(|l| l.starts_with("flow ") && l.contains("delivered_bytes")).expect("flows table");
    let cols: Vec<&str> = header.split_whitespace().collect();
    let (d, g) = (
        cols.iter().position(|&c| c == "delivered_bytes").unwrap(),
        cols.iter().position(|&c| c == "goodput_mbps").unwrap(),
    );
    let mut total = 0.0;
    for i in 0..12 {
        let row: Vec<&str> = table
            .lines()
            .skip_while(|l| *l != header)
            .find(|l| l.split_whitespace().next() == Some(&format!("f{i}")))
            .unwrap()
            .split_whitespace()
            .collect();
        let (bytes, mbps): (f64, f64) = (row[d].parse().unwrap(), row[g].parse().unwrap());
        // A second's goodput is its bytes in megabits.
        assert!((mbps - bytes * 8.0 / 1e6).abs() < 0.001, "f{i}: {bytes} bytes, {mbps} Mbps");
        total += mbps;
    }
    // The flows share the 12 Mbps bottleneck's payload (less the handshakes and slow start).
    assert!(total > 8.0 && total < 12.0 * 1448.0 / 1500.0, "{total} Mbps in all");
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

/// Each shell's script is non-empty and completes every subcommand `triage --help` lists
/// (and the subcommands of `reproduce` and `page`).
#[test]
fn completions_are_printed_for_bash_zsh_and_fish() {
    // The subcommands under "Commands:" of a help text, without clap's own `help`.
    let commands = |args: &[&str]| -> Vec<String> {
        let out = triage().args(args).arg("--help").output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        let list = help.split("Commands:\n").nth(1).unwrap_or_else(|| panic!("{args:?}: no Commands in {help}"));
        list.lines()
            .take_while(|l| l.starts_with("  "))
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|c| *c != "help")
            .map(String::from)
            .collect()
    };
    let top = commands(&[]);
    for c in ["run", "sweep", "scenarios", "profiles", "bench", "reproduce", "page", "report", "completions"] {
        assert!(top.iter().any(|t| t == c), "`triage --help` does not list {c}: {top:?}");
    }
    let nested: Vec<String> = commands(&["reproduce"]).into_iter().chain(commands(&["page"])).collect();
    assert!(nested.len() >= 4, "{nested:?}");
    for shell in ["bash", "zsh", "fish"] {
        let out = triage().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.len() > 1000, "{shell}: {} bytes", text.len());
        for c in top.iter().chain(&nested) {
            assert!(text.contains(c.as_str()), "{shell}: no {c} in the script");
        }
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
    let link =
        v["variants"][0]["report"]["links"].as_array().unwrap().iter().find(|l| l["name"] == "r1->r2").unwrap().clone();
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
    let r: Vec<&str> = csv.lines().find(|l| l.contains(",r1->r2,")).unwrap().split(',').collect();
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
    assert!(table.contains("flow         path             end"), "{table}");
    assert!(table.contains("1 lte-tmobile    server"), "{table}");
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
    // One paths.csv for every variant, told apart by the variant column.
    let csv = std::fs::read_to_string(dir.join("paths.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("scenario,variant,seed,triage_version,flow,path_id,path,end,packets_sent,bytes_sent"),
        "{csv}"
    );
    let lrf: Vec<&str> = lines.iter().copied().filter(|l| l.contains(",lrf,")).collect();
    assert_eq!(lrf.len(), 2 * 2, "a line per path and end: {csv}");
    let v = env!("CARGO_PKG_VERSION");
    assert!(lrf[2].starts_with(&format!("multipath-wifi-lte,lrf,1,{v},page,1,lte-tmobile,server,")), "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `run --out` writes the charts `run --help` promises: congestion window, RTT, pacing rate
/// and queue backlog over time when the scenario records time series, the page metrics per
/// variant for page loads; each carries its title, axis names and series labels, and
/// renders to PNG (with `rsvg-convert`, when it is installed).
#[test]
fn out_writes_time_series_and_page_metric_charts() {
    let dir = std::env::temp_dir().join(format!("triage-charts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bulk = dir.join("bulk");
    let out = triage().args(["run", "scenarios/cats.toml", "--out"]).arg(&bulk).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    for (file, labels) in [
        ("cwnd.svg", &["congestion window", "cwnd (KB)", "time (s)", "page server"][..]),
        ("rtt.svg", &["smoothed RTT", "SRTT (ms)", "page server"][..]),
        ("pacing_rate.svg", &["pacing rate", "pacing rate (Mbps)", "page server"][..]),
        ("queue.svg", &["queue backlog", "queue (packets)", "r1-&gt;r2"][..]),
    ] {
        let svg = read(bulk.join(file));
        for l in labels {
            assert!(svg.contains(l), "{file} lacks {l}");
        }
    }
    assert!(!bulk.join("pages.svg").exists(), "no page load, no page chart");
    let page = dir.join("page");
    let out = triage().args(["run", "scenarios/paulirish-slow4g.toml", "--out"]).arg(&page).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = read(page.join("pages.svg"));
    for l in ["page metrics", "FCP", "LCP", "TTI", "Speed Index", "page load", "fifo page", "cats page"] {
        assert!(svg.contains(l), "pages.svg lacks {l}");
    }
    // `[measure] interval = "0ms"`: no time series, so no time-series charts.
    assert!(!page.join("cwnd_fifo.svg").exists());
    if Command::new("rsvg-convert").arg("--version").output().is_ok_and(|o| o.status.success()) {
        for svg in [bulk.join("cwnd.svg"), bulk.join("queue.svg"), page.join("pages.svg")] {
            let png = svg.with_extension("png");
            let st = Command::new("rsvg-convert").args(["-b", "white"]).arg(&svg).arg("-o").arg(&png).status().unwrap();
            assert!(st.success(), "{}", svg.display());
            assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// objects.csv's `object_id` is the `id` of `triage page analyze --json` on the same page:
/// joined on it, URL, type, bytes and CATS level agree for every object of every variant.
#[test]
fn objects_csv_joins_page_analyze_on_the_object_id() {
    let dir = std::env::temp_dir().join(format!("triage-join-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = triage().args(["run", "scenarios/paulirish-slow4g.toml", "--out"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = "../shared/data/pages/paulirish.com.devtoolslog.json";
    let analyzed = json(&["page", "analyze", page, "--json"]);
    let objects = analyzed["objects"].as_array().unwrap();
    let mut r = csv::Reader::from_path(dir.join("objects.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let id: usize = rec[col("object_id")].parse().unwrap();
        let o = &objects[id];
        assert_eq!(o["id"], id as u64);
        assert_eq!(o["url"].as_str().unwrap(), &rec[col("url")]);
        assert_eq!(o["type"].as_str().unwrap(), &rec[col("type")]);
        assert_eq!(o["bytes"].as_u64().unwrap().to_string(), &rec[col("bytes")]);
        assert_eq!(o["cats_level"].as_u64().unwrap().to_string(), &rec[col("cats_level")]);
        rows += 1;
    }
    assert_eq!(rows, 2 * objects.len(), "every object of both variants");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `triage profiles` lists every profile a scenario may name, with the numbers the topology
/// is built from; each one builds as `[topology] kind = "profile"`.
#[test]
fn profiles_lists_every_profile_with_its_numbers() {
    let v = json(&["profiles", "--json"]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 16);
    let wpt_4g = rows.iter().find(|r| r["name"] == "wpt-4g").unwrap();
    // 9 Mbps x 170 ms = 191,250 bytes = 127 full packets; twice that.
    assert_eq!(
        (&wpt_4g["downlink_bps"], &wpt_4g["uplink_bps"], &wpt_4g["rtt_ms"], &wpt_4g["queue_packets"]),
        (
            &serde_json::json!(9_000_000),
            &serde_json::json!(9_000_000),
            &serde_json::json!(170),
            &serde_json::json!(254)
        )
    );
    let table = triage().arg("profiles").output().unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    for r in rows {
        let name = r["name"].as_str().unwrap();
        assert!(text.contains(name), "{name} missing from the table");
        let scenario = format!(
            "name = \"p\"\nstop = \"1s\"\n[topology]\nkind = \"profile\"\nname = \"{name}\"\n\
             [[flows]]\nname = \"f\"\nclient = \"c0\"\nserver = \"s0\"\n"
        );
        triage_sim::scenario::Scenario::parse(&scenario, "p.toml").unwrap().build("p.toml", None).unwrap();
    }
    assert!(text.contains("downlink Mbps") && text.contains("RTT ms"), "{text}");
}

/// Every scenario file that reads nothing from ../shared is built into the binary (the
/// README says so), and `triage scenarios` lists exactly those.
#[test]
fn every_self_contained_scenario_is_built_in() {
    let out = triage().arg("scenarios").output().unwrap();
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut self_contained = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // A path into ../shared, or an LTE path preset (its traces are in ../shared/data/traces).
        let reads_shared = text.lines().any(|l| {
            let code = l.split('#').next().unwrap();
            code.contains("shared/") || code.contains("preset = \"lte-")
        });
        if !reads_shared {
            self_contained.push(path.file_stem().unwrap().to_string_lossy().to_string());
        }
    }
    self_contained.sort();
    let mut listed_sorted = listed.clone();
    listed_sorted.sort();
    assert_eq!(listed_sorted, self_contained);
}

/// `--set PATH=VALUE` changes a field as editing the file would (same JSON), gets the file's
/// checks, and names itself in errors; a scenario also reads from standard input and as JSON.
#[test]
fn set_overrides_stdin_and_json_scenarios() {
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/cats-fifo.toml"))
            .unwrap();
    let edited = text.replace("rate = \"2Mbps\"", "rate = \"4Mbps\"").replace("cc = \"bbr\"", "cc = \"cubic\"");
    assert_ne!(edited, text);
    let dir = std::env::temp_dir().join(format!("triage-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("edited.toml");
    std::fs::write(&file, &edited).unwrap();
    let by_file = triage().args(["run", file.to_str().unwrap(), "--json"]).output().unwrap();
    let by_set = triage()
        .args(["run", "scenarios/cats-fifo.toml", "--json", "--set", "topology.bottleneck.rate=4Mbps"])
        .args(["--set", "transport.cc=cubic"])
        .output()
        .unwrap();
    assert!(by_set.status.success(), "{}", String::from_utf8_lossy(&by_set.stderr));
    // The same document but for the source it names.
    let doc = |bytes: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(bytes).expect("JSON");
        v["input"]["source"] = serde_json::Value::Null;
        v
    };
    assert!(doc(&by_file.stdout) == doc(&by_set.stdout), "--set differs from the edited file");
    let unchanged = triage().args(["run", "scenarios/cats-fifo.toml", "--json"]).output().unwrap();
    assert!(doc(&unchanged.stdout) != doc(&by_set.stdout), "the override changed nothing");

    // Errors: the file's own message for a bad value, with the override named; bad paths.
    for (set, want) in [
        ("topology.bottleneck.rate=fast", "(with --set topology.bottleneck.rate=fast): TOML parse error"),
        ("topology.bottleneck.rate=fast", "topology.bottleneck.rate: expected a rate like"),
        ("flows[3].name=x", "--set flows[3].name=x: flows has 1 entry, so there is no [3]"),
        ("transport.nonsense=1", "unknown field `nonsense`"),
        ("rate", "--set rate: expected PATH=VALUE"),
    ] {
        let out = triage().args(["run", "scenarios/cats-fifo.toml", "--set", set]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{set}: {err}");
        assert!(err.contains(want), "{set}: expected {want:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
    }

    // Standard input, TOML and JSON; a JSON file.
    let stdin_run = |input: &str| {
        use std::io::Write;
        let mut child = triage()
            .args(["run", "-", "--json"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let toml_out = stdin_run(&edited);
    assert!(toml_out.status.success(), "{}", String::from_utf8_lossy(&toml_out.stderr));
    assert!(doc(&toml_out.stdout) == doc(&by_file.stdout));
    let as_json = serde_json::to_string(&toml::from_str::<serde_json::Value>(&edited).unwrap()).unwrap();
    let json_out = stdin_run(&as_json);
    assert!(json_out.status.success(), "{}", String::from_utf8_lossy(&json_out.stderr));
    assert!(doc(&json_out.stdout) == doc(&by_file.stdout));
    let json_file = dir.join("edited.json");
    std::fs::write(&json_file, &as_json).unwrap();
    let out = triage().args(["run", json_file.to_str().unwrap(), "--json"]).output().unwrap();
    assert!(doc(&out.stdout) == doc(&by_file.stdout));
    let bad = stdin_run("{\"name\": null}");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("standard input: name: null has no TOML form"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `reproduce eecn --mode quic`: three schemes (VCP has no QUIC form), the mode in the JSON,
/// and the multi-hop EF2 that never finishes (EECN's Algorithm 2 at β = 0, README) said on
/// its charts rather than drawn as a bar of 0.
#[test]
fn reproduce_eecn_in_quic_mode() {
    let v = json(&["reproduce", "eecn", "--mode", "quic", "--json"]);
    assert_eq!(v["mode"], "quic");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    assert!(runs.iter().all(|r| r["scheme"] != "vcp"));
    let dir = std::env::temp_dir().join(format!("triage-eecn-quic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = triage().args(["reproduce", "eecn", "--mode", "quic", "--out"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("QUIC mode: levels read from the ECN counts") && !text.contains("\nVCP "), "{text}");
    let fig = std::fs::read_to_string(dir.join("fig9b_fct_elephants_multihop.svg")).unwrap();
    assert_eq!(fig.matches("not done").count(), 1);
    let table = std::fs::read_to_string(dir.join("table4.csv")).unwrap();
    assert!(!table.contains(",vcp,"));
    let _ = std::fs::remove_dir_all(&dir);
    // A TCP run names its mode too.
    assert_eq!(json(&["reproduce", "eecn", "--json"])["mode"], "tcp");
}
