//! The CATS Conductor over streams (Rizvi, "A Case for CATS", ../shared/seeds/000, §II-C to
//! §II-E): five queues by priority, one chunk per call from the oldest message of the
//! selected queue, and the debt hysteresis of §II-E so that no queue starves.
//!
//! This wraps [`crate::sched::Conductor`] rather than repeating it: selection, debts and
//! deadlock resolution are the Conductor's own, exactly as in TCP mode. What QUIC mode adds
//! is lost data taken back ([`Conductor::requeue_lost`]): it goes to the head of its
//! message's priority queue, ahead of new data of that level and behind lost data already
//! waiting there, so it is sent at its message's priority (RFC 9000 §13.3, RFC 9218 §12)
//! and its bytes count in the debts like any other. On top of the Conductor this type keeps,
//! per message, how far it has been handed out and which lost bytes wait to be sent again, so
//! that a byte is queued at most once and bytes never handed out are not queued twice.
//!
//! Each message is its own stream, so a chunk never spans two messages; the Conductor's
//! Save-Data and load-shedding discards are TCP-mode features and not offered here.

use super::{MsgChunk, PathId, RangeSet, StreamMessage, StreamScheduler};
use crate::intmap::IdMap;
use crate::sched::{CatsConfig, Conductor, SendScheduler};

/// What has been handed out of one message.
#[derive(Clone, Debug)]
struct Progress {
    len_bytes: u64,
    priority: u8,
    /// Offset of the first byte never handed out.
    next_new_bytes: u64,
    /// Lost bytes queued in the Conductor and not yet handed out again.
    lost: RangeSet,
}

/// The CATS Conductor over streams.
#[derive(Debug)]
pub struct StreamCats {
    conductor: Conductor,
    progress: IdMap<Progress>,
}

impl StreamCats {
    /// A scheduler with the given §II-E fairness parameters.
    pub fn new(cfg: CatsConfig) -> Self {
        Self { conductor: Conductor::new(cfg), progress: IdMap::default() }
    }

    /// The Conductor inside, for its debts, states and counters.
    pub fn conductor(&self) -> &Conductor {
        &self.conductor
    }
}

