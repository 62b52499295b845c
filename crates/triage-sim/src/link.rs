//! Point-to-point links: a queue discipline in front of a serializer (constant rate or a
//! Mahimahi trace), a propagation delay, and a loss process.
//!
//! As in htsim, a link keeps few pending events: the end of the current serialization
//! (`LinkTxDone`) and the arrival of the earliest propagating packet (`LinkDeliver`).
//! Packets in propagation wait in the link's pipe, ordered by arrival time (then by when
//! they left), not in the event queue.
//!
//! A link may also disorder what it carries ([`Disorder`]): each packet gets a random extra
//! delay (jitter) drawn from a seeded stream, so a later packet may overtake an earlier one,
//! and a packet may be delivered twice. Without it the pipe is a FIFO and the events are
//! exactly those of a constant-delay link.

use std::collections::VecDeque;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::loss::{LossModel, LossProcess};
use crate::queue::{Carried, Queue, QueueDiscipline, QueueStats, SimPacket, Verdict};
use crate::trace::TraceCursor;

/// Bytes one Mahimahi delivery opportunity carries (its MTU-sized packet).
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

/// How fast a link serializes. 16 bytes, so that it shares a line with the link's other
/// per-hop fields ([`Link::HOT_BYTES`]): the trace's state is boxed.
#[derive(Debug)]
pub enum RateModel {
    /// A constant rate in bits per second.
    Constant {
        /// Rate.
        rate_bps: u64,
        /// Link-layer framing added to every packet's bytes for its serialization time
        /// (ns-3's point-to-point PPP header: 2), not to the link's byte counters.
        overhead_bytes: u32,
    },
    /// Delivery opportunities from a Mahimahi trace: each opportunity carries up to 1500
    /// bytes; a packet leaves at the opportunity that completes its bytes, and what an
    /// opportunity has left may carry the next packet in the same millisecond, as
    /// Mahimahi's link queue does. Unused opportunities are lost.
    Trace(Box<TraceRate>),
}

impl RateModel {
    /// The rate of a Mahimahi trace, from its first opportunity.
    pub fn trace(cursor: TraceCursor) -> Self {
        RateModel::Trace(Box::new(TraceRate { cursor, credit_bytes: 0, credit_at_ns: 0 }))
    }
}

/// A trace-driven link's serializer: where it is in the trace and what is left of the
/// opportunity it last used.
#[derive(Debug)]
pub struct TraceRate {
    /// Cursor over the trace.
    pub cursor: TraceCursor,
    /// Bytes left in the opportunity at `credit_at_ns`.
    pub credit_bytes: u64,
    /// Time of the partly used opportunity.
    pub credit_at_ns: u64,
}

/// The extra one-way delay each packet of a link gets.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Jitter {
    /// None: every packet takes the link's delay.
    #[default]
    None,
    /// Uniform in `[0, max_ns]`.
    Uniform {
        /// Largest extra delay.
        max_ns: u64,
    },
    /// Exponential with this mean (a long tail, as on Wi-Fi and cellular links), capped at
    /// 20 means.
    Exponential {
        /// Mean extra delay.
        mean_ns: u64,
    },
}

/// How a link disorders the packets it carries: jitter that may reorder them, and
/// duplication. Each direction draws from its own seeded stream.
#[derive(Debug)]
pub struct Disorder {
    /// Extra delay per packet.
    pub jitter: Jitter,
    /// Probability that a packet is delivered twice (the copy draws its own jitter).
    pub duplicate_prob: f64,
    /// The stream.
    pub rng: ChaCha8Rng,
}

impl Disorder {
    fn jitter_ns(&mut self) -> u64 {
        match self.jitter {
            Jitter::None => 0,
            Jitter::Uniform { max_ns } => self.rng.random_range(0..=max_ns),
            Jitter::Exponential { mean_ns } => {
                let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
                let x = -(u.ln()) * mean_ns as f64;
                x.min(20.0 * mean_ns as f64) as u64
            }
        }
    }

    fn duplicate(&mut self) -> bool {
        self.duplicate_prob > 0.0 && self.rng.random_bool(self.duplicate_prob.min(1.0))
    }
}

/// Counters of one link.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    /// Packets serialized onto the link.
    pub tx_packets: u64,
    /// Bytes serialized.
    pub tx_bytes: u64,
    /// Packets lost to the loss model.
    pub lost_packets: u64,
    /// Packets delivered to the far end (duplicates included).
    pub delivered_packets: u64,
    /// Packets the link delivered twice.
    pub duplicated_packets: u64,
    /// Packets that arrived before one that left earlier (overtakers).
    pub reordered_packets: u64,
    /// Packets lost because the link was down ([`Link::set_outage`]).
    pub outage_packets: u64,
}

/// A pipe entry: (arrival time, departure order) and the packet.
type InFlight = ((u64, u64), SimPacket);

