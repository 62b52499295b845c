//! `triage reproduce eecn`: EECN §6 (Table 4, Figs. 7-12) with the paper's numbers beside ours.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use triage_sim::experiments::eecn::{
    reproduce, EecnReproduction, EecnRun, EecnSettings, Scheme, Topology, PAPER_TABLE_4,
};
use triage_sim::units::{Duration, Size};

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
        ..Default::default()
    };
    let r = reproduce(&s);
    if let Some(dir) = &a.out {
        write_out(dir, &r).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json(&r)).map_err(|e| e.to_string())?);
    } else {
        print!("{}", tables(&r));
    }
    Ok(())
}

/// `{"runs":[{"topology","scheme","drops","drop_bytes","marks","mark_bytes","drop_pct","jain","flows":[...]}]}`.
fn json(r: &EecnReproduction) -> serde_json::Value {
    serde_json::json!({
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

fn o(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

fn tables(r: &EecnReproduction) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "EECN reproduction (§6): 3 senders, 100 Mbps / 1 ms router links, 100-packet queues, 2 x {:.0} MB elephants + 6 short flows, seed {}",
        r.settings.elephant_bytes as f64 / 1e6,
        r.settings.seed
    );
    for t in [Topology::Dumbbell, Topology::Multihop] {
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
        for (sc, p) in Scheme::ALL.iter().zip(PAPER_TABLE_4) {
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
                p.2.map_or("-".into(), |x| x.to_string()),
                if *sc == Scheme::NewReno { "-".into() } else { run.mark_bytes.to_string() },
                p.3.map_or("-".into(), |x| x.to_string()),
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
        for sc in Scheme::ALL {
            let _ = write!(s, " | {:^26}", sc.label());
        }
        let _ = writeln!(s);
        let n = r.get(t, Scheme::Eecn).flows.len();
        for i in 0..n {
            let _ = write!(s, "{:<5}", r.get(t, Scheme::Eecn).flows[i].name);
            for sc in Scheme::ALL {
                let f = &r.get(t, sc).flows[i];
                let _ =
                    write!(s, " | {:>9} {:>8} {:>7}", o(f.fct_ms, 1), o(f.throughput_mbps, 2), o(f.mean_delay_ms, 2));
            }
            let _ = writeln!(s);
        }
        let _ = write!(s, "{:<5}", "SFavg");
        for sc in Scheme::ALL {
            let run = r.get(t, sc);
            let _ =
                write!(s, " | {:>9} {:>8} {:>7}", o(run.short_fct_mean_ms(), 1), "", o(run.mean_delay_ms("short"), 2));
        }
        let _ = writeln!(s);
        let _ = write!(s, "{:<5}", "EFavg");
        for sc in Scheme::ALL {
            let run = r.get(t, sc);
            let _ = write!(
                s,
                " | {:>9} {:>8} {:>7}",
                o(run.elephant_fct_mean_ms(), 1),
                "",
                o(run.mean_delay_ms("elephant"), 2)
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "\nPaper: Table 4 (one set of numbers; the paper does not say which topology). Marks: packets whose ECN field the\n\
         router changed (EECN: CL(1) and CL(2); VCP: overload); drop% = drops / arrivals at r1->r2."
    );
    s
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
    let mut t4 = String::from("topology,scheme,drops,drop_bytes,marks,mark_bytes,drop_pct,jain,paper_drops,paper_drop_bytes,paper_marks,paper_mark_bytes,paper_drop_pct\n");
    let mut fl = String::from("topology,scheme,flow,kind,fct_ms,throughput_mbps,mean_delay_ms\n");
    for run in &r.runs {
        let p = PAPER_TABLE_4[Scheme::ALL.iter().position(|s| *s == run.scheme).unwrap_or(0)];
        let _ = writeln!(
            t4,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            tag(run.topology),
            run.scheme.name(),
            run.drops,
            run.drop_bytes,
            run.marks,
            run.mark_bytes,
            run.drop_pct,
            run.jain,
            p.0,
            p.1,
            p.2.map_or(String::new(), |x| x.to_string()),
            p.3.map_or(String::new(), |x| x.to_string()),
            p.4
        );
        for f in &run.flows {
            let _ = writeln!(
                fl,
                "{},{},{},{},{},{},{}",
                tag(run.topology),
                run.scheme.name(),
                f.name,
                f.kind,
                o(f.fct_ms, 3),
                o(f.throughput_mbps, 4),
                o(f.mean_delay_ms, 4)
            );
        }
    }
    std::fs::write(dir.join("table4.csv"), t4).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("flows.csv"), fl).map_err(|e| e.to_string())?;
    let fig = |e: Box<dyn std::error::Error>| e.to_string();
    let d = Topology::Dumbbell;
    let pick = |f: fn(&EecnRun) -> &Vec<(f64, f64)>, schemes: &[Scheme]| -> Vec<(String, Vec<(f64, f64)>)> {
        schemes.iter().map(|s| (s.label().to_string(), f(r.get(d, *s)).clone())).collect()
    };
    let all = Scheme::ALL;
    lines(
        &dir.join("fig7a_queue.svg"),
        "Fig. 7a: bottleneck queue size (dumbbell)",
        "packets",
        &pick(|r| &r.series.queue_packets, &all),
    )
    .map_err(fig)?;
    lines(
        &dir.join("fig7b_cwnd.svg"),
        "Fig. 7b: cwnd of EF1 (dumbbell)",
        "segments",
        &pick(|r| &r.series.cwnd_segments, &all),
    )
    .map_err(fig)?;
    let three = [Scheme::NewReno, Scheme::Ecn, Scheme::Eecn];
    lines(&dir.join("fig8a_rtt.svg"), "Fig. 8: RTT of EF1 (dumbbell)", "ms", &pick(|r| &r.series.rtt_ms, &three))
        .map_err(fig)?;
    lines(
        &dir.join("fig8b_jitter.svg"),
        "Fig. 8: jitter of EF1 (dumbbell)",
        "ms",
        &pick(|r| &r.series.jitter_ms, &three),
    )
    .map_err(fig)?;
    lines(
        &dir.join("fig12a_sojourn.svg"),
        "Fig. 12a: sojourn time in the bottleneck queue",
        "ms",
        &pick(|r| &r.series.sojourn_ms, &all),
    )
    .map_err(fig)?;
    for t in [Topology::Dumbbell, Topology::Multihop] {
        let flows: Vec<String> = r.get(t, Scheme::Eecn).flows.iter().map(|f| f.name.clone()).collect();
        let per = |f: fn(&triage_sim::experiments::eecn::FlowRow) -> Option<f64>| -> Vec<(String, Vec<f64>)> {
            all.iter()
                .map(|s| (s.label().to_string(), r.get(t, *s).flows.iter().map(|x| f(x).unwrap_or(0.0)).collect()))
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
        bars(
            &dir.join(format!("fig9{sfx}_fct_elephants_{}.svg", tag(t))),
            &format!("Fig. 9{sfx}: FCT of elephant flows ({})", tag(t)),
            "ms",
            &names(&ef),
            &sub(&fct, &ef),
        )
        .map_err(fig)?;
        bars(
            &dir.join(format!("fig9{sfx}_fct_short_{}.svg", tag(t))),
            &format!("Fig. 9{sfx}: FCT of short flows ({})", tag(t)),
            "ms",
            &names(&sf),
            &sub(&fct, &sf),
        )
        .map_err(fig)?;
        let thr = per(|f| f.throughput_mbps);
        bars(
            &dir.join(format!("fig10{sfx}_throughput_{}.svg", tag(t))),
            &format!("Fig. 10{sfx}: average throughput ({})", tag(t)),
            "Mbps",
            &flows,
            &thr,
        )
        .map_err(fig)?;
        let dly = per(|f| f.mean_delay_ms);
        bars(
            &dir.join(format!("fig11{sfx}_delay_{}.svg", tag(t))),
            &format!("Fig. 11{sfx}: mean end-to-end delay ({})", tag(t)),
            "ms",
            &flows,
            &dly,
        )
        .map_err(fig)?;
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

const COLORS: [RGBColor; 4] =
    [RGBColor(90, 110, 140), RGBColor(220, 120, 40), RGBColor(60, 150, 80), RGBColor(200, 40, 60)];

fn lines(
    path: &Path,
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1000, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let xmax = series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).fold(1.0, f64::max);
    let ymax = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..xmax / 1000.0, 0f64..ymax.max(1e-3))?;
    chart.configure_mesh().x_desc("time (s)").y_desc(y_desc).draw()?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().map(|p| (p.0 / 1000.0, p.1)), c.stroke_width(1)))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}

/// Grouped bars: one group per category, one bar per series.
fn bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    cats: &[String],
    series: &[(String, Vec<f64>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1000, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let ymax = series.iter().flat_map(|s| s.1.iter().copied()).fold(0.0, f64::max) * 1.25;
    let n = cats.len().max(1) as u32;
    let k = series.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax.max(1e-3))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n as usize * 2)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.26 {
                cats.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .draw()?;
    for (j, (label, vals)) in series.iter().enumerate() {
        let c = COLORS[j % COLORS.len()];
        chart
            .draw_series(vals.iter().enumerate().map(|(i, v)| {
                let x0 = i as f64 + 0.1 + 0.8 * j as f64 / k;
                Rectangle::new([(x0, 0.0), (x0 + 0.8 / k, *v)], c.filled())
            }))?
            .label(label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}
