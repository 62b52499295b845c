//! Weighted round robin over streams by HTTP/2 weight: the stream scheduler of SA-ECF
//! (PriorityBucket §5.2: "The number of opportunities for each stream to send is
//! proportional to its weight").
//!
//! What the public SA-ECF code does (REPRODUCTION-pb-partial.md A.2.2): the HTTP/2
//! dependency tree is served by weighted round robin, each node getting `quantum = weight + 1`
//! packet opportunities per round. With every stream depending on the root (PB-13), that is
//! a round over the streams with data, in the order they became ready, each sending up to
//! its quantum of packets before the next one's turn. A stream that runs dry leaves the
//! round; one that spends its quantum goes to the back with a fresh one.
//!
//! Weights are Chrome's as the PriorityBucket authors' client sets them (PB-13): HTML, CSS
//! and fonts 255, scripts 220, images 147, the rest 110, read from the message's priority
//! number (0 most urgent): 0 → 255, 1 → 220, 2 → 147, 3 and up → 110.
//!
//! A per-stream path scheduler may serve another stream than the head
//! ([`StreamScheduler::next_chunk_from`], SA-ECF skipping a stream that waits for the fast
//! path): that stream moves to the head of the round and its turn starts.
//!
//! Lost data of a stream in the round joins it; a stream that had left goes to the back.

use smallvec::SmallVec;

use super::{MsgChunk, ReadyQueue, StreamCandidate, StreamMessage, StreamScheduler};
use crate::path::sched::PathId;

/// HTTP/2 weight of a message of CATS-style priority `p` (see the module documentation).
pub fn weight_of(priority: u8) -> u32 {
    match priority {
        0 => 255,
        1 => 220,
        2 => 147,
        _ => 110,
    }
}

/// Weighted round robin (see the module documentation).
#[derive(Debug, Default)]
pub struct WeightedRoundRobin {
    q: ReadyQueue,
    /// Packets the head may still send in its turn (`None`: a fresh quantum).
    head_left: Option<u32>,
    /// The stream of the last chunk of the packet being filled.
    last_served: Option<u32>,
    /// What `head_left` was before the last take ran the head dry (that take reset it), for
    /// [`StreamScheduler::give_back`].
    head_left_before_dry: Option<u32>,
}

impl WeightedRoundRobin {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }

    fn quantum(&self, id: u32) -> u32 {
        self.q.table.get(id).map_or(1, |m| weight_of(m.msg.priority) + 1)
    }
}

