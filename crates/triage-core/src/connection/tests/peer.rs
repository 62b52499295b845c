//! The core does not trust its peer (issue 10): data beyond the receive window is dropped
//! and counted, not buffered; malformed sequence numbers and a clock that steps back do not
//! panic (tests run with overflow checks).

use super::*;
use crate::sched::MsgChunk;

fn data(seq: u64, len: u32) -> Packet {
    Packet {
        src: SERVER,
        dst: CLIENT,
        flags: TcpFlags(TcpFlags::ACK | TcpFlags::PSH),
        seq,
        ack: 1,
        window_bytes: 1 << 20,
        payload_bytes: len,
        chunks: [MsgChunk::new(1, seq, len, u64::MAX, 0)].into_iter().collect(),
        ..Default::default()
    }
}

#[test]
fn out_of_window_segments_are_dropped_and_counted() {
    let cfg = ConnectionConfig { receive_buffer_bytes: 64 * 1448, ..Default::default() };
    let (mut c, _s) = handshake(cfg);
    // 100,000 segments far beyond the window: none is held.
    for k in 0..100_000u64 {
        c.handle_packet(4 * MS, &data(1_000_000 + k * 1448, 1448));
    }
    assert_eq!(c.stats().out_of_window_segments, 100_000);
    assert_eq!(c.stats().out_of_window_bytes, 100_000 * 1448);
    let ack = c.poll_transmit(4 * MS).unwrap();
    assert_eq!(ack.window_bytes, 64 * 1448, "nothing buffered: the whole window is still offered");
    assert_eq!(ack.sack_len, 0);

    // Within the window, overlapping segments with distinct starts: held only while the
    // out-of-order bytes fit the buffer.
    for k in 0..10_000u64 {
        c.handle_packet(5 * MS, &data(2 + k, 32 * 1448));
    }
    let ack = c.poll_transmit(5 * MS).unwrap();
    assert!(ack.sack_len > 0, "out-of-order data is held");
    // The free space shrank, but the offered right edge does not move left (RFC 9293
    // §3.8.6): what lies within it still fits the buffer, and more is dropped below.
    assert_eq!(ack.ack + ack.window_bytes, 1 + 64 * 1448);
    assert!(c.stats().out_of_window_segments >= 100_000 + 9_000, "{:?}", c.stats());

    // In-window data is still taken: the hole at 1 fills and everything held is delivered.
    c.handle_packet(6 * MS, &data(1, 1));
    assert!(c.stats().bytes_delivered > 32 * 1448, "{:?}", c.stats());
}

#[test]
fn a_sender_within_the_window_loses_nothing_to_the_bound() {
    // A 10-segment buffer and a loss: everything the sender puts in flight fits.
    let cfg = ConnectionConfig { receive_buffer_bytes: 14_480, ..Default::default() };
    let mut h = Harness::new(cfg, 100_000_000, 10 * MS);
    h.drop = Box::new(|_, c2s, p, n| !c2s && p.payload_bytes > 0 && n % 17 == 5);
    h.run(60_000 * MS, serve_page(cats_page()));
    assert_eq!(h.completions().len(), 5);
    assert_eq!(h.client.stats().out_of_window_segments, 0);
}

#[test]
fn malformed_sequence_numbers_do_not_panic() {
    let syn = Packet { src: CLIENT, dst: SERVER, flags: TcpFlags(TcpFlags::SYN), seq: u64::MAX, ..Default::default() };
    assert!(Connection::accept(ConnectionConfig::default(), 0, &syn).is_none(), "a SYN whose seq + 1 overflows");
    let (mut c, mut s) = handshake(ConnectionConfig::default());
    for seq in [u64::MAX, u64::MAX - 1000, u64::MAX / 2] {
        let mut p = data(seq, 1448);
        p.flags.0 |= TcpFlags::FIN;
        c.handle_packet(4 * MS, &p);
    }
    // ACKs of data never sent, SACK blocks anywhere and an enormous window.
    let mut ack = Packet {
        src: CLIENT,
        dst: SERVER,
        flags: TcpFlags(TcpFlags::ACK),
        ack: u64::MAX,
        window_bytes: u64::MAX,
        sack_len: 3,
        ..Default::default()
    };
    ack.sack = [
        SackBlock { start: u64::MAX - 1, end: 2 },
        SackBlock { start: 0, end: u64::MAX },
        SackBlock { start: 5, end: 5 },
    ];
    s.write(4 * MS, 7, 100_000, None);
    while s.poll_transmit(4 * MS).is_some() {}
    s.handle_packet(5 * MS, &ack);
    while s.poll_transmit(5 * MS).is_some() {}
    while c.poll_transmit(5 * MS).is_some() {}
}

