//! Karn's rule (RFC 6298 §3; Linux `tcp_clean_rtx_queue`, `FLAG_RETRANS_DATA_ACKED`): an ACK
//! that cumulatively covers retransmitted data gives no RTT sample, not even of newer
//! segments it also covers, since it may answer the retransmission or the original.

use super::*;
use proptest::prelude::*;

/// A bulk transfer of `bytes` from server to client over a 10 Mbps path with 20 ms one-way
/// delay. The receive buffer (2 BDP) bounds the queue the harness's unbounded links build,
/// so every true RTT lies between 40 and ~130 ms. Returns the harness after the run.
fn bulk(controller: ControllerKind, bytes: u64, loss_per_mille: u64, seed: u64) -> Harness {
    let cfg = ConnectionConfig {
        controller,
        min_rto_ns: 200 * MS,
        delayed_ack_timeout_ns: 40 * MS,
        receive_buffer_bytes: 100_000,
        ..Default::default()
    };
    let mut h = Harness::new(cfg, 10_000_000, 20 * MS);
    h.drop = bernoulli(loss_per_mille, seed);
    let msgs = vec![MessageMeta { id: 1, len_bytes: bytes, priority: 0 }];
    h.run(100_000_000 * MS, serve_page(msgs));
    h
}

/// The issue-10 case: NewReno, 20% loss both ways, 2 MB. Before the rule an ACK covering a
/// retransmission and older unretransmitted segments sampled the whole RTO backoff; SRTT
/// reached minutes and the transfer took thousands of simulated seconds.
#[test]
fn no_rtt_sample_from_an_ack_covering_retransmitted_data() {
    let h = bulk(ControllerKind::NewReno, 2_000_000, 200, 7);
    assert_eq!(h.client.stats().bytes_delivered, 2_000_000);
    let srtt_max = h.server_srtt_max_ns;
    assert!(srtt_max < 4 * 40 * MS, "SRTT reached {} ms on a 40 ms path", srtt_max / MS);
    let done = h.completions().last().unwrap().0;
    assert!(done < 1_000_000 * MS, "2 MB took {} s", done / 1_000_000_000);
}

/// A scripted case: the first data segment is lost, the RTO retransmits it, and the ACK of
/// the retransmission also covers the nine segments sent with the original. That ACK must
/// not yield a sample (it would be RTO + RTT old).
#[test]
fn ack_of_a_timeout_retransmission_and_older_data_is_not_sampled() {
    let cfg = ConnectionConfig { min_rto_ns: 200 * MS, ..Default::default() };
    let (mut c, mut s) = handshake(cfg);
    s.write(3 * MS, 1, 10 * 1448, None);
    let mut flight = Vec::new();
    while let Some(p) = s.poll_transmit(3 * MS) {
        flight.push(p);
    }
    assert_eq!(flight.len(), 10);
    let srtt_before = s.srtt_ns().unwrap();
    // Lose the first segment and every ACK of the other nine (so no SACK reaches the server).
    for p in &flight[1..] {
        c.handle_packet(13 * MS, p);
    }
    while c.poll_transmit(13 * MS).is_some() {}
    let rto = s.poll_timeout().unwrap();
    s.handle_timeout(rto);
    let retx = s.poll_transmit(rto).unwrap();
    assert_eq!(retx.seq, flight[0].seq);
    c.handle_packet(rto + 10 * MS, &retx);
    let ack = c.poll_transmit(rto + 10 * MS).unwrap();
    assert_eq!(ack.ack, flight[9].seq + 1448, "the ACK covers all ten");
    s.handle_packet(rto + 20 * MS, &ack);
    assert_eq!(s.srtt_ns().unwrap(), srtt_before, "no sample from an ACK covering retransmitted data");
    assert_eq!(s.latest_rtt_ns(), Some(2 * MS), "the last sample is still the handshake's");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Under 0-30% Bernoulli loss of data and ACKs, SRTT stays within a small factor of the
    /// path's RTT (40 ms; queueing bounded by the receive window adds up to ~80 ms, a delayed
    /// ACK up to 40 ms), for every loss-based controller.
    #[test]
    fn srtt_stays_near_the_path_rtt_under_loss(
        loss_per_mille in 0u64..=300,
        seed in any::<u64>(),
        cc in prop::sample::select(vec![ControllerKind::NewReno, ControllerKind::Cubic, ControllerKind::Bbr]),
    ) {
        let h = bulk(cc.clone(), 300_000, loss_per_mille, seed);
        prop_assert_eq!(h.client.stats().bytes_delivered, 300_000);
        let srtt_max = h.server_srtt_max_ns;
        prop_assert!(srtt_max < 4 * 40 * MS, "{:?}, {}‰: SRTT reached {} ms on a 40 ms path", cc, loss_per_mille, srtt_max / MS);
    }
}
