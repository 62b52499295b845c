//! Headers of the object chunks that travel in DATAGRAM frames (RFC 9221) for partial
//! reliability, in two formats:
//!
//! - [`RefChunk`]: the QUIC reference tool's header (`../shared/reference/quic`, `DG_HDR`):
//!   group index (u8), chunk index (u32, big-endian), chunk count (u32, big-endian), then
//!   the chunk's bytes; 9 header bytes.
//! - [`H3Datagram`]: an HTTP/3 datagram (RFC 9297 §2.1: a Quarter Stream ID varint, the
//!   request stream's ID divided by four) whose payload is an [`ObjectChunk`]: a piece of the
//!   response object (object ID, offset, length, data) or its metadata (object ID, size,
//!   content type). This is the thesis's design (§5.8.1–5.8.2: datagram transfers keyed by a
//!   "Quarter Stream ID", a "file ID counter", and "metadata datagrams" told apart from "file
//!   chunk datagrams"); the thesis gives no byte layout, so the one here is chosen as an
//!   HTTP/3 implementer would (see [`ObjectChunk`]).
//!
//! Read first: RFC 9297 §2.1 (HTTP/3 datagram format) and RFC 9221 §4-5.

use super::varint::{Reader, Writer};
use super::{varint_len, WireError, VARINT_MAX};

/// Bytes of the reference tool's chunk header: group (1), chunk index (4), chunk count (4).
pub const REF_CHUNK_HEADER_BYTES: usize = 9;
/// Chunk bytes per datagram in the reference tool at its default 1452-byte UDP payload
/// (`--mtu 1452`): quinn's largest DATAGRAM payload there is 1414 bytes (1452 minus a short
/// header with an 8-byte connection ID and a 4-byte packet number, the 16-byte tag and 9
/// bytes it reserves for the frame type and length), less the 9-byte chunk header.
pub const REF_CHUNK_DATA_BYTES: usize = 1405;
/// Largest legal Quarter Stream ID (RFC 9297 §2.1): 2^60 - 1, since stream IDs are below 2^62.
pub const MAX_QUARTER_STREAM_ID: u64 = (1 << 60) - 1;

/// A chunk of the reference tool's datagram transfer: chunk `index` of `count` of stream
/// group `group`. The reference sends every chunk full except the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefChunk<'a> {
    /// Index of the group in the tool's `--groups` list.
    pub group: u8,
    /// Chunk index within the group, below `count`.
    pub index: u32,
    /// Chunks in the group, at least one.
    pub count: u32,
    /// The chunk's bytes (the rest of the datagram).
    pub data: &'a [u8],
}

impl<'a> RefChunk<'a> {
    /// Parses a whole DATAGRAM payload. Rejects fewer than 9 bytes, a count of zero and an
    /// index not below the count (the reference tool never sends either).
    pub fn parse(buf: &'a [u8]) -> Result<RefChunk<'a>, WireError> {
        let mut r = Reader::new(buf);
        let group = r.u8()?;
        let index = r.uint(4)? as u32;
        let count = r.uint(4)? as u32;
        if index >= count {
            return Err(WireError::ChunkIndexOutOfRange { index: u64::from(index), count: u64::from(count) });
        }
        Ok(RefChunk { group, index, count, data: r.rest() })
    }

    /// Bytes [`RefChunk::emit`] writes: 9 + the data.
    pub fn encoded_len(&self) -> usize {
        REF_CHUNK_HEADER_BYTES + self.data.len()
    }

    /// Writes the chunk at the front of `buf`; returns [`RefChunk::encoded_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if self.index >= self.count {
            return Err(WireError::ChunkIndexOutOfRange { index: u64::from(self.index), count: u64::from(self.count) });
        }
        let len = self.encoded_len();
        let mut w = Writer::new(buf.get_mut(..len).ok_or(WireError::BufferTooSmall)?);
        w.u8(self.group)?;
        w.uint(u64::from(self.index), 4)?;
        w.uint(u64::from(self.count), 4)?;
        w.bytes(self.data)?;
        Ok(w.pos())
    }
}

/// Chunk type of an object data chunk.
pub const CHUNK_TYPE_DATA: u64 = 0x00;
/// Chunk type of an object metadata chunk.
pub const CHUNK_TYPE_METADATA: u64 = 0x01;

