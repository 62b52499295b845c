//! The RFC 9218 scheduler: the HTTP/3 baseline of extensible priorities.
//!
//! RFC 9218 §4.1: urgency 0 (most urgent) to 7; values above 7 are served as 7 here, as the
//! lowest urgency. §10: "It is RECOMMENDED that, when possible, servers respect the urgency
//! parameter, sending higher-urgency responses before lower-urgency responses"; strict,
//! checked at every chunk, so a more urgent stream preempts at once. Within one urgency,
//! §10: non-incremental responses are served "by prioritizing bandwidth allocation in
//! ascending order of the stream ID", one at a time (§4.2: a client cannot use a
//! non-incremental response before it is complete), and incremental ones "by sharing
//! bandwidth among them": round robin, one packet's worth per turn, rotating at
//! [`StreamScheduler::on_packet_end`] as [`super::round_robin::RoundRobin`] does.
//!
//! A level holding both kinds: §10 leaves it to the implementation and warns that either
//! order can starve the other kind. Here the non-incremental streams of the level go first,
//! then the incremental ones share what is left. That is quiche's order (its
//! `StreamPriorityKey` sorts by urgency, then non-incremental before incremental, then stream
//! ID for non-incremental streams and arrival for incremental ones). h2o
//! (`lib/http3/server.c`, `req_scheduler_activate`) differs in one respect: an incremental
//! stream's first emission is placed among the non-incremental streams in stream-ID order,
//! and only later emissions go behind them. nginx's released HTTP/3 code does not schedule
//! by RFC 9218 priority (its support is an open pull request).
//!
//! Lost data rejoins its stream ahead of its new data (RFC 9000 §13.3) and is scheduled by
//! the stream's urgency (RFC 9218 §12 allows either this or retransmissions first); an
//! incremental stream that had left the rotation rejoins at the back of it.

use std::collections::{BTreeSet, VecDeque};

use smallvec::SmallVec;

use super::{MsgChunk, PathId, Requeued, StreamMessage, StreamScheduler, StreamTable};

/// Urgency levels of RFC 9218 §4.1.
pub const URGENCY_LEVELS: usize = 8;

#[derive(Debug, Default)]
struct Level {
    /// Ready non-incremental streams as (stream id, message id), served smallest first.
    non_incremental: BTreeSet<(u64, u32)>,
    /// Ready incremental streams (message ids) in turn order; the head is served.
    incremental: VecDeque<u32>,
}

impl Level {
    fn is_empty(&self) -> bool {
        self.non_incremental.is_empty() && self.incremental.is_empty()
    }
}

/// RFC 9218 urgency and incremental scheduling over streams.
#[derive(Debug, Default)]
pub struct Rfc9218 {
    table: StreamTable,
    levels: [Level; URGENCY_LEVELS],
    /// Streams served in the packet being filled.
    served: SmallVec<[u32; 4]>,
}

impl Rfc9218 {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }

    fn urgency(m: &StreamMessage) -> usize {
        (m.urgency as usize).min(URGENCY_LEVELS - 1)
    }

    /// A stream whose data was queued again ([`StreamTable::requeue`] or
    /// [`StreamTable::give_back`]) is ready again when it had nothing queued before.
    fn ready_again(&mut self, requeued: Requeued, id: u32) {
        if requeued == Requeued::BecameReady {
            if let Some(&m) = self.table.get(id) {
                self.make_ready(m);
            }
        }
    }

    fn make_ready(&mut self, m: StreamMessage) {
        let level = &mut self.levels[Self::urgency(&m)];
        if m.incremental {
            level.incremental.push_back(m.msg.id);
        } else {
            level.non_incremental.insert((m.stream_id, m.msg.id));
        }
    }
}

