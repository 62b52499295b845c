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
//!
//! The schedulers, one per file, and what they follow:
//! - [`fifo::StreamFifo`]: streams in the order they became ready, each drained before the
//!   next (quinn with `send_fairness(false)`).
//! - [`round_robin::RoundRobin`]: one packet's worth per ready stream in turn (quinn's default).
//! - [`strict::StrictPriority`]: CATS priority 0 first, FIFO within a priority (quinn's
//!   `set_priority`).
//! - [`rfc9218::Rfc9218`]: RFC 9218 §4 urgency and incremental, served as §10 recommends.
//! - [`cats::StreamCats`]: the CATS Conductor (CATS §II-C to §II-E) over streams.
//! - [`wrr::WeightedRoundRobin`]: weighted round robin by HTTP/2 weight (SA-ECF's).
//!
//! Lost data (RFC 9000 §13.3: "Endpoints SHOULD prioritize retransmission of data over
//! sending new data, unless priorities specified by the application indicate otherwise")
//! rejoins its own stream ahead of that stream's new data, lowest offset first, as quinn's
//! send buffer does; where the stream then stands among the others is each scheduler's
//! rule (RFC 9218 §12 leaves it open). A byte is queued at most once: requeuing bytes that
//! already wait to be sent again, or bytes never handed out, adds nothing.

pub mod cats;
pub mod fifo;
pub mod rfc9218;
pub mod round_robin;
pub mod strict;
pub mod wrr;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::{CatsConfig, MessageMeta, MsgChunk};
use crate::intmap::IdMap;
use crate::path::sched::{PathId, PathView};

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

    // Multipath (see `crate::path::sched`). Path-blind schedulers keep the defaults: any
    // path may carry any of their data.

    /// True when the scheduler wants [`StreamScheduler::on_paths`] before each send decision
    /// (it splits data over paths itself).
    fn uses_paths(&self) -> bool {
        false
    }
    /// The paths as they are now, before the connection asks for data (PriorityBucket
    /// allocates the streams that arrived since the last call, §3.1).
    fn on_paths(&mut self, _now_ns: u64, _paths: &[PathView]) {}
    /// As [`StreamScheduler::next_chunk`], for a packet that goes on `path`.
    fn next_chunk_on(&mut self, now_ns: u64, _path: PathId, max_bytes: u32) -> Option<MsgChunk> {
        self.next_chunk(now_ns, max_bytes)
    }
    /// The tail of a chunk just handed out for a packet on `path` did not fit (its STREAM
    /// header came out longer than the smallest): it is the stream's next data again, as if
    /// never handed out. Every scheduler here overrides it: new bytes stay new (one STREAM
    /// frame then carries them and what follows, as in a real stack; as lost data they
    /// would open the stream's next packet with a frame of their own), and a stream the take
    /// left dry goes back where it was (FIFO, strict priority, weighted round robin; as lost
    /// data its last bytes waited behind every other ready stream) or, under round robin and
    /// RFC 9218's incremental rotation, to the back, where the stream that filled the packet
    /// goes anyway. The default, for a scheduler that keeps no such state, queues the tail as
    /// lost data.
    fn give_back(&mut self, now_ns: u64, _path: PathId, chunk: MsgChunk) {
        self.requeue_lost(now_ns, chunk);
    }
    /// True when `path` may carry some of the queued data.
    fn has_data_on(&self, _path: PathId) -> bool {
        self.queued_bytes() > 0
    }
    /// `path` failed or was abandoned; `live` are the paths left.
    fn remove_path(&mut self, _now_ns: u64, _path: PathId, _live: &[PathView]) {}
    /// The streams the scheduler would serve next, in its order, at most `max` (for path
    /// schedulers that decide per stream: SA-ECF); empty when the scheduler does not say.
    fn candidates(&self, _max: usize) -> SmallVec<[StreamCandidate; 4]> {
        SmallVec::new()
    }
    /// The next piece of stream data from message `msg_id` (one of
    /// [`StreamScheduler::candidates`]), which the scheduler then counts as served.
    fn next_chunk_from(&mut self, now_ns: u64, _msg_id: u32, max_bytes: u32) -> Option<MsgChunk> {
        self.next_chunk(now_ns, max_bytes)
    }
}

/// A stream a scheduler would serve, as a per-stream path scheduler sees it
/// ([`crate::path::sched::StreamView`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamCandidate {
    /// The scheduler's message id.
    pub msg_id: u32,
    /// Bytes it has queued.
    pub unsent_bytes: u64,
    /// Its weight (HTTP/2, 1..=256).
    pub weight: u32,
    /// Sum of the weights of the streams with data.
    pub total_weight: u32,
    /// Packets it may still send in the current round.
    pub quantum_packets: u32,
    /// Streams with data.
    pub open_streams: u32,
}

