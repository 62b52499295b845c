//! The TCP wire format, as a peer sees it: arbitrary TCP segments (any flags, sequence and
//! acknowledgment numbers near or far from the right ones, windows, SACK blocks, payload
//! lengths and message chunks, ECN codepoints, the CATS priority option) fed to both ends of
//! an established TCP-mode connection, between real exchanges over a lossy 5 ms path.
//!
//! Unlike `connection` (no panic, both modes), this target checks what each end *emits*,
//! since that is what a real peer would parse:
//! - the wire size is the IP and TCP header (with padded options) plus the payload;
//! - a data segment's message chunks add up to its payload, and its sequence space does not
//!   overflow;
//! - SACK blocks are non-empty and lie above the cumulative acknowledgment (RFC 2018 §3);
//! - the cumulative acknowledgment never goes back, and neither does the right edge of the
//!   window (ack + window, RFC 9293 §3.8.6).
//!
//! Run with `cargo fuzz run --sanitizer none tcp_segment` from the repository root.
#![no_main]

use std::collections::VecDeque;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use triage_core::cc::ControllerKind;
use triage_core::sched::{Chunks, MessageMeta, MsgChunk};
use triage_core::wire::{Addr, Ecn, Packet, SackBlock, TcpFlags, IP_HEADER_BYTES, TCP_BASE_HEADER_BYTES};
use triage_core::{Connection, ConnectionConfig};

const MS: u64 = 1_000_000;
const CLIENT: Addr = Addr { node: 1, port: 40000 };
const SERVER: Addr = Addr { node: 2, port: 80 };
const MAX_OPS: usize = 300;

/// What one end has emitted so far, for the monotonicity checks.
#[derive(Default)]
struct Seen {
    ack: u64,
    right_edge: u64,
    /// The last segment it sent (a template for forged ones in the other direction).
    last: Option<Packet>,
}

struct Net {
    now: u64,
    ends: [Connection; 2],
    seen: [Seen; 2],
    /// In flight towards end k: (arrival, packet).
    wire: [VecDeque<(u64, Packet)>; 2],
    /// Loss per mille of real packets, drawn from a xorshift stream seeded by the input.
    loss: u64,
    rng: u64,
    next_msg: u32,
}

/// The checks on every segment an end emits.
fn check_emitted(seen: &mut Seen, p: &Packet) {
    assert!(p.quic.is_none());
    let options = p.tcp_option_bytes();
    assert_eq!(options % 4, 0);
    assert_eq!(p.wire_bytes(), IP_HEADER_BYTES + TCP_BASE_HEADER_BYTES + options + p.payload_bytes);
    if p.payload_bytes > 0 {
        let sum: u64 = p.chunks.iter().map(|c| c.len_bytes() as u64).sum();
        assert_eq!(sum, p.payload_bytes as u64, "chunks {:?}", p.chunks);
    }
    assert!(p.seq.checked_add(p.seq_len()).is_some());
    for b in p.sack_blocks() {
        assert!(b.start < b.end, "empty SACK block {b:?} in {p:?}");
        assert!(b.start > p.ack, "SACK block {b:?} at or below the cumulative ACK in {p:?}");
    }
    if p.flags.has(TcpFlags::ACK) && !p.flags.has(TcpFlags::SYN) {
        assert!(p.ack >= seen.ack, "cumulative ACK went back: {} after {}", p.ack, seen.ack);
        let edge = p.ack.saturating_add(p.window_bytes);
        assert!(edge >= seen.right_edge, "window edge moved left: {edge} after {}", seen.right_edge);
        seen.ack = p.ack;
        seen.right_edge = edge;
    }
    seen.last = Some(p.clone());
}

impl Net {
    /// Drains both ends' transmits onto the path (with loss) and their events.
    fn flush(&mut self) {
        for k in 0..2 {
            let mut n = 0;
            while let Some(p) = self.ends[k].poll_transmit(self.now) {
                check_emitted(&mut self.seen[k], &p);
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                if self.rng % 1000 >= self.loss {
                    self.wire[1 - k].push_back((self.now + 5 * MS, p));
                }
                n += 1;
                if n > 20_000 {
                    break;
                }
            }
            while self.ends[k].poll_event().is_some() {}
        }
    }

    /// Advances time to `to`, delivering packets and firing timers on the way.
    fn run_until(&mut self, to: u64) {
        for _ in 0..2_000 {
            let mut next = to;
            for k in 0..2 {
                if let Some(t) = self.ends[k].poll_timeout() {
                    next = next.min(t);
                }
                if let Some((t, _)) = self.wire[k].front() {
                    next = next.min(*t);
                }
            }
            self.now = self.now.max(next);
            for k in 0..2 {
                while self.wire[k].front().is_some_and(|(t, _)| *t <= self.now) {
                    let (_, p) = self.wire[k].pop_front().unwrap();
                    self.ends[k].handle_packet(self.now, &p);
                }
                if self.ends[k].poll_timeout().is_some_and(|t| t <= self.now) {
                    self.ends[k].handle_timeout(self.now);
                }
            }
            self.flush();
            if self.now >= to {
                break;
            }
        }
    }
}

