//! A wrong scenario gets one error naming the file, the field and what was expected.

use proptest::prelude::*;
use triage_sim::scenario::Scenario;

const GOOD: &str = r#"
name = "t"
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "25ms" }
access = { rate = "100Mbps", delay = "0ms" }
[[flows]]
name = "f"
client = "c0"
server = "s0"
server_app = { kind = "bulk", size = "10KB" }
"#;

fn err(text: &str) -> String {
    match Scenario::parse(text, "bad.toml").and_then(|s| s.build("bad.toml", None).map(|_| ())) {
        Ok(()) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn good_scenario_builds() {
    Scenario::parse(GOOD, "good.toml").unwrap().build("good.toml", None).unwrap();
}

#[test]
fn unknown_field_is_named() {
    let e = err(&GOOD.replace("name = \"f\"", "name = \"f\"\ncolour = \"red\""));
    assert!(e.starts_with("bad.toml: "), "{e}");
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn wrong_type_is_named() {
    let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\nseed = \"many\""));
    assert!(e.contains("seed") || e.contains("line 2"), "{e}");
}

#[test]
fn unknown_host_lists_the_hosts() {
    let e = err(&GOOD.replace("client = \"c0\"", "client = \"browser\""));
    assert!(e.contains("flows[0].client") && e.contains("browser") && e.contains("c0"), "{e}");
}

#[test]
fn missing_rate_is_explained() {
    let e = err(&GOOD.replace("rate = \"2Mbps\", ", ""));
    assert!(e.contains("topology.bottleneck.rate"), "{e}");
}

#[test]
fn bad_unit_is_explained() {
    let e = err(&GOOD.replace("25ms", "25 parsecs"));
    assert!(e.contains("bad.toml"), "{e}");
}

#[test]
fn missing_trace_file_names_it() {
    let e = err(&GOOD.replace("rate = \"2Mbps\",", "trace = \"no/such/file.down\","));
    assert!(e.contains("topology.bottleneck.trace") && e.contains("no/such/file.down"), "{e}");
}

#[test]
fn absurd_sizes_are_refused_not_allocated() {
    let e = err(&GOOD.replace("kind = \"dumbbell\"", "kind = \"dumbbell\"\npairs = 4000000000"));
    assert!(e.contains("topology.pairs"), "{e}");
}

proptest! {
    /// Any text: an error or a scenario, never a panic.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        if let Ok(s) = Scenario::parse(&text, "x.toml") {
            let _ = s.build("x.toml", None);
        }
    }

    /// Mutations of a good file: an error or a scenario, never a panic.
    #[test]
    fn mutated_scenarios_never_panic(pos in 0usize..400, junk in "[a-z0-9=\\[\\]{}\",. \n-]{0,12}") {
        let mut t = GOOD.to_string();
        let p = pos.min(t.len());
        if t.is_char_boundary(p) {
            t.insert_str(p, &junk);
        }
        if let Ok(s) = Scenario::parse(&t, "x.toml") {
            if let Ok(b) = s.build("x.toml", None) {
                // Whatever the numbers, running never panics (overflow checks are on in tests).
                let mut sim = b.sim;
                sim.run(b.stop_ns.min(2_000_000_000), |_| {});
            }
        }
    }

    /// Extreme values in every numeric field: an error or a run, never a panic.
    #[test]
    fn extreme_values_never_panic(
        delay in prop_oneof![Just("0ns".to_string()), Just("9223372036854775807".to_string()), (0u64..10_000).prop_map(|x| format!("{x}ms"))],
        rate in prop_oneof![Just("1bps".to_string()), Just("9223372036854775807".to_string()), (1u64..10_000).prop_map(|x| format!("{x}kbps"))],
        size in prop_oneof![Just("1B".to_string()), Just("4GiB".to_string()), (1u64..100_000).prop_map(|x| format!("{x}B"))],
        start in prop_oneof![Just("0ms".to_string()), Just("9223372036854775807".to_string())],
        timeout in prop_oneof![Just("1ns".to_string()), Just("9223372036854775807".to_string()), Just("200ms".to_string())],
    ) {
        let t = format!(r#"
name = "x"
stop = "3s"
[transport]
delayed_ack_timeout = "{timeout}"
min_rto = "{timeout}"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "{delay}" }}
access = {{ rate = "100Mbps", delay = "0ms" }}
[[flows]]
name = "f"
client = "c0"
server = "s0"
start = "{start}"
server_app = {{ kind = "bulk", size = "{size}" }}
"#);
        let t = t.replace("\"9223372036854775807\"", "9223372036854775807");
        if let Ok(s) = Scenario::parse(&t, "x.toml") {
            if let Ok(b) = s.build("x.toml", None) {
                let mut sim = b.sim;
                sim.run(b.stop_ns, |_| {});
            }
        }
    }
}

