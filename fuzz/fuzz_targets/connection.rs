//! Feeds arbitrary packet sequences to a connection, TCP or QUIC mode (issue 10: "the core
//! trusts its peer"; real sockets will depend on this).
//!
//! The input drives a client and a server joined by a 10 ms path through a script of
//! operations: time steps (the queued packets arrive, timers fire), application writes and
//! closes, losses, duplicates and reordering of real packets, real packets with one field
//! mutated (sequence and acknowledgment numbers, windows, SACK blocks, flags, payload,
//! message chunks; in QUIC mode packet numbers, ACK ranges, stream offsets, DATAGRAM chunk
//! indices and counts, flow-control limits, ...), wholly arbitrary packets, and, rarely, a
//! clock that steps back (a broken contract that must still not panic). Overflow checks are
//! on in fuzz builds. Nothing is asserted beyond "no panic, no hang, no runaway memory"
//! (libFuzzer's `-timeout` and `-rss_limit_mb`).
//!
//! Run with `cargo fuzz run --sanitizer none connection` from the repository root.
#![no_main]

use std::collections::VecDeque;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use triage_core::cc::ControllerKind;
use triage_core::quic::{AckFrame, Frame, PrioritySignals, QuicDatagram, QuicPacket, Reliability, SpaceId};
use triage_core::sched::{CatsConfig, Chunks, MessageMeta, MsgChunk};
use triage_core::wire::{Addr, Ecn, Packet, SackBlock, TcpFlags};
use triage_core::{ConnectionConfig, Endpoint, LoadShedding, SchedulerKind, TransportMode};

const MS: u64 = 1_000_000;
const CLIENT: Addr = Addr { node: 1, port: 40000 };
const SERVER: Addr = Addr { node: 2, port: 443 };
/// Operations per input: bounds the run time of one input.
const MAX_OPS: usize = 400;

struct Net {
    now: u64,
    client: Endpoint,
    server: Option<Endpoint>,
    server_cfg: ConnectionConfig,
    /// In flight towards the server [0] and the client [1]: (arrival, packet).
    wire: [VecDeque<(u64, Packet)>; 2],
    /// Recent packets each side sent, for replays and mutations.
    recent: [VecDeque<Packet>; 2],
    next_msg: u32,
}

impl Net {
    fn end(&mut self, to_server: bool) -> Option<&mut Endpoint> {
        if to_server {
            self.server.as_mut()
        } else {
            Some(&mut self.client)
        }
    }

    fn deliver(&mut self, to_server: bool, now: u64, p: &Packet) {
        if to_server && self.server.is_none() {
            self.server = Endpoint::accept(self.server_cfg.clone(), now, p);
            return;
        }
        if let Some(e) = self.end(to_server) {
            e.handle_packet(now, p);
        }
    }

    /// Drains transmits and events of both ends.
    fn flush(&mut self) {
        let now = self.now;
        for (k, to_server) in [(0usize, true), (1, false)] {
            // k = 0: packets the client sends (towards the server).
            let sender = if to_server { Some(&mut self.client) } else { self.server.as_mut() };
            let Some(sender) = sender else { continue };
            let mut n = 0;
            while let Some(p) = sender.poll_transmit(now) {
                self.recent[k].push_back(p.clone());
                if self.recent[k].len() > 32 {
                    self.recent[k].pop_front();
                }
                self.wire[k].push_back((now + 10 * MS, p));
                n += 1;
                if n > 10_000 {
                    break; // a connection that never stops sending at one instant
                }
            }
            while sender.poll_event().is_some() {}
        }
    }

