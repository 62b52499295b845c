//! Settings of QUIC mode. Defaults are the reference stack's (quinn 0.11 as
//! ../shared/reference/quic configures it): 1452-byte UDP payloads, 8-byte connection IDs,
//! an initial RTT of 333 ms, RFC 9002's thresholds, RFC 9000's ACK policy.

use crate::path::sched::{Lrf, PathScheduler, PriorityBucketConfig, RoundRobinReady, SaEcf, SaEcfConfig, SinglePath};
use crate::sched::stream::StreamSchedulerKind;

/// How an unreliable message's DATAGRAM frames are laid out (sizes only: the simulator
/// carries no payload bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DatagramFraming {
    /// The reference tool's chunks ([`crate::wire::quic::chunk::RefChunk`]): a fixed header
    /// of [`QuicConfig::datagram_chunk_header_bytes`], every chunk full but the last.
    #[default]
    Reference,
    /// HTTP/3 datagrams (RFC 9297 §2.1) as the thesis sends objects (§5.8.1-5.8.2): each
    /// starts with the Quarter Stream ID of the request stream the object answers, then an
    /// object chunk ([`crate::wire::quic::chunk::ObjectChunk`]: object ID, offset, length,
    /// all varints). A metadata datagram (object ID, size, content type) goes first; data
    /// chunks fill the largest DATAGRAM payload, so their data shrinks by a byte where an
    /// offset's varint grows.
    Http3,
}

/// How DATAGRAM frames and stream data share a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DatagramOrder {
    /// Every queued DATAGRAM frame goes ahead of stream data, as quinn writes them.
    #[default]
    First,
    /// A DATAGRAM frame goes ahead of stream data only when its message is at least as
    /// urgent (priority number at most) as the most urgent message with stream data still to
    /// send; otherwise stream data fills the packet first and datagrams take what is left.
    Priority,
}