/// A table-valued field given a bare value, or a table without `kind`, names the field and
/// shows the forms it accepts (serde said "expected internally tagged enum LossModelSpec").
#[test]
fn table_fields_name_the_field_and_the_accepted_forms() {
    let bulk = "server_app = { kind = \"bulk\", size = \"10KB\" }";
    let cases = [
        (GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", loss = 0.05 }"), "topology.bottleneck.loss: expected a table: { kind = \"none\" }, { kind = \"bernoulli\", loss_prob = 0.02 }, { kind = \"gilbert_elliott\"", "got floating point `0.05`"),
        (GOOD.replace("delay = \"0ms\" }", "delay = \"0ms\", reverse_loss = \"2%\" }"), "topology.access.reverse_loss: expected a table:", "got string \"2%\""),
        (GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", loss = { loss_prob = 0.05 } }"), "topology.bottleneck.loss: missing `kind`; expected a table: { kind = \"none\" }", "bernoulli"),
        (GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", queue = 100 }"), "topology.bottleneck.queue: expected a table: { packets = 100 }", "got integer `100`"),
        (GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", loss = { kind = \"gilbert\" } }"), "topology.bottleneck.loss.kind: unknown variant `gilbert`", "gilbert_elliott"),
        (GOOD.replace("bottleneck = {", "bottleneck = { colour = 1,"), "topology.bottleneck: unknown field `colour`", "`rate`"),
        (GOOD.replace("bottleneck = { rate = \"2Mbps\", delay = \"25ms\" }", "bottleneck = \"2Mbps\""), "topology.bottleneck: expected a link table like { rate = \"2Mbps\", delay = \"25ms\" }", "got string"),
        (GOOD.replace(bulk, "server_app = \"bulk\""), "server_app: expected a table: { kind = \"sink\" }, { kind = \"bulk\", size = \"10MB\" }", "line 11, column 14"),
        (GOOD.replace(bulk, "client_app = { size = \"1KB\" }"), "client_app: missing `kind`; expected a table: { kind = \"sink\" }", "line 11, column 14"),
        (GOOD.replace("kind = \"dumbbell\"\n", ""), "topology: missing `kind`; expected a table with kind = \"dumbbell\" (pairs, bottleneck, access), \"profile\"", "custom"),
        (
            "name = \"t\"\ntopology = \"dumbbell\"\nflows = []\n".to_string(),
            "topology: expected a table with kind = \"dumbbell\"",
            "got string \"dumbbell\"",
        ),
        (
            "name = \"t\"\nflows = []\n[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nlinks = [{ between = [\"a\", \"b\"], delay = \"1ms\", rate = \"1Mbps\" }, { between = [\"a\", \"b\"], delay = \"1ms\", loss = 1 }]\n".to_string(),
            "topology.links[1].loss: expected a table:",
            "got integer `1`",
        ),
        (GOOD.replace("kind = \"dumbbell\"", "kind = \"profile\"\nname = \"wpt-3g\"\nloss = 0.1").replace("bottleneck = { rate = \"2Mbps\", delay = \"25ms\" }\naccess = { rate = \"100Mbps\", delay = \"0ms\" }\n", ""), "topology.loss: expected a table:", "got floating point `0.1`"),
    ];
    for (text, message, also) in cases {
        let e = err(&text);
        assert!(e.starts_with("bad.toml: "), "{e}");
        assert!(e.contains(message) && e.contains(also), "expected {message:?} and {also:?} in:\n{e}");
        assert!(!e.contains("internally tagged") && !e.contains("Toml") && !e.contains("Spec"), "{e}");
    }
}

/// User values that overflowed the arithmetic they feed are bounded with an error naming the
/// field and the limit.
#[test]
fn values_that_overflowed_are_refused_with_the_limit() {
    let transport = |line: &str| GOOD.replace("name = \"t\"", &format!("name = \"t\"\n[transport]\n{line}"));
    // Stalled after the SYN (window arithmetic overflowed).
    let e = err(&transport("receive_buffer = \"18446744073709551615B\""));
    assert!(e.contains("flows[0].transport.receive_buffer") && e.contains("1 GiB") && e.contains("1073741824"), "{e}");
    Scenario::parse(&transport("receive_buffer = \"1GiB\""), "ok").unwrap().build("ok", None).unwrap();
    // `as u32` made this 1448.
    let e = err(&transport("mss = \"4294968744B\""));
    assert!(e.contains("flows[0].transport.mss") && e.contains("64..65000") && e.contains("4294968744"), "{e}");
    Scenario::parse(&transport("mss = 65000"), "ok").unwrap().build("ok", None).unwrap();
    // A page object of 1e300 bytes (2^64 - 1 after import) overflowed the flow's byte sum.
    let dir = std::env::temp_dir().join(format!("triage-overflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let har = dir.join("huge.har");
    std::fs::write(
        &har,
        r#"{"log": {"entries": [{"request": {"url": "https://a.com/"},
            "response": {"status": 200, "content": {"size": 1e300, "mimeType": "text/html"}}}]}}"#,
    )
    .unwrap();
    let page = format!("page = {:?}", har.display().to_string());
    let e = err(&GOOD.replace("server_app = { kind = \"bulk\", size = \"10KB\" }", &page));
    assert!(e.contains("flows[0].page") && e.contains("https://a.com/") && e.contains("4294967295"), "{e}");
    let e = err(&GOOD.replace(
        "server_app = { kind = \"bulk\", size = \"10KB\" }",
        "page = \"builtin:cats\"\nrequest_size = \"0B\"",
    ));
    assert!(e.contains("flows[0].request_size") && e.contains("1 byte to 4 GiB"), "{e}");
    std::fs::remove_dir_all(dir).ok();
}

