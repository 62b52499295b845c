//! `triage reproduce quic` end to end: the JSON shape, the files of `--out`, errors for bad
//! values, and the requirement: lossless, at 2 Mbps / 25 ms, 5 Mbps / 50 ms and
//! 10 Mbps / 10 ms, NewReno and CUBIC, every group of fifo, rr, prio, dg01 and dgall within 2% of
//! the real QUIC stack's medians and `tcp` within 2% of Linux TCP's (the largest difference is
//! 1.2%; the reference's medians are whole milliseconds, up to 0.9% of a 53 ms group).

mod common;
use std::path::PathBuf;
use std::process::{Command, Output};

fn triage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_triage"))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(args)
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = triage(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `reproduce quic --loss 5% --paired --json` for controller `cc`, the comma-separated
/// `modes` and each of `settings`, against the reference runs of `files`.
fn paired(cc: &str, modes: &str, settings: &[&str], files: &[&str]) -> serde_json::Value {
    let mut args = vec!["reproduce", "quic", "--loss", "5%", "--modes", modes, "--cc", cc, "--paired", "--json"];
    for s in settings {
        args.extend(["--setting", s]);
    }
    for f in files {
        args.extend(["--reference-runs", f]);
    }
    json(&args)
}

const GROUPS: [&str; 5] = ["P4", "P3", "P2", "P1", "P0"];

#[test]
fn json_has_the_documented_shape() {
    let v = json(&["reproduce", "quic", "--modes", "fifo,dg01", "--runs", "2", "--seed", "7", "--json"]);
    let obj = v.as_object().unwrap();
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["reference", "runs"]);
    let runs = v["runs"].as_array().unwrap();
    // 2 modes x 2 runs, modes in the order given, seeds 7 and 8.
    assert_eq!(runs.len(), 4);
    let got: Vec<(&str, u64)> =
        runs.iter().map(|r| (r["mode"].as_str().unwrap(), r["seed"].as_u64().unwrap())).collect();
    assert_eq!(got, [("fifo", 7), ("fifo", 8), ("dg01", 7), ("dg01", 8)]);
    for r in runs {
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["cc", "groups", "loss", "mode", "owd_ms", "rate_bps", "seed"]);
        assert_eq!(r["cc"], "newreno");
        assert_eq!(r["rate_bps"], 2_000_000);
        assert_eq!(r["owd_ms"], 25.0);
        assert_eq!(r["loss"], 0.0);
        let groups = r["groups"].as_object().unwrap();
        assert_eq!(groups.keys().collect::<Vec<_>>().len(), 5);
        for g in GROUPS {
            let x = &groups[g];
            assert_eq!(x.as_object().unwrap().keys().collect::<Vec<_>>(), ["chunks", "completed_ms", "lost"]);
            assert!(x["completed_ms"].as_f64().unwrap() > 0.0, "{g}: {x}");
            assert_eq!(x["lost"], 0, "lossless run lost chunks: {r}");
        }
    }
    // The JSON text itself lists the groups P4..P0, as the server writes them; the same arguments
    // give the same bytes.
    let text = String::from_utf8(triage(&["reproduce", "quic", "--modes", "fifo", "--json"]).stdout).unwrap();
    assert_eq!(text.as_bytes(), triage(&["reproduce", "quic", "--modes", "fifo", "--json"]).stdout);
    let at: Vec<usize> = GROUPS.iter().map(|g| text.find(&format!("\"{g}\"")).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    // dg01 sends P1 (25600 bytes) and P0 (8192 bytes) in 1405-byte chunks: ceil(25600/1405) = 19,
    // ceil(8192/1405) = 6; P4..P2 are streams (no chunks).
    let dg01 = &runs[2]["groups"];
    let chunks: Vec<u64> = GROUPS.iter().map(|g| dg01[g]["chunks"].as_u64().unwrap()).collect();
    assert_eq!(chunks, [0, 0, 0, 19, 6]);
    // The reference rows of the settings run: results.md, "2 Mbps / 25 ms | 0% | newreno | fifo |
    // 770 | 1024 | 1196 | 1302 | 1333" and "dg01 | 1330 | 955 | 771 | 233ᵈ | 268ᵈ | P1 0/57, P0 0/18".
    let refs = v["reference"].as_array().unwrap();
    assert_eq!(refs.len(), 2);
    assert_eq!(refs[0]["mode"], "fifo");
    assert_eq!(refs[0]["stack"], "quinn 0.11.12");
    assert_eq!(refs[0]["runs"], 3);
    let ms: Vec<u64> = GROUPS.iter().map(|g| refs[0]["groups"][g]["completed_ms"].as_u64().unwrap()).collect();
    assert_eq!(ms, [770, 1024, 1196, 1302, 1333]);
    assert_eq!(refs[1]["mode"], "dg01");
    assert_eq!(refs[1]["groups"]["P1"]["chunks"], 57);
    assert_eq!(refs[1]["groups"]["P0"]["chunks"], 18);
    assert_eq!(refs[1]["groups"]["P1"]["completed_ms"], 233);
    // No reference at a setting the reference did not run.
    let v = json(&["reproduce", "quic", "--rate", "3Mbps", "--modes", "fifo", "--json"]);
    assert_eq!(v["reference"].as_array().unwrap().len(), 0);
    assert_eq!(v["runs"][0]["rate_bps"], 3_000_000);
}

