//! `triage page` through the built binary: output on real files, clear errors (file named,
//! non-zero exit, no panic) on bad input, export of dummy files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn triage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_triage")).args(args).output().expect("run triage")
}

fn data(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/pages");
    assert!(dir.is_dir(), "test data folder {} is missing: these tests need ../shared/data/pages", dir.display());
    dir.join(name).display().to_string()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("triage-page-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A failing run: non-zero exit, no panic, one line on stderr naming `needle`s.
fn assert_clean_error(out: &Output, needles: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "should fail: {stderr}");
    assert!(!stderr.contains("panicked"), "panicked: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{n:?} not in {stderr}");
    }
    stderr
}

#[test]
fn analyze_table_and_json() {
    let out = triage(&["page", "analyze", &data("etat.lu.har")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("20 objects") && text.contains("skipped: 2 (redirect 2)"), "{text}");
    assert!(text.contains("by type") && text.contains("by cats_level") && text.contains("by essential"), "{text}");

    let out = triage(&["page", "analyze", "--json", &data("paulirish.com.devtoolslog.json")]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    let objects = v["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 24);
    for o in objects {
        for k in ["url", "type", "bytes", "cats_level", "essential"] {
            assert!(o.get(k).is_some(), "object lacks {k}: {o}");
        }
    }
    assert_eq!(v["skipped"], serde_json::json!({"cors_preflight": 2, "data_url": 1}));
}

#[test]
fn analyze_with_page_and_rules() {
    let dir = scratch("rules");
    let rules = dir.join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\ndomain = \"wikipedia.org\"\ntype = \"image\"\ncats_level = 1\nessential = \"essential\"\n",
    )
    .unwrap();
    let out = triage(&[
        "page",
        "analyze",
        "--json",
        "--page",
        "page_2",
        "--rules",
        rules.to_str().unwrap(),
        &data("wikipedia.org.perflog.json"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["page"], "page_2");
    let images: Vec<_> = v["objects"].as_array().unwrap().iter().filter(|o| o["type"] == "image").collect();
    assert!(!images.is_empty());
    assert!(images.iter().all(|o| o["cats_level"] == 1 && o["essential"] == "essential"));

    std::fs::write(&rules, "[[rule]]\ndomain = \"x.com\"\nprio = 1\n").unwrap();
    let out = triage(&["page", "analyze", "--rules", rules.to_str().unwrap(), &data("etat.lu.har")]);
    assert_clean_error(&out, &["rules.toml", "line 3", "unknown field `prio`", "cats_level"]);

    let out = triage(&["page", "analyze", "--page", "nope", &data("etat.lu.har")]);
    assert_clean_error(&out, &["etat.lu.har", "nope", "page_1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_files_fail_cleanly() {
    let dir = scratch("bad");
    for (name, text, needle) in [
        ("truncated.har", r#"{"log": {"entries": [{"request": {"#, "not valid JSON"),
        (
            "wrongtype.har",
            r#"{"log": {"entries": [{"request": {"url": 1}}]}}"#,
            "log.entries[0].request.url: expected a string",
        ),
        ("empty.har", r#"{"log": {"entries": []}}"#, "no entries"),
        ("empty.json", "[]", "no requests"),
        ("binary.har", "\u{0}\u{1}garbage", "not valid JSON"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = triage(&["page", "analyze", path.to_str().unwrap()]);
        assert_clean_error(&out, &[name, needle]);
        let out = triage(&["page", "export", path.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
        assert_clean_error(&out, &[name, needle]);
    }
    let out = triage(&["page", "analyze", "/nonexistent/page.har"]);
    assert_clean_error(&out, &["/nonexistent/page.har", "no such file"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_writes_sequence_and_dummies() {
    let dir = scratch("export");
    let out = triage(&["page", "export", &data("wikipedia.org.browsertime.har"), "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seq: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("transfer_sequence.json")).unwrap()).unwrap();
    let items = seq.as_array().unwrap();
    assert_eq!(items.len(), 6);
    for it in items {
        for k in ["id", "category", "extension", "size", "transfer_time", "start_time", "file_name"] {
            assert!(it.get(k).is_some(), "item lacks {k}: {it}");
        }
        let f = dir.join("dummy_files").join(it["file_name"].as_str().unwrap());
        assert_eq!(std::fs::metadata(&f).unwrap().len(), it["size"].as_u64().unwrap(), "{}", f.display());
    }
    let html = std::fs::read(dir.join("dummy_files/0.html")).unwrap();
    assert!(html.starts_with(b"<!doctype html>"));
    // Built-in pages work wherever a file is expected.
    let out = triage(&["page", "export", "cats", "--out", dir.join("cats").to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(std::fs::metadata(dir.join("cats/dummy_files/4.js")).unwrap().len(), 150 * 1024);
    assert!(Path::new(&dir.join("cats/transfer_sequence.json")).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_everywhere() {
    for args in [
        &["page", "--help"][..],
        &["page", "analyze", "--help"],
        &["page", "export", "--help"],
        &["page", "builtin", "--help"],
    ] {
        let out = triage(args);
        assert!(out.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"), "{args:?}");
    }
    let out = triage(&["page", "builtin"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(["cats", "bing", "youtube", "news"].iter().all(|n| text.contains(n)));
}

/// Built-in pages are `builtin:NAME` on the command line as in scenarios; a bare NAME works
/// for `page` when no file has that name, and `--page NAME` of a reproduction says how to
/// write it.
#[test]
fn built_in_pages_are_named_as_in_scenarios() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_triage"))
            .current_dir(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, with_prefix, err) = run(&["page", "analyze", "builtin:cats", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let (_, bare, _) = run(&["page", "analyze", "cats", "--json"]);
    assert_eq!(with_prefix, bare);
    let (code, _, err) = run(&["page", "analyze", "builtin:nope"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("built-in: builtin:cats, builtin:bing"), "{err}");
    let (code, _, err) = run(&["reproduce", "priority-bucket", "--page", "bing", "--runs", "1"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("the built-in page of that name is \"builtin:bing\""), "{err}");
}

/// `page simulate` runs the scenario a user would write for one page load (by default as the
/// browser connects: `[flows.browser]`): its metrics equal `triage run` on that scenario; bad
/// flags are errors.
#[test]
fn page_simulate_equals_the_scenario_it_stands_for() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_triage"))
            .current_dir(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
            .args(args)
            .output()
            .unwrap()
    };
    let out =
        run(&["page", "simulate", "builtin:cats", "--rate", "2Mbps", "--rtt", "50ms", "--scheduler", "cats", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sim: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let scenario = "name = \"s\"\nseed = 1\nstop = \"600s\"\n[transport]\ncc = \"bbr\"\nmode = \"tcp\"\nscheduler = \"cats\"\n\
                    [measure]\ninterval = \"0ms\"\n[topology]\nkind = \"dumbbell\"\n\
                    bottleneck = { rate = \"2Mbps\", delay = \"25ms\" }\naccess = { rate = \"1Gbps\", delay = \"0ms\" }\n\
                    [[flows]]\nname = \"page\"\nclient = \"c0\"\nserver = \"s0\"\npage = \"builtin:cats\"\n\
                    [flows.browser]\nconnections = \"per-origin\"\ndns = \"auto\"\ntls = true\nserver_time = \"recorded\"\n\
                    streaming = true\n";
    let dir = std::env::temp_dir().join(format!("triage-simulate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = run(&["run", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let page = &doc["variants"][0]["report"]["flows"][0]["page"];
    for (ours, theirs) in [
        ("fcp_ms", "fcp_ms"),
        ("lcp_ms", "lcp_ms"),
        ("si_ms", "speed_index_ms"),
        ("tti_ms", "tti_ms"),
        ("plt_ms", "plt_ms"),
    ] {
        assert!(sim[ours].as_f64().is_some(), "{ours} missing: {sim}");
        assert_eq!(sim[ours], page[theirs], "{ours}");
    }
    // The CATS page's objects come from three origins: a connection each.
    assert_eq!((sim["objects"].as_u64(), sim["connections"].as_u64()), (Some(5), Some(3)));
    assert!(sim["tbt_ms"].is_null());
    // --html and --out write what `triage run` writes.
    let html = dir.join("r.html");
    let out_dir = dir.join("out");
    let out = run(&[
        "page",
        "simulate",
        "builtin:cats",
        "--html",
        html.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("Waterfalls") && text.contains("tbt_ms"), "an HTML report with the page's waterfall");
    assert!(out_dir.join("pages.csv").is_file() && out_dir.join("objects.csv").is_file());
    // Each object row names its own connection of the pool (three origins: 0, 1, 2).
    let objects = std::fs::read_to_string(out_dir.join("objects.csv")).unwrap();
    for n in 0..3 {
        assert!(objects.contains(&format!("page connection {n}")), "{objects}");
    }
    std::fs::remove_dir_all(&dir).ok();
    // Errors.
    let out = run(&["page", "simulate", "builtin:cats", "--profile", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--profile nope: no such profile"));
    let out = run(&["page", "simulate", "builtin:cats", "--rate", "2Mbps"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["page", "simulate", "builtin:cats", "--loss", "two"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--loss two"));
    // A Lantern fixture's trace.json is taken by default only with the browser model: with
    // --connections flow the run is the plain one-connection load (no error, no CPU model).
    let log = "../shared/reference/lantern/fixtures/render-blocking/devtoolslog.json";
    let out = run(&["page", "simulate", log, "--connections", "flow", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["trace"].is_null() && v["tbt_ms"].is_null(), "{v}");
    // The CPU slowdown scales a trace's CPU (or recorded gaps): alone it is an error.
    let out = run(&["page", "simulate", "builtin:cats", "--cpu-slowdown", "4"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cpu-slowdown"));
    let out = run(&["page", "simulate", "builtin:cats", "--connections", "many"]);
    assert_eq!(out.status.code(), Some(2));
    // Streaming discovery belongs to the browser model: asked for with the plain connection,
    // an error; --no-streaming (the scenario default) turns it off.
    let out = run(&["page", "simulate", "builtin:cats", "--connections", "flow", "--streaming"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--streaming"));
    let out = run(&["page", "simulate", "builtin:cats", "--connections", "flow", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `--profile recorded` without a trace replays the recording's processing gaps (× 1) and says
/// so; `--no-recorded-gaps` turns them off; both at once is a usage error.
#[test]
fn recorded_profile_takes_the_recorded_gaps_without_a_trace() {
    let f = data("ferguson.com.har");
    let with = triage(&["page", "simulate", &f, "--profile", "recorded"]);
    assert!(with.status.success());
    let with = String::from_utf8_lossy(&with.stdout).into_owned();
    assert!(with.contains("processing gaps × 1 stand in for CPU"), "{with}");
    let without = triage(&["page", "simulate", &f, "--profile", "recorded", "--no-recorded-gaps"]);
    let without = String::from_utf8_lossy(&without.stdout).into_owned();
    assert!(without.contains("network and server time only"), "{without}");
    // The in-body objects wait for the head script and stylesheets, then their processing:
    // the load ends later.
    assert_ne!(with.lines().nth(2), without.lines().nth(2));
    let both = triage(&["page", "simulate", &f, "--recorded-gaps", "--no-recorded-gaps"]);
    assert!(!both.status.success());
}

/// bbc.com's DevTools HAR is a warm load (85 of its 118 objects, the document among them,
/// came from the browser's cache): `page analyze` tags them and says so, `page simulate` warns
/// that its paints are not a first visit's, and `--keep-cache-hits` loads them (sized by their
/// Content-Length) instead.
#[test]
fn a_warm_recording_says_so() {
    let bbc = data("bbc.com.devtools.har");
    let out = triage(&["page", "analyze", &bbc]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("[cache] ").count(), 85, "{text}");
    assert!(text.contains("  [cache] [blocking] http://www.bbc.com/\n"), "{text}");
    assert!(
        text.contains(
            "\n85 of 118 objects were served from the browser's cache in the recording, the document among them (a \
             warm load): no bytes on the network here"
        ),
        "{text}"
    );
    let out = triage(&["page", "analyze", "--json", &bbc]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["cache_hits"].as_u64(), v["cache_hits_fetched"].as_u64()), (Some(85), Some(0)));
    assert_eq!(v["objects"][0]["from_cache"], true);
    assert_eq!(v["objects"].as_array().unwrap().iter().filter(|o| o["from_cache"] == true).count(), 85);

    let out = triage(&["page", "analyze", "--json", "--keep-cache-hits", &bbc]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["cache_hits"].as_u64(), v["cache_hits_fetched"].as_u64()), (Some(0), Some(85)));
    assert_eq!(
        (v["objects"][0]["bytes"].as_u64(), v["objects"][0]["from_cache"].as_bool()),
        (Some(30_536), Some(false))
    );
    assert_eq!(v["adjusted"]["cold_size_decoded"], 7);

    let out = triage(&["page", "simulate", &bbc]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: ") && stderr.contains("the document among them (a warm load)"), "{stderr}");
    // The JSON says it too, for a script that reads only that.
    let out = triage(&["page", "simulate", "--json", &bbc]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = v["warnings"].as_array().unwrap();
    assert!(w.len() == 1 && w[0].as_str().unwrap().contains("the document among them (a warm load)"), "{w:?}");
    let out = triage(&["page", "simulate", "--keep-cache-hits", &bbc]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("85 of 118 objects were served from the browser's cache in the recording; loaded over"),
        "{stderr}"
    );
    assert!(!stderr.contains("warm load"), "{stderr}");
    // A recording without cache hits prints no such line.
    let out = triage(&["page", "analyze", &data("etat.lu.har")]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("browser's cache"));
    let out = triage(&["page", "simulate", "--json", &data("etat.lu.har")]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([]));
}