/// Flow `f` uses client port 40000 + f: from 25,537 flows two flows shared an address pair
/// (and a debug build panicked).
#[test]
fn more_flows_than_ports_are_refused() {
    let head = GOOD.split("[[flows]]").next().unwrap().to_string();
    let flow = "[[flows]]\nname = \"f\"\nclient = \"c0\"\nserver = \"s0\"\n";
    let text = head + &flow.repeat(triage_sim::sim::MAX_FLOWS + 1);
    let e = err(&text);
    assert!(e.contains("flows: expected at most 25536 flows") && e.contains("got 25537"), "{e}");
}

/// Values that parsed and then did nothing useful, silently, are errors naming the field.
#[test]
fn nonsense_is_refused_naming_the_field() {
    let custom = |links: &str| {
        format!(
            "name = \"t\"\n[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nlinks = [{links}]\n\
             [[flows]]\nname = \"f\"\nclient = \"a\"\nserver = \"b\"\n"
        )
    };
    let second_flow = "[[flows]]\nname = \"f\"\nclient = \"c0\"\nserver = \"s0\"\n";
    let cases = [
        (GOOD.replace("name = \"t\"", "name = \"t\"\nstop = \"0s\""), "bad.toml: stop: expected a positive duration"),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nstop = \"1s\"").replace("server = \"s0\"", "server = \"s0\"\nstart = \"2s\""),
            "flows[0].start: 2s is not before `stop` (1s): the flow would never start",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nstop = \"1s\"").replace("server = \"s0\"", "server = \"s0\"\nstart = \"1s\""),
            "flows[0].start: 1s is not before `stop`",
        ),
        (
            custom("{ between = [\"a\", \"a\"], rate = \"1Mbps\", delay = \"1ms\" }"),
            "topology.links[0].between: a link joins two different nodes, not \"a\" to itself",
        ),
        (
            GOOD.replace("rate = \"2Mbps\",", "rate = \"2Mbps\", trace = \"x.down\","),
            "topology.bottleneck.rate: `rate` would be ignored: that direction follows `trace`; give the reverse direction's rate as `reverse_rate`",
        ),
        (
            GOOD.replace("rate = \"2Mbps\",", "trace = \"x.down\", reverse_rate = \"1Mbps\", reverse_trace = \"x.up\","),
            "topology.bottleneck.reverse_rate: `reverse_rate` would be ignored: that direction follows `reverse_trace`",
        ),
        (GOOD.to_string() + second_flow, "flows[1].name: \"f\" is also the name of flows[0]"),
        (
            GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", queue = { bytes = \"1000B\" } }"),
            "topology.bottleneck.queue.bytes: 1000 bytes cannot hold one full-sized data packet of flows[0] (1500 bytes)",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\n[transport]\nmode = \"quic\"")
                .replace("delay = \"0ms\" }", "delay = \"0ms\", queue = { bytes = \"1479B\" } }"),
            "topology.access.queue.bytes: 1479 bytes cannot hold one full-sized data packet of flows[0] (1480 bytes)",
        ),
    ];
    for (text, message) in cases {
        let e = err(&text);
        assert!(e.contains(message), "expected {message:?} in:\n{e}");
    }
    // The limits themselves are fine.
    let ok = |text: String| Scenario::parse(&text, "ok.toml").unwrap().build("ok.toml", None).unwrap();
    ok(GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", queue = { bytes = \"1500B\" } }"));
    ok(GOOD
        .replace("name = \"t\"", "name = \"t\"\nstop = \"1s\"")
        .replace("server = \"s0\"", "server = \"s0\"\nstart = \"999ms\""));
    ok(custom("{ between = [\"a\", \"b\"], rate = \"1Mbps\", delay = \"1ms\" }"));
}

#[test]
fn values_that_would_stall_or_spin_a_run_are_refused() {
    let cases = [
        (GOOD.replace("name = \"t\"", "name = \"t\"\n[transport]\nmss = 4\npriority_option = true"), "transport.mss"),
        (GOOD.replace("name = \"t\"", "name = \"t\"\n[transport]\ninitial_rto = \"0ms\""), "transport.initial_rto"),
        (GOOD.replace("name = \"t\"", "name = \"t\"\n[transport]\nreceive_buffer = \"100B\""), "transport.receive_buffer"),
        (GOOD.replace("size = \"10KB\"", "size = \"0B\""), "server_app.size"),
        (
            GOOD.replace(
                "server_app = { kind = \"bulk\", size = \"10KB\" }",
                "server_app = { kind = \"messages\", messages = [{ name = \"a\", size = \"1KB\", at = \"2s\" }, { name = \"b\", size = \"1KB\", at = \"1s\" }] }",
            ),
            "messages[1].at",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\n[transport]\nload_shedding = { loss_window_packets = 0 }"),
            "loss_window_packets",
        ),
    ];
    for (text, field) in cases {
        let e = err(&text);
        assert!(e.contains(field), "{field}: {e}");
    }
}

