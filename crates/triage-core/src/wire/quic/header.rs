//! QUIC version 1 packets: long headers (Initial and Handshake, RFC 9000 §17.2, §17.2.2,
//! §17.2.4) and the 1-RTT short header (§17.3.1), each with its payload and AEAD tag.
//!
//! Read first: RFC 9000 §17.2 (long header layout, Figure 13) and §17.3.1 (Figure 19).
//!
//! No header protection and no encryption: the codec sees the header's bits in the clear,
//! the payload as plaintext frames and the 16-byte tag ([`AEAD_TAG_BYTES`]) as opaque bytes
//! (parse skips them, emit writes zeros). Only sizes and layout matter here; packet
//! protection (RFC 9001 §5) belongs to the socket layer. A datagram may hold several
//! coalesced long-header packets, each delimited by its Length field (§12.2); a short-header
//! packet runs to the end of the datagram.

use super::frame::MAX_CID_BYTES;
use super::varint::{Reader, Writer};
use super::{long_header_len, short_header_len, LongType, WireError, AEAD_TAG_BYTES, VARINT_MAX};

/// QUIC version 1 (RFC 9000 §15).
pub const QUIC_V1: u32 = 0x0000_0001;

const FORM_LONG: u8 = 0x80;
const FIXED_BIT: u8 = 0x40;

fn check_pn(pn_len: usize, truncated_pn: u32) -> Result<(), WireError> {
    if !(1..=4).contains(&pn_len) || (pn_len < 4 && truncated_pn >> (8 * pn_len) != 0) {
        return Err(WireError::BadPacketNumber { pn_len, truncated_pn });
    }
    Ok(())
}

fn check_cid_len(cid: &[u8]) -> Result<(), WireError> {
    if cid.len() > MAX_CID_BYTES {
        return Err(WireError::BadConnectionIdLength(cid.len()));
    }
    Ok(())
}

/// A connection ID with its length byte (§17.2), at most 20 bytes in version 1.
fn read_cid<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], WireError> {
    let len = r.u8()?;
    if usize::from(len) > MAX_CID_BYTES {
        return Err(WireError::BadConnectionIdLength(usize::from(len)));
    }
    r.declared(u64::from(len))
}

/// Splits the bytes after the packet number into frames and the AEAD tag.
fn split_tag(body: &[u8]) -> Result<&[u8], WireError> {
    let frames_len = body.len().checked_sub(AEAD_TAG_BYTES).ok_or(WireError::MissingTag)?;
    Ok(&body[..frames_len])
}

/// An Initial or Handshake packet of QUIC version 1 (RFC 9000 §17.2): header fields, the
/// frames as (unprotected) bytes, then a 16-byte tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongPacket<'a> {
    /// Initial (type 0x0) or Handshake (type 0x2).
    pub ty: LongType,
    /// Destination Connection ID, 0 to 20 bytes.
    pub dcid: &'a [u8],
    /// Source Connection ID, 0 to 20 bytes.
    pub scid: &'a [u8],
    /// The Initial packet's Token (§17.2.2); must be empty for Handshake packets.
    pub token: &'a [u8],
    /// Bytes of the truncated packet number, 1 to 4 (the two low bits of the first byte).
    pub pn_len: usize,
    /// The truncated packet number (see [`super::decode_pn`]); fits in `pn_len` bytes.
    pub truncated_pn: u32,
    /// The frames, unprotected; the tag follows them on the wire.
    pub payload: &'a [u8],
}

