//! `triage reproduce priority-bucket`: PriorityBucket §5 (Table 2, Fig. 3) — first render and
//! page load time of Bing and YouTube over two paths under LRF, SA-ECF and PriorityBucket —
//! and the reference page of ../shared/reference/quic over two paths.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use triage_core::cc::ControllerKind;
use triage_sim::experiments::priority_bucket::{
    self as pb, CaseResult, Options, PageRun, RefCase, RefRun, Scheduler, Setting, Stack,
    PAPER_BING_HIGH_LOSSY_REDUCTION_PCT,
};

use crate::chart;

/// Arguments of `triage reproduce priority-bucket`.
#[derive(clap::Args)]
#[command(after_long_help = HELP)]
pub struct PbArgs {
    /// Table 2 settings, comma-separated: low, low_lossy, high, high_lossy (default: all four).
    #[arg(long, value_delimiter = ',', value_parser = parse_setting)]
    settings: Vec<Setting>,
    /// Schedulers, comma-separated: lrf, sa_ecf, priority_bucket (default: these three), and
    /// priority_bucket_cats (beyond the paper: the CATS Conductor's fairness between a path's buckets).
    #[arg(long, value_delimiter = ',', value_parser = parse_scheduler)]
    schedulers: Vec<Scheduler>,
    /// Pages: builtin:bing, builtin:youtube (default: both), or any built-in page, HAR,
    /// DevTools log or transfer_sequence.json (objects take Chrome's HTTP/2 buckets by type).
    #[arg(long = "page")]
    pages: Vec<String>,
    /// Page loads per setting, scheduler and page, with loss seeds S, S+1, ... (the paper ran 10).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    runs: u32,
    /// First seed (S).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Congestion controller of every path (the authors' mp-quic ran OLIA, which triage does not have).
    #[arg(long, value_enum, default_value = "cubic")]
    cc: Cc,
    /// Stack settings: mp-quic (the authors': 1350-byte packets, initial window 32, no pacing) or
    /// quinn (triage's QUIC defaults: 1452 bytes, 10 packets, pacing).
    #[arg(long, value_enum, default_value = "mp-quic")]
    stack: StackArg,
    /// Queue of every path in packets; default: max(BDP / 1500 B, 10) (21, 10 and 167 packets).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    queue: Option<u64>,
    /// Path bandwidth estimate: `estimate` (delivery rate, seeded with the path's rate, §4.1) or
    /// `prior` (the path's rate for good, as the authors' code).
    #[arg(long, value_enum, default_value = "estimate")]
    bandwidth: Bandwidth,
    /// ECN-capable paths: RED queues that mark CE and senders that react to it.
    #[arg(long)]
    ecn: bool,
    /// Skip the reference page over two paths.
    #[arg(long)]
    no_reference_page: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Write runs.csv, results.csv, reference.csv and Fig. 3's four charts (SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

const HELP: &str = "\
Two multi-homed hosts over two disjoint paths (Fig. 2), each one duplex link with half its RTT
each way; Table 2: low = 25 Mbps / 10 ms on both, high = 10 Mbps / 10 ms and 40 Mbps / 50 ms, the
lossy settings add 2% random loss in both directions. The client requests the HTML once both
paths are validated and every other object when the HTML has arrived; priorities are Chrome's
HTTP/2 weights (HTML, CSS 255; JS 220; images 147). First render = the last HTML, CSS or JS
byte; page load = the last byte of the page; both from the HTML request, network time only.
Results are the mean and standard deviation over the runs (Fig. 3). The reference page (the
CATS groups P4..P0 of ../shared/reference/quic) then crosses A = 10 Mbps / 10 ms and B = 5 Mbps /
50 ms (one way, 1000-packet queues) with NewReno, CUBIC and BBR, beside A alone and B alone.";

#[derive(Clone, Copy, clap::ValueEnum)]
enum Cc {
    Newreno,
    Cubic,
    Bbr,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum StackArg {
    MpQuic,
    Quinn,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Bandwidth {
    Estimate,
    Prior,
}

fn parse_setting(s: &str) -> Result<Setting, String> {
    Setting::parse(s).ok_or_else(|| format!("unknown setting {s:?}: expected low, low_lossy, high or high_lossy"))
}

fn parse_scheduler(s: &str) -> Result<Scheduler, String> {
    Scheduler::parse(s).ok_or_else(|| {
        format!("unknown scheduler {s:?}: expected lrf, sa_ecf, priority_bucket or priority_bucket_cats")
    })
}

fn controller(cc: Cc) -> ControllerKind {
    match cc {
        Cc::Newreno => ControllerKind::NewReno,
        Cc::Cubic => ControllerKind::Cubic,
        Cc::Bbr => ControllerKind::Bbr,
    }
}

/// Runs the reproduction.
pub fn run(a: PbArgs) -> Result<(), String> {
    let settings = if a.settings.is_empty() { Setting::ALL.to_vec() } else { dedup(&a.settings) };
    let schedulers = if a.schedulers.is_empty() { Scheduler::ALL.to_vec() } else { dedup(&a.schedulers) };
    let names = if a.pages.is_empty() {
        vec!["builtin:bing".to_string(), "builtin:youtube".to_string()]
    } else {
        a.pages.clone()
    };
    let mut pages = Vec::new();
    for n in &names {
        let page = triage_sim::scenario::load_page(n, None, None).map_err(|e| format!("--page {n}: {e}"))?;
        pages.push(pb::with_chrome_buckets(&page));
    }
    a.seed.checked_add(u64::from(a.runs)).ok_or_else(|| format!("--seed {} + --runs {} overflows", a.seed, a.runs))?;
    let o = Options {
        cc: controller(a.cc),
        stack: match a.stack {
            StackArg::MpQuic => Stack::MpQuic,
            StackArg::Quinn => Stack::Quinn,
        },
        queue_packets: a.queue,
        estimate_bandwidth: matches!(a.bandwidth, Bandwidth::Estimate),
        ecn: a.ecn,
    };
    let reference_cases = if a.no_reference_page { 0 } else { RefCase::ALL.len() * 3 };
    let total = (settings.len() * schedulers.len() * pages.len()) as u64 * u64::from(a.runs) + reference_cases as u64;
    let bar = progress(total);
    let runs = pb::run_all(&settings, &schedulers, &pages, &o, a.runs as usize, a.seed, || bar.inc(1));
    let results = pb::summarize(&runs);
    let mut reference = Vec::new();
    if !a.no_reference_page {
        for cc in [ControllerKind::NewReno, ControllerKind::Cubic, ControllerKind::Bbr] {
            for case in RefCase::ALL {
                reference.push(pb::run_ref(case, &cc));
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    if let Some(dir) = &a.out {
        write_out(dir, &runs, &results, &reference).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    if a.json {
        let v = serde_json::json!({ "options": o, "results": results, "reference_page": reference });
        outln!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    } else {
        out!("{}", table(&results, &o, a.runs, a.seed));
        if !reference.is_empty() {
            out!("\n{}", reference_table(&reference));
        }
    }
    Ok(())
}

fn dedup<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for x in v {
        if !out.contains(x) {
            out.push(*x);
        }
    }
    out
}

fn progress(total: u64) -> ProgressBar {
    crate::counting_bar(total, 200, "page load", "eta {eta}")
}

/// PriorityBucket's reduction against `base` in percent (positive: PriorityBucket is faster).
fn reduction(pb: f64, base: f64) -> f64 {
    if base > 0.0 {
        (base - pb) / base * 100.0
    } else {
        0.0
    }
}

fn find<'a>(rows: &'a [CaseResult], r: &CaseResult, s: Scheduler) -> Option<&'a CaseResult> {
    rows.iter().find(|x| x.setting == r.setting && x.page == r.page && x.scheduler == s)
}

fn table(rows: &[CaseResult], o: &Options, runs: u32, seed: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "PriorityBucket §5 (Table 2, Fig. 3): {runs} page loads per row (seeds {seed}..{}), {} on every path, {} stack, \
         bandwidth {}; times in ms from the HTML request, mean ± standard deviation",
        seed + u64::from(runs) - 1,
        o.cc.name(),
        o.stack.name(),
        if o.estimate_bandwidth { "estimated" } else { "prior" },
    );
    let _ = writeln!(
        s,
        "{:<11} {:<8} {:<21} {:>20} {:>20} {:>16} {:>16} {:>15}",
        "setting",
        "page",
        "scheduler",
        "first render (ms)",
        "page load (ms)",
        "PB vs it: FR %",
        "PB vs it: PLT %",
        "1st image (ms)"
    );
    for r in rows {
        let pbr = find(rows, r, Scheduler::PriorityBucket);
        let (fr, plt) = match pbr {
            Some(p) if r.scheduler != Scheduler::PriorityBucket => (
                format!("{:+.1}", reduction(p.first_render_ms_mean, r.first_render_ms_mean)),
                format!("{:+.1}", reduction(p.plt_ms_mean, r.plt_ms_mean)),
            ),
            _ => (String::new(), String::new()),
        };
        let _ = writeln!(
            s,
            "{:<11} {:<8} {:<21} {:>20} {:>20} {:>16} {:>16} {:>15.1}",
            r.setting.name(),
            r.page,
            r.scheduler.name(),
            format!("{:.1} ± {:.1}", r.first_render_ms_mean, r.first_render_ms_std),
            format!("{:.1} ± {:.1}", r.plt_ms_mean, r.plt_ms_std),
            fr,
            plt,
            r.first_image_ms_mean
        );
    }
    let (pf, pp) = PAPER_BING_HIGH_LOSSY_REDUCTION_PCT;
    let _ = writeln!(
        s,
        "PB vs it: PriorityBucket's reduction of the mean against that scheduler (positive = PriorityBucket faster). \
         Paper: on bing, high_lossy, up to {pf:.0}% (first render) and {pp:.0}% (page load). \
         1st image: when the first image (the least urgent bucket) arrived, mean."
    );
    s
}

fn reference_table(rows: &[RefRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "The reference page over two paths, A = 10 Mbps / 10 ms and B = 5 Mbps / 50 ms one way (1000-packet queues): \
         completion of each group (ms from the server's write), bytes the server sent per path"
    );
    let names: Vec<String> =
        rows.first().map(|r| r.groups_ms.iter().map(|g| g.0.clone()).collect()).unwrap_or_default();
    let _ = write!(s, "{:<8} {:<16}", "cc", "case");
    for n in &names {
        let _ = write!(s, " {:>9}", format!("{n} (ms)"));
    }
    let _ = writeln!(s, " {:>12} {:>12}", "A (bytes)", "B (bytes)");
    for r in rows {
        let _ = write!(s, "{:<8} {:<16}", r.cc, r.case);
        for (_, t) in &r.groups_ms {
            let _ = write!(s, " {:>9.1}", t);
        }
        let bytes = |i: usize| r.server_bytes_per_path.get(i).copied().unwrap_or(0);
        // A alone carries everything on path A, B alone on path B.
        let (a, b) = if r.case == "B alone" { (0, bytes(0)) } else { (bytes(0), bytes(1)) };
        let _ = writeln!(s, " {a:>12} {b:>12}");
    }
    s
}

/// A per-path value as a CSV cell: empty for a path the run did not have.
fn cell(v: &[u64], i: usize) -> String {
    v.get(i).map_or(String::new(), |x| x.to_string())
}

fn write_out(
    dir: &Path,
    runs: &[PageRun],
    rows: &[CaseResult],
    reference: &[RefRun],
) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let mut csv: Vec<Vec<String>> = Vec::new();
    let csv_header = [
        "setting",
        "page",
        "scheduler",
        "seed",
        "first_render_ms",
        "plt_ms",
        "first_image_ms",
        "complete",
        "bytes_path0",
        "bytes_path1",
        "ptos_path0",
        "ptos_path1",
    ];
    for r in runs {
        csv.push(vec![
            r.setting.name().to_string(),
            r.page.to_string(),
            r.scheduler.name().to_string(),
            r.seed.to_string(),
            format!("{:.3}", r.first_render_ms),
            format!("{:.3}", r.plt_ms),
            (r.first_image_ms.map_or(String::new(), |t| format!("{t:.3}"))).to_string(),
            r.complete.to_string(),
            (cell(&r.server_bytes_per_path, 0)).to_string(),
            (cell(&r.server_bytes_per_path, 1)).to_string(),
            (cell(&r.server_ptos, 0)).to_string(),
            (cell(&r.server_ptos, 1)).to_string(),
        ]);
    }
    crate::table::write_csv(
        &dir.join("runs.csv"),
        &crate::table::RunParams::command("reproduce priority-bucket"),
        &csv_header,
        &csv,
    )?;
    let mut csv: Vec<Vec<String>> = Vec::new();
    let csv_header = [
        "setting",
        "page",
        "scheduler",
        "runs",
        "first_render_ms_mean",
        "first_render_ms_std",
        "plt_ms_mean",
        "plt_ms_std",
        "first_image_ms_mean",
    ];
    for r in rows {
        csv.push(vec![
            r.setting.name().to_string(),
            r.page.to_string(),
            r.scheduler.name().to_string(),
            r.runs.to_string(),
            format!("{:.3}", r.first_render_ms_mean),
            format!("{:.3}", r.first_render_ms_std),
            format!("{:.3}", r.plt_ms_mean),
            format!("{:.3}", r.plt_ms_std),
            format!("{:.3}", r.first_image_ms_mean),
        ]);
    }
    crate::table::write_csv(
        &dir.join("results.csv"),
        &crate::table::RunParams::command("reproduce priority-bucket"),
        &csv_header,
        &csv,
    )?;
    if !reference.is_empty() {
        let mut csv: Vec<Vec<String>> = Vec::new();
        let csv_header = ["cc", "case", "group", "completed_ms", "bytes_path0", "bytes_path1"];
        for r in reference {
            for (g, t) in &r.groups_ms {
                let bytes = &r.server_bytes_per_path;
                csv.push(vec![
                    r.cc.to_string(),
                    r.case.to_string(),
                    g.to_string(),
                    format!("{:.3}", t),
                    (cell(bytes, 0)).to_string(),
                    (cell(bytes, 1)).to_string(),
                ]);
            }
        }
        crate::table::write_csv(
            &dir.join("reference.csv"),
            &crate::table::RunParams::command("reproduce priority-bucket"),
            &csv_header,
            &csv,
        )?;
    }
    // Fig. 3: per page, first render and page load; settings on the x axis, one bar per
    // scheduler with its standard deviation.
    let mut pages: Vec<&str> = Vec::new();
    for r in rows {
        if !pages.contains(&r.page.as_str()) {
            pages.push(&r.page);
        }
    }
    for page in pages {
        let mine: Vec<&CaseResult> = rows.iter().filter(|r| r.page == page).collect();
        let mut settings: Vec<Setting> = Vec::new();
        let mut scheds: Vec<Scheduler> = Vec::new();
        for r in &mine {
            if !settings.contains(&r.setting) {
                settings.push(r.setting);
            }
            if !scheds.contains(&r.scheduler) {
                scheds.push(r.scheduler);
            }
        }
        let cats: Vec<String> = settings.iter().map(|s| s.name().to_string()).collect();
        for (metric, label, file) in [
            ("frt", "first render time (ms)", format!("first_render_{page}.svg")),
            ("plt", "page load time (ms)", format!("page_load_{page}.svg")),
        ] {
            let series: Vec<(String, Vec<(f64, f64)>)> = scheds
                .iter()
                .map(|&sc| {
                    let vals = settings
                        .iter()
                        .map(|&st| {
                            mine.iter().find(|r| r.setting == st && r.scheduler == sc).map_or((0.0, 0.0), |r| {
                                if metric == "frt" {
                                    (r.first_render_ms_mean, r.first_render_ms_std)
                                } else {
                                    (r.plt_ms_mean, r.plt_ms_std)
                                }
                            })
                        })
                        .collect();
                    (sc.name().to_string(), vals)
                })
                .collect();
            let title = format!("{page}: {label}, mean and standard deviation (Fig. 3)");
            chart::bars_with_error(&dir.join(file.replace(['/', ':'], "_")), &title, label, &cats, &series)?;
        }
    }
    Ok(())
}