#[test]
fn quic_mode_parses_and_its_options_are_checked() {
    let quic = GOOD.replace("name = \"t\"\n", "name = \"t\"\n[transport]\nmode = \"quic\"\nscheduler = \"rfc9218\"\n");
    let s = Scenario::parse(&quic, "q.toml").unwrap();
    s.build("q.toml", None).unwrap();
    let e = err(&GOOD.replace("name = \"t\"\n", "name = \"t\"\n[transport]\nscheduler = \"rr\"\n"));
    assert!(e.contains("transport.scheduler") && e.contains("mode = \"quic\""), "{e}");
    let e =
        err(&GOOD.replace("name = \"t\"\n", "name = \"t\"\n[transport]\nmode = \"quic\"\npriority_option = true\n"));
    assert!(e.contains("transport.mode") && e.contains("TCP-mode"), "{e}");
    let e = err(&GOOD.replace("name = \"t\"\n", "name = \"t\"\n[transport]\nmode = \"udp\"\n"));
    assert!(e.contains("udp"), "{e}");
    let msgs = "server_app = { kind = \"messages\", messages = [{ name = \"x\", size = \"1KB\", unreliable = true, stream = \"s\" }] }";
    let e = err(&quic.replace("server_app = { kind = \"bulk\", size = \"10KB\" }", msgs));
    assert!(e.contains("flows[0].server_app.messages[0].stream") && e.contains("unreliable"), "{e}");
}

#[test]
fn reliability_options_need_quic_mode_a_page_and_a_known_policy() {
    let page = GOOD.replace("server_app = { kind = \"bulk\", size = \"10KB\" }", "page = \"builtin:cats\"");
    let e = err(&page.replace("[topology]", "[transport]\nreliability = \"fonts\"\n[topology]"));
    assert!(e.contains("transport.reliability") && e.contains("mode = \"quic\""), "{e}");
    let e = err(&page.replace("[topology]", "[transport]\nmode = \"quic\"\nreliability = \"some\"\n[topology]"));
    assert!(e.contains("transport.reliability") && e.contains("cats_level4"), "{e}");
    let e = err(&GOOD.replace("[topology]", "[transport]\nmode = \"quic\"\nreliability = \"fonts\"\n[topology]"));
    assert!(e.contains("transport.reliability") && e.contains("needs `page`"), "{e}");
    let e = err(&GOOD.replace("[topology]", "[transport]\ndatagram_order = \"priority\"\n[topology]"));
    assert!(e.contains("transport.datagram_order"), "{e}");
    let e = err(&page.replace("[topology]", "[transport]\npartial_deadlines = { font = \"3s\" }\n[topology]"));
    assert!(e.contains("transport.partial_deadlines"), "{e}");
    let e = err(&GOOD.replace("name = \"f\"", "name = \"f\"\nsequential = true"));
    assert!(e.contains("flows[0].sequential"), "{e}");
    let ok = page.replace(
        "[topology]",
        "[transport]\nmode = \"quic\"\nreliability = \"cats_level4\"\ndatagram_order = \"priority\"\n[topology]",
    );
    Scenario::parse(&ok, "ok.toml").unwrap().build("ok.toml", None).unwrap();
}

