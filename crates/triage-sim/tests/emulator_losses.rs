//! The reference link emulator's losses, regenerated from its seeds, against the counters it
//! printed after each of the 120 Linux TCP runs in docs/data/linuxtcp-loss5.jsonl: in both
//! directions the draws below `loss` among the first `in` draws number exactly `lost`.

use triage_sim::experiments::emulator_losses::{lost_draws, Direction};

#[test]
fn regenerated_losses_match_every_reference_runs_counters() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/data/linuxtcp-loss5.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut checked = 0;
    for w in lines.windows(2) {
        let (run, link) = (&w[0], &w[1]);
        if run["kind"] != "tcp" || link["kind"] != "link" {
            continue;
        }
        let seed = run["seed"].as_u64().unwrap();
        let loss = run["loss"].as_f64().unwrap();
        let counters = link["counters"].as_str().unwrap();
        for (name, dir) in [("down", Direction::Down), ("up", Direction::Up)] {
            let line = counters.lines().find(|l| l.starts_with(name)).unwrap();
            let num = |key: &str| -> u64 {
                let mut it = line.split_whitespace();
                it.position(|t| t == key).unwrap();
                it.next().unwrap().parse().unwrap()
            };
            assert_eq!(lost_draws(seed, dir, loss, num("in")).len() as u64, num("lost"), "seed {seed} {name}");
            checked += 1;
        }
    }
    assert_eq!(checked, 240);
}
