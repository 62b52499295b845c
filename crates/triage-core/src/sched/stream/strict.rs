//! Strict priority over streams by CATS priority (`msg.priority`, 0 first), FIFO among
//! streams of equal priority.
//!
//! Modelled on quinn-proto's pending-stream queue with `SendStream::set_priority(-n)` for a
//! priority-`n` message: quinn keeps pending streams in a binary heap ordered by
//! `(priority, recency)`, the larger first, where `recency` starts at `u64::MAX` and falls by
//! one at every push, so among equal priorities the stream pushed first is served first.
//! What is matched: that order (lower CATS number first, then the order in which streams
//! became ready), a stream staying at the head of its priority until it has nothing left
//! (`send_fairness(false)`: it is not pushed again after a frame), and a stream that becomes
//! ready again through lost data being pushed with a fresh recency, behind the streams of
//! its priority already waiting (quinn's `retransmit`). What is not: quinn without fairness
//! finishes a partly written stream (its `next` slot) even when a more important stream
//! arrives meanwhile; here a more important stream preempts at the next chunk, which is
//! what strict priority means and what CATS's Conductor does between queues (CATS §II-C).
//! With fairness on, quinn would round-robin equal priorities; that is
//! [`super::round_robin::RoundRobin`]'s rule.
//!
//! Less important streams starve while more important ones have data: that is the point.

use std::collections::{BTreeMap, VecDeque};

use super::{MsgChunk, Requeued, StreamMessage, StreamScheduler, StreamTable};
use crate::path::sched::PathId;

/// Strict priority by CATS priority, FIFO within a priority.
#[derive(Debug, Default)]
pub struct StrictPriority {
    table: StreamTable,
    /// Per priority (0 most urgent), ids of the messages with bytes queued in the order they
    /// became ready. Empty levels are removed.
    ready: BTreeMap<u8, VecDeque<u32>>,
}

impl StrictPriority {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, priority: u8, id: u32) {
        self.ready.entry(priority).or_default().push_back(id);
    }

    /// The priority of `chunk`'s message (a chunk of an unknown message carries it too).
    fn priority_of(&self, chunk: MsgChunk) -> u8 {
        self.table.get(chunk.msg_id).map_or(chunk.priority(), |m| m.msg.priority)
    }
}

impl StreamScheduler for StrictPriority {
    fn name(&self) -> &'static str {
        "prio"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        if self.table.insert(msg) {
            self.push(msg.msg.priority, msg.msg.id);
        }
    }

    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        if self.table.requeue(chunk) == Requeued::BecameReady {
            self.push(self.priority_of(chunk), chunk.msg_id);
        }
    }

    /// The tail of the chunk just taken did not fit: the stream's next data again, as if
    /// never handed out, so a stream the take left dry returns to the head of its priority,
    /// where it was (lost data goes to the back instead).
    fn give_back(&mut self, _now_ns: u64, _path: PathId, chunk: MsgChunk) {
        if self.table.give_back(chunk) == Requeued::BecameReady {
            self.ready.entry(self.priority_of(chunk)).or_default().push_front(chunk.msg_id);
        }
    }

    fn next_chunk(&mut self, _now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        if max_bytes == 0 {
            return None;
        }
        let mut level = self.ready.first_entry()?;
        let &id = level.get().front()?;
        let chunk = self.table.take(id, max_bytes);
        if !self.table.is_ready(id) {
            level.get_mut().pop_front();
            if level.get().is_empty() {
                level.remove();
            }
        }
        chunk
    }

    fn queued_bytes(&self) -> u64 {
        self.table.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain, key, msg, ops, run_ops};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_tail_given_back_keeps_its_stream_at_the_head_of_its_priority() {
        let mut s = StrictPriority::new();
        s.enqueue(0, msg(1, 1000, 2, 0));
        s.enqueue(0, msg(2, 2000, 2, 4));
        let c = s.next_chunk(0, 1000).unwrap();
        assert_eq!(key(c), (1, 0, 1000));
        s.give_back(0, PathId(0), c.at(990, 10));
        assert_eq!(drain(&mut s, 1000), vec![(1, 990, 10), (2, 0, 1000), (2, 1000, 1000)]);
        // Lost data, by contrast, waits behind the streams of its priority (quinn's
        // `retransmit`).
        s.enqueue(0, msg(3, 1000, 2, 8));
        s.enqueue(0, msg(4, 1000, 2, 12));
        let c = s.next_chunk(0, 1000).unwrap();
        s.requeue_lost(0, c.at(990, 10));
        assert_eq!(drain(&mut s, 1000), vec![(4, 0, 1000), (3, 990, 10)]);
    }

    #[test]
    fn lowest_priority_number_first_fifo_within_a_priority() {
        let mut s = StrictPriority::new();
        s.enqueue(0, msg(1, 1500, 4, 0));
        s.enqueue(0, msg(2, 1200, 1, 4));
        s.enqueue(0, msg(3, 1000, 1, 8));
        // P1 first: 2 (written first) whole, then 3; then P4's message 1.
        assert_eq!(drain(&mut s, 1000), vec![(2, 0, 1000), (2, 1000, 200), (3, 0, 1000), (1, 0, 1000), (1, 1000, 500)]);
    }

    #[test]
    fn a_more_important_message_preempts_at_the_next_chunk() {
        let mut s = StrictPriority::new();
        s.enqueue(0, msg(1, 3000, 3, 0));
        assert_eq!(s.next_chunk(0, 1000).map(key), Some((1, 0, 1000)));
        s.enqueue(5, msg(2, 1500, 0, 4));
        assert_eq!(drain(&mut s, 1000), vec![(2, 0, 1000), (2, 1000, 500), (1, 1000, 1000), (1, 2000, 1000)]);
    }

    #[test]
    fn lost_data_is_sent_at_its_priority_and_a_drained_stream_rejoins_the_back_of_its_level() {
        let mut s = StrictPriority::new();
        s.enqueue(0, msg(1, 1000, 2, 0));
        s.enqueue(0, msg(2, 2000, 2, 4));
        s.enqueue(0, msg(3, 2000, 4, 8));
        let a = s.next_chunk(0, 1000).unwrap(); // (1, 0, 1000): message 1 done
        let b = s.next_chunk(0, 1000).unwrap(); // (2, 0, 1000)
        assert_eq!((key(a), key(b)), ((1, 0, 1000), (2, 0, 1000)));
        // Message 1 rejoins P2 behind message 2; message 2's loss goes ahead of its new data.
        s.requeue_lost(0, a);
        s.requeue_lost(0, b);
        assert_eq!(
            drain(&mut s, 1000),
            vec![(2, 0, 1000), (2, 1000, 1000), (1, 0, 1000), (3, 0, 1000), (3, 1000, 1000)]
        );
    }

    proptest! {
        /// The byte contract, and strict priority: every chunk comes from a message of the
        /// most important priority that had bytes queued when it was taken.
        #[test]
        fn invariants_and_strict_order(ops in ops()) {
            let mut s = StrictPriority::new();
            let log = run_ops(&mut s, &ops)?;
            for (c, ready) in &log.chunks {
                let best = ready.iter().map(|&i| log.msgs[i as usize].msg.priority).min();
                prop_assert_eq!(Some(c.priority()), best, "chunk {:?} while {:?} were ready", c, ready);
            }
        }
    }
}