    /// Advances to `to`: packets due arrive, timers fire, in time order.
    fn run_until(&mut self, to: u64) {
        for _ in 0..10_000 {
            let mut next = u64::MAX;
            for w in &self.wire {
                if let Some((t, _)) = w.front() {
                    next = next.min(*t);
                }
            }
            if let Some(t) = self.client.poll_timeout() {
                next = next.min(t);
            }
            if let Some(t) = self.server.as_ref().and_then(|s| s.poll_timeout()) {
                next = next.min(t);
            }
            if next > to {
                break;
            }
            self.now = self.now.max(next);
            for (k, to_server) in [(0usize, true), (1, false)] {
                while self.wire[k].front().is_some_and(|(t, _)| *t <= self.now) {
                    let (_, p) = self.wire[k].pop_front().unwrap();
                    let now = self.now;
                    self.deliver(to_server, now, &p);
                }
            }
            let now = self.now;
            if self.client.poll_timeout().is_some_and(|t| t <= now) {
                self.client.handle_timeout(now);
            }
            if let Some(s) = self.server.as_mut() {
                if s.poll_timeout().is_some_and(|t| t <= now) {
                    s.handle_timeout(now);
                }
            }
            self.flush();
        }
        self.now = self.now.max(to);
    }
}

fn config(u: &mut Unstructured, quic: bool) -> Result<ConnectionConfig> {
    let controller = match u.int_in_range(0..=5u8)? {
        0 => ControllerKind::NewReno,
        1 => ControllerKind::Bbr,
        2 => ControllerKind::Cubic,
        3 => ControllerKind::NewRenoEcn,
        4 => ControllerKind::Eecn,
        _ => ControllerKind::Vcp,
    };
    let mss_bytes = u.int_in_range(64..=1448u32)?;
    let mut cfg = ConnectionConfig {
        controller,
        mss_bytes,
        initial_window_segments: u.int_in_range(1..=20)?,
        delayed_ack_segments: u.int_in_range(1..=4)?,
        min_rto_ns: u.int_in_range(1..=1000u64)? * MS,
        receive_buffer_bytes: u.int_in_range(mss_bytes as u64..=1u64 << 20)?,
        priority_option: !quic && u.arbitrary()?,
        mode: if quic { TransportMode::Quic } else { TransportMode::Tcp },
        ..Default::default()
    };
    if u.arbitrary()? {
        cfg.scheduler = SchedulerKind::Cats(CatsConfig::default());
    }
    if !quic && u.arbitrary()? {
        cfg.load_shedding = Some(LoadShedding::default());
    }
    // TCP mode's Linux options: RACK-TLP, Linux's RTO, Linux's receiver ACKs; ns-3's rules
    // (SYN options, ssthresh's flight, PRR's bound, its receive window and pipe); a send
    // buffer.
    if !quic {
        cfg.rack = u.arbitrary()?;
        cfg.linux_rto = u.arbitrary()?;
        cfg.linux_ack = u.arbitrary()?;
        cfg.ns3_compat = u.arbitrary()?;
        // A send buffer (with ns3_compat: ns-3's refills, NextSeg() rule 3 and its pipe).
        if u.arbitrary()? {
            cfg.send_buffer_bytes = Some(u.int_in_range(cfg.mss_bytes as u64..=1u64 << 20)?);
        }
    }
    if quic {
        cfg.quic.stream_receive_window_bytes = u.int_in_range(1000..=2_000_000)?;
        cfg.quic.max_streams = u.int_in_range(1..=100)?;
        cfg.ecn = Some(*u.choose(&[
            triage_core::ecn::EcnMode::Off,
            triage_core::ecn::EcnMode::Classic,
            triage_core::ecn::EcnMode::Eecn,
        ])?);
        if u.arbitrary()? {
            cfg.quic.datagram_framing = triage_core::quic::DatagramFraming::Http3;
        }
    }
    debug_assert!(cfg.validate().is_ok());
    Ok(cfg)
}

fn any_u64(u: &mut Unstructured) -> Result<u64> {
    // Small values reach the interesting states; edges find overflows.
    Ok(match u.int_in_range(0..=3u8)? {
        0 => u.int_in_range(0..=100_000)?,
        1 => u64::MAX - u.int_in_range(0..=3)?,
        2 => (1u64 << 62) - u.int_in_range(0..=3)?,
        _ => u.arbitrary()?,
    })
}

