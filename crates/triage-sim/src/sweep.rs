//! Sweeps: one or more base scenarios × a grid (or list) of `--set` overrides × seeds, run
//! on all cores, with tidy results (one row per run × metric) and a summary per point.
//!
//! A plan (TOML):
//! ```toml
//! scenario = "scenarios/cats-fifo.toml"        # or scenarios = ["a.toml", "cats"]
//! seeds = [1, 2, 3]                            # or repetitions = 10 (seeds 1..=10)
//! metrics = ["message.*.completed_ms", "flow.*.fct_ms"]   # globs; default: see DEFAULT_METRICS
//! [grid]                                       # every combination
//! "topology.bottleneck.rate" = ["1Mbps", "2Mbps", "5Mbps"]
//! "transport.scheduler" = ["fifo", "cats"]
//! [[points]]                                   # and/or an explicit list of override sets
//! "topology.bottleneck.delay" = "10ms"
//! ```
//! The points are scenarios × grid combinations × list entries (a missing grid or list
//! contributes one empty set), in plan order; each runs once per seed (the seed replaces the
//! scenario's). A run that fails to parse or build is a row with `status = "error"` and its
//! message, and the sweep goes on; a run whose flows did not all complete is `incomplete`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value as Json;
use triage_web::glob::Glob;

use crate::report::RunReport;
use crate::scenario::Scenario;
use crate::scenario_override::{apply, parse_override, Override};

/// Metrics kept when a plan names none.
pub const DEFAULT_METRICS: &[&str] = &["message.*.completed_ms", "flow.*", "page.*", "run.*"];

/// Largest number of runs a plan may expand to (points × seeds): a typo in a grid should
/// not start a week of work.
pub const MAX_RUNS: usize = 10_000_000;

/// A parsed plan.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Base scenarios: file paths (relative to the plan) or built-in names, as written.
    pub scenarios: Vec<String>,
    /// Overridden paths, in plan order (the columns of the tidy output).
    pub parameters: Vec<String>,
    /// The points, in order.
    pub points: Vec<Point>,
    /// Seeds each point runs with.
    pub seeds: Vec<u64>,
    /// Metric patterns kept.
    pub metrics: Vec<String>,
}