/// Which stream scheduler a QUIC-mode connection uses (see the module documentation).
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum StreamSchedulerKind {
    /// [`fifo::StreamFifo`]: streams drained one after another in the order they became ready.
    Fifo,
    /// [`round_robin::RoundRobin`]: one packet's worth per ready stream in turn (quinn's default).
    #[default]
    Rr,
    /// [`strict::StrictPriority`]: strict priority by CATS priority, FIFO within a priority.
    Prio,
    /// [`rfc9218::Rfc9218`]: RFC 9218 urgency and incremental.
    Rfc9218,
    /// [`cats::StreamCats`]: the CATS Conductor with its fairness parameters.
    Cats(CatsConfig),
    /// [`wrr::WeightedRoundRobin`]: HTTP/2 weights as Chrome assigns them, weighted round
    /// robin (SA-ECF's stream scheduler).
    Wrr,
}

impl StreamSchedulerKind {
    /// The name the scheduler reports ([`StreamScheduler::name`]).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Rr => "rr",
            Self::Prio => "prio",
            Self::Rfc9218 => "rfc9218",
            Self::Cats(_) => "cats",
            Self::Wrr => "wrr",
        }
    }
}

/// A stream scheduler of the given kind, empty.
pub fn build(kind: &StreamSchedulerKind) -> Box<dyn StreamScheduler> {
    match kind {
        StreamSchedulerKind::Fifo => Box::new(fifo::StreamFifo::new()),
        StreamSchedulerKind::Rr => Box::new(round_robin::RoundRobin::new()),
        StreamSchedulerKind::Prio => Box::new(strict::StrictPriority::new()),
        StreamSchedulerKind::Rfc9218 => Box::new(rfc9218::Rfc9218::new()),
        StreamSchedulerKind::Cats(cfg) => Box::new(cats::StreamCats::new(cfg.clone())),
        StreamSchedulerKind::Wrr => Box::new(wrr::WeightedRoundRobin::new()),
    }
}

/// The streams with data in the order a scheduler serves them, over their [`StreamTable`]:
/// what fifo, rr and wrr share (they differ only in when the head moves to the back).
#[derive(Debug, Default)]
struct ReadyQueue {
    table: StreamTable,
    /// Ids of the messages with bytes queued; the head is served.
    ready: std::collections::VecDeque<u32>,
}

impl ReadyQueue {
    /// A new message joins the back.
    fn enqueue(&mut self, msg: StreamMessage) {
        if self.table.insert(msg) {
            self.ready.push_back(msg.msg.id);
        }
    }

    /// Lost data joins its message; a message that had left the queue goes to the back.
    fn requeue_lost(&mut self, chunk: MsgChunk) {
        if self.table.requeue(chunk) == Requeued::BecameReady {
            self.ready.push_back(chunk.msg_id);
        }
    }

    /// The tail of the chunk just taken from the head ([`StreamScheduler::give_back`]): it
    /// is the stream's next data again, as if never handed out, so a stream the take left
    /// dry returns to the front, where it was, not to the back as lost data does. True when
    /// it did (the take had left it dry).
    fn give_back(&mut self, chunk: MsgChunk) -> bool {
        let back = self.table.give_back(chunk) == Requeued::BecameReady;
        if back {
            self.ready.push_front(chunk.msg_id);
        }
        back
    }

    /// At most `max_bytes` of the head message, and the head's id; a head that ran dry
    /// leaves the queue (`true`).
    fn take_head(&mut self, max_bytes: u32) -> Option<(u32, Option<MsgChunk>, bool)> {
        if max_bytes == 0 {
            return None;
        }
        let &id = self.ready.front()?;
        let chunk = self.table.take(id, max_bytes);
        let dry = !self.table.is_ready(id);
        if dry {
            self.ready.pop_front();
        }
        Some((id, chunk, dry))
    }
}

/// Disjoint, non-adjacent byte ranges `[start, end)` in ascending order: the lost bytes of one
/// stream waiting to be sent again (quinn keeps the same in a range set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RangeSet {
    ranges: SmallVec<[(u64, u64); 2]>,
}

impl RangeSet {
    /// Bytes in the set.
    fn total_bytes(&self) -> u64 {
        self.ranges.iter().map(|&(s, e)| e - s).sum()
    }

    fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Adds `[start, end)` and returns the pieces that were not in the set yet, ascending.
    fn insert(&mut self, start: u64, end: u64) -> SmallVec<[(u64, u64); 2]> {
        let mut added = SmallVec::new();
        if start >= end {
            return added;
        }
        // The gaps of the set inside [start, end) are what is new.
        let mut at = start;
        for &(s, e) in &self.ranges {
            if e <= at {
                continue;
            }
            if s >= end {
                break;
            }
            if s > at {
                added.push((at, s));
            }
            at = at.max(e);
            if at >= end {
                break;
            }
        }
        if at < end {
            added.push((at, end));
        }
        // Merge in place (no new list: a stream with several holes keeps its capacity):
        // ranges strictly apart from [start, end) stay, the ones touching it fold into it.
        let i = self.ranges.partition_point(|&(_, e)| e < start);
        let j = i + self.ranges[i..].partition_point(|&(s, _)| s <= end);
        if i == j {
            self.ranges.insert(i, (start, end));
        } else {
            let lo = start.min(self.ranges[i].0);
            let hi = end.max(self.ranges[j - 1].1);
            self.ranges[i] = (lo, hi);
            self.ranges.drain(i + 1..j);
        }
        added
    }

    /// Removes `[start, end)` from the set, in place.
    fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        // The ranges overlapping [start, end): i..j.
        let i = self.ranges.partition_point(|&(_, e)| e <= start);
        let j = i + self.ranges[i..].partition_point(|&(s, _)| s < end);
        if i == j {
            return;
        }
        let head = (self.ranges[i].0 < start).then(|| (self.ranges[i].0, start));
        let tail = (self.ranges[j - 1].1 > end).then(|| (end, self.ranges[j - 1].1));
        match (head, tail) {
            (Some(h), Some(t)) if i + 1 == j => {
                // Inside one range: it splits in two.
                self.ranges[i] = h;
                self.ranges.insert(i + 1, t);
            }
            _ => {
                let keep: SmallVec<[(u64, u64); 2]> = head.into_iter().chain(tail).collect();
                let n = keep.len();
                for (k, r) in keep.into_iter().enumerate() {
                    self.ranges[i + k] = r;
                }
                self.ranges.drain(i + n..j);
            }
        }
    }

    /// Takes at most `max_bytes` from the front of the lowest range.
    fn pop_front(&mut self, max_bytes: u64) -> Option<(u64, u64)> {
        let &(s, e) = self.ranges.first()?;
        let end = e.min(s.saturating_add(max_bytes));
        if end == e {
            self.ranges.remove(0);
        } else {
            self.ranges[0].0 = end;
        }
        Some((s, end))
    }
}

/// Send state of one message's stream: new bytes not yet handed out and lost bytes waiting
/// to be handed out again (RFC 9000 §13.3: retransmissions go first, lowest offset first).
#[derive(Clone, Debug)]
struct StreamState {
    msg: StreamMessage,
    /// Offset of the first byte never handed out.
    next_new_bytes: u64,
    /// Lost bytes, all below `next_new_bytes`.
    lost: RangeSet,
}

impl StreamState {
    fn is_ready(&self) -> bool {
        self.next_new_bytes < self.msg.msg.len_bytes || !self.lost.is_empty()
    }
}

/// What [`StreamTable::requeue`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Requeued {
    /// Nothing new to send (empty range, or bytes already queued or never handed out).
    Nothing,
    /// Bytes were queued on a stream that already had data queued: it keeps its place.
    StillReady,
    /// Bytes were queued on a stream that had nothing queued: it becomes ready again.
    BecameReady,
}

/// Every message a scheduler was given, by message id, with exact byte accounting. Entries
/// stay after their last byte is handed out, so that a later loss can be sent again. A
/// connection gives its scheduler one message per piece of stream credit, so a long transfer
/// leaves thousands of them here, with ids in the order it hands them out: kept by index
/// ([`IdMap`]), a lookup costs the same at any size, where an ordered map's grew with its
/// depth (three lookups per chunk handed out were 8% of a QUIC-mode bulk run's instructions).
#[derive(Clone, Debug, Default)]
struct StreamTable {
    streams: IdMap<StreamState>,
    queued_bytes: u64,
}

impl StreamTable {
    /// Registers a message; true when it has bytes to send. A message id seen before is
    /// ignored (ids are unique per connection direction, [`MessageMeta::id`]), and so is an
    /// empty message (a chunk is never empty).
    fn insert(&mut self, msg: StreamMessage) -> bool {
        if msg.msg.len_bytes == 0 || self.streams.contains_key(msg.msg.id) {
            return false;
        }
        self.queued_bytes += msg.msg.len_bytes;
        self.streams.insert_new(msg.msg.id, StreamState { msg, next_new_bytes: 0, lost: RangeSet::default() });
        true
    }

