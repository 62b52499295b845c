//! `schema/run.schema.json` describes what `triage run --json` prints: real outputs (with
//! and without variants, page loads, QUIC mode, multipath) validate against it, and the
//! validator rejects what the schema forbids.
//!
//! The validator below covers the JSON Schema keywords the schema uses (`type`,
//! `properties`, `required`, `additionalProperties`, `items`, `minItems`, `maxItems`,
//! `enum`, `const`, `minimum`, `oneOf`, `$ref` into `$defs`); the `jsonschema` crate would
//! bring some 40 dependencies into the build for the same check.

mod common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("schema/run.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_u64() || v.is_i64(),
        _ => panic!("type {t} not handled"),
    }
}

/// Errors of `v` against `s` (`root` holds `$defs`), each with its JSON path.
fn validate(root: &Value, s: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(s) = s.as_object() else { return };
    for k in s.keys() {
        let known = [
            "$schema",
            "title",
            "description",
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "minItems",
            "maxItems",
            "enum",
            "const",
            "minimum",
            "oneOf",
            "$ref",
            "$defs",
        ];
        assert!(known.contains(&k.as_str()), "keyword {k} at {path} is not handled by this validator");
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("$ref {r}"));
        validate(root, &root["$defs"][name], v, path, errors);
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_ok(t.as_str().unwrap(), v)),
            _ => panic!("type {t}"),
        };
        if !ok {
            errors.push(format!("{path}: {v} is not of type {t}"));
            return;
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            errors.push(format!("{path}: {v} is not {c}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errors.push(format!("{path}: {v} is not one of {e:?}"));
        }
    }
    if let (Some(m), Some(x)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if x < m {
            errors.push(format!("{path}: {x} < {m}"));
        }
    }
    if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
        let matching = alts
            .iter()
            .filter(|a| {
                let mut e = Vec::new();
                validate(root, a, v, path, &mut e);
                e.is_empty()
            })
            .count();
        if matching != 1 {
            errors.push(format!("{path}: {matching} of oneOf's schemas match"));
        }
    }
    if let Some(o) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !o.contains_key(r.as_str().unwrap()) {
                errors.push(format!("{path}: required field {r} missing"));
            }
        }
        for (k, x) in o {
            let p = format!("{path}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(sub) => validate(root, sub, x, &p, errors),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{p}: field not in the schema")),
                    Some(sub @ Value::Object(_)) => validate(root, sub, x, &p, errors),
                    _ => {}
                },
            }
        }
    }
    if let Some(a) = v.as_array() {
        if let Some(n) = s.get("minItems").and_then(Value::as_u64) {
            if (a.len() as u64) < n {
                errors.push(format!("{path}: fewer than {n} items"));
            }
        }
        if let Some(n) = s.get("maxItems").and_then(Value::as_u64) {
            if (a.len() as u64) > n {
                errors.push(format!("{path}: more than {n} items"));
            }
        }
        if let Some(items) = s.get("items") {
            for (i, x) in a.iter().enumerate() {
                validate(root, items, x, &format!("{path}[{i}]"), errors);
            }
        }
    }
}

fn errors_of(v: &Value) -> Vec<String> {
    let s = schema();
    let mut e = Vec::new();
    validate(&s, &s, v, "$", &mut e);
    e
}

fn run_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_triage")).current_dir(root()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn real_outputs_match_the_schema() {
    // Without variants; page loads with variants; QUIC mode with datagrams; multipath.
    let cases = [
        "scenarios/cats-fifo.toml",
        "scenarios/ferguson-slow4g.toml",
        "scenarios/ferguson-slow4g-partial.toml",
        "scenarios/cats-page-slow4g-quic.toml",
        "scenarios/multipath-wifi-lte.toml",
    ];
    let mut seen = std::collections::BTreeSet::new();
    for file in cases {
        let v = run_json(&["run", file, "--json"]);
        let e = errors_of(&v);
        assert!(e.is_empty(), "{file}:\n{}", e.join("\n"));
        for variant in v["variants"].as_array().unwrap() {
            for f in variant["report"]["flows"].as_array().unwrap() {
                for k in ["page", "quic", "paths"] {
                    if !f[k].is_null() {
                        seen.insert(k);
                    }
                }
                if !f["page"]["datagrams"].is_null() {
                    seen.insert("datagrams");
                }
            }
        }
    }
    // Every optional part of the shape was checked on a real output.
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["datagrams", "page", "paths", "quic"]);
}

