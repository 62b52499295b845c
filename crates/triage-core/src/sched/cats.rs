//! The CATS Conductor (Rizvi, "A Case for CATS", ../shared/seeds/000): five priority
//! queues fed into one TCP byte stream one MSS-sized chunk at a time, with the debt-based
//! hysteresis fairness of §II-E so that no queue starves.
//!
//! CATS §II-C, "Interceptor and Feeder": the application's messages are intercepted into
//! queues ([`SendScheduler::enqueue`]); the Conductor is re-entrant and called for every
//! single segment, when data arrives and whenever an ACK frees room, so a high-priority
//! message that arrives at any moment is chosen at the next send opportunity
//! ([`SendScheduler::next_segment`]). A chunk never spans two messages.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Chunks, DiscardReason, Discarded, MessageMeta, MsgChunk, SendScheduler};

/// Number of priority queues: 0 critical … 4 background (CATS §II-D-1).
pub const LEVELS: usize = 5;

/// Fairness parameters of §II-E, per queue. Priorities above 4 are served from queue 4.
///
/// Defaults (the paper publishes none): high watermarks of 16 KiB and low watermarks of
/// 8 KiB for every queue, payback multipliers `M = [1, 1, 2, 2, 3]`. Read: a queue may run
/// 16 KiB ahead of the less important ones before it must yield, and is eligible again once
/// their sending has paid half of that back; bytes from the lowest queues pay back fastest,
/// so higher-priority queues have the lower multipliers, as §II-E describes them.
/// Calibrated by a sweep over H, L and M (`cargo run --release -p triage-sim --example
/// cats_sweep`): on the paper's page at 2 Mbps / 50 ms every group lands within 10% of
/// Table I's CATS column, and on ferguson.com over mobileSlow4G first paint comes 14%
/// before FIFO's. Uniform multipliers (`M = 1`, `H = 24 KiB`, `L = 18 KiB`) fit Table I
/// within 4% but interleave so much that the real page paints later than under FIFO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatsConfig {
    /// High watermarks `H_i` in bytes: at or above, queue `i` is In-Debt.
    #[serde(default = "default_high")]
    pub high_watermark_bytes: [u64; LEVELS],
    /// Low watermarks `L_i` in bytes: below, an In-Debt queue is Eligible again.
    #[serde(default = "default_low")]
    pub low_watermark_bytes: [u64; LEVELS],
    /// Payback multipliers `M_j`: when queue `j` sends `N` bytes, every higher-priority
    /// queue's debt falls by `N × M_j`.
    #[serde(default = "default_multipliers")]
    pub payback_multiplier: [u64; LEVELS],
}

fn default_high() -> [u64; LEVELS] {
    [16 * 1024; LEVELS]
}
fn default_low() -> [u64; LEVELS] {
    [8 * 1024; LEVELS]
}
fn default_multipliers() -> [u64; LEVELS] {
    [1, 1, 2, 2, 3]
}

/// Largest payback multiplier [`CatsConfig::validate`] accepts. The paper's figures use 1 to
/// 3; the bound keeps `N × M` and the deadlock-resolution rounds (at most 64 × ΣM per
/// selection, see [`Conductor`]) small.
pub const MAX_PAYBACK_MULTIPLIER: u64 = 100;

impl Default for CatsConfig {
    fn default() -> Self {
        Self {
            high_watermark_bytes: default_high(),
            low_watermark_bytes: default_low(),
            payback_multiplier: default_multipliers(),
        }
    }
}

impl CatsConfig {
    /// Checks the parameters: `0 < L_i ≤ H_i`, `1 ≤ M_i ≤` [`MAX_PAYBACK_MULTIPLIER`].
    /// The error reads `FIELD: what was expected`, with the field named as in a scenario's
    /// `transport.cats` table (`payback_multiplier[4]: ...`).
    pub fn validate(&self) -> Result<(), String> {
        for i in 0..LEVELS {
            if self.high_watermark_bytes[i] == 0 {
                return Err(format!("high_watermark[{i}]: expected a positive size"));
            }
            if self.low_watermark_bytes[i] == 0 {
                return Err(format!(
                    "low_watermark[{i}]: expected a positive size (a queue whose debt must fall below 0 is never \
                     eligible again)"
                ));
            }
            if self.low_watermark_bytes[i] > self.high_watermark_bytes[i] {
                return Err(format!(
                    "low_watermark[{i}]: expected at most high_watermark[{i}] ({} bytes), got {}",
                    self.high_watermark_bytes[i], self.low_watermark_bytes[i]
                ));
            }
            let m = self.payback_multiplier[i];
            if !(1..=MAX_PAYBACK_MULTIPLIER).contains(&m) {
                return Err(format!("payback_multiplier[{i}]: expected 1..{MAX_PAYBACK_MULTIPLIER}, got {m}"));
            }
        }
        Ok(())
    }
}

