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

/// Link events in key order by construction (see [`EventQueue`]): a ring whose capacity is
/// a power of two, so that an entry's slot is a mask away.
#[derive(Debug, Default)]
struct Run {
    ring: Vec<Entry<u64>>,
    head: usize,
    len: usize,
    /// The last entry's key; 0 when the run is empty, so that any key may start it.
    last: u128,
}

impl Run {
    /// The first entry's key (`u128::MAX` when empty).
    #[inline(always)]
    fn front_key(&self) -> u128 {
        if self.len == 0 {
            u128::MAX
        } else {
            self.ring[self.head].key
        }
    }

    /// Appends (`key`, `ev`) if it is due no earlier than the last entry; false otherwise.
    #[inline(always)]
    fn push(&mut self, key: u128, ev: u64) -> bool {
        if key < self.last {
            return false;
        }
        if self.len == self.ring.len() {
            self.grow();
        }
        let mask = self.ring.len() - 1;
        self.ring[(self.head + self.len) & mask] = Entry { key, ev };
        self.len += 1;
        self.last = key;
        true
    }

    /// Removes the first entry. Call on a non-empty run.
    #[inline(always)]
    fn pop(&mut self) -> Entry<u64> {
        debug_assert!(self.len > 0);
        let e = self.ring[self.head];
        self.head = (self.head + 1) & (self.ring.len() - 1);
        self.len -= 1;
        if self.len == 0 {
            self.last = 0;
        }
        e
    }

    /// Doubles the ring (16 entries at first), its entries in order from slot 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.ring.len() * 2).max(16);
        let mut ring = Vec::with_capacity(cap);
        let mask = self.ring.len().wrapping_sub(1);
        ring.extend((0..self.len).map(|i| self.ring[(self.head + i) & mask]));
        ring.resize(cap, Entry { key: 0, ev: 0 });
        self.ring = ring;
        self.head = 0;
    }
}

