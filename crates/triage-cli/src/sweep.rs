//! `triage sweep PLAN.toml`: every point of a plan × its seeds on all cores, tidy results and
//! a summary per point (see `triage_sim::sweep` for the plan format).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use triage_sim::sweep::{self, Base, Plan, Point, Row, Status, Summary};

/// Arguments of `triage sweep`.
#[derive(clap::Args)]
pub struct SweepArgs {
    /// The plan (TOML): `scenario` or `scenarios`, `seeds` or `repetitions`, `metrics`, a
    /// `[grid]` of field paths to lists of values and/or `[[points]]` of override sets.
    plan: PathBuf,
    /// Write runs.csv and runs.jsonl (one row per run × metric) and summary.csv into this
    /// directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the runs and the summary as JSON instead of the summary table.
    #[arg(long)]
    json: bool,
    /// Threads (default: every core of this machine).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only runs I, I+N, I+2N, ... of the plan (0-based), e.g. 0/4 on the first of four
    /// machines; the outputs of the shards concatenate.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Keep the runs already in --out's runs.csv and run only the others (runs that ended
    /// in an error are run again).
    #[arg(long)]
    resume: bool,
}

/// The columns of runs.csv before the parameters' (which follow `scenario`).
const RUN_TAIL: [&str; 7] = ["seed", "variant", "version", "status", "metric", "value", "error"];

pub fn run(a: SweepArgs) -> Result<(), String> {
    let file = a.plan.display().to_string();
    let text = std::fs::read_to_string(&a.plan).map_err(|e| format!("{file}: {e}"))?;
    let plan = Plan::parse(&text, &file)?;
    let shard = a.shard.as_deref().map(sweep::parse_shard).transpose()?;
    if a.resume && a.out.is_none() {
        return Err("--resume needs --out DIR (the runs to keep are read from DIR/runs.csv)".into());
    }
    let plan_dir = a.plan.parent().map(Path::to_path_buf).unwrap_or_default();
    // Base scenarios are read once, not once per run.
    let mut texts: BTreeMap<String, Result<Base, String>> = BTreeMap::new();
    for s in &plan.scenarios {
        texts.insert(s.clone(), sweep::load_base(s, &plan_dir));
    }
    let load = |name: &str| texts.get(name).cloned().unwrap_or_else(|| Err(format!("{name}: not in the plan")));

    let mut kept: Vec<csv::StringRecord> = Vec::new();
    let mut done: BTreeSet<(String, u64)> = BTreeSet::new();
    if a.resume {
        let path = a.out.as_ref().expect("checked").join("runs.csv");
        if path.exists() {
            (kept, done) = read_previous(&path, &plan)?;
        }
    }
    let position =
        |p: &Point, seed: u64| p.index * plan.seeds.len() + plan.seeds.iter().position(|&s| s == seed).unwrap_or(0);
    let keep = |p: &Point, seed: u64| {
        shard.is_none_or(|(i, n)| position(p, seed) % n == i) && !done.contains(&(key(&plan, p), seed))
    };
    let todo =
        plan.points.iter().flat_map(|p| plan.seeds.iter().map(move |&s| (p, s))).filter(|(p, s)| keep(p, *s)).count();
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        return Err("--jobs must be at least 1".into());
    }
    let bar = crate::counting_bar(todo as u64, 1, "run", "eta {eta}");
    let rows = sweep::run(&plan, jobs, &keep, &load, &|d, _| bar.set_position(d as u64));
    bar.finish_and_clear();

    let runs_with_error: BTreeSet<(usize, u64)> =
        rows.iter().filter(|r| r.status == Status::Error).map(|r| (r.point, r.seed)).collect();
    // With --resume, the runs kept from before count in the summary and the output too.
    let (records, all_rows) = if a.resume {
        let records: Vec<csv::StringRecord> = kept.into_iter().chain(rows.iter().map(|r| record(&plan, r))).collect();
        let all = rows_of(&plan, &records);
        (records, all)
    } else {
        (rows.iter().map(|r| record(&plan, r)).collect(), rows.clone())
    };
    let summary = sweep::summarize(&all_rows);
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_runs(dir, &plan, &records)?;
        write_summary(dir, &plan, &summary)?;
    }
    if a.json {
        let runs: Vec<serde_json::Value> = all_rows.iter().map(|r| sweep::row_json(&plan, r)).collect();
        let sums: Vec<serde_json::Value> = summary.iter().map(|s| json_summary(&plan, s)).collect();
        let v = serde_json::json!({ "plan": file, "parameters": plan.parameters, "runs": runs, "summary": sums });
        outln!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    } else {
        print_summary(&plan, &summary);
    }
    if !runs_with_error.is_empty() {
        for r in rows.iter().filter(|r| r.status == Status::Error).take(5) {
            eprintln!("error: point {} seed {}: {}", describe(&plan.points[r.point]), r.seed, r.error);
        }
        return Err(format!(
            "{} of {todo} runs failed (recorded with status \"error\"{})",
            runs_with_error.len(),
            if a.out.is_some() { " in runs.csv" } else { "" }
        ));
    }
    Ok(())
}

