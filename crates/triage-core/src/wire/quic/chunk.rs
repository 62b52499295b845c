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
pub fn h3_metadata_chunk_len(quarter_stream_id: u64, object_id: u64, size_bytes: u64, content_type_len: usize) -> usize {
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
