//! A simulated fixed-rate bottleneck that drives the controller end to end.
//!
//! One sender, a FIFO bottleneck of `rate_bps` with an optional drop-tail buffer, and a
//! fixed base RTT. Every packet is acknowledged on its own; the sender computes rate
//! samples as draft-cheng-iccrg-delivery-rate-estimation does (including the
//! app-limited marking and discarding intervals shorter than min_rtt), detects a drop
//! when a later packet is acknowledged (as SACK would), runs a 200 ms RTO when nothing is
//! left to acknowledge, and does not retransmit (every packet carries new data).

use std::collections::VecDeque;

use super::super::{AckSample, CongestionController, CongestionSignal, RateSample};
use super::tests::MSS;
use super::{Bbr, BbrConfig};

/// The bottleneck and the application.
#[derive(Clone, Copy, Debug)]
pub(super) struct Path {
    pub(super) rate_bps: u64,
    pub(super) base_rtt_ns: u64,
    /// Bottleneck buffer in packets; `None` for unlimited.
    pub(super) buffer_packets: Option<u64>,
    /// The application writes `bytes` every `period_ns`; `None` for a bulk sender.
    pub(super) app_chunk: Option<(u64, u64)>,
}

impl Path {
    /// 10 Mbps, 40 ms, unlimited buffer, bulk sender.
    pub(super) fn ten_mbps() -> Self {
        Self { rate_bps: 10_000_000, base_rtt_ns: 40_000_000, buffer_packets: None, app_chunk: None }
    }

    fn serialization_ns(&self) -> u64 {
        (MSS * 8 * 1_000_000_000).div_ceil(self.rate_bps)
    }
}

#[derive(Clone, Copy, Debug)]
struct Packet {
    seq: u64,
    sent_ns: u64,
    /// `None` when the bottleneck dropped it.
    ack_ns: Option<u64>,
    delivered: u64,
    delivered_time_ns: u64,
    first_sent_time_ns: u64,
    is_app_limited: bool,
}

/// What the controller said after each ACK (and each congestion signal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Snapshot {
    pub(super) now_ns: u64,
    pub(super) state: &'static str,
    pub(super) cwnd: u64,
    pub(super) pacing_bps: u64,
    pub(super) btl_bw_bps: u64,
    pub(super) bytes_in_flight: u64,
    pub(super) delivered: u64,
    /// True between an RTO and the next ACK that acknowledged data.
    pub(super) after_timeout: bool,
}

/// The simulation state.
pub(super) struct Sim {
    pub(super) bbr: Bbr,
    path: Path,
    pub(super) now: u64,
    link_free_ns: u64,
    flight: VecDeque<Packet>,
    next_seq: u64,
    bytes_in_flight: u64,
    delivered: u64,
    delivered_time_ns: u64,
    first_sent_time_ns: u64,
    next_send_ns: u64,
    app_bytes: u64,
    next_app_ns: u64,
    app_limited_until: u64,
    min_rtt_ns: Option<u64>,
    srtt_ns: Option<u64>,
    last_progress_ns: u64,
    recovery_end_seq: Option<u64>,
    after_timeout: bool,
    pub(super) losses: u64,
    pub(super) timeouts: u64,
    pub(super) trace: Vec<Snapshot>,
}

const RTO_NS: u64 = 200_000_000;

impl Sim {
    pub(super) fn new(path: Path, seed: u64) -> Self {
        Self {
            bbr: Bbr::new(BbrConfig::new(MSS, 10).with_seed(seed)),
            path,
            now: 0,
            link_free_ns: 0,
            flight: VecDeque::new(),
            next_seq: 0,
            bytes_in_flight: 0,
            delivered: 0,
            delivered_time_ns: 0,
            first_sent_time_ns: 0,
            next_send_ns: 0,
            app_bytes: if path.app_chunk.is_some() { 0 } else { u64::MAX },
            next_app_ns: 0,
            app_limited_until: 0,
            min_rtt_ns: None,
            srtt_ns: None,
            last_progress_ns: 0,
            recovery_end_seq: None,
            after_timeout: false,
            losses: 0,
            timeouts: 0,
            trace: Vec::new(),
        }
    }

