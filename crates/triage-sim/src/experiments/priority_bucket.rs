//! PriorityBucket (../shared/seeds/001, Shi, Zhang, Liu, e-Energy '20) §5: first render
//! time and page load time of Bing and YouTube over two paths, under Lowest-RTT-First,
//! SA-ECF and PriorityBucket, in the four settings of Table 2 (Fig. 3); and the reference
//! page of ../shared/reference/quic over two paths.
//!
//! Where the paper is silent we take the reproduction notes' choices
//! (../shared/seeds/REPRODUCTION-pb-partial.md, PB-n):
//!
//! - **Network** (§5.1, Fig. 2, PB-16): two multi-homed hosts over two disjoint paths, each
//!   one duplex link with half the path's RTT each way, a DropTail queue of max(BDP / 1500 B,
//!   10) packets (21, 10 and 167 packets for 25 Mbps / 10 ms, 10 Mbps / 10 ms and 40 Mbps /
//!   50 ms), and 2% random loss in both directions in the lossy settings.
//! - **Transport**: QUIC mode with 16 MB stream windows ("The maximal receive window is set
//!   to 16 MB"), one controller per path, uncoupled (PB-17's sensitivity choice: the
//!   authors' mp-quic ran OLIA, which triage does not have; CUBIC by default, `--cc`), our
//!   QUIC defaults otherwise (10-packet initial window, pacing, 1452-byte datagrams).
//! - **Estimates** (§4.1, PB-2, PB-3): each path starts from its configured RTT and rate;
//!   then smoothed RTT (RFC 9002's EWMA) and a windowed-max delivery-rate estimate seeded
//!   with the rate.
//! - **Schedulers** (§5.2): LRF = round robin over streams, one packet each in turn, on the
//!   lowest-smoothed-RTT path with window room; SA-ECF = weighted round robin by HTTP/2
//!   weight and the ECF rule per stream (PB-10, paper form); PriorityBucket = Algorithm 1
//!   per arriving stream and per-path buckets.
//! - **Pages** (§5.1, PB-13, PB-19): the built-in `bing` (HTML + image) and `youtube`
//!   (HTML, 2 CSS, 2 JS, 20 images) pages with their stated sizes. The client requests the
//!   HTML once both paths are validated (PB-18) and every other object at once when the
//!   HTML has arrived (dependency depth 1, no processing time, §5.1 "network transmission
//!   time"). Priorities are Chrome's HTTP/2 weights (PB-13): HTML, CSS and fonts 255 →
//!   bucket 0, scripts 220 → 1, images 147 → 2, the rest 110 → 3.
//! - **Metrics** (§5.1, PB-11, PB-12): from the HTML request, first render time = the
//!   arrival of the last byte of the last HTML, CSS or JS object; page load time = that of
//!   the last object.
//! - **Runs**: the paper repeats each case 10 times; ours differ by the seed of the loss
//!   processes, so the lossless settings give the same result every run (standard deviation
//!   0) where a testbed's would vary a little.

use serde::Serialize;
use triage_core::cc::ControllerKind;
use triage_core::path::sched::PriorityBucketConfig;
use triage_core::quic::{MultipathConfig, PathSchedulerKind, QuicConfig};
use triage_core::sched::stream::StreamSchedulerKind;
use triage_core::{ConnectionConfig, TransportMode};
use triage_web::{ContentType, DiscoveryConfig, Page};

use crate::app::{AppSpec, MessageSpec, PageLoad};
use crate::loss::LossModel;
use crate::queue::{QueueKind, RedConfig};
use crate::sim::Simulator;
use crate::topology::{multipath, multipath_flow, path_priors, LinkParams};

const MS: u64 = 1_000_000;

/// The four path settings of Table 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// 25 Mbps / 10 ms on both paths.
    Low,
    /// The same with 2% loss.
    LowLossy,
    /// 10 Mbps / 10 ms and 40 Mbps / 50 ms.
    High,
    /// The same with 2% loss.
    HighLossy,
}

