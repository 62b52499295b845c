//! `triage reproduce`: the seed papers' tables and figures, with the paper's numbers beside ours.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use triage_core::cc::ControllerKind;
use triage_core::sched::CatsConfig;
use triage_sim::experiments::cats::{reproduce, CatsNetwork, CatsReproduction, GROUP_LABELS};
use triage_sim::units::{Duration, Rate};

use crate::chart::{self, ChartResult, PALETTE};
use crate::table::{fixed, or_empty};

/// Arguments of `triage reproduce`.
#[derive(clap::Args)]
pub struct ReproduceArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(clap::Subcommand)]
enum Which {
    /// CATS (§III): the paper's page over FIFO and the Conductor; Tables I and II, Figs. 2 and 3.
    Cats(CatsArgs),
    /// EECN (§6): NewReno, NewReno+ECN, VCP and EECN on the dumbbell and multi-hop paths; Table 4, Figs. 7-12.
    Eecn(crate::reproduce_eecn::EecnArgs),
    /// QUIC mode against a real QUIC stack: the CATS page in every sending mode (tcp, fifo, rr, prio, rfc9218,
    /// cats, dg01, dgall) beside quinn's and Linux TCP's medians.
    Quic(crate::reproduce_quic::QuicArgs),
    /// The thesis's partially reliable transport (§5.9, §6): page loads on 12 Mbps and 9 Mbps + 5% loss under
    /// six policies (non-essential objects as DATAGRAM chunks), with the thesis's reductions.
    Partial(crate::reproduce_partial::PartialArgs),
    /// PriorityBucket (§5): Bing and YouTube over two paths (Table 2's four settings) under LRF, SA-ECF and
    /// PriorityBucket, first render and page load time (Fig. 3); the reference page over two paths.
    PriorityBucket(crate::reproduce_pb::PbArgs),
}