/// Controller and scheduler parameters that overflowed (or spun) where they were only
/// checked to be positive: each is bounded, with an error naming the field's full path.
#[test]
fn controller_and_scheduler_parameters_are_bounded() {
    let transport = |lines: &str| GOOD.replace("name = \"t\"", &format!("name = \"t\"\n[transport]\n{lines}"));
    let queue = |q: &str| GOOD.replace("delay = \"25ms\" }", &format!("delay = \"25ms\", queue = {q} }}"));
    let cases = [
        (
            transport("scheduler = \"cats\"\ncats = { payback_multiplier = [1, 1, 1, 1, 9223372036854775807] }"),
            "flows[0].transport.cats.payback_multiplier[4]: expected 1..100, got 9223372036854775807",
        ),
        (
            transport("scheduler = \"cats\"\ncats = { payback_multiplier = [0, 1, 1, 1, 1] }"),
            "flows[0].transport.cats.payback_multiplier[0]: expected 1..100, got 0",
        ),
        (
            transport("scheduler = \"cats\"\ncats = { high_watermark = [\"1KB\", \"1KB\", \"1KB\", \"1KB\", \"1KB\"], low_watermark = [\"2KB\", \"1KB\", \"1KB\", \"1KB\", \"1KB\"] }"),
            "flows[0].transport.cats.low_watermark[0]: expected at most high_watermark[0] (1000 bytes), got 2000",
        ),
        (
            transport("cc = \"vcp\"\nvcp = { t_rho = \"5000000000s\" }"),
            "flows[0].transport.vcp.t_rho: expected a positive duration of at most 10s",
        ),
        (transport("cc = \"vcp\"\nvcp = { t_rho = \"0ms\" }"), "flows[0].transport.vcp.t_rho: expected a positive duration"),
        (transport("cc = \"vcp\"\nvcp = { beta = 1.5 }"), "flows[0].transport.vcp.beta: expected 0 < β < 1, got 1.5"),
        (transport("cc = \"eecn\"\neecn = { d = 1 }"), "flows[0].transport.eecn.d: expected at least 2, got 1"),
        (
            transport("cc = \"eecn\"\neecn = { initial_window_cl2 = 0 }"),
            "flows[0].transport.eecn.initial_window_cl2: expected at least 1 segment",
        ),
        (
            transport("load_shedding = { loss_window_packets = 4000000000 }"),
            "flows[0].transport.load_shedding.loss_window_packets: expected 1..100000 packets, got 4000000000",
        ),
        (
            queue("{ kind = \"vcp\", packets = 100, t_rho = \"5000000000s\" }"),
            "topology.bottleneck.queue.t_rho: expected a positive duration of at most 10s",
        ),
        (
            queue("{ kind = \"eecn\", packets = 100, horizon = \"5000000000s\" }"),
            "topology.bottleneck.queue.horizon: expected a positive duration of at most 60s",
        ),
    ];
    for (text, message) in cases {
        let e = err(&text);
        assert!(e.starts_with("bad.toml: ") && e.contains(message), "expected {message:?} in:\n{e}");
    }
    // The largest accepted values run.
    for ok in [
        transport("scheduler = \"cats\"\ncats = { payback_multiplier = [100, 100, 100, 100, 100] }"),
        transport("cc = \"vcp\"\nvcp = { t_rho = \"10s\" }"),
        queue("{ kind = \"vcp\", packets = 100, t_rho = \"10s\" }"),
    ] {
        let b = Scenario::parse(&ok, "ok.toml").unwrap().build("ok.toml", None).unwrap();
        let mut sim = b.sim;
        sim.run(b.stop_ns.min(30_000_000_000), |_| {});
    }
}

/// Time series are bounded up front: `interval = "1ns"` reached 22 GB in 30 s, a stuck flow
/// with a 100,000 s `stop` 3 GB. The error says the limit, why, and an interval that fits.
#[test]
fn time_series_are_bounded_up_front() {
    let measure = |m: &str| GOOD.replace("name = \"t\"", &format!("name = \"t\"\n{m}\n[measure]\ninterval = \"1ns\""));
    let e = err(&measure(""));
    assert!(e.contains("measure.interval: 1ns over 10min records 600000000001 samples for each of 8 series"), "{e}");
    assert!(e.contains("the limit is 1024 MiB") && e.contains("kept in memory until the run ends"), "{e}");
    assert!(e.contains("expected an interval of at least 215us"), "{e}");
    let stuck = GOOD.replace("name = \"t\"", "name = \"t\"\nstop = \"100000s\"");
    let e = err(&stuck);
    assert!(e.contains("10ms over 100000s") && e.contains("at least 36ms"), "{e}");
    // The suggested interval fits; "0ms" records nothing and is always accepted.
    let ok = GOOD.replace("name = \"t\"", "name = \"t\"\n[measure]\ninterval = \"215us\"");
    Scenario::parse(&ok, "ok").unwrap().build("ok", None).unwrap();
    let ok = stuck.replace("stop = \"100000s\"", "stop = \"100000s\"\n[measure]\ninterval = \"0ms\"");
    Scenario::parse(&ok, "ok").unwrap().build("ok", None).unwrap();
}

