//! Packet capture: every packet a link serializes, and every packet a link's queue drops or
//! its loss process loses, written as pcapng files that Wireshark and `tshark` read as a
//! real capture.
//!
//! # Files
//!
//! One pcapng file per pair of nodes joined by links, `A-B.pcapng`, with one interface per
//! one-way link (`A->B` and `B->A`, the interface name is the link's name), and beside it
//! `A-B.drops.pcapng` with the same interfaces for the packets dropped there. pcapng rather
//! than one classic pcap per one-way link because Wireshark's TCP analysis needs both
//! directions of a connection in one capture: the window scale is known only when it sees
//! the SYN and the SYN-ACK, and it tells a fast retransmission from reordering by the
//! duplicate ACKs and the handshake's round-trip time. A capture of one direction only is
//! still there: `tshark -Y 'frame.interface_name == "A->B"'`.
//!
//! # What a packet looks like
//!
//! - Timestamps are the simulated time in nanoseconds (`if_tsresol` 9) at which the link
//!   finished serializing the packet; a queue drop is stamped when the packet arrived.
//! - Link type raw IPv4 (LINKTYPE_RAW). Node `i` has address 10.0.0.0 + i + 1 (node 0 is
//!   10.0.0.1).
//! - IPv4 (RFC 791): DSCP and ECN in the traffic-class byte (RFC 2474, RFC 3168 §5), total
//!   length the packet's wire size, DF set, identification 0, TTL 64, header checksum.
//! - TCP (RFC 9293 §3.1): ports, sequence and acknowledgment numbers, flags (ECE and CWR
//!   included), window, and the options the simulator counts in the packet's size: on a SYN
//!   or SYN-ACK MSS, SACK-permitted, timestamps, NOP and window scale (20 bytes, as Linux
//!   sends them; 16 without the MSS with `ns3_compat`, as ns-3); on other segments NOP NOP timestamps (RFC 7323 §3), then NOP NOP SACK with
//!   the blocks (RFC 2018 §3), then NOP and the CATS priority option (kind 254, length 3,
//!   CATS §II-D-2), with at most two SACK blocks beside it so that the options stay within 40
//!   bytes. The TCP checksum is 0 (the payload is not in the file; Wireshark does
//!   not check TCP checksums by default).
//! - The payload is cut: the captured length is the headers, the original length the wire
//!   size, so sequence analysis sees every segment's real length.
//! - QUIC-mode packets are UDP datagrams (RFC 768) of their real size, UDP checksum 0 (no
//!   checksum, allowed over IPv4); only the IP and UDP headers are captured.
//!
//! # Sequence numbers, window and timestamps
//!
//! The simulator's TCP counts sequence numbers from 0 at the SYN. Each direction of a
//! connection gets a deterministic initial sequence number derived from its address pair
//! ([`isn`]); the wire sequence number is the ISN plus the simulator's, modulo 2^32, and the
//! acknowledgment number and SACK blocks use the peer's ISN, so SYN, SYN-ACK and data agree
//! as in a real capture. The window scale each end announces on its SYN is the smallest
//! shift that fits the window it advertises there (RFC 7323 §2.2); the window field of later
//! segments is the advertised window shifted by it (the SYN's own window is never scaled,
//! RFC 7323 §2.2). The simulator models the timestamps option's size, not its values: TSval
//! is the sender's clock in milliseconds when it sent the packet, TSecr is 0.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Duration;

use etherparse::{IpDscp, IpEcn, IpNumber, Ipv4Header, TcpHeader, UdpHeader};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use triage_core::wire::{Addr, Packet, TcpFlags};

use crate::link::{Arrival, Link};
use crate::queue::SimPacket;
use crate::sim::Network;

/// What went wrong writing a capture.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CaptureError {
    /// The file or directory.
    pub path: PathBuf,
    /// What happened.
    pub message: String,
}

/// MSS announced on a SYN when the end's own is not known.
const DEFAULT_MSS_BYTES: u16 = 1460;
/// The IPv4 time to live on every packet.
const TTL: u8 = 64;

/// Why a packet is in a drops file (the packet's comment there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DropKind {
    Queue,
    Lost,
    Outage,
}

