//! `[[flows]] start_jitter`: a flow starts at `start` plus a uniform random delay below the
//! jitter, drawn from the scenario seed and the flow's name; the draw is what the resolved
//! input reports (to the nanosecond) and what the run does; a jitter that could reach past `stop` is an error.

use triage_sim::scenario::{Scenario, ScenarioError};

/// A dumbbell with `flows` (name, start, jitter) entries, a 10 Mbps bottleneck, stopped at 2 s.
fn text(seed: u64, flows: &[(&str, &str, Option<&str>)]) -> String {
    let mut t = format!(
        "name = \"j\"\nseed = {seed}\nstop = \"2s\"\n[topology]\nkind = \"dumbbell\"\npairs = {}\n\
         bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\naccess = {{ rate = \"1Gbps\", delay = \"0ms\" }}\n",
        flows.len()
    );
    for (i, (name, start, jitter)) in flows.iter().enumerate() {
        t += &format!("[[flows]]\nname = \"{name}\"\nclient = \"s{i}\"\nserver = \"c{i}\"\nstart = \"{start}\"\n");
        if let Some(j) = jitter {
            t += &format!("start_jitter = \"{j}\"\n");
        }
        t += "client_app = { kind = \"bulk\", size = \"100kB\" }\n";
    }
    t
}

/// Each flow's start as built (ns).
fn starts(seed: u64, flows: &[(&str, &str, Option<&str>)]) -> Vec<u64> {
    let b = Scenario::parse(&text(seed, flows), "j.toml").unwrap().build("j.toml", None).unwrap();
    (0..flows.len()).map(|f| b.sim.flow_spec(f).unwrap().start_ns).collect()
}

const MS: u64 = 1_000_000;

#[test]
fn a_jittered_start_lies_in_its_window_and_follows_the_seed_and_the_name() {
    let two = [("a", "10ms", Some("100ms")), ("b", "0ms", None)];
    let s1 = starts(1, &two);
    // In [start, start + jitter); the flow without jitter starts on time.
    assert!((10 * MS..110 * MS).contains(&s1[0]), "{}", s1[0]);
    assert_eq!(s1[1], 0);
    // The same seed, the same draw; other seeds, other draws (eight seeds, all distinct at
    // nanosecond resolution).
    assert_eq!(starts(1, &two), s1);
    let mut draws: Vec<u64> = (1..=8).map(|seed| starts(seed, &two)[0]).collect();
    assert!(draws.iter().all(|d| (10 * MS..110 * MS).contains(d)), "{draws:?}");
    draws.sort_unstable();
    draws.dedup();
    assert_eq!(draws.len(), 8);
    // A stream per flow name: adding a flow before it, or renaming another, does not move it.
    let three = [("z", "0ms", Some("100ms")), ("a", "10ms", Some("100ms")), ("b", "0ms", None)];
    assert_eq!(starts(1, &three)[1], s1[0]);
    // Two flows with the same window draw independently.
    let s = starts(1, &three);
    assert_ne!(s[0], s[1] - 10 * MS);
}

#[test]
fn the_drawn_start_is_what_runs_and_what_the_resolved_input_says() {
    let flows = [("a", "0ms", Some("500ms"))];
    let b = Scenario::parse(&text(3, &flows), "j.toml").unwrap().build("j.toml", None).unwrap();
    let start_ns = b.sim.flow_spec(0).unwrap().start_ns;
    assert!(start_ns > 0 && start_ns < 500 * MS);
    let doc = triage_sim::document::resolved_json(&b.sim, b.stop_ns);
    assert_eq!(doc["flows"][0]["start_ms"].as_f64().unwrap(), triage_sim::report::ms(start_ns));
    // start_ms keeps whole microseconds; the exact draw is there too (another simulator
    // can then start the flow at the same nanosecond), and only when start_ms rounds it.
    assert_ne!(start_ns % 1_000, 0, "this seed's draw is not a whole microsecond");
    assert_eq!(doc["flows"][0]["start_ns"].as_u64(), Some(start_ns));
    let on_time = Scenario::parse(&text(3, &[("a", "7ms", None)]), "j.toml").unwrap().build("j.toml", None).unwrap();
    let on_time = triage_sim::document::resolved_json(&on_time.sim, on_time.stop_ns);
    assert_eq!(on_time["flows"][0]["start_ms"], 7.0);
    assert!(on_time["flows"][0].get("start_ns").is_none());
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    let r = triage_sim::report::RunReport::new("j", 3, &sim);
    assert_eq!(r.flows[0].start_ms, triage_sim::report::ms(start_ns));
    // Nothing is sent before the drawn start: the first message is written after it.
    assert!(r.messages[0].written_ms.unwrap() >= triage_sim::report::ms(start_ns));
}

#[test]
fn a_jitter_reaching_past_stop_is_an_error_naming_the_field() {
    let t = text(1, &[("a", "1500ms", Some("600ms"))]);
    let err = Scenario::parse(&t, "j.toml").unwrap().build("j.toml", None).expect_err("refused");
    match &err {
        ScenarioError::Invalid { field, message, .. } => {
            assert_eq!(field, "flows[0].start_jitter");
            assert!(message.contains("reaches past `stop`"), "{message}");
        }
        other => panic!("{other}"),
    }
    // Exactly up to stop is fine: every draw is below it.
    let ok = text(1, &[("a", "1500ms", Some("500ms"))]);
    assert!(Scenario::parse(&ok, "j.toml").unwrap().build("j.toml", None).is_ok());
    // Not a duration: the parser says so.
    let bad = text(1, &[("a", "0ms", Some("soon"))]);
    let err = Scenario::parse(&bad, "j.toml").expect_err("refused").to_string();
    assert!(err.contains("flows[0].start_jitter") && err.contains("expected a duration"), "{err}");
}
