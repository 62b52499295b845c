//! The thesis's partially reliable transport (../shared/seeds/002, §5.8-5.9, §6): page loads
//! where the objects a policy calls non-essential travel as DATAGRAM chunks and the rest on
//! reliable streams, against an all-reliable baseline.
//!
//! The thesis's emulator (quiche_har_server / quiche_har_client) is described, not published.
//! Where it is silent we take the reproduction spec's choices (../shared/seeds/
//! REPRODUCTION-pb-partial.md, PR-1..PR-11), as an HTTP/3 implementer would:
//!
//! - **Network** (§5.9, PR-7, PR-8): one duplex link with a 1 ms base RTT (0.5 ms each way);
//!   the downlink is shaped to 12 Mbps, or 9 Mbps with 5% Bernoulli loss; the uplink has the
//!   same rate and no loss. DropTail queues of 64 KB (PR-7: "limit ≈ 1 BDP but ≥ 64 KB").
//! - **Stack** (PR-9, quiche 0.22's defaults and the thesis's "QUIC Payload = 1350 bytes"):
//!   CUBIC with HyStart++, pacing, an initial window of 10 packets, 1350-byte UDP payloads,
//!   20-byte connection IDs, 1 MB stream windows, 100 streams each way; every ack-eliciting
//!   packet acknowledged at once (quiche has no delayed-ACK timer), max_ack_delay 25 ms.
//! - **Framing** (PR-2, RFC 9297): HTTP/3 datagrams (quarter stream ID, object ID, offset,
//!   length; a metadata datagram first), chunks filling the largest DATAGRAM frame.
//! - **End of an unreliable object** (PR-3): the server sends the response's HEADERS (24
//!   bytes) and FIN on the request stream after the last chunk; the client is done with the
//!   object when every chunk arrived, or when the FIN has arrived (and, with
//!   [`PartialOptions::end_idle_ns`] `None`, no chunk came for max(2·SRTT, 10 ms)). Missing
//!   bytes are data loss.
//! - **Client** (PR-1): one request at a time in the page's order (a
//!   `transfer_sequence.json`'s order), the next as soon as the previous object is done.
//! - **Fetch time** (PR-4): per object, request to done; per page load, the sum over its
//!   objects. **Mean and p90** (PR-5) over the runs; the **reduction** against all-reliable
//!   is mean(reliable) − mean(policy) over the same seeds and page versions, with a 95%
//!   confidence interval of the paired differences (Student's t), and p90(reliable) −
//!   p90(policy) with a 95% bootstrap interval (2,000 paired resamples, fixed seed).
//! - **Data loss** (PR-6): bytes lost / bytes sent as datagrams, over all runs of a row, and
//!   split by what lost them ([`triage_web::LossCauses`]): the network, a lost metadata
//!   datagram, the client giving up, the sender's full datagram queue.
//! - **How datagram data is lost beyond the link** ([`PartialOptions`]): by default as the
//!   thesis's client most plausibly did, which needs an object's metadata datagram to use its
//!   chunks (§5.8.2), with quiche's datagram send queue of 1000 (PR-6).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use triage_core::cc::ControllerKind;
use triage_core::quic::DatagramFraming;
use triage_core::sched::stream::StreamSchedulerKind;
use triage_core::{ConnectionConfig, TransportMode};
use triage_web::{data_loss, Page, PartialConfig, ReliabilityPolicy};

use crate::app::{AppSpec, PageLoad};
use crate::loss::LossModel;
use crate::queue::Limit;
use crate::sim::{FlowSpec, Network, NodeKind, Simulator};
use crate::topology::{add_simplex, LinkParams};

/// The thesis's two networks (§5.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PartialNetwork {
    /// 12 Mbps, no loss.
    #[serde(rename = "12Mbps")]
    Mbps12,
    /// 9 Mbps with 5% random loss on the downlink.
    #[serde(rename = "9Mbps+5%")]
    Mbps9Loss5,
}