impl<'a> LongPacket<'a> {
    /// Parses one long-header packet from the front of `buf`; returns it and the bytes it
    /// took (the rest of a datagram may hold coalesced packets). Rejects: a short header,
    /// the fixed bit clear, a version other than 1 (including Version Negotiation, version 0),
    /// 0-RTT and Retry packets, non-zero reserved bits (§17.2: they are zero once protection is
    /// removed, which here it always is), connection IDs over 20 bytes, a Length past the end,
    /// and a Length too short for the packet number and tag.
    pub fn parse(buf: &'a [u8]) -> Result<(LongPacket<'a>, usize), WireError> {
        let mut r = Reader::new(buf);
        let first = r.u8()?;
        if first & FORM_LONG == 0 {
            return Err(WireError::WrongHeaderForm);
        }
        if first & FIXED_BIT == 0 {
            return Err(WireError::FixedBitClear);
        }
        let version = r.uint(4)? as u32;
        if version != QUIC_V1 {
            return Err(WireError::UnsupportedVersion(version));
        }
        let ty = match (first >> 4) & 0x03 {
            0x0 => LongType::Initial,
            0x2 => LongType::Handshake,
            other => return Err(WireError::UnsupportedPacketType(other)),
        };
        if first & 0x0c != 0 {
            return Err(WireError::ReservedBitsSet);
        }
        let pn_len = usize::from(first & 0x03) + 1;
        let dcid = read_cid(&mut r)?;
        let scid = read_cid(&mut r)?;
        let token = match ty {
            LongType::Initial => {
                let len = r.varint()?;
                r.declared(len)?
            }
            LongType::Handshake => &[],
        };
        let length = r.varint()?;
        let body = r.declared(length)?;
        if body.len() < pn_len + AEAD_TAG_BYTES {
            return Err(WireError::MissingTag);
        }
        let mut b = Reader::new(body);
        let truncated_pn = b.uint(pn_len)? as u32;
        let payload = split_tag(b.rest())?;
        Ok((LongPacket { ty, dcid, scid, token, pn_len, truncated_pn, payload }, buf.len() - r.remaining()))
    }

    /// Bytes of the header, through the packet number: [`long_header_len`] for these fields.
    pub fn header_len(&self) -> usize {
        long_header_len(
            self.ty,
            self.dcid.len(),
            self.scid.len(),
            self.token.len(),
            self.pn_len,
            self.payload.len() + AEAD_TAG_BYTES,
        )
    }

    /// Bytes of the whole packet: header, frames and tag.
    pub fn encoded_len(&self) -> usize {
        self.header_len() + self.payload.len() + AEAD_TAG_BYTES
    }

    /// Writes the packet at the front of `buf` (the tag as 16 zero bytes) and returns
    /// [`LongPacket::encoded_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        check_pn(self.pn_len, self.truncated_pn)?;
        check_cid_len(self.dcid)?;
        check_cid_len(self.scid)?;
        let type_bits = match self.ty {
            LongType::Initial => 0x0,
            LongType::Handshake => {
                if !self.token.is_empty() {
                    return Err(WireError::TokenNotAllowed);
                }
                0x2
            }
        };
        let length = (self.pn_len + self.payload.len() + AEAD_TAG_BYTES) as u64;
        if length > VARINT_MAX {
            return Err(WireError::VarintTooLarge(length));
        }
        let len = self.encoded_len();
        let mut w = Writer::new(buf.get_mut(..len).ok_or(WireError::BufferTooSmall)?);
        w.u8(FORM_LONG | FIXED_BIT | (type_bits << 4) | (self.pn_len - 1) as u8)?;
        w.uint(u64::from(QUIC_V1), 4)?;
        w.u8(self.dcid.len() as u8)?;
        w.bytes(self.dcid)?;
        w.u8(self.scid.len() as u8)?;
        w.bytes(self.scid)?;
        if self.ty == LongType::Initial {
            w.varint(self.token.len() as u64)?;
            w.bytes(self.token)?;
        }
        w.varint(length)?;
        w.uint(u64::from(self.truncated_pn), self.pn_len)?;
        w.bytes(self.payload)?;
        w.zeros(AEAD_TAG_BYTES)?;
        debug_assert_eq!(w.pos(), len);
        Ok(w.pos())
    }
}