#[derive(clap::Args)]
struct CatsArgs {
    /// Bottleneck rate.
    #[arg(long, default_value = "2Mbps")]
    rate: Rate,
    /// Round-trip propagation delay (the bottleneck's one-way delay is half of it).
    #[arg(long, default_value = "50ms")]
    rtt: Duration,
    /// Congestion controller.
    #[arg(long, value_enum, default_value = "bbr")]
    cc: Cc,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Write CSV tables and SVG charts (Fig. 2 and Fig. 3) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write a self-contained HTML report (Tables I and II, Fig. 2, the priority groups'
    /// waterfall under FIFO and CATS side by side) to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Cc {
    Bbr,
    Newreno,
}

/// Runs a reproduction.
pub fn run(a: ReproduceArgs) -> Result<(), String> {
    match a.which {
        Which::Cats(c) => cats(c),
        Which::Eecn(e) => crate::reproduce_eecn::run(e),
        Which::Quic(q) => crate::reproduce_quic::run(q),
        Which::Partial(p) => crate::reproduce_partial::run(p),
        Which::PriorityBucket(p) => crate::reproduce_pb::run(p),
    }
}

fn cats(a: CatsArgs) -> Result<(), String> {
    if a.rate.0 == 0 || a.rtt.0 == 0 {
        return Err("--rate and --rtt must be positive".into());
    }
    let net = CatsNetwork {
        rate_bps: a.rate.0,
        rtt_ns: a.rtt.0,
        cc: match a.cc {
            Cc::Bbr => ControllerKind::Bbr,
            Cc::Newreno => ControllerKind::NewReno,
        },
    };
    let r = reproduce(&net, &CatsConfig::default());
    let incomplete = r.incomplete();
    if !incomplete.is_empty() {
        return Err(format!(
            "--rate {} --rtt {}: {} did not complete within {} s of simulated time, so there are no \
             completion times to report; the page is {} bytes: use a faster --rate or a shorter --rtt",
            a.rate,
            a.rtt,
            incomplete.join(", "),
            triage_sim::experiments::cats::RUN_LIMIT_NS / 1_000_000_000,
            triage_sim::experiments::cats::PAGE.iter().map(|p| p.2).sum::<u64>(),
        ));
    }
    if let Some(path) = &a.html {
        crate::report::write(path, &html_report(&r))?;
    }
    emit(&r, a.out.as_deref(), a.json, write_out, json, tables)
}

/// The HTML report of the CATS reproduction: its tables, Fig. 2 as bars, and a waterfall
/// per scheme in which each priority group is one row (written, then downloading until it
/// completed), coloured by priority, with the FCP and LCP lines.
fn html_report(r: &CatsReproduction) -> crate::report::Report {
    use crate::report::{Bars, Report, Table, Waterfall};
    let f = |v: f64| format!("{v:.1}");
    let o = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.0}"));
    let groups: Vec<_> = r.groups.iter().rev().collect();
    let table1 = Table {
        caption: "Table I: priority group completion time".into(),
        header: ["group", "priority", "bytes", "fifo_ms", "cats_ms", "oracle_ms", "paper_fifo_ms", "paper_cats_ms"]
            .map(String::from)
            .to_vec(),
        rows: groups
            .iter()
            .map(|g| {
                vec![
                    g.name.clone(),
                    g.priority.to_string(),
                    g.bytes.to_string(),
                    f(g.fifo_ms),
                    f(g.cats_ms),
                    f(g.oracle_ms),
                    o(g.paper_fifo_ms),
                    o(g.paper_cats_ms),
                ]
            })
            .collect(),
    };
    let metric = |n: &str, m: &triage_sim::experiments::cats::Metric| {
        vec![
            n.to_string(),
            f(m.fifo_ms),
            f(m.cats_ms),
            format!("{:.1}", m.improvement_pct()),
            o(m.paper_fifo_ms),
            o(m.paper_cats_ms),
        ]
    };
    let table2 = Table {
        caption: "Table II: page metrics".into(),
        header: ["metric", "fifo_ms", "cats_ms", "improvement_pct", "paper_fifo_ms", "paper_cats_ms"]
            .map(String::from)
            .to_vec(),
        rows: vec![
            metric("FCP", &r.metrics.fcp),
            metric("TTI", &r.metrics.tti),
            metric("LCP", &r.metrics.lcp),
            vec![
                "page load".into(),
                f(r.plt.fifo_ms),
                f(r.plt.cats_ms),
                String::new(),
                o(r.plt.paper_ms),
                o(r.plt.paper_ms),
            ],
        ],
    };
    let fig2 = Bars {
        title: "Fig. 2: priority group completion time".into(),
        y_desc: "completion (ms)".into(),
        categories: groups.iter().map(|g| g.name.clone()).collect(),
        series: vec![
            ("FIFO (baseline TCP)".into(), groups.iter().map(|g| Some(g.fifo_ms)).collect()),
            ("CATS".into(), groups.iter().map(|g| Some(g.cats_ms)).collect()),
            ("paper FIFO".into(), groups.iter().map(|g| g.paper_fifo_ms).collect()),
            ("paper CATS".into(), groups.iter().map(|g| g.paper_cats_ms).collect()),
        ],
    };
    let waterfall = |scheme: &str, done: fn(&triage_sim::experiments::cats::GroupResult) -> f64, m: [f64; 2]| {
        let objects = groups
            .iter()
            .enumerate()
            .map(|(i, g)| crate::output::ObjectRow {
                variant: scheme.to_string(),
                flow: "page".into(),
                object_id: i as u32,
                url: g.name.clone(),
                kind: "group".into(),
                bytes: g.bytes,
                cats_level: g.priority,
                parent_id: Some(0),
                connection: "page connection 0".into(),
                request_ms: Some(g.written_ms),
                response_start_ms: Some(g.written_ms),
                complete_ms: Some(done(g)),
                ..Default::default()
            })
            .collect();
        Waterfall {
            title: format!("{scheme}: priority groups"),
            objects,
            marks: vec![("FCP".into(), m[0]), ("LCP".into(), m[1])],
        }
    };
    Report {
        title: "triage reproduce cats".into(),
        subtitle: vec![format!(
            "{:.3} Mbps bottleneck, {:.1} ms RTT, {}; retransmissions FIFO {}, CATS {}",
            r.network.rate_bps as f64 / 1e6,
            r.network.rtt_ns as f64 / 1e6,
            r.cc,
            r.retransmissions[0],
            r.retransmissions[1]
        )],
        summary: vec![table1, table2],
        tables: Vec::new(),
        charts: vec![fig2],
        waterfalls: vec![
            waterfall("FIFO", |g| g.fifo_ms, [r.metrics.fcp.fifo_ms, r.metrics.lcp.fifo_ms]),
            waterfall("CATS", |g| g.cats_ms, [r.metrics.fcp.cats_ms, r.metrics.lcp.cats_ms]),
        ],
    }
}

