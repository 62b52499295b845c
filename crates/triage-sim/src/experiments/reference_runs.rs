//! `triage reproduce quic --reference-runs FILE`: our runs beside a set of the reference's own
//! runs, as spreads. The embedded reference has medians of 3 runs; under loss its runs differ
//! by seconds, so a comparison needs many runs of both: the files are JSON lines as the
//! reference's `run_matrix.py` writes them (`docs/data/*.jsonl`, `docs/quic-reference-runs.md`):
//! a record with `"kind": "quic"` holds `rate`, `owd_ms`, `loss`, `cc`, `mode` and
//! `client.groups[]` (`name`, `done_ms`); one with `"kind": "tcp"` (Linux TCP) holds `groups`
//! as an object of name to milliseconds; `"kind": "link"` records (the emulator's counters) are
//! passed over. A QUIC run whose client recorded no groups (it timed out) is counted as skipped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::quic::{QuicRun, QuicSetting};
use crate::sweep::quantile;
use serde::Serialize;
use serde_json::Value;

/// One reference run.
#[derive(Debug, Clone)]
pub struct RefRun {
    rate_bps: u64,
    owd_ms: f64,
    loss: f64,
    cc: String,
    mode: String,
    /// The link emulator's loss seed (`seed`), when the record has one.
    seed: Option<u64>,
    /// Groups by name with their completion, ms.
    groups: Vec<(String, f64)>,
}

/// The runs of the files given, and how many records had no result.
#[derive(Debug, Default)]
pub struct RefRuns {
    runs: Vec<RefRun>,
    /// QUIC records whose client recorded no groups.
    pub skipped: usize,
    /// The files, as given.
    pub files: Vec<String>,
}

/// Reads every file; an unreadable file, a line that is not JSON or a record without the
/// fields above is an error naming the file, the line and the field.
pub fn load(paths: &[PathBuf]) -> Result<RefRuns, String> {
    let mut out = RefRuns::default();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|e| format!("--reference-runs {}: {e}", path.display()))?;
        parse_into(&text, path, &mut out)?;
        out.files.push(path.display().to_string());
    }
    Ok(out)
}

/// The runs of one file's text (`name` for messages).
pub fn parse(text: &str, name: &Path) -> Result<RefRuns, String> {
    let mut out = RefRuns::default();
    parse_into(text, name, &mut out)?;
    Ok(out)
}

fn parse_into(text: &str, path: &Path, out: &mut RefRuns) -> Result<(), String> {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{}: not a JSON record: {e}", at()))?;
        match v.get("kind").and_then(Value::as_str) {
            Some("link") => {}
            Some(kind @ ("quic" | "tcp")) => match record(&v, kind, path, i + 1)? {
                Some(r) => out.runs.push(r),
                None => out.skipped += 1,
            },
            _ => return Err(format!("{}: expected \"kind\" to be \"quic\", \"tcp\" or \"link\"", at())),
        }
    }
    Ok(())
}

impl RefRuns {
    /// How many runs were read.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// No run was read.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The loss seeds of the runs of `s`'s cell (setting, loss, controller, mode) that
    /// record one, in file order.
    pub fn seeds_of(&self, s: &QuicSetting) -> Vec<u64> {
        self.runs.iter().filter(|r| r.is_of(s)).filter_map(|r| r.seed).collect()
    }

    /// Every run's rate (bit/s), one-way delay (ms), loss and group completions (ms).
    pub fn runs(&self) -> impl Iterator<Item = (u64, f64, f64, &[(String, f64)])> {
        self.runs.iter().map(|r| (r.rate_bps, r.owd_ms, r.loss, r.groups.as_slice()))
    }
}

impl RefRun {
    /// Whether this run is of `s`'s cell.
    fn is_of(&self, s: &QuicSetting) -> bool {
        s.is_cell(self.rate_bps, self.owd_ms, self.loss, &self.cc, &self.mode)
    }
}