impl PartialNetwork {
    /// Both networks, in the thesis's order.
    pub const ALL: [PartialNetwork; 2] = [PartialNetwork::Mbps12, PartialNetwork::Mbps9Loss5];

    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            PartialNetwork::Mbps12 => "12Mbps",
            PartialNetwork::Mbps9Loss5 => "9Mbps+5%",
        }
    }

    /// Parses a name as [`PartialNetwork::name`] prints it (also `12mbps`, `9mbps`).
    pub fn parse(s: &str) -> Option<PartialNetwork> {
        match s.to_ascii_lowercase().as_str() {
            "12mbps" => Some(PartialNetwork::Mbps12),
            "9mbps+5%" | "9mbps" => Some(PartialNetwork::Mbps9Loss5),
            _ => None,
        }
    }

    fn rate_bps(self) -> u64 {
        match self {
            PartialNetwork::Mbps12 => 12_000_000,
            PartialNetwork::Mbps9Loss5 => 9_000_000,
        }
    }

    fn loss(self) -> f64 {
        match self {
            PartialNetwork::Mbps12 => 0.0,
            PartialNetwork::Mbps9Loss5 => 0.05,
        }
    }
}

/// The six policies of the reproduction, in the thesis's order (§5.9).
pub const POLICIES: [ReliabilityPolicy; 6] = ReliabilityPolicy::THESIS;

/// The transport of the thesis's emulator as the reproduction spec reads it (PR-9).
pub fn transport(seed: u64) -> ConnectionConfig {
    let mut cfg = ConnectionConfig {
        mode: TransportMode::Quic,
        controller: ControllerKind::Cubic,
        initial_window_segments: 10,
        seed,
        ..Default::default()
    };
    cfg.cubic.hystart = true;
    let q = &mut cfg.quic;
    q.scheduler = StreamSchedulerKind::Fifo;
    q.max_udp_payload_bytes = 1350;
    q.initial_padding_bytes = 1350;
    q.cid_len_bytes = 20;
    // quiche's largest DATAGRAM frame payload at a 1350-byte UDP payload (PR-2): 1350 − (1 +
    // 20) short header − 4 packet number − 16 tag − 3 frame header.
    q.max_datagram_frame_bytes = 1306;
    q.stream_receive_window_bytes = 1_000_000;
    // quiche acknowledges at once: `send_single` puts an ACK frame in the next packet it
    // builds whenever an ack-eliciting packet has arrived (`ack_elicited`), with no delay
    // timer, and its applications call `send` after every batch of packets they read; at
    // 9-12 Mbps and a 1 ms RTT each packet is its own batch, so every ack-eliciting packet is
    // acknowledged (RFC 9000 §13.2.2 allows it). max_ack_delay stays quiche's advertised 25 ms
    // (it enters the peer's PTO, RFC 9002 §6.2.1).
    q.ack_eliciting_threshold = 1;
    q.datagram_framing = DatagramFraming::Http3;
    q.response_headers_bytes = 24;
    cfg
}

/// The choices the thesis leaves open that decide how an unreliable object ends and how its
/// data is lost (see the README's "Reproduction: partially reliable transport").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartialOptions {
    /// How long the client waits, after an unreliable object's response ended, before it
    /// gives the object up: `None` is PR-3's max(2·SRTT, 10 ms) since the last chunk,
    /// `Some(t)` is `t` since the last chunk.
    pub end_idle_ns: Option<u64>,
    /// The client uses an object's chunks only once its metadata datagram has arrived
    /// (`QuicConfig::datagram_needs_metadata`): a lost metadata datagram loses the object.
    pub needs_metadata: bool,
    /// The sender's datagram send queue, in datagrams (`QuicConfig::datagram_send_queue_len`;
    /// quiche-server: 1000); `None`: unbounded.
    pub send_queue_len: Option<u32>,
}

impl PartialOptions {
    /// What `triage reproduce partial` runs by default: the client gives an object up at the
    /// end of its response, needs the metadata datagram, and the server's queue holds 1000
    /// datagrams (quiche's `enable_dgram(true, 1000, 1000)`).
    pub const THESIS: PartialOptions =
        PartialOptions { end_idle_ns: Some(0), needs_metadata: true, send_queue_len: Some(1000) };
    /// Only the link loses datagram data: chunks are placed by their object ID and offset
    /// whether or not the metadata datagram came, and the send queue has no limit.
    pub const LINK_ONLY: PartialOptions =
        PartialOptions { end_idle_ns: Some(0), needs_metadata: false, send_queue_len: None };
}

impl Default for PartialOptions {
    fn default() -> Self {
        PartialOptions::THESIS
    }
}