/// Errors inside `[topology]` and nested inline tables point at the value itself and name
/// its full path (they pointed at the `[topology]` header, often without the field).
#[test]
fn errors_point_at_the_value_with_its_full_path() {
    let bulk = "server_app = { kind = \"bulk\", size = \"10KB\" }";
    let cases = [
        (
            GOOD.replace("kind = \"dumbbell\"", "kind = \"dumbbell\"\npairs = \"three\""),
            "line 5, column 9",
            "topology.pairs: expected a whole number (0 or more), got string \"three\"",
        ),
        (
            GOOD.replace("rate = \"2Mbps\"", "rate = \"2 parsecs\""),
            "line 5, column 23",
            "topology.bottleneck.rate: expected a rate like",
        ),
        (
            GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", queue = { packets = \"many\" } }"),
            "line 5, column 68",
            "topology.bottleneck.queue.packets: expected a whole number (0 or more), got string \"many\"",
        ),
        (
            GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", loss = { kind = \"bernoulli\", loss_prob = 1.5 } }"),
            "line 5, column 89",
            "topology.bottleneck.loss.loss_prob: expected a probability: a number in [0, 1] such as 0.05, or a percentage such as \"5%\", got 1.5",
        ),
        (
            "name = \"t\"\nflows = []\n[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nlinks = [{ between = [\"a\", \"b\"], delay = \"1ms\", rate = \"1Mbps\" },\n  { between = [\"a\", \"b\"], delay = \"1ms\", rate = \"1Mbps\", queue = { packets = -1 } }]\n".to_string(),
            "line 7, column 78",
            "topology.links[1].queue.packets: expected a whole number (0 or more), got integer `-1`",
        ),
        (
            GOOD.replace(bulk, "server_app = { kind = \"bulk\", size = \"ten\" }"),
            "line 11, column 38",
            "flows[0].server_app.size: expected a size like",
        ),
        (
            GOOD.replace(bulk, "server_app = { kind = \"messages\", messages = [{ name = \"a\", size = \"1KB\", priority = \"high\" }] }"),
            "line 11, column 86",
            "flows[0].server_app.messages[0].priority: expected a whole number (0 or more), got string \"high\"",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nseed = \"many\""),
            "line 3, column 8",
            "seed: expected a whole number (0 or more), got string \"many\"",
        ),
        // A field of another kind names itself and points at its value, not at its table.
        (
            GOOD.replace("kind = \"dumbbell\"", "kind = \"dumbbell\"\nhosts = [\"a\"]"),
            "line 5, column 9",
            "topology.hosts: only applies to kind = \"custom\"",
        ),
        (
            GOOD.replace(bulk, "server_app = { kind = \"sink\", size = \"1KB\" }"),
            "line 11, column 38",
            "flows[0].server_app.size: only applies to kind = \"bulk\"",
        ),
    ];
    for (text, at, message) in cases {
        let e = err(&text);
        assert!(e.contains(at) && e.contains(message), "expected {at:?} and {message:?} in:\n{e}");
    }
    // "5%" is a probability.
    let ok =
        GOOD.replace("delay = \"25ms\" }", "delay = \"25ms\", loss = { kind = \"bernoulli\", loss_prob = \"5%\" } }");
    match Scenario::parse(&ok, "ok").unwrap().topology {
        Some(triage_sim::scenario::TopologyToml::Dumbbell { bottleneck, .. }) => {
            assert_eq!(bottleneck.loss, Some(triage_sim::loss::LossModel::Bernoulli { loss_prob: 0.05 }))
        }
        t => panic!("{t:?}"),
    }
}

/// A link's `jitter` and `duplicate` are checked where they are written.
#[test]
fn jitter_and_duplicate_are_checked() {
    let link = |extra: &str| GOOD.replace("delay = \"25ms\" }", &format!("delay = \"25ms\", {extra} }}"));
    let cases = [
        (link("jitter = { max = \"5ms\" }"), "topology.bottleneck.jitter: missing `kind`"),
        (
            link("jitter = { kind = \"uniform\", max = \"20s\" }"),
            "topology.bottleneck.jitter.max: expected at most 10s, got 20s",
        ),
        (
            link("jitter = { kind = \"uniform\", mean = \"5ms\" }"),
            "topology.bottleneck.jitter.mean: only applies to kind = \"exponential\"",
        ),
        (
            link("jitter = \"5ms\""),
            "topology.bottleneck.jitter: expected a table: { kind = \"uniform\", max = \"10ms\" }",
        ),
        (link("duplicate = 1.5"), "topology.bottleneck.duplicate: expected a probability"),
    ];
    for (text, message) in cases {
        let e = err(&text);
        assert!(e.contains(message), "expected {message:?} in:\n{e}");
    }
    for ok in [link("jitter = { kind = \"exponential\", mean = \"5ms\" }, duplicate = \"2%\""), link("duplicate = 0")] {
        let b = Scenario::parse(&ok, "ok").unwrap().build("ok", None).unwrap();
        let mut sim = b.sim;
        sim.run(b.stop_ns, |_| {});
    }
}

/// A link's framing `overhead` is bounded, only for constant-rate links, and echoed in the
/// resolved input only where it was given.
#[test]
fn link_overhead_is_checked() {
    let link = |extra: &str| GOOD.replace("delay = \"25ms\" }", &format!("delay = \"25ms\", {extra} }}"));
    let cases = [
        (link("overhead = \"2kB\""), "topology.bottleneck.overhead: expected at most 1024 bytes of framing per packet"),
        (
            GOOD.replace("bottleneck = { rate = \"2Mbps\", delay = \"25ms\" }", "bottleneck = { delay = \"25ms\", trace = \"../../../../shared/data/traces/none.up\", reverse_rate = \"1Mbps\", overhead = 2 }"),
            "topology.bottleneck.overhead: framing overhead applies to constant-rate links",
        ),
        (link("overhead = \"two\""), "topology.bottleneck.overhead"),
    ];
    for (text, message) in cases {
        let e = err(&text);
        assert!(e.contains(message), "expected {message:?} in:\n{e}");
    }
    let resolved = |text: &str| {
        let (doc, _) = triage_sim::sweep::run_text(text, "ok.toml", None, &[], None).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
        doc["input"]["resolved"]["topology"].clone()
    };
    let topology = resolved(&link("overhead = 2"));
    assert_eq!(topology["bottleneck"]["overhead_bytes"], 2);
    assert!(topology["access"].get("overhead_bytes").is_none());
    assert!(resolved(GOOD)["bottleneck"].get("overhead_bytes").is_none());
}