/// A record's run; `None` for a QUIC run without groups.
fn record(v: &Value, kind: &str, path: &Path, line: usize) -> Result<Option<RefRun>, String> {
    let field = |name: &str| format!("{}:{line}: field {name:?}", path.display());
    let num =
        |name: &str| v.get(name).and_then(Value::as_f64).ok_or_else(|| format!("{}: expected a number", field(name)));
    let text = |name: &str| {
        v.get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("{}: expected a string", field(name)))
    };
    let rate = num("rate")?;
    if !(1.0..1e15).contains(&rate) {
        return Err(format!("{}: expected a rate in bit/s of at least 1, got {rate}", field("rate")));
    }
    let (owd_ms, loss, cc, mode) = (num("owd_ms")?, num("loss")?, text("cc")?, text("mode")?);
    if owd_ms < 0.0 {
        return Err(format!("{}: expected a delay of at least 0 ms, got {owd_ms}", field("owd_ms")));
    }
    if !(0.0..=1.0).contains(&loss) {
        return Err(format!("{}: expected a probability from 0 to 1, got {loss}", field("loss")));
    }
    let mut groups = Vec::new();
    if kind == "tcp" {
        let g = v
            .get("groups")
            .and_then(Value::as_object)
            .ok_or_else(|| format!("{}: expected an object", field("groups")))?;
        for (name, ms) in g {
            let ms =
                ms.as_f64().ok_or_else(|| format!("{}: expected milliseconds", field(&format!("groups.{name}"))))?;
            groups.push((name.clone(), ms));
        }
    } else {
        let Some(list) = v.get("client").and_then(|c| c.get("groups")).and_then(Value::as_array) else {
            return Ok(None);
        };
        for g in list {
            let name = g.get("name").and_then(Value::as_str);
            let ms = g.get("done_ms").and_then(Value::as_f64);
            match (name, ms) {
                (Some(n), Some(ms)) => groups.push((n.to_string(), ms)),
                _ => return Err(format!("{}: expected each group's \"name\" and \"done_ms\"", field("client.groups"))),
            }
        }
    }
    let seed = match v.get("seed") {
        None => None,
        Some(x) => Some(x.as_u64().ok_or_else(|| format!("{}: expected a non-negative integer", field("seed")))?),
    };
    Ok(Some(RefRun { rate_bps: rate.round() as u64, owd_ms, loss, cc, mode, seed, groups }))
}

/// Median and the 10th and 90th percentiles (linear between order statistics, numpy's
/// default) of a non-empty list.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Runs with a result.
    pub runs: usize,
    /// Median, ms.
    pub median_ms: f64,
    /// 10th percentile, ms.
    pub p10_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
}

fn spread(v: &[f64]) -> Option<Spread> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    Some(Spread { runs: s.len(), median_ms: quantile(&s, 0.5), p10_ms: quantile(&s, 0.1), p90_ms: quantile(&s, 0.9) })
}

/// One group (or `page`, the last group's completion) of one setting, controller and mode.
#[derive(Debug, Serialize)]
pub struct GroupComparison {
    /// The group's name, or `page`.
    pub group: String,
    /// Our runs.
    pub triage: Option<Spread>,
    /// The reference's runs.
    pub reference: Option<Spread>,
}

/// A setting, controller and mode both sides ran.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// Link rate.
    pub rate_bps: u64,
    /// One-way delay.
    pub owd_ms: f64,
    /// Random loss per packet and direction.
    pub loss: f64,
    /// Congestion controller.
    pub cc: String,
    /// Sending mode.
    pub mode: String,
    /// P4..P0, then `page`.
    pub groups: Vec<GroupComparison>,
}

impl Comparison {
    /// Whether this comparison is of `s`'s cell (setting, loss, controller, mode).
    pub fn is_for(&self, s: &QuicSetting) -> bool {
        s.is_cell(self.rate_bps, self.owd_ms, self.loss, &self.cc, &self.mode)
    }
}

/// Completions by group name, and the page (every group's latest) where all completed.
fn by_group(runs: &[Vec<(String, Option<f64>)>], names: &[String]) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new(); names.len() + 1];
    for run in runs {
        let mut page = Some(0f64);
        for (i, name) in names.iter().enumerate() {
            let ms = run.iter().find(|(n, _)| n == name).and_then(|(_, ms)| *ms);
            if let Some(ms) = ms {
                out[i].push(ms);
            }
            page = page.zip(ms).map(|(p, m)| p.max(m));
        }
        if let Some(p) = page {
            out[names.len()].push(p);
        }
    }
    out
}

