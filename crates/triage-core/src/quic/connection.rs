//! The QUIC-mode connection: a sans-IO state machine with the same contract as TCP mode's
//! [`crate::Connection`] (constructors, `handle_*` inputs, application commands, `poll_*`
//! outputs drained in order: transmit until `None`, then timeout, then events).
//!
//! Read first: RFC 9000 (streams §2-§4, packets §12-§13, frames §19), RFC 9001 §4 (the
//! handshake's packet number spaces and key discard), RFC 9002 (loss detection §6, PTO
//! §6.2, congestion control §7, persistent congestion §7.6, Appendix A's pseudo-code),
//! RFC 9221 (DATAGRAM frames).
//!
//! # Model
//! - **Handshake** (RFC 9001 §4.1): the client's Initial carries a ClientHello and is
//!   padded; the server answers with an Initial (ServerHello) and Handshake packets
//!   (EncryptedExtensions, Certificate, CertificateVerify, Finished), coalesced and padded to
//!   at least 1200 bytes, within the anti-amplification limit (RFC 9000 §8.1); the client,
//!   holding the server's Finished, sends its own and may send 1-RTT data; the server sends
//!   1-RTT data once the client's Finished arrives (its side is done), with HANDSHAKE_DONE.
//!   CRYPTO data is retransmitted on loss and on PTO. Initial keys go when the client first
//!   sends a Handshake packet and when the server first receives one; Handshake keys at
//!   confirmation (RFC 9001 §4.9).
//! - **Streams** ([`super::streams`]): a message goes on a new stream of its own, on the
//!   stream of the peer's message with the same id (a response), or behind an earlier message
//!   on one stream ([`QuicConnection::write_message_on`]). A client opens bidirectional
//!   streams 0, 4, 8, ...; a server its unidirectional streams 7, 11, ... (streams 2 and 3 are
//!   the HTTP/3 control streams). With one message per stream, a client's message `k` thus
//!   travels on stream `4k`. Each stream has its own offsets, so a loss on one never blocks
//!   another. Lost STREAM data goes back to the send scheduler
//!   ([`StreamScheduler::requeue_lost`]) and is sent again by priority.
//! - **Datagrams** (RFC 9221): an unreliable message is cut into chunks that each fill one
//!   DATAGRAM frame (chunk header + data); they are sent ahead of stream data (as the
//!   reference stack does), count against the congestion window, and are never
//!   retransmitted: the sender learns each chunk's fate from ACKs and reports it.
//! - **Closing**: `close()` means "this end writes no more". It sends an HTTP/3 GOAWAY
//!   (RFC 9114 §5.2) on its control stream once everything written is sent; the end that has
//!   written everything, had it acknowledged, received the peer's GOAWAY and every stream
//!   the peer sent in full sends CONNECTION_CLOSE. Draining is not modelled.
//! - **Flow control** (RFC 9000 §4): MAX_STREAMS and MAX_STREAM_DATA hold a stream's data
//!   back before it reaches the scheduler ([`super::streams`]); the connection-level limit
//!   (MAX_DATA) caps the new bytes the scheduler may hand out. The receiver consumes in-order
//!   data at once, raises MAX_DATA and a stream's MAX_STREAM_DATA when half the window is
//!   used, and returns stream credit (MAX_STREAMS) when a stream the peer opened is done: a
//!   unidirectional one when all of it arrived, a bidirectional one when, besides, everything
//!   this end wrote on it is acknowledged (or this end closed without answering).

use std::collections::{BTreeMap, VecDeque};

use crate::intmap::IntMap;

use smallvec::SmallVec;

use super::ack::AckState;
use super::bandwidth::BandwidthFilter;
use super::config::{DatagramFraming, DatagramOrder, PathSchedulerKind, QuicConfig};
use super::pacer::Pacer;
use super::packet::{AckFrame, Frame, Frames, QuicDatagram, QuicPacket, SpaceId};
use super::rtt::{QuicRtt, GRANULARITY_NS};
use super::sent::{SentPacket, SentPackets};
use super::streams::{self as qs, insert_range, RecvStreams, SendStreams, StreamChoice};
use super::trace;
use crate::cc::{self, AckSample, CongestionSignal, HandshakeFeedback, RateSample};
use crate::config::ConnectionConfig;
use crate::connection::{ConnectionStats, Event, State};
use crate::ecn::EcnMode;
use crate::path::sched::{PathId, PathScheduler, PathView, StreamView};
use crate::path::Path;
use crate::qlog;
use crate::recovery::RttEstimator;
use crate::sched::stream::{self, StreamScheduler};
use crate::sched::{MessageMeta, MsgChunk};
use crate::wire::quic as wq;
use crate::wire::{Addr, Ecn, Packet};

/// RFC 9218 §4: the priority signals of a message's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioritySignals {
    /// Urgency 0 (most urgent) to 7; 3 by default (§4.1).
    pub urgency: u8,
    /// Incremental (§4.2).
    pub incremental: bool,
}

impl Default for PrioritySignals {
    fn default() -> Self {
        Self { urgency: 3, incremental: false }
    }
}

/// How a message travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reliability {
    /// On a stream: every byte arrives, lost data is sent again.
    #[default]
    Reliable,
    /// As DATAGRAM chunks (RFC 9221): never sent again; losses are counted.
    Unreliable,
}

/// Counters particular to QUIC mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuicStats {
    /// Packets sent, by space.
    pub packets_sent: [u64; 3],
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Bytes (UDP payload) declared lost.
    pub bytes_lost: u64,
    /// Probe timeouts.
    pub pto_count: u64,
    /// Congestion events (loss or ECN-CE) that reduced the window.
    pub congestion_events: u64,
    /// Persistent congestion episodes (RFC 9002 §7.6).
    pub persistent_congestion: u64,
    /// ACK frames sent.
    pub ack_frames_sent: u64,
    /// STREAM bytes sent again after a loss.
    pub stream_bytes_retransmitted: u64,
    /// DATAGRAM chunks sent, acknowledged and declared lost.
    pub datagrams_sent: u64,
    /// DATAGRAM chunks acknowledged.
    pub datagrams_acked: u64,
    /// DATAGRAM chunks declared lost.
    pub datagrams_lost: u64,
    /// DATAGRAM chunks received.
    pub datagrams_received: u64,
    /// DATAGRAM chunks dropped at the sender because the send queue was full
    /// ([`QuicConfig::datagram_send_queue_len`]): never sent.
    pub datagrams_dropped_locally: u64,
    /// Times a stream was held at the peer's MAX_STREAM_DATA limit (once per limit value).
    pub stream_data_blocked: u64,
    /// Streams that waited for the peer's MAX_STREAMS credit before they could open.
    pub streams_blocked: u64,
    /// MAX_STREAMS frames queued (stream credit returned to the peer).
    pub max_streams_sent: u64,
    /// Packets received twice (dropped).
    pub duplicate_packets: u64,
    /// When the handshake completed at this end, as the application hears it (after the
    /// TLS step that completed it, [`QuicConfig::tls_cpu_ns`]).
    pub handshake_done_ns: Option<u64>,
}

/// Out-of-order CRYPTO bytes a space accepts past its in-order prefix (RFC 9000 §7.5).
const CRYPTO_RX_BUFFER_BYTES: u64 = 65_536;

/// One packet number space (RFC 9000 §12.3; RFC 9002 Appendix A.1).
#[derive(Debug, Default)]
struct Space {
    next_pn: u64,
    sent: SentPackets,
    largest_acked: Option<u64>,
    loss_time_ns: Option<u64>,
    last_ack_eliciting_sent_ns: Option<u64>,
    ack_eliciting_in_flight: u32,
    ack: AckState,
    /// CRYPTO ranges to send (new or again).
    crypto_pending: VecDeque<(u64, u32)>,
    /// CRYPTO bytes of ours sent so far (the stream's end).
    crypto_total: u64,
    /// CRYPTO bytes of the peer received (ranges) and the expected length.
    crypto_rx: Vec<(u64, u64)>,
    crypto_rx_expected: u64,
    /// CRYPTO ranges of ours the peer acknowledged (merged).
    crypto_acked: Vec<(u64, u64)>,
    /// CE count the peer last reported (RFC 9002 §7.1).
    peer_ce: u64,
    /// ECT(0) count the peer last reported (EECN: CL(1) marks).
    peer_ect0: u64,
    /// Probes to send after a PTO.
    probes: u32,
    discarded: bool,
}

impl Space {
    fn crypto_rx_contiguous(&self) -> u64 {
        match self.crypto_rx.first() {
            Some(&(0, e)) => e,
            _ => 0,
        }
    }

    /// Records CRYPTO bytes `[offset, offset + len)`. RFC 9000 §19.6: the end must stay
    /// below 2^62; §7.5: out-of-order CRYPTO data may be limited (at least 4096 bytes must
    /// be buffered): data starting more than [`CRYPTO_RX_BUFFER_BYTES`] past what arrived
    /// in order is ignored, so a peer cannot grow the range list without bound.
    fn add_crypto_rx(&mut self, offset: u64, len: u32) {
        let end = offset.saturating_add(len as u64);
        if len == 0 || end > wq::VARINT_MAX || offset > self.crypto_rx_contiguous() + CRYPTO_RX_BUFFER_BYTES {
            return;
        }
        insert_range(&mut self.crypto_rx, offset, end);
    }
}

/// A message this end is sending.
#[derive(Clone, Debug)]
struct SendMsg {
    /// The stream it travels on (datagram messages: the request stream they answer, if any).
    stream_id: Option<u64>,
    len_bytes: u64,
    /// Bytes sent for the first time (the highest offset reached).
    sent_bytes: u64,
    /// Acknowledged byte ranges (merged), to know when the whole message is acknowledged.
    acked: Vec<(u64, u64)>,
    acked_bytes: u64,
    /// Unreliable: chunks and their fates.
    datagram: Option<DatagramTally>,
    /// The message's priority (0 most urgent).
    priority: u8,
}

impl SendMsg {
    /// Nothing sent yet of `msg`, on `stream_id`; `datagram` for an unreliable message.
    fn new(stream_id: Option<u64>, msg: &MessageMeta, datagram: Option<DatagramTally>) -> SendMsg {
        SendMsg {
            stream_id,
            len_bytes: msg.len_bytes,
            sent_bytes: 0,
            acked: Vec::new(),
            acked_bytes: 0,
            datagram,
            priority: msg.priority,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct DatagramTally {
    chunks: u32,
    acked: u32,
    lost: u32,
    /// Chunks dropped at the sender because the send queue was full
    /// ([`QuicConfig::datagram_send_queue_len`]), and their data bytes.
    dropped: u32,
    dropped_bytes: u64,
}

/// What a receiver holds of one datagram message (object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatagramObject {
    /// The message.
    pub msg_id: u32,
    /// HTTP/3 framing: the request stream's Quarter Stream ID (RFC 9297 §2.1).
    pub quarter_stream_id: Option<u64>,
    /// The object's size.
    pub bytes_expected: u64,
    /// Its bytes that arrived (each chunk once).
    pub bytes_received: u64,
    /// Its chunks (with HTTP/3 framing, the metadata datagram is chunk 0).
    pub chunks: u32,
    /// Chunks that arrived and were used.
    pub chunks_received: u32,
    /// Data chunks that arrived but were discarded because the object's metadata datagram
    /// had not ([`QuicConfig::datagram_needs_metadata`]); 0 otherwise.
    pub chunks_orphaned: u32,
    /// Their data bytes (not in `bytes_received`).
    pub bytes_orphaned: u64,
    /// When the last chunk that was used came in (when none was, the first chunk's arrival).
    pub last_chunk_ns: u64,
    /// Every chunk arrived and was used.
    pub complete: bool,
}

impl DatagramObject {
    /// Chunks that never arrived (lost, dropped at the sender, or still on their way):
    /// neither used nor discarded.
    pub fn chunks_missing(&self) -> u32 {
        self.chunks - self.chunks_received - self.chunks_orphaned
    }
}

/// A datagram message being received.
#[derive(Clone, Debug, Default)]
struct RecvMsg {
    len_bytes: u64,
    complete: bool,
    /// Datagram messages: chunks received, chunk count, last arrival.
    datagram: Option<(u32, u32, u64)>,
    /// Chunk indices received (a set, not a vector of `count` flags: the count comes from
    /// the peer, and 2^32 − 1 of them would be 4 GB).
    datagram_seen: std::collections::BTreeSet<u32>,
    received_bytes: u64,
    quarter_stream_id: Option<u64>,
    /// Data chunks discarded for want of the metadata datagram, and their bytes.
    orphaned: u32,
    orphaned_bytes: u64,
}

/// A bidirectional stream the peer opened: its credit returns once both sides are done.
#[derive(Clone, Copy, Debug, Default)]
struct PeerBidi {
    recv_done: bool,
    /// Our messages on it not yet acknowledged in full.
    unacked: u32,
    /// We wrote on it.
    wrote: bool,
}

/// The qlog trace and what it last reported.
#[derive(Debug)]
struct QlogState {
    trace: qlog::Trace,
    metrics: qlog::MetricsTracker,
    cc_state: &'static str,
}

/// Where a path stands (RFC 10069 / draft-ietf-quic-multipath §3: path initiation with
/// PATH_CHALLENGE, §3.4 abandonment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathStatus {
    /// Opened, PATH_CHALLENGE sent, no PATH_RESPONSE yet: only validation and ACKs go on it.
    Validating,
    /// Validated: carries data.
    Active,
    /// Declared failed after [`crate::quic::config::MultipathConfig::failure_ptos`] probe
    /// timeouts in a row: no data goes on it, its packets in flight were declared lost; an
    /// acknowledgement of a probe makes it active again.
    Failed,
}

/// One path of a connection: everything RFC 9002 keeps per path (draft-ietf-quic-multipath
/// §5.1: "each path has its own packet number space", §5.3 congestion control and §5.4
/// RTT estimation per path), and the path's addresses.
#[derive(Debug)]
struct QPath {
    id: PathId,
    local: Addr,
    remote: Addr,
    status: PathStatus,
    /// It passed validation once (path 0: the handshake validated it).
    validated: bool,
    /// The peer acknowledged our PATH_RESPONSE on it (it validated the path too).
    peer_validated: bool,
    /// [`Event::PathValidated`] was reported.
    ready_reported: bool,
    /// The path's 1-RTT packet number space (path 0's also holds the 1-RTT CRYPTO stream).
    data: Space,
    /// Controller, bytes in flight, delivery-rate state.
    engine: Path,
    rtt: QuicRtt,
    pacer: Pacer,
    pacing_wait_ns: Option<u64>,
    pto_count: u32,
    recovery_start_ns: Option<u64>,
    in_recovery: bool,
    /// The ECN level the current recovery period answered (`u8::MAX` for a loss period):
    /// EECN answers a higher level within the period at once.
    ecn_period_level: u8,
    first_rtt_sample_ns: Option<u64>,
    /// A PATH_CHALLENGE to send on this path, and PATH_RESPONSEs owed on it.
    challenge_pending: bool,
    responses_owed: u32,
    /// Bandwidth estimate: the prior (§4.1 of PriorityBucket: "prior knowledge on creating a
    /// path"), then BBR's windowed max of the delivery rate ([`BandwidthFilter`]).
    bw: BandwidthFilter,
    stats: PathStats,
}

/// Per-path counters (for reports: bytes carried per path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PathStats {
    /// The path.
    pub path_id: u32,
    /// Packets and UDP payload bytes sent on the path.
    pub packets_sent: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// STREAM and DATAGRAM payload bytes sent on the path (retransmissions included).
    pub data_bytes_sent: u64,
    /// Packets declared lost on the path.
    pub packets_lost: u64,
    /// Packets received on the path.
    pub packets_received: u64,
    /// Probe timeouts of the path.
    pub pto_count: u64,
    /// Times the path was declared failed.
    pub failures: u64,
    /// Smoothed RTT at the end (0 before a sample).
    pub srtt_ns: u64,
    /// Congestion window at the end.
    pub cwnd_bytes: u64,
}

