//! QUIC wire sizes (RFC 9000 §12, §16, §17, §19; RFC 9001 §5.3 for the AEAD tag; RFC 9221
//! §4 for DATAGRAM frames).
//!
//! The simulator moves parsed packets, never byte buffers, so QUIC mode needs exact sizes:
//! what a frame or header would occupy on the wire. The functions here are that sizing,
//! written once and used by the connection; the checked codec in this module (parse and
//! emit) produces buffers of exactly these lengths, which its tests assert.

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
        + varint_len(largest - first_smallest);
    let mut prev_smallest = first_smallest;
    for &(smallest, l) in &ranges[1..] {
        // Gap: packets between this range and the previous one, minus one (§19.3.1).
        let gap = prev_smallest.saturating_sub(l).saturating_sub(2);
        len += varint_len(gap) + varint_len(l - smallest);
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
