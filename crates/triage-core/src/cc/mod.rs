//! Congestion controllers behind one trait.
//!
//! Read first: RFC 5681 (TCP congestion control), RFC 6582 (NewReno), RFC 9438 (CUBIC) with
//! RFC 9406 (HyStart++), RFC 6937 (PRR),
//! draft-cheng-iccrg-delivery-rate-estimation (rate samples), and Cardwell et al.,
//! "BBR: Congestion-Based Congestion Control" (ACM Queue 2016).
//!
//! The connection owns one controller per path and talks to it only through
//! [`CongestionController`]. The controller never sees a packet: it sees what the
//! connection measured (an [`AckSample`] per ACK, a [`CongestionSignal`] per
//! congestion event) and answers with a window and, optionally, a pacing rate.
//! Later controllers (NewReno+ECN, EECN, VCP) hook in through the same calls: the
//! signal carries an ECN level, and [`CongestionController::on_handshake_feedback`]
//! lets a controller pick its initial window from what the handshake saw.

pub mod bbr;
pub mod cubic;
#[cfg(test)]
mod cubic_prop_tests;
#[cfg(test)]
mod ecn_prop_tests;
pub mod eecn;
pub mod hystart;
pub mod newreno;
pub mod newreno_ecn;
pub mod vcp;

use serde::{Deserialize, Serialize};

pub use bbr::{Bbr, BbrConfig};
pub use cubic::{Cubic, CubicConfig};
pub use eecn::{AvgRtt, Eecn, EecnConfig, ZeroBeta};
pub use newreno::{Growth, NewReno};
pub use newreno_ecn::NewRenoEcn;
pub use vcp::{Vcp, VcpConfig};

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3), computed by
/// the connection for the most recently sent packet that this ACK delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `C.delivered` when the sampled packet was sent (`P.delivered`).
    pub prior_delivered_bytes: u64,
    /// Bytes delivered over the sample's interval (`C.delivered - P.delivered`).
    pub delivered_bytes: u64,
    /// The sample interval: max(send elapsed, ack elapsed), in nanoseconds.
    pub interval_ns: u64,
    /// True when the sampled packet was sent while the application had nothing to send.
    pub is_app_limited: bool,
    /// RTT of the sampled packet, when it was not retransmitted.
    pub rtt_ns: Option<u64>,
}

impl RateSample {
    /// The delivery rate in bits per second, or `None` for an empty interval.
    pub fn delivery_rate_bps(&self) -> Option<u64> {
        if self.interval_ns == 0 {
            return None;
        }
        Some(((self.delivered_bytes as u128 * 8 * 1_000_000_000) / self.interval_ns as u128) as u64)
    }
}

/// What one ACK told the connection, handed to the controller after the scoreboard,
/// RTT estimator and loss detection have processed it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Time the ACK was processed.
    pub now_ns: u64,
    /// Bytes newly acknowledged by this ACK, cumulatively or by SACK.
    pub newly_acked_bytes: u64,
    /// Bytes newly marked lost while processing this ACK.
    pub newly_lost_bytes: u64,
    /// Total bytes delivered on this connection so far (`C.delivered`), including this ACK.
    pub delivered_total_bytes: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight_bytes: u64,
    /// Bytes in flight after this ACK (and any loss marking) was processed.
    pub bytes_in_flight: u64,
    /// RTT sample from the newest packet this ACK acknowledged that was never retransmitted.
    pub rtt_ns: Option<u64>,
    /// The connection's minimum RTT seen so far.
    pub min_rtt_ns: Option<u64>,
    /// Smoothed RTT (RFC 6298) after this ACK.
    pub srtt_ns: Option<u64>,
    /// Delivery-rate sample, when this ACK delivered a packet with a send record.
    pub rate: Option<RateSample>,
    /// True while the connection is in loss recovery (fast recovery or after an RTO).
    pub in_recovery: bool,
    /// True when the sender has no new data to send and is not cwnd-limited.
    pub app_limited: bool,
    /// The congestion code this ACK echoes in ECE/CWR, decoded per the negotiated mode
    /// (see [`crate::ecn`]): EECN level 0-2, VCP load 1-3 (low, high, overload); classic
    /// ECN 1 while ECE is set; 0 when nothing is echoed or ECN is off.
    pub ecn_echo: u8,
    /// TCP mode: the ACK left the cumulative acknowledgment where it was and delivered
    /// data by SACK only (a duplicate ACK). RFC 5681 §3.1 grows the window on ACKs that
    /// acknowledge new data, and Linux only when `snd_una` advances (`tcp_may_raise_cwnd`),
    /// so NewReno and CUBIC do not grow on such an ACK. Never set in QUIC mode, where every
    /// newly acknowledged packet counts (RFC 9002 §7.3.3).
    pub sack_only: bool,
    /// TCP mode: the ACK's SACK blocks covered data not SACKed before, whether or not it
    /// also advanced the cumulative acknowledgment: a duplicate ACK in RFC 6675 §2's sense
    /// ("regardless of its status as a cumulative acknowledgment", §5), which ns-3 3.37
    /// counts as one. Never set in QUIC mode.
    pub newly_sacked: bool,
    /// QUIC mode: the part of `newly_acked_bytes` in packets sent before the current
    /// recovery period began. RFC 9002 Appendix B.5 (`OnPacketAcked`: "Do not increase
    /// congestion window in recovery period", judged per packet by its send time) and
    /// quinn-proto (`sent <= recovery_start_time`) grow the window only by the rest, so
    /// NewReno and CUBIC do too. Always 0 in TCP mode.
    pub pre_recovery_bytes: u64,
    /// QUIC mode: the ACK acknowledges handshake packets only (the Initial and Handshake
    /// packet number spaces), no application data. A controller that sets its initial
    /// window from the handshake (EECN §4.4.1) may still do so after it. Always false in
    /// TCP mode, whose handshake ACK acknowledges no payload.
    pub handshake_only: bool,
}

