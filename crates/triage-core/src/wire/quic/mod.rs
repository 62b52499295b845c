//! QUIC wire sizes (RFC 9000 §12, §16, §17, §19; RFC 9001 §5.3 for the AEAD tag; RFC 9221
//! §4 for DATAGRAM frames) and the checked codec that proves them.
//!
//! The simulator moves parsed packets, never byte buffers, so QUIC mode needs exact sizes:
//! what a frame or header would occupy on the wire. The functions in this file are that
//! sizing, written once and used by the connection. Beside them is a checked codec for real
//! sockets, in the style of smoltcp: a parse validates every length once against the input
//! and returns a representation borrowing from it, after which nothing can panic, and an
//! emit writes exactly the length the representation reports. Its tests assert that every
//! emitted encoding has the length these size functions give.
//!
//! - [`varint`]: variable-length integers (§16) and packet numbers (Appendix A.2-A.3).
//! - [`frame`]: [`Frame`] (§19, RFC 9221 §4), payload parsing, `is_ack_eliciting`.
//! - [`header`]: [`LongPacket`] (Initial, Handshake), [`ShortPacket`] (1-RTT), [`Packet`].
//! - [`chunk`]: datagram chunk headers, the reference tool's [`RefChunk`] and HTTP/3
//!   datagrams ([`H3Datagram`], RFC 9297 §2.1).
//!
//! Every error is a [`WireError`].

pub mod chunk;
pub mod frame;
pub mod header;
pub mod varint;

pub use chunk::{
    h3_data_chunk_overhead, h3_metadata_chunk_len, H3Datagram, ObjectChunk, RefChunk, MAX_QUARTER_STREAM_ID,
    REF_CHUNK_DATA_BYTES, REF_CHUNK_HEADER_BYTES,
};
pub use frame::{emit_payload, frames, parse_payload, payload_len, AckFrame, Frame, Frames, StreamDir};
pub use header::{LongPacket, Packet, ShortPacket, QUIC_V1};
pub use varint::{decode_pn, decode_varint, encode_pn, encode_varint};

/// What was wrong with bytes being parsed, or with a representation being emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The input ends inside a fixed-size field or a varint.
    #[error("input ends inside a field")]
    Truncated,
    /// A length field points past the end of the input.
    #[error("a length field points past the end of the input")]
    LengthPastEnd,
    /// The output buffer is shorter than the encoding.
    #[error("output buffer too small")]
    BufferTooSmall,
    /// A value above 2^62 - 1 cannot be a varint (RFC 9000 §16).
    #[error("{0} is above the varint maximum 2^62 - 1")]
    VarintTooLarge(u64),
    /// A frame type not in its shortest encoding (RFC 9000 §12.4).
    #[error("frame type {0:#x} is not in its shortest encoding")]
    NonMinimalFrameType(u64),
    /// A frame type this codec does not know (RFC 9000 §12.4: FRAME_ENCODING_ERROR).
    #[error("unknown frame type {0:#x}")]
    UnknownFrameType(u64),
    /// A packet payload with no frame (RFC 9000 §12.4).
    #[error("packet payload holds no frame")]
    EmptyPayload,
    /// A PADDING run of zero bytes cannot be emitted.
    #[error("empty PADDING run")]
    EmptyPadding,
    /// An ACK frame with no range cannot be emitted.
    #[error("ACK frame without a range")]
    EmptyAck,
    /// ACK ranges below packet number 0, or not descending with a gap (RFC 9000 §19.3.1).
    #[error("ACK ranges below zero or not descending with gaps")]
    BadAckRanges,
    /// Offset plus length above 2^62 - 1 (RFC 9000 §19.6, §19.8).
    #[error("offset plus length above 2^62 - 1")]
    OffsetTooLarge,
    /// A stream count above 2^60 (RFC 9000 §19.11, §19.14).
    #[error("stream count {0} above 2^60")]
    TooManyStreams(u64),
    /// A connection ID longer than 20 bytes, or an empty one in NEW_CONNECTION_ID (RFC 9000
    /// §17.2, §19.15).
    #[error("connection ID length {0} out of range")]
    BadConnectionIdLength(usize),
    /// NEW_CONNECTION_ID's Retire Prior To above its Sequence Number (RFC 9000 §19.15).
    #[error("Retire Prior To above the sequence number")]
    RetirePriorToTooLarge,
    /// NEW_TOKEN with an empty token (RFC 9000 §19.7).
    #[error("NEW_TOKEN with an empty token")]
    EmptyToken,
    /// A frame whose data runs to the end of the packet is not the last frame.
    #[error("a frame that runs to the end of the packet is followed by another")]
    FrameAfterUnbounded,
    /// A long header where a short one was expected, or the reverse (RFC 9000 §17.1).
    #[error("wrong header form")]
    WrongHeaderForm,
    /// The fixed bit is 0 (RFC 9000 §17.2, §17.3.1).
    #[error("fixed bit is 0")]
    FixedBitClear,
    /// Reserved header bits are not 0 (RFC 9000 §17.2, §17.3.1).
    #[error("reserved header bits set")]
    ReservedBitsSet,
    /// A version other than QUIC version 1 (0 is Version Negotiation, RFC 9000 §17.2.1).
    #[error("unsupported version {0:#010x}")]
    UnsupportedVersion(u32),
    /// A long packet type other than Initial and Handshake (0-RTT is 1, Retry is 3).
    #[error("unsupported long packet type {0}")]
    UnsupportedPacketType(u8),
    /// A packet number length outside 1..=4 bytes, or a truncated number that does not fit.
    #[error("packet number {truncated_pn:#x} does not fit {pn_len} bytes")]
    BadPacketNumber {
        /// The length in bytes.
        pn_len: usize,
        /// The truncated packet number.
        truncated_pn: u32,
    },
    /// Fewer bytes after the packet number than the 16-byte AEAD tag (RFC 9001 §5.3).
    #[error("packet shorter than its AEAD tag")]
    MissingTag,
    /// A token on a Handshake packet (only Initial packets have one, RFC 9000 §17.2.2).
    #[error("token on a Handshake packet")]
    TokenNotAllowed,
    /// A chunk index not below the chunk count.
    #[error("chunk index {index} not below chunk count {count}")]
    ChunkIndexOutOfRange {
        /// The chunk index.
        index: u64,
        /// The chunk count.
        count: u64,
    },
    /// A Quarter Stream ID above 2^60 - 1 (RFC 9297 §2.1).
    #[error("quarter stream ID {0} above 2^60 - 1")]
    QuarterStreamIdTooLarge(u64),
    /// An object chunk type other than data (0) and metadata (1).
    #[error("unknown chunk type {0:#x}")]
    UnknownChunkType(u64),
    /// Bytes after a chunk's declared end.
    #[error("{0} bytes after the chunk")]
    TrailingBytes(usize),
}

