//! CATS §III: the paper's page over FIFO and over the Conductor (Tables I and II, Figs. 2
//! and 3), plus the oracle.
//!
//! The network is the paper's dumbbell (§III-A): a bottleneck of `rate_bps` with a one-way
//! delay of half the RTT, 100 Mbps / 0 ms access links, a DropTail bottleneck queue large
//! enough never to drop (at least 100 packets and twice the BDP), MSS 1448, initial window
//! 10, delayed ACK every 2 segments, PRR. The client opens the connection at t=0; the
//! server writes the five groups in reverse priority order as soon as it accepts it.

use serde::Serialize;
use triage_core::cc::ControllerKind;
use triage_core::sched::CatsConfig;
use triage_core::{ConnectionConfig, SchedulerKind};

use crate::app::{AppSpec, MessageSpec};
use crate::report::ms;
use crate::topology::{one_flow_dumbbell, LinkParams};

/// The page of CATS §III-A: (name, priority, bytes), in write order (reverse priority).
pub const PAGE: [(&str, u8, u64); 5] =
    [("P4", 4, 150 * 1024), ("P3", 3, 60 * 1024), ("P2", 2, 40 * 1024), ("P1", 1, 25 * 1024), ("P0", 0, 8 * 1024)];

/// Table I of the paper, (baseline, CATS) in ms, in the order of [`PAGE`].
pub const PAPER_TABLE_I: [(f64, f64); 5] =
    [(764.0, 1327.0), (1018.0, 815.0), (1187.0, 523.0), (1293.0, 282.0), (1327.0, 130.0)];

/// What the group is in the paper's page model (Table I).
pub const GROUP_LABELS: [&str; 5] =
    ["Analytics/Tracking", "Images/Media", "Application JS", "CSS Framework", "Critical HTML/CSS"];

/// The network of one reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CatsNetwork {
    /// Bottleneck rate.
    pub rate_bps: u64,
    /// Round-trip propagation delay (twice the bottleneck's one-way delay).
    pub rtt_ns: u64,
    /// Congestion controller.
    #[serde(skip)]
    pub cc: ControllerKind,
}

impl CatsNetwork {
    /// The paper's network: 2 Mbps, 50 ms RTT, BBR.
    pub fn paper() -> Self {
        Self { rate_bps: 2_000_000, rtt_ns: 50_000_000, cc: ControllerKind::Bbr }
    }

    /// True when this is the network the paper measured, so its numbers apply.
    pub fn is_paper(&self) -> bool {
        *self == Self::paper()
    }
}

/// One group's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupResult {
    /// "P0" … "P4".
    pub name: String,
    /// Priority.
    pub priority: u8,
    /// Size.
    pub bytes: u64,
    /// Completion under FIFO.
    pub fifo_ms: f64,
    /// Completion under the CATS Conductor.
    pub cats_ms: f64,
    /// The earliest this group can complete with critical bytes first and nothing wasted.
    pub oracle_ms: f64,
    /// Table I's baseline value (only for the paper's network).
    pub paper_fifo_ms: Option<f64>,
    /// Table I's CATS value (only for the paper's network).
    pub paper_cats_ms: Option<f64>,
    /// When the server wrote the group (connection accepted).
    pub written_ms: f64,
}

/// A metric for both schemes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Metric {
    /// Under FIFO.
    pub fifo_ms: f64,
    /// Under CATS.
    pub cats_ms: f64,
    /// Table II's baseline value (only for the paper's network).
    pub paper_fifo_ms: Option<f64>,
    /// Table II's CATS value (only for the paper's network).
    pub paper_cats_ms: Option<f64>,
}

impl Metric {
    /// Improvement of CATS over FIFO in percent.
    pub fn improvement_pct(&self) -> f64 {
        (self.fifo_ms - self.cats_ms) / self.fifo_ms * 100.0
    }
}

/// Table II's metrics (definitions in its notes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Metrics {
    /// First contentful paint: the last of P0 and P1 (note a).
    pub fcp: Metric,
    /// Time to interactive: the last of P0, P1 and P2 (note b).
    pub tti: Metric,
    /// Largest contentful paint: P3, the largest visual element (note c).
    pub lcp: Metric,
}

