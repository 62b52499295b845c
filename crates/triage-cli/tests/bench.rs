//! `triage bench`: several scenarios in one run, their transport modes, counts and heap
//! allocations per packet-hop, and a reference command timed in the same run. Wall times
//! are only checked to be there: speed is never asserted.

use std::path::PathBuf;
use std::process::Command;

fn bench(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_triage"))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn times_tcp_quic_and_multipath_side_by_side_with_a_reference() {
    let v = bench(&[
        "--scenario",
        "eecn-dumbbell",
        "--scenario",
        "benchmarks/eecn-dumbbell-quic.toml",
        "--scenario",
        "benchmarks/multipath-bulk.toml",
        "--repeat",
        "2",
        "--reference",
        "true",
    ]);
    assert_eq!(v["repetitions"], 2);
    let s = v["scenarios"].as_array().unwrap();
    assert_eq!(s.len(), 3);
    // The counts are those of `triage run` on the same scenarios (README "Performance").
    assert_eq!((s[0]["scenario"].as_str(), s[0]["mode"].as_str()), (Some("eecn-dumbbell"), Some("tcp")));
    assert_eq!((s[0]["packet_hops"].as_u64(), s[0]["events"].as_u64()), (Some(781_850), Some(1_563_975)));
    assert_eq!((s[1]["scenario"].as_str(), s[1]["mode"].as_str()), (Some("eecn-dumbbell-quic"), Some("quic")));
    assert_eq!(s[1]["packet_hops"].as_u64(), Some(794_671));
    assert_eq!((s[2]["scenario"].as_str(), s[2]["mode"].as_str()), (Some("multipath-bulk"), Some("quic-multipath")));
    assert_eq!(s[2]["packet_hops"].as_u64(), Some(132_580));
    for t in s {
        let med = t["median_wall_s"].as_f64().unwrap();
        assert!(t["min_wall_s"].as_f64().unwrap() <= med && med <= t["max_wall_s"].as_f64().unwrap());
        assert!(t["reference_over_ours"].as_f64().is_some());
    }
    // Every mode recycles packet boxes (QUIC mode their datagram boxes too, and its
    // sent-packet records live in a ring buffer; a dropped or lost packet's box comes back
    // too): (almost) no heap allocation per packet-hop once the connections are up. What
    // is left: buffers reaching sizes they never had, and a QUIC packet with more than two
    // frames spills them to the heap.
    for t in s {
        let steady = t["steady_allocations_per_packet_hop"].as_f64().unwrap();
        assert!(steady < 0.01, "{}: {steady} allocations per packet-hop in steady state", t["scenario"]);
    }
    assert_eq!(v["reference"]["command"], "true");
    // The speed ratio's spread: each repetition's reference wall time over the scenario's in
    // the same repetition; with two repetitions the middle half runs from one to the other.
    let ref_walls: Vec<f64> =
        v["reference"]["wall_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(ref_walls.len(), 2);
    for t in s {
        let r: Vec<f64> = (0..2).map(|k| ref_walls[k] / t["wall_s"][k].as_f64().unwrap()).collect();
        let half = &t["reference_over_ours_middle_half"];
        assert!((half[0].as_f64().unwrap() - r[0].min(r[1])).abs() <= 1e-9 * r[0].max(r[1]), "{half}");
        assert!((half[1].as_f64().unwrap() - r[0].max(r[1])).abs() <= 1e-9 * r[0].max(r[1]), "{half}");
    }
    // Each scenario after the first: its time per packet-hop over the first's, the median of
    // the repetitions' ratios (two here: the mean of the two), from the walls it reports.
    assert!(s[0].get("per_hop_cost_vs_first").is_none());
    let per_hop = |t: &serde_json::Value, r: usize| {
        t["wall_s"].as_array().unwrap()[r].as_f64().unwrap() / t["packet_hops"].as_f64().unwrap()
    };
    for t in &s[1..] {
        assert_eq!(t["wall_s"].as_array().unwrap().len(), 2);
        let want = (per_hop(t, 0) / per_hop(&s[0], 0) + per_hop(t, 1) / per_hop(&s[0], 1)) / 2.0;
        let got = t["per_hop_cost_vs_first"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-12 * want, "{}: {got} against {want}", t["scenario"]);
        // With two pairs the middle half runs from the smaller ratio to the larger.
        let (r0, r1) = (per_hop(t, 0) / per_hop(&s[0], 0), per_hop(t, 1) / per_hop(&s[0], 1));
        let half: Vec<f64> =
            t["per_hop_cost_vs_first_middle_half"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        for (h, w) in half.iter().zip([r0.min(r1), r0.max(r1)]) {
            assert!((h - w).abs() <= 1e-12 * w, "{}: {half:?} against {r0}, {r1}", t["scenario"]);
        }
        assert_eq!(half.len(), 2);
    }
    // The steady state: the second half of every repetition but the first (one here), its
    // wall time over its packet-hops, and the same ratio between the scenarios.
    let steady = |t: &serde_json::Value| {
        let walls = t["steady_wall_s"].as_array().unwrap();
        assert_eq!(walls.len(), 1, "{}", t["scenario"]);
        walls[0].as_f64().unwrap() / t["steady_packet_hops"].as_f64().unwrap()
    };
    for t in s {
        let hops = t["steady_packet_hops"].as_u64().unwrap();
        assert!(hops > 0 && hops < t["packet_hops"].as_u64().unwrap(), "{}: {hops}", t["scenario"]);
        let got = t["steady_ns_per_packet_hop"].as_f64().unwrap();
        assert!((got - steady(t) * 1e9).abs() <= 1e-9 * got, "{}: {got}", t["scenario"]);
    }
    // The first run fixes the split at half its end (eecn-dumbbell ends at 21 s: 10.5 s), so
    // the second halves are the same packets in every later run.
    let halves: Vec<_> = s.iter().map(|t| t["steady_packet_hops"].as_u64()).collect();
    assert_eq!(halves, [Some(385_704), Some(396_587), Some(69_390)]);
    assert!(s[0].get("steady_per_hop_cost_vs_first").is_none());
    for t in &s[1..] {
        let want = steady(t) / steady(&s[0]);
        let got = t["steady_per_hop_cost_vs_first"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-12 * want, "{}: {got} against {want}", t["scenario"]);
        // One pair: its ratio is both quartiles.
        assert_eq!(t["steady_per_hop_cost_vs_first_middle_half"], serde_json::json!([got, got]));
    }
    assert!(s[0].get("per_hop_cost_vs_first_middle_half").is_none());
    // The run's spread: in each repetition, the largest of the three costs per packet-hop
    // over the smallest, from the walls each scenario reports; two repetitions give the mean
    // of the two as the median and the two themselves as the middle half.
    let names = ["eecn-dumbbell", "eecn-dumbbell-quic", "multipath-bulk"];
    let (mut ratios, mut top, mut bottom) = (Vec::new(), [0; 3], [0; 3]);
    for r in 0..2 {
        let c: Vec<f64> = s.iter().map(|t| per_hop(t, r)).collect();
        let hi = (0..3).fold(0, |b, i| if c[i] > c[b] { i } else { b });
        let lo = (0..3).fold(0, |b, i| if c[i] < c[b] { i } else { b });
        ratios.push(c[hi] / c[lo]);
        top[hi] += 1;
        bottom[lo] += 1;
    }
    let sp = &v["spread"];
    let got = sp["per_hop_cost_max_over_min"].as_f64().unwrap();
    let want = (ratios[0] + ratios[1]) / 2.0;
    assert!((got - want).abs() <= 1e-12 * want, "{sp}: against {ratios:?}");
    let half: Vec<f64> =
        sp["per_hop_cost_max_over_min_middle_half"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    for (h, w) in half.iter().zip([ratios[0].min(ratios[1]), ratios[0].max(ratios[1])]) {
        assert!((h - w).abs() <= 1e-12 * w, "{sp}: against {ratios:?}");
    }
    assert_eq!(sp["repetitions"], 2);
    // The most often costliest and cheapest (the earlier scenario when each was once).
    let most = |n: [i32; 3]| names[(0..3).fold(0, |b, i| if n[i] > n[b] { i } else { b })];
    assert_eq!((sp["costliest"].as_str(), sp["cheapest"].as_str()), (Some(most(top)), Some(most(bottom))));
    assert!(ratios.iter().all(|&r| r >= 1.0));
    // The second halves: the one repetition after the first.
    let st = &v["steady_spread"];
    let c: Vec<f64> = s.iter().map(steady).collect();
    let want = c.iter().cloned().fold(f64::MIN, f64::max) / c.iter().cloned().fold(f64::MAX, f64::min);
    let got = st["per_hop_cost_max_over_min"].as_f64().unwrap();
    assert!((got - want).abs() <= 1e-12 * want, "{st}: against {c:?}");
    assert_eq!(st["repetitions"], 1);
}

#[test]
fn a_run_that_ends_before_the_split_still_reports_its_allocations() {
    // A single repetition splits at half the stop time (60 s); eecn-dumbbell ends at 21 s,
    // so nothing moves in the second half and there is no steady-state figure.
    let v = bench(&["--scenario", "eecn-dumbbell", "--repeat", "1"]);
    let t = &v["scenarios"][0];
    assert!(t["steady_allocations_per_packet_hop"].is_null());
    assert!(t["steady_ns_per_packet_hop"].is_null());
    assert_eq!(t["steady_packet_hops"], 0);
    assert_eq!(t["steady_wall_s"].as_array().map(Vec::len), Some(1));
    assert!(t["allocations_per_packet_hop"].as_f64().unwrap() > 0.0);
    // One scenario has no spread to report.
    assert!(v.get("spread").is_none() && v.get("steady_spread").is_none());
    assert!(v["reference"].is_null());
    assert!(t.get("reference_over_ours_middle_half").is_none());
}

/// Drops and losses hand their packets' boxes back: a run whose bottleneck both
/// overflows (16 flows into a 10-packet queue) and loses at random (1%) allocates
/// (almost) nothing per packet-hop in steady state. Before the boxes came back, each drop
/// freed one and a later packet allocated another: 0.0154 allocations per packet-hop here,
/// against 0.0010 since (what is left: buffers reaching sizes they never had).
#[test]
fn drops_and_losses_allocate_no_new_packets() {
    let dir = std::env::temp_dir().join(format!("triage-bench-drops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lossy.toml");
    let mut toml = String::from(
        r#"name = "lossy"
seed = 3
stop = "4s"
[transport]
cc = "newreno"
[measure]
interval = "0ms"
[topology]
kind = "dumbbell"
pairs = 16
bottleneck = { rate = "20Mbps", delay = "10ms", queue = { packets = 10 }, loss = { kind = "bernoulli", loss_prob = 0.01 } }
access = { rate = "100Mbps", delay = "0ms", queue = { packets = 100 } }
"#,
    );
    for i in 0..16 {
        toml += &format!(
            "[[flows]]\nname = \"f{i}\"\nclient = \"s{i}\"\nserver = \"c{i}\"\nclient_app = {{ kind = \"bulk\", size = \"1GB\" }}\n"
        );
    }
    std::fs::write(&path, toml).unwrap();
    let v = bench(&["--scenario", path.to_str().unwrap(), "--repeat", "2"]);
    let t = &v["scenarios"][0];
    assert_eq!(t["packet_hops"].as_u64(), Some(31_543));
    let steady = t["steady_allocations_per_packet_hop"].as_f64().unwrap();
    // What is left is buffers (rings, out-of-order maps) first reaching a size in the second
    // half: 24 to 53 allocations in 16,000 packet-hops, by seed (seeds 1-6 of this file read
    // 0.0015 to 0.0033 on 2026-11-30, seed 3 0.0023). The regression this guards against,
    // a box per drop, is 0.0154.
    assert!(steady < 0.004, "{steady} allocations per packet-hop in steady state");
    // The run drops and loses: the queue's and the loss model's counts, from `triage run`
    // (whose exit status says the bulk flows did not finish: they are not meant to).
    let out =
        Command::new(env!("CARGO_BIN_EXE_triage")).args(["run", path.to_str().unwrap(), "--json"]).output().unwrap();
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let links = run["variants"][0]["report"]["links"].as_array().unwrap();
    let dropped: u64 = links.iter().map(|l| l["queue"]["dropped_packets"].as_u64().unwrap()).sum();
    let lost: u64 = links.iter().map(|l| l["lost_packets"].as_u64().unwrap_or(0)).sum();
    assert_eq!((dropped, lost), (321, 110));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A receiver of a large lossy window (a BBR flow with thousands of segments held and
/// hundreds of holes) allocates nothing per packet-hop once its window has peaked: its held
/// segments and its SACK blocks by recency keep their memory (`ChunkedMap` in the core).
/// With `BTreeMap`s there, whose nodes split and merge as segments come and go, the same
/// run allocated 0.052 times per packet-hop in its second half.
#[test]
fn a_large_lossy_window_allocates_nothing_in_steady_state() {
    let v = bench(&["--scenario", "benchmarks/large-window-loss-bbr.toml", "--repeat", "2"]);
    let t = &v["scenarios"][0];
    assert_eq!(t["packet_hops"].as_u64(), Some(2_078_881));
    let steady = t["steady_allocations_per_packet_hop"].as_f64().unwrap();
    assert!(steady < 0.0005, "{steady} allocations per packet-hop in steady state");
}

/// `a` and `b` equal but for the last bits (serde_json's parser, without its
/// `float_roundtrip` feature, may miss a float's nearest value by one unit).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Reads a CSV file written by `--out`: its header and rows.
fn read_csv(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r.records().map(|x| x.unwrap().iter().map(String::from).collect()).collect();
    (header, rows)
}

#[test]
fn out_writes_every_run_the_summary_and_the_charts() {
    let dir = std::env::temp_dir().join(format!("triage-bench-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let v = bench(&[
        "--scenario",
        "eecn-dumbbell",
        "--scenario",
        "benchmarks/multipath-bulk.toml",
        "--repeat",
        "3",
        "--reference",
        "true",
        "--out",
        d,
    ]);
    // bench.json is what --json printed.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bench.json")).unwrap()).unwrap();
    assert_eq!(file, v);
    // runs.csv: per repetition, each scenario then the reference (named by its command), in
    // the order they ran, after the parameter columns every CSV of triage begins with.
    let (header, rows) = read_csv(&dir.join("runs.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    assert_eq!(header[..5], ["scenario", "variant", "seed", "triage_version", "repetition"]);
    assert_eq!(rows.len(), 3 * 3);
    assert_eq!((rows[0][col("seed")].as_str(), rows[2][col("seed")].as_str()), ("1", ""));
    let kinds: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[col("repetition")].as_str(), r[col("kind")].as_str(), r[col("scenario")].as_str()))
        .collect();
    assert_eq!(
        kinds[..3],
        [("1", "scenario", "eecn-dumbbell"), ("1", "scenario", "multipath-bulk"), ("1", "reference", "true")]
    );
    assert_eq!(
        kinds[6..],
        [("3", "scenario", "eecn-dumbbell"), ("3", "scenario", "multipath-bulk"), ("3", "reference", "true")]
    );
    let num = |r: &Vec<String>, c: &str| r[col(c)].parse::<f64>().unwrap_or_else(|_| panic!("{c}: {:?}", r[col(c)]));
    let s = v["scenarios"].as_array().unwrap();
    for (rep, chunk) in rows.chunks(3).enumerate() {
        for (i, row) in chunk[..2].iter().enumerate() {
            // The wall times are the JSON's, repetition by repetition; the cost is the wall
            // time over the packet-hops.
            assert!(close(num(row, "wall_s"), s[i]["wall_s"][rep].as_f64().unwrap()));
            assert_eq!(num(row, "packet_hops"), s[i]["packet_hops"].as_f64().unwrap());
            let cost = num(row, "wall_s") * 1e9 / num(row, "packet_hops");
            assert!((num(row, "ns_per_packet_hop") - cost).abs() <= 1e-9 * cost);
            assert_eq!(row[col("mode")], s[i]["mode"].as_str().unwrap());
            // The first repetition fixes the split; its second half is not counted.
            let steady = &row[col("steady_wall_s")];
            if rep == 0 {
                assert!(steady.is_empty() && row[col("steady_ns_per_packet_hop")].is_empty());
            } else {
                assert!(close(num(row, "steady_wall_s"), s[i]["steady_wall_s"][rep - 1].as_f64().unwrap()));
                assert_eq!(num(row, "steady_packet_hops"), s[i]["steady_packet_hops"].as_f64().unwrap());
            }
        }
        // The second scenario's pair: its cost over the first's in the same repetition.
        let want = num(&chunk[1], "ns_per_packet_hop") / num(&chunk[0], "ns_per_packet_hop");
        assert!((num(&chunk[1], "per_hop_cost_vs_first") - want).abs() <= 1e-9 * want);
        assert!(chunk[0][col("per_hop_cost_vs_first")].is_empty());
        assert!(num(&chunk[2], "wall_s") > 0.0 && chunk[2][col("packet_hops")].is_empty());
    }
    // The median of the three pairs is the JSON's.
    let mut pairs: Vec<f64> = rows.chunks(3).map(|c| num(&c[1], "per_hop_cost_vs_first")).collect();
    pairs.sort_by(f64::total_cmp);
    let got = s[1]["per_hop_cost_vs_first"].as_f64().unwrap();
    assert!(close(pairs[1], got));
    // scenarios.csv: one row a scenario, the summary's figures.
    let (header, rows) = read_csv(&dir.join("scenarios.csv"));
    assert_eq!(rows.len(), 2);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (row, t) in rows.iter().zip(s) {
        assert_eq!(row[col("scenario")], t["scenario"].as_str().unwrap());
        for k in ["median_wall_s", "ns_per_packet_hop", "reference_over_ours", "steady_ns_per_packet_hop"] {
            assert!(close(row[col(k)].parse::<f64>().unwrap(), t[k].as_f64().unwrap()), "{k}");
        }
    }
    assert!(rows[0][col("per_hop_cost_vs_first")].is_empty());
    let q = &s[1]["per_hop_cost_vs_first_middle_half"];
    assert!(close(rows[1][col("per_hop_cost_vs_first_q1")].parse::<f64>().unwrap(), q[0].as_f64().unwrap()));
    assert!(close(rows[1][col("per_hop_cost_vs_first_q3")].parse::<f64>().unwrap(), q[1].as_f64().unwrap()));
    for chart in ["ns_per_packet_hop.svg", "per_hop_cost_vs_first.svg", "speed_ratio.svg"] {
        let svg = std::fs::read_to_string(dir.join(chart)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("multipath-bulk"), "{chart}");
    }
    // The spread per repetition (several scenarios), whole runs and second halves.
    let svg = std::fs::read_to_string(dir.join("spread.svg")).unwrap();
    assert!(svg.contains("whole run") && svg.contains("second half") && svg.contains("Costliest"), "{svg}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn out_into_a_file_fails_naming_it() {
    let file = std::env::temp_dir().join(format!("triage-bench-out-file-{}", std::process::id()));
    std::fs::write(&file, "not a directory").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_triage"))
        .args(["bench", "--scenario", "eecn-dumbbell", "--repeat", "1", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(file.to_str().unwrap()), "{err}");
    let _ = std::fs::remove_file(&file);
}