#[test]
fn a_clock_that_steps_back_does_not_panic() {
    let (mut c, mut s) = handshake(ConnectionConfig::default());
    s.write(100 * MS, 1, 20 * 1448, None);
    let mut sent = Vec::new();
    while let Some(p) = s.poll_transmit(100 * MS) {
        sent.push(p);
    }
    for p in &sent {
        c.handle_packet(110 * MS, p);
    }
    // The ACKs reach the server "before" its data left (the caller broke the contract).
    while let Some(a) = c.poll_transmit(110 * MS) {
        s.handle_packet(50 * MS, &a);
    }
    s.handle_timeout(10 * MS);
    while s.poll_transmit(10 * MS).is_some() {}
    assert!(s.srtt_ns().is_some());
}

/// A peer may acknowledge any byte, also one inside a segment: the segment stays in flight
/// and is sent again whole, from its start, with every message piece it first carried (the
/// pieces of its acknowledged part too; found by fuzzing `tcp_segment`).
#[test]
fn an_ack_inside_a_segment_keeps_its_pieces_for_the_retransmission() {
    let (mut c, mut s) = handshake(ConnectionConfig { min_rto_ns: 200 * MS, ..Default::default() });
    // Two messages in one segment: 1,000 bytes of message 7, then 448 of message 8.
    s.write_message(4 * MS, MessageMeta { id: 7, len_bytes: 1000, priority: 2 });
    s.write_message(4 * MS, MessageMeta { id: 8, len_bytes: 5000, priority: 2 });
    let first = s.poll_transmit(4 * MS).unwrap();
    assert_eq!((first.seq, first.payload_bytes, first.chunks.len()), (1, 1448, 2));
    while s.poll_transmit(4 * MS).is_some() {}
    // An ACK 1,200 bytes into the first segment (past message 7's piece).
    let ack = Packet {
        src: CLIENT,
        dst: SERVER,
        flags: TcpFlags(TcpFlags::ACK),
        ack: 1 + 1200,
        window_bytes: 1 << 20,
        ..Default::default()
    };
    s.handle_packet(5 * MS, &ack);
    // The timeout sends the first segment again, whole.
    let rto = s.poll_timeout().unwrap();
    s.handle_timeout(rto);
    let again = s.poll_transmit(rto).unwrap();
    assert_eq!((again.seq, again.payload_bytes), (1, 1448));
    assert_eq!(again.chunks, first.chunks);
    // The client takes it and the rest as usual.
    c.handle_packet(rto + MS, &again);
    assert_eq!(c.stats().bytes_delivered, 1448);
}

/// RFC 1122 §4.2.3.4, the sender's silly-window avoidance: a window that is not a multiple
/// of the MSS is filled with whole segments; the sliver left at its edge waits for the ACK
/// that opens room for a whole one (ns-3 and Linux alike). With nothing in flight, a window
/// smaller than one segment is used as it is (no ACK would come to open it).
#[test]
fn a_window_edge_gets_whole_segments_not_slivers() {
    let window = 10 * 1448 + 448;
    let cfg = ConnectionConfig { receive_buffer_bytes: window, initial_window_segments: 20, ..Default::default() };
    let (_c, mut s) = handshake(cfg);
    s.write_message(4 * MS, MessageMeta { id: 1, len_bytes: 100_000, priority: 2 });
    let mut sent = Vec::new();
    while let Some(p) = s.poll_transmit(4 * MS) {
        sent.push((p.seq, p.payload_bytes));
    }
    // Ten whole segments; the 448 bytes left of the window are not sent.
    assert_eq!(sent, (0..10u64).map(|k| (1 + k * 1448, 1448)).collect::<Vec<_>>());
    // The first segment's ACK moves the edge by 1,448: room for one whole segment (1,896).
    let ack = |n: u64, window_bytes: u64| Packet {
        src: CLIENT,
        dst: SERVER,
        flags: TcpFlags(TcpFlags::ACK),
        ack: 1 + n * 1448,
        window_bytes,
        ..Default::default()
    };
    s.handle_packet(5 * MS, &ack(1, window));
    let next = s.poll_transmit(5 * MS).unwrap();
    assert_eq!((next.seq, next.payload_bytes), (1 + 10 * 1448, 1448));
    assert!(s.poll_transmit(5 * MS).is_none(), "448 bytes of room: wait");

    // A peer whose whole window is 1,000 bytes, with nothing in flight: 1,000 bytes go.
    s.handle_packet(6 * MS, &ack(11, 1000));
    let small = s.poll_transmit(6 * MS).unwrap();
    assert_eq!((small.seq, small.payload_bytes), (1 + 11 * 1448, 1000));
    assert!(s.poll_transmit(6 * MS).is_none());
}