/// Settings of a QUIC-mode connection (both ends of a flow use the same ones).
#[derive(Clone, Debug, PartialEq)]
pub struct QuicConfig {
    /// Largest UDP payload sent (PMTUD off): 1452 bytes in the reference (1480-byte IP packets).
    pub max_udp_payload_bytes: u32,
    /// Connection ID length in bytes (quinn: 8).
    pub cid_len_bytes: u8,
    /// Datagrams that carry an Initial packet are padded to this many bytes: every one a
    /// client sends, and those of a server whose Initial is ack-eliciting (RFC 9000 §14.1 asks
    /// for at least 1200). quinn-proto 0.11 pads both to its `min_mtu`
    /// (`connection/mod.rs`, `poll_transmit`: `pad_datagram |= space_id == SpaceId::Initial &&
    /// (self.side.is_client() || ack_eliciting)`, then `builder.pad_to(min_mtu)`), which the
    /// reference fixes at 1452: its server's first flight is one 1452-byte datagram.
    pub initial_padding_bytes: u32,
    /// RFC 9002 §6.2.2: the RTT assumed before the first sample (quinn: 333 ms).
    pub initial_rtt_ns: u64,
    /// RFC 9002 §6.1.1 kPacketThreshold.
    pub packet_threshold: u64,
    /// RFC 9002 §6.1.2 kTimeThreshold as a ratio (9/8).
    pub time_threshold: (u64, u64),
    /// RFC 9002 §7.6.1 kPersistentCongestionThreshold.
    pub persistent_congestion_threshold: u32,
    /// RFC 9000 §13.2.2: acknowledge after this many ack-eliciting packets (2).
    pub ack_eliciting_threshold: u32,
    /// RFC 9000 §18.2 max_ack_delay (25 ms).
    pub max_ack_delay_ns: u64,
    /// RFC 9000 §18.2 ack_delay_exponent (3).
    pub ack_delay_exponent: u32,
    /// Initial stream receive window (quinn's reference setting: 1.25 MB).
    pub stream_receive_window_bytes: u64,
    /// Connection receive window (`u64::MAX`: unlimited, as the reference).
    pub connection_receive_window_bytes: u64,
    /// Streams the peer may open in each direction (100).
    pub max_streams: u64,
    /// TLS 1.3 ClientHello bytes in the client's Initial CRYPTO frame. The reference's
    /// rustls 0.23 client writes 282 (quinn-proto trace: "wrote 282 Initial CRYPTO bytes"):
    /// QUIC transport parameters, SNI, one x25519 key share, no ALPN.
    pub client_hello_bytes: u32,
    /// ServerHello bytes in the server's Initial: 90 with an x25519 key share (the reference's
    /// trace: "wrote 90 Initial CRYPTO bytes").
    pub server_hello_bytes: u32,
    /// EncryptedExtensions bytes (the server's transport parameters). With the next three
    /// fields they make the server's Handshake CRYPTO stream, 645 bytes in the reference's
    /// trace ("wrote 645 Handshake CRYPTO bytes"); 147 is what remains of it after the
    /// Certificate, CertificateVerify and Finished below.
    pub encrypted_extensions_bytes: u32,
    /// The certificate chain's DER bytes: the reference's one self-signed rcgen 0.14 ECDSA
    /// P-256 certificate is 354 bytes. The Certificate message adds 13 bytes of framing.
    pub certificate_chain_bytes: u32,
    /// CertificateVerify bytes: 8 bytes of framing and a DER ECDSA P-256 signature (70 to 72
    /// bytes, 71 on average).
    pub certificate_verify_bytes: u32,
    /// Finished bytes, each side: 4 + the hash length. rustls 0.23 with *ring* prefers
    /// TLS_AES_256_GCM_SHA384 (`crypto/ring/mod.rs`, `ALL_CIPHER_SUITES`), so 4 + 48 = 52 (the
    /// reference's client trace: "wrote 52 Handshake CRYPTO bytes").
    pub finished_bytes: u32,
    /// NEW_CONNECTION_ID frames each end sends once it has 1-RTT keys: quinn-proto's
    /// `issue_first_cids` issues `min(peer's active_connection_id_limit, LOC_CID_COUNT) - 1`
    /// = min(5, 8) - 1 = 4 (quinn's `active_connection_id_limit` is `CidQueue::LEN` = 5). They
    /// come from the endpoint (`EndpointEventInner::NeedIdentifiers`), so they miss the datagram
    /// that completes the end's handshake flight and go in a 1-RTT packet of their own right
    /// after it (the reference's 138-byte datagrams, one from each end). A server also retires
    /// the client's handshake connection ID once it has others (`update_rem_cid` when
    /// `rem_cids.active_seq() == 0`), and the client issues a replacement. 0: none of this.
    pub issued_cids: u32,
    /// CRYPTO bytes the server sends in 1-RTT packets once the handshake completes: TLS 1.3
    /// NewSessionTicket messages. rustls 0.23 sends `send_tls13_tickets` = 2 of them
    /// (`server/builder.rs`), each 89 bytes with a stateful 32-byte ticket, a 32-byte nonce
    /// and the early_data extension that quinn enables (`max_early_data_size = u32::MAX`):
    /// 178 (the reference's trace: "wrote 178 Data CRYPTO bytes"). They go with
    /// HANDSHAKE_DONE in one packet as soon as the client's Finished is processed, before the
    /// application can write (the reference's 209-byte packet).
    pub session_ticket_bytes: u32,
    /// Host time an end spends on each step of the TLS handshake that does public-key work
    /// before it sends again: the server on the ClientHello (key share, signature), the client
    /// on the server's flight (certificate verification), the server on the client's Finished.
    /// The end sends nothing for this long after the step. 0 (the default): an ideal host.
    /// `triage reproduce quic` sets 0.7 ms, measured from the reference's handshakes, which
    /// take 1.4 to 1.8 ms longer than the wire (median `handshake_ms` 63.5, 106.6 and 23.8 ms
    /// at 2 Mbps / 25 ms, 5 Mbps / 50 ms and 10 Mbps / 10 ms against 62.0, 104.8 and 22.4 on
    /// the wire), with two such steps on the client's path to a complete handshake.
    pub tls_cpu_ns: u64,
    /// A STREAM frame is started only while more than this many bytes of the packet are
    /// left. The default, 5, fills packets to the byte (the smallest STREAM header is 4 bytes,
    /// plus one of data); stacks leave room for their largest header instead: quinn 25
    /// (`frame::Stream::SIZE_BOUND`, which `write_stream_frames` checks), quiche 12
    /// (`MAX_STREAM_OVERHEAD`). It matters where a packet is nearly full before its stream
    /// data: behind a DATAGRAM frame (`triage reproduce quic` sets quinn's 25), or after a
    /// stream that ran dry.
    pub stream_frame_min_room_bytes: u32,
    /// CUBIC as quinn-proto 0.11 runs it ([`Cubic::as_quinn`](crate::cc::Cubic::as_quinn):
    /// RFC 8312's time-based Reno estimate, growth owed counted at every ACK, slow start past
    /// ssthresh) instead of RFC 9438's congestion avoidance. Off by default; `triage
    /// reproduce quic`, whose reference is quinn, turns it on.
    pub cubic_as_quinn: bool,
    /// Largest DATAGRAM frame payload (the reference: 1414 bytes).
    pub max_datagram_frame_bytes: u32,
    /// Bytes of the chunk header in front of each datagram chunk's data (the reference:
    /// 9 bytes of group, index and count). Used by [`DatagramFraming::Reference`].
    pub datagram_chunk_header_bytes: u32,
    /// How datagram chunks are framed.
    pub datagram_framing: DatagramFraming,
    /// [`DatagramFraming::Http3`]: bytes of the content type in each object's metadata
    /// datagram (`font/woff2` is 10, `application/javascript` 22).
    pub datagram_content_type_bytes: u32,
    /// How DATAGRAM frames interleave with stream data.
    pub datagram_order: DatagramOrder,
    /// Bytes of the HTTP/3 response HEADERS frame a server sends, with FIN, on the request
    /// stream of an object it answers with DATAGRAM chunks, after queueing the last chunk:
    /// the client's signal that no more chunks will come (the reproduction's PR-3 choice for
    /// the thesis's emulator, which does not say how an unreliable object ends). The client
    /// reports it as [`crate::connection::Event::ResponseEnded`]. 0 (the default): no
    /// HEADERS, the request stream is left as it is (the reference tool sends none).
    pub response_headers_bytes: u32,
    /// [`DatagramFraming::Http3`]: the receiver uses an object's data chunks only once its
    /// metadata datagram (chunk 0, with the object's size and type) has arrived, as a client
    /// that opens its record of a transfer from the metadata datagram and looks the chunks up
    /// in it does (thesis §5.8.2: the client "differentiates between metadata datagrams
    /// (containing information about the file transfer) and file chunk datagrams"). Data
    /// chunks that arrive without it are discarded and reported as
    /// [`super::DatagramObject::chunks_orphaned`]: when the metadata datagram is lost, the
    /// whole object is. `false` (the default): chunks carry their object ID and offset, so
    /// the receiver places them whether or not the metadata datagram came.
    pub datagram_needs_metadata: bool,
    /// At most this many DATAGRAM frames wait to be sent; a chunk written while the queue is
    /// full is dropped at once and never sent (quiche: `dgram_send` returns `Done` once the
    /// send queue set by `enable_dgram(true, recv_len, send_len)` is full; the
    /// quiche-server example uses 1000). The sender reports such chunks per object
    /// ([`super::QuicConnection::datagram_local_drops`]). `None` (the default): no limit.
    /// (A receive queue is not modelled: the simulator's applications read every datagram
    /// the moment it arrives, so one would never fill.)
    pub datagram_send_queue_len: Option<u32>,
    /// Send scheduler over streams.
    pub scheduler: StreamSchedulerKind,
    /// Pace with the reference's token bucket when the controller has no pacing rate.
    pub pacing: bool,
    /// Keep a qlog trace of the connection.
    pub qlog: bool,
    /// Several paths per connection (RFC 10069, multipath QUIC) and the path scheduler.
    pub multipath: MultipathConfig,
}