/// A 1-RTT packet (RFC 9000 §17.3.1): short header, frames, 16-byte tag. The Destination
/// Connection ID has no length on the wire; the receiver knows it (it chose it), so parse
/// takes it as a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortPacket<'a> {
    /// The latency spin bit (§17.4).
    pub spin: bool,
    /// The key phase bit (RFC 9001 §6).
    pub key_phase: bool,
    /// Destination Connection ID, of the length the receiver configured (0 to 20 bytes).
    pub dcid: &'a [u8],
    /// Bytes of the truncated packet number, 1 to 4.
    pub pn_len: usize,
    /// The truncated packet number; fits in `pn_len` bytes.
    pub truncated_pn: u32,
    /// The frames, unprotected; the tag follows them.
    pub payload: &'a [u8],
}

impl<'a> ShortPacket<'a> {
    /// Parses a short-header packet that fills `buf` (the rest of the datagram), with a
    /// Destination Connection ID of `dcid_len` bytes. Rejects a long header, the fixed bit
    /// clear, non-zero reserved bits, `dcid_len` over 20 and fewer than 16 bytes after the
    /// packet number.
    pub fn parse(buf: &'a [u8], dcid_len: usize) -> Result<ShortPacket<'a>, WireError> {
        if dcid_len > MAX_CID_BYTES {
            return Err(WireError::BadConnectionIdLength(dcid_len));
        }
        let mut r = Reader::new(buf);
        let first = r.u8()?;
        if first & FORM_LONG != 0 {
            return Err(WireError::WrongHeaderForm);
        }
        if first & FIXED_BIT == 0 {
            return Err(WireError::FixedBitClear);
        }
        if first & 0x18 != 0 {
            return Err(WireError::ReservedBitsSet);
        }
        let pn_len = usize::from(first & 0x03) + 1;
        let dcid = r.bytes(dcid_len)?;
        let truncated_pn = r.uint(pn_len)? as u32;
        let payload = split_tag(r.rest())?;
        Ok(ShortPacket { spin: first & 0x20 != 0, key_phase: first & 0x04 != 0, dcid, pn_len, truncated_pn, payload })
    }

    /// Bytes of the header: [`short_header_len`] for these fields.
    pub fn header_len(&self) -> usize {
        short_header_len(self.dcid.len(), self.pn_len)
    }

    /// Bytes of the whole packet: header, frames and tag.
    pub fn encoded_len(&self) -> usize {
        self.header_len() + self.payload.len() + AEAD_TAG_BYTES
    }

    /// Writes the packet at the front of `buf` (the tag as 16 zero bytes) and returns
    /// [`ShortPacket::encoded_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        check_pn(self.pn_len, self.truncated_pn)?;
        check_cid_len(self.dcid)?;
        let len = self.encoded_len();
        let mut w = Writer::new(buf.get_mut(..len).ok_or(WireError::BufferTooSmall)?);
        let spin = if self.spin { 0x20 } else { 0 };
        let key_phase = if self.key_phase { 0x04 } else { 0 };
        w.u8(FIXED_BIT | spin | key_phase | (self.pn_len - 1) as u8)?;
        w.bytes(self.dcid)?;
        w.uint(u64::from(self.truncated_pn), self.pn_len)?;
        w.bytes(self.payload)?;
        w.zeros(AEAD_TAG_BYTES)?;
        debug_assert_eq!(w.pos(), len);
        Ok(w.pos())
    }
}