fn near(u: &mut Unstructured, base: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=4u8)? {
        0 => base,
        1 => base.saturating_add(u.int_in_range(0..=200_000)?),
        2 => base.saturating_sub(u.int_in_range(0..=200_000)?),
        3 => u64::MAX - u.int_in_range(0..=3)?,
        _ => u.arbitrary()?,
    })
}

/// A segment towards end `k`, built on what the other end last sent (or from nothing).
fn forged(u: &mut Unstructured, net: &Net, k: usize) -> Result<Packet> {
    let (src, dst) = if k == 1 { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
    let mut p = match (&net.seen[1 - k].last, u.arbitrary::<bool>()?) {
        (Some(b), true) => b.clone(),
        _ => Packet { src, dst, flags: TcpFlags(TcpFlags::ACK), ..Default::default() },
    };
    p.flags = TcpFlags(match u.int_in_range(0..=3u8)? {
        0 => TcpFlags::ACK,
        1 => TcpFlags::ACK | TcpFlags::PSH,
        2 => TcpFlags::ACK | TcpFlags::FIN,
        _ => u.arbitrary()?,
    });
    p.seq = near(u, p.seq)?;
    p.ack = near(u, p.ack)?;
    p.window_bytes = match u.int_in_range(0..=3u8)? {
        0 => p.window_bytes,
        1 => 0,
        2 => u.int_in_range(1..=1u64 << 30)?,
        _ => u.arbitrary()?,
    };
    p.payload_bytes = match u.int_in_range(0..=3u8)? {
        0 => 0,
        1 => 1448,
        2 => u.int_in_range(1..=1448)?,
        _ => u.int_in_range(0..=70_000)?,
    };
    let n = u.int_in_range(0..=3usize)?;
    let mut chunks = Chunks::new();
    for _ in 0..n {
        chunks.push(MsgChunk::new(u.int_in_range(0..=8)?, near(u, 0)?, u.int_in_range(0..=3000)?, near(u, 100_000)?, u.arbitrary()?));
    }
    if u.arbitrary()? {
        p.chunks = chunks;
    }
    p.sack_len = u.int_in_range(0..=p.sack.len() as u8)?;
    for i in 0..p.sack.len() {
        let start = near(u, p.ack)?;
        let end = if u.arbitrary()? { start.saturating_add(u.int_in_range(0..=20_000)?) } else { near(u, start)? };
        p.sack[i] = SackBlock { start, end };
    }
    p.ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][u.int_in_range(0..=3usize)?];
    p.priority_option = u.arbitrary()?;
    Ok(p)
}

fn run(u: &mut Unstructured) -> Result<()> {
    let controller = match u.int_in_range(0..=3u8)? {
        0 => ControllerKind::NewReno,
        1 => ControllerKind::Bbr,
        2 => ControllerKind::Cubic,
        _ => ControllerKind::NewRenoEcn,
    };
    let mss_bytes = u.int_in_range(64..=1448u32)?;
    let cfg = ConnectionConfig {
        controller,
        mss_bytes,
        initial_window_segments: u.int_in_range(1..=20)?,
        delayed_ack_segments: u.int_in_range(1..=3)?,
        min_rto_ns: u.int_in_range(1..=300u64)? * MS,
        receive_buffer_bytes: u.int_in_range(mss_bytes as u64..=1u64 << 20)?,
        priority_option: u.arbitrary()?,
        linux_ack: u.arbitrary()?,
        ns3_compat: u.arbitrary()?,
        send_buffer_bytes: if u.arbitrary()? { Some(u.int_in_range(mss_bytes as u64..=1u64 << 20)?) } else { None },
        ..Default::default()
    };
    // The handshake as real packets.
    let mut client = Connection::connect(cfg.clone(), CLIENT, SERVER);
    let syn = client.poll_transmit(0).expect("a SYN");
    let Some(server) = Connection::accept(cfg, MS, &syn) else { return Ok(()) };
    let mut net = Net {
        now: MS,
        ends: [client, server],
        seen: [Seen::default(), Seen::default()],
        wire: [VecDeque::new(), VecDeque::new()],
        loss: u.int_in_range(0..=300)?,
        rng: u.arbitrary::<u64>()? | 1,
        next_msg: 0,
    };
    net.flush();
    net.run_until(20 * MS);
    for _ in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        match u.int_in_range(0..=5u8)? {
            0 | 1 => {
                let k = u.int_in_range(0..=1usize)?;
                let p = forged(u, &net, k)?;
                let now = net.now;
                net.ends[k].handle_packet(now, &p);
                net.flush();
            }
            2 => {
                let k = u.int_in_range(0..=1usize)?;
                net.next_msg += 1;
                let msg = MessageMeta {
                    id: net.next_msg,
                    len_bytes: u.int_in_range(1..=300_000)?,
                    priority: u.int_in_range(0..=4)?,
                };
                let now = net.now;
                net.ends[k].write_message(now, msg);
                net.flush();
            }
            3 => {
                let k = u.int_in_range(0..=1usize)?;
                net.ends[k].close();
                net.flush();
            }
            _ => {
                let to = net.now + u.int_in_range(1..=300u64)? * MS;
                net.run_until(to);
            }
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
