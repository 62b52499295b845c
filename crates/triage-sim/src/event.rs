//! The event queue: binary heaps ordered by (time, sequence number), so events at the same
//! nanosecond run in the order they were scheduled and every run is reproducible.

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

/// One pending event: its order key, (time << 64) | sequence, compared as one integer
/// (two compares and no branches on the tuple's fields), and the event (`P`: an [`Ev`], or
/// a link event's code, [`link_code`]).
#[derive(Clone, Copy, Debug)]
struct Entry<P> {
    key: u128,
    ev: P,
}

/// A link event as the link heap keeps it: the link's index and whether it is a delivery,
/// in one integer (passed in a register: an [`Ev`] is passed through memory, and reading
/// it back whole after the caller wrote it field by field stalled every push).
#[inline(always)]
fn link_code(l: u32, deliver: bool) -> u64 {
    (u64::from(l) << 1) | u64::from(deliver)
}

/// The link event a [`link_code`] stands for.
#[inline(always)]
fn link_event(code: u64) -> Ev {
    let l = (code >> 1) as u32;
    if code & 1 == 0 {
        Ev::LinkTxDone(l)
    } else {
        Ev::LinkDeliver(l)
    }
}

/// A binary min-heap of entries by key (keys are unique: the sequence number is in them):
/// of its own (not `std::collections::BinaryHeap`) so that an entry is compared by one
/// `u128` and moved whole, without the generic tuple comparison and the partial copies
/// through the stack that made popping a fifth of a run.
///
/// Removing the root is lazy: [`take_root`](Heap::take_root) hands the root out and leaves
/// it in place, stale. Most events schedule the next event of the same kind at once (a
/// link's next departure or arrival), and that push then replaces the stale root with one
/// pass from the root down ([`replace_root`](Heap::replace_root)) instead of a removal and
/// an insertion. Any other operation first removes the stale root ([`settle`](Heap::settle)).
#[derive(Debug)]
struct Heap<P> {
    v: Vec<Entry<P>>,
    /// `v[0]` was handed out and is no longer pending.
    stale_root: bool,
}

impl<P> Default for Heap<P> {
    fn default() -> Self {
        Self { v: Vec::new(), stale_root: false }
    }
}

impl<P: Copy> Heap<P> {
    /// The root's key (`u128::MAX` when empty). Call on a settled heap.
    #[inline]
    fn min_key(&self) -> u128 {
        debug_assert!(!self.stale_root);
        self.v.first().map_or(u128::MAX, |e| e.key)
    }

    /// Entries pending.
    #[inline]
    fn len(&self) -> usize {
        self.v.len() - usize::from(self.stale_root)
    }

    /// Adds the entry (`key`, `ev`). The two come as values, not as an `Entry` built by
    /// the caller: an entry the caller wrote to the stack in 8-byte halves and this
    /// function read back 16 bytes at a time stalled every push on store forwarding.
    #[inline]
    fn push(&mut self, key: u128, ev: P) {
        if self.stale_root {
            self.stale_root = false;
            self.replace_root(Entry { key, ev });
            return;
        }
        self.v.push(Entry { key, ev });
        let last = self.v.len() - 1;
        self.sift_up(last, key, ev);
    }

    /// Moves the entry (`key`, `ev`) from the hole at `pos` toward the root until its
    /// parent is earlier.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, key: u128, ev: P) {
        let heap = &mut self.v[..];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if heap[parent].key <= key {
                break;
            }
            heap[pos] = heap[parent];
            pos = parent;
        }
        heap[pos] = Entry { key, ev };
    }

    /// The root (the earliest entry), handed out and left in place as stale. Call on a
    /// settled, non-empty heap.
    #[inline]
    fn take_root(&mut self) -> Entry<P> {
        debug_assert!(!self.stale_root && !self.v.is_empty());
        self.stale_root = true;
        self.v[0]
    }

    /// Removes a stale root, if there is one.
    #[inline]
    fn settle(&mut self) {
        if self.stale_root {
            self.stale_root = false;
            let last = self.v.pop().unwrap_or_else(|| unreachable!("a stale root is an entry"));
            if !self.v.is_empty() {
                self.replace_root(last);
            }
        }
    }

    /// Puts `entry` in place of the root: a sift-down from the root that stops where the
    /// entry belongs (two comparisons per level). Floyd's variant (the hole goes down to a
    /// leaf along the earlier child, then the entry moves up) was used before: it wins when
    /// the entry belongs near the bottom, but a new link event is mostly due soon (a
    /// departure one serialization time away) and belongs near the top; measured with
    /// callgrind, the plain sift-down runs fewer instructions for both kinds of
    /// replacement (eecn-dumbbell 1.151 G -> 1.133 G, 512 flows at 1 Gbps -3.5%).
    #[inline]
    fn replace_root(&mut self, entry: Entry<P>) {
        let heap = &mut self.v[..];
        let n = heap.len();
        let mut hole = 0;
        loop {
            let mut child = 2 * hole + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && heap[child + 1].key < heap[child].key {
                child += 1;
            }
            if entry.key < heap[child].key {
                break;
            }
            heap[hole] = heap[child];
            hole = child;
        }
        heap[hole] = entry;
    }
}