/// A link's propagating packets in arrival order, the earliest (`head`) kept in the
/// link's first line and the others (`rest`) in its cold part, with a flag (`more`) on the
/// hot lines telling whether there are any: a link whose delay is shorter than a packet's
/// serialization time (an access link, a LAN hop) never holds more than one, and then a
/// packet's passage reads and writes only the link's two hot lines, not the deque's.
/// Invariants: `head` is `None` only when `rest` is empty; `more` is `!rest.is_empty()`.
struct Pipe<'a> {
    head: &'a mut Option<InFlight>,
    more: &'a mut bool,
    rest: &'a mut VecDeque<InFlight>,
}

impl Pipe<'_> {
    #[inline(always)]
    fn back(&self) -> Option<&InFlight> {
        if *self.more {
            self.rest.back()
        } else {
            self.head.as_ref()
        }
    }

    #[inline(always)]
    fn push_back(&mut self, e: InFlight) {
        if self.head.is_none() {
            *self.head = Some(e);
        } else {
            self.rest.push_back(e);
            *self.more = true;
        }
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<InFlight> {
        let e = self.head.take()?;
        if *self.more {
            *self.head = self.rest.pop_front();
            *self.more = !self.rest.is_empty();
        }
        Some(e)
    }

    /// Inserts `e` at its place by key (keys are unique: the departure order differs).
    fn insert_sorted(&mut self, e: InFlight) {
        if self.head.as_ref().is_some_and(|(k, _)| *k < e.0) {
            let i = self.rest.partition_point(|(k, _)| *k < e.0);
            self.rest.insert(i, e);
        } else if let Some(old) = self.head.replace(e) {
            self.rest.push_front(old);
        } else {
            return;
        }
        *self.more = true;
    }
}

/// What [`Link::enqueue`] did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The link was idle and serializes it at once: its `LinkTxDone` is due at this time.
    Starts(u64),
    /// It waits in the queue.
    Queued,
    /// The queue dropped it (or, at an idle link, a discipline held it back without sending
    /// it at once; none of this crate's does).
    Dropped,
}

impl Arrival {
    /// When the link finishes serializing it, if it started at once.
    pub fn tx_done_ns(self) -> Option<u64> {
        match self {
            Arrival::Starts(t) => Some(t),
            _ => None,
        }
    }
}

/// A one-way link from node `from` to node `to`.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    // What a packet-hop through an idle link with a tail-drop queue reads or writes comes
    // first and together (`repr(C)` keeps this order, `align(64)` starts it on a line):
    // two cache lines, [`Link::HOT_BYTES`]. The packet on the wire, the earliest
    // propagating one, when it is due, the delay; then the extras pointer, the rate, the
    // counters every packet moves (with the queue's share of them for packets that passed
    // an empty tail-drop queue), the receiving node, the pass-through bound, whether the
    // queue holds anything and whether the pipe holds more than its head. With 2,048
    // access links, as in a 512-flow dumbbell, links no longer fit a core's cache and each
    // hop fetches its link's lines: two, where it took three before the pipe's deque, the
    // departure counter and the delivered count left them, and five when every hop went
    // through the queue's own counters and its `VecDeque` to learn that it was empty.
    tx: Option<SimPacket>,
    /// The earliest propagating packet ([`Pipe`]).
    head: Option<InFlight>,
    /// The earliest `LinkDeliver` event scheduled and not yet run ([`NOT_ARMED`]: none).
    armed: u64,
    delay_ns: u64,
    /// The loss model, disorder and outage, when the link has any of them.
    extras: Option<Box<Extras>>,
    rate: RateModel,
    tx_packets: u64,
    tx_bytes: u64,
    /// Packets that arrived at the idle link and passed its empty tail-drop queue at once
    /// (the queue's enqueued and dequeued counts leave them out; [`Link::queue`] adds them).
    passed_packets: u64,
    /// Receiving node.
    pub to: u32,
    /// A tail-drop queue's limit as it applies to a packet arriving at an idle link (its
    /// queue then empty): the largest wire size that passes (`u32::MAX` under a limit in
    /// packets or one of 4 GiB or more: no packet is larger, the limit under a smaller one
    /// in bytes); 0 for any other discipline, or a limit nothing passes, whose arrivals all
    /// go through the queue.
    pass_max_bytes: u32,
    /// The largest of the packets that passed, in wire bytes (the queue's longest backlog
    /// in bytes is at least this).
    passed_max_bytes: u32,
    /// The queue may hold packets: always for disciplines other than tail drop (they
    /// decide for themselves when a dequeue finds nothing, RED's idle time starts there);
    /// for tail drop, exactly whether its backlog is not empty, so that the end of a
    /// transmission does not read the queue's lines to find it empty.
    queued: bool,
    /// The pipe holds packets after `head` (in `rest`).
    more: bool,
    /// The queue, from a line's start (two lines of its own, read when the link is busy).
    queue: Queue,
    /// The propagating packets after `head`, in arrival order.
    rest: VecDeque<InFlight>,
    /// Sending node.
    pub from: u32,
    /// The counters of `extras`' losses and disorder (zero without them).
    rare: RareStats,
    /// Name for reports, e.g. "r1->r2".
    pub name: String,
}

