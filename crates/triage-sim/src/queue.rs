//! Router queue disciplines: DropTail (here), RED with optional ECN marking
//! ([`red`]), the EECN marker ([`eecn_marker`], EECN §4.3) and the VCP load-factor router
//! ([`vcp_router`]). [`QueueKind`] names one in a topology and builds it. Each keeps its
//! packets and counters in a [`Backlog`] and only decides what happens to an arrival.

pub mod backlog;
pub mod device;
pub mod eecn_marker;
pub mod red;
pub mod vcp_router;

pub use backlog::Backlog;
pub use eecn_marker::{EecnMarker, EecnMarkerConfig};
pub use red::{Red, RedConfig};
pub use vcp_router::{VcpRouter, VcpRouterConfig};

use serde::{Deserialize, Serialize};
use triage_core::wire::Packet;

/// A packet's box: the packet and what the simulator tracks of it on its way. It reads as
/// the packet (`Deref`).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct Carried {
    /// When it entered the current queue (for sojourn time).
    pub enqueued_ns: u64,
    /// When the sending host handed it to the network (for one-way delay).
    pub origin_ns: u64,
    /// The packet.
    pub pkt: Packet,
}

impl std::ops::Deref for Carried {
    type Target = Packet;
    #[inline]
    fn deref(&self) -> &Packet {
        &self.pkt
    }
}

impl std::ops::DerefMut for Carried {
    #[inline]
    fn deref_mut(&mut self) -> &mut Packet {
        &mut self.pkt
    }
}

/// A packet waiting in or moving through the network: 16 bytes, so that it is passed and
/// returned in two registers. A larger one (it was 32 bytes, with the two times now in the
/// box) went through memory at every call and return on the packet's path, written in
/// 8-byte pieces and read back in 16-byte ones: a store-forwarding stall each time.
#[derive(Clone, Debug)]
pub struct SimPacket {
    /// The packet, boxed: a queued packet is moved through queues, links and events many
    /// times per hop, and moving a pointer is cheaper than moving the whole header.
    pub pkt: Box<Carried>,
    /// [`Packet::wire_bytes`] (low 32 bits), computed once when the packet leaves its host:
    /// queues and links ask for it several times per hop, and nothing in the network
    /// changes a packet's size (queues rewrite only its ECN field); and the destination
    /// node (high 32 bits), beside the box, so that a router routes the packet without
    /// reading the boxed header (a cache miss per hop when many packets are in flight).
    /// One integer, not two: a value of two fields (a pointer and an integer) is passed
    /// and returned in registers, one of three fields through memory.
    meta: u64,
}

impl SimPacket {
    /// A packet leaving its host at `now_ns`.
    pub fn new(pkt: Packet, now_ns: u64) -> Self {
        Self::from_box(Box::new(Carried { pkt, ..Default::default() }), now_ns)
    }

    /// A packet leaving its host at `now_ns`, already in its box: the simulator recycles
    /// the boxes of delivered packets and the connection writes the next packet into one,
    /// so that a packet-hop neither allocates nor copies the packet in steady state.
    pub fn from_box(mut pkt: Box<Carried>, now_ns: u64) -> Self {
        let meta = u64::from(pkt.wire_bytes()) | (u64::from(pkt.dst.node) << 32);
        pkt.enqueued_ns = now_ns;
        pkt.origin_ns = now_ns;
        Self { pkt, meta }
    }

    /// When it entered the current queue.
    #[inline]
    pub fn enqueued_ns(&self) -> u64 {
        self.pkt.enqueued_ns
    }

    /// When the sending host handed it to the network.
    #[inline]
    pub fn origin_ns(&self) -> u64 {
        self.pkt.origin_ns
    }

    /// The node the packet is addressed to (`pkt.dst.node`).
    #[inline]
    pub fn dst_node(&self) -> u32 {
        (self.meta >> 32) as u32
    }

    /// Bytes the packet occupies on the wire at the IP layer ([`Packet::wire_bytes`]).
    #[inline]
    pub fn wire_bytes(&self) -> u64 {
        self.meta & u64::from(u32::MAX)
    }
}

/// What a queue did with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queued unchanged.
    Enqueued,
    /// Queued with its ECN field changed.
    Marked,
    /// Dropped.
    Dropped,
}

