//! Strict priority over one byte stream: the most urgent message first, write order within a
//! priority; a segment may carry the end of one message and the start of the next. This is
//! what an HTTP/2 server that honours Chrome's priorities sends (Chrome's exclusive
//! dependency chain, RFC 9113 §5.3 in its RFC 7540 form: a stream depends on the one before
//! it at the same or a more urgent priority), with no fairness between priorities (CATS
//! §II-E's debt rule is what adds it).

use std::collections::VecDeque;

use super::{Chunks, MessageMeta, SendScheduler};

/// Priorities kept apart; a larger priority value is served with the last one.
const LEVELS: usize = 8;

/// One FIFO per priority, the lowest number first.
#[derive(Debug, Default)]
pub struct StrictPriority {
    queues: [VecDeque<(MessageMeta, u64)>; LEVELS],
    queued_bytes: u64,
}

impl StrictPriority {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SendScheduler for StrictPriority {
    fn name(&self) -> &'static str {
        "prio"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: MessageMeta) {
        self.queued_bytes += msg.len_bytes;
        self.queues[usize::from(msg.priority).min(LEVELS - 1)].push_back((msg, 0));
    }

    fn next_segment(&mut self, _now_ns: u64, max_bytes: u32) -> Chunks {
        let mut out = Chunks::new();
        let mut room = max_bytes as u64;
        // The most urgent queue first; a segment continues into the next one when it empties.
        for q in self.queues.iter_mut() {
            if room == 0 {
                break;
            }
            self.queued_bytes -= super::fifo::drain_front(q, &mut room, &mut out);
        }
        out
    }

    fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_most_urgent_first_then_write_order() {
        let mut s = StrictPriority::new();
        s.enqueue(0, MessageMeta { id: 1, len_bytes: 1000, priority: 3 });
        s.enqueue(0, MessageMeta { id: 2, len_bytes: 700, priority: 1 });
        s.enqueue(0, MessageMeta { id: 3, len_bytes: 500, priority: 1 });
        let seg = s.next_segment(0, 1448);
        let got: Vec<_> = seg.iter().map(|c| (c.msg_id, c.msg_offset_bytes, c.len_bytes())).collect();
        assert_eq!(got, [(2, 0, 700), (3, 0, 500), (1, 0, 248)]);
        let seg = s.next_segment(0, 1448);
        assert_eq!((seg[0].msg_id, seg[0].msg_offset_bytes, seg[0].len_bytes()), (1, 248, 752));
        assert_eq!(s.queued_bytes(), 0);
        // A more urgent message written later overtakes what is left of a less urgent one.
        s.enqueue(0, MessageMeta { id: 4, len_bytes: 3000, priority: 4 });
        s.next_segment(0, 1000);
        s.enqueue(0, MessageMeta { id: 5, len_bytes: 100, priority: 0 });
        let seg = s.next_segment(0, 1000);
        assert_eq!((seg[0].msg_id, seg[1].msg_id, seg[1].msg_offset_bytes), (5, 4, 1000));
    }

    proptest! {
        /// Every byte once, each message's bytes in order, and no byte of a message while a
        /// more urgent one had bytes waiting when the segment was cut.
        #[test]
        fn every_byte_once_most_urgent_first(
            msgs in proptest::collection::vec((1u64..5000, 0u8..10), 1..20),
            mss in 1u32..3000,
        ) {
            let mut s = StrictPriority::new();
            for (i, &(l, p)) in msgs.iter().enumerate() {
                s.enqueue(0, MessageMeta { id: i as u32, len_bytes: l, priority: p });
            }
            let mut next = vec![0u64; msgs.len()];
            loop {
                let waiting: Vec<u8> = (0..msgs.len()).filter(|&i| next[i] < msgs[i].0).map(|i| msgs[i].1.min(7)).collect();
                let seg = s.next_segment(0, mss);
                if seg.is_empty() { break; }
                let most_urgent = *waiting.iter().min().unwrap();
                prop_assert_eq!(seg[0].priority().min(7), most_urgent);
                for c in &seg {
                    let id = c.msg_id as usize;
                    prop_assert_eq!(c.msg_offset_bytes, next[id]);
                    next[id] += c.len_bytes() as u64;
                }
            }
            prop_assert_eq!(next, msgs.iter().map(|m| m.0).collect::<Vec<_>>());
            prop_assert_eq!(s.queued_bytes(), 0);
        }
    }
}