/// One page load of the reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartialRun {
    /// Network name.
    pub network: &'static str,
    /// Policy name.
    pub policy: &'static str,
    /// Page name.
    pub page: String,
    /// Which of the page's versions (0-based).
    pub version: usize,
    /// Seed of the loss process.
    pub seed: u64,
    /// Sum of the objects' fetch times (PR-4), ms.
    pub fetch_ms: f64,
    /// When the last object was done, ms after the connection opened.
    pub load_ms: f64,
    /// Objects the page has, and objects the client was done with.
    pub objects: usize,
    /// Objects the client was done with.
    pub objects_done: usize,
    /// Objects sent as datagrams, and how many of them arrived incomplete.
    pub unreliable_objects: usize,
    /// Unreliable objects with missing bytes.
    pub partial_objects: usize,
    /// Bytes sent as datagrams (the unreliable objects' sizes).
    pub unreliable_bytes: u64,
    /// Of those, bytes that never arrived.
    pub lost_bytes: u64,
    /// `lost_bytes` by what lost them.
    pub lost_causes: triage_web::LossCauses,
    /// Bytes of the page.
    pub page_bytes: u64,
    /// Every object the client was done with, in page order.
    pub object_fetches: Vec<ObjectFetch>,
}

/// One object of one page load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObjectFetch {
    /// Object id (index in the page).
    pub id: u32,
    /// Content type.
    pub kind: triage_web::ContentType,
    /// Bytes of the object.
    pub bytes: u64,
    /// Sent as datagram chunks.
    pub unreliable: bool,
    /// Request to done, ms (PR-4).
    pub fetch_ms: f64,
    /// Every byte arrived.
    pub complete: bool,
    /// Bytes that did not arrive before the client was done with it.
    pub lost_bytes: u64,
    /// `lost_bytes` by what lost them.
    pub lost_causes: triage_web::LossCauses,
}

/// Loads one page version once.
pub fn run_one(
    network: PartialNetwork,
    policy: ReliabilityPolicy,
    page_name: &str,
    version: usize,
    page: &Page,
    seed: u64,
    opts: &PartialOptions,
) -> PartialRun {
    let plan = policy.plan(page);
    let mut unreliable = vec![false; page.len()];
    for id in &plan.unreliable {
        unreliable[id.index()] = true;
    }
    let load = std::sync::Arc::new(PageLoad {
        unreliable,
        partial: PartialConfig::default(),
        sequential: true,
        end_idle_ns: opts.end_idle_ns,
        ..PageLoad::new(page.clone(), 300, triage_web::DiscoveryConfig::default())
    });
    let mut net = Network::default();
    let server = net.add_node("server", NodeKind::Host);
    let client = net.add_node("client", NodeKind::Host);
    let uplink = LinkParams { queue: Limit::Bytes(64 * 1024), ..LinkParams::new(network.rate_bps(), 500_000, 0) };
    let loss = network.loss();
    let downlink = LinkParams {
        loss: if loss > 0.0 { LossModel::Bernoulli { loss_prob: loss } } else { LossModel::None },
        ..uplink.clone()
    };
    add_simplex(&mut net, seed, server, client, &downlink);
    add_simplex(&mut net, seed, client, server, &uplink);
    net.compute_routes();
    let mut cfg = transport(seed);
    cfg.quic.datagram_needs_metadata = opts.needs_metadata;
    cfg.quic.datagram_send_queue_len = opts.send_queue_len;
    let mut sim = Simulator::new(net, 0);
    sim.add_flow(FlowSpec {
        name: "page".into(),
        client,
        server,
        start_ns: 0,
        client_transport: cfg.clone(),
        server_transport: cfg,
        client_app: AppSpec::PageClient(load.clone()),
        server_app: AppSpec::PageServer(load.clone()),
        extra_paths: Vec::new(),
    });
    sim.run(3_600_000_000_000, |_| {});
    let partials = sim.page_partials(0).unwrap_or_default();
    let (_, deliveries) = sim.page_deliveries(0).expect("a page flow");
    let fetch_ns: u64 = deliveries.values().map(|d| d.complete_ns.saturating_sub(d.request_ns)).sum();
    let load_ns = deliveries.values().map(|d| d.complete_ns).max().unwrap_or(0);
    let loss = data_loss(page, &partials, &load.partial);
    let ms = |ns: u64| ns as f64 / 1e6;
    let object_fetches = deliveries
        .iter()
        .map(|(id, d)| {
            let p = partials.get(id);
            ObjectFetch {
                id: id.0,
                kind: page.get(*id).kind,
                bytes: page.get(*id).wire_bytes,
                unreliable: p.is_some_and(|p| p.unreliable),
                fetch_ms: ms(d.complete_ns.saturating_sub(d.request_ns)),
                complete: p.is_none_or(|p| p.complete),
                lost_bytes: p.map_or(0, |p| p.lost_bytes()),
                lost_causes: p.map_or_else(Default::default, |p| p.causes),
            }
        })
        .collect();
    PartialRun {
        network: network.name(),
        policy: policy.name(),
        page: page_name.to_string(),
        version,
        seed,
        fetch_ms: ms(fetch_ns),
        load_ms: ms(load_ns),
        objects: page.len(),
        objects_done: deliveries.len(),
        unreliable_objects: plan.unreliable.len(),
        partial_objects: partials.values().filter(|d| d.unreliable && !d.complete).count(),
        unreliable_bytes: loss.unreliable.expected_bytes,
        lost_bytes: loss.unreliable.lost_bytes,
        lost_causes: loss.unreliable.causes,
        page_bytes: page.total_wire_bytes(),
        object_fetches,
    }
}

