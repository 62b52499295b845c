//! QUIC frames (RFC 9000 §12.4 and §19; DATAGRAM from RFC 9221 §4): a checked parse into
//! [`Frame`], which borrows its data from the packet, and an emit that writes exactly
//! [`Frame::encoded_len`] bytes.
//!
//! Read first: RFC 9000 §12.4 (frame types, Table 3) and §19 (each frame's layout), RFC 9221
//! §4 (DATAGRAM), RFC 9002 §2 (which frames are ack-eliciting).
//!
//! The sizes the simulator uses ([`stream_frame_overhead`], [`crypto_frame_overhead`],
//! [`datagram_frame_overhead`], [`ack_frame_len`]) are what [`Frame::encoded_len`] returns for
//! those frames, and the tests assert that emitted frames have exactly that length.

use smallvec::SmallVec;

use super::varint::{Reader, Writer};
use super::{
    ack_frame_len, crypto_frame_overhead, datagram_frame_overhead, stream_frame_overhead, varint_len, WireError,
    VARINT_MAX,
};

/// Largest stream count a MAX_STREAMS or STREAMS_BLOCKED frame may carry (RFC 9000 §19.11,
/// §19.14): 2^60, since a stream ID is a 62-bit number with two type bits.
pub const MAX_STREAM_COUNT: u64 = 1 << 60;
/// Longest connection ID in QUIC version 1 (RFC 9000 §17.2, §19.15).
pub const MAX_CID_BYTES: usize = 20;
/// Bytes of a stateless reset token (RFC 9000 §10.3, §19.15).
pub const RESET_TOKEN_BYTES: usize = 16;

/// Frame type values (RFC 9000 §12.4, Table 3; RFC 9221 §4).
pub mod frame_type {
    /// PADDING.
    pub const PADDING: u64 = 0x00;
    /// PING.
    pub const PING: u64 = 0x01;
    /// ACK.
    pub const ACK: u64 = 0x02;
    /// ACK with ECN counts.
    pub const ACK_ECN: u64 = 0x03;
    /// RESET_STREAM.
    pub const RESET_STREAM: u64 = 0x04;
    /// STOP_SENDING.
    pub const STOP_SENDING: u64 = 0x05;
    /// CRYPTO.
    pub const CRYPTO: u64 = 0x06;
    /// NEW_TOKEN.
    pub const NEW_TOKEN: u64 = 0x07;
    /// STREAM, the lowest of 0x08..=0x0f; the three low bits are OFF (0x04), LEN (0x02) and
    /// FIN (0x01) (§19.8).
    pub const STREAM: u64 = 0x08;
    /// MAX_DATA.
    pub const MAX_DATA: u64 = 0x10;
    /// MAX_STREAM_DATA.
    pub const MAX_STREAM_DATA: u64 = 0x11;
    /// MAX_STREAMS for bidirectional streams; 0x13 for unidirectional.
    pub const MAX_STREAMS_BIDI: u64 = 0x12;
    /// DATA_BLOCKED.
    pub const DATA_BLOCKED: u64 = 0x14;
    /// STREAM_DATA_BLOCKED.
    pub const STREAM_DATA_BLOCKED: u64 = 0x15;
    /// STREAMS_BLOCKED for bidirectional streams; 0x17 for unidirectional.
    pub const STREAMS_BLOCKED_BIDI: u64 = 0x16;
    /// NEW_CONNECTION_ID.
    pub const NEW_CONNECTION_ID: u64 = 0x18;
    /// RETIRE_CONNECTION_ID.
    pub const RETIRE_CONNECTION_ID: u64 = 0x19;
    /// PATH_CHALLENGE.
    pub const PATH_CHALLENGE: u64 = 0x1a;
    /// PATH_RESPONSE.
    pub const PATH_RESPONSE: u64 = 0x1b;
    /// CONNECTION_CLOSE signalling a QUIC (transport) error.
    pub const CONNECTION_CLOSE: u64 = 0x1c;
    /// CONNECTION_CLOSE signalling an application error.
    pub const CONNECTION_CLOSE_APP: u64 = 0x1d;
    /// HANDSHAKE_DONE.
    pub const HANDSHAKE_DONE: u64 = 0x1e;
    /// DATAGRAM without a Length field: its data extends to the end of the packet.
    pub const DATAGRAM: u64 = 0x30;
    /// DATAGRAM with a Length field.
    pub const DATAGRAM_LEN: u64 = 0x31;
}

/// Which kind of stream a MAX_STREAMS or STREAMS_BLOCKED frame counts (RFC 9000 §2.1, §19.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamDir {
    /// Bidirectional streams (frame types 0x12 and 0x16).
    Bidi,
    /// Unidirectional streams (frame types 0x13 and 0x17).
    Uni,
}

impl StreamDir {
    fn from_low_bit(ty: u64) -> Self {
        if ty & 1 == 0 {
            StreamDir::Bidi
        } else {
            StreamDir::Uni
        }
    }

    fn low_bit(self) -> u64 {
        match self {
            StreamDir::Bidi => 0,
            StreamDir::Uni => 1,
        }
    }
}

/// An ACK or ACK_ECN frame (RFC 9000 §19.3) as the connection thinks of it: inclusive
/// `(smallest, largest)` packet-number ranges in descending order, the same shape
/// [`ack_frame_len`] takes. The wire's First ACK Range, Gap and ACK Range Length fields are
/// derived from them on emit and back on parse (§19.3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFrame {
    /// Acknowledged ranges, inclusive, descending; the first holds the Largest Acknowledged.
    /// Consecutive ranges are separated by at least one unacknowledged packet number.
    pub ranges: SmallVec<[(u64, u64); 4]>,
    /// The ACK Delay field: microseconds shifted right by the ack delay exponent (§19.3).
    pub ack_delay_encoded: u64,
    /// ECT(0), ECT(1) and ECN-CE counts (§19.3.2); `Some` makes this an ACK_ECN frame (0x03).
    pub ecn: Option<[u64; 3]>,
}

