//! Loss recovery: packet conservation, and saving / restoring cwnd.
//!
//! BBR (Cardwell et al. 2016) §"Loss recovery" and Linux
//! `bbr_set_cwnd_to_recover_or_restore`: on entering fast recovery, save cwnd and send
//! at most what is delivered (packet conservation) for one round; every ACK deducts
//! the bytes it marked lost; on leaving recovery, restore the saved cwnd. An RTO (Linux
//! `tcp_enter_loss` + `bbr_set_state(TCP_CA_Loss)`) saves cwnd, drops it to one MSS and
//! lets it grow back by the bytes acknowledged.

use super::Bbr;

/// The connection's congestion state as BBR tracks it (a subset of Linux
/// `enum tcp_ca_state`). Ordered like Linux: `Recovery` and `Loss` are "in recovery".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CaState {
    /// No recovery in progress.
    Open,
    /// Fast recovery after a loss detected by SACK / duplicate ACKs.
    Recovery,
    /// Recovery after a retransmission timeout.
    Loss,
}

/// What one ACK tells the cwnd update.
#[derive(Clone, Copy, Debug)]
pub(super) struct CwndUpdate {
    /// Bytes newly acknowledged (Linux `rs->acked_sacked`).
    pub(super) acked_bytes: u64,
    /// Bytes newly marked lost (Linux `rs->losses`).
    pub(super) lost_bytes: u64,
    /// Bytes in flight after the ACK (Linux `tcp_packets_in_flight`).
    pub(super) bytes_in_flight: u64,
    /// `C.delivered` after the ACK (Linux `tp->delivered`).
    pub(super) delivered_total_bytes: u64,
}

impl Bbr {
    /// Remembers cwnd before a cut (Linux `bbr_save_cwnd`): take cwnd as is, unless
    /// recovery or PROBE_RTT have already cut it, then keep the larger.
    pub(super) fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != super::Mode::ProbeRtt {
            self.prior_cwnd_bytes = self.cwnd_bytes;
        } else {
            self.prior_cwnd_bytes = self.prior_cwnd_bytes.max(self.cwnd_bytes);
        }
    }

    /// Fast recovery starts (Linux `tcp_enter_recovery` → `bbr_ssthresh`). Ignored while
    /// already in recovery, as Linux enters it only from the open state.
    pub(super) fn on_loss_signal(&mut self) {
        if self.ca_state == CaState::Open {
            self.save_cwnd();
            self.ca_state = CaState::Recovery;
        }
    }

    /// Retransmission timeout (Linux `tcp_enter_loss` and `bbr_set_state`): save cwnd
    /// (only when not already recovering, as Linux calls `ssthresh` then), drop cwnd to
    /// one MSS and forget the full-pipe growth baseline. (Linux also marks a round
    /// start here, which only its omitted long-term bandwidth sampler reads.)
    pub(super) fn on_timeout(&mut self) {
        if self.ca_state == CaState::Open {
            self.save_cwnd();
        }
        self.ca_state = CaState::Loss;
        self.prev_ca_state = CaState::Loss;
        self.full_pipe.reset_baseline();
        self.cwnd_bytes = self.config.mss_bytes;
    }

    /// Recovery ends: restore `max(cwnd, prior_cwnd)` and stop packet conservation.
    /// Linux does this on the first ACK processed after the state change; here it
    /// happens at once so the connection can use the window right away.
    pub(super) fn exit_recovery(&mut self) {
        if self.ca_state == CaState::Open {
            return;
        }
        self.ca_state = CaState::Open;
        self.prev_ca_state = CaState::Open;
        self.cwnd_bytes = self.cwnd_bytes.max(self.prior_cwnd_bytes);
        self.packet_conservation = false;
        self.apply_probe_rtt_cap();
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore` for an ACK that acknowledged data.
    /// Returns the cwnd to continue from and whether packet conservation decides it.
    pub(super) fn recover_or_restore(&mut self, update: CwndUpdate) -> (u64, bool) {
        let mss = self.config.mss_bytes;
        let mut cwnd = self.cwnd_bytes;
        // An ACK for P packets should release at most 2P: first deduct the losses,
        // then grow by the acked bytes.
        if update.lost_bytes > 0 {
            cwnd = cwnd.saturating_sub(update.lost_bytes).max(mss);
        }
        let conservation_floor = update.bytes_in_flight.saturating_add(update.acked_bytes);
        let (state, prev) = (self.ca_state, self.prev_ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation; cut unused cwnd.
            self.packet_conservation = true;
            self.round.restart_at(update.delivered_total_bytes);
            cwnd = conservation_floor;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery (when `exit_recovery` was not called first).
            cwnd = cwnd.max(self.prior_cwnd_bytes);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(conservation_floor), true);
        }
        (cwnd, false)
    }
}