/// A point's identity in runs.csv: its scenario and its value of every parameter column.
fn key(plan: &Plan, p: &Point) -> String {
    key_of(&p.scenario, plan.parameters.iter().map(|k| p.param(k)))
}

/// The key of a runs.csv record with `np` parameter columns (see [`key`]).
fn record_key(rec: &csv::StringRecord, np: usize) -> String {
    key_of(rec.get(0).unwrap_or(""), (1..=np).map(|i| rec.get(i).unwrap_or("")))
}

fn key_of<'a>(scenario: &str, values: impl Iterator<Item = &'a str>) -> String {
    let mut k = scenario.to_string();
    for v in values {
        k.push('\u{1f}');
        k.push_str(v);
    }
    k
}

/// A point's settings for messages: `scenario topology.bottleneck.rate=2Mbps ...`.
fn describe(p: &Point) -> String {
    let mut s = p.scenario.clone();
    for (k, v) in &p.settings {
        s.push_str(&format!(" {k}={v}"));
    }
    s
}

fn header(plan: &Plan) -> Vec<String> {
    let mut h = vec!["scenario".to_string()];
    h.extend(plan.parameters.iter().cloned());
    h.extend(RUN_TAIL.iter().map(|s| s.to_string()));
    h
}

fn record(plan: &Plan, r: &Row) -> csv::StringRecord {
    let p = &plan.points[r.point];
    let mut rec = vec![p.scenario.clone()];
    rec.extend(plan.parameters.iter().map(|k| p.param(k).to_string()));
    rec.extend([
        r.seed.to_string(),
        r.variant.clone(),
        env!("CARGO_PKG_VERSION").to_string(),
        r.status.name().to_string(),
        r.metric.clone(),
        r.value.map(|v| v.to_string()).unwrap_or_default(),
        r.error.clone(),
    ]);
    csv::StringRecord::from(rec)
}

/// Rows of the plan back from CSV records (records of points the plan does not have are left
/// out of the summary).
fn rows_of(plan: &Plan, records: &[csv::StringRecord]) -> Vec<Row> {
    let by_key: BTreeMap<String, usize> = plan.points.iter().map(|p| (key(plan, p), p.index)).collect();
    let np = plan.parameters.len();
    records
        .iter()
        .filter_map(|rec| {
            let point = *by_key.get(&record_key(rec, np))?;
            let f = |i: usize| rec.get(1 + np + i).unwrap_or("");
            Some(Row {
                point,
                seed: f(0).parse().ok()?,
                variant: f(1).to_string(),
                status: match f(3) {
                    "ok" => Status::Ok,
                    "incomplete" => Status::Incomplete,
                    _ => Status::Error,
                },
                metric: f(4).to_string(),
                value: f(5).parse().ok(),
                error: f(6).to_string(),
            })
        })
        .collect()
}

/// Records of earlier runs, and the (point key, seed) of each.
type Previous = (Vec<csv::StringRecord>, BTreeSet<(String, u64)>);

/// The runs of a previous sweep into the same directory: its records (runs that ended in an
/// error are dropped, to run again) and the (point, seed) keys they cover.
fn read_previous(path: &Path, plan: &Plan) -> Result<Previous, String> {
    let shown = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{shown}: {e}"))?;
    let head: Vec<String> = r.headers().map_err(|e| format!("{shown}: {e}"))?.iter().map(String::from).collect();
    if head != header(plan) {
        return Err(format!(
            "{shown}: its columns ({}) are not this plan's ({}); --resume continues the same plan",
            head.join(","),
            header(plan).join(",")
        ));
    }
    let np = plan.parameters.len();
    let mut kept = Vec::new();
    let mut done = BTreeSet::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("{shown}: line {}: {e}", i + 2))?;
        if rec.get(1 + np + 3) == Some("error") {
            continue;
        }
        let seed: u64 = rec
            .get(1 + np)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{shown}: line {}: seed: expected a whole number", i + 2))?;
        done.insert((record_key(&rec, np), seed));
        kept.push(rec);
    }
    Ok((kept, done))
}