    /// Runs the event loop until `end_ns`.
    pub(super) fn run_until(&mut self, end_ns: u64) {
        loop {
            let cwnd_open = self.bytes_in_flight + MSS <= self.bbr.window_bytes();
            if cwnd_open && self.app_bytes < MSS && self.app_limited_until == 0 {
                // draft-cheng §3.1: the application has nothing to send.
                self.app_limited_until = (self.delivered + self.bytes_in_flight).max(1);
            }
            let send = (cwnd_open && self.app_bytes >= MSS).then(|| self.now.max(self.next_send_ns));
            let ack = self.flight.iter().find_map(|p| p.ack_ns);
            let rto = (!self.flight.is_empty() && ack.is_none()).then_some(self.last_progress_ns + RTO_NS);
            let app = self.path.app_chunk.map(|_| self.next_app_ns);
            let next = [ack, send, rto, app].into_iter().flatten().min();
            let Some(t) = next.filter(|t| *t <= end_ns) else {
                self.now = end_ns;
                return;
            };
            self.now = t;
            if ack == Some(t) {
                self.on_ack();
            } else if rto == Some(t) {
                self.on_rto();
            } else if app == Some(t) {
                let (bytes, period) = self.path.app_chunk.unwrap();
                self.app_bytes += bytes;
                self.next_app_ns += period;
            } else {
                self.send();
            }
        }
    }

    fn send(&mut self) {
        if self.bytes_in_flight == 0 {
            self.first_sent_time_ns = self.now;
            self.delivered_time_ns = self.now;
        }
        let ser = self.path.serialization_ns();
        let backlog_packets = self.link_free_ns.saturating_sub(self.now).div_ceil(ser);
        let dropped = self.path.buffer_packets.is_some_and(|b| backlog_packets >= b);
        let ack_ns = (!dropped).then(|| {
            self.link_free_ns = self.link_free_ns.max(self.now) + ser;
            self.link_free_ns + self.path.base_rtt_ns
        });
        let is_app_limited = self.app_limited_until != 0;
        self.flight.push_back(Packet {
            seq: self.next_seq,
            sent_ns: self.now,
            ack_ns,
            delivered: self.delivered,
            delivered_time_ns: self.delivered_time_ns,
            first_sent_time_ns: self.first_sent_time_ns,
            is_app_limited,
        });
        if self.flight.len() == 1 {
            self.last_progress_ns = self.now;
        }
        self.next_seq += 1;
        self.bytes_in_flight += MSS;
        self.app_bytes -= MSS;
        let pacing = self.bbr.pacing_rate_bps().expect("BBR always paces");
        assert!(pacing > 0);
        self.next_send_ns = self.now + (MSS * 8 * 1_000_000_000).div_ceil(pacing);
        self.bbr.on_packet_sent(self.now, MSS, self.bytes_in_flight, is_app_limited);
    }

    fn on_ack(&mut self) {
        let prior_in_flight = self.bytes_in_flight;
        // Drops before the acknowledged packet are detected now (as by SACK).
        let mut lost = 0;
        while self.flight.front().is_some_and(|p| p.ack_ns.is_none()) {
            self.flight.pop_front();
            lost += MSS;
        }
        let p = self.flight.pop_front().expect("an ACK is due");
        self.bytes_in_flight -= lost + MSS;
        self.losses += lost / MSS;
        if lost > 0 && self.recovery_end_seq.is_none() {
            self.recovery_end_seq = Some(self.next_seq);
            self.bbr.on_congestion(self.now, CongestionSignal::Loss, prior_in_flight);
        }
        if self.recovery_end_seq.is_some_and(|end| p.seq >= end) {
            self.recovery_end_seq = None;
            self.bbr.on_recovery_exit(self.now);
        }
        self.last_progress_ns = self.now;

        self.delivered += MSS;
        self.delivered_time_ns = self.now;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let rtt = self.now - p.sent_ns;
        let min_rtt = self.min_rtt_ns.map_or(rtt, |m| m.min(rtt));
        self.min_rtt_ns = Some(min_rtt);
        self.srtt_ns = Some(self.srtt_ns.map_or(rtt, |s| (7 * s + rtt) / 8));
        let send_elapsed = p.sent_ns - p.first_sent_time_ns;
        let ack_elapsed = self.delivered_time_ns - p.delivered_time_ns;
        self.first_sent_time_ns = p.sent_ns;
        let interval = send_elapsed.max(ack_elapsed);
        let rate = (interval >= min_rtt).then_some(RateSample {
            prior_delivered_bytes: p.delivered,
            delivered_bytes: self.delivered - p.delivered,
            interval_ns: interval,
            is_app_limited: p.is_app_limited,
            rtt_ns: Some(rtt),
        });
        self.after_timeout = false;
        self.bbr.on_ack(&AckSample {
            now_ns: self.now,
            newly_acked_bytes: MSS,
            newly_lost_bytes: lost,
            delivered_total_bytes: self.delivered,
            prior_in_flight_bytes: prior_in_flight,
            bytes_in_flight: self.bytes_in_flight,
            rtt_ns: Some(rtt),
            min_rtt_ns: Some(min_rtt),
            srtt_ns: self.srtt_ns,
            rate,
            in_recovery: self.recovery_end_seq.is_some(),
            app_limited: self.app_limited_until != 0,
            ecn_echo: 0,
            sack_only: false,
            newly_sacked: false,
            pre_recovery_bytes: 0,
            handshake_only: false,
        });
        self.snapshot();
    }

