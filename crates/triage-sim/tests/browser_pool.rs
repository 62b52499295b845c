//! A page load as a browser connects (issue 9): a connection per origin, each after its
//! host's DNS lookup, with TCP's and TLS 1.3's handshakes before the first request, and the
//! server's think time before each response. Over a 100 ms path with fast links every step is
//! a whole number of round trips, so the times are checked against hand-computed values.

mod common;

use triage_sim::report::RunReport;
use triage_sim::scenario::Scenario;

const HAR: &str = r#"{"log": {"entries": [
 {"request": {"url": "https://a.example/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50,
  "response": {"status": 200, "content": {"size": 10000, "mimeType": "text/html"}}},
 {"request": {"url": "https://a.example/site.css"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_renderBlocking": "blocking",
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "text/css"}}},
 {"request": {"url": "https://b.example/photo.jpg"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "image/jpeg"}}}
]}}"#;

/// The same page reached through two navigation redirects: `http://a.example/` (the root's
/// host, another origin: plain http) to `https://www.a.example/` (a new host) to the root.
fn redirected_har() -> String {
    let hops = r#"
 {"request": {"url": "http://a.example/"}, "startedDateTime": "2023-12-31T23:59:59.000Z", "time": 40,
  "response": {"status": 301, "redirectURL": "https://www.a.example/", "content": {"size": 0, "mimeType": ""}}},
 {"request": {"url": "https://www.a.example/"}, "startedDateTime": "2023-12-31T23:59:59.500Z", "time": 40,
  "response": {"status": 302, "redirectURL": "https://a.example/", "content": {"size": 0, "mimeType": ""}}},"#;
    HAR.replacen(r#"{"log": {"entries": ["#, &format!(r#"{{"log": {{"entries": [{hops}"#), 1)
}

/// Runs the page over a 1 Gbps dumbbell with a 100 ms RTT, `browser` being the lines of
/// `[flows.browser]` (None: no table), and returns the report.
fn run(browser: Option<&str>) -> RunReport {
    run_har(HAR, browser)
}

fn run_har(har: &str, browser: Option<&str>) -> RunReport {
    run_har_flow(har, "", browser)
}

/// As [`run_har`], with `flow` as more lines of the `[[flows]]` table.
fn run_har_flow(har: &str, flow: &str, browser: Option<&str>) -> RunReport {
    common::run_page_har(har, "", flow, browser)
}

/// Completion (ms) of each response, in page order.
fn completions_ms(r: &RunReport) -> Vec<f64> {
    r.messages.iter().filter(|m| m.from == "server").map(|m| m.completed_ms.expect("complete")).collect()
}

fn assert_near(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        // Serialization of a few packets at 1 Gbps and the 10 Gbps access: well under 1 ms.
        assert!((g - w).abs() < 1.0, "got {got:?}, want {want:?}");
    }
}

#[test]
fn one_connection_without_the_table_as_before() {
    let r = run(None);
    // SYN/SYN-ACK 100 ms, request and response 100 ms; the children at 300 ms.
    assert_near(&completions_ms(&r), &[200.0, 300.0, 300.0]);
}

#[test]
fn per_origin_connections_wait_dns_tcp_and_tls() {
    let r = run(Some(""));
    // a.example: DNS 2 RTT (200), TCP 1 RTT (300), TLS 1 RTT (400), the root 1 RTT (500);
    // the stylesheet on the open connection 1 RTT later (600); b.example's own connection
    // from 500: DNS 700, TCP 800, TLS 900, the image 1000.
    assert_near(&completions_ms(&r), &[500.0, 600.0, 1000.0]);
    let page = r.flows[0].page.as_ref().unwrap();
    assert_eq!(page.plt_ms.map(|t| t.round()), Some(1000.0));
    // Both connections' SYNs, handshakes, requests and responses are counted in the flow.
    assert!(r.flows[0].bytes > 20_000);
}

#[test]
fn each_step_can_be_turned_off_or_set() {
    // No DNS: everything 200 ms earlier, b.example's connection too.
    assert_near(&completions_ms(&run(Some("dns = \"0ms\""))), &[300.0, 400.0, 600.0]);
    // No TLS: one RTT less per connection.
    assert_near(&completions_ms(&run(Some("tls = false"))), &[400.0, 500.0, 800.0]);
    // One connection for both origins: the image follows the stylesheet at 600.
    assert_near(&completions_ms(&run(Some("connections = \"single\""))), &[500.0, 600.0, 600.0]);
    // 30 ms of server time before each response.
    assert_near(&completions_ms(&run(Some("server_time = \"30ms\""))), &[530.0, 660.0, 1060.0]);
}

#[test]
fn navigation_redirects_are_round_trips_before_the_root() {
    let r = run_har(&redirected_har(), Some(""));
    // http://a.example/: the root's host (its DNS is the root connection's), another origin:
    // TCP 1 RTT, the 301 1 RTT. https://www.a.example/: DNS 2 RTT, TCP and TLS 2 RTT, the
    // 302 1 RTT. 700 ms, then the load as without redirects (500, 600, 1000).
    assert_near(&completions_ms(&r), &[1200.0, 1300.0, 1700.0]);
    // The hops are not objects of the page.
    assert_eq!(r.flows[0].page.as_ref().unwrap().objects, 3);
    // Without TLS the https hop has one handshake less, and so do the connections after it.
    assert_near(&completions_ms(&run_har(&redirected_har(), Some("tls = false"))), &[1000.0, 1100.0, 1400.0]);
}

