//! Lost retransmissions (RFC 8985 §6.2's transmission order, `crate::recovery::rexmit`) and
//! the receive window's right edge, which never moves left (RFC 9293 §3.8.6).

use super::*;

/// Drops the server's `nth` packet and the first `extra` retransmissions of its segment.
fn drop_segment_and_retransmissions(nth: u64, extra: u32) -> DropHook {
    let mut lost_seq = None;
    let mut copies_left = extra;
    Box::new(move |_, c2s, p, n| {
        if c2s {
            return false;
        }
        if n == nth {
            lost_seq = Some(p.seq);
            return true;
        }
        if lost_seq == Some(p.seq) && p.payload_bytes > 0 && copies_left > 0 {
            copies_left -= 1;
            return true;
        }
        false
    })
}

fn data_sends_of(h: &Harness, seq: u64) -> Vec<u64> {
    h.log.iter().filter(|(_, c2s, p)| !*c2s && p.seq == seq && p.payload_bytes > 0).map(|(t, _, _)| *t).collect()
}

#[test]
fn a_lost_retransmission_is_sent_again_after_a_round_trip_not_an_rto() {
    let cfg = ConnectionConfig { trace_prr: true, ..Default::default() };
    let mut h = Harness::new(cfg, 2_000_000, 25 * MS);
    h.drop = drop_segment_and_retransmissions(20, 1);
    h.run(20_000 * MS, serve_page(cats_page()));
    let total: u64 = cats_page().iter().map(|m| m.len_bytes).sum();
    assert_eq!(h.client.stats().bytes_delivered, total, "every byte, once");
    assert_eq!(h.client.stats().duplicate_bytes_received, 0);
    let s = h.server.as_ref().unwrap();
    assert_eq!(s.stats().rto_count, 0, "{:?}", s.stats());
    assert_eq!(s.stats().lost_retransmissions, 1);
    assert_eq!(s.stats().retransmitted_segments, 2);
    assert_eq!(s.stats().fast_recoveries, 1, "the second retransmission stays in the same episode");
    let seq = h.log.iter().filter(|(_, c2s, _)| !*c2s).nth(20).unwrap().2.seq;
    let sends = data_sends_of(&h, seq);
    assert_eq!(sends.len(), 3, "original, lost retransmission, retransmission: {sends:?}");
    // The retransmission is found lost when data sent after it is SACKed: about one round
    // trip (50 ms plus queueing at 2 Mbps) later, not at the 1 s minimum RTO.
    let gap = sends[2] - sends[1];
    assert!((50 * MS..400 * MS).contains(&gap), "second retransmission {} ms after the first", gap / MS);
    assert_eq!(h.completions().len(), 5);
}

#[test]
fn a_retransmission_acknowledged_in_time_is_not_sent_again() {
    // A single loss: its retransmission arrives, and later data's SACKs must not make it
    // look lost (it was sent after them only in sequence, not in time).
    let mut h = Harness::new(ConnectionConfig::default(), 2_000_000, 25 * MS);
    h.drop = drop_segment_and_retransmissions(20, 0);
    h.run(20_000 * MS, serve_page(cats_page()));
    let s = h.server.as_ref().unwrap();
    assert_eq!(s.stats().retransmitted_segments, 1);
    assert_eq!(s.stats().lost_retransmissions, 0);
}

#[test]
fn the_advertised_window_never_shrinks_while_out_of_order_data_waits() {
    // A receive buffer of 40 segments and a hole held open for a while: out-of-order data
    // fills the buffer, but the right edge (ack + window) of the client's ACKs never moves
    // left.
    let cfg = ConnectionConfig { receive_buffer_bytes: 40 * 1448, ..Default::default() };
    let mut h = Harness::new(cfg, 10_000_000, 10 * MS);
    h.drop = drop_segment_and_retransmissions(10, 2);
    h.run(20_000 * MS, serve_page(cats_page()));
    let total: u64 = cats_page().iter().map(|m| m.len_bytes).sum();
    assert_eq!(h.client.stats().bytes_delivered, total);
    let mut edge = 0u64;
    let mut held_out_of_order = false;
    for (_, c2s, p) in &h.log {
        if !*c2s || p.flags.has(TcpFlags::SYN) {
            continue;
        }
        let e = p.ack + p.window_bytes;
        assert!(e >= edge, "right edge moved left: {e} after {edge} ({p:?})");
        // A SACK block means out-of-order data was held: the free space was smaller than
        // the edge says (the edge used to be RCV.NXT + free space, and moved left here).
        held_out_of_order |= p.sack_len > 0;
        edge = e;
    }
    assert!(held_out_of_order, "the script never held out-of-order data");
}

#[test]
fn ns3_compat_leaves_a_lost_retransmission_to_the_rto() {
    // The same loss as `a_lost_retransmission_is_sent_again_after_a_round_trip_not_an_rto`:
    // ns-3 3.37 has no lost-retransmission detection, so the second retransmission waits
    // for the retransmission timer: the 1 s minimum RTO from the last ACK that moved
    // SND.UNA (RFC 6298 §5.3), which came a little before the first retransmission.
    let cfg = ConnectionConfig { ns3_compat: true, ..Default::default() };
    let mut h = Harness::new(cfg, 2_000_000, 25 * MS);
    h.drop = drop_segment_and_retransmissions(20, 1);
    h.run(20_000 * MS, serve_page(cats_page()));
    let total: u64 = cats_page().iter().map(|m| m.len_bytes).sum();
    assert_eq!(h.client.stats().bytes_delivered, total, "every byte");
    let s = h.server.as_ref().unwrap();
    assert_eq!(s.stats().lost_retransmissions, 0);
    assert_eq!(s.stats().rto_count, 1, "{:?}", s.stats());
    let seq = h.log.iter().filter(|(_, c2s, _)| !*c2s).nth(20).unwrap().2.seq;
    let sends = data_sends_of(&h, seq);
    assert_eq!(sends.len(), 3, "original, lost retransmission, retransmission after the RTO: {sends:?}");
    let gap = sends[2] - sends[1];
    assert!((900 * MS..=1_000 * MS).contains(&gap), "second retransmission {} ms after the first", gap / MS);
}