/// §II-E: the state of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueState {
    /// May be served.
    Eligible,
    /// Has sent too far ahead; waits until its debt falls below its low watermark.
    InDebt,
}

/// A queued piece of one message: the whole message when written, or a lost range of it
/// taken back ([`Conductor::requeue_lost`]).
#[derive(Debug, Clone)]
struct Queued {
    msg: MessageMeta,
    /// Next offset to hand out.
    sent_bytes: u64,
    /// End of the piece: the message length, or the end of a lost range.
    end_bytes: u64,
    /// A lost range to send again (QUIC mode only).
    retransmission: bool,
}

/// Counters of the Conductor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConductorStats {
    /// Bytes handed out per queue.
    pub sent_bytes: [u64; LEVELS],
    /// Times equation (1) redistributed debt.
    pub deadlock_resolutions: u64,
    /// Times no queue was eligible even after equation (1), and the highest-priority
    /// non-empty queue was served anyway (see [`Conductor`]).
    pub forced_serves: u64,
}

/// The §II-E debt state of the five levels, apart from what is queued: the Conductor keeps
/// one over its queues, and PriorityBucket's per-path buckets can keep one per path
/// (`path::sched::priority_bucket`).
///
/// Liveness: the paper says that after equation (1) at least one queue is eligible. That
/// holds only when a scaled debt falls below its low watermark. With two or more In-Debt
/// queues every application of (1) shrinks each debt by a factor `M_i / M_total < 1`, so
/// [`DebtLedger::select`] repeats it until one queue is Eligible (each repetition is
/// counted). With a single non-empty queue, `M_i / M_total = 1` leaves its debt unchanged,
/// and fairness is moot: that queue is served and counted as a forced serve. Low
/// watermarks must be positive ([`CatsConfig::validate`]), so no queue waits forever.
#[derive(Debug, Clone)]
pub struct DebtLedger {
    cfg: CatsConfig,
    debt: [u64; LEVELS],
    state: [QueueState; LEVELS],
    /// Times equation (1) redistributed debt, and times a queue was served though not Eligible.
    deadlock_resolutions: u64,
    forced_serves: u64,
}

impl DebtLedger {
    /// Every level Eligible, no debt.
    pub fn new(cfg: CatsConfig) -> Self {
        Self {
            cfg,
            debt: [0; LEVELS],
            state: [QueueState::Eligible; LEVELS],
            deadlock_resolutions: 0,
            forced_serves: 0,
        }
    }

    /// CATS §II-E, "State Update": after `n` bytes from queue `j`, `D_j += n` (In-Debt at or
    /// above `H_j`), and every higher-priority queue `i < j` pays back
    /// `D_i = max(0, D_i − n·M_j)` (Eligible again below `L_i`).
    pub fn on_sent(&mut self, j: usize, n: u64) {
        self.debt[j] += n;
        if self.debt[j] >= self.cfg.high_watermark_bytes[j] {
            self.state[j] = QueueState::InDebt;
        }
        let payback = n.saturating_mul(self.cfg.payback_multiplier[j]);
        for i in 0..j {
            self.debt[i] = self.debt[i].saturating_sub(payback);
            if self.state[i] == QueueState::InDebt && self.debt[i] < self.cfg.low_watermark_bytes[i] {
                self.state[i] = QueueState::Eligible;
            }
        }
    }

    /// CATS §II-E, "Deadlock Resolution", equation (1): for every non-empty In-Debt queue,
    /// `D_i = trunc(D_i × M_i / M_total)` with `M_total` the sum of their multipliers; a
    /// queue whose debt falls below its low watermark becomes Eligible.
    pub fn resolve_deadlock(&mut self, nonempty: [bool; LEVELS]) {
        let ne: Vec<usize> = (0..LEVELS).filter(|&i| nonempty[i] && self.state[i] == QueueState::InDebt).collect();
        let m_total: u64 = ne.iter().fold(0u64, |a, &i| a.saturating_add(self.cfg.payback_multiplier[i]));
        if m_total == 0 {
            return;
        }
        self.deadlock_resolutions += 1;
        for &i in &ne {
            self.debt[i] = (self.debt[i] as u128 * self.cfg.payback_multiplier[i] as u128 / m_total as u128) as u64;
            if self.debt[i] < self.cfg.low_watermark_bytes[i] {
                self.state[i] = QueueState::Eligible;
            }
        }
    }

