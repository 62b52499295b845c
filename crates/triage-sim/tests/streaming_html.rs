//! Streaming HTML discovery (`[flows.browser] streaming = true`, issue 9's "Children wait for
//! the whole parent"): a child of an HTML document is requested when the document's bytes up
//! to the child's place (where the recording requested it) have arrived, not when the whole
//! document has. Over a 100 ms path with fast links the document's download is whole round
//! trips of slow start, so every request time is checked against a hand-computed value.

mod common;

use triage_sim::report::RunReport;

/// A 100,000-byte document (70 segments of 1,448 bytes) whose recorded response started at
/// 100 ms and ended at 500 ms (`wait` 100, `receive` 400), and its children:
/// - early.css, requested at 150 ms: 50/400 of the download, byte 12,500, in segment 9;
/// - hero.jpg, at 200 ms: a quarter, byte 25,000, in segment 18;
/// - late.js, at 600 ms, after the document ended: all of it;
/// - font.woff2, a child of early.css: after the whole stylesheet, streaming or not.
const HAR: &str = r#"{"log": {"entries": [
 {"request": {"url": "https://a.example/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 500,
  "timings": {"send": 0, "wait": 100, "receive": 400},
  "response": {"status": 200, "content": {"size": 100000, "mimeType": "text/html"}}},
 {"request": {"url": "https://a.example/early.css"}, "startedDateTime": "2024-01-01T00:00:00.150Z", "time": 20,
  "_initiator": "https://a.example/",
  "response": {"status": 200, "content": {"size": 3000, "mimeType": "text/css"}}},
 {"request": {"url": "https://a.example/hero.jpg"}, "startedDateTime": "2024-01-01T00:00:00.200Z", "time": 20,
  "_initiator": "https://a.example/",
  "response": {"status": 200, "content": {"size": 3000, "mimeType": "image/jpeg"}}},
 {"request": {"url": "https://a.example/font.woff2"}, "startedDateTime": "2024-01-01T00:00:00.300Z", "time": 20,
  "_initiator": "https://a.example/early.css",
  "response": {"status": 200, "content": {"size": 3000, "mimeType": "font/woff2"}}},
 {"request": {"url": "https://a.example/late.js"}, "startedDateTime": "2024-01-01T00:00:00.600Z", "time": 20,
  "_initiator": "https://a.example/",
  "response": {"status": 200, "content": {"size": 3000, "mimeType": "application/javascript"}}}
]}}"#;

/// Runs the page over a 1 Gbps dumbbell with a 100 ms RTT in `mode` (tcp or quic), with
/// `[flows.browser]` lines `browser` (no DNS, no TLS: the connection is up at 100 ms).
fn run(mode: &str, browser: &str) -> RunReport {
    common::run_page_har(
        HAR,
        &format!("mode = \"{mode}\""),
        "",
        Some(&format!("dns = \"0ms\"\ntls = false\n{browser}")),
    )
}

/// When each request was written (ms), by object path, and the document's completion.
fn requests_ms(r: &RunReport) -> (Vec<(String, f64)>, f64) {
    let reqs = r
        .messages
        .iter()
        .filter(|m| m.from == "client")
        .map(|m| (m.name.rsplit('/').next().unwrap_or("").to_string(), m.written_ms.expect("written")))
        .collect();
    let root = r.messages.iter().find(|m| m.from == "server").and_then(|m| m.completed_ms).unwrap();
    (reqs, root)
}

fn at(reqs: &[(String, f64)], name: &str) -> f64 {
    reqs.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("{name} in {reqs:?}")).1
}

/// Within the serialization of a few packets (1 Gbps bottleneck, 10 Gbps access): 1 ms.
fn assert_near(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1.0, "{what}: got {got} ms, want {want} ms");
}

#[test]
fn tcp_children_are_requested_when_their_bytes_of_the_document_arrived() {
    // TCP handshake 0-100 ms; the document's request reaches the server at 150. Slow start
    // from 10 segments, an ACK per 2 segments, +2 segments per ACK: flights of 10, 20 and 40
    // segments reach the client at 200, 300 and 400 ms, and segment 70 (the last) at 400.
    let (off, root_off) = requests_ms(&run("tcp", "streaming = false"));
    assert_near(root_off, 400.0, "the document's last byte");
    for name in ["early.css", "hero.jpg", "late.js"] {
        assert_near(at(&off, name), 400.0, &format!("{name} without streaming: the whole document"));
    }
    let r = run("tcp", "streaming = true");
    let (on, root_on) = requests_ms(&r);
    // Byte 12,500 is in segment 9 (first flight), byte 25,000 in segment 18 (second).
    assert_near(at(&on, "early.css"), 200.0, "early.css at 12.5%");
    assert_near(at(&on, "hero.jpg"), 300.0, "hero.jpg at 25%");
    // The requests now ride the document's ACK clock: the stylesheet's request, sent when
    // segment 9 arrived, acknowledges segment 9 alone (slow start grows by 1 segment, not
    // 2), and segment 10's ACK waits for the next flight (delayed ACK). The second flight is
    // 18 segments instead of 20 and the third 38: 10 + 18 + 38 = 66 < 70, so the last 4
    // come in a fourth flight, at 500. Requested after the document ended in the recording,
    // late.js goes with the document's completion, as without streaming.
    assert_near(root_on, 500.0, "the document's last byte");
    assert_near(at(&on, "late.js"), root_on, "late.js after the end");
    // A stylesheet's child waits for the whole stylesheet, streaming or not (FIFO: its
    // response follows the rest of the document on the connection).
    let complete = |r: &RunReport, path: &str| {
        r.messages.iter().find(|m| m.from == "server" && m.name.ends_with(path)).and_then(|m| m.completed_ms).unwrap()
    };
    assert_near(at(&on, "font.woff2"), complete(&r, "early.css"), "font.woff2 after all of early.css");
    let r_off = run("tcp", "streaming = false");
    assert_near(at(&off, "font.woff2"), complete(&r_off, "early.css"), "font.woff2 without streaming");
}

#[test]
fn quic_children_are_requested_when_their_bytes_of_the_document_arrived() {
    // QUIC: its handshake is one round trip (0-100 ms), the same slow start follows, and a
    // packet carries less stream data than a TCP segment (QUIC's header, the AEAD tag, the
    // STREAM frame's header): more than 1,250 bytes, fewer than 100,000 / 70, so byte 12,500
    // is in the first flight (200 ms), byte 25,000 in the second (300 ms), and the document
    // needs a fourth flight (500 ms), streaming or not.
    let (off, root_off) = requests_ms(&run("quic", "streaming = false"));
    assert_near(root_off, 500.0, "the document's last byte");
    for name in ["early.css", "hero.jpg", "late.js"] {
        assert_near(at(&off, name), 500.0, &format!("{name} without streaming: the whole document"));
    }
    let (on, root_on) = requests_ms(&run("quic", "streaming = true"));
    assert_near(root_on, 500.0, "the document's last byte");
    assert_near(at(&on, "early.css"), 200.0, "early.css at 12.5%");
    assert_near(at(&on, "hero.jpg"), 300.0, "hero.jpg at 25%");
    assert_near(at(&on, "late.js"), 500.0, "late.js after the end");
}

#[test]
fn streaming_off_is_the_default_and_the_same_run() {
    let a = serde_json::to_string(&run("tcp", "")).unwrap();
    let b = serde_json::to_string(&run("tcp", "streaming = false")).unwrap();
    assert_eq!(a, b);
}
