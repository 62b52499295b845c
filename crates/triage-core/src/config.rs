//! Connection settings.

use crate::cc::{ControllerKind, CubicConfig, EecnConfig, VcpConfig};
use crate::ecn::EcnMode;
use crate::sched::CatsConfig;

/// Which send scheduler a connection uses.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum SchedulerKind {
    /// One byte stream in write order, as a plain TCP socket.
    #[default]
    Fifo,
    /// The CATS Conductor with its fairness parameters.
    Cats(CatsConfig),
    /// Strict priority, write order within a priority: an HTTP/2 server honouring the
    /// browser's priorities ([`crate::sched::prio`]).
    Priority,
}

/// CATS §II-D-3, source load shedding: when congestion is severe and persistent, the
/// Conductor drops the oldest message of its least important non-empty queue (never one
/// more important than `min_priority`), at most one message per smoothed RTT.
///
/// Congestion counts as severe and persistent when either
/// - the retransmission timer has expired `consecutive_rtos` times in a row with no ACK
///   advancing the cumulative acknowledgment in between, or
/// - among the last `loss_window_packets` data packets whose fate is known (delivered or
///   marked lost), at least `loss_rate_permille`/1000 were lost (the window must be full).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadShedding {
    /// RTOs in a row that trigger shedding (default 2).
    pub consecutive_rtos: u32,
    /// Packets in the loss-rate window (default 64).
    pub loss_window_packets: u32,
    /// Loss rate, per mille, that triggers shedding (default 200, i.e. 20%).
    pub loss_rate_permille: u32,
    /// The most important priority that may be shed (default 3: images and background).
    pub min_priority: u8,
}

/// Largest [`LoadShedding::loss_window_packets`]: the connection keeps one fate per packet
/// of the window.
pub const MAX_LOSS_WINDOW_PACKETS: u32 = 100_000;

impl LoadShedding {
    /// Checks ranges (1 ≤ window ≤ [`MAX_LOSS_WINDOW_PACKETS`], rate ≤ 1000 ‰, priority
    /// 0..4). The error reads `FIELD: what was expected`, named as in a scenario's
    /// `transport.load_shedding` table.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_LOSS_WINDOW_PACKETS).contains(&self.loss_window_packets) {
            return Err(format!(
                "loss_window_packets: expected 1..{MAX_LOSS_WINDOW_PACKETS} packets, got {}",
                self.loss_window_packets
            ));
        }
        if self.loss_rate_permille > 1000 {
            return Err(format!(
                "loss_rate: expected a fraction in [0, 1], got {}",
                self.loss_rate_permille as f64 / 1000.0
            ));
        }
        if self.min_priority > 4 {
            return Err(format!("min_priority: expected 0..4, got {}", self.min_priority));
        }
        Ok(())
    }
}

impl Default for LoadShedding {
    fn default() -> Self {
        Self { consecutive_rtos: 2, loss_window_packets: 64, loss_rate_permille: 200, min_priority: 3 }
    }
}