#[test]
fn out_writes_the_csv_and_one_svg_per_mode() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("reproduce-quic-out");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let out = triage(&["reproduce", "quic", "--modes", "tcp,fifo,dgall", "--runs", "3", "--out", d]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    // Each row starts with the run's parameters (no variant; the run's seed).
    assert_eq!(
        csv.lines().next().unwrap(),
        "scenario,variant,seed,triage_version,mode,cc,rate_bps,owd_ms,loss,group,completed_ms,chunks,lost,datagram"
    );
    assert!(csv.lines().nth(1).unwrap().starts_with(&format!("reproduce quic,,1,{},tcp,", env!("CARGO_PKG_VERSION"))));
    let lines: Vec<String> = csv.lines().map(|l| unparameterized(l, 5)).collect();
    // 3 modes x 3 runs x 5 groups.
    assert_eq!(lines.len(), 1 + 3 * 3 * 5);
    assert!(lines[1..].iter().all(|l| l.split(',').count() == 11), "{csv}");
    assert!(lines[1].starts_with("tcp,newreno,2000000,25,0,1,P4,"), "{}", lines[1]);
    // The last row: dgall, seed 3, P0 as 6 chunks, none lost.
    assert!(lines[45].starts_with("dgall,newreno,2000000,25,0,3,P0,"), "{}", lines[45]);
    assert!(lines[45].ends_with(",6,0,true"), "{}", lines[45]);
    for m in ["tcp", "fifo", "dgall"] {
        let svg = std::fs::read_to_string(dir.join(format!("{m}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{m}");
        for label in ["P4", "P0", "triage (median of 3 runs)", "triage, each run"] {
            assert!(svg.contains(label), "{m}.svg lacks {label}");
        }
    }
    assert!(std::fs::read_to_string(dir.join("tcp.svg")).unwrap().contains("Linux TCP (median of 3 runs)"));
    assert!(std::fs::read_to_string(dir.join("fifo.svg")).unwrap().contains("quinn 0.11.12"));
    // Several settings: one SVG per setting and mode.
    let out = triage(&[
        "reproduce",
        "quic",
        "--modes",
        "fifo",
        "--setting",
        "5Mbps/50ms",
        "--setting",
        "10Mbps/10ms",
        "--out",
        d,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("fifo_5Mbps_50ms.svg").exists());
    assert!(dir.join("fifo_10Mbps_10ms.svg").exists());
    assert_eq!(std::fs::read_to_string(dir.join("runs.csv")).unwrap().lines().count(), 1 + 2 * 5);
}

#[test]
fn the_table_shows_ours_beside_the_reference() {
    let out = triage(&["reproduce", "quic", "--modes", "tcp,dg01,cats"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2 Mbps / 25 ms one-way, newreno, loss 0%"), "{text}");
    // results.md: Linux TCP at 2 Mbps / 25 ms, P4 744; quinn dg01 P1 "233ᵈ" over 57 chunks.
    assert!(text.contains("Linux") && text.contains(" 744 "), "{text}");
    assert!(text.contains("233ᵈ 0/57"), "{text}");
    assert!(text.contains("ᵈ 0/19"), "ours: 19 chunks of P1 in one run\n{text}");
    assert!(text.contains("(no reference at this setting)"), "cats has no reference\n{text}");
}

/// A bad value exits non-zero with a message that names it, never a panic.
#[test]
fn bad_values_are_rejected_with_a_clear_message() {
    let cases: [(&[&str], &str); 10] = [
        (&["--cc", "vegas"], "vegas"),
        (&["--rate", "2MBps"], "--rate"),
        (&["--rate", "0bps"], "--rate"),
        (&["--owd", "25"], "--owd"),
        (&["--owd", "20s"], "--owd"),
        (&["--loss", "0.7"], "--loss"),
        (&["--loss", "lots"], "lots"),
        (&["--modes", "fifo,dg02"], "dg02"),
        (&["--modes", "fifo,fifo"], "fifo"),
        (&["--setting", "2Mbps"], "--setting"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["reproduce", "quic"];
        all.extend_from_slice(args);
        let out = triage(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let out = triage(&["reproduce", "quic", "--runs", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runs"));
}

#[test]
fn help_lists_the_modes() {
    let out = triage(&["reproduce", "quic", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for m in ["tcp", "fifo", "rr", "prio", "rfc9218", "cats", "dg01", "dgall"] {
        assert!(text.contains(&format!("\n  {m} ")), "--help lacks mode {m}:\n{text}");
    }
}

/// Runs `modes` at the three reference settings (lossless) with `cc` and returns every group
/// further than 2% from the reference's median, as readable lines.
fn misses(cc: &str, modes: &str) -> Vec<String> {
    let v = json(&[
        "reproduce",
        "quic",
        "--cc",
        cc,
        "--modes",
        modes,
        "--setting",
        "2Mbps/25ms",
        "--setting",
        "5Mbps/50ms",
        "--setting",
        "10Mbps/10ms",
        "--json",
    ]);
    let runs = v["runs"].as_array().unwrap();
    let refs = v["reference"].as_array().unwrap();
    let n_modes = modes.split(',').count();
    assert_eq!(runs.len(), 3 * n_modes);
    assert_eq!(refs.len(), 3 * n_modes, "every setting and mode has a reference row");
    let mut bad = Vec::new();
    for r in runs {
        let key = |x: &serde_json::Value| (x["mode"].clone(), x["rate_bps"].clone(), x["owd_ms"].clone());
        let rf = refs.iter().find(|x| key(x) == key(r)).unwrap();
        for g in GROUPS {
            let want = rf["groups"][g]["completed_ms"].as_f64().unwrap();
            let got = r["groups"][g]["completed_ms"].as_f64();
            let ok = got.is_some_and(|x| (x - want).abs() <= 0.02 * want);
            if !ok {
                bad.push(format!(
                    "{cc} {} {} bps / {} ms {g}: ours {got:?}, reference {want}",
                    r["mode"], r["rate_bps"], r["owd_ms"]
                ));
            }
        }
    }
    bad
}

/// The requirement for what works today: TCP mode against Linux TCP, and the QUIC modes
/// that need no new scheduler (fifo, and dgall whose groups all go as datagrams), with NewReno.
#[test]
fn newreno_tcp_fifo_dgall_within_2pct_of_the_reference() {
    let bad = misses("newreno", "tcp,fifo,dgall");
    assert!(bad.is_empty(), "{} groups off by more than 2%:\n{}", bad.len(), bad.join("\n"));
}

/// Round robin, strict priority and dg01 (P1, P0 as datagrams, the rest round robin).
#[test]
fn newreno_rr_prio_dg01_within_2pct_of_the_reference() {
    let bad = misses("newreno", "rr,prio,dg01");
    assert!(bad.is_empty(), "{} groups off by more than 2%:\n{}", bad.len(), bad.join("\n"));
}

/// Every mode with CUBIC.
#[test]
fn cubic_every_mode_within_2pct_of_the_reference() {
    let bad = misses("cubic", "tcp,fifo,rr,prio,dg01,dgall");
    assert!(bad.is_empty(), "{} groups off by more than 2%:\n{}", bad.len(), bad.join("\n"));
}

/// Per group of dg01's datagram groups (P1, P0): chunks lost and sent, and the lost count of
/// each run, from JSON lines of the reference (`kind = "quic"`, mode dg01, 5% loss; every
/// controller: datagram chunks are never resent, so the controller only moves when they go).
fn reference_chunk_losses(path: &std::path::Path, rate: f64, owd_ms: f64) -> Vec<(String, u64, u64, Vec<u64>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out: Vec<(String, u64, u64, Vec<u64>)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["kind"] != "quic" || r["mode"] != "dg01" || r["loss"] != 0.05 || r["rate"] != rate || r["owd_ms"] != owd_ms
        {
            continue;
        }
        for g in r["client"]["groups"].as_array().unwrap().iter().filter(|g| g["mode"] != "stream") {
            let name = g["name"].as_str().unwrap().to_string();
            let (lost, chunks) = (g["lost"].as_u64().unwrap(), g["chunks"].as_u64().unwrap());
            match out.iter_mut().find(|x| x.0 == name) {
                Some(x) => {
                    x.1 += lost;
                    x.2 += chunks;
                    x.3.push(lost);
                }
                None => out.push((name, lost, chunks, vec![lost])),
            }
        }
    }
    out
}

/// The must-show 4: dg01 at the reference's three settings with 5% loss, 30 seeds of
/// ours (CUBIC). Per datagram group, the chunks we lose are within the reference's spread: the
/// median lost per run is the reference's (±1), our 90th percentile at most one more than the
/// reference's worst run, and the loss rate over all runs is not told apart from the reference's
/// by a two-proportion z-test at 95%. The reference: the 30 runs of set c
/// (docs/data/quicref-loss5-dgram.jsonl) at 2 Mbps / 25 ms, and the 9 runs (3 per controller) of
/// ../shared/reference/quic/results/raw.jsonl at the other two.
#[test]
fn dg01_chunk_losses_at_5pct_are_within_the_references_spread() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let median = |v: &mut Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    for (setting, rate, owd, file) in [
        ("2Mbps/25ms", 2e6, 25.0, root.join("docs/data/quicref-loss5-dgram.jsonl")),
        ("5Mbps/50ms", 5e6, 50.0, root.join("../shared/reference/quic/results/raw.jsonl")),
        ("10Mbps/10ms", 10e6, 10.0, root.join("../shared/reference/quic/results/raw.jsonl")),
    ] {
        let reference = reference_chunk_losses(&file, rate, owd);
        assert_eq!(reference.len(), 2, "{setting}: P1 and P0 in {}", file.display());
        let v = json(&[
            "reproduce",
            "quic",
            "--modes",
            "dg01",
            "--loss",
            "5%",
            "--runs",
            "30",
            "--cc",
            "cubic",
            "--setting",
            setting,
            "--json",
        ]);
        for (g, ref_lost, ref_sent, mut ref_runs) in reference {
            let mut ours: Vec<u64> =
                v["runs"].as_array().unwrap().iter().map(|r| r["groups"][&g]["lost"].as_u64().unwrap()).collect();
            let sent: u64 =
                v["runs"].as_array().unwrap().iter().map(|r| r["groups"][&g]["chunks"].as_u64().unwrap()).sum();
            let lost: u64 = ours.iter().sum();
            let (mo, mr) = (median(&mut ours), median(&mut ref_runs));
            assert!(mo.abs_diff(mr) <= 1, "{setting} {g}: median lost per run {mo}, reference {mr}");
            // Nine of every ten of our runs lose no more than the reference's worst run (+1).
            let (p90, xr) = (ours[ours.len() * 9 / 10 - 1], *ref_runs.iter().max().unwrap());
            assert!(p90 <= xr + 1, "{setting} {g}: p90 lost per run {p90}, reference at most {xr}");
            let (p1, p2) = (lost as f64 / sent as f64, ref_lost as f64 / ref_sent as f64);
            let p = (lost + ref_lost) as f64 / (sent + ref_sent) as f64;
            let z = (p1 - p2) / (p * (1.0 - p) * (1.0 / sent as f64 + 1.0 / ref_sent as f64)).sqrt();
            assert!(z.abs() < 1.96, "{setting} {g}: ours {lost}/{sent}, reference {ref_lost}/{ref_sent}, z = {z:.2}");
        }
    }
}

/// A CSV row as it was before the run's parameters led each row: the columns after the
/// four parameters, with the seed parameter put back at `seed_at`.
fn unparameterized(line: &str, seed_at: usize) -> String {
    let c: Vec<&str> = line.split(',').collect();
    let mut row: Vec<&str> = c[4..].to_vec();
    row.insert(seed_at, c[2]);
    row.join(",")
}

/// Per run of the reference (`kind = "quic"`, 5% loss, the given controller, mode and
/// setting), when the client held the whole page: the last group's completion.
fn reference_page_ms(path: &std::path::Path, cc: &str, mode: &str, rate: f64, owd_ms: f64) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["kind"] != "quic"
            || r["cc"] != cc
            || r["mode"] != mode
            || r["loss"] != 0.05
            || r["rate"] != rate
            || r["owd_ms"] != owd_ms
        {
            continue;
        }
        let groups = r["client"]["groups"].as_array().unwrap();
        out.push(groups.iter().map(|g| g["done_ms"].as_f64().unwrap()).fold(0.0, f64::max));
    }
    out
}

/// Each of our runs' page: its last group's completion, ms.
fn our_pages(v: &serde_json::Value) -> Vec<f64> {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| GROUPS.iter().map(|g| r["groups"][g]["completed_ms"].as_f64().unwrap()).fold(0.0, f64::max))
        .collect()
}

/// `--reference-runs`: the reference's own runs pooled from two files, and ours, side by
/// side as spreads; the page's medians are the ones computed here from the same runs, and a
/// file that cannot be read or holds a bad record is an error naming it.
#[test]
fn reference_runs_put_their_spread_beside_ours() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/data");
    let files = ["quicref-loss5-streams.jsonl", "quicref-loss5-streams-repeat.jsonl"];
    let v = json(&[
        "reproduce",
        "quic",
        "--loss",
        "5%",
        "--runs",
        "30",
        "--modes",
        "fifo",
        "--setting",
        "2Mbps/25ms",
        "--reference-runs",
        "docs/data/quicref-loss5-streams.jsonl",
        "--reference-runs",
        "docs/data/quicref-loss5-streams-repeat.jsonl",
        "--json",
    ]);
    let rr = &v["reference_runs"];
    assert_eq!(rr["files"].as_array().unwrap().len(), 2);
    let cells = rr["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{rr}");
    let c = &cells[0];
    assert_eq!(
        (c["mode"].as_str(), c["cc"].as_str(), c["rate_bps"].as_u64()),
        (Some("fifo"), Some("newreno"), Some(2_000_000))
    );
    let groups: Vec<&str> = c["groups"].as_array().unwrap().iter().map(|g| g["group"].as_str().unwrap()).collect();
    assert_eq!(groups, ["P4", "P3", "P2", "P1", "P0", "page"]);
    let page = &c["groups"][5];
    let reference: Vec<f64> =
        files.iter().flat_map(|f| reference_page_ms(&data.join(f), "newreno", "fifo", 2e6, 25.0)).collect();
    assert_eq!(page["reference"]["runs"], 60);
    assert_eq!(page["reference"]["median_ms"].as_f64().unwrap(), common::median(reference));
    let ours = our_pages(&v);
    assert_eq!(page["triage"]["runs"], 30);
    assert_eq!(page["triage"]["median_ms"].as_f64().unwrap(), common::median(ours));
    // Without the option the JSON has no such key.
    assert!(json(&["reproduce", "quic", "--modes", "fifo", "--json"]).get("reference_runs").is_none());
    // Errors name the file (and the line and field).
    let out = triage(&["reproduce", "quic", "--reference-runs", "no/such.jsonl"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reference-runs no/such.jsonl"));
    let bad = std::env::temp_dir().join(format!("triage-bad-runs-{}.jsonl", std::process::id()));
    std::fs::write(&bad, "{\"kind\":\"quic\",\"rate\":2e6}\n").unwrap();
    let out = triage(&["reproduce", "quic", "--reference-runs", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let _ = std::fs::remove_file(&bad);
    assert!(!out.status.success() && err.contains(":1: field \"owd_ms\""), "{err}");
}

/// `--paired`: one run per reference run, meeting that run's losses (tunlink.py's draws from
/// its seed). Against Linux TCP's 30 runs per setting (docs/data/linuxtcp-loss5.jsonl), the
/// median of the per-run ratios is within 2% for NewReno and CUBIC at 2 Mbps / 25 ms and
/// 10 Mbps / 10 ms (measured: +0.9%, −0.5%, +0.5%, −0.7%; before Linux's receiver ACKs:
/// +4.1%, +0.6%, +3.0%, +0.1%; before the Linux retransmission timer, no growth on duplicate
/// ACKs and CUBIC's whole-segment reduction too: +8.0%, −0.5%, −6.8%, −14.7%). A third of
/// the pairs or more agree within 5% (measured 13, 16, 14, 15 of 30), and some to the
/// millisecond (1, 4, 2, 1 within 3 ms).
#[test]
fn paired_runs_meet_the_references_losses_and_agree_with_linux() {
    for cc in ["newreno", "cubic"] {
        let v = paired(cc, "tcp", &["2Mbps/25ms", "10Mbps/10ms"], &["docs/data/linuxtcp-loss5.jsonl"]);
        let cells = v["paired"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "{cc}");
        for c in cells {
            let pairs = c["pairs"].as_array().unwrap();
            assert_eq!(pairs.len(), 30, "{cc}");
            // The runs were the reference's seeds, in file order, and ours ran one each.
            let seeds: Vec<u64> = pairs.iter().map(|p| p["seed"].as_u64().unwrap()).collect();
            assert!(seeds.windows(2).all(|w| w[1] == w[0] + 1), "{seeds:?}");
            let ratio = c["median_ratio_minus_1"].as_f64().unwrap();
            assert!(ratio.abs() < 0.02, "{cc} {}: median ratio {ratio:+.3}", c["rate_bps"]);
            let ms = |p: &serde_json::Value| (p["triage_ms"].as_f64().unwrap(), p["reference_ms"].as_f64().unwrap());
            let close = pairs.iter().map(ms).filter(|(a, b)| (a / b - 1.0).abs() < 0.05).count();
            assert!(close >= 10, "{cc} {}: {close} pairs within 5%", c["rate_bps"]);
            let exact = pairs.iter().map(ms).filter(|(a, b)| (a - b).abs() <= 3.0).count();
            assert!(exact >= 1, "{cc} {}: {exact} pairs within 3 ms", c["rate_bps"]);
        }
        assert_eq!(v["runs"].as_array().unwrap().len(), 60);
    }
    // Two files of the same seeds (a repeat meets the same losses): each reference run pairs once.
    let v = paired(
        "newreno",
        "fifo",
        &["2Mbps/25ms"],
        &["docs/data/quicref-loss5-streams.jsonl", "docs/data/quicref-loss5-streams-repeat.jsonl"],
    );
    let pairs = v["paired"][0]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 60);
    let refs: Vec<f64> = pairs.iter().map(|p| p["reference_ms"].as_f64().unwrap()).collect();
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/data");
    let mut want: Vec<f64> = ["quicref-loss5-streams.jsonl", "quicref-loss5-streams-repeat.jsonl"]
        .iter()
        .flat_map(|f| reference_page_ms(&data.join(f), "newreno", "fifo", 2e6, 25.0))
        .collect();
    let mut got = refs.clone();
    want.sort_by(f64::total_cmp);
    got.sort_by(f64::total_cmp);
    assert_eq!(got, want);
    // --out draws the reference runs' medians when they are given (not the embedded 3 runs).
    let dir = std::env::temp_dir().join(format!("triage-paired-out-{}", std::process::id()));
    let out = triage(&[
        "reproduce",
        "quic",
        "--loss",
        "5%",
        "--modes",
        "tcp",
        "--reference-runs",
        "docs/data/linuxtcp-loss5.jsonl",
        "--paired",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(dir.join("tcp.svg")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(svg.contains("Linux TCP (median of 30 runs)") && svg.contains("triage (median of 30 runs)"));
    // Without the option no key; the option needs reference runs and takes no --runs.
    assert!(json(&["reproduce", "quic", "--modes", "fifo", "--json"]).get("paired").is_none());
    assert!(!triage(&["reproduce", "quic", "--paired"]).status.success());
    let out =
        triage(&["reproduce", "quic", "--paired", "--runs", "3", "--reference-runs", "docs/data/linuxtcp-loss5.jsonl"]);
    assert!(!out.status.success());
    // A setting no reference run has: an error that says so.
    let out = triage(&[
        "reproduce",
        "quic",
        "--loss",
        "5%",
        "--modes",
        "tcp",
        "--setting",
        "5Mbps/50ms",
        "--reference-runs",
        "docs/data/linuxtcp-loss5.jsonl",
        "--paired",
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success() && err.contains("--paired: no run of docs/data/linuxtcp-loss5.jsonl has a seed"),
        "{err}"
    );
}

/// QUIC mode paired with quinn's runs (set a and its repeat, which share their seeds): the
/// median of the per-pair ratios within 5% over the 60 pairs of each cell, within 2.5%
/// over the repeat's 30 alone, and within 3% against a third run of two cells made on this
/// project's machine (`docs/data/quicref-loss5-streams-here.jsonl`). Set a ran while its
/// machine's load rose and is about 6% slower than its repeat pair by pair; the third run
/// agrees with the repeat (ours against it: NewReno 10 Mbps fifo +2.5%, CUBIC prio +0.2%).
/// Measured, 60 pairs (fifo, prio at 2 Mbps / 25 ms, then 10 Mbps / 10 ms): NewReno +0.3%,
/// −0.5%, −2.8%, −4.5%; CUBIC −0.2%, −0.5%, −2.8%, −2.2%; the repeat alone: NewReno +1.5%,
/// −1.7%, +1.1%, −2.1%; CUBIC −0.2%, −0.3%, −0.4%, −0.3%. Before an ACK that declares a
/// loss stopped growing the halved window (and ending the new recovery period at once),
/// NewReno read −2.9% to −9.0% over the 60; before QUIC mode's CUBIC followed quinn's
/// congestion avoidance, CUBIC prio at 10 Mbps read +3.1% (+7.3% against the repeat).
#[test]
fn quic_pages_paired_with_quinns_runs() {
    let both = ["docs/data/quicref-loss5-streams.jsonl", "docs/data/quicref-loss5-streams-repeat.jsonl"];
    for (files, pairs, bound) in [(&both[..], 60, 0.05), (&both[1..], 30, 0.025)] {
        for cc in ["cubic", "newreno"] {
            let v = paired(cc, "fifo,prio", &["2Mbps/25ms", "10Mbps/10ms"], files);
            let cells = v["paired"].as_array().unwrap();
            assert_eq!(cells.len(), 4, "{cc}");
            for c in cells {
                assert_eq!(c["pairs"].as_array().unwrap().len(), pairs);
                let ratio = c["median_ratio_minus_1"].as_f64().unwrap();
                assert!(
                    ratio.abs() < bound,
                    "{cc} {} {} over {pairs} pairs: median ratio {ratio:+.3}",
                    c["mode"],
                    c["rate_bps"]
                );
            }
        }
    }
    // quinn run here through the reference's own runner, two cells (measured +2.5%, +0.2%).
    for (cc, mode) in [("newreno", "fifo"), ("cubic", "prio")] {
        let v = paired(cc, mode, &["10Mbps/10ms"], &["docs/data/quicref-loss5-streams-here.jsonl"]);
        let c = &v["paired"][0];
        assert_eq!(c["pairs"].as_array().unwrap().len(), 30);
        let ratio = c["median_ratio_minus_1"].as_f64().unwrap();
        assert!(ratio.abs() < 0.03, "{cc} {mode} against the runs made here: median ratio {ratio:+.3}");
    }
}