    /// Queues the lost bytes of `chunk` again, clipped to what was handed out. A chunk of a
    /// message never enqueued is taken as a message of its own whose bytes were all handed
    /// out, with RFC 9218's default priority (urgency 3, not incremental, §4) and the
    /// largest stream id, so that no data the connection wants sent is dropped.
    fn requeue(&mut self, chunk: MsgChunk) -> Requeued {
        let st = self.streams.get_or_insert_with(chunk.msg_id, || StreamState {
            msg: StreamMessage {
                msg: MessageMeta { id: chunk.msg_id, len_bytes: chunk.msg_len_bytes, priority: chunk.priority() },
                stream_id: u64::MAX,
                urgency: 3,
                incremental: false,
            },
            next_new_bytes: chunk.msg_len_bytes,
            lost: RangeSet::default(),
        });
        let was_ready = st.is_ready();
        let start = chunk.msg_offset_bytes.min(st.next_new_bytes);
        let end = chunk.msg_offset_bytes.saturating_add(chunk.len_bytes() as u64).min(st.next_new_bytes);
        let added: u64 = st.lost.insert(start, end).iter().map(|&(s, e)| e - s).sum();
        self.queued_bytes += added;
        match (added > 0, was_ready) {
            (false, _) => Requeued::Nothing,
            (true, true) => Requeued::StillReady,
            (true, false) => Requeued::BecameReady,
        }
    }

    /// The tail of the chunk just handed out ([`StreamScheduler::give_back`]) becomes the
    /// stream's next data again, as if never handed out. A tail of new bytes moves the
    /// stream's new-data mark back (it stays new data, sent in one STREAM frame with what
    /// follows it); a tail of lost bytes is lost data again, which goes first as it did. Had
    /// a new-data tail been queued as lost data, the stream's next packet would open with a
    /// STREAM frame of those few bytes and continue with a second frame for the new data:
    /// two headers where a real stack (quinn's send buffer) writes one.
    fn give_back(&mut self, chunk: MsgChunk) -> Requeued {
        let end = chunk.msg_offset_bytes.saturating_add(chunk.len_bytes() as u64);
        if let Some(st) = self.streams.get_mut(chunk.msg_id) {
            if st.lost.is_empty() && end == st.next_new_bytes && chunk.msg_offset_bytes < end {
                let was_ready = st.is_ready();
                st.next_new_bytes = chunk.msg_offset_bytes;
                self.queued_bytes += end - chunk.msg_offset_bytes;
                return if was_ready { Requeued::StillReady } else { Requeued::BecameReady };
            }
        }
        self.requeue(chunk)
    }

    /// Hands out at most `max_bytes` of message `id`: lost bytes first, then new ones.
    fn take(&mut self, id: u32, max_bytes: u32) -> Option<MsgChunk> {
        let st = self.streams.get_mut(id)?;
        let (start, end) = match st.lost.pop_front(max_bytes as u64) {
            Some(r) => r,
            None => {
                let start = st.next_new_bytes;
                let end = st.msg.msg.len_bytes.min(start.saturating_add(max_bytes as u64));
                st.next_new_bytes = end;
                (start, end)
            }
        };
        if start >= end {
            return None;
        }
        self.queued_bytes -= end - start;
        Some(MsgChunk::new(id, start, (end - start) as u32, st.msg.msg.len_bytes, st.msg.msg.priority))
    }

    fn is_ready(&self, id: u32) -> bool {
        self.streams.get(id).is_some_and(StreamState::is_ready)
    }

    fn get(&self, id: u32) -> Option<&StreamMessage> {
        self.streams.get(id).map(|s| &s.msg)
    }

    /// Bytes of message `id` waiting to be handed out (new and lost).
    fn queued_of(&self, id: u32) -> u64 {
        self.streams.get(id).map_or(0, |s| s.msg.msg.len_bytes - s.next_new_bytes + s.lost.total_bytes())
    }
}

/// Test drivers shared by the schedulers' tests: script helpers and a random-operation
/// harness that checks the contract of [`StreamScheduler`] against a byte-exact model.
#[cfg(test)]
mod testing {
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::{MessageMeta, MsgChunk, PathId, StreamMessage, StreamScheduler};

    /// A message `id` of `len` bytes with CATS priority `priority` on stream `stream_id`, at
    /// RFC 9218's default priority (urgency 3, not incremental).
    pub(super) fn msg(id: u32, len: u64, priority: u8, stream_id: u64) -> StreamMessage {
        StreamMessage { msg: MessageMeta { id, len_bytes: len, priority }, stream_id, urgency: 3, incremental: false }
    }

    /// `(msg_id, offset, len)` of a chunk, as the scripts compare them.
    pub(super) fn key(c: MsgChunk) -> (u32, u64, u32) {
        (c.msg_id, c.msg_offset_bytes, c.len_bytes())
    }

