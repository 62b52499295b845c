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
        self.prr_delivered_bytes += delivered_bytes;
        let reduction_bound = pipe_bytes <= ssthresh_bytes;
        let mut sndcnt = if !reduction_bound {
            let num = self.prr_delivered_bytes as u128 * ssthresh_bytes as u128;
            let target = num.div_ceil(self.recover_fs_bytes as u128) as u64;
            target.saturating_sub(self.prr_out_bytes)
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