impl DropKind {
    fn comment(self) -> &'static str {
        match self {
            DropKind::Queue => "dropped by the queue",
            DropKind::Lost => "lost by the link's loss model",
            DropKind::Outage => "lost: the link was down",
        }
    }
}

type Writer = PcapNgWriter<BufWriter<File>>;

/// One node pair's two files.
struct PairFiles {
    captured_path: PathBuf,
    captured: Writer,
    dropped_path: PathBuf,
    dropped: Writer,
}

/// Per one-way link: which file and interface it writes to, and what it wrote.
#[derive(Clone, Copy, Debug, Default)]
struct LinkSlot {
    file: usize,
    interface: u32,
    captured_packets: u64,
    dropped_packets: u64,
}

/// Packets captured and dropped on one link, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkCaptureCount {
    /// The link's name (the interface name in the file).
    pub link: String,
    /// The file its captured packets are in.
    pub captured_file: PathBuf,
    /// Packets serialized onto the link.
    pub captured_packets: u64,
    /// The file its dropped packets are in.
    pub dropped_file: PathBuf,
    /// Packets dropped by its queue or lost on it.
    pub dropped_packets: u64,
}

/// The capture of a run: give it to [`crate::sim::Simulator::set_capture`] before running,
/// take it back with [`crate::sim::Simulator::take_capture`] and [`Capture::finish`] it.
pub struct Capture {
    files: Vec<PairFiles>,
    links: Vec<LinkSlot>,
    link_names: Vec<String>,
    /// Window shift each sending address announced on its SYN (by (src, dst)).
    wscale: HashMap<(Addr, Addr), u8>,
    /// MSS each local address announces on its SYN.
    mss: HashMap<Addr, u16>,
    /// The headers of the packet being written, and its wire size.
    buf: Vec<u8>,
    wire_bytes: u32,
    /// The first write error (the event loop cannot stop for it; `finish` reports it).
    error: Option<CaptureError>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture").field("files", &self.files.len()).field("links", &self.links).finish()
    }
}

/// Keeps letters, digits, `-`, `_` and `.`; anything else becomes `_`.
fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect()
}

/// The IPv4 address of node `node`: 10.0.0.0 + node + 1.
pub fn node_ipv4(node: u32) -> [u8; 4] {
    (0x0A00_0000u32.wrapping_add(node.wrapping_add(1) & 0x00FF_FFFF)).to_be_bytes()
}

/// The initial sequence number of the direction `src` to `dst`: a fixed mix (SplitMix64's
/// finalizer) of the two addresses, so every run gives the same numbers.
pub fn isn(src: Addr, dst: Addr) -> u32 {
    let mut x = (u64::from(src.node) << 40)
        ^ (u64::from(src.port) << 24)
        ^ (u64::from(dst.node) << 16)
        ^ u64::from(dst.port)
        ^ 0x9E37_79B9_7F4A_7C15;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u32
}

/// The smallest window shift (at most 14, RFC 7323 §2.3) that fits `window_bytes` in 16 bits.
fn window_shift(window_bytes: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (window_bytes >> s) > u64::from(u16::MAX) {
        s += 1;
    }
    s
}

fn writer(path: &Path, network: &Network, links: &[u32]) -> Result<Writer, CaptureError> {
    let err = |e: &dyn std::fmt::Display| CaptureError { path: path.to_path_buf(), message: e.to_string() };
    let file = File::create(path).map_err(|e| err(&e))?;
    let mut w = PcapNgWriter::new(BufWriter::new(file)).map_err(|e| err(&e))?;
    for &l in links {
        let link = &network.links[l as usize];
        let mut options = vec![
            InterfaceDescriptionOption::IfName(Cow::Owned(link.name.clone())),
            InterfaceDescriptionOption::IfTsResol(9),
        ];
        if let Some(rate) = link.rate_bps() {
            options.push(InterfaceDescriptionOption::IfSpeed(rate));
        }
        let idb = InterfaceDescriptionBlock { linktype: DataLink::RAW, snaplen: 0, options };
        w.write_pcapng_block(idb).map_err(|e| err(&e))?;
    }
    Ok(w)
}

