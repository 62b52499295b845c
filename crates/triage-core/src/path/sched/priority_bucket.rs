//! PriorityBucket (Shi, Zhang, Liu, e-Energy '20): split each stream over the paths once,
//! then send each path's share from per-path priority buckets.
//!
//! Read first: ../shared/seeds/001 §3.3 (buckets), §3.4 (the model and Algorithm 1), §4
//! (estimates, transmission), and REPRODUCTION-pb-partial.md A.1 and A.3 (the choices PB-n
//! cited below). `fillgap.py` beside them is the reference sketch our tests agree with.
//!
//! **The model** (§3.4.1, Eq. 1-2). A stream of `D` bytes is split into `d_i` bytes per
//! path; with `h_i` and `e_i` the bytes of higher- and equal-priority streams waiting on
//! path `i`, `b_i` its bandwidth and `o_i` its one-way delay, the stream completes on path
//! `i` at
//! ```text
//! t_i = 0                              if d_i = 0
//! t_i = (h_i + e_i + d_i) / b_i + o_i  if d_i > 0          (1)
//! (P1) min T  subject to (1), Σ d_i = D, T = max t_i
//! ```
//! **Algorithm 1** ([`fill_gap`]) solves P1 by water-filling: sort the paths by
//! `r_i = (h_i + e_i) / b_i + o_i` (the earliest the stream could finish on path `i`),
//! fill the lowest paths up to the next `r` ("fillgap", lines 5-23), then share what is left
//! by bandwidth (lines 24-27). It runs once per stream, when the stream arrives (§3.4.2, §4.1).
//!
//! **Buckets** ([`PathBuckets`], §3.3, §4.2). Each path keeps the streams allocated to it in
//! buckets by priority. A path sends from its most urgent non-empty bucket; inside a bucket
//! the earliest-arrived stream, exclusively, until it completes or reaches its sending limit
//! on this path, then the next. A stream arriving in a more urgent bucket preempts at the
//! next packet.
//!
//! **Choices where the paper is silent** (REPRODUCTION-pb-partial.md A.3):
//! - PB-1: `h_i + e_i` = the bytes of more-or-equally urgent streams still to be sent on
//!   path `i` (each stream's remaining limit there, at most its unsent bytes, plus its lost
//!   bytes awaiting retransmission), plus the path's [`PathView::queued_bytes`]. Bytes
//!   already sent do not delay the new stream; less urgent ones are preempted.
//! - PB-2: `o_i` = smoothed RTT / 2 (the authors' code: `pathsOwd = SmoothedRTT/2`).
//! - PB-3: `b_i` = [`PathView::bandwidth_bps`], whatever the connection puts there (the
//!   configured prior, or a delivery-rate estimate). Paths with no estimate (0) get nothing.
//! - PB-5: streams that arrive together are allocated most urgent first, ties by message
//!   ID ([`PriorityBucket::allocate_batch`]), each seeing the ones before it in `h_i + e_i`.
//! - PB-6: a zero gap skips that step of the fill and continues (paper), not `break` (the
//!   authors' PStream code); the two agree for two paths.
//! - PB-7: integer arithmetic: times in ns, bytes whole, every share a whole number of
//!   bytes; the shares of lines 16 and 26 are rounded down and the bytes left by rounding go
//!   to the largest remainders (ties: the lower-`r` path), so the shares add up to `D`
//!   exactly. `r_i` is rounded down to the ns. Optional knob
//!   [`PriorityBucketConfig::min_share_bytes`]: shares smaller than that move to the
//!   lowest-`r` path that has a share (default 0: keep the paper's shards).
//! - PB-8: `d_i` is an upper sending limit; a path sends new bytes of a stream while its
//!   limit there is above zero, except that the stream's last packet (its unsent bytes all
//!   fit) may go on any path that carries it (the authors' code; switch:
//!   [`PriorityBucketConfig::tail_on_any_path`]). Bytes are taken from the stream's common
//!   next offset, whichever path sends them. Retransmissions do not consume the limit and go
//!   first within the stream, on any path that carries it. No work stealing; a path that is
//!   removed has its streams' remaining limits allocated again over the others
//!   ([`PriorityBucket::remove_path`]).
//! - PB-9: priority numbers as [`MessageMeta::priority`]: 0 most urgent (the connection maps
//!   HTTP/2 weights onto them, higher weight = more urgent); strict order between buckets,
//!   FCFS by allocation order inside one, preemption at packet granularity. A packet may
//!   carry several streams' data when the first cannot fill it: the connection asks
//!   [`PathBuckets::next_chunk`] again while the packet has room.
//! - §4.2 "The transmission is performed in a round robin fashion with paths":
//!   [`PathScheduler::choose`](crate::path::sched::PathScheduler::choose) takes the paths that can send and have data in turn.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use super::{Allocation, PathId, PathView};
use crate::sched::cats::{DebtLedger, LEVELS};
use crate::sched::stream::{StreamMessage, StreamScheduler};
use crate::sched::CatsConfig;
use crate::sched::{MessageMeta, MsgChunk};

/// Nanoseconds per second times bits per byte: `bytes · NS_BITS / bps` is a time in ns.
const NS_BITS: u128 = 8_000_000_000;

// ---------------------------------------------------------------- Algorithm 1

/// One path as Algorithm 1 sees it (Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillGapPath {
    /// Which path.
    pub id: PathId,
    /// `h_i + e_i`: bytes of more-or-equally urgent streams waiting on the path.
    pub ahead_bytes: u64,
    /// `o_i`: estimated one-way delay.
    pub owd_ns: u64,
    /// `b_i`: estimated bandwidth (bits per second).
    pub bandwidth_bps: u64,
}

impl FillGapPath {
    /// §3.4.2 Step 1: `r_i = (h_i + e_i) / b_i + o_i`, "the minimum of completion time on
    /// path i" (rounded down to the ns; `None` without a bandwidth estimate).
    pub fn r_ns(&self) -> Option<u64> {
        if self.bandwidth_bps == 0 {
            return None;
        }
        let queue = u128::from(self.ahead_bytes) * NS_BITS / u128::from(self.bandwidth_bps);
        Some((queue as u64).saturating_add(self.owd_ns))
    }

    /// Eq. (1): `t_i` for `d` bytes on this path (0 when `d` is 0).
    pub fn completion_ns(&self, d: u64) -> u64 {
        if d == 0 || self.bandwidth_bps == 0 {
            return 0;
        }
        let bytes = u128::from(self.ahead_bytes) + u128::from(d);
        ((bytes * NS_BITS / u128::from(self.bandwidth_bps)) as u64).saturating_add(self.owd_ns)
    }
}

/// One path's share of a stream (Algorithm 1's `d_i`) and what Eq. (1) predicts for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillGapShare {
    /// Which path.
    pub id: PathId,
    /// `d_i`: bytes of the stream to send on this path.
    pub bytes: u64,
    /// `r_i` (`None` for a path without a bandwidth estimate, which gets nothing).
    pub r_ns: Option<u64>,
    /// `t_i`, Eq. (1): 0 when `d_i` is 0.
    pub completion_ns: u64,
}

