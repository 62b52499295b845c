//! Fuzzes the Mahimahi trace parser and the cursor over any trace it accepts.
//!
//! Run with `cargo +nightly fuzz run trace` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_sim::trace::MahimahiTrace;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let trace = match MahimahiTrace::parse(text) {
        Ok(trace) => trace,
        Err(err) => {
            // Every error renders, and parse errors name a line unless the trace is empty.
            let _ = err.to_string();
            return;
        }
    };

    let ops = trace.opportunities_ms();
    assert!(!ops.is_empty());
    assert!(ops.windows(2).all(|w| w[0] <= w[1]));
    assert!(trace.period_ms() > 0);
    assert_eq!(Some(&trace.period_ms()), ops.last());
    let _ = trace.mean_rate_bps();

    // Walk the cursor with requests derived from the input: results never go back in time
    // and are never before the request.
    let mut cursor = trace.cursor();
    let mut now = 0u64;
    let mut last = 0u64;
    for (i, b) in data.iter().take(256).enumerate() {
        let step = match b % 4 {
            0 => 0,
            1 => u64::from(*b) * 1_000,
            2 => u64::from(*b) * 1_000_000,
            _ => (u64::from(*b) << (i % 48)).saturating_mul(1_000_000),
        };
        now = now.saturating_add(step);
        let at = cursor.next_opportunity_ns(now);
        assert!(at >= now);
        assert!(at >= last);
        last = at;
        now = at;
    }
    let _ = cursor.next_opportunity_ns(u64::MAX);
});
