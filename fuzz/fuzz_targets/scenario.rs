#![no_main]
//! Scenario files are outside input: parsing and building must never panic.

use libfuzzer_sys::fuzz_target;
use triage_sim::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(s) = Scenario::parse(text, "fuzz.toml") {
            let _ = s.build("fuzz.toml", None);
        }
    }
});