impl QPath {
    fn new(id: PathId, local: Addr, remote: Addr, cfg: &ConnectionConfig, status: PathStatus) -> Self {
        let q = &cfg.quic;
        let prior = q.multipath.prior(id.0);
        let initial_rtt_ns = prior.and_then(|p| p.rtt_ns).unwrap_or(q.initial_rtt_ns);
        let mut cc_cfg = cfg.clone();
        // QUIC counts whole packets: the controller's segment is the largest UDP payload.
        cc_cfg.mss_bytes = q.max_udp_payload_bytes;
        let controller = cc::build_for_quic(&cc_cfg);
        let window = controller.window_bytes();
        Self {
            id,
            local,
            remote,
            status,
            validated: status == PathStatus::Active,
            peer_validated: false,
            ready_reported: false,
            data: Space::default(),
            engine: Path::new(controller, RttEstimator::new(initial_rtt_ns, initial_rtt_ns, u64::MAX / 4)),
            rtt: QuicRtt::new(initial_rtt_ns),
            pacer: Pacer::new(initial_rtt_ns, window, q.max_udp_payload_bytes as u64, 0),
            pacing_wait_ns: None,
            pto_count: 0,
            recovery_start_ns: None,
            in_recovery: false,
            ecn_period_level: 0,
            first_rtt_sample_ns: None,
            challenge_pending: false,
            responses_owed: 0,
            bw: BandwidthFilter::new(prior.map_or(0, |p| p.bandwidth_bps)),
            stats: PathStats { path_id: id.0, ..Default::default() },
        }
    }

    /// The congestion window that applies now (RFC 9002 §7.3.2: no growth in recovery).
    fn cwnd_bytes(&self) -> u64 {
        let w = self.engine.cc.window_bytes();
        if self.in_recovery && self.engine.cc.uses_prr() {
            w.min(self.engine.cc.ssthresh_bytes())
        } else {
            w
        }
    }

    /// The bandwidth estimate at `now_ns` ([`BandwidthFilter`]); the prior alone when
    /// estimation is off.
    fn bandwidth_estimate_bps(&self, now_ns: u64, estimate: bool) -> u64 {
        if estimate {
            self.bw.estimate_bps(now_ns, self.rtt.smoothed_ns())
        } else {
            self.bw.prior_bps()
        }
    }
}

/// A QUIC-mode connection (see the module documentation for the model and the contract).
#[derive(Debug)]
pub struct QuicConnection {
    cfg: ConnectionConfig,
    q: QuicConfig,
    local: Addr,
    remote: Addr,
    is_client: bool,
    state: State,
    events: VecDeque<Event>,
    stats: ConnectionStats,
    qstats: QuicStats,
    /// The Initial and Handshake spaces (on path 0); each path holds its own 1-RTT space.
    spaces: [Space; 2],
    handshake_complete: bool,
    handshake_confirmed: bool,
    handshake_done_pending: bool,
    /// NEW_CONNECTION_ID frames to queue once this end's handshake flight has left
    /// ([`QuicConfig::issued_cids`]).
    cids_to_issue: bool,
    /// Sequence number of the next connection ID this end issues.
    next_cid_seq: u64,
    /// Server: the client's handshake connection ID was retired.
    retired_handshake_cid: bool,
    /// Nothing is sent before this time: the host is busy with a TLS step
    /// ([`QuicConfig::tls_cpu_ns`]); 0 when not busy.
    busy_until_ns: u64,
    /// The handshake completed during a TLS step: the application hears of it
    /// ([`Event::Connected`]) when the step ends.
    connected_pending: bool,
    /// Server: bytes received from the client, for the anti-amplification limit.
    amp_received_bytes: u64,
    amp_sent_bytes: u64,
    address_validated: bool,
    /// The paths, indexed by path ID (path 0 is the one the handshake used). Each has its
    /// own 1-RTT packet number space, RTT estimator, controller and pacer ([`QPath`]).
    paths: Vec<QPath>,
    /// Which path the next 1-RTT packet with data takes ([`crate::path::sched`]).
    path_sched: Box<dyn PathScheduler>,
    /// The stream a per-stream path scheduler placed: the next packet starts with it.
    next_stream: Option<u32>,
    sched: Box<dyn StreamScheduler>,
    send_msgs: IntMap<u32, SendMsg>,
    datagram_queue: VecDeque<Frame>,
    /// Response ends waiting for their message's last chunk to leave, by message id: the
    /// HEADERS-and-FIN message, its stream, its signals.
    pending_ends: BTreeMap<u32, (MessageMeta, u64, PrioritySignals, u32)>,
    peer_max_data: u64,
    data_sent_bytes: u64,
    send_streams: SendStreams,
    recv_streams: RecvStreams,
    /// The stream each reliable message of the peer came on (a response goes back on it).
    peer_msg_stream: IntMap<u32, u64>,
    /// Byte watermarks the application registered on the peer's messages
    /// ([`QuicConnection::watch_message_bytes`]).
    watches: crate::watch::Watches,
    /// Bidirectional streams the peer opened, until their credit is returned.
    peer_bidi: BTreeMap<u64, PeerBidi>,
    /// MAX_STREAMS we granted, per direction (bidi, uni).
    local_max_streams: [u64; 2],
    control: VecDeque<Frame>,
    /// Datagram messages being received.
    recv_msgs: BTreeMap<u32, RecvMsg>,
    rx_consumed_bytes: u64,
    local_max_data: u64,
    close_requested: bool,
    goaway_sent: bool,
    goaway_acked: bool,
    peer_goaway: bool,
    /// Object IDs of HTTP/3 datagram transfers (the thesis's "file ID counter").
    next_object_id: u64,
    /// Reliable messages the peer wrote, from its GOAWAY.
    peer_reliable_messages: Option<u64>,
    close_sent: bool,
    close_resend: bool,
    /// Datagram boxes for the next datagrams sent, instead of allocating one per packet:
    /// the one a recycled packet brings ([`Self::poll_transmit_into`], on top while it is
    /// filled) and those a driver hands back ([`Self::recycle_datagram`]).
    #[allow(clippy::vec_box)] // the boxes themselves are what is recycled
    spare_datagrams: Vec<Box<QuicDatagram>>,
    /// Lists kept empty between uses, so that an ACK allocates nothing once they have
    /// grown: the records an ACK frame acknowledges, and the packets declared lost.
    acked_scratch: Vec<(u64, SentPacket)>,
    lost_scratch: Vec<(u64, SentPacket, bool)>,
    /// Packets received since closing (RFC 9000 §10.2.1): CONNECTION_CLOSE is sent again in
    /// answer to the 1st, 2nd, 4th, 8th, ... of them only.
    closed_packets_received: u64,
    /// Draining (§10.2.2): the peer's CONNECTION_CLOSE arrived after ours; nothing more is sent.
    draining: bool,
    /// qlog trace, when the settings ask for one.
    qlog: Option<Box<QlogState>>,
    /// ECN as this end runs it ([`ConnectionConfig::ecn_mode`]): classic (RFC 9000 §13.4:
    /// ECT(0) on every datagram, a grown CE count is congestion), EECN (ECT(1) on every
    /// datagram, handshake included; the peer's ECT(0) and CE counts are CL(1) and CL(2)),
    /// or off. VCP's load codes are echoed in TCP flags and have no QUIC form
    /// (`ConnectionConfig::validate` refuses it); an unchecked configuration runs it off.
    ecn: EcnMode,
    /// EECN §4.4.1: the highest level the peer reported for this end's Initial and
    /// Handshake packets.
    ecn_handshake_level: u8,
    /// EECN: the handshake completed; the controller hears its level once the datagram
    /// that completed it is processed (its ACK frames may follow the CRYPTO frame).
    eecn_feedback_pending: bool,
}

impl QuicConnection {
    fn new(cfg: ConnectionConfig, local: Addr, remote: Addr, is_client: bool) -> Self {
        let q = cfg.quic.clone();
        // PriorityBucket's buckets decide which stream data each path sends: it is the send
        // scheduler, and the path scheduler only takes the paths in turn.
        let sched: Box<dyn StreamScheduler> = match q.multipath.scheduler {
            PathSchedulerKind::PriorityBucket(c) => Box::new(crate::path::sched::PriorityBucket::new(c)),
            _ => stream::build(&q.scheduler),
        };
        let local_max_data = q.connection_receive_window_bytes;
        Self {
            local,
            remote,
            is_client,
            state: if is_client { State::SynSent } else { State::SynReceived },
            events: VecDeque::new(),
            stats: ConnectionStats::default(),
            qstats: QuicStats::default(),
            spaces: Default::default(),
            handshake_complete: false,
            handshake_confirmed: false,
            handshake_done_pending: false,
            ecn: match cfg.ecn_mode() {
                EcnMode::Vcp => EcnMode::Off,
                m => m,
            },
            ecn_handshake_level: 0,
            eecn_feedback_pending: false,
            cids_to_issue: false,
            next_cid_seq: 1,
            retired_handshake_cid: false,
            busy_until_ns: 0,
            connected_pending: false,
            amp_received_bytes: 0,
            amp_sent_bytes: 0,
            address_validated: is_client,
            paths: vec![QPath::new(PathId(0), local, remote, &cfg, PathStatus::Active)],
            path_sched: cfg.quic.multipath.build_path_scheduler(),
            next_stream: None,
            sched,
            send_msgs: IntMap::default(),
            datagram_queue: VecDeque::new(),
            pending_ends: BTreeMap::new(),
            peer_max_data: q.connection_receive_window_bytes,
            data_sent_bytes: 0,
            send_streams: SendStreams::new(is_client, q.stream_receive_window_bytes, q.max_streams),
            recv_streams: RecvStreams::new(q.stream_receive_window_bytes),
            peer_msg_stream: IntMap::default(),
            watches: Default::default(),
            peer_bidi: BTreeMap::new(),
            local_max_streams: [q.max_streams; 2],
            control: VecDeque::new(),
            recv_msgs: BTreeMap::new(),
            rx_consumed_bytes: 0,
            local_max_data,
            close_requested: false,
            goaway_sent: false,
            goaway_acked: false,
            peer_goaway: false,
            peer_reliable_messages: None,
            next_object_id: 0,
            close_sent: false,
            close_resend: false,
            spare_datagrams: Vec::new(),
            acked_scratch: Vec::new(),
            lost_scratch: Vec::new(),
            closed_packets_received: 0,
            draining: false,
            qlog: None,
            q,
            cfg,
        }
    }

    fn start_qlog(&mut self) {
        if !self.q.qlog {
            return;
        }
        let (vp, client, server) = if self.is_client {
            (qlog::VantagePoint::Client, self.local, self.remote)
        } else {
            (qlog::VantagePoint::Server, self.remote, self.local)
        };
        // The original destination connection ID: derived from the client's address, so both
        // ends of a connection name the same one.
        let mut odcid = Vec::with_capacity(self.q.cid_len_bytes as usize);
        let key = ((client.node as u64) << 48)
            ^ ((client.port as u64) << 32)
            ^ ((server.node as u64) << 16)
            ^ server.port as u64;
        for i in 0..self.q.cid_len_bytes as usize {
            odcid.push((key >> ((i % 8) * 8)) as u8);
        }
        let title = format!("triage {}:{} -> {}:{}", client.node, client.port, server.node, server.port);
        self.qlog = Some(Box::new(QlogState {
            trace: qlog::Trace::new(vp, title, &odcid),
            metrics: qlog::MetricsTracker::new(),
            cc_state: "",
        }));
    }

    fn log(&mut self, now_ns: u64, data: qlog::EventData) {
        if let Some(q) = self.qlog.as_mut() {
            q.trace.push(now_ns, data);
        }
    }

    /// RFC 9002 metrics and the controller's state, logged when they change.
    fn log_metrics(&mut self, now_ns: u64) {
        if self.qlog.is_none() {
            return;
        }
        let m = qlog::Metrics {
            min_rtt_ns: self.paths[0].rtt.min_ns(),
            smoothed_rtt_ns: self.srtt_ns(),
            latest_rtt_ns: self.paths[0].rtt.latest_ns(),
            rtt_variance_ns: self.paths[0].rtt.has_sample().then_some(self.paths[0].rtt.var_ns()),
            congestion_window_bytes: Some(self.cwnd_bytes()),
            bytes_in_flight: Some(self.paths[0].engine.pipe_bytes),
            ssthresh_bytes: Some(self.paths[0].engine.cc.ssthresh_bytes()).filter(|&s| s != u64::MAX),
            pacing_rate_bps: self.paths[0].engine.cc.pacing_rate_bps(),
        };
        let state = self.paths[0].engine.cc.state();
        let q = self.qlog.as_mut().expect("checked");
        if let Some(changed) = q.metrics.update(&m) {
            q.trace.push(now_ns, qlog::EventData::MetricsUpdated(changed));
        }
        if state != q.cc_state {
            let old = (!q.cc_state.is_empty()).then(|| q.cc_state.to_string());
            q.trace
                .push(now_ns, qlog::EventData::CongestionStateUpdated { old, new: state.to_string(), trigger: None });
            q.cc_state = state;
        }
    }

    /// The qlog trace, when the settings asked for one (`QuicConfig::qlog`).
    pub fn qlog_trace(&self) -> Option<&qlog::Trace> {
        self.qlog.as_ref().map(|q| &q.trace)
    }

    /// Client: the first transmit is the Initial with the ClientHello.
    pub fn connect(cfg: ConnectionConfig, local: Addr, remote: Addr) -> Self {
        let mut c = Self::new(cfg, local, remote, true);
        c.start_qlog();
        let hello = c.q.client_hello_bytes;
        c.queue_crypto(SpaceId::Initial, hello);
        c.spaces[SpaceId::Initial.index()].crypto_rx_expected = c.q.server_hello_bytes as u64;
        c.spaces[SpaceId::Handshake.index()].crypto_rx_expected = c.q.server_handshake_bytes();
        c
    }

    /// Server: a connection from a client's first datagram (`None` when it does not open one).
    pub fn accept(cfg: ConnectionConfig, now_ns: u64, first: &Packet) -> Option<Self> {
        let dg = first.quic.as_deref()?;
        if !dg.is_initial() {
            return None;
        }
        let mut c = Self::new(cfg, first.dst, first.src, false);
        c.start_qlog();
        c.spaces[SpaceId::Initial.index()].crypto_rx_expected = c.q.client_hello_bytes as u64;
        c.spaces[SpaceId::Handshake.index()].crypto_rx_expected = c.q.finished_bytes as u64;
        c.handle_packet(now_ns, first);
        Some(c)
    }

    fn queue_crypto(&mut self, space: SpaceId, len: u32) {
        let s = self.sp_mut(space, 0);
        s.crypto_pending.push_back((s.crypto_total, len));
        s.crypto_total += len as u64;
    }

    // ------------------------------------------------------------------ getters

    /// EECN §4.4.1: the highest congestion level the peer reported for this end's
    /// handshake packets (0: none, or ECN not EECN).
    pub fn handshake_congestion_level(&self) -> u8 {
        self.ecn_handshake_level
    }

