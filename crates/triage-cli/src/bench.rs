//! `triage bench`: simulator speed, per scenario, and against a reference program.
//!
//! Every repetition runs each scenario once and then the reference command once, so that
//! a load change on the machine hits all of them alike (interleaved); the figure reported
//! for each is the median of its repetitions, and the ratio is median against median.
//! The binary counts heap allocations (a [`GlobalAlloc`] wrapper around its allocator,
//! mimalloc, with one relaxed atomic counter), and the benchmark reports them per
//! packet-hop over the second half of the simulated time (steady state: connections,
//! queues and pipes have reached their size) and over the whole run. The first repetition
//! splits at half the scenario's stop time and finds when the run really ends; later ones
//! split at half of that, which is the steady-state figure reported when there are several.
//!
//! With several scenarios, each after the first also gets its cost per packet-hop against
//! the first's as the median of the per-repetition ratios: each pair ran back to back, so
//! a machine whose speed drifts between seconds (a shared virtual machine) moves both. That
//! is how the README's scaling section compares 512 flows with 2. And the run as a whole gets
//! its spread: in each repetition, the costliest scenario's time per packet-hop over the
//! cheapest's, as a median over the repetitions, which is how the same section reads the
//! whole grid of flow counts and rates at once.
//!
//! `--out DIR` keeps every run (runs.csv), the summary (scenarios.csv, bench.json) and
//! charts of the repetitions, so that the drift a median hides can be seen.

use std::alloc::{GlobalAlloc, Layout};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use triage_core::TransportMode;
use triage_sim::report::RunReport;

use crate::chart::{self, RepSeries};
use crate::table::{CsvFile, RunParams};

