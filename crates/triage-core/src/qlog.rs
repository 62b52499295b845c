//! qlog event types for QUIC-mode connections: what a connection records so that a trace
//! viewer (qvis) can draw its packets, acknowledgements, losses and congestion state.
//!
//! Read first: the qlog main schema, draft-ietf-quic-qlog-main-schema-04 (`qlog_version`
//! "0.3", the last version qvis opens; its JSON-SEQ form is a `.sqlog` file), and the QUIC
//! events, draft-ietf-quic-qlog-quic-events-03 (the `transport:` and `recovery:` categories).
//! Both drafts are of 24 October 2022 and describe the same schema version.
//!
//! These are plain data types, filled by the connection and written by the simulator
//! (`triage_sim::qlog`). They keep the core's units: integer nanoseconds and bytes. The
//! writer converts to the schema's units (milliseconds as numbers for times and RTTs) and
//! the reader converts back; the conversion is exact for every time up to
//! [`MAX_TIME_NS`], so a written trace reads back equal.
//!
//! Only the events and frames QUIC mode produces are modelled: `packet_sent`,
//! `packet_received`, `packets_acked`, `packet_lost`, `metrics_updated` and
//! `congestion_state_updated`.

use serde::{Deserialize, Serialize};

/// The largest time (and RTT, and ACK delay) in nanoseconds a qlog trace carries:
/// 10^15 − 1 ns, about 11.6 days.
///
/// Why this bound: the schema writes times as milliseconds (quic-events-03 §7.2, main schema
/// -04 §3.4.1), and a millisecond value with six decimals and at most 15 significant digits
/// is written as exactly that decimal and read back to the same nanosecond (a binary64 keeps
/// every 15-digit decimal apart, and below 2^50 ns rounding the product with 10^6 is exact).
pub const MAX_TIME_NS: u64 = 999_999_999_999_999;

/// One qlog trace: the events of one QUIC-mode connection seen from one endpoint
/// (main schema -04 §3.3; one trace per file in the JSON-SEQ form, §6.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// Which endpoint recorded the trace (main schema -04 §3.3.2, `vantage_point.type`).
    pub vantage_point: VantagePoint,
    /// A short title for the file and trace (main schema -04 §3.1 and §3.3, `title`).
    pub title: String,
    /// The original destination connection ID, the one ID that identifies the connection for
    /// its whole life (quic-events-03 §2: use it as `group_id` and in the file name).
    pub odcid: Vec<u8>,
    /// The events in the order they happened.
    pub events: Vec<Event>,
}

impl Trace {
    /// An empty trace for one endpoint of the connection whose original destination connection
    /// ID is `odcid`.
    pub fn new(vantage_point: VantagePoint, title: impl Into<String>, odcid: &[u8]) -> Self {
        Trace { vantage_point, title: title.into(), odcid: odcid.to_vec(), events: Vec::new() }
    }

    /// Appends an event at `time_ns` (connection time, nanoseconds since the simulation start).
    pub fn push(&mut self, time_ns: u64, data: EventData) {
        self.events.push(Event { time_ns, data });
    }

    /// The original destination connection ID as lowercase hex: the `ODCID` and `group_id`
    /// fields of the trace (quic-events-03 §8.2, `ConnectionID = hexstring`).
    pub fn odcid_hex(&self) -> String {
        hex(&self.odcid)
    }

    /// The file name qvis expects for this trace: `<odcid>_<vantage point>.sqlog`
    /// (quic-events-03 §2 names files by ODCID and vantage point; `.sqlog` marks JSON-SEQ).
    pub fn file_name(&self) -> String {
        format!("{}_{}.sqlog", self.odcid_hex(), self.vantage_point.as_str())
    }
}

/// Lowercase hex of `bytes` (the schema's `hexstring`).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// Parses a `hexstring` (either case); `None` if it has an odd length or a non-hex digit.
pub fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let pairs = text.as_bytes().chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return None;
    }
    pairs
        .map(|pair| {
            let hi = char::from(pair[0]).to_digit(16)?;
            let lo = char::from(pair[1]).to_digit(16)?;
            u8::try_from(hi * 16 + lo).ok()
        })
        .collect()
}