impl AckSample {
    /// The bytes this ACK may grow a loss-based window by (NewReno's, CUBIC's): none for a
    /// duplicate ACK ([`sack_only`](Self::sack_only)), and none for packets sent before the
    /// recovery period began ([`pre_recovery_bytes`](Self::pre_recovery_bytes)).
    pub fn growth_bytes(&self) -> u64 {
        if self.sack_only {
            0
        } else {
            self.newly_acked_bytes.saturating_sub(self.pre_recovery_bytes)
        }
    }
}

/// A congestion signal from loss detection, a timer or the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CongestionSignal {
    /// Loss detected by SACK/duplicate ACKs; starts fast recovery (once per window).
    Loss,
    /// An explicit congestion notification with a level: 1 is the only level classic ECN
    /// knows; multilevel schemes (EECN) use 1 and 2.
    Ecn {
        /// Congestion level reported by the network.
        level: u8,
    },
    /// The retransmission timer expired.
    Timeout,
    /// RFC 9002 §7.6: QUIC's persistent congestion (ack-eliciting packets lost over a span of
    /// three PTO durations with nothing in between acknowledged). It follows the `Loss` signal of
    /// the same losses; RFC 9002 §7.6.2 and Appendix B.8 then collapse the window to
    /// kMinimumWindow (2 × max_datagram_size) and leave ssthresh as the `Loss` response set it.
    /// TCP mode never sends it.
    PersistentCongestion,
}

/// What the handshake saw, for controllers that choose an initial window from it (EECN §4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandshakeFeedback {
    /// Highest congestion level echoed or seen on the SYN / SYN-ACK, 0 for none.
    pub congestion_level: u8,
    /// The RTT of the handshake, when measured.
    pub rtt_ns: Option<u64>,
}

/// A congestion controller. Every method but [`window_bytes`](Self::window_bytes) has a
/// no-op default so a new controller implements only what it reacts to.
pub trait CongestionController: std::fmt::Debug + Send {
    /// Short name for reports (`"newreno"`, `"bbr"`).
    fn name(&self) -> &'static str;

    /// The current state for traces (`"slow_start"`, `"startup"`, `"probe_bw"` ...).
    fn state(&self) -> &'static str {
        "open"
    }

    /// A data packet of `bytes` payload was sent; `bytes_in_flight` includes it.
    fn on_packet_sent(&mut self, _now_ns: u64, _bytes: u64, _bytes_in_flight: u64, _app_limited: bool) {}

    /// An ACK was processed.
    fn on_ack(&mut self, _ack: &AckSample) {}

    /// A congestion event. `bytes_in_flight` is the flight size when it was detected
    /// (RFC 5681's FlightSize).
    fn on_congestion(&mut self, _now_ns: u64, _signal: CongestionSignal, _bytes_in_flight: u64) {}

    /// Fast recovery ended: every byte outstanding at its start is acknowledged.
    fn on_recovery_exit(&mut self, _now_ns: u64) {}

    /// Feedback from the handshake, before the first data packet is sent.
    fn on_handshake_feedback(&mut self, _feedback: HandshakeFeedback) {}

    /// The congestion window in bytes.
    fn window_bytes(&self) -> u64;

    /// Slow-start threshold in bytes (`u64::MAX` while unset); PRR reduces towards it.
    fn ssthresh_bytes(&self) -> u64 {
        u64::MAX
    }

    /// The pacing rate in bits per second, or `None` to send as the window allows.
    fn pacing_rate_bps(&self) -> Option<u64> {
        None
    }

    /// True when the connection should run RFC 6937 PRR during fast recovery. Model-based
    /// controllers (BBR) that bound the window themselves in recovery return false.
    fn uses_prr(&self) -> bool {
        true
    }
}

