//! Send schedulers over independent streams (QUIC mode).
//!
//! In TCP mode a scheduler decides the order in which message bytes enter one byte stream
//! ([`super::SendScheduler`]). In QUIC mode every message travels on a stream of its own
//! (RFC 9000 §2), so a loss on one stream never holds another back, and the scheduler
//! decides which stream fills the next STREAM frame. The connection asks for one chunk at a
//! time ([`StreamScheduler::next_chunk`]) while the packet it builds has room, tells the
//! scheduler when a packet is closed ([`StreamScheduler::on_packet_end`]), and hands lost
//! stream data back ([`StreamScheduler::requeue_lost`]): QUIC retransmits lost data as new
//! frames, scheduled by the stream's priority like any other data (RFC 9002 §2, §6).
//!
//! Chunks are message-relative ([`MsgChunk`]): the connection maps a message to its stream
//! and offset. A chunk handed out never exceeds the `max_bytes` asked for and is never
//! empty.

use super::{MessageMeta, MsgChunk};

/// A message written on a stream of its own, with the priority signals a scheduler may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamMessage {
    /// Identifier, length and CATS-style priority (0 most urgent, 0..=4).
    pub msg: MessageMeta,
    /// The QUIC stream it travels on (RFC 9000 §2.1).
    pub stream_id: u64,
    /// RFC 9218 §4.1 urgency, 0 (most urgent) to 7; 3 by default.
    pub urgency: u8,
    /// RFC 9218 §4.2 incremental flag.
    pub incremental: bool,
}

/// A send scheduler over streams (see the module documentation).
pub trait StreamScheduler: std::fmt::Debug + Send {
    /// Short name for reports (`"fifo"`, `"rr"`, `"prio"`, `"rfc9218"`, `"cats"`).
    fn name(&self) -> &'static str;
    /// The application wrote a message; its stream becomes ready.
    fn enqueue(&mut self, now_ns: u64, msg: StreamMessage);
    /// Bytes of a message already sent were declared lost: they are to be sent again, and
    /// the message's stream becomes ready if it was not.
    fn requeue_lost(&mut self, now_ns: u64, chunk: MsgChunk);
    /// The next piece of stream data, at most `max_bytes` (at least 1), from one message;
    /// `None` when nothing is queued.
    fn next_chunk(&mut self, now_ns: u64, max_bytes: u32) -> Option<MsgChunk>;
    /// The packet being filled is complete (schedulers that take turns per packet rotate here).
    fn on_packet_end(&mut self) {}
    /// Bytes queued and not yet handed out, retransmissions included.
    fn queued_bytes(&self) -> u64;
}