/// Finishes every reproduction the same way: writes its files into `out` when given, then
/// prints it as JSON or as text tables.
pub(crate) fn emit<R>(
    r: &R,
    out: Option<&Path>,
    as_json: bool,
    write_out: fn(&Path, &R) -> Result<(), String>,
    json: fn(&R) -> serde_json::Value,
    tables: fn(&R) -> String,
) -> Result<(), String> {
    if let Some(dir) = out {
        write_out(dir, r).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    if as_json {
        outln!("{}", serde_json::to_string_pretty(&json(r)).map_err(|e| e.to_string())?);
    } else {
        out!("{}", tables(r));
    }
    Ok(())
}

/// The JSON shape the issue names: groups, metrics (fcp, tti, lcp), plt; plus cls and the network.
fn json(r: &CatsReproduction) -> serde_json::Value {
    let m = |x: &triage_sim::experiments::cats::Metric| serde_json::json!({"fifo_ms": x.fifo_ms, "cats_ms": x.cats_ms, "paper_fifo_ms": x.paper_fifo_ms, "paper_cats_ms": x.paper_cats_ms});
    serde_json::json!({
        "network": {"rate_bps": r.network.rate_bps, "rtt_ms": r.network.rtt_ns as f64 / 1e6, "cc": r.cc, "paper_network": r.network.is_paper()},
        "groups": r.groups.iter().rev().map(|g| serde_json::json!({
            "name": g.name, "priority": g.priority, "bytes": g.bytes,
            "fifo_ms": g.fifo_ms, "cats_ms": g.cats_ms, "oracle_ms": g.oracle_ms,
            "paper_fifo_ms": g.paper_fifo_ms, "paper_cats_ms": g.paper_cats_ms,
        })).collect::<Vec<_>>(),
        "metrics": {"fcp": m(&r.metrics.fcp), "tti": m(&r.metrics.tti), "lcp": m(&r.metrics.lcp)},
        "cls": r.cls,
        "plt": r.plt,
        "retransmissions": {"fifo": r.retransmissions[0], "cats": r.retransmissions[1]},
    })
}

fn pct(ours: f64, paper: Option<f64>) -> String {
    paper.map_or("".into(), |p| format!("{:+.1}%", (ours - p) / p * 100.0))
}

fn tables(r: &CatsReproduction) -> String {
    let mut s = String::new();
    let paper = r.network.is_paper();
    let _ = writeln!(
        s,
        "CATS reproduction: {:.3} Mbps bottleneck, {:.1} ms RTT, {}{}",
        r.network.rate_bps as f64 / 1e6,
        r.network.rtt_ns as f64 / 1e6,
        r.cc,
        if paper {
            " (the paper's network: its numbers shown beside ours)"
        } else {
            " (paper numbers apply to 2 Mbps / 50 ms / bbr only)"
        }
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "Table I: completion time per priority group (ms)");
    let _ = writeln!(
        s,
        "{:<4} {:<19} {:>4} {:>7} | {:>8} {:>6} {:>7} | {:>8} {:>6} {:>7} | {:>8} {:>8}",
        "grp", "content", "prio", "bytes", "FIFO", "paper", "diff", "CATS", "paper", "diff", "oracle", "CATS-or"
    );
    for g in r.groups.iter().rev() {
        let label = GROUP_LABELS[4 - g.priority as usize];
        let _ = writeln!(
            s,
            "{:<4} {:<19} {:>4} {:>7} | {:>8.1} {:>6} {:>7} | {:>8.1} {:>6} {:>7} | {:>8.1} {:>+8.1}",
            g.name,
            label,
            g.priority,
            g.bytes,
            g.fifo_ms,
            fixed(g.paper_fifo_ms, 0),
            pct(g.fifo_ms, g.paper_fifo_ms),
            g.cats_ms,
            fixed(g.paper_cats_ms, 0),
            pct(g.cats_ms, g.paper_cats_ms),
            g.oracle_ms,
            g.cats_ms - g.oracle_ms
        );
    }
    let _ = writeln!(
        s,
        "{:<37} | {:>8.1} {:>6} {:>7} | {:>8.1} {:>6} {:>7} |",
        "Total page load",
        r.plt.fifo_ms,
        fixed(r.plt.paper_ms, 0),
        pct(r.plt.fifo_ms, r.plt.paper_ms),
        r.plt.cats_ms,
        fixed(r.plt.paper_ms, 0),
        pct(r.plt.cats_ms, r.plt.paper_ms)
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "Table II: estimated web performance metrics (ms)");
    let _ = writeln!(
        s,
        "{:<4} {:>8} {:>6} | {:>8} {:>6} | {:>8} {:>8}",
        "", "FIFO", "paper", "CATS", "paper", "improv", "paper"
    );
    for (name, m) in [("FCP", &r.metrics.fcp), ("TTI", &r.metrics.tti), ("LCP", &r.metrics.lcp)] {
        let paper_improv = match (m.paper_fifo_ms, m.paper_cats_ms) {
            (Some(f), Some(c)) => format!("{:.1}%", (f - c) / f * 100.0),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "{:<4} {:>8.1} {:>6} | {:>8.1} {:>6} | {:>7.1}% {:>8}",
            name,
            m.fifo_ms,
            fixed(m.paper_fifo_ms, 0),
            m.cats_ms,
            fixed(m.paper_cats_ms, 0),
            m.improvement_pct(),
            paper_improv
        );
    }
    let _ = writeln!(
        s,
        "CLS  {:>8} (P3-P1 {:+.0} ms) | {:>6} (P3-P1 {:+.0} ms){}",
        r.cls.fifo,
        r.cls.fifo_shift_window_ms,
        r.cls.cats,
        r.cls.cats_shift_window_ms,
        if paper { "   paper: <= 0.1 | > 0.1" } else { "" }
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "FCP = last of P0, P1; TTI = last of P0..P2; LCP = P3; CLS > 0.1 when the image (P3) lands after the layout (P1).\n\
         oracle = strict priority with no fairness: the earliest each group can complete with this controller's start-up.\n\
         retransmissions: FIFO {}, CATS {}",
        r.retransmissions[0], r.retransmissions[1]
    );
    s
}

fn write_out(dir: &Path, r: &CatsReproduction) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut t1: Vec<Vec<String>> = Vec::new();
    let t1_header = [
        "group",
        "priority",
        "bytes",
        "written_ms",
        "fifo_ms",
        "cats_ms",
        "oracle_ms",
        "paper_fifo_ms",
        "paper_cats_ms",
        "fifo_throughput_mbps",
        "cats_throughput_mbps",
    ];
    for g in r.groups.iter().rev() {
        t1.push(vec![
            g.name.to_string(),
            g.priority.to_string(),
            g.bytes.to_string(),
            g.written_ms.to_string(),
            g.fifo_ms.to_string(),
            g.cats_ms.to_string(),
            g.oracle_ms.to_string(),
            or_empty(g.paper_fifo_ms),
            or_empty(g.paper_cats_ms),
            format!("{:.4}", throughput(g.bytes, g.fifo_ms - g.written_ms)),
            format!("{:.4}", throughput(g.bytes, g.cats_ms - g.written_ms)),
        ]);
    }
    crate::table::write_csv(
        &dir.join("table1.csv"),
        &crate::table::RunParams::command("reproduce cats"),
        &t1_header,
        &t1,
    )
    .map_err(|e| e.to_string())?;
    let mut t2: Vec<Vec<String>> = Vec::new();
    let t2_header = ["metric", "fifo_ms", "cats_ms", "paper_fifo_ms", "paper_cats_ms"];
    for (n, m) in [("fcp", &r.metrics.fcp), ("tti", &r.metrics.tti), ("lcp", &r.metrics.lcp)] {
        t2.push(vec![
            n.to_string(),
            m.fifo_ms.to_string(),
            m.cats_ms.to_string(),
            or_empty(m.paper_fifo_ms),
            or_empty(m.paper_cats_ms),
        ]);
    }
    t2.push(vec![
        "plt".to_string(),
        r.plt.fifo_ms.to_string(),
        r.plt.cats_ms.to_string(),
        crate::table::fixed_csv(r.plt.paper_ms, 0),
        crate::table::fixed_csv(r.plt.paper_ms, 0),
    ]);
    crate::table::write_csv(
        &dir.join("table2.csv"),
        &crate::table::RunParams::command("reproduce cats"),
        &t2_header,
        &t2,
    )
    .map_err(|e| e.to_string())?;
    fig2(&dir.join("fig2_completion.svg"), r).map_err(|e| format!("fig2: {e}"))?;
    fig3(&dir.join("fig3_throughput.svg"), r).map_err(|e| format!("fig3: {e}"))?;
    Ok(())
}