/// Counters every queue keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueStats {
    /// Packets accepted.
    pub enqueued_packets: u64,
    /// Packets dropped on arrival.
    pub dropped_packets: u64,
    /// Bytes dropped on arrival.
    pub dropped_bytes: u64,
    /// Packets marked.
    pub marked_packets: u64,
    /// Bytes marked.
    pub marked_bytes: u64,
    /// Largest backlog seen, in packets.
    pub max_len_packets: u64,
    /// Largest backlog seen, in bytes.
    pub max_len_bytes: u64,
    /// Sum of sojourn times of dequeued packets (for the mean).
    pub sojourn_total_ns: u64,
    /// Packets dequeued.
    pub dequeued_packets: u64,
}

/// A queue discipline: decides on arrival, serves in its own order.
pub trait QueueDiscipline: std::fmt::Debug + Send {
    /// A packet arrives at `now_ns`.
    fn enqueue(&mut self, now_ns: u64, pkt: SimPacket) -> Verdict;
    /// The next packet to transmit.
    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket>;
    /// A packet arrives at `now_ns` at an idle link, whose queue is empty, and the link
    /// takes the next packet at once: [`enqueue`](Self::enqueue) then
    /// [`dequeue`](Self::dequeue) (the default), which a discipline may do without queueing
    /// the packet, counters unchanged (DropTail does: most packets a lightly loaded link
    /// carries find it idle). `None` when it was dropped (or nothing is to be sent).
    fn enqueue_and_dequeue(&mut self, now_ns: u64, pkt: SimPacket) -> Option<SimPacket> {
        if self.enqueue(now_ns, pkt) == Verdict::Dropped {
            return None;
        }
        self.dequeue(now_ns)
    }
    /// Backlog in packets.
    fn len_packets(&self) -> u64;
    /// Backlog in bytes.
    fn len_bytes(&self) -> u64;
    /// Counters.
    fn stats(&self) -> &QueueStats;
    /// The box of the packet dropped last, if not taken yet, for the simulator to build a
    /// later packet in (a discipline that keeps none returns `None`: its drops are freed).
    fn take_dropped(&mut self) -> Option<Box<Carried>> {
        None
    }
}

/// A link's queue: the disciplines on every packet's path (DropTail, RED, a device ring)
/// called directly, so that their code is inlined into the link's and a packet they hand
/// back stays in registers; the others through the trait.
#[derive(Debug)]
pub enum Queue {
    /// Tail drop.
    DropTail(DropTail),
    /// RED.
    Red(Box<Red>),
    /// A discipline feeding a device ring.
    Ring(Box<device::DeviceRing>),
    /// Any other discipline.
    Other(Box<dyn QueueDiscipline>),
}

impl From<Box<dyn QueueDiscipline>> for Queue {
    fn from(q: Box<dyn QueueDiscipline>) -> Self {
        Queue::Other(q)
    }
}

impl From<DropTail> for Queue {
    fn from(q: DropTail) -> Self {
        Queue::DropTail(q)
    }
}

/// `$q` as each kind of queue it may be.
macro_rules! each_queue {
    ($self:expr, $q:ident => $e:expr) => {
        match $self {
            Queue::DropTail($q) => $e,
            Queue::Red($q) => $e,
            Queue::Ring($q) => $e,
            Queue::Other($q) => $e,
        }
    };
}

impl QueueDiscipline for Queue {
    #[inline(always)]
    fn enqueue(&mut self, now_ns: u64, pkt: SimPacket) -> Verdict {
        each_queue!(self, q => q.enqueue(now_ns, pkt))
    }

    #[inline(always)]
    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket> {
        each_queue!(self, q => q.dequeue(now_ns))
    }

    #[inline(always)]
    fn enqueue_and_dequeue(&mut self, now_ns: u64, pkt: SimPacket) -> Option<SimPacket> {
        each_queue!(self, q => q.enqueue_and_dequeue(now_ns, pkt))
    }

    fn len_packets(&self) -> u64 {
        each_queue!(self, q => q.len_packets())
    }

    fn len_bytes(&self) -> u64 {
        each_queue!(self, q => q.len_bytes())
    }

    fn stats(&self) -> &QueueStats {
        each_queue!(self, q => q.stats())
    }

