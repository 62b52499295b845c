//! QUIC packets as the simulator carries them: parsed frames with exact wire sizes.
//!
//! The payload is not materialized (as in TCP mode): a STREAM frame carries the message
//! chunk it holds, a DATAGRAM frame the chunk header fields, a CRYPTO frame its offset and
//! length. Sizes come from [`crate::wire::quic`], so links and queues see the bytes a real
//! stack would send (RFC 9000 §12.2 coalescing, §17 headers, RFC 9001 §5.3 AEAD tag).

use smallvec::SmallVec;

use crate::sched::MsgChunk;
use crate::wire::quic as wq;

/// A packet number space (RFC 9000 §12.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpaceId {
    /// Initial packets.
    Initial = 0,
    /// Handshake packets.
    Handshake = 1,
    /// 1-RTT (application data) packets.
    Data = 2,
}

impl SpaceId {
    /// The three spaces in the order a datagram coalesces them (RFC 9000 §12.2).
    pub const ALL: [SpaceId; 3] = [SpaceId::Initial, SpaceId::Handshake, SpaceId::Data];

    /// Index 0..3.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The qlog / report name.
    pub fn name(self) -> &'static str {
        match self {
            SpaceId::Initial => "initial",
            SpaceId::Handshake => "handshake",
            SpaceId::Data => "1RTT",
        }
    }
}

/// The ranges of an ACK frame, inline up to two (one gap) so that an ACK allocates
/// nothing in the common case.
pub type AckRanges = SmallVec<[(u64, u64); 2]>;

/// A packet's frames, inline up to two (an ACK and a STREAM or DATAGRAM frame, the usual
/// packet) so that building a packet allocates nothing in the common case.
pub type Frames = SmallVec<[Frame; 2]>;

/// An ACK frame (RFC 9000 §19.3).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AckFrame {
    /// Inclusive `(smallest, largest)` ranges, descending; the first holds the largest.
    pub ranges: AckRanges,
    /// ACK Delay field: microseconds shifted right by the ack delay exponent.
    pub delay_encoded: u64,
    /// ECT(0), ECT(1) and CE counts (an ACK_ECN frame), when the sender counts them.
    pub ecn: Option<[u64; 3]>,
    /// Multipath (RFC 10069 §4, PATH_ACK): the path whose 1-RTT packets it acknowledges;
    /// `None` is a plain ACK, which in the 1-RTT space acknowledges path 0.
    pub path: Option<u32>,
}

impl AckFrame {
    /// Largest packet number acknowledged.
    pub fn largest(&self) -> u64 {
        self.ranges.first().map_or(0, |r| r.1)
    }

    /// True when `pn` is acknowledged by this frame.
    pub fn contains(&self, pn: u64) -> bool {
        self.ranges.iter().any(|&(s, l)| s <= pn && pn <= l)
    }
}

/// One frame of a simulated QUIC packet.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// PADDING bytes (RFC 9000 §19.1).
    Padding(u32),
    /// PING (§19.2).
    Ping,
    /// ACK or ACK_ECN (§19.3).
    Ack(AckFrame),
    /// CRYPTO (§19.6): handshake bytes at an offset of the space's crypto stream.
    Crypto {
        /// Offset in the space's crypto stream.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// STREAM (§19.8) holding one message chunk; the stream offset is the chunk's offset
    /// in its message plus `stream_base`.
    Stream {
        /// Stream ID.
        stream_id: u64,
        /// Offset of the message's first byte on the stream.
        stream_base: u64,
        /// The message bytes carried.
        chunk: MsgChunk,
        /// FIN: the stream ends with this frame.
        fin: bool,
    },
    /// DATAGRAM (RFC 9221 §4) carrying one chunk of an unreliable message.
    Datagram {
        /// The message.
        msg_id: u32,
        /// Chunk index within the message.
        index: u32,
        /// Chunks of the message.
        count: u32,
        /// Message bytes in this chunk.
        data_len: u32,
        /// Message length.
        msg_len_bytes: u64,
        /// Message priority.
        priority: u8,
        /// Bytes of the chunk header in front of the data.
        header_len: u32,
        /// HTTP/3 framing: the Quarter Stream ID of the request stream (RFC 9297 §2.1).
        quarter_stream_id: Option<u64>,
    },
    /// MAX_DATA (§19.9).
    MaxData(u64),
    /// MAX_STREAM_DATA (§19.10).
    MaxStreamData {
        /// Stream ID.
        stream_id: u64,
        /// New limit.
        max: u64,
    },
    /// MAX_STREAMS (§19.11), one type per direction.
    MaxStreams {
        /// Bidirectional (true) or unidirectional streams.
        bidi: bool,
        /// New cumulative limit.
        max: u64,
    },
    /// HANDSHAKE_DONE (§19.20).
    HandshakeDone,
    /// NEW_CONNECTION_ID (§19.15) issuing the connection ID with this sequence number: type,
    /// sequence, Retire Prior To (0), length, the ID ([`QuicConfig::cid_len_bytes`]) and a
    /// 16-byte stateless reset token.
    ///
    /// [`QuicConfig::cid_len_bytes`]: super::QuicConfig::cid_len_bytes
    NewConnectionId {
        /// Sequence number of the issued ID.
        seq: u64,
        /// Length of the ID in bytes.
        cid_len: u8,
    },
    /// RETIRE_CONNECTION_ID (§19.16): the sender stops using the peer's ID of this sequence.
    RetireConnectionId {
        /// Sequence number of the retired ID.
        seq: u64,
    },
    /// An HTTP/3 GOAWAY (RFC 9114 §5.2, §7.2.6) in a STREAM frame on the sender's control
    /// stream: the sender writes no more. It carries the number of reliable messages the
    /// sender wrote, so the receiver knows when it holds them all (HTTP/3 knows this from
    /// its requests; the simulator's applications are not always request/response).
    GoAway {
        /// The sender's control stream.
        stream_id: u64,
        /// Reliable messages the sender wrote.
        reliable_messages: u64,
    },
    /// CONNECTION_CLOSE (§19.19), no error, empty reason.
    ConnectionClose,
    /// PATH_CHALLENGE (§19.17): 8 bytes of data the peer echoes on the same path (path
    /// validation, §8.2; RFC 10069 §3.1 opens a path with it).
    PathChallenge,
    /// PATH_RESPONSE (§19.18): the echo of a PATH_CHALLENGE.
    PathResponse,
}

