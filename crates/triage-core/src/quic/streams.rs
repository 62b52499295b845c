//! Stream bookkeeping of a QUIC-mode connection (RFC 9000 §2-§4): which messages ride on
//! which stream, how stream credit gates what the send scheduler is given, and the in-order
//! delivery of several messages on one stream.
//!
//! # Sending
//! A message is written on a stream: a new stream of its own, the stream a peer's message
//! came on (a response), or behind an earlier message of ours on the same stream (several
//! messages in order on one stream). The send scheduler never sees messages: it sees
//! *entries*, contiguous pieces of one message that the stream's credit allows, and at most
//! one entry per stream with new bytes not yet handed out. As in quinn, where an application
//! write is accepted only up to the stream's credit, flow control acts before scheduling:
//! - **MAX_STREAMS** (RFC 9000 §4.6): a stream we open counts against the peer's limit for
//!   its direction. A stream over the limit takes its ID at once (IDs open in order, §2.1)
//!   and waits until MAX_STREAMS raises the limit.
//! - **MAX_STREAM_DATA** (§4.1): an entry never reaches past the stream's limit; when the
//!   limit rises, the stream's next entry is released.
//! - **Order on a stream**: the next piece of a stream (the rest of a message beyond a limit,
//!   or the next message) enters the scheduler when the previous entry's last new byte has
//!   been handed out. A stream's bytes therefore go out in order the first time, and a stream
//!   holds one place in the scheduler whatever it carries.
//!
//! With one message per stream and a window that never binds (the defaults), every message is
//! one entry written at once, exactly as if the scheduler saw the message itself.
//!
//! # Receiving
//! Bytes are placed by stream offset ([`RecvStreams`]); a message completes when its stream
//! holds every byte up to the message's end, so a message behind a gap on its own stream
//! waits for it (head-of-line blocking inside a stream, never across streams). The receiver
//! reads at once, raises MAX_STREAM_DATA when half of a stream's window is consumed (§4.2),
//! and returns stream credit (MAX_STREAMS) when a stream the peer opened is done.

use std::collections::{BTreeMap, VecDeque};

use crate::intmap::IntMap;

use smallvec::SmallVec;

use crate::sched::stream::{StreamMessage, StreamScheduler};
use crate::sched::{MessageMeta, MsgChunk};

/// RFC 9000 §2.1: the initiator of a stream is its ID's low bit (0 client, 1 server); the
/// direction is the second bit (0 bidirectional, 1 unidirectional).
pub fn stream_id(index: u64, client: bool, bidi: bool) -> u64 {
    4 * index + u64::from(!client) + if bidi { 0 } else { 2 }
}

/// True for a stream ID a client initiated.
pub fn client_initiated(id: u64) -> bool {
    id & 1 == 0
}

/// True for a bidirectional stream ID.
pub fn is_bidi(id: u64) -> bool {
    id & 2 == 0
}

fn dir(bidi: bool) -> usize {
    usize::from(!bidi)
}

/// A piece of one message handed to the scheduler.
#[derive(Clone, Copy, Debug)]
struct Entry {
    msg: MessageMeta,
    /// Offset in the message of the entry's first byte.
    msg_base: u64,
    len: u64,
    stream_id: u64,
    /// Stream offset of the message's first byte.
    stream_base: u64,
    /// Entry bytes handed out for the first time (the highest offset reached).
    handed_out: u64,
}

/// A message written on a stream and not yet released in full.
#[derive(Clone, Copy, Debug)]
struct Queued {
    msg: MessageMeta,
    stream_base: u64,
    urgency: u8,
    incremental: bool,
}

#[derive(Clone, Debug)]
struct SendStream {
    queue: VecDeque<Queued>,
    /// Bytes written on the stream.
    end: u64,
    /// Stream offset up to which bytes went to the scheduler.
    released: u64,
    /// The peer's limit (MAX_STREAM_DATA).
    max_data: u64,
    /// The entry with new bytes not yet handed out.
    outstanding: Option<u32>,
    /// Opened (within the peer's MAX_STREAMS).
    open: bool,
    /// The limit at which the stream was last counted as blocked.
    blocked_at: Option<u64>,
}

/// Where a message is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamChoice {
    /// A new stream of ours (client: bidirectional; server: unidirectional).
    New,
    /// An existing stream: the peer's request stream, or one of ours, behind what it carries.
    On(u64),
}

