//! Multipath scenarios: `[[paths]]` tables, named paths (presets) and `transport.multipath`.
//!
//! A scenario with `[[paths]]` is PriorityBucket's Fig. 2 (and mp-quic's evaluation
//! topology): two multi-homed hosts over disjoint paths. Path `i` is one duplex link between
//! the server's interface `s.i` and the client's interface `c.i`, as
//! [`crate::topology::multipath`] builds it, here with every link option a scenario link has
//! (trace-driven rates, loss, queues, jitter) and an outage window. Every flow runs between
//! `c.0` and `s.0` (path 0) and opens every other path as a path of its QUIC connection
//! (RFC 10069): TCP mode has one path, so `[[paths]]` need `mode = "quic"`.
//!
//! Checks that involve several tables (paths with `[topology]`, QUIC mode over flows and
//! variants, more than [`MAX_PATHS`]) run right after parsing, where the text is at hand,
//! and point at the value as the parser's own errors do (`fields::render_at`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use triage_core::path::sched::{EcfFormula, PriorityBucketConfig, SaEcfConfig};
use triage_core::quic::{MultipathConfig, PathPrior, PathSchedulerKind};

use crate::loss::LossModel;
use crate::scenario::{LinkToml, ModeName, Scenario, TransportToml};
use crate::scenario_ecn::QueueToml;
use crate::scenario_fields as fields;
use crate::scenario_resolved::ser;
use crate::trace::MahimahiTrace;
use crate::units::{Duration, Rate, Size};

/// Most `[[paths]]`: the most paths a QUIC connection of the core opens.
pub const MAX_PATHS: usize = triage_core::quic::QuicConnection::MAX_PATHS;

/// The Wi-Fi preset's rate, both directions: 20 Mbps. An assumption, not a measurement: a
/// home Wi-Fi behind a 20 Mbps line (WebPageTest's FIOS profile has a 20 Mbps downlink).
pub const WIFI_RATE_BPS: u64 = 20_000_000;
/// The Wi-Fi preset's one-way delay: 10 ms (20 ms RTT), the short-delay path of the
/// PriorityBucket paper's Table 2. An assumption too.
pub const WIFI_DELAY_NS: u64 = 10_000_000;
/// The LTE presets' one-way delay: 35 ms, half of WebPageTest's LTE profile RTT (70 ms,
/// ../shared/data/README.md). The Mahimahi traces give only delivery opportunities; their
/// recordings' delay is not part of them.
pub const LTE_DELAY_NS: u64 = 35_000_000;
/// Where presets find their traces: this folder under the scenario file's folder or one of
/// its parents, else under the current directory or one of its parents (the project's
/// `../shared`).
pub const PRESET_TRACE_DIR: &str = "shared/data/traces";

/// A named path: `preset = "wifi"` or an LTE trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum PathPreset {
    /// A constant [`WIFI_RATE_BPS`] each way, [`WIFI_DELAY_NS`] one way.
    #[serde(rename = "wifi")]
    Wifi,
    /// T-Mobile LTE (Mahimahi `TMobile-LTE-short`: 16.7 Mbps down, 13.3 up, 140 s),
    /// [`LTE_DELAY_NS`] one way.
    #[serde(rename = "lte-tmobile")]
    LteTmobile,
    /// Verizon LTE (`Verizon-LTE-short`: 5.0 Mbps down, 6.0 up, 140 s).
    #[serde(rename = "lte-verizon")]
    LteVerizon,
    /// AT&T LTE while driving (`ATT-LTE-driving-2016`: 4.6 Mbps down, 120 s).
    #[serde(rename = "lte-att")]
    LteAtt,
}