    /// Connection state (`SynSent`/`SynReceived` while the handshake runs).
    pub fn state(&self) -> State {
        self.state
    }
    /// Local endpoint.
    pub fn local(&self) -> Addr {
        self.local
    }
    /// Remote endpoint.
    pub fn remote(&self) -> Addr {
        self.remote
    }
    /// Settings.
    pub fn config(&self) -> &ConnectionConfig {
        &self.cfg
    }
    /// Counters in TCP mode's shape (segments are packets here).
    pub fn stats(&self) -> &ConnectionStats {
        &self.stats
    }
    /// QUIC-mode counters.
    pub fn quic_stats(&self) -> &QuicStats {
        &self.qstats
    }
    /// The congestion window that applies now (RFC 9002 §7.3.2: no growth in recovery).
    pub fn cwnd_bytes(&self) -> u64 {
        let w = self.paths[0].engine.cc.window_bytes();
        if self.paths[0].in_recovery && self.paths[0].engine.cc.uses_prr() {
            w.min(self.paths[0].engine.cc.ssthresh_bytes())
        } else {
            w
        }
    }
    /// Slow-start threshold.
    pub fn ssthresh_bytes(&self) -> u64 {
        self.paths[0].engine.cc.ssthresh_bytes()
    }
    /// The controller's pacing rate, if it has one.
    pub fn pacing_rate_bps(&self) -> Option<u64> {
        self.paths[0].engine.cc.pacing_rate_bps()
    }
    /// Controller name and state.
    pub fn cc_state(&self) -> (&'static str, &'static str) {
        (self.paths[0].engine.cc.name(), self.paths[0].engine.cc.state())
    }
    /// smoothed_rtt once sampled.
    pub fn srtt_ns(&self) -> Option<u64> {
        self.paths[0].rtt.has_sample().then_some(self.paths[0].rtt.smoothed_ns())
    }
    /// latest_rtt once sampled.
    pub fn latest_rtt_ns(&self) -> Option<u64> {
        self.paths[0].rtt.latest_ns()
    }
    /// Bytes in flight (RFC 9002 §2).
    pub fn bytes_in_flight(&self) -> u64 {
        self.paths[0].engine.pipe_bytes
    }
    /// Client: open another path from `local` to `remote` (RFC 10069 §3.1). It is validated
    /// with PATH_CHALLENGE once the handshake is confirmed and carries data after the peer's
    /// PATH_RESPONSE ([`Event::PathValidated`]). Returns its ID, or `None` when this end is
    /// the server, multipath is not configured, or [`Self::MAX_PATHS`] exist.
    pub fn add_path(&mut self, local: Addr, remote: Addr) -> Option<PathId> {
        let multipath = self.q.multipath.scheduler != PathSchedulerKind::Single;
        if !self.is_client || !multipath || self.paths.len() >= Self::MAX_PATHS {
            return None;
        }
        let id = PathId(self.paths.len() as u32);
        let mut path = QPath::new(id, local, remote, &self.cfg, PathStatus::Validating);
        path.challenge_pending = true;
        self.paths.push(path);
        Some(id)
    }

    /// Every path's (local, remote) addresses, by path ID.
    pub fn path_addrs(&self) -> Vec<(Addr, Addr)> {
        self.paths.iter().map(|p| (p.local, p.remote)).collect()
    }

    /// Per-path counters, by path ID, with each path's smoothed RTT and window now.
    pub fn path_stats(&self) -> Vec<PathStats> {
        self.paths
            .iter()
            .map(|p| PathStats {
                srtt_ns: if p.rtt.has_sample() { p.rtt.smoothed_ns() } else { 0 },
                cwnd_bytes: p.cwnd_bytes(),
                ..p.stats
            })
            .collect()
    }

    /// Bytes delivered (acknowledged packet sizes).
    pub fn delivered_bytes(&self) -> u64 {
        self.paths[0].engine.delivered_bytes
    }

    // ------------------------------------------------------------------ application

    /// Writes a message on a stream of its own (reliable) with `priority` (0 most urgent)
    /// or the connection's default; its RFC 9218 urgency is the priority, not incremental.
    pub fn write(&mut self, now_ns: u64, id: u32, len_bytes: u64, priority: Option<u8>) {
        let prio = priority.unwrap_or(self.cfg.default_priority);
        let signals = PrioritySignals { urgency: prio.min(7), incremental: false };
        self.write_message(now_ns, MessageMeta { id, len_bytes, priority: prio }, signals, Reliability::Reliable);
    }

    /// Writes a message with its RFC 9218 signals, reliable (a stream) or unreliable
    /// (DATAGRAM chunks): on the stream of the peer's message with the same id when there is
    /// one (a response), else on a new stream.
    pub fn write_message(&mut self, now_ns: u64, msg: MessageMeta, signals: PrioritySignals, rel: Reliability) {
        let choice = match self.peer_msg_stream.get(&msg.id) {
            Some(&id) if qs::is_bidi(id) => StreamChoice::On(id),
            _ => StreamChoice::New,
        };
        self.write_message_on(now_ns, msg, signals, rel, choice);
    }

    /// The stream a message of ours travels on (`None` for an unknown message or one sent
    /// only as datagrams outside any stream).
    pub fn stream_of(&self, msg_id: u32) -> Option<u64> {
        self.send_msgs.get(&msg_id).and_then(|m| m.stream_id)
    }

    /// Writes a message on the stream `choice` names: a new one, or an existing stream behind
    /// what it already carries (several messages in order on one stream). An unreliable
    /// message is sent as DATAGRAM chunks and opens no stream: it is tied to a stream only as
    /// the response to a peer's message.
    pub fn write_message_on(
        &mut self,
        now_ns: u64,
        msg: MessageMeta,
        signals: PrioritySignals,
        rel: Reliability,
        choice: StreamChoice,
    ) {
        let unreliable = rel == Reliability::Unreliable;
        if msg.len_bytes == 0
            || self.close_requested
            || self.send_msgs.contains_key(&msg.id)
            || msg.id & RESPONSE_END_BIT != 0
        {
            return;
        }
        let mut datagram = None;
        let mut last_queued = None;
        let stream_id = if unreliable {
            let stream = match choice {
                StreamChoice::On(id) => Some(id),
                StreamChoice::New => None,
            };
            let mut chunks = self.datagram_chunks(msg, stream);
            let mut tally = DatagramTally { chunks: chunks.len() as u32, ..Default::default() };
            if let Some(cap) = self.q.datagram_send_queue_len {
                // quiche's `dgram_send` on a full send queue: `Done`, the chunk is not sent.
                let room = (cap as usize).saturating_sub(self.datagram_queue.len());
                for f in chunks.drain(room.min(chunks.len())..) {
                    if let Frame::Datagram { data_len, .. } = f {
                        tally.dropped += 1;
                        tally.dropped_bytes += u64::from(data_len);
                    }
                }
                self.qstats.datagrams_dropped_locally += u64::from(tally.dropped);
            }
            last_queued = chunks.last().and_then(|f| match f {
                Frame::Datagram { index, .. } => Some(*index),
                _ => None,
            });
            datagram = Some(tally);
            self.datagram_queue.extend(chunks);
            stream
        } else {
            Some(self.send_streams.assign(choice))
        };
        self.send_msgs.insert(msg.id, SendMsg::new(stream_id, &msg, datagram));
        let Some(id) = stream_id else { return };
        if !unreliable {
            self.write_to_stream(now_ns, id, msg, signals);
            return;
        }
        let headers = self.q.response_headers_bytes as u64;
        if headers > 0 && qs::is_bidi(id) && self.peer_bidi.contains_key(&id) {
            // PR-3: the response's HEADERS and FIN on the request stream, behind the chunks
            // (see `QuicConfig::response_headers_bytes`). It is a message of its own, under the
            // request's id with `RESPONSE_END_BIT` set, written to the stream once the last
            // chunk has left, so that it never overtakes a chunk.
            let end = MessageMeta { id: msg.id | RESPONSE_END_BIT, len_bytes: headers, priority: msg.priority };
            self.send_msgs.insert(end.id, SendMsg::new(stream_id, &end, None));
            match last_queued {
                Some(last) => {
                    self.pending_ends.insert(msg.id, (end, id, signals, last));
                }
                // Every chunk was dropped at the sender: the response ends at once.
                None => self.write_to_stream(now_ns, id, end, signals),
            }
        }
    }

    fn write_to_stream(&mut self, now_ns: u64, id: u64, msg: MessageMeta, signals: PrioritySignals) {
        if let Some(pb) = self.peer_bidi.get_mut(&id) {
            pb.unacked += 1;
            pb.wrote = true;
        }
        let (u, inc) = (signals.urgency.min(7), signals.incremental);
        self.send_streams.write(now_ns, id, msg, u, inc, &mut *self.sched);
        self.sync_stream_stats();
    }

    /// An unreliable message cut into DATAGRAM frames as [`QuicConfig::datagram_framing`]
    /// says. The frames carry the message's chunk index and count for the simulator's
    /// accounting; their sizes are those of the wire format.
    fn datagram_chunks(&mut self, msg: MessageMeta, stream: Option<u64>) -> Vec<Frame> {
        let h3 = self.q.datagram_framing == DatagramFraming::Http3;
        let qsid = stream.map_or(0, |s| s / 4);
        let frame = |index: u32, data_len: u32, header_len: u32| Frame::Datagram {
            msg_id: msg.id,
            index,
            count: 0,
            data_len,
            msg_len_bytes: msg.len_bytes,
            priority: msg.priority,
            header_len,
            quarter_stream_id: h3.then_some(qsid),
        };
        let mut out = Vec::new();
        match self.q.datagram_framing {
            DatagramFraming::Reference => {
                let per = self.q.datagram_chunk_data_bytes() as u64;
                let count = msg.len_bytes.div_ceil(per);
                for index in 0..count {
                    let off = index * per;
                    let len = (msg.len_bytes - off).min(per) as u32;
                    out.push(frame(index as u32, len, self.q.datagram_chunk_header_bytes));
                }
            }
            DatagramFraming::Http3 => {
                // RFC 9297 §2.1: the Quarter Stream ID of the request stream (0 when the
                // message answers none); the object ID is this end's counter (thesis §5.8.1).
                let object = self.next_object_id;
                self.next_object_id += 1;
                let ct = self.q.datagram_content_type_bytes as usize;
                let meta = wq::chunk::h3_metadata_chunk_len(qsid, object, msg.len_bytes, ct);
                out.push(frame(0, 0, meta as u32));
                let max = self.q.max_datagram_frame_bytes as usize;
                let mut off = 0u64;
                while off < msg.len_bytes {
                    let left = msg.len_bytes - off;
                    let mut len = (max - wq::chunk::h3_data_chunk_overhead(qsid, object, off, max)) as u64;
                    len = len.min(left);
                    let hdr = wq::chunk::h3_data_chunk_overhead(qsid, object, off, len as usize);
                    out.push(frame(out.len() as u32, len as u32, hdr as u32));
                    off += len;
                }
            }
        }
        let count = out.len() as u32;
        for f in &mut out {
            if let Frame::Datagram { count: c, .. } = f {
                *c = count;
            }
        }
        out
    }

    fn sync_stream_stats(&mut self) {
        self.qstats.stream_data_blocked = self.send_streams.data_blocked;
        self.qstats.streams_blocked = self.send_streams.streams_blocked;
    }

    /// This end writes no more (see the module documentation).
    pub fn close(&mut self) {
        self.close_requested = true;
        let ids: Vec<u64> = self.peer_bidi.keys().copied().collect();
        for id in ids {
            self.maybe_return_credit(id);
        }
    }

    /// Asks for [`Event::MessageBytes`] once the first `bytes` bytes of the peer's reliable
    /// message `msg_id` are readable in order on its stream (a stream per message: no
    /// blocking behind other streams). One watermark per message: registering again replaces
    /// it; it fires once. If that many bytes have arrived already, the event is raised at once.
    /// A watermark beyond the message's length never fires, nor does one on a message that
    /// completed before the call or one sent as DATAGRAM chunks. See [`crate::watch`].
    pub fn watch_message_bytes(&mut self, msg_id: u32, bytes: u64) {
        let delivered = self.peer_msg_stream.get(&msg_id).map_or(0, |&s| self.recv_streams.delivered_bytes(s, msg_id));
        if let Some(delivered) = self.watches.register(msg_id, bytes, delivered) {
            self.events.push_back(Event::MessageBytes { msg_id, bytes: delivered });
        }
    }

    // ------------------------------------------------------------------ outputs