/// The send side of every stream (see the module documentation).
#[derive(Debug)]
pub struct SendStreams {
    is_client: bool,
    streams: BTreeMap<u64, SendStream>,
    entries: IntMap<u32, Entry>,
    /// Entry ids of each message, by ascending message offset.
    msg_entries: IntMap<u32, SmallVec<[u32; 1]>>,
    next_entry: u32,
    /// Streams of ours given an ID, and opened, per direction (bidi, uni).
    allocated: [u64; 2],
    opened: [u64; 2],
    /// The peer's MAX_STREAMS per direction.
    peer_max_streams: [u64; 2],
    /// The peer's initial MAX_STREAM_DATA for streams.
    window: u64,
    /// Times a stream was held at its MAX_STREAM_DATA limit (once per limit value).
    pub data_blocked: u64,
    /// Streams that waited for MAX_STREAMS credit.
    pub streams_blocked: u64,
}

impl SendStreams {
    /// Streams of ours opened so far in a direction (the uni count includes the control
    /// stream): the peer may send only on our bidirectional streams below this index.
    pub fn opened(&self, bidi: bool) -> u64 {
        self.opened[dir(bidi)]
    }

    /// Send state for one end. `window` is the peer's initial MAX_STREAM_DATA, `max_streams`
    /// its initial MAX_STREAMS in each direction. The HTTP/3 control stream (the first
    /// unidirectional stream of each side: 2 and 3) is opened here.
    pub fn new(is_client: bool, window: u64, max_streams: u64) -> Self {
        Self {
            is_client,
            streams: BTreeMap::new(),
            entries: IntMap::default(),
            msg_entries: IntMap::default(),
            next_entry: 0,
            allocated: [0, 1],
            opened: [0, 1],
            peer_max_streams: [max_streams, max_streams],
            window,
            data_blocked: 0,
            streams_blocked: 0,
        }
    }

    /// The stream a message written with `choice` goes on: a new ID for [`StreamChoice::New`]
    /// (opened now or once the peer grants credit).
    pub fn assign(&mut self, choice: StreamChoice) -> u64 {
        match choice {
            StreamChoice::On(id) => {
                // A peer's stream is open by definition; one of ours exists already.
                self.streams.entry(id).or_insert_with(|| SendStream::new(self.window, true));
                id
            }
            StreamChoice::New => {
                let bidi = self.is_client;
                let d = dir(bidi);
                let id = stream_id(self.allocated[d], self.is_client, bidi);
                self.allocated[d] += 1;
                let open = self.opened[d] < self.peer_max_streams[d];
                if open {
                    self.opened[d] += 1;
                } else {
                    self.streams_blocked += 1;
                }
                self.streams.insert(id, SendStream::new(self.window, open));
                id
            }
        }
    }

    /// Writes `msg` on stream `id` (from [`Self::assign`]) behind what the stream carries and
    /// returns the stream offset of its first byte.
    pub fn write(
        &mut self,
        now_ns: u64,
        id: u64,
        msg: MessageMeta,
        urgency: u8,
        incremental: bool,
        sched: &mut dyn StreamScheduler,
    ) -> u64 {
        let s = self.streams.entry(id).or_insert_with(|| SendStream::new(self.window, true));
        let base = s.end;
        s.queue.push_back(Queued { msg, stream_base: base, urgency, incremental });
        s.end += msg.len_bytes;
        self.release(now_ns, id, sched);
        base
    }

    /// Hands the scheduler the stream's next piece, if the stream is open, has no entry with
    /// new bytes pending and has credit.
    fn release(&mut self, now_ns: u64, id: u64, sched: &mut dyn StreamScheduler) {
        let Some(s) = self.streams.get_mut(&id) else { return };
        if !s.open || s.outstanding.is_some() {
            return;
        }
        let Some(q) = s.queue.front().copied() else { return };
        let msg_end = q.stream_base + q.msg.len_bytes;
        let upto = msg_end.min(s.max_data);
        if upto <= s.released {
            if s.released < s.end && s.blocked_at != Some(s.max_data) {
                s.blocked_at = Some(s.max_data);
                self.data_blocked += 1;
            }
            return;
        }
        let entry_id = self.next_entry;
        self.next_entry += 1;
        let msg_base = s.released - q.stream_base;
        let len = upto - s.released;
        s.released = upto;
        s.outstanding = Some(entry_id);
        if upto == msg_end {
            s.queue.pop_front();
        }
        self.entries.insert(
            entry_id,
            Entry { msg: q.msg, msg_base, len, stream_id: id, stream_base: q.stream_base, handed_out: 0 },
        );
        self.msg_entries.entry(q.msg.id).or_default().push(entry_id);
        let meta = MessageMeta { id: entry_id, len_bytes: len, priority: q.msg.priority };
        sched.enqueue(
            now_ns,
            StreamMessage { msg: meta, stream_id: id, urgency: q.urgency, incremental: q.incremental },
        );
    }

