//! Fuzzes the HAR reader (and, through format detection, the whole import): any input either
//! imports into a page that keeps the model's invariants, or gives an error that renders.
//!
//! Run with `cargo +nightly fuzz run har` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_web::qoe::{estimate, QoeConfig};
use triage_web::{import_str, ImportOptions};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Raw input, and the input as the entries of a HAR log when it is JSON.
    let mut inputs = vec![text.to_string()];
    if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
        inputs.push(format!(r#"{{"log": {{"entries": [{text}]}}}}"#));
        inputs.push(format!(r#"{{"log": {{"pages": [{{"id": "page_1"}}], "entries": {text}}}}}"#));
    }
    for input in inputs {
        for keep in [false, true] {
            match import_str(&input, &ImportOptions { page: None, keep_cache_hits: keep }) {
                Ok(imp) => {
                    let page = &imp.page;
                    assert!(!page.is_empty());
                    assert_eq!(page.len() + imp.skipped_total(), imp.entries_total);
                    for o in page.objects().iter().skip(1) {
                        assert!(o.parent.unwrap() < o.id);
                        assert!(o.cats_level <= 4);
                    }
                    let _ = estimate(page, &imp.recorded_deliveries(), &QoeConfig::default());
                    let _ = triage_web::export::transfer_sequence(page);
                }
                Err(e) => {
                    let _ = e.to_string();
                }
            }
        }
    }
});