    /// Takes one chunk of at most `max_bytes` per packet until nothing is queued.
    pub(super) fn drain(s: &mut dyn StreamScheduler, max_bytes: u32) -> Vec<(u32, u64, u32)> {
        let mut out = Vec::new();
        while let Some(c) = s.next_chunk(0, max_bytes) {
            out.push(key(c));
            s.on_packet_end();
        }
        out
    }

    /// Fills packets of `packet_bytes`, asking for chunks while the packet has room, until
    /// nothing is queued; one inner vector per packet.
    pub(super) fn drain_packets(s: &mut dyn StreamScheduler, packet_bytes: u32) -> Vec<Vec<(u32, u64, u32)>> {
        let mut out = Vec::new();
        loop {
            let mut packet = Vec::new();
            let mut room = packet_bytes;
            while room > 0 {
                let Some(c) = s.next_chunk(0, room) else { break };
                room -= c.len_bytes();
                packet.push(key(c));
            }
            if packet.is_empty() {
                return out;
            }
            s.on_packet_end();
            out.push(packet);
        }
    }

    /// One step of the random-operation harness.
    #[derive(Clone, Debug)]
    pub(super) enum Op {
        /// The application writes a message (id = number of writes so far, stream id 4·id).
        Write { len: u64, priority: u8, urgency: u8, incremental: bool },
        /// The connection asks for one chunk.
        Take { max_bytes: u32 },
        /// The packet being filled is closed.
        PacketEnd,
        /// The connection asks for one chunk and gives its last `trim` bytes back
        /// ([`StreamScheduler::give_back`]: its STREAM header came out longer than the
        /// smallest), when the chunk is longer than that.
        TakeTrim { max_bytes: u32, trim: u32 },
        /// A chunk in flight (picked modulo their number) is declared lost.
        Lose { pick: usize },
        /// A chunk in flight is acknowledged (it will never be requeued).
        Ack { pick: usize },
    }

