//! RFC 6937: Proportional Rate Reduction for TCP.

/// PRR state for one recovery episode (RFC 6937 §3).
///
/// On every ACK during recovery the connection calls [`Prr::on_ack`] with the data that
/// ACK delivered and the current pipe; the returned `sndcnt` is how many bytes it may send
/// in response, and [`Prr::on_sent`] counts what it sent (`prr_out`).
#[derive(Debug, Clone, Default)]
pub struct Prr {
    recover_fs_bytes: u64,
    prr_delivered_bytes: u64,
    prr_out_bytes: u64,
    mss_bytes: u64,
}

/// PRR's bound while the pipe is at or below ssthresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionBound {
    /// RFC 6937 §3's slow-start reduction bound.
    Ssrb,
    /// ns-3 3.37's: SSRB when this ACK cumulatively acknowledges retransmitted data,
    /// otherwise what this ACK delivered.
    Ns3 {
        /// This ACK moved snd_una over a retransmitted segment.
        retransmit_acked: bool,
    },
}

/// One PRR decision, for tests and traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrrDecision {
    /// Bytes this ACK allows to be sent.
    pub sndcnt_bytes: u64,
    /// True when the slow-start reduction bound (pipe ≤ ssthresh) was used.
    pub reduction_bound: bool,
    /// `prr_delivered` after this ACK.
    pub prr_delivered_bytes: u64,
    /// `prr_out` before this ACK's sends.
    pub prr_out_bytes: u64,
    /// `RecoverFS` of the episode.
    pub recover_fs_bytes: u64,
    /// ssthresh used.
    pub ssthresh_bytes: u64,
    /// pipe used.
    pub pipe_bytes: u64,
}

impl Prr {
    /// RFC 6937 §3, "At the beginning of recovery": prr_delivered = prr_out = 0,
    /// RecoverFS = snd.nxt − snd.una.
    pub fn start(recover_fs_bytes: u64, mss_bytes: u64) -> Self {
        Self { recover_fs_bytes: recover_fs_bytes.max(1), prr_delivered_bytes: 0, prr_out_bytes: 0, mss_bytes }
    }

    /// RFC 6937 §3, "On every ACK during recovery", with PRR-SSRB:
    /// ```text
    /// if pipe > ssthresh: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
    /// else:               sndcnt = MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, DeliveredData) + MSS)
    /// ```
    /// Like Linux's tcp_cwnd_reduction, the first ACK of an episode may always send one
    /// segment, so the fast retransmit is never held back.
    pub fn on_ack(&mut self, delivered_bytes: u64, pipe_bytes: u64, ssthresh_bytes: u64) -> PrrDecision {
        self.on_ack_bounded(delivered_bytes, pipe_bytes, ssthresh_bytes, ReductionBound::Ssrb)
    }

    /// [`Prr::on_ack`] with the reduction bound (pipe ≤ ssthresh) chosen: RFC 6937's SSRB,
    /// or ns-3 3.37's `TcpPrrRecovery` (as Linux's `tcp_cwnd_reduction` before 5.13):
    /// SSRB only on an ACK that cumulatively acknowledges retransmitted data, otherwise
    /// `sndcnt = MIN(ssthresh - pipe, DeliveredData)`, no more than this ACK delivered.
    pub fn on_ack_bounded(
        &mut self,
        delivered_bytes: u64,
        pipe_bytes: u64,
        ssthresh_bytes: u64,
        bound: ReductionBound,
    ) -> PrrDecision {
        self.prr_delivered_bytes += delivered_bytes;
        let reduction_bound = pipe_bytes <= ssthresh_bytes;
        let mut sndcnt = if !reduction_bound {
            let num = self.prr_delivered_bytes as u128 * ssthresh_bytes as u128;
            let target = num.div_ceil(self.recover_fs_bytes as u128) as u64;
            target.saturating_sub(self.prr_out_bytes)
        } else if matches!(bound, ReductionBound::Ns3 { retransmit_acked: false }) {
            (ssthresh_bytes - pipe_bytes).min(delivered_bytes)
        } else {
            let limit =
                (self.prr_delivered_bytes.saturating_sub(self.prr_out_bytes)).max(delivered_bytes) + self.mss_bytes;
            (ssthresh_bytes - pipe_bytes).min(limit)
        };
        if self.prr_out_bytes == 0 && delivered_bytes > 0 {
            sndcnt = sndcnt.max(self.mss_bytes);
        }
        PrrDecision {
            sndcnt_bytes: sndcnt,
            reduction_bound,
            prr_delivered_bytes: self.prr_delivered_bytes,
            prr_out_bytes: self.prr_out_bytes,
            recover_fs_bytes: self.recover_fs_bytes,
            ssthresh_bytes,
            pipe_bytes,
        }
    }