/// [`HAR`] with HAR `timings` on the root (`root`) and on the image (`image`).
fn with_timings(root: &str, image: &str) -> String {
    let photo = r#""url": "https://b.example/photo.jpg"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,"#;
    HAR.replacen(r#""time": 50,"#, &format!(r#""time": 50, "timings": {root},"#), 1).replacen(
        photo,
        &format!(r#"{photo} "timings": {image},"#),
        1,
    )
}

#[test]
fn client_side_redirects_are_paid_before_the_root() {
    // A DevTools log: a.example's document (first byte at 1.05 s) has a script send the browser
    // to b.example at 1.5 s. The hop: a.example's DNS 200, TCP and TLS 200, its request 100,
    // then the recorded 450 ms from its first byte to the next navigation: 950 ms. Then
    // b.example as usual: DNS, TCP, TLS, request (500): the root at 1450, its stylesheet 1550.
    let req = |id: &str, loader: &str, kind: &str, url: &str, t: f64, mime: &str, initiator: &str| {
        format!(
            r#"{{"method": "Network.requestWillBeSent", "params": {{"requestId": "{id}", "loaderId": "{loader}", "frameId": "F1",
  "type": "{kind}", "timestamp": {t}, "request": {{"url": "{url}", "method": "GET"}}, "initiator": {initiator}}}}},
{{"method": "Network.responseReceived", "params": {{"requestId": "{id}", "type": "{kind}", "timestamp": {},
  "response": {{"status": 200, "mimeType": "{mime}"}}}}}},
{{"method": "Network.loadingFinished", "params": {{"requestId": "{id}", "timestamp": {}, "encodedDataLength": 5000}}}}"#,
            t + 0.05,
            t + 0.1
        )
    };
    let log = format!(
        "[{},\n{},\n{}]",
        req("1", "L1", "Document", "https://a.example/", 1.0, "text/html", r#"{"type": "other"}"#),
        req(
            "2",
            "L2",
            "Document",
            "https://b.example/",
            1.5,
            "text/html",
            r#"{"type": "script", "url": "https://a.example/"}"#
        ),
        req(
            "3",
            "L2",
            "Stylesheet",
            "https://b.example/s.css",
            1.6,
            "text/css",
            r#"{"type": "parser", "url": "https://b.example/"}"#
        )
    );
    assert_near(&completions_ms(&run_har(&log, Some(""))), &[1450.0, 1550.0]);
}

#[test]
fn recorded_stalls_hold_requests_back() {
    // The root held 100 ms before it went out, the image 50 ms (HAR `timings.blocked`).
    let har = with_timings(r#"{"blocked": 100, "wait": 10}"#, r#"{"blocked": 50}"#);
    // Without `stall` nothing moves.
    assert_near(&completions_ms(&run_har(&har, Some(""))), &[500.0, 600.0, 1000.0]);
    // With it: everything 100 ms later, and the image's connection opens 50 ms later still.
    assert_near(&completions_ms(&run_har(&har, Some("stall = \"recorded\""))), &[600.0, 700.0, 1150.0]);
}

#[test]
fn recorded_connection_set_up_beyond_round_trips() {
    // The root's connection took 700 ms in the recording, 690 of them TLS: its round trip was
    // 10 ms (TCP), so 680 ms were neither TCP's nor TLS's round trip (certificate work). The
    // image's connection took 60 ms without a TLS figure: half of it per round trip, nothing
    // beyond.
    let har = with_timings(r#"{"connect": 700, "ssl": 690}"#, r#"{"connect": 60}"#);
    // Without `connect` nothing moves.
    assert_near(&completions_ms(&run_har(&har, Some(""))), &[500.0, 600.0, 1000.0]);
    // With it: a.example's connection opens 680 ms after its DNS; b.example's as before,
    // from the root's completion.
    assert_near(&completions_ms(&run_har(&har, Some("connect = \"recorded\""))), &[1180.0, 1280.0, 1680.0]);
}

#[test]
fn recorded_gaps_wait_for_the_gates_then_the_processing() {
    // The recording: the root 0-50 ms; its blocking stylesheet requested at 30 (while the root
    // arrived), done at 100; the image requested at 140: after the stylesheet it waited for
    // (a gate), 40 ms of processing.
    let har = r#"{"log": {"entries": [
 {"request": {"url": "https://a.example/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50,
  "response": {"status": 200, "content": {"size": 10000, "mimeType": "text/html"}}},
 {"request": {"url": "https://a.example/site.css"}, "startedDateTime": "2024-01-01T00:00:00.030Z", "time": 70,
  "_renderBlocking": "blocking", "_priority": "VeryHigh",
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "text/css"}}},
 {"request": {"url": "https://a.example/photo.jpg"}, "startedDateTime": "2024-01-01T00:00:00.140Z", "time": 20,
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "image/jpeg"}}}
]}}"#;
    // Without gaps: the root at 500 (DNS, TCP, TLS, request), both children requested then, done at 600.
    assert_near(&completions_ms(&run_har_flow(har, "", Some(""))), &[500.0, 600.0, 600.0]);
    // With them: the image waits for the stylesheet (600), then 40 ms: requested at 640.
    let gaps = "discovery = { recorded_gaps = true }";
    assert_near(&completions_ms(&run_har_flow(har, gaps, Some(""))), &[500.0, 600.0, 740.0]);
    // × 4: 160 ms of processing.
    let gaps = "discovery = { recorded_gaps = true, cpu_slowdown = 4 }";
    assert_near(&completions_ms(&run_har_flow(har, gaps, Some(""))), &[500.0, 600.0, 860.0]);
}