impl Setting {
    /// Table 2's order.
    pub const ALL: [Setting; 4] = [Setting::Low, Setting::LowLossy, Setting::High, Setting::HighLossy];

    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Low => "low",
            Setting::LowLossy => "low_lossy",
            Setting::High => "high",
            Setting::HighLossy => "high_lossy",
        }
    }

    /// Parses [`Setting::name`].
    pub fn parse(s: &str) -> Option<Setting> {
        Setting::ALL.into_iter().find(|x| x.name() == s.to_ascii_lowercase().replace('-', "_"))
    }

    /// The two paths: (rate, RTT) per path and the loss rate of both.
    fn paths(self) -> ([(u64, u64); 2], f64) {
        let low = [(25_000_000, 10 * MS), (25_000_000, 10 * MS)];
        let high = [(10_000_000, 10 * MS), (40_000_000, 50 * MS)];
        match self {
            Setting::Low => (low, 0.0),
            Setting::LowLossy => (low, 0.02),
            Setting::High => (high, 0.0),
            Setting::HighLossy => (high, 0.02),
        }
    }

    /// The paths as links (PB-16: half the RTT each way, a queue of `queue_packets` or
    /// max(BDP / 1500 B, 10) packets).
    pub fn links(self, queue_packets: Option<u64>, ecn: bool) -> Vec<LinkParams> {
        let (paths, loss) = self.paths();
        paths
            .iter()
            .map(|&(rate, rtt)| {
                let bdp_packets = (rate as u128 * rtt as u128 / 8 / 1_000_000_000 / 1500) as u64;
                let q = queue_packets.unwrap_or(bdp_packets.max(10));
                let mut l = LinkParams::new(rate, rtt / 2, q);
                if ecn {
                    // RED marking between a quarter and three quarters of the queue.
                    l.kind = QueueKind::Red(RedConfig {
                        limit_packets: q,
                        min_th: q as f64 / 4.0,
                        max_th: q as f64 * 3.0 / 4.0,
                        ecn: true,
                        ..RedConfig::default()
                    });
                }
                if loss > 0.0 {
                    l.loss = LossModel::Bernoulli { loss_prob: loss };
                }
                l
            })
            .collect()
    }
}

/// The three schedulers of §5.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    /// Lowest-RTT-First.
    Lrf,
    /// Stream-Aware Earliest Completion First.
    SaEcf,
    /// PriorityBucket.
    PriorityBucket,
    /// Beyond the paper: PriorityBucket whose paths serve their buckets by the CATS
    /// Conductor's debt rule (CATS §II-E) instead of strict priority.
    PriorityBucketCats,
}

impl Scheduler {
    /// The paper's order.
    pub const ALL: [Scheduler; 3] = [Scheduler::Lrf, Scheduler::SaEcf, Scheduler::PriorityBucket];

    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Lrf => "lrf",
            Scheduler::SaEcf => "sa_ecf",
            Scheduler::PriorityBucket => "priority_bucket",
            Scheduler::PriorityBucketCats => "priority_bucket_cats",
        }
    }

    /// Parses [`Scheduler::name`] (also `sa-ecf`, `pb`).
    pub fn parse(s: &str) -> Option<Scheduler> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "lrf" => Some(Scheduler::Lrf),
            "sa_ecf" | "saecf" => Some(Scheduler::SaEcf),
            "priority_bucket" | "pb" | "prioritybucket" => Some(Scheduler::PriorityBucket),
            "priority_bucket_cats" | "pb_cats" => Some(Scheduler::PriorityBucketCats),
            _ => None,
        }
    }

    /// Path scheduler and stream scheduler.
    pub fn kinds(self) -> (PathSchedulerKind, StreamSchedulerKind) {
        match self {
            Scheduler::Lrf => (PathSchedulerKind::Lrf, StreamSchedulerKind::Rr),
            Scheduler::SaEcf => (PathSchedulerKind::SaEcf(Default::default()), StreamSchedulerKind::Wrr),
            // The buckets order the data; the stream scheduler kind is not used.
            Scheduler::PriorityBucket => {
                (PathSchedulerKind::PriorityBucket(Default::default()), StreamSchedulerKind::Fifo)
            }
            Scheduler::PriorityBucketCats => (
                PathSchedulerKind::PriorityBucket(PriorityBucketConfig { cats_fairness: true, ..Default::default() }),
                StreamSchedulerKind::Fifo,
            ),
        }
    }
}

/// Bucket (priority number) of an object from Chrome's HTTP/2 weight for its type (PB-13).
pub fn chrome_bucket(kind: ContentType) -> u8 {
    match kind {
        ContentType::Html | ContentType::Css | ContentType::Font => 0,
        ContentType::Js => 1,
        ContentType::Image => 2,
        _ => 3,
    }
}