impl Capture {
    /// Creates `dir` and the files of every pair of nodes that `network`'s links join.
    pub fn create(dir: &Path, network: &Network) -> Result<Self, CaptureError> {
        std::fs::create_dir_all(dir).map_err(|e| CaptureError { path: dir.to_path_buf(), message: e.to_string() })?;
        // Group one-way links by their unordered node pair, in the order links were added.
        let mut pairs: Vec<((u32, u32), Vec<u32>)> = Vec::new();
        let mut slots = vec![LinkSlot::default(); network.links.len()];
        for (i, l) in network.links.iter().enumerate() {
            let key = (l.from.min(l.to), l.from.max(l.to));
            let p = match pairs.iter().position(|(k, _)| *k == key) {
                Some(p) => p,
                None => {
                    pairs.push((key, Vec::new()));
                    pairs.len() - 1
                }
            };
            slots[i] = LinkSlot { file: p, interface: pairs[p].1.len() as u32, ..LinkSlot::default() };
            pairs[p].1.push(i as u32);
        }
        let mut files = Vec::with_capacity(pairs.len());
        let mut used = std::collections::HashSet::new();
        for (p, (_, links)) in pairs.iter().enumerate() {
            let first = &network.links[links[0] as usize];
            let node = |n: u32| network.nodes.get(n as usize).map_or_else(|| n.to_string(), |x| x.name.clone());
            let mut stem = file_safe(&format!("{}-{}", node(first.from), node(first.to)));
            if !used.insert(stem.clone()) {
                stem = format!("{stem}-{p}");
                used.insert(stem.clone());
            }
            let captured_path = dir.join(format!("{stem}.pcapng"));
            let dropped_path = dir.join(format!("{stem}.drops.pcapng"));
            files.push(PairFiles {
                captured: writer(&captured_path, network, links)?,
                captured_path,
                dropped: writer(&dropped_path, network, links)?,
                dropped_path,
            });
        }
        Ok(Self {
            files,
            links: slots,
            link_names: network.links.iter().map(|l| l.name.clone()).collect(),
            wscale: HashMap::new(),
            mss: HashMap::new(),
            buf: Vec::with_capacity(128),
            wire_bytes: 0,
            error: None,
        })
    }

    /// The MSS the end at `local` announces on its SYN (1460 when not set).
    pub fn set_mss(&mut self, local: Addr, mss_bytes: u32) {
        self.mss.insert(local, u16::try_from(mss_bytes).unwrap_or(u16::MAX));
    }

    /// Link `l` finished serializing a packet at `now_ns`: runs [`Link::on_tx_done`] and
    /// writes the packet, and to the drops file too when the link lost it. Returns what
    /// `on_tx_done` returns.
    pub fn tx_done(&mut self, now_ns: u64, l: u32, link: &mut Link) -> (Option<u64>, Option<u64>) {
        if let Some(sp) = link.serializing() {
            self.render(sp);
        } else {
            return link.on_tx_done(now_ns);
        }
        let before = (link.stats().lost_packets, link.stats().outage_packets);
        let out = link.on_tx_done(now_ns);
        self.write(now_ns, l, None);
        let after = (link.stats().lost_packets, link.stats().outage_packets);
        if after.0 > before.0 {
            self.write(now_ns, l, Some(DropKind::Lost));
        } else if after.1 > before.1 {
            self.write(now_ns, l, Some(DropKind::Outage));
        }
        out
    }

    /// A packet arrives at link `l`'s queue at `now_ns`: runs [`Link::enqueue`] and writes
    /// the packet to the drops file when the queue dropped it. Returns what `enqueue` returns.
    pub fn enqueue(&mut self, now_ns: u64, l: u32, link: &mut Link, sp: SimPacket) -> Arrival {
        self.render(&sp);
        let before = link.queue().stats().dropped_packets;
        let out = link.enqueue(now_ns, sp);
        if link.queue().stats().dropped_packets > before {
            self.write(now_ns, l, Some(DropKind::Queue));
        }
        out
    }

