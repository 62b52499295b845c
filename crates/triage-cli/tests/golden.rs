//! Golden outputs: every scenario in `scenarios/` and every reproduction, as `--json`,
//! byte for byte against the snapshots in `tests/golden/`.
//!
//! These were frozen before QUIC mode joined the core, so TCP mode keeps every number it
//! produced before. A change that moves a number on purpose (a fix) regenerates them with
//! `TRIAGE_BLESS=1 cargo test -p triage-cli --test golden` and says in its commit which
//! numbers moved and why.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The run's output with the checkout's location taken out: a preset's trace is echoed as the
/// absolute path it was found at (`/work/shared/data/traces/…`), which differs between machines
/// while every number stays the same, so the folder holding the checkout is written `..`.
fn portable(stdout: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(stdout).unwrap();
    let parent = root().join("..").canonicalize().unwrap();
    let needle = format!("\"{}/", parent.display());
    text.replace(&needle, "\"../").into_bytes()
}

fn check(name: &str, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_triage")).current_dir(root()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = portable(out.stdout);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.json"));
    if std::env::var_os("TRIAGE_BLESS").is_some() {
        std::fs::write(&path, &stdout).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let got = String::from_utf8(stdout).unwrap();
    if got != want {
        let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{name}: output differs from {} from line {}:\n  got:  {}\n  want: {}",
            path.display(),
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            want.lines().nth(line).unwrap_or("<end>")
        );
    }
}

#[test]
fn every_scenario_matches_its_snapshot() {
    let mut names: Vec<String> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut checked = 0;
    for n in &names {
        let stem = n.trim_end_matches(".toml");
        let snapshot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/scenario-{stem}.json"));
        if !snapshot.exists() && std::env::var_os("TRIAGE_BLESS").is_none() {
            // Scenarios added after the freeze have no snapshot; the TCP ones all do.
            continue;
        }
        check(&format!("scenario-{stem}"), &["run", &format!("scenarios/{n}"), "--json"]);
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} scenarios checked");
}

#[test]
fn reproduce_cats_matches_its_snapshot() {
    check("reproduce-cats", &["reproduce", "cats", "--json"]);
}

#[test]
fn reproduce_eecn_matches_its_snapshot() {
    check("reproduce-eecn", &["reproduce", "eecn", "--json"]);
}