/// True for the objects first render waits for (§5.1, PB-11: HTML, CSS and JavaScript).
pub fn is_critical(kind: ContentType) -> bool {
    matches!(kind, ContentType::Html | ContentType::Css | ContentType::Js)
}

/// `page` with every object's priority set to its Chrome bucket ([`chrome_bucket`]).
pub fn with_chrome_buckets(page: &Page) -> Page {
    let objects = page
        .objects()
        .iter()
        .cloned()
        .map(|mut o| {
            o.cats_level = chrome_bucket(o.kind);
            o
        })
        .collect();
    Page::new(page.name(), objects).expect("the same objects form a valid page")
}

/// Which QUIC stack's settings the connections take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stack {
    /// The authors' mp-quic (REPRODUCTION A.5.2): 1350-byte packets, an initial window of
    /// 32 packets, no pacing.
    MpQuic,
    /// triage's QUIC defaults (quinn's): 1452-byte datagrams, 10 packets, pacing.
    Quinn,
}

impl Stack {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Stack::MpQuic => "mp_quic",
            Stack::Quinn => "quinn",
        }
    }
}

/// How the reproduction is run (the command line's options).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Options {
    /// Controller of every path.
    pub cc: ControllerKind,
    /// Stack settings.
    pub stack: Stack,
    /// Queue of each path, packets; `None`: PB-16's max(BDP / 1500 B, 10).
    pub queue_packets: Option<u64>,
    /// Bandwidth estimates follow the delivery rate (§4.1); `false`: the prior for good
    /// (the authors' code, PB-3).
    pub estimate_bandwidth: bool,
    /// ECN-capable paths: RED queues that mark CE (ns-3's defaults, thresholds scaled to
    /// the queue) and senders that set ECT(0) and react to CE (RFC 9000 §13.4).
    pub ecn: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            cc: ControllerKind::Cubic,
            stack: Stack::MpQuic,
            queue_packets: None,
            estimate_bandwidth: true,
            ecn: false,
        }
    }
}