/// Which path scheduler a connection uses ([`crate::path::sched`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathSchedulerKind {
    /// One path: everything on path 0.
    #[default]
    Single,
    /// Lowest-RTT-First (PriorityBucket §5.2, mp-quic's default).
    Lrf,
    /// Stream-Aware Earliest Completion First (§5.2).
    SaEcf(SaEcfConfig),
    /// PriorityBucket (§3-§4): Algorithm 1 per stream and per-path buckets. The buckets
    /// decide the order of stream data, so [`QuicConfig::scheduler`] is not used.
    PriorityBucket(PriorityBucketConfig),
}

impl PathSchedulerKind {
    /// The name reports use.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Lrf => "lrf",
            Self::SaEcf(_) => "sa_ecf",
            Self::PriorityBucket(_) => "priority_bucket",
        }
    }
}

/// What an end knows of a path before it is used (PriorityBucket §4.1: "we set up initial
/// values of RTT and bandwidth based on prior knowledge on creating a path").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PathPrior {
    /// Initial RTT (RFC 9002's kInitialRtt for this path); `None`: [`QuicConfig::initial_rtt_ns`].
    pub rtt_ns: Option<u64>,
    /// Bandwidth, bits per second; 0 when unknown.
    pub bandwidth_bps: u64,
}