/// A long- or short-header packet, as the first bit of a datagram's next packet says
/// (RFC 9000 §17.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packet<'a> {
    /// Initial or Handshake.
    Long(LongPacket<'a>),
    /// 1-RTT.
    Short(ShortPacket<'a>),
}

impl<'a> Packet<'a> {
    /// Parses the packet at the front of `buf`; returns it and the bytes it took. A short
    /// header takes the rest of `buf` and has a Destination Connection ID of
    /// `short_dcid_len` bytes.
    pub fn parse(buf: &'a [u8], short_dcid_len: usize) -> Result<(Packet<'a>, usize), WireError> {
        match buf.first() {
            None => Err(WireError::Truncated),
            Some(b) if b & FORM_LONG != 0 => LongPacket::parse(buf).map(|(p, n)| (Packet::Long(p), n)),
            Some(_) => ShortPacket::parse(buf, short_dcid_len).map(|p| (Packet::Short(p), buf.len())),
        }
    }

    /// The frames, unprotected.
    pub fn payload(&self) -> &'a [u8] {
        match self {
            Packet::Long(p) => p.payload,
            Packet::Short(p) => p.payload,
        }
    }

    /// Bytes of the header through the packet number.
    pub fn header_len(&self) -> usize {
        match self {
            Packet::Long(p) => p.header_len(),
            Packet::Short(p) => p.header_len(),
        }
    }

    /// Bytes of the whole packet.
    pub fn encoded_len(&self) -> usize {
        match self {
            Packet::Long(p) => p.encoded_len(),
            Packet::Short(p) => p.encoded_len(),
        }
    }

    /// Writes the packet at the front of `buf`; returns [`Packet::encoded_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Packet::Long(p) => p.emit(buf),
            Packet::Short(p) => p.emit(buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::tests::{bytes, leak};
    use super::super::{parse_payload, Frame};
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn emit_vec(p: &Packet<'_>) -> Vec<u8> {
        let mut buf = vec![0u8; p.encoded_len()];
        assert_eq!(p.emit(&mut buf), Ok(buf.len()));
        buf
    }

    #[test]
    fn rfc9001_a2_client_initial() {
        // RFC 9001 Appendix A.2: the unprotected header c3 00000001 08 8394c8f03e515708 00 00
        // 449e 00000002: Initial, 4-byte packet number 2, 8-byte DCID, no SCID, no token,
        // Length 0x049e = 1182 = 4 (packet number) + 1162 (frames) + 16 (tag); 22 header
        // bytes, 1200 in all (the minimum Initial datagram).
        let header = hex("c300000001088394c8f03e5157080000449e00000002");
        let mut buf = header.clone();
        buf.extend(hex("060040f1"));
        // 18 bytes precede the Length-covered region: 18 + 1182 = 1200.
        buf.resize(18 + 1182, 0);
        let (p, n) = LongPacket::parse(&buf).unwrap();
        assert_eq!(n, 1200);
        assert_eq!(n, super::super::MIN_INITIAL_DATAGRAM_BYTES);
        assert_eq!((p.ty, p.dcid, p.scid, p.token), (LongType::Initial, &header[6..14], &[][..], &[][..]));
        assert_eq!((p.pn_len, p.truncated_pn, p.payload.len()), (4, 2, 1162));
        assert_eq!(p.header_len(), 22);
        assert_eq!(p.header_len(), long_header_len(LongType::Initial, 8, 0, 0, 4, 1162 + AEAD_TAG_BYTES));
        // The frames: CRYPTO (241 bytes at offset 0) and 917 bytes of PADDING.
        assert_eq!(parse_payload(p.payload).unwrap()[1], Frame::Padding { len: 917 });
        // Emit gives the same bytes (the tag was zeros here too).
        assert_eq!(emit_vec(&Packet::Long(p)), buf);
    }

    #[test]
    fn rfc9001_a5_short_header() {
        // RFC 9001 Appendix A.5: unprotected header 42 00bff4 (fixed bit, 3-byte packet
        // number, empty DCID), payload 01 (PING), then the ChaCha20-Poly1305 tag: 21 bytes.
        let buf = hex("4200bff4015e5cd55c41f69080575d7999c25a5bfb");
        let (p, n) = Packet::parse(&buf, 0).unwrap();
        assert_eq!(n, 21);
        let Packet::Short(s) = p else { panic!("short header expected") };
        assert_eq!((s.spin, s.key_phase, s.dcid, s.pn_len, s.truncated_pn), (false, false, &[][..], 3, 0xbff4));
        assert_eq!(parse_payload(s.payload), Ok(vec![Frame::Ping]));
        assert_eq!(s.header_len(), short_header_len(0, 3));
        assert_eq!(super::super::decode_pn(Some(654_360_563), s.truncated_pn, s.pn_len), 654_360_564);
        let out = emit_vec(&p);
        assert_eq!(&out[..5], &buf[..5]);
        assert_eq!(&out[5..], &[0u8; 16]);
    }

    #[test]
    fn coalesced_datagram() {
        // An Initial, a Handshake and a 1-RTT packet in one datagram (RFC 9000 §12.2).
        let dcid = [7u8; 8];
        let packets = [
            Packet::Long(LongPacket {
                ty: LongType::Initial,
                dcid: &dcid,
                scid: &[1, 2],
                token: b"tok",
                pn_len: 1,
                truncated_pn: 0,
                payload: &[1],
            }),
            Packet::Long(LongPacket {
                ty: LongType::Handshake,
                dcid: &dcid,
                scid: &[1, 2],
                token: &[],
                pn_len: 2,
                truncated_pn: 0x1234,
                payload: &[1, 0, 0],
            }),
            Packet::Short(ShortPacket {
                spin: true,
                key_phase: true,
                dcid: &dcid,
                pn_len: 4,
                truncated_pn: 0xdead_beef,
                payload: &[0x1e],
            }),
        ];
        let datagram: Vec<u8> = packets.iter().flat_map(emit_vec).collect();
        // Initial: 1+4+1+8+1+2+1+3+1 (Length 18)+1 = 23 header bytes + 1 + 16 = 40.
        assert_eq!(packets[0].encoded_len(), 40);
        let mut rest = &datagram[..];
        for expected in &packets {
            let (p, n) = Packet::parse(rest, 8).unwrap();
            assert_eq!(&p, expected);
            rest = &rest[n..];
        }
        assert!(rest.is_empty());
    }

    #[test]
    fn non_minimal_length_is_accepted() {
        // A Handshake packet whose Length 21 (2 + 3 + 16) is written as the two-byte 40 15
        // (RFC 9000 §16 allows it): it parses, and re-emits one byte shorter with 15.
        let mut buf = hex("e10000000104010203040040151234011e00");
        buf.extend([0u8; 16]);
        let (p, n) = LongPacket::parse(&buf).unwrap();
        assert_eq!((n, p.truncated_pn, p.payload), (buf.len(), 0x1234, &[0x01, 0x1e, 0x00][..]));
        let out = emit_vec(&Packet::Long(p));
        assert_eq!(out.len(), n - 1);
        assert_eq!(out[11], 0x15, "first byte, version, DCID with its length, SCID length, then Length");
        assert_eq!(LongPacket::parse(&out), Ok((p, n - 1)));
    }

    #[test]
    fn header_errors() {
        let good = hex("c300000001088394c8f03e5157080000449e00000002");
        let mut buf = good.clone();
        buf.resize(18 + 1182, 0);
        let with = |i: usize, b: u8| {
            let mut v = buf.clone();
            v[i] = b;
            v
        };
        assert_eq!(LongPacket::parse(&with(0, 0x83)), Err(WireError::FixedBitClear));
        assert_eq!(LongPacket::parse(&with(0, 0xd3)), Err(WireError::UnsupportedPacketType(1)), "0-RTT");
        assert_eq!(LongPacket::parse(&with(0, 0xf3)), Err(WireError::UnsupportedPacketType(3)), "Retry");
        assert_eq!(LongPacket::parse(&with(0, 0xc7)), Err(WireError::ReservedBitsSet));
        assert_eq!(LongPacket::parse(&with(4, 0x02)), Err(WireError::UnsupportedVersion(2)));
        assert_eq!(LongPacket::parse(&with(5, 21)), Err(WireError::BadConnectionIdLength(21)));
        assert_eq!(LongPacket::parse(&buf[..buf.len() - 1]), Err(WireError::LengthPastEnd));
        assert_eq!(LongPacket::parse(&buf[..5]), Err(WireError::Truncated));
        assert_eq!(ShortPacket::parse(&buf, 8), Err(WireError::WrongHeaderForm));
        // Length 19 = 4-byte packet number + 15: one byte short of the tag.
        let mut short_len = good[..16].to_vec();
        short_len.extend([0x13, 0, 0, 0, 2]);
        short_len.resize(16 + 1 + 19, 0);
        assert_eq!(LongPacket::parse(&short_len), Err(WireError::MissingTag));
        assert_eq!(ShortPacket::parse(&hex("4200bff401"), 0), Err(WireError::MissingTag));
        assert_eq!(ShortPacket::parse(&hex("5a00bff4"), 0), Err(WireError::ReservedBitsSet));
        assert_eq!(ShortPacket::parse(&[0x40; 40], 21), Err(WireError::BadConnectionIdLength(21)));
        let mut hs = LongPacket::parse(&buf).unwrap().0;
        hs.ty = LongType::Handshake;
        hs.token = b"t";
        assert_eq!(hs.emit(&mut [0u8; 1300]), Err(WireError::TokenNotAllowed));
        hs.token = &[];
        hs.pn_len = 1;
        hs.truncated_pn = 0x100;
        assert_eq!(hs.emit(&mut [0u8; 1300]), Err(WireError::BadPacketNumber { pn_len: 1, truncated_pn: 0x100 }));
    }

    fn pn() -> impl Strategy<Value = (usize, u32)> {
        (1..=4usize, any::<u32>()).prop_map(|(len, v)| (len, if len == 4 { v } else { v & ((1 << (8 * len)) - 1) }))
    }

    fn cid() -> impl Strategy<Value = &'static [u8]> {
        bytes(MAX_CID_BYTES)
    }

    fn long() -> impl Strategy<Value = LongPacket<'static>> {
        (any::<bool>(), cid(), cid(), bytes(40), pn(), bytes(300)).prop_map(
            |(initial, dcid, scid, token, (pn_len, truncated_pn), payload)| {
                let (ty, token) = if initial { (LongType::Initial, token) } else { (LongType::Handshake, &[][..]) };
                LongPacket { ty, dcid, scid, token, pn_len, truncated_pn, payload }
            },
        )
    }

    fn short() -> impl Strategy<Value = ShortPacket<'static>> {
        (any::<bool>(), any::<bool>(), cid(), pn(), bytes(300)).prop_map(
            |(spin, key_phase, dcid, (pn_len, truncated_pn), payload)| ShortPacket {
                spin,
                key_phase,
                dcid,
                pn_len,
                truncated_pn,
                payload,
            },
        )
    }

    proptest! {
        #[test]
        fn long_round_trip(p in long()) {
            let buf = emit_vec(&Packet::Long(p));
            let size = long_header_len(p.ty, p.dcid.len(), p.scid.len(), p.token.len(), p.pn_len, p.payload.len() + AEAD_TAG_BYTES);
            prop_assert_eq!(buf.len(), size + p.payload.len() + AEAD_TAG_BYTES);
            prop_assert_eq!(LongPacket::parse(&buf), Ok((p, buf.len())));
        }

        #[test]
        fn short_round_trip(p in short()) {
            let buf = emit_vec(&Packet::Short(p));
            prop_assert_eq!(buf.len(), short_header_len(p.dcid.len(), p.pn_len) + p.payload.len() + AEAD_TAG_BYTES);
            prop_assert_eq!(ShortPacket::parse(&buf, p.dcid.len()), Ok(p));
        }

        #[test]
        fn arbitrary_datagram_never_panics(bytes in vec(any::<u8>(), 0..128), dcid_len in 0..=24usize) {
            if let Ok((p, n)) = Packet::parse(&bytes, dcid_len) {
                prop_assert!(n <= bytes.len());
                // Non-minimal varints in the input re-emit shorter.
                let out = emit_vec(&p);
                prop_assert!(out.len() <= n);
                prop_assert_eq!(Packet::parse(&out, dcid_len), Ok((p, out.len())));
            }
        }

        #[test]
        fn mutated_long_never_panics(p in long(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let mut buf = emit_vec(&Packet::Long(p));
            let i = at.index(buf.len());
            buf[i] = byte;
            let buf = leak(buf);
            if let Ok((q, n)) = Packet::parse(buf, 8) {
                // A mutated length byte may leave a non-minimal varint, which re-emits shorter.
                let out = emit_vec(&q);
                prop_assert!(out.len() <= n);
                prop_assert_eq!(Packet::parse(&out, 8), Ok((q, out.len())));
            }
        }
    }
}