impl StreamScheduler for StreamCats {
    fn name(&self) -> &'static str {
        "cats"
    }

    /// CATS §II-C, "The Interceptor": the message goes into its priority's queue. An empty
    /// message or a message id seen before is ignored, as by the other stream schedulers.
    fn enqueue(&mut self, now_ns: u64, msg: StreamMessage) {
        let m = msg.msg;
        if m.len_bytes == 0 || self.progress.contains_key(m.id) {
            return;
        }
        self.progress.insert_new(
            m.id,
            Progress { len_bytes: m.len_bytes, priority: m.priority, next_new_bytes: 0, lost: RangeSet::default() },
        );
        self.conductor.enqueue(now_ns, m);
    }

    /// Lost bytes not already waiting and handed out before go back to the Conductor, in
    /// ascending pieces. A chunk of a message never enqueued is taken as fully handed out.
    fn requeue_lost(&mut self, _now_ns: u64, chunk: MsgChunk) {
        let p = self.progress.get_or_insert_with(chunk.msg_id, || Progress {
            len_bytes: chunk.msg_len_bytes,
            priority: chunk.priority(),
            next_new_bytes: chunk.msg_len_bytes,
            lost: RangeSet::default(),
        });
        let start = chunk.msg_offset_bytes.min(p.next_new_bytes);
        let end = chunk.msg_offset_bytes.saturating_add(chunk.len_bytes() as u64).min(p.next_new_bytes);
        for (s, e) in p.lost.insert(start, end) {
            // A piece lies inside one chunk's range, so it fits in u32.
            self.conductor.requeue_lost(MsgChunk::new(chunk.msg_id, s, (e - s) as u32, p.len_bytes, p.priority));
        }
    }

    /// CATS §II-C, "The Feeder": one chunk from the Conductor.
    fn next_chunk(&mut self, now_ns: u64, max_bytes: u32) -> Option<MsgChunk> {
        if max_bytes == 0 {
            return None;
        }
        let c = *self.conductor.next_segment(now_ns, max_bytes).first()?;
        if let Some(p) = self.progress.get_mut(c.msg_id) {
            let end = c.msg_offset_bytes + c.len_bytes() as u64;
            if c.msg_offset_bytes < p.next_new_bytes {
                p.lost.remove(c.msg_offset_bytes, end);
            } else {
                p.next_new_bytes = end;
            }
        }
        Some(c)
    }

    /// The tail of the chunk just handed out did not fit: the Conductor takes it back as if
    /// never handed out ([`Conductor::give_back`]: the piece back at the head of its queue,
    /// its bytes out of the §II-E debts), so new data stays new and goes out in one STREAM
    /// frame with what follows it. Should the Conductor refuse, it is queued as lost data.
    /// The tail was new data when it ends at the new-data mark with no lost bytes waiting
    /// (the Conductor serves a level's lost pieces before its new ones), as in
    /// `StreamTable::give_back`.
    fn give_back(&mut self, now_ns: u64, _path: PathId, chunk: MsgChunk) {
        if !self.conductor.give_back(chunk) {
            self.requeue_lost(now_ns, chunk);
            return;
        }
        if let Some(p) = self.progress.get_mut(chunk.msg_id) {
            let end = chunk.msg_offset_bytes + chunk.len_bytes() as u64;
            if p.lost.is_empty() && end == p.next_new_bytes {
                p.next_new_bytes = chunk.msg_offset_bytes;
            } else {
                p.lost.insert(chunk.msg_offset_bytes, end);
            }
        }
    }

    fn queued_bytes(&self) -> u64 {
        self.conductor.queued_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain, key, msg, ops, run_ops};
    use super::super::{strict::StrictPriority, MessageMeta};
    use super::*;
    use crate::sched::cats::LEVELS;
    use proptest::prelude::*;

    fn cfg(h: u64, l: u64, m: [u64; LEVELS]) -> CatsConfig {
        CatsConfig { high_watermark_bytes: [h; LEVELS], low_watermark_bytes: [l; LEVELS], payback_multiplier: m }
    }

    #[test]
    fn conductor_order_with_debt_hysteresis() {
        // H = 2000, L = 1000, M = 1 everywhere; chunks of 1000.
        let mut s = StreamCats::new(cfg(2000, 1000, [1; LEVELS]));
        s.enqueue(0, msg(1, 4000, 4, 0));
        s.enqueue(0, msg(2, 4000, 0, 4));
        s.enqueue(0, msg(3, 3000, 2, 8));
        // Q0 sends 2 (D0 = 2000 >= H: In-Debt). Q2 sends 1 (D2 = 1000, D0 pays back to 1000,
        // not below L) and 1 more (D2 = 2000 In-Debt, D0 = 0 Eligible). Q0 sends its last 2
        // (D0 = 2000 In-Debt, queue empty). Q4 is the only Eligible queue: 1 chunk (D4 = 1000,
        // D2 = 1000 still In-Debt), 1 more (D4 = 2000 In-Debt, D2 = 0 Eligible). Q2 sends its
        // last chunk. Q4 alone, In-Debt: served anyway (a forced serve), twice.
        assert_eq!(
            drain(&mut s, 1000),
            vec![
                (2, 0, 1000),
                (2, 1000, 1000),
                (3, 0, 1000),
                (3, 1000, 1000),
                (2, 2000, 1000),
                (2, 3000, 1000),
                (1, 0, 1000),
                (1, 1000, 1000),
                (3, 2000, 1000),
                (1, 2000, 1000),
                (1, 3000, 1000),
            ]
        );
        assert_eq!(s.conductor().stats().forced_serves, 2);
    }

    #[test]
    fn lost_data_goes_to_the_head_of_its_level_behind_more_important_levels() {
        let mut s = StreamCats::new(CatsConfig::default());
        s.enqueue(0, msg(1, 2000, 2, 0));
        s.enqueue(0, msg(2, 2000, 2, 4));
        s.enqueue(0, msg(3, 1000, 4, 8));
        let a = s.next_chunk(0, 1000).unwrap();
        let b = s.next_chunk(0, 1000).unwrap();
        let c = s.next_chunk(0, 1000).unwrap();
        assert_eq!([key(a), key(b), key(c)], [(1, 0, 1000), (1, 1000, 1000), (2, 0, 1000)]);
        s.requeue_lost(0, a);
        s.requeue_lost(0, b);
        s.requeue_lost(0, a); // already waiting: not queued twice
        s.enqueue(0, msg(4, 1000, 0, 12));
        // Left: 2000 lost + 1000 of message 2 + 1000 of 3 + 1000 of 4.
        assert_eq!(s.queued_bytes(), 5000);
        // P0's new message first; then P2's lost bytes in loss order ahead of message 2's new
        // bytes; P4 last (far below the 16 KiB watermarks, so no fairness turn).
        assert_eq!(
            drain(&mut s, 1000),
            vec![(4, 0, 1000), (1, 0, 1000), (1, 1000, 1000), (2, 1000, 1000), (3, 0, 1000)]
        );
    }

    #[test]
    fn a_lost_range_handed_out_in_pieces_is_tracked_piece_by_piece() {
        let mut s = StreamCats::new(CatsConfig::default());
        s.enqueue(0, msg(1, 3000, 1, 0));
        let a = s.next_chunk(0, 3000).unwrap();
        s.requeue_lost(0, a);
        assert_eq!(s.next_chunk(0, 1200).map(key), Some((1, 0, 1200)));
        // Bytes 1200.. still wait; requeuing the whole range again adds only 0..1200.
        s.requeue_lost(0, a);
        assert_eq!(s.queued_bytes(), 3000);
        // The Conductor keeps pieces in the order they were lost: 1200.. first, then 0..1200.
        assert_eq!(drain(&mut s, 2000), vec![(1, 1200, 1800), (1, 0, 1200)]);
    }

    /// Serves `msgs` (written at the given chunk count) in chunks of `mss`, declaring every
    /// `loss_every`-th chunk lost, and returns the longest run of chunks, per level, during
    /// which the level had data queued but was not served.
    fn max_level_wait(
        s: &mut dyn StreamScheduler,
        msgs: &[(u64, u8, usize)],
        loss_every: usize,
        mss: u32,
    ) -> [u64; LEVELS] {
        let mut pending: Vec<(usize, MessageMeta)> = msgs
            .iter()
            .enumerate()
            .map(|(k, &(len, p, at))| (at, MessageMeta { id: k as u32, len_bytes: len, priority: p }))
            .collect();
        pending.sort_by_key(|p| p.0);
        let mut queued = [0u64; LEVELS];
        let (mut waited, mut worst) = ([0u64; LEVELS], [0u64; LEVELS]);
        let mut step = 0usize;
        loop {
            while pending.first().is_some_and(|p| p.0 <= step) {
                let (_, m) = pending.remove(0);
                queued[m.priority as usize] += m.len_bytes;
                s.enqueue(0, StreamMessage { msg: m, stream_id: 4 * m.id as u64, urgency: 3, incremental: false });
            }
            step += 1;
            let Some(c) = s.next_chunk(0, mss) else {
                if pending.is_empty() {
                    return worst;
                }
                continue;
            };
            s.on_packet_end();
            let served = c.priority() as usize;
            queued[served] -= c.len_bytes() as u64;
            for i in 0..LEVELS {
                waited[i] = if i == served || queued[i] == 0 { 0 } else { waited[i] + 1 };
                worst[i] = worst[i].max(waited[i]);
            }
            if step.is_multiple_of(loss_every) {
                queued[served] += c.len_bytes() as u64;
                s.requeue_lost(0, c);
            }
        }
    }

    /// The bound of the Conductor's own starvation test (sched/cats.rs): every other queue
    /// sending its high watermark, times the slowest payback, plus the redistribution.
    fn wait_bound(c: &CatsConfig, mss: u32) -> u64 {
        10 * (c.high_watermark_bytes.iter().sum::<u64>() / mss as u64 + 10)
            * (c.payback_multiplier.iter().max().unwrap() + 1)
    }

    #[test]
    fn the_starvation_check_catches_a_scheduler_that_starves() {
        // The bound for the default parameters is 10 × (5 × 16384 / 1000 + 10) × (3 + 1) =
        // 10 × 91 × 4 = 3640 chunks. Strict priority makes P4's message wait for all 4000
        // chunks of P0's 4 MB, past it.
        let msgs = [(1000, 4, 0), (4_000_000, 0, 0)];
        let bound = wait_bound(&CatsConfig::default(), 1000);
        assert_eq!(bound, 3640);
        let strict = max_level_wait(&mut StrictPriority::new(), &msgs, usize::MAX, 1000);
        assert_eq!(strict[4], 4000);
        let cats = max_level_wait(&mut StreamCats::new(CatsConfig::default()), &msgs, usize::MAX, 1000);
        // P0 runs up 17 chunks (17000 >= 16384), then P4's single chunk goes.
        assert_eq!(cats[4], 17);
    }

    proptest! {
        /// The byte contract under random operations, with the default parameters.
        #[test]
        fn invariants(ops in ops()) {
            let mut s = StreamCats::new(CatsConfig::default());
            run_ops(&mut s, &ops)?;
        }

        /// No queue with data waits longer than the Conductor's bound, whatever the
        /// parameters, arrivals and losses.
        #[test]
        fn no_queue_starves(
            h in proptest::array::uniform5(1u64..50_000),
            lfrac in proptest::array::uniform5(0u64..=100),
            m in proptest::array::uniform5(1u64..8),
            msgs in proptest::collection::vec((1u64..30_000, 0u8..5, 0usize..40), 1..25),
            loss_every in 2usize..50,
        ) {
            let low: [u64; LEVELS] = std::array::from_fn(|i| (h[i] * lfrac[i] / 100).max(1));
            let c = CatsConfig { high_watermark_bytes: h, low_watermark_bytes: low, payback_multiplier: m };
            let bound = wait_bound(&c, 1000);
            let worst = max_level_wait(&mut StreamCats::new(c), &msgs, loss_every, 1000);
            prop_assert!(worst.iter().all(|&w| w < bound), "waits {:?}, bound {}", worst, bound);
        }
    }
}
