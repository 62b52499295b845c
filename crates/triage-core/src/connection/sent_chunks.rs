//! The message pieces (CATS §II-D: a segment's chunks) of the sequence space sent and not yet
//! cumulatively acknowledged, kept apart from the scoreboard.
//!
//! A retransmission carries the same message pieces as the original (CATS §II-E: the receiver
//! accounts bytes per message), so they must be kept until the segment is acknowledged. They
//! are read only when a segment is sent again, while the scoreboard entry of every segment is
//! read on every ACK that covers it; so they live here, as runs of sequence space, and the
//! scoreboard entry stays one cache line. Consecutive segments carrying consecutive bytes of
//! one message (a bulk transfer, a large object) share one run: sending a segment extends it
//! and acknowledging one usually drops nothing.
//!
//! Runs keep each segment's own piece boundaries: a segment's chunks are recovered exactly as
//! they were sent, zero-length pieces (empty messages) included.

use std::collections::VecDeque;

use crate::sched::{Chunks, MsgChunk};

/// One run: `len` bytes of sequence space from `seq`, carrying message `msg_id` from
/// `msg_offset_bytes` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    seq: u64,
    len: u64,
    msg_offset_bytes: u64,
    msg_len_bytes: u64,
    msg_id: u32,
    priority: u8,
    /// The first piece of a segment's list (a piece that extended the previous run is not).
    seg_start: bool,
}

impl Run {
    fn end(&self) -> u64 {
        self.seq + self.len
    }
}

/// The chunks of the segments in flight, in sequence order.
#[derive(Clone, Debug, Default)]
pub(crate) struct SentChunks {
    runs: VecDeque<Run>,
}

impl SentChunks {
    /// Records the chunks of a segment sent for the first time, whose payload starts at
    /// sequence number `start` (segments are recorded in sequence order, each starting where
    /// the previous one's payload ended, or later).
    pub(crate) fn record(&mut self, start: u64, chunks: &[MsgChunk]) {
        debug_assert!(self.runs.back().is_none_or(|r| r.end() <= start), "segments recorded out of order");
        let mut seq = start;
        for (k, c) in chunks.iter().enumerate() {
            let len = c.len_bytes() as u64;
            if k == 0 && len > 0 {
                if let Some(last) = self.runs.back_mut() {
                    if last.len > 0
                        && last.end() == seq
                        && last.msg_id == c.msg_id
                        && last.msg_offset_bytes + last.len == c.msg_offset_bytes
                        && last.msg_len_bytes == c.msg_len_bytes
                        && last.priority == c.priority()
                    {
                        last.len += len;
                        seq += len;
                        continue;
                    }
                }
            }
            self.runs.push_back(Run {
                seq,
                len,
                msg_offset_bytes: c.msg_offset_bytes,
                msg_len_bytes: c.msg_len_bytes,
                msg_id: c.msg_id,
                priority: c.priority(),
                seg_start: k == 0,
            });
            seq += len;
        }
    }

    /// The chunks of the segment whose payload is `[start, start + payload_bytes)`, as they
    /// were recorded (empty for a segment without payload).
    pub(crate) fn chunks_of(&self, start: u64, payload_bytes: u32) -> Chunks {
        let mut out = Chunks::new();
        if payload_bytes == 0 {
            return out;
        }
        let end = start + payload_bytes as u64;
        let j = self.runs.partition_point(|r| r.seq < start);
        let mut i = if j > 0 && self.runs[j - 1].end() > start {
            // The segment begins inside a run that began earlier.
            j - 1
        } else {
            // It begins a run of its own; zero-length pieces before it at the same sequence
            // number end the previous segment.
            let mut i = j;
            while i < self.runs.len() && self.runs[i].seq == start && !self.runs[i].seg_start {
                i += 1;
            }
            i
        };
        while let Some(r) = self.runs.get(i) {
            // A piece at `end` belongs to the next segment unless it is a zero-length one
            // that ends this segment's list.
            if r.seq > end || (r.seq == end && (r.len > 0 || r.seg_start)) {
                break;
            }
            let lo = r.seq.max(start);
            let hi = r.end().min(end);
            let c = MsgChunk::new(
                r.msg_id,
                r.msg_offset_bytes + (lo - r.seq),
                (hi - lo) as u32,
                r.msg_len_bytes,
                r.priority,
            );
            out.push(c);
            i += 1;
        }
        out
    }

    /// Forgets the runs wholly below `una`, the start of the first segment not wholly
    /// acknowledged (not the cumulative ACK itself, which may fall inside that segment). A
    /// zero-length piece at `una` is kept: it may begin that segment.
    pub(crate) fn acknowledged(&mut self, una: u64) {
        while let Some(r) = self.runs.front() {
            if r.end() < una || (r.len > 0 && r.end() <= una) {
                self.runs.pop_front();
            } else {
                break;
            }
        }
    }