/// Algorithm 1 (SCHEDULESTREAM): split `d` bytes over `paths`.
///
/// Returns one share per path, in the order of line 2 (ascending `r_i`, ties by path ID),
/// paths without a bandwidth estimate last with nothing. The shares add up to `d`, unless
/// no path has a bandwidth estimate: then the path with the smallest one-way delay gets all
/// of it (no estimate to split by). See the module documentation for the rounding.
pub fn fill_gap(d: u64, paths: &[FillGapPath]) -> SmallVec<[FillGapShare; 4]> {
    // l.2: sortedList <- sort paths by ascending order of r_i
    let mut sorted: SmallVec<[(u64, FillGapPath); 4]> =
        paths.iter().filter_map(|p| p.r_ns().map(|r| (r, *p))).collect();
    sorted.sort_by_key(|(r, p)| (*r, p.id));
    let mut out: SmallVec<[FillGapShare; 4]> = SmallVec::new();
    if sorted.is_empty() {
        let first = paths.iter().min_by_key(|p| (p.owd_ns, p.id));
        for p in paths {
            let bytes = if Some(p) == first { d } else { 0 };
            out.push(FillGapShare { id: p.id, bytes, r_ns: None, completion_ns: 0 });
        }
        return out;
    }
    let n = sorted.len();
    let b: SmallVec<[u128; 4]> = sorted.iter().map(|(_, p)| u128::from(p.bandwidth_bps)).collect();
    // l.3: initialize d_i = 0
    let mut share: SmallVec<[u64; 4]> = smallvec::smallvec![0; n];
    // l.4: D' <- D
    let mut rest = d;
    // l.5: for path i in sortedList[1, ..., n-1] (here 0-based: paths 0..=i are filled)
    for i in 0..n - 1 {
        // l.6: rgap <- r_{i+1} - r_i
        let rgap = u128::from(sorted[i + 1].0 - sorted[i].0);
        // l.7: if rgap != 0 and D' > 0
        if rgap == 0 || rest == 0 {
            continue;
        }
        let bsum: u128 = b[..=i].iter().sum();
        // l.8: if D' >= rgap × Σ_{k=1..i} b_k (compared exactly, in bytes · ns · bit)
        if u128::from(rest) * NS_BITS >= rgap * bsum {
            // l.9-13: for j <- 1 to i: inc <- rgap × b_j; d_j += inc; D' -= inc
            // (each inc rounded down, so their sum never exceeds D')
            for j in 0..=i {
                let inc = (rgap * b[j] / NS_BITS) as u64;
                share[j] += inc;
                rest -= inc;
            }
        } else {
            // l.15-20: for j <- 1 to i: d_j += D' × (b_j / Σ_{k=1..i} b_k); D' <- 0; break
            split_by_bandwidth(rest, &b[..=i], &mut share[..=i]);
            rest = 0;
            break;
        }
    }
    // l.24-27: if D' > 0: for path i in sortedList: d_i += D' × (b_i / Σ_{k=1..n} b_k)
    if rest > 0 {
        split_by_bandwidth(rest, &b, &mut share);
    }
    for (k, (r, p)) in sorted.iter().enumerate() {
        out.push(FillGapShare { id: p.id, bytes: share[k], r_ns: Some(*r), completion_ns: p.completion_ns(share[k]) });
    }
    for p in paths.iter().filter(|p| p.bandwidth_bps == 0) {
        out.push(FillGapShare { id: p.id, bytes: 0, r_ns: None, completion_ns: 0 });
    }
    out
}

/// Add `bytes · b_j / Σ b` to each `share[j]` in whole bytes: rounded down, then the bytes
/// left by rounding one each to the largest remainders (ties: the earlier path).
fn split_by_bandwidth(bytes: u64, b: &[u128], share: &mut [u64]) {
    let total: u128 = b.iter().sum();
    let mut given = 0u64;
    let mut rem: SmallVec<[(u128, usize); 4]> = SmallVec::new();
    for (j, bj) in b.iter().enumerate() {
        let exact = u128::from(bytes) * bj;
        let inc = (exact / total) as u64;
        share[j] += inc;
        given += inc;
        rem.push((exact % total, j));
    }
    rem.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    for (_, j) in rem.iter().take((bytes - given) as usize) {
        share[*j] += 1;
    }
}

// ---------------------------------------------------------------- buckets

/// One stream (message) in the buckets.
#[derive(Clone, Debug)]
struct Stream {
    meta: MessageMeta,
    /// Allocation order: FCFS inside a bucket.
    seq: u64,
    /// Next byte never handed out.
    next_offset: u64,
    /// Lost byte ranges to send again: start -> end.
    lost: BTreeMap<u64, u64>,
    /// The paths that carry the stream and its sending limit left on each.
    limits: SmallVec<[(PathId, u64); 4]>,
}

impl Stream {
    fn unsent_new(&self) -> u64 {
        self.meta.len_bytes - self.next_offset
    }

    fn lost_bytes(&self) -> u64 {
        self.lost.iter().map(|(s, e)| e - s).sum()
    }

    fn limit_on(&self, path: PathId) -> u64 {
        self.limits.iter().find(|(p, _)| *p == path).map_or(0, |(_, l)| *l)
    }

    /// Bytes this stream still has to send on `path` (PB-1's contribution to `h_i + e_i`).
    fn ahead_on(&self, path: PathId) -> u64 {
        self.limit_on(path).min(self.unsent_new()) + self.lost_bytes()
    }

    fn done(&self) -> bool {
        self.next_offset == self.meta.len_bytes && self.lost.is_empty()
    }
}

/// A stream's unsent bytes that make a tail any of its paths may send (PB-8): what one
/// packet of a 1500-byte path carries at most. [`PathBuckets::next_chunk`] applies the exact
/// rule (the bytes fit the packet being filled); this bound only lets such a path be offered.
pub const TAIL_BYTES: u64 = 1500;

/// Per-path priority buckets (§3.3, §4.2): given a path, the next piece of stream data to
/// send on it. See the module documentation for the rules.
#[derive(Clone, Debug, Default)]
pub struct PathBuckets {
    /// CATS variant: the Conductor's fairness parameters; `None`: strict priority (§4.2).
    fairness: Option<CatsConfig>,
    /// CATS variant: each path's debt ledger.
    ledgers: BTreeMap<PathId, DebtLedger>,
    streams: BTreeMap<u32, Stream>,
    /// Per path, the streams it carries with something left, by (priority, arrival).
    queues: BTreeMap<PathId, BTreeMap<(u8, u64), u32>>,
    next_seq: u64,
    tail_on_any_path: bool,
    /// Bytes not yet handed out (new and lost), every stream: kept as streams change, since
    /// the connection asks for it on every packet.
    queued: u64,
}

impl PathBuckets {
    /// Empty buckets; `tail_on_any_path` as [`PriorityBucketConfig::tail_on_any_path`].
    pub fn new(tail_on_any_path: bool) -> Self {
        Self { tail_on_any_path, ..Self::default() }
    }

    /// The same buckets, served on each path by the CATS debt rule with `cfg` (see
    /// [`PriorityBucketConfig::cats_fairness`]).
    pub fn with_fairness(mut self, cfg: CatsConfig) -> Self {
        self.fairness = Some(cfg);
        self
    }

    /// Add a stream with its sending limit per path (Algorithm 1's `d_i`). Paths with a
    /// limit of 0 do not carry it. A message ID already present is ignored.
    pub fn insert(&mut self, msg: MessageMeta, limits: &[(PathId, u64)]) {
        if self.streams.contains_key(&msg.id) {
            return;
        }
        let limits: SmallVec<[(PathId, u64); 4]> = limits.iter().copied().filter(|(_, l)| *l > 0).collect();
        let seq = self.next_seq;
        self.next_seq += 1;
        let s = Stream { meta: msg, seq, next_offset: 0, lost: BTreeMap::new(), limits };
        self.queued += msg.len_bytes;
        if !s.done() {
            for (p, _) in &s.limits {
                self.queues.entry(*p).or_default().insert((msg.priority, seq), msg.id);
            }
        }
        self.streams.insert(msg.id, s);
    }

