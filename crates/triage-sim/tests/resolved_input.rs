//! The run document's resolved input (`input.resolved`, README "Output") runs the same
//! simulation: every built-in scenario is run, its resolved input is fed back as a JSON
//! scenario, and the two documents are equal but for their input blocks; the resolved input of
//! the resolved input is itself (nothing is left to resolve).

use serde_json::Value;
use triage_sim::scenario_override::json_to_toml;
use triage_sim::sweep::run_text;

/// The document of `text` (TOML) run with `sets` and `seed`.
fn run(text: &str, file: &str, sets: &[String], seed: Option<u64>) -> Value {
    let (doc, _) = run_text(text, file, None, sets, seed).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&doc).unwrap()
}

/// Runs `text`, then its resolved input, and checks the two runs agree; returns the
/// resolved input.
fn round_trip(name: &str, text: &str, sets: &[String], seed: Option<u64>) -> Value {
    let first = run(text, name, sets, seed);
    let resolved = first["input"]["resolved"].clone();
    assert!(resolved.is_object(), "{name}: no input.resolved");
    let toml = json_to_toml(&resolved.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let second = run(&toml, &format!("{name} (resolved)"), &[], None);
    let without_input = |d: &Value| {
        let mut d = d.clone();
        d.as_object_mut().unwrap().remove("input");
        d
    };
    assert_eq!(without_input(&first), without_input(&second), "{name}: the resolved input ran differently");
    assert_eq!(first["input"]["stop_ms"], second["input"]["stop_ms"], "{name}");
    assert_eq!(second["input"]["resolved"], resolved, "{name}: resolving the resolved input changed it");
    resolved
}

#[test]
fn every_built_in_scenario_runs_the_same_from_its_resolved_input() {
    for (name, text) in triage_sim::builtin::SCENARIOS {
        let r = round_trip(name, text, &[], None);
        // Every flow's transport is written out somewhere: on a variant, the flow or
        // [transport].
        let flows = r["flows"].as_array().unwrap();
        let variants: Vec<&Value> = r["variants"].as_array().map_or(vec![], |v| v.iter().collect());
        for f in flows {
            for key in ["mode", "cc", "mss_bytes", "initial_window", "min_rto_ns", "scheduler", "ecn"] {
                let set = r["transport"].get(key).is_some()
                    || f["transport"].get(key).is_some()
                    || (!variants.is_empty() && variants.iter().all(|v| v["transport"].get(key).is_some()));
                assert!(set, "{name}: {key} of flow {} is not written out", f["name"]);
            }
        }
    }
}

#[test]
fn overrides_seeds_and_profiles_are_resolved() {
    let (_, text) = triage_sim::builtin::find("cats-fifo").unwrap();
    let sets = ["topology.bottleneck.rate=3Mbps".to_string(), "transport.cc=cubic".to_string()];
    let r = round_trip("cats-fifo", text, &sets, Some(7));
    assert_eq!(r["seed"], 7);
    assert_eq!(r["topology"]["bottleneck"]["rate_bps"], 3_000_000);
    assert_eq!(r["topology"]["bottleneck"]["delay_ns"], 25_000_000);
    assert_eq!(r["transport"]["cc"], "cubic");
    assert_eq!(r["transport"]["hystart"], false, "cubic's HyStart++ default is written out");
    assert_eq!(r["stop_ns"], 60_000_000_000u64);
    // A profile becomes the dumbbell it stands for: mobileSlow4G is 1638.4 kbps both ways,
    // 150 ms RTT (75 ms each way), a queue of twice the BDP but at least 100 packets.
    let (_, text) = triage_sim::builtin::find("cats-page-slow4g-quic").unwrap();
    let r = round_trip("cats-page-slow4g-quic", text, &[], None);
    let b = &r["topology"]["bottleneck"];
    assert_eq!(r["topology"]["kind"], "dumbbell");
    assert_eq!((b["rate_bps"].as_u64(), b["reverse_rate_bps"].as_u64()), (Some(1_638_400), Some(1_638_400)));
    assert_eq!(b["delay_ns"], 75_000_000);
    assert_eq!(b["queue"], serde_json::json!({"kind": "droptail", "packets": 100}));
    assert_eq!(r["topology"]["access"]["rate_bps"], 1_000_000_000);
    assert_eq!(r["flows"][0]["request_size_bytes"], 300);
}

/// Flows with their own transports under variants that change the controller: `ecn`
/// follows the controller where a flow does not set it (flow b: off under NewReno, eecn under
/// EECN; flow a: classic in both), so no placement on the layers gives every (variant, flow)
/// its value; it keeps the layers as written, and the runs still agree.
#[test]
fn per_flow_transports_under_variants_round_trip() {
    let text = r#"
name = "layers"
seed = 3
stop = "20s"
[transport]
mss = "1200B"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "4Mbps", delay = "10ms", queue = { kind = "red", packets = 60, min_th = 10, max_th = 30, ecn = true } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "a"
client = "c0"
server = "s0"
transport = { ecn = "classic" }
server_app = { kind = "bulk", size = "300KB" }
[[flows]]
name = "b"
client = "c1"
server = "s1"
start = "50ms"
server_app = { kind = "messages", messages = [{ name = "m", size = "40KB", priority = 1 }] }
[[variants]]
name = "newreno"
transport = { cc = "newreno" }
[[variants]]
name = "eecn"
transport = { cc = "eecn", initial_window = 4 }
"#;
    let r = round_trip("layers", text, &[], None);
    assert_eq!(r["flows"][0]["transport"]["ecn"], "classic");
    assert!(r["flows"][1]["transport"].get("ecn").is_none(), "{}", r["flows"][1]);
    for v in 0..2 {
        assert!(r["variants"][v]["transport"].get("ecn").is_none(), "{}", r["variants"][v]);
    }
    assert_eq!(r["variants"][1]["transport"]["initial_window"], 4);
    assert_eq!(r["variants"][0]["transport"]["initial_window"], 10);
    assert_eq!(r["transport"]["mss_bytes"], 1200, "every (variant, flow) ran with it: on [transport]");
    assert!(r["variants"][0]["transport"].get("mss_bytes").is_none());
    let q = &r["topology"]["bottleneck"]["queue"];
    assert_eq!((q["kind"].as_str(), q["max_p"].as_f64(), q["gentle"].as_bool()), (Some("red"), Some(0.02), Some(true)));
}
