//! RACK-TLP (RFC 8985) in TCP mode, `ConnectionConfig::rack`: a loss that leaves fewer than
//! DupThresh duplicate ACKs is found by the reordering timer, and a lost tail by a loss
//! probe, where without RACK-TLP both wait for the RTO.

use super::*;

/// Drops the server's `k`-th data segment (0-based), its first transmission only.
fn drop_kth_data_segment(k: usize) -> DropHook {
    let mut seen = 0usize;
    let mut lost_seq = None;
    Box::new(move |_, c2s, p, _| {
        if c2s || p.payload_bytes == 0 || lost_seq.is_some_and(|s| s != p.seq) && lost_seq.is_some() {
            return false;
        }
        if lost_seq == Some(p.seq) {
            return false; // the retransmission goes through
        }
        let drop = seen == k;
        seen += 1;
        if drop {
            lost_seq = Some(p.seq);
        }
        drop
    })
}

fn data_sends(h: &Harness) -> Vec<(u64, u64)> {
    h.log.iter().filter(|(_, c2s, p)| !*c2s && p.payload_bytes > 0).map(|(t, _, p)| (*t, p.seq)).collect()
}

fn run(rack: bool, len_bytes: u64, lost: usize) -> Harness {
    // Linux's timers: a 200 ms RTO floor, ACKs delayed at most 40 ms.
    let cfg = ConnectionConfig { min_rto_ns: 200 * MS, delayed_ack_timeout_ns: 40 * MS, rack, ..Default::default() };
    let mut h = Harness::new(cfg, 10_000_000, 20 * MS);
    h.drop = drop_kth_data_segment(lost);
    // One message and no FIN after it (a FIN would be one more segment to SACK).
    h.run(10_000 * MS, move |now, is_server, e, conn| {
        if is_server && *e == Event::Connected {
            conn.write_message(now, MessageMeta { id: 1, len_bytes, priority: 2 });
        }
    });
    assert_eq!(h.completions().len(), 1, "rack = {rack}");
    h
}

/// Four segments, the second lost: two SACKs follow, one short of RFC 6675's threshold.
#[test]
fn a_loss_short_of_dupthresh_is_found_by_the_reordering_timer() {
    let len = 4 * 1400;
    let with = run(true, len, 1);
    let without = run(false, len, 1);
    let s = with.server.as_ref().unwrap().stats();
    assert_eq!((s.rto_count, s.fast_recoveries, s.retransmitted_segments, s.loss_probes), (0, 1, 1, 0), "{s:?}");
    let s0 = without.server.as_ref().unwrap().stats();
    assert_eq!((s0.rto_count, s0.fast_recoveries), (1, 0), "{s0:?}");
    // The first transmission of the lost segment and its retransmission.
    let sends = data_sends(&with);
    let lost_seq = sends[1].1;
    let tx: Vec<u64> = sends.iter().filter(|(_, q)| *q == lost_seq).map(|(t, _)| *t).collect();
    assert_eq!(tx.len(), 2, "{sends:?}");
    // RACK: judged lost at its send time + the RTT of the last segment SACKed + a quarter of
    // the minimum RTT (no reordering seen, fewer than DupThresh SACKed). The path: 20 ms each
    // way, 10 Mbps; the last segment's RTT is at least 40 ms, the minimum RTT about 40 ms.
    let gap = tx[1] - tx[0];
    assert!((50 * MS..58 * MS).contains(&gap), "retransmitted {} ms after the first copy", gap as f64 / 1e6);
    let tx0: Vec<u64> = data_sends(&without).iter().filter(|(_, q)| *q == lost_seq).map(|(t, _)| *t).collect();
    assert!(tx0[1] - tx0[0] >= 200 * MS, "without RACK the RTO (200 ms floor) resends it: {tx0:?}");
    assert!(with.completions()[0].0 + 150 * MS < without.completions()[0].0);
}

/// Three segments, the last lost: no SACK at all. TLP probes with the lost segment itself
/// (no new data is left), at the latest when the RTO would fire.
#[test]
fn a_lost_tail_is_probed_instead_of_waiting_for_the_rto() {
    let len = 3 * 1400;
    let with = run(true, len, 2);
    let without = run(false, len, 2);
    let s = with.server.as_ref().unwrap().stats();
    assert_eq!((s.rto_count, s.loss_probes, s.retransmitted_segments), (0, 1, 1), "{s:?}");
    let s0 = without.server.as_ref().unwrap().stats();
    assert_eq!((s0.rto_count, s0.loss_probes), (1, 0), "{s0:?}");
    // The probe goes when the RTO would have (Linux caps the probe timeout at the RTO):
    // the same instant, but the window is halved instead of collapsing to one segment.
    let resent = |h: &Harness| {
        let sends = data_sends(h);
        let lost_seq = sends[2].1;
        sends.iter().filter(|(_, q)| *q == lost_seq).map(|(t, _)| *t).nth(1).unwrap()
    };
    assert_eq!(resent(&with), resent(&without));
    let cwnd = |h: &Harness| h.server.as_ref().unwrap().cwnd_bytes();
    let iw = 10 * 1448;
    assert_eq!(
        cwnd(&with),
        iw / 2,
        "NewReno after a repaired tail loss: cwnd = ssthresh = cwnd / 2 (the page left it at its initial window)"
    );
    assert!(cwnd(&without) < 3 * 1448, "after the RTO: slow start from one segment, {}", cwnd(&without));
}
