//! What Chrome observed while recording, read from the trace as Lighthouse reads it: the main
//! frame's FCP and LCP and the screenshots' Speed Index, against the `observed` values Lighthouse
//! itself prints for the four Lantern fixtures (../shared/reference/lantern/README.md).

use std::path::PathBuf;

use triage_web::cputrace::cpu_tasks;
use triage_web::import::{import_file, ImportOptions};

fn fixture(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/lantern/fixtures").join(name);
    assert!(dir.is_dir(), "{} is missing: these tests need ../shared beside the project", dir.display());
    dir
}

/// (fixture, Lighthouse's observed FCP, LCP, Speed Index in ms: `run-lantern.mjs`'s `observed`).
const OBSERVED: [(&str, u64, u64, u64); 4] = [
    ("intercom-widget", 1689, 1689, 1538),
    ("lr", 1776, 1776, 2131),
    ("speedindex-1ms", 491, 512, 397),
    ("render-blocking", 25, 25, 26),
];

#[test]
fn observed_paints_and_speed_index_match_lighthouse() {
    for (name, fcp, lcp, si) in OBSERVED {
        let dir = fixture(name);
        let imp = import_file(&dir.join("devtoolslog.json"), &ImportOptions::default()).unwrap();
        let text = std::fs::read_to_string(dir.join("trace.json")).unwrap();
        let cpu = cpu_tasks(&text, &imp.page).unwrap();
        let o = cpu.observed;
        let ms = |x: Option<u64>| x.map(|v| (v + 500_000) / 1_000_000);
        eprintln!("{name}: {o:?}");
        // Lighthouse rounds its milliseconds; the time origin is the same navigationStart.
        assert!(
            ms(o.fcp_ns).is_some_and(|v| v.abs_diff(fcp) <= 1),
            "{name}: FCP {:?} ms, Lighthouse {fcp}",
            ms(o.fcp_ns)
        );
        assert!(
            ms(o.lcp_ns).is_some_and(|v| v.abs_diff(lcp) <= 1),
            "{name}: LCP {:?} ms, Lighthouse {lcp}",
            ms(o.lcp_ns)
        );
        assert_eq!(o.bad_screenshots, 0, "{name}");
        // Another JPEG decoder than speedline's: within 1% or 3 ms.
        let got = ms(o.speed_index_ns).expect("screenshots give a Speed Index");
        let tol = (si / 100).max(3);
        assert!(got.abs_diff(si) <= tol, "{name}: Speed Index {got} ms, Lighthouse {si} (tolerance {tol})");
    }
}
