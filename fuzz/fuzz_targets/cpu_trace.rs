//! Fuzzes the Chrome-trace reader of the CPU model (`triage_web::cputrace`): the input as a
//! trace for the built-in CATS page, and its events wrapped after a renderer main thread and
//! the root's `ResourceSendRequest`, so that the task walk is reached.
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

fuzz_target!(|data: &[u8]| {
    let page = triage_web::builtin::cats_page();
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
        json!({"ph": "I", "name": "ResourceSendRequest", "pid": 1, "tid": 1, "ts": 0,
               "args": {"data": {"url": root, "frame": "f"}}}),
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