/// [`Link::armed`] when no `LinkDeliver` event is scheduled. No packet arrives then: an
/// arrival time saturates at `u64::MAX` only past any simulated time.
const NOT_ARMED: u64 = u64::MAX;

/// A link's queue as reports see it: its backlog and counters, with the packets that passed
/// it empty at an idle link (which the link counts itself) added in.
pub struct LinkQueue<'a> {
    link: &'a Link,
}

impl LinkQueue<'_> {
    /// Counters, the link's pass-throughs included: each was enqueued and dequeued at once,
    /// with a sojourn of 0, and made the backlog one packet of its size long.
    pub fn stats(&self) -> QueueStats {
        let mut s = self.link.queue.stats().clone();
        let passed = self.link.passed_packets;
        if passed > 0 {
            s.enqueued_packets += passed;
            s.dequeued_packets += passed;
            s.max_len_packets = s.max_len_packets.max(1);
            s.max_len_bytes = s.max_len_bytes.max(u64::from(self.link.passed_max_bytes));
        }
        s
    }

    /// Backlog in packets.
    pub fn len_packets(&self) -> u64 {
        self.link.queue.len_packets()
    }

    /// Backlog in bytes.
    pub fn len_bytes(&self) -> u64 {
        self.link.queue.len_bytes()
    }
}

/// What only some links have, in one box so that a packet-hop through any other link
/// tests one pointer: a loss model (with its random stream), disorder (jitter,
/// duplication, with theirs) and an outage.
#[derive(Debug)]
struct Extras {
    /// The link is down (loses everything) from the first time until the second.
    outage: Option<(u64, u64)>,
    disorder: Option<Disorder>,
    /// `None` for a link without a loss model (`LossModel::None`): it draws nothing.
    loss: Option<LossProcess>,
    /// The box of the last packet lost or cut off by the outage, until [`Link::take_lost`]
    /// takes it (the simulator takes it after every departure, which loses one at most).
    spare: Option<Box<Carried>>,
    /// The latest departure order delivered so far, for the reordering count: kept here
    /// because only disorder lets a packet overtake one that left before it.
    last_delivered: Option<u64>,
    /// Departure counter: the pipe's tie-break between packets due at the same time and
    /// the order the reordering count compares. Only disorder makes either matter, so a
    /// link without extras gives every packet the order 0 (its pipe is a FIFO).
    departures: u64,
}

/// [`LinkStats`]' counters that only losses, an outage and disorder move.
#[derive(Clone, Copy, Debug, Default)]
struct RareStats {
    lost_packets: u64,
    duplicated_packets: u64,
    reordered_packets: u64,
    outage_packets: u64,
}

impl Link {
    /// A link.
    pub fn new(
        name: String,
        from: u32,
        to: u32,
        rate: RateModel,
        delay_ns: u64,
        loss: LossProcess,
        queue: Queue,
    ) -> Self {
        // Tail drop starts empty; any other discipline is always asked.
        let (pass_max_bytes, queued) = match &queue {
            // No packet is larger than u32::MAX wire bytes, so a larger bound passes the
            // same packets.
            Queue::DropTail(q) => (u32::try_from(q.idle_pass_max_bytes()).unwrap_or(u32::MAX), false),
            _ => (0, true),
        };
        let mut link = Self {
            name,
            from,
            to,
            rate,
            delay_ns,
            queue,
            tx: None,
            head: None,
            more: false,
            rest: VecDeque::new(),
            armed: NOT_ARMED,
            pass_max_bytes,
            queued,
            passed_packets: 0,
            passed_max_bytes: 0,
            extras: None,
            tx_packets: 0,
            tx_bytes: 0,
            rare: RareStats::default(),
        };
        if *loss.model() != LossModel::None {
            link.extras_mut().loss = Some(loss);
        }
        link
    }

    fn extras_mut(&mut self) -> &mut Extras {
        self.extras.get_or_insert_with(|| {
            Box::new(Extras {
                outage: None,
                disorder: None,
                loss: None,
                spare: None,
                last_delivered: None,
                departures: 0,
            })
        })
    }

    /// The same link, disordering what it carries (jitter, duplication).
    pub fn with_disorder(mut self, disorder: Disorder) -> Self {
        let off = disorder.jitter == Jitter::None && disorder.duplicate_prob <= 0.0;
        if !off {
            self.extras_mut().disorder = Some(disorder);
        } else if let Some(e) = self.extras.as_mut() {
            e.disorder = None;
        }
        self
    }

    /// Takes the link down from `from_ns` until `until_ns` (`u64::MAX`: for good): every
    /// packet that finishes serialization then is lost, without drawing from the loss model
    /// (a path that fails mid-transfer).
    pub fn set_outage(&mut self, from_ns: u64, until_ns: u64) {
        if from_ns < until_ns {
            self.extras_mut().outage = Some((from_ns, until_ns));
        } else if let Some(e) = self.extras.as_mut() {
            e.outage = None;
        }
    }

