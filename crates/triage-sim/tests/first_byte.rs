//! Messages' first-byte times (`first_byte_ms`, a browser's responseStart): in a FIFO byte
//! stream each message's first byte arrives with the last byte of the one before it; over
//! QUIC streams every response's first byte lies between its write and its completion.

mod common;

use common::*;

#[test]
fn in_a_fifo_byte_stream_a_message_starts_when_the_one_before_it_ends() {
    let r = &run_scenario_file("cats-fifo.toml")[0].1;
    let m = &r.messages;
    assert_eq!(m.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["P4", "P3", "P2", "P1", "P0"]);
    for w in m.windows(2) {
        assert_eq!(w[1].first_byte_ms, w[0].completed_ms, "{} after {}", w[1].name, w[0].name);
    }
    // The first message's first byte: after it was written, a segment's worth before its end.
    let first = &m[0];
    assert!(first.written_ms.unwrap() < first.first_byte_ms.unwrap());
    assert!(first.first_byte_ms.unwrap() < first.completed_ms.unwrap());
}

#[test]
fn over_quic_streams_every_response_starts_between_its_write_and_its_end() {
    for (name, r) in run_scenario_file("cats-page-slow4g-quic.toml") {
        let mut checked = 0;
        for m in r.messages.iter().filter(|m| m.completed_ms.is_some()) {
            let (w, f, c) = (m.written_ms.unwrap(), m.first_byte_ms.unwrap(), m.completed_ms.unwrap());
            assert!(w <= f && f <= c, "{name}: {} written {w} first byte {f} complete {c}", m.name);
            // A response of several packets takes time after its first byte.
            if m.from == "server" && m.bytes > 20_000 {
                assert!(f < c, "{name}: {} ({} bytes) started and ended at {f}", m.name, m.bytes);
            }
            checked += 1;
        }
        assert!(checked >= 10, "{name}: {checked}");
    }
}
