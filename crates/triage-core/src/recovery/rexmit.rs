//! Lost retransmissions (TCP mode).
//!
//! RFC 6675's IsLost() counts SACKed bytes above a segment in sequence order, so once a
//! segment has been retransmitted it can never be found lost again: everything above it
//! was SACKed long ago. RFC 6675 leaves a lost retransmission to the RTO, and with many
//! losses per window (a burst that overflows a queue while the sender repairs the last
//! one) that is a stall of the whole minimum RTO with the window open and nothing sent:
//! every SACK that would have told the sender is for data above the hole, and the receive
//! window fills with out-of-order data behind it.
//!
//! Linux does not wait: RACK (RFC 8985 §3.1 and §6.2; its abstract names lost
//! retransmissions among what it detects sooner than the DupAck threshold) orders segments
//! by when they were last *sent*, not by sequence number, and a segment is lost once one
//! sent sufficiently later has been delivered. This module keeps that order
//! for retransmissions, with RFC 6675's DupThresh as the reordering allowance (three
//! segments, in transmission order rather than RACK's time window, so that no timer is
//! needed and a deterministic simulator's equal timestamps do not matter): a
//! retransmission is lost once a segment transmitted at least `dup_thresh` transmissions
//! after it has been delivered (cumulatively or selectively acknowledged). The first
//! transmission of a segment stays with RFC 6675's IsLost(); the connection then marks the
//! retransmission lost and sends it again within PRR's budget, in the same recovery
//! episode (no second window reduction, as Linux).

use std::collections::VecDeque;

/// Transmission order of a connection's segments and its outstanding retransmissions.
#[derive(Clone, Debug)]
pub struct RetransmitLoss {
    /// The last transmission number handed out (1 is the first).
    last_tx: u64,
    /// The highest transmission number known delivered (RACK.xmit_ts, as an order).
    highest_delivered_tx: u64,
    /// Retransmissions not yet judged, in transmission order: (transmission, start
    /// sequence). An entry whose segment was since acknowledged or sent again is stale;
    /// the connection checks the transmission number against the segment's.
    outstanding: VecDeque<(u64, u64)>,
    dup_thresh: u64,
}

impl RetransmitLoss {
    /// A tracker with RFC 6675's DupThresh (3 by default) as the reordering allowance.
    pub fn new(dup_thresh: u32) -> Self {
        Self { last_tx: 0, highest_delivered_tx: 0, outstanding: VecDeque::new(), dup_thresh: dup_thresh.max(1) as u64 }
    }

    /// A first transmission: returns its transmission number.
    pub fn on_transmit(&mut self) -> u64 {
        self.last_tx += 1;
        self.last_tx
    }

    /// A retransmission of the segment starting at `start`: returns its transmission number
    /// and watches it.
    pub fn on_retransmit(&mut self, start: u64) -> u64 {
        let tx = self.on_transmit();
        self.outstanding.push_back((tx, start));
        tx
    }

    /// A segment last sent as transmission `tx` was delivered. The caller passes only
    /// deliveries it can attribute to that transmission (RFC 8985 §6.2 step 2: a
    /// retransmitted segment acknowledged sooner than the minimum RTT after it was resent
    /// was the original's delivery).
    pub fn on_delivered(&mut self, tx: u64) {
        self.highest_delivered_tx = self.highest_delivered_tx.max(tx);
    }

    /// The next watched retransmission that a later transmission's delivery shows lost:
    /// (transmission, start sequence). Call until `None` after each ACK.
    pub fn next_lost(&mut self) -> Option<(u64, u64)> {
        let &(tx, _) = self.outstanding.front()?;
        if tx.saturating_add(self.dup_thresh) <= self.highest_delivered_tx {
            self.outstanding.pop_front()
        } else {
            None
        }
    }

    /// Whether any retransmission is watched: without one, [`next_lost`](Self::next_lost)
    /// has nothing to give.
    #[inline]
    pub fn watching(&self) -> bool {
        !self.outstanding.is_empty()
    }

    /// An RTO marks every outstanding segment lost: nothing is watched any more.
    pub fn on_rto(&mut self) {
        self.outstanding.clear();
    }

    /// Retransmissions watched (stale entries included), for memory bounds in tests.
    pub fn watched(&self) -> usize {
        self.outstanding.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retransmission_is_lost_once_one_sent_three_later_is_delivered() {
        let mut r = RetransmitLoss::new(3);
        let a = r.on_transmit();
        let rx = r.on_retransmit(0); // segment 0 resent after `a`
        let b = r.on_transmit();
        let c = r.on_transmit();
        let d = r.on_transmit();
        assert!(a < rx && rx < b);
        r.on_delivered(a);
        assert_eq!(r.next_lost(), None, "only earlier transmissions delivered");
        r.on_delivered(c);
        assert_eq!(r.next_lost(), None, "two transmissions later: within the reordering allowance");
        r.on_delivered(d);
        assert_eq!(r.next_lost(), Some((rx, 0)));
        assert_eq!(r.next_lost(), None);
        assert_eq!(r.watched(), 0);
    }

    #[test]
    fn judged_in_transmission_order_and_cleared_by_an_rto() {
        let mut r = RetransmitLoss::new(3);
        let x = r.on_retransmit(100);
        let y = r.on_retransmit(50);
        for _ in 0..2 {
            r.on_transmit();
        }
        let last = r.on_transmit();
        r.on_delivered(last);
        assert_eq!(r.next_lost(), Some((x, 100)));
        assert_eq!(r.next_lost(), Some((y, 50)));
        let _z = r.on_retransmit(200);
        r.on_rto();
        assert_eq!(r.watched(), 0);
        assert_eq!(r.next_lost(), None);
    }
}