/// What an HTTP/3 datagram of the partial-reliability transfer carries after its Quarter
/// Stream ID. Layout, every integer a QUIC varint (RFC 9000 §16):
///
/// ```text
/// data:     Chunk Type (0x00), Object ID, Offset, Length, Data (Length bytes)
/// metadata: Chunk Type (0x01), Object ID, Size, Content-Type Length, Content-Type
/// ```
///
/// Choices where the thesis is silent, as an HTTP/3 implementer would make them: varints
/// throughout (as in HTTP/3 frames and capsules, RFC 9114 §7.1, RFC 9297 §3.2); a leading
/// type to tell metadata from data; byte offsets rather than chunk indices, so chunk sizes
/// may change with the path's datagram size; an explicit Length, and no bytes after it (a
/// datagram holds one chunk); the content type as the bytes of an HTTP `content-type` field
/// value. The Object ID is the sender's per-connection counter (the thesis's "file ID").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectChunk<'a> {
    /// Bytes `offset_bytes..offset_bytes + data.len()` of an object.
    Data {
        /// The object.
        object_id: u64,
        /// Where `data` starts in the object.
        offset_bytes: u64,
        /// The chunk's bytes.
        data: &'a [u8],
    },
    /// An object's size and content type, so the receiver can tell when it holds all of it
    /// and what it lost.
    Metadata {
        /// The object.
        object_id: u64,
        /// The object's size.
        size_bytes: u64,
        /// The HTTP `content-type` value, e.g. `font/woff2`.
        content_type: &'a [u8],
    },
}

/// An HTTP/3 datagram (RFC 9297 §2.1) carrying an [`ObjectChunk`]: the DATAGRAM frame's whole
/// payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct H3Datagram<'a> {
    /// The request stream's ID divided by four; at most [`MAX_QUARTER_STREAM_ID`].
    pub quarter_stream_id: u64,
    /// The chunk.
    pub chunk: ObjectChunk<'a>,
}

/// Bytes in front of the data of an [`ObjectChunk::Data`] datagram: Quarter Stream ID, Chunk
/// Type, Object ID, Offset and Length. With the data this is the DATAGRAM payload the
/// simulator sizes.
pub fn h3_data_chunk_overhead(quarter_stream_id: u64, object_id: u64, offset_bytes: u64, data_len: usize) -> usize {
    varint_len(quarter_stream_id)
        + varint_len(CHUNK_TYPE_DATA)
        + varint_len(object_id)
        + varint_len(offset_bytes)
        + varint_len(data_len as u64)
}

/// Bytes of an [`ObjectChunk::Metadata`] datagram: Quarter Stream ID, Chunk Type, Object ID,
/// Size, Content-Type Length and the content type.
pub fn h3_metadata_chunk_len(
    quarter_stream_id: u64,
    object_id: u64,
    size_bytes: u64,
    content_type_len: usize,
) -> usize {
    varint_len(quarter_stream_id)
        + varint_len(CHUNK_TYPE_METADATA)
        + varint_len(object_id)
        + varint_len(size_bytes)
        + varint_len(content_type_len as u64)
        + content_type_len
}

impl<'a> H3Datagram<'a> {
    /// The request stream this datagram belongs to (RFC 9297 §2.1: Quarter Stream ID × 4).
    pub fn request_stream_id(&self) -> u64 {
        self.quarter_stream_id.saturating_mul(4)
    }

