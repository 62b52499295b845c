//! Recorded per-request timing fields (connection id, protocol, server wait, connect, DNS,
//! response start) from a small hand-written HAR and DevTools log, with values computed by
//! hand from the files below.

use triage_web::{import_str, HttpProtocol, ImportOptions};

const HAR: &str = r#"{"log": {"version": "1.2", "entries": [
  {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 120.5,
   "request": {"method": "GET", "url": "https://a.com/", "headers": []},
   "response": {"status": 200, "httpVersion": "h2", "headers": [],
                "content": {"size": 1000, "mimeType": "text/html"}, "_transferSize": 1200},
   "connection": "42",
   "timings": {"blocked": 1.5, "dns": 10.25, "connect": 30.0, "ssl": 20.0, "send": 0.5, "wait": 50.125, "receive": 28.125}},
  {"startedDateTime": "2024-01-01T00:00:00.200Z", "time": 40,
   "request": {"method": "GET", "url": "https://a.com/app.js", "headers": []},
   "response": {"status": 200, "httpVersion": "HTTP/1.1", "headers": [],
                "content": {"size": 500, "mimeType": "application/javascript"}, "_transferSize": 600},
   "_protocol": "http/3", "connection": "10.0.0.1:443",
   "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 1, "wait": 25, "receive": 14}},
  {"startedDateTime": "2024-01-01T00:00:00.300Z", "time": 10,
   "request": {"method": "GET", "url": "https://a.com/b.png", "headers": []},
   "response": {"status": 200, "httpVersion": "", "headers": [],
                "content": {"size": 100, "mimeType": "image/png"}, "_transferSize": 150},
   "timings": {"send": 0, "wait": -1, "receive": 10}}
]}}"#;

#[test]
fn har_timing_fields() {
    let imp = import_str(HAR, &ImportOptions::default()).unwrap();
    let o = imp.page.objects();
    assert_eq!(o.len(), 3);
    // Root: connection "42", h2, wait 50.125 ms, connect 30 ms (includes ssl), dns 10.25 ms;
    // first byte at 1.5 + 10.25 + 30 + 0.5 + 50.125 = 92.375 ms after its own start.
    assert_eq!(o[0].connection_id, Some(42));
    assert_eq!(o[0].protocol, Some(HttpProtocol::Http2));
    assert_eq!(o[0].server_wait_ns, 50_125_000);
    assert_eq!(o[0].recorded_connect_ns, 30_000_000);
    assert_eq!(o[0].recorded_dns_ns, 10_250_000);
    assert_eq!(o[0].recorded_response_start_ns, 92_375_000);
    // Script: `_protocol` wins over httpVersion; a non-numeric connection is hashed (FNV-1a);
    // -1 timings read as 0; first byte at 200 + 1 + 25 = 226 ms.
    assert_eq!(o[1].protocol, Some(HttpProtocol::Http3));
    let fnv = "10.0.0.1:443"
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    assert_eq!(o[1].connection_id, Some(fnv));
    assert_eq!(o[1].server_wait_ns, 25_000_000);
    assert_eq!((o[1].recorded_connect_ns, o[1].recorded_dns_ns), (0, 0));
    assert_eq!(o[1].recorded_response_start_ns, 226_000_000);
    // Image: nothing known.
    assert_eq!(o[2].connection_id, None);
    assert_eq!(o[2].protocol, None);
    assert_eq!((o[2].server_wait_ns, o[2].recorded_response_start_ns), (0, 0));
}

