//! The receiver's acknowledgement state of one packet number space (RFC 9000 §13.2).

use super::packet::AckFrame;
use crate::wire::Ecn;

/// Most ranges one ACK frame reports; older ranges are dropped first (RFC 9000 §13.2.4
/// lets a receiver limit them).
pub const MAX_ACK_RANGES: usize = 32;

/// Received packet numbers and when to acknowledge them.
#[derive(Clone, Debug, Default)]
pub struct AckState {
    /// Inclusive ranges, ascending, non-adjacent.
    ranges: Vec<(u64, u64)>,
    largest_ns: u64,
    /// Ack-eliciting packets received since the last ACK frame was sent.
    unacked_eliciting: u32,
    /// An ACK must go out at once (out-of-order arrival, or a space that never delays).
    immediate: bool,
    /// When the delayed ACK is due.
    deadline_ns: Option<u64>,
    /// ECT(0), ECT(1), CE counts of received packets (RFC 9000 §13.4.1).
    ecn_counts: [u64; 3],
    /// Largest ack-eliciting packet number received.
    largest_eliciting: Option<u64>,
}

impl AckState {
    /// True when `pn` was received before (a duplicate).
    pub fn contains(&self, pn: u64) -> bool {
        self.ranges.iter().any(|&(s, e)| s <= pn && pn <= e)
    }

    /// Largest packet number received.
    pub fn largest(&self) -> Option<u64> {
        self.ranges.last().map(|r| r.1)
    }