/// Settings of one TCP-mode connection. Defaults follow Linux where RFCs leave a choice,
/// except the minimum RTO and delayed-ACK timeout, which follow RFC 6298 §2.4 (1 s) and
/// ns-3 (200 ms); scenarios set them explicitly.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectionConfig {
    /// Maximum segment size (payload bytes per segment).
    pub mss_bytes: u32,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub initial_window_segments: u32,
    /// Congestion controller.
    pub controller: ControllerKind,
    /// Acknowledge every this many received segments (RFC 5681 §4.2: 2).
    pub delayed_ack_segments: u32,
    /// Delayed-ACK timer, in nanoseconds (RFC 5681: under 500 ms).
    pub delayed_ack_timeout_ns: u64,
    /// RTO before any RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto_ns: u64,
    /// Floor of the RTO (RFC 6298 §2.4: 1 s; Linux: 200 ms).
    pub min_rto_ns: u64,
    /// Ceiling of the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto_ns: u64,
    /// Receive buffer: the largest window this end advertises.
    pub receive_buffer_bytes: u64,
    /// TCP mode: the send buffer, in bytes (`None`: unlimited, the default): what the
    /// sender holds, data sent and not yet acknowledged plus data written and not yet sent,
    /// never passes it, so new data goes only while `snd_nxt - snd_una` stays within it
    /// (ns-3's `SndBufSize`, Linux's `SO_SNDBUF` without its per-buffer overhead). The
    /// application is taken to write as fast as the buffer empties; with `ns3_compat` it
    /// writes whole segments when ns-3's `BulkSendApplication` would (see
    /// [`Connection`](crate::connection::Connection)'s `refill_send_buffer`).
    pub send_buffer_bytes: Option<u64>,
    /// Duplicate threshold for SACK-based loss detection (RFC 6675: 3).
    pub dup_thresh: u32,
    /// TCP mode: also judge losses by time, as RACK does (RFC 8985 §6, Linux's default): a
    /// segment sent before one that was delivered is lost once its RTT plus a reordering
    /// window has passed, found at an ACK or by a timer (default off: RFC 6675 and ns-3
    /// 3.37 count duplicate ACKs only). The reordering window does not widen after spurious
    /// retransmissions (Linux's does, from D-SACKs, which are not modelled).
    pub rack: bool,
    /// TCP mode: the retransmission timer as Linux runs it (default off: RFC 6298): its
    /// timeout is SRTT plus a variance term of at least `min_rto_ns`, updated once per
    /// flight ([`crate::recovery::rtt::RttEstimator::linux`]), and it restarts when the
    /// oldest unacknowledged segment is retransmitted (`tcp_xmit_retransmit_queue`), so that
    /// a fast retransmission gets a full timeout to be acknowledged in.
    pub linux_rto: bool,
    /// TCP mode: acknowledge as Linux's receiver does (default off: RFC 5681, every second
    /// full segment, as ns-3, which also acknowledges the first data segment after the
    /// handshake at once): at once for the first 16 segments and after a duplicate, and
    /// each time its receive window grows, which receive-buffer autotuning lets it do once
    /// per RTT while the rate grows (see `connection/linux_ack.rs`). Only the ACK timing:
    /// the advertised window stays `receive_buffer_bytes`'s free space.
    pub linux_ack: bool,
    /// TCP mode: follow ns-3 3.37's TCP where it differs from Linux and the RFCs, for
    /// comparisons run against it (default off). Its rules: the SYN and SYN-ACK carry no
    /// MSS option (a 56-byte header, not 60); fast recovery sets ssthresh from the pipe
    /// after the ACK that starts it (its SACK blocks counted and its losses marked: ns-3's
    /// `BytesInFlight`), where triage otherwise halves the pipe before it, which follows
    /// Linux's window; PRR's reduction bound (pipe at or below ssthresh) sends no more than
    /// the ACK delivered unless it cumulatively acknowledges retransmitted data (ns-3's
    /// `TcpPrrRecovery`, as Linux's `tcp_cwnd_reduction` before 5.13), where RFC 6937's SSRB
    /// allows catching up plus a segment; the receiver offers its whole buffer past
    /// RCV.NXT whatever it holds out of order (`TcpRxBuffer::MaxRxSequence`); a lost
    /// retransmission waits for the RTO (ns-3 has no lost-retransmission detection). With
    /// a send buffer ([`send_buffer_bytes`](Self::send_buffer_bytes)), also ns-3's: its
    /// application writes whole segments when told the buffer has room (on a new ACK, not
    /// on a duplicate one outside recovery; before a send, when the buffer holds less than
    /// the window), and in fast recovery with neither a lost segment nor unsent data it
    /// sends again the first segment neither SACKed, lost nor resent (RFC 6675's NextSeg()
    /// rule (3)), counted twice in the pipe until acknowledged. ns-3's NewReno growth
    /// (`newreno_growth`) and its links' 2-byte PPP header (a link's `overhead`) are
    /// settings of their own.
    pub ns3_compat: bool,
    /// Seed for controllers that randomize (BBR's gain-cycle start).
    pub seed: u64,
    /// Keep a log of every PRR decision (for tests and traces).
    pub trace_prr: bool,
    /// Send scheduler.
    pub scheduler: SchedulerKind,
    /// Priority of messages written without one (CATS §II-D-1's per-socket default).
    pub default_priority: u8,
    /// Carry each data segment's priority in the 3-byte experimental TCP option, kind 254
    /// (CATS §II-D-2). It takes 4 bytes of header (padded), so a segment carries
    /// `mss_bytes - 4` of payload to stay within the same MTU.
    pub priority_option: bool,
    /// Receiver policy: acknowledge at once every segment whose priority option says 0
    /// (CATS §II-D-2, "bypass Delayed ACKs for high-priority segments").
    pub ack_priority0_immediately: bool,
    /// DSCP to set on data packets by priority 0..4 (CATS §II-D-2, automated QoS).
    pub dscp_by_priority: Option<[u8; 5]>,
    /// Save-Data (CATS §II-D-3): messages less important than this priority are not sent.
    pub save_data_threshold: Option<u8>,
    /// Source load shedding (CATS §II-D-3), off when `None`.
    pub load_shedding: Option<LoadShedding>,
    /// ECN variant to negotiate; `None` takes the controller's
    /// ([`ControllerKind::default_ecn`]): classic for NewReno+ECN, EECN for EECN, VCP for VCP.
    pub ecn: Option<EcnMode>,
    /// EECN sender parameters (EECN §4.4), used by the EECN controller and receiver.
    pub eecn: EecnConfig,
    /// VCP end-host parameters.
    pub vcp: VcpConfig,
    /// CUBIC's parameters (RFC 9438; HyStart++, RFC 9406, on or off).
    pub cubic: CubicConfig,
    /// How NewReno (and NewReno+ECN) grow the window per ACK: byte counting as Linux
    /// (default) or one segment per ACK as ns-3.
    pub newreno_growth: crate::cc::Growth,
    /// Framing mode: TCP or QUIC.
    pub mode: TransportMode,
    /// QUIC-mode settings (used when `mode` is QUIC).
    pub quic: crate::quic::QuicConfig,
}