/// IPv4 (20) + UDP (8) header bytes in front of every QUIC datagram.
pub const IP_UDP_HEADER_BYTES: u32 = 28;
/// The AEAD tag every protected packet carries (RFC 9001 §5.3: AEAD_AES_128_GCM, 16 bytes).
pub const AEAD_TAG_BYTES: usize = 16;
/// The smallest datagram a client may send when it carries an Initial packet, and a server
/// when it carries an ack-eliciting Initial packet (RFC 9000 §14.1).
pub const MIN_INITIAL_DATAGRAM_BYTES: usize = 1200;
/// Largest value a variable-length integer holds (RFC 9000 §16).
pub const VARINT_MAX: u64 = (1 << 62) - 1;

/// Bytes of a variable-length integer (RFC 9000 §16): 1, 2, 4 or 8. Values above
/// [`VARINT_MAX`] cannot be encoded; they are sized as 8 bytes.
pub fn varint_len(v: u64) -> usize {
    if v < 1 << 6 {
        1
    } else if v < 1 << 14 {
        2
    } else if v < 1 << 30 {
        4
    } else {
        8
    }
}

/// Bytes of the truncated packet number a sender uses (RFC 9000 §17.1 and Appendix A.2):
/// enough to represent more than twice the range of unacknowledged packet numbers.
pub fn pn_len(full_pn: u64, largest_acked: Option<u64>) -> usize {
    let num_unacked = match largest_acked {
        None => full_pn.saturating_add(1),
        Some(l) => full_pn.saturating_sub(l),
    };
    // min_bits = log2(num_unacked) + 1, then one more bit for the sign of the window.
    let min_bits = 64 - num_unacked.leading_zeros() as usize + 1;
    min_bits.div_ceil(8).clamp(1, 4)
}

/// The two long-header packet types QUIC mode models (RFC 9000 §17.2.2 and §17.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LongType {
    /// Initial: carries a Token Length and Token field.
    Initial,
    /// Handshake.
    Handshake,
}

/// Bytes of a 1-RTT (short) header (RFC 9000 §17.3.1): first byte, Destination Connection
/// ID, truncated packet number.
pub fn short_header_len(dcid_len: usize, pn_len: usize) -> usize {
    1 + dcid_len + pn_len
}

/// Bytes of a long header (RFC 9000 §17.2): first byte, version, both connection IDs with
/// their length bytes, the token fields of an Initial, the Length field (which covers the
/// packet number and the protected payload with its tag) and the truncated packet number.
/// `payload_and_tag_len` is the frames' bytes plus [`AEAD_TAG_BYTES`].
pub fn long_header_len(
    ty: LongType,
    dcid_len: usize,
    scid_len: usize,
    token_len: usize,
    pn_len: usize,
    payload_and_tag_len: usize,
) -> usize {
    let token = match ty {
        LongType::Initial => varint_len(token_len as u64) + token_len,
        LongType::Handshake => 0,
    };
    1 + 4 + 1 + dcid_len + 1 + scid_len + token + varint_len((pn_len + payload_and_tag_len) as u64) + pn_len
}

