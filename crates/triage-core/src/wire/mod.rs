//! What travels between endpoints: the IP fields routers look at and the TCP header.
//!
//! The simulator moves [`Packet`] values, never byte buffers: the header is kept as a
//! parsed representation and [`Packet::wire_bytes`] says how many bytes it would occupy
//! on the wire (RFC 791 / RFC 9293 headers plus options), which is what links serialize
//! and queues count.

pub mod packet;
pub mod quic;

pub use packet::{
    Addr, Ecn, Packet, SackBlock, TcpFlags, IP_HEADER_BYTES, TCP_BASE_HEADER_BYTES, TCP_TIMESTAMP_OPTION_BYTES,
};