/// Effective throughput of a group in Mbps: its bytes over the time from write to completion.
fn throughput(bytes: u64, ms: f64) -> f64 {
    if ms <= 0.0 {
        0.0
    } else {
        bytes as f64 * 8.0 / (ms / 1e3) / 1e6
    }
}

const FIFO_COLOR: RGBColor = PALETTE[0];
const CATS_COLOR: RGBColor = PALETTE[1];

/// One group of the bar charts: label, FIFO value, CATS value, the paper's (FIFO, CATS).
type Bar = (String, f64, f64, Option<(f64, f64)>);

/// Grouped bars, one pair per group in priority order, like the paper's Fig. 2: group `i`
/// spans x = i..i+1, FIFO's bar i+0.1..i+0.5 and CATS's i+0.5..i+0.9; the paper's values
/// are dots on the centre of the bar they belong to.
fn grouped_bars(path: &Path, title: &str, y_desc: &str, values: &[Bar]) -> ChartResult {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let root = chart::canvas(path, (900, 520))?;
    let ymax = values.iter().flat_map(|v| [v.1, v.2, v.3.map_or(0.0, |p| p.0.max(p.1))]).fold(0.0, f64::max) * 1.35;
    let n = values.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n, 0f64..ymax.max(1.0))?;
    chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc(y_desc).draw()?;
    // Group names under the centre of each pair of bars.
    let style = TextStyle::from(("sans-serif", 15)).pos(Pos::new(HPos::Center, VPos::Top));
    chart.draw_series(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| EmptyElement::at((i as f64 + 0.5, 0.0)) + Text::new(v.0.clone(), (0, 8), style.clone())),
    )?;
    let fifo_x = |i: usize| i as f64 + 0.3;
    let cats_x = |i: usize| i as f64 + 0.7;
    chart
        .draw_series(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| Rectangle::new([(i as f64 + 0.1, 0.0), (i as f64 + 0.5, v.1)], FIFO_COLOR.filled())),
        )?
        .label("FIFO (baseline TCP)")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], FIFO_COLOR.filled()));
    chart
        .draw_series(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| Rectangle::new([(i as f64 + 0.5, 0.0), (i as f64 + 0.9, v.2)], CATS_COLOR.filled())),
        )?
        .label("CATS")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], CATS_COLOR.filled()));
    if values.iter().any(|v| v.3.is_some()) {
        chart
            .draw_series(
                values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| v.3.map(|(pf, _)| Circle::new((fifo_x(i), pf), 4, BLACK.filled()))),
            )?
            .label("paper (on the bar it belongs to)")
            .legend(|(x, y)| Circle::new((x + 7, y), 4, BLACK.filled()));
        chart.draw_series(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.3.map(|(_, pc)| Circle::new((cats_x(i), pc), 4, BLACK.filled()))),
        )?;
    }
    chart::legend(&mut chart, SeriesLabelPosition::UpperMiddle)?;
    root.present()?;
    Ok(())
}

fn fig2(path: &Path, r: &CatsReproduction) -> ChartResult {
    let v: Vec<_> = r
        .groups
        .iter()
        .rev()
        .map(|g| (g.name.clone(), g.fifo_ms, g.cats_ms, g.paper_fifo_ms.zip(g.paper_cats_ms)))
        .collect();
    grouped_bars(path, "Fig. 2: priority group completion time", "completion (ms)", &v)
}

fn fig3(path: &Path, r: &CatsReproduction) -> ChartResult {
    let v: Vec<_> = r
        .groups
        .iter()
        .rev()
        .map(|g| {
            (
                g.name.clone(),
                throughput(g.bytes, g.fifo_ms - g.written_ms),
                throughput(g.bytes, g.cats_ms - g.written_ms),
                None,
            )
        })
        .collect();
    grouped_bars(path, "Fig. 3: effective throughput per group (bytes / (completion - write))", "Mbps", &v)
}