    /// Puts a packet in the pipe. Returns the time of a `LinkDeliver` event to schedule when
    /// it arrives before every event already scheduled.
    #[inline(always)]
    fn propagate(&mut self, at: u64, p: SimPacket) -> Option<u64> {
        let (order, disordered) = match self.extras.as_deref_mut() {
            Some(e) => {
                e.departures += 1;
                (e.departures - 1, e.disorder.is_some())
            }
            None => (0, false),
        };
        let key = (at, order);
        // Without disorder every packet takes the same delay after leaving later than the
        // one before it: its key is the largest, and the pipe's back need not be read.
        let mut pipe = self.pipe();
        if !disordered || pipe.back().is_none_or(|(k, _)| *k < key) {
            pipe.push_back((key, p));
        } else {
            pipe.insert_sorted((key, p));
        }
        if at < self.armed {
            self.armed = at;
            return Some(at);
        }
        None
    }

    /// The propagating packets.
    #[inline(always)]
    fn pipe(&mut self) -> Pipe<'_> {
        Pipe { head: &mut self.head, more: &mut self.more, rest: &mut self.rest }
    }

    /// Constant rate, if the link has one.
    pub fn rate_bps(&self) -> Option<u64> {
        match self.rate {
            RateModel::Constant { rate_bps, .. } => Some(rate_bps),
            RateModel::Trace(_) => None,
        }
    }

    /// Propagation delay.
    pub fn delay_ns(&self) -> u64 {
        self.delay_ns
    }

    /// The queue (its backlog and counters, packets that passed it empty included).
    pub fn queue(&self) -> LinkQueue<'_> {
        LinkQueue { link: self }
    }

    /// Counters.
    pub fn stats(&self) -> LinkStats {
        LinkStats {
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            lost_packets: self.rare.lost_packets,
            delivered_packets: self.delivered_packets(),
            duplicated_packets: self.rare.duplicated_packets,
            reordered_packets: self.rare.reordered_packets,
            outage_packets: self.rare.outage_packets,
        }
    }

    /// Packets delivered to the far end: every packet that went into the pipe (each one
    /// serialized, less those the loss model or the outage took, plus the copies disorder
    /// made) and is no longer in it. Derived, not counted, so that the count takes no room
    /// on the link's hot lines.
    fn delivered_packets(&self) -> u64 {
        let in_pipe = u64::from(self.head.is_some()) + self.rest.len() as u64;
        let r = &self.rare;
        self.tx_packets + r.duplicated_packets - r.lost_packets - r.outage_packets - in_pipe
    }

    /// The bytes a packet-hop touches (the loss model, disorder and outage excepted).
    /// (The queue's own lines are touched too when the link is busy or its discipline is
    /// not tail drop.)
    pub const HOT_BYTES: usize = std::mem::offset_of!(Link, queue);

    /// The packet being serialized, if any (for a capture).
    pub fn serializing(&self) -> Option<&SimPacket> {
        self.tx.as_ref()
    }

    /// The loss model and its counters (`None` for a link without one).
    pub fn loss(&self) -> Option<&LossProcess> {
        self.extras.as_ref().and_then(|e| e.loss.as_ref())
    }

    /// The box of the packet the queue dropped last, once an arrival came back
    /// [`Arrival::Dropped`]: the simulator builds a later packet in it, so that a lossy run
    /// allocates no box per drop.
    #[inline(always)]
    pub fn take_dropped(&mut self) -> Option<Box<Carried>> {
        self.queue.take_dropped()
    }

    /// The box of the packet the link lost last (its loss model, its outage), if not taken
    /// yet, as [`Link::take_dropped`] for the queue's drops.
    #[inline(always)]
    pub fn take_lost(&mut self) -> Option<Box<Carried>> {
        self.extras.as_deref_mut().and_then(|e| e.spare.take())
    }

    /// A packet arrives at the link: it starts serializing at once (the link was idle),
    /// waits in the queue, or is dropped.
    #[inline(always)]
    pub fn enqueue(&mut self, now_ns: u64, mut pkt: SimPacket) -> Arrival {
        if self.tx.is_none() {
            // Idle: the queue is empty (an idle link took all it had), and the packet
            // leaves at once. Through an empty tail-drop queue that fits it, the link
            // counts it itself (what `DropTail::enqueue_and_dequeue` would count, without
            // reading the queue's lines); otherwise through the discipline's counters.
            let size = pkt.wire_bytes();
            if size <= u64::from(self.pass_max_bytes) {
                debug_assert!(!self.queued && self.queue.len_packets() == 0);
                self.passed_packets += 1;
                // At most `pass_max_bytes`, a u32.
                self.passed_max_bytes = self.passed_max_bytes.max(size as u32);
                pkt.pkt.enqueued_ns = now_ns;
                return Arrival::Starts(self.begin_tx(now_ns, pkt));
            }
            return match self.queue.enqueue_and_dequeue(now_ns, pkt) {
                Some(p) => Arrival::Starts(self.begin_tx(now_ns, p)),
                None => Arrival::Dropped,
            };
        }
        match self.queue.enqueue(now_ns, pkt) {
            Verdict::Dropped => Arrival::Dropped,
            Verdict::Enqueued | Verdict::Marked => {
                self.queued = true;
                Arrival::Queued
            }
        }
    }

    #[inline(always)]
    fn start_tx(&mut self, now_ns: u64) -> Option<u64> {
        if !self.queued {
            return None;
        }
        let p = self.queue.dequeue(now_ns);
        if let Queue::DropTail(q) = &self.queue {
            self.queued = q.len_packets() > 0;
        }
        Some(self.begin_tx(now_ns, p?))
    }

    /// Starts serializing `p` at `now_ns`; returns when it is done.
    #[inline(always)]
    fn begin_tx(&mut self, now_ns: u64, p: SimPacket) -> u64 {
        let bytes = p.wire_bytes();
        let done = match &mut self.rate {
            RateModel::Constant { rate_bps, overhead_bytes } => {
                now_ns.saturating_add(((bytes + u64::from(*overhead_bytes)) * 8 * 1_000_000_000).div_ceil(*rate_bps))
            }
            RateModel::Trace(tr) => {
                let TraceRate { cursor, credit_bytes, credit_at_ns } = &mut **tr;
                let mut need = bytes;
                let mut t = now_ns;
                if *credit_bytes > 0 && *credit_at_ns >= now_ns {
                    let used = need.min(*credit_bytes);
                    need -= used;
                    *credit_bytes -= used;
                    t = *credit_at_ns;
                }
                while need > 0 {
                    // The cursor consumes what it returns, so asking again from the same
                    // instant yields the next opportunity of that millisecond, if any.
                    t = cursor.next_opportunity_ns((*credit_at_ns).max(now_ns));
                    *credit_at_ns = t;
                    let used = need.min(TRACE_OPPORTUNITY_BYTES);
                    need -= used;
                    *credit_bytes = TRACE_OPPORTUNITY_BYTES - used;
                }
                t
            }
        };
        self.tx = Some(p);
        done
    }

    /// The packet being serialized has left. Returns `(deliver_at, next_tx_done)`: the time
    /// of a `LinkDeliver` event to schedule (when the pipe was empty) and of the next
    /// `LinkTxDone` (when the queue was not empty).
    #[inline(always)]
    pub fn on_tx_done(&mut self, now_ns: u64) -> (Option<u64>, Option<u64>) {
        let mut deliver = None;
        if let Some(p) = self.tx.take() {
            self.tx_packets += 1;
            self.tx_bytes += p.wire_bytes();
            let base = now_ns.saturating_add(self.delay_ns);
            let (mut at, mut copy_at) = (base, None);
            if let Some(e) = self.extras.as_deref_mut() {
                if e.outage.is_some_and(|(a, b)| a <= now_ns && now_ns < b) {
                    self.rare.outage_packets += 1;
                    e.spare = Some(p.pkt);
                    return (None, self.start_tx(now_ns));
                }
                if e.loss.as_mut().is_some_and(|l| l.should_drop()) {
                    self.rare.lost_packets += 1;
                    e.spare = Some(p.pkt);
                    return (None, self.start_tx(now_ns));
                }
                if let Some(d) = e.disorder.as_mut() {
                    at = base.saturating_add(d.jitter_ns());
                    copy_at = d.duplicate().then(|| base.saturating_add(d.jitter_ns()));
                }
            }
            if let Some(copy_at) = copy_at {
                self.rare.duplicated_packets += 1;
                deliver = self.propagate(copy_at, p.clone()).or(deliver);
            }
            // The original goes in after its copy would only when it arrives earlier;
            // `propagate` keeps the earliest time to schedule.
            deliver = self.propagate(at, p).or(deliver);
            if deliver.is_some() {
                deliver = Some(self.armed);
            }
        }
        (deliver, self.start_tx(now_ns))
    }

    /// A `LinkDeliver` event runs at `now_ns`: the earliest propagating packet arrives if it
    /// is due. Returns it, and the time of the next `LinkDeliver` event to schedule, if any.
    #[inline(always)]
    pub fn on_deliver(&mut self, now_ns: u64) -> (Option<SimPacket>, Option<u64>) {
        if self.armed <= now_ns {
            self.armed = NOT_ARMED;
        }
        let due = self.head.as_ref().is_some_and(|((t, _), _)| *t <= now_ns);
        let p = if due {
            let ((_, order), p) = self.pipe().pop_front().unwrap_or_else(|| unreachable!("checked"));
            // Only disorder lets a packet overtake one that left before it, and only a link
            // with extras has disorder.
            if let Some(e) = self.extras.as_deref_mut() {
                if e.last_delivered.is_some_and(|l| order < l) {
                    self.rare.reordered_packets += 1;
                }
                e.last_delivered = Some(e.last_delivered.map_or(order, |l| l.max(order)));
            }
            Some(p)
        } else {
            None
        };
        let mut next = None;
        if self.armed == NOT_ARMED {
            if let Some(((t, _), _)) = self.head.as_ref() {
                self.armed = *t;
                next = Some(*t);
            }
        }
        (p, next)
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::loss::LossModel;
    use crate::queue::{DropTail, Limit};
    use rand::SeedableRng;

    /// A 1 Mb/s link with `model`'s losses, `delay_ns` of propagation and a tail-drop queue
    /// of ten packets.
    fn slow_link(model: LossModel, delay_ns: u64) -> Link {
        let loss = LossProcess::new(model, ChaCha8Rng::seed_from_u64(1));
        let q = Queue::from(DropTail::new(Limit::Packets(10)));
        Link::new("l".into(), 0, 1, RateModel::Constant { rate_bps: 1_000_000, overhead_bytes: 0 }, delay_ns, loss, q)
    }

    /// A packet-hop through an idle link with a tail-drop queue touches two lines from a
    /// line's start; the queue starts on the next line, and the link, cold parts included,
    /// takes six.
    #[test]
    fn the_hot_fields_are_two_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Link>(), 64);
        assert_eq!(Link::HOT_BYTES, 2 * 64);
        assert_eq!(offset_of!(Link, queue), 2 * 64);
        assert_eq!(size_of::<Link>(), 6 * 64);
        assert_eq!(size_of::<RateModel>(), 16, "the trace's state is boxed");
        assert_eq!(size_of::<Option<InFlight>>(), 32);
        // The fields each line holds (a field that moved to another line would cost every
        // hop one more line).
        for (field, line) in [
            (offset_of!(Link, tx), 0),
            (offset_of!(Link, head), 0),
            (offset_of!(Link, armed), 0),
            (offset_of!(Link, delay_ns) + 7, 0),
            (offset_of!(Link, extras), 1),
            (offset_of!(Link, rate), 1),
            (offset_of!(Link, tx_packets), 1),
            (offset_of!(Link, tx_bytes), 1),
            (offset_of!(Link, passed_packets), 1),
            (offset_of!(Link, to), 1),
            (offset_of!(Link, pass_max_bytes), 1),
            (offset_of!(Link, passed_max_bytes), 1),
            (offset_of!(Link, queued), 1),
            (offset_of!(Link, more), 1),
            (offset_of!(Link, rest), 4),
        ] {
            assert_eq!(field / 64, line, "offset {field}");
        }
    }

    /// A link without a loss model, disorder or outage has no extras; each of them makes
    /// them, and the counters they move read back through `stats`.
    #[test]
    fn extras_only_where_needed() {
        let link = |model| slow_link(model, 1_000);
        let plain = link(LossModel::None);
        assert!(plain.extras.is_none() && plain.loss().is_none());
        let mut lossy = link(LossModel::Bernoulli { loss_prob: 1.0 });
        assert!(lossy.loss().is_some());
        let still = link(LossModel::None).with_disorder(Disorder {
            jitter: Jitter::None,
            duplicate_prob: 0.0,
            rng: ChaCha8Rng::seed_from_u64(2),
        });
        assert!(still.extras.is_none(), "disorder that disorders nothing");
        let mut down = link(LossModel::None);
        down.set_outage(5, 3);
        assert!(down.extras.is_none(), "an empty outage");
        down.set_outage(0, u64::MAX);
        assert!(down.extras.is_some());
        for l in [&mut lossy, &mut down] {
            assert_eq!(
                l.enqueue(0, SimPacket::new(Default::default(), 0)),
                Arrival::Starts(416_000),
                "52 bytes at 1 Mb/s"
            );
            assert_eq!(l.on_tx_done(416_000), (None, None));
        }
        assert_eq!((lossy.stats().lost_packets, lossy.stats().outage_packets, lossy.stats().tx_packets), (1, 0, 1));
        assert_eq!((down.stats().lost_packets, down.stats().outage_packets, down.stats().tx_packets), (0, 1, 1));
    }

    /// The delivered count is derived (serialized, less lost and cut off, plus copies, less
    /// what is still propagating): hand-counted through a link that duplicates every
    /// packet and one that loses every packet, with packets still in the pipe, against
    /// the deliveries `on_deliver` hands out.
    #[test]
    fn delivered_is_what_left_the_pipe() {
        // 52 bytes at 1 Mb/s: 416 us each; 1 ms of propagation.
        let link = |model| slow_link(model, 1_000_000);
        let pkt = || SimPacket::new(Default::default(), 0);
        let mut dup = link(LossModel::None).with_disorder(Disorder {
            jitter: Jitter::None,
            duplicate_prob: 1.0,
            rng: ChaCha8Rng::seed_from_u64(2),
        });
        for want in [Arrival::Starts(416_000), Arrival::Queued, Arrival::Queued] {
            assert_eq!(dup.enqueue(0, pkt()), want);
        }
        let mut now = 0;
        for _ in 0..3 {
            now += 416_000;
            dup.on_tx_done(now);
        }
        let s = dup.stats();
        assert_eq!((s.tx_packets, s.duplicated_packets, s.delivered_packets), (3, 3, 0), "six propagating");
        // The first packet and its copy are due at 1.416 ms, the second's at 1.832 ms.
        let mut got = 0;
        for t in [1_416_000, 1_416_000, 1_832_000, 1_832_000] {
            got += usize::from(dup.on_deliver(t).0.is_some());
        }
        assert_eq!((got, dup.stats().delivered_packets), (4, 4));
        assert!(dup.more, "the third and its copy are still in the pipe");
        let mut lossy = link(LossModel::Bernoulli { loss_prob: 1.0 });
        assert_eq!(lossy.enqueue(0, pkt()), Arrival::Starts(416_000));
        assert_eq!(lossy.enqueue(0, pkt()), Arrival::Queued);
        lossy.on_tx_done(416_000);
        lossy.on_tx_done(832_000);
        let s = lossy.stats();
        assert_eq!((s.tx_packets, s.lost_packets, s.delivered_packets), (2, 2, 0));
    }

    /// Framing overhead lengthens serialization and nothing else: a 1,500-byte packet with
    /// ns-3's 2-byte PPP header takes 12,016 ns at 1 Gb/s (12,000 without), the next one
    /// starts when it is done, and the link counts 1,500 bytes per packet.
    #[test]
    fn overhead_lengthens_serialization_not_the_byte_count() {
        let payload = SimPacket::new(triage_core::wire::Packet { payload_bytes: 1448, ..Default::default() }, 0);
        assert_eq!(payload.wire_bytes(), 1500);
        for (overhead_bytes, done_ns) in [(0, 12_000), (2, 12_016), (38, 12_304)] {
            let loss = LossProcess::new(LossModel::None, ChaCha8Rng::seed_from_u64(1));
            let q = Queue::from(DropTail::new(Limit::Packets(10)));
            let rate = RateModel::Constant { rate_bps: 1_000_000_000, overhead_bytes };
            let mut l = Link::new("l".into(), 0, 1, rate, 0, loss, q);
            assert_eq!(l.enqueue(0, payload.clone()), Arrival::Starts(done_ns));
            assert_eq!(l.enqueue(1, payload.clone()), Arrival::Queued);
            assert_eq!(l.on_tx_done(done_ns), (Some(done_ns), Some(2 * done_ns)));
            assert_eq!(l.on_tx_done(2 * done_ns).1, None);
            assert_eq!(l.stats().tx_bytes, 3000);
        }
    }
}