impl PathPreset {
    /// The name a scenario writes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Wifi => "wifi",
            Self::LteTmobile => "lte-tmobile",
            Self::LteVerizon => "lte-verizon",
            Self::LteAtt => "lte-att",
        }
    }

    /// The Mahimahi (downlink, uplink) trace files, for a trace-driven preset.
    pub fn traces(self) -> Option<(&'static str, &'static str)> {
        match self {
            Self::Wifi => None,
            Self::LteTmobile => Some(("TMobile-LTE-short.down", "TMobile-LTE-short.up")),
            Self::LteVerizon => Some(("Verizon-LTE-short.down", "Verizon-LTE-short.up")),
            Self::LteAtt => Some(("ATT-LTE-driving-2016.down", "ATT-LTE-driving-2016.up")),
        }
    }

    /// One-way propagation delay.
    pub fn delay_ns(self) -> u64 {
        match self {
            Self::Wifi => WIFI_DELAY_NS,
            _ => LTE_DELAY_NS,
        }
    }
}

/// One `[[paths]]` table: a duplex link `s.i` — `c.i`. The forward direction (`rate`,
/// `trace`, `loss`) is the downlink, server to client; the `reverse_*` fields are the uplink.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PathToml {
    /// Name in reports (default: the preset's name, else `path<i>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A named path; `delay`, `queue`, `loss` and the rest may still be given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<PathPreset>,
    /// Rate of both directions (or of the downlink when `reverse_rate` is given).
    #[serde(
        rename(serialize = "rate_bps"),
        alias = "rate_bps",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub rate: Option<Rate>,
    /// Uplink rate.
    #[serde(
        rename(serialize = "reverse_rate_bps"),
        alias = "reverse_rate_bps",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub reverse_rate: Option<Rate>,
    /// Mahimahi trace of the downlink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<PathBuf>,
    /// Mahimahi trace of the uplink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_trace: Option<PathBuf>,
    /// One-way propagation delay.
    #[serde(
        rename(serialize = "delay_ns"),
        alias = "delay_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub delay: Option<Duration>,
    /// Queue of each direction (default 1000 packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueToml>,
    /// Random loss, both directions (default none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossModel>,
    /// Uplink loss, when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossModel>,
    /// Extra random delay per packet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<fields::JitterSpec>,
    /// Probability of delivering a packet twice.
    #[serde(serialize_with = "ser::opt_prob", skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<crate::loss::Probability>,
    /// The path goes down (both directions lose every packet) at this time...
    #[serde(
        rename(serialize = "down_at_ns"),
        alias = "down_at_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub down_at: Option<Duration>,
    /// ... and comes back at this one (default: never).
    #[serde(
        rename(serialize = "up_at_ns"),
        alias = "up_at_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub up_at: Option<Duration>,
}

/// `transport.multipath`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MultipathToml {
    /// "single", "lrf", "sa_ecf" or "priority_bucket" (default: lrf over two or more paths).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<PathSchedulerName>,
    /// PTOs in a row that declare a path failed (default 2; 0: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_ptos: Option<u32>,
    /// Replace each path's bandwidth prior with its delivery-rate estimate (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_bandwidth: Option<bool>,
    /// PriorityBucket's options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority_bucket: Option<PriorityBucketToml>,
    /// SA-ECF's options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sa_ecf: Option<SaEcfToml>,
}

/// Path scheduler names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathSchedulerName {
    /// Everything on path 0.
    Single,
    /// Lowest-RTT-First.
    Lrf,
    /// Stream-Aware Earliest Completion First.
    SaEcf,
    /// PriorityBucket.
    PriorityBucket,
}

/// `transport.multipath.priority_bucket`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityBucketToml {
    /// A stream's last packet may go on any path that carries it (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_on_any_path: Option<bool>,
    /// Shares smaller than this move to the lowest-`r` path with a share (default 0).
    #[serde(serialize_with = "ser::opt_base", skip_serializing_if = "Option::is_none")]
    pub min_share_bytes: Option<Size>,
    /// Serve each path's buckets by the CATS debt rule instead of strict priority (default
    /// false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cats_fairness: Option<bool>,
}

/// `transport.multipath.sa_ecf`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SaEcfToml {
    /// Hysteresis β as [numerator, denominator] (default [1, 4]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta: Option<[u32; 2]>,
    /// "paper" (default) or "go_code".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formula: Option<EcfFormula>,
}