impl AckFrame {
    /// The Largest Acknowledged field, or `None` for a frame with no range (which cannot be
    /// emitted).
    pub fn largest(&self) -> Option<u64> {
        self.ranges.first().map(|&(_, l)| l)
    }

    fn read(r: &mut Reader<'_>, with_ecn: bool) -> Result<Self, WireError> {
        let largest = r.varint()?;
        let ack_delay_encoded = r.varint()?;
        let count = r.varint()?;
        let first = r.varint()?;
        let mut smallest = largest.checked_sub(first).ok_or(WireError::BadAckRanges)?;
        let mut ranges = SmallVec::new();
        ranges.push((smallest, largest));
        // Each further range takes at least two bytes, so a huge count runs out of input
        // (and errors) long before it could allocate much.
        for _ in 0..count {
            let gap = r.varint()?;
            let len = r.varint()?;
            // §19.3.1: largest = previous smallest - gap - 2; smallest = largest - length.
            let l = smallest.checked_sub(gap).and_then(|v| v.checked_sub(2)).ok_or(WireError::BadAckRanges)?;
            let s = l.checked_sub(len).ok_or(WireError::BadAckRanges)?;
            ranges.push((s, l));
            smallest = s;
        }
        let ecn = if with_ecn { Some([r.varint()?, r.varint()?, r.varint()?]) } else { None };
        Ok(AckFrame { ranges, ack_delay_encoded, ecn })
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let &(first_smallest, largest) = self.ranges.first().ok_or(WireError::EmptyAck)?;
        if first_smallest > largest {
            return Err(WireError::BadAckRanges);
        }
        w.u8(if self.ecn.is_some() { frame_type::ACK_ECN } else { frame_type::ACK } as u8)?;
        w.varint(largest)?;
        w.varint(self.ack_delay_encoded)?;
        w.varint(self.ranges.len() as u64 - 1)?;
        w.varint(largest - first_smallest)?;
        let mut prev_smallest = first_smallest;
        for &(s, l) in &self.ranges[1..] {
            // Descending, not adjacent: at least one missing number between ranges.
            if s > l || l.checked_add(2).is_none_or(|v| v > prev_smallest) {
                return Err(WireError::BadAckRanges);
            }
            w.varint(prev_smallest - l - 2)?;
            w.varint(l - s)?;
            prev_smallest = s;
        }
        if let Some(counts) = self.ecn {
            for c in counts {
                w.varint(c)?;
            }
        }
        Ok(())
    }
}

/// One QUIC frame (RFC 9000 §19, RFC 9221 §4), borrowing its data from the packet it was
/// parsed from. Values are the wire's fields; byte counts are in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A run of PADDING frames (§19.1): `len` consecutive zero bytes, at least one. Parse
    /// merges a run into one value.
    Padding {
        /// Bytes in the run.
        len: usize,
    },
    /// PING (§19.2).
    Ping,
    /// ACK (0x02) or ACK_ECN (0x03) (§19.3).
    Ack(AckFrame),
    /// RESET_STREAM (§19.4).
    ResetStream {
        /// The stream being reset.
        stream_id: u64,
        /// The application protocol error code.
        error_code: u64,
        /// Final size of the stream in bytes.
        final_size_bytes: u64,
    },
    /// STOP_SENDING (§19.5).
    StopSending {
        /// The stream whose sending should stop.
        stream_id: u64,
        /// The application protocol error code.
        error_code: u64,
    },
    /// CRYPTO (§19.6).
    Crypto {
        /// Byte offset of `data` in the crypto stream.
        offset_bytes: u64,
        /// The cryptographic handshake bytes.
        data: &'a [u8],
    },
    /// NEW_TOKEN (§19.7); the token is never empty.
    NewToken {
        /// The address validation token.
        token: &'a [u8],
    },
    /// STREAM (§19.8). Parse takes all eight type values 0x08..=0x0f; emit always writes
    /// the Length field and writes the Offset field only when it is non-zero, which is the
    /// layout [`stream_frame_overhead`] sizes.
    Stream {
        /// The stream.
        stream_id: u64,
        /// Byte offset of `data` in the stream.
        offset_bytes: u64,
        /// The FIN bit: `data` ends the stream.
        fin: bool,
        /// Stream bytes.
        data: &'a [u8],
    },
    /// MAX_DATA (§19.9).
    MaxData {
        /// Connection-level flow control limit in bytes.
        max_bytes: u64,
    },
    /// MAX_STREAM_DATA (§19.10).
    MaxStreamData {
        /// The stream.
        stream_id: u64,
        /// Stream-level flow control limit in bytes.
        max_bytes: u64,
    },
    /// MAX_STREAMS (§19.11), at most [`MAX_STREAM_COUNT`].
    MaxStreams {
        /// Which streams are counted.
        dir: StreamDir,
        /// Cumulative number of streams the peer may open.
        max_streams: u64,
    },
    /// DATA_BLOCKED (§19.12).
    DataBlocked {
        /// The connection-level limit at which the sender was blocked, in bytes.
        limit_bytes: u64,
    },
    /// STREAM_DATA_BLOCKED (§19.13).
    StreamDataBlocked {
        /// The stream.
        stream_id: u64,
        /// The stream-level limit at which the sender was blocked, in bytes.
        limit_bytes: u64,
    },
    /// STREAMS_BLOCKED (§19.14), at most [`MAX_STREAM_COUNT`].
    StreamsBlocked {
        /// Which streams are counted.
        dir: StreamDir,
        /// The stream limit at which the sender was blocked.
        limit_streams: u64,
    },
    /// NEW_CONNECTION_ID (§19.15).
    NewConnectionId {
        /// Sequence number of the connection ID.
        sequence: u64,
        /// Connection IDs below this sequence number should be retired; at most `sequence`.
        retire_prior_to: u64,
        /// The connection ID, 1 to [`MAX_CID_BYTES`] bytes.
        cid: &'a [u8],
        /// The stateless reset token for it.
        reset_token: [u8; RESET_TOKEN_BYTES],
    },
    /// RETIRE_CONNECTION_ID (§19.16).
    RetireConnectionId {
        /// Sequence number of the connection ID being retired.
        sequence: u64,
    },
    /// PATH_CHALLENGE (§19.17).
    PathChallenge {
        /// Arbitrary data the peer echoes.
        data: [u8; 8],
    },
    /// PATH_RESPONSE (§19.18).
    PathResponse {
        /// The echoed challenge data.
        data: [u8; 8],
    },
    /// CONNECTION_CLOSE (§19.19): type 0x1c (a QUIC error, with the frame type that caused
    /// it) when `frame_type` is `Some`, type 0x1d (an application error) when it is `None`.
    ConnectionClose {
        /// The error code (transport or application, per the frame type).
        error_code: u64,
        /// The type of the frame that triggered the error (0x1c only; 0 when unknown).
        frame_type: Option<u64>,
        /// The reason phrase (UTF-8 by §19.19, kept as bytes: the codec does not judge it).
        reason: &'a [u8],
    },
    /// HANDSHAKE_DONE (§19.20).
    HandshakeDone,
    /// DATAGRAM (RFC 9221 §4): type 0x31 with a Length field when `explicit_len`, else type
    /// 0x30, whose data extends to the end of the packet (so it must be the packet's last
    /// frame).
    Datagram {
        /// Whether the Length field is present (type 0x31).
        explicit_len: bool,
        /// The application datagram.
        data: &'a [u8],
    },
}

