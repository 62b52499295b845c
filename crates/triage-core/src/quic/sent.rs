//! The sender's records of the packets it sent in one packet number space and has not yet
//! seen acknowledged or declared lost (RFC 9002 Appendix A.1: `sent_packets`, "an
//! association of packet numbers in a packet number space to information about them").
//!
//! Packet numbers in a space only grow (RFC 9000 §12.3), a record is added for each packet
//! sent, and records leave when the packet is acknowledged or declared lost, which
//! happens mostly at the oldest end: the records are a window of packet numbers. They are
//! kept in a ring buffer indexed by packet number (slot `pn − first_pn`), as quinn-proto
//! and s2n-quic keep theirs, instead of an ordered map that allocates a node for every few
//! packets sent: in steady state adding and removing a record allocates nothing, and an
//! acknowledged range is found by indexing. Iteration is in packet-number order, as the
//! map's was.

use std::collections::VecDeque;

use smallvec::SmallVec;

use super::packet::Frame;

/// What a sent packet carried that may need sending again or reporting.
#[derive(Clone, Debug)]
pub(super) struct SentPacket {
    pub(super) time_sent_ns: u64,
    pub(super) size_bytes: u32,
    pub(super) ack_eliciting: bool,
    pub(super) in_flight: bool,
    pub(super) frames: SmallVec<[Frame; 2]>,
    /// Largest packet number an ACK frame in it acknowledged.
    pub(super) acked_up_to: Option<u64>,
    pub(super) delivered_bytes: u64,
    pub(super) delivered_ns: u64,
    pub(super) first_sent_ns: u64,
    pub(super) app_limited: bool,
    /// Sent when nothing more was queued: its delivery-rate sample does not enter the
    /// path's bandwidth filter (draft-cheng-iccrg-delivery-rate-estimation §3.4).
    pub(super) bw_app_limited: bool,
}

/// The records of one space's packets in flight, by packet number (see the module
/// documentation).
#[derive(Debug, Default)]
pub(super) struct SentPackets {
    /// Packet number of `slots[0]`.
    first_pn: u64,
    /// One slot per packet number from `first_pn` on; `None` once acknowledged or lost (or
    /// for a number that was never recorded). The first slot, when there is one, holds a
    /// record.
    slots: VecDeque<Option<SentPacket>>,
    /// Records held (slots that are `Some`).
    len: usize,
}

impl SentPackets {
    /// Records held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// One past the highest packet number a slot exists for.
    fn end_pn(&self) -> u64 {
        self.first_pn + self.slots.len() as u64
    }

    /// The slot index of `pn`, when a slot exists for it.
    fn index(&self, pn: u64) -> Option<usize> {
        (pn >= self.first_pn && pn < self.end_pn()).then(|| (pn - self.first_pn) as usize)
    }

    /// Records packet `pn`. Packet numbers are recorded in increasing order (a space's
    /// `next_pn` only grows); numbers skipped in between get empty slots. A record for a
    /// number already held replaces it.
    pub(super) fn insert(&mut self, pn: u64, p: SentPacket) {
        if self.len == 0 {
            self.slots.clear();
            self.first_pn = pn;
        }
        if pn < self.first_pn {
            // Not reached (numbers only grow), but kept well-defined: slots below.
            for _ in pn..self.first_pn {
                self.slots.push_front(None);
            }
            self.first_pn = pn;
        }
        while self.end_pn() <= pn {
            self.slots.push_back(None);
        }
        let i = (pn - self.first_pn) as usize;
        if self.slots[i].replace(p).is_none() {
            self.len += 1;
        }
    }

    /// The record of packet `pn`.
    pub(super) fn get(&self, pn: u64) -> Option<&SentPacket> {
        self.index(pn).and_then(|i| self.slots[i].as_ref())
    }

    /// True when packet `pn` is recorded.
    pub(super) fn contains(&self, pn: u64) -> bool {
        self.get(pn).is_some()
    }

    /// Removes and returns the record of packet `pn`.
    pub(super) fn remove(&mut self, pn: u64) -> Option<SentPacket> {
        let i = self.index(pn)?;
        let p = self.slots[i].take()?;
        self.len -= 1;
        self.trim_front();
        Some(p)
    }

