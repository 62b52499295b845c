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

/// Which stream scheduler a QUIC-mode connection uses.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum StreamSchedulerKind {
    /// Streams drained in the order they became ready.
    #[default]
    Fifo,
    /// Round robin (placeholder until the real schedulers land).
    Rr,
    /// Strict priority (placeholder).
    Prio,
    /// RFC 9218 (placeholder).
    Rfc9218,
    /// CATS (placeholder).
    Cats(crate::sched::CatsConfig),
}

/// Builds the scheduler `kind` names.
pub fn build(kind: &StreamSchedulerKind) -> Box<dyn StreamScheduler> {
    match kind {
        _ => Box::new(MiniFifo::default()),
    }
}

/// A minimal FIFO over messages (head first, lost data first within its message).
#[derive(Debug, Default)]
struct MiniFifo {
    queue: std::collections::VecDeque<(StreamMessage, u64)>,
    lost: std::collections::VecDeque<MsgChunk>,
    queued: u64,
}

impl StreamScheduler for MiniFifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        self.queued += msg.msg.len_bytes;
        self.queue.push_back((msg, 0));
    }
    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        self.queued += chunk.len_bytes as u64;
        self.lost.push_back(chunk);
    }
    fn next_chunk(&mut self, _now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        if let Some(c) = self.lost.front_mut() {
            let take = c.len_bytes.min(max_bytes);
            let out = MsgChunk { len_bytes: take, ..*c };
            c.len_bytes -= take;
            c.msg_offset_bytes += take as u64;
            if c.len_bytes == 0 {
                self.lost.pop_front();
            }
            self.queued -= take as u64;
            return Some(out);
        }
        let (m, sent) = self.queue.front_mut()?;
        let take = (m.msg.len_bytes - *sent).min(max_bytes as u64);
        let out = MsgChunk {
            msg_id: m.msg.id,
            msg_offset_bytes: *sent,
            len_bytes: take as u32,
            msg_len_bytes: m.msg.len_bytes,
            priority: m.msg.priority,
        };
        *sent += take;
        if *sent == m.msg.len_bytes {
            self.queue.pop_front();
        }
        self.queued -= take;
        Some(out)
    }
    fn queued_bytes(&self) -> u64 {
        self.queued
    }
}