/// `offset + len` must stay within 2^62 - 1 (RFC 9000 §19.6, §19.8).
fn check_end(offset: u64, len: usize) -> Result<(), WireError> {
    match offset.checked_add(len as u64) {
        Some(end) if end <= VARINT_MAX => Ok(()),
        _ => Err(WireError::OffsetTooLarge),
    }
}

fn check_stream_count(count: u64) -> Result<u64, WireError> {
    if count > MAX_STREAM_COUNT {
        Err(WireError::TooManyStreams(count))
    } else {
        Ok(count)
    }
}

fn check_cid(cid: &[u8]) -> Result<(), WireError> {
    if cid.is_empty() || cid.len() > MAX_CID_BYTES {
        Err(WireError::BadConnectionIdLength(cid.len()))
    } else {
        Ok(())
    }
}

impl<'a> Frame<'a> {
    /// Parses one frame from the front of `buf`; returns it and the bytes it took. Frames
    /// without a length (STREAM without LEN, DATAGRAM 0x30) take the rest of `buf`.
    pub fn parse(buf: &'a [u8]) -> Result<(Frame<'a>, usize), WireError> {
        let mut r = Reader::new(buf);
        let frame = Self::read(&mut r)?;
        Ok((frame, buf.len() - r.remaining()))
    }

