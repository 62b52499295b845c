//! Fuzzes the scenario-file unit parsers (`Duration`, `Rate`, `Size`).
//!
//! Run with `cargo +nightly fuzz run units` from the repository root.
#![no_main]

use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use triage_sim::units::{Duration, Rate, Size};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    // Anything accepted prints canonically and parses back to the same value; anything
    // rejected gives an error that renders.
    match Duration::from_str(text) {
        Ok(d) => assert_eq!(Duration::from_str(&d.to_string()), Ok(d)),
        Err(e) => drop(e.to_string()),
    }
    match Rate::from_str(text) {
        Ok(r) => assert_eq!(Rate::from_str(&r.to_string()), Ok(r)),
        Err(e) => drop(e.to_string()),
    }
    match Size::from_str(text) {
        Ok(s) => assert_eq!(Size::from_str(&s.to_string()), Ok(s)),
        Err(e) => drop(e.to_string()),
    }
});