    /// Writes the rendered packet to link `l`'s interface (or its drops file's).
    fn write(&mut self, now_ns: u64, l: u32, drop: Option<DropKind>) {
        let Some(slot) = self.links.get_mut(l as usize) else { return };
        let files = &mut self.files[slot.file];
        let (w, path) = match drop {
            None => {
                slot.captured_packets += 1;
                (&mut files.captured, &files.captured_path)
            }
            Some(_) => {
                slot.dropped_packets += 1;
                (&mut files.dropped, &files.dropped_path)
            }
        };
        let block = EnhancedPacketBlock {
            interface_id: slot.interface,
            timestamp: Duration::from_nanos(now_ns),
            original_len: self.wire_bytes,
            data: Cow::Borrowed(&self.buf),
            options: drop.map(|d| vec![EnhancedPacketOption::Comment(Cow::Borrowed(d.comment()))]).unwrap_or_default(),
        };
        if let Err(e) = w.write_pcapng_block(block) {
            if self.error.is_none() {
                self.error = Some(CaptureError { path: path.clone(), message: e.to_string() });
            }
        }
    }

    /// Renders `sp`'s headers into `self.buf` (the IPv4 header, then the TCP or UDP header)
    /// and its wire size into `self.wire_bytes`.
    fn render(&mut self, sp: &SimPacket) {
        let p: &Packet = &sp.pkt;
        let wire = p.wire_bytes();
        self.buf.clear();
        self.wire_bytes = wire;
        let ip_len = u16::try_from(wire).unwrap_or(u16::MAX);
        let mut ip = Ipv4Header {
            dscp: IpDscp::try_new(p.dscp & 0x3F).unwrap_or_default(),
            ecn: IpEcn::try_new(p.ecn as u8).unwrap_or_default(),
            total_len: ip_len,
            identification: 0,
            dont_fragment: true,
            more_fragments: false,
            fragment_offset: Default::default(),
            time_to_live: TTL,
            protocol: if p.quic.is_some() { IpNumber::UDP } else { IpNumber::TCP },
            header_checksum: 0,
            source: node_ipv4(p.src.node),
            destination: node_ipv4(p.dst.node),
            options: Default::default(),
        };
        ip.header_checksum = ip.calc_header_checksum();
        self.buf.extend_from_slice(&ip.to_bytes());
        if p.quic.is_some() {
            let udp = UdpHeader {
                source_port: p.src.port,
                destination_port: p.dst.port,
                length: ip_len.saturating_sub(20),
                checksum: 0,
            };
            self.buf.extend_from_slice(&udp.to_bytes());
            return;
        }
        let syn = p.flags.has(TcpFlags::SYN);
        let own_isn = isn(p.src, p.dst);
        let peer_isn = isn(p.dst, p.src);
        let mut opts = [0u8; 40];
        let mut n = 0;
        let mut put = |bytes: &[u8]| {
            opts[n..n + bytes.len()].copy_from_slice(bytes);
            n += bytes.len();
        };
        let tsval = ((sp.origin_ns() / 1_000_000) as u32).to_be_bytes();
        let window = if syn {
            let shift = window_shift(p.window_bytes);
            self.wscale.insert((p.src, p.dst), shift);
            if !p.syn_without_mss {
                let mss = self.mss.get(&p.src).copied().unwrap_or(DEFAULT_MSS_BYTES).to_be_bytes();
                put(&[2, 4, mss[0], mss[1]]);
            }
            put(&[4, 2]);
            put(&[8, 10, tsval[0], tsval[1], tsval[2], tsval[3], 0, 0, 0, 0]);
            put(&[1, 3, 3, shift]);
            p.window_bytes.min(u64::from(u16::MAX)) as u16
        } else {
            put(&[1, 1, 8, 10, tsval[0], tsval[1], tsval[2], tsval[3], 0, 0, 0, 0]);
            // TCP options end at 40 bytes (RFC 9293 §3.1). The simulator's size rule lets a
            // segment carry three SACK blocks and the priority option (44 bytes); a real
            // sender would send two blocks then, and so does the capture (the oldest block
            // goes; the packet's wire size stays the simulator's).
            let room = if p.priority_option.is_some() { 2 } else { 3 };
            let blocks = &p.sack_blocks()[..usize::from(p.sack_len).min(room)];
            if !blocks.is_empty() {
                put(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
                for b in blocks {
                    put(&peer_isn.wrapping_add(b.start as u32).to_be_bytes());
                    put(&peer_isn.wrapping_add(b.end as u32).to_be_bytes());
                }
            }
            if let Some(prio) = p.priority_option {
                put(&[1, 254, 3, prio]);
            }
            let shift = self.wscale.get(&(p.src, p.dst)).copied().unwrap_or(0);
            (p.window_bytes >> shift).min(u64::from(u16::MAX)) as u16
        };
        let mut tcp = TcpHeader::new(p.src.port, p.dst.port, own_isn.wrapping_add(p.seq as u32), window);
        let f = p.flags;
        tcp.fin = f.has(TcpFlags::FIN);
        tcp.syn = syn;
        tcp.rst = f.has(TcpFlags::RST);
        tcp.psh = f.has(TcpFlags::PSH);
        tcp.ack = f.has(TcpFlags::ACK);
        tcp.ece = f.has(TcpFlags::ECE);
        tcp.cwr = f.has(TcpFlags::CWR);
        if tcp.ack {
            tcp.acknowledgment_number = peer_isn.wrapping_add(p.ack as u32);
        }
        // The options above are at most 40 bytes (the simulator's own size rule); should
        // they not fit, the header goes without them rather than stopping the run.
        let _ = tcp.set_options_raw(&opts[..n]);
        self.buf.extend_from_slice(&tcp.to_bytes());
    }

    /// Packets written per link, in link order.
    pub fn counts(&self) -> Vec<LinkCaptureCount> {
        self.links
            .iter()
            .zip(&self.link_names)
            .map(|(s, name)| LinkCaptureCount {
                link: name.clone(),
                captured_file: self.files[s.file].captured_path.clone(),
                captured_packets: s.captured_packets,
                dropped_file: self.files[s.file].dropped_path.clone(),
                dropped_packets: s.dropped_packets,
            })
            .collect()
    }

    /// Flushes every file. Returns the files written (captured, then drops, per node pair),
    /// or the first error met while writing.
    pub fn finish(self) -> Result<Vec<PathBuf>, CaptureError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut paths = Vec::new();
        for f in self.files {
            for (w, path) in [(f.captured, f.captured_path), (f.dropped, f.dropped_path)] {
                use std::io::Write;
                w.into_inner().flush().map_err(|e| CaptureError { path: path.clone(), message: e.to_string() })?;
                paths.push(path);
            }
        }
        Ok(paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders one packet and returns its captured bytes.
    fn rendered(p: Packet) -> Vec<u8> {
        let mut c = Capture {
            files: Vec::new(),
            links: Vec::new(),
            link_names: Vec::new(),
            wscale: HashMap::new(),
            mss: HashMap::new(),
            buf: Vec::new(),
            wire_bytes: 0,
            error: None,
        };
        c.render(&SimPacket::new(p, 0));
        assert!(c.buf.len() as u32 <= c.wire_bytes);
        c.buf
    }

    #[test]
    fn options_never_pass_40_bytes() {
        use triage_core::wire::SackBlock;
        let block = SackBlock { start: 1000, end: 2000 };
        let p = Packet {
            flags: TcpFlags(TcpFlags::ACK),
            sack: [block; 3],
            sack_len: 3,
            priority_option: Some(2),
            payload_bytes: 100,
            ..Default::default()
        };
        // 12 timestamp + 4 + 2 x 8 SACK + 4 priority = 36 bytes of options.
        let b = rendered(p.clone());
        assert_eq!(b.len(), 20 + 20 + 36);
        assert_eq!(&b[40 + 12..40 + 16], &[1, 1, 5, 18]);
        assert_eq!(&b[40 + 32..], &[1, 254, 3, 2]);
        // Without the priority option all three blocks fit: 12 + 4 + 24 = 40.
        let b = rendered(Packet { priority_option: None, ..p });
        assert_eq!(b.len(), 20 + 20 + 40);
        assert_eq!(&b[40 + 12..40 + 16], &[1, 1, 5, 26]);
    }

    #[test]
    fn addresses_and_shifts() {
        assert_eq!(node_ipv4(0), [10, 0, 0, 1]);
        assert_eq!(node_ipv4(255), [10, 0, 1, 0]);
        assert_eq!(window_shift(65_535), 0);
        assert_eq!(window_shift(65_536), 1);
        assert_eq!(window_shift(1 << 20), 5, "1 MiB >> 5 = 32768");
        assert_eq!(window_shift(u64::MAX), 14);
        let (a, b) = (Addr { node: 0, port: 40000 }, Addr { node: 3, port: 80 });
        assert_ne!(isn(a, b), isn(b, a));
        assert_eq!(isn(a, b), isn(a, b));
    }
}