    pub(crate) fn read(r: &mut Reader<'a>) -> Result<Frame<'a>, WireError> {
        use frame_type as t;
        let (ty, ty_len) = r.varint_with_len()?;
        // §12.4: "a frame type MUST use the shortest possible encoding".
        if ty_len != varint_len(ty) {
            return Err(WireError::NonMinimalFrameType(ty));
        }
        Ok(match ty {
            t::PADDING => Frame::Padding { len: 1 + r.zeros() },
            t::PING => Frame::Ping,
            t::ACK | t::ACK_ECN => Frame::Ack(AckFrame::read(r, ty == t::ACK_ECN)?),
            t::RESET_STREAM => {
                Frame::ResetStream { stream_id: r.varint()?, error_code: r.varint()?, final_size_bytes: r.varint()? }
            }
            t::STOP_SENDING => Frame::StopSending { stream_id: r.varint()?, error_code: r.varint()? },
            t::CRYPTO => {
                let offset_bytes = r.varint()?;
                let len = r.varint()?;
                let data = r.declared(len)?;
                check_end(offset_bytes, data.len())?;
                Frame::Crypto { offset_bytes, data }
            }
            t::NEW_TOKEN => {
                let len = r.varint()?;
                if len == 0 {
                    return Err(WireError::EmptyToken);
                }
                Frame::NewToken { token: r.declared(len)? }
            }
            0x08..=0x0f => {
                let stream_id = r.varint()?;
                let offset_bytes = if ty & 0x04 != 0 { r.varint()? } else { 0 };
                let data = if ty & 0x02 != 0 {
                    let len = r.varint()?;
                    r.declared(len)?
                } else {
                    r.rest()
                };
                check_end(offset_bytes, data.len())?;
                Frame::Stream { stream_id, offset_bytes, fin: ty & 0x01 != 0, data }
            }
            t::MAX_DATA => Frame::MaxData { max_bytes: r.varint()? },
            t::MAX_STREAM_DATA => Frame::MaxStreamData { stream_id: r.varint()?, max_bytes: r.varint()? },
            0x12 | 0x13 => {
                Frame::MaxStreams { dir: StreamDir::from_low_bit(ty), max_streams: check_stream_count(r.varint()?)? }
            }
            t::DATA_BLOCKED => Frame::DataBlocked { limit_bytes: r.varint()? },
            t::STREAM_DATA_BLOCKED => Frame::StreamDataBlocked { stream_id: r.varint()?, limit_bytes: r.varint()? },
            0x16 | 0x17 => Frame::StreamsBlocked {
                dir: StreamDir::from_low_bit(ty),
                limit_streams: check_stream_count(r.varint()?)?,
            },
            t::NEW_CONNECTION_ID => {
                let sequence = r.varint()?;
                let retire_prior_to = r.varint()?;
                let len = r.u8()?;
                if len == 0 || usize::from(len) > MAX_CID_BYTES {
                    return Err(WireError::BadConnectionIdLength(usize::from(len)));
                }
                let cid = r.declared(u64::from(len))?;
                let reset_token = r.array()?;
                if retire_prior_to > sequence {
                    return Err(WireError::RetirePriorToTooLarge);
                }
                Frame::NewConnectionId { sequence, retire_prior_to, cid, reset_token }
            }
            t::RETIRE_CONNECTION_ID => Frame::RetireConnectionId { sequence: r.varint()? },
            t::PATH_CHALLENGE => Frame::PathChallenge { data: r.array()? },
            t::PATH_RESPONSE => Frame::PathResponse { data: r.array()? },
            t::CONNECTION_CLOSE | t::CONNECTION_CLOSE_APP => {
                let error_code = r.varint()?;
                let frame_type = if ty == t::CONNECTION_CLOSE { Some(r.varint()?) } else { None };
                let len = r.varint()?;
                Frame::ConnectionClose { error_code, frame_type, reason: r.declared(len)? }
            }
            t::HANDSHAKE_DONE => Frame::HandshakeDone,
            t::DATAGRAM => Frame::Datagram { explicit_len: false, data: r.rest() },
            t::DATAGRAM_LEN => {
                let len = r.varint()?;
                Frame::Datagram { explicit_len: true, data: r.declared(len)? }
            }
            _ => return Err(WireError::UnknownFrameType(ty)),
        })
    }

    /// Bytes [`Frame::emit`] writes. For STREAM, CRYPTO, DATAGRAM (0x31) and ACK frames this
    /// is the simulator's size function plus the data: [`stream_frame_overhead`],
    /// [`crypto_frame_overhead`], [`datagram_frame_overhead`], [`ack_frame_len`].
    pub fn encoded_len(&self) -> usize {
        let v = |x: u64| varint_len(x);
        match self {
            Frame::Padding { len } => *len,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::Ack(a) => ack_frame_len(&a.ranges, a.ack_delay_encoded, a.ecn),
            Frame::ResetStream { stream_id, error_code, final_size_bytes } => {
                1 + v(*stream_id) + v(*error_code) + v(*final_size_bytes)
            }
            Frame::StopSending { stream_id, error_code } => 1 + v(*stream_id) + v(*error_code),
            Frame::Crypto { offset_bytes, data } => crypto_frame_overhead(*offset_bytes, data.len()) + data.len(),
            Frame::NewToken { token } => 1 + v(token.len() as u64) + token.len(),
            Frame::Stream { stream_id, offset_bytes, data, .. } => {
                stream_frame_overhead(*stream_id, *offset_bytes, data.len()) + data.len()
            }
            Frame::MaxData { max_bytes } => 1 + v(*max_bytes),
            Frame::MaxStreamData { stream_id, max_bytes } => 1 + v(*stream_id) + v(*max_bytes),
            Frame::MaxStreams { max_streams, .. } => 1 + v(*max_streams),
            Frame::DataBlocked { limit_bytes } => 1 + v(*limit_bytes),
            Frame::StreamDataBlocked { stream_id, limit_bytes } => 1 + v(*stream_id) + v(*limit_bytes),
            Frame::StreamsBlocked { limit_streams, .. } => 1 + v(*limit_streams),
            Frame::NewConnectionId { sequence, retire_prior_to, cid, .. } => {
                1 + v(*sequence) + v(*retire_prior_to) + 1 + cid.len() + RESET_TOKEN_BYTES
            }
            Frame::RetireConnectionId { sequence } => 1 + v(*sequence),
            Frame::PathChallenge { .. } | Frame::PathResponse { .. } => 1 + 8,
            Frame::ConnectionClose { error_code, frame_type, reason } => {
                1 + v(*error_code) + frame_type.map_or(0, v) + v(reason.len() as u64) + reason.len()
            }
            Frame::Datagram { explicit_len: true, data } => datagram_frame_overhead(data.len()) + data.len(),
            Frame::Datagram { explicit_len: false, data } => 1 + data.len(),
        }
    }

    /// Writes the frame at the front of `buf` and returns the bytes written, always
    /// [`Frame::encoded_len`]. Fails, writing nothing useful, when `buf` is shorter or a field
    /// breaks a rule of §19 (a value above 2^62 - 1, ACK ranges not descending with gaps,
    /// a connection ID of 0 or more than 20 bytes, ...).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.encoded_len();
        let out = buf.get_mut(..len).ok_or(WireError::BufferTooSmall)?;
        let mut w = Writer::new(out);
        self.write(&mut w)?;
        debug_assert_eq!(w.pos(), len, "encoded_len disagrees with emit for {self:?}");
        Ok(w.pos())
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        use frame_type as t;
        match self {
            Frame::Padding { len } => {
                if *len == 0 {
                    return Err(WireError::EmptyPadding);
                }
                w.zeros(*len)?;
            }
            Frame::Ping => w.u8(t::PING as u8)?,
            Frame::Ack(a) => a.write(w)?,
            Frame::ResetStream { stream_id, error_code, final_size_bytes } => {
                w.u8(t::RESET_STREAM as u8)?;
                w.varint(*stream_id)?;
                w.varint(*error_code)?;
                w.varint(*final_size_bytes)?;
            }
            Frame::StopSending { stream_id, error_code } => {
                w.u8(t::STOP_SENDING as u8)?;
                w.varint(*stream_id)?;
                w.varint(*error_code)?;
            }
            Frame::Crypto { offset_bytes, data } => {
                check_end(*offset_bytes, data.len())?;
                w.u8(t::CRYPTO as u8)?;
                w.varint(*offset_bytes)?;
                w.varint(data.len() as u64)?;
                w.bytes(data)?;
            }
            Frame::NewToken { token } => {
                if token.is_empty() {
                    return Err(WireError::EmptyToken);
                }
                w.u8(t::NEW_TOKEN as u8)?;
                w.varint(token.len() as u64)?;
                w.bytes(token)?;
            }
            Frame::Stream { stream_id, offset_bytes, fin, data } => {
                check_end(*offset_bytes, data.len())?;
                let off_bit = if *offset_bytes > 0 { 0x04 } else { 0 };
                w.u8((t::STREAM | off_bit | 0x02 | u64::from(*fin)) as u8)?;
                w.varint(*stream_id)?;
                if *offset_bytes > 0 {
                    w.varint(*offset_bytes)?;
                }
                w.varint(data.len() as u64)?;
                w.bytes(data)?;
            }
            Frame::MaxData { max_bytes } => {
                w.u8(t::MAX_DATA as u8)?;
                w.varint(*max_bytes)?;
            }
            Frame::MaxStreamData { stream_id, max_bytes } => {
                w.u8(t::MAX_STREAM_DATA as u8)?;
                w.varint(*stream_id)?;
                w.varint(*max_bytes)?;
            }
            Frame::MaxStreams { dir, max_streams } => {
                w.u8((t::MAX_STREAMS_BIDI | dir.low_bit()) as u8)?;
                w.varint(check_stream_count(*max_streams)?)?;
            }
            Frame::DataBlocked { limit_bytes } => {
                w.u8(t::DATA_BLOCKED as u8)?;
                w.varint(*limit_bytes)?;
            }
            Frame::StreamDataBlocked { stream_id, limit_bytes } => {
                w.u8(t::STREAM_DATA_BLOCKED as u8)?;
                w.varint(*stream_id)?;
                w.varint(*limit_bytes)?;
            }
            Frame::StreamsBlocked { dir, limit_streams } => {
                w.u8((t::STREAMS_BLOCKED_BIDI | dir.low_bit()) as u8)?;
                w.varint(check_stream_count(*limit_streams)?)?;
            }
            Frame::NewConnectionId { sequence, retire_prior_to, cid, reset_token } => {
                check_cid(cid)?;
                if retire_prior_to > sequence {
                    return Err(WireError::RetirePriorToTooLarge);
                }
                w.u8(t::NEW_CONNECTION_ID as u8)?;
                w.varint(*sequence)?;
                w.varint(*retire_prior_to)?;
                w.u8(cid.len() as u8)?;
                w.bytes(cid)?;
                w.bytes(reset_token)?;
            }
            Frame::RetireConnectionId { sequence } => {
                w.u8(t::RETIRE_CONNECTION_ID as u8)?;
                w.varint(*sequence)?;
            }
            Frame::PathChallenge { data } => {
                w.u8(t::PATH_CHALLENGE as u8)?;
                w.bytes(data)?;
            }
            Frame::PathResponse { data } => {
                w.u8(t::PATH_RESPONSE as u8)?;
                w.bytes(data)?;
            }
            Frame::ConnectionClose { error_code, frame_type, reason } => {
                w.u8(if frame_type.is_some() { t::CONNECTION_CLOSE } else { t::CONNECTION_CLOSE_APP } as u8)?;
                w.varint(*error_code)?;
                if let Some(ft) = frame_type {
                    w.varint(*ft)?;
                }
                w.varint(reason.len() as u64)?;
                w.bytes(reason)?;
            }
            Frame::HandshakeDone => w.u8(t::HANDSHAKE_DONE as u8)?,
            Frame::Datagram { explicit_len, data } => {
                if *explicit_len {
                    w.u8(t::DATAGRAM_LEN as u8)?;
                    w.varint(data.len() as u64)?;
                } else {
                    w.u8(t::DATAGRAM as u8)?;
                }
                w.bytes(data)?;
            }
        }
        Ok(())
    }