    fn on_rto(&mut self) {
        let lost = self.flight.len() as u64;
        self.flight.clear();
        self.losses += lost;
        self.timeouts += 1;
        let in_flight = self.bytes_in_flight;
        self.bytes_in_flight = 0;
        self.recovery_end_seq = Some(self.next_seq);
        self.last_progress_ns = self.now;
        self.after_timeout = true;
        self.bbr.on_congestion(self.now, CongestionSignal::Timeout, in_flight);
        self.snapshot();
    }

    fn snapshot(&mut self) {
        self.trace.push(Snapshot {
            now_ns: self.now,
            state: self.bbr.state(),
            cwnd: self.bbr.window_bytes(),
            pacing_bps: self.bbr.pacing_rate_bps().unwrap(),
            btl_bw_bps: self.bbr.btl_bw_bps(),
            bytes_in_flight: self.bytes_in_flight,
            delivered: self.delivered,
            after_timeout: self.after_timeout,
        });
    }

    /// Bytes delivered in `(from_ns, to_ns]` according to the trace.
    pub(super) fn delivered_between(&self, from_ns: u64, to_ns: u64) -> u64 {
        let at = |t: u64| self.trace.iter().take_while(|s| s.now_ns <= t).last().map_or(0, |s| s.delivered);
        at(to_ns) - at(from_ns)
    }
}