fn build_error(text: &str) -> String {
    match Scenario::parse(text, "x.toml").unwrap().build("x.toml", None) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error for {text}"),
    }
}

#[test]
fn wrong_values_name_the_field() {
    let text = format!(
        "name = \"x\"\nseed = 1\nstop = \"1s\"\n[topology]\nkind = \"dumbbell\"\nbottleneck = {{ rate = \"1Gbps\", delay = \"1ms\" }}\naccess = {{ rate = \"1Gbps\", delay = \"0ms\" }}\n\
         [[flows]]\nname = \"p\"\nclient = \"c0\"\nserver = \"s0\"\npage = \"builtin:cats\"\n[flows.browser]\n{}\n",
        "connections = \"per-host\""
    );
    let e = build_error(&text);
    assert!(e.contains("flows[0].browser.connections") && e.contains("per-origin"), "{e}");
    let stall = text.replace("connections = \"per-host\"", "stall = \"sometimes\"");
    let e = build_error(&stall);
    assert!(e.contains("flows[0].browser.stall") && e.contains("recorded"), "{e}");
    let connect = text.replace("connections = \"per-host\"", "connect = \"fast\"");
    let e = build_error(&connect);
    assert!(e.contains("flows[0].browser.connect") && e.contains("recorded"), "{e}");
    let text = text.replace("connections = \"per-host\"", "dns = \"soon\"");
    let e = build_error(&text);
    assert!(e.contains("flows[0].browser.dns"), "{e}");
}

const HTTP1_HAR: &str = r#"{"log": {"entries": [
 {"request": {"url": "https://a.example/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50,
  "_protocol": "http/1.1", "_priority": "VeryHigh",
  "response": {"status": 200, "content": {"size": 10000, "mimeType": "text/html"}}},
 {"request": {"url": "https://a.example/site.css"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_protocol": "http/1.1", "_priority": "VeryHigh", "_renderBlocking": "blocking",
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "text/css"}}},
 {"request": {"url": "https://a.example/1.jpg"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_protocol": "http/1.1", "_priority": "Low",
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "image/jpeg"}}},
 {"request": {"url": "https://a.example/2.jpg"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_protocol": "http/1.1", "_priority": "Low",
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "image/jpeg"}}},
 {"request": {"url": "https://a.example/3.jpg"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_protocol": "http/1.1", "_priority": "Low",
  "response": {"status": 200, "content": {"size": 5000, "mimeType": "image/jpeg"}}}
]}}"#;

/// HTTP/1.1: a connection per request up to 6 per host (each with its own handshake), and
/// Chrome's tight mode: while the stylesheet (VeryHigh) is in flight only one Low image may
/// be; the other two start when it completes.
#[test]
fn http1_connections_and_chromes_tight_mode() {
    let dir = std::env::temp_dir().join(format!("triage-browser-pool-h1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("page.har"), HTTP1_HAR).unwrap();
    let text = "name = \"h1\"\nseed = 1\nstop = \"60s\"\n[transport]\ncc = \"newreno\"\n[topology]\nkind = \"dumbbell\"\n\
                bottleneck = { rate = \"1Gbps\", delay = \"50ms\" }\naccess = { rate = \"10Gbps\", delay = \"0ms\" }\n\
                [measure]\ninterval = \"0ms\"\n[[flows]]\nname = \"page\"\nclient = \"c0\"\nserver = \"s0\"\npage = \"page.har\"\n\
                [flows.browser]\ndns = \"0ms\"\ntls = false\n";
    let s = Scenario::parse(text, "h1.toml").unwrap();
    let mut b = s.build("h1.toml", Some(&dir)).unwrap();
    b.sim.run(b.stop_ns, |_| {});
    let r = RunReport::new(&s.name, s.seed, &b.sim);
    // Root: TCP 100, response 200. Stylesheet and first image on new connections: 400. The
    // other images wait for tight mode to end (400), then connect: 600.
    assert_near(&completions_ms(&r), &[200.0, 400.0, 400.0, 600.0, 600.0]);
    assert_eq!(r.flows[0].connections, 5);
    let _ = std::fs::remove_dir_all(&dir);
}
