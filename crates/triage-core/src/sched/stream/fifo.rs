//! FIFO over streams: each stream is drained before the next one starts, in the order the
//! streams became ready.
//!
//! This is quinn-proto with `TransportConfig::send_fairness(false)` and every stream at the
//! same priority: its pending queue orders streams by a recency counter that falls by one at
//! every push, a stream that is being written stays at the head until it has nothing left,
//! and a stream that becomes pending again (new data, or lost data in `retransmit`) is pushed
//! with a fresh recency, behind every stream already waiting. Lost data of a stream that is
//! still queued joins that stream and keeps its place (RFC 9000 §13.3).

use super::{MsgChunk, ReadyQueue, StreamMessage, StreamScheduler};
use crate::path::sched::PathId;

/// Streams in the order they became ready, each drained before the next.
#[derive(Debug, Default)]
pub struct StreamFifo {
    q: ReadyQueue,
}

impl StreamFifo {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamScheduler for StreamFifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        self.q.enqueue(msg);
    }

    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        self.q.requeue_lost(chunk);
    }

    fn next_chunk(&mut self, _now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        self.q.take_head(max_bytes)?.1
    }

    fn give_back(&mut self, _now_ns: u64, _path: PathId, chunk: MsgChunk) {
        self.q.give_back(chunk);
    }

    fn queued_bytes(&self) -> u64 {
        self.q.table.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain, key, msg, ops, run_ops};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn drains_streams_one_after_another_in_write_order() {
        let mut s = StreamFifo::new();
        s.enqueue(0, msg(1, 2500, 4, 0));
        s.enqueue(0, msg(2, 1500, 0, 4));
        s.enqueue(0, msg(3, 800, 2, 8));
        // Message 1 whole (1000 + 1000 + 500), then 2 (1000 + 500), then 3; priorities are ignored.
        assert_eq!(
            drain(&mut s, 1000),
            vec![(1, 0, 1000), (1, 1000, 1000), (1, 2000, 500), (2, 0, 1000), (2, 1000, 500), (3, 0, 800)]
        );
        assert_eq!(s.queued_bytes(), 0);
    }

    #[test]
    fn lost_data_joins_its_queued_stream_ahead_of_its_new_data() {
        let mut s = StreamFifo::new();
        s.enqueue(0, msg(1, 3000, 4, 0));
        s.enqueue(0, msg(2, 1000, 4, 4));
        let first = s.next_chunk(0, 1000).unwrap();
        assert_eq!((first.msg_id, first.msg_offset_bytes, first.len_bytes()), (1, 0, 1000));
        s.requeue_lost(0, first);
        // 2000 new + 1000 lost of message 1, 1000 of message 2.
        assert_eq!(s.queued_bytes(), 4000);
        // Stream 1 is still at the head: its lost bytes first, then its new bytes.
        assert_eq!(drain(&mut s, 1000), vec![(1, 0, 1000), (1, 1000, 1000), (1, 2000, 1000), (2, 0, 1000)]);
    }

    #[test]
    fn a_drained_stream_with_lost_data_goes_to_the_back() {
        let mut s = StreamFifo::new();
        s.enqueue(0, msg(1, 1500, 0, 0));
        s.enqueue(0, msg(2, 2000, 0, 4));
        s.enqueue(0, msg(3, 1000, 0, 8));
        let a = s.next_chunk(0, 1000).unwrap(); // (1, 0, 1000)
        let b = s.next_chunk(0, 1000).unwrap(); // (1, 1000, 500): stream 1 leaves the queue
        assert_eq!((b.msg_id, b.msg_offset_bytes, b.len_bytes()), (1, 1000, 500));
        s.requeue_lost(0, a);
        // Stream 1 becomes ready again behind 2 and 3 (quinn: a new, lower recency).
        assert_eq!(drain(&mut s, 1000), vec![(2, 0, 1000), (2, 1000, 1000), (3, 0, 1000), (1, 0, 1000)]);
    }

    #[test]
    fn a_tail_given_back_is_sent_next_even_when_its_stream_had_run_dry() {
        let mut s = StreamFifo::new();
        s.enqueue(0, msg(1, 1000, 0, 0));
        s.enqueue(0, msg(2, 3000, 0, 4));
        // The whole of stream 1 in one chunk: it runs dry and leaves the queue.
        let c = s.next_chunk(0, 1000).unwrap();
        assert_eq!(key(c), (1, 0, 1000));
        // Its last 3 bytes did not fit the packet (a longer STREAM header): as if never
        // handed out, they come first, ahead of stream 2, not behind it as lost data would.
        s.give_back(0, PathId(0), c.at(997, 3));
        assert_eq!(s.queued_bytes(), 3003);
        assert_eq!(drain(&mut s, 1000), vec![(1, 997, 3), (2, 0, 1000), (2, 1000, 1000), (2, 2000, 1000)]);
    }

    proptest! {
        /// Every byte once plus once per requeue, chunks within bounds, exact queued bytes, and
        /// FIFO's own promise: with no losses, messages come out whole in write order.
        #[test]
        fn invariants(ops in ops()) {
            let mut s = StreamFifo::new();
            let log = run_ops(&mut s, &ops)?;
            if log.requeues == 0 {
                let mut ids: Vec<u32> = log.chunks.iter().map(|(c, _)| c.msg_id).collect();
                ids.dedup();
                let mut sorted = ids.clone();
                sorted.sort_unstable();
                prop_assert_eq!(ids, sorted, "messages interleaved or out of write order");
            }
        }
    }
}