    /// Runs held (tests bound it).
    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chunk(msg_id: u32, off: u64, len: u32, msg_len: u64, prio: u8) -> MsgChunk {
        MsgChunk::new(msg_id, off, len, msg_len, prio)
    }

    #[test]
    fn a_bulk_transfer_is_one_run_cut_at_each_segment() {
        let mut s = SentChunks::default();
        for k in 0..100u64 {
            s.record(1 + k * 1448, &[chunk(7, k * 1448, 1448, 1 << 40, 3)]);
        }
        assert_eq!(s.runs(), 1);
        assert_eq!(s.chunks_of(1 + 5 * 1448, 1448).as_slice(), &[chunk(7, 5 * 1448, 1448, 1 << 40, 3)]);
        s.acknowledged(1 + 50 * 1448);
        assert_eq!(s.runs(), 1);
        assert_eq!(s.chunks_of(1 + 99 * 1448, 1448).as_slice(), &[chunk(7, 99 * 1448, 1448, 1 << 40, 3)]);
        s.acknowledged(1 + 100 * 1448);
        assert_eq!(s.runs(), 0);
    }

    #[test]
    fn pieces_inside_a_segment_keep_their_boundaries() {
        let mut s = SentChunks::default();
        // Two pieces of message 1 back to back inside one segment stay two pieces.
        let seg = [chunk(1, 0, 100, 300, 0), chunk(1, 100, 200, 300, 0)];
        s.record(1, &seg);
        assert_eq!(s.chunks_of(1, 300).as_slice(), &seg);
    }

    #[test]
    fn empty_messages_at_segment_edges_stay_with_their_segment() {
        let mut s = SentChunks::default();
        // Segment A ends with an empty message; B starts with one; C follows.
        let a = [chunk(1, 0, 100, 100, 2), chunk(2, 0, 0, 0, 2)];
        let b = [chunk(3, 0, 0, 0, 2), chunk(4, 0, 50, 50, 2)];
        let c = [chunk(5, 0, 10, 10, 2)];
        s.record(1, &a);
        s.record(101, &b);
        s.record(151, &c);
        assert_eq!(s.chunks_of(1, 100).as_slice(), &a);
        assert_eq!(s.chunks_of(101, 50).as_slice(), &b);
        assert_eq!(s.chunks_of(151, 10).as_slice(), &c);
        s.acknowledged(101);
        assert_eq!(s.chunks_of(101, 50).as_slice(), &b);
        assert_eq!(s.chunks_of(151, 10).as_slice(), &c);
    }

    /// A segment: a list of (message, length) pieces, each message's bytes taken in order.
    fn segments() -> impl Strategy<Value = Vec<(Vec<(u32, u32)>, u8)>> {
        proptest::collection::vec(
            (proptest::collection::vec((0u32..4, prop_oneof![Just(0u32), 1u32..2000]), 1..4), 0u8..3),
            1..60,
        )
    }

    proptest! {
        /// Every segment not yet acknowledged gets back exactly the chunks it was sent
        /// with, whatever the messages, gaps (FIN, skipped sequence) and acknowledgments.
        #[test]
        fn chunks_come_back_as_sent(segs in segments(), acks in proptest::collection::vec(0usize..60, 0..10)) {
            let mut s = SentChunks::default();
            let mut offsets = [0u64; 4];
            let mut sent: Vec<(u64, u32, Chunks)> = Vec::new();
            let mut seq = 1u64;
            for (pieces, gap) in &segs {
                let mut cs = Chunks::new();
                for &(m, len) in pieces {
                    cs.push(chunk(m, offsets[m as usize], len, 1 << 30, m as u8));
                    offsets[m as usize] += len as u64;
                }
                let payload: u32 = cs.iter().map(|c| c.len_bytes()).sum();
                if payload == 0 {
                    continue; // never sent (see `Connection::try_send_new`)
                }
                s.record(seq, &cs);
                sent.push((seq, payload, cs));
                seq += payload as u64 + *gap as u64;
            }
            let mut acks = acks;
            acks.sort_unstable();
            let mut first = 0;
            for a in acks {
                if a >= sent.len() {
                    break;
                }
                s.acknowledged(sent[a].0);
                first = first.max(a);
                for (start, payload, cs) in &sent[first..] {
                    prop_assert_eq!(s.chunks_of(*start, *payload), cs.clone());
                }
            }
            for (start, payload, cs) in &sent[first..] {
                prop_assert_eq!(s.chunks_of(*start, *payload), cs.clone());
            }
            s.acknowledged(seq + 1);
            prop_assert_eq!(s.runs(), 0);
        }
    }
}
