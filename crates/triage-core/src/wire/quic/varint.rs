//! Variable-length integers (RFC 9000 §16) and packet numbers (RFC 9000 §17.1, Appendix
//! A.2 and A.3), plus the bounds-checked cursors every other codec in this module reads and
//! writes through.
//!
//! Read first: RFC 9000 §16 (the two-bit length prefix) and Appendix A.1 (its examples),
//! then Appendix A.2 and A.3 (truncating and recovering packet numbers).

use super::{pn_len, varint_len, WireError, VARINT_MAX};

/// Decodes one variable-length integer from the front of `buf` (RFC 9000 §16): the two
/// most significant bits of the first byte give the length (1, 2, 4 or 8 bytes), the rest
/// is the value in network byte order. Returns the value and the bytes it occupied.
/// Non-minimal encodings are accepted, as §16 allows ("values do not need to be encoded on
/// the minimum number of bytes").
pub fn decode_varint(buf: &[u8]) -> Result<(u64, usize), WireError> {
    let first = *buf.first().ok_or(WireError::Truncated)?;
    let len = 1usize << (first >> 6);
    let bytes = buf.get(..len).ok_or(WireError::Truncated)?;
    let value = bytes[1..].iter().fold(u64::from(first & 0x3f), |v, &b| (v << 8) | u64::from(b));
    Ok((value, len))
}

/// Encodes `value` at the front of `buf` in the fewest bytes (RFC 9000 §16) and returns how
/// many it wrote, which is [`varint_len`]`(value)`. Values above [`VARINT_MAX`] cannot be
/// encoded.
pub fn encode_varint(value: u64, buf: &mut [u8]) -> Result<usize, WireError> {
    if value > VARINT_MAX {
        return Err(WireError::VarintTooLarge(value));
    }
    let len = varint_len(value);
    let out = buf.get_mut(..len).ok_or(WireError::BufferTooSmall)?;
    for (i, b) in out.iter_mut().enumerate() {
        *b = (value >> (8 * (len - 1 - i))) as u8;
    }
    // The length prefix: log2 of the length in the two top bits (§16, Table 4).
    out[0] |= (len.trailing_zeros() as u8) << 6;
    Ok(len)
}

/// Truncates a full packet number for sending (RFC 9000 §17.1, Appendix A.2): keeps the
/// [`pn_len`]`(full_pn, largest_acked)` least significant bytes. Returns the truncated value
/// and its length in bytes (1 to 4).
pub fn encode_pn(full_pn: u64, largest_acked: Option<u64>) -> (u32, usize) {
    let len = pn_len(full_pn, largest_acked);
    let mask = (1u64 << (8 * len)) - 1;
    ((full_pn & mask) as u32, len)
}

/// Recovers a full packet number from its truncated form (RFC 9000 Appendix A.3): the value
/// closest to one past `largest_pn` (the largest packet number successfully processed in
/// this space, `None` before the first) whose `pn_len` low bytes equal `truncated_pn`.
/// `pn_len` is clamped to 1..=4 and `largest_pn` to [`VARINT_MAX`], so any input gives an
/// answer.
pub fn decode_pn(largest_pn: Option<u64>, truncated_pn: u32, pn_len: usize) -> u64 {
    let expected = largest_pn.map_or(0, |l| l.min(VARINT_MAX) + 1);
    let pn_win = 1u64 << (8 * pn_len.clamp(1, 4));
    let pn_hwin = pn_win / 2;
    let pn_mask = pn_win - 1;
    // The window is centred on `expected`; the candidate shares its high bits.
    let candidate = (expected & !pn_mask) | (u64::from(truncated_pn) & pn_mask);
    if candidate + pn_hwin <= expected && candidate < (1 << 62) - pn_win {
        candidate + pn_win
    } else if candidate > expected + pn_hwin && candidate >= pn_win {
        candidate - pn_win
    } else {
        candidate
    }
}