/// The order in which states were visited, with the time each was entered.
fn state_changes(trace: &[Snapshot]) -> Vec<(u64, &'static str)> {
    let mut out: Vec<(u64, &'static str)> = Vec::new();
    for s in trace {
        if out.last().map(|(_, st)| *st) != Some(s.state) {
            out.push((s.now_ns, s.state));
        }
    }
    out
}

const SEC: u64 = 1_000_000_000;

fn assert_window_invariants(sim: &Sim) {
    for s in &sim.trace {
        let floor = if s.after_timeout { MSS } else { 4 * MSS };
        assert!(s.cwnd >= floor, "{s:?}");
        assert!(s.pacing_bps > 0, "{s:?}");
    }
}

#[test]
fn bulk_flow_walks_startup_drain_probe_bw() {
    let mut sim = Sim::new(Path::ten_mbps(), 0);
    sim.run_until(3 * SEC);
    let changes = state_changes(&sim.trace);
    let states: Vec<_> = changes.iter().map(|(_, s)| *s).collect();
    assert_eq!(states, ["startup", "drain", "probe_bw"], "{changes:?}");
    assert!(changes[2].0 < SEC, "PROBE_BW within a second: {changes:?}");
    // BtlBw is the link rate (samples never exceed it), RTprop base RTT + one
    // serialization time.
    assert!(sim.bbr.btl_bw_bps() <= 10_000_000 && sim.bbr.btl_bw_bps() >= 9_900_000, "{}", sim.bbr.btl_bw_bps());
    assert_eq!(sim.bbr.min_rtt_ns(), Some(40_000_000 + 1_158_400));
    // The link stays busy once the pipe is full.
    let goodput_bps = sim.delivered_between(SEC, 3 * SEC) * 8 / 2;
    assert!(goodput_bps >= 9_500_000, "goodput {goodput_bps}");
    // In PROBE_BW, cwnd never exceeds the target (2 BDP + 3 MSS, + 2 MSS in the up
    // phase) and the queue stays small: inflight at most ~1.25 BDP + 5 MSS.
    let bdp = 10_000_000 * 41_158_400 / 8 / SEC + 1;
    for s in sim.trace.iter().filter(|s| s.state == "probe_bw" && s.now_ns > 2 * SEC) {
        assert!(s.cwnd <= 2 * bdp + 5 * MSS, "{s:?}");
        assert!(s.bytes_in_flight <= bdp * 5 / 4 + 6 * MSS, "{s:?}");
    }
    assert_window_invariants(&sim);
    assert_eq!(sim.losses, 0);
}

#[test]
fn bulk_flow_probes_rtt_every_ten_seconds() {
    let mut sim = Sim::new(Path::ten_mbps(), 0);
    sim.run_until(22 * SEC);
    let changes = state_changes(&sim.trace);
    let probe_rtt: Vec<usize> = (0..changes.len()).filter(|i| changes[*i].1 == "probe_rtt").collect();
    assert_eq!(probe_rtt.len(), 2, "{changes:?}");
    // The first RTT sample (41.1584 ms) is the minimum and equal samples do not
    // refresh it: PROBE_RTT starts with the first ACK after 10 s + 41.1584 ms.
    let first_ack = 41_158_400;
    let entered = changes[probe_rtt[0]].0;
    assert!(entered > first_ack + 10 * SEC && entered < first_ack + 10 * SEC + 2_000_000, "{changes:?}");
    for &i in &probe_rtt {
        let (t_in, _) = changes[i];
        let (t_out, next) = changes[i + 1];
        assert_eq!(next, "probe_bw");
        // At least 200 ms at the low inflight, plus the time to drain to it.
        assert!(t_out - t_in > 200_000_000 && t_out - t_in < 400_000_000, "{changes:?}");
        for s in sim.trace.iter().filter(|s| s.now_ns >= t_in && s.now_ns < t_out) {
            assert_eq!(s.cwnd, 4 * MSS, "{s:?}");
        }
    }
    // The next PROBE_RTT comes 10 s after the previous one ended.
    let (second, _) = changes[probe_rtt[1]];
    let (first_out, _) = changes[probe_rtt[0] + 1];
    assert!(second > first_out + 10 * SEC && second < first_out + 10 * SEC + 50_000_000, "{changes:?}");
    assert_window_invariants(&sim);
}

#[test]
fn same_seed_same_trace() {
    let run = |seed| {
        let mut sim = Sim::new(Path::ten_mbps(), seed);
        sim.run_until(12 * SEC);
        sim.trace
    };
    assert_eq!(run(7), run(7));
    assert_eq!(run(123), run(123));
}

#[test]
fn app_limited_flow_stays_in_startup_without_inflating_bandwidth() {
    // The application writes 10 packets every 50 ms: about 2.3 Mbps on a 10 Mbps link.
    let path = Path { app_chunk: Some((10 * MSS, 50_000_000)), ..Path::ten_mbps() };
    let mut sim = Sim::new(path, 0);
    sim.run_until(12 * SEC);
    // Every round is app-limited (PROBE_RTT's too), so STARTUP cannot conclude the
    // pipe is full, and PROBE_RTT returns to it.
    let states: Vec<_> = state_changes(&sim.trace).into_iter().map(|(_, s)| s).collect();
    assert_eq!(states, ["startup", "probe_rtt", "startup"]);
    assert!(!sim.bbr.is_full_pipe());
    assert!(sim.bbr.btl_bw_bps() <= 10_000_000);
    let goodput_bps = sim.delivered_between(SEC, 9 * SEC) * 8 / 8;
    assert!((2_200_000..=2_400_000).contains(&goodput_bps), "goodput {goodput_bps}");
    assert_window_invariants(&sim);
}

#[test]
fn shallow_buffer_losses_are_recovered() {
    // 20 packets of buffer: about 0.56 BDP, so STARTUP overflows it.
    let path = Path { buffer_packets: Some(20), ..Path::ten_mbps() };
    let mut sim = Sim::new(path, 0);
    sim.run_until(10 * SEC);
    assert!(sim.losses > 0);
    assert_eq!(sim.timeouts, 0);
    assert_eq!(sim.bbr.state(), "probe_bw");
    let goodput_bps = sim.delivered_between(2 * SEC, 10 * SEC) * 8 / 8;
    assert!(goodput_bps >= 9_000_000, "goodput {goodput_bps}");
    assert_window_invariants(&sim);
}

#[test]
fn tiny_buffer_with_timeouts_keeps_invariants() {
    // One packet of buffer and bursts of ten: tail drops that only the RTO recovers.
    let path = Path { buffer_packets: Some(1), app_chunk: Some((10 * MSS, 300_000_000)), ..Path::ten_mbps() };
    let mut timeouts = 0;
    for seed in 0..4 {
        let mut sim = Sim::new(path, seed);
        sim.run_until(15 * SEC);
        assert!(sim.losses > 0);
        timeouts += sim.timeouts;
        assert_window_invariants(&sim);
        assert!(sim.delivered_between(0, 15 * SEC) > 0);
    }
    assert!(timeouts > 0);
    // And a bulk flow through the same buffer.
    let mut sim = Sim::new(Path { buffer_packets: Some(2), ..Path::ten_mbps() }, 0);
    sim.run_until(15 * SEC);
    assert!(sim.losses > 0);
    assert_window_invariants(&sim);
    assert!(sim.delivered_between(2 * SEC, 15 * SEC) * 8 / 13 >= 9_000_000);
}