impl Frame {
    /// Bytes this frame occupies in a packet payload.
    pub fn len_bytes(&self) -> usize {
        match self {
            Frame::Padding(n) => *n as usize,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::Ack(a) => {
                let plain = wq::ack_frame_len(&a.ranges, a.delay_encoded, a.ecn);
                match a.path {
                    // PATH_ACK: ACK's fields after a path ID. Its type is counted as one
                    // byte, as ACK's (drafts of the extension used 4-byte types: 3 bytes
                    // more per ACK, well under 1% of a path's bytes).
                    Some(p) => plain + wq::varint_len(u64::from(p)),
                    None => plain,
                }
            }
            Frame::Crypto { offset, len } => wq::crypto_frame_overhead(*offset, *len as usize) + *len as usize,
            Frame::Stream { stream_id, stream_base, chunk, .. } => {
                let off = stream_base + chunk.msg_offset_bytes;
                wq::stream_frame_overhead(*stream_id, off, chunk.len_bytes() as usize) + chunk.len_bytes() as usize
            }
            Frame::Datagram { data_len, header_len, .. } => {
                let payload = (*data_len + *header_len) as usize;
                wq::datagram_frame_overhead(payload) + payload
            }
            Frame::MaxData(m) => 1 + wq::varint_len(*m),
            Frame::MaxStreamData { stream_id, max } => 1 + wq::varint_len(*stream_id) + wq::varint_len(*max),
            Frame::MaxStreams { max, .. } => 1 + wq::varint_len(*max),
            Frame::NewConnectionId { seq, cid_len } => 1 + wq::varint_len(*seq) + 1 + 1 + *cid_len as usize + 16,
            Frame::RetireConnectionId { seq } => 1 + wq::varint_len(*seq),
            Frame::GoAway { stream_id, reliable_messages } => {
                // Frame type 0x07, length, the identifier.
                let payload = 2 + wq::varint_len(*reliable_messages);
                wq::stream_frame_overhead(*stream_id, 0, payload) + payload
            }
            // Type, error code 0, frame type 0, reason length 0.
            Frame::ConnectionClose => 4,
            // Type, 8 bytes of data.
            Frame::PathChallenge | Frame::PathResponse => 9,
        }
    }

    /// RFC 9002 §2: every frame but ACK, PADDING and CONNECTION_CLOSE elicits an ACK.
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(self, Frame::Ack(_) | Frame::Padding(_) | Frame::ConnectionClose)
    }
}

/// One QUIC packet inside a datagram.
#[derive(Clone, Debug, PartialEq)]
pub struct QuicPacket {
    /// Its packet number space (Initial and Handshake use long headers, Data the short one).
    pub space: SpaceId,
    /// Full packet number.
    pub pn: u64,
    /// Frames, in order.
    pub frames: Frames,
    /// Bytes on the wire: header, frames, AEAD tag.
    pub size_bytes: u32,
    /// Multipath: the path it travels on (RFC 10069 §2: the path ID its destination
    /// connection ID belongs to; same header size). 0 for the handshake spaces.
    pub path: u32,
}

impl QuicPacket {
    /// RFC 9002 §2: a packet is ack-eliciting when any of its frames is.
    pub fn is_ack_eliciting(&self) -> bool {
        self.frames.iter().any(Frame::is_ack_eliciting)
    }
}

/// A UDP datagram carrying one or more coalesced QUIC packets (RFC 9000 §12.2).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct QuicDatagram {
    /// The packets, in order.
    pub packets: SmallVec<[QuicPacket; 1]>,
    /// UDP payload bytes (the packets' sizes added up).
    pub payload_bytes: u32,
}

impl QuicDatagram {
    /// True when the datagram starts with an Initial packet (from a client: a connection
    /// attempt, whichever of its Initials arrives first).
    pub fn is_initial(&self) -> bool {
        self.packets.first().is_some_and(|p| p.space == SpaceId::Initial)
    }
}