#[cfg(test)]
mod pipe_tests {
    use super::*;
    use triage_core::wire::Packet;

    /// A packet whose payload length tags it, so that the test can tell packets apart.
    fn tagged(tag: u32) -> SimPacket {
        SimPacket::new(Packet { payload_bytes: tag, ..Default::default() }, 0)
    }

    proptest::proptest! {
        /// Appends (with the largest key, as a link without disorder makes), insertions by
        /// key (a jittered link) and removals from the front: the pipe with its head kept
        /// apart gives the same fronts, backs and packets out as one sorted `VecDeque`
        /// (the pipe before it had its head apart).
        #[test]
        fn pipe_equals_one_sorted_deque(ops in proptest::collection::vec((0u8..3, 0u64..50), 1..200)) {
            let (mut head, mut more, mut rest) = (None, false, VecDeque::new());
            let mut reference: VecDeque<((u64, u64), u32)> = VecDeque::new();
            let mut order = 0u64;
            let mut latest = 0u64;
            for (op, t) in ops {
                let mut pipe = Pipe { head: &mut head, more: &mut more, rest: &mut rest };
                match op {
                    0 | 1 => {
                        let at = if op == 0 { latest + t } else { t };
                        latest = latest.max(at);
                        let key = (at, order);
                        let tag = order as u32;
                        order += 1;
                        if reference.back().is_none_or(|(k, _)| *k < key) {
                            pipe.push_back((key, tagged(tag)));
                            reference.push_back((key, tag));
                        } else {
                            pipe.insert_sorted((key, tagged(tag)));
                            let i = reference.partition_point(|(k, _)| *k < key);
                            reference.insert(i, (key, tag));
                        }
                    }
                    _ => {
                        let got = pipe.pop_front().map(|(k, p)| (k, p.pkt.payload_bytes));
                        proptest::prop_assert_eq!(got, reference.pop_front());
                    }
                }
                proptest::prop_assert_eq!(pipe.back().map(|(k, p)| (*k, p.pkt.payload_bytes)), reference.back().copied());
                proptest::prop_assert_eq!(head.as_ref().map(|(k, p)| (*k, p.pkt.payload_bytes)), reference.front().copied());
                proptest::prop_assert!(head.is_some() || rest.is_empty());
                proptest::prop_assert_eq!(more, !rest.is_empty());
            }
        }
    }
}