    /// `h_i + e_i` of PB-1: bytes that streams at least as urgent as `priority` still have
    /// to send on `path`.
    pub fn ahead_bytes(&self, path: PathId, priority: u8) -> u64 {
        self.queues
            .get(&path)
            .map_or(0, |q| q.range(..=(priority, u64::MAX)).map(|(_, id)| self.streams[id].ahead_on(path)).sum())
    }

    /// True when `path` has something to send (a retransmission, or new bytes within a
    /// stream's limit there).
    pub fn has_data(&self, path: PathId) -> bool {
        self.queues.get(&path).is_some_and(|q| {
            q.values().any(|id| {
                let s = &self.streams[id];
                let unsent = s.unsent_new();
                let tail = self.tail_on_any_path && unsent <= TAIL_BYTES;
                !s.lost.is_empty() || (unsent > 0 && (s.limit_on(path) > 0 || tail))
            })
        })
    }

    /// Bytes not yet handed out (new and lost), every stream.
    pub fn queued_bytes(&self) -> u64 {
        self.queued
    }

    /// The sending limit `stream` has left on `path`.
    pub fn limit(&self, msg_id: u32, path: PathId) -> u64 {
        self.streams.get(&msg_id).map_or(0, |s| s.limit_on(path))
    }

    /// The next piece of data to send on `path`, at most `max_bytes` (at least 1), from one
    /// stream; `None` when the path has nothing it may send.
    ///
    /// §4.2: "Low priority buckets can only be transmitted after high priority buckets
    /// complete the transmission, and can be preempted by newly arrival at high priority
    /// buckets. Inside a bucket, the path transmits the earliest arrived stream until its
    /// completion or sending limit. Then the path continues to the next stream in the same
    /// bucket, or moves to the next bucket if there are no stream to be transmitted in this
    /// bucket."
    pub fn next_chunk(&mut self, path: PathId, max_bytes: u32) -> Option<MsgChunk> {
        let max = u64::from(max_bytes.max(1));
        let queue = self.queues.get(&path)?;
        // The first stream with something to send in each bucket (FCFS inside a bucket).
        let mut first: [Option<(u32, u64, u64, bool)>; LEVELS] = [None; LEVELS];
        for (&(priority, _), id) in queue {
            let level = usize::from(priority).min(LEVELS - 1);
            if first[level].is_some() {
                continue;
            }
            let s = &self.streams[id];
            if let Some((&start, &end)) = s.lost.iter().next() {
                first[level] = Some((*id, start, (end - start).min(max), true));
                continue;
            }
            let unsent = s.unsent_new();
            let limit = s.limit_on(path);
            let take = if self.tail_on_any_path && unsent <= max { unsent } else { unsent.min(limit).min(max) };
            if take > 0 {
                first[level] = Some((*id, s.next_offset, take, false));
            }
        }
        // §4.2: strict priority between buckets; or, with the CATS variant, the bucket the
        // path's debt ledger selects (CATS §II-E), so that no bucket starves.
        let level = match self.fairness.as_ref() {
            None => first.iter().position(Option::is_some)?,
            Some(cfg) => {
                let nonempty = std::array::from_fn(|i| first[i].is_some());
                let ledger = self.ledgers.entry(path).or_insert_with(|| DebtLedger::new(cfg.clone()));
                ledger.select(nonempty)?
            }
        };
        let (id, offset, len, retransmission) = first[level]?;
        if let Some(ledger) = self.ledgers.get_mut(&path) {
            ledger.on_sent(level, len);
        }
        self.queued -= len;
        let s = self.streams.get_mut(&id).expect("queued stream exists");
        if retransmission {
            let end = s.lost.remove(&offset).expect("picked range");
            if offset + len < end {
                s.lost.insert(offset + len, end);
            }
        } else {
            s.next_offset += len;
            if let Some((_, l)) = s.limits.iter_mut().find(|(p, _)| *p == path) {
                *l = l.saturating_sub(len);
            }
        }
        let chunk = MsgChunk::new(id, offset, len as u32, s.meta.len_bytes, s.meta.priority);
        if s.done() {
            let key = (s.meta.priority, s.seq);
            for (p, _) in &s.limits {
                if let Some(q) = self.queues.get_mut(p) {
                    q.remove(&key);
                }
            }
        }
        Some(chunk)
    }

    /// Bytes of a chunk handed out earlier were declared lost: they go out again before
    /// the stream's new data, on any path that carries the stream, without using its
    /// limits. Bytes already waiting to be resent, or never handed out, add nothing; an
    /// unknown (or forgotten) message is ignored.
    pub fn requeue_lost(&mut self, chunk: MsgChunk) {
        let Some(s) = self.streams.get_mut(&chunk.msg_id) else { return };
        let start = chunk.msg_offset_bytes;
        let end = (start + u64::from(chunk.len_bytes())).min(s.next_offset);
        if start >= end {
            return;
        }
        let (was_done, before) = (s.done(), s.lost_bytes());
        // Union of [start, end) with the ranges already lost.
        let (mut lo, mut hi) = (start, end);
        let touching: Vec<(u64, u64)> =
            s.lost.range(..=end).filter(|(_, e)| **e >= start).map(|(a, b)| (*a, *b)).collect();
        for (a, b) in touching {
            s.lost.remove(&a);
            lo = lo.min(a);
            hi = hi.max(b);
        }
        s.lost.insert(lo, hi);
        self.queued += s.lost_bytes() - before;
        if was_done {
            self.queue_again(chunk.msg_id);
        }
    }

    /// A stream that had nothing left has something again: back into the buckets of every
    /// path that carries it.
    fn queue_again(&mut self, msg_id: u32) {
        let Some(s) = self.streams.get(&msg_id) else { return };
        let key = (s.meta.priority, s.seq);
        for (p, _) in &s.limits {
            self.queues.entry(*p).or_default().insert(key, msg_id);
        }
    }

    /// The tail of a chunk [`Self::next_chunk`] just handed out for `path` did not fit in the
    /// packet: new bytes go back as never handed out (the stream's next offset and the path's
    /// limit are restored, so no other path picks them up as a retransmission), lost bytes
    /// back among the lost.
    pub fn give_back(&mut self, path: PathId, chunk: MsgChunk) {
        let Some(s) = self.streams.get_mut(&chunk.msg_id) else { return };
        let (start, len) = (chunk.msg_offset_bytes, u64::from(chunk.len_bytes()));
        if len == 0 || start + len != s.next_offset {
            self.requeue_lost(chunk);
            return;
        }
        let was_done = s.done();
        s.next_offset = start;
        self.queued += len;
        if let Some((_, l)) = s.limits.iter_mut().find(|(p, _)| *p == path) {
            *l += len;
        }
        if was_done {
            self.queue_again(chunk.msg_id);
        }
    }

    /// Take `path` out: every stream loses its limit there. Returns, most urgent first
    /// (then by arrival), each stream that now has more unsent bytes than its limits on the
    /// other paths allow, or lost bytes and no path left, with the bytes to place again.
    pub fn remove_path(&mut self, path: PathId) -> Vec<(MessageMeta, u64)> {
        let queue = self.queues.remove(&path).unwrap_or_default();
        let mut orphans = Vec::new();
        for s in self.streams.values_mut() {
            s.limits.retain(|(p, _)| *p != path);
        }
        for id in queue.values() {
            let s = &self.streams[id];
            let covered: u64 = s.limits.iter().map(|(_, l)| l).sum();
            let missing = s.unsent_new().saturating_sub(covered);
            if missing > 0 || (s.limits.is_empty() && !s.done()) {
                orphans.push((s.meta, missing));
            }
        }
        orphans
    }