/// The core's two framing modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TransportMode {
    /// One ordered byte stream (RFC 9293), as today's web over HTTP/1.1 and HTTP/2.
    #[default]
    Tcp,
    /// QUIC (RFC 9000): independent streams and DATAGRAM frames, as HTTP/3.
    Quic,
}

impl ConnectionConfig {
    /// Checks every controller and scheduler parameter and the values the connection's
    /// arithmetic depends on. The error reads `FIELD: what was expected`, with the field
    /// path named as in a scenario's `transport` table (`cats.payback_multiplier[4]: ...`,
    /// `vcp.t_rho: ...`). Connections built from an unchecked configuration still do not
    /// panic (arithmetic on parameters saturates), but may behave absurdly.
    pub fn validate(&self) -> Result<(), String> {
        let sub = |prefix: &str, r: Result<(), String>| r.map_err(|m| format!("{prefix}.{m}"));
        if self.mss_bytes == 0 {
            return Err("mss: expected at least 1 byte".into());
        }
        if self.initial_window_segments == 0 {
            return Err("initial_window: expected at least 1 segment".into());
        }
        if self.delayed_ack_segments == 0 {
            return Err("delayed_ack_segments: expected at least 1".into());
        }
        if self.initial_rto_ns == 0 {
            return Err("initial_rto: expected a positive duration".into());
        }
        if self.receive_buffer_bytes < self.mss_bytes as u64 {
            return Err(format!(
                "receive_buffer: expected at least one MSS ({} bytes), got {}",
                self.mss_bytes, self.receive_buffer_bytes
            ));
        }
        if let Some(b) = self.send_buffer_bytes.filter(|&b| b < self.mss_bytes as u64) {
            return Err(format!("send_buffer: expected at least one MSS ({} bytes), got {b}", self.mss_bytes));
        }
        if self.default_priority > 4 {
            return Err(format!("default_priority: expected 0..4, got {}", self.default_priority));
        }
        if let SchedulerKind::Cats(c) = &self.scheduler {
            sub("cats", c.validate())?;
        }
        if let crate::sched::stream::StreamSchedulerKind::Cats(c) = &self.quic.scheduler {
            sub("cats", c.validate())?;
        }
        if let Some(ls) = &self.load_shedding {
            sub("load_shedding", ls.validate())?;
        }
        sub("eecn", self.eecn.validate())?;
        sub("vcp", self.vcp.validate())?;
        if self.mode == TransportMode::Quic && self.ecn_mode() == EcnMode::Vcp {
            // Named by what chose VCP: the ECN setting, or the controller's own default.
            let field = if self.ecn.is_some() { "ecn" } else { "cc" };
            return Err(format!(
                "{field}: VCP's load codes are echoed in TCP's ECE/CWR flags and have no QUIC form: QUIC mode takes \
                 ecn = \"off\", \"classic\" or \"eecn\" (its ACK frames' ECN counts carry EECN's two levels)"
            ));
        }
        Ok(())
    }

    /// The ECN variant this end asks for in its handshake.
    pub fn ecn_mode(&self) -> EcnMode {
        self.ecn.unwrap_or_else(|| self.controller.default_ecn())
    }
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            mss_bytes: 1448,
            initial_window_segments: 10,
            controller: ControllerKind::NewReno,
            delayed_ack_segments: 2,
            delayed_ack_timeout_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            min_rto_ns: 1_000_000_000,
            max_rto_ns: 60_000_000_000,
            receive_buffer_bytes: 1 << 20,
            send_buffer_bytes: None,
            dup_thresh: 3,
            rack: false,
            linux_rto: false,
            linux_ack: false,
            ns3_compat: false,
            seed: 0,
            trace_prr: false,
            scheduler: SchedulerKind::Fifo,
            default_priority: 2,
            priority_option: false,
            ack_priority0_immediately: false,
            dscp_by_priority: None,
            save_data_threshold: None,
            load_shedding: None,
            ecn: None,
            eecn: EecnConfig::default(),
            vcp: VcpConfig::default(),
            cubic: CubicConfig::default(),
            newreno_growth: crate::cc::Growth::Bytes,
            mode: TransportMode::Tcp,
            quic: crate::quic::QuicConfig::default(),
        }
    }
}