    /// The level to serve next among the `nonempty` ones: the most urgent Eligible one, after
    /// deadlock resolution when every non-empty level is In-Debt.
    pub fn select(&mut self, nonempty: [bool; LEVELS]) -> Option<usize> {
        let eligible = |s: &Self| (0..LEVELS).find(|&i| nonempty[i] && s.state[i] == QueueState::Eligible);
        if let Some(i) = eligible(self) {
            return Some(i);
        }
        let first_nonempty = (0..LEVELS).find(|&i| nonempty[i])?;
        if nonempty.iter().filter(|&&n| n).count() >= 2 {
            // Each round multiplies every debt by at most (M_total - 1) / M_total; 64·M_total
            // rounds take any u64 debt to 0.
            // Unvalidated multipliers saturate (validate() keeps them at most 100 each).
            let m_total: u64 = (0..LEVELS)
                .filter(|&i| nonempty[i])
                .fold(0u64, |a, i| a.saturating_add(self.cfg.payback_multiplier[i]));
            for _ in 0..m_total.max(1).saturating_mul(64) {
                self.resolve_deadlock(nonempty);
                if let Some(i) = eligible(self) {
                    return Some(i);
                }
            }
        }
        self.forced_serves += 1;
        Some(first_nonempty)
    }

    /// Debt `D_i` of every level.
    pub fn debts(&self) -> [u64; LEVELS] {
        self.debt
    }

    /// State `S_i` of every level.
    pub fn states(&self) -> [QueueState; LEVELS] {
        self.state
    }
}

/// The CATS Conductor: five queues and their [`DebtLedger`].
#[derive(Debug, Clone)]
pub struct Conductor {
    queues: [VecDeque<Queued>; LEVELS],
    ledger: DebtLedger,
    queued_bytes: u64,
    stats: ConductorStats,
    /// The last chunk handed out, while [`Conductor::give_back`] may still take its tail back.
    last: Option<LastTake>,
}

/// What [`Conductor::give_back`] needs to undo the end of the last take: its level, the
/// §II-E state before its update, the chunk, and the piece it emptied (if it did).
#[derive(Debug, Clone)]
struct LastTake {
    level: usize,
    debt: [u64; LEVELS],
    state: [QueueState; LEVELS],
    chunk: MsgChunk,
    emptied: Option<Queued>,
}

impl Conductor {
    /// A Conductor with the given fairness parameters.
    pub fn new(cfg: CatsConfig) -> Self {
        Self {
            queues: Default::default(),
            ledger: DebtLedger::new(cfg),
            queued_bytes: 0,
            stats: ConductorStats::default(),
            last: None,
        }
    }

    /// Takes back the tail of the chunk just handed out ([`Conductor::next_segment`]), for a
    /// transport that found it did not fit its packet (QUIC mode: the STREAM header came out
    /// longer than the smallest). Everything is as if the take had been only the bytes
    /// before the tail: the piece is back at the head of its queue, and the §II-E state
    /// update counts only the bytes kept (the state before the take is restored and updated
    /// with them). False, and nothing changed, when `tail` is not the end of the last chunk
    /// handed out or the queues changed since (the caller then queues it as lost data).
    pub fn give_back(&mut self, tail: MsgChunk) -> bool {
        let Some(last) = &self.last else { return false };
        let c = last.chunk;
        let (start, end) = (tail.msg_offset_bytes, tail.msg_offset_bytes.saturating_add(tail.len_bytes() as u64));
        let c_end = c.msg_offset_bytes + c.len_bytes() as u64;
        if tail.msg_id != c.msg_id || end != c_end || start < c.msg_offset_bytes || start >= end {
            return false;
        }
        let i = last.level;
        if last.emptied.is_none()
            && !self.queues[i].front().is_some_and(|q| q.msg.id == c.msg_id && q.sent_bytes == end)
        {
            return false;
        }
        let last = self.last.take().expect("checked above");
        let back = end - start;
        match last.emptied {
            Some(mut q) => {
                q.sent_bytes = start;
                self.queues[i].push_front(q);
            }
            None => self.queues[i].front_mut().expect("checked above").sent_bytes = start,
        }
        self.queued_bytes += back;
        self.stats.sent_bytes[i] -= back;
        self.ledger.debt = last.debt;
        self.ledger.state = last.state;
        if start > c.msg_offset_bytes {
            self.ledger.on_sent(i, start - c.msg_offset_bytes);
        }
        true
    }

