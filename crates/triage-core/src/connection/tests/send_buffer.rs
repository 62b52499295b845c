//! The send buffer (`ConnectionConfig::send_buffer_bytes`) and, with `ns3_compat`, ns-3
//! 3.37's buffer, NextSeg() rule (3), its pipe and its receive window.

use super::*;

const SEG: u64 = 1448;

/// An ACK from the client: cumulative `ack`, SACK blocks as given.
fn ack(ack: u64, sacks: &[(u64, u64)]) -> Packet {
    let mut p = Packet {
        src: CLIENT,
        dst: SERVER,
        flags: TcpFlags(TcpFlags::ACK),
        ack,
        window_bytes: 1 << 20,
        ..Default::default()
    };
    for (i, &(start, end)) in sacks.iter().enumerate() {
        p.sack[i] = SackBlock { start, end };
    }
    p.sack_len = sacks.len() as u8;
    p
}

/// Start of data segment `n` (from 0; the SYN took sequence number 0).
fn seg(n: u64) -> u64 {
    1 + n * SEG
}

/// A server that has written a long message, with a send buffer of `segments` segments.
fn sender(segments: u64, ns3: bool) -> Connection {
    let cfg = ConnectionConfig {
        controller: ControllerKind::NewReno,
        send_buffer_bytes: Some(segments * SEG),
        ns3_compat: ns3,
        ..Default::default()
    };
    let (_c, mut s) = handshake(cfg);
    s.write_message(3 * MS, MessageMeta { id: 1, len_bytes: 200 * SEG, priority: 0 });
    s
}

fn sends(s: &mut Connection, t: u64) -> Vec<(u64, u32, bool)> {
    std::iter::from_fn(|| s.poll_transmit(t)).map(|p| (p.seq, p.payload_bytes, p.flags.has(TcpFlags::FIN))).collect()
}

#[test]
fn the_send_buffer_bounds_what_is_outstanding() {
    for ns3 in [false, true] {
        // Initial window 10, buffer 4: four segments go, and no FIN (the application has
        // more to write).
        let mut s = sender(4, ns3);
        let t = 3 * MS;
        assert_eq!(sends(&mut s, t), (0..4).map(|n| (seg(n), SEG as u32, false)).collect::<Vec<_>>(), "ns3 {ns3}");
        // A cumulative ACK of two segments frees two: two more go (ns-3's application is
        // told on such an ACK, `NewAck`).
        s.handle_packet(t + MS, &ack(seg(2), &[]));
        assert_eq!(sends(&mut s, t + MS), vec![(seg(4), SEG as u32, false), (seg(5), SEG as u32, false)]);
        assert_eq!(s.bytes_in_flight(), 4 * SEG);
    }
}

#[test]
fn ns3_refills_its_buffer_on_a_new_ack_not_on_a_duplicate_one() {
    // An ACK that moves SND.UNA by one segment and newly SACKs the third is a duplicate
    // ACK to ns-3 (RFC 6675 §2): its sender stays in CA_DISORDER and does not tell the
    // application there is room, so with the buffer's four segments sent nothing new goes.
    // Without `ns3_compat` the application keeps the buffer full and a segment goes.
    for (ns3, expected) in [(false, vec![(seg(4), SEG as u32, false)]), (true, vec![])] {
        let mut s = sender(4, ns3);
        let t = 3 * MS;
        assert_eq!(sends(&mut s, t).len(), 4);
        s.handle_packet(t + MS, &ack(seg(1), &[(seg(2), seg(3))]));
        assert!(!s.in_recovery());
        assert_eq!(sends(&mut s, t + MS), expected, "ns3 {ns3}");
        // The next cumulative ACK (through the SACKed segment 2), without new SACK
        // information, is a new ACK: ns-3's application fills the buffer again, up to
        // SND.UNA (segment 3) plus four segments, as the other one had kept it.
        s.handle_packet(t + 2 * MS, &ack(seg(3), &[]));
        let next: Vec<u64> = sends(&mut s, t + 2 * MS).into_iter().map(|x| x.0).collect();
        assert_eq!(next, if ns3 { vec![seg(4), seg(5), seg(6)] } else { vec![seg(5), seg(6)] }, "ns3 {ns3}");
        assert_eq!(s.bytes_in_flight(), 4 * SEG, "segments 3 to 6, ns3 {ns3}");
    }
}

