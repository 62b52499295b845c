//! `benchmarks/scaling.sh` (README "Performance"): the grid table, the back-to-back pair
//! table and the whole grid's spread, on two tiny cells of triage alone, and `--order`'s packet-order comparison (the ns-3 side needs Debian's libns3-dev
//! and minutes per cell). Speed is not asserted, only that every cell and the pair are
//! there with positive packet-hop counts, rates and ratio.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the script on triage alone over tiny 100 Mbps cells of `flows` (0.2 s simulated, 3
/// repetitions) with `--out` into a fresh temporary directory named after `tag`: its
/// standard output and the directory.
fn tiny_run(flows: &str, tag: &str) -> (String, PathBuf) {
    tiny_run_at(flows, "100Mbps", tag)
}

/// [`tiny_run`] at the bottleneck rates `rates`.
fn tiny_run_at(flows: &str, rates: &str, tag: &str) -> (String, PathBuf) {
    let dir = std::env::temp_dir().join(format!("triage-scaling-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new("bash")
        .current_dir(repo())
        .args(["benchmarks/scaling.sh", "--no-ns3", "--flows", flows, "--rates", rates, "--stop", "0.2"])
        .args(["--repeat", "3", "--triage", env!("CARGO_BIN_EXE_triage"), "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    (text, dir)
}

#[test]
fn prints_the_grid_and_the_pair_table() {
    let (text, dir) = tiny_run("2 4", "out");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| 2 |") || l.starts_with("| 4 |") || l.starts_with("| 100Mbps |"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    // Grid rows: flows, rate, wall, packet-hops, M hops/s, sim M hops/s, peak MiB.
    for r in &rows[..2] {
        assert_eq!(r[2], "100Mbps");
        assert!(r[4].parse::<u64>().unwrap() > 0, "{r:?}");
        assert!(r[6].parse::<f64>().unwrap() > 0.0, "{r:?}");
    }
    // The pair table: 4 flows against 2, a positive ratio.
    let x = rows[2][2].strip_suffix('x').unwrap().parse::<f64>().unwrap();
    assert!(x > 0.0, "{text}");
    // Beside it the pairs' middle half, which holds their median (to the printed digits).
    let q: Vec<f64> = rows[2][3].split('-').map(|v| v.parse().unwrap()).collect();
    assert!(q.len() == 2 && q[0] <= x + 0.005 && x <= q[1] + 0.005, "{text}");
    assert!(text.contains("4 flows against 2 (median of 3 pairs)"), "{text}");
    // --out: the grid's rows as CSV, the same numbers as the table (ns-3's fields empty),
    // and the pair's `triage bench --out` files.
    let grid = std::fs::read_to_string(dir.join("grid.csv")).unwrap();
    let lines: Vec<&str> = grid.lines().collect();
    assert_eq!(lines.len(), 3, "{grid}");
    assert!(lines[0].starts_with("flows,rate,triage_wall_s,triage_packet_hops,"), "{grid}");
    for (line, r) in lines[1..].iter().zip(&rows[..2]) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 12, "{line}");
        assert_eq!(f[..7], r[1..8], "{line} against {r:?}");
        assert!(f[7..].iter().all(|x| x.is_empty()), "{line}");
    }
    let pairs = dir.join("pairs-100Mbps");
    let runs = std::fs::read_to_string(pairs.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 3 * 2, "{runs}");
    // The pair row's numbers are the pair run's own summary, whole runs and second halves.
    let summary = std::fs::read_to_string(pairs.join("scenarios.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let last: Vec<&str> = lines.last().unwrap().split(',').collect();
    let field = |name: &str| -> f64 { last[header.iter().position(|h| *h == name).unwrap()].parse().unwrap() };
    assert_eq!(rows[2][2], format!("{:.2}x", field("per_hop_cost_vs_first")), "{summary}");
    assert_eq!(rows[2][4], format!("{:.2}x", field("steady_per_hop_cost_vs_first")), "{summary}");
    assert!(pairs.join("per_hop_cost_vs_first.svg").exists());
    // The whole grid at once: both cells in one run, the costliest over the cheapest per
    // repetition, as that run's own bench.json says, with the cells named.
    let spread = row_starting(&text, "| 2 cells |");
    assert_spread_row(&spread, &dir.join("grid-spread/bench.json"), 2, |n, _| format!("{n} flows 100Mbps"));
    assert!(text.contains("over the cheapest's (median of 3 repetitions)"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The printed table row that starts with `prefix`, its cells split at the bars and trimmed.
fn row_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    let line = text.lines().find(|l| l.starts_with(prefix));
    line.unwrap_or_else(|| panic!("no row starting {prefix:?}: {text}")).split('|').map(str::trim).collect()
}

/// Checks a spread row (its cells split at the bars) against the `bench.json` of the run it
/// comes from (`cells` scenarios): whole runs and second halves, each the median ratio, its
/// middle half and the costliest and cheapest cells, named as `named(flows, rate)` from
/// the scenario's name ("dumbbell-FLOWS-RATE").
fn assert_spread_row(row: &[&str], bench: &std::path::Path, cells: usize, named: impl Fn(&str, &str) -> String) {
    let bench: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(bench).unwrap()).unwrap();
    assert_eq!(bench["scenarios"].as_array().map(Vec::len), Some(cells));
    for (col, key) in [(2, "spread"), (6, "steady_spread")] {
        let sp = &bench[key];
        let x = sp["per_hop_cost_max_over_min"].as_f64().unwrap();
        assert!(x >= 1.0, "{sp}");
        assert_eq!(row[col], format!("{x:.2}x"), "{row:?}");
        let h = &sp["per_hop_cost_max_over_min_middle_half"];
        assert_eq!(row[col + 1], format!("{:.2}-{:.2}", h[0].as_f64().unwrap(), h[1].as_f64().unwrap()));
        for (c, role) in [(col + 2, "costliest"), (col + 3, "cheapest")] {
            let name = sp[role].as_str().unwrap();
            let parts: Vec<&str> = name.split('-').collect();
            assert_eq!(row[c], named(parts[1], parts[2]), "{name}");
        }
    }
}

/// The other axis: with two rates, a row per flow count (that count at both rates in one
/// run, the costlier rate over the cheaper per repetition), and the grid's spread over all
/// four cells.
#[test]
fn prints_the_rate_rows_with_more_than_one_rate() {
    let (text, dir) = tiny_run_at("2 4", "100Mbps 1Gbps", "rates");
    assert!(
        text.contains("costliest rate's cost per packet-hop over the cheapest's (median of 3 repetitions)"),
        "{text}"
    );
    for n in ["2", "4"] {
        let row = row_starting(&text, &format!("| {n} flows |"));
        // "dumbbell-2-1Gbps" prints as "2 flows 1Gbps": both cells of a row have its count.
        assert_spread_row(&row, &dir.join(format!("rates-{n}/bench.json")), 2, |f, rate| {
            assert_eq!(f, n);
            format!("{f} flows {rate}")
        });
    }
    let grid = row_starting(&text, "| 4 cells |");
    assert_spread_row(&grid, &dir.join("grid-spread/bench.json"), 4, |f, rate| format!("{f} flows {rate}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prints_the_curve_with_more_than_two_flow_counts() {
    let (text, dir) = tiny_run("2 4 8", "curve");
    assert!(text.contains("against 2 flows (median of 3 repetitions)"), "{text}");
    // The curve's rows: every flow count after the fewest, in order, each ratio inside its
    // middle half (to the printed digits), whole runs and second halves.
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| 100Mbps | 4 |") || l.starts_with("| 100Mbps | 8 |"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (r, n) in rows.iter().zip(["4", "8"]) {
        assert_eq!(r[2], n);
        for (x, half) in [(r[3], r[4]), (r[5], r[6])] {
            let x = x.strip_suffix('x').unwrap().parse::<f64>().unwrap();
            let q: Vec<f64> = half.split('-').map(|v| v.parse().unwrap()).collect();
            assert!(x > 0.0 && q[0] <= x + 0.005 && x <= q[1] + 0.005, "{r:?}");
        }
    }
    // The same numbers as the curve run's own summary (`triage bench --out`).
    let summary = std::fs::read_to_string(dir.join("curve-100Mbps/scenarios.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "per_hop_cost_vs_first").unwrap();
    let ratios: Vec<f64> = lines.filter_map(|l| l.split(',').nth(col)?.parse().ok()).collect();
    assert_eq!(ratios.len(), 2, "{summary}");
    for (r, want) in rows.iter().zip(&ratios) {
        assert_eq!(r[3], format!("{want:.2}x"), "{summary}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn out_is_refused_with_shares() {
    let out = Command::new("bash")
        .current_dir(repo())
        .args(["benchmarks/scaling.sh", "--shares", "--no-ns3", "--out", "/tmp/never-made"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out is for the timing grid"));
}

#[test]
fn help_prints_the_usage() {
    let out = Command::new("bash").current_dir(repo()).args(["benchmarks/scaling.sh", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("--no-ns3") && text.contains("back-to-back pairs"), "{text}");
    assert!(text.contains("--order") && text.contains("packet_trace"), "{text}");
}

/// `--order`'s comparison (`benchmarks/bottleneck_order.awk`) on a real triage packet trace
/// of a two-pair dumbbell against an ns-3-style list made from that trace: all alike; one
/// sequence number changed at the fifth departure, four alike and the time that packet
/// entered the queue; a list that ends first, its length.
#[test]
fn the_order_comparison_counts_packets_alike_up_to_the_first_difference() {
    let dir = std::env::temp_dir().join(format!("triage-order-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("d.toml");
    std::fs::write(
        &scenario,
        "name = \"d\"\nstop = \"200ms\"\n[measure]\npacket_trace = true\n[topology]\nkind = \"dumbbell\"\npairs = 2\n\
         bottleneck = { rate = \"10Mbps\", delay = \"1ms\", queue = { packets = 20 } }\n\
         access = { rate = \"100Mbps\", delay = \"0ms\" }\n\
         [[flows]]\nname = \"f0\"\nclient = \"s0\"\nserver = \"c0\"\nclient_app = { kind = \"bulk\", size = \"1GB\" }\n\
         [[flows]]\nname = \"f1\"\nclient = \"s1\"\nserver = \"c1\"\nclient_app = { kind = \"bulk\", size = \"1GB\" }\n",
    )
    .unwrap();
    let out = dir.join("o");
    let run =
        Command::new(env!("CARGO_BIN_EXE_triage")).arg("run").arg(&scenario).arg("--out").arg(&out).output().unwrap();
    assert!(run.status.code() == Some(3) || run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let csv = std::fs::read_to_string(out.join("packets.csv")).unwrap();
    // The bottleneck's departures: rows on r1->r2 that entered the queue (drops aside).
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[5] == "r1->r2" && r[6] == "enqueue")
        .collect();
    assert!(rows.len() > 50, "{}", rows.len());
    assert!(csv.lines().any(|l| l.contains(",r1->r2,drop,")), "the small queue drops: those rows are not departures");
    let ns3 = |rows: &[Vec<&str>]| -> String {
        rows.iter()
            .map(|r| {
                let flow = r[7].trim_start_matches('s').split(':').next().unwrap();
                format!("bott {} {flow} {} {}\n", r[4], r[10], r[12])
            })
            .collect()
    };
    let compare = |list: String| -> String {
        let f = dir.join("n.txt");
        std::fs::write(&f, format!("packet_hops 1\n{list}flow_rx_bytes 0 1\n")).unwrap();
        let o = Command::new("awk")
            .current_dir(repo())
            .args(["-F,", "-f", "benchmarks/bottleneck_order.awk"])
            .arg(&f)
            .arg(out.join("packets.csv"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(compare(ns3(&rows)), format!("{} -", rows.len()));
    let mut changed = ns3(&rows).lines().map(str::to_string).collect::<Vec<_>>();
    let mut fifth: Vec<String> = changed[4].split(' ').map(str::to_string).collect();
    fifth[3] = (fifth[3].parse::<u64>().unwrap() + 1448).to_string();
    changed[4] = fifth.join(" ");
    assert_eq!(compare(changed.join("\n") + "\n"), format!("4 {}", rows[4][4]));
    assert_eq!(compare(ns3(&rows[..3])), "3 -");
    let _ = std::fs::remove_dir_all(&dir);
}