/// One point of a plan: a scenario and its overrides.
#[derive(Clone, Debug)]
pub struct Point {
    /// Index in the plan's order.
    pub index: usize,
    /// The base scenario as the plan names it.
    pub scenario: String,
    /// (path, value as written in the plan) for every parameter this point sets.
    pub settings: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanToml {
    scenario: Option<String>,
    scenarios: Option<Vec<String>>,
    seeds: Option<Vec<u64>>,
    repetitions: Option<u64>,
    metrics: Option<Vec<String>>,
    #[serde(default)]
    grid: toml::Table,
    #[serde(default)]
    points: Vec<toml::Table>,
}

/// A value as a `--set` override reads it back (strings bare, everything else as TOML).
fn written(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Plan {
    /// Parses a plan; errors name the file and the field.
    pub fn parse(text: &str, file: &str) -> Result<Plan, String> {
        let p: PlanToml = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        let scenarios = match (p.scenario, p.scenarios) {
            (Some(s), None) => vec![s],
            (None, Some(v)) if !v.is_empty() => v,
            (None, Some(_)) => return Err(format!("{file}: scenarios: expected at least one scenario")),
            (Some(_), Some(_)) => return Err(format!("{file}: give `scenario` or `scenarios`, not both")),
            (None, None) => return Err(format!("{file}: missing `scenario` (a file or a built-in name)")),
        };
        let seeds = match (p.seeds, p.repetitions) {
            (Some(s), None) if !s.is_empty() => s,
            (Some(_), None) => return Err(format!("{file}: seeds: expected at least one seed")),
            (None, Some(0)) => return Err(format!("{file}: repetitions: expected at least 1")),
            (None, Some(n)) => (1..=n).collect(),
            (None, None) => vec![1],
            (Some(_), Some(_)) => return Err(format!("{file}: give `seeds` or `repetitions`, not both")),
        };
        let mut parameters: Vec<String> = Vec::new();
        let mut check_path = |path: &str, at: &str| -> Result<(), String> {
            parse_override(&format!("{path}=0"))
                .map_err(|m| format!("{file}: {at}: {}", m.trim_start_matches("--set ")))?;
            if path == "seed" {
                return Err(format!("{file}: {at}: the seed is set by `seeds` or `repetitions`"));
            }
            if !parameters.iter().any(|p| p == path) {
                parameters.push(path.to_string());
            }
            Ok(())
        };
        let mut grid: Vec<(String, Vec<String>)> = Vec::new();
        // In the plan's order (the parsed table is sorted by key).
        let order: Vec<String> = text
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .and_then(|d| {
                d.get("grid").and_then(|g| g.as_table_like()).map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            })
            .unwrap_or_default();
        let mut keys: Vec<&String> = p.grid.keys().collect();
        keys.sort_by_key(|k| order.iter().position(|o| o == *k).unwrap_or(usize::MAX));
        for path in keys {
            let values = &p.grid[path];
            check_path(path, &format!("grid.\"{path}\""))?;
            let toml::Value::Array(values) = values else {
                return Err(format!("{file}: grid.\"{path}\": expected a list of values, e.g. [\"1Mbps\", \"2Mbps\"]"));
            };
            if values.is_empty() {
                return Err(format!("{file}: grid.\"{path}\": expected at least one value"));
            }
            grid.push((path.clone(), values.iter().map(written).collect()));
        }
        let mut list: Vec<Vec<(String, String)>> = Vec::new();
        for (i, t) in p.points.iter().enumerate() {
            let mut set = Vec::new();
            for (path, v) in t {
                check_path(path, &format!("points[{i}].\"{path}\""))?;
                set.push((path.clone(), written(v)));
            }
            list.push(set);
        }
        // Grid combinations, the first parameter varying slowest.
        let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for (path, values) in &grid {
            combos = combos
                .iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((path.clone(), v.clone()));
                        c
                    })
                })
                .collect();
            if combos.len().saturating_mul(seeds.len()) > MAX_RUNS {
                return Err(format!("{file}: the grid expands to more than {MAX_RUNS} runs"));
            }
        }
        let list = if list.is_empty() { vec![Vec::new()] } else { list };
        let mut points = Vec::new();
        for s in &scenarios {
            for c in &combos {
                for l in &list {
                    let mut settings = c.clone();
                    settings.extend(l.iter().cloned());
                    points.push(Point { index: points.len(), scenario: s.clone(), settings });
                }
            }
        }
        if points.len().saturating_mul(seeds.len()) > MAX_RUNS {
            return Err(format!("{file}: the plan expands to more than {MAX_RUNS} runs"));
        }
        let metrics = p.metrics.unwrap_or_else(|| DEFAULT_METRICS.iter().map(|s| s.to_string()).collect());
        Ok(Plan { scenarios, parameters, points, seeds, metrics })
    }

    /// Number of runs: points × seeds.
    pub fn runs(&self) -> usize {
        self.points.len() * self.seeds.len()
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Every flow completed.
    Ok,
    /// Some flow had not completed when the run stopped (its metrics are still kept).
    Incomplete,
    /// The scenario did not parse or build with these overrides.
    Error,
}

impl Status {
    /// As written in the output.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Incomplete => "incomplete",
            Status::Error => "error",
        }
    }
}

/// One tidy row: a run × metric (or a failed run with its error and no metric).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The point's index in the plan.
    pub point: usize,
    /// The seed.
    pub seed: u64,
    /// The scenario's variant (empty when it has none).
    pub variant: String,
    /// How the run ended.
    pub status: Status,
    /// Metric name (`message.P0.completed_ms`); empty for an error row.
    pub metric: String,
    /// Its value; `None` when the run has no value for it (a message never completed).
    pub value: Option<f64>,
    /// The error of a failed run.
    pub error: String,
}

