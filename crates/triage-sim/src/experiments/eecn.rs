//! EECN §6: NewReno, NewReno+ECN, VCP and EECN on the dumbbell of Fig. 6a and the
//! multi-hop path of Fig. 6b (Table 4, Figs. 7-12).
//!
//! **Network** (§6.1): three senders and three receivers; routers with a 100-packet queue;
//! 100 Mbps bottleneck links. The paper gives neither the access links nor the delays;
//! we use those of the ns-3 reference `eecn_dumbbell` (1 Gbps / 0.1 ms access, 1 ms
//! bottleneck). Dumbbell: s0..s2 — r1 — r2 — c0..c2, r1→r2 the bottleneck (an EECN
//! router in Fig. 6a). Multi-hop: s0..s2 — r1 — r2 — r3 — c0..c2 with two 100 Mbps / 1 ms
//! hops, r1→r2 the scheme's router (the EECN router for EECN) and r2→r3 a classic ECN
//! router (RED marking CE), as Fig. 6b puts "both ECN and EECN router en route".
//!
//! **Bottleneck queue per scheme**: NewReno — RED (packet mode, min 30, max 60, ns-3
//! defaults otherwise) dropping; ECN — the same RED marking CE; VCP — the VCP load-factor
//! router; EECN — the EECN router of §4.3 (Th1 0.3, Th2 0.5). Both directions of a
//! router link run the same discipline. NewReno without ECN on the multi-hop path meets a
//! RED router that drops at r2 as well.
//!
//! **Traffic** (§6.1): two FTP elephants of 1 Gb (EF1 s0→c0, EF2 s1→c1, from t = 0) and six
//! short flows (SF1..SF6 s2→c2, 9 KB and 16 KB alternately, from t = 1 s every 0.5 s, as the
//! ns-3 reference sends them). The sender opens each connection. MSS 1448, delayed ACK
//! every 2 segments, 4 MiB receive buffers, minimum RTO 1 s (RFC 6298, ns-3's default).
//!
//! **Measurements** at the r1→r2 queue: drops, bytes dropped, marks (packets whose ECN
//! field the router changed), bytes marked, drop % (drops over arrivals); per flow:
//! completion time, throughput (bytes / FCT) and mean one-way delay of its data packets;
//! Jain's fairness index over the elephants' throughputs; time series (10 ms) of the
//! bottleneck backlog and mean sojourn, EF1's cwnd, RTT and jitter (|ΔRTT| between samples).

use serde::Serialize;
use triage_core::cc::ControllerKind;
use triage_core::{config::TransportMode, ConnectionConfig};

use crate::app::AppSpec;
use crate::queue::{EecnMarkerConfig, QueueKind, RedConfig, VcpRouterConfig};
use crate::report::ms;
use crate::sim::{Network, NodeKind};
use crate::topology::{add_duplex, LinkParams};
use crate::{FlowSpec, Simulator};

/// One row of Table 4: (packets dropped, bytes dropped, packets marked, bytes marked, drop %).
pub type PaperRow = (u64, u64, Option<u64>, Option<u64>, f64);

/// Table 4 of the paper: (packets dropped, bytes dropped, packets marked, bytes marked,
/// drop %), in the order NewReno, ECN, VCP, EECN (NewReno marks nothing).
pub const PAPER_TABLE_4: [PaperRow; 4] = [
    (10096, 9_861_664, None, None, 0.3),
    (1553, 1_217_468, Some(8275), Some(8_697_492), 0.055),
    (765, 664_680, Some(1326), Some(1_393_626), 0.026),
    (462, 405_064, Some(318), Some(330_144), 0.016),
];

/// The reductions the paper's abstract and §6.2 claim: (what, percent).
pub const PAPER_CLAIMS: [(&str, f64); 6] = [
    ("drops vs ECN", 70.0),
    ("drops vs NewReno", 95.0),
    ("drops vs VCP", 40.0),
    ("marks vs ECN", 96.0),
    ("marks vs VCP", 76.0),
    ("short-flow completion vs ECN", 61.0),
];

/// Which network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// Fig. 6a.
    Dumbbell,
    /// Fig. 6b.
    Multihop,
}

/// Which transport and router scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// NewReno without ECN over RED dropping.
    NewReno,
    /// NewReno with classic ECN over RED marking.
    Ecn,
    /// VCP end hosts and routers.
    Vcp,
    /// EECN end hosts and routers.
    Eecn,
}

