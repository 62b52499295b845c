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
///
/// 24 bytes: the piece's length and the message's priority share one word (a piece is part
/// of one packet's payload, at most 64 KiB, far below the 16 MiB the length has room
/// for). With two pieces kept inline ([`Chunks`]), a packet's box and a sent-segment
/// record each take a cache line less than with a 32-byte piece (every packet carries its
/// pieces, and with many flows each line of a packet is a cache miss of its own).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MsgChunk {
    /// Message identifier.
    pub msg_id: u32,
    /// Bytes of the message in this piece (low 24 bits) and the message's priority (high
    /// 8 bits).
    len_priority: u32,
    /// Offset of this piece inside the message.
    pub msg_offset_bytes: u64,
    /// Total length of the message, so the receiver knows when it is complete.
    pub msg_len_bytes: u64,
}

impl MsgChunk {
    /// The most bytes one piece holds (its length has 24 bits).
    pub const MAX_LEN_BYTES: u32 = (1 << 24) - 1;

    /// The piece of message `msg_id` (of `msg_len_bytes` bytes, priority `priority`) at
    /// `msg_offset_bytes`, `len_bytes` long (at most [`MAX_LEN_BYTES`](Self::MAX_LEN_BYTES):
    /// a piece is part of one packet).
    #[inline]
    pub fn new(msg_id: u32, msg_offset_bytes: u64, len_bytes: u32, msg_len_bytes: u64, priority: u8) -> Self {
        debug_assert!(len_bytes <= Self::MAX_LEN_BYTES, "a message piece of {len_bytes} bytes");
        Self {
            msg_id,
            len_priority: len_bytes.min(Self::MAX_LEN_BYTES) | (u32::from(priority) << 24),
            msg_offset_bytes,
            msg_len_bytes,
        }
    }

    /// Bytes of the message in this piece.
    #[inline]
    pub fn len_bytes(&self) -> u32 {
        self.len_priority & Self::MAX_LEN_BYTES
    }

    /// The message's priority.
    #[inline]
    pub fn priority(&self) -> u8 {
        (self.len_priority >> 24) as u8
    }

    /// The same piece, `len_bytes` long.
    #[inline]
    #[must_use]
    pub fn with_len(self, len_bytes: u32) -> Self {
        Self::new(self.msg_id, self.msg_offset_bytes, len_bytes, self.msg_len_bytes, self.priority())
    }

    /// The same message's piece at `msg_offset_bytes`, `len_bytes` long.
    #[inline]
    #[must_use]
    pub fn at(self, msg_offset_bytes: u64, len_bytes: u32) -> Self {
        Self::new(self.msg_id, msg_offset_bytes, len_bytes, self.msg_len_bytes, self.priority())
    }
}

impl std::fmt::Debug for MsgChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MsgChunk")
            .field("msg_id", &self.msg_id)
            .field("msg_offset_bytes", &self.msg_offset_bytes)
            .field("len_bytes", &self.len_bytes())
            .field("msg_len_bytes", &self.msg_len_bytes)
            .field("priority", &self.priority())
            .finish()
    }
}

/// The chunks that make up one segment's payload, in stream order (two inline: a segment
/// holds the end of one message and the start of the next at most, unless messages are
/// smaller than a segment). `smallvec`'s `union` layout keeps the inline pieces and the
/// spilled pointer in the same bytes (56 bytes in all).
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

#[cfg(test)]
mod tests {
    use super::MsgChunk;
    use proptest::prelude::*;

    proptest! {
        /// A piece's fields come back as they went in, and `with_len` and `at` change only
        /// what they name.
        #[test]
        fn message_piece_keeps_its_fields(
            id in any::<u32>(),
            offset in any::<u64>(),
            len in 0..=MsgChunk::MAX_LEN_BYTES,
            msg_len in any::<u64>(),
            priority in any::<u8>(),
            len2 in 0..=MsgChunk::MAX_LEN_BYTES,
            offset2 in any::<u64>(),
        ) {
            let c = MsgChunk::new(id, offset, len, msg_len, priority);
            prop_assert_eq!((c.msg_id, c.msg_offset_bytes, c.len_bytes(), c.msg_len_bytes, c.priority()), (id, offset, len, msg_len, priority));
            let d = c.with_len(len2);
            prop_assert_eq!((d.msg_id, d.msg_offset_bytes, d.len_bytes(), d.msg_len_bytes, d.priority()), (id, offset, len2, msg_len, priority));
            let e = c.at(offset2, len2);
            prop_assert_eq!((e.msg_id, e.msg_offset_bytes, e.len_bytes(), e.msg_len_bytes, e.priority()), (id, offset2, len2, msg_len, priority));
        }
    }

    /// 24 bytes a piece, so that a segment's two inline pieces (`Chunks`) take 56 bytes.
    #[test]
    fn a_piece_is_24_bytes_and_two_inline_take_56() {
        assert_eq!(std::mem::size_of::<MsgChunk>(), 24);
        assert_eq!(std::mem::size_of::<super::Chunks>(), 56);
    }

    /// The largest length a packet's piece can have (a 64 KiB payload) is far inside the
    /// 24 bits, and the priority's byte does not touch it.
    #[test]
    fn the_largest_packet_payload_fits_with_any_priority() {
        let c = MsgChunk::new(7, 0, 65_535, 1 << 40, 255);
        assert_eq!((c.len_bytes(), c.priority()), (65_535, 255));
        assert_eq!(format!("{c:?}"), "MsgChunk { msg_id: 7, msg_offset_bytes: 0, len_bytes: 65535, msg_len_bytes: 1099511627776, priority: 255 }");
    }
}
