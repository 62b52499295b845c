//! The malformed-input corpus in `tests/malformed/`: every case exits non-zero with one error
//! that names the file and the field or line, within a time and a memory limit, never a panic.
//!
//! A case is a file `NAME.expected` beside its input `NAME`: each non-empty line of it must
//! appear in the error. The input's extension says how it is run, from inside the folder:
//! `.toml` with `triage run NAME`, `.har` and `.json` with `triage page analyze NAME`, and
//! `.args` as the command line itself, one argument per line. Other files (`*.in`, traces)
//! are what the cases refer to.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Each case's wall-clock limit.
const TIME_LIMIT: Duration = Duration::from_secs(60);
/// Each case's address-space limit (`ulimit -v`, KiB): 2 GiB.
const MEMORY_LIMIT_KIB: u64 = 2 << 20;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/malformed")
}

/// The command line of the case whose input is `input`.
fn args(dir: &Path, input: &str) -> Vec<String> {
    let ext = input.rsplit('.').next().unwrap_or("");
    match ext {
        "toml" => vec!["run".into(), input.into()],
        "har" | "json" => vec!["page".into(), "analyze".into(), input.into()],
        "args" => std::fs::read_to_string(dir.join(input))
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        _ => panic!("{input}: no rule for .{ext} inputs"),
    }
}

/// Runs triage under the limits; returns (exit code, stdout, stderr). The time limit is wall
/// time, so this test (not the sans-IO core) reads the clock.
#[allow(clippy::disallowed_methods)]
fn run_limited(dir: &Path, args: &[String]) -> (Option<i32>, String, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_triage"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes on threads so a chatty child cannot block on a full pipe.
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        out_pipe.read_to_string(&mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        err_pipe.read_to_string(&mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().ok();
            child.wait().ok();
            panic!("{args:?}: still running after {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), out.join().unwrap(), err.join().unwrap())
}

#[test]
fn every_malformed_input_gets_one_clear_error() {
    let dir = corpus();
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".expected").map(String::from))
        .collect();
    cases.sort();
    assert!(cases.len() >= 50, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for input in &cases {
        let expected = std::fs::read_to_string(dir.join(format!("{input}.expected"))).unwrap();
        let args = args(&dir, input);
        let (code, stdout, stderr) = run_limited(&dir, &args);
        let mut problems = Vec::new();
        if code == Some(0) || code.is_none() {
            problems.push(format!("exit status {code:?}"));
        }
        if stderr.contains("panicked") {
            problems.push("panicked".into());
        }
        if !stderr.starts_with("error: ") || stderr.matches("error: ").count() != 1 {
            problems.push("not exactly one `error: `".into());
        }
        if !stdout.is_empty() {
            problems.push(format!("printed {} bytes on stdout", stdout.len()));
        }
        if !input.ends_with(".args") && !stderr.contains(input.as_str()) {
            problems.push("does not name the file".into());
        }
        for want in expected.lines().filter(|l| !l.is_empty()) {
            if !stderr.contains(want) {
                problems.push(format!("lacks {want:?}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{input} ({}):\n{stderr}", problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n\n{}", failures.len(), cases.len(), failures.join("\n"));
}