#[cfg(test)]
mod pass_through_tests {
    use super::*;
    use crate::loss::LossModel;
    use crate::queue::{DropTail, Limit};
    use rand::SeedableRng;
    use triage_core::wire::Packet;

    fn link(limit: Limit) -> Link {
        let loss = LossProcess::new(LossModel::None, ChaCha8Rng::seed_from_u64(1));
        let rate = RateModel::Constant { rate_bps: 8_000_000, overhead_bytes: 0 };
        Link::new("l".into(), 0, 1, rate, 0, loss, Queue::from(DropTail::new(limit)))
    }

    /// `payload` bytes of payload: 52 more on the wire.
    fn pkt(payload: u32) -> SimPacket {
        SimPacket::new(Packet { payload_bytes: payload, ..Default::default() }, 0)
    }

    /// Hand-counted: at 1 byte/us, four packets of 100 wire bytes at t = 0 into a queue of
    /// two: the first passes the empty queue, two wait, the fourth is dropped; the queue's
    /// counters (with the link's share) are the discipline's own.
    #[test]
    fn counters_of_a_pass_and_a_backlog() {
        let mut l = link(Limit::Packets(2));
        assert_eq!(l.enqueue(0, pkt(48)), Arrival::Starts(100_000));
        assert_eq!(l.enqueue(0, pkt(48)), Arrival::Queued);
        assert_eq!(l.enqueue(0, pkt(48)), Arrival::Queued);
        assert_eq!(l.enqueue(0, pkt(48)), Arrival::Dropped);
        assert_eq!((l.passed_packets, l.queue().len_packets()), (1, 2));
        assert_eq!(l.on_tx_done(100_000), (Some(100_000), Some(200_000)));
        assert_eq!(l.on_tx_done(200_000), (None, Some(300_000)));
        assert_eq!(l.on_tx_done(300_000), (None, None));
        assert!(!l.queued, "the backlog is empty again");
        let s = l.queue().stats();
        assert_eq!((s.enqueued_packets, s.dequeued_packets, s.dropped_packets, s.dropped_bytes), (3, 3, 1, 100));
        assert_eq!((s.max_len_packets, s.max_len_bytes), (2, 200));
        assert_eq!(s.sojourn_total_ns, 100_000 + 200_000, "the two that waited");
        // Idle again: the next packet passes, a larger one raises the largest pass.
        assert_eq!(l.enqueue(400_000, pkt(948)), Arrival::Starts(1_400_000));
        let s = l.queue().stats();
        assert_eq!((s.enqueued_packets, s.dequeued_packets, s.max_len_bytes), (4, 4, 1000));
    }