fn write_runs(dir: &Path, plan: &Plan, records: &[csv::StringRecord]) -> Result<(), String> {
    let path = dir.join("runs.csv");
    let shown = path.display().to_string();
    let mut w = csv::Writer::from_path(&path).map_err(|e| format!("{shown}: {e}"))?;
    w.write_record(header(plan)).map_err(|e| format!("{shown}: {e}"))?;
    for rec in records {
        w.write_record(rec).map_err(|e| format!("{shown}: {e}"))?;
    }
    w.flush().map_err(|e| format!("{shown}: {e}"))?;
    // The same rows as JSON lines, numbers as numbers.
    let path = dir.join("runs.jsonl");
    let mut text = String::new();
    for row in rows_of(plan, records) {
        text.push_str(&sweep::row_json(plan, &row).to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn json_summary(plan: &Plan, s: &Summary) -> serde_json::Value {
    let p = &plan.points[s.point];
    let mut o = serde_json::Map::new();
    o.insert("scenario".into(), p.scenario.clone().into());
    for k in &plan.parameters {
        o.insert(k.clone(), p.param(k).into());
    }
    o.insert("variant".into(), s.variant.clone().into());
    o.insert("metric".into(), s.metric.clone().into());
    o.insert("n".into(), s.n.into());
    for (k, v) in [
        ("mean", s.mean),
        ("ci95_low", s.mean - s.ci95),
        ("ci95_high", s.mean + s.ci95),
        ("median", s.median),
        ("p10", s.p10),
        ("p90", s.p90),
    ] {
        o.insert(k.into(), v.into());
    }
    serde_json::Value::Object(o)
}

fn write_summary(dir: &Path, plan: &Plan, summary: &[Summary]) -> Result<(), String> {
    let path = dir.join("summary.csv");
    let shown = path.display().to_string();
    let mut w = csv::Writer::from_path(&path).map_err(|e| format!("{shown}: {e}"))?;
    let mut h = vec!["scenario".to_string()];
    h.extend(plan.parameters.iter().cloned());
    h.extend(["variant", "metric", "n", "mean", "ci95_low", "ci95_high", "median", "p10", "p90"].map(String::from));
    w.write_record(&h).map_err(|e| format!("{shown}: {e}"))?;
    for s in summary {
        let p = &plan.points[s.point];
        let mut rec = vec![p.scenario.clone()];
        rec.extend(plan.parameters.iter().map(|k| p.param(k).to_string()));
        rec.extend([s.variant.clone(), s.metric.clone(), s.n.to_string()]);
        rec.extend([s.mean, s.mean - s.ci95, s.mean + s.ci95, s.median, s.p10, s.p90].map(|v| v.to_string()));
        w.write_record(&rec).map_err(|e| format!("{shown}: {e}"))?;
    }
    w.flush().map_err(|e| format!("{shown}: {e}"))
}

fn print_summary(plan: &Plan, summary: &[Summary]) {
    let runs = plan.runs();
    outln!(
        "sweep: {} points x {} seeds = {runs} runs; per point and metric: n, mean with its 95% confidence interval, median, p10, p90",
        plan.points.len(),
        plan.seeds.len()
    );
    let point_width = summary.iter().map(|s| describe(&plan.points[s.point]).chars().count()).max().unwrap_or(5).max(5);
    let metric_width = summary.iter().map(|s| s.metric.chars().count() + s.variant.len()).max().unwrap_or(6).max(6) + 1;
    outln!(
        "{:<point_width$}  {:<metric_width$} {:>4} {:>12} {:>10} {:>12} {:>12} {:>12}",
        "point",
        "metric",
        "n",
        "mean",
        "+-95%",
        "median",
        "p10",
        "p90"
    );
    for s in summary {
        let metric = if s.variant.is_empty() { s.metric.clone() } else { format!("{}/{}", s.variant, s.metric) };
        outln!(
            "{:<point_width$}  {metric:<metric_width$} {:>4} {:>12.3} {:>10.3} {:>12.3} {:>12.3} {:>12.3}",
            describe(&plan.points[s.point]),
            s.n,
            s.mean,
            s.ci95,
            s.median,
            s.p10,
            s.p90
        );
    }
}
