//! Round robin over streams, one packet's worth at a time: quinn-proto's default
//! (`TransportConfig::send_fairness(true)`).
//!
//! quinn pops the head stream of its pending queue for every STREAM frame and, when the
//! stream still has data after the frame, pushes it back with a fresh recency, behind every
//! other pending stream of its priority. A frame takes all the room the packet has left, so
//! a stream still pending after its frame is the one that filled the packet. Here the
//! rotation happens at [`StreamScheduler::on_packet_end`]: the stream that filled the packet
//! goes to the back, and a stream that runs dry before the packet is full leaves the queue,
//! so the next stream continues the same packet. The one difference from quinn: a stream
//! with lost data and new data may put both into one packet here, where quinn would rotate
//! after the retransmitted frame.
//!
//! Lost data of a queued stream joins it and keeps its place; a stream that had left the
//! queue goes to the back (RFC 9000 §13.3; quinn's `retransmit` pushes it with a new
//! recency). No stream starves: one that is ready waits at most one packet per stream ahead
//! of it.

use super::{MsgChunk, PathId, ReadyQueue, Requeued, StreamMessage, StreamScheduler};

/// Ready streams take turns, one packet's worth each.
#[derive(Debug, Default)]
pub struct RoundRobin {
    q: ReadyQueue,
    /// The stream of the last chunk of the packet being filled.
    last_served: Option<u32>,
}

impl RoundRobin {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamScheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "rr"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        self.q.enqueue(msg);
    }

    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        self.q.requeue_lost(chunk);
    }

    /// The tail of the chunk just taken did not fit: it is the stream's next data again
    /// (new bytes stay new, the stream table's `give_back`). A stream the take had left dry
    /// rejoins at the back, where the stream that filled the packet goes anyway.
    fn give_back(&mut self, _now_ns: u64, _path: PathId, chunk: MsgChunk) {
        if self.q.table.give_back(chunk) == Requeued::BecameReady {
            self.q.ready.push_back(chunk.msg_id);
        }
    }

    fn next_chunk(&mut self, _now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        let (id, chunk, _) = self.q.take_head(max_bytes)?;
        self.last_served = Some(id);
        chunk
    }

    /// The stream that filled the packet, if it still has data, goes to the back.
    fn on_packet_end(&mut self) {
        if let Some(id) = self.last_served.take() {
            if self.q.ready.front() == Some(&id) {
                self.q.ready.rotate_left(1);
            }
        }
    }

    fn queued_bytes(&self) -> u64 {
        self.q.table.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain, drain_packets, msg, ops, run_ops};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn streams_take_turns_one_chunk_per_packet() {
        let mut s = RoundRobin::new();
        s.enqueue(0, msg(1, 2500, 0, 0));
        s.enqueue(0, msg(2, 1200, 0, 4));
        s.enqueue(0, msg(3, 3000, 0, 8));
        // Turns 1, 2, 3, 1, 2, 3, ...; 2 runs dry after its second turn, 1 after its third.
        assert_eq!(
            drain(&mut s, 1000),
            vec![
                (1, 0, 1000),
                (2, 0, 1000),
                (3, 0, 1000),
                (1, 1000, 1000),
                (2, 1000, 200),
                (3, 1000, 1000),
                (1, 2000, 500),
                (3, 2000, 1000)
            ]
        );
        assert_eq!(s.queued_bytes(), 0);
    }

    #[test]
    fn a_stream_that_runs_dry_lets_the_next_one_finish_the_packet() {
        let mut s = RoundRobin::new();
        s.enqueue(0, msg(1, 1300, 0, 0));
        s.enqueue(0, msg(2, 2000, 0, 4));
        s.enqueue(0, msg(3, 2000, 0, 8));
        // Packet 1: stream 1 fills it (1000). Packet 2: stream 2 (1000). Packet 3: stream 3 (1000).
        // Packet 4: stream 1's last 300, then stream 2 fills the other 700 and goes to the back.
        // Packet 5: stream 3's last 1000. Packet 6: stream 2's last 300.
        assert_eq!(
            drain_packets(&mut s, 1000),
            vec![
                vec![(1, 0, 1000)],
                vec![(2, 0, 1000)],
                vec![(3, 0, 1000)],
                vec![(1, 1000, 300), (2, 1000, 700)],
                vec![(3, 1000, 1000)],
                vec![(2, 1700, 300)],
            ]
        );
    }

    #[test]
    fn lost_data_keeps_a_queued_stream_in_place_and_sends_a_drained_one_to_the_back() {
        let mut s = RoundRobin::new();
        s.enqueue(0, msg(1, 1000, 0, 0));
        s.enqueue(0, msg(2, 3000, 0, 4));
        s.enqueue(0, msg(3, 3000, 0, 8));
        let a = s.next_chunk(0, 1000).unwrap(); // (1, 0, 1000): stream 1 leaves the queue
        s.on_packet_end();
        let b = s.next_chunk(0, 1000).unwrap(); // (2, 0, 1000): stream 2 to the back
        s.on_packet_end();
        assert_eq!(b.msg_id, 2);
        // Queue now 3, 2. Stream 2's loss joins it where it is; stream 1 rejoins behind 2.
        s.requeue_lost(0, b);
        s.requeue_lost(0, a);
        assert_eq!(s.queued_bytes(), 2000 + 1000 + 3000 + 1000);
        assert_eq!(
            drain(&mut s, 1000),
            vec![
                (3, 0, 1000),
                (2, 0, 1000),
                (1, 0, 1000),
                (3, 1000, 1000),
                (2, 1000, 1000),
                (3, 2000, 1000),
                (2, 2000, 1000)
            ]
        );
    }

    #[test]
    fn the_starvation_check_catches_a_scheduler_that_does_not_take_turns() {
        use super::super::fifo::StreamFifo;
        use super::super::testing::Op;
        // FIFO on two 3000-byte streams: one packet of 1000 from stream 0, then the harness's
        // packets of 1200: stream 0 fills the second (1000..2200) and starts the third
        // (2200..3000), so stream 1 waits 2 packets while 2 streams are ready and the
        // round-robin property (wait < ready) fails. Round robin: stream 1 takes packet 2,
        // stream 0 packet 3, and so on; nobody waits more than 1.
        let w = |len| Op::Write { len, priority: 0, urgency: 3, incremental: false };
        let ops = [w(3000), w(3000), Op::Take { max_bytes: 1000 }, Op::PacketEnd];
        let log = run_ops(&mut StreamFifo::new(), &ops).unwrap();
        assert_eq!((log.max_wait_packets, log.max_ready), (2, 2));
        let log = run_ops(&mut RoundRobin::new(), &ops).unwrap();
        assert_eq!((log.max_wait_packets, log.max_ready), (1, 2));
    }

    proptest! {
        /// The byte contract, and no starvation: a ready stream waits at most as many packets
        /// as the most streams ever ready at once. (Fewer, one packet per stream ahead of it,
        /// holds without losses; a found case with lost data re-queued inside a packet that
        /// drained several streams waited exactly `max_ready`: see the regression file.)
        #[test]
        fn invariants_and_no_starvation(ops in ops()) {
            let mut s = RoundRobin::new();
            let log = run_ops(&mut s, &ops)?;
            prop_assert!(
                log.max_wait_packets <= log.max_ready.max(1),
                "a stream waited {} packets with at most {} ready", log.max_wait_packets, log.max_ready
            );
        }
    }
}
