//! Settings of QUIC mode. Defaults are the reference stack's (quinn 0.11 as
//! ../shared/reference/quic configures it): 1452-byte UDP payloads, 8-byte connection IDs,
//! an initial RTT of 333 ms, RFC 9002's thresholds, RFC 9000's ACK policy.

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

/// Settings of a QUIC-mode connection (both ends of a flow use the same ones).
#[derive(Clone, Debug, PartialEq)]
pub struct QuicConfig {
    /// Largest UDP payload sent (PMTUD off): 1452 bytes in the reference (1480-byte IP packets).
    pub max_udp_payload_bytes: u32,
    /// Connection ID length in bytes (quinn: 8).
    pub cid_len_bytes: u8,
    /// Client datagrams that carry an Initial packet are padded to this many bytes (RFC 9000
    /// §14.1 asks for at least 1200; the reference pads to the full 1452).
    pub client_initial_padding_bytes: u32,
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
    /// TLS 1.3 ClientHello bytes in the client's Initial CRYPTO frame (about 280 with QUIC
    /// transport parameters and one x25519 key share).
    pub client_hello_bytes: u32,
    /// ServerHello bytes in the server's Initial (about 90 with an x25519 key share).
    pub server_hello_bytes: u32,
    /// EncryptedExtensions bytes (ALPN and transport parameters).
    pub encrypted_extensions_bytes: u32,
    /// The certificate chain's DER bytes (the reference: one self-signed ECDSA P-256
    /// certificate of about 0.4 KiB). The Certificate message adds 13 bytes of framing.
    pub certificate_chain_bytes: u32,
    /// CertificateVerify bytes (an ECDSA P-256 signature: about 80).
    pub certificate_verify_bytes: u32,
    /// Finished bytes (4 + 32 with SHA-256), each side.
    pub finished_bytes: u32,
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
    /// Send scheduler over streams.
    pub scheduler: StreamSchedulerKind,
    /// Pace with the reference's token bucket when the controller has no pacing rate.
    pub pacing: bool,
    /// Mark packets ECT(0) and report ECN counts (RFC 9000 §13.4).
    pub ecn: bool,
    /// Keep a qlog trace of the connection.
    pub qlog: bool,
}

impl Default for QuicConfig {
    fn default() -> Self {
        Self {
            max_udp_payload_bytes: 1452,
            cid_len_bytes: 8,
            client_initial_padding_bytes: 1452,
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
            client_hello_bytes: 280,
            server_hello_bytes: 90,
            encrypted_extensions_bytes: 110,
            certificate_chain_bytes: 400,
            certificate_verify_bytes: 80,
            finished_bytes: 36,
            max_datagram_frame_bytes: 1414,
            datagram_chunk_header_bytes: 9,
            datagram_framing: DatagramFraming::Reference,
            datagram_content_type_bytes: 16,
            scheduler: StreamSchedulerKind::Fifo,
            pacing: true,
            ecn: false,
            qlog: false,
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
