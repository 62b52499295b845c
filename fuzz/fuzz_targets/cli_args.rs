//! The command line's value parsers: `--setting RATE/OWD` and `--loss` (`reproduce quic`),
//! `--network` and `--policy` (`reproduce partial`), and the units every other flag takes
//! (`--rate`, `--rtt`, `--idle`, `--elephant-size`, `--interval`). Anything accepted is in
//! range and prints back to itself; anything rejected gives a message.
//!
//! Run with `cargo fuzz run --sanitizer none cli_args` from the repository root.
#![no_main]

use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use triage_sim::experiments::partial::PartialNetwork;
use triage_sim::units::{parse_probability, parse_rate_delay, Duration, Rate, Size};
use triage_web::reliability::ReliabilityPolicy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };

    match parse_rate_delay(text) {
        Ok((rate, owd)) => assert_eq!(parse_rate_delay(&format!("{rate}/{owd}")), Ok((rate, owd))),
        Err(e) => assert!(!e.is_empty()),
    }
    for max in [0.5, 1.0] {
        match parse_probability(text, max) {
            Ok(p) => {
                assert!(p.is_finite() && (0.0..=max).contains(&p) && p.is_sign_positive(), "{text:?} -> {p}");
                assert_eq!(parse_probability(&p.to_string(), max), Ok(p));
            }
            Err(e) => assert!(!e.is_empty()),
        }
    }
    if let Some(n) = PartialNetwork::parse(text) {
        assert_eq!(PartialNetwork::parse(n.name()), Some(n));
    }
    match ReliabilityPolicy::parse(text) {
        Ok(p) => assert_eq!(ReliabilityPolicy::parse(p.name()).ok(), Some(p)),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    // The unit types each flag parses with clap's FromStr.
    if let Ok(d) = Duration::from_str(text) {
        assert_eq!(Duration::from_str(&d.to_string()), Ok(d));
    }
    if let Ok(r) = Rate::from_str(text) {
        assert_eq!(Rate::from_str(&r.to_string()), Ok(r));
    }
    if let Ok(s) = Size::from_str(text) {
        assert_eq!(Size::from_str(&s.to_string()), Ok(s));
    }
});
