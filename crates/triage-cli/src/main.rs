//! `triage`: run scenarios in the simulator, benchmark it.

// First, so that `out!` and `outln!` are in scope in every module below.
#[macro_use]
mod stdout;
mod bench;
mod builtin;
mod chart;
mod output;
mod page;
mod reproduce;
mod reproduce_eecn;
mod reproduce_partial;
mod reproduce_pb;
mod reproduce_quic;
mod table;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
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
    /// List the built-in scenarios.
    Scenarios,
    /// Measure simulator speed (packet-hops per wall-clock second) on a long bulk transfer.
    Bench(bench::BenchArgs),
    /// Reproduce a seed paper's experiment, with the paper's numbers beside ours.
    Reproduce(reproduce::ReproduceArgs),
    /// Import and analyze real pages (HAR, DevTools logs)
    Page(page::PageArgs),
    /// Print a shell completion script: `triage completions bash > ~/.local/share/bash-completion/completions/triage`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

const EXIT_CODES: &str = "Exit status: 0 success; 1 invalid input or a failed run; 2 usage error; 3 the run \
ended with flows not complete (results are still printed and written).";

/// Set when a run stopped with flows not complete: the exit status is then 3.
static INCOMPLETE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[derive(clap::Args)]
struct RunArgs {
    /// Scenario file (TOML), or the name of a built-in scenario (see `triage scenarios`).
    scenario: String,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Write CSV files (messages, flows, links, time series) and plots into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
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
        Command::Bench(a) => bench::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Page(a) => page::run(a),
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

/// Loads a scenario from a file or the built-in set.
fn load(name: &str) -> Result<(Scenario, String, Option<PathBuf>), String> {
    let path = PathBuf::from(name);
    if path.exists() {
        let s = Scenario::from_file(&path).map_err(|e| e.to_string())?;
        let dir = path.parent().map(|p| p.to_path_buf());
        return Ok((s, name.to_string(), dir));
    }
    if let Some((n, text)) = builtin::find(name) {
        let s = Scenario::parse(text, &format!("built-in scenario {n}")).map_err(|e| e.to_string())?;
        return Ok((s, format!("built-in scenario {n}"), None));
    }
    Err(format!(
        "{name}: no such file, and no built-in scenario of that name (built-in: {})",
        builtin::SCENARIOS.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
    ))
}

fn run(a: RunArgs) -> Result<(), String> {
    let (mut scenario, file, dir) = load(&a.scenario)?;
    if let Some(seed) = a.seed {
        scenario.seed = seed;
    }
    let variants = scenario.build_variants(&file, dir.as_deref()).map_err(|e| e.to_string())?;
    let has_variants = !scenario.variants.is_empty();
    // Said once, though every variant loads the same pages.
    let mut said = std::collections::BTreeSet::new();
    for w in variants.iter().flat_map(|(_, b)| &b.warnings) {
        if said.insert(w) {
            eprintln!("warning: {file}: {w}");
        }
    }
    let mut reports = Vec::new();
    for (name, built) in variants {
        let mut sim = built.sim;
        let stop = built.stop_ns;
        let path_names = built.path_names;
        sim.set_qlog(a.qlog.is_some());
        if let Some(dir) = &a.pcap {
            let d = if has_variants { dir.join(&name) } else { dir.clone() };
            sim.set_capture(triage_sim::pcap::Capture::create(&d, sim.network()).map_err(|e| e.to_string())?);
        }
        let bar = progress_bar(stop);
        sim.run(stop, |t| bar.set_position(t / 1_000_000));
        bar.finish_and_clear();
        if let Some(capture) = sim.take_capture() {
            capture.finish().map_err(|e| e.to_string())?;
        }
        let report = RunReport::new(&scenario.name, scenario.seed, &sim).with_path_names(&path_names);
        if let Some(dir) = &a.out {
            let d = if has_variants { dir.join(&name) } else { dir.clone() };
            output::write_out(&d, &report, &sim).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        if let Some(dir) = &a.qlog {
            write_qlogs(dir, if has_variants { Some(&name) } else { None }, &sim)?;
        }
        reports.push((name, report));
    }
    if a.json {
        let text = if has_variants {
            let v: Vec<serde_json::Value> =
                reports.iter().map(|(n, r)| serde_json::json!({"name": n, "report": r})).collect();
            serde_json::to_string_pretty(
                &serde_json::json!({"scenario": scenario.name, "seed": scenario.seed, "variants": v}),
            )
        } else {
            serde_json::to_string_pretty(&reports[0].1)
        };
        outln!("{}", text.map_err(|e| e.to_string())?);
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
        eprintln!("error: flows not complete when the run stopped: {}", incomplete.join(", "));
        INCOMPLETE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
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
