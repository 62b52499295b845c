//! Fuzzes the QUIC frame parser (RFC 9000 §19, RFC 9221 §4) on whole packet payloads.
//!
//! Whatever parses must re-emit into exactly `payload_len` bytes, each frame at the length the
//! simulator's size functions give, and parse back to the same frames. Run with
//! `cargo fuzz run --sanitizer none quic_frames` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_core::wire::quic::{
    ack_frame_len, crypto_frame_overhead, datagram_frame_overhead, emit_payload, frames, parse_payload, payload_len,
    stream_frame_overhead, Frame,
};

fuzz_target!(|data: &[u8]| {
    // The iterator sees the same frames as parse_payload, up to the first error.
    let streamed: Vec<_> = frames(data).collect();
    let parsed = match parse_payload(data) {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = err.to_string();
            return;
        }
    };
    assert_eq!(streamed.into_iter().collect::<Result<Vec<_>, _>>().as_ref(), Ok(&parsed));

    for f in &parsed {
        let sized = match f {
            Frame::Stream { stream_id, offset_bytes, data, .. } => {
                Some(stream_frame_overhead(*stream_id, *offset_bytes, data.len()) + data.len())
            }
            Frame::Crypto { offset_bytes, data } => Some(crypto_frame_overhead(*offset_bytes, data.len()) + data.len()),
            Frame::Datagram { explicit_len: true, data } => Some(datagram_frame_overhead(data.len()) + data.len()),
            Frame::Ack(a) => Some(ack_frame_len(&a.ranges, a.ack_delay_encoded, a.ecn)),
            _ => None,
        };
        let mut one = vec![0u8; f.encoded_len()];
        assert_eq!(f.emit(&mut one), Ok(one.len()), "{f:?}");
        if let Some(sized) = sized {
            assert_eq!(one.len(), sized, "{f:?}");
        }
    }

    let len = payload_len(&parsed);
    let mut buf = vec![0u8; len];
    assert_eq!(emit_payload(&parsed, &mut buf), Ok(len));
    assert_eq!(parse_payload(&buf).as_ref(), Ok(&parsed));
});