/// A read cursor over a borrowed buffer. Every read checks the remaining length first, so
/// nothing that reads through it can index out of bounds.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// A fixed-size field of `n` bytes; [`WireError::Truncated`] if the input ends first.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if n > self.buf.len() {
            return Err(WireError::Truncated);
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// A field whose length came from the input: [`WireError::LengthPastEnd`] if it points
    /// past the end.
    pub(crate) fn declared(&mut self, len: u64) -> Result<&'a [u8], WireError> {
        if len > self.buf.len() as u64 {
            return Err(WireError::LengthPastEnd);
        }
        self.bytes(len as usize)
    }

    /// Everything left (for fields that extend to the end of the packet).
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// Leading zero bytes, consumed (a PADDING run).
    pub(crate) fn zeros(&mut self) -> usize {
        let n = self.buf.iter().take_while(|&&b| b == 0).count();
        self.buf = &self.buf[n..];
        n
    }

    pub(crate) fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.bytes(1)?[0])
    }

    /// An unsigned big-endian integer of `n` ≤ 8 bytes.
    pub(crate) fn uint(&mut self, n: usize) -> Result<u64, WireError> {
        Ok(self.bytes(n)?.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub(crate) fn varint(&mut self) -> Result<u64, WireError> {
        Ok(self.varint_with_len()?.0)
    }

    /// A varint and the bytes its encoding took (frame types must be minimal, §12.4).
    pub(crate) fn varint_with_len(&mut self) -> Result<(u64, usize), WireError> {
        let (v, len) = decode_varint(self.buf)?;
        self.buf = &self.buf[len..];
        Ok((v, len))
    }
}

/// A write cursor over a borrowed buffer; every write checks the space left.
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    fn space(&mut self, n: usize) -> Result<&mut [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::BufferTooSmall)?;
        let out = self.buf.get_mut(self.pos..end).ok_or(WireError::BufferTooSmall)?;
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn bytes(&mut self, data: &[u8]) -> Result<(), WireError> {
        self.space(data.len())?.copy_from_slice(data);
        Ok(())
    }

    pub(crate) fn zeros(&mut self, n: usize) -> Result<(), WireError> {
        self.space(n)?.fill(0);
        Ok(())
    }

    pub(crate) fn u8(&mut self, v: u8) -> Result<(), WireError> {
        self.bytes(&[v])
    }

    /// The `n` ≤ 8 low bytes of `v`, big-endian.
    pub(crate) fn uint(&mut self, v: u64, n: usize) -> Result<(), WireError> {
        let be = v.to_be_bytes();
        self.bytes(be.get(8 - n.min(8)..).unwrap_or(&[]))
    }

    pub(crate) fn varint(&mut self, v: u64) -> Result<(), WireError> {
        if v > VARINT_MAX {
            return Err(WireError::VarintTooLarge(v));
        }
        let len = varint_len(v);
        let out = self.space(len)?;
        encode_varint(v, out)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn rfc9000_a1_varint_examples() {
        // RFC 9000 Appendix A.1 (also §16, Table 4's examples): each encoding and its value.
        let cases =
            [("c2197c5eff14e88c", 151_288_809_941_952_652u64), ("9d7f3e7d", 494_878_333), ("7bbd", 15_293), ("25", 37)];
        for (enc, value) in cases {
            let bytes = hex(enc);
            assert_eq!(decode_varint(&bytes), Ok((value, bytes.len())), "{enc}");
            let mut out = [0u8; 8];
            assert_eq!(encode_varint(value, &mut out), Ok(bytes.len()));
            assert_eq!(&out[..bytes.len()], &bytes[..], "{enc}");
        }
        // "the two-byte sequence 0x40 0x25 also decodes to 37": non-minimal is accepted.
        assert_eq!(decode_varint(&hex("4025")), Ok((37, 2)));
    }

    #[test]
    fn varint_errors() {
        assert_eq!(decode_varint(&[]), Err(WireError::Truncated));
        // 0x80 announces four bytes; three are there.
        assert_eq!(decode_varint(&[0x80, 1, 2]), Err(WireError::Truncated));
        let mut out = [0u8; 8];
        assert_eq!(encode_varint(VARINT_MAX + 1, &mut out), Err(WireError::VarintTooLarge(VARINT_MAX + 1)));
        // 16384 needs four bytes.
        assert_eq!(encode_varint(16_384, &mut out[..3]), Err(WireError::BufferTooSmall));
        assert_eq!(encode_varint(VARINT_MAX, &mut out), Ok(8));
        assert_eq!(out, [0xff; 8]);
    }

    #[test]
    fn rfc9000_a3_packet_number_example() {
        // Appendix A.3: largest 0xa82f30ea, a 16-bit truncated 0x9b32 decodes to 0xa82f9b32.
        assert_eq!(decode_pn(Some(0xa82f_30ea), 0x9b32, 2), 0xa82f_9b32);
        // RFC 9001 Appendix A.5: 3-byte 0x00bff4 after 654360563 is 654360564 (0x2700bff4).
        assert_eq!(decode_pn(Some(654_360_563), 0x00bff4, 3), 654_360_564);
        // First packet of a space: expected 0, so the truncated value is the number.
        assert_eq!(decode_pn(None, 0, 1), 0);
        // Wrap upward: expected 0x1fe (largest 0x1fd), one-byte 0x01: the candidate 0x101 is
        // more than half a window (128) behind, so it is 0x101 + 256 = 0x201.
        assert_eq!(decode_pn(Some(0x1fd), 0x01, 1), 0x201);
        // Wrap downward: expected 0x101, truncated 0xff → 0xff (nearer than 0x1ff).
        assert_eq!(decode_pn(Some(0x100), 0xff, 1), 0xff);
    }

    #[test]
    fn rfc9000_a2_packet_number_encode() {
        // Appendix A.2: 0xac5c02 with 0xabe8b3 acknowledged is sent as 16 bits, 0x5c02.
        assert_eq!(encode_pn(0xac5c02, Some(0xabe8b3)), (0x5c02, 2));
        // 0xace8fe is sent as 24 bits, 0xace8fe.
        assert_eq!(encode_pn(0xace8fe, Some(0xabe8b3)), (0xace8fe, 3));
    }

    proptest! {
        #[test]
        fn varint_round_trip(v in prop_oneof![0..64u64, 0..16_384u64, 0..(1u64 << 30), 0..=VARINT_MAX]) {
            let mut out = [0u8; 8];
            let n = encode_varint(v, &mut out).unwrap();
            prop_assert_eq!(n, varint_len(v));
            prop_assert_eq!(decode_varint(&out[..n]), Ok((v, n)));
        }

        #[test]
        fn packet_number_round_trip(largest in 0u64..(1 << 40), ahead in 1u64..(1 << 20)) {
            // A sender that truncates with `largest` acknowledged is decoded by a receiver
            // whose largest received is anywhere from `largest` to just below the number.
            let full = largest + ahead;
            let (t, len) = encode_pn(full, Some(largest));
            prop_assert_eq!(decode_pn(Some(largest), t, len), full);
            prop_assert_eq!(decode_pn(Some(full - 1), t, len), full);
        }

        #[test]
        fn decode_varint_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..10)) {
            if let Ok((v, n)) = decode_varint(&bytes) {
                prop_assert!(v <= VARINT_MAX && n <= bytes.len());
            }
        }
    }
}