/// Transport settings of both ends.
pub fn transport(scheduler: Scheduler, o: &Options, links: &[LinkParams]) -> ConnectionConfig {
    let (path, stream) = scheduler.kinds();
    let mut cfg = ConnectionConfig {
        mode: TransportMode::Quic,
        controller: o.cc.clone(),
        quic: QuicConfig {
            stream_receive_window_bytes: 16_000_000,
            scheduler: stream,
            multipath: MultipathConfig {
                scheduler: path,
                priors: path_priors(links),
                estimate_bandwidth: o.estimate_bandwidth,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    };
    // Classic ECN (RFC 9000 §13.4) on the RED paths of `--ecn`.
    cfg.ecn = o.ecn.then_some(triage_core::ecn::EcnMode::Classic);
    if o.stack == Stack::MpQuic {
        cfg.initial_window_segments = 32;
        cfg.quic.max_udp_payload_bytes = 1350;
        cfg.quic.initial_padding_bytes = 1350;
        cfg.quic.max_datagram_frame_bytes = 1312;
        cfg.quic.pacing = false;
    }
    cfg
}

/// One page load.
#[derive(Clone, Debug, Serialize)]
pub struct PageRun {
    /// Table 2 setting.
    pub setting: Setting,
    /// Scheduler.
    pub scheduler: Scheduler,
    /// Page name.
    pub page: String,
    /// Seed of the loss processes.
    pub seed: u64,
    /// From the HTML request to the last critical object's last byte.
    pub first_render_ms: f64,
    /// From the HTML request to the last object's last byte.
    pub plt_ms: f64,
    /// From the HTML request to the first image's last byte (how long the least urgent
    /// bucket waits: a starvation measure); `None` for a page without images.
    pub first_image_ms: Option<f64>,
    /// Stream and datagram payload bytes the server sent on each path (retransmissions
    /// included).
    pub server_bytes_per_path: Vec<u64>,
    /// Times the server declared each path failed (probe timeouts in a row).
    pub server_path_failures: Vec<u64>,
    /// Probe timeouts at the server, per path.
    pub server_ptos: Vec<u64>,
    /// Every object arrived.
    pub complete: bool,
}

/// Loads `page` (Chrome buckets applied by the caller) once.
pub fn run_page(setting: Setting, scheduler: Scheduler, o: &Options, page: &Page, seed: u64) -> PageRun {
    let links = setting.links(o.queue_packets, o.ecn);
    let (net, ends) = multipath(seed, &links);
    let cfg = transport(scheduler, o, &links);
    let load = std::sync::Arc::new(PageLoad::new(page.clone(), 300, DiscoveryConfig::default()));
    let mut sim = Simulator::new(net, 0);
    sim.add_flow(multipath_flow(page.name(), &ends, cfg, AppSpec::PageClient(load.clone()), AppSpec::PageServer(load)));
    sim.run(600_000 * MS, |_| {});
    let (_, deliveries) = sim.page_deliveries(0).expect("a page flow");
    let start = deliveries.get(&page.root()).map_or(0, |d| d.request_ns);
    let mut frt = 0u64;
    let mut plt = 0u64;
    let mut first_image: Option<u64> = None;
    for (id, d) in deliveries.iter() {
        let t = d.complete_ns.saturating_sub(start);
        plt = plt.max(t);
        if page.get(*id).kind == ContentType::Image {
            first_image = Some(first_image.map_or(t, |f| f.min(t)));
        }
        if is_critical(page.get(*id).kind) {
            frt = frt.max(t);
        }
    }
    let [_, server] = sim.flow_path_stats(0);
    PageRun {
        setting,
        scheduler,
        page: page.name().to_string(),
        seed,
        first_render_ms: frt as f64 / 1e6,
        plt_ms: plt as f64 / 1e6,
        first_image_ms: first_image.map(|t| t as f64 / 1e6),
        server_bytes_per_path: server.iter().map(|p| p.data_bytes_sent).collect(),
        server_path_failures: server.iter().map(|p| p.failures).collect(),
        server_ptos: server.iter().map(|p| p.pto_count).collect(),
        complete: deliveries.len() == page.len(),
    }
}

/// Mean and standard deviation of one case over its runs (Fig. 3's bars and error bars).
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// Table 2 setting.
    pub setting: Setting,
    /// Scheduler.
    pub scheduler: Scheduler,
    /// Page.
    pub page: String,
    /// Page loads.
    pub runs: usize,
    /// First render time, mean over the runs.
    pub first_render_ms_mean: f64,
    /// Its sample standard deviation.
    pub first_render_ms_std: f64,
    /// Page load time, mean.
    pub plt_ms_mean: f64,
    /// Its sample standard deviation.
    pub plt_ms_std: f64,
    /// First image's completion, mean (0 for a page without images).
    pub first_image_ms_mean: f64,
}

/// Sample mean and standard deviation (n − 1; 0 for one value).
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 { v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    (m, var.sqrt())
}

/// Every setting × scheduler × page, `runs` seeds each (seed, seed + 1, ...); `tick` after
/// each page load.
pub fn run_all(
    settings: &[Setting],
    schedulers: &[Scheduler],
    pages: &[Page],
    o: &Options,
    runs: usize,
    seed: u64,
    mut tick: impl FnMut(),
) -> Vec<PageRun> {
    let mut out = Vec::new();
    for &setting in settings {
        for page in pages {
            for &scheduler in schedulers {
                for r in 0..runs as u64 {
                    out.push(run_page(setting, scheduler, o, page, seed + r));
                    tick();
                }
            }
        }
    }
    out
}

/// One [`CaseResult`] per setting, page and scheduler, in the order of `runs`.
pub fn summarize(runs: &[PageRun]) -> Vec<CaseResult> {
    let mut keys: Vec<(Setting, String, Scheduler)> = Vec::new();
    for r in runs {
        let k = (r.setting, r.page.clone(), r.scheduler);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(setting, page, scheduler)| {
            let mine: Vec<&PageRun> =
                runs.iter().filter(|r| r.setting == setting && r.page == page && r.scheduler == scheduler).collect();
            let frt: Vec<f64> = mine.iter().map(|r| r.first_render_ms).collect();
            let plt: Vec<f64> = mine.iter().map(|r| r.plt_ms).collect();
            let (fm, fs) = mean_std(&frt);
            let (pm, ps) = mean_std(&plt);
            let images: Vec<f64> = mine.iter().filter_map(|r| r.first_image_ms).collect();
            CaseResult {
                setting,
                scheduler,
                page,
                runs: mine.len(),
                first_render_ms_mean: fm,
                first_render_ms_std: fs,
                plt_ms_mean: pm,
                plt_ms_std: ps,
                first_image_ms_mean: mean_std(&images).0,
            }
        })
        .collect()
}

/// The paper's headline (§5.3, abstract): on Bing in High and Lossy, PriorityBucket reduces
/// first render time by up to 34% and page load time by up to 35%.
pub const PAPER_BING_HIGH_LOSSY_REDUCTION_PCT: (f64, f64) = (34.0, 35.0);

// ------------------------------------------------------------------ the reference page

/// The reference page of ../shared/reference/quic (the CATS groups P4 150 KiB, P3 60 KiB,
/// P2 40 KiB, P1 25 KiB, P0 8 KiB, written by the server in that order on streams of their
/// own) over two paths, A = 10 Mbps / 10 ms and B = 5 Mbps / 50 ms one way, 1000-packet
/// queues; or over A or B alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefCase {
    /// Path A alone (single-path QUIC).
    AAlone,
    /// Path B alone.
    BAlone,
    /// Both paths, this scheduler.
    Both(Scheduler),
}

