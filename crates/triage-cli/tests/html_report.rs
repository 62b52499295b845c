//! The HTML reports render in headless Chromium (issue 15, must-show 3): the report of a
//! page load with FIFO and CATS variants (`run --out` then `triage report DIR`, and
//! `run --html`) and the report of `reproduce cats --html`. Each is loaded from disk with no
//! network; the test reads the DOM after scripts ran (`--dump-dom`): the report's script
//! marks `<body data-report-ready="yes">` only when it ran to its end, and
//! `data-report-error` on any script error; the console log must hold no uncaught error. It
//! also takes a screenshot of each.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it when missing). Without it the test says
//! so and passes, except under CI (`CI=true`), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn triage(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_triage")).current_dir(root()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, stderr).
fn browse(bin: &str, profile: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium on {}: {}", page.display(), String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Loads `page`, checks that its script ran without error and that the DOM holds `texts`,
/// and writes its screenshot to `png`.
fn check(bin: &str, dir: &Path, page: &Path, texts: &[&str], png: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(!html.contains("http://") || !html.contains("src=\"http"), "the report loads nothing from the network");
    let profile = dir.join("profile");
    let (dom, log) = browse(bin, &profile, page, &["--dump-dom"]);
    let body = dom.find("<body").map(|i| &dom[i..i + dom[i..].find('>').unwrap()]).unwrap_or_default();
    assert!(body.contains("data-report-ready=\"yes\""), "{}: the script did not finish: {body}\n{log}", page.display());
    assert!(!body.contains("data-report-error"), "{}: script error: {body}", page.display());
    assert!(!log.contains("Uncaught"), "{}: console error:\n{log}", page.display());
    for t in texts {
        assert!(dom.contains(t), "{}: the page lacks {t:?}", page.display());
    }
    let _ = std::fs::remove_file(png);
    browse(bin, &profile, page, &[&format!("--screenshot={}", png.display()), "--window-size=1200,1000"]);
    let shot = std::fs::read(png).unwrap();
    assert!(shot.starts_with(b"\x89PNG"), "{}: not a PNG", png.display());
    assert!(shot.len() > 20_000, "{}: {} bytes, a blank page?", png.display(), shot.len());
}

#[test]
fn reports_render_in_headless_chromium() {
    let Some(bin) = chromium() else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but chromium is missing (.ci/run installs it)");
        eprintln!("skipped: chromium is missing (apt-get install chromium)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("triage-html-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run");
    let html = dir.join("run.html");
    triage(&[
        "run",
        "scenarios/paulirish-slow4g.toml",
        "--out",
        out.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let said = triage(&["report", out.to_str().unwrap()]);
    assert_eq!(said.trim(), format!("wrote {}", out.join("report.html").display()));
    // The report of the directory is the report of the run.
    assert_eq!(std::fs::read_to_string(out.join("report.html")).unwrap(), std::fs::read_to_string(&html).unwrap());
    let page_texts = [
        "triage run: paulirish-slow4g",
        "Page loads",
        "Waterfalls",
        "fifo page: ",
        "cats page: ",
        "FCP ",
        "LCP ",
        "downloading, CATS level 0",
        "Page metrics",
        "report ready: ",
    ];
    check(bin, &dir, &out.join("report.html"), &page_texts, &dir.join("run.png"));
    let cats = dir.join("cats.html");
    triage(&["reproduce", "cats", "--html", cats.to_str().unwrap()]);
    let cats_texts = [
        "Table I: priority group completion time",
        "FIFO: priority groups",
        "CATS: priority groups",
        "Fig. 2: priority group completion time",
        "report ready: 9 table rows, 10 waterfall objects",
    ];
    check(bin, &dir, &cats, &cats_texts, &dir.join("cats.png"));
    let _ = std::fs::remove_dir_all(&dir);
}