#[test]
fn ns3_rule_3_resends_the_first_unsacked_segment_and_counts_it_twice() {
    // Buffer and initial window of ten segments, all sent; segment 0 lost. ACKs SACK
    // segments 1, 1-2, ..., 1-8, then 1-8 again: the third marks segment 0 lost and starts
    // recovery (segment 0 goes again, rule 1). From then on neither a lost segment (rule 1)
    // nor unsent data (rule 2: the buffer is full and SND.UNA has not moved) is there; once
    // PRR lets a segment go (the eighth ACK: the pipe, 2 segments, is below ssthresh, 3),
    // ns-3 sends again the first segment neither SACKed, lost nor resent (rule 3): segment
    // 9, still in flight, above every SACKed one. Without `ns3_compat` nothing goes.
    let run = |ns3: bool| {
        let mut s = sender(10, ns3);
        let mut t = 3 * MS;
        assert_eq!(sends(&mut s, t).len(), 10);
        let mut out = Vec::new();
        for i in 1..=9u64 {
            t += MS;
            s.handle_packet(t, &ack(seg(0), &[(seg(1), seg(1 + i.min(8)))]));
            out.extend(sends(&mut s, t).into_iter().map(|x| (i, x.0, s.bytes_in_flight())));
        }
        (s, out)
    };
    let (linux, out) = run(false);
    assert_eq!(out.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(), vec![(3, seg(0))]);
    assert_eq!(linux.stats().retransmitted_segments, 1);
    let (mut s, out) = run(true);
    // The pipe after each: ten sent, less seven SACKed and one lost, plus the
    // retransmission (7 segments); then ten less eight SACKed and one lost, plus the
    // retransmission, plus segment 9 once more (3).
    assert_eq!(out, vec![(3, seg(0), 7 * SEG), (8, seg(9), 3 * SEG)]);
    assert_eq!(s.ssthresh_bytes(), 3 * SEG, "half the pipe after the third ACK (ns3_compat)");
    // Segment 9 SACKed: both its counts leave the pipe (ns-3's `SackBlockUpdate` takes it
    // out of `m_retrans` as well), and segment 0's retransmission is what is left.
    let t = 20 * MS;
    s.handle_packet(t, &ack(seg(0), &[(seg(1), seg(10))]));
    assert_eq!(s.bytes_in_flight(), SEG, "segment 0's retransmission");
    // Everything acknowledged: the pipe holds only what goes next (the application fills
    // the buffer again, `NewAck`).
    s.handle_packet(t + MS, &ack(seg(10), &[]));
    assert_eq!(s.bytes_in_flight(), 0);
    let next = sends(&mut s, t + MS);
    assert!(!next.is_empty() && next[0].0 == seg(10), "{next:?}");
    assert_eq!(s.bytes_in_flight(), next.len() as u64 * SEG);
}

#[test]
fn ns3_offers_its_whole_receive_buffer_whatever_it_holds_out_of_order() {
    // The receiver gets segments 1 and 3, then 0: RCV.NXT moves to segment 2 with segment
    // 3 held. By default the window's right edge moves by what is free (the buffer less
    // the held segment); ns-3 3.37's `MaxRxSequence` offers the whole buffer past RCV.NXT.
    for (ns3, window) in [(false, (1 << 20) - SEG), (true, 1 << 20)] {
        let cfg = ConnectionConfig { ns3_compat: ns3, ..Default::default() };
        let (mut c, mut s) = handshake(cfg);
        s.write_message(3 * MS, MessageMeta { id: 1, len_bytes: 4 * SEG, priority: 0 });
        let data: Vec<Packet> = std::iter::from_fn(|| s.poll_transmit(3 * MS)).collect();
        for (i, d) in [&data[1], &data[3], &data[0]].into_iter().enumerate() {
            c.handle_packet(4 * MS + i as u64, d);
            let reply =
                c.poll_transmit(4 * MS + i as u64).expect("out of order and hole-filling data is ACKed at once");
            let expected = if i < 2 { (seg(0), 1 << 20) } else { (seg(2), window) };
            assert_eq!((reply.ack, reply.window_bytes), expected, "ns3 {ns3}, arrival {i}");
        }
    }
}
