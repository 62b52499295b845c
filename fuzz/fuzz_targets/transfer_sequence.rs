//! Fuzzes the `transfer_sequence.json` reader: any input either becomes a page that keeps the
//! model's invariants and exports back to the same sequence, or gives an error that renders.
//! The input is tried raw, as one element, and as the elements of a sequence.
//!
//! Run with `cargo +nightly fuzz run transfer_sequence` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use triage_web::export::transfer_sequence;
use triage_web::{sequence, ReliabilityPolicy};

fn check(v: &Value) {
    match sequence::parse_value(v, "transfer_sequence.json") {
        Ok(page) => {
            assert!(!page.is_empty());
            for o in page.objects().iter().skip(1) {
                assert!(o.parent.unwrap() < o.id);
                assert!(o.cats_level <= 4);
            }
            let seq = transfer_sequence(&page);
            let again = sequence::parse_value(&serde_json::to_value(&seq).unwrap(), "x").unwrap();
            assert_eq!(transfer_sequence(&again), seq);
            for p in ReliabilityPolicy::ALL {
                let _ = p.plan(&page);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let _ = triage_web::import_value(v, &triage_web::ImportOptions::default());
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sequence::parse_str(&text, "transfer_sequence.json");
    let Ok(v) = serde_json::from_str::<Value>(&text) else { return };
    check(&v);
    check(&Value::Array(vec![v.clone()]));
    if let Value::Array(items) = &v {
        let mut with_root = vec![serde_json::json!({"id": 0, "size": 1000, "type": "html"})];
        with_root.extend(items.iter().cloned());
        check(&Value::Array(with_root));
    }
});
