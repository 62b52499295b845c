//! Send schedulers: what goes into the next packet.
//!
//! The connection asks its scheduler for new data whenever the congestion window, the
//! peer's receive window and pacing allow one more segment. The scheduler answers with up
//! to `max_bytes` of message chunks; the connection gives them the next stream sequence
//! numbers. A scheduler therefore decides the order in which message bytes enter the
//! byte stream, one segment at a time: FIFO keeps write order; priority schedulers
//! (CATS's Conductor, RFC 9218) reorder.

pub mod cats;
pub mod fifo;
pub mod prio;
pub mod stream;

pub use cats::{CatsConfig, Conductor};
pub use fifo::Fifo;

use smallvec::SmallVec;

/// A message the application handed to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageMeta {
    /// Identifier chosen by the application, unique per connection direction.
    pub id: u32,
    /// Length in bytes.
    pub len_bytes: u64,
    /// Priority, 0 most urgent.
    pub priority: u8,
}

/// A contiguous piece of one message inside a segment's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgChunk {
    /// Message identifier.
    pub msg_id: u32,
    /// Offset of this piece inside the message.
    pub msg_offset_bytes: u64,
    /// Bytes of the message in this piece.
    pub len_bytes: u32,
    /// Total length of the message, so the receiver knows when it is complete.
    pub msg_len_bytes: u64,
    /// The message's priority.
    pub priority: u8,
}

/// The chunks that make up one segment's payload, in stream order.
pub type Chunks = SmallVec<[MsgChunk; 2]>;

/// Why queued data left a scheduler without being sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscardReason {
    /// The application asked for less data (CATS §II-D-3, Save-Data).
    SaveData,
    /// Source load shedding under severe, persistent congestion (CATS §II-D-3).
    LoadShed,
}

/// A message (or its unsent remainder) that left the scheduler unsent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Discarded {
    /// Message identifier.
    pub msg_id: u32,
    /// Bytes of it that will never be sent.
    pub bytes: u64,
    /// True when part of it had already been sent (the receiver will never complete it).
    pub partially_sent: bool,
    /// Why.
    pub reason: DiscardReason,
}

/// A send scheduler (see the module documentation).
pub trait SendScheduler: std::fmt::Debug + Send {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// The application wrote a message.
    fn enqueue(&mut self, now_ns: u64, msg: MessageMeta);
    /// Fill one segment of at most `max_bytes` payload; returns the chunks (empty when
    /// nothing is queued).
    fn next_segment(&mut self, now_ns: u64, max_bytes: u32) -> Chunks;
    /// Bytes queued and not yet handed out.
    fn queued_bytes(&self) -> u64;
    /// Drop every queued message less important than `threshold` (priority number above
    /// it). A scheduler that keeps one undivided byte stream (FIFO) cannot, and drops nothing.
    fn discard_below(&mut self, _threshold: u8) -> Vec<Discarded> {
        Vec::new()
    }
    /// Drop the oldest message of the least important non-empty queue whose priority
    /// number is at least `min_priority`; `None` when there is none.
    fn shed_one(&mut self, _min_priority: u8) -> Option<Discarded> {
        None
    }
}