/// For each setting, controller and mode of `ours` (in their order) that the reference runs
/// also have: each group's spread on both sides, then the page's.
pub fn compare(ours: &[QuicRun], refs: &RefRuns) -> Vec<Comparison> {
    let mut out: Vec<Comparison> = Vec::new();
    let mut seen: Vec<&QuicSetting> = Vec::new();
    for r in ours {
        let s = &r.setting;
        if seen.iter().any(|k| s.is_cell(k.rate_bps, k.owd_ms, k.loss, &k.cc, &k.mode)) {
            continue;
        }
        seen.push(s);
        let theirs: Vec<Vec<(String, Option<f64>)>> = refs
            .runs
            .iter()
            .filter(|x| x.is_of(s))
            .map(|x| x.groups.iter().map(|(n, ms)| (n.clone(), Some(*ms))).collect())
            .collect();
        if theirs.is_empty() {
            continue;
        }
        let mine: Vec<Vec<(String, Option<f64>)>> = ours
            .iter()
            .filter(|x| {
                let t = &x.setting;
                s.is_cell(t.rate_bps, t.owd_ms, t.loss, &t.cc, &t.mode)
            })
            .map(|x| x.groups.iter().map(|(n, g)| (n.clone(), g.completed_ms)).collect())
            .collect();
        let names: Vec<String> = r.groups.iter().map(|(n, _)| n.clone()).collect();
        let (a, b) = (by_group(&mine, &names), by_group(&theirs, &names));
        let groups = names
            .iter()
            .cloned()
            .chain(std::iter::once("page".to_string()))
            .enumerate()
            .map(|(i, group)| GroupComparison { group, triage: spread(&a[i]), reference: spread(&b[i]) })
            .collect();
        out.push(Comparison {
            rate_bps: s.rate_bps,
            owd_ms: s.owd_ms,
            loss: s.loss,
            cc: s.cc.clone(),
            mode: s.mode.clone(),
            groups,
        });
    }
    out
}

fn cell(s: Option<Spread>) -> String {
    match s {
        Some(s) => format!("{:.0} [{:.0}-{:.0}] n={}", s.median_ms, s.p10_ms, s.p90_ms, s.runs),
        None => "-".to_string(),
    }
}

