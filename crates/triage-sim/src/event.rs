//! The event queue: a binary heap ordered by (time, sequence number), so events at the same
//! nanosecond run in the order they were scheduled and every run is reproducible.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens at an instant. Kept small (16 bytes) because the queue is the hot path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ev {
    /// The packet a link is serializing has left the sender side.
    LinkTxDone(u32),
    /// The oldest packet propagating on a link reaches the far end.
    LinkDeliver(u32),
    /// A connection's timer (delayed ACK, RTO, pacing) may have expired.
    ConnTimer(u32),
    /// A flow starts: its client opens the connection.
    FlowStart(u32),
    /// An application writes a scheduled message (flow, message index).
    AppWrite(u32, u32),
    /// A page-loading client requests an object (flow, object id).
    PageRequest(u32, u32),
    /// A page-loading client checks whether an unreliable object it is still waiting for is
    /// over: its response ended and no chunk came for the idle time, or its deadline passed
    /// (flow, object id).
    PartialCheck(u32, u32),
    /// A pooled page load's DNS lookup is done: open the connection (flow, group).
    PoolOpen(u32, u32),
    /// A web server's think time for a request is over: write the response (flow,
    /// connection, object id).
    ServerRespond(u32, u32, u32),
    /// Take a time-series sample.
    Sample,
}

/// Min-heap of events by (time, sequence).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `ev` at `time_ns`.
    #[inline]
    pub fn push(&mut self, time_ns: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((time_ns, self.seq, ev)));
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        let Reverse((t, _, ev)) = self.heap.pop()?;
        self.popped += 1;
        Some((t, ev))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.push(20, Ev::Sample);
        q.push(10, Ev::ConnTimer(2));
        q.push(10, Ev::ConnTimer(1));
        q.push(5, Ev::LinkDeliver(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(5, Ev::LinkDeliver(0)), (10, Ev::ConnTimer(2)), (10, Ev::ConnTimer(1)), (20, Ev::Sample)]
        );
    }
}