/// CATS §III-C's CLS estimate: layout stabilizes when P1 completes; an image (P3) that
/// arrives after it shifts the layout. "≤ 0.1" when P3 completes no later than P1,
/// "> 0.1" otherwise (note d), with the delay between the two.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClsEstimate {
    /// "<= 0.1" or "> 0.1".
    pub fifo: &'static str,
    /// "<= 0.1" or "> 0.1".
    pub cats: &'static str,
    /// P3 completion minus P1 completion under FIFO.
    pub fifo_shift_window_ms: f64,
    /// P3 completion minus P1 completion under CATS.
    pub cats_shift_window_ms: f64,
}

/// Page load time for both schemes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plt {
    /// Under FIFO.
    pub fifo_ms: f64,
    /// Under CATS.
    pub cats_ms: f64,
    /// The paper's value (1327 ms for both), for its network.
    pub paper_ms: Option<f64>,
}

/// The whole reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CatsReproduction {
    /// Network.
    pub network: CatsNetwork,
    /// Controller name.
    pub cc: &'static str,
    /// Table I.
    pub groups: Vec<GroupResult>,
    /// Table II.
    pub metrics: Metrics,
    /// Table II's CLS row.
    pub cls: ClsEstimate,
    /// Page load.
    pub plt: Plt,
    /// Retransmissions (FIFO, CATS).
    pub retransmissions: [u64; 2],
}

/// Connection settings of the reproduction, with the given scheduler.
pub fn transport(cc: &ControllerKind, scheduler: SchedulerKind) -> ConnectionConfig {
    ConnectionConfig { controller: cc.clone(), scheduler, seed: 1, ..Default::default() }
}

/// Simulated time each run of the page may take; a group not complete by then is reported
/// at `u64::MAX` ns (see [`CatsReproduction::incomplete`]).
pub const RUN_LIMIT_NS: u64 = 3_600_000_000_000;

/// Runs the page once; returns (written, completed) per group in [`PAGE`] order and the
/// retransmission count. `order` is the write order as indices into [`PAGE`].
pub fn run_page(net: &CatsNetwork, cfg: ConnectionConfig, order: &[usize]) -> (Vec<(u64, u64)>, u64) {
    let owd = net.rtt_ns / 2;
    let bdp_packets = (net.rate_bps as u128 * net.rtt_ns as u128 / 8 / 1_000_000_000 / 1500) as u64;
    let queue = 100.max(2 * bdp_packets);
    let msgs = order
        .iter()
        .map(|&i| MessageSpec {
            name: PAGE[i].0.into(),
            bytes: PAGE[i].2,
            priority: Some(PAGE[i].1),
            at_ns: None,
            unreliable: false,
            same_stream_as: None,
        })
        .collect();
    let bottleneck = LinkParams::new(net.rate_bps, owd, queue);
    let mut sim = one_flow_dumbbell("page", cfg, &bottleneck, AppSpec::Messages(msgs), 0);
    sim.run(RUN_LIMIT_NS, |_| {});
    let mut out = vec![(0, 0); PAGE.len()];
    for m in &sim.recorder().messages {
        let i = PAGE.iter().position(|p| p.0 == m.name).expect("a page group");
        out[i] = (m.written_ns.unwrap_or(0), m.completed_ns.unwrap_or(u64::MAX));
    }
    (out, sim.flow_results()[0].retransmitted_segments)
}

/// The Conductor without fairness: strict priority.
pub fn strict_priority() -> CatsConfig {
    CatsConfig { high_watermark_bytes: [u64::MAX; 5], low_watermark_bytes: [u64::MAX; 5], payback_multiplier: [1; 5] }
}