/// The endpoint that records a trace (main schema -04 §3.3.2, `VantagePointType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VantagePoint {
    /// The endpoint that opened the connection.
    Client,
    /// The endpoint that accepted it.
    Server,
}

impl VantagePoint {
    /// The schema's name for the vantage point: `client` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            VantagePoint::Client => "client",
            VantagePoint::Server => "server",
        }
    }
}

/// One event: when it happened and what happened (main schema -04 §3.4: `time`, `name`,
/// `data`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When, in nanoseconds since the simulation start (written as `time` in ms relative to
    /// `reference_time` 0, main schema -04 §3.4.1).
    pub time_ns: u64,
    /// What happened.
    pub data: EventData,
}

/// The transport and recovery events QUIC mode records (quic-events-03 §5 and §7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventData {
    /// `transport:packet_sent` (quic-events-03 §5.5): a packet left this endpoint.
    PacketSent(PacketEvent),
    /// `transport:packet_received` (quic-events-03 §5.6): a packet arrived and was processed.
    PacketReceived(PacketEvent),
    /// `transport:packets_acked` (quic-events-03 §5.9): packets acknowledged for the first time.
    PacketsAcked {
        /// The packet number space the numbers belong to.
        space: PacketNumberSpace,
        /// The newly acknowledged packet numbers.
        packet_numbers: Vec<u64>,
    },
    /// `recovery:packet_lost` (quic-events-03 §7.5): loss detection declared a packet lost.
    PacketLost {
        /// Type and number of the lost packet.
        header: PacketHeader,
        /// Which RFC 9002 rule declared it lost.
        trigger: LossTrigger,
    },
    /// `recovery:metrics_updated` (quic-events-03 §7.2): RTT and congestion metrics that
    /// changed (see [`MetricsTracker`] to send only the changed ones).
    MetricsUpdated(Metrics),
    /// `recovery:congestion_state_updated` (quic-events-03 §7.3): the controller entered a new
    /// state (RFC 9002's `slow_start`, `congestion_avoidance`, `application_limited`,
    /// `recovery`, or a controller's own, such as BBR's `startup`).
    CongestionStateUpdated {
        /// The state left, if known.
        old: Option<String>,
        /// The state entered.
        new: String,
        /// Why, when a state can be entered for more than one reason.
        trigger: Option<CongestionTrigger>,
    },
}

impl EventData {
    /// The event's qlog `name`: category and type joined by a colon (main schema -04 §3.4.2).
    pub fn name(&self) -> &'static str {
        match self {
            EventData::PacketSent(_) => "transport:packet_sent",
            EventData::PacketReceived(_) => "transport:packet_received",
            EventData::PacketsAcked { .. } => "transport:packets_acked",
            EventData::PacketLost { .. } => "recovery:packet_lost",
            EventData::MetricsUpdated(_) => "recovery:metrics_updated",
            EventData::CongestionStateUpdated { .. } => "recovery:congestion_state_updated",
        }
    }
}

/// A sent or received packet (quic-events-03 §5.5–5.6: `header`, `raw.length`, `frames`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketEvent {
    /// Packet type and number.
    pub header: PacketHeader,
    /// The packet's size on the wire in bytes, header and AEAD tag included (main schema -04
    /// `RawInfo.length`).
    pub length_bytes: u64,
    /// The frames the packet carries, in order.
    pub frames: Vec<Frame>,
}

/// The header fields a trace records (quic-events-03 §8.7, `PacketHeader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketHeader {
    /// Which kind of packet.
    pub packet_type: PacketType,
    /// Its packet number (full, not truncated).
    pub packet_number: u64,
}

/// The packet types QUIC mode sends (quic-events-03 §8.5, `PacketType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PacketType {
    /// Long-header Initial packet (RFC 9000 §17.2.2).
    Initial,
    /// Long-header Handshake packet (RFC 9000 §17.2.4).
    Handshake,
    /// Short-header 1-RTT packet (RFC 9000 §17.3.1).
    OneRtt,
}