/// The comparison as a table: per setting, controller, mode and group, median [p10-p90] of
/// ours and of the reference runs, and the medians' difference.
pub fn table(cmp: &[Comparison], refs: &RefRuns) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nAgainst the reference runs of {} (median [p10-p90] ms, n runs; page = the last group's completion{}):",
        refs.files.join(", "),
        if refs.skipped > 0 { format!("; {} runs without a result skipped", refs.skipped) } else { String::new() }
    );
    if cmp.is_empty() {
        let _ = writeln!(s, "  none of them ran the settings, controller and modes run here");
        return s;
    }
    let _ = writeln!(
        s,
        "{:<18} {:>5} {:<8} {:<6} {:<5} {:>26} {:>26} {:>10}",
        "setting", "loss", "cc", "mode", "group", "triage", "reference", "difference"
    );
    for c in cmp {
        let setting = format!("{} Mbps / {} ms", c.rate_bps as f64 / 1e6, c.owd_ms);
        for g in &c.groups {
            let diff = match (g.triage, g.reference) {
                (Some(a), Some(b)) if b.median_ms > 0.0 => {
                    format!("{:+.1}%", (a.median_ms - b.median_ms) / b.median_ms * 100.0)
                }
                _ => "-".to_string(),
            };
            let _ = writeln!(
                s,
                "{:<18} {:>4}% {:<8} {:<6} {:<5} {:>26} {:>26} {:>10}",
                setting,
                c.loss * 100.0,
                c.cc,
                c.mode,
                g.group,
                cell(g.triage),
                cell(g.reference),
                diff
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_order_statistics_as_numpy() {
        // numpy.percentile([1, 2, 3, 4], [10, 50, 90]) = 1.3, 2.5, 3.7
        let s = spread(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.runs, 4);
        assert!((s.p10_ms - 1.3).abs() < 1e-12 && (s.median_ms - 2.5).abs() < 1e-12 && (s.p90_ms - 3.7).abs() < 1e-12);
        let one = spread(&[7.0]).unwrap();
        assert_eq!((one.p10_ms, one.median_ms, one.p90_ms), (7.0, 7.0, 7.0));
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn the_page_is_each_runs_latest_group_and_needs_every_group() {
        let names = vec!["P1".to_string(), "P0".to_string()];
        let runs = vec![
            vec![("P1".to_string(), Some(10.0)), ("P0".to_string(), Some(30.0))],
            vec![("P1".to_string(), Some(50.0)), ("P0".to_string(), None)],
        ];
        let g = by_group(&runs, &names);
        assert_eq!(g, vec![vec![10.0, 50.0], vec![30.0], vec![30.0]]);
    }
}

/// One of our runs beside the reference run whose losses it replayed.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    /// The emulator seed both met.
    pub seed: u64,
    /// Our page (every group's latest completion), ms; `None` if a group never completed.
    pub triage_ms: Option<f64>,
    /// The reference's page, ms.
    pub reference_ms: f64,
}

/// The pairs of one setting, controller and mode, and what they say together.
#[derive(Debug, Serialize)]
pub struct PairedComparison {
    /// Link rate.
    pub rate_bps: u64,
    /// One-way delay.
    pub owd_ms: f64,
    /// Random loss per packet and direction.
    pub loss: f64,
    /// Congestion controller.
    pub cc: String,
    /// Sending mode.
    pub mode: String,
    /// Every pair, in the reference file's order.
    pub pairs: Vec<Pair>,
    /// Median over the pairs of ours / reference (pages), minus 1.
    pub median_ratio_minus_1: Option<f64>,
    /// Pairs where our page took longer.
    pub triage_slower: usize,
}

/// Pairs each of our runs that replayed a reference run's losses
/// ([`QuicSetting::replay_seed`](super::quic::QuicSetting::replay_seed)) with that run, by
/// setting, loss, controller, mode and seed (the first reference run not yet paired);
/// grouped by setting, controller and mode in the order of `ours`.
pub fn paired(ours: &[QuicRun], refs: &RefRuns) -> Vec<PairedComparison> {
    let mut out: Vec<PairedComparison> = Vec::new();
    // Each reference run pairs once: two files may hold runs of the same seed (a repeat of a
    // set meets the same losses), and each of ours, in the same order, takes the next.
    let mut used = vec![false; refs.runs.len()];
    for r in ours {
        let s = &r.setting;
        let Some(seed) = s.replay_seed else { continue };
        let Some((k, theirs)) =
            refs.runs.iter().enumerate().find(|&(k, x)| !used[k] && x.seed == Some(seed) && x.is_of(s))
        else {
            continue;
        };
        used[k] = true;
        let pair = Pair {
            seed,
            triage_ms: r.groups.iter().try_fold(0f64, |p, (_, g)| g.completed_ms.map(|m| p.max(m))),
            reference_ms: theirs.groups.iter().fold(0f64, |p, (_, ms)| p.max(*ms)),
        };
        let cell = out.iter_mut().find(|c| s.is_cell(c.rate_bps, c.owd_ms, c.loss, &c.cc, &c.mode));
        match cell {
            Some(c) => c.pairs.push(pair),
            None => out.push(PairedComparison {
                rate_bps: s.rate_bps,
                owd_ms: s.owd_ms,
                loss: s.loss,
                cc: s.cc.clone(),
                mode: s.mode.clone(),
                pairs: vec![pair],
                median_ratio_minus_1: None,
                triage_slower: 0,
            }),
        }
    }
    for c in &mut out {
        let mut ratios: Vec<f64> = c
            .pairs
            .iter()
            .filter_map(|p| p.triage_ms.filter(|_| p.reference_ms > 0.0).map(|t| t / p.reference_ms - 1.0))
            .collect();
        ratios.sort_by(f64::total_cmp);
        c.median_ratio_minus_1 = (!ratios.is_empty()).then(|| quantile(&ratios, 0.5));
        c.triage_slower = c.pairs.iter().filter(|p| p.triage_ms.is_none_or(|t| t > p.reference_ms)).count();
    }
    out
}

/// The paired comparison as a table: per setting, controller and mode, the pages' medians on
/// both sides, the median of the per-pair ratios and how many pairs ours was slower in.
pub fn paired_table(cells: &[PairedComparison]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nPaired with the reference runs (each of our runs met exactly the losses of the reference run with the same emulator seed):"
    );
    if cells.is_empty() {
        let _ = writeln!(s, "  no reference run with a seed matches the settings, controller and modes run here");
        return s;
    }
    let _ = writeln!(
        s,
        "{:<18} {:>5} {:<8} {:<6} {:>5} {:>12} {:>12} {:>17} {:>12}",
        "setting", "loss", "cc", "mode", "pairs", "triage med", "ref med", "median of ratios", "triage slower"
    );
    for c in cells {
        let mut t: Vec<f64> = c.pairs.iter().filter_map(|p| p.triage_ms).collect();
        let mut r: Vec<f64> = c.pairs.iter().map(|p| p.reference_ms).collect();
        t.sort_by(f64::total_cmp);
        r.sort_by(f64::total_cmp);
        let med = |v: &[f64]| if v.is_empty() { "-".to_string() } else { format!("{:.0}", quantile(v, 0.5)) };
        let _ = writeln!(
            s,
            "{:<18} {:>4}% {:<8} {:<6} {:>5} {:>12} {:>12} {:>17} {:>12}",
            format!("{} Mbps / {} ms", c.rate_bps as f64 / 1e6, c.owd_ms),
            c.loss * 100.0,
            c.cc,
            c.mode,
            c.pairs.len(),
            med(&t),
            med(&r),
            c.median_ratio_minus_1.map_or("-".to_string(), |x| format!("{:+.1}%", x * 100.0)),
            format!("{} of {}", c.triage_slower, c.pairs.len()),
        );
    }
    s
}
