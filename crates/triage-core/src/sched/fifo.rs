//! FIFO: the byte stream in write order, as a plain TCP socket buffer does.

use std::collections::VecDeque;

use super::{Chunks, MessageMeta, MsgChunk, SendScheduler};

/// Everything in the send buffer in write order; a segment may span message boundaries,
/// exactly as bytes written back to back into one TCP socket.
#[derive(Debug, Default)]
pub struct Fifo {
    queue: VecDeque<(MessageMeta, u64)>,
    queued_bytes: u64,
}

impl Fifo {
    /// An empty FIFO.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SendScheduler for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn enqueue(&mut self, _now_ns: u64, msg: MessageMeta) {
        self.queued_bytes += msg.len_bytes;
        self.queue.push_back((msg, 0));
    }

    fn next_segment(&mut self, _now_ns: u64, max_bytes: u32) -> Chunks {
        let mut out = Chunks::new();
        let mut room = max_bytes as u64;
        self.queued_bytes -= drain_front(&mut self.queue, &mut room, &mut out);
        out
    }

    fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
}

/// Moves bytes from the front of `queue` (messages in order, each with the bytes already
/// sent) into `out` while `room` lasts, a chunk per message touched; returns the bytes taken.
/// Finished messages leave the queue.
#[inline]
pub(crate) fn drain_front(queue: &mut VecDeque<(MessageMeta, u64)>, room: &mut u64, out: &mut Chunks) -> u64 {
    let mut taken = 0;
    while *room > 0 {
        let Some((msg, sent)) = queue.front_mut() else { break };
        let take = (msg.len_bytes - *sent).min(*room);
        out.push(MsgChunk::new(msg.id, *sent, take as u32, msg.len_bytes, msg.priority));
        *sent += take;
        *room -= take;
        taken += take;
        if *sent == msg.len_bytes {
            queue.pop_front();
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn segments_span_messages_in_write_order() {
        let mut f = Fifo::new();
        f.enqueue(0, MessageMeta { id: 1, len_bytes: 1000, priority: 4 });
        f.enqueue(0, MessageMeta { id: 2, len_bytes: 700, priority: 0 });
        let s = f.next_segment(0, 1448);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].msg_id, s[0].msg_offset_bytes, s[0].len_bytes()), (1, 0, 1000));
        assert_eq!((s[1].msg_id, s[1].msg_offset_bytes, s[1].len_bytes()), (2, 0, 448));
        let s = f.next_segment(0, 1448);
        assert_eq!((s[0].msg_id, s[0].msg_offset_bytes, s[0].len_bytes()), (2, 448, 252));
        assert!(f.next_segment(0, 1448).is_empty());
        assert_eq!(f.queued_bytes(), 0);
    }

    proptest! {
        /// Every byte of every message is handed out exactly once, in write order.
        #[test]
        fn every_byte_once_in_order(lens in proptest::collection::vec(1u64..5000, 1..20), mss in 1u32..3000) {
            let mut f = Fifo::new();
            for (i, &l) in lens.iter().enumerate() {
                f.enqueue(0, MessageMeta { id: i as u32, len_bytes: l, priority: (i % 5) as u8 });
            }
            let mut next = vec![0u64; lens.len()];
            let mut cur = 0usize;
            loop {
                let s = f.next_segment(0, mss);
                if s.is_empty() { break; }
                let total: u64 = s.iter().map(|c| c.len_bytes() as u64).sum();
                prop_assert!(total <= mss as u64);
                for c in &s {
                    let id = c.msg_id as usize;
                    prop_assert!(id >= cur);
                    cur = id;
                    prop_assert_eq!(c.msg_offset_bytes, next[id]);
                    next[id] += c.len_bytes() as u64;
                }
            }
            prop_assert_eq!(next, lens);
        }
    }
}