impl MultipathToml {
    /// The core's settings, without priors (the network gives those), with `default` as the
    /// scheduler when none is named; errors name the field under `multipath` (`sa_ecf.beta`).
    pub fn to_config(&self, default: PathSchedulerName) -> Result<MultipathConfig, (String, String)> {
        let d = MultipathConfig::default();
        let scheduler = self.scheduler.unwrap_or(default);
        if self.priority_bucket.is_some() && scheduler != PathSchedulerName::PriorityBucket {
            return Err((
                "priority_bucket".into(),
                "PriorityBucket's options need scheduler = \"priority_bucket\"".into(),
            ));
        }
        if self.sa_ecf.is_some() && scheduler != PathSchedulerName::SaEcf {
            return Err(("sa_ecf".into(), "SA-ECF's options need scheduler = \"sa_ecf\"".into()));
        }
        let scheduler = match scheduler {
            PathSchedulerName::Single => PathSchedulerKind::Single,
            PathSchedulerName::Lrf => PathSchedulerKind::Lrf,
            PathSchedulerName::SaEcf => {
                let c = self.sa_ecf.clone().unwrap_or_default();
                let base = SaEcfConfig::default();
                let beta = match c.beta {
                    None => base.beta,
                    Some([_, 0]) => {
                        return Err((
                            "sa_ecf.beta".into(),
                            "expected [numerator, denominator] with a positive denominator, like [1, 4]".into(),
                        ))
                    }
                    Some([n, d]) => (n, d),
                };
                PathSchedulerKind::SaEcf(SaEcfConfig { beta, formula: c.formula.unwrap_or(base.formula) })
            }
            PathSchedulerName::PriorityBucket => {
                let c = self.priority_bucket.clone().unwrap_or_default();
                let base = PriorityBucketConfig::default();
                PathSchedulerKind::PriorityBucket(PriorityBucketConfig {
                    tail_on_any_path: c.tail_on_any_path.unwrap_or(base.tail_on_any_path),
                    min_share_bytes: c.min_share_bytes.map_or(base.min_share_bytes, |s| s.0),
                    cats_fairness: c.cats_fairness.unwrap_or(base.cats_fairness),
                })
            }
        };
        Ok(MultipathConfig {
            scheduler,
            priors: Vec::new(),
            failure_ptos: self.failure_ptos.unwrap_or(d.failure_ptos),
            estimate_bandwidth: self.estimate_bandwidth.unwrap_or(d.estimate_bandwidth),
        })
    }
}

impl PathToml {
    /// The name reports use.
    pub fn report_name(&self, i: usize) -> String {
        match (&self.name, self.preset) {
            (Some(n), _) => n.clone(),
            (None, Some(p)) => p.name().to_string(),
            (None, None) => format!("path{i}"),
        }
    }

    /// The link this path is, with a preset's rate, traces and delay filled in (a preset's
    /// traces are found under [`PRESET_TRACE_DIR`]); errors name the field under `paths[i]`
    /// ("" for the table itself).
    pub fn to_link(&self, base_dir: Option<&Path>) -> Result<LinkToml, (String, String)> {
        let mut l = LinkToml {
            between: None,
            rate: self.rate,
            delay: Duration(0),
            queue: self.queue.clone(),
            loss: self.loss.clone(),
            trace: self.trace.clone(),
            reverse_trace: self.reverse_trace.clone(),
            reverse_rate: self.reverse_rate,
            reverse_loss: self.reverse_loss.clone(),
            jitter: self.jitter,
            duplicate: self.duplicate,
            overhead: None,
        };
        match self.preset {
            Some(p) => {
                l.delay = self.delay.unwrap_or(Duration(p.delay_ns()));
                match p.traces() {
                    None => l.rate = Some(Rate(WIFI_RATE_BPS)),
                    Some((down, up)) => {
                        let find = |f: &str| find_preset_trace(p, f, base_dir).map_err(|m| ("preset".to_string(), m));
                        l.trace = Some(find(down)?);
                        l.reverse_trace = Some(find(up)?);
                    }
                }
            }
            None => l.delay = self.delay.ok_or_else(|| (String::new(), "missing `delay` (one way)".to_string()))?,
        }
        Ok(l)
    }
}