    #[inline(always)]
    fn take_dropped(&mut self) -> Option<Box<Carried>> {
        each_queue!(self, q => q.take_dropped())
    }
}

/// Queue size limit as a scenario states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes.
    Bytes(u64),
}

/// Which discipline a link's queue runs. The queue's size comes from the link's [`Limit`]
/// (RED, EECN and VCP count packets).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum QueueKind {
    /// Tail drop.
    #[default]
    DropTail,
    /// RED (packet mode), marking CE instead of early drops when `ecn` is set.
    Red(RedConfig),
    /// The EECN router of §4.3.
    Eecn(EecnMarkerConfig),
    /// The VCP load-factor router.
    Vcp(VcpRouterConfig),
    /// A discipline feeding a device transmit ring of this many packets (ns-3's
    /// `PointToPointNetDevice` queue; see [`device`]).
    WithDeviceRing(Box<QueueKind>, u64),
}

impl QueueKind {
    /// Builds the queue for a link of `rate_bps` (the VCP router needs it; 0 for a trace
    /// link), with `rng` for RED's early decisions.
    pub fn build(&self, limit: Limit, rate_bps: u64, rng: rand_chacha::ChaCha8Rng) -> Queue {
        let packets = match limit {
            Limit::Packets(n) => n,
            Limit::Bytes(b) => (b / 1500).max(1),
        };
        match self {
            QueueKind::DropTail => Queue::DropTail(DropTail::new(limit)),
            QueueKind::Red(c) => Queue::Red(Box::new(Red::new(RedConfig { limit_packets: packets, ..c.clone() }, rng))),
            QueueKind::Eecn(c) => {
                Queue::Other(Box::new(EecnMarker::new(EecnMarkerConfig { limit_packets: packets, ..c.clone() })))
            }
            QueueKind::Vcp(c) => Queue::Other(Box::new(VcpRouter::new(
                VcpRouterConfig { limit_packets: packets, ..c.clone() },
                rate_bps,
            ))),
            QueueKind::WithDeviceRing(k, ring) => {
                Queue::Ring(Box::new(device::DeviceRing::new(k.build(limit, rate_bps, rng), *ring)))
            }
        }
    }

    /// Short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            QueueKind::DropTail => "droptail",
            QueueKind::Red(c) if c.ecn => "red_ecn",
            QueueKind::Red(_) => "red",
            QueueKind::Eecn(_) => "eecn",
            QueueKind::Vcp(_) => "vcp",
            QueueKind::WithDeviceRing(k, _) => k.name(),
        }
    }
}

/// Tail drop: accept while under the limit, drop arrivals beyond it.
#[derive(Debug)]
pub struct DropTail {
    /// The limit in one word (see [`DropTail::BYTES`]): with the backlog, 128 bytes, which
    /// keeps a link's per-packet part in five lines ([`crate::link::Link`]).
    limit: u64,
    backlog: Backlog,
}

impl DropTail {
    /// The limit's top bit: set for a limit in bytes (the other bits are the number).
    const BYTES: u64 = 1 << 63;

    /// A DropTail queue with the given limit (a limit of 2^63 or more is taken as
    /// 2^63 - 1: no backlog reaches either).
    pub fn new(limit: Limit) -> Self {
        let limit = match limit {
            Limit::Packets(n) => n.min(Self::BYTES - 1),
            Limit::Bytes(b) => b.min(Self::BYTES - 1) | Self::BYTES,
        };
        Self { limit, backlog: Backlog::new() }
    }

    /// The limit as it was given (after the cap of [`Self::new`]), read back from its word.
    #[inline]
    fn decoded_limit(&self) -> Limit {
        let n = self.limit & !Self::BYTES;
        if self.limit & Self::BYTES == 0 {
            Limit::Packets(n)
        } else {
            Limit::Bytes(n)
        }
    }

    /// The largest wire size a packet arriving at the empty queue may have and be accepted
    /// (what the limit allows with no backlog): any under a limit of at
    /// least one packet, the limit under one in bytes; 0 when nothing is accepted.
    pub fn idle_pass_max_bytes(&self) -> u64 {
        match self.decoded_limit() {
            Limit::Packets(0) => 0,
            Limit::Packets(_) => u64::MAX,
            Limit::Bytes(n) => n,
        }
    }

