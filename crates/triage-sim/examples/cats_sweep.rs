//! Sweep of the Conductor's fairness parameters: how close each setting lands to the CATS
//! paper's Table I (sum of squared relative errors over the five groups), and what it does
//! to a real page's first contentful paint (ferguson.com on Lighthouse mobileSlow4G, against
//! FIFO). Not part of the tests: `cargo run --release -p triage-sim --example cats_sweep`.
use std::path::PathBuf;

use triage_core::sched::CatsConfig;
use triage_sim::experiments::cats::{reproduce, CatsNetwork, PAPER_TABLE_I};
use triage_sim::report::RunReport;
use triage_sim::scenario::{CatsToml, Scenario};
use triage_sim::units::Size;

fn ferguson_fcp(cfg: Option<&CatsConfig>) -> f64 {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ferguson-slow4g.toml");
    let mut s = Scenario::from_file(&path).expect("scenario");
    let i = if let Some(c) = cfg {
        s.variants[1].transport.cats = Some(CatsToml {
            high_watermark: Some(c.high_watermark_bytes.map(Size)),
            low_watermark: Some(c.low_watermark_bytes.map(Size)),
            payback_multiplier: Some(c.payback_multiplier),
        });
        1
    } else {
        0
    };
    let mut v = s.build_variants("ferguson", path.parent()).expect("build");
    let (_, b) = v.remove(i);
    let mut sim = b.sim;
    sim.run(b.stop_ns, |_| {});
    RunReport::new(&s.name, s.seed, &sim).flows[0].page.clone().and_then(|p| p.fcp_ms).unwrap_or(f64::MAX)
}

fn main() {
    let net = CatsNetwork::paper();
    let mut rows: Vec<(f64, CatsConfig, Vec<i64>, f64)> = Vec::new();
    let k = 1024u64;
    for h in [8u64, 12, 16, 24, 32, 48, 64] {
        for lf in [25u64, 50, 75] {
            for m in [[1u64, 1, 1, 1, 1], [1, 2, 2, 3, 4], [1, 2, 3, 4, 5], [1, 1, 2, 2, 3], [1, 2, 4, 8, 16]] {
                let hi = [h * k; 5];
                let lo = hi.map(|x| (x * lf / 100).max(1));
                let cfg = CatsConfig { high_watermark_bytes: hi, low_watermark_bytes: lo, payback_multiplier: m };
                let r = reproduce(&net, &cfg);
                let err: f64 =
                    r.groups.iter().zip(PAPER_TABLE_I.iter()).map(|(g, p)| ((g.cats_ms - p.1) / p.1).powi(2)).sum();
                let v: Vec<i64> = r.groups.iter().rev().map(|g| g.cats_ms.round() as i64).collect();
                rows.push((err, cfg, v, r.metrics.fcp.improvement_pct()));
            }
        }
    }
    rows.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    println!("ferguson.com FCP with FIFO: {:.0} ms", ferguson_fcp(None));
    println!(
        "{:>7} {:>5} {:>5} {:<16} {:<28} {:>6} {:>13}",
        "err", "H KiB", "L KiB", "M", "CATS P0..P4 ms", "FCP", "ferguson FCP"
    );
    for (e, c, v, fcp) in rows.iter().take(30) {
        println!(
            "{e:>7.4} {:>5} {:>5} {:<16} {:<28} {fcp:>5.1}% {:>10.0} ms",
            c.high_watermark_bytes[0] / k,
            c.low_watermark_bytes[0] / k,
            format!("{:?}", c.payback_multiplier),
            format!("{v:?}"),
            ferguson_fcp(Some(c))
        );
    }
}