/// A byte-limited queue is checked against the flows whose data crosses it: a queue smaller
/// than one large packet is fine on a link that only a small-packet flow (or only ACKs)
/// cross, and an error when a large-packet flow's data crosses it.
#[test]
fn byte_queues_are_checked_per_route() {
    // big: s1 -> r -> c1 (MSS 1448, 1500-byte packets); small: s2 -> r -> c2 (MSS 448).
    let topo = |small_queue_link: &str| {
        let q = |l: &str| if l == small_queue_link { ", queue = { bytes = \"600B\" }" } else { "" };
        format!(
            "name = \"t\"\n[topology]\nkind = \"custom\"\nhosts = [\"s1\", \"c1\", \"s2\", \"c2\"]\nrouters = [\"r\"]\n\
             links = [\n\
               {{ between = [\"s1\", \"r\"], rate = \"10Mbps\", delay = \"1ms\"{} }},\n\
               {{ between = [\"r\", \"c1\"], rate = \"10Mbps\", delay = \"1ms\"{} }},\n\
               {{ between = [\"s2\", \"r\"], rate = \"10Mbps\", delay = \"1ms\"{} }},\n\
               {{ between = [\"r\", \"c2\"], rate = \"10Mbps\", delay = \"1ms\"{} }},\n\
             ]\n\
             [[flows]]\nname = \"big\"\nclient = \"c1\"\nserver = \"s1\"\nserver_app = {{ kind = \"bulk\", size = \"10KB\" }}\n\
             [[flows]]\nname = \"small\"\nclient = \"c2\"\nserver = \"s2\"\nserver_app = {{ kind = \"bulk\", size = \"10KB\" }}\n\
             transport = {{ mss = 448 }}\n",
            q("s1"),
            q("c1"),
            q("s2"),
            q("c2"),
        )
    };
    // Only the small flow's data (500-byte packets) crosses these: accepted, and it runs.
    for link in ["s2", "c2"] {
        let b = Scenario::parse(&topo(link), "ok.toml").unwrap().build("ok.toml", None).unwrap();
        let mut sim = b.sim;
        sim.run(b.stop_ns, |_| {});
        assert!(sim.flow_results().iter().all(|f| f.completed_ns.is_some()), "{link}: every flow completes");
    }
    // The big flow's data crosses these.
    for (link, index) in [("s1", 0), ("c1", 1)] {
        let e = err(&topo(link));
        let want = format!(
            "topology.links[{index}].queue.bytes: 600 bytes cannot hold one full-sized data packet of flows[0] (1500 bytes)"
        );
        assert!(e.contains(&want), "{link}: expected {want:?} in:\n{e}");
    }
}

/// A missing top-level field is the document's error, not that of the table the file starts
/// with.
#[test]
fn a_missing_top_level_field_is_not_blamed_on_the_first_table() {
    let e = err("[transport]\ncc = \"bbr\"\n[[flows]]\nname = \"f\"\nclient = \"c0\"\nserver = \"s0\"\n");
    assert!(e.contains("missing field `name`"), "{e}");
    assert!(!e.contains("transport: missing"), "{e}");
    // A table's own missing field still names the table.
    let e = err(&GOOD.replace("kind = \"dumbbell\"\n", ""));
    assert!(e.contains("line 3, column 1") && e.contains("topology: missing `kind`"), "{e}");
}

#[test]
fn duplicate_keys_are_named_with_their_table() {
    // toml 1 says only "duplicate key"; the error names the key and where it is.
    let e = err(&GOOD.replace("server = \"s0\"", "server = \"s0\"\nclient = \"s0\""));
    assert!(e.contains("duplicate key `client` in table `flows`"), "{e}");
    let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\nname = \"u\""));
    assert!(e.contains("duplicate key `name` at the top level"), "{e}");
    let e = err(&GOOD.replace("rate = \"2Mbps\"", "rate = \"2Mbps\", rate = \"3Mbps\""));
    assert!(e.contains("line 5") && e.trim_end().ends_with("duplicate key `rate`"), "{e}");
}

/// serde's Rust names never reach the user: a table given as a string says "a table".
#[test]
fn a_table_given_as_a_value_says_table_not_struct() {
    let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\n[transport]\neecn = 3"));
    assert!(e.contains("transport.eecn: expected a table ({ field = value, ... }), got integer `3`"), "{e}");
    assert!(!e.contains("struct"), "{e}");
}