/// Which controller a connection uses, as written in a scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ControllerKind {
    /// RFC 5681 / 6582 NewReno.
    NewReno,
    /// BBR v1.
    Bbr,
    /// CUBIC (RFC 9438), with HyStart++ (RFC 9406) when [`CubicConfig::hystart`] is set.
    Cubic,
    /// NewReno with classic ECN (RFC 3168): the EECN paper's "ECN" baseline.
    #[serde(rename = "newreno_ecn")]
    NewRenoEcn,
    /// EECN (Algorithms 1 and 2); negotiates EECN unless the transport says otherwise.
    Eecn,
    /// VCP's end host; negotiates VCP load feedback.
    Vcp,
}

impl ControllerKind {
    /// The name a scenario file uses.
    pub fn name(&self) -> &'static str {
        match self {
            ControllerKind::NewReno => "newreno",
            ControllerKind::Bbr => "bbr",
            ControllerKind::Cubic => "cubic",
            ControllerKind::NewRenoEcn => "newreno_ecn",
            ControllerKind::Eecn => "eecn",
            ControllerKind::Vcp => "vcp",
        }
    }

    /// The ECN variant this controller expects when the transport names none.
    pub fn default_ecn(&self) -> crate::ecn::EcnMode {
        use crate::ecn::EcnMode;
        match self {
            ControllerKind::NewReno | ControllerKind::Bbr | ControllerKind::Cubic => EcnMode::Off,
            ControllerKind::NewRenoEcn => EcnMode::Classic,
            ControllerKind::Eecn => EcnMode::Eecn,
            ControllerKind::Vcp => EcnMode::Vcp,
        }
    }
}

/// Builds a controller for a path.
/// `seed` feeds controllers that randomize (BBR's gain-cycle start phase).
pub fn build(
    kind: &ControllerKind,
    mss_bytes: u64,
    initial_window_segments: u64,
    seed: u64,
) -> Box<dyn CongestionController> {
    match kind {
        ControllerKind::NewReno => Box::new(NewReno::new(mss_bytes, initial_window_segments)),
        ControllerKind::Bbr => Box::new(Bbr::new(BbrConfig::new(mss_bytes, initial_window_segments).with_seed(seed))),
        ControllerKind::Cubic => Box::new(Cubic::new(mss_bytes, initial_window_segments, CubicConfig::default())),
        ControllerKind::NewRenoEcn => Box::new(NewRenoEcn::new(mss_bytes, initial_window_segments)),
        ControllerKind::Eecn => Box::new(Eecn::new(mss_bytes, initial_window_segments, EecnConfig::default())),
        ControllerKind::Vcp => Box::new(Vcp::new(mss_bytes, initial_window_segments, VcpConfig::default())),
    }
}

/// Builds the controller a connection's settings name, with its parameters.
pub fn build_for(cfg: &crate::ConnectionConfig) -> Box<dyn CongestionController> {
    build_seeded(cfg, cfg.seed)
}

/// The controller of a QUIC-mode path: as [`build_for`], with NewReno (and NewReno with
/// ECN) counting acknowledged bytes as RFC 9002 §7.3 does ([`NewReno::for_quic`]) rather
/// than as TCP does, and CUBIC reducing in bytes ([`Cubic::for_quic`]), or run as quinn-proto
/// runs it when the settings ask ([`Cubic::as_quinn`], `QuicConfig::cubic_as_quinn`).
pub fn build_for_quic(cfg: &crate::ConnectionConfig) -> Box<dyn CongestionController> {
    let (mss, iw) = (cfg.mss_bytes as u64, cfg.initial_window_segments as u64);
    let reno = || NewReno::new(mss, iw).with_growth(cfg.newreno_growth).for_quic();
    match &cfg.controller {
        ControllerKind::NewReno => Box::new(reno()),
        ControllerKind::NewRenoEcn => Box::new(NewRenoEcn::with_inner(reno())),
        ControllerKind::Cubic if cfg.quic.cubic_as_quinn => Box::new(Cubic::new(mss, iw, cfg.cubic).as_quinn()),
        ControllerKind::Cubic => Box::new(Cubic::new(mss, iw, cfg.cubic).for_quic()),
        _ => build_for(cfg),
    }
}

/// [`build_for`] with `seed` for a randomized controller's stream (BBR's) in place of the
/// settings' own (a connection opened with shared settings, `Connection::connect_seeded`).
pub fn build_seeded(cfg: &crate::ConnectionConfig, seed: u64) -> Box<dyn CongestionController> {
    let (mss, iw) = (cfg.mss_bytes as u64, cfg.initial_window_segments as u64);
    match &cfg.controller {
        ControllerKind::Eecn => Box::new(Eecn::new(mss, iw, cfg.eecn.clone())),
        ControllerKind::Vcp => Box::new(Vcp::new(mss, iw, cfg.vcp.clone())),
        ControllerKind::Cubic => Box::new(Cubic::new(mss, iw, cfg.cubic)),
        ControllerKind::NewReno => Box::new(NewReno::new(mss, iw).with_growth(cfg.newreno_growth)),
        ControllerKind::NewRenoEcn => {
            Box::new(NewRenoEcn::with_inner(NewReno::new(mss, iw).with_growth(cfg.newreno_growth)))
        }
        k => build(k, mss, iw, seed),
    }
}