    /// Debt `D_i` of every queue.
    pub fn debts(&self) -> [u64; LEVELS] {
        self.ledger.debts()
    }

    /// State `S_i` of every queue.
    pub fn states(&self) -> [QueueState; LEVELS] {
        self.ledger.states()
    }

    /// Counters.
    pub fn stats(&self) -> &ConductorStats {
        &self.stats
    }

    /// Bytes waiting in queue `i`.
    pub fn queue_bytes(&self, i: usize) -> u64 {
        self.queues[i].iter().map(|q| q.end_bytes - q.sent_bytes).sum()
    }

    fn level(priority: u8) -> usize {
        (priority as usize).min(LEVELS - 1)
    }

    fn nonempty(&self) -> [bool; LEVELS] {
        std::array::from_fn(|i| !self.queues[i].is_empty())
    }

    /// [`DebtLedger::on_sent`].
    pub fn on_sent(&mut self, j: usize, n: u64) {
        self.ledger.on_sent(j, n);
    }

    /// [`DebtLedger::resolve_deadlock`] over the non-empty queues.
    pub fn resolve_deadlock(&mut self) {
        let ne = self.nonempty();
        self.ledger.resolve_deadlock(ne);
        self.stats.deadlock_resolutions = self.ledger.deadlock_resolutions;
    }

    /// The queue to serve next ([`DebtLedger::select`] over the non-empty queues).
    pub fn select(&mut self) -> Option<usize> {
        let ne = self.nonempty();
        let i = self.ledger.select(ne);
        self.stats.deadlock_resolutions = self.ledger.deadlock_resolutions;
        self.stats.forced_serves = self.ledger.forced_serves;
        i
    }

    fn take_message(&mut self, i: usize, idx: usize, reason: DiscardReason) -> Discarded {
        let q = self.queues[i].remove(idx).expect("index in range");
        let left = q.end_bytes - q.sent_bytes;
        self.queued_bytes -= left;
        Discarded { msg_id: q.msg.id, bytes: left, partially_sent: q.sent_bytes > 0 || q.retransmission, reason }
    }

    /// Takes back bytes of a message that were handed out and lost, for a transport that
    /// sends lost data again as new frames scheduled by priority (QUIC, RFC 9002 §2; the
    /// TCP mode retransmits below the scheduler and never calls this). The range goes to the
    /// head of its priority's queue, behind lost ranges already waiting there and ahead of
    /// all new data of that level (RFC 9000 §13.3: retransmissions before new data, within
    /// what the application's priorities say). It is then served like any queued data: one
    /// chunk per call, counted in the §II-E debts. The caller queues each lost byte once;
    /// the range is clipped to the message.
    pub fn requeue_lost(&mut self, chunk: MsgChunk) {
        let start = chunk.msg_offset_bytes.min(chunk.msg_len_bytes);
        let end = chunk.msg_offset_bytes.saturating_add(chunk.len_bytes() as u64).min(chunk.msg_len_bytes);
        if start >= end {
            return;
        }
        let msg = MessageMeta { id: chunk.msg_id, len_bytes: chunk.msg_len_bytes, priority: chunk.priority() };
        self.last = None;
        let queue = &mut self.queues[Self::level(chunk.priority())];
        let at = queue.iter().take_while(|q| q.retransmission).count();
        queue.insert(at, Queued { msg, sent_bytes: start, end_bytes: end, retransmission: true });
        self.queued_bytes += end - start;
    }
}

