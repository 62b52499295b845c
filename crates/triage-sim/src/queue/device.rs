//! A network device's transmit ring below a queue discipline, as ns-3 models it: a
//! `PointToPointNetDevice` has its own DropTail queue (100 packets by default) and the
//! traffic-control layer moves packets from the queue discipline into it whenever it has
//! room (ns-3 3.37 without byte queue limits). The discipline (RED, say) therefore sees a
//! backlog only once the ring is full. Used to compare with ns-3 programs that keep the
//! default device queue, such as the EECN reference `eecn_dumbbell`.
//!
//! Counters are the discipline's (drops, marks and sojourn in the discipline), as ns-3's
//! `QueueDisc::GetStats` reports them; the backlog includes the ring. The ring is therefore
//! a plain FIFO with a byte count rather than a [`super::Backlog`], which would keep
//! counters nobody reads.

use std::collections::VecDeque;

use super::{QueueDiscipline, QueueStats, SimPacket, Verdict};

/// A queue discipline feeding a device ring of `ring_packets`.
#[derive(Debug)]
pub struct DeviceRing {
    inner: Box<dyn QueueDiscipline>,
    ring: VecDeque<SimPacket>,
    ring_bytes: u64,
    ring_packets: u64,
}

impl DeviceRing {
    /// Wraps `inner` with a ring of `ring_packets`.
    pub fn new(inner: Box<dyn QueueDiscipline>, ring_packets: u64) -> Self {
        Self { inner, ring: VecDeque::new(), ring_bytes: 0, ring_packets: ring_packets.max(1) }
    }

    fn refill(&mut self, now_ns: u64) {
        while (self.ring.len() as u64) < self.ring_packets {
            let Some(p) = self.inner.dequeue(now_ns) else { break };
            self.ring_bytes += p.wire_bytes();
            self.ring.push_back(p);
        }
    }
}

impl QueueDiscipline for DeviceRing {
    fn enqueue(&mut self, now_ns: u64, pkt: SimPacket) -> Verdict {
        let v = self.inner.enqueue(now_ns, pkt);
        self.refill(now_ns);
        v
    }

    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket> {
        let p = self.ring.pop_front();
        if let Some(p) = &p {
            self.ring_bytes -= p.wire_bytes();
        }
        self.refill(now_ns);
        p
    }

    fn len_packets(&self) -> u64 {
        self.ring.len() as u64 + self.inner.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.ring_bytes + self.inner.len_bytes()
    }

    fn stats(&self) -> &QueueStats {
        self.inner.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{DropTail, Limit};
    use triage_core::wire::Packet;

    #[test]
    fn ring_fills_first() {
        let mut q = DeviceRing::new(Box::new(DropTail::new(Limit::Packets(2))), 3);
        let p = || SimPacket::new(Packet { payload_bytes: 1448, ..Default::default() }, 0);
        for _ in 0..5 {
            assert_eq!(q.enqueue(0, p()), Verdict::Enqueued);
        }
        assert_eq!(q.inner.len_packets(), 2);
        assert_eq!(q.enqueue(0, p()), Verdict::Dropped, "ring 3 + discipline 2");
        assert!(q.dequeue(1).is_some());
        assert_eq!(q.len_packets(), 4);
        assert_eq!(q.inner.len_packets(), 1, "the ring took one from the discipline");
    }
}