/// A preset's trace file: `PRESET_TRACE_DIR/file` under the scenario's folder or a parent of
/// it, else under the current directory or a parent.
fn find_preset_trace(p: PathPreset, file: &str, base_dir: Option<&Path>) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().ok();
    let mut starts: Vec<PathBuf> = Vec::new();
    if let Some(b) = base_dir {
        starts.push(cwd.as_ref().map_or_else(|| b.to_path_buf(), |c| c.join(b)));
    }
    starts.extend(cwd.filter(|c| !starts.contains(c)));
    find_trace_from(p, file, &starts)
}

/// [`find_preset_trace`] from the folders `starts`.
fn find_trace_from(p: PathPreset, file: &str, starts: &[PathBuf]) -> Result<PathBuf, String> {
    for s in starts {
        for dir in s.ancestors() {
            let cand = dir.join(PRESET_TRACE_DIR).join(file);
            if cand.is_file() {
                return Ok(cand);
            }
        }
    }
    Err(format!(
        "\"{}\" reads {file} from {PRESET_TRACE_DIR}/ in a folder above the scenario file or the current \
         directory, and found none (searched from {}); write the path out instead: trace = \"…/{file}\", \
         reverse_trace = …, delay = \"{}ms\"",
        p.name(),
        starts.iter().map(|s| s.display().to_string()).collect::<Vec<_>>().join(" and "),
        p.delay_ns() / 1_000_000
    ))
}

/// The rate of one direction of `l` (0: the downlink, 1: the uplink) in bits per second: its
/// constant rate or its trace's mean over one period. `None` when unreadable (the network's
/// builder reports that).
pub fn direction_rate_bps(l: &LinkToml, dir: usize, base_dir: Option<&Path>) -> Option<u64> {
    let (trace, rate) = if dir == 0 { (&l.trace, l.rate) } else { (&l.reverse_trace, l.reverse_rate.or(l.rate)) };
    match trace {
        Some(t) => {
            let path = if t.is_absolute() { t.clone() } else { resolve(t, base_dir) };
            MahimahiTrace::from_file(&path).ok().map(|t| t.mean_rate_bps())
        }
        None => rate.map(|r| r.0),
    }
}

fn resolve(p: &Path, base: Option<&Path>) -> PathBuf {
    match base.map(|b| b.join(p)) {
        Some(c) if c.exists() => c,
        _ => p.to_path_buf(),
    }
}

/// What an end knows of each path before using it (PriorityBucket §4.1): the RTT as twice
/// the one-way delay and the rate of the direction it sends on (`dir` 0: downlink, the
/// server's; 1: uplink, the client's).
pub fn priors(links: &[LinkToml], dir: usize, base_dir: Option<&Path>) -> Vec<PathPrior> {
    links
        .iter()
        .map(|l| PathPrior {
            rtt_ns: Some(2 * l.delay.0),
            bandwidth_bps: direction_rate_bps(l, dir, base_dir).unwrap_or(0),
        })
        .collect()
}

/// The path scheduler of a `[[paths]]` scenario that names none: LRF (mp-quic's default,
/// PriorityBucket §5.2) over two paths or more, the single-path one over one.
pub fn default_scheduler(paths: usize) -> PathSchedulerName {
    if paths > 1 {
        PathSchedulerName::Lrf
    } else {
        PathSchedulerName::Single
    }
}

/// The transports of a scenario, each with the field path it is written at.
fn transports(s: &Scenario) -> Vec<(String, &TransportToml)> {
    let mut out = vec![("transport".to_string(), &s.transport)];
    out.extend(s.flows.iter().enumerate().map(|(i, f)| (format!("flows[{i}].transport"), &f.transport)));
    out.extend(s.variants.iter().enumerate().map(|(i, v)| (format!("variants[{i}].transport"), &v.transport)));
    out
}