impl Scheme {
    /// All four, in Table 4's order.
    pub const ALL: [Scheme; 4] = [Scheme::NewReno, Scheme::Ecn, Scheme::Vcp, Scheme::Eecn];

    /// Name as in the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::NewReno => "newreno",
            Scheme::Ecn => "ecn",
            Scheme::Vcp => "vcp",
            Scheme::Eecn => "eecn",
        }
    }

    /// Label as in the paper.
    pub fn label(self) -> &'static str {
        match self {
            Scheme::NewReno => "TCP New Reno",
            Scheme::Ecn => "ECN",
            Scheme::Vcp => "VCP",
            Scheme::Eecn => "EECN",
        }
    }

    fn controller(self) -> ControllerKind {
        match self {
            Scheme::NewReno => ControllerKind::NewReno,
            Scheme::Ecn => ControllerKind::NewRenoEcn,
            Scheme::Vcp => ControllerKind::Vcp,
            Scheme::Eecn => ControllerKind::Eecn,
        }
    }

    /// The scheme's router.
    pub fn router(self, packets: u64) -> QueueKind {
        let red = RedConfig { limit_packets: packets, min_th: 30.0, max_th: 60.0, ..Default::default() };
        match self {
            Scheme::NewReno => QueueKind::Red(red),
            Scheme::Ecn => QueueKind::Red(RedConfig { ecn: true, ..red }),
            Scheme::Vcp => QueueKind::Vcp(VcpRouterConfig { limit_packets: packets, ..Default::default() }),
            Scheme::Eecn => QueueKind::Eecn(EecnMarkerConfig { limit_packets: packets, ..Default::default() }),
        }
    }

    /// The classic ECN router the multi-hop path adds (RED dropping for NewReno).
    pub fn second_router(self, packets: u64) -> QueueKind {
        let red = RedConfig { limit_packets: packets, min_th: 30.0, max_th: 60.0, ..Default::default() };
        QueueKind::Red(RedConfig { ecn: self != Scheme::NewReno, ..red })
    }
}

/// Settings of a reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EecnSettings {
    /// Size of each elephant (paper: 1 Gb = 125 MB).
    pub elephant_bytes: u64,
    /// Seed.
    pub seed: u64,
    /// Time-series sampling interval (0: none).
    pub sample_ns: u64,
    /// Router queue size in packets (paper: 100).
    pub queue_packets: u64,
    /// QUIC mode instead of TCP: the ends read the levels from the ECN counts of QUIC's
    /// ACK frames (RFC 9000 §13.4; `crate`'s QUIC connection) and the handshake's level
    /// from the counts of its Initial packets. VCP, whose load codes travel in TCP's
    /// ECE/CWR flags, has no QUIC form and is not run ([`EecnSettings::schemes`]).
    pub quic: bool,
    /// EECN's Algorithm 2 at cRTT = avgRTT ([`triage_core::cc::ZeroBeta`]; default: the
    /// listing's, no change).
    pub zero_beta: triage_core::cc::ZeroBeta,
}

impl EecnSettings {
    /// The schemes a reproduction runs: Table 4's four in TCP mode; in QUIC mode, all but VCP.
    pub fn schemes(&self) -> &'static [Scheme] {
        if self.quic {
            &[Scheme::NewReno, Scheme::Ecn, Scheme::Eecn]
        } else {
            &Scheme::ALL
        }
    }

    /// Runs of a reproduction: two topologies × [`Self::schemes`].
    pub fn runs(&self) -> usize {
        2 * self.schemes().len()
    }
}

impl Default for EecnSettings {
    fn default() -> Self {
        Self {
            elephant_bytes: 125_000_000,
            seed: 1,
            sample_ns: 10_000_000,
            queue_packets: 100,
            quic: false,
            zero_beta: Default::default(),
        }
    }
}

/// Short flows of §6.1: (name, bytes, start).
pub const SHORT_FLOWS: [(&str, u64, u64); 6] = [
    ("SF1", 9_000, 1_000_000_000),
    ("SF2", 16_000, 1_500_000_000),
    ("SF3", 9_000, 2_000_000_000),
    ("SF4", 16_000, 2_500_000_000),
    ("SF5", 9_000, 3_000_000_000),
    ("SF6", 16_000, 3_500_000_000),
];