    /// After removals: drops the empty slots at the front, so that the first slot holds a
    /// record (all of them when none is left).
    fn trim_front(&mut self) {
        if self.len == 0 {
            self.slots.clear();
            return;
        }
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.first_pn += 1;
        }
    }

    /// Removes the records of packets `lo..=hi` and appends them to `out`, in increasing
    /// packet-number order.
    pub(super) fn remove_range(&mut self, lo: u64, hi: u64, out: &mut Vec<(u64, SentPacket)>) {
        let lo = lo.max(self.first_pn);
        let hi = hi.min(self.end_pn().saturating_sub(1));
        if self.len == 0 || lo > hi {
            return;
        }
        for pn in lo..=hi {
            let i = (pn - self.first_pn) as usize;
            if let Some(p) = self.slots[i].take() {
                self.len -= 1;
                out.push((pn, p));
            }
        }
        self.trim_front();
    }

    /// The records with their packet numbers, in increasing packet-number order.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (u64, &SentPacket)> + '_ {
        let first = self.first_pn;
        self.slots.iter().enumerate().filter_map(move |(i, s)| s.as_ref().map(|p| (first + i as u64, p)))
    }

    /// The records, in increasing packet-number order.
    pub(super) fn values(&self) -> impl Iterator<Item = &SentPacket> + '_ {
        self.slots.iter().flatten()
    }

    /// The lowest packet number recorded and one past the highest slot: every record is
    /// in `first..end` (an empty range when nothing is recorded).
    pub(super) fn span(&self) -> (u64, u64) {
        if self.len == 0 {
            (0, 0)
        } else {
            (self.first_pn, self.end_pn())
        }
    }

    /// Removes every record and appends them to `out` (each with `false`), in increasing
    /// packet-number order.
    pub(super) fn drain_into(&mut self, out: &mut Vec<(u64, SentPacket, bool)>) {
        let first = self.first_pn;
        for (i, s) in self.slots.drain(..).enumerate() {
            if let Some(p) = s {
                out.push((first + i as u64, p, false));
            }
        }
        self.len = 0;
    }

    /// Removes every record.
    pub(super) fn clear(&mut self) {
        self.slots.clear();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u64) -> SentPacket {
        SentPacket {
            time_sent_ns: t,
            size_bytes: 1200,
            ack_eliciting: true,
            in_flight: true,
            frames: SmallVec::new(),
            acked_up_to: None,
            delivered_bytes: 0,
            delivered_ns: 0,
            first_sent_ns: 0,
            app_limited: false,
            bw_app_limited: false,
        }
    }

    fn pns(s: &SentPackets) -> Vec<u64> {
        s.iter().map(|(pn, _)| pn).collect()
    }

    #[test]
    fn records_leave_by_number_and_range_in_order() {
        let mut s = SentPackets::default();
        for pn in 0..10 {
            s.insert(pn, rec(pn * 10));
        }
        assert_eq!(s.len(), 10);
        assert_eq!(s.remove(0).map(|p| p.time_sent_ns), Some(0));
        assert!(s.remove(0).is_none(), "gone");
        let mut out = Vec::new();
        s.remove_range(3, 5, &mut out);
        assert_eq!(out.iter().map(|(pn, _)| *pn).collect::<Vec<_>>(), [3, 4, 5]);
        assert_eq!(pns(&s), [1, 2, 6, 7, 8, 9]);
        assert!(s.contains(2) && !s.contains(4) && !s.contains(10));
        assert_eq!(s.get(7).map(|p| p.time_sent_ns), Some(70));
        assert_eq!(s.span(), (1, 10));
        // A range reaching past both ends is clipped; a reversed one takes nothing.
        out.clear();
        s.remove_range(9, 5, &mut out);
        assert!(out.is_empty());
        s.remove_range(0, u64::MAX, &mut out);
        assert_eq!(out.len(), 6);
        assert_eq!(s.len(), 0);
        assert_eq!(s.span(), (0, 0));
    }

    #[test]
    fn skipped_numbers_leave_empty_slots_and_the_window_moves() {
        let mut s = SentPackets::default();
        s.insert(5, rec(1));
        s.insert(8, rec(2));
        assert_eq!(pns(&s), [5, 8]);
        assert!(s.remove(5).is_some());
        assert_eq!(s.span(), (8, 9), "the first slot holds a record");
        // Empty, then a later number: the window starts there.
        assert!(s.remove(8).is_some());
        s.insert(1_000_000, rec(3));
        assert_eq!(s.span(), (1_000_000, 1_000_001));
        // Out of order (never done by the connection) stays well-defined.
        s.insert(999_998, rec(4));
        assert_eq!(pns(&s), [999_998, 1_000_000]);
        let mut all = Vec::new();
        s.drain_into(&mut all);
        assert_eq!(all.iter().map(|(pn, _, _)| *pn).collect::<Vec<_>>(), [999_998, 1_000_000]);
        assert_eq!(s.len(), 0);
        s.insert(3, rec(5));
        s.clear();
        assert_eq!(s.values().count(), 0);
    }
}