/// Header bytes of a STREAM frame (RFC 9000 §19.8) that carries an explicit length: type,
/// Stream ID, Offset (only when non-zero) and Length.
pub fn stream_frame_overhead(stream_id: u64, offset: u64, data_len: usize) -> usize {
    1 + varint_len(stream_id) + if offset > 0 { varint_len(offset) } else { 0 } + varint_len(data_len as u64)
}

/// Header bytes of a CRYPTO frame (RFC 9000 §19.6): type, Offset, Length.
pub fn crypto_frame_overhead(offset: u64, data_len: usize) -> usize {
    1 + varint_len(offset) + varint_len(data_len as u64)
}

/// Header bytes of a DATAGRAM frame with a Length field (RFC 9221 §4, type 0x31).
pub fn datagram_frame_overhead(data_len: usize) -> usize {
    1 + varint_len(data_len as u64)
}

/// Bytes of an ACK frame (RFC 9000 §19.3). `ranges` are inclusive `(smallest, largest)`
/// packet-number ranges in descending order, non-overlapping and not adjacent; the first
/// holds the largest acknowledged. `ack_delay_encoded` is the ACK Delay field (microseconds
/// shifted right by the ack delay exponent). `ecn` holds the ECT(0), ECT(1) and ECN-CE
/// counts of an ACK_ECN frame (type 0x03). An empty `ranges` sizes as zero.
pub fn ack_frame_len(ranges: &[(u64, u64)], ack_delay_encoded: u64, ecn: Option<[u64; 3]>) -> usize {
    let Some(&(first_smallest, largest)) = ranges.first() else { return 0 };
    let mut len = 1
        + varint_len(largest)
        + varint_len(ack_delay_encoded)
        + varint_len(ranges.len() as u64 - 1)
        + varint_len(largest.saturating_sub(first_smallest));
    let mut prev_smallest = first_smallest;
    for &(smallest, l) in &ranges[1..] {
        // Gap: packets between this range and the previous one, minus one (§19.3.1).
        // Saturating, so that malformed ranges size without panicking (emit rejects them).
        let gap = prev_smallest.saturating_sub(l).saturating_sub(2);
        len += varint_len(gap) + varint_len(l.saturating_sub(smallest));
        prev_smallest = smallest;
    }
    if let Some(counts) = ecn {
        len += counts.iter().map(|&c| varint_len(c)).sum::<usize>();
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_boundaries() {
        // RFC 9000 §16, Table 4: 6, 14, 30 and 62 usable bits.
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(63), 1);
        assert_eq!(varint_len(64), 2);
        assert_eq!(varint_len(16383), 2);
        assert_eq!(varint_len(16384), 4);
        assert_eq!(varint_len((1 << 30) - 1), 4);
        assert_eq!(varint_len(1 << 30), 8);
    }

    #[test]
    fn packet_number_length_rfc9000_a2() {
        // Appendix A.2's example: largest acked 0xabe8b3, sending 0xac5c02: 29,519
        // unacknowledged packets need 16 bits.
        assert_eq!(pn_len(0xac5c02, Some(0xabe8b3)), 2);
        // ... and 0xace8fe needs 24 bits.
        assert_eq!(pn_len(0xace8fe, Some(0xabe8b3)), 3);
        assert_eq!(pn_len(0, None), 1);
        assert_eq!(pn_len(127, None), 2, "128 unacknowledged need 8 bits plus one");
        assert_eq!(pn_len(126, None), 1);
    }

    #[test]
    fn header_sizes() {
        // Short header with an 8-byte DCID and a 2-byte packet number: 11 bytes.
        assert_eq!(short_header_len(8, 2), 11);
        // Initial, 8-byte CIDs, no token, 4-byte PN, 1200 bytes of payload+tag:
        // 1 + 4 + 1 + 8 + 1 + 8 + 1 (token length 0) + 2 (Length 1204) + 4 = 30.
        assert_eq!(long_header_len(LongType::Initial, 8, 8, 0, 4, 1200), 30);
        assert_eq!(long_header_len(LongType::Handshake, 8, 8, 0, 4, 1200), 29);
    }

    #[test]
    fn frame_overheads() {
        // Stream 3 at offset 0 with 1400 bytes: type, id, length (2 bytes).
        assert_eq!(stream_frame_overhead(3, 0, 1400), 4);
        // Stream 7 at offset 100,000: the offset takes 4 bytes.
        assert_eq!(stream_frame_overhead(7, 100_000, 1400), 8);
        assert_eq!(crypto_frame_overhead(0, 500), 4);
        assert_eq!(datagram_frame_overhead(1414), 3);
        // One range [0, 9], delay 0: type, largest, delay, count, first range.
        assert_eq!(ack_frame_len(&[(0, 9)], 0, None), 5);
        // Two ranges [20, 30] and [0, 10]: gap = 20 - 10 - 2 = 8, length 10.
        assert_eq!(ack_frame_len(&[(20, 30), (0, 10)], 0, None), 7);
        assert_eq!(ack_frame_len(&[(0, 9)], 0, Some([10, 0, 1])), 8);
    }
}
