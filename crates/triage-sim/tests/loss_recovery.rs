//! Issue 2, "What it must show" 2: loss and recovery are real.

mod common;

use common::*;
use triage_core::cc::ControllerKind;
use triage_core::ConnectionConfig;
use triage_sim::app::AppSpec;
use triage_sim::loss::LossModel;
use triage_sim::topology::LinkParams;
use triage_sim::Simulator;

const BULK: u64 = 2_000_000;

fn newreno() -> ConnectionConfig {
    ConnectionConfig {
        controller: ControllerKind::NewReno,
        trace_prr: true,
        min_rto_ns: 200 * MS,
        ..Default::default()
    }
}

/// Every message byte arrives exactly once, and PRR's per-ACK budget stays within
/// RFC 6937's bounds on every ACK of every recovery episode.
fn check_delivery_and_prr(sim: &Simulator, bytes: u64) -> (u64, u64) {
    let server = sim.connection(0, true).unwrap();
    let client = sim.connection(0, false).unwrap();
    assert_eq!(client.stats().bytes_delivered, bytes, "every byte delivered once");
    let msgs = &sim.recorder().messages;
    assert!(msgs.iter().all(|m| m.completed_ns.is_some()));
    let st = server.stats();
    assert_eq!(st.data_bytes_sent, bytes, "new data sent once");
    assert!(st.retransmitted_segments > 0, "this scenario loses packets");
    let mss = 1448;
    let log = server.prr_log();
    assert!(!log.is_empty(), "PRR ran");
    for (d, sent) in log {
        // What was sent in response to an ACK never exceeds that ACK's sndcnt (one segment
        // may always go out when nothing is in flight).
        let allowance = if d.pipe_bytes == 0 { d.sndcnt_bytes.max(mss) } else { d.sndcnt_bytes };
        assert!(*sent <= allowance, "sent {sent} > sndcnt {} ({d:?})", d.sndcnt_bytes);
        if !d.reduction_bound {
            // Proportional part: prr_out ≤ ceil(prr_delivered·ssthresh/RecoverFS), except
            // the one fast retransmit at the start of an episode.
            let bound =
                (d.prr_delivered_bytes as u128 * d.ssthresh_bytes as u128).div_ceil(d.recover_fs_bytes as u128) as u64;
            assert!(d.prr_out_bytes + sent <= bound.max(mss), "{d:?} sent {sent} bound {bound}");
        } else {
            // Slow-start reduction bound: never beyond ssthresh, and at most one MSS more
            // than delivered (PRR-SSRB).
            assert!(d.pipe_bytes + sent <= d.ssthresh_bytes.max(d.pipe_bytes + mss), "{d:?} sent {sent}");
            let limit = (d.prr_delivered_bytes.saturating_sub(d.prr_out_bytes)).max(1) + mss;
            assert!(*sent <= limit.max(d.sndcnt_bytes), "{d:?} sent {sent}");
        }
    }
    (st.retransmitted_segments, st.fast_recoveries)
}

#[test]
fn newreno_through_a_five_packet_droptail_queue() {
    let mut sim = one_flow(newreno(), LinkParams::new(2_000_000, 25 * MS, 5), AppSpec::Bulk { bytes: BULK }, 0);
    sim.run(600_000 * MS, |_| {});
    let drops = sim.network().links.iter().map(|l| l.queue().stats().dropped_packets).sum::<u64>();
    assert!(drops > 0, "the 5-packet queue overflows");
    let (retx, recoveries) = check_delivery_and_prr(&sim, BULK);
    assert!(retx >= drops, "every dropped data segment is retransmitted: {retx} < {drops}");
    assert!(recoveries >= 1);
    let fct = sim.recorder().messages[0].completed_ns.unwrap() as f64 / 1e9;
    let ideal = BULK as f64 * 1500.0 / 1448.0 * 8.0 / 2e6;
    assert!(fct < ideal * 1.25, "NewReno keeps a 2 Mbps link mostly busy: {fct:.2} s vs ideal {ideal:.2} s");
}

#[test]
fn newreno_over_two_percent_random_loss() {
    let link = lossy(LinkParams::new(2_000_000, 25 * MS, 100), LossModel::Bernoulli { loss_prob: 0.02 });
    let mut sim = one_flow(newreno(), link, AppSpec::Bulk { bytes: BULK }, 0);
    sim.run(600_000 * MS, |_| {});
    let lost: u64 = sim.network().links.iter().map(|l| l.stats().lost_packets).sum();
    let sent: u64 = sim.network().links.iter().filter(|l| l.name == "r1->r2").map(|l| l.stats().tx_packets).sum();
    let rate = lost as f64 / sent as f64;
    assert!(lost > 20, "{lost} packets lost");
    // Losses hit both directions; the data direction's rate is about 2%.
    let fwd_lost: u64 = sim.network().links.iter().filter(|l| l.name == "r1->r2").map(|l| l.stats().lost_packets).sum();
    let fwd_rate = fwd_lost as f64 / sent as f64;
    assert!((0.01..0.03).contains(&fwd_rate), "forward loss {fwd_rate:.4} (all {rate:.4})");
    let (retx, _) = check_delivery_and_prr(&sim, BULK);
    assert!(retx >= fwd_lost, "each lost data segment is retransmitted at least once: {retx} < {fwd_lost}");
}