/// A page of the reproduction: its name and its versions (run `i` loads version `i` modulo
/// their number, as the thesis cycles through six versions of its news page).
#[derive(Clone, Debug)]
pub struct PartialPage {
    /// Name in reports.
    pub name: String,
    /// Versions of the page (at least one).
    pub versions: Vec<Page>,
}

/// Runs `runs` loads (seeds `seed`, `seed + 1`, …) of every page under every policy on
/// every network. Deterministic: the same arguments give the same runs.
pub fn run_all(
    networks: &[PartialNetwork],
    policies: &[ReliabilityPolicy],
    pages: &[PartialPage],
    runs: usize,
    seed: u64,
    opts: &PartialOptions,
    mut progress: impl FnMut(),
) -> Vec<PartialRun> {
    let mut out = Vec::new();
    for &n in networks {
        for p in pages {
            for &pol in policies {
                for r in 0..runs {
                    let v = r % p.versions.len();
                    out.push(run_one(n, pol, &p.name, v, &p.versions[v], seed.wrapping_add(r as u64), opts));
                    progress();
                }
            }
        }
    }
    out
}

/// One row of the summary: a network, a policy and a page over its runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartialRow {
    /// Network name.
    pub network: &'static str,
    /// Policy name.
    pub policy: &'static str,
    /// Page name.
    pub page: String,
    /// Page loads.
    pub runs: usize,
    /// Mean fetch time per page load, ms.
    pub mean_fetch_ms: f64,
    /// 90th percentile (nearest rank), ms.
    pub p90_fetch_ms: f64,
    /// mean(all reliable) − mean(this policy), paired over the same seeds and versions, ms.
    pub reduction_mean_ms: f64,
    /// 95% confidence interval of `reduction_mean_ms` (Student's t on the paired differences).
    pub reduction_mean_ci95_ms: [f64; 2],
    /// p90(all reliable) − p90(this policy), ms.
    pub reduction_p90_ms: f64,
    /// 95% bootstrap interval of `reduction_p90_ms`.
    pub reduction_p90_ci95_ms: [f64; 2],
    /// Bytes lost / bytes sent as datagrams, over the runs, in percent (0 when none sent).
    pub data_loss_pct: f64,
    /// Of `data_loss_pct`, the bytes the network lost.
    pub data_loss_network_pct: f64,
    /// ... the bytes discarded for want of their object's metadata datagram.
    pub data_loss_metadata_pct: f64,
    /// ... the bytes that came after the client had given their object up.
    pub data_loss_late_pct: f64,
    /// ... the bytes the sender dropped from its full datagram queue.
    pub data_loss_local_pct: f64,
    /// Bytes sent as datagrams per page load, on average.
    pub unreliable_bytes: f64,
    /// Unreliable objects that arrived incomplete, per page load, on average.
    pub partial_objects: f64,
}

/// Nearest-rank percentile `p` (0-100) of `xs` (not empty).
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// Two-sided 95% Student's t quantile for `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Mean and 95% t interval of `d`.
pub fn mean_ci95(d: &[f64]) -> (f64, [f64; 2]) {
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    if d.len() < 2 {
        return (mean, [mean, mean]);
    }
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t95(d.len() - 1) * (var / n).sqrt();
    (mean, [mean - half, mean + half])
}

