//! `triage reproduce quic --reference-runs FILE`: the reference's JSON lines. Anything is
//! either read (every run with a rate of at least 1 bit/s, a delay of at least 0, a loss
//! from 0 to 1 and finite completions) or refused with a message naming the file and line;
//! nothing panics, and comparing with no runs of ours gives nothing.
//!
//! Run with `cargo fuzz run --sanitizer none reference_runs` from the repository root.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use triage_sim::experiments::reference_runs::{compare, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse(text, Path::new("fuzz.jsonl")) {
        Ok(runs) => {
            for (rate_bps, owd_ms, loss, groups) in runs.runs() {
                assert!(rate_bps >= 1 && owd_ms >= 0.0 && (0.0..=1.0).contains(&loss));
                assert!(groups.iter().all(|(_, ms)| ms.is_finite()));
            }
            assert!(compare(&[], &runs).is_empty());
        }
        Err(e) => assert!(e.starts_with("fuzz.jsonl:"), "{e}"),
    }
});