impl PacketType {
    /// The schema's name: `initial`, `handshake` or `1RTT`.
    pub fn as_str(self) -> &'static str {
        match self {
            PacketType::Initial => "initial",
            PacketType::Handshake => "handshake",
            PacketType::OneRtt => "1RTT",
        }
    }

    /// The packet type named `name` in the schema, if QUIC mode uses it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "initial" => Some(PacketType::Initial),
            "handshake" => Some(PacketType::Handshake),
            "1RTT" => Some(PacketType::OneRtt),
            _ => None,
        }
    }
}

/// A packet number space (quic-events-03 §8.6; RFC 9000 §12.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PacketNumberSpace {
    /// Initial packets.
    Initial,
    /// Handshake packets.
    Handshake,
    /// 0-RTT and 1-RTT packets.
    ApplicationData,
}

impl PacketNumberSpace {
    /// The schema's name: `initial`, `handshake` or `application_data`.
    pub fn as_str(self) -> &'static str {
        match self {
            PacketNumberSpace::Initial => "initial",
            PacketNumberSpace::Handshake => "handshake",
            PacketNumberSpace::ApplicationData => "application_data",
        }
    }

    /// The space named `name` in the schema.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "initial" => Some(PacketNumberSpace::Initial),
            "handshake" => Some(PacketNumberSpace::Handshake),
            "application_data" => Some(PacketNumberSpace::ApplicationData),
            _ => None,
        }
    }
}

/// Why a packet was declared lost (quic-events-03 §7.5, `trigger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossTrigger {
    /// RFC 9002 §6.1.1: a packet kPacketThreshold (3) newer was acknowledged.
    ReorderingThreshold,
    /// RFC 9002 §6.1.2: the packet was sent more than the time threshold before a newer
    /// acknowledged one.
    TimeThreshold,
    /// RFC 9002 §6.2.4: declared lost when the probe timeout expired (a MAY).
    PtoExpired,
}

impl LossTrigger {
    /// The schema's name for the trigger.
    pub fn as_str(self) -> &'static str {
        match self {
            LossTrigger::ReorderingThreshold => "reordering_threshold",
            LossTrigger::TimeThreshold => "time_threshold",
            LossTrigger::PtoExpired => "pto_expired",
        }
    }

    /// The trigger named `name` in the schema.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "reordering_threshold" => Some(LossTrigger::ReorderingThreshold),
            "time_threshold" => Some(LossTrigger::TimeThreshold),
            "pto_expired" => Some(LossTrigger::PtoExpired),
            _ => None,
        }
    }
}

/// Why the congestion state changed, when more than one reason is possible
/// (quic-events-03 §7.3, `trigger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CongestionTrigger {
    /// RFC 9002 §7.6: persistent congestion collapsed the window.
    PersistentCongestion,
    /// RFC 9002 §7.1 and RFC 9000 §13.4: an increase in the CE count.
    Ecn,
}

impl CongestionTrigger {
    /// The schema's name: `persistent_congestion` or `ECN`.
    pub fn as_str(self) -> &'static str {
        match self {
            CongestionTrigger::PersistentCongestion => "persistent_congestion",
            CongestionTrigger::Ecn => "ECN",
        }
    }

    /// The trigger named `name` in the schema.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "persistent_congestion" => Some(CongestionTrigger::PersistentCongestion),
            "ECN" => Some(CongestionTrigger::Ecn),
            _ => None,
        }
    }
}