/// Loads a base scenario as the plan names it: (TOML text, name for messages, directory for
/// relative paths). The command line resolves files (relative to the plan) and built-ins.
pub type Loader<'a> = dyn Fn(&str) -> Result<Base, String> + Sync + 'a;

/// A base scenario's TOML text, its name for messages, and the folder of its relative paths.
pub type Base = (String, String, Option<PathBuf>);

/// A base scenario as a plan names it: a file (relative to the plan's folder, then to the
/// current directory; `.json` files hold the same fields) or a built-in scenario.
pub fn load_base(name: &str, plan_dir: &std::path::Path) -> Result<Base, String> {
    for path in [plan_dir.join(name), PathBuf::from(name)] {
        if path.is_file() {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let text = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
                crate::scenario_override::json_to_toml(&text).map_err(|m| format!("{}: {m}", path.display()))?
            } else {
                text
            };
            return Ok((text, path.display().to_string(), path.parent().map(|p| p.to_path_buf())));
        }
    }
    match crate::builtin::find(name) {
        Some((n, text)) => Ok((text.to_string(), format!("built-in scenario {n}"), None)),
        None => Err(format!("{name}: no such file (beside the plan or here), and no built-in scenario of that name")),
    }
}

/// Applies `overrides` to a scenario's text, parses it (with `seed` replacing the scenario's)
/// and runs every variant, handing `each` the variant's name ("" when the scenario has none),
/// its finished simulator, stop time and report. Returns the scenario and its text after the
/// overrides. `run_text` and the sweep's runs share it.
fn run_scenario(
    text: &str,
    file: &str,
    dir: Option<&std::path::Path>,
    overrides: &[Override],
    seed: Option<u64>,
    mut each: impl FnMut(String, &crate::Simulator, u64, RunReport),
) -> Result<(Scenario, String), String> {
    let text = apply(text, overrides).map_err(|m| format!("{file}: {m}"))?;
    let mut scenario = Scenario::parse(&text, file).map_err(|e| e.to_string())?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    let named = !scenario.variants.is_empty();
    for (name, built) in scenario.build_variants(file, dir).map_err(|e| e.to_string())? {
        let mut sim = built.sim;
        sim.run(built.stop_ns, |_| {});
        let report = RunReport::new(&scenario.name, scenario.seed, &sim)
            .with_path_names(&built.path_names)
            .with_warnings(&built.warnings);
        each(if named { name } else { String::new() }, &sim, built.stop_ns, report);
    }
    Ok((scenario, text))
}

/// Runs a scenario's text (after `--set` overrides, with `seed` replacing the scenario's) and
/// returns its `--json` document ([`crate::document::run_document`]) and whether every flow
/// completed.
pub fn run_text(
    text: &str,
    file: &str,
    dir: Option<&std::path::Path>,
    sets: &[String],
    seed: Option<u64>,
) -> Result<(String, bool), String> {
    let overrides = sets.iter().map(|s| parse_override(s)).collect::<Result<Vec<_>, _>>()?;
    let (mut reports, mut resolved, mut stop_ns) = (Vec::new(), Vec::new(), 0);
    let mut complete = true;
    let (scenario, text) = run_scenario(text, file, dir, &overrides, seed, |name, sim, stop, report| {
        stop_ns = stop;
        complete &= report.flows.iter().all(|f| f.completed_ms.is_some());
        resolved.push(crate::document::resolved_json(sim, stop));
        reports.push((name, report));
    })?;
    let doc = crate::document::run_document(&scenario, file, dir, &text, stop_ns, &reports, resolved)?;
    Ok((serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?, complete))
}