/// Events by (time, sequence), in two heaps that share the sequence counter: link events
/// (`LinkTxDone`, `LinkDeliver`: at most two per link, the packet path) and everything else
/// (connection timers, flow starts, application writes, samples). At many flows most of
/// the pending events are connection timers that rarely fire; kept apart, they no longer
/// deepen the heap every packet-hop goes through. Popping takes the earlier of the two
/// heads, so the order is exactly that of one heap.
#[derive(Debug, Default)]
pub struct EventQueue {
    links: Heap<u64>,
    others: Heap<Ev>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// The key of the next event pushed, due at `time_ns`.
    #[inline(always)]
    fn next_key(&mut self, time_ns: u64) -> u128 {
        self.seq += 1;
        (u128::from(time_ns) << 64) | u128::from(self.seq)
    }

    /// Schedule `ev` at `time_ns`.
    #[inline]
    pub fn push(&mut self, time_ns: u64, ev: Ev) {
        let key = self.next_key(time_ns);
        match ev {
            Ev::LinkTxDone(l) => self.links.push(key, link_code(l, false)),
            Ev::LinkDeliver(l) => self.links.push(key, link_code(l, true)),
            _ => self.others.push(key, ev),
        }
    }

    /// Schedule link `l`'s `LinkTxDone` (`deliver` false) or `LinkDeliver` (true) at
    /// `time_ns`: [`push`](Self::push) of that event, for the packet path, where the kind
    /// is known and need not be matched.
    #[inline(always)]
    pub fn push_link(&mut self, time_ns: u64, l: u32, deliver: bool) {
        let key = self.next_key(time_ns);
        self.links.push(key, link_code(l, deliver));
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        self.pop_until(u64::MAX)
    }

    /// The earliest event, removed, if it is due at or before `stop_ns`.
    #[inline(always)]
    pub fn pop_until(&mut self, stop_ns: u64) -> Option<(u64, Ev)> {
        self.links.settle();
        self.others.settle();
        let (lk, ok) = (self.links.min_key(), self.others.min_key());
        if lk < ok {
            if (lk >> 64) as u64 > stop_ns {
                return None;
            }
            let e = self.links.take_root();
            self.popped += 1;
            Some(((e.key >> 64) as u64, link_event(e.ev)))
        } else {
            if ok == u128::MAX || (ok >> 64) as u64 > stop_ns {
                return None;
            }
            let e = self.others.take_root();
            self.popped += 1;
            Some(((e.key >> 64) as u64, e.ev))
        }
    }

    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<u64> {
        self.links.settle();
        self.others.settle();
        let key = self.links.min_key().min(self.others.min_key());
        (key != u128::MAX).then_some((key >> 64) as u64)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.links.len() + self.others.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    #[test]
    fn pop_until_leaves_later_events_and_counts_a_taken_root_as_gone() {
        let mut q = EventQueue::new();
        q.push(10, Ev::LinkTxDone(0));
        q.push(30, Ev::LinkDeliver(0));
        q.push(20, Ev::Sample);
        assert_eq!(q.pop_until(10), Some((10, Ev::LinkTxDone(0))));
        assert_eq!(q.len(), 2, "the root handed out is no longer pending");
        assert_eq!(q.pop_until(15), None);
        // A push right after a pop takes the handed-out root's place.
        assert_eq!(q.pop_until(20), Some((20, Ev::Sample)));
        q.push(25, Ev::ConnTimer(7));
        q.push(25, Ev::LinkTxDone(1));
        assert_eq!(q.peek_time(), Some(25));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(25, Ev::ConnTimer(7)), (25, Ev::LinkTxDone(1)), (30, Ev::LinkDeliver(0))]);
        assert!(q.is_empty());
        assert_eq!(q.processed(), 5);
    }

    /// Interleaved pushes and pops, with many equal times, against a sorted reference:
    /// every pop is the earliest (time, push order) pending.
    #[test]
    fn matches_a_sorted_reference() {
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut seq = 0u32;
        let mut state = 12345u64;
        let mut now = 0u64;
        for step in 0..20_000u32 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = (state >> 33) as u32;
            if !r.is_multiple_of(3) || reference.is_empty() {
                let t = now + u64::from(r % 7);
                seq += 1;
                match r % 4 {
                    0 => q.push_link(t, seq, false),
                    2 => q.push(t, Ev::LinkTxDone(seq)),
                    _ => q.push(t, Ev::ConnTimer(seq)),
                }
                reference.insert((t, seq));
            } else {
                let (t, s) = reference.pop_first().unwrap();
                let (qt, ev) = q.pop().unwrap();
                let qs = match ev {
                    Ev::LinkTxDone(s) | Ev::ConnTimer(s) => s,
                    _ => unreachable!(),
                };
                assert_eq!((qt, qs), (t, s), "step {step}");
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some((t, _)) = reference.pop_first() {
            assert_eq!(q.pop().map(|(t, _)| t), Some(t));
        }
        assert_eq!(q.pop(), None);
    }
}
