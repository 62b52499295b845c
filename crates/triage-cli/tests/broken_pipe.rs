//! A reader that closes stdout early (`triage page analyze FILE | head -1`) ends the command
//! quietly: status 0, nothing on stderr, no panic.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Runs triage with stdout a pipe whose reader is closed straight after the start, before
/// the command writes its first byte (it is still loading), and returns (status, stderr).
fn closed_early(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_triage"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn triage");
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap(), err)
}

fn assert_quiet(args: &[&str]) {
    let (status, err) = closed_early(args);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.is_empty(), "{args:?} wrote to stderr: {err}");
    assert_eq!(status.code(), Some(0), "{args:?}: {status}");
}

/// More than a pipe holds (64 KiB on Linux): the command cannot finish its output without a
/// reader, so it meets the closed pipe whatever the timing.
#[test]
fn page_analyze_of_a_large_page_into_a_closed_pipe() {
    let dir = std::env::temp_dir().join(format!("triage-broken-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let entries: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                r#"{{"request": {{"url": "https://example.com/a/rather/long/path/to/object-{i}.js"}},
                   "response": {{"status": 200, "content": {{"size": 1000, "mimeType": "text/javascript"}}}}}}"#
            )
        })
        .collect();
    let har = dir.join("big.har");
    std::fs::write(&har, format!(r#"{{"log": {{"entries": [{}]}}}}"#, entries.join(","))).unwrap();
    let full = Command::new(env!("CARGO_BIN_EXE_triage")).args(["page", "analyze", har.to_str().unwrap()]).output();
    let full = full.unwrap();
    assert!(full.status.success(), "{}", String::from_utf8_lossy(&full.stderr));
    assert!(full.stdout.len() > 128 * 1024, "output of {} bytes fits in a pipe", full.stdout.len());
    assert_quiet(&["page", "analyze", har.to_str().unwrap()]);
    assert_quiet(&["page", "analyze", "--json", har.to_str().unwrap()]);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn every_printing_command_into_a_closed_pipe() {
    for args in [
        &["page", "analyze", "news-v1"][..],
        &["page", "builtin"],
        &["scenarios"],
        &["run", "cats"],
        &["run", "cats", "--json"],
        &["reproduce", "cats"],
        &["bench", "--help"],
    ] {
        assert_quiet(args);
    }
}