    /// Random operation sequences: writes of up to 6000 bytes, chunks of up to 2000.
    pub(super) fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            2 => (1u64..6000, 0u8..6, 0u8..9, any::<bool>())
                .prop_map(|(len, priority, urgency, incremental)| Op::Write { len, priority, urgency, incremental }),
            6 => (1u32..2000).prop_map(|max_bytes| Op::Take { max_bytes }),
            2 => (1u32..2000, 1u32..8).prop_map(|(max_bytes, trim)| Op::TakeTrim { max_bytes, trim }),
            2 => Just(Op::PacketEnd),
            2 => any::<usize>().prop_map(|pick| Op::Lose { pick }),
            1 => any::<usize>().prop_map(|pick| Op::Ack { pick }),
        ];
        proptest::collection::vec(op, 1..160)
    }

    /// What a run of the harness saw.
    #[derive(Debug, Default)]
    pub(super) struct Log {
        /// Every message written, by id.
        pub msgs: Vec<StreamMessage>,
        /// Every chunk handed out, in order, with the ids of the messages that had bytes
        /// queued just before it was taken (from the model).
        pub chunks: Vec<(MsgChunk, Vec<u32>)>,
        /// Chunks declared lost.
        pub requeues: usize,
        /// Most packets (that carried data) any message with bytes queued waited between
        /// two of its chunks, or since it became ready.
        pub max_wait_packets: u64,
        /// Most messages that had bytes queued during one packet (served in it, or still
        /// queued at its end).
        pub max_ready: u64,
    }

    /// Applies `ops`, then drains the scheduler in packets of 1200 bytes, and checks after
    /// every step: chunks are non-empty, within `max_bytes` and within their message, and
    /// carry its length and priority; `queued_bytes` equals the model's count (bytes written,
    /// minus handed out, plus requeued); at the end every byte of every message was handed
    /// out exactly once plus once per loss that covered it, and nothing is left.
    pub(super) fn run_ops(s: &mut dyn StreamScheduler, ops: &[Op]) -> Result<Log, TestCaseError> {
        let mut log = Log::default();
        // Per message: times each byte must be handed out, times it was.
        let mut want: Vec<Vec<u32>> = Vec::new();
        let mut got: Vec<Vec<u32>> = Vec::new();
        // Per message: bytes the model says are queued.
        let mut queued: Vec<u64> = Vec::new();
        let mut in_flight: Vec<MsgChunk> = Vec::new();
        let mut served_in_packet: Vec<u32> = Vec::new();
        let mut wait: Vec<u64> = Vec::new();

        fn take(
            s: &mut dyn StreamScheduler,
            max_bytes: u32,
            log: &mut Log,
            queued: &mut [u64],
            got: &mut [Vec<u32>],
            in_flight: &mut Vec<MsgChunk>,
            served: &mut Vec<u32>,
        ) -> Result<Option<MsgChunk>, TestCaseError> {
            let ready: Vec<u32> = (0..queued.len() as u32).filter(|&i| queued[i as usize] > 0).collect();
            let Some(c) = s.next_chunk(0, max_bytes) else {
                prop_assert!(ready.is_empty(), "nothing handed out while {:?} have bytes queued", ready);
                return Ok(None);
            };
            prop_assert!(c.len_bytes() > 0 && c.len_bytes() <= max_bytes, "chunk {:?} for max {}", c, max_bytes);
            let m = log.msgs.get(c.msg_id as usize).copied();
            prop_assert!(m.is_some(), "unknown message in {:?}", c);
            let m = m.unwrap().msg;
            prop_assert_eq!((c.msg_len_bytes, c.priority()), (m.len_bytes, m.priority));
            let end = c.msg_offset_bytes + c.len_bytes() as u64;
            prop_assert!(end <= m.len_bytes, "chunk {:?} past the message end", c);
            for b in c.msg_offset_bytes..end {
                got[c.msg_id as usize][b as usize] += 1;
            }
            queued[c.msg_id as usize] -= c.len_bytes() as u64;
            in_flight.push(c);
            served.push(c.msg_id);
            log.chunks.push((c, ready));
            Ok(Some(c))
        }

        fn packet_end(
            s: &mut dyn StreamScheduler,
            log: &mut Log,
            queued: &[u64],
            wait: &mut [u64],
            served: &mut Vec<u32>,
        ) {
            s.on_packet_end();
            if served.is_empty() {
                return;
            }
            let mut ready = 0;
            for (i, w) in wait.iter_mut().enumerate() {
                let was_served = served.contains(&(i as u32));
                if was_served || queued[i] == 0 {
                    *w = 0;
                } else {
                    *w += 1;
                    log.max_wait_packets = log.max_wait_packets.max(*w);
                }
                ready += (queued[i] > 0 || was_served) as u64;
            }
            log.max_ready = log.max_ready.max(ready);
            served.clear();
        }

        for op in ops {
            match *op {
                Op::Write { len, priority, urgency, incremental } => {
                    let id = log.msgs.len() as u32;
                    let m = StreamMessage {
                        msg: MessageMeta { id, len_bytes: len, priority },
                        stream_id: 4 * id as u64,
                        urgency,
                        incremental,
                    };
                    log.msgs.push(m);
                    want.push(vec![1; len as usize]);
                    got.push(vec![0; len as usize]);
                    queued.push(len);
                    wait.push(0);
                    s.enqueue(0, m);
                }
                Op::Take { max_bytes } => {
                    take(s, max_bytes, &mut log, &mut queued, &mut got, &mut in_flight, &mut served_in_packet)?;
                }
                Op::TakeTrim { max_bytes, trim } => {
                    let c = take(s, max_bytes, &mut log, &mut queued, &mut got, &mut in_flight, &mut served_in_packet)?;
                    if let Some(c) = c.filter(|c| c.len_bytes() > trim) {
                        let keep = c.len_bytes() - trim;
                        let tail = c.at(c.msg_offset_bytes + u64::from(keep), trim);
                        // The tail was never sent: handed out once less, queued again.
                        for b in tail.msg_offset_bytes..tail.msg_offset_bytes + u64::from(trim) {
                            got[c.msg_id as usize][b as usize] -= 1;
                        }
                        queued[c.msg_id as usize] += u64::from(trim);
                        *in_flight.last_mut().expect("just taken") = c.with_len(keep);
                        s.give_back(0, PathId(0), tail);
                    }
                }
                Op::PacketEnd => packet_end(s, &mut log, &queued, &mut wait, &mut served_in_packet),
                Op::Lose { pick } if !in_flight.is_empty() => {
                    let c = in_flight.swap_remove(pick % in_flight.len());
                    for b in c.msg_offset_bytes..c.msg_offset_bytes + c.len_bytes() as u64 {
                        want[c.msg_id as usize][b as usize] += 1;
                    }
                    queued[c.msg_id as usize] += c.len_bytes() as u64;
                    log.requeues += 1;
                    s.requeue_lost(0, c);
                }
                Op::Ack { pick } if !in_flight.is_empty() => {
                    in_flight.swap_remove(pick % in_flight.len());
                }
                Op::Lose { .. } | Op::Ack { .. } => {}
            }
            prop_assert_eq!(s.queued_bytes(), queued.iter().sum::<u64>());
        }
        // Drain in packets of 1200 bytes.
        loop {
            let mut room = 1200u32;
            while room > 0 {
                match take(s, room, &mut log, &mut queued, &mut got, &mut in_flight, &mut served_in_packet)? {
                    Some(c) => room -= c.len_bytes(),
                    None => break,
                }
            }
            if served_in_packet.is_empty() {
                break;
            }
            packet_end(s, &mut log, &queued, &mut wait, &mut served_in_packet);
            prop_assert_eq!(s.queued_bytes(), queued.iter().sum::<u64>());
        }
        prop_assert_eq!(s.queued_bytes(), 0);
        prop_assert_eq!(got, want, "bytes handed out a wrong number of times");
        Ok(log)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{ops, run_ops};
    use super::*;
    use proptest::prelude::*;

    /// A tail of new bytes given back stays new data: the next take hands it out with the
    /// bytes after it in one chunk (one STREAM frame), under every scheduler kept over a
    /// [`StreamTable`]. A tail of lost bytes is lost data again and goes first.
    #[test]
    fn a_new_data_tail_given_back_goes_out_with_what_follows_it_in_one_chunk() {
        use super::testing::{key, msg};
        for kind in [
            StreamSchedulerKind::Fifo,
            StreamSchedulerKind::Rr,
            StreamSchedulerKind::Prio,
            StreamSchedulerKind::Rfc9218,
            StreamSchedulerKind::Wrr,
            StreamSchedulerKind::Cats(CatsConfig::default()),
        ] {
            let mut s = build(&kind);
            s.enqueue(0, msg(1, 3000, 0, 0));
            let c = s.next_chunk(0, 1000).unwrap();
            assert_eq!(key(c), (1, 0, 1000), "{}", kind.name());
            s.give_back(0, PathId(0), c.at(996, 4));
            s.on_packet_end();
            assert_eq!(s.queued_bytes(), 2004, "{}", kind.name());
            assert_eq!(key(s.next_chunk(0, 1000).unwrap()), (1, 996, 1000), "{}", kind.name());
            // The rest, then a loss of [500, 1500) sent again: its trimmed tail is lost data.
            assert_eq!(key(s.next_chunk(0, 2000).unwrap()), (1, 1996, 1004), "{}", kind.name());
            s.on_packet_end();
            s.requeue_lost(0, c.at(500, 1000));
            let r = s.next_chunk(0, 1000).unwrap();
            assert_eq!(key(r), (1, 500, 1000), "{}", kind.name());
            s.give_back(0, PathId(0), r.at(1400, 100));
            assert_eq!(s.queued_bytes(), 100, "{}", kind.name());
            assert_eq!(key(s.next_chunk(0, 1000).unwrap()), (1, 1400, 100), "{}", kind.name());
            assert_eq!(s.next_chunk(0, 1000), None, "{}", kind.name());
        }
    }

    #[test]
    fn range_set_merges_and_reports_new_pieces() {
        let mut r = RangeSet::default();
        assert_eq!(r.insert(100, 200).as_slice(), &[(100, 200)]);
        assert_eq!(r.insert(300, 400).as_slice(), &[(300, 400)]);
        // [150, 350) overlaps both: only the gap [200, 300) is new, and the set becomes one range.
        assert_eq!(r.insert(150, 350).as_slice(), &[(200, 300)]);
        assert_eq!(r.ranges.as_slice(), &[(100, 400)]);
        assert_eq!(r.insert(120, 130).as_slice(), &[], "already queued");
        // Adjacent ranges merge: [400, 450) touches [100, 400).
        r.insert(400, 450);
        assert_eq!(r.ranges.as_slice(), &[(100, 450)]);
        r.remove(200, 250);
        assert_eq!(r.ranges.as_slice(), &[(100, 200), (250, 450)]);
        assert_eq!(r.total_bytes(), 100 + 200);
        assert_eq!(r.pop_front(60), Some((100, 160)));
        assert_eq!(r.pop_front(1000), Some((160, 200)));
        assert_eq!(r.pop_front(1000), Some((250, 450)));
        assert_eq!(r.pop_front(1000), None);
    }

    #[test]
    fn range_set_with_many_holes_merges_and_cuts_in_place() {
        let mut r = RangeSet::default();
        for k in 0..5 {
            r.insert(k * 100, k * 100 + 10);
        }
        assert_eq!(r.ranges.as_slice(), &[(0, 10), (100, 110), (200, 210), (300, 310), (400, 410)]);
        // Touching one end and overlapping two more: three fold into one.
        assert_eq!(r.insert(110, 305).as_slice(), &[(110, 200), (210, 300)]);
        assert_eq!(r.ranges.as_slice(), &[(0, 10), (100, 310), (400, 410)]);
        r.insert(50, 60);
        assert_eq!(r.ranges.as_slice(), &[(0, 10), (50, 60), (100, 310), (400, 410)]);
        // A cut across several ranges keeps the outer pieces.
        r.remove(5, 405);
        assert_eq!(r.ranges.as_slice(), &[(0, 5), (405, 410)]);
        r.remove(0, 5);
        assert_eq!(r.ranges.as_slice(), &[(405, 410)]);
        r.remove(300, 400);
        assert_eq!(r.ranges.as_slice(), &[(405, 410)], "nothing there");
        r.remove(406, 408);
        assert_eq!(r.ranges.as_slice(), &[(405, 406), (408, 410)]);
        r.remove(0, 1000);
        assert!(r.is_empty());
    }

    #[test]
    fn table_queues_a_lost_byte_at_most_once_and_only_if_it_was_handed_out() {
        let mut t = StreamTable::default();
        assert!(t.insert(testing::msg(7, 3000, 2, 0)));
        assert!(!t.insert(testing::msg(7, 500, 2, 0)), "a second message with the same id is ignored");
        assert!(!t.insert(testing::msg(8, 0, 2, 4)), "an empty message has nothing to send");
        let c = t.take(7, 1000).unwrap();
        assert_eq!((c.msg_offset_bytes, c.len_bytes()), (0, 1000));
        assert_eq!(t.queued_bytes, 2000);
        assert_eq!(t.requeue(c), Requeued::StillReady);
        assert_eq!(t.requeue(c), Requeued::Nothing, "already waiting");
        assert_eq!(t.queued_bytes, 3000);
        // Bytes 1000.. were never handed out: requeuing them adds nothing.
        let unsent = MsgChunk { msg_offset_bytes: 1000, ..c };
        assert_eq!(t.requeue(unsent), Requeued::Nothing);
        // A chunk of a message never enqueued is sent again on its own (all 4 bytes of it).
        let stray = MsgChunk::new(9, 2, 4, 10, 1);
        assert_eq!(t.requeue(stray), Requeued::BecameReady);
        assert_eq!(t.queued_bytes, 3004);
        assert_eq!(t.take(9, 100).map(testing::key), Some((9, 2, 4)));
        assert_eq!(t.get(9).map(|m| (m.urgency, m.incremental, m.stream_id)), Some((3, false, u64::MAX)));
    }

    #[test]
    fn build_makes_each_kind() {
        let kinds = [
            StreamSchedulerKind::Fifo,
            StreamSchedulerKind::Rr,
            StreamSchedulerKind::Prio,
            StreamSchedulerKind::Rfc9218,
            StreamSchedulerKind::Cats(CatsConfig::default()),
        ];
        for k in &kinds {
            let mut s = build(k);
            assert_eq!(s.name(), k.name());
            s.enqueue(0, testing::msg(1, 10, 0, 0));
            assert_eq!(s.next_chunk(0, 100).map(testing::key), Some((1, 0, 10)));
        }
    }

    proptest! {
        /// The range set against a byte map: same bytes, and `insert` reports exactly the new ones.
        #[test]
        fn range_set_matches_a_byte_map(ops in proptest::collection::vec((any::<bool>(), 0u64..200, 0u64..60), 1..60)) {
            let mut r = RangeSet::default();
            let mut bytes = [false; 260];
            for (ins, start, len) in ops {
                let end = start + len;
                if ins {
                    let added: Vec<u64> = r.insert(start, end).iter().flat_map(|&(s, e)| s..e).collect();
                    let want: Vec<u64> = (start..end).filter(|&b| !bytes[b as usize]).collect();
                    prop_assert_eq!(added, want);
                    (start..end).for_each(|b| bytes[b as usize] = true);
                } else {
                    r.remove(start, end);
                    (start..end).for_each(|b| bytes[b as usize] = false);
                }
                let have: Vec<u64> = r.ranges.iter().flat_map(|&(s, e)| s..e).collect();
                let want: Vec<u64> = (0..260).filter(|&b| bytes[b as usize]).collect();
                prop_assert_eq!(have, want);
                prop_assert!(r.ranges.windows(2).all(|w| w[0].1 < w[1].0), "ranges overlap or touch");
            }
        }

        /// Every scheduler built by `build` keeps the byte contract.
        #[test]
        fn every_kind_keeps_the_byte_contract(ops in ops(), k in 0usize..6) {
            let kind = [
                StreamSchedulerKind::Fifo,
                StreamSchedulerKind::Rr,
                StreamSchedulerKind::Prio,
                StreamSchedulerKind::Rfc9218,
                StreamSchedulerKind::Cats(CatsConfig::default()),
                StreamSchedulerKind::Wrr,
            ][k].clone();
            run_ops(build(&kind).as_mut(), &ops)?;
        }
    }
}