fn any_chunk(u: &mut Unstructured) -> Result<MsgChunk> {
    Ok(MsgChunk::new(u.int_in_range(0..=8)?, any_u64(u)?, u.int_in_range(0..=3000)?, any_u64(u)?, u.arbitrary()?))
}

fn any_sack(u: &mut Unstructured) -> Result<SackBlock> {
    Ok(SackBlock { start: any_u64(u)?, end: any_u64(u)? })
}

/// A TCP-mode packet with one field of a real one changed, or an arbitrary one.
fn tcp_packet(u: &mut Unstructured, base: Option<&Packet>, to_server: bool) -> Result<Packet> {
    let (src, dst) = if to_server { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
    let mut p = match base {
        Some(b) => b.clone(),
        None => Packet { src, dst, ..Default::default() },
    };
    let fields = if base.is_some() { 1 } else { u.int_in_range(1..=8)? };
    for _ in 0..fields {
        match u.int_in_range(0..=8u8)? {
            0 => p.seq = if u.arbitrary()? { p.seq.wrapping_add(u.int_in_range(0..=100_000)?) } else { any_u64(u)? },
            1 => p.ack = if u.arbitrary()? { p.ack.wrapping_add(u.int_in_range(0..=100_000)?) } else { any_u64(u)? },
            2 => p.window_bytes = any_u64(u)?,
            3 => p.flags = TcpFlags(u.arbitrary()?),
            4 => p.payload_bytes = u.int_in_range(0..=70_000)?,
            5 => {
                let n = u.int_in_range(0..=4usize)?;
                p.chunks = (0..n).map(|_| any_chunk(u)).collect::<Result<Chunks>>()?;
            }
            6 => {
                p.sack_len = u.int_in_range(0..=3)?;
                for b in p.sack.iter_mut() {
                    *b = any_sack(u)?;
                }
            }
            7 => p.ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][u.int_in_range(0..=3usize)?],
            _ => p.priority_option = u.arbitrary()?,
        }
    }
    Ok(p)
}

fn any_frame(u: &mut Unstructured) -> Result<Frame> {
    Ok(match u.int_in_range(0..=13u8)? {
        0 => Frame::Padding(u.int_in_range(0..=1500)?),
        1 => Frame::Ping,
        2 => {
            let n = u.int_in_range(0..=4usize)?;
            let ranges = (0..n).map(|_| Ok((any_u64(u)?, any_u64(u)?))).collect::<Result<Vec<_>>>()?;
            let ecn = if u.arbitrary()? { Some([any_u64(u)?, any_u64(u)?, any_u64(u)?]) } else { None };
            Frame::Ack(AckFrame {
                ranges: ranges.into(),
                delay_encoded: any_u64(u)?,
                ecn,
                // PATH_ACK for paths that may or may not exist.
                path: if u.arbitrary()? { Some(u.int_in_range(0..=2)?) } else { None },
            })
        }
        3 => Frame::Crypto { offset: any_u64(u)?, len: u.int_in_range(0..=3000)? },
        4 => Frame::Stream {
            stream_id: any_u64(u)?,
            stream_base: any_u64(u)?,
            chunk: any_chunk(u)?,
            fin: u.arbitrary()?,
        },
        5 => Frame::Datagram {
            msg_id: u.int_in_range(0..=8)?,
            index: u.arbitrary()?,
            count: u.arbitrary()?,
            data_len: u.int_in_range(0..=1500)?,
            msg_len_bytes: any_u64(u)?,
            priority: u.arbitrary()?,
            header_len: u.int_in_range(0..=64)?,
            quarter_stream_id: if u.arbitrary()? { Some(any_u64(u)?) } else { None },
        },
        6 => Frame::MaxData(any_u64(u)?),
        7 => Frame::MaxStreamData { stream_id: any_u64(u)?, max: any_u64(u)? },
        8 => Frame::MaxStreams { bidi: u.arbitrary()?, max: any_u64(u)? },
        9 => Frame::HandshakeDone,
        10 => Frame::NewConnectionId { seq: any_u64(u)?, cid_len: u.int_in_range(0..=20)? },
        11 => Frame::RetireConnectionId { seq: any_u64(u)? },
        12 => Frame::GoAway { stream_id: any_u64(u)?, reliable_messages: any_u64(u)? },
        _ => Frame::ConnectionClose,
    })
}

