//! Fuzzes the qlog JSON-SEQ reader: any bytes either fail to parse or give a trace that
//! writes and reads back equal.
//!
//! Run with `cargo fuzz run --sanitizer none qlog` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_sim::qlog::{parse, write};

fuzz_target!(|data: &[u8]| {
    let trace = match parse(data) {
        Ok(trace) => trace,
        Err(err) => {
            let _ = err.to_string();
            return;
        }
    };
    // Whatever parses is within the writer's domain, and the round trip is exact.
    let mut text = Vec::new();
    write(&trace, &mut text).expect("a parsed trace writes");
    let again = parse(&text).expect("a written trace parses");
    assert_eq!(again, trace);
    // Writing is deterministic: the same trace gives the same bytes.
    let mut twice = Vec::new();
    write(&again, &mut twice).expect("a parsed trace writes");
    assert_eq!(twice, text);
});
