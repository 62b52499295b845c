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

use super::{Carried, Queue, QueueDiscipline, QueueStats, SimPacket, Verdict};

/// A queue discipline feeding a device ring of `ring_packets`.
#[derive(Debug)]
pub struct DeviceRing {
    inner: Queue,
    ring: VecDeque<SimPacket>,
    ring_bytes: u64,
    ring_packets: u64,
}

impl DeviceRing {
    /// Wraps `inner` with a ring of `ring_packets`.
    pub fn new(inner: Queue, ring_packets: u64) -> Self {
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
        if (self.ring.len() as u64) < self.ring_packets {
            // The ring has room, so the discipline is empty (a refill leaves it so): the
            // packet goes through it into the ring at once, without being queued in it; the
            // refill after it then asks the discipline again, as it did.
            let marked = self.inner.stats().marked_packets;
            let Some(p) = self.inner.enqueue_and_dequeue(now_ns, pkt) else {
                return Verdict::Dropped;
            };
            self.ring_bytes += p.wire_bytes();
            self.ring.push_back(p);
            self.refill(now_ns);
            return if self.inner.stats().marked_packets > marked { Verdict::Marked } else { Verdict::Enqueued };
        }
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

    fn take_dropped(&mut self) -> Option<Box<Carried>> {
        self.inner.take_dropped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{DropTail, Limit};
    use triage_core::wire::Packet;

    /// The ring as it was written before its pass-through: every arrival into the
    /// discipline, then a refill.
    struct Reference {
        inner: Queue,
        ring: VecDeque<SimPacket>,
        ring_packets: u64,
    }

    impl Reference {
        fn refill(&mut self, now_ns: u64) {
            while (self.ring.len() as u64) < self.ring_packets {
                let Some(p) = self.inner.dequeue(now_ns) else { break };
                self.ring.push_back(p);
            }
        }
    }

    proptest::proptest! {
        /// Arrivals and departures at random times, through DropTail, RED (ECN on, a short
        /// average so that it marks and drops) or VCP (which marks packets that pass through
        /// an empty queue): the same verdicts, packets out, marks,
        /// backlog and counters as the reference.
        #[test]
        fn passing_through_equals_enqueue_then_refill(
            kind in 0u8..3,
            ring_packets in 1u64..6,
            ops in proptest::collection::vec((0u8..3, 0u64..3_000_000, 0u32..1449), 1..300),
        ) {
            use rand::SeedableRng;
            let build = || -> Queue {
                if kind == 2 {
                    // VCP marks whatever its backlog, by the load it measures (here overloaded).
                    let cfg = crate::queue::VcpRouterConfig { limit_packets: 8, ..Default::default() };
                    crate::queue::Queue::Other(Box::new(crate::queue::VcpRouter::new(cfg, 100_000)))
                } else if kind == 1 {
                    let cfg = crate::queue::RedConfig {
                        limit_packets: 8, min_th: 1.0, max_th: 3.0, qw: 0.5, ecn: true, ..Default::default()
                    };
                    crate::queue::Queue::Red(Box::new(crate::queue::Red::new(cfg, rand_chacha::ChaCha8Rng::seed_from_u64(7))))
                } else {
                    DropTail::new(Limit::Packets(4)).into()
                }
            };
            let mut q = DeviceRing::new(build(), ring_packets);
            let mut r = Reference { inner: build(), ring: VecDeque::new(), ring_packets };
            let mut now = 0;
            for (i, (op, dt, payload)) in ops.into_iter().enumerate() {
                now += dt;
                if op < 2 {
                    let ecn = if op == 0 { triage_core::wire::Ecn::Ect1 } else { triage_core::wire::Ecn::NotEct };
                    let p = || SimPacket::new(Packet { payload_bytes: payload, seq: i as u64, ecn, ..Default::default() }, 0);
                    let v = r.inner.enqueue(now, p());
                    r.refill(now);
                    proptest::prop_assert_eq!(q.enqueue(now, p()), v);
                } else {
                    let want = r.ring.pop_front().map(|p| (p.pkt.seq, p.pkt.ecn, p.enqueued_ns()));
                    r.refill(now);
                    let got = q.dequeue(now).map(|p| (p.pkt.seq, p.pkt.ecn, p.enqueued_ns()));
                    proptest::prop_assert_eq!(got, want);
                }
                proptest::prop_assert_eq!(q.len_packets(), r.ring.len() as u64 + r.inner.len_packets());
                proptest::prop_assert_eq!(q.stats(), r.inner.stats());
            }
        }
    }

    #[test]
    fn ring_fills_first() {
        let mut q = DeviceRing::new(DropTail::new(Limit::Packets(2)).into(), 3);
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