fn space(u: &mut Unstructured) -> Result<SpaceId> {
    Ok(SpaceId::ALL[u.int_in_range(0..=2usize)?])
}

/// Changes one thing in a real frame (keeping its kind), or replaces it.
fn mutate_frame(u: &mut Unstructured, f: &mut Frame) -> Result<()> {
    match f {
        Frame::Ack(a) => match u.int_in_range(0..=2u8)? {
            0 if !a.ranges.is_empty() => {
                let i = u.choose_index(a.ranges.len())?;
                a.ranges[i] = (any_u64(u)?, any_u64(u)?);
            }
            1 => a.delay_encoded = any_u64(u)?,
            _ => a.ranges.push((any_u64(u)?, any_u64(u)?)),
        },
        Frame::Stream { stream_id, stream_base, chunk, fin } => match u.int_in_range(0..=3u8)? {
            0 => *stream_id = any_u64(u)?,
            1 => *stream_base = any_u64(u)?,
            2 => *chunk = any_chunk(u)?,
            _ => *fin = !*fin,
        },
        Frame::Datagram { index, count, msg_len_bytes, .. } => match u.int_in_range(0..=2u8)? {
            0 => *index = u.arbitrary()?,
            1 => *count = u.arbitrary()?,
            _ => *msg_len_bytes = any_u64(u)?,
        },
        Frame::Crypto { offset, len } => {
            *offset = any_u64(u)?;
            *len = u.int_in_range(0..=3000)?;
        }
        _ => *f = any_frame(u)?,
    }
    Ok(())
}

/// A QUIC-mode datagram with one thing of a real one changed, or an arbitrary one.
fn quic_packet(u: &mut Unstructured, base: Option<&Packet>, to_server: bool) -> Result<Packet> {
    let (src, dst) = if to_server { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
    if let Some(b) = base.filter(|b| b.quic.as_ref().is_some_and(|q| !q.packets.is_empty())) {
        let mut p = b.clone();
        let dg = p.quic.as_mut().unwrap();
        let k = u.choose_index(dg.packets.len())?;
        let qp = &mut dg.packets[k];
        match u.int_in_range(0..=4u8)? {
            0 => qp.pn = if u.arbitrary()? { qp.pn.wrapping_add(u.int_in_range(0..=1000)?) } else { any_u64(u)? },
            1 => qp.space = space(u)?,
            2 if !qp.frames.is_empty() => {
                let i = u.choose_index(qp.frames.len())?;
                mutate_frame(u, &mut qp.frames[i])?;
            }
            3 => qp.frames.push(any_frame(u)?),
            _ => p.ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce][u.int_in_range(0..=3usize)?],
        }
        return Ok(p);
    }
    let n = u.int_in_range(1..=3usize)?;
    let mut packets = Vec::new();
    for _ in 0..n {
        let frames = (0..u.int_in_range(0..=6usize)?).map(|_| any_frame(u)).collect::<Result<Vec<_>>>()?;
        packets.push(QuicPacket {
            space: space(u)?,
            pn: any_u64(u)?,
            frames: frames.into(),
            size_bytes: u.int_in_range(0..=1500)?,
            path: u.int_in_range(0..=2)?,
        });
    }
    let payload_bytes = u.int_in_range(0..=1500)?;
    Ok(Packet {
        src,
        dst,
        quic: Some(Box::new(QuicDatagram { packets: packets.into_iter().collect(), payload_bytes })),
        ..Default::default()
    })
}

