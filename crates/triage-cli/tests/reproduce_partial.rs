//! `triage reproduce partial`: the JSON shape the issue names, bad values, and what the
//! reproduction must show (thesis §5.9, §6): on 12 Mbps without loss partial reliability changes
//! fetch times by under 2%; on 9 Mbps + 5% loss every policy reduces mean and p90 fetch time,
//! the combined policies more than each of their parts, and datagram data loss is near the
//! thesis's 9% (the network's 5% plus the objects whose metadata datagram was lost), or the
//! network's 5% alone with `--metadata optional`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn triage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_triage"))
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(args)
        .output()
        .unwrap()
}

fn results(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["reproduce", "partial", "--json"];
    all.extend_from_slice(args);
    let out = triage(&all);
    assert!(out.status.success(), "{all:?}: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["results"]);
    v["results"].as_array().unwrap().clone()
}

fn row<'a>(rows: &'a [serde_json::Value], network: &str, policy: &str) -> &'a serde_json::Value {
    rows.iter().find(|r| r["network"] == network && r["policy"] == policy).unwrap()
}

fn f(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[test]
fn json_has_the_issues_fields_and_is_deterministic() {
    let args = ["--runs", "2", "--networks", "12Mbps", "--policies", "fonts"];
    let rows = results(&args);
    // `reliable` always runs: the reductions are against it.
    let policies: Vec<&str> = rows.iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(policies, ["reliable", "fonts"]);
    for r in &rows {
        for k in [
            "network",
            "policy",
            "page",
            "runs",
            "mean_fetch_ms",
            "p90_fetch_ms",
            "reduction_mean_ms",
            "reduction_p90_ms",
            "data_loss_pct",
            "data_loss_network_pct",
            "data_loss_metadata_pct",
            "data_loss_late_pct",
            "data_loss_local_pct",
        ] {
            assert!(r.get(k).is_some(), "{k} missing in {r}");
        }
        assert_eq!(r["network"], "12Mbps");
        assert_eq!(r["page"], "news");
        assert_eq!(r["runs"], 2);
    }
    assert_eq!(f(&rows[0], "reduction_mean_ms"), 0.0);
    let a = triage(&["reproduce", "partial", "--json", "--runs", "2", "--networks", "12Mbps", "--policies", "fonts"]);
    let b = triage(&["reproduce", "partial", "--json", "--runs", "2", "--networks", "12Mbps", "--policies", "fonts"]);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn bad_values_are_refused_naming_the_option() {
    for (args, want) in [
        (vec!["--networks", "10Mbps"], "--networks"),
        (vec!["--policies", "essentialness"], "--policies"),
        (vec!["--runs", "1"], "--runs"),
        (vec!["--end-idle", "soon"], "--end-idle"),
        (vec!["--metadata", "sometimes"], "--metadata"),
        (vec!["--dgram-queue", "0"], "--dgram-queue"),
        (vec!["--dgram-queue", "many"], "--dgram-queue"),
        (vec!["--page", "no/such/file.har"], "--page"),
    ] {
        let mut all = vec!["reproduce", "partial"];
        all.extend_from_slice(&args);
        let out = triage(&all);
        assert!(!out.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Thesis §6: on 12 Mbps without loss reliable and partially reliable fetch times are "nearly
/// identical"; the issue asks for under 2%.
#[test]
fn lossless_12mbps_partial_reliability_changes_fetch_time_by_under_2pct() {
    let rows = results(&["--runs", "12", "--networks", "12Mbps"]);
    let base = f(row(&rows, "12Mbps", "reliable"), "mean_fetch_ms");
    assert!((12_000.0..14_000.0).contains(&base), "baseline {base} ms (thesis 11.68 s)");
    for r in &rows {
        let m = f(r, "mean_fetch_ms");
        assert!((m - base).abs() < 0.02 * base, "{}: {m} ms against {base} ms", r["policy"]);
    }
}

/// Thesis Figs. 16-18 on 9 Mbps + 5% loss, as shape: every policy reduces mean and p90 fetch
/// time, each combined policy the mean more than each of its parts (and its p90 by an amount
/// whose 95% interval excludes 0), and the reductions grow with the bytes moved to
/// datagrams. 240 loads per policy (the issue's default 30 leaves 95% intervals of about
/// ±50 ms around mean reductions of 30-100 ms; a p90's interval is about ±50-90 ms even at
/// 120 loads, so p90s are not ranked against each other: at 120 loads fonts + ads read 62
/// [−3, 185] against fonts' 81 [1, 145]).
/// Data loss (§6.1: "when fonts and javascripts were grouped, the data loss was close to
/// 9%"): with the default client, which needs an object's metadata datagram, each object is
/// lost whole with the metadata datagram's 5% and otherwise loses 5% of its chunks, 5% +
/// 0.95 × 5% = 9.75% expected; fonts + third party must land within 9 ± 2%, the others
/// within 8-12% (ads are 9 objects a load, so their figure scatters most), and the parts
/// must add up: network + metadata = the total, nothing lost to giving up (the link keeps
/// order) or to quiche's 1000-datagram send queue (one object is queued at a time).
#[test]
fn lossy_9mbps_every_policy_reduces_fetch_time_and_combined_ones_more() {
    let rows = results(&["--runs", "240", "--networks", "9Mbps+5%"]);
    let base = f(row(&rows, "9Mbps+5%", "reliable"), "mean_fetch_ms");
    assert!((17_000.0..20_000.0).contains(&base), "baseline {base} ms (thesis ≈ 18.5 s)");
    let red =
        |p: &str| (f(row(&rows, "9Mbps+5%", p), "reduction_mean_ms"), f(row(&rows, "9Mbps+5%", p), "reduction_p90_ms"));
    for p in ["fonts", "ads", "third_party", "fonts_ads", "fonts_third_party"] {
        let (m, p90) = red(p);
        assert!(m > 0.0 && p90 > 0.0, "{p}: reductions {m} / {p90} ms");
        let ci = row(&rows, "9Mbps+5%", p)["reduction_mean_ci95_ms"].as_array().unwrap().clone();
        assert!(ci[0].as_f64().unwrap() > 0.0, "{p}: the 95% interval of the mean reduction includes 0: {ci:?}");
        let r = row(&rows, "9Mbps+5%", p);
        let loss = f(r, "data_loss_pct");
        let want = if p == "fonts_third_party" { 7.0..11.0 } else { 8.0..12.0 };
        assert!(want.contains(&loss), "{p}: data loss {loss}% (thesis: close to 9% for fonts + JavaScript)");
        let (net, meta) = (f(r, "data_loss_network_pct"), f(r, "data_loss_metadata_pct"));
        assert!((4.0..6.0).contains(&net) && (3.5..7.0).contains(&meta), "{p}: network {net}%, metadata {meta}%");
        assert!((net + meta - loss).abs() < 1e-9, "{p}: {net} + {meta} != {loss}");
        assert_eq!((f(r, "data_loss_late_pct"), f(r, "data_loss_local_pct")), (0.0, 0.0), "{p}");
    }
    for (combined, parts) in [("fonts_ads", ["fonts", "ads"]), ("fonts_third_party", ["fonts", "third_party"])] {
        for part in parts {
            assert!(red(combined).0 > red(part).0, "mean: {combined} {:?} vs {part} {:?}", red(combined), red(part));
        }
        let ci = row(&rows, "9Mbps+5%", combined)["reduction_p90_ci95_ms"].as_array().unwrap().clone();
        assert!(ci[0].as_f64().unwrap() > 0.0, "{combined}: the 95% interval of the p90 reduction includes 0: {ci:?}");
    }
    // Reductions grow with the bytes moved to datagrams: over the five policies, the mean
    // reduction's rank against the datagram bytes' rank has a Spearman coefficient of at
    // least 0.8 (one swapped neighbour pair gives 0.9), and the policy moving the most bytes
    // reduces most, the one moving the fewest least.
    let policies = ["fonts", "ads", "third_party", "fonts_ads", "fonts_third_party"];
    let rank = |key: &dyn Fn(&str) -> f64| -> Vec<usize> {
        policies.iter().map(|p| policies.iter().filter(|q| key(q) < key(p)).count()).collect()
    };
    let by_bytes = rank(&|p| f(row(&rows, "9Mbps+5%", p), "unreliable_bytes"));
    let by_reduction = rank(&|p| red(p).0);
    let d2: usize = by_bytes.iter().zip(&by_reduction).map(|(a, b)| a.abs_diff(*b).pow(2)).sum();
    let rho = 1.0 - 6.0 * d2 as f64 / (5.0 * 24.0);
    assert!(rho >= 0.8, "Spearman {rho}: bytes ranks {by_bytes:?}, reduction ranks {by_reduction:?}");
    for extreme in [0, 4] {
        let p = by_bytes.iter().position(|&r| r == extreme).unwrap();
        assert_eq!(
            by_reduction[p], extreme,
            "{}: bytes rank {extreme}, reduction rank {}",
            policies[p], by_reduction[p]
        );
    }
}

/// `--metadata optional`: the receiver places chunks by object ID and offset whether or not
/// the metadata datagram came, so only the link loses data: 5%, give or take.
#[test]
fn without_the_metadata_rule_data_loss_is_the_links() {
    let rows = results(&[
        "--runs",
        "60",
        "--networks",
        "9Mbps+5%",
        "--metadata",
        "optional",
        "--policies",
        "fonts_third_party",
    ]);
    let r = row(&rows, "9Mbps+5%", "fonts_third_party");
    let loss = f(r, "data_loss_pct");
    assert!((4.0..6.0).contains(&loss), "data loss {loss}% (the link drops 5%)");
    assert_eq!((f(r, "data_loss_network_pct"), f(r, "data_loss_metadata_pct")), (loss, 0.0));
    // Fetch times do not depend on the rule (the client still waits for the response's end).
    let needed = results(&["--runs", "60", "--networks", "9Mbps+5%", "--policies", "fonts_third_party"]);
    let n = row(&needed, "9Mbps+5%", "fonts_third_party");
    assert_eq!(f(n, "mean_fetch_ms"), f(r, "mean_fetch_ms"));
    assert!(f(n, "data_loss_pct") > loss + 2.0, "{} vs {loss}", f(n, "data_loss_pct"));
}

/// Must-show 5: scenarios/ferguson-slow4g-partial.toml runs FIFO, CATS, the thesis's
/// essentialness policy and CATS with level-4 objects as datagrams; the two datagram variants
/// report their data loss, the two reliable ones none; CATS with level-4 datagrams paints
/// before FIFO.
#[test]
fn ferguson_partial_scenario_reports_data_loss_for_the_datagram_variants() {
    let out = triage(&["run", "scenarios/ferguson-slow4g-partial.toml", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let variants = v["variants"].as_array().unwrap();
    let names: Vec<&str> = variants.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fifo", "cats", "fifo-essentialness", "cats-level4"]);
    let page = |i: usize| &variants[i]["report"]["flows"][0]["page"];
    for (i, name) in names.iter().enumerate() {
        assert_eq!(page(i)["delivered"], page(i)["objects"], "{name}: every object ends");
        let d = &page(i)["datagrams"];
        if i < 2 {
            assert!(d.is_null(), "{name}: {d}");
        } else {
            let (b, l) = (d["bytes"].as_u64().unwrap(), d["lost_bytes"].as_u64().unwrap());
            assert!(d["objects"].as_u64().unwrap() > 0 && b > 0 && l < b / 10, "{name}: {d}");
        }
    }
    assert!(f(page(3), "fcp_ms") < f(page(0), "fcp_ms"));
}

/// `--out`: runs.csv one row per page load, objects.csv one row per object of each load whose
/// fetch times add up to the load's (PR-4), results.csv one row per policy, and a chart.
#[test]
fn out_writes_loads_objects_results_and_a_chart() {
    let dir = std::env::temp_dir().join(format!("triage-partial-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let out =
        triage(&["reproduce", "partial", "--runs", "2", "--networks", "9Mbps+5%", "--policies", "fonts", "--out", d]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let runs = read("runs.csv");
    let objects = read("objects.csv");
    assert_eq!(runs.lines().count(), 1 + 4, "{runs}");
    assert_eq!(read("results.csv").lines().count(), 1 + 2);
    for line in runs.lines().skip(1) {
        let line = unparameterized(line, 4);
        let c: Vec<&str> = line.split(',').collect();
        let (policy, seed, fetch): (&str, &str, f64) = (c[1], c[4], c[5].parse().unwrap());
        let rows: Vec<Vec<String>> = objects
            .lines()
            .skip(1)
            .map(|l| unparameterized(l, 4).split(',').map(String::from).collect::<Vec<_>>())
            .filter(|o| o[1] == policy && o[4] == seed)
            .collect();
        assert_eq!(rows.len(), c[8].parse::<usize>().unwrap(), "one row per object done");
        let sum: f64 = rows.iter().map(|o| o[9].parse::<f64>().unwrap()).sum();
        assert!((sum - fetch).abs() < 0.001 * rows.len() as f64, "{policy} seed {seed}: {sum} vs {fetch}");
        if policy == "fonts" {
            assert!(rows.iter().all(|o| (o[6] == "font") == (o[8] == "true")), "fonts and only fonts as datagrams");
        }
    }
    let svg = read("reduction_news_9Mbps5.svg");
    for label in ["fonts", "thesis, mean", "reduction (ms)"] {
        assert!(svg.contains(label), "chart lacks {label}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A CSV row as it was before the run's parameters led each row: the columns after the
/// four parameters, with the seed parameter put back at `seed_at`.
fn unparameterized(line: &str, seed_at: usize) -> String {
    let c: Vec<&str> = line.split(',').collect();
    let mut row: Vec<&str> = c[4..].to_vec();
    row.insert(seed_at, c[2]);
    row.join(",")
}