const DEVTOOLS: &str = r#"[
 {"method": "Network.requestWillBeSent", "params": {"requestId": "1", "loaderId": "L1", "frameId": "F1",
   "type": "Document", "timestamp": 100.0, "request": {"url": "https://a.com/", "method": "GET"},
   "initiator": {"type": "other"}}},
 {"method": "Network.responseReceived", "params": {"requestId": "1", "type": "Document", "timestamp": 100.2,
   "response": {"status": 200, "mimeType": "text/html", "protocol": "h3", "connectionId": 7, "encodedDataLength": 300,
     "timing": {"requestTime": 100.001, "dnsStart": 0.5, "dnsEnd": 12.5, "connectStart": 12.5, "connectEnd": 52.75,
                "sslStart": 30, "sslEnd": 52.75, "sendStart": 53, "sendEnd": 54, "receiveHeadersEnd": 154.5}}}},
 {"method": "Network.loadingFinished", "params": {"requestId": "1", "timestamp": 100.3, "encodedDataLength": 5000}},
 {"method": "Network.requestWillBeSent", "params": {"requestId": "2", "loaderId": "L1", "frameId": "F1",
   "type": "Script", "timestamp": 100.4, "request": {"url": "https://a.com/app.js", "method": "GET"},
   "initiator": {"type": "parser", "url": "https://a.com/"}}},
 {"method": "Network.responseReceived", "params": {"requestId": "2", "type": "Script", "timestamp": 100.45,
   "response": {"status": 200, "mimeType": "text/javascript", "protocol": "http/1.1", "connectionId": 0,
     "timing": {"requestTime": 100.4, "dnsStart": -1, "dnsEnd": -1, "connectStart": -1, "connectEnd": -1,
                "sendStart": 0.25, "sendEnd": 0.5, "receiveHeadersEnd": 30.5}}}},
 {"method": "Network.loadingFinished", "params": {"requestId": "2", "timestamp": 100.5, "encodedDataLength": 800}},
 {"method": "Network.requestWillBeSent", "params": {"requestId": "3", "loaderId": "L1", "frameId": "F1",
   "type": "Image", "timestamp": 100.6, "request": {"url": "https://a.com/x.png", "method": "GET"},
   "initiator": {"type": "parser", "url": "https://a.com/"}}},
 {"method": "Network.responseReceived", "params": {"requestId": "3", "type": "Image", "timestamp": 100.7,
   "response": {"status": 200, "mimeType": "image/png"}}},
 {"method": "Network.loadingFinished", "params": {"requestId": "3", "timestamp": 100.8, "encodedDataLength": 80}}
]"#;

#[test]
fn devtools_timing_fields() {
    let imp = import_str(DEVTOOLS, &ImportOptions::default()).unwrap();
    let o = imp.page.objects();
    assert_eq!(o.len(), 3);
    // Root: dns 12.5 - 0.5 = 12 ms, connect 52.75 - 12.5 = 40.25 ms, wait 154.5 - 54 =
    // 100.5 ms, first byte at 100.001 s + 154.5 ms = 100155.5 ms, 155.5 ms after the request.
    assert_eq!(o[0].connection_id, Some(7));
    assert_eq!(o[0].protocol, Some(HttpProtocol::Http3));
    assert_eq!(o[0].recorded_dns_ns, 12_000_000);
    assert_eq!(o[0].recorded_connect_ns, 40_250_000);
    assert_eq!(o[0].server_wait_ns, 100_500_000);
    assert_eq!(o[0].recorded_response_start_ns, 155_500_000);
    // Script on a reused connection: Chrome's connectionId 0 reads as unknown; wait 30 ms;
    // first byte at 100.4 s + 30.5 ms, 430.5 ms after the root's request.
    assert_eq!(o[1].connection_id, None);
    assert_eq!(o[1].protocol, Some(HttpProtocol::Http1));
    assert_eq!((o[1].recorded_dns_ns, o[1].recorded_connect_ns), (0, 0));
    assert_eq!(o[1].server_wait_ns, 30_000_000);
    assert_eq!(o[1].recorded_response_start_ns, 430_500_000);
    // Image without timing: the responseReceived event's time, 700 ms; the rest unknown.
    assert_eq!(o[2].recorded_response_start_ns, 700_000_000);
    assert_eq!((o[2].server_wait_ns, o[2].connection_id, o[2].protocol), (0, None, None));
}

#[test]
fn protocol_names() {
    use HttpProtocol::*;
    for (s, p) in [
        ("http/1.1", Some(Http1)),
        ("HTTP/1.1", Some(Http1)),
        ("HTTP/1.0", Some(Http1)),
        ("h2", Some(Http2)),
        ("http/2.0", Some(Http2)),
        ("HTTP/2", Some(Http2)),
        ("h3", Some(Http3)),
        ("http/3", Some(Http3)),
        ("h3-29", Some(Http3)),
        ("http/2+quic/46", Some(Http3)),
        ("data", None),
        ("", None),
    ] {
        assert_eq!(HttpProtocol::parse(s), p, "{s}");
    }
}

