//! `benchmarks/scaling.sh` (README "Performance"): the grid table and the back-to-back
//! pair table, on two tiny cells of triage alone (the ns-3 side needs Debian's libns3-dev
//! and minutes per cell). Speed is not asserted, only that every cell and the pair are
//! there with positive packet-hop counts, rates and ratio.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn prints_the_grid_and_the_pair_table() {
    let out = Command::new("bash")
        .current_dir(repo())
        .args(["benchmarks/scaling.sh", "--no-ns3", "--flows", "2 4", "--rates", "100Mbps", "--stop", "0.2"])
        .args(["--repeat", "3", "--triage", env!("CARGO_BIN_EXE_triage")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
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
    assert!(text.contains("4 flows against 2 (median of 3 pairs)"), "{text}");
}

#[test]
fn help_prints_the_usage() {
    let out = Command::new("bash").current_dir(repo()).args(["benchmarks/scaling.sh", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("--no-ns3") && text.contains("back-to-back pairs"), "{text}");
}