/// The checks that span tables (see the module documentation): `(field, message)`.
pub fn check(s: &Scenario) -> Result<(), (String, String)> {
    if s.paths.is_empty() {
        if s.topology.is_none() {
            return Err((
                "topology".into(),
                "missing; a scenario needs a [topology] table or [[paths]] tables (a multipath network)".into(),
            ));
        }
        if let Some((at, _)) = transports(s).into_iter().find(|(_, t)| t.multipath.is_some()) {
            return Err((
                format!("{at}.multipath"),
                "needs [[paths]]: the multipath settings schedule a connection over several paths".into(),
            ));
        }
        return Ok(());
    }
    if s.topology.is_some() {
        return Err((
            "topology".into(),
            "a scenario with [[paths]] has no [topology]: its network is the paths (path i joins the server's \
             interface s.i to the client's c.i); remove one of them"
                .into(),
        ));
    }
    if s.paths.len() > MAX_PATHS {
        return Err((
            format!("paths[{MAX_PATHS}]"),
            format!("expected 1 to {MAX_PATHS} paths (a connection's most), got {}", s.paths.len()),
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for (i, p) in s.paths.iter().enumerate() {
        let at = format!("paths[{i}]");
        if let Some(preset) = p.preset {
            for (f, set) in [
                ("rate", p.rate.is_some()),
                ("reverse_rate", p.reverse_rate.is_some()),
                ("trace", p.trace.is_some()),
                ("reverse_trace", p.reverse_trace.is_some()),
            ] {
                if set {
                    return Err((
                        format!("{at}.{f}"),
                        format!(
                            "preset \"{}\" sets the path's rate or traces; remove `{f}` or the preset",
                            preset.name()
                        ),
                    ));
                }
            }
        } else {
            if p.rate.is_none() && p.trace.is_none() {
                return Err((
                    at,
                    "missing `rate` (or `trace`); expected a path like { rate = \"20Mbps\", delay = \"10ms\" }, \
                     a trace-driven one like { trace = \"x.down\", reverse_trace = \"x.up\", delay = \"35ms\" } \
                     or a preset such as preset = \"wifi\""
                        .into(),
                ));
            }
            if p.delay.is_none() {
                return Err((at, "missing `delay` (one way, like \"10ms\")".into()));
            }
        }
        for (rate, trace, rate_name, trace_name, dir) in [
            (p.rate.is_some(), p.trace.is_some(), "rate", "trace", "downlink"),
            (p.reverse_rate.is_some(), p.reverse_trace.is_some(), "reverse_rate", "reverse_trace", "uplink"),
        ] {
            if rate && trace {
                return Err((
                    format!("{at}.{rate_name}"),
                    format!(
                        "`{rate_name}` and `{trace_name}` together: the {dir} follows its trace, so the rate \
                         would be ignored; keep one{}",
                        if rate_name == "rate" && p.reverse_trace.is_none() && p.reverse_rate.is_none() {
                            " (give the uplink's rate as `reverse_rate`)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        if p.trace.is_some() && p.reverse_trace.is_none() && p.reverse_rate.is_none() && p.rate.is_none() {
            return Err((
                format!("{at}.trace"),
                "the uplink needs a rate too: add `reverse_trace` or `reverse_rate`".into(),
            ));
        }
        match (p.down_at, p.up_at) {
            (None, Some(_)) => {
                return Err((format!("{at}.up_at"), "a path comes back `up_at` after going down: add `down_at`".into()))
            }
            (Some(d), Some(u)) if u.0 <= d.0 => {
                return Err((format!("{at}.up_at"), format!("expected a time after down_at ({d}), got {u}")))
            }
            _ => {}
        }
        let name = p.report_name(i);
        if name.is_empty() {
            return Err((format!("{at}.name"), "expected a name of at least one character".into()));
        }
        if let Some(j) = names.iter().position(|n| *n == name) {
            let field = if p.name.is_some() { format!("{at}.name") } else { at.clone() };
            return Err((
                field,
                format!("\"{name}\" also names paths[{j}]; reports are per path name: give each path its own `name`"),
            ));
        }
        names.push(name);
    }
    // The scheduler's options, wherever a transport names them.
    for (at, t) in transports(s) {
        if let Some(m) = &t.multipath {
            m.to_config(default_scheduler(s.paths.len())).map_err(|(f, m)| (format!("{at}.multipath.{f}"), m))?;
        }
    }
    // Every flow runs from path 0's interfaces.
    for (i, f) in s.flows.iter().enumerate() {
        let ends = [f.client.as_str(), f.server.as_str()];
        if ends != ["c.0", "s.0"] && ends != ["s.0", "c.0"] {
            let field = if f.client == "c.0" || f.client == "s.0" { "server" } else { "client" };
            return Err((
                format!("flows[{i}].{field}"),
                "a flow over [[paths]] runs between path 0's interfaces, client = \"c.0\" and server = \"s.0\" \
                 (or the other way round), and opens every other path from there"
                    .into(),
            ));
        }
    }
    // TCP mode has one path: every flow of every variant must be a QUIC connection.
    let variants: Vec<Option<usize>> =
        if s.variants.is_empty() { vec![None] } else { (0..s.variants.len()).map(Some).collect() };
    for (i, f) in s.flows.iter().enumerate() {
        for v in &variants {
            let layers = [
                (v.map(|j| format!("variants[{j}].transport.mode")), v.and_then(|j| s.variants[j].transport.mode)),
                (Some(format!("flows[{i}].transport.mode")), f.transport.mode),
                (Some("transport.mode".to_string()), s.transport.mode),
            ];
            match layers.iter().find(|(_, m)| m.is_some()) {
                Some((_, Some(ModeName::Quic))) => {}
                Some((field, _)) => {
                    return Err((
                        field.clone().unwrap_or_default(),
                        "expected \"quic\": a scenario with [[paths]] runs multipath QUIC connections (TCP mode \
                         has one path)"
                            .into(),
                    ))
                }
                None => {
                    return Err((
                        "paths".into(),
                        "[[paths]] need QUIC mode (TCP mode has one path): set mode = \"quic\" in [transport]".into(),
                    ))
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_finds_its_trace_in_a_folder_above_or_says_what_to_write() {
        let root = std::env::temp_dir().join(format!("triage-preset-{}", std::process::id()));
        let deep = root.join("project/scenarios");
        let traces = root.join(PRESET_TRACE_DIR);
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(&traces).unwrap();
        std::fs::write(traces.join("ATT-LTE-driving-2016.down"), "1\n").unwrap();
        let found = find_trace_from(PathPreset::LteAtt, "ATT-LTE-driving-2016.down", std::slice::from_ref(&deep));
        assert_eq!(found.unwrap(), traces.join("ATT-LTE-driving-2016.down"));
        // The walk goes on above the temporary folder (a CI machine may well have a
        // `shared/data/traces` there), so the missing file carries a name no real folder holds.
        let missing = format!("triage-absent-{}.up", std::process::id());
        let e = find_trace_from(PathPreset::LteAtt, &missing, std::slice::from_ref(&deep)).unwrap_err();
        assert!(e.contains(&format!("\"lte-att\" reads {missing}")) && e.contains("delay = \"35ms\""), "{e}");
        assert!(e.contains(&deep.display().to_string()), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn presets_are_what_the_readme_says() {
        assert_eq!(PathPreset::Wifi.traces(), None);
        assert_eq!((PathPreset::Wifi.delay_ns(), WIFI_RATE_BPS), (10_000_000, 20_000_000));
        for p in [PathPreset::LteTmobile, PathPreset::LteVerizon, PathPreset::LteAtt] {
            assert_eq!(p.delay_ns(), 35_000_000, "{}", p.name());
            assert!(p.traces().is_some());
        }
    }
}