/// Long flows with jittered starts, stopped while open (exit status 3): the input echoes
/// `start_jitter_ns`, each open flow has its delivered bytes and a goodput, and the document
/// matches the schema.
#[test]
fn open_jittered_flows_match_the_schema() {
    let dir = std::env::temp_dir().join(format!("triage-schema-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = common::long_flows_text("open", "300ms", 2, "10Mbps", "start_jitter = \"50ms\"\n");
    let file = dir.join("open.toml");
    std::fs::write(&file, text).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_triage")).args(["run", file.to_str().unwrap(), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = errors_of(&v);
    assert!(e.is_empty(), "{}", e.join("\n"));
    assert_eq!(v["input"]["resolved"]["flows"][1]["start_jitter_ns"], 50_000_000);
    for f in v["variants"][0]["report"]["flows"].as_array().unwrap() {
        assert!(f["completed_ms"].is_null());
        assert!(f["delivered_bytes"].as_u64().unwrap() > 0);
        assert!(f["goodput_mbps"].as_f64().unwrap() > 0.0);
        assert!(f["start_ms"].as_f64().unwrap() < 50.0);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run whose input gave warnings (a warm recording: its cache hits) carries them in each
/// variant's report, as `triage run` prints them, and still matches the schema; a run without
/// any has no `warnings` key.
#[test]
fn import_warnings_are_in_the_report() {
    let dir = std::env::temp_dir().join(format!("triage-schema-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let har = root().join("../shared/data/pages/bbc.com.devtools.har");
    assert!(har.is_file(), "test data {} is missing: these tests need ../shared/data/pages", har.display());
    let file = dir.join("warm.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"warm\"\nstop = \"60s\"\n[topology]\nkind = \"profile\"\nname = \"lighthouse-mobile-slow-4g\"\n\
             [[flows]]\nname = \"page\"\nclient = \"c0\"\nserver = \"s0\"\npage = {:?}\n\
             [[variants]]\nname = \"fifo\"\n[[variants]]\nname = \"cats\"\ntransport = {{ scheduler = \"cats\" }}\n",
            har.display().to_string()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_triage")).arg("run").arg(&file).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = errors_of(&v);
    assert!(e.is_empty(), "{}", e.join("\n"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for variant in v["variants"].as_array().unwrap() {
        let w = variant["report"]["warnings"].as_array().expect("warnings in every variant's report");
        assert_eq!(w.len(), 1, "{w:?}");
        let line = w[0].as_str().unwrap();
        assert!(
            line.starts_with("flows[0].page: ")
                && line.contains("85 of 118 objects were served from the browser's cache")
        );
        assert!(stderr.contains(&format!("warning: {}: {line}", file.display())), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let quiet = run_json(&["run", "scenarios/cats-fifo.toml", "--json"]);
    assert!(quiet["variants"][0]["report"].get("warnings").is_none());
}

#[test]
fn the_file_written_by_out_is_the_json_printed() {
    let dir = std::env::temp_dir().join(format!("triage-schema-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let printed = run_json(&["run", "scenarios/cats.toml", "--json", "--out", dir.to_str().unwrap()]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(printed, written);
    assert_eq!(printed["schema_version"], 1);
    assert_eq!(printed["triage_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(printed["variants"][0]["name"], "");
    assert_eq!(printed["input"]["source"], "scenarios/cats.toml");
    assert_eq!(printed["input"]["stop_ms"], 60_000.0);
    assert_eq!(printed["input"]["scenario"]["topology"]["bottleneck"]["rate"], "2Mbps");
    // `resolved`: the transport as the connections ran it, defaults filled in (the file sets
    // cc, the scheduler and the priority option; the rest are the built-in defaults).
    let server = &printed["variants"][0]["resolved"]["flows"][0]["server_transport"];
    assert_eq!(server["cc"], "bbr");
    assert_eq!(server["scheduler"], "cats");
    assert_eq!(server["cats"]["payback_multiplier"], serde_json::json!([1, 1, 2, 2, 3]));
    assert_eq!(server["mss_bytes"], 1448);
    assert_eq!(server["initial_window_segments"], 10);
    assert_eq!(server["max_rto_ms"], 60_000.0);
    assert_eq!(server["ecn"], "off");
    // The resolved input: the scenario with everything it ran with written out; one flow and
    // no variants, so every transport setting is on [transport].
    let input = &printed["input"]["resolved"];
    assert_eq!(input["topology"]["bottleneck"]["rate_bps"], 2_000_000);
    assert_eq!(input["topology"]["bottleneck"]["queue"], serde_json::json!({"kind": "droptail", "packets": 100}));
    assert_eq!(input["stop_ns"], 60_000_000_000u64);
    assert_eq!(input["transport"]["cc"], "bbr");
    assert_eq!(input["transport"]["scheduler"], "cats");
    assert_eq!(input["transport"]["mss_bytes"], 1448);
    assert_eq!(input["transport"]["min_rto_ns"], 1_000_000_000);
    assert_eq!(input["flows"][0]["transport"], serde_json::json!({}));
    // Fed back as a JSON scenario, it runs the same.
    let file = dir.join("resolved.json");
    std::fs::write(&file, input.to_string()).unwrap();
    let again = run_json(&["run", file.to_str().unwrap(), "--json"]);
    assert_eq!(again["variants"], printed["variants"]);
    assert_eq!(&again["input"]["resolved"], input);
    let links = printed["variants"][0]["resolved"]["links"].as_array().unwrap();
    let bottleneck = links.iter().find(|l| l["name"] == "r1->r2").unwrap();
    assert_eq!(bottleneck["rate_bps"], 2_000_000);
    assert_eq!(bottleneck["delay_ms"], 25.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let good = run_json(&["run", "scenarios/cats-fifo.toml", "--json", "--seed", "9"]);
    // Variant overrides reach `resolved`: ferguson's fifo and cats variants.
    let v = run_json(&["run", "scenarios/ferguson-slow4g.toml", "--json"]);
    let sched = |i: usize| v["variants"][i]["resolved"]["flows"][0]["server_transport"]["scheduler"].clone();
    assert_eq!((sched(0), sched(1)), ("fifo".into(), "cats".into()));
    assert!(errors_of(&good).is_empty());
    assert_eq!(good["seed"], 9);
    assert_eq!(good["input"]["scenario"]["seed"], 9, "the seed in force");
    let mut missing = good.clone();
    missing["variants"][0]["report"]["flows"][0].as_object_mut().unwrap().remove("fct_ms");
    assert_eq!(errors_of(&missing), ["$.variants[0].report.flows[0]: required field \"fct_ms\" missing"]);
    let mut extra = good.clone();
    extra["variants"][0]["report"]["links"][0]["queue"]["bogus_packets"] = 1.into();
    assert_eq!(errors_of(&extra), ["$.variants[0].report.links[0].queue.bogus_packets: field not in the schema"]);
    let mut wrong = good.clone();
    wrong["variants"][0]["report"]["messages"][0]["bytes"] = "many".into();
    assert_eq!(errors_of(&wrong), ["$.variants[0].report.messages[0].bytes: \"many\" is not of type \"integer\""]);
    let mut unknown = good.clone();
    unknown["input"]["resolved"]["transport"]["mss"] = 1448.into();
    assert_eq!(errors_of(&unknown), ["$.input.resolved.transport.mss: field not in the schema"]);
    let mut old_shape = good["variants"][0]["report"].clone();
    old_shape["schema_version"] = 1.into();
    assert!(!errors_of(&old_shape).is_empty(), "a bare report (the old shape without variants) is rejected");
}
