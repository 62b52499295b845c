//! Fuzzes the datagram chunk headers: the reference tool's 9-byte header and HTTP/3
//! datagrams (RFC 9297 §2.1) carrying object data and metadata chunks.
//!
//! Every chunk that parses re-emits at its `encoded_len` (for HTTP/3, the size functions
//! `h3_data_chunk_overhead` / `h3_metadata_chunk_len`) and parses back equal. Run with
//! `cargo fuzz run --sanitizer none datagram_chunk` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use triage_core::wire::quic::{
    h3_data_chunk_overhead, h3_metadata_chunk_len, H3Datagram, ObjectChunk, RefChunk, REF_CHUNK_HEADER_BYTES,
};

fuzz_target!(|data: &[u8]| {
    match RefChunk::parse(data) {
        Ok(c) => {
            assert_eq!(c.encoded_len(), data.len());
            assert_eq!(c.encoded_len(), REF_CHUNK_HEADER_BYTES + c.data.len());
            let mut buf = vec![0u8; c.encoded_len()];
            assert_eq!(c.emit(&mut buf), Ok(data.len()));
            assert_eq!(buf, data);
        }
        Err(err) => drop(err.to_string()),
    }
    match H3Datagram::parse(data) {
        Ok(d) => {
            let sized = match d.chunk {
                ObjectChunk::Data { object_id, offset_bytes, data } => {
                    h3_data_chunk_overhead(d.quarter_stream_id, object_id, offset_bytes, data.len()) + data.len()
                }
                ObjectChunk::Metadata { object_id, size_bytes, content_type } => {
                    h3_metadata_chunk_len(d.quarter_stream_id, object_id, size_bytes, content_type.len())
                }
            };
            assert_eq!(d.encoded_len(), sized);
            assert!(sized <= data.len(), "minimal varints never take more room than the input's");
            let mut buf = vec![0u8; sized];
            assert_eq!(d.emit(&mut buf), Ok(sized));
            assert_eq!(H3Datagram::parse(&buf), Ok(d));
        }
        Err(err) => drop(err.to_string()),
    }
});
