//! `triage._native`: the simulator for the Python package (`python/triage/__init__.py` is the
//! API users call). Values cross as JSON text and plain lists, so the Python side sees
//! exactly what `triage run --json` and `triage sweep` write.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use triage_sim::sweep::{self, Plan};

fn err(m: String) -> PyErr {
    PyValueError::new_err(m)
}

/// Runs a scenario's TOML text (`name` for messages, `base_dir` for relative paths) after
/// `sets` (`PATH=VALUE`) and with `seed` replacing the scenario's; returns the `--json`
/// document and whether every flow completed.
#[pyfunction]
#[pyo3(signature = (text, name, base_dir=None, sets=Vec::new(), seed=None))]
fn run_text(
    py: Python<'_>,
    text: String,
    name: String,
    base_dir: Option<String>,
    sets: Vec<String>,
    seed: Option<u64>,
) -> PyResult<(String, bool)> {
    let dir = base_dir.map(PathBuf::from);
    py.allow_threads(|| sweep::run_text(&text, &name, dir.as_deref(), &sets, seed)).map_err(err)
}

/// A scenario or plan written as JSON, as TOML text.
#[pyfunction]
fn json_to_toml(json: &str) -> PyResult<String> {
    triage_sim::scenario_override::json_to_toml(json).map_err(err)
}

/// A base scenario by name: (TOML text, name for messages, folder) from a file beside
/// `plan_dir`, here, or the built-in set.
#[pyfunction]
fn load_base(name: &str, plan_dir: &str) -> PyResult<(String, String, Option<String>)> {
    let (t, n, d) = sweep::load_base(name, std::path::Path::new(plan_dir)).map_err(err)?;
    Ok((t, n, d.map(|d| d.display().to_string())))
}

/// A plan's shape: (parameters, [(point, scenario, [(path, value)])], seeds).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn plan_points(
    text: &str,
    file: &str,
) -> PyResult<(Vec<String>, Vec<(usize, String, Vec<(String, String)>)>, Vec<u64>)> {
    let plan = Plan::parse(text, file).map_err(err)?;
    let points = plan.points.iter().map(|p| (p.index, p.scenario.clone(), p.settings.clone())).collect();
    Ok((plan.parameters, points, plan.seeds))
}

/// Runs the (point, seed) pairs `selection` names (all of the plan when `None`) on `jobs`
/// threads; returns the tidy rows as JSON lines, in plan order.
#[pyfunction]
#[pyo3(signature = (text, file, plan_dir, selection=None, jobs=1))]
fn sweep_rows(
    py: Python<'_>,
    text: String,
    file: String,
    plan_dir: String,
    selection: Option<Vec<(usize, u64)>>,
    jobs: usize,
) -> PyResult<String> {
    let plan = Plan::parse(&text, &file).map_err(err)?;
    let dir = PathBuf::from(plan_dir);
    py.allow_threads(|| {
        let mut bases = std::collections::BTreeMap::new();
        for s in &plan.scenarios {
            bases.insert(s.clone(), sweep::load_base(s, &dir));
        }
        let load = |name: &str| bases.get(name).cloned().unwrap_or_else(|| Err(format!("{name}: not in the plan")));
        let chosen: Option<std::collections::BTreeSet<(usize, u64)>> = selection.map(|s| s.into_iter().collect());
        let keep = |p: &sweep::Point, seed: u64| chosen.as_ref().is_none_or(|c| c.contains(&(p.index, seed)));
        let rows = sweep::run(&plan, jobs.max(1), &keep, &load, &|_, _| {});
        let mut out = String::new();
        for r in &rows {
            out.push_str(&sweep::row_json(&plan, r).to_string());
            out.push('\n');
        }
        Ok(out)
    })
}

/// (name, description) of every built-in scenario.
#[pyfunction]
fn scenarios() -> Vec<(String, String)> {
    triage_sim::builtin::SCENARIOS
        .iter()
        .map(|(n, t)| {
            let desc = triage_sim::scenario::Scenario::parse(t, n).ok().and_then(|s| s.description).unwrap_or_default();
            (n.to_string(), desc)
        })
        .collect()
}

/// Names of the built-in pages (`builtin:NAME` in a scenario).
#[pyfunction]
fn pages() -> Vec<String> {
    triage_web::builtin::BUILTIN_PAGES.iter().map(|p| p.0.to_string()).collect()
}

/// The network profiles: (name, downlink bps, uplink bps, RTT ms, default queue packets, source).
#[pyfunction]
fn profiles() -> Vec<(String, u64, u64, u64, u64, String)> {
    triage_sim::scenario::PROFILES
        .iter()
        .map(|&(n, d, u, r, s)| {
            (n.to_string(), d, u, r, triage_sim::scenario::profile_queue_packets(d, r), s.to_string())
        })
        .collect()
}

/// The version of the simulator inside.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_text, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(load_base, m)?)?;
    m.add_function(wrap_pyfunction!(plan_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_rows, m)?)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(pages, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
