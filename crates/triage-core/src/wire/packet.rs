//! The packet representation (IP + TCP header fields and the payload's message chunks).

use crate::sched::Chunks;

/// IPv4 header without options (RFC 791).
pub const IP_HEADER_BYTES: u32 = 20;
/// TCP header without options (RFC 9293 §3.1).
pub const TCP_BASE_HEADER_BYTES: u32 = 20;
/// The timestamp option (RFC 7323 §3, 10 bytes) with two NOPs, as Linux and ns-3 send it
/// on every segment: 20 + 20 + 12 = 52 bytes of header on a data segment.
pub const TCP_TIMESTAMP_OPTION_BYTES: u32 = 12;
/// Options on a SYN or SYN-ACK: MSS (4), SACK-permitted (2), timestamps (10), window
/// scale (3), one NOP: 20 bytes, a 60-byte header as Linux sends.
pub const TCP_SYN_OPTION_BYTES: u32 = 20;
/// The same without the MSS option, as ns-3 3.37 sends its SYN and SYN-ACK (window scale,
/// SACK-permitted, timestamps: 15 bytes padded to 16, a 56-byte header;
/// [`crate::ConnectionConfig::ns3_compat`]).
pub const TCP_SYN_OPTION_BYTES_NO_MSS: u32 = 16;
/// Maximum SACK blocks that fit beside the timestamp option (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// An endpoint address: node and port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Addr {
    /// Node (host) address.
    pub node: u32,
    /// Port.
    pub port: u16,
}

/// The ECN field of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// 00: not ECN-capable.
    #[default]
    NotEct = 0b00,
    /// 01: ECN-capable, ECT(1).
    Ect1 = 0b01,
    /// 10: ECN-capable, ECT(0).
    Ect0 = 0b10,
    /// 11: congestion experienced.
    Ce = 0b11,
}

/// TCP header flags (RFC 9293 §3.1, RFC 3168 §6.1 for ECE and CWR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    /// No more data from sender.
    pub const FIN: u8 = 0x01;
    /// Synchronize sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset.
    pub const RST: u8 = 0x04;
    /// Push.
    pub const PSH: u8 = 0x08;
    /// Acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
    /// ECN-Echo.
    pub const ECE: u8 = 0x40;
    /// Congestion window reduced.
    pub const CWR: u8 = 0x80;

    /// True when every bit of `mask` is set.
    #[inline]
    pub fn has(self, mask: u8) -> bool {
        self.0 & mask == mask
    }
}

/// A SACK block: bytes `[start, end)` received out of order (RFC 2018).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct SackBlock {
    /// First sequence number of the block.
    pub start: u64,
    /// Sequence number just past the block.
    pub end: u64,
}

/// One packet as the simulator carries it.
///
/// Sequence and acknowledgment numbers are 64-bit and start at 0 for the SYN, so they never
/// wrap; on the wire they would be the low 32 bits plus the initial sequence number.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Packet {
    /// Source endpoint.
    pub src: Addr,
    /// Destination endpoint.
    pub dst: Addr,
    /// IP ECN codepoint.
    pub ecn: Ecn,
    /// IP DSCP (RFC 2474), 0 by default.
    pub dscp: u8,
    /// TCP flags.
    pub flags: TcpFlags,
    /// Sequence number of the first payload byte (or of the SYN/FIN).
    pub seq: u64,
    /// Cumulative acknowledgment: next byte expected.
    pub ack: u64,
    /// Receive window advertised, in bytes (window scaling applied).
    pub window_bytes: u64,
    /// SACK blocks, most recent first (RFC 2018 §4).
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    /// Number of valid entries in `sack`.
    pub sack_len: u8,
    /// Priority carried in a TCP option (CATS §II-D-2), when the sender adds one.
    pub priority_option: Option<u8>,
    /// Payload length in bytes.
    pub payload_bytes: u32,
    /// What the payload holds: pieces of application messages, in order.
    pub chunks: Chunks,
    /// A SYN or SYN-ACK without the MSS option (ns-3's; 4 bytes shorter). Unused otherwise.
    pub syn_without_mss: bool,
    /// QUIC mode: the UDP datagram this packet is (then the TCP fields above are unused).
    pub quic: Option<Box<crate::quic::QuicDatagram>>,
}

impl Packet {
    /// The SACK blocks carried.
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }

    /// TCP options length in bytes, padded to a multiple of 4 (RFC 9293 §3.1).
    #[inline]
    pub fn tcp_option_bytes(&self) -> u32 {
        if self.flags.has(TcpFlags::SYN) {
            return if self.syn_without_mss { TCP_SYN_OPTION_BYTES_NO_MSS } else { TCP_SYN_OPTION_BYTES };
        }
        let mut opts = TCP_TIMESTAMP_OPTION_BYTES;
        if self.sack_len > 0 {
            // Two NOPs, kind, length, 8 bytes per block (RFC 2018 §3).
            opts += 4 + 8 * self.sack_len as u32;
        }
        if self.priority_option.is_some() {
            // Kind 254, length 3, one byte of priority (CATS §II-D-2), padded.
            opts += 3;
        }
        opts.div_ceil(4) * 4
    }

    /// Bytes of IP and TCP header.
    #[inline]
    pub fn header_bytes(&self) -> u32 {
        IP_HEADER_BYTES + TCP_BASE_HEADER_BYTES + self.tcp_option_bytes()
    }

    /// Bytes this packet occupies on the wire at the IP layer.
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        if let Some(q) = &self.quic {
            return crate::wire::quic::IP_UDP_HEADER_BYTES + q.payload_bytes;
        }
        self.header_bytes() + self.payload_bytes
    }

    /// Sequence space consumed: payload plus one for SYN and one for FIN.
    #[inline]
    pub fn seq_len(&self) -> u64 {
        self.payload_bytes as u64 + self.flags.has(TcpFlags::SYN) as u64 + self.flags.has(TcpFlags::FIN) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_match_linux() {
        let mut p = Packet { flags: TcpFlags(TcpFlags::ACK), payload_bytes: 1448, ..Default::default() };
        assert_eq!(p.header_bytes(), 52);
        assert_eq!(p.wire_bytes(), 1500, "MSS 1448 fills a 1500-byte MTU");
        p.payload_bytes = 0;
        p.sack_len = 1;
        assert_eq!(p.wire_bytes(), 64, "12 timestamp + 12 one-block SACK");
        p.sack_len = 3;
        assert_eq!(p.wire_bytes(), 80, "40 bytes of options, the maximum");
        p.sack_len = 0;
        p.priority_option = Some(0);
        assert_eq!(p.wire_bytes(), 56, "3-byte priority option padded to 4");
        let syn = Packet { flags: TcpFlags(TcpFlags::SYN), ..Default::default() };
        assert_eq!(syn.wire_bytes(), 60);
        assert_eq!(syn.seq_len(), 1);
    }
}