    /// Whether a packet carrying this frame must be acknowledged (RFC 9002 §2: every frame
    /// but ACK, PADDING and CONNECTION_CLOSE; DATAGRAM is ack-eliciting by RFC 9221 §5.2).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(self, Frame::Ack(_) | Frame::Padding { .. } | Frame::ConnectionClose { .. })
    }

    /// Whether the frame's data runs to the end of the packet on the wire, so nothing may
    /// follow it (DATAGRAM 0x30; STREAM is always emitted with a Length).
    fn runs_to_end(&self) -> bool {
        matches!(self, Frame::Datagram { explicit_len: false, .. })
    }
}

/// Iterator over the frames of a packet payload; see [`frames`].
#[derive(Clone, Debug)]
pub struct Frames<'a> {
    r: Reader<'a>,
    failed: bool,
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.remaining() == 0 {
            return None;
        }
        let item = Frame::read(&mut self.r);
        self.failed = item.is_err();
        Some(item)
    }
}

/// The frames of a (decrypted) packet payload, in order, without allocating; after the first
/// error the iterator ends.
pub fn frames(payload: &[u8]) -> Frames<'_> {
    Frames { r: Reader::new(payload), failed: false }
}

/// Parses a whole packet payload into frames. A payload with no frame is an error (RFC 9000
/// §12.4: "The payload of a packet that contains frames MUST contain at least one frame").
pub fn parse_payload(payload: &[u8]) -> Result<Vec<Frame<'_>>, WireError> {
    if payload.is_empty() {
        return Err(WireError::EmptyPayload);
    }
    frames(payload).collect()
}

