//! `triage reproduce eecn`: EECN §6 (Table 4, Figs. 7-12) with the paper's numbers beside ours.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use triage_sim::experiments::eecn::{
    reproduce_with_progress, EecnReproduction, EecnRun, EecnSettings, FlowRow, Scheme, Topology, PAPER_TABLE_4,
};
use triage_sim::units::{Duration, Size};

use crate::chart::{bars, lines};
use crate::reproduce::emit;
use crate::table::{fixed, or_dash, or_empty};

/// Arguments of `triage reproduce eecn`.
#[derive(clap::Args)]
pub struct EecnArgs {
    /// Size of each elephant flow (paper: 1 Gb).
    #[arg(long, default_value = "125MB")]
    elephant_size: Size,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time-series interval for the figures.
    #[arg(long, default_value = "10ms")]
    interval: Duration,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Write CSV tables and SVG figures (Figs. 7-12) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Transport: tcp (the paper's), or quic, where the ends read EECN's two levels and
    /// classic ECN's CE from the ECN counts of QUIC's ACK frames (VCP, which needs TCP's
    /// ECE/CWR flags, does not run).
    #[arg(long, value_parser = ["tcp", "quic"], default_value = "tcp")]
    mode: String,
    /// EECN's Algorithm 2 when cRTT equals avgRTT (β = 0): hold (the paper's listing,
    /// cRTT ≥ avgRTT: no change) or grow (its prose: decay only when β is positive).
    #[arg(long, value_parser = ["hold", "grow"], default_value = "hold")]
    zero_beta: String,
}

/// Runs the reproduction.
pub fn run(a: EecnArgs) -> Result<(), String> {
    if a.elephant_size.0 == 0 {
        return Err("--elephant-size must be positive".into());
    }
    let s = EecnSettings {
        elephant_bytes: a.elephant_size.0,
        seed: a.seed,
        sample_ns: if a.out.is_some() { a.interval.0 } else { 0 },
        quic: a.mode == "quic",
        zero_beta: if a.zero_beta == "grow" {
            triage_core::cc::ZeroBeta::Grow
        } else {
            triage_core::cc::ZeroBeta::Hold
        },
        ..Default::default()
    };
    // Eight runs of a few hundred ms each by default, longer with a larger --elephant-size.
    let bar = crate::counting_bar(s.runs() as u64, 0, "run", "eta {eta}");
    let r = reproduce_with_progress(&s, |done, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    emit(&r, a.out.as_deref(), a.json, write_out, json, tables)
}

/// `{"mode","runs":[{"topology","scheme","drops","drop_bytes","marks","mark_bytes","drop_pct","jain","flows":[...]}]}`.
fn json(r: &EecnReproduction) -> serde_json::Value {
    serde_json::json!({
        "mode": if r.settings.quic { "quic" } else { "tcp" },
        "runs": r.runs.iter().map(|run| serde_json::json!({
            "topology": run.topology, "scheme": run.scheme.name(),
            "drops": run.drops, "drop_bytes": run.drop_bytes, "marks": run.marks, "mark_bytes": run.mark_bytes,
            "drop_pct": run.drop_pct, "jain": run.jain,
            "flows": run.flows.iter().map(|f| serde_json::json!({
                "name": f.name, "kind": f.kind, "fct_ms": f.fct_ms, "throughput_mbps": f.throughput_mbps, "mean_delay_ms": f.mean_delay_ms,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "paper_table_4": Scheme::ALL.iter().zip(PAPER_TABLE_4).map(|(s, p)| serde_json::json!({
            "scheme": s.name(), "drops": p.0, "drop_bytes": p.1, "marks": p.2, "mark_bytes": p.3, "drop_pct": p.4,
        })).collect::<Vec<_>>(),
        "claims": TOPOLOGIES.iter().map(|&t| serde_json::json!({
            "topology": t,
            "reductions": r.claims(t).iter().map(|(w, p, o)| serde_json::json!({"what": w, "paper_pct": p, "ours_pct": o})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

const TOPOLOGIES: [Topology; 2] = [Topology::Dumbbell, Topology::Multihop];

fn tables(r: &EecnReproduction) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "EECN reproduction (§6): 3 senders, 100 Mbps / 1 ms router links, 100-packet queues, 2 x {:.0} MB elephants + 6 short flows, seed {}{}",
        r.settings.elephant_bytes as f64 / 1e6,
        r.settings.seed,
        if r.settings.quic {
            "\nQUIC mode: levels read from the ECN counts of QUIC's ACK frames (RFC 9000 §13.4); VCP needs TCP's ECE/CWR flags and does not run"
        } else {
            ""
        }
    );
    for t in TOPOLOGIES {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "Table 4 ({}): drops and marks at the bottleneck queue (r1->r2); paper values in brackets",
            name(t)
        );
        let _ = writeln!(
            s,
            "{:<13} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8} {:>6}",
            "scheme",
            "drops",
            "[paper]",
            "bytes",
            "[paper]",
            "marks",
            "[paper]",
            "bytes",
            "[paper]",
            "drop%",
            "[paper]",
            "jain"
        );
        for sc in r.settings.schemes() {
            let p = paper_row(*sc);
            let run = r.get(t, *sc);
            let _ = writeln!(
                s,
                "{:<13} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8} {:>10} {:>10} {:>8.3} {:>8} {:>6.3}",
                sc.label(),
                run.drops,
                p.0,
                run.drop_bytes,
                p.1,
                if *sc == Scheme::NewReno { "-".into() } else { run.marks.to_string() },
                or_dash(p.2),
                if *sc == Scheme::NewReno { "-".into() } else { run.mark_bytes.to_string() },
                or_dash(p.3),
                run.drop_pct,
                p.4,
                run.jain
            );
        }
        if let Some((d, m)) = r.get(t, Scheme::Eecn).second_router {
            let _ = writeln!(s, "(second router r2->r3, classic ECN RED: EECN run {d} drops, {m} marks)");
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "EECN's reductions ({}), paper vs ours:", name(t));
        for (w, p, ours) in r.claims(t) {
            let _ = writeln!(
                s,
                "  {:<30} paper -{:>4.0}%   ours {}",
                w,
                p,
                ours.map_or("-".into(), |x| format!("{:+.0}%", -x))
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "Per flow ({}): completion ms / throughput Mbps / mean one-way delay ms", name(t));
        let _ = write!(s, "{:<5}", "flow");
        for sc in r.settings.schemes() {
            let _ = write!(s, " | {:^26}", sc.label());
        }
        let _ = writeln!(s);
        let n = r.get(t, Scheme::Eecn).flows.len();
        for i in 0..n {
            let _ = write!(s, "{:<5}", r.get(t, Scheme::Eecn).flows[i].name);
            for &sc in r.settings.schemes() {
                let f = &r.get(t, sc).flows[i];
                let _ = write!(
                    s,
                    " | {:>9} {:>8} {:>7}",
                    fixed(f.fct_ms, 1),
                    fixed(f.throughput_mbps, 2),
                    fixed(f.mean_delay_ms, 2)
                );
            }
            let _ = writeln!(s);
        }
        type FctMean = fn(&EecnRun) -> Option<f64>;
        let averages: [(&str, FctMean, &str); 2] =
            [("SFavg", EecnRun::short_fct_mean_ms, "short"), ("EFavg", EecnRun::elephant_fct_mean_ms, "elephant")];
        for (row, fct, kind) in averages {
            let _ = write!(s, "{row:<5}");
            for &sc in r.settings.schemes() {
                let run = r.get(t, sc);
                let _ = write!(s, " | {:>9} {:>8} {:>7}", fixed(fct(run), 1), "", fixed(run.mean_delay_ms(kind), 2));
            }
            let _ = writeln!(s);
        }
    }
    let _ = writeln!(
        s,
        "\nPaper: Table 4 (one set of numbers; the paper does not say which topology). Marks: packets whose ECN field the\n\
         router changed (EECN: CL(1) and CL(2); VCP: overload); drop% = drops / arrivals at r1->r2."
    );
    s
}

/// Table 4's row of a scheme.
fn paper_row(sc: Scheme) -> triage_sim::experiments::eecn::PaperRow {
    PAPER_TABLE_4[Scheme::ALL.iter().position(|s| *s == sc).unwrap_or(0)]
}

fn name(t: Topology) -> &'static str {
    match t {
        Topology::Dumbbell => "dumbbell, Fig. 6a",
        Topology::Multihop => "multi-hop, Fig. 6b",
    }
}

fn tag(t: Topology) -> &'static str {
    match t {
        Topology::Dumbbell => "dumbbell",
        Topology::Multihop => "multihop",
    }
}

fn write_out(dir: &Path, r: &EecnReproduction) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut t4: Vec<Vec<String>> = Vec::new();
    let t4_header = [
        "topology",
        "scheme",
        "drops",
        "drop_bytes",
        "marks",
        "mark_bytes",
        "drop_pct",
        "jain",
        "paper_drops",
        "paper_drop_bytes",
        "paper_marks",
        "paper_mark_bytes",
        "paper_drop_pct",
    ];
    let mut fl: Vec<Vec<String>> = Vec::new();
    let fl_header = ["topology", "scheme", "flow", "kind", "fct_ms", "throughput_mbps", "mean_delay_ms"];
    for run in &r.runs {
        let p = paper_row(run.scheme);
        t4.push(vec![
            (tag(run.topology)).to_string(),
            run.scheme.name().to_string(),
            run.drops.to_string(),
            run.drop_bytes.to_string(),
            run.marks.to_string(),
            run.mark_bytes.to_string(),
            run.drop_pct.to_string(),
            run.jain.to_string(),
            (p.0).to_string(),
            (p.1).to_string(),
            or_empty(p.2),
            or_empty(p.3),
            (p.4).to_string(),
        ]);
        for f in &run.flows {
            fl.push(vec![
                (tag(run.topology)).to_string(),
                run.scheme.name().to_string(),
                f.name.to_string(),
                f.kind.to_string(),
                crate::table::fixed_csv(f.fct_ms, 3),
                crate::table::fixed_csv(f.throughput_mbps, 4),
                crate::table::fixed_csv(f.mean_delay_ms, 4),
            ]);
        }
    }
    crate::table::write_csv(
        &dir.join("table4.csv"),
        &crate::table::RunParams::command("reproduce eecn"),
        &t4_header,
        &t4,
    )
    .map_err(|e| e.to_string())?;
    crate::table::write_csv(
        &dir.join("flows.csv"),
        &crate::table::RunParams::command("reproduce eecn"),
        &fl_header,
        &fl,
    )
    .map_err(|e| e.to_string())?;
    let fig = |e: Box<dyn std::error::Error>| e.to_string();
    let d = Topology::Dumbbell;
    let pick = |f: fn(&EecnRun) -> &Vec<(f64, f64)>, schemes: &[Scheme]| -> Vec<(String, Vec<(f64, f64)>)> {
        schemes.iter().map(|s| (s.label().to_string(), f(r.get(d, *s)).clone())).collect()
    };
    let all = r.settings.schemes();
    let three = [Scheme::NewReno, Scheme::Ecn, Scheme::Eecn];
    type Series = fn(&EecnRun) -> &Vec<(f64, f64)>;
    let line_figs: [(&str, &str, &str, Series, &[Scheme]); 5] = [
        ("fig7a_queue.svg", "Fig. 7a: bottleneck queue size (dumbbell)", "packets", |r| &r.series.queue_packets, all),
        ("fig7b_cwnd.svg", "Fig. 7b: cwnd of EF1 (dumbbell)", "segments", |r| &r.series.cwnd_segments, all),
        ("fig8a_rtt.svg", "Fig. 8: RTT of EF1 (dumbbell)", "ms", |r| &r.series.rtt_ms, &three),
        ("fig8b_jitter.svg", "Fig. 8: jitter of EF1 (dumbbell)", "ms", |r| &r.series.jitter_ms, &three),
        ("fig12a_sojourn.svg", "Fig. 12a: sojourn time in the bottleneck queue", "ms", |r| &r.series.sojourn_ms, all),
    ];
    for (file, title, y_desc, series, schemes) in line_figs {
        lines(&dir.join(file), title, y_desc, &pick(series, schemes)).map_err(fig)?;
    }
    for t in TOPOLOGIES {
        let flows: Vec<String> = r.get(t, Scheme::Eecn).flows.iter().map(|f| f.name.clone()).collect();
        let per = |f: fn(&FlowRow) -> Option<f64>| -> Vec<(String, Vec<f64>)> {
            all.iter()
                .map(|s| (s.label().to_string(), r.get(t, *s).flows.iter().map(|x| f(x).unwrap_or(f64::NAN)).collect()))
                .collect()
        };
        let sfx = if t == Topology::Dumbbell { "a" } else { "b" };
        // Elephants (seconds) and short flows (ms) on separate charts: their scales differ 1000-fold.
        let (ef, sf): (Vec<usize>, Vec<usize>) =
            (0..flows.len()).partition(|&i| r.get(t, Scheme::Eecn).flows[i].kind == "elephant");
        let sub = |v: &[(String, Vec<f64>)], idx: &[usize]| -> Vec<(String, Vec<f64>)> {
            v.iter().map(|(l, x)| (l.clone(), idx.iter().map(|&i| x[i]).collect())).collect()
        };
        let names = |idx: &[usize]| -> Vec<String> { idx.iter().map(|&i| flows[i].clone()).collect() };
        let fct = per(|f| f.fct_ms);
        let tg = tag(t);
        // (figure, file stem, what, unit, categories, one series per scheme)
        let bar_figs = [
            (9, "fct_elephants", "FCT of elephant flows", "ms", names(&ef), sub(&fct, &ef)),
            (9, "fct_short", "FCT of short flows", "ms", names(&sf), sub(&fct, &sf)),
            (10, "throughput", "average throughput", "Mbps", flows.clone(), per(|f| f.throughput_mbps)),
            (11, "delay", "mean end-to-end delay", "ms", flows.clone(), per(|f| f.mean_delay_ms)),
        ];
        for (n, stem, what, unit, cats, series) in bar_figs {
            let file = dir.join(format!("fig{n}{sfx}_{stem}_{tg}.svg"));
            bars(&file, &format!("Fig. {n}{sfx}: {what} ({tg})"), unit, &cats, &series).map_err(fig)?;
        }
    }
    let jain: Vec<(String, Vec<f64>)> = all
        .iter()
        .map(|s| (s.label().to_string(), vec![r.get(Topology::Dumbbell, *s).jain, r.get(Topology::Multihop, *s).jain]))
        .collect();
    bars(
        &dir.join("fig12b_fairness.svg"),
        "Fig. 12b: Jain's fairness index of the elephants",
        "index",
        &["dumbbell".into(), "multi-hop".into()],
        &jain,
    )
    .map_err(fig)?;
    Ok(())
}