#[test]
fn old_page_json_without_the_fields_loads() {
    let json = r#"{"id": 0, "url": "https://a.com/", "origin": "https://a.com", "third_party": false,
      "kind": "html", "mime": "text/html", "wire_bytes": 10, "body_bytes": 10, "browser_priority": null,
      "fetch_priority": "auto", "render_blocking": null, "parent": null, "cats_level": 0,
      "category": "others", "essential": "maybe", "tracker": false, "recorded_start_ns": 0,
      "recorded_duration_ns": 0}"#;
    let o: triage_web::WebObject = serde_json::from_str(json).unwrap();
    assert_eq!((o.connection_id, o.protocol, o.server_wait_ns, o.recorded_response_start_ns), (None, None, 0, 0));
}

/// Chrome's stall before a request's DNS, connection or send, from the DevTools timings:
/// speedindex-1ms's document was held 50 ms (requestTime + dnsStart − requestWillBeSent).
#[test]
fn devtools_stall_before_the_request() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/lantern/fixtures/speedindex-1ms/devtoolslog.json");
    let imp = triage_web::import_file(&dir, &triage_web::ImportOptions::default()).unwrap();
    let root = &imp.page.objects()[0];
    assert!((49_000_000..51_000_000).contains(&root.recorded_stall_ns), "{}", root.recorded_stall_ns);
    // The font from fonts.gstatic.com waited 7 ms.
    let font = imp.page.objects().iter().find(|o| o.url.contains("fonts.gstatic.com")).unwrap();
    assert!((6_000_000..8_000_000).contains(&font.recorded_stall_ns), "{}", font.recorded_stall_ns);
}