    /// Parses a whole DATAGRAM payload. Rejects a Quarter Stream ID above 2^60 - 1 (RFC 9297
    /// §2.1: H3_DATAGRAM_ERROR), an unknown chunk type, a length past the end, bytes after the
    /// chunk, and an offset plus length above 2^62 - 1.
    pub fn parse(buf: &'a [u8]) -> Result<H3Datagram<'a>, WireError> {
        let mut r = Reader::new(buf);
        let quarter_stream_id = r.varint()?;
        if quarter_stream_id > MAX_QUARTER_STREAM_ID {
            return Err(WireError::QuarterStreamIdTooLarge(quarter_stream_id));
        }
        let chunk = match r.varint()? {
            CHUNK_TYPE_DATA => {
                let object_id = r.varint()?;
                let offset_bytes = r.varint()?;
                let len = r.varint()?;
                let data = r.declared(len)?;
                if offset_bytes.checked_add(len).is_none_or(|end| end > VARINT_MAX) {
                    return Err(WireError::OffsetTooLarge);
                }
                ObjectChunk::Data { object_id, offset_bytes, data }
            }
            CHUNK_TYPE_METADATA => {
                let object_id = r.varint()?;
                let size_bytes = r.varint()?;
                let len = r.varint()?;
                ObjectChunk::Metadata { object_id, size_bytes, content_type: r.declared(len)? }
            }
            other => return Err(WireError::UnknownChunkType(other)),
        };
        if r.remaining() != 0 {
            return Err(WireError::TrailingBytes(r.remaining()));
        }
        Ok(H3Datagram { quarter_stream_id, chunk })
    }

    /// Bytes [`H3Datagram::emit`] writes: [`h3_data_chunk_overhead`] plus the data, or
    /// [`h3_metadata_chunk_len`].
    pub fn encoded_len(&self) -> usize {
        match self.chunk {
            ObjectChunk::Data { object_id, offset_bytes, data } => {
                h3_data_chunk_overhead(self.quarter_stream_id, object_id, offset_bytes, data.len()) + data.len()
            }
            ObjectChunk::Metadata { object_id, size_bytes, content_type } => {
                h3_metadata_chunk_len(self.quarter_stream_id, object_id, size_bytes, content_type.len())
            }
        }
    }

    /// Writes the datagram payload at the front of `buf`; returns [`H3Datagram::encoded_len`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if self.quarter_stream_id > MAX_QUARTER_STREAM_ID {
            return Err(WireError::QuarterStreamIdTooLarge(self.quarter_stream_id));
        }
        let len = self.encoded_len();
        let mut w = Writer::new(buf.get_mut(..len).ok_or(WireError::BufferTooSmall)?);
        w.varint(self.quarter_stream_id)?;
        match self.chunk {
            ObjectChunk::Data { object_id, offset_bytes, data } => {
                if offset_bytes.checked_add(data.len() as u64).is_none_or(|end| end > VARINT_MAX) {
                    return Err(WireError::OffsetTooLarge);
                }
                w.varint(CHUNK_TYPE_DATA)?;
                w.varint(object_id)?;
                w.varint(offset_bytes)?;
                w.varint(data.len() as u64)?;
                w.bytes(data)?;
            }
            ObjectChunk::Metadata { object_id, size_bytes, content_type } => {
                w.varint(CHUNK_TYPE_METADATA)?;
                w.varint(object_id)?;
                w.varint(size_bytes)?;
                w.varint(content_type.len() as u64)?;
                w.bytes(content_type)?;
            }
        }
        debug_assert_eq!(w.pos(), len);
        Ok(w.pos())
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::tests::{bytes, varint};
    use super::super::{datagram_frame_overhead, short_header_len, AEAD_TAG_BYTES};
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn reference_chunk() {
        // Group 2, chunk 3 of 5 (big-endian u32s), data "abc".
        let b = hex("020000000300000005616263");
        let c = RefChunk::parse(&b).unwrap();
        assert_eq!(c, RefChunk { group: 2, index: 3, count: 5, data: b"abc" });
        assert_eq!(c.encoded_len(), 12);
        let mut out = [0u8; 12];
        assert_eq!(c.emit(&mut out), Ok(12));
        assert_eq!(&out[..], &b[..]);
        assert_eq!(RefChunk::parse(&b[..8]), Err(WireError::Truncated));
        // Index 5 of 5, and a count of 0.
        assert_eq!(
            RefChunk::parse(&hex("000000000500000005")),
            Err(WireError::ChunkIndexOutOfRange { index: 5, count: 5 })
        );
        assert_eq!(
            RefChunk::parse(&hex("000000000000000000")),
            Err(WireError::ChunkIndexOutOfRange { index: 0, count: 0 })
        );
        // An empty group is one chunk with no data (the reference's `n.max(1)`).
        assert_eq!(
            RefChunk::parse(&hex("010000000000000001")),
            Ok(RefChunk { group: 1, index: 0, count: 1, data: b"" })
        );
    }

    #[test]
    fn reference_chunk_fills_a_1452_byte_packet() {
        // quinn's budget at 1452 bytes: 1-byte short header + 8-byte CID + 4-byte packet
        // number + 16-byte tag + 9 bytes reserved for the DATAGRAM type and length = 38, so
        // 1414 bytes of datagram, 9 of chunk header and 1405 of data.
        assert_eq!(1 + 8 + 4 + AEAD_TAG_BYTES + 9 + REF_CHUNK_HEADER_BYTES + REF_CHUNK_DATA_BYTES, 1452);
        // On the wire the DATAGRAM frame takes 3 bytes (0x31 and a 2-byte length), so the
        // packet is 1446 bytes.
        let dgram = REF_CHUNK_HEADER_BYTES + REF_CHUNK_DATA_BYTES;
        assert_eq!(short_header_len(8, 4) + datagram_frame_overhead(dgram) + dgram + AEAD_TAG_BYTES, 1446);
    }