fn run(u: &mut Unstructured) -> Result<()> {
    let quic = u.arbitrary::<bool>()?;
    let ccfg = config(u, quic)?;
    let scfg = config(u, quic)?;
    let mut net = Net {
        now: 0,
        client: Endpoint::connect(ccfg, CLIENT, SERVER),
        server: None,
        server_cfg: scfg,
        wire: Default::default(),
        recent: Default::default(),
        next_msg: 0,
    };
    net.flush();
    for _ in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        match u.int_in_range(0..=10u8)? {
            // Time passes.
            0..=2 => {
                let step = u.int_in_range(0..=2_000u64)? * MS / 10;
                let to = net.now.saturating_add(step);
                net.run_until(to);
            }
            // The application writes (reliable or, in QUIC mode, unreliable) or closes.
            3 => {
                let on_server = u.arbitrary::<bool>()?;
                let len = u.int_in_range(1..=300_000u64)?;
                let prio = u.int_in_range(0..=4u8)?;
                let unreliable = quic && u.arbitrary::<bool>()?;
                let id = net.next_msg;
                net.next_msg += 1;
                let now = net.now;
                if let Some(e) = net.end(on_server) {
                    match e.quic_mut() {
                        Some(q) if unreliable => q.write_message(
                            now,
                            MessageMeta { id, len_bytes: len, priority: prio },
                            PrioritySignals::default(),
                            Reliability::Unreliable,
                        ),
                        _ => e.write(now, id, len, Some(prio)),
                    }
                }
            }
            4 => {
                let on_server = u.arbitrary::<bool>()?;
                if let Some(e) = net.end(on_server) {
                    e.close();
                }
            }
            // The path loses, duplicates or reorders a packet in flight.
            5 => {
                let k = u.int_in_range(0..=1usize)?;
                if !net.wire[k].is_empty() {
                    let i = u.choose_index(net.wire[k].len())?;
                    match u.int_in_range(0..=2u8)? {
                        0 => drop(net.wire[k].remove(i)),
                        1 => {
                            let dup = net.wire[k][i].clone();
                            net.wire[k].push_back(dup);
                        }
                        _ => {
                            let j = u.choose_index(net.wire[k].len())?;
                            let (ti, tj) = (net.wire[k][i].0, net.wire[k][j].0);
                            net.wire[k].swap(i, j);
                            net.wire[k][i].0 = ti;
                            net.wire[k][j].0 = tj;
                        }
                    }
                }
            }
            // A real packet with one field changed, replayed, or an arbitrary packet, arrives now.
            6..=9 => {
                let to_server = u.arbitrary::<bool>()?;
                let k = if to_server { 0 } else { 1 };
                let base = if net.recent[k].is_empty() || u.int_in_range(0..=3u8)? == 0 {
                    None
                } else {
                    let i = u.choose_index(net.recent[k].len())?;
                    Some(net.recent[k][i].clone())
                };
                let replay = base.is_some() && u.int_in_range(0..=3u8)? == 0;
                let p = match (replay, base) {
                    (true, Some(b)) => b,
                    (_, b) if quic => quic_packet(u, b.as_ref(), to_server)?,
                    (_, b) => tcp_packet(u, b.as_ref(), to_server)?,
                };
                let now = net.now;
                net.deliver(to_server, now, &p);
                net.flush();
            }
            // A broken clock: one input `back` earlier than the last (the contract says `now`
            // never decreases; the core must still not panic).
            _ => {
                let back = u.int_in_range(0..=500u64)? * MS;
                let then = net.now.saturating_sub(back);
                let to_server = u.arbitrary::<bool>()?;
                let k = if to_server { 0 } else { 1 };
                if let Some(p) = net.recent[k].back().cloned() {
                    net.deliver(to_server, then, &p);
                }
                if let Some(e) = net.end(to_server) {
                    e.handle_timeout(then);
                    while e.poll_transmit(then).is_some() {}
                }
            }
        }
    }
    // Let whatever is left run out (bounded).
    let to = net.now.saturating_add(120_000 * MS);
    net.run_until(to);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
