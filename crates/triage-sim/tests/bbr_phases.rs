//! Issue 2, "What it must show" 3: BBR's phases are visible and right on the time series of
//! a bulk flow over 10 Mbps / 40 ms RTT (scenarios/bulk-bbr.toml).

mod common;

use common::*;
use triage_sim::scenario::Scenario;

const RTT: u64 = 40 * MS;
const PAYLOAD_RATE_BPS: f64 = 10e6 * 1448.0 / 1500.0;

#[test]
fn startup_drain_probe_bw_cycle_and_probe_rtt() {
    let s = Scenario::from_file(&repo().join("scenarios/bulk-bbr.toml")).unwrap();
    let b = s.build("bulk-bbr.toml", None).unwrap();
    let mut sim = b.sim;
    sim.run(45_000 * MS, |_| {});
    let rec = sim.recorder();
    let series = rec.conn_series.iter().position(|c| c.is_server).unwrap();
    let states: Vec<(u64, &str)> = rec.state_changes.iter().filter(|c| c.0 == series).map(|c| (c.1, c.2)).collect();
    let samples = &rec.conn_series[series].samples;

    // Order of the first phases.
    let names: Vec<&str> = states.iter().map(|s| s.1).collect();
    assert_eq!(&names[..3], &["startup", "drain", "probe_bw"], "{states:?}");

    // STARTUP ends within about 3 round trips of the pipe filling. The pipe is full once the
    // delivery rate over one RTT reaches the bottleneck rate.
    let rate_at = |i: usize| -> f64 {
        let j = samples.iter().position(|x| x.t_ns + RTT >= samples[i].t_ns).unwrap();
        let (a, b) = (&samples[j], &samples[i]);
        if b.t_ns == a.t_ns {
            0.0
        } else {
            (b.delivered_bytes - a.delivered_bytes) as f64 * 8e9 / (b.t_ns - a.t_ns) as f64
        }
    };
    let fill = (0..samples.len()).find(|&i| rate_at(i) >= 0.95 * PAYLOAD_RATE_BPS).map(|i| samples[i].t_ns).unwrap();
    let startup_end = states[1].0;
    // Round trips are counted at the RTT of the moment: STARTUP's 2/ln2 gain queues up to
    // about twice the BDP, so a round trip grows from 40 ms towards 120 ms while it waits.
    let rounds: f64 = samples
        .windows(2)
        .filter(|w| w[0].t_ns >= fill && w[1].t_ns <= startup_end && w[0].rtt_ns > 0)
        .map(|w| (w[1].t_ns - w[0].t_ns) as f64 / w[0].rtt_ns as f64)
        .sum();
    assert!(
        (2.0..=4.0).contains(&rounds),
        "STARTUP ended {rounds:.2} round trips after the pipe filled ({fill} ns, {startup_end} ns)"
    );

    // DRAIN is short: it empties the queue STARTUP built in about one round.
    let drain_len = states[2].0 - states[1].0;
    assert!(drain_len <= 5 * RTT, "DRAIN lasted {drain_len} ns");

    // PROBE_BW's gain cycle: pacing at 5/4, 3/4 and 1 times the bandwidth estimate shows up
    // as three distinct pacing levels around the bottleneck rate.
    let probe_bw_start = states[2].0;
    let paced: Vec<f64> = samples
        .iter()
        .filter(|x| {
            x.t_ns > probe_bw_start + 2_000 * MS && x.t_ns < probe_bw_start + 8_000 * MS && x.cc_state == "probe_bw"
        })
        .map(|x| x.pacing_rate_bps as f64)
        .collect();
    let base = {
        let mut v = paced.clone();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let near = |g: f64| paced.iter().filter(|&&p| (p / base - g).abs() < 0.03).count();
    assert!(near(1.25) > 0 && near(0.75) > 0, "gain 5/4 and 3/4 phases seen around median {base}");
    assert!(near(1.0) > 4 * near(1.25), "six of the eight phases pace at gain 1");
    // The bandwidth estimate (the median pacing rate / 0.99 margin) is the bottleneck's
    // payload rate: 10 Mbps less 52 bytes of header per 1500.
    let est = base / 0.99;
    assert!((est / PAYLOAD_RATE_BPS - 1.0).abs() < 0.01, "estimate {est} vs {PAYLOAD_RATE_BPS}");

    // PROBE_RTT about every 10 s (its min-RTT filter expires after 10 s without a new minimum).
    let probes: Vec<u64> = states.iter().filter(|s| s.1 == "probe_rtt").map(|s| s.0).collect();
    assert!(probes.len() >= 3, "{probes:?}");
    for w in probes.windows(2) {
        let gap = (w[1] - w[0]) as f64 / 1e9;
        assert!((9.8..=10.8).contains(&gap), "PROBE_RTT spacing {gap:.3} s");
    }
    // In PROBE_RTT the window is 4 packets.
    let in_probe: Vec<u64> = samples.iter().filter(|x| x.cc_state == "probe_rtt").map(|x| x.cwnd_bytes).collect();
    assert!(!in_probe.is_empty() && in_probe.iter().all(|&c| c == 4 * 1448), "{in_probe:?}");

    // The delivery rate settles within 2% of the bottleneck's payload rate: one-second
    // windows from 5 s on that contain no PROBE_RTT.
    let mut checked = 0;
    for sec in 5..40u64 {
        let (t0, t1) = (sec * 1_000 * MS, (sec + 1) * 1_000 * MS);
        if probes.iter().any(|&p| p + 400 * MS >= t0 && p <= t1) {
            continue;
        }
        let a = samples.iter().find(|x| x.t_ns >= t0).unwrap();
        let b = samples.iter().find(|x| x.t_ns >= t1).unwrap();
        let rate = (b.delivered_bytes - a.delivered_bytes) as f64 * 8e9 / (b.t_ns - a.t_ns) as f64;
        assert!((rate / PAYLOAD_RATE_BPS - 1.0).abs() < 0.02, "second {sec}: {rate:.0} bps vs {PAYLOAD_RATE_BPS:.0}");
        checked += 1;
    }
    assert!(checked >= 25);
}