    /// The stream of a chunk the scheduler handed out and the stream offset of its first byte.
    pub fn locate(&self, c: &MsgChunk) -> Option<(u64, u64)> {
        let e = self.entries.get(&c.msg_id)?;
        Some((e.stream_id, e.stream_base + e.msg_base + c.msg_offset_bytes))
    }

    /// True when `offset` is the end of everything written on stream `id` (the FIN bit).
    pub fn is_stream_end(&self, id: u64, offset: u64) -> bool {
        self.streams.get(&id).is_some_and(|s| s.end == offset)
    }

    /// A chunk the scheduler handed out, in message terms, with the stream offset of the
    /// message's first byte. When it was the entry's last new byte, the stream's next piece
    /// is released.
    pub fn handed_out(&mut self, now_ns: u64, c: MsgChunk, sched: &mut dyn StreamScheduler) -> Option<(MsgChunk, u64)> {
        let e = self.entries.get_mut(&c.msg_id)?;
        let end = c.msg_offset_bytes + c.len_bytes() as u64;
        let mut exhausted = false;
        if end > e.handed_out {
            e.handed_out = end;
            exhausted = end == e.len;
        }
        let out =
            MsgChunk::new(e.msg.id, e.msg_base + c.msg_offset_bytes, c.len_bytes(), e.msg.len_bytes, e.msg.priority);
        let (stream, base) = (e.stream_id, e.stream_base);
        if exhausted {
            if let Some(s) = self.streams.get_mut(&stream) {
                if s.outstanding == Some(c.msg_id) {
                    s.outstanding = None;
                }
            }
            self.release(now_ns, stream, sched);
        }
        Some((out, base))
    }

    /// A message chunk (lost, or trimmed off a packet) in the scheduler's terms.
    pub fn to_entry(&self, c: &MsgChunk) -> Option<MsgChunk> {
        let ids = self.msg_entries.get(&c.msg_id)?;
        let e = ids.iter().rev().map(|i| (*i, &self.entries[i])).find(|(_, e)| e.msg_base <= c.msg_offset_bytes)?;
        Some(MsgChunk::new(e.0, c.msg_offset_bytes - e.1.msg_base, c.len_bytes(), e.1.len, c.priority()))
    }

    /// MAX_STREAM_DATA from the peer.
    pub fn on_max_stream_data(&mut self, now_ns: u64, id: u64, max: u64, sched: &mut dyn StreamScheduler) {
        if let Some(s) = self.streams.get_mut(&id) {
            if max > s.max_data {
                s.max_data = max;
                self.release(now_ns, id, sched);
            }
        }
    }

    /// MAX_STREAMS from the peer: waiting streams open in ID order.
    pub fn on_max_streams(&mut self, now_ns: u64, bidi: bool, max: u64, sched: &mut dyn StreamScheduler) {
        let d = dir(bidi);
        if max <= self.peer_max_streams[d] {
            return;
        }
        self.peer_max_streams[d] = max;
        let mut index = self.opened[d];
        while index < self.allocated[d] && index < max {
            let id = stream_id(index, self.is_client, bidi);
            if let Some(s) = self.streams.get_mut(&id) {
                s.open = true;
            }
            self.release(now_ns, id, sched);
            index += 1;
        }
        self.opened[d] = index;
    }

    /// Bytes written on streams and not yet handed to the scheduler (held by credit or by
    /// the order on their stream).
    pub fn held_bytes(&self) -> u64 {
        self.streams.values().map(|s| s.end - s.released).sum()
    }
}

impl SendStream {
    fn new(window: u64, open: bool) -> Self {
        Self {
            queue: VecDeque::new(),
            end: 0,
            released: 0,
            max_data: window,
            outstanding: None,
            open,
            blocked_at: None,
        }
    }
}

/// A message completed on a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    /// The message.
    pub msg_id: u32,
    /// Its length.
    pub len_bytes: u64,
}

