//! `triage reproduce partial`: the thesis's partially reliable transport (§5.9, §6). Page
//! loads on its two networks under the six policies, with the thesis's reductions beside ours.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use triage_sim::experiments::partial::{
    self, PartialNetwork, PartialOptions, PartialPage, PartialRow, PartialRun, POLICIES,
};
use triage_web::ReliabilityPolicy;

use crate::chart;

/// Arguments of `triage reproduce partial`.
#[derive(clap::Args)]
#[command(after_long_help = HELP)]
pub struct PartialArgs {
    /// Networks, comma-separated: `12Mbps` (no loss), `9Mbps+5%` (5% random loss on the
    /// downlink). Default: both.
    #[arg(long, value_delimiter = ',', value_parser = parse_network)]
    networks: Vec<PartialNetwork>,
    /// Policies, comma-separated (default: all six): reliable, fonts, ads, third_party,
    /// fonts_ads, fonts_third_party. Reductions are against `reliable`, which always runs.
    #[arg(long, value_delimiter = ',', value_parser = parse_policy)]
    policies: Vec<ReliabilityPolicy>,
    /// Pages: `builtin:news` (the six versions of the thesis's news page, cycled over the runs),
    /// any built-in page, or a HAR / DevTools log / transfer_sequence.json file. Repeat for
    /// several pages. Default: builtin:news.
    #[arg(long = "page")]
    pages: Vec<String>,
    /// Page loads per network, policy and page, with seeds S, S+1, ...
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    runs: u32,
    /// First seed (S) of the loss process.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How long the client waits after an unreliable object's response ended (HEADERS and FIN,
    /// sent after its last chunk) before it gives the object up: `pr3` is the reproduction
    /// spec's max(2·SRTT, 10 ms) since the last chunk; a duration (`0ms`, the default) waits
    /// that long. The link keeps order, so nothing more can come after the FIN.
    #[arg(long, default_value = "0ms", value_parser = parse_idle)]
    end_idle: Idle,
    /// Whether the client needs an object's metadata datagram (sent first, with its size and
    /// type) to use its chunks: `needed` (the default; the thesis's client builds its record
    /// of a transfer from the metadata datagram, §5.8.2, so a lost one loses the object) or
    /// `optional` (chunks are placed by object ID and offset whatever came first).
    #[arg(long, value_enum, default_value_t = Metadata::Needed)]
    metadata: Metadata,
    /// The server's datagram send queue in datagrams (quiche's `dgram_send` refuses a
    /// datagram once it is full; the quiche-server example sets 1000, the default), or
    /// `unbounded`.
    #[arg(long, default_value = "1000", value_parser = parse_queue)]
    dgram_queue: Queue,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write runs.csv (one row per page load), objects.csv (per object: fetch time, bytes lost),
    /// results.csv and reduction charts (SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

const HELP: &str = "\
The network is one link with a 1 ms base RTT; the downlink is 12 Mbps, or 9 Mbps with 5% random
loss. The client requests one object at a time in page order (the thesis's client). Under a
policy the objects it calls non-essential travel as HTTP/3 DATAGRAM chunks (never resent); the
rest, and always the root and render-blocking objects, on streams. Fetch time of a page load =
the sum of its objects' fetch times (request to done). The table gives per row the mean and
90th percentile, the reduction against all-reliable over the same seeds (mean with a 95% t
interval, p90 with a 95% bootstrap interval) and the data loss (bytes lost / bytes sent as
datagrams), split into what the network lost, what a lost metadata datagram made useless,
what came after the client gave an object up and what the server's full datagram queue
dropped, with the thesis's reductions on 9 Mbps + 5% (Figs. 16 and 18).";

#[derive(Clone, Copy, Debug)]
enum Idle {
    Pr3,
    Ns(u64),
}

fn parse_idle(s: &str) -> Result<Idle, String> {
    if s.eq_ignore_ascii_case("pr3") {
        return Ok(Idle::Pr3);
    }
    s.parse::<triage_sim::units::Duration>()
        .map(|d: triage_sim::units::Duration| Idle::Ns(d.0))
        .map_err(|e| format!("expected `pr3` or a duration such as `0ms`: {e}"))
}

/// `--metadata`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Metadata {
    /// A lost metadata datagram loses its object.
    Needed,
    /// Chunks are used without it.
    Optional,
}

/// `--dgram-queue`: datagrams, or `None` for unbounded.
#[derive(Clone, Copy, Debug)]
struct Queue(Option<u32>);

fn parse_queue(s: &str) -> Result<Queue, String> {
    if s == "unbounded" {
        return Ok(Queue(None));
    }
    match s.parse::<u32>() {
        Ok(n) if n > 0 => Ok(Queue(Some(n))),
        _ => Err(format!("expected a number of datagrams (1 or more) or `unbounded`, not {s:?}")),
    }
}

fn parse_network(s: &str) -> Result<PartialNetwork, String> {
    PartialNetwork::parse(s).ok_or_else(|| format!("unknown network {s:?}: expected 12Mbps or 9Mbps+5%"))
}

fn parse_policy(s: &str) -> Result<ReliabilityPolicy, String> {
    let p = ReliabilityPolicy::parse(s).map_err(|e| e.to_string())?;
    if !POLICIES.contains(&p) {
        return Err(format!(
            "policy {s:?} is not one of the thesis's: reliable, fonts, ads, third_party, fonts_ads, fonts_third_party"
        ));
    }
    Ok(p)
}

/// Runs the reproduction.
pub fn run(a: PartialArgs) -> Result<(), String> {
    let networks = if a.networks.is_empty() { PartialNetwork::ALL.to_vec() } else { dedup(&a.networks) };
    let mut policies = vec![ReliabilityPolicy::Reliable];
    for p in if a.policies.is_empty() { POLICIES.to_vec() } else { a.policies.clone() } {
        if !policies.contains(&p) {
            policies.push(p);
        }
    }
    let names = if a.pages.is_empty() { vec!["builtin:news".to_string()] } else { a.pages.clone() };
    let mut pages = Vec::new();
    for n in &names {
        pages.push(load(n).map_err(|e| format!("--page {n}: {e}"))?);
    }
    a.seed.checked_add(u64::from(a.runs)).ok_or_else(|| format!("--seed {} + --runs {} overflows", a.seed, a.runs))?;
    let opts = PartialOptions {
        end_idle_ns: match a.end_idle {
            Idle::Pr3 => None,
            Idle::Ns(n) => Some(n),
        },
        needs_metadata: a.metadata == Metadata::Needed,
        send_queue_len: a.dgram_queue.0,
    };
    let total = (networks.len() * policies.len() * pages.len()) as u64 * u64::from(a.runs);
    let bar = progress(total);
    let runs = partial::run_all(&networks, &policies, &pages, a.runs as usize, a.seed, &opts, || bar.inc(1));
    bar.finish_and_clear();
    let rows = partial::summarize(&runs);
    if let Some(dir) = &a.out {
        write_out(dir, &runs, &rows).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    if a.json {
        let v = serde_json::json!({ "results": rows });
        outln!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    } else {
        out!("{}", table(&rows, a.runs, a.seed));
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

/// `builtin:news` is the six versions; anything else one page.
fn load(name: &str) -> Result<PartialPage, String> {
    if name == "builtin:news" {
        let versions = triage_web::news_versions::news_versions();
        return Ok(PartialPage { name: "news".into(), versions });
    }
    let page = triage_sim::scenario::load_page(name, None, None)?;
    let short = name.strip_prefix("builtin:").unwrap_or(name);
    let short = Path::new(short).file_stem().map_or(short.to_string(), |f| f.to_string_lossy().into_owned());
    Ok(PartialPage { name: short, versions: vec![page] })
}

fn progress(total: u64) -> ProgressBar {
    crate::counting_bar(total, 40, "page load", "eta {eta}")
}

fn thesis(policy: &str) -> Option<(f64, f64)> {
    partial::THESIS_REDUCTIONS.iter().find(|t| t.0 == policy).map(|t| (t.1, t.2))
}

fn table(rows: &[PartialRow], runs: u32, seed: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Partially reliable transport (thesis §5.9): {runs} page loads per row (seeds {seed}..{}), fetch time = sum of object fetch times",
        seed + u64::from(runs) - 1
    );
    let _ = writeln!(
        s,
        "{:<9} {:<18} {:<18} {:>10} {:>10} {:>22} {:>22} {:>9} {:>9} {:>27} {:>14}",
        "network",
        "page",
        "policy",
        "mean_ms",
        "p90_ms",
        "reduction mean [95%]",
        "reduction p90 [95%]",
        "dgram_MB",
        "loss_%",
        "net/meta/late/queue %",
        "thesis mean/p90"
    );
    for r in rows {
        // The thesis's figures are for its news page on 9 Mbps + 5%.
        let th = match (r.network, r.page.as_str(), thesis(r.policy)) {
            ("9Mbps+5%", "news", Some((m, p))) => format!("{m:.1}/{p:.1}"),
            _ => String::new(),
        };
        let red = |x: f64, ci: [f64; 2]| format!("{x:.1} [{:.0},{:.0}]", ci[0], ci[1]);
        let _ = writeln!(
            s,
            "{:<9} {:<18} {:<18} {:>10.1} {:>10.1} {:>22} {:>22} {:>9.3} {:>9.2} {:>27} {:>14}",
            r.network,
            r.page,
            r.policy,
            r.mean_fetch_ms,
            r.p90_fetch_ms,
            red(r.reduction_mean_ms, r.reduction_mean_ci95_ms),
            red(r.reduction_p90_ms, r.reduction_p90_ci95_ms),
            r.unreliable_bytes / 1e6,
            r.data_loss_pct,
            format!(
                "{:.2}/{:.2}/{:.2}/{:.2}",
                r.data_loss_network_pct, r.data_loss_metadata_pct, r.data_loss_late_pct, r.data_loss_local_pct
            ),
            th
        );
    }
    s
}

fn write_out(dir: &Path, runs: &[PartialRun], rows: &[PartialRow]) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let mut csv: Vec<Vec<String>> = Vec::new();
    let csv_header = [
        "network",
        "policy",
        "page",
        "version",
        "seed",
        "fetch_ms",
        "load_ms",
        "objects",
        "objects_done",
        "unreliable_objects",
        "partial_objects",
        "unreliable_bytes",
        "lost_bytes",
        "lost_network_bytes",
        "lost_metadata_bytes",
        "lost_late_bytes",
        "lost_queue_bytes",
        "page_bytes",
    ];
    for r in runs {
        csv.push(vec![
            r.network.to_string(),
            r.policy.to_string(),
            r.page.to_string(),
            r.version.to_string(),
            r.seed.to_string(),
            format!("{:.3}", r.fetch_ms),
            format!("{:.3}", r.load_ms),
            r.objects.to_string(),
            r.objects_done.to_string(),
            r.unreliable_objects.to_string(),
            r.partial_objects.to_string(),
            r.unreliable_bytes.to_string(),
            r.lost_bytes.to_string(),
            r.lost_causes.network_bytes.to_string(),
            r.lost_causes.metadata_bytes.to_string(),
            r.lost_causes.late_bytes.to_string(),
            r.lost_causes.local_bytes.to_string(),
            r.page_bytes.to_string(),
        ]);
    }
    crate::table::write_csv(
        &dir.join("runs.csv"),
        &crate::table::RunParams::command("reproduce partial"),
        &csv_header,
        &csv,
    )?;
    let mut csv: Vec<Vec<String>> = Vec::new();
    let csv_header = [
        "network",
        "policy",
        "page",
        "version",
        "seed",
        "object",
        "type",
        "bytes",
        "unreliable",
        "fetch_ms",
        "complete",
        "lost_bytes",
        "lost_network_bytes",
        "lost_metadata_bytes",
        "lost_late_bytes",
        "lost_queue_bytes",
    ];
    for r in runs {
        for o in &r.object_fetches {
            csv.push(vec![
                r.network.to_string(),
                r.policy.to_string(),
                r.page.to_string(),
                r.version.to_string(),
                r.seed.to_string(),
                o.id.to_string(),
                o.kind.name().to_string(),
                o.bytes.to_string(),
                o.unreliable.to_string(),
                format!("{:.3}", o.fetch_ms),
                o.complete.to_string(),
                o.lost_bytes.to_string(),
                o.lost_causes.network_bytes.to_string(),
                o.lost_causes.metadata_bytes.to_string(),
                o.lost_causes.late_bytes.to_string(),
                o.lost_causes.local_bytes.to_string(),
            ]);
        }
    }
    crate::table::write_csv(
        &dir.join("objects.csv"),
        &crate::table::RunParams::command("reproduce partial"),
        &csv_header,
        &csv,
    )?;
    let mut csv: Vec<Vec<String>> = Vec::new();
    let csv_header = [
        "network",
        "page",
        "policy",
        "runs",
        "mean_fetch_ms",
        "p90_fetch_ms",
        "reduction_mean_ms",
        "reduction_mean_ci95_low_ms",
        "reduction_mean_ci95_high_ms",
        "reduction_p90_ms",
        "reduction_p90_ci95_low_ms",
        "reduction_p90_ci95_high_ms",
        "data_loss_pct",
        "data_loss_network_pct",
        "data_loss_metadata_pct",
        "data_loss_late_pct",
        "data_loss_local_pct",
        "unreliable_bytes",
        "partial_objects",
    ];
    for r in rows {
        csv.push(vec![
            r.network.to_string(),
            r.page.to_string(),
            r.policy.to_string(),
            r.runs.to_string(),
            format!("{:.3}", r.mean_fetch_ms),
            format!("{:.3}", r.p90_fetch_ms),
            format!("{:.3}", r.reduction_mean_ms),
            format!("{:.3}", r.reduction_mean_ci95_ms[0]),
            format!("{:.3}", r.reduction_mean_ci95_ms[1]),
            format!("{:.3}", r.reduction_p90_ms),
            format!("{:.3}", r.reduction_p90_ci95_ms[0]),
            format!("{:.3}", r.reduction_p90_ci95_ms[1]),
            format!("{:.3}", r.data_loss_pct),
            format!("{:.3}", r.data_loss_network_pct),
            format!("{:.3}", r.data_loss_metadata_pct),
            format!("{:.3}", r.data_loss_late_pct),
            format!("{:.3}", r.data_loss_local_pct),
            format!("{:.0}", r.unreliable_bytes),
            format!("{:.2}", r.partial_objects),
        ]);
    }
    crate::table::write_csv(
        &dir.join("results.csv"),
        &crate::table::RunParams::command("reproduce partial"),
        &csv_header,
        &csv,
    )?;
    // Figs. 16-18: reductions per policy, ours beside the thesis's, per network and page.
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.network, r.page.as_str())) {
            keys.push((r.network, r.page.as_str()));
        }
    }
    for (net, page) in keys {
        let mine: Vec<&PartialRow> =
            rows.iter().filter(|r| r.network == net && r.page == page && r.policy != "reliable").collect();
        if mine.is_empty() {
            continue;
        }
        let cats: Vec<String> = mine.iter().map(|r| r.policy.to_string()).collect();
        let mut series = vec![
            ("ours, mean".to_string(), mine.iter().map(|r| r.reduction_mean_ms.max(0.0)).collect::<Vec<_>>()),
            ("ours, p90".to_string(), mine.iter().map(|r| r.reduction_p90_ms.max(0.0)).collect()),
        ];
        if net == "9Mbps+5%" && page == "news" {
            series.push(("thesis, mean".into(), mine.iter().map(|r| thesis(r.policy).map_or(0.0, |t| t.0)).collect()));
            series.push(("thesis, p90".into(), mine.iter().map(|r| thesis(r.policy).map_or(0.0, |t| t.1)).collect()));
        }
        let negative = mine.iter().any(|r| r.reduction_mean_ms < 0.0 || r.reduction_p90_ms < 0.0);
        let title = format!(
            "Fetch-time reduction against all-reliable, {page}, {net}{}",
            if negative { " (negative reductions drawn as 0)" } else { "" }
        );
        let file = format!("reduction_{}_{}.svg", page.replace(['/', '.'], "_"), net.replace(['+', '%'], ""));
        chart::bars(&dir.join(file), &title, "reduction (ms)", &cats, &series)?;
    }
    Ok(())
}
