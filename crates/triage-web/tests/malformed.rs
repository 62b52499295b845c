//! Malformed input gives one clear error, never a panic.

use triage_web::{import_str, ImportOptions, WebError};

fn err(text: &str) -> String {
    match import_str(text, &ImportOptions::default()) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn truncated_json() {
    let e = err(r#"{"log": {"entries": [{"request": {"url": "https://a.com/""#);
    assert!(e.starts_with("not valid JSON") && e.contains("line 1"), "{e}");
}

#[test]
fn wrong_types_name_the_field() {
    let e = err(r#"{"log": {"entries": {}}}"#);
    assert_eq!(e, "log.entries: expected an array, found an object");
    let e = err(r#"{"log": {"entries": [{"request": {"url": 5}, "response": {"status": 200}}]}}"#);
    assert_eq!(e, "log.entries[0].request.url: expected a string, found a number");
    let e = err(r#"{"log": {"entries": [{"request": {"url": "https://a.com/"}, "response": {"status": true}}]}}"#);
    assert_eq!(e, "log.entries[0].response.status: expected a number, found a boolean");
    let e = err(r#"{"log": {"entries": [{"request": {"url": "https://a.com/"}, "startedDateTime": "yesterday"}]}}"#);
    assert!(e.contains("startedDateTime") && e.contains("ISO 8601"), "{e}");
    let e = err(r#"{"log": {"entries": [{"response": {}}]}}"#);
    assert_eq!(e, "log.entries[0].request: missing (expected an object)");
    let e = err(r#"[{"method": "Network.requestWillBeSent", "params": {"requestId": "1", "request": {"url": []}}}]"#);
    assert_eq!(e, "[0].params.request.url: expected a string, found an array");
    let e = err(r#"[{"message": "{\"message\": {\"method\": 3}}"}]"#);
    assert_eq!(e, "[0].message.method: expected a string, found a number");
    let e = err(r#"[{"message": "{not json"}]"#);
    assert!(e.starts_with("[0].message: a JSON string that does not parse"), "{e}");
}

#[test]
fn no_entries() {
    assert_eq!(err(r#"{"log": {"entries": []}}"#), "no entries: `log.entries` is empty");
    assert!(err("[]").starts_with("no requests"));
    assert!(err(r#"[{"method": "Page.loadEventFired", "params": {}}]"#).starts_with("no requests"));
    assert!(err("42").contains("neither a HAR"));
    assert!(err(r#"{"log": {}}"#).contains("log.entries"));
    // Only unusable entries: say which.
    let e =
        err(r#"{"log": {"entries": [{"request": {"url": "data:image/png;base64,AA"}, "response": {"status": 200}}]}}"#);
    assert!(e.contains("no usable entry") && e.contains("1 data_url"), "{e}");
}

#[test]
fn messy_but_valid_entries_are_accepted() {
    // -1 sizes, nulls, a string initiator, a JSON-string initiator detail, numeric strings.
    let text = r#"{"log": {"pages": [{"id": "p", "title": "t"}], "entries": [
        {"pageref": "p", "startedDateTime": "2024-01-01T00:00:00.000Z", "time": -1,
         "request": {"url": "https://a.com/", "method": "GET", "headers": null},
         "response": {"status": 200, "bodySize": -1, "headersSize": -1, "content": {"size": 1000, "mimeType": "text/html"}}},
        {"pageref": "p", "startedDateTime": "2024-01-01T00:00:00.100+00:00", "time": 50,
         "_initiator": "", "_initiator_detail": "{\"type\":\"parser\",\"url\":\"https://a.com/\"}",
         "_priority": "HIGHEST", "_renderBlocking": "blocking",
         "request": {"url": "https://a.com/s.css"},
         "response": {"status": "200", "_transferSize": 500, "content": {"mimeType": "text/css"}}}
    ]}}"#;
    let imp = import_str(text, &ImportOptions::default()).unwrap();
    let p = &imp.page;
    assert_eq!(p.len(), 2);
    assert_eq!(p.objects()[1].wire_bytes, 500);
    assert_eq!(p.objects()[1].recorded_start_ns, 100_000_000);
    assert_eq!(p.objects()[1].browser_priority, Some(triage_web::BrowserPriority::VeryHigh));
    assert_eq!(p.objects()[0].wire_bytes, 1000);
    // The errors type is usable by callers.
    let _: Option<WebError> = None;
}
