//! `Simulator::run` continued with a later stop time gives the run of one call: the same
//! events, counters and report (the benchmark splits runs in two to count allocations in the
//! second half). Checked with and without time-series sampling, split at several instants.

mod common;

use common::*;
use triage_sim::report::RunReport;
use triage_sim::scenario::Scenario;

fn report(file: &str, splits_ns: &[u64]) -> (RunReport, u64, u64) {
    let path = repo().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let s = Scenario::parse(&text, file).unwrap();
    let b = s.build(file, path.parent()).unwrap();
    let mut sim = b.sim;
    for &t in splits_ns {
        sim.run(t.min(b.stop_ns), |_| {});
    }
    sim.run(b.stop_ns, |_| {});
    let st = sim.stats();
    (RunReport::new(&s.name, s.seed, &sim), st.events, st.packet_hops)
}

#[test]
fn a_run_split_in_parts_is_the_run_in_one_call() {
    // cats-fifo samples its queues every 10 ms; eecn-dumbbell samples nothing.
    for file in ["scenarios/cats-fifo.toml", "scenarios/eecn-dumbbell.toml"] {
        let whole = report(file, &[]);
        assert!(whole.1 > 0 && whole.2 > 0, "{file}: the run did something");
        for splits in [&[0][..], &[7 * MS + 3][..], &[1_000 * MS, 2_500 * MS, 10_000 * MS][..]] {
            let split = report(file, splits);
            assert_eq!(split, whole, "{file} split at {splits:?} ns");
        }
    }
}
