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

use crate::loss::LossProcess;
use crate::queue::{Queue, QueueDiscipline, SimPacket};
use crate::trace::TraceCursor;

/// Bytes one Mahimahi delivery opportunity carries (its MTU-sized packet).
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

/// How fast a link serializes.
#[derive(Debug)]
pub enum RateModel {
    /// A constant rate in bits per second.
    Constant {
        /// Rate.
        rate_bps: u64,
    },
    /// Delivery opportunities from a Mahimahi trace: each opportunity carries up to 1500
    /// bytes; a packet leaves at the opportunity that completes its bytes, and what an
    /// opportunity has left may carry the next packet in the same millisecond, as
    /// Mahimahi's link queue does. Unused opportunities are lost.
    Trace {
        /// Cursor over the trace.
        cursor: Box<TraceCursor>,
        /// Bytes left in the opportunity at `credit_at_ns`.
        credit_bytes: u64,
        /// Time of the partly used opportunity.
        credit_at_ns: u64,
    },
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

/// A link's propagating packets in arrival order, the earliest kept in the link itself.
/// A link whose delay is shorter than a packet's serialization time (an access link, a
/// LAN hop) never holds more than one, and then a packet's passage writes and reads only
/// the link's own lines, not a buffer elsewhere in memory (a line that, with a thousand
/// links, is out of the cache at every hop). Invariant: `head` is `None` only when `rest`
/// is empty.
#[derive(Debug, Default)]
struct Pipe {
    head: Option<InFlight>,
    rest: VecDeque<InFlight>,
}

impl Pipe {
    #[inline(always)]
    fn front(&self) -> Option<&InFlight> {
        self.head.as_ref()
    }

    #[inline(always)]
    fn back(&self) -> Option<&InFlight> {
        self.rest.back().or(self.head.as_ref())
    }

    #[inline(always)]
    fn push_back(&mut self, e: InFlight) {
        if self.head.is_none() {
            self.head = Some(e);
        } else {
            self.rest.push_back(e);
        }
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<InFlight> {
        let e = self.head.take()?;
        self.head = self.rest.pop_front();
        Some(e)
    }

    /// Inserts `e` at its place by key (keys are unique: the departure order differs).
    fn insert_sorted(&mut self, e: InFlight) {
        if self.head.as_ref().is_some_and(|(k, _)| *k < e.0) {
            let i = self.rest.partition_point(|(k, _)| *k < e.0);
            self.rest.insert(i, e);
        } else if let Some(old) = self.head.replace(e) {
            self.rest.push_front(old);
        }
    }
}

/// A one-way link from node `from` to node `to`.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    // The fields every packet-hop reads or writes come first and together (`repr(C)` keeps
    // this order): the packet on the wire, the propagating ones, the queue, the rate, the
    // counters: about four cache lines. With 1,024 access links, as in a 512-flow dumbbell,
    // links no longer fit a core's cache and each hop fetches its link's lines; the random
    // streams (jitter, loss) and the name are apart, after them. Aligned to a line: the
    // 448 hot bytes then take 7 lines; a 784-byte link in a vector straddled 8 for most
    // links (callgrind, 512 flows at 100 Mbps: last-level read misses 1.035 M -> 0.974 M).
    tx: Option<SimPacket>,
    /// Propagating packets sorted by (arrival time, departure order). Without disorder
    /// every packet arrives after those before it, so the pipe is a FIFO: a packet goes in
    /// at the back and leaves from the front, in constant time. A jittered packet that
    /// overtakes others is inserted at its place.
    pipe: Pipe,
    queue: Queue,
    rate: RateModel,
    delay_ns: u64,
    /// Departure counter, the pipe's tie-break.
    departures: u64,
    /// The earliest `LinkDeliver` event scheduled and not yet run.
    armed: Option<u64>,
    /// The latest departure order delivered so far (for the reordering count).
    last_delivered: Option<u64>,
    /// Sending node.
    pub from: u32,
    /// Receiving node.
    pub to: u32,
    /// The link is down (loses everything) from the first time until the second.
    outage: Option<(u64, u64)>,
    stats: LinkStats,
    /// Boxed: its random stream is large and most links have none.
    disorder: Option<Box<Disorder>>,
    /// Its model and counters first, its random stream after them.
    loss: LossProcess,
    /// Name for reports, e.g. "r1->r2".
    pub name: String,
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
        Self {
            name,
            from,
            to,
            rate,
            delay_ns,
            loss,
            queue,
            tx: None,
            pipe: Pipe::default(),
            departures: 0,
            armed: None,
            last_delivered: None,
            disorder: None,
            outage: None,
            stats: LinkStats::default(),
        }
    }

    /// The same link, disordering what it carries (jitter, duplication).
    pub fn with_disorder(mut self, disorder: Disorder) -> Self {
        let off = disorder.jitter == Jitter::None && disorder.duplicate_prob <= 0.0;
        self.disorder = if off { None } else { Some(Box::new(disorder)) };
        self
    }

    /// Takes the link down from `from_ns` until `until_ns` (`u64::MAX`: for good): every
    /// packet that finishes serialization then is lost, without drawing from the loss model
    /// (a path that fails mid-transfer).
    pub fn set_outage(&mut self, from_ns: u64, until_ns: u64) {
        self.outage = (from_ns < until_ns).then_some((from_ns, until_ns));
    }

