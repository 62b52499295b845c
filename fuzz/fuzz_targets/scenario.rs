#![no_main]
//! Scenario files are outside input: parsing, building and running must never panic.

use libfuzzer_sys::fuzz_target;
use triage_sim::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(s) = Scenario::parse(text, "fuzz.toml") {
            if let Ok(b) = s.build("fuzz.toml", None) {
                // Run a short while: whatever the numbers, the simulator must not panic.
                let mut sim = b.sim;
                sim.run(b.stop_ns.min(200_000_000), |_| {});
            }
        }
    }
});