/// `transport.ns3_compat`: a boolean, TCP mode's only, echoed in the resolved scenario and
/// the report's transport only when on (documents of other runs keep their bytes), and
/// what it changes on the wire: 56-byte SYNs in the packet trace.
#[test]
fn ns3_compat_is_checked_and_echoed_only_when_on() {
    let with = |t: &str| GOOD.replace("[topology]", &format!("[transport]\n{t}\n[topology]"));
    let e = err(&with("ns3_compat = \"yes\""));
    assert!(e.contains("transport.ns3_compat"), "{e}");
    let e = err(&with("mode = \"quic\"\nns3_compat = true"));
    assert!(e.contains("transport.ns3_compat") && e.contains("TCP mode"), "{e}");
    let doc = |text: &str| {
        let (doc, _) = triage_sim::sweep::run_text(text, "ok.toml", None, &[], None).unwrap();
        serde_json::from_str::<serde_json::Value>(&doc).unwrap()
    };
    for (text, on) in
        [(GOOD.to_string(), false), (with("ns3_compat = false"), false), (with("ns3_compat = true"), true)]
    {
        let d = doc(&text);
        let input = &d["input"]["resolved"]["transport"];
        let report = &d["variants"][0]["resolved"]["flows"][0]["client_transport"];
        assert_eq!(input.get("ns3_compat").is_some(), on, "{input}");
        assert_eq!(report.get("ns3_compat").is_some(), on, "{report}");
        let traced = text.replace("[topology]", "[measure]\npacket_trace = true\n[topology]");
        let b = Scenario::parse(&traced, "ok.toml").unwrap().build("ok.toml", None).unwrap();
        let mut sim = b.sim;
        sim.run(b.stop_ns, |_| {});
        let syns: Vec<u32> = sim
            .recorder()
            .packets
            .iter()
            .filter(|p| p.event == "enqueue" && p.flags & 0x02 != 0)
            .map(|p| p.wire_bytes)
            .collect();
        // The SYN and the SYN-ACK, on each of their links.
        assert!(syns.len() >= 2, "{syns:?}");
        assert!(syns.iter().all(|&b| b == if on { 56 } else { 60 }), "{syns:?}");
    }
}

/// `transport.send_buffer`: a size, at least one MSS, TCP mode's only, echoed only when
/// set; and what it does: a sender never has more than it outstanding, so a bulk transfer
/// over a long path runs at most a buffer per round trip.
#[test]
fn send_buffer_is_checked_echoed_only_when_set_and_bounds_the_rate() {
    let with = |t: &str| GOOD.replace("[topology]", &format!("[transport]\n{t}\n[topology]"));
    let e = err(&with("send_buffer = \"lots\""));
    assert!(e.contains("transport.send_buffer"), "{e}");
    let e = err(&with("send_buffer = \"1000B\""));
    assert!(e.contains("send_buffer") && e.contains("one MSS (1448 bytes), got 1000"), "{e}");
    let e = err(&with("send_buffer = \"2GiB\""));
    assert!(e.contains("transport.send_buffer") && e.contains("at most 1 GiB"), "{e}");
    let e = err(&with("mode = \"quic\"\nsend_buffer = \"64KiB\""));
    assert!(e.contains("transport.send_buffer") && e.contains("TCP mode"), "{e}");
    // 1 MB over a 100 Mbps, 50 ms round-trip path.
    let long = |t: &str| {
        with(t)
            .replace("rate = \"2Mbps\", delay = \"25ms\"", "rate = \"100Mbps\", delay = \"25ms\"")
            .replace("size = \"10KB\"", "size = \"1MB\"")
    };
    let run = |text: &str| {
        let (doc, _) = triage_sim::sweep::run_text(text, "ok.toml", None, &[], None).unwrap();
        let d: serde_json::Value = serde_json::from_str(&doc).unwrap();
        let input = d["input"]["resolved"]["transport"].clone();
        let report = d["variants"][0]["resolved"]["flows"][0]["server_transport"].clone();
        let fct = d["variants"][0]["report"]["flows"][0]["fct_ms"].as_f64().unwrap();
        (input, report, fct)
    };
    let (input, report, unlimited_ms) = run(&long(""));
    assert!(input.get("send_buffer_bytes").is_none() && report.get("send_buffer_bytes").is_none(), "{input} {report}");
    let (input, report, limited_ms) = run(&long("send_buffer = \"64KiB\""));
    assert_eq!(input["send_buffer_bytes"], 65536, "{input}");
    assert_eq!(report["send_buffer_bytes"], 65536, "{report}");
    // At most 65,536 bytes a round trip (50 ms and more): 1,000,000 bytes take at least
    // 15.26 round trips after the handshake's, 813 ms; without the buffer slow start opens
    // the window past it and the transfer takes well under that.
    let floor_ms = 50.0 * (1.0 + 1_000_000.0 / 65_536.0);
    assert!(limited_ms >= floor_ms, "{limited_ms} ms < {floor_ms} ms");
    assert!(unlimited_ms < 0.6 * floor_ms, "{unlimited_ms} ms");
}