/// The recovery metrics of `recovery:metrics_updated` (quic-events-03 §7.2). Every field is
/// optional: an event carries only the metrics that changed, and at least one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    /// RFC 9002 §5.2 min_rtt, ns (written in ms).
    pub min_rtt_ns: Option<u64>,
    /// RFC 9002 §5.3 smoothed_rtt, ns (written in ms).
    pub smoothed_rtt_ns: Option<u64>,
    /// RFC 9002 §5.1 latest_rtt, ns (written in ms).
    pub latest_rtt_ns: Option<u64>,
    /// RFC 9002 §5.3 rttvar, ns (written in ms).
    pub rtt_variance_ns: Option<u64>,
    /// Congestion window, bytes (RFC 9002 §7).
    pub congestion_window_bytes: Option<u64>,
    /// Bytes in flight (RFC 9002 Appendix B.2).
    pub bytes_in_flight: Option<u64>,
    /// Slow-start threshold, bytes (RFC 9002 Appendix B.2).
    pub ssthresh_bytes: Option<u64>,
    /// Pacing rate in bits per second (RFC 9002 §7.7).
    pub pacing_rate_bps: Option<u64>,
}

impl Metrics {
    /// Whether no metric is set (such an event is not valid: §7.2 requires at least one).
    pub fn is_empty(&self) -> bool {
        *self == Metrics::default()
    }
}

/// Keeps the last reported value of each metric, so a connection can hand it its current
/// metrics after every change and log only what changed, as quic-events-03 §7.2 asks
/// ("applications SHOULD try to log only actual updates to values").
#[derive(Debug, Clone, Default)]
pub struct MetricsTracker {
    last: Metrics,
}

impl MetricsTracker {
    /// A tracker that has reported nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The metrics in `current` that differ from the last reported ones, or `None` if none
    /// changed. Fields of `current` that are `None` are not known now and are never reported.
    pub fn update(&mut self, current: &Metrics) -> Option<Metrics> {
        fn changed(last: &mut Option<u64>, now: Option<u64>) -> Option<u64> {
            match now {
                Some(v) if *last != Some(v) => {
                    *last = Some(v);
                    Some(v)
                }
                _ => None,
            }
        }
        let last = &mut self.last;
        let out = Metrics {
            min_rtt_ns: changed(&mut last.min_rtt_ns, current.min_rtt_ns),
            smoothed_rtt_ns: changed(&mut last.smoothed_rtt_ns, current.smoothed_rtt_ns),
            latest_rtt_ns: changed(&mut last.latest_rtt_ns, current.latest_rtt_ns),
            rtt_variance_ns: changed(&mut last.rtt_variance_ns, current.rtt_variance_ns),
            congestion_window_bytes: changed(&mut last.congestion_window_bytes, current.congestion_window_bytes),
            bytes_in_flight: changed(&mut last.bytes_in_flight, current.bytes_in_flight),
            ssthresh_bytes: changed(&mut last.ssthresh_bytes, current.ssthresh_bytes),
            pacing_rate_bps: changed(&mut last.pacing_rate_bps, current.pacing_rate_bps),
        };
        (!out.is_empty()).then_some(out)
    }
}