impl StreamScheduler for WeightedRoundRobin {
    fn name(&self) -> &'static str {
        "wrr"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        self.q.enqueue(msg);
    }

    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        self.q.requeue_lost(chunk);
    }

    fn next_chunk(&mut self, _now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        let (id, chunk, dry) = self.q.take_head(max_bytes)?;
        if dry {
            self.head_left_before_dry = self.head_left.take();
        }
        self.last_served = Some(id);
        chunk
    }

    /// The tail of the chunk just taken did not fit: the stream's next data again, as if
    /// never handed out, so a head the take left dry returns to the head of the round with
    /// the rest of its turn (lost data goes to the back instead).
    fn give_back(&mut self, _now_ns: u64, _path: PathId, chunk: MsgChunk) {
        if self.q.give_back(chunk) {
            self.head_left = self.head_left_before_dry.take();
        }
    }

    /// The head spent one packet opportunity; at the end of its quantum it goes to the back.
    fn on_packet_end(&mut self) {
        let Some(id) = self.last_served.take() else { return };
        if self.q.ready.front() != Some(&id) {
            return;
        }
        let left = self.head_left.unwrap_or_else(|| self.quantum(id)).saturating_sub(1);
        if left == 0 {
            self.q.ready.rotate_left(1);
            self.head_left = None;
        } else {
            self.head_left = Some(left);
        }
    }

    fn queued_bytes(&self) -> u64 {
        self.q.table.queued_bytes
    }

    fn candidates(&self, max: usize) -> SmallVec<[StreamCandidate; 4]> {
        let total: u32 = self.q.ready.iter().map(|&id| self.quantum(id) - 1).sum();
        self.q
            .ready
            .iter()
            .take(max)
            .enumerate()
            .map(|(i, &id)| StreamCandidate {
                msg_id: id,
                unsent_bytes: self.q.table.queued_of(id),
                weight: self.quantum(id) - 1,
                total_weight: total,
                quantum_packets: if i == 0 {
                    self.head_left.unwrap_or_else(|| self.quantum(id))
                } else {
                    self.quantum(id)
                },
                open_streams: self.q.ready.len() as u32,
            })
            .collect()
    }

    fn next_chunk_from(&mut self, now_ns: u64, msg_id: u32, max_bytes: u32) -> Option<MsgChunk> {
        if let Some(pos) = self.q.ready.iter().position(|&id| id == msg_id).filter(|&p| p > 0) {
            // Its turn starts now; the others keep their order.
            self.q.ready.remove(pos);
            self.q.ready.push_front(msg_id);
            self.head_left = None;
        }
        self.next_chunk(now_ns, max_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain, drain_packets, key, msg, ops, run_ops};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_stream_sends_its_quantum_of_packets_then_the_next_has_its_turn() {
        let mut s = WeightedRoundRobin::new();
        // Images (priority 2, weight 147): 148 packets per turn.
        s.enqueue(0, msg(1, 200 * 1000, 2, 0));
        s.enqueue(0, msg(2, 10 * 1000, 2, 4));
        let packets = drain_packets(&mut s, 1000);
        let ids: Vec<u32> = packets.iter().map(|p| p[0].0).collect();
        assert!(ids[..148].iter().all(|&i| i == 1), "stream 1 has the first 148 packets");
        assert!(ids[148..158].iter().all(|&i| i == 2), "then stream 2 its 10");
        assert!(ids[158..].iter().all(|&i| i == 1));
        assert_eq!(ids.len(), 210);
    }

    #[test]
    fn candidates_follow_the_round_and_a_skipped_to_stream_takes_its_turn() {
        let mut s = WeightedRoundRobin::new();
        s.enqueue(0, msg(1, 5000, 0, 0)); // HTML: 255
        s.enqueue(0, msg(2, 3000, 1, 4)); // JS: 220
        s.enqueue(0, msg(3, 2000, 2, 8)); // image: 147
        let c = s.candidates(8);
        assert_eq!(c.iter().map(|c| c.msg_id).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(c[0].weight, 255);
        assert_eq!(c[0].total_weight, 255 + 220 + 147);
        assert_eq!(c[1].unsent_bytes, 3000);
        assert_eq!(c[2].quantum_packets, 148);
        assert_eq!(c[0].open_streams, 3);
        // Serve stream 3 first: it moves to the head.
        let ch = s.next_chunk_from(0, 3, 1000).expect("data");
        assert_eq!((ch.msg_id, ch.msg_offset_bytes), (3, 0));
        s.on_packet_end();
        assert_eq!(s.candidates(8).iter().map(|c| c.msg_id).collect::<Vec<_>>(), [3, 1, 2]);
        assert_eq!(s.candidates(1)[0].quantum_packets, 147);
    }

    #[test]
    fn a_tail_given_back_keeps_its_stream_at_the_head_with_the_rest_of_its_turn() {
        let mut s = WeightedRoundRobin::new();
        s.enqueue(0, msg(1, 1000, 3, 0)); // weight 110: a quantum of 111 packets
        s.enqueue(0, msg(2, 2000, 3, 4));
        let c = s.next_chunk(0, 1000).unwrap();
        assert_eq!(key(c), (1, 0, 1000));
        s.give_back(0, PathId(0), c.at(996, 4));
        assert_eq!(s.candidates(2).iter().map(|c| c.msg_id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(s.candidates(1)[0].quantum_packets, 111, "still its first turn, unspent");
        s.on_packet_end();
        assert_eq!(drain(&mut s, 1000), vec![(1, 996, 4), (2, 0, 1000), (2, 1000, 1000)]);
    }

    proptest! {
        #[test]
        fn keeps_the_byte_contract(ops in ops()) {
            run_ops(&mut WeightedRoundRobin::new(), &ops)?;
        }
    }
}