impl SendScheduler for Conductor {
    fn name(&self) -> &'static str {
        "cats"
    }

    /// CATS §II-C, "The Interceptor": the whole message goes into its priority's queue.
    fn enqueue(&mut self, _now_ns: u64, msg: MessageMeta) {
        self.queued_bytes += msg.len_bytes;
        self.queues[Self::level(msg.priority)].push_back(Queued {
            msg,
            sent_bytes: 0,
            end_bytes: msg.len_bytes,
            retransmission: false,
        });
    }

    /// CATS §II-C, "The Feeder": one chunk of at most one MSS from the selected queue's
    /// oldest message, then the §II-E state update.
    fn next_segment(&mut self, _now_ns: u64, max_bytes: u32) -> Chunks {
        let mut out = Chunks::new();
        let Some(i) = self.select() else { return out };
        let q = self.queues[i].front_mut().expect("selected queue is non-empty");
        let take = (q.end_bytes - q.sent_bytes).min(max_bytes as u64);
        let chunk = MsgChunk::new(q.msg.id, q.sent_bytes, take as u32, q.msg.len_bytes, q.msg.priority);
        out.push(chunk);
        q.sent_bytes += take;
        let emptied = if q.sent_bytes == q.end_bytes { self.queues[i].pop_front() } else { None };
        self.queued_bytes -= take;
        self.stats.sent_bytes[i] += take;
        self.last = Some(LastTake { level: i, debt: self.ledger.debt, state: self.ledger.state, chunk, emptied });
        self.on_sent(i, take);
        out
    }

    fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// CATS §II-D-3, Save-Data: every queued message with a priority number above
    /// `threshold` (less important) leaves the queues; what it had not sent is reported.
    fn discard_below(&mut self, threshold: u8) -> Vec<Discarded> {
        self.last = None;
        let mut out = Vec::new();
        for i in 0..LEVELS {
            let mut k = 0;
            while k < self.queues[i].len() {
                if self.queues[i][k].msg.priority > threshold {
                    out.push(self.take_message(i, k, DiscardReason::SaveData));
                } else {
                    k += 1;
                }
            }
        }
        out
    }

    /// CATS §II-D-3, source load shedding: the oldest message of the lowest-priority
    /// non-empty queue at or below `min_priority` in importance leaves the queues.
    fn shed_one(&mut self, min_priority: u8) -> Option<Discarded> {
        self.last = None;
        let lowest = (Self::level(min_priority)..LEVELS).rev().find(|&i| !self.queues[i].is_empty())?;
        Some(self.take_message(lowest, 0, DiscardReason::LoadShed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cfg(h: u64, l: u64, m: [u64; LEVELS]) -> CatsConfig {
        CatsConfig { high_watermark_bytes: [h; LEVELS], low_watermark_bytes: [l; LEVELS], payback_multiplier: m }
    }

    fn msg(id: u32, len: u64, p: u8) -> MessageMeta {
        MessageMeta { id, len_bytes: len, priority: p }
    }

    /// A tail given back undoes its part of the take exactly: queue, bytes and §II-E state are
    /// those of a Conductor that took only the bytes kept.
    #[test]
    fn a_tail_given_back_is_as_if_never_taken() {
        // H = 2000, L = 1000, M = 1: queue 0 sends 1000 then 1000 (D0 = 2000, In-Debt), queue 2
        // sends 1000 (D2 = 1000, D0 pays back to 1000: still In-Debt, not below L).
        let mut c = Conductor::new(cfg(2000, 1000, [1; LEVELS]));
        c.enqueue(0, msg(1, 2000, 0));
        c.enqueue(0, msg(2, 3000, 2));
        let first = c.next_segment(0, 1000)[0];
        assert_eq!((first.msg_id, first.msg_offset_bytes, first.len_bytes()), (1, 0, 1000));
        let second = c.next_segment(0, 1000)[0];
        assert_eq!(c.states()[0], QueueState::InDebt);
        assert_eq!(c.queued_bytes(), 3000, "message 1 emptied its piece");
        // The last 4 bytes did not fit: D0 = 1996 < H, queue 0 Eligible again, message 1 back
        // at the head of its queue with its last 4 bytes.
        assert!(c.give_back(second.at(1996, 4)));
        assert_eq!(c.debts(), [1996, 0, 0, 0, 0]);
        assert_eq!(c.states()[0], QueueState::Eligible);
        assert_eq!(c.queued_bytes(), 3004);
        assert_eq!(c.stats().sent_bytes[0], 1996);
        let third = c.next_segment(0, 1000)[0];
        assert_eq!((third.msg_id, third.msg_offset_bytes, third.len_bytes()), (1, 1996, 4));
        assert_eq!(c.debts(), [2000, 0, 0, 0, 0]);
        // Only the end of the last take comes back, and only once.
        let mut d = Conductor::new(cfg(2000, 1000, [1; LEVELS]));
        d.enqueue(0, msg(2, 3000, 2));
        let part = d.next_segment(0, 1000)[0];
        assert!(!d.give_back(part.at(0, 10)), "not the end of the chunk");
        assert!(!d.give_back(MsgChunk::new(3, 990, 10, 3000, 2)), "another message");
        assert!(d.give_back(part.at(990, 10)));
        assert_eq!(d.queued_bytes(), 2010);
        assert!(!d.give_back(part.at(980, 10)), "a second time");
        assert_eq!(d.queued_bytes(), 2010);
        // Lost data queued in between (the queues changed): refused.
        let p2 = d.next_segment(0, 1000)[0];
        d.requeue_lost(part.at(0, 100));
        assert!(!d.give_back(p2.at(p2.msg_offset_bytes + 900, 100)));
    }

    #[test]
    fn state_update_matches_hand_computation() {
        // H = 3000, L = 1000, M = [1, 2, 3, 4, 5].
        let mut c = Conductor::new(cfg(3000, 1000, [1, 2, 3, 4, 5]));
        c.on_sent(0, 1448);
        c.on_sent(0, 1448);
        assert_eq!(c.debts()[0], 2896);
        assert_eq!(c.states()[0], QueueState::Eligible, "2896 < H");
        c.on_sent(0, 1448);
        assert_eq!(c.debts()[0], 4344);
        assert_eq!(c.states()[0], QueueState::InDebt, "4344 >= H = 3000");
        // Queue 2 sends 500 bytes: D_2 = 500; D_0 = 4344 - 500*3 = 2844, D_1 = max(0, 0 - 1500) = 0.
        c.on_sent(2, 500);
        assert_eq!(c.debts(), [2844, 0, 500, 0, 0]);
        assert_eq!(c.states()[0], QueueState::InDebt, "2844 is not below L = 1000");
        // Queue 4 sends 400: D_0 = 2844 - 2000 = 844 < L: Eligible; D_2 = max(0, 500 - 2000) = 0.
        c.on_sent(4, 400);
        assert_eq!(c.debts(), [844, 0, 0, 0, 400]);
        assert_eq!(c.states()[0], QueueState::Eligible);
    }

    #[test]
    fn equation_1_scales_debt_by_relative_multiplier_with_truncation() {
        let mut c = Conductor::new(cfg(1000, 100, [1, 2, 3, 4, 5]));
        c.enqueue(0, msg(1, 10_000, 1));
        c.enqueue(0, msg(2, 10_000, 3));
        c.enqueue(0, msg(3, 10_000, 4));
        // Put queues 1, 3, 4 in debt directly.
        c.ledger.debt = [0, 1001, 0, 1999, 3333];
        c.ledger.state =
            [QueueState::Eligible, QueueState::InDebt, QueueState::Eligible, QueueState::InDebt, QueueState::InDebt];
        c.resolve_deadlock();
        // M_total = 2 + 4 + 5 = 11.
        // D_1 = trunc(1001*2/11) = trunc(182.0) = 182; D_3 = trunc(1999*4/11) = trunc(726.9) = 726;
        // D_4 = trunc(3333*5/11) = trunc(1515.0) = 1515.
        assert_eq!(c.debts(), [0, 182, 0, 726, 1515]);
        // None is below L = 100: all stay In-Debt.
        assert!(c.states()[1..].iter().step_by(2).all(|s| *s == QueueState::InDebt));
        assert_eq!(c.states()[1], QueueState::InDebt);
    }

    #[test]
    fn deadlock_resolution_frees_the_queue_with_the_smallest_relative_multiplier() {
        let mut c = Conductor::new(cfg(1000, 500, [1, 2, 3, 4, 5]));
        c.enqueue(0, msg(1, 10_000, 0));
        c.enqueue(0, msg(2, 10_000, 4));
        c.ledger.debt = [1200, 0, 0, 0, 1200];
        c.ledger.state[0] = QueueState::InDebt;
        c.ledger.state[4] = QueueState::InDebt;
        // M_total = 6: D_0 = trunc(1200/6) = 200 < 500 → Eligible; D_4 = 1000 stays In-Debt.
        assert_eq!(c.select(), Some(0));
        assert_eq!(c.debts()[0], 200);
        assert_eq!(c.debts()[4], 1000);
        assert_eq!(c.stats().deadlock_resolutions, 1);
    }

    #[test]
    fn strict_priority_until_debt_then_fairness() {
        let mut c = Conductor::new(cfg(3000, 1000, [1, 1, 1, 1, 1]));
        c.enqueue(0, msg(4, 10_000, 4));
        c.enqueue(0, msg(0, 10_000, 0));
        let order: Vec<u32> = (0..6).map(|_| c.next_segment(0, 1000)[0].msg_id).collect();
        // Queue 0 sends 3 chunks (debt 3000 >= H), then must yield to queue 4 until its
        // debt is paid back below 1000: queue 4 sends 3 chunks (2000 of payback ...).
        assert_eq!(order, vec![0, 0, 0, 4, 4, 4]);
        assert_eq!(c.next_segment(0, 1000)[0].msg_id, 0, "D_0 = 0 after 3000 of payback");
    }

    #[test]
    fn late_high_priority_message_goes_next() {
        let mut c = Conductor::new(CatsConfig::default());
        c.enqueue(0, msg(4, 100_000, 4));
        for _ in 0..5 {
            assert_eq!(c.next_segment(0, 1448)[0].msg_id, 4);
        }
        c.enqueue(7, msg(0, 3000, 0));
        let s = c.next_segment(7, 1448);
        assert_eq!((s[0].msg_id, s[0].len_bytes()), (0, 1448));
    }

    #[test]
    fn chunks_never_span_messages() {
        let mut c = Conductor::new(CatsConfig::default());
        c.enqueue(0, msg(1, 1000, 2));
        c.enqueue(0, msg(2, 1000, 2));
        let s = c.next_segment(0, 1448);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].len_bytes(), 1000);
    }

    #[test]
    fn save_data_discards_less_important_messages_and_reports_them() {
        let mut c = Conductor::new(CatsConfig::default());
        for p in 0..5u8 {
            c.enqueue(0, msg(p as u32, 5000, p));
        }
        c.next_segment(0, 1448); // from P0
        let d = c.discard_below(2);
        let ids: Vec<(u32, u64)> = d.iter().map(|x| (x.msg_id, x.bytes)).collect();
        assert_eq!(ids, vec![(3, 5000), (4, 5000)]);
        assert!(d.iter().all(|x| x.reason == DiscardReason::SaveData && !x.partially_sent));
        assert_eq!(c.queued_bytes(), 3 * 5000 - 1448);
    }

    #[test]
    fn load_shedding_takes_the_oldest_lowest_priority_message() {
        let mut c = Conductor::new(CatsConfig::default());
        c.enqueue(0, msg(1, 5000, 3));
        c.enqueue(0, msg(2, 5000, 4));
        c.enqueue(0, msg(3, 5000, 4));
        c.enqueue(0, msg(4, 5000, 0));
        assert_eq!(c.shed_one(3).map(|d| d.msg_id), Some(2));
        assert_eq!(c.shed_one(3).map(|d| d.msg_id), Some(3));
        assert_eq!(c.shed_one(3).map(|d| d.msg_id), Some(1));
        assert_eq!(c.shed_one(3), None, "critical data is never shed");
    }

    #[test]
    fn lost_ranges_go_to_the_head_of_their_queue_in_loss_order() {
        let mut c = Conductor::new(CatsConfig::default());
        c.enqueue(0, msg(1, 3000, 2));
        c.enqueue(0, msg(2, 1000, 2));
        let a = c.next_segment(0, 1000)[0];
        let b = c.next_segment(0, 1000)[0];
        assert_eq!((a.msg_offset_bytes, b.msg_offset_bytes), (0, 1000));
        // Lost in the order b, a: both go ahead of message 1's last 1000 and message 2.
        c.requeue_lost(b);
        c.requeue_lost(a);
        assert_eq!(c.queue_bytes(2), 4000);
        assert_eq!(c.queued_bytes(), 4000);
        let order: Vec<(u32, u64)> = (0..4)
            .map(|_| {
                let s = c.next_segment(0, 1000)[0];
                (s.msg_id, s.msg_offset_bytes)
            })
            .collect();
        assert_eq!(order, vec![(1, 1000), (1, 0), (1, 2000), (2, 0)]);
        // A range past the message end is clipped: 2500..3500 of a 3000-byte message is 500.
        c.requeue_lost(a.at(2500, 1000));
        assert_eq!(c.queued_bytes(), 500);
        // Shedding a lost range reports a partly sent message, even at offset 0.
        c.requeue_lost(a);
        let d = c.shed_one(2).unwrap();
        assert_eq!((d.msg_id, d.bytes, d.partially_sent), (1, 500, true));
        let d = c.shed_one(2).unwrap();
        assert_eq!((d.msg_id, d.bytes, d.partially_sent), (1, 1000, true));
    }

    proptest! {
        /// Whatever the parameters and arrivals, every queued byte is handed out exactly
        /// once, a non-empty queue waits a bounded number of segments, and debts respect
        /// the update rule.
        #[test]
        fn no_non_empty_queue_waits_forever(
            h in proptest::array::uniform5(1u64..50_000),
            lfrac in proptest::array::uniform5(0u64..=100),
            m in proptest::array::uniform5(1u64..8),
            msgs in proptest::collection::vec((1u64..30_000, 0u8..5, 0usize..40), 1..25),
            mss in 100u32..2000,
        ) {
            let low: [u64; LEVELS] = std::array::from_fn(|i| (h[i] * lfrac[i] / 100).max(1));
            let mut c = Conductor::new(CatsConfig { high_watermark_bytes: h, low_watermark_bytes: low, payback_multiplier: m });
            let total: u64 = msgs.iter().map(|x| x.0).sum();
            let mut pending: Vec<(usize, MessageMeta)> = msgs.iter().enumerate().map(|(k, x)| (x.2, msg(k as u32, x.0, x.1))).collect();
            pending.sort_by_key(|p| p.0);
            let mut got = vec![0u64; msgs.len()];
            let mut waited = [0u64; LEVELS];
            let mut step = 0usize;
            let bound = (total / mss as u64 + 2) * 2 + 1000;
            // A queue waits at most while the others run up their high watermarks, times the
            // largest payback ratio, plus one redistribution.
            let wait_bound = 10 * (h.iter().sum::<u64>() / mss as u64 + 10) * (m.iter().max().unwrap() + 1);
            loop {
                while pending.first().is_some_and(|p| p.0 <= step) {
                    let (_, mm) = pending.remove(0);
                    c.enqueue(0, mm);
                }
                let s = c.next_segment(0, mss);
                if s.is_empty() {
                    if pending.is_empty() { break; }
                    step += 1;
                    continue;
                }
                let served = Conductor::level(s[0].priority());
                for (i, w) in waited.iter_mut().enumerate() {
                    if i == served || c.queues[i].is_empty() { *w = 0; } else { *w += 1; }
                    // A queue never waits longer than it takes every other queue to send
                    // its high watermark times the slowest payback, plus the redistribution.
                    prop_assert!(*w < wait_bound, "queue {} starved", i);
                }
                prop_assert_eq!(s[0].msg_offset_bytes, got[s[0].msg_id as usize]);
                got[s[0].msg_id as usize] += s[0].len_bytes() as u64;
                step += 1;
                prop_assert!((step as u64) < bound + 100);
            }
            let want: Vec<u64> = msgs.iter().map(|x| x.0).collect();
            prop_assert_eq!(got, want);
        }

        /// Taking a chunk and giving its tail back leaves the Conductor as one that took
        /// only the bytes kept: the same debts, states, counters and queued bytes, and the
        /// same chunks from then on. Lost ranges are queued too, so the tail may also be the
        /// end of a retransmission.
        #[test]
        fn a_tail_given_back_is_as_if_only_the_rest_was_taken(
            h in proptest::array::uniform5(1u64..20_000),
            lfrac in proptest::array::uniform5(0u64..=100),
            m in proptest::array::uniform5(1u64..8),
            msgs in proptest::collection::vec((1u64..12_000, 0u8..5), 1..12),
            steps in proptest::collection::vec((100u32..2000, 0u32..1000, 0u8..8), 1..60),
        ) {
            let low: [u64; LEVELS] = std::array::from_fn(|i| (h[i] * lfrac[i] / 100).max(1));
            let mut c = Conductor::new(CatsConfig { high_watermark_bytes: h, low_watermark_bytes: low, payback_multiplier: m });
            for (k, x) in msgs.iter().enumerate() {
                c.enqueue(0, msg(k as u32, x.0, x.1));
            }
            let mut taken: Vec<MsgChunk> = Vec::new();
            for (max, cut, op) in steps {
                if op == 0 {
                    // A loss of something handed out before.
                    if let Some(&t) = taken.get(cut as usize % taken.len().max(1)) {
                        c.requeue_lost(t);
                    }
                    continue;
                }
                let before = c.clone();
                let Some(&chunk) = c.next_segment(0, max).first() else { break };
                let len = chunk.len_bytes();
                if len < 2 || op == 1 {
                    taken.push(chunk);
                    continue;
                }
                let keep = 1 + cut % (len - 1);
                prop_assert!(c.give_back(chunk.at(chunk.msg_offset_bytes + keep as u64, len - keep)));
                prop_assert!(!c.give_back(chunk.at(chunk.msg_offset_bytes + keep as u64, len - keep)), "only once");
                let mut only = before;
                let kept = only.next_segment(0, keep);
                prop_assert_eq!(kept.as_slice(), &[chunk.with_len(keep)]);
                prop_assert_eq!(c.debts(), only.debts());
                prop_assert_eq!(c.states(), only.states());
                prop_assert_eq!(c.stats(), only.stats());
                prop_assert_eq!(c.queued_bytes(), only.queued_bytes());
                let (mut a, mut b) = (c.clone(), only);
                loop {
                    let (x, y) = (a.next_segment(0, max), b.next_segment(0, max));
                    prop_assert_eq!(x.as_slice(), y.as_slice());
                    if x.is_empty() { break; }
                }
                taken.push(chunk.with_len(keep));
            }
        }
    }
}