    #[test]
    fn h3_vectors() {
        // Quarter Stream ID 1 (request stream 4), data chunk: object 7, offset 100 (the
        // 2-byte varint 40 64), length 3, "abc". Header: 1 + 1 + 1 + 2 + 1 = 6 bytes.
        let mut b = hex("010007406403");
        b.extend_from_slice(b"abc");
        let d = H3Datagram::parse(&b).unwrap();
        assert_eq!(
            d,
            H3Datagram {
                quarter_stream_id: 1,
                chunk: ObjectChunk::Data { object_id: 7, offset_bytes: 100, data: b"abc" }
            }
        );
        assert_eq!(d.request_stream_id(), 4);
        assert_eq!(h3_data_chunk_overhead(1, 7, 100, 3), 6);
        assert_eq!(d.encoded_len(), 9);
        let mut out = [0u8; 9];
        assert_eq!(d.emit(&mut out), Ok(9));
        assert_eq!(&out[..], &b[..]);
        // Metadata: QSID 0, object 2, size 1024 (the 2-byte varint 44 00: prefix 01, value
        // 0x0400), content type "font/woff2" (10 bytes): 1 + 1 + 1 + 2 + 1 + 10 = 16.
        let mut m = hex("00010244000a");
        m.extend_from_slice(b"font/woff2");
        let d = H3Datagram::parse(&m).unwrap();
        assert_eq!(d.chunk, ObjectChunk::Metadata { object_id: 2, size_bytes: 1024, content_type: b"font/woff2" });
        assert_eq!((d.encoded_len(), h3_metadata_chunk_len(0, 2, 1024, 10)), (16, 16));
    }

    #[test]
    fn h3_errors() {
        // QSID 2^60 = d0 00 00 00 00 00 00 00.
        assert_eq!(H3Datagram::parse(&hex("d00000000000000000")), Err(WireError::QuarterStreamIdTooLarge(1 << 60)));
        assert_eq!(H3Datagram::parse(&hex("0002")), Err(WireError::UnknownChunkType(2)));
        // Length 5 with two bytes left.
        assert_eq!(H3Datagram::parse(&hex("00000100056162")), Err(WireError::LengthPastEnd));
        assert_eq!(H3Datagram::parse(&hex("00000100016162")), Err(WireError::TrailingBytes(1)));
        assert_eq!(H3Datagram::parse(&hex("000001")), Err(WireError::Truncated));
        // Offset 2^62 - 1 and one byte of data.
        assert_eq!(H3Datagram::parse(&hex("000001ffffffffffffffff0161")), Err(WireError::OffsetTooLarge));
    }

    fn ref_chunk() -> impl Strategy<Value = RefChunk<'static>> {
        (any::<u8>(), 1..=u32::MAX, any::<u32>(), bytes(64)).prop_map(|(group, count, i, data)| RefChunk {
            group,
            index: i % count,
            count,
            data,
        })
    }

    fn h3() -> impl Strategy<Value = H3Datagram<'static>> {
        let chunk = prop_oneof![
            (varint(), varint().prop_map(|o| o.min(VARINT_MAX - 64)), bytes(64))
                .prop_map(|(object_id, offset_bytes, data)| ObjectChunk::Data { object_id, offset_bytes, data }),
            (varint(), varint(), bytes(40)).prop_map(|(object_id, size_bytes, content_type)| {
                ObjectChunk::Metadata { object_id, size_bytes, content_type }
            }),
        ];
        (varint().prop_map(|q| q.min(MAX_QUARTER_STREAM_ID)), chunk)
            .prop_map(|(quarter_stream_id, chunk)| H3Datagram { quarter_stream_id, chunk })
    }

    proptest! {
        #[test]
        fn ref_chunk_round_trip(c in ref_chunk()) {
            let mut buf = vec![0u8; c.encoded_len()];
            prop_assert_eq!(c.emit(&mut buf), Ok(REF_CHUNK_HEADER_BYTES + c.data.len()));
            prop_assert_eq!(RefChunk::parse(&buf), Ok(c));
        }

        #[test]
        fn h3_round_trip(d in h3()) {
            let mut buf = vec![0u8; d.encoded_len()];
            prop_assert_eq!(d.emit(&mut buf), Ok(buf.len()));
            let size = match d.chunk {
                ObjectChunk::Data { object_id, offset_bytes, data } => {
                    h3_data_chunk_overhead(d.quarter_stream_id, object_id, offset_bytes, data.len()) + data.len()
                }
                ObjectChunk::Metadata { object_id, size_bytes, content_type } => {
                    h3_metadata_chunk_len(d.quarter_stream_id, object_id, size_bytes, content_type.len())
                }
            };
            prop_assert_eq!(buf.len(), size);
            prop_assert_eq!(H3Datagram::parse(&buf), Ok(d));
        }

        #[test]
        fn arbitrary_chunks_never_panic(bytes in vec(any::<u8>(), 0..64)) {
            if let Ok(c) = RefChunk::parse(&bytes) {
                prop_assert_eq!(c.encoded_len(), bytes.len());
            }
            if let Ok(d) = H3Datagram::parse(&bytes) {
                let mut buf = vec![0u8; d.encoded_len()];
                prop_assert_eq!(d.emit(&mut buf), Ok(buf.len()));
                prop_assert_eq!(H3Datagram::parse(&buf), Ok(d));
            }
        }
    }
}