    /// The next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest deadline: loss detection or PTO, the delayed ACK, the pacer.
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.state == State::Closed {
            return None;
        }
        let mut t = self.loss_detection_deadline();
        let mut at = |d: u64| t = Some(t.map_or(d, |x: u64| x.min(d)));
        for path in &self.paths {
            if let Some(d) = path.data.ack.deadline_ns().filter(|_| self.can_send_1rtt()) {
                at(d);
            }
            if let Some(p) = path.pacing_wait_ns {
                at(p);
            }
        }
        if self.busy_until_ns > 0 {
            at(self.busy_until_ns);
        }
        t
    }

    /// Handles an expired deadline.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        if self.state == State::Closed {
            return;
        }
        for path in &mut self.paths {
            if path.pacing_wait_ns.is_some_and(|p| p <= now_ns) {
                path.pacing_wait_ns = None;
            }
        }
        if self.busy_until_ns != 0 && self.busy_until_ns <= now_ns {
            self.busy_until_ns = 0;
            if std::mem::take(&mut self.connected_pending) {
                self.announce_connected(now_ns);
            }
        }
        if self.loss_detection_deadline().is_some_and(|d| d <= now_ns) {
            self.on_loss_detection_timeout(now_ns);
        }
    }

    // ------------------------------------------------------------------ loss detection

    /// A packet number space: Initial and Handshake are the connection's (on path 0); the
    /// 1-RTT space is path `pi`'s.
    fn sp(&self, space: SpaceId, pi: usize) -> &Space {
        match space {
            SpaceId::Data => &self.paths[pi].data,
            s => &self.spaces[s.index()],
        }
    }

    fn sp_mut(&mut self, space: SpaceId, pi: usize) -> &mut Space {
        match space {
            SpaceId::Data => &mut self.paths[pi].data,
            s => &mut self.spaces[s.index()],
        }
    }

    /// Every (space, path) pair in the order RFC 9002's timers visit them: Initial,
    /// Handshake (path 0), then each path's 1-RTT space.
    fn space_keys(&self) -> impl Iterator<Item = (SpaceId, usize)> {
        // One counting range, not a chain of an array and a range: the timers visit the
        // spaces several times per packet sent, and the chain's two-part state cost more
        // than the visits.
        (0..self.paths.len() + 2).map(|k| match k {
            0 => (SpaceId::Initial, 0),
            1 => (SpaceId::Handshake, 0),
            _ => (SpaceId::Data, k - 2),
        })
    }

    /// The earliest loss time (time-threshold loss detection) of any space and path.
    fn earliest_loss_time(&self) -> Option<(u64, SpaceId, usize)> {
        let mut earliest: Option<(u64, SpaceId, usize)> = None;
        for (space, pi) in self.space_keys() {
            if let Some(t) = self.sp(space, pi).loss_time_ns {
                if earliest.is_none_or(|(e, _, _)| t < e) {
                    earliest = Some((t, space, pi));
                }
            }
        }
        earliest
    }

    /// RFC 9002 Appendix A.8: GetLossTimeAndSpace / GetPtoTimeAndSpace / SetLossDetectionTimer,
    /// over every path (RFC 10069 §5.3: loss detection and PTO run per path).
    fn loss_detection_deadline(&self) -> Option<u64> {
        if let Some((t, _, _)) = self.earliest_loss_time() {
            return Some(t);
        }
        if !self.is_client && !self.address_validated && self.amp_room() == 0 {
            return None;
        }
        self.pto_time_and_space().map(|(t, _, _)| t)
    }

    fn pto_duration_ns(&self, pi: usize) -> u64 {
        let p = &self.paths[pi];
        p.rtt.pto_base_ns().saturating_mul(1u64 << p.pto_count.min(30))
    }

    fn pto_time_and_space(&self) -> Option<(u64, SpaceId, usize)> {
        let any_in_flight = self.space_keys().any(|(sp, pi)| {
            let s = self.sp(sp, pi);
            !s.discarded && s.ack_eliciting_in_flight > 0
        });
        if !any_in_flight {
            // Anti-deadlock (§6.2.2.1): a client whose handshake is not confirmed arms the
            // PTO even with nothing in flight, until the server has validated its address.
            if self.is_client && !self.handshake_confirmed && self.state != State::Closed {
                let space = if self.spaces[1].discarded || !self.handshake_keys() {
                    SpaceId::Initial
                } else {
                    SpaceId::Handshake
                };
                if self.handshake_complete {
                    return None;
                }
                let last = self.spaces[space.index()].last_ack_eliciting_sent_ns.unwrap_or(0);
                return Some((last + self.pto_duration_ns(0), space, 0));
            }
            return None;
        }
        let mut best: Option<(u64, SpaceId, usize)> = None;
        for (space, pi) in self.space_keys() {
            let s = self.sp(space, pi);
            if s.discarded || s.ack_eliciting_in_flight == 0 {
                continue;
            }
            let mut d = self.pto_duration_ns(pi);
            if space == SpaceId::Data {
                if !self.handshake_confirmed {
                    continue;
                }
                let backoff = 1u64 << self.paths[pi].pto_count.min(30);
                d = d.saturating_add(self.q.max_ack_delay_ns.saturating_mul(backoff));
            }
            let t = s.last_ack_eliciting_sent_ns.unwrap_or(0).saturating_add(d);
            if best.is_none_or(|(b, _, _)| t < b) {
                best = Some((t, space, pi));
            }
        }
        best
    }

    fn handshake_keys(&self) -> bool {
        // The client has Handshake keys once the ServerHello arrived.
        !self.is_client || self.spaces[0].crypto_rx_contiguous() >= self.q.server_hello_bytes as u64
    }

    /// RFC 9002 Appendix A.9: OnLossDetectionTimeout.
    fn on_loss_detection_timeout(&mut self, now_ns: u64) {
        if let Some((_, space, pi)) = self.earliest_loss_time() {
            let lost = self.detect_lost(now_ns, space, pi);
            self.on_packets_lost(now_ns, space, pi, lost);
            return;
        }
        let Some((_, space, pi)) = self.pto_time_and_space() else { return };
        self.qstats.pto_count += 1;
        self.stats.rto_count += 1;
        self.log_metrics(now_ns);
        self.paths[pi].pto_count += 1;
        self.paths[pi].stats.pto_count += 1;
        let s = self.sp_mut(space, pi);
        s.probes = 2;
        // A probe sends new data when there is some; in the handshake spaces, every CRYPTO
        // byte not yet acknowledged is sent again (RFC 9002 §6.2.4).
        if space != SpaceId::Data && s.crypto_pending.is_empty() {
            let mut at = 0u64;
            for &(a, b) in &s.crypto_acked {
                if a > at {
                    s.crypto_pending.push_back((at, (a - at) as u32));
                }
                at = at.max(b);
            }
            if at < s.crypto_total {
                s.crypto_pending.push_back((at, (s.crypto_total - at) as u32));
            }
        }
        if space == SpaceId::Data {
            self.maybe_fail_path(now_ns, pi);
        }
    }

    /// Multipath: a path whose probe timeouts reached
    /// [`crate::quic::config::MultipathConfig::failure_ptos`] in a row, while another path is
    /// active, is declared failed (mp-quic's "potentially failed" path): its packets in
    /// flight are declared lost, so their stream data goes out again on the live paths, and
    /// no data is scheduled on it. PTO probes keep going on it; an acknowledgement of one
    /// brings it back ([`Self::on_ack_received`]).
    fn maybe_fail_path(&mut self, now_ns: u64, pi: usize) {
        let threshold = self.q.multipath.failure_ptos;
        let others_live = self.paths.iter().any(|p| p.id.0 as usize != pi && p.status == PathStatus::Active);
        if threshold == 0 || self.paths[pi].pto_count < threshold || !others_live {
            return;
        }
        if !matches!(self.paths[pi].status, PathStatus::Active | PathStatus::Validating) {
            return;
        }
        self.paths[pi].status = PathStatus::Failed;
        self.paths[pi].stats.failures += 1;
        self.events.push_back(Event::PathFailed { path_id: pi as u32 });
        let mut lost = std::mem::take(&mut self.lost_scratch);
        self.paths[pi].data.sent.drain_into(&mut lost);
        // Their data goes back to the queues; the path's controller hears of the loss once.
        self.on_packets_lost(now_ns, SpaceId::Data, pi, lost);
        self.paths[pi].data.loss_time_ns = None;
        // Keep probing it (PTO backoff continues from here).
        self.paths[pi].data.probes = 1;
        let mut live = PathViews::new();
        self.path_views(now_ns, &mut live);
        self.sched.remove_path(now_ns, PathId(pi as u32), &live);
    }

    /// RFC 9002 Appendix A.10: DetectAndRemoveLostPackets. Returns the lost packets (in
    /// the connection's reusable list: hand it to [`Self::on_packets_lost`]).
    fn detect_lost(&mut self, now_ns: u64, space: SpaceId, pi: usize) -> Vec<(u64, SentPacket, bool)> {
        let loss_delay = self.paths[pi].rtt.loss_delay_ns(self.q.time_threshold.0, self.q.time_threshold.1);
        let threshold = self.q.packet_threshold;
        let mut lost = std::mem::take(&mut self.lost_scratch);
        let s = self.sp_mut(space, pi);
        s.loss_time_ns = None;
        let Some(largest) = s.largest_acked else { return lost };
        let lost_send_time = now_ns.saturating_sub(loss_delay);
        // Every record below the largest acknowledged, in packet-number order.
        let (first, end) = s.sent.span();
        for pn in first..largest.min(end) {
            let Some(p) = s.sent.get(pn) else { continue };
            let by_time = p.time_sent_ns <= lost_send_time;
            let by_count = largest >= pn + threshold;
            if by_time || by_count {
                if let Some(p) = s.sent.remove(pn) {
                    lost.push((pn, p, by_count));
                }
            } else {
                let t = p.time_sent_ns.saturating_add(loss_delay);
                s.loss_time_ns = Some(s.loss_time_ns.map_or(t, |x| x.min(t)));
            }
        }
        lost
    }

    /// RFC 9002 §6.4 and Appendix B.8-B.9: what follows a loss: data back to its queues,
    /// the controller told once per recovery period, persistent congestion checked. The
    /// list, emptied, is kept for the next loss detection.
    fn on_packets_lost(&mut self, now_ns: u64, space: SpaceId, pi: usize, mut lost: Vec<(u64, SentPacket, bool)>) {
        if !lost.is_empty() {
            self.on_lost(now_ns, space, pi, &lost);
        }
        lost.clear();
        self.lost_scratch = lost;
    }

    /// [`Self::on_packets_lost`] of a non-empty list.
    fn on_lost(&mut self, now_ns: u64, space: SpaceId, pi: usize, lost: &[(u64, SentPacket, bool)]) {
        let mut largest_lost_sent = 0u64;
        // The first and last ack-eliciting packets lost (packet number, time sent), and how
        // many there were.
        let mut eliciting_first: Option<(u64, u64)> = None;
        let mut eliciting_last = (0u64, 0u64);
        let mut eliciting = 0usize;
        for (pn, p, by_count) in lost {
            if self.qlog.is_some() {
                let trigger =
                    if *by_count { qlog::LossTrigger::ReorderingThreshold } else { qlog::LossTrigger::TimeThreshold };
                self.log(now_ns, qlog::EventData::PacketLost { header: trace::header(space, *pn), trigger });
            }
            self.qstats.packets_lost += 1;
            self.qstats.bytes_lost += p.size_bytes as u64;
            self.paths[pi].stats.packets_lost += 1;
            if p.in_flight {
                let path = &mut self.paths[pi].engine;
                path.pipe_bytes = path.pipe_bytes.saturating_sub(p.size_bytes as u64);
                largest_lost_sent = largest_lost_sent.max(p.time_sent_ns);
            }
            if p.ack_eliciting {
                let s = self.sp_mut(space, pi);
                s.ack_eliciting_in_flight = s.ack_eliciting_in_flight.saturating_sub(1);
                eliciting_first.get_or_insert((*pn, p.time_sent_ns));
                eliciting_last = (*pn, p.time_sent_ns);
                eliciting += 1;
            }
            for f in &p.frames {
                self.requeue(now_ns, space, pi, f);
            }
        }
        if largest_lost_sent == 0 && !lost.iter().any(|(_, p, _)| p.in_flight) {
            return;
        }
        // §7.3.2: one reduction per recovery period.
        if self.paths[pi].recovery_start_ns.is_none_or(|r| largest_lost_sent > r) {
            self.enter_recovery(now_ns, pi, CongestionSignal::Loss);
        }
        // §7.6.2: persistent congestion: ack-eliciting packets lost over a span longer than
        // the persistent congestion duration, with no packet in between acknowledged (here:
        // a run of consecutive packet numbers), after the first RTT sample.
        if let Some((first_pn, first_t)) = eliciting_first.filter(|_| eliciting >= 2) {
            let rtt = &self.paths[pi].rtt;
            let duration = (rtt.smoothed_ns()
                + (4 * rtt.var_ns()).max(GRANULARITY_NS)
                + if space == SpaceId::Data { self.q.max_ack_delay_ns } else { 0 })
                * self.q.persistent_congestion_threshold as u64;
            let s = self.sp(space, pi);
            let (last_pn, last_t) = eliciting_last;
            let contiguous =
                (first_pn..=last_pn).all(|pn| !s.sent.contains(pn)) && lost.len() as u64 > last_pn - first_pn;
            let path = &mut self.paths[pi];
            if contiguous
                && last_t.saturating_sub(first_t) > duration
                && path.first_rtt_sample_ns.is_some_and(|f| f < first_t)
            {
                // Appendix B.8: congestion_window = kMinimumWindow,
                // congestion_recovery_start_time = 0.
                self.qstats.persistent_congestion += 1;
                let pipe = path.engine.pipe_bytes;
                path.engine.cc.on_congestion(now_ns, CongestionSignal::PersistentCongestion, pipe);
                path.recovery_start_ns = None;
                path.in_recovery = false;
            }
        }
    }

    /// The ECN counts of an ACK frame (RFC 9000 §19.3.2: ECT(0), ECT(1), CE, cumulative per
    /// packet number space), `sent` the send time of the newest packet it acknowledged.
    /// Classic (RFC 9002 §7.1, Appendix B.7): a grown CE count starts a recovery period
    /// unless the packet was sent in the current one. EECN (§4.1, Table 1, read from the
    /// counts): a grown CE count is CL(2) (a classic router's CE too, §5), else a grown
    /// ECT(0) count is CL(1); marks on handshake packets set the initial window (§4.4.1,
    /// at the handshake's end), marks on 1-RTT packets start Algorithm 1's response once per
    /// period, or again within it for a higher level than the period's.
    fn on_ecn_counts(&mut self, now_ns: u64, space: SpaceId, pi: usize, counts: [u64; 3], sent: u64) {
        let s = self.sp_mut(space, pi);
        let (ect0_grew, ce_grew) = (counts[0] > s.peer_ect0, counts[2] > s.peer_ce);
        s.peer_ect0 = s.peer_ect0.max(counts[0]);
        s.peer_ce = s.peer_ce.max(counts[2]);
        let level = match self.ecn {
            EcnMode::Classic if ce_grew => 1,
            EcnMode::Eecn if ce_grew => 2,
            EcnMode::Eecn if ect0_grew => 1,
            _ => return,
        };
        if self.ecn == EcnMode::Eecn && space != SpaceId::Data {
            self.ecn_handshake_level = self.ecn_handshake_level.max(level);
            return;
        }
        let path = &self.paths[pi];
        if path.recovery_start_ns.is_none_or(|r| sent > r) || level > path.ecn_period_level {
            self.enter_recovery(now_ns, pi, CongestionSignal::Ecn { level });
        }
    }

    fn enter_recovery(&mut self, now_ns: u64, pi: usize, signal: CongestionSignal) {
        self.qstats.congestion_events += 1;
        self.stats.fast_recoveries += 1;
        let path = &mut self.paths[pi];
        path.recovery_start_ns = Some(now_ns);
        // EECN: a higher level than the period's reaction is answered at once; a loss
        // period takes no ECN reaction (as in TCP mode, `crate::ecn`).
        path.ecn_period_level = match signal {
            CongestionSignal::Ecn { level } => level,
            _ => u8::MAX,
        };
        let flight = path.engine.pipe_bytes.max(path.engine.cc.window_bytes());
        path.engine.cc.on_congestion(now_ns, signal, flight);
        path.in_recovery = true;
        if matches!(signal, CongestionSignal::Ecn { .. }) {
            // An ECN response reduces at once (the controller did) and retransmits nothing.
            path.engine.cc.on_recovery_exit(now_ns);
            path.in_recovery = true;
        }
    }

    /// A lost frame's content goes back where it came from; datagrams are counted lost.
    fn requeue(&mut self, now_ns: u64, space: SpaceId, pi: usize, f: &Frame) {
        match f {
            Frame::Crypto { offset, len } => {
                // 1-RTT CRYPTO belongs to path 0's space, whichever path carried it.
                let s = self.sp_mut(space, 0);
                if !s.discarded {
                    s.crypto_pending.push_back((*offset, *len));
                }
            }
            Frame::PathChallenge => {
                if self.paths[pi].status == PathStatus::Validating {
                    self.paths[pi].challenge_pending = true;
                }
            }
            // RFC 9000 §13.3: PATH_RESPONSE is not sent again; the peer challenges again.
            Frame::PathResponse => {}
            Frame::Stream { chunk, .. } => {
                let done = self.send_msgs.get(&chunk.msg_id).is_some_and(|m| range_covered(&m.acked, chunk));
                if !done {
                    self.qstats.stream_bytes_retransmitted += chunk.len_bytes() as u64;
                    self.stats.retransmitted_bytes += chunk.len_bytes() as u64;
                    if let Some(c) = self.send_streams.to_entry(chunk) {
                        self.sched.requeue_lost(now_ns, c);
                    }
                }
            }
            Frame::Datagram { msg_id, .. } => {
                self.qstats.datagrams_lost += 1;
                if let Some(t) = self.send_msgs.get_mut(msg_id).and_then(|m| m.datagram.as_mut()) {
                    t.lost += 1;
                }
            }
            Frame::HandshakeDone => self.handshake_done_pending = true,
            Frame::GoAway { .. } => self.goaway_sent = false,
            Frame::MaxData(_)
            | Frame::MaxStreamData { .. }
            | Frame::MaxStreams { .. }
            | Frame::NewConnectionId { .. }
            | Frame::RetireConnectionId { .. } => {
                self.control.push_back(f.clone());
            }
            Frame::Ping | Frame::Padding(_) | Frame::Ack(_) | Frame::ConnectionClose => {}
        }
    }

    fn control_stream_id(&self) -> u64 {
        // The HTTP/3 control stream: the first unidirectional stream of each side.
        if self.is_client {
            2
        } else {
            3
        }
    }

    // ------------------------------------------------------------------ receiving

    /// Handles a received datagram.
    pub fn handle_packet(&mut self, now_ns: u64, pkt: &Packet) {
        let Some(dg) = pkt.quic.as_deref() else { return };
        if self.state == State::Closed {
            // RFC 9000 §10.2.1: in the closing state, answer what still arrives with
            // CONNECTION_CLOSE again (the first one may have been lost), at a rate that falls
            // as packets keep coming; §10.2.2: once the peer's CONNECTION_CLOSE arrives, drain
            // and send nothing. (Two ends that both closed and answered each other's
            // CONNECTION_CLOSE played ping-pong forever, and a duplicating link multiplied it.)
            if dg.packets.iter().any(|p| p.frames.contains(&Frame::ConnectionClose)) {
                self.draining = true;
                self.close_resend = false;
            }
            self.closed_packets_received += 1;
            if self.close_sent && !self.draining && self.closed_packets_received.is_power_of_two() {
                self.close_resend = true;
            }
            return;
        }
        self.stats.packets_received += 1;
        if !self.is_client {
            self.amp_received_bytes += dg.payload_bytes as u64;
        }
        for p in &dg.packets {
            let Some(pi) = self.path_of(p, pkt) else { continue };
            self.paths[pi].stats.packets_received += 1;
            self.handle_quic_packet(now_ns, p, pi, pkt.ecn);
            if self.state == State::Closed {
                return;
            }
        }
        if self.eecn_feedback_pending {
            // EECN §4.4.1: the handshake's level sets the initial window (10, 5 or 1
            // packets); path 0 carried the handshake.
            self.eecn_feedback_pending = false;
            let path = &mut self.paths[0];
            let rtt_ns = path.rtt.latest_ns();
            path.engine
                .cc
                .on_handshake_feedback(HandshakeFeedback { congestion_level: self.ecn_handshake_level, rtt_ns });
        }
    }

    /// The path a received packet belongs to. A server meets a client's new path with its
    /// first packet there (RFC 10069 §3.1: a path opens with PATH_CHALLENGE from a new
    /// address, under a connection ID of a new path ID): it creates the path (at most
    /// [`Self::MAX_PATHS`], only once the handshake is confirmed, only when multipath is
    /// configured), answers, and challenges the client in turn. `None`: the packet is
    /// dropped.
    fn path_of(&mut self, p: &QuicPacket, pkt: &Packet) -> Option<usize> {
        let id = p.path as usize;
        if id < self.paths.len() {
            return Some(id);
        }
        let multipath = self.q.multipath.scheduler != PathSchedulerKind::Single;
        if self.is_client || !multipath || !self.handshake_confirmed || id != self.paths.len() || id >= Self::MAX_PATHS
        {
            return None;
        }
        let mut path = QPath::new(PathId(id as u32), pkt.dst, pkt.src, &self.cfg, PathStatus::Validating);
        path.challenge_pending = true;
        self.paths.push(path);
        Some(id)
    }

    /// Reports [`Event::PathValidated`] once path `pi` is validated at both ends: the
    /// server's when its challenge is answered; the client's when, besides, the server
    /// acknowledged the client's PATH_RESPONSE (so the server validated it too, and may send
    /// on it).
    fn maybe_path_ready(&mut self, pi: usize) {
        let is_client = self.is_client;
        let path = &mut self.paths[pi];
        if !path.ready_reported && path.validated && (!is_client || path.peer_validated) {
            path.ready_reported = true;
            self.events.push_back(Event::PathValidated { path_id: pi as u32 });
        }
    }

    /// Paths one connection keeps at most (RFC 10069's initial_max_path_id bounds them; a
    /// peer cannot make us hold more).
    pub const MAX_PATHS: usize = 8;

    fn handle_quic_packet(&mut self, now_ns: u64, p: &QuicPacket, pi: usize, ecn: Ecn) {
        let space = p.space;
        if self.sp(space, pi).discarded {
            return;
        }
        if space == SpaceId::Data && !self.handshake_complete {
            // No 1-RTT keys yet (the server gets them from the client's Finished, the client
            // from the server's): the packet cannot be read and is dropped unacknowledged, as
            // quinn-proto drops what it cannot decrypt. A server's NEW_CONNECTION_ID packet
            // can overtake a lost Handshake packet this way; the server resends it.
            return;
        }
        if space != SpaceId::Data && pi != 0 {
            return;
        }
        if self.sp(space, pi).ack.contains(p.pn) {
            self.qstats.duplicate_packets += 1;
            return;
        }
        if p.space == SpaceId::Handshake && !self.is_client {
            // RFC 9001 §4.9.1: a server drops Initial keys when it first processes a
            // Handshake packet; RFC 9000 §8.1: that validates the client's address.
            self.address_validated = true;
            self.discard_space(SpaceId::Initial);
        }
        if self.qlog.is_some() {
            let ev = trace::packet(p, self.q.ack_delay_exponent);
            self.log(now_ns, qlog::EventData::PacketReceived(ev));
        }
        let eliciting = p.is_ack_eliciting();
        let (thr, delay) = (self.q.ack_eliciting_threshold, self.q.max_ack_delay_ns);
        self.sp_mut(space, pi).ack.on_packet(now_ns, p.pn, eliciting, ecn, space != SpaceId::Data, thr, delay);
        for f in &p.frames {
            match f {
                Frame::Ack(a) => {
                    // A PATH_ACK names its path; a plain ACK in the 1-RTT space is path 0's.
                    let target = if space == SpaceId::Data { a.path.unwrap_or(0) as usize } else { 0 };
                    if target < self.paths.len() {
                        self.on_ack_received(now_ns, space, target, a);
                    }
                }
                Frame::Crypto { offset, len } => {
                    // 1-RTT CRYPTO is one stream whichever path carries it: path 0's space.
                    self.sp_mut(space, 0).add_crypto_rx(*offset, *len);
                    self.on_crypto_progress(now_ns);
                }
                Frame::PathChallenge => {
                    // RFC 9000 §8.2.2: the response goes back on the same path.
                    self.paths[pi].responses_owed = self.paths[pi].responses_owed.saturating_add(1).min(4);
                }
                Frame::PathResponse => {
                    let path = &mut self.paths[pi];
                    if path.status == PathStatus::Validating {
                        path.status = PathStatus::Active;
                        path.validated = true;
                        path.challenge_pending = false;
                        self.maybe_path_ready(pi);
                    }
                }
                Frame::Stream { stream_id, stream_base, chunk, fin } => {
                    self.on_stream_frame(now_ns, *stream_id, *stream_base, chunk, *fin)
                }
                Frame::Datagram { msg_id, index, count, data_len, msg_len_bytes, quarter_stream_id, .. } => {
                    let chunk = (*index, *count, *data_len);
                    self.on_datagram_frame(now_ns, *msg_id, chunk, *msg_len_bytes, *quarter_stream_id)
                }
                Frame::MaxData(m) => self.peer_max_data = self.peer_max_data.max(*m),
                Frame::GoAway { reliable_messages, .. } => {
                    self.peer_reliable_messages = Some(*reliable_messages);
                    self.on_peer_goaway();
                }
                Frame::MaxStreamData { stream_id, max } => {
                    self.send_streams.on_max_stream_data(now_ns, *stream_id, *max, &mut *self.sched);
                    self.sync_stream_stats();
                }
                Frame::MaxStreams { bidi, max } => {
                    self.send_streams.on_max_streams(now_ns, *bidi, *max, &mut *self.sched);
                    self.sync_stream_stats();
                }
                Frame::Ping | Frame::Padding(_) => {}
                Frame::NewConnectionId { .. } => {
                    // quinn-proto: a server still talking to the client's handshake connection
                    // ID switches to a new one at once and retires the old (`update_rem_cid`).
                    if !self.is_client && !self.retired_handshake_cid {
                        self.retired_handshake_cid = true;
                        self.control.push_back(Frame::RetireConnectionId { seq: 0 });
                    }
                }
                Frame::RetireConnectionId { .. } => {
                    // The peer retired one of our IDs: issue a replacement (quinn's endpoint
                    // does, to keep the peer at its active_connection_id_limit).
                    let seq = self.next_cid_seq;
                    self.next_cid_seq += 1;
                    self.control.push_back(Frame::NewConnectionId { seq, cid_len: self.q.cid_len_bytes });
                }
                Frame::HandshakeDone => {
                    if self.is_client && !self.handshake_confirmed {
                        self.handshake_confirmed = true;
                        self.discard_space(SpaceId::Handshake);
                    }
                }
                Frame::ConnectionClose => {
                    self.on_peer_goaway();
                    self.finish(now_ns);
                    return;
                }
            }
        }
    }

    fn on_crypto_progress(&mut self, now_ns: u64) {
        let init = self.spaces[0].crypto_rx_contiguous() >= self.spaces[0].crypto_rx_expected;
        let hs = self.spaces[1].crypto_rx_contiguous() >= self.spaces[1].crypto_rx_expected;
        if self.is_client {
            if init && hs && !self.handshake_complete {
                // Client: the server's Finished arrived: send ours; 1-RTT may flow.
                self.queue_crypto(SpaceId::Handshake, self.q.finished_bytes);
                self.start_tls_step(now_ns);
                self.complete_handshake(now_ns);
                self.cids_to_issue = self.q.issued_cids > 0;
            }
        } else if init && self.spaces[0].crypto_total == 0 {
            // Server: the ClientHello arrived: ServerHello in Initial, the rest in Handshake.
            self.start_tls_step(now_ns);
            self.queue_crypto(SpaceId::Initial, self.q.server_hello_bytes);
            let hs_bytes = self.q.server_handshake_bytes();
            self.queue_crypto(SpaceId::Handshake, hs_bytes as u32);
            // The server has 1-RTT keys once its Finished is written (RFC 9001 §4.1.1).
            self.cids_to_issue = self.q.issued_cids > 0;
        } else if hs && !self.handshake_complete && self.spaces[1].crypto_total > 0 {
            // Server: the client's Finished: the handshake is complete and confirmed.
            self.start_tls_step(now_ns);
            self.complete_handshake(now_ns);
            self.handshake_confirmed = true;
            // HANDSHAKE_DONE and the TLS session tickets ([`QuicConfig::session_ticket_bytes`])
            // go at once, in a packet that leaves before the application hears of the
            // handshake and writes (transmits are drained before events, as quinn's connection
            // driver sends before the application task runs).
            self.handshake_done_pending = true;
            if self.q.session_ticket_bytes > 0 {
                self.queue_crypto(SpaceId::Data, self.q.session_ticket_bytes);
            }
            self.discard_space(SpaceId::Handshake);
        }
    }

    /// The handshake is complete. The application hears of it once the TLS step that
    /// completed it is over ([`QuicConfig::tls_cpu_ns`]), as quinn's `Connecting` resolves
    /// only after the connection has processed the handshake message: what the connection
    /// sends at that moment (the server's HANDSHAKE_DONE and session tickets, the client's
    /// Finished) leaves before the application can write anything.
    fn complete_handshake(&mut self, now_ns: u64) {
        self.handshake_complete = true;
        self.eecn_feedback_pending = self.ecn == EcnMode::Eecn;
        self.state = State::Established;
        if self.busy_until_ns > now_ns {
            self.connected_pending = true;
        } else {
            self.announce_connected(now_ns);
        }
    }

    fn announce_connected(&mut self, now_ns: u64) {
        self.qstats.handshake_done_ns = Some(now_ns);
        self.events.push_back(Event::Connected);
    }

    /// RFC 9001 §4.9 / RFC 9002 §6.4: discarding a space's keys removes its packets from
    /// bytes in flight and stops its timers.
    fn discard_space(&mut self, space: SpaceId) {
        let s = &mut self.spaces[space.index()];
        if s.discarded {
            return;
        }
        s.discarded = true;
        let mut in_flight = 0;
        for p in s.sent.values() {
            if p.in_flight {
                in_flight += p.size_bytes as u64;
            }
        }
        s.sent.clear();
        s.loss_time_ns = None;
        s.ack_eliciting_in_flight = 0;
        s.crypto_pending.clear();
        s.probes = 0;
        self.paths[0].engine.pipe_bytes = self.paths[0].engine.pipe_bytes.saturating_sub(in_flight);
        self.paths[0].pto_count = 0;
    }

    fn on_stream_frame(&mut self, now_ns: u64, stream_id: u64, stream_base: u64, chunk: &MsgChunk, fin: bool) {
        let _ = now_ns;
        // RFC 9000 §4.6 / §19.8: a peer's stream beyond the credit we gave (STREAM_LIMIT_ERROR),
        // one of our unidirectional streams or a bidirectional one we never opened
        // (STREAM_STATE_ERROR): the frame is dropped, so a peer cannot make us hold state for
        // streams it may not use.
        let bidi = qs::is_bidi(stream_id);
        let index = stream_id >> 2;
        let allowed = if qs::client_initiated(stream_id) == self.is_client {
            bidi && index < self.send_streams.opened(true)
        } else {
            index < self.local_max_streams[usize::from(!bidi)]
        };
        if !allowed {
            self.recv_streams.over_limit_bytes += chunk.len_bytes() as u64;
            return;
        }
        let peer_bidi = qs::is_bidi(stream_id) && qs::client_initiated(stream_id) != self.is_client;
        if peer_bidi && !self.recv_streams.seen(stream_id) {
            self.peer_bidi.insert(stream_id, PeerBidi::default());
        }
        self.peer_msg_stream.entry(chunk.msg_id).or_insert(stream_id);
        let r = self.recv_streams.on_frame(stream_id, stream_base, chunk, fin);
        self.stats.duplicate_bytes_received += r.duplicate_bytes;
        self.stats.bytes_delivered += r.in_order_bytes;
        self.rx_consumed_bytes += r.in_order_bytes;
        for &msg_id in r.started.iter().filter(|&&m| m & RESPONSE_END_BIT == 0) {
            self.events.push_back(Event::MessageStarted { msg_id });
        }
        if !self.watches.is_empty() && r.in_order_bytes > 0 {
            self.stream_watermarks(stream_id);
        }
        for c in &r.completed {
            if c.msg_id & RESPONSE_END_BIT != 0 {
                self.events.push_back(Event::ResponseEnded { msg_id: c.msg_id & !RESPONSE_END_BIT });
            } else {
                if !self.watches.is_empty() {
                    self.watches.forget(c.msg_id);
                }
                self.events.push_back(Event::MessageComplete {
                    msg_id: c.msg_id,
                    len_bytes: c.len_bytes,
                    priority: None,
                });
            }
        }
        if let Some(max) = r.max_stream_data {
            // One MAX_STREAM_DATA per stream in the queue, with the latest limit.
            let queued = self.control.iter_mut().find_map(|f| match f {
                Frame::MaxStreamData { stream_id: s, max: m } if *s == stream_id => Some(m),
                _ => None,
            });
            match queued {
                Some(m) => *m = max,
                None => self.control.push_back(Frame::MaxStreamData { stream_id, max }),
            }
        }
        if r.finished {
            if peer_bidi {
                if let Some(pb) = self.peer_bidi.get_mut(&stream_id) {
                    pb.recv_done = true;
                }
                self.maybe_return_credit(stream_id);
            } else if !qs::is_bidi(stream_id) && stream_id > 3 && qs::client_initiated(stream_id) != self.is_client {
                self.grant_stream(false);
            }
        }
        // RFC 9000 §4.2: raise the connection limit when half the window is used.
        let window = self.q.connection_receive_window_bytes;
        if window != u64::MAX && self.local_max_data.saturating_sub(self.rx_consumed_bytes) < window / 2 {
            self.local_max_data = self.rx_consumed_bytes.saturating_add(window);
            self.control.push_back(Frame::MaxData(self.local_max_data));
        }
    }

    /// Stream `stream_id` has new bytes in order: the watermarks of the messages on it that
    /// these reach fire, in message-id order.
    fn stream_watermarks(&mut self, stream_id: u64) {
        let mut fired: smallvec::SmallVec<[(u32, u64); 2]> = smallvec::SmallVec::new();
        for (msg_id, watermark) in self.watches.iter() {
            if self.peer_msg_stream.get(&msg_id) == Some(&stream_id) {
                let delivered = self.recv_streams.delivered_bytes(stream_id, msg_id);
                if delivered >= watermark {
                    fired.push((msg_id, delivered));
                }
            }
        }
        for (msg_id, delivered) in fired {
            self.watches.reached(msg_id, delivered);
            self.events.push_back(Event::MessageBytes { msg_id, bytes: delivered });
        }
    }

    /// A bidirectional stream the peer opened is done when all of it arrived and everything
    /// we wrote on it is acknowledged (or we write no more and wrote nothing): its credit
    /// goes back to the peer (RFC 9000 §4.6).
    fn maybe_return_credit(&mut self, stream_id: u64) {
        let Some(pb) = self.peer_bidi.get(&stream_id) else { return };
        if pb.recv_done && pb.unacked == 0 && (pb.wrote || self.close_requested) {
            self.peer_bidi.remove(&stream_id);
            self.grant_stream(true);
        }
    }

    /// One more stream of a direction for the peer: MAX_STREAMS, one per direction in the
    /// queue with the latest limit.
    fn grant_stream(&mut self, bidi: bool) {
        let d = usize::from(!bidi);
        self.local_max_streams[d] += 1;
        let max = self.local_max_streams[d];
        let queued = self.control.iter_mut().find_map(|f| match f {
            Frame::MaxStreams { bidi: b, max: m } if *b == bidi => Some(m),
            _ => None,
        });
        match queued {
            Some(m) => *m = max,
            None => {
                self.qstats.max_streams_sent += 1;
                self.control.push_back(Frame::MaxStreams { bidi, max });
            }
        }
    }

    fn on_datagram_frame(&mut self, now_ns: u64, msg_id: u32, chunk: (u32, u32, u32), msg_len: u64, qsid: Option<u64>) {
        let (index, count, len) = chunk;
        self.qstats.datagrams_received += 1;
        let needs_metadata = self.q.datagram_needs_metadata && qsid.is_some();
        let r = self.recv_msgs.entry(msg_id).or_default();
        r.quarter_stream_id = r.quarter_stream_id.or(qsid);
        if r.datagram.is_none() {
            r.len_bytes = msg_len;
            r.datagram = Some((0, count, now_ns));
        }
        let count = r.datagram.map_or(0, |d| d.1);
        if index >= count || !r.datagram_seen.insert(index) {
            return; // beyond the count the first chunk gave, or a duplicate
        }
        if needs_metadata && index != 0 && !r.datagram_seen.contains(&0) {
            // No record of the transfer yet: the chunk is of no use (and is not kept).
            r.orphaned += 1;
            r.orphaned_bytes += len as u64;
            return;
        }
        if r.received_bytes == 0 && len > 0 {
            self.events.push_back(Event::MessageStarted { msg_id });
        }
        r.received_bytes += len as u64;
        self.stats.bytes_delivered += len as u64;
        let d = r.datagram.as_mut().expect("set above");
        d.0 += 1;
        d.2 = now_ns;
        if d.0 == d.1 && !r.complete {
            r.complete = true;
            self.events.push_back(Event::MessageComplete { msg_id, len_bytes: msg_len, priority: None });
        }
    }

    fn on_peer_goaway(&mut self) {
        if !self.peer_goaway {
            self.peer_goaway = true;
            self.events.push_back(Event::PeerClosed);
        }
    }

    /// Every datagram message (object) of the peer this end received a chunk of, by message
    /// id: what arrived of it and when (thesis §5.8.2: bytes, completion status, per file).
    /// Duplicated chunks count once; chunks arrive in any order.
    pub fn datagram_objects(&self) -> Vec<DatagramObject> {
        self.recv_msgs.iter().filter_map(|(&id, r)| Self::datagram_object_of(id, r)).collect()
    }

    /// What arrived of the peer's datagram message `msg_id`, if any chunk of it did.
    pub fn datagram_object(&self, msg_id: u32) -> Option<DatagramObject> {
        self.recv_msgs.get(&msg_id).and_then(|r| Self::datagram_object_of(msg_id, r))
    }

    fn datagram_object_of(id: u32, r: &RecvMsg) -> Option<DatagramObject> {
        r.datagram.map(|(got, n, last)| DatagramObject {
            msg_id: id,
            quarter_stream_id: r.quarter_stream_id,
            bytes_expected: r.len_bytes,
            bytes_received: r.received_bytes,
            chunks: n,
            chunks_received: got,
            chunks_orphaned: r.orphaned,
            bytes_orphaned: r.orphaned_bytes,
            last_chunk_ns: last,
            complete: r.complete,
        })
    }

    /// Chunks of this end's datagram message `msg_id` dropped at the sender because the send
    /// queue was full ([`QuicConfig::datagram_send_queue_len`]), and their data bytes; `None`
    /// for a message that is not one.
    pub fn datagram_local_drops(&self, msg_id: u32) -> Option<(u32, u64)> {
        self.send_msgs.get(&msg_id).and_then(|m| m.datagram.as_ref()).map(|t| (t.dropped, t.dropped_bytes))
    }

    /// Per datagram message this end sent: (msg id, chunks, acknowledged, declared lost).
    pub fn datagram_fates(&self) -> Vec<(u32, u32, u32, u32)> {
        let mut v: Vec<_> = self
            .send_msgs
            .iter()
            .filter_map(|(&id, m)| m.datagram.as_ref().map(|t| (id, t.chunks, t.acked, t.lost)))
            .collect();
        v.sort_unstable();
        v
    }

    /// RFC 9002 Appendix A.7: OnAckReceived.
    fn on_ack_received(&mut self, now_ns: u64, space: SpaceId, pi: usize, ack: &AckFrame) {
        let largest = ack.largest();
        {
            let s = self.sp_mut(space, pi);
            if largest >= s.next_pn {
                return; // acknowledges a packet never sent: ignored.
            }
            s.largest_acked = Some(s.largest_acked.map_or(largest, |l| l.max(largest)));
        }
        // The records leave into a list the connection keeps between ACKs (no allocation
        // per ACK once it has grown to a window's worth).
        let mut newly = std::mem::take(&mut self.acked_scratch);
        newly.clear();
        for &(lo, hi) in &ack.ranges {
            if lo > hi {
                continue; // a malformed range (RFC 9000 §19.3.1: FRAME_ENCODING_ERROR): ignored
            }
            self.sp_mut(space, pi).sent.remove_range(lo, hi, &mut newly);
        }
        if newly.is_empty() {
            self.acked_scratch = newly;
            return;
        }
        newly.sort_unstable_by_key(|(pn, _)| *pn);
        if self.qlog.is_some() {
            let pns = newly.iter().map(|(pn, _)| *pn).collect();
            self.log(now_ns, qlog::EventData::PacketsAcked { space: trace::pn_space(space), packet_numbers: pns });
        }
        let prior_in_flight = self.paths[pi].engine.pipe_bytes;
        // §5.1: an RTT sample when the largest acknowledged is newly acknowledged and
        // something newly acknowledged was ack-eliciting.
        let mut rtt_sample = None;
        if let Some((pn, p)) = newly.last() {
            if *pn == largest && newly.iter().any(|(_, p)| p.ack_eliciting) {
                let latest = now_ns.saturating_sub(p.time_sent_ns);
                let mut delay = if space == SpaceId::Data {
                    // RFC 9000 §19.3: microseconds × 2^exponent; a peer's absurd value saturates.
                    let us = (ack.delay_encoded as u128) << self.q.ack_delay_exponent.min(20);
                    (us * 1_000).min(u64::MAX as u128 / 2) as u64
                } else {
                    0
                };
                if self.handshake_confirmed {
                    delay = delay.min(self.q.max_ack_delay_ns);
                }
                self.paths[pi].rtt.update(latest, delay);
                if self.paths[pi].first_rtt_sample_ns.is_none() {
                    self.paths[pi].first_rtt_sample_ns = Some(now_ns);
                }
                rtt_sample = Some(latest);
            }
        }
        // Delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3).
        let mut acked_bytes = 0u64;
        let mut pre_recovery_bytes = 0u64;
        let mut rs: Option<RateSample> = None;
        let mut prior_delivered = 0u64;
        let mut after_recovery = false;
        let mut bw_limited = false;
        // A recovery period this ACK begins (ECN below, a loss in `on_packets_lost`) starts
        // now, after every packet it acknowledges was sent: then none of them may grow the
        // window or end the period. Counted, since persistent congestion clears the start.
        let recoveries_before = self.qstats.congestion_events;
        for (_, p) in &newly {
            if p.ack_eliciting {
                let s = self.sp_mut(space, pi);
                s.ack_eliciting_in_flight = s.ack_eliciting_in_flight.saturating_sub(1);
            }
            if p.in_flight {
                self.paths[pi].engine.pipe_bytes = self.paths[pi].engine.pipe_bytes.saturating_sub(p.size_bytes as u64);
                acked_bytes += p.size_bytes as u64;
                if self.paths[pi].recovery_start_ns.is_some_and(|r| p.time_sent_ns <= r) {
                    pre_recovery_bytes += p.size_bytes as u64;
                }
                self.paths[pi].engine.delivered_bytes += p.size_bytes as u64;
                self.paths[pi].engine.delivered_ns = now_ns;
                if rs.is_none() || p.delivered_bytes >= prior_delivered {
                    prior_delivered = p.delivered_bytes;
                    bw_limited = p.bw_app_limited;
                    let send_elapsed = p.time_sent_ns.saturating_sub(p.first_sent_ns);
                    let ack_elapsed = now_ns.saturating_sub(p.delivered_ns);
                    self.paths[pi].engine.first_sent_ns = p.time_sent_ns;
                    rs = Some(RateSample {
                        prior_delivered_bytes: p.delivered_bytes,
                        delivered_bytes: 0,
                        interval_ns: send_elapsed.max(ack_elapsed),
                        is_app_limited: p.app_limited,
                        rtt_ns: Some(now_ns.saturating_sub(p.time_sent_ns)),
                    });
                }
            }
            if self.paths[pi].recovery_start_ns.is_some_and(|r| p.time_sent_ns > r) {
                after_recovery = true;
            }
            if let Some(l) = p.acked_up_to {
                self.sp_mut(space, pi).ack.prune_below(l);
            }
            for f in &p.frames {
                if matches!(f, Frame::PathResponse) && space == SpaceId::Data {
                    self.paths[pi].peer_validated = true;
                    self.maybe_path_ready(pi);
                }
                if let Frame::Crypto { offset, len } = f {
                    insert_range(&mut self.sp_mut(space, pi).crypto_acked, *offset, offset + *len as u64);
                }
                self.on_frame_acked(f);
            }
        }
        if let Some(r) = rs.as_mut() {
            r.delivered_bytes = self.paths[pi].engine.delivered_bytes - r.prior_delivered_bytes;
        }
        if self.paths[pi].engine.app_limited_until != 0
            && self.paths[pi].engine.delivered_bytes > self.paths[pi].engine.app_limited_until
        {
            self.paths[pi].engine.app_limited_until = 0;
        }
        // §7.1 / Appendix B.7: a CE count that grew is a congestion signal.
        if let Some(counts) = ack.ecn {
            let sent = newly.last().map_or(0, |(_, p)| p.time_sent_ns);
            self.on_ecn_counts(now_ns, space, pi, counts, sent);
        }
        newly.clear();
        self.acked_scratch = newly;
        let lost = self.detect_lost(now_ns, space, pi);
        let lost_bytes: u64 = lost.iter().filter(|(_, p, _)| p.in_flight).map(|(_, p, _)| p.size_bytes as u64).sum();
        self.on_packets_lost(now_ns, space, pi, lost);
        if self.qstats.congestion_events != recoveries_before {
            // RFC 9002 Appendix A.7 then B.5: OnPacketsLost sets the recovery start to now,
            // so OnPacketsAcked finds every packet of this ACK sent in the period
            // (quinn-proto grows the window with them first and halves the result; both
            // leave the halved window for the period's first round trip).
            pre_recovery_bytes = acked_bytes;
            after_recovery = false;
        }
        if let Some(r) = rs.filter(|r| !bw_limited && r.interval_ns > 0 && space == SpaceId::Data) {
            self.on_rate_sample(now_ns, pi, &r);
        }
        if self.paths[pi].status == PathStatus::Failed {
            // An acknowledgement on a failed path: it works again (a path that never passed
            // validation goes back to validating).
            let validated = self.paths[pi].validated;
            let path = &mut self.paths[pi];
            path.status = if validated { PathStatus::Active } else { PathStatus::Validating };
            path.challenge_pending = !validated;
        }
        // §6.2.1: the PTO backoff resets (a client unsure the server validated it keeps it).
        if !self.is_client || self.handshake_complete {
            self.paths[pi].pto_count = 0;
        }
        if self.paths[pi].in_recovery && after_recovery {
            self.paths[pi].in_recovery = false;
            self.paths[pi].engine.cc.on_recovery_exit(now_ns);
        }
        let app_limited = self.sched.queued_bytes() == 0 && self.datagram_queue.is_empty();
        let sample = AckSample {
            now_ns,
            newly_acked_bytes: acked_bytes,
            newly_lost_bytes: lost_bytes,
            delivered_total_bytes: self.paths[pi].engine.delivered_bytes,
            prior_in_flight_bytes: prior_in_flight,
            bytes_in_flight: self.paths[pi].engine.pipe_bytes,
            rtt_ns: rtt_sample,
            min_rtt_ns: self.paths[pi].rtt.min_ns(),
            srtt_ns: self.paths[pi].rtt.has_sample().then_some(self.paths[pi].rtt.smoothed_ns()),
            rate: rs,
            in_recovery: self.paths[pi].in_recovery,
            app_limited,
            ecn_echo: 0,
            sack_only: false,
            newly_sacked: false,
            pre_recovery_bytes,
            handshake_only: space != SpaceId::Data,
        };
        if acked_bytes > 0 {
            self.paths[pi].engine.cc.on_ack(&sample);
        }
        self.log_metrics(now_ns);
        self.maybe_close_connection();
    }

    /// A delivery-rate sample of path `pi` (draft-cheng-iccrg-delivery-rate-estimation §3.3)
    /// enters its bandwidth filter.
    fn on_rate_sample(&mut self, now_ns: u64, pi: usize, r: &RateSample) {
        let Some(bps) = r.delivery_rate_bps() else { return };
        let path = &mut self.paths[pi];
        let srtt = path.rtt.smoothed_ns();
        path.bw.on_sample(now_ns, bps, srtt);
    }

    fn on_frame_acked(&mut self, f: &Frame) {
        match f {
            Frame::GoAway { .. } => self.goaway_acked = true,
            Frame::Stream { chunk, .. } => {
                if let Some(m) = self.send_msgs.get_mut(&chunk.msg_id) {
                    let was_acked = m.acked_bytes >= m.len_bytes;
                    let (s, e) = (chunk.msg_offset_bytes, chunk.msg_offset_bytes + chunk.len_bytes() as u64);
                    m.acked_bytes += insert_range(&mut m.acked, s, e);
                    if !was_acked && m.acked_bytes >= m.len_bytes {
                        let stream = m.stream_id;
                        if let Some(pb) = stream.and_then(|id| self.peer_bidi.get_mut(&id)) {
                            pb.unacked = pb.unacked.saturating_sub(1);
                            self.maybe_return_credit(stream.expect("present"));
                        }
                    }
                }
            }
            Frame::Datagram { msg_id, .. } => {
                self.qstats.datagrams_acked += 1;
                if let Some(t) = self.send_msgs.get_mut(msg_id).and_then(|m| m.datagram.as_mut()) {
                    t.acked += 1;
                }
            }
            _ => {}
        }
    }

    fn all_sent_data_acked(&self) -> bool {
        self.sched.queued_bytes() == 0
            && self.send_streams.held_bytes() == 0
            && self.datagram_queue.is_empty()
            && self.send_msgs.values().all(|m| m.datagram.is_some() || m.acked_bytes >= m.len_bytes)
            && self.paths[0].data.sent.values().all(|p| !p.frames.iter().any(is_datagram))
    }

    fn all_received(&self) -> bool {
        self.peer_reliable_messages.is_some_and(|n| self.recv_streams.completed_messages >= n)
    }

    fn maybe_close_connection(&mut self) {
        if self.close_requested
            && self.goaway_acked
            && self.peer_goaway
            && !self.close_sent
            && self.all_sent_data_acked()
            && self.all_received()
            && !self.control.contains(&Frame::ConnectionClose)
        {
            self.control.push_back(Frame::ConnectionClose);
        }
    }

    fn finish(&mut self, _now_ns: u64) {
        if self.state != State::Closed {
            self.state = State::Closed;
            self.events.push_back(Event::Closed);
        }
    }

    // ------------------------------------------------------------------ sending

    fn amp_room(&self) -> u64 {
        if self.is_client || self.address_validated {
            u64::MAX
        } else {
            (3 * self.amp_received_bytes).saturating_sub(self.amp_sent_bytes)
        }
    }

    /// A TLS step with public-key work starts: nothing leaves for [`QuicConfig::tls_cpu_ns`].
    fn start_tls_step(&mut self, now_ns: u64) {
        if self.q.tls_cpu_ns > 0 {
            self.busy_until_ns = now_ns.saturating_add(self.q.tls_cpu_ns);
        }
    }

    /// 1-RTT packets may go: the client's handshake is complete, or the server has written
    /// its Finished (RFC 9001 §4.1.1: it has 1-RTT keys then and may send 0.5-RTT data; the
    /// application writes only once the handshake completes, so what a server sends before
    /// is control frames: NEW_CONNECTION_ID).
    fn can_send_1rtt(&self) -> bool {
        self.handshake_complete || !self.is_client && self.spaces[SpaceId::Handshake.index()].crypto_total > 0
    }

    /// The next datagram to send, if any (congestion control, pacing and the
    /// anti-amplification limit permitting).
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<Packet> {
        if self.state == State::Closed {
            if !std::mem::take(&mut self.close_resend) {
                return None;
            }
            let s = &mut self.paths[0].data;
            let pn = s.next_pn;
            s.next_pn += 1;
            let pn_len = wq::pn_len(pn, s.largest_acked);
            let frames = smallvec::smallvec![Frame::ConnectionClose];
            let size = self.header_len(SpaceId::Data, pn_len, 4) + 4 + wq::AEAD_TAG_BYTES;
            let mut dg = QuicDatagram::default();
            dg.packets.push(QuicPacket { space: SpaceId::Data, pn, frames, size_bytes: size as u32, path: 0 });
            dg.payload_bytes = size as u32;
            self.stats.packets_sent += 1;
            let quic = Some(self.boxed(dg));
            return Some(Packet { src: self.local, dst: self.remote, quic, ..Default::default() });
        }
        if now_ns < self.busy_until_ns {
            return None;
        }
        if self.close_requested && !self.goaway_sent && self.handshake_complete {
            // Everything written is sent, and every datagram's fate is known (a peer that
            // closes on our GOAWAY must not leave a chunk neither acknowledged nor lost).
            let all_written = self.sched.queued_bytes() == 0
                && self.send_streams.held_bytes() == 0
                && self.datagram_queue.is_empty()
                && self.no_datagram_in_flight();
            if all_written {
                self.goaway_sent = true;
                let reliable = self.send_msgs.values().filter(|m| m.datagram.is_none()).count() as u64;
                self.control
                    .push_back(Frame::GoAway { stream_id: self.control_stream_id(), reliable_messages: reliable });
            }
        }
        self.maybe_close_connection();
        if self.paths.len() == 1 {
            return self.transmit_on(now_ns, 0);
        }
        // Multipath. While the handshake spaces live, only path 0 is validated: it sends
        // them as on one path (a path scheduler that names paths with stream data only,
        // PriorityBucket's, would otherwise leave the client's Finished to a timer).
        if self.spaces.iter().any(|s| !s.discarded) {
            if let Some(p) = self.transmit_on(now_ns, 0) {
                return Some(p);
            }
        }
        // Then a path that owes something whatever the congestion window (an ACK due, a
        // probe, path validation), then the path the path scheduler names.
        for pi in 0..self.paths.len() {
            if self.path_needs_packet(now_ns, pi) {
                if let Some(p) = self.transmit_on(now_ns, pi) {
                    return Some(p);
                }
            }
        }
        let pi = self.choose_data_path(now_ns)?;
        self.transmit_on(now_ns, pi)
    }

    /// Path `pi` has something to send that does not wait for the path scheduler.
    fn path_needs_packet(&self, now_ns: u64, pi: usize) -> bool {
        let p = &self.paths[pi];
        p.responses_owed > 0
            || p.challenge_pending && self.handshake_confirmed
            || p.data.probes > 0
            || p.data.ack.wants_ack_now(now_ns)
    }

    /// The path the next packet with data goes on, from the path scheduler; `None` when no
    /// path may send now (pacing waits are armed in [`Self::path_views`]).
    fn choose_data_path(&mut self, now_ns: u64) -> Option<usize> {
        if !self.can_send_1rtt() {
            return Some(0);
        }
        if self.sched.uses_paths() {
            // Allocation sees the paths being validated too: they carry their share once
            // validated, a fraction of an RTT later (§4.1: estimates from prior knowledge).
            let mut all = PathViews::new();
            self.path_views_of(now_ns, true, &mut all);
            self.sched.on_paths(now_ns, &all);
        }
        let mut views = PathViews::new();
        self.path_views(now_ns, &mut views);
        if !self.paths.iter().any(|p| p.status == PathStatus::Active) {
            return Some(0);
        }
        let id = if self.path_sched.per_stream() && !self.sched.candidates(1).is_empty() {
            // SA-ECF: the send scheduler's streams in its order; the first the path scheduler
            // places goes next (a stream that waits for the fast path is skipped).
            let connection_unsent_bytes = self.sched.queued_bytes();
            let max_packet_bytes = u64::from(self.q.max_udp_payload_bytes);
            let mut pick = None;
            for c in self.sched.candidates(Self::STREAM_CANDIDATES) {
                let view = StreamView {
                    msg_id: c.msg_id,
                    unsent_bytes: c.unsent_bytes,
                    weight: c.weight,
                    total_weight: c.total_weight,
                    quantum_packets: c.quantum_packets,
                    open_streams: c.open_streams,
                    connection_unsent_bytes,
                    max_packet_bytes,
                };
                if let Some(id) = self.path_sched.choose_for_stream(now_ns, &view, &views) {
                    self.next_stream = Some(c.msg_id);
                    pick = Some(id);
                    break;
                }
            }
            pick
        } else {
            self.path_sched.choose(now_ns, &views)
        };
        id.map(|id| id.0 as usize).filter(|&i| i < self.paths.len())
    }

    /// Streams a per-stream path scheduler is offered per decision, at most.
    const STREAM_CANDIDATES: usize = 16;

    /// What the path scheduler sees of each active path now (see [`PathView`]), appended
    /// to `views` (the caller's, on its stack: no copy of the list on return). A path whose
    /// window has room but whose pacer holds it arms its pacing timer.
    fn path_views(&mut self, now_ns: u64, views: &mut PathViews) {
        self.path_views_of(now_ns, false, views);
    }

    /// As [`Self::path_views`]; with `validating`, paths still being validated are included
    /// (they cannot send yet).
    fn path_views_of(&mut self, now_ns: u64, validating: bool, views: &mut PathViews) {
        let mtu = self.q.max_udp_payload_bytes as u64;
        let conn_data = !self.control.is_empty() || !self.datagram_queue.is_empty() || self.handshake_done_pending;
        let estimate = self.q.multipath.estimate_bandwidth;
        for pi in 0..self.paths.len() {
            let active = self.paths[pi].status == PathStatus::Active;
            if !(active || validating && self.paths[pi].status == PathStatus::Validating) {
                continue;
            }
            let cwnd = self.paths[pi].cwnd_bytes();
            let room = active && self.paths[pi].engine.pipe_bytes + mtu < cwnd;
            let pace = if room { self.pacing_deadline(now_ns, pi) } else { None };
            let has_data = conn_data || self.sched.has_data_on(PathId(pi as u32));
            if pace.is_some() && has_data {
                self.paths[pi].pacing_wait_ns = pace;
            }
            let p = &self.paths[pi];
            views.push(PathView {
                id: p.id,
                srtt_ns: p.rtt.smoothed_ns(),
                rttvar_ns: p.rtt.var_ns(),
                min_rtt_ns: p.rtt.min_ns().unwrap_or(p.rtt.smoothed_ns()),
                cwnd_bytes: cwnd,
                bytes_in_flight: p.engine.pipe_bytes,
                bandwidth_bps: p.bandwidth_estimate_bps(now_ns, estimate),
                queued_bytes: 0,
                can_send: room && pace.is_none(),
                has_data,
            });
        }
    }

    /// When path `pi`'s pacer lets the next full packet go, if later than `now_ns`.
    fn pacing_deadline(&mut self, now_ns: u64, pi: usize) -> Option<u64> {
        if !self.q.pacing {
            return None;
        }
        let p = &mut self.paths[pi];
        let mtu = self.q.max_udp_payload_bytes as u64;
        match p.engine.cc.pacing_rate_bps() {
            Some(rate) if rate > 0 => (p.engine.next_send_ns > now_ns).then_some(p.engine.next_send_ns),
            _ => {
                let (srtt, cwnd) = (p.rtt.smoothed_ns(), p.cwnd_bytes());
                p.pacer.delay(srtt, mtu, mtu, cwnd, now_ns)
            }
        }
    }

    /// No DATAGRAM frame is in flight on any path (every chunk's fate is known).
    fn no_datagram_in_flight(&self) -> bool {
        self.paths.iter().all(|p| p.data.sent.values().all(|s| !s.frames.iter().any(is_datagram)))
    }

    /// The next datagram on path `pi`: on path 0 the handshake spaces' packets coalesced
    /// ahead of the 1-RTT one (RFC 9000 §12.2).
    fn transmit_on(&mut self, now_ns: u64, pi: usize) -> Option<Packet> {
        let max = self.q.max_udp_payload_bytes as usize;
        // Built in place in a recycled box (the one the driver's packet brought, when it
        // recycles them): no datagram value is moved into the box afterwards.
        let mut dg = self.datagram_box();
        let mut used = 0usize;
        let amp = self.amp_room();
        for space in SpaceId::ALL {
            if space != SpaceId::Data && pi != 0 {
                continue;
            }
            if self.sp(space, pi).discarded {
                continue;
            }
            if space == SpaceId::Data && !self.can_send_1rtt() {
                continue;
            }
            if space == SpaceId::Handshake && !self.handshake_keys() {
                continue;
            }
            let room = max.saturating_sub(used).min(amp.saturating_sub(used as u64) as usize);
            if room < 48 {
                break;
            }
            let coalescing = !dg.packets.is_empty();
            let Some(p) = self.build_packet(now_ns, space, pi, room, coalescing) else { continue };
            used += p.size_bytes as usize;
            dg.packets.push(p);
            if space == SpaceId::Data {
                break;
            }
        }
        if dg.packets.is_empty() {
            self.spare_datagrams.push(dg);
            return None;
        }
        // RFC 9000 §14.1: padding of datagrams that carry Initial packets.
        let has_initial = dg.packets.iter().any(|p| p.space == SpaceId::Initial);
        if has_initial {
            let eliciting_initial = dg.packets.iter().any(|p| p.space == SpaceId::Initial && p.is_ack_eliciting());
            let target = if self.is_client || eliciting_initial {
                self.q.initial_padding_bytes.max(wq::MIN_INITIAL_DATAGRAM_BYTES as u32) as usize
            } else {
                0
            };
            let target = target.min(max).min(amp.min(max as u64) as usize);
            if used < target {
                let pad = (target - used) as u32;
                let last = dg.packets.last_mut().expect("non-empty");
                last.frames.push(Frame::Padding(pad));
                last.size_bytes += pad;
                used = target;
            }
        }
        // RFC 9000 §8.2.1-8.2.2: a datagram with PATH_CHALLENGE or PATH_RESPONSE is expanded
        // to at least 1200 bytes.
        let validating =
            dg.packets.iter().any(|p| p.frames.iter().any(|f| matches!(f, Frame::PathChallenge | Frame::PathResponse)));
        if validating && used < wq::MIN_INITIAL_DATAGRAM_BYTES {
            let pad = (wq::MIN_INITIAL_DATAGRAM_BYTES - used) as u32;
            let last = dg.packets.last_mut().expect("non-empty");
            last.frames.push(Frame::Padding(pad));
            last.size_bytes += pad;
            used += pad as usize;
        }
        dg.payload_bytes = used as u32;
        for p in &dg.packets {
            self.on_packet_sent(now_ns, p);
        }
        if !self.is_client {
            self.amp_sent_bytes += used as u64;
        }
        if self.cids_to_issue && self.spaces.iter().all(|s| s.discarded || s.crypto_pending.is_empty()) {
            // This end's handshake flight has left: its connection IDs follow in a packet of
            // their own ([`QuicConfig::issued_cids`]).
            self.cids_to_issue = false;
            for _ in 0..self.q.issued_cids {
                let seq = self.next_cid_seq;
                self.next_cid_seq += 1;
                self.control.push_back(Frame::NewConnectionId { seq, cid_len: self.q.cid_len_bytes });
            }
        }
        if self.close_sent {
            self.finish(now_ns);
        }
        self.stats.packets_sent += 1;
        let ecn = match self.ecn {
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::Eecn => Ecn::Ect1,
            _ => Ecn::NotEct,
        };
        let (src, dst) = (self.paths[pi].local, self.paths[pi].remote);
        self.paths[pi].stats.packets_sent += 1;
        self.paths[pi].stats.bytes_sent += used as u64;
        Some(Packet { src, dst, ecn, quic: Some(dg), ..Default::default() })
    }

    /// The most datagram boxes kept for reuse.
    const MAX_SPARE_DATAGRAMS: usize = 8;

    /// Gives the connection a datagram box whose contents are no longer needed (from a
    /// packet the driver delivered), to carry a later datagram, for a driver that keeps
    /// packets and datagram boxes apart (the simulator keeps them together and passes the
    /// box in with [`Self::poll_transmit_into`]).
    pub fn recycle_datagram(&mut self, b: Box<QuicDatagram>) {
        if self.spare_datagrams.len() < Self::MAX_SPARE_DATAGRAMS {
            self.spare_datagrams.push(b);
        }
    }

    /// The next datagram, written into `out` (every field) when there is one: `true` then.
    /// The datagram box `out` holds from its previous packet carries the new datagram, and
    /// stays in `out` when nothing is sent: a driver that recycles its packets (the
    /// simulator) keeps each packet's datagram box with it and sends without allocating.
    pub fn poll_transmit_into(&mut self, now_ns: u64, out: &mut Packet) -> bool {
        let spares = self.spare_datagrams.len();
        if let Some(b) = out.quic.take() {
            // On top of the spares: the next datagram goes into it.
            self.spare_datagrams.push(b);
        }
        match self.poll_transmit(now_ns) {
            Some(p) => {
                *out = p;
                true
            }
            None => {
                if self.spare_datagrams.len() > spares {
                    out.quic = self.spare_datagrams.pop();
                }
                false
            }
        }
    }

    /// An empty datagram box: a recycled one when there is one.
    fn datagram_box(&mut self) -> Box<QuicDatagram> {
        match self.spare_datagrams.pop() {
            Some(mut b) => {
                b.packets.clear();
                b.payload_bytes = 0;
                b
            }
            None => Box::default(),
        }
    }

    /// `dg` in a box, a recycled one when there is one.
    fn boxed(&mut self, dg: QuicDatagram) -> Box<QuicDatagram> {
        match self.spare_datagrams.pop() {
            Some(mut b) => {
                *b = dg;
                b
            }
            None => Box::new(dg),
        }
    }

    fn on_packet_sent(&mut self, now_ns: u64, p: &QuicPacket) {
        let pi = p.path as usize;
        if self.qlog.is_some() {
            let ev = trace::packet(p, self.q.ack_delay_exponent);
            self.log(now_ns, qlog::EventData::PacketSent(ev));
        }
        let eliciting = p.is_ack_eliciting();
        let in_flight = eliciting || p.frames.iter().any(|f| matches!(f, Frame::Padding(_)));
        self.qstats.packets_sent[p.space.index()] += 1;
        let mut acked_up_to = None;
        let mut frames: SmallVec<[Frame; 2]> = SmallVec::new();
        for f in &p.frames {
            match f {
                Frame::Ack(a) => {
                    acked_up_to = Some(a.largest());
                    self.qstats.ack_frames_sent += 1;
                }
                Frame::Padding(_) => {}
                Frame::Stream { chunk, .. } => {
                    self.stats.data_bytes_sent += chunk.len_bytes() as u64;
                    self.paths[pi].stats.data_bytes_sent += chunk.len_bytes() as u64;
                    frames.push(f.clone());
                }
                Frame::Datagram { data_len, .. } => {
                    self.paths[pi].stats.data_bytes_sent += *data_len as u64;
                    frames.push(f.clone());
                }
                Frame::ConnectionClose => self.close_sent = true,
                _ => frames.push(f.clone()),
            }
        }
        if !eliciting && acked_up_to.is_some() {
            self.stats.pure_acks_sent += 1;
        } else if eliciting {
            self.stats.data_segments_sent += 1;
        }
        if self.paths[pi].engine.pipe_bytes == 0 && in_flight {
            self.paths[pi].engine.first_sent_ns = now_ns;
            self.paths[pi].engine.delivered_ns = now_ns;
        }
        let rec = SentPacket {
            time_sent_ns: now_ns,
            size_bytes: p.size_bytes,
            ack_eliciting: eliciting,
            in_flight,
            frames,
            acked_up_to,
            delivered_bytes: self.paths[pi].engine.delivered_bytes,
            delivered_ns: self.paths[pi].engine.delivered_ns,
            first_sent_ns: self.paths[pi].engine.first_sent_ns,
            app_limited: self.paths[pi].engine.app_limited_until != 0,
            bw_app_limited: false,
        };
        let bw_app_limited = self.sched.queued_bytes() == 0 && self.datagram_queue.is_empty();
        if in_flight {
            let path = &mut self.paths[pi];
            path.engine.pipe_bytes += p.size_bytes as u64;
            path.engine.cc.on_packet_sent(now_ns, p.size_bytes as u64, path.engine.pipe_bytes, false);
            path.pacer.on_sent(p.size_bytes as u64);
            if let Some(rate) = path.engine.cc.pacing_rate_bps().filter(|&r| r > 0) {
                let gap = (p.size_bytes as u128 * 8 * 1_000_000_000 / rate as u128) as u64;
                path.engine.next_send_ns = path.engine.next_send_ns.max(now_ns).saturating_add(gap);
            }
        }
        let s = self.sp_mut(p.space, pi);
        if eliciting {
            s.last_ack_eliciting_sent_ns = Some(now_ns);
            s.ack_eliciting_in_flight += 1;
        }
        s.sent.insert(p.pn, SentPacket { bw_app_limited, ..rec });
        if p.space == SpaceId::Handshake && self.is_client {
            // RFC 9001 §4.9.1: a client drops Initial keys when it first sends a Handshake packet.
            self.discard_space(SpaceId::Initial);
        }
    }

    fn header_len(&self, space: SpaceId, pn_len: usize, payload_len: usize) -> usize {
        let cid = self.q.cid_len_bytes as usize;
        match space {
            SpaceId::Initial => {
                wq::long_header_len(wq::LongType::Initial, cid, cid, 0, pn_len, payload_len + wq::AEAD_TAG_BYTES)
            }
            SpaceId::Handshake => {
                wq::long_header_len(wq::LongType::Handshake, cid, cid, 0, pn_len, payload_len + wq::AEAD_TAG_BYTES)
            }
            SpaceId::Data => wq::short_header_len(cid, pn_len),
        }
    }

    fn has_eliciting_to_send(&self, space: SpaceId, pi: usize) -> bool {
        let s = self.sp(space, pi);
        if s.probes > 0 || !s.crypto_pending.is_empty() && (space != SpaceId::Data || pi == 0) {
            return true;
        }
        if space != SpaceId::Data {
            return false;
        }
        let path = &self.paths[pi];
        if path.responses_owed > 0 || path.challenge_pending && self.handshake_confirmed {
            return true;
        }
        path.status == PathStatus::Active
            && (self.handshake_done_pending
                || !self.control.is_empty()
                || !self.datagram_queue.is_empty()
                || self.sched.has_data_on(PathId(pi as u32)))
    }

    fn build_packet(
        &mut self,
        now_ns: u64,
        space: SpaceId,
        pi: usize,
        room: usize,
        coalescing: bool,
    ) -> Option<QuicPacket> {
        let probe = self.sp(space, pi).probes > 0;
        let wants_ack = self.sp(space, pi).ack.wants_ack_now(now_ns);
        let mut may_elicit = self.has_eliciting_to_send(space, pi);
        if may_elicit && !probe && space == SpaceId::Data {
            // Congestion window and pacer (RFC 9002 §7, §7.7), the path's own. As the
            // reference stack does, a full-sized packet must fit strictly below the window
            // (in flight + MTU < cwnd): an initial window of 10 packets carries 9 full ones.
            let cwnd = self.paths[pi].cwnd_bytes();
            if self.paths[pi].engine.pipe_bytes + room.min(self.q.max_udp_payload_bytes as usize) as u64 >= cwnd {
                may_elicit = false;
            } else if let Some(t) = self.pacing_deadline(now_ns, pi) {
                self.paths[pi].pacing_wait_ns = Some(t);
                may_elicit = false;
            }
        }
        let has_unacked = self.sp(space, pi).ack.has_unacked();
        if !(may_elicit || wants_ack || coalescing && has_unacked) {
            return None;
        }
        let s = self.sp(space, pi);
        let pn = s.next_pn;
        let pn_len = wq::pn_len(pn, s.largest_acked);
        // Budget: the header with a 2-byte Length field, the tag.
        let overhead = self.header_len(space, pn_len, 1000) + wq::AEAD_TAG_BYTES;
        let mut budget = room.checked_sub(overhead)?;
        let mut frames = Frames::new();
        if has_unacked || wants_ack {
            let with_ecn = self.ecn != EcnMode::Off;
            let exponent = self.q.ack_delay_exponent;
            if let Some(mut a) = self.sp_mut(space, pi).ack.build(now_ns, exponent, with_ecn) {
                // Each path's ACKs travel on the path itself, so that its RTT samples are
                // its own; path 0's are plain ACK frames (RFC 10069 §4.1).
                a.path = (space == SpaceId::Data && pi != 0).then_some(pi as u32);
                let f = Frame::Ack(a);
                if f.len_bytes() <= budget {
                    budget -= f.len_bytes();
                    frames.push(f);
                }
            }
        }
        if may_elicit {
            self.fill_frames(now_ns, space, pi, &mut frames, &mut budget);
            if probe && !frames.iter().any(Frame::is_ack_eliciting) {
                frames.push(Frame::Ping);
            }
            if probe {
                self.sp_mut(space, pi).probes -= 1;
            }
        }
        if frames.is_empty() {
            return None;
        }
        let payload: usize = frames.iter().map(Frame::len_bytes).sum();
        // RFC 9001 §5.4.2: the header-protection sample needs at least 4 bytes of packet
        // number plus payload; pad short packets.
        if pn_len + payload < 4 {
            frames.push(Frame::Padding((4 - pn_len - payload) as u32));
        }
        let payload: usize = frames.iter().map(Frame::len_bytes).sum();
        let size = self.header_len(space, pn_len, payload) + payload + wq::AEAD_TAG_BYTES;
        self.sp_mut(space, pi).next_pn += 1;
        Some(QuicPacket { space, pn, frames, size_bytes: size as u32, path: pi as u32 })
    }

    fn fill_frames(&mut self, now_ns: u64, space: SpaceId, pi: usize, frames: &mut Frames, budget: &mut usize) {
        // CRYPTO first, in its own space (1-RTT CRYPTO: path 0's).
        let crypto_pi = if space == SpaceId::Data && pi != 0 { None } else { Some(0) };
        while let Some(&(off, len)) = crypto_pi.and_then(|c| self.sp(space, c).crypto_pending.front()) {
            let hdr = wq::crypto_frame_overhead(off, len as usize);
            if *budget <= hdr {
                break;
            }
            let take = (len as usize).min(*budget - hdr) as u32;
            let f = Frame::Crypto { offset: off, len: take };
            *budget -= f.len_bytes();
            frames.push(f);
            let pending = &mut self.sp_mut(space, 0).crypto_pending;
            let front = pending.front_mut().expect("present");
            if take == len {
                pending.pop_front();
            } else {
                *front = (off + take as u64, len - take);
            }
        }
        if space != SpaceId::Data {
            return;
        }
        // Path validation (RFC 9000 §8.2) on this path.
        while self.paths[pi].responses_owed > 0 && *budget >= 9 {
            self.paths[pi].responses_owed -= 1;
            frames.push(Frame::PathResponse);
            *budget -= 9;
        }
        if self.paths[pi].challenge_pending && self.handshake_confirmed && *budget >= 9 {
            self.paths[pi].challenge_pending = false;
            frames.push(Frame::PathChallenge);
            *budget -= 9;
        }
        if self.paths[pi].status != PathStatus::Active {
            // Validating or failed: nothing but validation and probes.
            return;
        }
        if self.handshake_done_pending && *budget >= 1 {
            self.handshake_done_pending = false;
            frames.push(Frame::HandshakeDone);
            *budget -= 1;
        }
        while let Some(f) = self.control.front() {
            if f.len_bytes() > *budget {
                break;
            }
            *budget -= f.len_bytes();
            frames.push(self.control.pop_front().expect("present"));
        }
        // Datagrams ahead of stream data, as the reference stack writes them, or (by
        // priority) only those at least as urgent as the most urgent stream data pending.
        let ahead = match self.q.datagram_order {
            DatagramOrder::First => u8::MAX,
            DatagramOrder::Priority => self.most_urgent_stream_priority().unwrap_or(u8::MAX),
        };
        self.take_datagrams(now_ns, budget, frames, ahead);
        // Stream data, one chunk at a time from the scheduler. The header is sized for the
        // largest stream ID, offset and length this budget allows (at most 11 bytes).
        let mut took_stream = false;
        loop {
            let conn_credit = self.peer_max_data.saturating_sub(self.data_sent_bytes);
            // Ask for data as if the STREAM header were the smallest one (type, a one-byte
            // stream ID, no offset, a two-byte length); once the chunk's stream and offset are
            // known, a longer header trims the chunk and its tail goes back to the scheduler
            // (it is the stream's next data either way). Packets come out exactly full, as a
            // real stack fills them.
            let min_hdr = 1 + 1 + 2;
            if *budget <= (min_hdr + 1).max(self.q.stream_frame_min_room_bytes as usize)
                || self.sched.queued_bytes() == 0
            {
                break;
            }
            let want = ((*budget - min_hdr) as u64).min(conn_credit.max(1)) as u32;
            // The scheduler works in entries (pieces of messages the stream credit allows):
            // the chunk is mapped back to its message and stream.
            let next = match self.next_stream.take() {
                Some(id) => self.sched.next_chunk_from(now_ns, id, want),
                None => self.sched.next_chunk_on(now_ns, PathId(pi as u32), want),
            };
            let Some(mut chunk) = next else { break };
            let Some((stream_id, stream_off)) = self.send_streams.locate(&chunk) else { continue };
            let hdr = wq::stream_frame_overhead(stream_id, stream_off, chunk.len_bytes() as usize);
            let over = (hdr + chunk.len_bytes() as usize).saturating_sub(*budget) as u32;
            if over > 0 {
                if over >= chunk.len_bytes() {
                    self.sched.give_back(now_ns, PathId(pi as u32), chunk);
                    break;
                }
                let keep = chunk.len_bytes() - over;
                let tail = chunk.at(chunk.msg_offset_bytes + keep as u64, over);
                chunk = chunk.with_len(keep);
                self.sched.give_back(now_ns, PathId(pi as u32), tail);
            }
            let Some((chunk, stream_base)) = self.send_streams.handed_out(now_ns, chunk, &mut *self.sched) else {
                continue;
            };
            let Some(m) = self.send_msgs.get_mut(&chunk.msg_id) else { continue };
            let end = chunk.msg_offset_bytes + chunk.len_bytes() as u64;
            if end > m.sent_bytes {
                self.data_sent_bytes += end - m.sent_bytes.max(chunk.msg_offset_bytes);
                m.sent_bytes = end;
            } else {
                self.stats.retransmitted_segments += 1;
            }
            let fin = self.send_streams.is_stream_end(stream_id, stream_base + end);
            let f = Frame::Stream { stream_id, stream_base, chunk, fin };
            *budget = budget.saturating_sub(f.len_bytes());
            frames.push(f);
            took_stream = true;
        }
        if took_stream {
            self.sched.on_packet_end();
        }
        self.sync_stream_stats();
        if self.q.datagram_order == DatagramOrder::Priority {
            self.take_datagrams(now_ns, budget, frames, u8::MAX);
        }
    }

    /// Moves queued DATAGRAM frames into the packet, in queue order, while they fit and their
    /// message's priority is at most `up_to`. When a message's last chunk goes, its response
    /// end (HEADERS and FIN) is written to its stream.
    fn take_datagrams(&mut self, now_ns: u64, budget: &mut usize, frames: &mut Frames, up_to: u8) {
        while let Some(f) = self.datagram_queue.front() {
            let prio = match f {
                Frame::Datagram { priority, .. } => *priority,
                _ => 0,
            };
            if f.len_bytes() > *budget || prio > up_to {
                break;
            }
            *budget -= f.len_bytes();
            let f = self.datagram_queue.pop_front().expect("present");
            self.qstats.datagrams_sent += 1;
            if let Frame::Datagram { msg_id, index, .. } = f {
                if self.pending_ends.get(&msg_id).is_some_and(|e| e.3 == index) {
                    let (end, id, signals, _) = self.pending_ends.remove(&msg_id).expect("present");
                    self.write_to_stream(now_ns, id, end, signals);
                }
            }
            frames.push(f);
        }
    }

    /// The most urgent priority among messages with stream data not yet sent once.
    fn most_urgent_stream_priority(&self) -> Option<u8> {
        if self.sched.queued_bytes() == 0 {
            return None;
        }
        self.send_msgs
            .iter()
            .filter(|(_, m)| m.datagram.is_none() && m.sent_bytes < m.len_bytes)
            .map(|(_, m)| m.priority)
            .min()
    }
}

/// One view per path: a connection has at most [`QuicConnection::MAX_PATHS`], so they are
/// inline (the path scheduler is asked for every packet with data: no allocation then).
type PathViews = SmallVec<[PathView; QuicConnection::MAX_PATHS]>;

/// Set in the message id of a response's HEADERS-and-FIN marker
/// ([`QuicConfig::response_headers_bytes`]); applications' message ids must leave it clear.
pub const RESPONSE_END_BIT: u32 = 1 << 31;

fn is_datagram(f: &Frame) -> bool {
    matches!(f, Frame::Datagram { .. })
}

/// True when `chunk`'s bytes are all inside the merged `ranges`.
fn range_covered(ranges: &[(u64, u64)], chunk: &MsgChunk) -> bool {
    let (s, e) = (chunk.msg_offset_bytes, chunk.msg_offset_bytes + chunk.len_bytes() as u64);
    ranges.iter().any(|&(a, b)| a <= s && e <= b)
}