impl StreamScheduler for Rfc9218 {
    fn name(&self) -> &'static str {
        "rfc9218"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        if self.table.insert(msg) {
            self.make_ready(msg);
        }
    }

    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        let r = self.table.requeue(chunk);
        self.ready_again(r, chunk.msg_id);
    }

    /// The tail of the chunk just taken did not fit: it is the stream's next data again
    /// (new bytes stay new, the stream table's `give_back`). A stream the take had left dry
    /// is ready again: a non-incremental one at its place in stream-ID order, an incremental
    /// one at the back of its rotation, where the stream that filled the packet goes anyway.
    fn give_back(&mut self, _now_ns: u64, _path: PathId, chunk: MsgChunk) {
        let r = self.table.give_back(chunk);
        self.ready_again(r, chunk.msg_id);
    }

    fn next_chunk(&mut self, _now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        if max_bytes == 0 {
            return None;
        }
        let level = self.levels.iter_mut().find(|l| !l.is_empty())?;
        let (id, key) = match level.non_incremental.first() {
            Some(&(stream_id, id)) => (id, Some((stream_id, id))),
            None => (*level.incremental.front()?, None),
        };
        let chunk = self.table.take(id, max_bytes);
        if !self.table.is_ready(id) {
            match key {
                Some(k) => {
                    level.non_incremental.remove(&k);
                }
                None => {
                    level.incremental.pop_front();
                }
            }
        }
        if !self.served.contains(&id) {
            self.served.push(id);
        }
        chunk
    }

    /// Every incremental stream that was served in the packet and still has data goes to
    /// the back of its urgency's rotation.
    fn on_packet_end(&mut self) {
        for id in std::mem::take(&mut self.served) {
            let Some(m) = self.table.get(id) else { continue };
            if !m.incremental {
                continue;
            }
            let ring = &mut self.levels[Self::urgency(m)].incremental;
            if ring.front() == Some(&id) {
                ring.rotate_left(1);
            }
        }
    }

    fn queued_bytes(&self) -> u64 {
        self.table.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain, drain_packets, key, ops, run_ops};
    use super::super::MessageMeta;
    use super::*;
    use proptest::prelude::*;

    fn m(id: u32, len: u64, stream_id: u64, urgency: u8, incremental: bool) -> StreamMessage {
        StreamMessage { msg: MessageMeta { id, len_bytes: len, priority: 2 }, stream_id, urgency, incremental }
    }

    #[test]
    fn non_incremental_streams_one_at_a_time_in_stream_id_order() {
        let mut s = Rfc9218::new();
        // Written in the order 1, 2, 3 but on streams 8, 0, 4: stream ID decides.
        s.enqueue(0, m(1, 1500, 8, 3, false));
        s.enqueue(0, m(2, 1500, 0, 3, false));
        s.enqueue(0, m(3, 1000, 4, 3, false));
        assert_eq!(drain(&mut s, 1000), vec![(2, 0, 1000), (2, 1000, 500), (3, 0, 1000), (1, 0, 1000), (1, 1000, 500)]);
    }

    #[test]
    fn urgency_first_then_incremental_round_robin() {
        let mut s = Rfc9218::new();
        s.enqueue(0, m(1, 2000, 0, 5, true));
        s.enqueue(0, m(2, 2500, 4, 5, true));
        s.enqueue(0, m(3, 1000, 8, 1, true));
        // Urgency 1 first (message 3), then 1 and 2 alternate one packet each at urgency 5.
        assert_eq!(
            drain(&mut s, 1000),
            vec![(3, 0, 1000), (1, 0, 1000), (2, 0, 1000), (1, 1000, 1000), (2, 1000, 1000), (2, 2000, 500)]
        );
    }

    #[test]
    fn a_mixed_level_serves_non_incremental_streams_first() {
        let mut s = Rfc9218::new();
        s.enqueue(0, m(1, 2000, 0, 3, true));
        s.enqueue(0, m(2, 1500, 4, 3, false));
        s.enqueue(0, m(3, 1000, 8, 3, true));
        s.enqueue(0, m(4, 700, 12, 3, false));
        // Non-incremental 2 then 4 (stream IDs 4, 12), packets filled across the boundary;
        // then incremental 1 and 3 take turns.
        assert_eq!(
            drain_packets(&mut s, 1000),
            vec![
                vec![(2, 0, 1000)],
                vec![(2, 1000, 500), (4, 0, 500)],
                vec![(4, 500, 200), (1, 0, 800)],
                vec![(3, 0, 1000)],
                vec![(1, 800, 1000)],
                vec![(1, 1800, 200)],
            ]
        );
    }

    #[test]
    fn a_more_urgent_stream_preempts_and_lost_data_keeps_its_urgency() {
        let mut s = Rfc9218::new();
        s.enqueue(0, m(1, 3000, 0, 6, false));
        let a = s.next_chunk(0, 1000).unwrap();
        s.on_packet_end();
        s.enqueue(1, m(2, 1000, 4, 0, false));
        // Message 1's loss is queued at urgency 6, behind urgency 0's message 2.
        s.requeue_lost(2, a);
        assert_eq!(s.queued_bytes(), 2000 + 1000 + 1000);
        assert_eq!(drain(&mut s, 1000), vec![(2, 0, 1000), (1, 0, 1000), (1, 1000, 1000), (1, 2000, 1000)]);
    }

    #[test]
    fn an_incremental_stream_that_had_left_rejoins_behind_the_others() {
        let mut s = Rfc9218::new();
        s.enqueue(0, m(1, 1000, 0, 3, true));
        s.enqueue(0, m(2, 2000, 4, 3, true));
        s.enqueue(0, m(3, 2000, 8, 3, true));
        let a = s.next_chunk(0, 1000).unwrap(); // message 1 done: it leaves the rotation
        s.on_packet_end();
        assert_eq!(key(a), (1, 0, 1000));
        s.requeue_lost(0, a);
        assert_eq!(
            drain(&mut s, 1000),
            vec![(2, 0, 1000), (3, 0, 1000), (1, 0, 1000), (2, 1000, 1000), (3, 1000, 1000)]
        );
    }

    proptest! {
        /// The byte contract, and the order of §10: every chunk is of the most urgent level
        /// with data queued (urgency above 7 counted as 7); when that level has
        /// non-incremental streams ready, it is the one with the smallest stream ID.
        #[test]
        fn invariants_and_rfc9218_order(ops in ops()) {
            let mut s = Rfc9218::new();
            let log = run_ops(&mut s, &ops)?;
            let u = |i: u32| log.msgs[i as usize].urgency.min(7);
            for (c, ready) in &log.chunks {
                let best = ready.iter().map(|&i| u(i)).min();
                prop_assert_eq!(Some(u(c.msg_id)), best, "chunk {:?} while {:?} were ready", c, ready);
                let first_ni = ready
                    .iter()
                    .filter(|&&i| u(i) == u(c.msg_id) && !log.msgs[i as usize].incremental)
                    .min_by_key(|&&i| log.msgs[i as usize].stream_id);
                if let Some(&want) = first_ni {
                    prop_assert_eq!(c.msg_id, want);
                }
            }
        }
    }
}