/// A tidy row as a JSON object (a line of runs.jsonl): `scenario`, the plan's parameters,
/// `seed`, `variant`, `version`, `status`, `metric`, `value`, `error`.
pub fn row_json(plan: &Plan, r: &Row) -> Json {
    let p = &plan.points[r.point];
    let mut o = serde_json::Map::new();
    o.insert("scenario".into(), p.scenario.clone().into());
    for k in &plan.parameters {
        o.insert(k.clone(), p.param(k).into());
    }
    o.insert("seed".into(), r.seed.into());
    o.insert("variant".into(), r.variant.clone().into());
    o.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    o.insert("status".into(), r.status.name().into());
    o.insert("metric".into(), r.metric.clone().into());
    o.insert("value".into(), r.value.map_or(Json::Null, |v| v.into()));
    o.insert("error".into(), r.error.clone().into());
    Json::Object(o)
}

impl Point {
    /// The value this point gives parameter `path` (empty when it does not set it).
    pub fn param(&self, path: &str) -> &str {
        self.settings.iter().rev().find(|(k, _)| k == path).map_or("", |(_, v)| v.as_str())
    }
}

/// Runs one point with one seed.
pub fn run_point(point: &Point, seed: u64, metrics: &[Glob], load: &Loader<'_>) -> Vec<Row> {
    let fail = |error: String| {
        vec![Row {
            point: point.index,
            seed,
            variant: String::new(),
            status: Status::Error,
            metric: String::new(),
            value: None,
            error,
        }]
    };
    let (text, file, dir) = match load(&point.scenario) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let mut overrides: Vec<Override> = Vec::new();
    for (path, value) in &point.settings {
        match parse_override(&format!("{path}={value}")) {
            Ok(o) => overrides.push(o),
            Err(e) => return fail(e),
        }
    }
    let mut rows = Vec::new();
    let ran = run_scenario(&text, &file, dir.as_deref(), &overrides, Some(seed), |variant, _, _, report| {
        let status =
            if report.flows.iter().all(|f| f.completed_ms.is_some()) { Status::Ok } else { Status::Incomplete };
        let value = serde_json::to_value(&report).unwrap_or(Json::Null);
        for (metric, v) in flatten(&value) {
            if metrics.iter().any(|g| g.matches(&metric)) {
                rows.push(Row {
                    point: point.index,
                    seed,
                    variant: variant.clone(),
                    status,
                    metric,
                    value: v,
                    error: String::new(),
                });
            }
        }
    });
    if let Err(e) = ran {
        return fail(e);
    }
    rows
}

fn number(v: &Json) -> Option<Option<f64>> {
    match v {
        Json::Number(n) => Some(n.as_f64()),
        Json::Null => Some(None),
        _ => None,
    }
}

/// The metrics of a report, by name: `run.FIELD`, `flow.FLOW.FIELD`, `message.NAME.FIELD`
/// (`message.FLOW.NAME.FIELD` when the run has several flows), `page.FIELD` (`page.FLOW.FIELD`
/// with several page loads) and `link.LINK.FIELD`; numeric fields only (null: no value).
pub fn flatten(report: &Json) -> Vec<(String, Option<f64>)> {
    let mut out = Vec::new();
    let Json::Object(top) = report else { return out };
    for (k, v) in top {
        if let Some(n) = number(v) {
            out.push((format!("run.{k}"), n));
        }
    }
    let list = |k: &str| top.get(k).and_then(|v| v.as_array()).cloned().unwrap_or_default();
    let flows = list("flows");
    let several = flows.len() > 1;
    let pages = flows.iter().filter(|f| f.get("page").is_some_and(|p| p.is_object())).count();
    for f in &flows {
        let name = f.get("name").and_then(|n| n.as_str()).unwrap_or("");
        if let Json::Object(o) = f {
            for (k, v) in o {
                if let Some(n) = number(v) {
                    out.push((format!("flow.{name}.{k}"), n));
                }
            }
        }
        if let Some(Json::Object(p)) = f.get("page") {
            for (k, v) in p {
                if let Some(n) = number(v) {
                    out.push((if pages > 1 { format!("page.{name}.{k}") } else { format!("page.{k}") }, n));
                }
            }
        }
    }
    for m in list("messages") {
        let name = m.get("name").and_then(|n| n.as_str()).unwrap_or("");
        let flow = m.get("flow").and_then(|n| n.as_str()).unwrap_or("");
        if let Json::Object(o) = &m {
            for (k, v) in o {
                if let Some(n) = number(v) {
                    out.push((
                        if several { format!("message.{flow}.{name}.{k}") } else { format!("message.{name}.{k}") },
                        n,
                    ));
                }
            }
        }
    }
    for l in list("links") {
        let name = l.get("name").and_then(|n| n.as_str()).unwrap_or("");
        if let Json::Object(o) = &l {
            for (k, v) in o {
                if let Some(n) = number(v) {
                    out.push((format!("link.{name}.{k}"), n));
                }
            }
        }
    }
    out
}