/// 95% bootstrap interval of p90(a) − p90(b) over paired samples (same index = same seed and
/// version), 2,000 resamples with a fixed seed.
fn p90_diff_ci95(a: &[f64], b: &[f64]) -> [f64; 2] {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7072_7439);
    let n = a.len();
    let mut diffs = Vec::with_capacity(2000);
    let (mut ra, mut rb) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..2000 {
        for i in 0..n {
            let k = rng.random_range(0..n);
            ra[i] = a[k];
            rb[i] = b[k];
        }
        diffs.push(percentile(&ra, 90.0) - percentile(&rb, 90.0));
    }
    [percentile(&diffs, 2.5), percentile(&diffs, 97.5)]
}

/// Summarises runs into rows (one per network, page and policy, in the order first seen).
/// Reductions are against the `reliable` runs of the same network and page; rows without
/// them get reductions of 0.
pub fn summarize(runs: &[PartialRun]) -> Vec<PartialRow> {
    let mut keys: Vec<(&'static str, String, &'static str)> = Vec::new();
    for r in runs {
        let k = (r.network, r.page.clone(), r.policy);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let of = |n: &str, p: &str, pol: &str| -> Vec<&PartialRun> {
        runs.iter().filter(|r| r.network == n && r.page == p && r.policy == pol).collect()
    };
    keys.iter()
        .map(|(n, p, pol)| {
            let mine = of(n, p, pol);
            let base = of(n, p, "reliable");
            let fetch: Vec<f64> = mine.iter().map(|r| r.fetch_ms).collect();
            let mean = fetch.iter().sum::<f64>() / fetch.len() as f64;
            let p90 = percentile(&fetch, 90.0);
            // Pair by seed and version.
            let pairs: Vec<(f64, f64)> = mine
                .iter()
                .filter_map(|r| {
                    base.iter().find(|b| b.seed == r.seed && b.version == r.version).map(|b| (b.fetch_ms, r.fetch_ms))
                })
                .collect();
            let (red, ci, red90, ci90) = if pairs.is_empty() {
                (0.0, [0.0, 0.0], 0.0, [0.0, 0.0])
            } else {
                let d: Vec<f64> = pairs.iter().map(|(b, m)| b - m).collect();
                let (red, ci) = mean_ci95(&d);
                let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
                (red, ci, percentile(&a, 90.0) - percentile(&b, 90.0), p90_diff_ci95(&a, &b))
            };
            let sent: u64 = mine.iter().map(|r| r.unreliable_bytes).sum();
            let lost: u64 = mine.iter().map(|r| r.lost_bytes).sum();
            let cause = |c: fn(&triage_web::LossCauses) -> u64| {
                let b: u64 = mine.iter().map(|r| c(&r.lost_causes)).sum();
                if sent == 0 {
                    0.0
                } else {
                    b as f64 * 100.0 / sent as f64
                }
            };
            let k = mine.len() as f64;
            PartialRow {
                network: n,
                policy: pol,
                page: p.clone(),
                runs: mine.len(),
                mean_fetch_ms: mean,
                p90_fetch_ms: p90,
                reduction_mean_ms: red,
                reduction_mean_ci95_ms: ci,
                reduction_p90_ms: red90,
                reduction_p90_ci95_ms: ci90,
                data_loss_pct: if sent == 0 { 0.0 } else { lost as f64 * 100.0 / sent as f64 },
                data_loss_network_pct: cause(|c| c.network_bytes),
                data_loss_metadata_pct: cause(|c| c.metadata_bytes),
                data_loss_late_pct: cause(|c| c.late_bytes),
                data_loss_local_pct: cause(|c| c.local_bytes),
                unreliable_bytes: sent as f64 / k,
                partial_objects: mine.iter().map(|r| r.partial_objects).sum::<usize>() as f64 / k,
            }
        })
        .collect()
}

/// The thesis's reductions on 9 Mbps + 5% loss (Figs. 16 and 18): policy, mean ms, p90 ms.
/// Fig. 18a is fonts + ads (244.8 / 295.0), 18b fonts + third party (243.7 / 291.5, which
/// §6.1's text gives for "fonts, third-party JavaScript, and CSS").
pub const THESIS_REDUCTIONS: [(&str, f64, f64); 5] = [
    ("fonts", 99.2, 115.3),
    ("ads", 113.4, 132.4),
    ("third_party", 136.0, 151.6),
    ("fonts_ads", 244.8, 295.0),
    ("fonts_third_party", 243.7, 291.5),
];