/// One flow's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowRow {
    /// EF1, EF2, SF1..SF6.
    pub name: String,
    /// "elephant" or "short".
    pub kind: &'static str,
    /// Flow completion time (None: not finished).
    pub fct_ms: Option<f64>,
    /// Bytes over FCT.
    pub throughput_mbps: Option<f64>,
    /// Mean one-way delay of its data packets.
    pub mean_delay_ms: Option<f64>,
    /// Congestion level the sender's SYN met (EECN §4.4.1: initial window 10, 5 or 1); in
    /// QUIC mode, its Initial and Handshake packets.
    #[serde(skip)]
    pub handshake_level: u8,
    /// Retransmitted segments.
    #[serde(skip)]
    pub retransmissions: u64,
}

/// Time series of one run (each point: time in ms, value).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Series {
    /// Bottleneck backlog, packets.
    pub queue_packets: Vec<(f64, f64)>,
    /// Mean sojourn at the bottleneck over each interval, ms.
    pub sojourn_ms: Vec<(f64, f64)>,
    /// EF1's congestion window, segments.
    pub cwnd_segments: Vec<(f64, f64)>,
    /// EF1's latest RTT sample, ms.
    pub rtt_ms: Vec<(f64, f64)>,
    /// EF1's jitter: |ΔRTT| between samples, ms.
    pub jitter_ms: Vec<(f64, f64)>,
}

/// One (topology, scheme) run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EecnRun {
    /// Network.
    pub topology: Topology,
    /// Scheme.
    pub scheme: Scheme,
    /// Packets dropped at the bottleneck queue.
    pub drops: u64,
    /// Bytes dropped there.
    pub drop_bytes: u64,
    /// Packets marked there.
    pub marks: u64,
    /// Bytes marked there.
    pub mark_bytes: u64,
    /// Drops over arrivals, percent.
    pub drop_pct: f64,
    /// Jain's index over the elephants' throughputs.
    pub jain: f64,
    /// Drops and marks at the second router (multi-hop only).
    pub second_router: Option<(u64, u64)>,
    /// Per flow.
    pub flows: Vec<FlowRow>,
    /// Time series.
    #[serde(skip)]
    pub series: Series,
}

impl EecnRun {
    /// Mean FCT of the short flows (ms), None if one did not finish.
    pub fn short_fct_mean_ms(&self) -> Option<f64> {
        mean(self.flows.iter().filter(|f| f.kind == "short").map(|f| f.fct_ms))
    }
    /// Mean FCT of the elephants (ms).
    pub fn elephant_fct_mean_ms(&self) -> Option<f64> {
        mean(self.flows.iter().filter(|f| f.kind == "elephant").map(|f| f.fct_ms))
    }
    /// Mean one-way delay over flows of a kind.
    pub fn mean_delay_ms(&self, kind: &str) -> Option<f64> {
        mean(self.flows.iter().filter(|f| f.kind == kind).map(|f| f.mean_delay_ms))
    }
}

fn mean(it: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Option<Vec<f64>> = it.collect();
    let v = v?;
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Jain's fairness index: (Σx)² / (n·Σx²).
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}

/// The transport of every end for a scheme.
pub fn transport(scheme: Scheme, s: &EecnSettings) -> ConnectionConfig {
    let (seed, quic) = (s.seed, s.quic);
    ConnectionConfig {
        eecn: triage_core::cc::EecnConfig { zero_beta: s.zero_beta, ..Default::default() },
        controller: scheme.controller(),
        mode: if quic { TransportMode::Quic } else { TransportMode::Tcp },
        receive_buffer_bytes: 4 << 20,
        seed,
        // §6.1: the paper's NewReno is ns-3's TcpNewReno, which grows one segment per ACK.
        newreno_growth: triage_core::cc::Growth::PerAck,
        ..Default::default()
    }
}

