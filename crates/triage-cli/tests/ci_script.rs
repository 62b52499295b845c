//! `.ci/run`: every test binary runs (`--no-fail-fast`), and the closing
//! `tests: N passed, M failed` line is printed also when tests fail, with a failing status.
//! A stand-in `cargo` on PATH plays the test run, so this does not run the suite again.

use std::path::PathBuf;
use std::process::Command;

/// Runs `.ci/run` with a fake cargo that prints `output` and exits with `status`; returns
/// (exit code, stdout, the fake cargo's arguments).
fn ci_run(output: &str, status: i32) -> (Option<i32>, String, String) {
    let dir = std::env::temp_dir().join(format!("triage-ci-{}-{status}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("output.txt"), output).unwrap();
    let cargo = dir.join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\necho \"$@\" > '{0}/args.txt'\ncat '{0}/output.txt'\nexit {status}\n", dir.display()),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&cargo).status().unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .arg(repo.join(".ci/run"))
        .env("PATH", path)
        // The Python part installs and tests the package: not what this test is about.
        .env("TRIAGE_CI_SKIP_PYTHON", "1")
        .output()
        .unwrap();
    let args = std::fs::read_to_string(dir.join("args.txt")).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), args)
}

const PASSING: &str = "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
const FAILING: &str = "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n\
                       error: test failed, to rerun pass `-p x --test y`\n";

#[test]
fn failing_tests_still_get_the_closing_line_and_a_failing_status() {
    let (code, out, args) = ci_run(&format!("{PASSING}{FAILING}{PASSING}"), 101);
    assert!(args.contains("--no-fail-fast") && args.contains("--workspace"), "{args}");
    assert!(out.contains("tests: 8 passed, 1 failed\n"), "{out}");
    assert_eq!(code, Some(101), "{out}");
}

#[test]
fn passing_tests_sum_every_binary() {
    let (code, out, _) = ci_run(&format!("{PASSING}{PASSING}"), 0);
    assert!(out.ends_with("tests: 6 passed, 0 failed\n"), "{out}");
    assert_eq!(code, Some(0));
}