    /// Puts a packet in the pipe. Returns the time of a `LinkDeliver` event to schedule when
    /// it arrives before every event already scheduled.
    #[inline(always)]
    fn propagate(&mut self, at: u64, p: SimPacket) -> Option<u64> {
        let key = (at, self.departures);
        // Without disorder every packet takes the same delay after leaving later than the
        // one before it: its key is the largest, and the pipe's back need not be read.
        if self.disorder.is_none() || self.pipe.back().is_none_or(|(k, _)| *k < key) {
            self.pipe.push_back((key, p));
        } else {
            self.pipe.insert_sorted((key, p));
        }
        self.departures += 1;
        if self.armed.is_none_or(|t| at < t) {
            self.armed = Some(at);
            return Some(at);
        }
        None
    }

    /// Constant rate, if the link has one.
    pub fn rate_bps(&self) -> Option<u64> {
        match self.rate {
            RateModel::Constant { rate_bps } => Some(rate_bps),
            RateModel::Trace { .. } => None,
        }
    }

    /// Propagation delay.
    pub fn delay_ns(&self) -> u64 {
        self.delay_ns
    }

    /// The queue discipline (for its backlog and stats).
    pub fn queue(&self) -> &dyn QueueDiscipline {
        &self.queue
    }

    /// Counters.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Asks the cache for the fields a packet-hop through this link touches (everything
    /// before the loss process's random stream; a hint, see [`triage_core::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self) {
        let hot = std::mem::offset_of!(Link, loss) + LossProcess::HOT_BYTES;
        triage_core::prefetch::value(self, hot);
    }

    /// The packet being serialized, if any (for a capture).
    pub fn serializing(&self) -> Option<&SimPacket> {
        self.tx.as_ref()
    }

    /// Random-loss counters.
    pub fn loss(&self) -> &LossProcess {
        &self.loss
    }

    /// A packet arrives at the link. Returns the time of the `LinkTxDone` event to schedule
    /// when the link was idle and starts serializing it.
    #[inline(always)]
    pub fn enqueue(&mut self, now_ns: u64, pkt: SimPacket) -> Option<u64> {
        if self.tx.is_none() {
            // Idle: the queue is empty (an idle link took all it had), and the packet
            // leaves at once, through the discipline's counters.
            let p = self.queue.enqueue_and_dequeue(now_ns, pkt)?;
            return Some(self.begin_tx(now_ns, p));
        }
        self.queue.enqueue(now_ns, pkt);
        None
    }

    #[inline(always)]
    fn start_tx(&mut self, now_ns: u64) -> Option<u64> {
        let p = self.queue.dequeue(now_ns)?;
        Some(self.begin_tx(now_ns, p))
    }

    /// Starts serializing `p` at `now_ns`; returns when it is done.
    #[inline(always)]
    fn begin_tx(&mut self, now_ns: u64, p: SimPacket) -> u64 {
        let bytes = p.wire_bytes();
        let done = match &mut self.rate {
            RateModel::Constant { rate_bps } => now_ns.saturating_add((bytes * 8 * 1_000_000_000).div_ceil(*rate_bps)),
            RateModel::Trace { cursor, credit_bytes, credit_at_ns } => {
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
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += p.wire_bytes();
            let down = self.outage.is_some_and(|(a, b)| a <= now_ns && now_ns < b);
            if down {
                self.stats.outage_packets += 1;
            } else if self.loss.should_drop() {
                self.stats.lost_packets += 1;
            } else {
                let base = now_ns.saturating_add(self.delay_ns);
                let (at, copy_at) = match self.disorder.as_mut() {
                    None => (base, None),
                    Some(d) => {
                        let at = base.saturating_add(d.jitter_ns());
                        let copy = d.duplicate().then(|| base.saturating_add(d.jitter_ns()));
                        (at, copy)
                    }
                };
                if let Some(copy_at) = copy_at {
                    self.stats.duplicated_packets += 1;
                    deliver = self.propagate(copy_at, p.clone()).or(deliver);
                }
                // The original goes in after its copy would only when it arrives earlier;
                // `propagate` keeps the earliest time to schedule.
                deliver = self.propagate(at, p).or(deliver);
                if deliver.is_some() {
                    deliver = self.armed;
                }
            }
        }
        (deliver, self.start_tx(now_ns))
    }

    /// A `LinkDeliver` event runs at `now_ns`: the earliest propagating packet arrives if it
    /// is due. Returns it, and the time of the next `LinkDeliver` event to schedule, if any.
    #[inline(always)]
    pub fn on_deliver(&mut self, now_ns: u64) -> (Option<SimPacket>, Option<u64>) {
        if self.armed.is_some_and(|t| t <= now_ns) {
            self.armed = None;
        }
        let due = self.pipe.front().is_some_and(|((t, _), _)| *t <= now_ns);
        let p = if due {
            let ((_, order), p) = self.pipe.pop_front().unwrap_or_else(|| unreachable!("checked"));
            self.stats.delivered_packets += 1;
            if self.last_delivered.is_some_and(|l| order < l) {
                self.stats.reordered_packets += 1;
            }
            self.last_delivered = Some(self.last_delivered.map_or(order, |l| l.max(order)));
            Some(p)
        } else {
            None
        };
        let mut next = None;
        if self.armed.is_none() {
            if let Some(((t, _), _)) = self.pipe.front() {
                self.armed = Some(*t);
                next = Some(*t);
            }
        }
        (p, next)
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
            let mut pipe = Pipe::default();
            let mut reference: VecDeque<((u64, u64), u32)> = VecDeque::new();
            let mut order = 0u64;
            let mut latest = 0u64;
            for (op, t) in ops {
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
                proptest::prop_assert_eq!(pipe.front().map(|(k, p)| (*k, p.pkt.payload_bytes)), reference.front().copied());
                proptest::prop_assert_eq!(pipe.back().map(|(k, p)| (*k, p.pkt.payload_bytes)), reference.back().copied());
                proptest::prop_assert!(pipe.head.is_some() || pipe.rest.is_empty());
            }
        }
    }
}
