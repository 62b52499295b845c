//! NewReno with classic ECN (RFC 3168 §6.1.2): the baseline the EECN paper calls "ECN"
//! (§6.1). The window response to an ECN-Echo is NewReno's response to a loss — ssthresh =
//! max(FlightSize/2, 2·SMSS) and cwnd = ssthresh — applied at once, without a
//! retransmission; the connection limits it to once per window of data and sets CWR on the
//! next new data segment. Loss and timeout are NewReno's.

use super::{AckSample, CongestionController, CongestionSignal, HandshakeFeedback, NewReno};

/// NewReno + ECN. The connection negotiates classic ECN for it unless told otherwise.
#[derive(Debug, Clone)]
pub struct NewRenoEcn {
    inner: NewReno,
}

impl NewRenoEcn {
    /// A controller with an initial window of `initial_window_segments`.
    pub fn new(mss_bytes: u64, initial_window_segments: u64) -> Self {
        Self { inner: NewReno::new(mss_bytes, initial_window_segments) }
    }

    /// NewReno+ECN around a configured NewReno (for its growth rule).
    pub fn with_inner(inner: NewReno) -> Self {
        Self { inner }
    }
}

impl CongestionController for NewRenoEcn {
    fn name(&self) -> &'static str {
        "newreno_ecn"
    }
    fn state(&self) -> &'static str {
        self.inner.state()
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.inner.on_ack(ack)
    }
    /// RFC 3168 §6.1.2: on ECE, reduce as for a loss (NewReno's eq. (4)), once per window.
    fn on_congestion(&mut self, now_ns: u64, signal: CongestionSignal, bytes_in_flight: u64) {
        self.inner.on_congestion(now_ns, signal, bytes_in_flight)
    }
    fn on_recovery_exit(&mut self, now_ns: u64) {
        self.inner.on_recovery_exit(now_ns)
    }
    fn on_handshake_feedback(&mut self, feedback: HandshakeFeedback) {
        self.inner.on_handshake_feedback(feedback)
    }
    fn window_bytes(&self) -> u64 {
        self.inner.window_bytes()
    }
    fn ssthresh_bytes(&self) -> u64 {
        self.inner.ssthresh_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ece_halves_at_once_without_recovery() {
        let mut c = NewRenoEcn::new(1000, 10);
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 40_000);
        assert_eq!(c.ssthresh_bytes(), 20_000);
        assert_eq!(c.window_bytes(), 20_000, "no retransmission to wait for: cwnd = ssthresh now");
        assert_eq!(c.state(), "congestion_avoidance");
        c.on_congestion(0, CongestionSignal::Ecn { level: 1 }, 1_000);
        assert_eq!(c.window_bytes(), 2_000, "floor of 2 SMSS (the connection rate-limits reactions)");
    }
}