/// Events by (time, sequence), in two heaps and a run that share the sequence counter:
/// link events (`LinkTxDone`, `LinkDeliver`: at most two per link, the packet path) and
/// everything else (connection timers, flow starts, application writes, samples). At many
/// flows most of the pending events are connection timers that rarely fire; kept apart,
/// they no longer deepen the heap every packet-hop goes through.
///
/// A link event due no earlier than the last one appended to the run (`Run`, a ring
/// sorted by construction) is appended there, in constant time; only the others go into
/// the link heap. A departure schedules the link's next one a serialization time later,
/// mostly after every other pending link event: with hundreds of links busy at once (many
/// flows sending their first windows) each such push sifted down the whole heap. The heap
/// keeps the near events (a zero-delay link's arrival, due at once; an ACK's short
/// departure). Popping takes the earliest of the three heads, and keys are unique, so the
/// order is exactly that of one heap.
#[derive(Debug, Default)]
pub struct EventQueue {
    links: Heap<u64>,
    run: Run,
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
            Ev::LinkTxDone(l) => self.push_link_key(key, link_code(l, false)),
            Ev::LinkDeliver(l) => self.push_link_key(key, link_code(l, true)),
            _ => self.others.push(key, ev),
        }
    }

    /// Schedule link `l`'s `LinkTxDone` (`deliver` false) or `LinkDeliver` (true) at
    /// `time_ns`: [`push`](Self::push) of that event, for the packet path, where the kind
    /// is known and need not be matched.
    #[inline(always)]
    pub fn push_link(&mut self, time_ns: u64, l: u32, deliver: bool) {
        let key = self.next_key(time_ns);
        self.push_link_key(key, link_code(l, deliver));
    }

    /// A link event to the end of the run when it is due no earlier than the run's last
    /// (or the run is empty), otherwise into the link heap.
    #[inline(always)]
    fn push_link_key(&mut self, key: u128, code: u64) {
        if !self.run.push(key, code) {
            self.push_link_heap(key, code);
        }
    }

    /// The link heap's push, out of line: inlined at every push of the packet path beside
    /// the run's, it made the run loop's code larger than the instruction cache holds well.
    #[inline(never)]
    fn push_link_heap(&mut self, key: u128, code: u64) {
        self.links.push(key, code);
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
        let (hk, ok) = (self.links.min_key(), self.others.min_key());
        let rk = self.run.front_key();
        if rk < hk && rk < ok {
            if (rk >> 64) as u64 > stop_ns {
                return None;
            }
            let e = self.run.pop();
            self.popped += 1;
            Some(((e.key >> 64) as u64, link_event(e.ev)))
        } else if hk < ok {
            if (hk >> 64) as u64 > stop_ns {
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
        let key = self.links.min_key().min(self.others.min_key()).min(self.run.front_key());
        (key != u128::MAX).then_some((key >> 64) as u64)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.links.len() + self.run.len + self.others.len()
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

    /// The run takes a link event only when it is due no earlier than the run's last, and
    /// starts again from any key once emptied; the heap takes the rest.
    #[test]
    fn the_run_takes_link_events_in_order_and_the_heap_the_rest() {
        let mut q = EventQueue::new();
        q.push_link(10, 0, false);
        q.push_link(20, 1, false);
        q.push_link(15, 2, true); // earlier than the run's last: the heap
        q.push_link(20, 3, false); // the same time, a later sequence: the run
        q.push(12, Ev::Sample);
        assert_eq!((q.run.len, q.links.len(), q.others.len()), (3, 1, 1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (10, Ev::LinkTxDone(0)),
                (12, Ev::Sample),
                (15, Ev::LinkDeliver(2)),
                (20, Ev::LinkTxDone(1)),
                (20, Ev::LinkTxDone(3)),
            ]
        );
        // Emptied, the run starts from any key, earlier ones too.
        q.push_link(5, 4, false);
        assert_eq!(q.run.len, 1);
        // Past its 16 first slots the ring grows and keeps its order across the wrap.
        let mut next = 5;
        for i in 0..40u32 {
            if i % 3 == 0 {
                assert_eq!(q.pop().map(|(t, _)| t), Some(next));
                next += 1;
            }
            q.push_link(6 + u64::from(i), 5 + i, false);
        }
        assert!(q.run.ring.len() >= 32 && q.links.len() == 0, "every push went to the run");
        while let Some((t, _)) = q.pop() {
            assert_eq!(t, next);
            next += 1;
        }
        assert_eq!(next, 46);
    }

    proptest::proptest! {
        /// Any interleaving of pushes (link events through `push_link` and `push`, other
        /// events), pops and `pop_until` bounds pops exactly what a sorted reference of
        /// (time, push order) does, whichever of the run and the two heaps holds each event.
        #[test]
        fn pops_in_time_then_push_order(ops in proptest::collection::vec((0u8..8, 0u64..2_000), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference = std::collections::BTreeMap::new();
            let (mut seq, mut now) = (0u64, 0u64);
            for (op, x) in ops {
                match op {
                    0..=4 => {
                        seq += 1;
                        // Mostly a link event a few delays ahead (the run's case), some at
                        // once or far ahead (the heap's).
                        let t = now + [x % 4, 100 + x % 7, 1_000 + x, 0, x % 50][usize::from(op)];
                        let id = seq as u32;
                        let ev = match op {
                            0 => { q.push_link(t, id, false); Ev::LinkTxDone(id) }
                            1 => { q.push_link(t, id, true); Ev::LinkDeliver(id) }
                            2 => { q.push(t, Ev::LinkTxDone(id)); Ev::LinkTxDone(id) }
                            3 => { q.push(t, Ev::ConnTimer(id)); Ev::ConnTimer(id) }
                            _ => { q.push(t, Ev::LinkDeliver(id)); Ev::LinkDeliver(id) }
                        };
                        reference.insert((t, seq), ev);
                    }
                    5 | 6 => {
                        let want = reference.pop_first().map(|((t, _), ev)| (t, ev));
                        proptest::prop_assert_eq!(q.pop(), want);
                        if let Some((t, _)) = want { now = t; }
                    }
                    _ => {
                        let stop = now + x % 200;
                        let due = reference.first_key_value().is_some_and(|(&(t, _), _)| t <= stop);
                        let want = if due { reference.pop_first().map(|((t, _), ev)| (t, ev)) } else { None };
                        proptest::prop_assert_eq!(q.pop_until(stop), want);
                        if let Some((t, _)) = want { now = t; }
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
                proptest::prop_assert_eq!(q.peek_time(), reference.first_key_value().map(|(&(t, _), _)| t));
            }
        }
    }
}