    /// A packet of `size` wire bytes arriving now would not fit under the limit.
    #[inline]
    fn overflows(&self, size: u64) -> bool {
        match self.decoded_limit() {
            Limit::Packets(n) => self.backlog.len_packets() >= n,
            Limit::Bytes(n) => self.backlog.len_bytes() + size > n,
        }
    }
}

impl QueueDiscipline for DropTail {
    fn enqueue(&mut self, now_ns: u64, pkt: SimPacket) -> Verdict {
        if self.overflows(pkt.wire_bytes()) {
            return self.backlog.record_drop(pkt);
        }
        self.backlog.push(now_ns, pkt);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now_ns: u64) -> Option<SimPacket> {
        self.backlog.pop(now_ns)
    }

    fn enqueue_and_dequeue(&mut self, now_ns: u64, pkt: SimPacket) -> Option<SimPacket> {
        if self.backlog.len_packets() > 0 {
            // Not an empty queue: the head leaves, not this packet.
            if self.enqueue(now_ns, pkt) == Verdict::Dropped {
                return None;
            }
            return self.backlog.pop(now_ns);
        }
        if self.overflows(pkt.wire_bytes()) {
            self.backlog.record_drop(pkt);
            return None;
        }
        Some(self.backlog.pass_through(now_ns, pkt))
    }

    fn len_packets(&self) -> u64 {
        self.backlog.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.backlog.len_bytes()
    }

    fn stats(&self) -> &QueueStats {
        self.backlog.stats()
    }

    #[inline(always)]
    fn take_dropped(&mut self) -> Option<Box<Carried>> {
        self.backlog.take_dropped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(payload: u32) -> SimPacket {
        SimPacket::new(Packet { payload_bytes: payload, ..Default::default() }, 0)
    }

    #[test]
    fn drops_beyond_packet_limit_and_counts() {
        let mut q = DropTail::new(Limit::Packets(2));
        assert_eq!(q.enqueue(0, pkt(1448)), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, pkt(1448)), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, pkt(1448)), Verdict::Dropped);
        assert_eq!(q.stats().dropped_bytes, 1500);
        assert_eq!(q.len_bytes(), 3000);
        let p = q.dequeue(7).unwrap();
        assert_eq!(p.pkt.payload_bytes, 1448);
        assert_eq!(q.stats().sojourn_total_ns, 7);
        assert_eq!(q.enqueue(8, pkt(0)), Verdict::Enqueued);
    }

    #[test]
    fn passing_an_idle_link_counts_as_enqueue_then_dequeue() {
        for limit in [Limit::Packets(2), Limit::Packets(0), Limit::Bytes(1000), Limit::Bytes(3000)] {
            let (mut fast, mut slow) = (DropTail::new(limit), DropTail::new(limit));
            for (t, payload) in [(5, 1448), (9, 0), (12, 1448)] {
                let a = fast.enqueue_and_dequeue(t, pkt(payload)).map(|p| (p.pkt.payload_bytes, p.enqueued_ns()));
                let b = (slow.enqueue(t, pkt(payload)) != Verdict::Dropped)
                    .then(|| slow.dequeue(t))
                    .flatten()
                    .map(|p| (p.pkt.payload_bytes, p.enqueued_ns()));
                assert_eq!(a, b, "{limit:?}");
            }
            assert_eq!(fast.stats(), slow.stats(), "{limit:?}");
            // Behind a queued packet, the head leaves.
            fast.enqueue(20, pkt(1));
            slow.enqueue(20, pkt(1));
            let a = fast.enqueue_and_dequeue(21, pkt(2)).map(|p| p.pkt.payload_bytes);
            slow.enqueue(21, pkt(2));
            assert_eq!(a, slow.dequeue(21).map(|p| p.pkt.payload_bytes));
            assert_eq!(fast.stats(), slow.stats());
        }
    }

    #[test]
    fn byte_limit_counts_wire_bytes() {
        let mut q = DropTail::new(Limit::Bytes(3000));
        assert_eq!(q.enqueue(0, pkt(1448)), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, pkt(1448)), Verdict::Enqueued);
        assert_eq!(q.enqueue(0, pkt(0)), Verdict::Dropped, "52 more bytes exceed 3000");
    }
}
