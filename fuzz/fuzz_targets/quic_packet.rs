//! Fuzzes the QUIC packet header parsers (RFC 9000 §17.2, §17.3.1) on datagrams of
//! coalesced packets.
//!
//! The first input byte picks the short header's connection ID length (0 to 20), the rest
//! is the datagram. Every packet that parses re-emits at the length `long_header_len` /
//! `short_header_len` give (no longer than it arrived) and parses back equal; its payload goes through the frame parser.
//! Run with `cargo fuzz run --sanitizer none quic_packet` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_core::wire::quic::{frames, long_header_len, short_header_len, Packet, AEAD_TAG_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((&first, mut rest)) = data.split_first() else { return };
    let dcid_len = usize::from(first) % 21;
    while !rest.is_empty() {
        let (packet, n) = match Packet::parse(rest, dcid_len) {
            Ok(parsed) => parsed,
            Err(err) => {
                let _ = err.to_string();
                return;
            }
        };
        assert!(n > 0 && n <= rest.len());
        let header_len = match &packet {
            Packet::Long(p) => long_header_len(
                p.ty,
                p.dcid.len(),
                p.scid.len(),
                p.token.len(),
                p.pn_len,
                p.payload.len() + AEAD_TAG_BYTES,
            ),
            Packet::Short(p) => short_header_len(p.dcid.len(), p.pn_len),
        };
        assert_eq!(packet.header_len(), header_len);
        // Varints may arrive longer than needed (RFC 9000 §16); emit writes them minimally.
        let len = packet.encoded_len();
        assert!(len <= n);
        let mut buf = vec![0u8; len];
        assert_eq!(packet.emit(&mut buf), Ok(len));
        assert_eq!(Packet::parse(&buf, dcid_len), Ok((packet, len)));
        for f in frames(packet.payload()) {
            if f.is_err() {
                break;
            }
        }
        rest = &rest[n..];
    }
});