/// The binary's allocator, counting allocations (reallocations count as one each).
///
/// mimalloc rather than the system's (glibc): mimalloc commits its arena eagerly, and where
/// the kernel's transparent huge pages are on (`madvise` mode or `always`) the arena is
/// backed by 2 MiB pages, so that the scattered per-flow state of a many-flow run costs
/// fewer TLB misses and no page faults during the run. A 512-flow dumbbell at 100 Mbps
/// costs about 6% less per packet-hop against 2 flows, a gain that disappears with huge
/// pages turned off for the process; the price is 10-30 MiB more peak memory (README,
/// Performance, "An eighth round"). No result depends on the allocator (every output is
/// byte-identical).
struct CountingAlloc;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to mimalloc, itself a `GlobalAlloc`; the counter
// does not touch the memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Heap allocations made by this process so far.
fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Arguments of `triage bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Scenario to time, a file or a built-in name; repeat the option to time several in one
    /// run (for example a TCP-mode, a QUIC-mode and a multipath scenario, side by side): each
    /// after the first gets its cost per packet-hop against the first's, and the run its
    /// spread, the costliest scenario's cost over the cheapest's within each repetition.
    /// Default: the built-in `bench-dumbbell`, two long bulk transfers.
    #[arg(long = "scenario", default_value = "bench-dumbbell")]
    scenarios: Vec<String>,
    /// Repetitions, interleaved (each scenario, then the reference, then again); the median
    /// of each is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// A reference command to time in the same run (for example an ns-3 program), so the
    /// result is a ratio measured on the same machine at the same moment.
    #[arg(long, value_name = "CMD")]
    reference: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Also write into this directory: bench.json (what --json prints), runs.csv (every run,
    /// each repetition of each scenario and of the reference), scenarios.csv (the summary)
    /// and SVG charts of the repetitions: ns per packet-hop, and with several scenarios each
    /// one's cost per packet-hop against the first's and the spread (the costliest one's cost
    /// over the cheapest's), and with a reference its wall time over ours.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct BenchReport {
    repetitions: u32,
    scenarios: Vec<ScenarioTiming>,
    reference: Option<ReferenceTiming>,
    /// With several scenarios: how far apart their costs per packet-hop lie, whole runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    spread: Option<Spread>,
    /// The same over the second halves (none without a repetition in which every scenario
    /// moved packets in its second half).
    #[serde(skip_serializing_if = "Option::is_none")]
    steady_spread: Option<Spread>,
}

/// The costliest scenario's time per packet-hop over the cheapest's, taken within each
/// repetition (so that a machine whose speed drifts moves both), over the repetitions.
#[derive(Debug, PartialEq, serde::Serialize)]
struct Spread {
    /// The median over the repetitions of the largest cost per packet-hop over the smallest.
    per_hop_cost_max_over_min: f64,
    /// The middle half of those ratios, first and third quartile ([`quartiles`]).
    per_hop_cost_max_over_min_middle_half: [f64; 2],
    /// How many repetitions the figures are taken over.
    repetitions: usize,
    /// The scenario that was the costliest in the most repetitions (the earlier one on a tie).
    costliest: String,
    /// The scenario that was the cheapest in the most repetitions (the earlier one on a tie).
    cheapest: String,
}

#[derive(serde::Serialize)]
struct ScenarioTiming {
    scenario: String,
    /// "tcp", "quic" or "quic-multipath" (QUIC mode with more than one path).
    mode: &'static str,
    packet_hops: u64,
    events: u64,
    simulated_ms: f64,
    median_wall_s: f64,
    min_wall_s: f64,
    max_wall_s: f64,
    /// Each repetition's wall time, in the order they ran.
    wall_s: Vec<f64>,
    packet_hops_per_s: f64,
    events_per_s: f64,
    ns_per_packet_hop: f64,
    /// Heap allocations per packet-hop over the second half of the simulated time (none
    /// when no packet moved then).
    steady_allocations_per_packet_hop: Option<f64>,
    /// Heap allocations per packet-hop over the whole run (connection setup included).
    allocations_per_packet_hop: f64,
    /// Packet-hops in the second half of the simulated time (the steady state: connections
    /// open, initial windows and the losses they bring mostly over). Counted, like the
    /// steady-state allocations, in every repetition but the first when there are several
    /// (the first fixes where the half lies).
    steady_packet_hops: u64,
    /// Wall time of the second half in each of those repetitions, in the order they ran.
    steady_wall_s: Vec<f64>,
    /// The median of those wall times per second-half packet-hop (none when no packet moved
    /// then): the cost per packet-hop without the start.
    steady_ns_per_packet_hop: Option<f64>,
    /// The reference's median wall time over ours.
    #[serde(skip_serializing_if = "Option::is_none")]
    reference_over_ours: Option<f64>,
    /// The middle half ([`quartiles`]) of the repetitions' own ratios, the reference's wall
    /// time over this scenario's in the same repetition: how far one repetition strays.
    #[serde(skip_serializing_if = "Option::is_none")]
    reference_over_ours_middle_half: Option<[f64; 2]>,
    /// Scenarios after the first: the median over repetitions of this scenario's wall time
    /// per packet-hop over the first scenario's in the same repetition.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_hop_cost_vs_first: Option<f64>,
    /// The middle half of those ratios, first and third quartile ([`quartiles`]): how much
    /// the pairs scatter around their median.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_hop_cost_vs_first_middle_half: Option<[f64; 2]>,
    /// [`per_hop_cost_vs_first`](Self::per_hop_cost_vs_first) of the second halves: the
    /// median over the same repetitions of the two steady-state costs per packet-hop.
    #[serde(skip_serializing_if = "Option::is_none")]
    steady_per_hop_cost_vs_first: Option<f64>,
    /// The middle half of the second halves' ratios.
    #[serde(skip_serializing_if = "Option::is_none")]
    steady_per_hop_cost_vs_first_middle_half: Option<[f64; 2]>,
}

#[derive(serde::Serialize)]
struct ReferenceTiming {
    command: String,
    median_wall_s: f64,
    min_wall_s: f64,
    max_wall_s: f64,
    /// Each repetition's wall time, in the order they ran.
    wall_s: Vec<f64>,
}

/// One timed run of a scenario.
struct Sample {
    wall_s: f64,
    report: RunReport,
    mode: &'static str,
    steady: (u64, u64),
    whole: (u64, u64),
    end_ns: u64,
    /// Wall time of the run from the split to the end.
    steady_wall_s: f64,
}

impl Sample {
    /// Wall time per packet-hop over the whole run.
    fn per_hop(&self) -> f64 {
        self.wall_s / self.report.packet_hops.max(1) as f64
    }

    /// Wall time per packet-hop over the second half (none when no packet moved then).
    fn steady_per_hop(&self) -> Option<f64> {
        (self.steady.1 > 0).then(|| self.steady_wall_s / self.steady.1 as f64)
    }
}

/// The median of a non-empty list (the mean of the middle two for an even count).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The first and third quartiles of a non-empty list, as the medians of its lower and upper
/// halves (the middle value of an odd count in neither; a single value is both).
fn quartiles(xs: &[f64]) -> [f64; 2] {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let half = v.len() / 2;
    if half == 0 {
        return [v[0], v[0]];
    }
    [median(&v[..half]), median(&v[v.len() - half..])]
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// Runs one scenario once: until `split_ns` (half the stop time when `None`), then the
/// rest, counting allocations, packet-hops and wall time in each (the two calls give the
/// same events as one).
#[allow(clippy::disallowed_methods)]
fn run_once(name: &str, split_ns: Option<u64>) -> Result<Sample, String> {
    let (scenario, file, dir, _) = crate::load(name)?;
    let built = scenario.build(&file, dir.as_deref()).map_err(|e| e.to_string())?;
    let mut sim = built.sim;
    let half_ns = split_ns.unwrap_or(built.stop_ns / 2);
    let mode = {
        let mut quic = false;
        let mut multipath = false;
        let mut f = 0;
        while let Some(spec) = sim.flow_spec(f) {
            quic |= spec.client_transport.mode == TransportMode::Quic;
            multipath |= !spec.extra_paths.is_empty();
            f += 1;
        }
        match (quic, multipath) {
            (false, _) => "tcp",
            (true, false) => "quic",
            (true, true) => "quic-multipath",
        }
    };
    let a0 = allocations();
    let t0 = Instant::now();
    sim.run(half_ns, |_| {});
    let a1 = allocations();
    let h1 = sim.stats().packet_hops;
    let t1 = Instant::now();
    sim.run(built.stop_ns, |_| {});
    let end = Instant::now();
    let (wall_s, steady_wall_s) = ((end - t0).as_secs_f64(), (end - t1).as_secs_f64());
    let a2 = allocations();
    let h2 = sim.stats().packet_hops;
    let report = RunReport::new(&scenario.name, scenario.seed, &sim);
    let end_ns = sim.now_ns();
    Ok(Sample { wall_s, report, mode, steady: (a2 - a1, h2 - h1), whole: (a2 - a0, h2), end_ns, steady_wall_s })
}

/// The spread of several scenarios' costs: `costs[scenario][repetition]`, none where a
/// repetition has no figure for that scenario (a repetition missing any is left out).
/// None with fewer than two scenarios or no complete repetition.
fn spread(names: &[String], costs: &[Vec<Option<f64>>]) -> Option<Spread> {
    let each: Vec<(f64, usize, usize)> = rep_spreads(costs).into_iter().flatten().collect();
    if each.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = each.iter().map(|e| e.0).collect();
    // The scenario in a role most often (the earlier one on a tie).
    let most = |role: &dyn Fn(&(f64, usize, usize)) -> usize| {
        let mut n = vec![0usize; costs.len()];
        each.iter().for_each(|e| n[role(e)] += 1);
        (0..n.len()).fold(0, |b, i| if n[i] > n[b] { i } else { b })
    };
    Some(Spread {
        per_hop_cost_max_over_min: median(&ratios),
        per_hop_cost_max_over_min_middle_half: quartiles(&ratios),
        repetitions: ratios.len(),
        costliest: names[most(&|e| e.1)].clone(),
        cheapest: names[most(&|e| e.2)].clone(),
    })
}

/// Per repetition of `costs[scenario][repetition]`: the largest cost over the smallest and
/// the indices of those two scenarios (the first of equal costs in each role), or none where
/// a scenario has no figure; nothing at all with fewer than two scenarios.
fn rep_spreads(costs: &[Vec<Option<f64>>]) -> Vec<Option<(f64, usize, usize)>> {
    if costs.len() < 2 {
        return Vec::new();
    }
    let reps = costs.iter().map(Vec::len).min().unwrap_or(0);
    (0..reps)
        .map(|r| {
            let row = costs.iter().map(|c| c[r]).collect::<Option<Vec<f64>>>()?;
            let hi = (0..row.len()).fold(0, |b, i| if row[i] > row[b] { i } else { b });
            let lo = (0..row.len()).fold(0, |b, i| if row[i] < row[b] { i } else { b });
            Some((row[hi] / row[lo], hi, lo))
        })
        .collect()
}

/// Every scenario's cost per packet-hop in every repetition, `[scenario][repetition]`: whole
/// runs, or second halves (none in the first repetition when there are several, see
/// `steady_packet_hops`).
fn costs(samples: &[Vec<Sample>], steady: bool) -> Vec<Vec<Option<f64>>> {
    samples
        .iter()
        .map(|s| {
            let first = first_steady(s.len());
            s.iter()
                .enumerate()
                .map(|(r, x)| if steady { x.steady_per_hop().filter(|_| r >= first) } else { Some(x.per_hop()) })
                .collect()
        })
        .collect()
}

/// The first of `reps` repetitions whose second half counts toward the steady state: every
/// repetition but the first when there are several (the first fixes where the half lies;
/// see `steady_packet_hops`).
fn first_steady(reps: usize) -> usize {
    usize::from(reps > 1)
}

/// Allocations per packet-hop, from (allocations, packet-hops) sums.
fn per(n: (u64, u64)) -> Option<f64> {
    (n.1 > 0).then(|| n.0 as f64 / n.1 as f64)
}

/// Runs the benchmark. The command line, unlike the sans-IO core, may read the clock: wall
/// time is what it measures.
#[allow(clippy::disallowed_methods)]
pub fn run(a: BenchArgs) -> Result<(), String> {
    // The output directory first: a wrong one fails before minutes of timing, not after.
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot make it the --out directory: {e}", dir.display()))?;
    }
    let mut samples: Vec<Vec<Sample>> = a.scenarios.iter().map(|_| Vec::new()).collect();
    let mut ref_walls = Vec::new();
    // One step per run of a scenario or of the reference (a reference run takes seconds).
    let steps = u64::from(a.repeat) * (a.scenarios.len() as u64 + u64::from(a.reference.is_some()));
    let bar = crate::counting_bar(steps, 1, "run", "eta {eta}");
    for _ in 0..a.repeat {
        for (i, name) in a.scenarios.iter().enumerate() {
            let split = samples[i].first().map(|s: &Sample| s.end_ns / 2);
            samples[i].push(run_once(name, split)?);
            bar.inc(1);
        }
        if let Some(cmd) = &a.reference {
            let t0 = Instant::now();
            let st = std::process::Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("reference command: {e}"))?;
            if !st.success() {
                return Err(format!("reference command failed: {cmd}"));
            }
            ref_walls.push(t0.elapsed().as_secs_f64());
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let reference = a.reference.as_ref().map(|cmd| {
        let (lo, hi) = min_max(&ref_walls);
        ReferenceTiming {
            command: cmd.clone(),
            median_wall_s: median(&ref_walls),
            min_wall_s: lo,
            max_wall_s: hi,
            wall_s: ref_walls.clone(),
        }
    });
    let names: Vec<String> = samples.iter().map(|s| s[0].report.scenario.clone()).collect();
    let mut out = BenchReport {
        repetitions: a.repeat,
        scenarios: Vec::new(),
        reference,
        spread: spread(&names, &costs(&samples, false)),
        steady_spread: spread(&names, &costs(&samples, true)),
    };
    for (i, s) in samples.iter().enumerate() {
        let walls: Vec<f64> = s.iter().map(|x| x.wall_s).collect();
        let med = median(&walls);
        let (lo, hi) = min_max(&walls);
        let last = s.last().expect("ran at least once");
        let r = &last.report;
        // Split at half the run's real length: every repetition but the first, when there are several.
        let split_at_end = &s[first_steady(s.len())..];
        let steady_costs: Vec<f64> = split_at_end.iter().filter_map(Sample::steady_per_hop).collect();
        let steady = split_at_end.iter().fold((0, 0), |acc, x| (acc.0 + x.steady.0, acc.1 + x.steady.1));
        let whole = s.iter().fold((0, 0), |acc, x| (acc.0 + x.whole.0, acc.1 + x.whole.1));
        // Scenarios after the first: each repetition's time per packet-hop over the first
        // scenario's in the same repetition, whole runs and second halves.
        let pair_ratios: Option<Vec<f64>> =
            (i > 0).then(|| s.iter().zip(&samples[0]).map(|(x, y)| x.per_hop() / y.per_hop()).collect());
        let steady_ratios: Option<Vec<f64>> = (i > 0)
            .then(|| {
                let first = &samples[0][first_steady(samples[0].len())..];
                split_at_end
                    .iter()
                    .zip(first)
                    .filter_map(|(x, y)| Some(x.steady_per_hop()? / y.steady_per_hop()?))
                    .collect()
            })
            .filter(|r: &Vec<f64>| !r.is_empty());
        out.scenarios.push(ScenarioTiming {
            scenario: r.scenario.clone(),
            mode: last.mode,
            packet_hops: r.packet_hops,
            events: r.events,
            simulated_ms: r.end_ms,
            median_wall_s: med,
            min_wall_s: lo,
            max_wall_s: hi,
            wall_s: walls,
            packet_hops_per_s: r.packet_hops as f64 / med,
            events_per_s: r.events as f64 / med,
            ns_per_packet_hop: if r.packet_hops == 0 { 0.0 } else { med * 1e9 / r.packet_hops as f64 },
            steady_allocations_per_packet_hop: per(steady),
            allocations_per_packet_hop: per(whole).unwrap_or(0.0),
            steady_packet_hops: split_at_end.last().map_or(0, |x| x.steady.1),
            steady_wall_s: split_at_end.iter().map(|x| x.steady_wall_s).collect(),
            steady_ns_per_packet_hop: (!steady_costs.is_empty()).then(|| median(&steady_costs) * 1e9),
            reference_over_ours: out.reference.as_ref().map(|rf| rf.median_wall_s / med),
            reference_over_ours_middle_half: (!ref_walls.is_empty())
                .then(|| quartiles(&ref_walls.iter().zip(s).map(|(w, x)| w / x.wall_s).collect::<Vec<_>>())),
            per_hop_cost_vs_first: pair_ratios.as_deref().map(median),
            per_hop_cost_vs_first_middle_half: pair_ratios.as_deref().map(quartiles),
            steady_per_hop_cost_vs_first: steady_ratios.as_deref().map(median),
            steady_per_hop_cost_vs_first_middle_half: steady_ratios.as_deref().map(quartiles),
        });
    }
    let json = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    if let Some(dir) = &a.out {
        write_out(dir, &json, &samples, &ref_walls, &out)?;
    }
    if a.json {
        outln!("{json}");
        return Ok(());
    }
    for t in &out.scenarios {
        outln!("scenario         {} ({} mode)", t.scenario, t.mode);
        outln!("simulated        {:.1} s", t.simulated_ms / 1000.0);
        outln!("packet-hops      {}", t.packet_hops);
        outln!("events           {}", t.events);
        outln!(
            "wall time        median {:.3} s of {} (min {:.3}, max {:.3})",
            t.median_wall_s,
            a.repeat,
            t.min_wall_s,
            t.max_wall_s
        );
        outln!("packet-hops/s    {:.3e}", t.packet_hops_per_s);
        outln!("events/s         {:.3e}", t.events_per_s);
        outln!("ns/packet-hop    {:.1}", t.ns_per_packet_hop);
        if let Some(x) = t.steady_ns_per_packet_hop {
            outln!("  steady state   {x:.1} (second half: {} packet-hops)", t.steady_packet_hops);
        }
        let steady = t.steady_allocations_per_packet_hop.map_or_else(|| "n/a".to_string(), |x| format!("{x:.4}"));
        outln!(
            "allocations      {steady} per packet-hop in steady state (second half), {:.4} over the run",
            t.allocations_per_packet_hop
        );
        if let Some(x) = t.reference_over_ours {
            let spread = t.reference_over_ours_middle_half.map_or_else(String::new, |[q1, q3]| {
                format!("; repetition by repetition, middle half {q1:.1}-{q3:.1}x")
            });
            outln!("speed ratio      {x:.1}x (reference median wall time / ours{spread})");
        }
        if let (Some(x), Some([q1, q3])) = (t.per_hop_cost_vs_first, t.per_hop_cost_vs_first_middle_half) {
            outln!(
                "vs first         {x:.2}x the first scenario's time per packet-hop (median of {} back-to-back pairs; middle half {q1:.2}-{q3:.2})",
                a.repeat
            );
        }
        if let (Some(x), Some([q1, q3])) = (t.steady_per_hop_cost_vs_first, t.steady_per_hop_cost_vs_first_middle_half)
        {
            let n = t.steady_wall_s.len();
            outln!(
                "  steady state   {x:.2}x (second halves, median of {n} pair{}; middle half {q1:.2}-{q3:.2})",
                if n == 1 { "" } else { "s" }
            );
        }
        outln!();
    }
    for (label, sp) in [("spread          ", &out.spread), ("  steady state  ", &out.steady_spread)] {
        if let Some(sp) = sp {
            let [q1, q3] = sp.per_hop_cost_max_over_min_middle_half;
            outln!(
                "{label} {:.2}x the costliest scenario's time per packet-hop over the cheapest's (median of {} repetition{}; middle half {q1:.2}-{q3:.2}; costliest {}, cheapest {})",
                sp.per_hop_cost_max_over_min,
                sp.repetitions,
                if sp.repetitions == 1 { "" } else { "s" },
                sp.costliest,
                sp.cheapest
            );
        }
    }
    if out.spread.is_some() {
        outln!();
    }
    if let Some(rf) = &out.reference {
        outln!(
            "reference        {} : median {:.3} s of {} (min {:.3}, max {:.3})",
            rf.command,
            rf.median_wall_s,
            a.repeat,
            rf.min_wall_s,
            rf.max_wall_s
        );
    }
    Ok(())
}

/// The columns of runs.csv after the parameter columns.
const RUNS_COLUMNS: [&str; 14] = [
    "repetition",
    "kind",
    "mode",
    "wall_s",
    "packet_hops",
    "events",
    "ns_per_packet_hop",
    "allocations",
    "steady_wall_s",
    "steady_packet_hops",
    "steady_ns_per_packet_hop",
    "steady_allocations",
    "per_hop_cost_vs_first",
    "steady_per_hop_cost_vs_first",
];

/// The cells of one run's row in runs.csv, from its wall time and counts; the second
/// half's only when `steady` (that run's half is the one the summary counts).
fn run_cells(x: &Sample, steady: bool) -> [String; 9] {
    let hops = x.report.packet_hops;
    let opt = |v: Option<String>| v.unwrap_or_default();
    [
        x.wall_s.to_string(),
        hops.to_string(),
        x.report.events.to_string(),
        opt((hops > 0).then(|| (x.per_hop() * 1e9).to_string())),
        x.whole.0.to_string(),
        opt(steady.then(|| x.steady_wall_s.to_string())),
        opt(steady.then(|| x.steady.1.to_string())),
        opt(x.steady_per_hop().filter(|_| steady).map(|v| (v * 1e9).to_string())),
        opt(steady.then(|| x.steady.0.to_string())),
    ]
}

/// `--out DIR`: bench.json, runs.csv, scenarios.csv and the charts of the repetitions.
fn write_out(
    dir: &Path,
    json: &str,
    samples: &[Vec<Sample>],
    ref_walls: &[f64],
    report: &BenchReport,
) -> Result<(), String> {
    let err = |p: &Path, e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| err(dir, &e))?;
    let path = dir.join("bench.json");
    std::fs::write(&path, format!("{json}\n")).map_err(|e| err(&path, &e))?;
    let reps = samples.first().map_or(0, Vec::len);
    let counted = |r: usize| r >= first_steady(reps);

    // Both files begin with the parameter columns every CSV of triage has (scenario,
    // variant, seed, version); a reference's rows name its command as the scenario.
    let params = |x: &Sample| RunParams {
        scenario: x.report.scenario.clone(),
        variant: String::new(),
        seed: Some(x.report.seed),
    };
    let mut w = CsvFile::create(&dir.join("runs.csv"), &RUNS_COLUMNS)?;
    for r in 0..reps {
        for (i, s) in samples.iter().enumerate() {
            let x = &s[r];
            let first = &samples[0][r];
            let vs = (i > 0).then(|| (x.per_hop() / first.per_hop()).to_string());
            let steady_vs = (i > 0 && counted(r))
                .then(|| Some(x.steady_per_hop()? / first.steady_per_hop()?))
                .flatten()
                .map(|v| v.to_string());
            let mut row = vec![(r + 1).to_string(), "scenario".into(), x.mode.into()];
            row.extend(run_cells(x, counted(r)));
            row.extend([vs.unwrap_or_default(), steady_vs.unwrap_or_default()]);
            w.row(&params(x), &row)?;
        }
        if let (Some(rf), Some(wall)) = (&report.reference, ref_walls.get(r)) {
            let mut row = vec![(r + 1).to_string(), "reference".into(), String::new(), wall.to_string()];
            row.resize(RUNS_COLUMNS.len(), String::new());
            w.row(&RunParams::command(&rf.command), &row)?;
        }
    }
    w.finish()?;

    let mut w = CsvFile::create(
        &dir.join("scenarios.csv"),
        &[
            "mode",
            "repetitions",
            "packet_hops",
            "events",
            "simulated_ms",
            "median_wall_s",
            "min_wall_s",
            "max_wall_s",
            "packet_hops_per_s",
            "events_per_s",
            "ns_per_packet_hop",
            "steady_packet_hops",
            "steady_ns_per_packet_hop",
            "allocations_per_packet_hop",
            "steady_allocations_per_packet_hop",
            "reference_median_wall_s",
            "reference_over_ours",
            "reference_over_ours_q1",
            "reference_over_ours_q3",
            "per_hop_cost_vs_first",
            "per_hop_cost_vs_first_q1",
            "per_hop_cost_vs_first_q3",
            "steady_per_hop_cost_vs_first",
            "steady_per_hop_cost_vs_first_q1",
            "steady_per_hop_cost_vs_first_q3",
        ],
    )?;
    let cell = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for (t, s) in report.scenarios.iter().zip(samples) {
        let q = |h: Option<[f64; 2]>, k: usize| cell(h.map(|h| h[k]));
        let row = [
            t.mode.into(),
            report.repetitions.to_string(),
            t.packet_hops.to_string(),
            t.events.to_string(),
            t.simulated_ms.to_string(),
            t.median_wall_s.to_string(),
            t.min_wall_s.to_string(),
            t.max_wall_s.to_string(),
            t.packet_hops_per_s.to_string(),
            t.events_per_s.to_string(),
            t.ns_per_packet_hop.to_string(),
            t.steady_packet_hops.to_string(),
            cell(t.steady_ns_per_packet_hop),
            t.allocations_per_packet_hop.to_string(),
            cell(t.steady_allocations_per_packet_hop),
            cell(report.reference.as_ref().map(|r| r.median_wall_s)),
            cell(t.reference_over_ours),
            q(t.reference_over_ours_middle_half, 0),
            q(t.reference_over_ours_middle_half, 1),
            cell(t.per_hop_cost_vs_first),
            q(t.per_hop_cost_vs_first_middle_half, 0),
            q(t.per_hop_cost_vs_first_middle_half, 1),
            cell(t.steady_per_hop_cost_vs_first),
            q(t.steady_per_hop_cost_vs_first_middle_half, 0),
            q(t.steady_per_hop_cost_vs_first_middle_half, 1),
        ];
        w.row(&params(&s[0]), &row)?;
    }
    w.finish()?;

    // Charts: a scenario's whole runs as a joined line, its second halves as hollow dots.
    let chart_err = |p: &Path, e: Box<dyn std::error::Error>| format!("{}: {e}", p.display());
    // `f` and `g` give the whole run's and the second half's value of a scenario's run in
    // repetition r.
    type Value<'a> = &'a dyn Fn(usize, &Sample) -> Option<f64>;
    let series = |f: Value, g: Value, from: usize| {
        let mut v = Vec::new();
        for (i, s) in samples.iter().enumerate().skip(from) {
            let name = &s[0].report.scenario;
            v.push(RepSeries {
                label: name.clone(),
                values: s.iter().enumerate().map(|(r, x)| f(r, x)).collect(),
                colour: i,
                joined: true,
            });
            let steady: Vec<Option<f64>> =
                s.iter().enumerate().map(|(r, x)| if counted(r) { g(r, x) } else { None }).collect();
            if steady.iter().any(Option::is_some) {
                v.push(RepSeries { label: format!("{name}, second half"), values: steady, colour: i, joined: false });
            }
        }
        v
    };
    let path = dir.join("ns_per_packet_hop.svg");
    let cost = series(&|_, x| Some(x.per_hop() * 1e9), &|_, x| x.steady_per_hop().map(|v| v * 1e9), 0);
    chart::per_repetition(&path, "Time per packet-hop, each repetition", "ns per packet-hop", &cost)
        .map_err(|e| chart_err(&path, e))?;
    if samples.len() > 1 {
        // Each repetition's pair: this scenario against the first, run back to back.
        let path = dir.join("per_hop_cost_vs_first.svg");
        let ratios = series(
            &|r, x| Some(x.per_hop() / samples[0][r].per_hop()),
            &|r, x| Some(x.steady_per_hop()? / samples[0][r].steady_per_hop()?),
            1,
        );
        let title = format!("Time per packet-hop against {}, each repetition", samples[0][0].report.scenario);
        chart::per_repetition(&path, &title, "ratio", &ratios).map_err(|e| chart_err(&path, e))?;
        // The run's spread, repetition by repetition: what `spread` takes the median of.
        let path = dir.join("spread.svg");
        let each = |steady| rep_spreads(&costs(samples, steady)).into_iter().map(|e| e.map(|e| e.0)).collect();
        let spreads = [
            RepSeries { label: "whole run".into(), values: each(false), colour: 0, joined: true },
            RepSeries { label: "second half".into(), values: each(true), colour: 0, joined: false },
        ];
        let title = "Costliest scenario's time per packet-hop over the cheapest's, each repetition";
        chart::per_repetition(&path, title, "ratio", &spreads).map_err(|e| chart_err(&path, e))?;
    }
    if !ref_walls.is_empty() {
        let path = dir.join("speed_ratio.svg");
        let ratios: Vec<RepSeries> = samples
            .iter()
            .enumerate()
            .map(|(i, s)| RepSeries {
                label: s[0].report.scenario.clone(),
                values: s.iter().zip(ref_walls).map(|(x, w)| Some(w / x.wall_s)).collect(),
                colour: i,
                joined: true,
            })
            .collect();
        chart::per_repetition(&path, "Reference wall time over ours, each repetition", "ratio", &ratios)
            .map_err(|e| chart_err(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
        assert_eq!(min_max(&[2.0, 0.5, 9.0]), (0.5, 9.0));
    }

    #[test]
    fn quartiles_are_the_medians_of_the_halves() {
        // 1..9: lower half 1-4, upper half 6-9 (the median, 5, in neither).
        assert_eq!(quartiles(&[9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0]), [2.5, 7.5]);
        assert_eq!(quartiles(&[4.0, 1.0, 3.0, 2.0]), [1.5, 3.5]);
        assert_eq!(quartiles(&[2.0, 1.0]), [1.0, 2.0]);
        assert_eq!(quartiles(&[3.0, 1.0, 2.0]), [1.0, 3.0]);
        assert_eq!(quartiles(&[7.0]), [7.0, 7.0]);
    }

    #[test]
    fn the_spread_is_taken_within_each_repetition() {
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        // costs[scenario][repetition]; the machine runs slower in the second repetition.
        let costs = vec![
            vec![Some(100.0), Some(200.0), Some(80.0)],
            vec![Some(150.0), Some(300.0), Some(100.0)],
            vec![Some(90.0), Some(210.0), Some(90.0)],
        ];
        // Per repetition: 150/90 (b over c), 300/200 (b over a), 100/80 (b over a).
        let sp = spread(&names, &costs).unwrap();
        assert_eq!(sp.per_hop_cost_max_over_min, 1.5);
        assert_eq!(sp.per_hop_cost_max_over_min_middle_half, [1.25, 150.0 / 90.0]);
        assert_eq!(sp.repetitions, 3);
        assert_eq!((sp.costliest.as_str(), sp.cheapest.as_str()), ("b", "a"));
        // The medians of the cells (a 100, b 150, c 90) would say 150/90: not one repetition's.
    }

    #[test]
    fn a_repetition_missing_a_figure_is_left_out() {
        let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let costs = vec![vec![None, Some(100.0), Some(100.0)], vec![None, Some(125.0), None]];
        let sp = spread(&names, &costs).unwrap();
        assert_eq!((sp.per_hop_cost_max_over_min, sp.repetitions), (1.25, 1));
        // Equal costs: the earlier scenario is both.
        let tie = spread(&names, &[vec![Some(5.0)], vec![Some(5.0)]]).unwrap();
        assert_eq!((tie.per_hop_cost_max_over_min, tie.costliest.as_str(), tie.cheapest.as_str()), (1.0, "a", "a"));
        assert_eq!(spread(&names, &[vec![None], vec![Some(1.0)]]), None);
        assert_eq!(spread(&names[..1], &[vec![Some(1.0)]]), None);
    }

    #[test]
    fn allocations_per_packet_hop() {
        assert_eq!(per((3, 4)), Some(0.75));
        assert_eq!(per((5, 0)), None);
    }
}