/// A log recorded behind a fetching proxy (Lighthouse's Lightrider, as in Lantern's `lr`
/// fixture): the browser's timing shows nothing but the whole response's arrival, and the
/// proxy's `X-…` headers carry the origin's connect, TLS, wait and download times and the
/// bytes it fetched. Request 1: connect 240 ms (no TLS figure), request 236 ms, response
/// 10 ms, total 486 (within 25 ms of 485), h2, 24,161 bytes fetched, the browser had the
/// whole response at 613 ms. Request 2: TLS part (116 ms) inside its 231 ms connect. Request
/// 3: parts 30 ms over the total (not used). Request 4: TLS longer than the connect (not
/// used). Request 5: the browser saw a connection of its own (its timing wins).
#[test]
fn proxy_timing_headers_replace_a_blind_browser_timing() {
    let blind = r#""timing": {"requestTime": 100.0, "dnsStart": -1, "dnsEnd": -1, "connectStart": -1, "connectEnd": -1,
        "sslStart": -1, "sslEnd": -1, "sendStart": -1, "sendEnd": -1, "receiveHeadersEnd": 613.0}"#;
    let req = |id: u32, kind: &str, headers: &str, timing: &str| {
        format!(
            r#"{{"method": "Network.requestWillBeSent", "params": {{"requestId": "{id}", "loaderId": "L1", "frameId": "F1",
   "type": "{kind}", "timestamp": 100.0, "request": {{"url": "https://a.com/{id}", "method": "GET"}},
   "initiator": {{"type": "{init}", "url": "https://a.com/1"}}}}}},
 {{"method": "Network.responseReceived", "params": {{"requestId": "{id}", "type": "{kind}", "timestamp": 100.614,
   "response": {{"status": 200, "mimeType": "text/html", "protocol": "http/1.1", "encodedDataLength": 500,
     "headers": {{{headers}}}, {timing}}}}}}},
 {{"method": "Network.loadingFinished", "params": {{"requestId": "{id}", "timestamp": 100.613, "encodedDataLength": 132289}}}}"#,
            init = if id == 1 { "other" } else { "parser" }
        )
    };
    let seen = r#""timing": {"requestTime": 100.0, "dnsStart": -1, "dnsEnd": -1, "connectStart": 1, "connectEnd": 41,
        "sslStart": -1, "sslEnd": -1, "sendStart": 41, "sendEnd": 42, "receiveHeadersEnd": 100.0}"#;
    let log = format!(
        "[{}]",
        [
            req(
                1,
                "Document",
                r#""X-TCPMs": "240", "X-RequestMs": "236", "X-ResponseMs": "10", "X-TotalMs": "485",
                "X-TotalFetchedSize": "24161", "X-ProtocolIsH2": "true""#,
                blind
            ),
            req(2, "Script", r#""x-tcpms": "231", "x-sslms": "116", "x-requestms": "115", "x-totalms": "346""#, blind),
            req(3, "Script", r#""X-TCPMs": "10", "X-RequestMs": "50", "X-ResponseMs": "5", "X-TotalMs": "35""#, blind),
            req(4, "Script", r#""X-TCPMs": "10", "X-SSLMs": "20", "X-RequestMs": "5", "X-TotalMs": "15""#, blind),
            req(
                5,
                "Script",
                r#""X-TCPMs": "240", "X-RequestMs": "5", "X-TotalMs": "245", "X-TotalFetchedSize": "7""#,
                seen
            ),
        ]
        .join(",\n")
    );
    let imp = import_str(&log, &ImportOptions::default()).unwrap();
    let o = imp.page.objects();
    assert_eq!((o.len(), imp.proxy_timed), (5, 2));
    // 1: the proxy's connect and wait; the download began 10 ms before the browser had the
    // whole response (613 - 10 = 603 ms); the fetched bytes; HTTP/2.
    assert_eq!((o[0].recorded_connect_ns, o[0].recorded_tls_ns), (240_000_000, 0));
    assert_eq!(o[0].server_wait_ns, 236_000_000);
    assert_eq!(o[0].recorded_response_start_ns, 603_000_000);
    assert_eq!(o[0].wire_bytes, 24_161);
    assert_eq!(o[0].protocol, Some(HttpProtocol::Http2));
    // 2: header names in any case; TLS part kept; no download time, no byte count, no h2.
    assert_eq!((o[1].recorded_connect_ns, o[1].recorded_tls_ns), (231_000_000, 116_000_000));
    assert_eq!((o[1].server_wait_ns, o[1].recorded_response_start_ns), (115_000_000, 613_000_000));
    assert_eq!((o[1].wire_bytes, o[1].protocol), (132_289, Some(HttpProtocol::Http1)));
    // 3 and 4: the browser's (blind) timing stays.
    for x in &o[2..4] {
        assert_eq!((x.recorded_connect_ns, x.server_wait_ns, x.wire_bytes), (0, 0, 132_289));
    }
    // 5: the browser's own connect (40 ms) and wait (58 ms) win over the headers.
    assert_eq!((o[4].recorded_connect_ns, o[4].server_wait_ns, o[4].wire_bytes), (40_000_000, 58_000_000, 132_289));
}

/// Lantern's `lr` fixture, recorded through Lightrider: 29 of its 30 objects are timed by the
/// proxy's headers (the 30th has no response). Its document: 24,161 bytes fetched (the browser
/// counted the 132,289 decoded), connect 240 ms, wait 236 ms, HTTP/2; the round trip its
/// connections show is 120 ms (240 / 2, no TLS figure: https), and the network is inferable.
#[test]
fn lightrider_log_is_read_through_its_proxy_headers() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/lantern/fixtures/lr/devtoolslog.json");
    let imp = triage_web::import_file(&dir, &triage_web::ImportOptions::default()).unwrap();
    assert_eq!((imp.page.len(), imp.proxy_timed), (30, 29));
    let root = &imp.page.objects()[0];
    assert_eq!((root.wire_bytes, root.recorded_connect_ns, root.server_wait_ns), (24_161, 240_000_000, 236_000_000));
    assert_eq!(root.protocol, Some(HttpProtocol::Http2));
    let n = triage_web::netinfer::recorded_network(&imp.page).unwrap();
    assert_eq!(n.rtt_ns, 120_000_000);
}
