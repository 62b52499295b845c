//! Fuzzes the Chrome-trace reader of the CPU model (`triage_web::cputrace`): the input as a
//! trace for the built-in CATS page, its events wrapped after a renderer main thread and
//! the root's `navigationStart`, so that the task walk is reached, and the raw input as a
//! screenshot (the Speed Index's JPEG decoding, `triage_web::speedline`).
//!
//! Run with `cargo fuzz run --sanitizer none cpu_trace` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn check(page: &triage_web::Page, text: &str) {
    match triage_web::cputrace::cpu_tasks(text, page) {
        Ok(t) => {
            assert_eq!(t.per_object.len(), page.len());
            assert_eq!(t.tasks, t.per_object.iter().map(Vec::len).sum::<usize>());
            assert_eq!(t.total_ns, (0..page.len()).map(|k| t.object_ns(k)).sum::<u64>());
        }
        Err(e) => assert!(!e.is_empty()),
    }
}

/// Standard base64, so that the raw input reaches the JPEG decoder.
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let page = triage_web::builtin::cats_page();
    let si = triage_web::speedline::speed_index(&[(1.0, &base64(data)), (2.0, "")], 0.0);
    assert!(si.undecodable <= 2);
    let text = String::from_utf8_lossy(data);
    check(&page, &text);
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let items: Vec<Value> = match v {
        Value::Array(a) => a,
        other => vec![other],
    };
    let root = &page.objects()[0].url;
    let mut events = vec![
        json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "CrRendererMain"}}),
        json!({"ph": "I", "name": "navigationStart", "pid": 1, "tid": 1, "ts": 0,
               "args": {"frame": "f", "data": {"documentLoaderURL": root, "isLoadingMainFrame": true}}}),
    ];
    for item in items {
        let mut e = item;
        if let Value::Object(o) = &mut e {
            o.entry("pid").or_insert(json!(1));
            o.entry("tid").or_insert(json!(1));
        }
        events.push(e);
    }
    check(&page, &json!({ "traceEvents": events }).to_string());
});