/// Bytes [`emit_payload`] writes for `frames`: the sum of their [`Frame::encoded_len`].
pub fn payload_len(frames: &[Frame<'_>]) -> usize {
    frames.iter().map(Frame::encoded_len).fold(0, usize::saturating_add)
}

/// Writes `frames` back to back at the front of `buf`; returns the bytes written
/// ([`payload_len`]). A frame whose data runs to the end of the packet (DATAGRAM 0x30) must
/// be last, or the receiver would read what follows as its data.
pub fn emit_payload(frames: &[Frame<'_>], buf: &mut [u8]) -> Result<usize, WireError> {
    if frames.is_empty() {
        return Err(WireError::EmptyPayload);
    }
    if frames[..frames.len() - 1].iter().any(Frame::runs_to_end) {
        return Err(WireError::FrameAfterUnbounded);
    }
    let mut pos = 0;
    for f in frames {
        pos += f.emit(buf.get_mut(pos..).ok_or(WireError::BufferTooSmall)?)?;
    }
    Ok(pos)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// Test data that lives as long as the frames borrowing it (a few bytes per case).
    pub(crate) fn leak(v: Vec<u8>) -> &'static [u8] {
        Box::leak(v.into_boxed_slice())
    }

    pub(crate) fn bytes(max: usize) -> impl Strategy<Value = &'static [u8]> {
        vec(any::<u8>(), 0..=max).prop_map(leak)
    }

    /// Varints from each of the four encoded lengths.
    pub(crate) fn varint() -> impl Strategy<Value = u64> {
        prop_oneof![0..64u64, 64..16_384u64, 16_384..(1u64 << 30), (1u64 << 30)..=VARINT_MAX]
    }

    fn dir() -> impl Strategy<Value = StreamDir> {
        prop_oneof![Just(StreamDir::Bidi), Just(StreamDir::Uni)]
    }

    /// An offset that leaves room for 64 bytes of data below 2^62.
    fn offset() -> impl Strategy<Value = u64> {
        prop_oneof![Just(0u64), varint().prop_map(|v| v.min(VARINT_MAX - 64))]
    }

    fn ack() -> impl Strategy<Value = AckFrame> {
        (
            0..1000u64,
            vec((0..1000u64, 0..1000u64), 0..8),
            0..(1u64 << 40),
            varint(),
            proptest::option::of([varint(), varint(), varint()]),
        )
            .prop_map(|(first, rest, base, ack_delay_encoded, ecn)| {
                // Put the largest high enough that every gap and range fits above zero.
                let largest = base + first + rest.iter().map(|(g, l)| g + 2 + l).sum::<u64>();
                let mut ranges: SmallVec<[(u64, u64); 4]> = SmallVec::new();
                let mut prev_smallest = largest - first;
                ranges.push((prev_smallest, largest));
                for (gap, len) in rest {
                    let l = prev_smallest - gap - 2;
                    ranges.push((l - len, l));
                    prev_smallest = l - len;
                }
                AckFrame { ranges, ack_delay_encoded, ecn }
            })
    }

    pub(crate) fn frame() -> impl Strategy<Value = Frame<'static>> {
        let a = prop_oneof![
            (1..200usize).prop_map(|len| Frame::Padding { len }),
            Just(Frame::Ping),
            Just(Frame::HandshakeDone),
            ack().prop_map(Frame::Ack),
            (varint(), varint(), varint()).prop_map(|(stream_id, error_code, final_size_bytes)| {
                Frame::ResetStream { stream_id, error_code, final_size_bytes }
            }),
            (varint(), varint()).prop_map(|(stream_id, error_code)| Frame::StopSending { stream_id, error_code }),
            (offset(), bytes(64)).prop_map(|(offset_bytes, data)| Frame::Crypto { offset_bytes, data }),
            bytes(64).prop_filter("non-empty", |t| !t.is_empty()).prop_map(|token| Frame::NewToken { token }),
            (varint(), offset(), any::<bool>(), bytes(64))
                .prop_map(|(stream_id, offset_bytes, fin, data)| Frame::Stream { stream_id, offset_bytes, fin, data }),
        ];
        let b = prop_oneof![
            varint().prop_map(|max_bytes| Frame::MaxData { max_bytes }),
            (varint(), varint()).prop_map(|(stream_id, max_bytes)| Frame::MaxStreamData { stream_id, max_bytes }),
            (dir(), 0..=MAX_STREAM_COUNT).prop_map(|(dir, max_streams)| Frame::MaxStreams { dir, max_streams }),
            varint().prop_map(|limit_bytes| Frame::DataBlocked { limit_bytes }),
            (varint(), varint())
                .prop_map(|(stream_id, limit_bytes)| Frame::StreamDataBlocked { stream_id, limit_bytes }),
            (dir(), 0..=MAX_STREAM_COUNT).prop_map(|(dir, limit_streams)| Frame::StreamsBlocked { dir, limit_streams }),
            (varint(), any::<u64>(), vec(any::<u8>(), 1..=MAX_CID_BYTES), any::<[u8; 16]>()).prop_map(
                |(sequence, r, cid, reset_token)| Frame::NewConnectionId {
                    sequence,
                    retire_prior_to: r % (sequence + 1),
                    cid: leak(cid),
                    reset_token,
                }
            ),
            varint().prop_map(|sequence| Frame::RetireConnectionId { sequence }),
            any::<[u8; 8]>().prop_map(|data| Frame::PathChallenge { data }),
            any::<[u8; 8]>().prop_map(|data| Frame::PathResponse { data }),
        ];
        let c = prop_oneof![
            (varint(), proptest::option::of(varint()), bytes(32))
                .prop_map(|(error_code, frame_type, reason)| Frame::ConnectionClose { error_code, frame_type, reason }),
            (any::<bool>(), bytes(64)).prop_map(|(explicit_len, data)| Frame::Datagram { explicit_len, data }),
        ];
        prop_oneof![4 => a, 5 => b, 2 => c]
    }

    /// A payload a sender could build: no two PADDING runs side by side (the receiver would
    /// see one run) and a DATAGRAM without length only at the end.
    fn payload() -> impl Strategy<Value = Vec<Frame<'static>>> {
        vec(frame(), 1..8).prop_map(|mut frames| {
            let last = frames.len() - 1;
            for f in &mut frames[..last] {
                if let Frame::Datagram { explicit_len, .. } = f {
                    *explicit_len = true;
                }
            }
            frames.dedup_by(|b, a| matches!((a, b), (Frame::Padding { .. }, Frame::Padding { .. })));
            frames
        })
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn emit_vec(f: &Frame<'_>) -> Vec<u8> {
        let mut buf = vec![0u8; f.encoded_len()];
        assert_eq!(f.emit(&mut buf), Ok(buf.len()));
        buf
    }

    #[test]
    fn rfc9001_a2_client_initial_payload() {
        // RFC 9001 Appendix A.2: the client Initial's payload starts with a CRYPTO frame,
        // 06 00 40f1 (offset 0, length 0x40f1 = 241 as a 2-byte varint), and is padded with
        // PADDING to 1162 bytes, so the run is 1162 - 4 - 241 = 917 bytes.
        let mut payload = hex("060040f1");
        payload.extend(std::iter::repeat_n(0xab, 241));
        payload.resize(1162, 0);
        let frames = parse_payload(&payload).unwrap();
        assert_eq!(
            frames,
            vec![Frame::Crypto { offset_bytes: 0, data: &payload[4..245] }, Frame::Padding { len: 917 }]
        );
        assert_eq!(payload_len(&frames), 1162);
        let mut out = vec![0u8; 1162];
        assert_eq!(emit_payload(&frames, &mut out), Ok(1162));
        assert_eq!(out, payload);
        assert!(frames[0].is_ack_eliciting() && !frames[1].is_ack_eliciting());
    }

    #[test]
    fn stream_type_bits() {
        // 0x08..=0x0f: OFF 0x04, LEN 0x02, FIN 0x01. Stream 4, data "hi"; with OFF the offset
        // is 5; without LEN the data runs to the end.
        for ty in 0x08u8..=0x0f {
            let mut b = vec![ty, 0x04];
            if ty & 0x04 != 0 {
                b.push(0x05);
            }
            if ty & 0x02 != 0 {
                b.push(0x02);
            }
            b.extend_from_slice(b"hi");
            let (f, n) = Frame::parse(&b).unwrap();
            let offset_bytes = if ty & 0x04 != 0 { 5 } else { 0 };
            assert_eq!(f, Frame::Stream { stream_id: 4, offset_bytes, fin: ty & 1 != 0, data: b"hi" }, "{ty:#x}");
            assert_eq!(n, b.len());
        }
        // Emit always writes LEN, and OFF only for a non-zero offset: 0x0b 04 02 "hi" and
        // 0x0e 04 05 02 "hi".
        assert_eq!(
            emit_vec(&Frame::Stream { stream_id: 4, offset_bytes: 0, fin: true, data: b"hi" }),
            hex("0b04026869")
        );
        assert_eq!(
            emit_vec(&Frame::Stream { stream_id: 4, offset_bytes: 5, fin: false, data: b"hi" }),
            hex("0e0405026869")
        );
    }

    #[test]
    fn ack_ranges_from_gaps() {
        // 02, Largest 30, Delay 0, Range Count 1, First Range 10 → [20, 30]; Gap 8 → largest
        // 20 - 8 - 2 = 10, Length 10 → [0, 10]. Seven bytes, as ack_frame_len says.
        let b = hex("021e00010a080a");
        let (f, n) = Frame::parse(&b).unwrap();
        let ack = AckFrame { ranges: SmallVec::from_slice(&[(20, 30), (0, 10)]), ack_delay_encoded: 0, ecn: None };
        assert_eq!(f, Frame::Ack(ack.clone()));
        assert_eq!((n, f.encoded_len(), ack_frame_len(&[(20, 30), (0, 10)], 0, None)), (7, 7, 7));
        assert_eq!(emit_vec(&f), b);
        // ACK_ECN: the same with counts 1, 2, 3 appended.
        let mut e = b.clone();
        e[0] = 0x03;
        e.extend_from_slice(&[1, 2, 3]);
        assert_eq!(Frame::parse(&e).unwrap().0, Frame::Ack(AckFrame { ecn: Some([1, 2, 3]), ..ack }));
        // First range 31 below largest 30, and a gap reaching below zero.
        assert_eq!(Frame::parse(&hex("021e00001f")), Err(WireError::BadAckRanges));
        assert_eq!(Frame::parse(&hex("021e00010a1400")), Err(WireError::BadAckRanges));
        // Adjacent ranges [20, 30] and [10, 19] cannot be written (the gap would be -1).
        let adjacent =
            AckFrame { ranges: SmallVec::from_slice(&[(20, 30), (10, 19)]), ack_delay_encoded: 0, ecn: None };
        assert_eq!(Frame::Ack(adjacent).emit(&mut [0u8; 16]), Err(WireError::BadAckRanges));
        // A range with smallest above largest, first or later: rejected, sized without panic.
        for ranges in [&[(31, 30)][..], &[(20, 30), (12, 11)][..]] {
            let bad = Frame::Ack(AckFrame { ranges: SmallVec::from_slice(ranges), ack_delay_encoded: 0, ecn: None });
            assert!(bad.encoded_len() > 0);
            assert_eq!(bad.emit(&mut [0u8; 16]), Err(WireError::BadAckRanges));
        }
        let empty = AckFrame { ranges: SmallVec::new(), ack_delay_encoded: 0, ecn: None };
        assert_eq!(Frame::Ack(empty).emit(&mut [0u8; 16]), Err(WireError::EmptyAck));
    }

    #[test]
    fn frame_errors() {
        assert_eq!(Frame::parse(&[0x20]), Err(WireError::UnknownFrameType(0x20)));
        // PING (1) written as the two-byte varint 0x4001.
        assert_eq!(Frame::parse(&[0x40, 0x01]), Err(WireError::NonMinimalFrameType(1)));
        // CRYPTO announcing 5 bytes, holding 2.
        assert_eq!(Frame::parse(&hex("0600056869")), Err(WireError::LengthPastEnd));
        assert_eq!(Frame::parse(&hex("06")), Err(WireError::Truncated));
        // MAX_STREAMS of 2^60 + 1 = 0x1000_0000_0000_0001: prefix 0xc0 on the top byte 0x10.
        assert_eq!(Frame::parse(&hex("12d000000000000001")), Err(WireError::TooManyStreams((1 << 60) + 1)));
        // NEW_CONNECTION_ID with a 21-byte CID, and with Retire Prior To 2 above sequence 1.
        assert_eq!(Frame::parse(&hex("18010015")), Err(WireError::BadConnectionIdLength(21)));
        let mut ncid = hex("18010201aa");
        ncid.extend_from_slice(&[0; 16]);
        assert_eq!(Frame::parse(&ncid), Err(WireError::RetirePriorToTooLarge));
        assert_eq!(Frame::parse(&hex("0700")), Err(WireError::EmptyToken));
        // STREAM at offset 2^62 - 1 with one byte goes past the largest offset.
        assert_eq!(Frame::parse(&hex("0e00ffffffffffffffff0100")), Err(WireError::OffsetTooLarge));
        assert_eq!(parse_payload(&[]), Err(WireError::EmptyPayload));
        // A DATAGRAM without length must be last.
        let frames = [Frame::Datagram { explicit_len: false, data: b"x" }, Frame::Ping];
        assert_eq!(emit_payload(&frames, &mut [0u8; 8]), Err(WireError::FrameAfterUnbounded));
        assert_eq!(Frame::Ping.emit(&mut []), Err(WireError::BufferTooSmall));
        assert_eq!(
            Frame::MaxData { max_bytes: VARINT_MAX + 1 }.emit(&mut [0; 9]),
            Err(WireError::VarintTooLarge(VARINT_MAX + 1))
        );
    }

    #[test]
    fn ack_eliciting_frames() {
        // RFC 9002 §2: all but ACK, PADDING and CONNECTION_CLOSE.
        let ack = AckFrame { ranges: SmallVec::from_slice(&[(0, 0)]), ack_delay_encoded: 0, ecn: None };
        assert!(!Frame::Ack(ack).is_ack_eliciting());
        assert!(!Frame::Padding { len: 3 }.is_ack_eliciting());
        assert!(!Frame::ConnectionClose { error_code: 0, frame_type: None, reason: b"" }.is_ack_eliciting());
        assert!(Frame::Ping.is_ack_eliciting());
        assert!(Frame::Datagram { explicit_len: true, data: b"" }.is_ack_eliciting());
        assert!(Frame::Stream { stream_id: 0, offset_bytes: 0, fin: true, data: b"" }.is_ack_eliciting());
    }

    proptest! {
        #[test]
        fn frame_round_trip(f in frame()) {
            let buf = emit_vec(&f);
            // The simulator's size functions are the real encoding's length.
            match &f {
                Frame::Stream { stream_id, offset_bytes, data, .. } => {
                    prop_assert_eq!(buf.len(), stream_frame_overhead(*stream_id, *offset_bytes, data.len()) + data.len())
                }
                Frame::Crypto { offset_bytes, data } => {
                    prop_assert_eq!(buf.len(), crypto_frame_overhead(*offset_bytes, data.len()) + data.len())
                }
                Frame::Datagram { explicit_len: true, data } => {
                    prop_assert_eq!(buf.len(), datagram_frame_overhead(data.len()) + data.len())
                }
                Frame::Ack(a) => prop_assert_eq!(buf.len(), ack_frame_len(&a.ranges, a.ack_delay_encoded, a.ecn)),
                _ => {}
            }
            prop_assert_eq!(Frame::parse(&buf), Ok((f.clone(), buf.len())));
            // One byte short never fits.
            prop_assert_eq!(f.emit(&mut vec![0u8; buf.len() - 1]), Err(WireError::BufferTooSmall));
        }

        #[test]
        fn payload_round_trip(frames in payload()) {
            let mut buf = vec![0u8; payload_len(&frames)];
            prop_assert_eq!(emit_payload(&frames, &mut buf), Ok(buf.len()));
            prop_assert_eq!(parse_payload(&buf), Ok(frames));
        }

        #[test]
        fn arbitrary_payload_never_panics(bytes in vec(any::<u8>(), 0..256)) {
            // Whatever parses re-emits and parses back to the same frames.
            if let Ok(frames) = parse_payload(&bytes) {
                let mut buf = vec![0u8; payload_len(&frames)];
                prop_assert_eq!(emit_payload(&frames, &mut buf), Ok(buf.len()));
                prop_assert_eq!(parse_payload(&buf), Ok(frames));
            }
        }

        #[test]
        fn mutated_payload_never_panics(frames in payload(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            // Valid payloads with one byte changed reach much deeper than random bytes.
            let mut buf = vec![0u8; payload_len(&frames)];
            emit_payload(&frames, &mut buf).unwrap();
            let i = at.index(buf.len());
            buf[i] = byte;
            if let Ok(frames) = parse_payload(&buf) {
                let mut out = vec![0u8; payload_len(&frames)];
                prop_assert_eq!(emit_payload(&frames, &mut out), Ok(out.len()));
                prop_assert_eq!(parse_payload(&out), Ok(frames));
            }
        }
    }
}
