//! `triage run --set PATH=VALUE` and JSON scenarios: the first line of the input is one
//! override, the rest a scenario (TOML, or JSON when it starts with `{`). Parsing an override,
//! applying it and converting JSON never panic; whatever `apply` returns is TOML that
//! `Scenario::parse` reads (accepting or rejecting it with a message).
//!
//! Run with `cargo fuzz run --sanitizer none scenario_override` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_sim::scenario::Scenario;
use triage_sim::scenario_override::{apply, json_to_toml, parse_override};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let doc = if rest.trim_start().starts_with('{') {
        match json_to_toml(rest) {
            Ok(t) => t,
            Err(e) => return assert!(!e.is_empty()),
        }
    } else {
        rest.to_string()
    };
    let over = match parse_override(first) {
        Ok(o) => o,
        Err(e) => return assert!(e.starts_with("--set ")),
    };
    match apply(&doc, &[over]) {
        Ok(out) => {
            if let Err(e) = Scenario::parse(&out, "fuzz.toml") {
                assert!(!e.to_string().is_empty());
            }
        }
        Err(e) => assert!(!e.is_empty()),
    }
});