#[derive(Clone, Debug, Default)]
struct RecvStream {
    /// Stream byte ranges received (merged).
    ranges: Vec<(u64, u64)>,
    /// Bytes in order from offset 0.
    contiguous: u64,
    /// Messages seen, by stream offset of their first byte: (id, length).
    msgs: BTreeMap<u64, (u32, u64)>,
    /// Messages completed.
    completed: u64,
    /// Messages whose first byte is readable in order.
    started: u64,
    /// The stream's end, once a FIN arrived.
    fin_at: Option<u64>,
    /// The limit we advertised (MAX_STREAM_DATA).
    local_max: u64,
}

/// What one STREAM frame changed at the receiver.
#[derive(Clone, Debug, Default)]
pub struct Received {
    /// Bytes new to the stream.
    pub new_bytes: u64,
    /// Bytes that had arrived before.
    pub duplicate_bytes: u64,
    /// Bytes that became readable in order.
    pub in_order_bytes: u64,
    /// Messages whose first byte became readable in order, in stream order.
    pub started: SmallVec<[u32; 1]>,
    /// Messages completed, in stream order.
    pub completed: SmallVec<[Completed; 1]>,
    /// A MAX_STREAM_DATA to send.
    pub max_stream_data: Option<u64>,
    /// The stream is complete (FIN reached).
    pub finished: bool,
}

/// The receive side of every stream (see the module documentation).
#[derive(Debug, Default)]
pub struct RecvStreams {
    streams: IntMap<u64, RecvStream>,
    window: u64,
    /// Reliable messages completed.
    pub completed_messages: u64,
    /// Bytes received past the limit we advertised (a peer violating flow control,
    /// RFC 9000 §4.1 FLOW_CONTROL_ERROR): dropped, not held.
    pub over_limit_bytes: u64,
}

impl RecvStreams {
    /// Receive state with `window` bytes of credit per stream.
    pub fn new(window: u64) -> Self {
        Self { window, ..Default::default() }
    }

    /// True when the stream has carried at least one frame.
    pub fn seen(&self, id: u64) -> bool {
        self.streams.contains_key(&id)
    }

    /// Bytes of message `msg_id` on stream `id` readable in order (0 before its first frame
    /// arrived; at most its length).
    pub fn delivered_bytes(&self, id: u64, msg_id: u32) -> u64 {
        let Some(s) = self.streams.get(&id) else { return 0 };
        s.msgs
            .iter()
            .find(|(_, &(m, _))| m == msg_id)
            .map_or(0, |(&base, &(_, len))| s.contiguous.saturating_sub(base).min(len))
    }

    /// A STREAM frame: `chunk` of a message whose first byte is at `stream_base`.
    pub fn on_frame(&mut self, id: u64, stream_base: u64, chunk: &MsgChunk, fin: bool) -> Received {
        let window = self.window;
        let mut out = Received::default();
        // RFC 9000 §4.1: data past the limit we advertised is a flow-control error. It is
        // dropped (and counted), so the ranges held stay within the window; offsets that
        // overflow (§19.8: at most 2^62 − 1) are dropped too.
        let local_max = self.streams.get(&id).map_or(window, |s| s.local_max);
        let end = stream_base
            .checked_add(chunk.msg_offset_bytes)
            .and_then(|a| a.checked_add(chunk.len_bytes() as u64).map(|b| (a, b)));
        let Some((a, b)) = end.filter(|&(_, b)| b <= local_max) else {
            self.over_limit_bytes += chunk.len_bytes() as u64;
            return out;
        };
        let s = self.streams.entry(id).or_insert_with(|| RecvStream { local_max: window, ..Default::default() });
        s.msgs.entry(stream_base).or_insert((chunk.msg_id, chunk.msg_len_bytes));
        if fin {
            s.fin_at = Some(b);
        }
        out.new_bytes = insert_range(&mut s.ranges, a, b);
        out.duplicate_bytes = chunk.len_bytes() as u64 - out.new_bytes;
        let contiguous = match s.ranges.first() {
            Some(&(0, e)) => e,
            _ => 0,
        };
        out.in_order_bytes = contiguous - s.contiguous;
        s.contiguous = contiguous;
        // Messages start in stream order once their first byte is in order.
        while let Some((&base, &(msg_id, _))) = s.msgs.iter().nth(s.started as usize) {
            if base >= contiguous {
                break;
            }
            s.started += 1;
            out.started.push(msg_id);
        }
        // Messages complete in stream order once every byte up to their end is in.
        while let Some((&base, &(msg_id, len))) = s.msgs.iter().nth(s.completed as usize) {
            if base.saturating_add(len) > contiguous {
                break;
            }
            s.completed += 1;
            out.completed.push(Completed { msg_id, len_bytes: len });
        }
        self.completed_messages += out.completed.len() as u64;
        out.finished = s.fin_at.is_some_and(|f| contiguous >= f);
        // RFC 9000 §4.2: raise the limit when half the window is consumed (the application
        // reads at once), unless the stream is over.
        if !out.finished && window != u64::MAX && s.local_max - contiguous.min(s.local_max) < window / 2 {
            s.local_max = contiguous.saturating_add(window);
            out.max_stream_data = Some(s.local_max);
        }
        out
    }
}

