//! Fuzzes the DevTools-log and performance-log reader: the input as a log, as the `params` of
//! Network events, and as performance-log messages (JSON strings).
//!
//! Run with `cargo +nightly fuzz run devtools` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use triage_web::{import_value, ImportOptions};

const METHODS: [&str; 8] = [
    "Network.requestWillBeSent",
    "Network.responseReceived",
    "Network.dataReceived",
    "Network.loadingFinished",
    "Network.loadingFailed",
    "Network.requestServedFromCache",
    "Network.resourceChangedPriority",
    "Page.frameNavigated",
];

fn check(v: &Value, page: Option<&str>) {
    let opts = ImportOptions { page: page.map(str::to_string), keep_cache_hits: false };
    match import_value(v, &opts) {
        Ok(imp) => {
            assert_eq!(imp.page.len() + imp.skipped_total(), imp.entries_total);
            for o in imp.page.objects().iter().skip(1) {
                assert!(o.parent.unwrap() < o.id);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        // Non-JSON input: only the JSON error path.
        let _ = triage_web::import_str(&String::from_utf8_lossy(data), &ImportOptions::default());
        return;
    };
    check(&v, None);
    check(&v, Some("page_2"));
    let items: Vec<Value> = match &v {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    // Each item as the params of each Network method, in a log that starts a page.
    let mut events = vec![json!({"method": "Network.requestWillBeSent", "params": {
        "requestId": "1", "loaderId": "1", "frameId": "f", "type": "Document", "timestamp": 1.0,
        "request": {"url": "https://a.com/", "initialPriority": "VeryHigh"}}})];
    for (i, item) in items.iter().enumerate() {
        events.push(json!({"method": METHODS[i % METHODS.len()], "params": item}));
    }
    check(&Value::Array(events.clone()), None);
    // The same as a performance log: messages serialised as JSON strings.
    let wrapped: Vec<Value> = events
        .iter()
        .map(|e| json!({"message": json!({"message": e, "webview": "w"}).to_string(), "level": "INFO"}))
        .collect();
    check(&Value::Array(wrapped), None);
});
