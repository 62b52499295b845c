//! EECN §6 in one run: EECN against NewReno, NewReno+ECN and VCP on the dumbbell (Fig. 6a)
//! and the multi-hop path (Fig. 6b), with the paper's qualitative claims as assertions.

use triage_sim::experiments::eecn::{reproduce, EecnSettings, Scheme, Topology};

#[test]
fn eecn_beats_ecn_and_newreno_on_both_topologies() {
    let r = reproduce(&EecnSettings { sample_ns: 0, ..Default::default() });
    for t in [Topology::Dumbbell, Topology::Multihop] {
        let (nr, ecn, eecn) = (r.get(t, Scheme::NewReno), r.get(t, Scheme::Ecn), r.get(t, Scheme::Eecn));
        let ctx = format!(
            "{t:?}: newreno {} drops, ecn {} drops {} marks, eecn {} drops {} marks",
            nr.drops, ecn.drops, ecn.marks, eecn.drops, eecn.marks
        );
        assert!(eecn.drops < ecn.drops, "fewer drops than NewReno+ECN; {ctx}");
        assert!(eecn.drops < nr.drops, "fewer drops than NewReno; {ctx}");
        assert!(eecn.marks < ecn.marks, "fewer marks than NewReno+ECN; {ctx}");
        let (se, sc) = (eecn.short_fct_mean_ms().unwrap(), ecn.short_fct_mean_ms().unwrap());
        assert!(se < sc, "{t:?}: short flows finish sooner on average ({se:.1} vs {sc:.1} ms)");
        let (ee, ec) = (eecn.elephant_fct_mean_ms().unwrap(), ecn.elephant_fct_mean_ms().unwrap());
        assert!((ee - ec).abs() / ec <= 0.05, "{t:?}: elephants within 5% ({ee:.0} vs {ec:.0} ms)");
        for run in [nr, ecn, eecn, r.get(t, Scheme::Vcp)] {
            assert!(run.flows.iter().all(|f| f.fct_ms.is_some()), "{t:?} {:?}: every flow completes", run.scheme);
            assert!(run.jain > 0.95 && run.jain <= 1.0);
        }
    }
}