    /// A limit in bytes: a packet larger than the whole queue finds the idle link and is
    /// dropped all the same, counted by the queue.
    #[test]
    fn a_packet_larger_than_a_byte_limit_is_dropped_at_an_idle_link() {
        let mut l = link(Limit::Bytes(500));
        assert_eq!(l.pass_max_bytes, 500);
        assert_eq!(l.enqueue(0, pkt(449)), Arrival::Dropped);
        assert_eq!(l.enqueue(0, pkt(448)), Arrival::Starts(500_000));
        let s = l.queue().stats();
        assert_eq!((s.enqueued_packets, s.dropped_packets, s.dropped_bytes, s.max_len_bytes), (1, 1, 501, 500));
        let mut none = link(Limit::Packets(0));
        assert_eq!(none.pass_max_bytes, 0);
        assert_eq!(none.enqueue(0, pkt(0)), Arrival::Dropped);
        assert_eq!(none.queue().stats().dropped_packets, 1);
    }

    proptest::proptest! {
        /// Arrivals of any size and transmissions ending in any order: the link's answers,
        /// backlog and queue counters are those of the same tail-drop queue driven the way
        /// the link drove it before it counted passes itself (`enqueue_and_dequeue` when
        /// idle, `enqueue` when busy, `dequeue` when a transmission ends).
        #[test]
        fn passes_counted_by_the_link_equal_the_queue_s_own(
            bytes_limit in proptest::bool::ANY,
            limit in 0u64..4000,
            ops in proptest::collection::vec((proptest::bool::ANY, 0u32..1500), 1..200),
        ) {
            let limit = if bytes_limit { Limit::Bytes(limit) } else { Limit::Packets(limit / 500) };
            let mut l = link(limit);
            let mut model = DropTail::new(limit);
            let mut busy = false;
            for (i, (arrive, payload)) in ops.into_iter().enumerate() {
                let now = i as u64 * 1000;
                if arrive {
                    let got = l.enqueue(now, pkt(payload));
                    let want = if !busy {
                        match model.enqueue_and_dequeue(now, pkt(payload)) {
                            Some(_) => { busy = true; "starts" }
                            None => "dropped",
                        }
                    } else {
                        match model.enqueue(now, pkt(payload)) {
                            Verdict::Dropped => "dropped",
                            _ => "queued",
                        }
                    };
                    let got = match got { Arrival::Starts(_) => "starts", Arrival::Queued => "queued", Arrival::Dropped => "dropped" };
                    proptest::prop_assert_eq!(got, want);
                } else if busy {
                    let (_, next) = l.on_tx_done(now);
                    busy = model.dequeue(now).is_some();
                    proptest::prop_assert_eq!(next.is_some(), busy);
                }
                proptest::prop_assert_eq!(l.queue().len_packets(), model.len_packets());
                proptest::prop_assert_eq!(l.queue().len_bytes(), model.len_bytes());
                proptest::prop_assert_eq!(&l.queue().stats(), model.stats());
            }
        }
    }
}