/// Builds the network: (network, senders, receivers, bottleneck link, second router link).
pub fn network(
    topology: Topology,
    scheme: Scheme,
    s: &EecnSettings,
) -> (Network, Vec<u32>, Vec<u32>, u32, Option<u32>) {
    let mut net = Network::default();
    let senders: Vec<u32> = (0..3).map(|i| net.add_node(&format!("s{i}"), NodeKind::Host)).collect();
    let r1 = net.add_node("r1", NodeKind::Router);
    let r2 = net.add_node("r2", NodeKind::Router);
    let r3 = (topology == Topology::Multihop).then(|| net.add_node("r3", NodeKind::Router));
    let receivers: Vec<u32> = (0..3).map(|i| net.add_node(&format!("c{i}"), NodeKind::Host)).collect();
    let bottleneck =
        LinkParams::new(100_000_000, 1_000_000, s.queue_packets).with_queue(scheme.router(s.queue_packets));
    let access = LinkParams::new(1_000_000_000, 100_000, 100);
    let (b, _) = add_duplex(&mut net, s.seed, r1, r2, &bottleneck);
    let mut second = None;
    let last = match r3 {
        Some(r3) => {
            let hop = LinkParams::new(100_000_000, 1_000_000, s.queue_packets)
                .with_queue(scheme.second_router(s.queue_packets));
            second = Some(add_duplex(&mut net, s.seed, r2, r3, &hop).0);
            r3
        }
        None => r2,
    };
    for (&a, &c) in senders.iter().zip(&receivers) {
        add_duplex(&mut net, s.seed, a, r1, &access);
        add_duplex(&mut net, s.seed, last, c, &access);
    }
    (net, senders, receivers, b, second)
}

/// Runs one scheme on one topology.
pub fn run(topology: Topology, scheme: Scheme, s: &EecnSettings) -> EecnRun {
    let (net, snd, rcv, b, second) = network(topology, scheme, s);
    let mut sim = Simulator::new(net, s.sample_ns);
    let cfg = transport(scheme, s);
    let mut flows: Vec<(String, &'static str, u32, u32, u64, u64)> = vec![
        ("EF1".into(), "elephant", snd[0], rcv[0], s.elephant_bytes, 0),
        ("EF2".into(), "elephant", snd[1], rcv[1], s.elephant_bytes, 0),
    ];
    for (n, bytes, start) in SHORT_FLOWS {
        flows.push((n.into(), "short", snd[2], rcv[2], bytes, start));
    }
    for (i, (name, _, client, server, bytes, start)) in flows.iter().enumerate() {
        let mut c = cfg.clone();
        c.seed = s.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        sim.add_flow(FlowSpec {
            name: name.clone(),
            client: *client,
            server: *server,
            start_ns: *start,
            client_transport: c.clone(),
            server_transport: c,
            client_app: AppSpec::Bulk { bytes: *bytes },
            server_app: AppSpec::Sink,
            extra_paths: Vec::new(),
        });
    }
    sim.run(600_000_000_000, |_| {});
    let q = sim.network().links[b as usize].queue().stats().clone();
    let results = sim.flow_results();
    let rec = sim.recorder();
    let rows: Vec<FlowRow> = results
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let fct = f.completed_ns.map(|c| c - f.start_ns);
            let (mut pk, mut tot) = (0u64, 0u64);
            for cs in rec.conn_series.iter().filter(|cs| cs.flow == i as u32) {
                pk += cs.rx_data_packets;
                tot += cs.rx_delay_total_ns;
            }
            FlowRow {
                name: f.name.clone(),
                kind: flows[i].1,
                fct_ms: fct.map(ms),
                throughput_mbps: fct.filter(|&d| d > 0).map(|d| f.bytes as f64 * 8.0 / (d as f64 / 1e9) / 1e6),
                mean_delay_ms: (pk > 0).then(|| tot as f64 / pk as f64 / 1e6),
                handshake_level: sim.endpoint(i as u32, false).map_or(0, |e| e.handshake_congestion_level()),
                retransmissions: f.retransmitted_segments,
            }
        })
        .collect();
    let ef: Vec<f64> = rows.iter().filter(|r| r.kind == "elephant").map(|r| r.throughput_mbps.unwrap_or(0.0)).collect();
    let mut series = Series::default();
    let qs = &rec.queue_series[b as usize];
    for w in qs.windows(2) {
        let t = w[1].t_ns as f64 / 1e6;
        series.queue_packets.push((t, w[1].len_packets as f64));
        let n = w[1].dequeued_packets - w[0].dequeued_packets;
        if n > 0 {
            series.sojourn_ms.push((t, (w[1].sojourn_total_ns - w[0].sojourn_total_ns) as f64 / n as f64 / 1e6));
        }
    }
    if let Some(cs) = rec.conn_series.iter().find(|cs| cs.flow == 0 && !cs.is_server) {
        let mss = cfg.mss_bytes as f64;
        let mut prev: Option<u64> = None;
        for smp in &cs.samples {
            let t = smp.t_ns as f64 / 1e6;
            series.cwnd_segments.push((t, smp.cwnd_bytes as f64 / mss));
            if smp.rtt_ns > 0 {
                series.rtt_ms.push((t, smp.rtt_ns as f64 / 1e6));
                if let Some(p) = prev {
                    series.jitter_ms.push((t, (smp.rtt_ns as f64 - p as f64).abs() / 1e6));
                }
                prev = Some(smp.rtt_ns);
            }
        }
    }
    let arrivals = q.enqueued_packets + q.dropped_packets;
    EecnRun {
        topology,
        scheme,
        drops: q.dropped_packets,
        drop_bytes: q.dropped_bytes,
        marks: q.marked_packets,
        mark_bytes: q.marked_bytes,
        drop_pct: if arrivals > 0 { q.dropped_packets as f64 * 100.0 / arrivals as f64 } else { 0.0 },
        jain: jain(&ef),
        second_router: second.map(|l| {
            let st = sim.network().links[l as usize].queue().stats();
            (st.dropped_packets, st.marked_packets)
        }),
        flows: rows,
        series,
    }
}

