//! The FIFO and counters every queue discipline keeps: packets in arrival order, their
//! wire bytes, and the [`QueueStats`] a link reports. A discipline decides what to do with
//! an arrival and calls [`Backlog::record_drop`], [`Backlog::record_mark`] and
//! [`Backlog::push`] to account for it; [`Backlog::pop`] serves the head and adds its
//! sojourn time.

use std::collections::VecDeque;

use super::{Carried, QueueStats, SimPacket, Verdict};

/// A FIFO of packets with its byte count and queue counters.
#[derive(Debug, Default)]
pub struct Backlog {
    q: VecDeque<SimPacket>,
    bytes: u64,
    stats: QueueStats,
    /// The box of the last packet dropped, until [`Backlog::take_dropped`] takes it. One slot
    /// (a pointer: a link's hot lines have no room for more): the simulator reclaims after
    /// every arrival, and an arrival drops one packet at most; a discipline used on its
    /// own frees the earlier box.
    spare: Option<Box<Carried>>,
}

impl Backlog {
    /// An empty backlog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an accepted packet at `now_ns` (its sojourn starts here) and counts it,
    /// tracking the largest backlog.
    pub fn push(&mut self, now_ns: u64, mut pkt: SimPacket) {
        pkt.pkt.enqueued_ns = now_ns;
        self.bytes += pkt.wire_bytes();
        self.q.push_back(pkt);
        self.stats.enqueued_packets += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64);
        self.stats.max_len_bytes = self.stats.max_len_bytes.max(self.bytes);
    }

    /// Counts a packet that arrives at `now_ns` at an empty backlog and leaves at once,
    /// exactly as [`Self::push`] then [`Self::pop`] would (a sojourn of 0), without queueing
    /// it. Call on an empty backlog only (a packet behind others would overtake them).
    pub fn pass_through(&mut self, now_ns: u64, mut pkt: SimPacket) -> SimPacket {
        debug_assert!(self.q.is_empty());
        pkt.pkt.enqueued_ns = now_ns;
        self.stats.enqueued_packets += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64 + 1);
        self.stats.max_len_bytes = self.stats.max_len_bytes.max(self.bytes + pkt.wire_bytes());
        self.stats.dequeued_packets += 1;
        pkt
    }

    /// Removes the head at `now_ns`, counting it and its sojourn time.
    pub fn pop(&mut self, now_ns: u64) -> Option<SimPacket> {
        let p = self.q.pop_front()?;
        // The packet behind it leaves next, a serialization time from now: its box (out of
        // the cache behind a long queue) is asked for now (a hint, see triage_core::prefetch).
        if let Some(next) = self.q.front() {
            triage_core::prefetch::value(&*next.pkt, usize::MAX);
        }
        self.bytes -= p.wire_bytes();
        self.stats.dequeued_packets += 1;
        self.stats.sojourn_total_ns += now_ns - p.pkt.enqueued_ns;
        Some(p)
    }

    /// Counts the arrival `pkt` dropped and keeps its box for reuse ([`Self::take_dropped`]);
    /// returns [`Verdict::Dropped`] for the discipline to hand back.
    pub fn record_drop(&mut self, pkt: SimPacket) -> Verdict {
        self.stats.dropped_packets += 1;
        self.stats.dropped_bytes += pkt.wire_bytes();
        self.spare = Some(pkt.pkt);
        Verdict::Dropped
    }

    /// The box of the packet dropped last, if not yet taken: a lossy bottleneck drops a
    /// packet in ten, and the simulator builds later packets in their boxes instead of
    /// allocating new ones.
    #[inline]
    pub fn take_dropped(&mut self) -> Option<Box<Carried>> {
        self.spare.take()
    }

    /// Counts an arrival of `size` wire bytes marked (its ECN field changed by the discipline).
    pub fn record_mark(&mut self, size: u64) {
        self.stats.marked_packets += 1;
        self.stats.marked_bytes += size;
    }

    /// The most recently accepted packet still queued.
    pub fn back(&self) -> Option<&SimPacket> {
        self.q.back()
    }

    /// Backlog in packets.
    pub fn len_packets(&self) -> u64 {
        self.q.len() as u64
    }

    /// Backlog in wire bytes.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Counters.
    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use triage_core::wire::Packet;

    fn pkt(payload: u32) -> SimPacket {
        SimPacket::new(Packet { payload_bytes: payload, ..Default::default() }, 0)
    }

    #[test]
    fn push_pop_drop_and_mark_count() {
        let mut b = Backlog::new();
        b.push(5, pkt(1448));
        b.push(6, pkt(0));
        assert_eq!((b.len_packets(), b.len_bytes()), (2, 1552));
        assert_eq!(b.back().unwrap().enqueued_ns(), 6);
        assert_eq!(b.record_drop(pkt(1448)), Verdict::Dropped);
        b.record_mark(52);
        assert_eq!(b.pop(10).unwrap().pkt.payload_bytes, 1448);
        assert_eq!(b.len_bytes(), 52);
        let expect = QueueStats {
            enqueued_packets: 2,
            dropped_packets: 1,
            dropped_bytes: 1500,
            marked_packets: 1,
            marked_bytes: 52,
            max_len_packets: 2,
            max_len_bytes: 1552,
            sojourn_total_ns: 5,
            dequeued_packets: 1,
        };
        assert_eq!(b.stats(), &expect);
    }

    #[test]
    fn a_dropped_packet_s_box_is_handed_back_once() {
        let mut b = Backlog::new();
        let p = pkt(1448);
        let addr = &*p.pkt as *const Carried;
        b.record_drop(p);
        let taken = b.take_dropped().expect("the dropped packet's box");
        assert!(std::ptr::eq(&*taken, addr), "the very box of the dropped packet");
        assert!(b.take_dropped().is_none(), "handed back once");
        // Two drops between takes: the last one's box is kept, and both are counted.
        b.record_drop(pkt(100));
        let last = pkt(200);
        let addr = &*last.pkt as *const Carried;
        b.record_drop(last);
        let taken = b.take_dropped().expect("the last dropped packet's box");
        assert!(std::ptr::eq(&*taken, addr));
        assert!(b.take_dropped().is_none());
        assert_eq!(b.stats().dropped_packets, 3, "every drop counted");
    }
}