/// Runs every (point, seed) that `keep` accepts on `jobs` threads, calling `progress(done,
/// total)` after each run; rows come back in plan order (point, then seed), whatever the
/// threads' timing, so output is deterministic.
pub fn run(
    plan: &Plan,
    jobs: usize,
    keep: &(dyn Fn(&Point, u64) -> bool + Sync),
    load: &Loader<'_>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Row> {
    let work: Vec<(&Point, u64)> =
        plan.points.iter().flat_map(|p| plan.seeds.iter().map(move |&s| (p, s))).filter(|(p, s)| keep(p, *s)).collect();
    let metrics: Vec<Glob> = plan.metrics.iter().map(|m| Glob::new(m)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<BTreeMap<usize, Vec<Row>>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(work.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, seed)) = work.get(i) else { break };
                let rows = run_point(p, seed, &metrics, load);
                results.lock().unwrap_or_else(|e| e.into_inner()).insert(i, rows);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, work.len());
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner()).into_values().flatten().collect()
}

/// Summary of one point × variant × metric over its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The point.
    pub point: usize,
    /// The variant (empty without variants).
    pub variant: String,
    /// The metric.
    pub metric: String,
    /// Runs with a value.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean (Student's t; 0 for n = 1).
    pub ci95: f64,
    /// Median, 10th and 90th percentiles (linear interpolation between order statistics).
    pub median: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
}

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        d if d <= 30 => T[d - 1],
        d if d <= 60 => 2.042 + (2.000 - 2.042) * (d - 30) as f64 / 30.0,
        d if d <= 120 => 2.000 + (1.980 - 2.000) * (d - 60) as f64 / 60.0,
        _ => 1.960,
    }
}

/// The `q`-quantile of sorted values, interpolating linearly (numpy's default).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (h - lo as f64)
}

/// Summaries per point × variant × metric, in that order (rows without a value are left out).
pub fn summarize(rows: &[Row]) -> Vec<Summary> {
    let mut groups: BTreeMap<(usize, &str, &str), Vec<f64>> = BTreeMap::new();
    for r in rows {
        if let Some(v) = r.value.filter(|v| v.is_finite()) {
            groups.entry((r.point, &r.variant, &r.metric)).or_default().push(v);
        }
    }
    groups
        .into_iter()
        .map(|((point, variant, metric), mut v)| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let mean = v.iter().sum::<f64>() / n as f64;
            let ci95 = if n > 1 {
                let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
                t95(n - 1) * (var / n as f64).sqrt()
            } else {
                0.0
            };
            Summary {
                point,
                variant: variant.to_string(),
                metric: metric.to_string(),
                n,
                mean,
                ci95,
                median: quantile(&v, 0.5),
                p10: quantile(&v, 0.1),
                p90: quantile(&v, 0.9),
            }
        })
        .collect()
}