/// Every run of the reproduction: both topologies, the four schemes each.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EecnReproduction {
    /// Settings.
    pub settings: EecnSettings,
    /// Runs: dumbbell NewReno, ECN, VCP, EECN, then multi-hop.
    pub runs: Vec<EecnRun>,
}

impl EecnReproduction {
    /// The run of a topology and scheme.
    pub fn get(&self, t: Topology, s: Scheme) -> &EecnRun {
        self.try_get(t, s).expect("every combination of the settings' schemes runs")
    }

    /// The run of a topology and scheme, if the settings run that scheme.
    pub fn try_get(&self, t: Topology, s: Scheme) -> Option<&EecnRun> {
        self.runs.iter().find(|r| r.topology == t && r.scheme == s)
    }

    /// Our reduction of EECN against a baseline, percent, for a metric.
    pub fn reduction_pct(
        &self,
        t: Topology,
        baseline: Scheme,
        metric: impl Fn(&EecnRun) -> Option<f64>,
    ) -> Option<f64> {
        let b = metric(self.try_get(t, baseline)?)?;
        let e = metric(self.try_get(t, Scheme::Eecn)?)?;
        (b > 0.0).then(|| (b - e) / b * 100.0)
    }

    /// The paper's claims beside ours on a topology: (what, paper %, ours %).
    pub fn claims(&self, t: Topology) -> Vec<(&'static str, f64, Option<f64>)> {
        let drops = |r: &EecnRun| Some(r.drops as f64);
        let marks = |r: &EecnRun| Some(r.marks as f64);
        let sfct = |r: &EecnRun| r.short_fct_mean_ms();
        let ours = [
            self.reduction_pct(t, Scheme::Ecn, drops),
            self.reduction_pct(t, Scheme::NewReno, drops),
            self.reduction_pct(t, Scheme::Vcp, drops),
            self.reduction_pct(t, Scheme::Ecn, marks),
            self.reduction_pct(t, Scheme::Vcp, marks),
            self.reduction_pct(t, Scheme::Ecn, sfct),
        ];
        PAPER_CLAIMS.iter().zip(ours).map(|(&(w, p), o)| (w, p, o)).collect()
    }
}

/// Runs both topologies with all four schemes.
pub fn reproduce(s: &EecnSettings) -> EecnReproduction {
    reproduce_with_progress(s, |_, _| {})
}

/// [`reproduce`], calling `progress(done, total)` after each run ([`EecnSettings::runs`]).
pub fn reproduce_with_progress(s: &EecnSettings, mut progress: impl FnMut(usize, usize)) -> EecnReproduction {
    let mut runs = Vec::new();
    for t in [Topology::Dumbbell, Topology::Multihop] {
        for &sc in s.schemes() {
            runs.push(run(t, sc, s));
            progress(runs.len(), s.runs());
        }
    }
    EecnReproduction { settings: s.clone(), runs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_by_hand() {
        assert!((jain(&[1.0, 1.0]) - 1.0).abs() < 1e-12);
        // (1 + 3)² / (2 · (1 + 9)) = 0.8
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
    }
}