    /// Give `msg_id` more sending limit on the paths of `extra` (after [`Self::remove_path`]).
    /// The stream is queued on every path it gains, even with a zero limit when it has no
    /// path at all (its lost bytes then have somewhere to go).
    pub fn extend(&mut self, msg_id: u32, extra: &[(PathId, u64)]) {
        let Some(s) = self.streams.get_mut(&msg_id) else { return };
        let homeless = s.limits.is_empty();
        for (i, (p, add)) in extra.iter().enumerate() {
            if *add == 0 && !(homeless && i == 0) {
                continue;
            }
            match s.limits.iter_mut().find(|(q, _)| q == p) {
                Some((_, l)) => *l += add,
                None => s.limits.push((*p, *add)),
            }
            if !s.done() {
                self.queues.entry(*p).or_default().insert((s.meta.priority, s.seq), msg_id);
            }
        }
    }

    /// Drop everything about `msg_id` (every byte acknowledged, or the message given up).
    pub fn forget(&mut self, msg_id: u32) {
        let Some(s) = self.streams.remove(&msg_id) else { return };
        self.queued -= s.unsent_new() + s.lost_bytes();
        let key = (s.meta.priority, s.seq);
        for q in self.queues.values_mut() {
            q.remove(&key);
        }
    }
}

// ---------------------------------------------------------------- the scheduler

/// PriorityBucket settings (see the module documentation, PB-7 and PB-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PriorityBucketConfig {
    /// A stream's last packet may go on any path that carries it, limit or not (PB-8).
    pub tail_on_any_path: bool,
    /// Shares smaller than this many bytes move to the lowest-`r` path with a share (PB-7
    /// variant; 0 keeps the paper's shards).
    pub min_share_bytes: u64,
    /// Beyond the paper: a path serves its buckets by the CATS Conductor's debt rule (CATS
    /// §II-E, default parameters) instead of strict priority, so that a low bucket gets a
    /// share while higher ones keep sending.
    pub cats_fairness: bool,
}

impl Default for PriorityBucketConfig {
    fn default() -> Self {
        Self { tail_on_any_path: true, min_share_bytes: 0, cats_fairness: false }
    }
}

/// PriorityBucket: Algorithm 1 per arriving stream and the per-path buckets (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct PriorityBucket {
    config: PriorityBucketConfig,
    buckets: PathBuckets,
    /// Streams that arrived and are not allocated yet, and their bytes.
    arrivals: Vec<MessageMeta>,
    arrived_bytes: u64,
}

impl Default for PriorityBucket {
    fn default() -> Self {
        Self::new(PriorityBucketConfig::default())
    }
}

impl PriorityBucket {
    /// A PriorityBucket scheduler with `config`.
    pub fn new(config: PriorityBucketConfig) -> Self {
        let mut buckets = PathBuckets::new(config.tail_on_any_path);
        if config.cats_fairness {
            buckets = buckets.with_fairness(CatsConfig::default());
        }
        Self { config, buckets, arrivals: Vec::new(), arrived_bytes: 0 }
    }

    /// The per-path buckets.
    pub fn buckets(&self) -> &PathBuckets {
        &self.buckets
    }

    /// The next piece of data to send on `path` ([`PathBuckets::next_chunk`]).
    pub fn next_chunk(&mut self, path: PathId, max_bytes: u32) -> Option<MsgChunk> {
        self.buckets.next_chunk(path, max_bytes)
    }

    /// Lost data of a stream goes out again ([`PathBuckets::requeue_lost`]).
    pub fn requeue_lost(&mut self, chunk: MsgChunk) {
        self.buckets.requeue_lost(chunk);
    }

    /// Algorithm 1's inputs for a stream of `priority`: `h_i + e_i` from the buckets plus
    /// the path's own queue, `o_i` = SRTT / 2, `b_i` = the bandwidth estimate.
    fn inputs(&self, priority: u8, paths: &[PathView]) -> SmallVec<[FillGapPath; 4]> {
        paths
            .iter()
            .map(|v| FillGapPath {
                id: v.id,
                ahead_bytes: self.buckets.ahead_bytes(v.id, priority) + v.queued_bytes,
                owd_ns: v.srtt_ns / 2,
                bandwidth_bps: v.bandwidth_bps,
            })
            .collect()
    }

    /// Algorithm 1 for `d` bytes of a stream of `priority`, with the PB-7 merge knob.
    fn split(&self, d: u64, priority: u8, paths: &[PathView]) -> SmallVec<[(PathId, u64); 4]> {
        let mut shares: SmallVec<[(PathId, u64); 4]> =
            fill_gap(d, &self.inputs(priority, paths)).iter().map(|s| (s.id, s.bytes)).collect();
        let min = self.config.min_share_bytes;
        if min > 0 {
            if let Some(first) = shares.iter().position(|(_, b)| *b > 0) {
                let mut moved = 0;
                for (_, b) in shares.iter_mut().skip(first + 1) {
                    if *b > 0 && *b < min {
                        moved += *b;
                        *b = 0;
                    }
                }
                shares[first].1 += moved;
            }
        }
        shares
    }

    /// §3.1: "each arrival of a stream triggers the scheduler"; Algorithm 1 splits it and
    /// the shares enter the paths' buckets as sending limits.
    pub fn allocate(&mut self, _now_ns: u64, msg: &MessageMeta, paths: &[PathView]) -> Allocation {
        let shares = self.split(msg.len_bytes, msg.priority, paths);
        self.buckets.insert(*msg, &shares);
        Allocation::Split(shares)
    }

    /// Allocate streams that arrived together, most urgent first, ties by message ID
    /// (§3.4 "Concurrently initiated streams are handled in descending order of priority",
    /// PB-5). Returns each message ID with its allocation, in that order.
    pub fn allocate_batch(&mut self, now_ns: u64, msgs: &[MessageMeta], paths: &[PathView]) -> Vec<(u32, Allocation)> {
        let mut order: Vec<MessageMeta> = msgs.to_vec();
        order.sort_by_key(|m| (m.priority, m.id));
        order.iter().map(|m| (m.id, self.allocate(now_ns, m, paths))).collect()
    }

    /// `path` failed or was abandoned: its buckets go, and what its streams still had to
    /// send there is allocated again over `paths` by Algorithm 1 (most urgent first). The
    /// paper allocates once per stream (§4.1 leaves re-scheduling to future work); this is
    /// the least we need so that every byte still arrives when a path dies.
    pub fn remove_path(&mut self, _now_ns: u64, path: PathId, paths: &[PathView]) {
        let live: SmallVec<[PathView; 4]> = paths.iter().filter(|v| v.id != path).copied().collect();
        for (meta, missing) in self.buckets.remove_path(path) {
            if live.is_empty() {
                continue;
            }
            let extra = self.split(missing, meta.priority, &live);
            self.buckets.extend(meta.id, &extra);
        }
    }
}

