//! `triage`: run scenarios in the simulator, benchmark it.

// First, so that `out!` and `outln!` are in scope in every module below.
#[macro_use]
mod stdout;
mod bench;
mod chart;
mod output;
mod page;
mod report;
mod reproduce;
mod reproduce_eecn;
mod reproduce_partial;
mod reproduce_pb;
mod reproduce_quic;
mod sweep;
mod table;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use triage_sim::builtin;
use triage_sim::report::RunReport;
use triage_sim::scenario::Scenario;

/// Transport that delivers what matters first: a deterministic packet-level simulator of
/// TCP (NewReno, BBR) and the schemes built on it.
#[derive(Parser)]
#[command(name = "triage", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file (or a built-in scenario by name) and report per message and flow.
    Run(RunArgs),
    /// Run a plan: scenarios x a grid of --set overrides x seeds, on every core, with tidy
    /// results (one row per run and metric) and a summary per point.
    Sweep(sweep::SweepArgs),
    /// List the built-in scenarios.
    Scenarios,
    /// List the network profiles of `[topology] kind = "profile"` with their numbers.
    Profiles {
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure simulator speed (packet-hops per wall-clock second) on a long bulk transfer.
    Bench(bench::BenchArgs),
    /// Reproduce a seed paper's experiment, with the paper's numbers beside ours.
    Reproduce(reproduce::ReproduceArgs),
    /// Import and analyze real pages (HAR, DevTools logs)
    Page(page::PageArgs),
    /// Write the self-contained HTML report (tables, charts, page-load waterfalls) of a
    /// directory that `triage run --out DIR` wrote.
    Report(ReportArgs),
    /// Print a shell completion script: `triage completions bash > ~/.local/share/bash-completion/completions/triage`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

const EXIT_CODES: &str = "Exit status: 0 success; 1 invalid input or a failed run; 2 usage error; 3 the run \
ended with flows not complete (results are still printed and written).";

pub use triage_sim::document::SCHEMA_VERSION;

#[derive(clap::Args)]
struct ReportArgs {
    /// A directory written by `triage run --out DIR` (it reads run.json and objects.csv).
    dir: PathBuf,
    /// Where to write the report (default DIR/report.html).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Set when a run stopped with flows not complete: the exit status is then 3.
static INCOMPLETE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[derive(clap::Args)]
struct RunArgs {
    /// Scenario file (TOML, or JSON with the same fields when it ends in `.json`), `-` to read
    /// it from standard input, or the name of a built-in scenario (see `triage scenarios`).
    scenario: String,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Write CSV files (messages, flows, links, pages, objects, time series), run.json and
    /// SVG charts (cwnd, RTT, pacing rate, queue, page metrics) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write a self-contained HTML report (tables, charts, a waterfall per page load) to
    /// this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Set any scenario field by its path, as the file would (repeatable):
    /// `--set topology.bottleneck.rate=5Mbps --set transport.cc=cubic --set flows[0].start=1s`.
    /// The value is TOML (`3`, `true`, `{ kind = "none" }`) or else a string.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Write one qlog file (qlog 0.3 JSON-SEQ, opens in qvis) per QUIC-mode connection end
    /// into this directory: VARIANT_FLOW_client.sqlog / _server.sqlog.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
    /// Write a packet capture into this directory (DIR/VARIANT with variants): per pair of
    /// nodes A-B.pcapng with one interface per one-way link, and A-B.drops.pcapng with the
    /// packets dropped or lost there (see the README's "Packet capture").
    #[arg(long, value_name = "DIR")]
    pcap: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => run(a),
        Command::Scenarios => {
            for (name, text) in builtin::SCENARIOS {
                let desc = Scenario::parse(text, name).ok().and_then(|s| s.description).unwrap_or_default();
                outln!("{name:<20} {desc}");
            }
            Ok(())
        }
        Command::Profiles { json } => profiles(json),
        Command::Sweep(a) => sweep::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Page(a) => page::run(a),
        Command::Report(a) => report::from_dir(&a.dir, a.out.as_deref()).map(|p| outln!("wrote {}", p.display())),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "triage", &mut buf);
            out!("{}", String::from_utf8_lossy(&buf));
            Ok(())
        }
    };
    match result {
        Ok(()) if INCOMPLETE.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::from(3),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `triage profiles`: each profile's downlink, uplink, RTT and default bottleneck queue.
/// The topology is the dumbbell s0 - r1 - r2 - c0: the bottleneck r1 -> r2 carries the
/// downlink (server to client), r2 -> r1 the uplink, each with half the RTT; access links
/// are 1 Gbps with no delay.
fn profiles(json: bool) -> Result<(), String> {
    use triage_sim::scenario::{profile_queue_packets, PROFILES};
    if json {
        let rows: Vec<serde_json::Value> = PROFILES
            .iter()
            .map(|&(name, down, up, rtt_ms, source)| {
                serde_json::json!({
                    "name": name,
                    "downlink_bps": down,
                    "uplink_bps": up,
                    "rtt_ms": rtt_ms,
                    "queue_packets": profile_queue_packets(down, rtt_ms),
                    "source": source,
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
        return Ok(());
    }
    outln!(
        "{:<29} {:>14} {:>12} {:>7} {:>13}  source",
        "profile",
        "downlink Mbps",
        "uplink Mbps",
        "RTT ms",
        "queue packets"
    );
    for &(name, down, up, rtt_ms, source) in PROFILES {
        outln!(
            "{name:<29} {:>14} {:>12} {rtt_ms:>7} {:>13}  {source}",
            format!("{:.4}", down as f64 / 1e6).trim_end_matches('0').trim_end_matches('.'),
            format!("{:.4}", up as f64 / 1e6).trim_end_matches('0').trim_end_matches('.'),
            profile_queue_packets(down, rtt_ms)
        );
    }
    outln!("hosts: server s0, client c0; routers r1, r2 (bottleneck r1->r2 = downlink, half the RTT each way)");
    Ok(())
}

/// Writes the qlog traces of a run, one file per QUIC-mode connection end.
fn write_qlogs(dir: &std::path::Path, variant: Option<&str>, sim: &triage_sim::Simulator) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--qlog {}: {e}", dir.display()))?;
    let safe =
        |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect::<String>();
    for (flow, server, trace) in sim.qlog_traces() {
        let side = if server { "server" } else { "client" };
        let name = match variant {
            Some(v) => format!("{}_{}_{side}.sqlog", safe(v), safe(flow)),
            None => format!("{}_{side}.sqlog", safe(flow)),
        };
        let path = dir.join(name);
        let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        triage_sim::qlog::write(trace, std::io::BufWriter::new(file))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Loads a scenario from a file or the built-in set: the scenario, its name for messages,
/// its directory and its text.
fn load(name: &str) -> Result<(Scenario, String, Option<PathBuf>, String), String> {
    load_with(name, &[])
}

/// Loads a scenario: a TOML file, a JSON file (`.json`, the same fields), `-` for standard
/// input (TOML, or JSON when it starts with `{`), or a built-in scenario by name; then applies
/// `--set PATH=VALUE` overrides before parsing, so that they get the file's checks. Errors
/// name the source and, when there are overrides, list them.
/// Returns what [`load`] does, the text being the one after the overrides.
fn load_with(name: &str, sets: &[String]) -> Result<(Scenario, String, Option<PathBuf>, String), String> {
    use triage_sim::scenario_override::{apply, json_to_toml, parse_override};
    let overrides = sets.iter().map(|s| parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let path = PathBuf::from(name);
    let (text, mut file, dir) = if name == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|e| format!("standard input: {e}"))?;
        (text, "standard input".to_string(), None)
    } else if path.exists() {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
        (text, name.to_string(), path.parent().map(|p| p.to_path_buf()))
    } else if let Some((n, text)) = builtin::find(name) {
        (text.to_string(), format!("built-in scenario {n}"), None)
    } else {
        return Err(format!(
            "{name}: no such file, and no built-in scenario of that name (built-in: {})",
            builtin::SCENARIOS.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        ));
    };
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || (name == "-" && text.trim_start().starts_with('{'));
    let text = if json { json_to_toml(&text).map_err(|m| format!("{file}: {m}"))? } else { text };
    let text = apply(&text, &overrides).map_err(|m| format!("{file}: {m}"))?;
    if !overrides.is_empty() {
        let shown: Vec<String> = sets.iter().map(|s| format!("--set {s}")).collect();
        file = format!("{file} (with {})", shown.join(" "));
    }
    let s = Scenario::parse(&text, &file).map_err(|e| e.to_string())?;
    Ok((s, file, dir, text))
}

fn run(a: RunArgs) -> Result<(), String> {
    let (mut scenario, file, dir, text) = load_with(&a.scenario, &a.set)?;
    if let Some(seed) = a.seed {
        scenario.seed = seed;
    }
    let outputs =
        RunOutputs { out: a.out.as_deref(), html: a.html.as_deref(), qlog: a.qlog.as_deref(), pcap: a.pcap.as_deref() };
    let (doc, reports) = run_loaded(&scenario, &file, dir.as_deref(), &text, &outputs)?;
    let has_variants = !scenario.variants.is_empty();
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
    } else {
        for (name, report) in &reports {
            if has_variants {
                outln!("=== variant {name} ===");
            }
            output::print_table(report);
            outln!();
        }
        if has_variants {
            output::print_comparison(&reports);
        }
    }
    let mut incomplete = Vec::new();
    for (name, report) in &reports {
        for f in report.flows.iter().filter(|f| f.completed_ms.is_none()) {
            incomplete.push(if has_variants { format!("{}/{}", name, f.name) } else { f.name.clone() });
        }
    }
    if !incomplete.is_empty() {
        // The results are out; the status says the run did not finish (3).
        // Named up to ten; a run of hundreds of long flows gets a count, not a wall of names.
        const NAMED: usize = 10;
        let more = incomplete.len().saturating_sub(NAMED);
        let names = incomplete[..incomplete.len().min(NAMED)].join(", ");
        if more == 0 {
            eprintln!("error: flows not complete when the run stopped: {names}");
        } else {
            eprintln!(
                "error: flows not complete when the run stopped: {names} and {more} more ({} in all)",
                incomplete.len()
            );
        }
        INCOMPLETE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}

/// What a run writes besides its printed results.
pub(crate) struct RunOutputs<'a> {
    /// CSV files, run.json and charts (`--out DIR`).
    pub out: Option<&'a std::path::Path>,
    /// The HTML report (`--html FILE`).
    pub html: Option<&'a std::path::Path>,
    /// qlog files (`--qlog DIR`).
    pub qlog: Option<&'a std::path::Path>,
    /// Packet captures (`--pcap DIR`).
    pub pcap: Option<&'a std::path::Path>,
}

/// Runs every variant of a loaded scenario with progress bars, writes `o`'s outputs, and
/// returns the run's JSON document and each variant's report (variant name, empty without
/// variants). `triage run` and `triage page simulate` share it.
pub(crate) fn run_loaded(
    scenario: &Scenario,
    file: &str,
    dir: Option<&std::path::Path>,
    text: &str,
    o: &RunOutputs,
) -> Result<(serde_json::Value, Vec<(String, RunReport)>), String> {
    let variants = scenario.build_variants(file, dir).map_err(|e| e.to_string())?;
    let has_variants = !scenario.variants.is_empty();
    // Said once, though every variant loads the same pages.
    let mut said = std::collections::BTreeSet::new();
    for w in variants.iter().flat_map(|(_, b)| &b.warnings) {
        if said.insert(w) {
            eprintln!("warning: {file}: {w}");
        }
    }
    let mut out = match o.out {
        Some(d) => Some(output::OutDir::create(d)?),
        None => None,
    };
    let mut reports = Vec::new();
    let mut objects = Vec::new();
    let mut resolved = Vec::new();
    let mut stop_ns = 0;
    for (name, built) in variants {
        let mut sim = built.sim;
        let stop = built.stop_ns;
        stop_ns = stop;
        let path_names = built.path_names;
        let warnings = built.warnings;
        sim.set_qlog(o.qlog.is_some());
        if let Some(dir) = o.pcap {
            let d = if has_variants { dir.join(&name) } else { dir.to_path_buf() };
            sim.set_capture(triage_sim::pcap::Capture::create(&d, sim.network()).map_err(|e| e.to_string())?);
        }
        let bar = progress_bar(stop);
        sim.run(stop, |t| bar.set_position(t / 1_000_000));
        bar.finish_and_clear();
        if let Some(capture) = sim.take_capture() {
            capture.finish().map_err(|e| e.to_string())?;
        }
        let report =
            RunReport::new(&scenario.name, scenario.seed, &sim).with_path_names(&path_names).with_warnings(&warnings);
        let variant = if has_variants { name.clone() } else { String::new() };
        let rows = output::object_rows(&variant, &report, &sim);
        if let Some(o) = out.as_mut() {
            let params = table::RunParams {
                scenario: scenario.name.clone(),
                variant: variant.clone(),
                seed: Some(scenario.seed),
            };
            o.add(&params, &report, &sim, &rows)?;
        }
        if let Some(dir) = o.qlog {
            write_qlogs(dir, if has_variants { Some(&name) } else { None }, &sim)?;
        }
        objects.extend(rows);
        resolved.push(triage_sim::document::resolved_json(&sim, stop));
        reports.push((variant, report));
    }
    let doc = triage_sim::document::run_document(scenario, file, dir, text, stop_ns, &reports, resolved)?;
    if let Some(o) = out {
        o.finish(&doc)?;
    }
    if let Some(path) = o.html {
        report::write(path, &report::of_run(&doc, &objects))?;
    }
    Ok((doc, reports))
}

/// A progress bar over simulated milliseconds, drawn only on a terminal.
/// A bar counting `total` units of work (`unit` names them: "page load", "run"), on a
/// terminal only and only when there are more than `min` of them (a short job shows none).
pub(crate) fn counting_bar(total: u64, min: u64, unit: &str, tail: &str) -> ProgressBar {
    if total <= min || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let template = format!("{{spinner}} {unit} {{pos}}/{{len}} [{{elapsed_precise}}] {{wide_bar}} {tail}");
    bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

pub(crate) fn progress_bar(stop_ns: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(stop_ns / 1_000_000);
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulated {pos}/{len} ms [{elapsed_precise}] {wide_bar}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
