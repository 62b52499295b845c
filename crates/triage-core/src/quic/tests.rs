//! Packet-level tests of a client and a server connection wired back to back: a link of fixed
//! rate and one-way delay each way, and a drop rule the test chooses.

use super::config::DatagramFraming;
use super::connection::{PrioritySignals, QuicConnection, Reliability};
use super::packet::{Frame, SpaceId};
use super::streams::StreamChoice;
use crate::cc::ControllerKind;
use crate::config::{ConnectionConfig, TransportMode};
use crate::connection::Event;
use crate::sched::MessageMeta;
use crate::wire::quic::chunk;
use crate::wire::{Addr, Ecn, Packet};

const CLIENT: Addr = Addr { node: 1, port: 4000 };
const SERVER: Addr = Addr { node: 2, port: 443 };
const MS: u64 = 1_000_000;

/// What one end saw: message completions with their time.
#[derive(Default, Debug)]
struct Seen {
    completed: Vec<(u32, u64)>,
    /// `MessageBytes` events: (message, bytes, time).
    watermarks: Vec<(u32, u64, u64)>,
}

/// Drops a packet when true: (direction, index of the packet in that direction, packet).
type DropRule = Box<dyn FnMut(usize, u64, &Packet) -> bool>;
/// Extra one-way delay (reordering) and whether to deliver a second copy: (direction, index).
type Disorder = Box<dyn FnMut(usize, u64) -> (u64, bool)>;
/// What the server's application does once connected.
type OnConnected = Box<dyn FnMut(&mut QuicConnection, u64)>;

/// Rewrites a datagram's IP ECN field as a router on the path would (side, datagram number).
type Remark = Box<dyn FnMut(usize, u64, &mut Packet)>;

struct Pair {
    cfg: ConnectionConfig,
    client: QuicConnection,
    server: Option<QuicConnection>,
    now: u64,
    owd_ns: u64,
    rate_bps: u64,
    /// Per direction (0: to the server, 1: to the client): when the link is free.
    busy_until: [u64; 2],
    wire: Vec<(u64, usize, Packet)>,
    drop: DropRule,
    remark: Remark,
    disorder: Disorder,
    sent: [u64; 2],
    seen: [Seen; 2],
    /// Frames each end sent (0: client, 1: server), with the time they were sent.
    frames: [Vec<(u64, Frame)>; 2],
    /// Frames delivered to each end (0: client, 1: server), duplicates included.
    delivered: [Vec<Frame>; 2],
    /// When each frame of `delivered` arrived.
    delivered_at: [Vec<u64>; 2],
    /// Called when the server first reports the connection established.
    on_server_connected: Option<OnConnected>,
    /// The server's (time, window, ssthresh, controller state) after each packet it handled,
    /// and (time, window, ssthresh, "timeout") after each of its timers.
    server_cc: Vec<(u64, u64, u64, &'static str)>,
}

fn config(window: u64, max_streams: u64) -> ConnectionConfig {
    let mut cfg =
        ConnectionConfig { mode: TransportMode::Quic, controller: ControllerKind::NewReno, ..Default::default() };
    cfg.quic.stream_receive_window_bytes = window;
    cfg.quic.max_streams = max_streams;
    cfg
}

impl Pair {
    fn new(cfg: ConnectionConfig, rate_bps: u64, owd_ns: u64) -> Self {
        let client = QuicConnection::connect(cfg.clone(), CLIENT, SERVER);
        Self {
            cfg,
            client,
            server: None,
            now: 0,
            owd_ns,
            rate_bps,
            busy_until: [0; 2],
            wire: Vec::new(),
            drop: Box::new(|_, _, _| false),
            remark: Box::new(|_, _, _| {}),
            disorder: Box::new(|_, _| (0, false)),
            sent: [0; 2],
            seen: Default::default(),
            frames: Default::default(),
            delivered: Default::default(),
            delivered_at: Default::default(),
            on_server_connected: None,
            server_cc: Vec::new(),
        }
    }

    fn transmit(&mut self) {
        for side in 0..2 {
            loop {
                let conn = if side == 0 { Some(&mut self.client) } else { self.server.as_mut() };
                let Some(conn) = conn else { break };
                let Some(p) = conn.poll_transmit(self.now) else { break };
                for qp in &p.quic.as_ref().expect("quic").packets {
                    let now = self.now;
                    self.frames[side].extend(qp.frames.iter().map(|f| (now, f.clone())));
                }
                let n = self.sent[side];
                self.sent[side] += 1;
                if (self.drop)(side, n, &p) {
                    continue;
                }
                let mut p = p;
                (self.remark)(side, n, &mut p);
                let bytes = p.quic.as_ref().expect("quic").payload_bytes as u64 + 28;
                let start = self.busy_until[side].max(self.now);
                let done = start + bytes * 8 * 1_000_000_000 / self.rate_bps;
                self.busy_until[side] = done;
                let (extra_ns, twice) = (self.disorder)(side, n);
                if twice {
                    self.wire.push((done + self.owd_ns + extra_ns + 1, side, p.clone()));
                }
                self.wire.push((done + self.owd_ns + extra_ns, side, p));
            }
        }
    }

    fn drain_events(&mut self) {
        while let Some(e) = self.client.poll_event() {
            match e {
                Event::MessageComplete { msg_id, .. } => self.seen[0].completed.push((msg_id, self.now)),
                Event::MessageBytes { msg_id, bytes } => self.seen[0].watermarks.push((msg_id, bytes, self.now)),
                _ => {}
            }
        }
        let mut connected = false;
        if let Some(s) = self.server.as_mut() {
            while let Some(e) = s.poll_event() {
                match e {
                    Event::MessageComplete { msg_id, .. } => self.seen[1].completed.push((msg_id, self.now)),
                    Event::Connected => connected = true,
                    _ => {}
                }
            }
        }
        if connected {
            if let (Some(f), Some(s)) = (self.on_server_connected.as_mut(), self.server.as_mut()) {
                f(s, self.now);
            }
        }
    }

    /// Runs until nothing is left to do or `until_ns`.
    fn run(&mut self, until_ns: u64) {
        loop {
            // As the simulator services a connection: what it has to send leaves before its
            // events reach the application, then what the application wrote.
            self.transmit();
            self.drain_events();
            self.transmit();
            let mut next = self.wire.iter().map(|w| w.0).min();
            for t in
                [self.client.poll_timeout(), self.server.as_ref().and_then(|s| s.poll_timeout())].into_iter().flatten()
            {
                next = Some(next.map_or(t, |n: u64| n.min(t)));
            }
            let Some(t) = next else { return };
            if t > until_ns {
                return;
            }
            self.now = self.now.max(t);
            // Deliver what arrives now, in send order.
            let mut i = 0;
            while i < self.wire.len() {
                if self.wire[i].0 <= self.now {
                    let (_, side, p) = self.wire.remove(i);
                    for qp in &p.quic.as_ref().expect("quic").packets {
                        self.delivered[1 - side].extend(qp.frames.iter().cloned());
                        let now = self.now;
                        self.delivered_at[1 - side].extend(qp.frames.iter().map(|_| now));
                    }
                    if side == 0 {
                        match self.server.as_mut() {
                            Some(s) => {
                                s.handle_packet(self.now, &p);
                                self.server_cc.push((self.now, s.cwnd_bytes(), s.ssthresh_bytes(), s.cc_state().1));
                            }
                            None => self.server = QuicConnection::accept(self.cfg.clone(), self.now, &p),
                        }
                    } else {
                        self.client.handle_packet(self.now, &p);
                    }
                } else {
                    i += 1;
                }
            }
            if self.client.poll_timeout().is_some_and(|d| d <= self.now) {
                self.client.handle_timeout(self.now);
            }
            if let Some(s) = self.server.as_mut() {
                if s.poll_timeout().is_some_and(|d| d <= self.now) {
                    s.handle_timeout(self.now);
                    self.server_cc.push((self.now, s.cwnd_bytes(), s.ssthresh_bytes(), "timeout"));
                }
            }
        }
    }