    /// RFC 6937 §3, "On any data transmission or retransmission": prr_out += data sent.
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out_bytes += bytes;
    }

    /// Total sent during this episode.
    pub fn prr_out_bytes(&self) -> u64 {
        self.prr_out_bytes
    }

    /// Total delivered during this episode.
    pub fn prr_delivered_bytes(&self) -> u64 {
        self.prr_delivered_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_part_matches_rfc6937_example() {
        // RFC 6937 §6's example shape: RecoverFS 20 segments, ssthresh 10: one segment
        // sent for every two delivered.
        let mss = 100;
        let mut p = Prr::start(20 * mss, mss);
        let d = p.on_ack(mss, 19 * mss, 10 * mss);
        assert!(!d.reduction_bound);
        assert_eq!(d.sndcnt_bytes, mss, "ceil(100*1000/2000)=50, raised to one segment for the fast retransmit");
        p.on_sent(mss);
        let d = p.on_ack(mss, 18 * mss, 10 * mss);
        assert_eq!(d.sndcnt_bytes, 0, "ceil(200*1000/2000) - 100 = 0");
        let d = p.on_ack(mss, 17 * mss, 10 * mss);
        assert_eq!(d.sndcnt_bytes, 50, "ceil(300*1000/2000) - 100 = 50");
    }

    #[test]
    fn ns3_bound_sends_what_the_ack_delivered_unless_a_retransmission_is_acknowledged() {
        // A recovery traced in ns-3 3.37 (128 flows at 100 Mbit/s): RecoverFS 34,752,
        // ssthresh 13,756, 14,480 delivered and 4,344 sent when a duplicate ACK delivering
        // 1,448 bytes leaves the pipe at 10,136. ns-3 set cwnd = pipe + 1,448.
        let mss = 1448;
        let run = |bound| {
            let mut p = Prr::start(34_752, mss);
            p.on_ack(13_032, 30_000, 13_756);
            p.on_sent(4_344);
            p.on_ack_bounded(1_448, 10_136, 13_756, bound).sndcnt_bytes
        };
        assert_eq!(run(ReductionBound::Ns3 { retransmit_acked: false }), 1_448, "MIN(3,620, 1,448)");
        assert_eq!(run(ReductionBound::Ns3 { retransmit_acked: true }), 3_620, "SSRB: MIN(3,620, 10,136 + 1,448)");
        assert_eq!(run(ReductionBound::Ssrb), 3_620);
        // Above ssthresh the bound plays no part: the proportional rule either way.
        let mut p = Prr::start(34_752, mss);
        p.on_sent(1_448);
        let d = p.on_ack_bounded(4_344, 20_272, 13_756, ReductionBound::Ns3 { retransmit_acked: false });
        assert_eq!(d.sndcnt_bytes, 272, "CEIL(4,344 * 13,756 / 34,752) - 1,448 = 1,720 - 1,448");
        // The fast retransmit still goes on the episode's first ACK.
        let mut p = Prr::start(34_752, mss);
        let d = p.on_ack_bounded(1_448, 5_000, 13_756, ReductionBound::Ns3 { retransmit_acked: false });
        assert_eq!(d.sndcnt_bytes, 1_448);
    }

    #[test]
    fn ssrb_bound_when_pipe_below_ssthresh() {
        let mss = 100;
        let mut p = Prr::start(20 * mss, mss);
        p.on_sent(mss);
        // pipe 5 segments, ssthresh 10: limit = max(300 - 100, 300) + 100 = 400; min(500, 400)
        let d = p.on_ack(3 * mss, 5 * mss, 10 * mss);
        assert!(d.reduction_bound);
        assert_eq!(d.sndcnt_bytes, 400);
        // pipe 9.5 segments: ssthresh - pipe = 50 bounds it
        let d = p.on_ack(mss, 950, 10 * mss);
        assert_eq!(d.sndcnt_bytes, 50);
    }
}