    /// Records a received packet (not a duplicate) and decides when to acknowledge it:
    /// RFC 9000 §13.2.1-§13.2.2: at once when it is out of order (older than the largest
    /// ack-eliciting packet received, or with a gap below it), when `immediate_space` (Initial
    /// and Handshake), or after `threshold` ack-eliciting packets; otherwise within
    /// `max_ack_delay_ns`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_packet(
        &mut self,
        now_ns: u64,
        pn: u64,
        ack_eliciting: bool,
        ecn: Ecn,
        immediate_space: bool,
        threshold: u32,
        max_ack_delay_ns: u64,
    ) {
        let largest_before = self.largest();
        let out_of_order = match largest_before {
            Some(l) => pn < l || pn > l + 1,
            None => pn > 0,
        };
        self.insert(pn);
        if Some(pn) == self.largest() {
            self.largest_ns = now_ns;
        }
        match ecn {
            Ecn::Ect0 => self.ecn_counts[0] += 1,
            Ecn::Ect1 => self.ecn_counts[1] += 1,
            Ecn::Ce => self.ecn_counts[2] += 1,
            Ecn::NotEct => {}
        }
        if !ack_eliciting {
            return;
        }
        // §13.2.1: an ECN-CE mark is also reported at once.
        if immediate_space || out_of_order || ecn == Ecn::Ce {
            self.immediate = true;
        }
        self.largest_eliciting = Some(self.largest_eliciting.map_or(pn, |l| l.max(pn)));
        self.unacked_eliciting += 1;
        if self.unacked_eliciting >= threshold {
            self.immediate = true;
        }
        if self.deadline_ns.is_none() {
            self.deadline_ns = Some(now_ns.saturating_add(max_ack_delay_ns));
        }
    }

    fn insert(&mut self, pn: u64) {
        let i = self.ranges.partition_point(|&(_, e)| e.saturating_add(1) < pn);
        if i < self.ranges.len() && self.ranges[i].0 <= pn.saturating_add(1) {
            let r = &mut self.ranges[i];
            r.0 = r.0.min(pn);
            r.1 = r.1.max(pn);
            // Merge with the next range when the gap closed.
            if i + 1 < self.ranges.len() && self.ranges[i + 1].0 <= self.ranges[i].1 + 1 {
                self.ranges[i].1 = self.ranges[i].1.max(self.ranges[i + 1].1);
                self.ranges.remove(i + 1);
            }
        } else {
            self.ranges.insert(i, (pn, pn));
        }
        if self.ranges.len() > MAX_ACK_RANGES {
            self.ranges.remove(0);
        }
    }

    /// True when an ACK frame must go out now.
    pub fn wants_ack_now(&self, now_ns: u64) -> bool {
        self.unacked_eliciting > 0 && (self.immediate || self.deadline_ns.is_some_and(|d| d <= now_ns))
    }

    /// True when any ack-eliciting packet awaits acknowledgement (an ACK may ride along).
    pub fn has_unacked(&self) -> bool {
        self.unacked_eliciting > 0
    }

    /// When the delayed ACK is due, if one is pending.
    pub fn deadline_ns(&self) -> Option<u64> {
        if self.unacked_eliciting > 0 {
            self.deadline_ns
        } else {
            None
        }
    }

    /// The ACK frame to send now; resets the pending state. `exponent` is the
    /// ack_delay_exponent (RFC 9000 §18.2, 3 by default); `with_ecn` adds the counts.
    pub fn build(&mut self, now_ns: u64, exponent: u32, with_ecn: bool) -> Option<AckFrame> {
        if self.ranges.is_empty() {
            return None;
        }
        let delay_us = now_ns.saturating_sub(self.largest_ns) / 1_000;
        let frame = AckFrame {
            ranges: self.ranges.iter().rev().copied().collect(),
            delay_encoded: delay_us >> exponent,
            ecn: with_ecn.then_some(self.ecn_counts),
            path: None,
        };
        self.unacked_eliciting = 0;
        self.immediate = false;
        self.deadline_ns = None;
        Some(frame)
    }

    /// The peer acknowledged a packet of ours that carried an ACK up to `largest`: it knows
    /// what we received up to there, so those ranges need not be repeated (RFC 9000 §13.2.4).
    pub fn prune_below(&mut self, largest: u64) {
        while let Some(&(s, e)) = self.ranges.first() {
            if self.ranges.len() == 1 {
                break;
            }
            if e <= largest {
                self.ranges.remove(0);
            } else {
                if s <= largest {
                    self.ranges[0].0 = largest + 1;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn every_second_packet_or_after_max_ack_delay() {
        let mut a = AckState::default();
        a.on_packet(0, 0, true, Ecn::NotEct, false, 2, 25 * MS);
        assert!(!a.wants_ack_now(0));
        assert_eq!(a.deadline_ns(), Some(25 * MS));
        assert!(a.wants_ack_now(25 * MS));
        a.on_packet(MS, 1, true, Ecn::NotEct, false, 2, 25 * MS);
        assert!(a.wants_ack_now(MS), "second ack-eliciting packet");
        let f = a.build(3 * MS, 3, false).unwrap();
        assert_eq!(f.ranges[..], [(0, 1)]);
        // 2 ms since the largest arrived = 2000 us >> 3 = 250.
        assert_eq!(f.delay_encoded, 250);
        assert!(!a.wants_ack_now(100 * MS));
    }

    #[test]
    fn gaps_are_acknowledged_at_once_and_ranges_merge() {
        let mut a = AckState::default();
        a.on_packet(0, 0, true, Ecn::Ect0, false, 2, 25 * MS);
        a.on_packet(0, 2, true, Ecn::Ce, false, 2, 25 * MS);
        assert!(a.wants_ack_now(0), "packet 1 is missing");
        let f = a.build(0, 3, true).unwrap();
        assert_eq!(f.ranges[..], [(2, 2), (0, 0)]);
        assert_eq!(f.ecn, Some([1, 0, 1]));
        a.on_packet(0, 1, true, Ecn::NotEct, false, 2, 25 * MS);
        assert!(a.wants_ack_now(0), "a packet older than the largest");
        assert_eq!(a.build(0, 3, false).unwrap().ranges[..], [(0, 2)]);
        a.on_packet(0, 5, false, Ecn::NotEct, false, 2, 25 * MS);
        assert!(!a.wants_ack_now(0), "not ack-eliciting");
        a.prune_below(2);
        assert_eq!(a.build(0, 3, false).unwrap().ranges[..], [(5, 5)]);
    }
}