    fn server(&self) -> &QuicConnection {
        self.server.as_ref().expect("accepted")
    }

    /// The usual exchange: the server writes one reliable message of `bytes` as soon as it
    /// is connected and closes; the client closes once it has it.
    fn respond(&mut self, bytes: u64) {
        self.on_server_connected = Some(Box::new(move |s, now| {
            s.write_message(now, meta(0, bytes), PrioritySignals::default(), Reliability::Reliable);
            s.close();
        }));
        self.client.close();
    }
}

fn meta(id: u32, len_bytes: u64) -> MessageMeta {
    MessageMeta { id, len_bytes, priority: 2 }
}

fn stream_frames(frames: &[(u64, Frame)]) -> Vec<(u64, u64, u64)> {
    frames
        .iter()
        .filter_map(|(_, f)| match f {
            Frame::Stream { stream_id, stream_base, chunk, .. } => {
                Some((*stream_id, stream_base + chunk.msg_offset_bytes, chunk.len_bytes() as u64))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_stream_never_sends_past_its_max_stream_data_and_resumes_on_credit() {
    // A 100 kB response over a 16 kB stream window: the server may have at most 16 kB beyond
    // what the client consumed; the client raises the limit every 8 kB (half the window).
    let window = 16_000;
    let mut p = Pair::new(config(window, 100), 10_000_000, 10 * MS);
    p.respond(100_000);
    p.run(10_000 * MS);
    assert_eq!(p.seen[0].completed.len(), 1, "the response arrives whole");
    // Every STREAM frame the server sent lies below the highest MAX_STREAM_DATA the client
    // had sent by then; here: below the last one, and the limits rose in steps.
    let limits: Vec<u64> = p.frames[0]
        .iter()
        .filter_map(|(_, f)| match f {
            Frame::MaxStreamData { stream_id: 7, max } => Some(*max),
            _ => None,
        })
        .collect();
    assert!(limits.len() >= 100_000 / (window as usize / 2) - 2, "credit in half-window steps: {limits:?}");
    assert!(limits.windows(2).all(|w| w[0] < w[1]));
    let top = stream_frames(&p.frames[1]).iter().filter(|f| f.0 == 7).map(|f| f.1 + f.2).max().unwrap();
    assert_eq!(top, 100_000);
    assert!(p.server().quic_stats().stream_data_blocked > 0, "the window binds at 10 Mbps / 20 ms");
    // The first flight carries exactly the initial window of stream data.
    let first_flight: u64 = stream_frames(&p.frames[1]).iter().take_while(|f| f.1 + f.2 <= window).map(|f| f.2).sum();
    assert_eq!(first_flight, window);
}

#[test]
fn several_messages_on_one_stream_arrive_in_order_and_the_stream_carries_them_back_to_back() {
    let mut p = Pair::new(config(1_250_000, 100), 10_000_000, 10 * MS);
    p.on_server_connected = Some(Box::new(|s, now| {
        let sig = PrioritySignals::default();
        s.write_message(now, meta(0, 3000), sig, Reliability::Reliable);
        let st = s.stream_of(0).expect("stream");
        s.write_message_on(now, meta(1, 2000), sig, Reliability::Reliable, StreamChoice::On(st));
        s.write_message_on(now, meta(2, 500), sig, Reliability::Reliable, StreamChoice::On(st));
        s.write_message(now, meta(3, 1000), sig, Reliability::Reliable);
        s.close();
    }));
    p.client.close();
    p.run(10_000 * MS);
    let ids: Vec<u32> = p.seen[0].completed.iter().map(|c| c.0).collect();
    assert_eq!(ids.len(), 4);
    let pos = |id| ids.iter().position(|&x| x == id).unwrap();
    assert!(pos(0) < pos(1) && pos(1) < pos(2), "one stream delivers in order: {ids:?}");
    let s = p.server();
    assert_eq!(s.stream_of(0), s.stream_of(1));
    assert_eq!(s.stream_of(1), s.stream_of(2));
    assert_ne!(s.stream_of(0), s.stream_of(3));
    // On the shared stream the messages sit at offsets 0, 3000 and 5000.
    let st = s.stream_of(0).unwrap();
    let mut on_stream: Vec<(u64, u64)> =
        stream_frames(&p.frames[1]).iter().filter(|f| f.0 == st).map(|f| (f.1, f.1 + f.2)).collect();
    on_stream.sort_unstable();
    assert_eq!(on_stream.first().unwrap().0, 0);
    assert_eq!(on_stream.last().unwrap().1, 5500);
    assert!(on_stream.windows(2).all(|w| w[0].1 == w[1].0), "contiguous, no byte twice: {on_stream:?}");
}

/// A stream fills each packet with one STREAM frame, as a real stack writes it: the chunk is
/// asked for as if the header were the smallest, trimmed once the real header is known, and
/// its tail stays the stream's next new data, so the next packet continues it in one frame
/// (had the tail gone back as lost data, every packet after the first, whose header needs an
/// offset field the smallest one lacks, would carry a frame of a few bytes and then a second
/// one).
#[test]
fn a_bulk_stream_sends_one_full_stream_frame_per_packet() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut p = Pair::new(config(1_250_000, 100), 10_000_000, 10 * MS);
    p.respond(300_000);
    // (STREAM frames, UDP payload bytes) of every server datagram with stream data.
    let packets: Rc<RefCell<Vec<(usize, u32)>>> = Rc::default();
    let seen = packets.clone();
    p.drop = Box::new(move |side, _, pkt| {
        let q = pkt.quic.as_ref().expect("quic");
        let n = q.packets.iter().flat_map(|qp| &qp.frames).filter(|f| matches!(f, Frame::Stream { .. })).count();
        if side == 1 && n > 0 {
            seen.borrow_mut().push((n, q.payload_bytes));
        }
        false
    });
    p.run(10_000 * MS);
    assert_eq!(p.seen[0].completed.len(), 1);
    let packets = packets.borrow();
    assert!(packets.len() > 200, "{} packets", packets.len());
    assert!(packets.iter().all(|&(n, _)| n == 1), "two STREAM frames in one packet: {packets:?}");
    let full = packets.iter().map(|&(_, b)| b).max().unwrap();
    assert!(packets[..packets.len() - 1].iter().all(|&(_, b)| b == full), "every packet but the last full");
    let on_stream = stream_frames(&p.frames[1]);
    assert!(on_stream.windows(2).all(|w| w[0].1 + w[0].2 == w[1].1), "contiguous, in order");
}

/// RFC 9002 Appendix A.7 and B.5: an ACK that declares a loss begins a recovery period
/// at that instant, so none of the packets it acknowledges was sent in the period: the
/// window is the reduced one, and the period goes on until a packet sent after it began is
/// acknowledged. (The start of an earlier period once decided this: an ACK that both
/// acknowledged packets sent after the first recovery and declared a second loss ended
/// the new period at once and grew the halved window by what it acknowledged.)
#[test]
fn an_ack_that_declares_a_loss_leaves_the_halved_window_for_the_new_period() {
    // A long path, so that the ACK reporting three later packets comes before the loss timer
    // (9/8 of an RTT) and declares the loss itself.
    let mut p = Pair::new(config(10_000_000, 100), 10_000_000, 50 * MS);
    p.respond(1_500_000);
    // Two server packets lost, far enough apart that the first period is over.
    p.drop = Box::new(|side, n, _| side == 1 && (n == 40 || n == 500));
    p.run(10_000 * MS);
    assert_eq!(p.seen[0].completed.len(), 1);
    let cc = &p.server_cc;
    let reductions: Vec<usize> = (1..cc.len()).filter(|&i| cc[i].2 != cc[i - 1].2).collect();
    assert_eq!(reductions.len(), 2, "two losses, two reductions: {reductions:?}");
    for &i in &reductions {
        let (t, cwnd, ssthresh, state) = cc[i];
        // (A reduction by the loss timer would read "timeout" here.)
        assert_eq!(state, "recovery", "at {t} ns an ACK began the new period");
        assert_eq!(cwnd, ssthresh, "at {t} ns the window is the reduced one, grown by nothing");
        // Through the period's first round trip (the packets in flight were all sent
        // before it began) the window does not move.
        let srtt = p.server().srtt_ns().expect("sampled");
        for &(u, w, _, _) in cc[i..].iter().take_while(|c| c.0 < t + srtt / 2) {
            assert_eq!(w, cwnd, "window moved at {u} ns, within half an RTT of the reduction at {t} ns");
        }
    }
}

/// Behind a full DATAGRAM frame a packet has a few bytes left: filled to the byte with a
/// STREAM frame by default, left alone with quinn's rule (no STREAM frame unless more than
/// 25 bytes are left, `QuicConfig::stream_frame_min_room_bytes`).
#[test]
fn a_stream_frame_starts_only_with_more_room_than_the_configured_minimum() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let run = |min_room: u32| {
        let mut cfg = config(1_250_000, 100);
        cfg.quic.stream_frame_min_room_bytes = min_room;
        let mut p = Pair::new(cfg, 10_000_000, 10 * MS);
        p.on_server_connected = Some(Box::new(|s, now| {
            let sig = PrioritySignals::default();
            s.write_message(now, meta(0, 20_000), sig, Reliability::Reliable);
            s.write_message(now, meta(1, 20_000), sig, Reliability::Unreliable);
            s.close();
        }));
        // (UDP payload bytes, has a DATAGRAM frame, STREAM bytes) of each server packet.
        let sent: Rc<RefCell<Vec<(u32, bool, u32)>>> = Rc::default();
        let log = sent.clone();
        p.drop = Box::new(move |side, _, pkt| {
            let q = pkt.quic.as_ref().unwrap();
            let frames = || q.packets.iter().flat_map(|qp| qp.frames.iter());
            let dg = frames().any(|f| matches!(f, Frame::Datagram { .. }));
            let stream: u32 = frames()
                .map(|f| match f {
                    Frame::Stream { chunk, .. } => chunk.len_bytes(),
                    _ => 0,
                })
                .sum();
            if side == 1 {
                log.borrow_mut().push((q.payload_bytes, dg, stream));
            }
            false
        });
        p.client.close();
        p.run(10_000 * MS);
        assert_eq!(p.seen[0].completed.iter().filter(|c| c.0 == 0).count(), 1);
        let sent = sent.borrow().clone();
        sent
    };
    let tight = run(5);
    let quinn = run(25);
    // 20,000 bytes of datagrams: 15 chunks at most 1414 bytes each, every one ahead of stream data.
    let with_dg = |v: &[(u32, bool, u32)]| v.iter().filter(|x| x.1).count();
    assert_eq!((with_dg(&tight), with_dg(&quinn)), (15, 15));
    assert!(tight.iter().filter(|x| x.1 && x.2 > 0 && x.2 <= 20).count() >= 13, "{tight:?}");
    assert!(quinn.iter().all(|x| !x.1 || x.2 == 0 || x.2 > 20), "{quinn:?}");
}

#[test]
fn a_loss_on_a_shared_stream_holds_the_later_message_but_not_another_stream() {
    // Messages 0 and 1 share a stream, message 2 has its own. The packet with message 0's
    // first bytes is dropped: 1 waits behind it (same stream), 2 does not.
    let mut p = Pair::new(config(1_250_000, 100), 10_000_000, 10 * MS);
    p.on_server_connected = Some(Box::new(|s, now| {
        let sig = PrioritySignals::default();
        s.write_message(now, meta(0, 3000), sig, Reliability::Reliable);
        let st = s.stream_of(0).expect("stream");
        s.write_message_on(now, meta(1, 3000), sig, Reliability::Reliable, StreamChoice::On(st));
        s.write_message(now, meta(2, 3000), sig, Reliability::Reliable);
        s.close();
    }));
    p.client.close();
    // Drop the server's first packet carrying stream data from offset 0 of stream 7.
    let mut dropped = false;
    p.drop = Box::new(move |side, _, pkt| {
        if side != 1 || dropped {
            return false;
        }
        let hit = pkt.quic.as_ref().unwrap().packets.iter().any(|qp| {
            qp.frames.iter().any(|f| matches!(f, Frame::Stream { stream_id: 7, chunk, stream_base: 0, .. } if chunk.msg_offset_bytes == 0))
        });
        dropped |= hit;
        hit
    });
    p.run(10_000 * MS);
    let t = |id| p.seen[0].completed.iter().find(|c| c.0 == id).map(|c| c.1).unwrap();
    assert!(t(2) < t(0), "message 2 (own stream) does not wait for the retransmission");
    assert!(t(1) >= t(0), "message 1 waits for message 0 on their stream");
}

#[test]
fn streams_over_max_streams_wait_for_credit_and_open_in_order() {
    // The client may open 4 streams; it writes 10 requests. The server answers each; credit
    // comes back as streams finish, and every request is served.
    let mut p = Pair::new(config(1_250_000, 4), 10_000_000, 10 * MS);
    p.run(100 * MS); // handshake
    for k in 0..10 {
        p.client.write_message(p.now, meta(k, 200), PrioritySignals::default(), Reliability::Reliable);
    }
    p.client.close();
    p.on_server_connected = None;
    // The server answers each request when it completes.
    let mut answered = 0usize;
    let mut t_end = p.now;
    while t_end < 20_000 * MS {
        t_end += MS;
        p.run(t_end);
        let done: Vec<u32> = p.seen[1].completed.iter().skip(answered).map(|c| c.0).collect();
        for id in done {
            let now = p.now;
            p.server.as_mut().unwrap().write_message(
                now,
                meta(id, 5000),
                PrioritySignals::default(),
                Reliability::Reliable,
            );
            answered += 1;
        }
        if answered == 10 {
            p.server.as_mut().unwrap().close();
            break;
        }
    }
    p.run(40_000 * MS);
    assert_eq!(p.seen[0].completed.len(), 10, "every response arrives");
    assert_eq!(p.client.quic_stats().streams_blocked, 6, "6 requests waited for stream credit");
    assert!(p.server().quic_stats().max_streams_sent >= 1);
    // The client never had more than 4 + (credit granted) streams: stream IDs in order.
    let ids: Vec<u64> = (0..10).map(|k| p.client.stream_of(k).unwrap()).collect();
    assert_eq!(ids, (0..10).map(|k| 4 * k).collect::<Vec<u64>>());
    // The fifth request stream (16) opens only once a MAX_STREAMS can have arrived: its first
    // frame leaves at least one one-way delay after the server sent the first MAX_STREAMS.
    let first_16 = p.frames[0].iter().find(|(_, f)| matches!(f, Frame::Stream { stream_id: 16, .. })).unwrap().0;
    let first_credit = p.frames[1].iter().find(|(_, f)| matches!(f, Frame::MaxStreams { bidi: true, .. })).unwrap().0;
    assert!(first_16 >= first_credit + 10 * MS, "stream 16 at {first_16}, credit sent at {first_credit}");
    // The first four streams went out at once.
    let first_12 = p.frames[0].iter().find(|(_, f)| matches!(f, Frame::Stream { stream_id: 12, .. })).unwrap().0;
    assert!(first_12 < first_credit);
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Any mix of windows, message sizes, shared streams and random loss: every message
        /// arrives once, messages on one stream complete in write order, and no STREAM frame
        /// ever reaches past a limit the receiver had advertised before it was sent.
        #[test]
        fn stream_credit_and_order_hold_under_loss(
            window in 2_000u64..40_000,
            sizes in prop::collection::vec(1u64..30_000, 1..8),
            shared in prop::collection::vec(any::<bool>(), 8),
            loss_per_mille in 0u64..80,
            seed in any::<u64>(),
        ) {
            let mut p = Pair::new(config(window, 100), 20_000_000, 5 * MS);
            let sizes2 = sizes.clone();
            let shared2 = shared.clone();
            p.on_server_connected = Some(Box::new(move |s, now| {
                let sig = PrioritySignals::default();
                for (k, &len) in sizes2.iter().enumerate() {
                    let k = k as u32;
                    if k > 0 && shared2[k as usize] {
                        let st = s.stream_of(k - 1).expect("stream");
                        s.write_message_on(now, meta(k, len), sig, Reliability::Reliable, StreamChoice::On(st));
                    } else {
                        s.write_message(now, meta(k, len), sig, Reliability::Reliable);
                    }
                }
                s.close();
            }));
            p.client.close();
            let mut state = seed | 1;
            p.drop = Box::new(move |_, n, _| {
                if n < 3 { return false; } // keep the handshake quick
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                state % 1000 < loss_per_mille
            });
            p.run(600_000 * MS);
            let got: Vec<u32> = p.seen[0].completed.iter().map(|c| c.0).collect();
            let mut sorted = got.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..sizes.len() as u32).collect::<Vec<_>>(), "each message once");
            let s = p.server();
            let pos = |id: u32| got.iter().position(|&x| x == id).unwrap();
            for k in 1..sizes.len() as u32 {
                if s.stream_of(k) == s.stream_of(k - 1) {
                    prop_assert!(pos(k - 1) < pos(k), "stream order {:?}", got);
                }
            }
            // Limits the client advertised, by stream, in send order.
            let mut limits: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
            for (t, f) in &p.frames[0] {
                if let Frame::MaxStreamData { stream_id, max } = f {
                    limits.entry(*stream_id).or_default().push((*t, *max));
                }
            }
            for (t, f) in &p.frames[1] {
                if let Frame::Stream { stream_id, stream_base, chunk, .. } = f {
                    let end = stream_base + chunk.msg_offset_bytes + chunk.len_bytes() as u64;
                    let allowed = limits.get(stream_id).into_iter().flatten()
                        .filter(|(lt, _)| lt < t).map(|l| l.1).max().unwrap_or(0).max(window);
                    prop_assert!(end <= allowed, "stream {} to {} at {} over {}", stream_id, end, t, allowed);
                }
            }
        }
    }
}

