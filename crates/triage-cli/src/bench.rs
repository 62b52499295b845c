//! `triage bench`: simulator speed on a long bulk transfer.

use std::time::Instant;

use triage_sim::report::RunReport;

/// Arguments of `triage bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Scenario to time (default: the built-in `bench-dumbbell`, two long bulk transfers).
    #[arg(long, default_value = "bench-dumbbell")]
    scenario: String,
    /// Repetitions; the best is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// A reference command to time in the same run (for example an ns-3 program), so the
    /// result is a ratio measured on the same machine at the same moment.
    #[arg(long, value_name = "CMD")]
    reference: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct BenchReport {
    scenario: String,
    packet_hops: u64,
    events: u64,
    simulated_ms: f64,
    best_wall_s: f64,
    packet_hops_per_s: f64,
    events_per_s: f64,
    reference: Option<ReferenceTiming>,
}

#[derive(serde::Serialize)]
struct ReferenceTiming {
    command: String,
    best_wall_s: f64,
    ours_over_reference_speed: f64,
}

/// Runs the benchmark. The command line, unlike the sans-IO core, may read the clock: wall
/// time is what it measures.
#[allow(clippy::disallowed_methods)]
pub fn run(a: BenchArgs) -> Result<(), String> {
    let (scenario, file, dir, _) = crate::load(&a.scenario)?;
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..a.repeat {
        let built = scenario.build(&file, dir.as_deref()).map_err(|e| e.to_string())?;
        let mut sim = built.sim;
        let t0 = Instant::now();
        sim.run(built.stop_ns, |_| {});
        best = best.min(t0.elapsed().as_secs_f64());
        last = Some(RunReport::new(&scenario.name, scenario.seed, &sim));
    }
    let r = last.expect("ran at least once");
    let reference = match &a.reference {
        None => None,
        Some(cmd) => {
            let mut rbest = f64::INFINITY;
            for _ in 0..a.repeat {
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
                rbest = rbest.min(t0.elapsed().as_secs_f64());
            }
            Some(ReferenceTiming { command: cmd.clone(), best_wall_s: rbest, ours_over_reference_speed: rbest / best })
        }
    };
    let out = BenchReport {
        scenario: r.scenario.clone(),
        packet_hops: r.packet_hops,
        events: r.events,
        simulated_ms: r.end_ms,
        best_wall_s: best,
        packet_hops_per_s: r.packet_hops as f64 / best,
        events_per_s: r.events as f64 / best,
        reference,
    };
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
    } else {
        outln!("scenario         {}", out.scenario);
        outln!("simulated        {:.1} s", out.simulated_ms / 1000.0);
        outln!("packet-hops      {}", out.packet_hops);
        outln!("events           {}", out.events);
        outln!("best wall time   {:.3} s (of {})", out.best_wall_s, a.repeat);
        outln!("packet-hops/s    {:.3e}", out.packet_hops_per_s);
        outln!("events/s         {:.3e}", out.events_per_s);
        if let Some(rf) = &out.reference {
            outln!("reference        {} : {:.3} s", rf.command, rf.best_wall_s);
            outln!("speed ratio      {:.1}x (reference wall time / ours)", rf.ours_over_reference_speed);
        }
    }
    Ok(())
}