/// Adds `(a, b)` to byte ranges that [`merge`] produced (sorted, overlapping and touching
/// ranges joined) and returns how many bytes the ranges cover more: the same ranges as
/// pushing it and merging again, found by binary search and joined in place instead of
/// sorting the whole list (per packet received and per range acknowledged; a stream
/// with many holes, as two paths of different delays make, held hundreds of ranges).
pub fn insert_range(ranges: &mut Vec<(u64, u64)>, a: u64, b: u64) -> u64 {
    // Data arriving in order starts inside or past the last range (most calls): it sorts
    // after every range, and only the last can join it.
    if let Some(last) = ranges.last_mut() {
        if a > last.0 {
            if a <= last.1 {
                let before = last.1;
                last.1 = last.1.max(b);
                return last.1 - before;
            }
            ranges.push((a, b));
            return b - a;
        }
    }
    // Where sorting would put it: after every range that compares less.
    let i = ranges.partition_point(|&r| r < (a, b));
    let (at, mut end, mut covered) = if i > 0 && a <= ranges[i - 1].1 {
        // It joins the range before it.
        let (pa, pb) = ranges[i - 1];
        (i - 1, pb.max(b), pb - pa)
    } else {
        ranges.insert(i, (a, b));
        (i, b, 0)
    };
    // The ranges after it that it now reaches (starting at or before its end) join too.
    let mut j = at + 1;
    while j < ranges.len() && ranges[j].0 <= end {
        end = end.max(ranges[j].1);
        covered += ranges[j].1 - ranges[j].0;
        j += 1;
    }
    ranges.drain(at + 1..j);
    ranges[at].1 = end;
    (end - ranges[at].0) - covered
}

/// Sorts and merges byte ranges, in place (called per packet received and per range
/// acknowledged: a new `Vec` each time was most of QUIC mode's allocations).
pub fn merge(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut kept = 0;
    for i in 0..ranges.len() {
        let (a, b) = ranges[i];
        if kept > 0 && a <= ranges[kept - 1].1 {
            ranges[kept - 1].1 = ranges[kept - 1].1.max(b);
        } else {
            ranges[kept] = (a, b);
            kept += 1;
        }
    }
    ranges.truncate(kept);
    ranges
}

#[cfg(test)]
mod tests {
    use super::{insert_range, merge};

    #[test]
    fn insert_range_gives_what_merging_gives() {
        // Every insertion into every merged list of a small universe (empty ranges too)
        // against push-and-merge, with the bytes added.
        let len = |r: &[(u64, u64)]| r.iter().map(|&(x, y)| y - x).sum::<u64>();
        let mut state = 7u64;
        for _ in 0..5_000 {
            let mut ranges = Vec::new();
            let mut reference = Vec::new();
            for _ in 0..12 {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let a = (state >> 40) % 60;
                let b = a + (state >> 20) % 9;
                let before = len(&reference);
                reference.push((a, b));
                reference = merge(reference);
                let added = insert_range(&mut ranges, a, b);
                assert_eq!(ranges, reference, "inserting ({a}, {b})");
                assert_eq!(added, len(&reference) - before);
            }
        }
    }

    #[test]
    fn merge_sorts_and_joins_overlapping_and_touching_ranges() {
        assert_eq!(merge(vec![]), vec![]);
        assert_eq!(merge(vec![(5, 9)]), vec![(5, 9)]);
        // (0, 4) and (4, 6) touch; (3, 5) lies inside; (10, 12) stays apart; (20, 30) swallows (22, 25).
        assert_eq!(merge(vec![(10, 12), (4, 6), (0, 4), (22, 25), (3, 5), (20, 30)]), vec![(0, 6), (10, 12), (20, 30)]);
        assert_eq!(merge(vec![(7, 8), (0, 1)]), vec![(0, 1), (7, 8)]);
    }
}