/// The client requests object 1 on stream 4; the server answers as HTTP/3 datagrams.
fn h3_pair(len: u64) -> Pair {
    h3_pair_with(len, |_| {})
}

/// [`h3_pair`] with the configuration changed by `f`.
fn h3_pair_with(len: u64, f: impl FnOnce(&mut ConnectionConfig)) -> Pair {
    let mut cfg = config(1_250_000, 100);
    cfg.quic.datagram_framing = DatagramFraming::Http3;
    f(&mut cfg);
    let mut p = Pair::new(cfg, 20_000_000, 5 * MS);
    p.run(50 * MS);
    let now = p.now;
    p.client.write_message(now, meta(0, 100), PrioritySignals::default(), Reliability::Reliable);
    p.client.write_message(now, meta(1, 100), PrioritySignals::default(), Reliability::Reliable);
    p.client.close();
    let mut t = p.now;
    while p.seen[1].completed.len() < 2 {
        t += MS;
        p.run(t);
    }
    let now = p.now;
    let s = p.server.as_mut().unwrap();
    s.write_message(now, meta(1, len), PrioritySignals::default(), Reliability::Unreliable);
    s.write_message(now, meta(0, 500), PrioritySignals::default(), Reliability::Reliable);
    s.close();
    p
}

fn datagrams(frames: &[(u64, Frame)]) -> Vec<(u32, u32, u32, Option<u64>)> {
    frames
        .iter()
        .filter_map(|(_, f)| match f {
            Frame::Datagram { index, data_len, header_len, quarter_stream_id, .. } => {
                Some((*index, *data_len, *header_len, *quarter_stream_id))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn http3_datagrams_carry_the_quarter_stream_id_metadata_first_and_fill_the_frame() {
    let len = 100_000u64;
    let mut p = h3_pair(len);
    p.run(10_000 * MS);
    let d = datagrams(&p.frames[1]);
    // Metadata first: Quarter Stream ID 1 (stream 4), chunk type, object 0, size, content type.
    let ct = p.cfg.quic.datagram_content_type_bytes as usize;
    assert_eq!(d[0], (0, 0, chunk::h3_metadata_chunk_len(1, 0, len, ct) as u32, Some(1)));
    assert_eq!(d[0].2, 1 + 1 + 1 + 4 + 1 + 16, "100000 needs a 4-byte varint");
    // Every data chunk but the last fills the 1414-byte DATAGRAM payload exactly.
    let max = p.cfg.quic.max_datagram_frame_bytes;
    for w in &d[1..d.len() - 1] {
        assert_eq!(w.1 + w.2, max, "{w:?}");
    }
    // The first chunk's header: qsid 1, type, object 0, offset 0 (1 byte each), length 2.
    assert_eq!(d[1].2, 6);
    assert_eq!(d[1].1, max - 6);
    // From offset 16384 the offset takes 4 bytes: the data shrinks by 2 bytes.
    let total: u64 = d.iter().map(|x| x.1 as u64).sum();
    assert_eq!(total, len);
    assert!(d.iter().all(|x| x.3 == Some(1)));
    let objects = p.client.datagram_objects();
    assert_eq!(objects.len(), 1);
    let o = objects[0];
    assert_eq!((o.msg_id, o.quarter_stream_id, o.bytes_expected, o.bytes_received), (1, Some(1), len, len));
    assert_eq!((o.chunks, o.chunks_received, o.complete), (d.len() as u32, d.len() as u32, true));
}

/// The data chunks of a 10 000-byte object with HTTP/3 framing (quarter stream ID 1, object
/// 0) in 1414-byte DATAGRAM payloads: the first chunk's header is 6 bytes (offset 0 in one
/// byte), the others' 7 (offsets from 64 take two), so 1408, six of 1407 and 150 bytes; with
/// the metadata datagram, 9 chunks.
const H3_10K: [u64; 8] = [1408, 1407, 1407, 1407, 1407, 1407, 1407, 150];

/// True for a server packet that carries the metadata datagram (chunk 0) or data chunk `k`.
fn carries_chunk(p: &Packet, k: u32) -> bool {
    p.quic.as_ref().is_some_and(|q| {
        q.packets.iter().any(|qp| qp.frames.iter().any(|f| matches!(f, Frame::Datagram { index, .. } if *index == k)))
    })
}

#[test]
fn a_receiver_that_needs_the_metadata_datagram_loses_the_object_with_it() {
    assert_eq!(H3_10K.iter().sum::<u64>(), 10_000);
    // The metadata datagram is lost; every data chunk arrives.
    for needs in [false, true] {
        let mut p = h3_pair_with(10_000, |c| c.quic.datagram_needs_metadata = needs);
        p.drop = Box::new(|side, _, pk| side == 1 && carries_chunk(pk, 0));
        p.run(10_000 * MS);
        assert_eq!(datagrams(&p.frames[1]).len(), 9);
        let o = p.client.datagram_object(1).expect("chunks arrived");
        let got =
            (o.chunks, o.chunks_received, o.chunks_orphaned, o.chunks_missing(), o.bytes_received, o.bytes_orphaned);
        if needs {
            // No record of the transfer: all 8 data chunks (10 000 bytes) are discarded.
            assert_eq!(got, (9, 0, 8, 1, 0, 10_000));
        } else {
            // Placed by object ID and offset: only the (empty) metadata datagram is missing.
            assert_eq!(got, (9, 8, 0, 1, 10_000, 0));
        }
        assert!(!o.complete);
    }
    // The metadata arrives and data chunk 3 (1407 bytes) is lost: the rule changes nothing.
    let mut p = h3_pair_with(10_000, |c| c.quic.datagram_needs_metadata = true);
    p.drop = Box::new(|side, _, pk| side == 1 && carries_chunk(pk, 3));
    p.run(10_000 * MS);
    let o = p.client.datagram_object(1).unwrap();
    assert_eq!((o.chunks_received, o.chunks_orphaned, o.chunks_missing(), o.bytes_received), (8, 0, 1, 10_000 - 1407));
}

#[test]
fn a_full_datagram_send_queue_drops_the_chunks_written_after_it_filled() {
    // Room for 5 datagrams: the metadata and the first four data chunks (1408 + 3 × 1407 =
    // 5629 bytes) are queued; the other four chunks (3 × 1407 + 150 = 4371 bytes) are dropped
    // at once, and the response's HEADERS and FIN follow the last chunk that was queued.
    let mut p = h3_pair_with(10_000, |c| {
        c.quic.datagram_send_queue_len = Some(5);
        c.quic.response_headers_bytes = 24;
    });
    p.run(10_000 * MS);
    let sent = datagrams(&p.frames[1]);
    assert_eq!(sent.iter().map(|d| d.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    let server = p.server();
    assert_eq!(server.datagram_local_drops(1), Some((4, 4371)));
    assert_eq!(server.datagram_local_drops(0), None, "message 0 is reliable");
    assert_eq!(server.quic_stats().datagrams_dropped_locally, 4);
    let o = p.client.datagram_object(1).unwrap();
    assert_eq!((o.chunks, o.chunks_received, o.chunks_missing(), o.bytes_received), (9, 5, 4, 5629));
    // The end of the response on stream 4 left after the fifth datagram.
    let last_dgram = p.frames[1].iter().rposition(|(_, f)| matches!(f, Frame::Datagram { .. })).unwrap();
    let fin = p.frames[1].iter().position(|(_, f)| matches!(f, Frame::Stream { stream_id: 4, fin: true, .. }));
    assert!(fin.is_some_and(|k| k > last_dgram), "HEADERS and FIN on stream 4 after the last queued chunk");
}

mod datagram_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

        /// Under loss, reordering and duplication the receiver's per-object account is exact:
        /// each chunk counted once, received + missing = sent, the bytes received are the
        /// data of the chunks that arrived, and the sender's fates agree with the receiver.
        #[test]
        fn receiver_accounting_is_exact(
            len in 1u64..200_000,
            loss_per_mille in 0u64..150,
            dup_per_mille in 0u64..200,
            jitter_ms in 0u64..20,
            seed in any::<u64>(),
            needs_metadata in any::<bool>(),
        ) {
            let mut p = h3_pair_with(len, |c| c.quic.datagram_needs_metadata = needs_metadata);
            let mut st = seed | 1;
            let mut rnd = move || { st ^= st << 13; st ^= st >> 7; st ^= st << 17; st };
            let mut st2 = seed.rotate_left(17) | 1;
            let mut rnd2 = move || { st2 ^= st2 << 13; st2 ^= st2 >> 7; st2 ^= st2 << 17; st2 };
            p.drop = Box::new(move |side, _, _| side == 1 && rnd() % 1000 < loss_per_mille);
            p.disorder = Box::new(move |side, _| {
                if side != 1 { return (0, false); }
                let r = rnd2();
                ((r % (jitter_ms * MS + 1)), (r >> 32) % 1000 < dup_per_mille)
            });
            p.run(600_000 * MS);
            let sent = datagrams(&p.frames[1]);
            let server = p.server();
            let (id, chunks, acked, lost) = server.datagram_fates()[0];
            prop_assert_eq!(id, 1);
            prop_assert_eq!(chunks as usize, sent.iter().filter(|d| d.0 < chunks).map(|d| d.0).collect::<std::collections::BTreeSet<_>>().len());
            prop_assert_eq!(acked + lost, chunks, "every chunk's fate is known");
            // What really reached the client, each chunk once.
            let mut arrived = std::collections::BTreeMap::new();
            for f in &p.delivered[0] {
                if let Frame::Datagram { index, data_len, .. } = f {
                    arrived.insert(*index, *data_len as u64);
                }
            }
            let objects = p.client.datagram_objects();
            match objects.first() {
                None => prop_assert!(arrived.is_empty()),
                Some(o) => {
                    prop_assert_eq!(o.chunks, chunks);
                    // Used or (for want of the metadata datagram) discarded, each once.
                    let (used, orphaned) = (o.chunks_received, o.chunks_orphaned);
                    prop_assert_eq!((used + orphaned) as usize, arrived.len(), "each arrived chunk once");
                    prop_assert_eq!(o.bytes_received + o.bytes_orphaned, arrived.values().sum::<u64>());
                    prop_assert_eq!(used + orphaned + o.chunks_missing(), chunks);
                    if !needs_metadata {
                        prop_assert_eq!(orphaned, 0);
                    } else if !arrived.contains_key(&0) {
                        prop_assert_eq!((used, o.bytes_received), (0, 0), "no metadata, nothing used");
                    } else if jitter_ms == 0 {
                        prop_assert_eq!(orphaned, 0, "in order, the metadata datagram comes first");
                    }
                    prop_assert_eq!(o.complete, o.chunks_missing() == 0 && orphaned == 0);
                    if o.complete { prop_assert_eq!(o.bytes_received, len); }
                    // The sender knows less: an acknowledged chunk arrived; one it declared
                    // lost may still have arrived late (reordering past the time threshold).
                    prop_assert!(lost >= o.chunks_missing());
                    prop_assert!(acked <= o.chunks_received + o.chunks_orphaned);
                }
            }
            if jitter_ms == 0 {
                // In order, the sender's fates are exactly the receiver's.
                let missing = objects.first().map_or(chunks, |o| o.chunks_missing());
                prop_assert_eq!(lost, missing);
            }
        }
    }
}

/// One 1000-byte message from the server, written when it is connected; returns when the
/// client completed it.
fn one_message_pair(tls_cpu_ns: u64) -> Pair {
    let mut cfg = config(1_250_000, 100);
    cfg.quic.tls_cpu_ns = tls_cpu_ns;
    let mut p = Pair::new(cfg, 10_000_000, 10 * MS);
    p.respond(1000);
    p
}

#[test]
fn each_tls_step_holds_its_end_for_tls_cpu_ns() {
    // Three public-key steps lie on the path to the server's first data: the server on the
    // ClientHello, the client on the server's flight, the server on the client's Finished.
    let done = |tls| {
        let mut p = one_message_pair(tls);
        p.run(10_000 * MS);
        p.seen[0].completed.iter().find(|c| c.0 == 0).map(|c| c.1).expect("message 0 complete")
    };
    let (base, slow) = (done(0), done(700_000));
    // Plus the serialisation of a few bytes: the ACKs sent after a step carry a larger
    // ack_delay (a longer varint) than an ideal host's. At 10 Mbps a byte is 800 ns.
    let extra = slow - base - 3 * 700_000;
    assert!(extra <= 8 * 800, "ideal host {base} ns, 0.7 ms per step {slow} ns");
}

/// The application hears of the handshake when the TLS step that completed it is over, so
/// what the connection sends then leaves first: the server's HANDSHAKE_DONE and session
/// tickets go in a packet of their own, before any data the application writes on hearing
/// of it (as quinn's connection driver sends before the application task runs). Had the
/// server's application heard at once, its data would have filled that packet and pushed
/// everything after it back by one packet.
#[test]
fn the_application_hears_of_the_handshake_after_the_tls_step_and_after_handshake_done_left() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut p = one_message_pair(700_000);
    let heard = Rc::new(RefCell::new(None));
    let at = heard.clone();
    p.on_server_connected = Some(Box::new(move |s, now| {
        *at.borrow_mut() = Some(now);
        s.write_message(now, meta(0, 30_000), PrioritySignals::default(), Reliability::Reliable);
        s.close();
    }));
    // (has HANDSHAKE_DONE, has STREAM) of each server packet.
    let sent: Rc<RefCell<Vec<(bool, bool)>>> = Rc::default();
    let log = sent.clone();
    p.drop = Box::new(move |side, _, pkt| {
        let frames = || pkt.quic.as_ref().unwrap().packets.iter().flat_map(|qp| qp.frames.iter());
        if side == 1 {
            let done = frames().any(|f| matches!(f, Frame::HandshakeDone));
            let stream = frames().any(|f| matches!(f, Frame::Stream { .. }));
            log.borrow_mut().push((done, stream));
        }
        false
    });
    p.run(10_000 * MS);
    assert!(p.seen[0].completed.iter().any(|c| c.0 == 0));
    let sent = sent.borrow();
    let k = sent.iter().position(|x| x.0).expect("HANDSHAKE_DONE sent");
    assert_eq!(sent[k], (true, false), "HANDSHAKE_DONE leaves without stream data");
    assert!(sent[..k].iter().all(|x| !x.1) && sent[k + 1].1, "the data follows it: {sent:?}");
    // The server heard at the end of its step on the client's Finished: the time the client's
    // Finished arrived plus 0.7 ms, and that is when HANDSHAKE_DONE was sent.
    let heard = heard.borrow().expect("server connected");
    let done_at = p.frames[1].iter().find(|(_, f)| matches!(f, Frame::HandshakeDone)).unwrap().0;
    assert_eq!(heard, done_at);
    let finished_at =
        p.delivered_at[1][p.delivered[1].iter().rposition(|f| matches!(f, Frame::Crypto { .. })).unwrap()];
    assert_eq!(heard, finished_at + 700_000);
}

#[test]
fn a_1rtt_packet_that_overtakes_a_lost_handshake_packet_is_dropped_and_resent() {
    // The server's Handshake flight is lost once; its NEW_CONNECTION_ID packet (1-RTT) arrives
    // before the client has 1-RTT keys. The client cannot read it, so it neither processes nor
    // acknowledges it (it used to hold an ACK it could not send, and spin on its deadline).
    let mut p = one_message_pair(0);
    let mut dropped = false;
    p.drop = Box::new(move |side, _, pkt| {
        let hs = pkt.quic.as_ref().unwrap().packets.iter().any(|qp| qp.space == SpaceId::Handshake);
        let hit = side == 1 && hs && !dropped;
        dropped |= hit;
        hit
    });
    p.run(10_000 * MS);
    assert!(p.seen[0].completed.iter().any(|c| c.0 == 0), "message 0 arrives after the PTO");
    let ncid = |side: usize| p.frames[side].iter().filter(|(_, f)| matches!(f, Frame::NewConnectionId { .. })).count();
    assert!(ncid(1) > 4, "the server resends the NEW_CONNECTION_IDs the client dropped: {}", ncid(1));
}

/// The core does not trust its peer (issue 10, found by `fuzz/fuzz_targets/connection.rs`):
/// frames a real stack never sends are dropped or saturate; none panics (overflow checks are
/// on in tests) or makes the connection allocate by a peer's number.
mod peer {
    use super::*;
    use crate::quic::packet::{AckFrame, QuicDatagram, QuicPacket};
    use crate::sched::MsgChunk;

    fn datagram(space: SpaceId, pn: u64, frames: Vec<Frame>) -> Packet {
        Packet {
            src: SERVER,
            dst: CLIENT,
            quic: Some(Box::new(QuicDatagram {
                packets: [QuicPacket { space, pn, frames: frames.into(), size_bytes: 1200, path: 0 }]
                    .into_iter()
                    .collect(),
                payload_bytes: 1200,
            })),
            ..Default::default()
        }
    }

    /// A connected pair with a message in flight from the server.
    fn connected() -> Pair {
        let mut p = Pair::new(config(1_250_000, 100), 20_000_000, 5 * MS);
        p.on_server_connected = Some(Box::new(|s, now| s.write(now, 1, 50_000, None)));
        p.run(40 * MS);
        assert!(p.server.is_some());
        p
    }

    /// RFC 9000 §10.2.1-§10.2.2: a closed end answers what still arrives with
    /// CONNECTION_CLOSE, less and less often, and not at all once the peer's own
    /// CONNECTION_CLOSE has arrived (draining). Two ends that both closed used to answer each
    /// other forever, and a duplicating link multiplied the exchange (found by triage-sim's
    /// tests/disorder.rs: 735 million events in 3,000 simulated seconds).
    #[test]
    fn a_closed_end_answers_less_and_less_then_drains() {
        let mut p = Pair::new(config(1_250_000, 100), 20_000_000, 5 * MS);
        p.on_server_connected = Some(Box::new(|s, now| {
            s.write(now, 1, 20_000, None);
            s.close();
        }));
        p.client.close();
        p.run(60_000 * MS);
        let closer = (0..2).find(|&side| p.frames[side].iter().any(|(_, f)| *f == Frame::ConnectionClose)).unwrap();
        let now = p.now;
        let conn = if closer == 0 { &mut p.client } else { p.server.as_mut().unwrap() };
        assert_eq!(conn.state(), crate::connection::State::Closed);
        let ping = |pn: u64, frames: Vec<Frame>| Packet {
            quic: Some(Box::new(QuicDatagram {
                packets: [QuicPacket { space: SpaceId::Data, pn, frames: frames.into(), size_bytes: 100, path: 0 }]
                    .into_iter()
                    .collect(),
                payload_bytes: 100,
            })),
            ..Default::default()
        };
        let mut answers = Vec::new();
        for k in 0..16u64 {
            conn.handle_packet(now, &ping(1_000_000 + k, vec![Frame::Ping]));
            while conn.poll_transmit(now).is_some() {
                answers.push(k + 1);
            }
        }
        // Answers at the 1st, 2nd, 4th, ... packet since closing (some arrived during the run).
        assert!(
            !answers.is_empty() && answers.len() <= 5 && answers.windows(2).all(|w| w[1] >= 2 * w[0]),
            "{answers:?}"
        );
        conn.handle_packet(now, &ping(2_000_000, vec![Frame::ConnectionClose]));
        for k in 0..40u64 {
            conn.handle_packet(now, &ping(3_000_000 + k, vec![Frame::Ping]));
            assert!(conn.poll_transmit(now).is_none(), "draining: nothing more is sent");
        }
    }

    #[test]
    fn malformed_frames_are_dropped_not_trusted() {
        let mut p = connected();
        let now = p.now;
        let chunk = MsgChunk::new(9, u64::MAX - 10, 100, 5, 0);
        let frames = vec![
            // An ACK range with smallest > largest, and an ACK delay that overflows.
            Frame::Ack(AckFrame {
                ranges: [(5, 1)].into_iter().collect(),
                delay_encoded: u64::MAX,
                ecn: None,
                path: None,
            }),
            Frame::Ack(AckFrame {
                ranges: [(0, 0)].into_iter().collect(),
                delay_encoded: u64::MAX,
                ecn: None,
                path: None,
            }),
            // CRYPTO whose end overflows.
            Frame::Crypto { offset: u64::MAX - 3, len: 100 },
            // STREAM data whose offset overflows, beyond the window, on a stream never granted.
            Frame::Stream { stream_id: 0, stream_base: 1, chunk, fin: true },
            Frame::Stream { stream_id: 0, stream_base: 10_000_000, chunk: chunk.at(0, chunk.len_bytes()), fin: false },
            Frame::Stream {
                stream_id: 4 * 1_000_000 + 3,
                stream_base: 0,
                chunk: chunk.at(0, chunk.len_bytes()),
                fin: false,
            },
            // A DATAGRAM chunk claiming 2^32 − 1 chunks (a vector of flags would be 4 GB).
            Frame::Datagram {
                msg_id: 77,
                index: 3,
                count: u32::MAX,
                data_len: 100,
                msg_len_bytes: u64::MAX,
                priority: 0,
                header_len: 9,
                quarter_stream_id: None,
            },
            Frame::MaxData(u64::MAX),
            Frame::MaxStreamData { stream_id: u64::MAX, max: u64::MAX },
            Frame::MaxStreams { bidi: true, max: u64::MAX },
        ];
        let before = p.client.stats().bytes_delivered;
        p.client.handle_packet(now, &datagram(SpaceId::Data, 1_000_000, frames));
        p.client.handle_packet(
            now,
            &datagram(SpaceId::Initial, u64::MAX, vec![Frame::Crypto { offset: 1 << 40, len: 10 }]),
        );
        // The stream frames were all dropped; the DATAGRAM chunk is counted once.
        assert_eq!(p.client.stats().bytes_delivered, before + 100);
        while p.client.poll_transmit(now).is_some() {}
        // The real transfer still completes.
        p.run(10_000 * MS);
        assert!(p.seen[0].completed.iter().any(|c| c.0 == 1), "{:?}", p.seen[0].completed);
    }
}

/// Two responses on streams of their own, 10,000 and 6,000 bytes, over 10 Mbps and 10 ms
/// each way; the client watches `watches` before any byte comes; `lose_first` drops the
/// server's first packet carrying message 0's first bytes.
fn watched_pair(watches: &[(u32, u64)], lose_first: bool) -> Pair {
    let mut p = Pair::new(config(1_250_000, 100), 10_000_000, 10 * MS);
    for &(m, b) in watches {
        p.client.watch_message_bytes(m, b);
    }
    p.on_server_connected = Some(Box::new(|s, now| {
        let sig = PrioritySignals::default();
        s.write_message(now, meta(0, 10_000), sig, Reliability::Reliable);
        s.write_message(now, meta(1, 6_000), sig, Reliability::Reliable);
        s.close();
    }));
    p.client.close();
    if lose_first {
        let mut dropped = false;
        p.drop = Box::new(move |side, _, pkt| {
            let hit = side == 1 && !dropped && pkt.quic.as_ref().unwrap().packets.iter().any(leads_message_0);
            dropped |= hit;
            hit
        });
    }
    p.run(10_000 * MS);
    p
}

/// True when a QUIC packet carries message 0's first bytes.
fn leads_message_0(qp: &super::packet::QuicPacket) -> bool {
    qp.frames
        .iter()
        .any(|f| matches!(f, Frame::Stream { chunk, .. } if chunk.msg_id == 0 && chunk.msg_offset_bytes == 0))
}

/// From the frames the client received: when message `m`'s bytes in order first reached
/// `w`, and how many were in order then (a message alone on its stream).
fn in_order_crossing(p: &Pair, m: u32, w: u64) -> Option<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for (f, &t) in p.delivered[0].iter().zip(&p.delivered_at[0]) {
        if let Frame::Stream { chunk, .. } = f {
            if chunk.msg_id == m {
                let a = chunk.msg_offset_bytes;
                ranges.push((a, a + chunk.len_bytes() as u64));
                ranges = super::streams::merge(std::mem::take(&mut ranges));
                let contiguous = ranges.first().filter(|r| r.0 == 0).map_or(0, |r| r.1);
                if contiguous >= w {
                    return Some((t, contiguous));
                }
            }
        }
    }
    None
}

#[test]
fn a_watermark_fires_when_its_stream_has_the_bytes_in_order() {
    let p = watched_pair(&[(0, 4000), (1, 1)], false);
    let (t0, b0) = in_order_crossing(&p, 0, 4000).expect("message 0 crosses 4000");
    let (t1, b1) = in_order_crossing(&p, 1, 1).expect("message 1 starts");
    let mut want = vec![(0, b0, t0), (1, b1, t1)];
    want.sort_by_key(|w| (w.2, w.0));
    assert_eq!(p.seen[0].watermarks, want);
    assert!((4000..10_000).contains(&b0), "{b0}");
    // A watermark at the length fires with the completion; beyond it, never.
    let p = watched_pair(&[(0, 10_000), (1, 6_001)], false);
    let done0 = p.seen[0].completed.iter().find(|c| c.0 == 0).unwrap().1;
    assert_eq!(p.seen[0].watermarks, vec![(0, 10_000, done0)]);
    assert_eq!(p.seen[0].completed.len(), 2);
}

#[test]
fn a_watermark_waits_for_a_loss_on_its_own_stream_only() {
    // Message 0's first packet is lost: its watermark waits for the retransmission, while
    // message 1, on another stream, crosses its own as its bytes arrive (no head-of-line
    // blocking across streams, unlike TCP mode).
    let p = watched_pair(&[(0, 1), (1, 1000)], true);
    let (t0, b0) = in_order_crossing(&p, 0, 1).unwrap();
    let (t1, b1) = in_order_crossing(&p, 1, 1000).unwrap();
    assert!(t1 < t0, "message 1 does not wait for message 0's retransmission");
    let mut want = vec![(0, b0, t0), (1, b1, t1)];
    want.sort_by_key(|w| (w.2, w.0));
    assert_eq!(p.seen[0].watermarks, want);
    // Message 0's first frame arrives only as a retransmission, after some of its later bytes.
    let first_of_0 =
        p.delivered[0].iter().position(|f| matches!(f, Frame::Stream { chunk, .. } if chunk.msg_id == 0)).unwrap();
    let zero = p.delivered[0]
        .iter()
        .position(|f| matches!(f, Frame::Stream { chunk, .. } if chunk.msg_id == 0 && chunk.msg_offset_bytes == 0))
        .unwrap();
    assert!(zero > first_of_0, "offset 0 came after later bytes of message 0");
}

/// EECN or classic ECN in QUIC mode (`ConnectionConfig::ecn_mode`).
fn ecn_config(controller: ControllerKind, ecn: crate::ecn::EcnMode) -> ConnectionConfig {
    let mut cfg = config(10_000_000, 100);
    cfg.controller = controller;
    cfg.ecn = Some(ecn);
    cfg
}

/// The server sends `bytes` as soon as it is connected; routers rewrite the ECN field of the
/// server's datagrams numbered in `marks` (0 is its Initial).
fn ecn_pair(cfg: ConnectionConfig, bytes: u64, marks: Vec<(u64, Ecn)>) -> Pair {
    let mut p = Pair::new(cfg, 10_000_000, 10 * MS);
    p.respond(bytes);
    p.remark = Box::new(move |side, n, pkt| {
        if let Some(&(_, e)) = marks.iter().find(|m| side == 1 && m.0 == n) {
            pkt.ecn = e;
        }
    });
    p.run(10_000 * MS);
    assert_eq!(p.seen[0].completed.len(), 1, "the response arrives");
    p
}

/// EECN in QUIC mode (EECN §4.2, RFC 9000 §13.4): every datagram of both ends leaves ECT(1),
/// the handshake's included, and the ACK frames carry the counts (here: all ECT(1)).
#[test]
fn eecn_sends_every_datagram_ect1_and_acks_carry_the_counts() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let seen: Rc<RefCell<Vec<(usize, Ecn)>>> = Rc::default();
    let mut p = Pair::new(ecn_config(ControllerKind::Eecn, crate::ecn::EcnMode::Eecn), 10_000_000, 10 * MS);
    p.respond(50_000);
    let log = seen.clone();
    p.remark = Box::new(move |side, _, pkt| log.borrow_mut().push((side, pkt.ecn)));
    p.run(10_000 * MS);
    let seen = seen.borrow();
    assert!(seen.iter().filter(|s| s.0 == 0).count() > 3 && seen.iter().filter(|s| s.0 == 1).count() > 30);
    assert!(seen.iter().all(|s| s.1 == Ecn::Ect1), "{seen:?}");
    // The client's ACK frames report ECT(1) only, and at the end every server datagram.
    let counts: Vec<[u64; 3]> =
        p.frames[0].iter().filter_map(|(_, f)| if let Frame::Ack(a) = f { a.ecn } else { None }).collect();
    assert!(!counts.is_empty() && counts.iter().all(|c| c[0] == 0 && c[2] == 0 && c[1] > 0), "{counts:?}");
    assert_eq!(p.server().quic_stats().congestion_events, 0);
    assert_eq!(p.server().handshake_congestion_level(), 0);
}

/// EECN §4.4.1 in QUIC mode: the level a router puts on the server's handshake (its Initial
/// datagram here), read from the client's ACK of it, sets the server's initial window when
/// the handshake completes: 10 packets without a mark, 5 after CL(1) (`10`), 1 after CL(2)
/// (`11`). The handshake's own ACKs do not count as data acknowledged.
#[test]
fn the_handshake_level_sets_the_initial_window() {
    let mss = 1452;
    for (mark, level, packets) in [(None, 0, 10), (Some(Ecn::Ect0), 1, 5), (Some(Ecn::Ce), 2, 1)] {
        let marks = mark.map(|e| vec![(0, e)]).unwrap_or_default();
        let p = ecn_pair(ecn_config(ControllerKind::Eecn, crate::ecn::EcnMode::Eecn), 200_000, marks);
        let s = p.server();
        assert_eq!(s.handshake_congestion_level(), level);
        let done = s.quic_stats().handshake_done_ns.expect("connected");
        let at_done = p.server_cc.iter().find(|c| c.0 >= done).expect("a record at the handshake's end");
        assert_eq!(at_done.1, packets * mss, "level {level}: window when the handshake completed");
        // A mark on the handshake is no congestion event of the data.
        assert_eq!(s.quic_stats().congestion_events, 0, "level {level}");
    }
}

/// EECN Algorithm 1 in QUIC mode, from the ACK frames' counts: a grown CE count is CL(2)
/// (ssthresh = cwnd = max(2, cwnd / d), d = 8 above the average RTT, 4 below); one response
/// per recovery period, but a higher level than the period's answered at once (CL(1) then
/// CL(2) on consecutive datagrams: two events; CL(2) twice: one).
#[test]
fn eecn_answers_cl2_once_per_period_and_a_higher_level_at_once() {
    let cfg = || ecn_config(ControllerKind::Eecn, crate::ecn::EcnMode::Eecn);
    let p = ecn_pair(cfg(), 1_000_000, vec![(60, Ecn::Ce)]);
    assert_eq!(p.server().quic_stats().congestion_events, 1);
    let cc = &p.server_cc;
    let i = (1..cc.len()).find(|&i| cc[i].1 < cc[i - 1].1).expect("a reduction");
    let (before, after) = (cc[i - 1].1, cc[i].1);
    let cut = |d: u64| (before / d).max(2 * 1452);
    assert!(after.abs_diff(cut(8)) <= 1 || after.abs_diff(cut(4)) <= 1, "{before} -> {after}");
    assert_eq!(cc[i].2, after, "ssthresh = cwnd");

    let p = ecn_pair(cfg(), 1_000_000, vec![(60, Ecn::Ce), (61, Ecn::Ce)]);
    assert_eq!(p.server().quic_stats().congestion_events, 1, "CL(2) twice in one period");
    let p = ecn_pair(cfg(), 1_000_000, vec![(60, Ecn::Ect0), (61, Ecn::Ce)]);
    assert_eq!(p.server().quic_stats().congestion_events, 2, "CL(1), then CL(2) within its period");
    let p = ecn_pair(cfg(), 1_000_000, vec![(60, Ecn::Ce), (61, Ecn::Ect0)]);
    assert_eq!(p.server().quic_stats().congestion_events, 1, "CL(1) after CL(2): nothing more");
}

/// Classic ECN in QUIC mode (RFC 9000 §13.4, RFC 9002 §7.1): datagrams leave ECT(0), whose
/// count grows with every ACK and means nothing; a grown CE count halves NewReno's window
/// once per period.
#[test]
fn classic_ecn_reacts_to_ce_only() {
    let cfg = || ecn_config(ControllerKind::NewReno, crate::ecn::EcnMode::Classic);
    let p = ecn_pair(cfg(), 1_000_000, vec![]);
    assert_eq!(p.server().quic_stats().congestion_events, 0);
    let counts: Vec<[u64; 3]> =
        p.frames[0].iter().filter_map(|(_, f)| if let Frame::Ack(a) = f { a.ecn } else { None }).collect();
    assert!(counts.last().is_some_and(|c| c[0] > 100 && c[1] == 0 && c[2] == 0), "{counts:?}");
    let p = ecn_pair(cfg(), 1_000_000, vec![(60, Ecn::Ce), (61, Ecn::Ce)]);
    assert_eq!(p.server().quic_stats().congestion_events, 1);
    let cc = &p.server_cc;
    let i = (1..cc.len()).find(|&i| cc[i].1 < cc[i - 1].1).expect("a reduction");
    assert_eq!(cc[i].1, cc[i - 1].1 / 2, "NewReno halves");
    // Off: no ECN-capable datagram, no counts.
    let p = ecn_pair(config(10_000_000, 100), 100_000, vec![]);
    assert!(p.frames[0].iter().all(|(_, f)| !matches!(f, Frame::Ack(a) if a.ecn.is_some())));
}

/// VCP's load codes travel in TCP's ECE/CWR flags: `ConnectionConfig::validate` refuses it in
/// QUIC mode, named by what chose it (the ECN setting, or the controller's default), and
/// keeps it in TCP mode.
#[test]
fn vcp_is_refused_in_quic_mode_by_validate() {
    let mut cfg = ecn_config(ControllerKind::NewReno, crate::ecn::EcnMode::Vcp);
    assert!(cfg.validate().unwrap_err().starts_with("ecn: VCP's load codes"));
    cfg.ecn = None;
    cfg.controller = ControllerKind::Vcp;
    assert!(cfg.validate().unwrap_err().starts_with("cc: VCP's load codes"));
    cfg.mode = TransportMode::Tcp;
    assert_eq!(cfg.validate(), Ok(()));
}
