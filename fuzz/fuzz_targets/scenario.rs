#![no_main]
//! Scenario files are outside input: parsing, building (every variant) and running must never
//! panic. Raw text, so this mostly exercises TOML and the field parsers; `scenario_build`
//! writes well-formed files field by field. The seeds (`fuzz/corpus/scenario/`) use every
//! topology kind, loss model, queue discipline, trace link, jitter and duplication; trace
//! files are looked up in `fuzz/traces/`.
//!
//! Run with `cargo fuzz run --sanitizer none scenario` from the repository root.

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use triage_sim::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    match Scenario::parse(text, "fuzz.toml") {
        Ok(s) => match s.build_variants("fuzz.toml", Some(&traces)) {
            Ok(built) => {
                // Run a short while: whatever the numbers, the simulator must not panic.
                for (_, b) in built {
                    let mut sim = b.sim;
                    sim.run(b.stop_ns.min(100_000_000), |_| {});
                }
            }
            Err(e) => drop(e.to_string()),
        },
        Err(e) => drop(e.to_string()),
    }
});
