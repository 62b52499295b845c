//! qlog events of a QUIC-mode connection (see [`crate::qlog`] for the format).

use super::packet::{Frame, QuicPacket, SpaceId};
use crate::qlog::{self, ErrorSpace, PacketEvent, PacketHeader, PacketNumberSpace, PacketType};

/// The qlog packet type of a space.
pub fn packet_type(space: SpaceId) -> PacketType {
    match space {
        SpaceId::Initial => PacketType::Initial,
        SpaceId::Handshake => PacketType::Handshake,
        SpaceId::Data => PacketType::OneRtt,
    }
}

/// The qlog packet number space of a space.
pub fn pn_space(space: SpaceId) -> PacketNumberSpace {
    match space {
        SpaceId::Initial => PacketNumberSpace::Initial,
        SpaceId::Handshake => PacketNumberSpace::Handshake,
        SpaceId::Data => PacketNumberSpace::ApplicationData,
    }
}

/// A packet's header as qlog records it.
pub fn header(space: SpaceId, pn: u64) -> PacketHeader {
    PacketHeader { packet_type: packet_type(space), packet_number: pn }
}

/// A frame as qlog records it; `None` for frames [`qlog::Frame`] has no type for (MAX_STREAMS,
/// NEW_CONNECTION_ID, RETIRE_CONNECTION_ID, PATH_CHALLENGE, PATH_RESPONSE).
pub fn frame(f: &Frame, ack_delay_exponent: u32) -> Option<qlog::Frame> {
    Some(match f {
        Frame::Padding(n) => qlog::Frame::Padding { length_bytes: *n as u64 },
        Frame::Ping => qlog::Frame::Ping,
        Frame::Ack(a) => qlog::Frame::Ack {
            ack_delay_ns: Some((a.delay_encoded << ack_delay_exponent) * 1_000),
            acked_ranges: a.ranges.iter().map(|&(s, l)| (s, l)).collect(),
            ect0: a.ecn.map(|c| c[0]),
            ect1: a.ecn.map(|c| c[1]),
            ce: a.ecn.map(|c| c[2]),
        },
        Frame::Crypto { offset, len } => qlog::Frame::Crypto { offset: *offset, length_bytes: *len as u64 },
        Frame::Stream { stream_id, stream_base, chunk, fin } => qlog::Frame::Stream {
            stream_id: *stream_id,
            offset: stream_base + chunk.msg_offset_bytes,
            length_bytes: chunk.len_bytes() as u64,
            fin: *fin,
        },
        Frame::Datagram { data_len, header_len, .. } => {
            qlog::Frame::Datagram { length_bytes: (*data_len + *header_len) as u64 }
        }
        Frame::MaxData(m) => qlog::Frame::MaxData { maximum: *m },
        Frame::MaxStreamData { stream_id, max } => qlog::Frame::MaxStreamData { stream_id: *stream_id, maximum: *max },
        Frame::MaxStreams { .. }
        | Frame::NewConnectionId { .. }
        | Frame::RetireConnectionId { .. }
        | Frame::PathChallenge
        | Frame::PathResponse => return None,
        Frame::HandshakeDone => qlog::Frame::HandshakeDone,
        Frame::GoAway { stream_id, .. } => {
            qlog::Frame::Stream { stream_id: *stream_id, offset: 0, length_bytes: f.len_bytes() as u64, fin: false }
        }
        Frame::ConnectionClose => {
            qlog::Frame::ConnectionClose { error_space: ErrorSpace::Transport, error_code: 0, reason: None }
        }
    })
}

/// A sent or received packet as qlog records it.
pub fn packet(p: &QuicPacket, ack_delay_exponent: u32) -> PacketEvent {
    PacketEvent {
        header: header(p.space, p.pn),
        length_bytes: p.size_bytes as u64,
        frames: p.frames.iter().filter_map(|f| frame(f, ack_delay_exponent)).collect(),
    }
}