/// Parses `--shard i/n` (0 ≤ i < n).
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_expands_grid_list_scenarios_and_seeds_in_order() {
        let p = Plan::parse(
            "scenarios = [\"a\", \"b\"]\nrepetitions = 3\n[grid]\n\"topology.bottleneck.rate\" = [\"1Mbps\", \"2Mbps\"]\n\
             \"transport.scheduler\" = [\"fifo\", \"cats\"]\n[[points]]\n\"stop\" = \"5s\"\n[[points]]\n\"stop\" = \"9s\"\n",
            "plan.toml",
        )
        .unwrap();
        assert_eq!(p.seeds, vec![1, 2, 3]);
        // Grid parameters keep the plan's order, not the alphabet's.
        let q = Plan::parse("scenario = \"a\"\n[grid]\n\"z\" = [1]\n\"a\" = [2]\n", "p").unwrap();
        assert_eq!(q.parameters, vec!["z", "a"]);
        assert_eq!(p.parameters, vec!["topology.bottleneck.rate", "transport.scheduler", "stop"]);
        // 2 scenarios × 4 combinations × 2 list entries.
        assert_eq!(p.points.len(), 16);
        assert_eq!(p.runs(), 48);
        let s = |i: usize| p.points[i].settings.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join(",");
        assert_eq!(s(0), "1Mbps,fifo,5s");
        assert_eq!(s(1), "1Mbps,fifo,9s");
        assert_eq!(s(2), "1Mbps,cats,5s");
        assert_eq!(s(7), "2Mbps,cats,9s");
        assert_eq!(p.points[8].scenario, "b");
        assert_eq!(p.metrics, DEFAULT_METRICS);
    }

    #[test]
    fn plan_errors_name_the_file_and_field() {
        let e = |t: &str| Plan::parse(t, "plan.toml").unwrap_err();
        assert_eq!(e("seeds = [1]"), "plan.toml: missing `scenario` (a file or a built-in name)");
        assert_eq!(e("scenario = \"a\"\nseeds = []"), "plan.toml: seeds: expected at least one seed");
        assert_eq!(e("scenario = \"a\"\nrepetitions = 0"), "plan.toml: repetitions: expected at least 1");
        assert_eq!(
            e("scenario = \"a\"\n[grid]\n\"x\" = \"1\""),
            "plan.toml: grid.\"x\": expected a list of values, e.g. [\"1Mbps\", \"2Mbps\"]"
        );
        assert!(e("scenario = \"a\"\n[grid]\n\"a..b\" = [1]").starts_with("plan.toml: grid.\"a..b\": a..b=0:"));
        assert_eq!(
            e("scenario = \"a\"\n[grid]\nseed = [1]"),
            "plan.toml: grid.\"seed\": the seed is set by `seeds` or `repetitions`"
        );
        assert!(e("scenario = \"a\"\nunknown = 1").contains("unknown field `unknown`"));
        assert!(e("scenario = \"a\"\nrepetitions = 10000000\n[grid]\nx = [1, 2]").contains("more than"));
    }

    #[test]
    fn summaries_by_hand() {
        let row = |point, seed, v: Option<f64>| Row {
            point,
            seed,
            variant: String::new(),
            status: Status::Ok,
            metric: "m".into(),
            value: v,
            error: String::new(),
        };
        let rows = vec![
            row(0, 1, Some(1.0)),
            row(0, 2, Some(2.0)),
            row(0, 3, Some(6.0)),
            row(0, 4, None),
            row(1, 1, Some(5.0)),
        ];
        let s = summarize(&rows);
        assert_eq!(s.len(), 2);
        // mean 3, sample variance ((4 + 1 + 9) / 2) = 7, ci = 4.303 * sqrt(7/3).
        assert_eq!((s[0].n, s[0].mean, s[0].median), (3, 3.0, 2.0));
        assert!((s[0].ci95 - 4.303 * (7.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // p10 = 1 + 0.2 * (2 - 1), p90 = 2 + 0.8 * (6 - 2).
        assert!((s[0].p10 - 1.2).abs() < 1e-12 && (s[0].p90 - 5.2).abs() < 1e-12);
        assert_eq!((s[1].n, s[1].mean, s[1].ci95), (1, 5.0, 0.0));
    }

    #[test]
    fn shards() {
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("x").is_err());
        assert!(parse_shard("0/0").is_err());
    }
}