/// The frames QUIC mode puts in packets (quic-events-03 §8.11; DATAGRAM from RFC 9221).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Frame {
    /// ACK or ACK_ECN (RFC 9000 §19.3; quic-events-03 §8.11.3).
    Ack {
        /// The ACK Delay field decoded to ns (written in ms), if logged.
        ack_delay_ns: Option<u64>,
        /// Acknowledged packet numbers as inclusive `(from, to)` ranges, largest first as on
        /// the wire (a single packet is `(n, n)`, written `[n]`).
        acked_ranges: Vec<(u64, u64)>,
        /// ECT(0) count of an ACK_ECN frame.
        ect0: Option<u64>,
        /// ECT(1) count of an ACK_ECN frame.
        ect1: Option<u64>,
        /// ECN-CE count of an ACK_ECN frame.
        ce: Option<u64>,
    },
    /// STREAM (RFC 9000 §19.8; quic-events-03 §8.11.8).
    Stream {
        /// The stream.
        stream_id: u64,
        /// Offset of the first byte.
        offset: u64,
        /// Number of stream bytes carried.
        length_bytes: u64,
        /// Whether the frame ends the stream.
        fin: bool,
    },
    /// DATAGRAM (RFC 9221 §4), written as `{"frame_type": "datagram", "length"}` through the
    /// `$QuicFrame` extension point (quic-events-03 §8.11).
    Datagram {
        /// Payload bytes.
        length_bytes: u64,
    },
    /// CRYPTO (RFC 9000 §19.6; quic-events-03 §8.11.6).
    Crypto {
        /// Offset in the crypto stream.
        offset: u64,
        /// Number of bytes carried.
        length_bytes: u64,
    },
    /// PADDING, all padding bytes of the packet as one frame (quic-events-03 §8.11.1).
    Padding {
        /// Number of padding bytes (`payload_length`).
        length_bytes: u64,
    },
    /// PING (RFC 9000 §19.2; quic-events-03 §8.11.2).
    Ping,
    /// MAX_DATA (RFC 9000 §19.9; quic-events-03 §8.11.9).
    MaxData {
        /// The connection-level limit in bytes.
        maximum: u64,
    },
    /// MAX_STREAM_DATA (RFC 9000 §19.10; quic-events-03 §8.11.10).
    MaxStreamData {
        /// The stream.
        stream_id: u64,
        /// The stream-level limit in bytes.
        maximum: u64,
    },
    /// HANDSHAKE_DONE (RFC 9000 §19.20; quic-events-03 §8.11.20).
    HandshakeDone,
    /// CONNECTION_CLOSE (RFC 9000 §19.19; quic-events-03 §8.11.19).
    ConnectionClose {
        /// Transport (0x1c) or application (0x1d) close.
        error_space: ErrorSpace,
        /// The numeric error code (`raw_error_code`).
        error_code: u64,
        /// The reason phrase, if any.
        reason: Option<String>,
    },
}

/// Which error code space a CONNECTION_CLOSE uses (quic-events-03 §8.11.19, `ErrorSpace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorSpace {
    /// Transport error codes (RFC 9000 §20.1), frame type 0x1c.
    Transport,
    /// Application protocol error codes, frame type 0x1d.
    Application,
}

impl ErrorSpace {
    /// The schema's name: `transport` or `application`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorSpace::Transport => "transport",
            ErrorSpace::Application => "application",
        }
    }

    /// The space named `name` in the schema.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "transport" => Some(ErrorSpace::Transport),
            "application" => Some(ErrorSpace::Application),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_rejects() {
        assert_eq!(hex(&[0x00, 0xab, 0x1f]), "00ab1f");
        assert_eq!(parse_hex("00AB1f"), Some(vec![0x00, 0xab, 0x1f]));
        assert_eq!(parse_hex(""), Some(vec![]));
        assert_eq!(parse_hex("abc"), None);
        assert_eq!(parse_hex("zz"), None);
        // A multi-byte UTF-8 character is not a hex digit (and must not split badly).
        assert_eq!(parse_hex("é0"), None);
    }

    #[test]
    fn file_name_uses_odcid_and_vantage_point() {
        let trace = Trace::new(VantagePoint::Server, "t", &[0xde, 0xad]);
        assert_eq!(trace.file_name(), "dead_server.sqlog");
    }

    #[test]
    fn metrics_tracker_reports_only_changes() {
        let mut tracker = MetricsTracker::new();
        let first =
            Metrics { smoothed_rtt_ns: Some(50_000_000), congestion_window_bytes: Some(14_720), ..Metrics::default() };
        // Everything known is new the first time.
        assert_eq!(tracker.update(&first), Some(first));
        // Nothing changed: no event.
        assert_eq!(tracker.update(&first), None);
        // Only the window changed; the unchanged RTT and the unknown fields stay out.
        let second = Metrics { congestion_window_bytes: Some(16_168), ..first };
        assert_eq!(
            tracker.update(&second),
            Some(Metrics { congestion_window_bytes: Some(16_168), ..Metrics::default() })
        );
        // A metric that becomes unknown is not reported, and reporting it again later with the
        // old value is not a change.
        let third = Metrics { smoothed_rtt_ns: None, ..second };
        assert_eq!(tracker.update(&third), None);
        assert_eq!(tracker.update(&second), None);
    }
}
