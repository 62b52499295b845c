//! Point-to-point links: a queue discipline in front of a serializer (constant rate or a
//! Mahimahi trace), a propagation delay, and a loss process.
//!
//! As in htsim, a link keeps at most two pending events: the end of the current
//! serialization (`LinkTxDone`) and the arrival of the oldest propagating packet
//! (`LinkDeliver`). Packets in propagation wait in a FIFO, not in the event queue.

use std::collections::VecDeque;

use serde::Serialize;

use crate::loss::LossProcess;
use crate::queue::{QueueDiscipline, SimPacket, Verdict};
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

/// Counters of one link.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    /// Packets serialized onto the link.
    pub tx_packets: u64,
    /// Bytes serialized.
    pub tx_bytes: u64,
    /// Packets lost to the loss model.
    pub lost_packets: u64,
    /// Packets delivered to the far end.
    pub delivered_packets: u64,
}

/// A one-way link from node `from` to node `to`.
#[derive(Debug)]
pub struct Link {
    /// Name for reports, e.g. "r1->r2".
    pub name: String,
    /// Sending node.
    pub from: u32,
    /// Receiving node.
    pub to: u32,
    rate: RateModel,
    delay_ns: u64,
    loss: LossProcess,
    queue: Box<dyn QueueDiscipline>,
    tx: Option<SimPacket>,
    pipe: VecDeque<(u64, SimPacket)>,
    stats: LinkStats,
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
        queue: Box<dyn QueueDiscipline>,
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
            pipe: VecDeque::new(),
            stats: LinkStats::default(),
        }
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
        self.queue.as_ref()
    }

    /// Counters.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Random-loss counters.
    pub fn loss(&self) -> &LossProcess {
        &self.loss
    }

    /// A packet arrives at the link. Returns the time of the `LinkTxDone` event to schedule
    /// when the link was idle and starts serializing it.
    pub fn enqueue(&mut self, now_ns: u64, pkt: SimPacket) -> Option<u64> {
        if self.queue.enqueue(now_ns, pkt) == Verdict::Dropped {
            return None;
        }
        if self.tx.is_none() {
            return self.start_tx(now_ns);
        }
        None
    }

    fn start_tx(&mut self, now_ns: u64) -> Option<u64> {
        let p = self.queue.dequeue(now_ns)?;
        let bytes = p.pkt.wire_bytes() as u64;
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
        Some(done)
    }

    /// The packet being serialized has left. Returns `(deliver_at, next_tx_done)`: the time
    /// of a `LinkDeliver` event to schedule (when the pipe was empty) and of the next
    /// `LinkTxDone` (when the queue was not empty).
    pub fn on_tx_done(&mut self, now_ns: u64) -> (Option<u64>, Option<u64>) {
        let mut deliver = None;
        if let Some(p) = self.tx.take() {
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += p.pkt.wire_bytes() as u64;
            if self.loss.should_drop() {
                self.stats.lost_packets += 1;
            } else {
                let at = now_ns.saturating_add(self.delay_ns);
                if self.pipe.is_empty() {
                    deliver = Some(at);
                }
                self.pipe.push_back((at, p));
            }
        }
        (deliver, self.start_tx(now_ns))
    }

    /// The oldest propagating packet arrives. Returns it and the time of the next
    /// `LinkDeliver` event, if more packets are propagating.
    pub fn on_deliver(&mut self) -> Option<(SimPacket, Option<u64>)> {
        let (_, p) = self.pipe.pop_front()?;
        self.stats.delivered_packets += 1;
        Some((p, self.pipe.front().map(|(t, _)| *t)))
    }
}