impl CatsReproduction {
    /// The (scheduler, group) pairs that did not complete within [`RUN_LIMIT_NS`], such as
    /// "FIFO P0"; their times are meaningless.
    pub fn incomplete(&self) -> Vec<String> {
        let limit_ms = RUN_LIMIT_NS as f64 / 1e6;
        let mut out = Vec::new();
        for (name, get) in [
            ("FIFO", (|g: &GroupResult| g.fifo_ms) as fn(&GroupResult) -> f64),
            ("CATS", |g| g.cats_ms),
            ("oracle", |g| g.oracle_ms),
        ] {
            out.extend(self.groups.iter().filter(|g| get(g) > limit_ms).map(|g| format!("{name} {}", g.name)));
        }
        out
    }
}

/// Runs FIFO, CATS and the oracle on `net` with the Conductor's parameters `cats`.
pub fn reproduce(net: &CatsNetwork, cats: &CatsConfig) -> CatsReproduction {
    let write_order: Vec<usize> = (0..PAGE.len()).collect();
    let (fifo, fifo_rtx) = run_page(net, transport(&net.cc, SchedulerKind::Fifo), &write_order);
    let (cat, cats_rtx) = run_page(net, transport(&net.cc, SchedulerKind::Cats(cats.clone())), &write_order);
    // The oracle: the same connection fed in strict priority order (the Conductor with
    // fairness switched off: watermarks that are never reached). Group k then completes as
    // soon as P0..Pk's bytes are through, which no scheduler can beat with this
    // controller's start-up, and nothing else is sent before them.
    let (oracle, _) = run_page(net, transport(&net.cc, SchedulerKind::Cats(strict_priority())), &write_order);
    let paper = net.is_paper();
    let groups: Vec<GroupResult> = (0..PAGE.len())
        .map(|i| GroupResult {
            name: PAGE[i].0.into(),
            priority: PAGE[i].1,
            bytes: PAGE[i].2,
            fifo_ms: ms(fifo[i].1),
            cats_ms: ms(cat[i].1),
            oracle_ms: ms(oracle[i].1),
            paper_fifo_ms: paper.then_some(PAPER_TABLE_I[i].0),
            paper_cats_ms: paper.then_some(PAPER_TABLE_I[i].1),
            written_ms: ms(cat[i].0),
        })
        .collect();
    // Index by priority: PAGE[4 - p].
    let at = |p: usize, f: fn(&GroupResult) -> f64| f(&groups[4 - p]);
    let last = |ps: &[usize], f: fn(&GroupResult) -> f64| ps.iter().map(|&p| at(p, f)).fold(0.0, f64::max);
    let metric = |ps: &[usize], paper_vals: (f64, f64)| Metric {
        fifo_ms: last(ps, |g| g.fifo_ms),
        cats_ms: last(ps, |g| g.cats_ms),
        paper_fifo_ms: paper.then_some(paper_vals.0),
        paper_cats_ms: paper.then_some(paper_vals.1),
    };
    let cls = |p1: f64, p3: f64| if p3 <= p1 { "<= 0.1" } else { "> 0.1" };
    CatsReproduction {
        network: net.clone(),
        cc: net.cc.name(),
        metrics: Metrics {
            fcp: metric(&[0, 1], (1327.0, 282.0)),
            tti: metric(&[0, 1, 2], (1327.0, 523.0)),
            lcp: metric(&[3], (1018.0, 815.0)),
        },
        cls: ClsEstimate {
            fifo: cls(at(1, |g| g.fifo_ms), at(3, |g| g.fifo_ms)),
            cats: cls(at(1, |g| g.cats_ms), at(3, |g| g.cats_ms)),
            fifo_shift_window_ms: at(3, |g| g.fifo_ms) - at(1, |g| g.fifo_ms),
            cats_shift_window_ms: at(3, |g| g.cats_ms) - at(1, |g| g.cats_ms),
        },
        plt: Plt {
            fifo_ms: last(&[0, 1, 2, 3, 4], |g| g.fifo_ms),
            cats_ms: last(&[0, 1, 2, 3, 4], |g| g.cats_ms),
            paper_ms: paper.then_some(1327.0),
        },
        retransmissions: [fifo_rtx, cats_rtx],
        groups,
    }
}