impl RefCase {
    /// The five cases in table order.
    pub const ALL: [RefCase; 5] = [
        RefCase::AAlone,
        RefCase::BAlone,
        RefCase::Both(Scheduler::Lrf),
        RefCase::Both(Scheduler::SaEcf),
        RefCase::Both(Scheduler::PriorityBucket),
    ];

    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            RefCase::AAlone => "A alone",
            RefCase::BAlone => "B alone",
            RefCase::Both(s) => s.name(),
        }
    }
}

/// One reference-page transfer.
#[derive(Clone, Debug, Serialize)]
pub struct RefRun {
    /// Case name ([`RefCase::name`]).
    pub case: &'static str,
    /// Controller.
    pub cc: &'static str,
    /// Completion of each group from the flow start, P4 first (ms).
    pub groups_ms: Vec<(String, f64)>,
    /// Payload bytes the server sent on each path.
    pub server_bytes_per_path: Vec<u64>,
}

/// The reference page's paths.
pub fn ref_links() -> [LinkParams; 2] {
    [LinkParams::new(10_000_000, 10 * MS, 1000), LinkParams::new(5_000_000, 50 * MS, 1000)]
}

/// The CATS groups as the reference tool writes them (largest, least urgent first).
pub fn ref_groups() -> Vec<MessageSpec> {
    [("P4", 150u64), ("P3", 60), ("P2", 40), ("P1", 25), ("P0", 8)]
        .iter()
        .enumerate()
        .map(|(i, (n, k))| MessageSpec {
            name: n.to_string(),
            bytes: k * 1024,
            priority: Some(4 - i as u8),
            // Written once both paths are validated (PB-18), at 300 ms.
            at_ns: Some(300 * MS),
            unreliable: false,
            same_stream_as: None,
        })
        .collect()
}

/// Runs the reference page in `case` with controller `cc`. Group times are from the write.
pub fn run_ref(case: RefCase, cc: &ControllerKind) -> RefRun {
    let [a, b] = ref_links();
    let (links, scheduler) = match case {
        RefCase::AAlone => (vec![a], None),
        RefCase::BAlone => (vec![b], None),
        RefCase::Both(s) => (vec![a, b], Some(s)),
    };
    let (net, ends) = multipath(1, &links);
    let cfg = match scheduler {
        Some(s) => transport(s, &Options { cc: cc.clone(), stack: Stack::Quinn, ..Options::default() }, &links),
        None => ConnectionConfig {
            mode: TransportMode::Quic,
            controller: cc.clone(),
            quic: QuicConfig { stream_receive_window_bytes: 16_000_000, ..Default::default() },
            ..Default::default()
        },
    };
    let mut sim = Simulator::new(net, 0);
    sim.add_flow(multipath_flow("reference", &ends, cfg, AppSpec::Sink, AppSpec::Messages(ref_groups())));
    sim.run(600_000 * MS, |_| {});
    let groups_ms = sim
        .recorder()
        .messages
        .iter()
        .map(|m| {
            let t = match (m.completed_ns, m.written_ns) {
                (Some(c), Some(w)) => (c - w) as f64 / 1e6,
                _ => f64::NAN,
            };
            (m.name.clone(), t)
        })
        .collect();
    let [_, server] = sim.flow_path_stats(0);
    RefRun {
        case: case.name(),
        cc: cc.name(),
        groups_ms,
        server_bytes_per_path: server.iter().map(|p| p.data_bytes_sent).collect(),
    }
}