/// Multipath settings (see [`QuicConfig::multipath`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultipathConfig {
    /// The path scheduler.
    pub scheduler: PathSchedulerKind,
    /// Priors per path ID (index 0 is path 0); paths beyond the list have none.
    pub priors: Vec<PathPrior>,
    /// Probe timeouts in a row after which a path, when another is usable, is declared
    /// failed: its packets in flight are declared lost (their data goes on the live paths)
    /// and it carries no data until an acknowledgement arrives on it again (mp-quic's
    /// "potentially failed" state).
    pub failure_ptos: u32,
    /// The delivery-rate estimate replaces a path's bandwidth prior once sampled; `false`
    /// keeps the prior for good (the PriorityBucket authors' code: REPRODUCTION PB-3).
    pub estimate_bandwidth: bool,
}

impl Default for MultipathConfig {
    fn default() -> Self {
        Self { scheduler: PathSchedulerKind::Single, priors: Vec::new(), failure_ptos: 2, estimate_bandwidth: true }
    }
}

impl MultipathConfig {
    /// The prior of path `id`, if one was given.
    pub fn prior(&self, id: u32) -> Option<PathPrior> {
        self.priors.get(id as usize).copied()
    }

    /// The path scheduler these settings name.
    pub fn build_path_scheduler(&self) -> Box<dyn PathScheduler> {
        match self.scheduler {
            PathSchedulerKind::Single => Box::new(SinglePath),
            PathSchedulerKind::Lrf => Box::new(Lrf),
            PathSchedulerKind::SaEcf(c) => Box::new(SaEcf::new(c)),
            PathSchedulerKind::PriorityBucket(_) => Box::new(RoundRobinReady::default()),
        }
    }
}

impl Default for QuicConfig {
    fn default() -> Self {
        Self {
            max_udp_payload_bytes: 1452,
            cid_len_bytes: 8,
            initial_padding_bytes: 1452,
            initial_rtt_ns: 333_000_000,
            packet_threshold: 3,
            time_threshold: (9, 8),
            persistent_congestion_threshold: 3,
            ack_eliciting_threshold: 2,
            max_ack_delay_ns: 25_000_000,
            ack_delay_exponent: 3,
            stream_receive_window_bytes: 1_250_000,
            connection_receive_window_bytes: u64::MAX,
            max_streams: 100,
            client_hello_bytes: 282,
            server_hello_bytes: 90,
            encrypted_extensions_bytes: 147,
            certificate_chain_bytes: 354,
            certificate_verify_bytes: 79,
            finished_bytes: 52,
            issued_cids: 4,
            session_ticket_bytes: 178,
            tls_cpu_ns: 0,
            stream_frame_min_room_bytes: 5,
            cubic_as_quinn: false,
            max_datagram_frame_bytes: 1414,
            datagram_chunk_header_bytes: 9,
            datagram_framing: DatagramFraming::Reference,
            datagram_content_type_bytes: 16,
            datagram_order: DatagramOrder::First,
            response_headers_bytes: 0,
            datagram_needs_metadata: false,
            datagram_send_queue_len: None,
            scheduler: StreamSchedulerKind::Fifo,
            pacing: true,
            qlog: false,
            multipath: MultipathConfig::default(),
        }
    }
}

impl QuicConfig {
    /// Bytes of the server's Handshake-space CRYPTO stream: EncryptedExtensions,
    /// Certificate (chain plus 13 bytes of TLS framing), CertificateVerify, Finished.
    pub fn server_handshake_bytes(&self) -> u64 {
        self.encrypted_extensions_bytes as u64
            + self.certificate_chain_bytes as u64
            + 13
            + self.certificate_verify_bytes as u64
            + self.finished_bytes as u64
    }

    /// Data bytes per datagram chunk.
    pub fn datagram_chunk_data_bytes(&self) -> u32 {
        self.max_datagram_frame_bytes.saturating_sub(self.datagram_chunk_header_bytes).max(1)
    }
}