impl StreamScheduler for PriorityBucket {
    fn name(&self) -> &'static str {
        "priority_bucket"
    }

    /// §3.1: "each arrival of a stream triggers the scheduler": the stream waits here until
    /// the connection shows the paths ([`StreamScheduler::on_paths`], before its next send
    /// decision at the same instant), so streams that arrive together are allocated as one
    /// batch (PB-5).
    fn enqueue(&mut self, _now_ns: u64, msg: StreamMessage) {
        self.arrived_bytes += msg.msg.len_bytes;
        self.arrivals.push(msg.msg);
    }

    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        self.buckets.requeue_lost(chunk);
    }

    fn give_back(&mut self, _now_ns: u64, path: PathId, chunk: MsgChunk) {
        self.buckets.give_back(path, chunk);
    }

    /// Path-blind use (one path): path 0's buckets.
    fn next_chunk(&mut self, now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        self.next_chunk_on(now_ns, PathId(0), max_bytes)
    }

    fn queued_bytes(&self) -> u64 {
        self.buckets.queued_bytes() + self.arrived_bytes
    }

    fn uses_paths(&self) -> bool {
        true
    }

    /// Algorithm 1 for every stream that arrived since the last call, most urgent first.
    fn on_paths(&mut self, now_ns: u64, paths: &[PathView]) {
        if self.arrivals.is_empty() || paths.is_empty() {
            return;
        }
        let arrivals = std::mem::take(&mut self.arrivals);
        self.arrived_bytes = 0;
        self.allocate_batch(now_ns, &arrivals, paths);
    }

    fn next_chunk_on(&mut self, _now_ns: u64, path: PathId, max_bytes: u32) -> Option<MsgChunk> {
        self.buckets.next_chunk(path, max_bytes)
    }

    fn has_data_on(&self, path: PathId) -> bool {
        self.buckets.has_data(path)
    }

    fn remove_path(&mut self, now_ns: u64, path: PathId, live: &[PathView]) {
        PriorityBucket::remove_path(self, now_ns, path, live);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{blocked, view};
    use super::super::PathScheduler;
    use super::*;
    use proptest::prelude::*;

    /// A path of `mbps` Mbps, `rtt_ms` RTT (o = RTT / 2) and `ahead` bytes waiting, as
    /// fillgap.py's `P(name, mbps, rtt_ms, q)`.
    fn p(id: u32, mbps: u64, rtt_ms: u64, ahead: u64) -> FillGapPath {
        FillGapPath { id: PathId(id), ahead_bytes: ahead, owd_ns: rtt_ms * 500_000, bandwidth_bps: mbps * 1_000_000 }
    }

    /// (path, bytes, t_i in µs) per share, in sortedList order.
    fn run(d: u64, paths: &[FillGapPath]) -> Vec<(u32, u64, u64)> {
        fill_gap(d, paths).iter().map(|s| (s.id.0, s.bytes, s.completion_ns / 1000)).collect()
    }

    fn msg(id: u32, len: u64, priority: u8) -> MessageMeta {
        MessageMeta { id, len_bytes: len, priority }
    }

    // ---- Algorithm 1 against fillgap.py (REPRODUCTION-pb-partial.md A.1.6); the Python
    // reference prints the same bytes and completion times for all seven cases.

    #[test]
    fn high_small_stream_stays_on_the_low_rtt_path() {
        // r = 5 ms and 25 ms; rgap × b_1 = 20 ms × 1.25 MB/s = 25,000 B > D = 10,000:
        // l.8 false, l.16 gives all of D' to path 1; t = 10,000 / 1.25 MB/s + 5 ms.
        assert_eq!(run(10_000, &[p(1, 10, 10, 0), p(2, 40, 50, 0)]), [(1, 10_000, 13_000), (2, 0, 0)]);
    }

    #[test]
    fn high_stream_exactly_fills_the_gap() {
        // D' = rgap × b_1 = 25,000: l.8 true (>=), l.10 moves all of it, D' = 0, l.24 skipped.
        assert_eq!(run(25_000, &[p(1, 10, 10, 0), p(2, 40, 50, 0)]), [(1, 25_000, 25_000), (2, 0, 0)]);
    }

    #[test]
    fn high_remainder_splits_by_bandwidth() {
        // l.8-12: 25,000 B to path 1 (now at r_2 = 25 ms); l.24-26: 75,000 B left, 1:4 by
        // bandwidth: 15,000 + 60,000. Both finish at 40,000 / 1.25 MB/s + 5 ms = 37 ms.
        assert_eq!(run(100_000, &[p(1, 10, 10, 0), p(2, 40, 50, 0)]), [(1, 40_000, 37_000), (2, 60_000, 37_000)]);
        assert_eq!(run(1_000_000, &[p(1, 10, 10, 0), p(2, 40, 50, 0)]), [(1, 220_000, 181_000), (2, 780_000, 181_000)]);
    }

    #[test]
    fn queued_bytes_reorder_the_paths() {
        // Path 1 has 50 KB ahead: r_1 = 40 + 5 = 45 ms, r_2 = 25 ms, so path 2 sorts first.
        // rgap × b = 20 ms × 5 MB/s = 100,000 = D: all on path 2 (fillgap.py: 1.4e-11 B
        // of float residue reach path 1; in integers nothing does, PB-7).
        assert_eq!(run(100_000, &[p(1, 10, 10, 50_000), p(2, 40, 50, 0)]), [(2, 100_000, 45_000), (1, 0, 0)]);
    }

    #[test]
    fn low_equal_paths_skip_the_fill() {
        // rgap = 0: l.7 false, straight to l.24: 50,000 / 50,000, t = 16 + 5 = 21 ms.
        assert_eq!(run(100_000, &[p(1, 25, 10, 0), p(2, 25, 10, 0)]), [(1, 50_000, 21_000), (2, 50_000, 21_000)]);
        // Path 1 has 31,250 B ahead (r_1 = 15 ms): path 2 first takes 10 ms × 3.125 MB/s =
        // 31,250 B, the remaining 68,750 split evenly: 65,625 / 34,375, both at 26 ms.
        assert_eq!(run(100_000, &[p(1, 25, 10, 31_250), p(2, 25, 10, 0)]), [(2, 65_625, 26_000), (1, 34_375, 26_000)]);
    }

    // The cases below were also run through fillgap.py: same bytes and times, except that
    // its floats leave residue where ours are whole bytes (PB-7): 300.3 / 700.7 for
    // `rounding_leaves_no_byte_behind`, and a 0.0-byte share on path 3 that still reports
    // t = 15 ms in `a_zero_gap_in_the_middle_is_skipped_not_a_stop`.

    #[test]
    fn three_paths_fill_two_gaps_then_stop_inside_the_second() {
        // r = 5, 10, 20 ms; b = 8, 16, 8 Mbps = 1, 2, 1 MB/s.
        // i = 1: rgap 5 ms, 5,000 ≤ D' → d_1 = 5,000, D' = 15,000.
        // i = 2: rgap 10 ms, 10 ms × 3 MB/s = 30,000 > 15,000 → l.16: 15,000 × 1/3 and
        // × 2/3: d_1 = 10,000, d_2 = 10,000, path 3 nothing. Both finish at 15 ms.
        let paths = [p(1, 8, 10, 0), p(2, 16, 20, 0), p(3, 8, 40, 0)];
        assert_eq!(run(20_000, &paths), [(1, 10_000, 15_000), (2, 10_000, 15_000), (3, 0, 0)]);
        // D = 60,000: both gaps filled (5,000, then 10,000 + 20,000), 25,000 left for
        // l.24-26 by 1:2:1: 6,250 / 12,500 / 6,250. All finish at 26.25 ms.
        assert_eq!(run(60_000, &paths), [(1, 21_250, 26_250), (2, 32_500, 26_250), (3, 6_250, 26_250)]);
    }

    #[test]
    fn a_zero_gap_in_the_middle_is_skipped_not_a_stop() {
        // r = 5, 5, 15 ms (PB-6): i = 1 has rgap 0 and is skipped (l.7); i = 2 fills paths
        // 1 and 2 by 10 ms × (1 + 1) MB/s = 20,000; the PStream `break` would instead send
        // everything to step 3 and put 1/3 on path 3.
        let paths = [p(1, 8, 10, 0), p(2, 8, 10, 0), p(3, 8, 30, 0)];
        assert_eq!(run(20_000, &paths), [(1, 10_000, 15_000), (2, 10_000, 15_000), (3, 0, 0)]);
    }

    #[test]
    fn rounding_leaves_no_byte_behind() {
        // 3 Mbps and 7 Mbps: 1,001 B split 3:7 = 300.3 / 700.7 → 300 + 701 (largest
        // remainder), adding up to D.
        let s = run(1_001, &[p(1, 3, 10, 0), p(2, 7, 10, 0)]);
        assert_eq!((s[0].1, s[1].1), (300, 701));
    }

    #[test]
    fn paths_without_an_estimate_get_nothing() {
        let s = run(10_000, &[p(1, 0, 1, 0), p(2, 10, 10, 0)]);
        assert_eq!(s, [(2, 10_000, 13_000), (1, 0, 0)]);
        // None has one: all on the smallest one-way delay.
        let s = run(10_000, &[p(1, 0, 20, 0), p(2, 0, 10, 0)]);
        assert_eq!(s, [(1, 0, 0), (2, 10_000, 0)]);
    }

    // ---- the scheduler: Algorithm 1 fed from the buckets

    #[test]
    fn allocate_counts_more_urgent_and_equal_streams_ahead() {
        let mut pb = PriorityBucket::default();
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        // A 100 KB image (priority 3): 40,000 / 60,000 as above.
        let a = pb.allocate(0, &msg(1, 100_000, 3), &paths);
        assert_eq!(a, Allocation::Split(smallvec::smallvec![(PathId(0), 40_000), (PathId(1), 60_000)]));
        // A 10 KB CSS (priority 0) does not wait behind the image: all on path 0.
        let a = pb.allocate(0, &msg(2, 10_000, 0), &paths);
        assert_eq!(a.bytes_on(PathId(0)), 10_000);
        // Another image of equal priority waits behind both on each path: path 0 has
        // 50,000 ahead (r = 45 ms), path 1 has 60,000 (r = 12 + 25 = 37 ms): path 1 first,
        // 8 ms × 5 MB/s = 40,000 B fills the gap; 60,000 left 1:4 → 12,000 / 48,000.
        let a = pb.allocate(0, &msg(3, 100_000, 3), &paths);
        assert_eq!(a, Allocation::Split(smallvec::smallvec![(PathId(1), 88_000), (PathId(0), 12_000)]));
        assert_eq!(pb.buckets().ahead_bytes(PathId(0), 3), 62_000);
        assert_eq!(pb.buckets().ahead_bytes(PathId(0), 0), 10_000);
    }

    #[test]
    fn batch_goes_most_urgent_first() {
        let mut pb = PriorityBucket::default();
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        let out = pb.allocate_batch(0, &[msg(7, 100_000, 3), msg(5, 10_000, 0), msg(6, 10_000, 0)], &paths);
        let ids: Vec<u32> = out.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [5, 6, 7]);
        // Message 6 sees message 5's 10,000 B on path 0: r_0 = 13 ms, still first; gap to
        // 25 ms = 15,000 B ≥ 10,000: all on path 0.
        assert_eq!(out[1].1.bytes_on(PathId(0)), 10_000);
    }

    #[test]
    fn min_share_merges_shards_into_the_first_path() {
        // D = 25,200 in "High": 25,000 fill the gap, 200 split 1:4 = 40 / 160 (PB-7).
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        let mut pb = PriorityBucket::default();
        let a = pb.allocate(0, &msg(1, 25_200, 3), &paths);
        assert_eq!((a.bytes_on(PathId(0)), a.bytes_on(PathId(1))), (25_040, 160));
        let mut pb = PriorityBucket::new(PriorityBucketConfig { min_share_bytes: 1448, ..Default::default() });
        let a = pb.allocate(0, &msg(1, 25_200, 3), &paths);
        assert_eq!((a.bytes_on(PathId(0)), a.bytes_on(PathId(1))), (25_200, 0));
    }

    // ---- buckets: order, limits, preemption

    /// Drain `path` in `mss` chunks: (msg, offset, len) in order.
    fn drain(b: &mut PathBuckets, path: u32, mss: u32) -> Vec<(u32, u64, u32)> {
        std::iter::from_fn(|| b.next_chunk(PathId(path), mss))
            .map(|c| (c.msg_id, c.msg_offset_bytes, c.len_bytes()))
            .collect()
    }

    #[test]
    fn buckets_strict_priority_then_fcfs() {
        let mut b = PathBuckets::new(true);
        b.insert(msg(1, 2500, 3), &[(PathId(0), 2500)]);
        b.insert(msg(2, 1500, 0), &[(PathId(0), 1500)]);
        b.insert(msg(3, 1000, 3), &[(PathId(0), 1000)]);
        b.insert(msg(4, 500, 0), &[(PathId(0), 500)]);
        // Bucket 0 first (2 then 4, FCFS), then bucket 3 (1 exclusively, then 3).
        assert_eq!(
            drain(&mut b, 0, 1000),
            [(2, 0, 1000), (2, 1000, 500), (4, 0, 500), (1, 0, 1000), (1, 1000, 1000), (1, 2000, 500), (3, 0, 1000)]
        );
        assert_eq!(b.queued_bytes(), 0);
        assert!(!b.has_data(PathId(0)));
    }

    #[test]
    fn a_more_urgent_arrival_preempts_at_the_next_packet() {
        let mut b = PathBuckets::new(true);
        b.insert(msg(1, 5000, 3), &[(PathId(0), 5000)]);
        assert_eq!(b.next_chunk(PathId(0), 1000).map(|c| c.msg_id), Some(1));
        b.insert(msg(2, 1500, 1), &[(PathId(0), 1500)]);
        assert_eq!(drain(&mut b, 0, 1000)[..3], [(2, 0, 1000), (2, 1000, 500), (1, 1000, 1000)]);
    }

    #[test]
    fn a_path_stops_at_its_limit_and_moves_on() {
        let mut b = PathBuckets::new(true);
        // Stream 1: 3,000 B, 1,000 on path 0 and 2,000 on path 1; stream 2 only on path 0.
        b.insert(msg(1, 3000, 0), &[(PathId(0), 1000), (PathId(1), 2000)]);
        b.insert(msg(2, 800, 3), &[(PathId(0), 800)]);
        // Path 0 sends its 1,000 of stream 1, then goes on to the less urgent stream 2
        // (bucket 0 has nothing more for it).
        assert_eq!(drain(&mut b, 0, 600), [(1, 0, 600), (1, 600, 400), (2, 0, 600), (2, 600, 200)]);
        // Path 1 continues stream 1 from the common offset.
        assert_eq!(drain(&mut b, 1, 1200), [(1, 1000, 1200), (1, 2200, 800)]);
        assert_eq!(b.queued_bytes(), 0);
    }

    #[test]
    fn the_tail_packet_may_go_on_any_path_that_carries_the_stream() {
        let mut b = PathBuckets::new(true);
        b.insert(msg(1, 2000, 0), &[(PathId(0), 1000), (PathId(1), 1000)]);
        assert_eq!(b.next_chunk(PathId(0), 1000).map(|c| c.len_bytes()), Some(1000));
        // Path 0's limit is used up: the rest does not fit in 999 bytes, but it does in
        // 1,200, and the last packet may take it.
        assert_eq!(b.next_chunk(PathId(0), 999), None);
        assert_eq!(b.next_chunk(PathId(0), 1200).map(|c| (c.msg_offset_bytes, c.len_bytes())), Some((1000, 1000)));
        assert_eq!(drain(&mut b, 1, 1000), []);
        // Without the tail rule path 0 stops at its limit.
        let mut b = PathBuckets::new(false);
        b.insert(msg(1, 2000, 0), &[(PathId(0), 1000), (PathId(1), 1000)]);
        assert_eq!(drain(&mut b, 0, 1200), [(1, 0, 1000)]);
        assert_eq!(drain(&mut b, 1, 1200), [(1, 1000, 1000)]);
    }

    #[test]
    fn the_cats_variant_gives_a_low_bucket_its_share() {
        // One path, a 100 KB image (bucket 2) behind a 100 KB script (bucket 1).
        let load = |b: &mut PathBuckets| {
            b.insert(msg(1, 100_000, 1), &[(PathId(0), 100_000)]);
            b.insert(msg(2, 100_000, 2), &[(PathId(0), 100_000)]);
        };
        let mut strict = PathBuckets::new(true);
        load(&mut strict);
        let order: Vec<u32> = drain(&mut strict, 0, 1000).iter().map(|c| c.0).collect();
        assert!(order[..100].iter().all(|&i| i == 1), "strict: the script first, whole");
        let mut fair = PathBuckets::new(true).with_fairness(CatsConfig::default());
        load(&mut fair);
        let order: Vec<u32> = drain(&mut fair, 0, 1000).iter().map(|c| c.0).collect();
        // CATS defaults: bucket 1 runs 16 KiB ahead (17 chunks), then the image sends until
        // the script's debt is paid below 8 KiB (M = 2 for level 2: 5 chunks of 1000 bytes).
        let first_image = order.iter().position(|&i| i == 2).expect("the image is served");
        assert_eq!(first_image, 17);
        assert!(order[..60].iter().filter(|&&i| i == 2).count() >= 10, "{:?}", &order[..60]);
        assert_eq!(order.len(), 200, "every byte once");
    }

    #[test]
    fn a_path_whose_limit_is_spent_is_offered_the_streams_last_packet() {
        let mut b = PathBuckets::new(true);
        b.insert(msg(1, 3000, 0), &[(PathId(0), 1000), (PathId(1), 2000)]);
        assert_eq!(drain(&mut b, 0, 1200), [(1, 0, 1000)]);
        let c = b.next_chunk(PathId(1), 1200).expect("data");
        assert_eq!((c.msg_offset_bytes, c.len_bytes()), (1000, 1200));
        // 800 bytes left, all within path 1's limit; path 0 (limit spent) may take them as
        // the stream's last packet, e.g. while path 1's window is full.
        assert!(b.has_data(PathId(0)));
        assert_eq!(drain(&mut b, 0, 1200), [(1, 2200, 800)]);
        assert!(!b.has_data(PathId(1)));
        let mut strict = PathBuckets::new(false);
        strict.insert(msg(1, 3000, 0), &[(PathId(0), 1000), (PathId(1), 2000)]);
        drain(&mut strict, 0, 1200);
        strict.next_chunk(PathId(1), 1200);
        assert!(!strict.has_data(PathId(0)));
    }

    #[test]
    fn a_tail_given_back_is_new_data_of_its_path_again_not_a_retransmission() {
        let mut b = PathBuckets::new(true);
        b.insert(msg(1, 3000, 0), &[(PathId(0), 1500), (PathId(1), 1500)]);
        let c = b.next_chunk(PathId(1), 1000).expect("data");
        assert_eq!((c.msg_offset_bytes, c.len_bytes()), (0, 1000));
        // 4 bytes did not fit: they are path 1's next bytes, not path 0's retransmission.
        b.give_back(PathId(1), c.at(996, 4));
        assert_eq!(b.limit(1, PathId(1)), 504);
        assert_eq!(b.queued_bytes(), 2004);
        assert_eq!(b.limit(1, PathId(0)), 1500);
        // Path 0 sends its 1,500, then the stream's last 504 fit one packet (the tail rule).
        assert_eq!(drain(&mut b, 0, 1000), [(1, 996, 1000), (1, 1996, 500), (1, 2496, 504)]);
        assert!(!b.has_data(PathId(1)));
        // A tail that is not the last handed out goes back as lost.
        b.give_back(PathId(1), c.at(10, 5));
        assert_eq!(drain(&mut b, 0, 1000), [(1, 10, 5)]);
    }

    #[test]
    fn lost_bytes_go_first_within_the_stream_on_any_of_its_paths() {
        let mut b = PathBuckets::new(true);
        b.insert(msg(1, 3000, 0), &[(PathId(0), 1500), (PathId(1), 1500)]);
        b.insert(msg(2, 1000, 3), &[(PathId(1), 1000)]);
        assert_eq!(drain(&mut b, 0, 1000), [(1, 0, 1000), (1, 1000, 500)]);
        let c = MsgChunk::new(1, 200, 500, 3000, 0);
        b.requeue_lost(c);
        b.requeue_lost(c); // already waiting: adds nothing
        assert_eq!(b.queued_bytes(), 3000); // 1,500 new + 500 lost of stream 1, stream 2
                                            // Path 1 resends 200..700 before stream 1's new bytes, then stream 2.
        assert_eq!(drain(&mut b, 1, 1000), [(1, 200, 500), (1, 1500, 1000), (1, 2500, 500), (2, 0, 1000)]);
        // A finished stream comes back into the buckets when data is lost.
        b.requeue_lost(MsgChunk::new(2, 0, 100, 1000, 3));
        assert!(b.has_data(PathId(1)) && !b.has_data(PathId(0)));
        assert_eq!(drain(&mut b, 1, 1000), [(2, 0, 100)]);
        // Bytes never handed out cannot be lost.
        b.insert(msg(3, 1000, 0), &[(PathId(0), 1000)]);
        b.requeue_lost(MsgChunk::new(3, 0, 100, 1000, 0));
        assert_eq!(b.queued_bytes(), 1000);
    }

    /// The views as the connection builds them: `has_data` from the buckets.
    fn with_data(pb: &PriorityBucket, paths: &[PathView]) -> Vec<PathView> {
        paths.iter().map(|v| PathView { has_data: pb.has_data_on(v.id), ..*v }).collect()
    }

    #[test]
    fn paths_take_turns() {
        let mut rr = super::super::RoundRobinReady::default();
        let mut pb = PriorityBucket::default();
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        pb.allocate(0, &msg(1, 100_000, 3), &paths);
        let v = with_data(&pb, &paths);
        assert_eq!(rr.choose(0, &v), Some(PathId(0)));
        assert_eq!(rr.choose(0, &v), Some(PathId(1)));
        assert_eq!(rr.choose(0, &v), Some(PathId(0)));
        assert_eq!(rr.choose(0, &with_data(&pb, &[view(0, 10, 10), blocked(view(1, 40, 50))])), Some(PathId(0)));
        // A path with nothing in its buckets is not chosen: 10 KB stay on the low-RTT path.
        let mut pb = PriorityBucket::default();
        pb.allocate(0, &msg(1, 10_000, 3), &paths);
        let v = with_data(&pb, &paths);
        assert_eq!(rr.choose(0, &v), Some(PathId(0)));
        assert_eq!(rr.choose(0, &v), Some(PathId(0)));
        assert_eq!(rr.choose(0, &with_data(&pb, &[blocked(view(0, 10, 10)), view(1, 40, 50)])), None);
    }

    #[test]
    fn arrivals_wait_for_the_paths_then_go_as_one_batch() {
        let mut pb = PriorityBucket::default();
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        let sm = |id, len, priority| StreamMessage {
            msg: msg(id, len, priority),
            stream_id: u64::from(id) * 4,
            urgency: 3,
            incremental: false,
        };
        pb.enqueue(0, sm(1, 100_000, 3));
        pb.enqueue(0, sm(2, 10_000, 0));
        assert_eq!(pb.queued_bytes(), 110_000);
        assert!(!pb.has_data_on(PathId(0)));
        pb.on_paths(0, &paths);
        assert_eq!(pb.queued_bytes(), 110_000);
        // Stream 2 (more urgent) went first: its 10 KB on path 0 (13 ms there) ahead of
        // stream 1, which then sees 10 KB ahead on path 0: r = 8 + 5 = 13 ms vs 25 ms on
        // path 1; 12 ms gap x 10 Mbps = 15 KB, then 85 KB split 1:4.
        assert_eq!(pb.buckets().limit(2, PathId(0)), 10_000);
        assert_eq!(pb.buckets().limit(1, PathId(0)), 15_000 + 17_000);
        assert_eq!(pb.buckets().limit(1, PathId(1)), 68_000);
        assert_eq!(pb.next_chunk_on(0, PathId(0), 1200).map(|c| c.msg_id), Some(2));
    }

    #[test]
    fn a_removed_path_hands_its_share_to_the_others() {
        let mut pb = PriorityBucket::default();
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        pb.allocate(0, &msg(1, 100_000, 3), &paths);
        assert_eq!(pb.next_chunk(PathId(1), 10_000).map(|c| c.len_bytes()), Some(10_000));
        // Path 1 dies with 50,000 of its 60,000 B unsent: they go to path 0.
        pb.remove_path(0, PathId(1), &paths);
        assert_eq!(pb.buckets().limit(1, PathId(0)), 90_000);
        let mut sent = 10_000;
        while let Some(c) = pb.next_chunk(PathId(0), 1448) {
            sent += u64::from(c.len_bytes());
        }
        assert_eq!(sent, 100_000);
        // Lost bytes of a stream that only the dead path carried find a new path.
        let mut pb = PriorityBucket::default();
        pb.allocate(0, &msg(2, 10_000, 0), &paths);
        assert_eq!(pb.next_chunk(PathId(0), 20_000).map(|c| c.len_bytes()), Some(10_000));
        pb.requeue_lost(MsgChunk::new(2, 0, 1000, 10_000, 0));
        pb.remove_path(0, PathId(0), &paths);
        assert_eq!(pb.next_chunk(PathId(1), 1448).map(|c| (c.msg_offset_bytes, c.len_bytes())), Some((0, 1000)));
    }

    // ---- properties

    /// 1 to 5 paths with distinct IDs, 100 kbps to 2 Gbps.
    fn paths_strategy() -> impl Strategy<Value = Vec<FillGapPath>> {
        proptest::collection::vec((0u64..400_000, 0u64..200_000_000, 100_000u64..2_000_000_000), 1..6).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (ahead, owd, bps))| FillGapPath {
                    id: PathId(i as u32),
                    ahead_bytes: ahead,
                    owd_ns: owd,
                    bandwidth_bps: bps,
                })
                .collect()
        })
    }

    proptest! {
        /// Shares add up to D, are whole bytes (never negative), and solve P1: every path
        /// with a share finishes at the same T and every path without one could not have
        /// finished before T, within the rounding (n + 2 bytes at the slowest path's rate).
        #[test]
        fn fill_gap_adds_up_and_balances(d in 0u64..5_000_000, paths in paths_strategy()) {
            let out = fill_gap(d, &paths);
            prop_assert_eq!(out.len(), paths.len());
            prop_assert_eq!(out.iter().map(|s| s.bytes).sum::<u64>(), d);
            let n = paths.len() as u128;
            let slowest = paths.iter().map(|p| u128::from(p.bandwidth_bps)).min().unwrap();
            let tol = ((n + 2) * NS_BITS / slowest) as u64 + 2 * n as u64;
            let used: Vec<&FillGapShare> = out.iter().filter(|s| s.bytes > 0).collect();
            if let Some(t) = used.iter().map(|s| s.completion_ns).max() {
                for s in &used {
                    prop_assert!(s.completion_ns + tol >= t, "{:?} finishes early, T = {}", s, t);
                }
                for s in out.iter().filter(|s| s.bytes == 0) {
                    prop_assert!(s.r_ns.unwrap() + tol >= t, "{:?} idle but r < T = {}", s, t);
                }
            }
        }

        /// Random streams allocated over random paths, drained by random paths in random
        /// packet sizes with random losses: every byte is handed out exactly once, and again
        /// exactly once per loss, never while it is neither new nor lost.
        #[test]
        fn buckets_hand_out_every_byte_exactly_once(
            msgs in proptest::collection::vec((1u64..30_000, 0u8..4), 1..12),
            mbps in proptest::collection::vec((1u64..100, 1u64..200), 1..4),
            steps in proptest::collection::vec((0usize..4, 1u32..3000, 0u8..10), 1..400),
            tail in any::<bool>(),
            fair in any::<bool>(),
        ) {
            let mut pb = PriorityBucket::new(PriorityBucketConfig { tail_on_any_path: tail, min_share_bytes: 0, cats_fairness: fair });
            let paths: Vec<PathView> = mbps.iter().enumerate().map(|(i, (m, r))| view(i as u32, *m, *r)).collect();
            // Per byte: 0 never sent, 1 sent, 2 lost.
            let mut state: Vec<Vec<u8>> = Vec::new();
            let mut sent: Vec<MsgChunk> = Vec::new();
            for (i, (len, prio)) in msgs.iter().enumerate() {
                let a = pb.allocate(0, &msg(i as u32, *len, *prio), &paths);
                let Allocation::Split(v) = a else { panic!("per packet") };
                prop_assert_eq!(v.iter().map(|(_, b)| b).sum::<u64>(), *len);
                state.push(vec![0; *len as usize]);
            }
            let hand = |c: MsgChunk, state: &mut Vec<Vec<u8>>| -> Result<(), TestCaseError> {
                prop_assert!(c.len_bytes() > 0);
                for b in &mut state[c.msg_id as usize][c.msg_offset_bytes as usize..(c.msg_offset_bytes + u64::from(c.len_bytes())) as usize] {
                    prop_assert!(*b != 1, "byte handed out twice");
                    *b = 1;
                }
                Ok(())
            };
            for (path, mss, lose) in steps {
                let path = PathId((path % paths.len()) as u32);
                if let Some(c) = pb.next_chunk(path, mss) {
                    prop_assert!(c.len_bytes() <= mss);
                    hand(c, &mut state)?;
                    sent.push(c);
                }
                if lose == 0 && !sent.is_empty() {
                    let c = sent[mss as usize % sent.len()];
                    pb.requeue_lost(c);
                    for b in &mut state[c.msg_id as usize][c.msg_offset_bytes as usize..(c.msg_offset_bytes + u64::from(c.len_bytes())) as usize] {
                        if *b == 1 { *b = 2; }
                    }
                }
                // The running count is the bytes still to hand out: 0 (never) or 2 (lost).
                let waiting: usize = state.iter().map(|m| m.iter().filter(|&&b| b != 1).count()).sum();
                prop_assert_eq!(pb.queued_bytes(), waiting as u64);
            }
            // Drain every path; nothing may be left anywhere.
            loop {
                let mut any = false;
                for v in &paths {
                    while let Some(c) = pb.next_chunk(v.id, 1448) {
                        hand(c, &mut state)?;
                        any = true;
                    }
                }
                if !any { break; }
            }
            prop_assert_eq!(pb.buckets().queued_bytes(), 0);
            for (i, s) in state.iter().enumerate() {
                prop_assert!(s.iter().all(|b| *b == 1), "message {} not fully handed out", i);
            }
        }
    }
}
