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

/// The same experiment in QUIC mode (`EecnSettings::quic`): the ends read EECN's two levels
/// from the ECN counts of QUIC's ACK frames (a grown ECT(0) count is CL(1), a grown CE count
/// CL(2)) and classic ECN's CE from them too; VCP does not run. On the dumbbell EECN keeps
/// the paper's ordering: no drops where NewReno and NewReno+ECN drop, short flows sooner,
/// lower delay. (Its marks are many more than NewReno+ECN's: between CL(2) cuts the window
/// grows through the CL(1) zone, where the level-1 decay e^−β, β in seconds, is slight.)
#[test]
fn eecn_in_quic_mode_keeps_the_dumbbell_ordering() {
    let s = EecnSettings { sample_ns: 0, quic: true, ..Default::default() };
    assert_eq!(s.schemes(), [Scheme::NewReno, Scheme::Ecn, Scheme::Eecn]);
    let r = reproduce(&s);
    assert_eq!(r.runs.len(), s.runs());
    assert!(r.try_get(Topology::Dumbbell, Scheme::Vcp).is_none());
    let t = Topology::Dumbbell;
    let (nr, ecn, eecn) = (r.get(t, Scheme::NewReno), r.get(t, Scheme::Ecn), r.get(t, Scheme::Eecn));
    let ctx = format!(
        "newreno {} drops, ecn {} drops {} marks, eecn {} drops {} marks",
        nr.drops, ecn.drops, ecn.marks, eecn.drops, eecn.marks
    );
    assert_eq!(nr.marks, 0, "{ctx}");
    assert!(ecn.marks > 0 && eecn.marks > 0, "both ECN schemes are marked in QUIC mode; {ctx}");
    assert!(eecn.drops < ecn.drops && ecn.drops < nr.drops, "{ctx}");
    let (se, sc) = (eecn.short_fct_mean_ms().unwrap(), ecn.short_fct_mean_ms().unwrap());
    assert!(se < sc, "short flows finish sooner on average ({se:.1} vs {sc:.1} ms)");
    let (de, dc) = (eecn.mean_delay_ms("short").unwrap(), ecn.mean_delay_ms("short").unwrap());
    assert!(de < dc, "short flows' packets wait less ({de:.2} vs {dc:.2} ms)");
    assert!(eecn.flows.iter().all(|f| f.fct_ms.is_some()) && nr.flows.iter().all(|f| f.fct_ms.is_some()));
    // The reductions against VCP have no run to compare with.
    let claims = r.claims(t);
    assert!(claims.iter().filter(|c| c.0.contains("VCP")).all(|c| c.2.is_none()), "{claims:?}");
}

/// Algorithm 2 at β = 0 (`EecnSettings::zero_beta`): with the listing's reading (the
/// default) QUIC mode's multi-hop EF2 ends at its 2-packet floor with a constant RTT and
/// never finishes; with the prose's (`ZeroBeta::Grow`) every flow finishes on both
/// topologies, and TCP mode's EECN drops nothing either way.
#[test]
fn zero_beta_decides_whether_a_window_at_its_floor_grows_again() {
    use triage_core::cc::ZeroBeta;
    let quic = |zero_beta| reproduce(&EecnSettings { sample_ns: 0, quic: true, zero_beta, ..Default::default() });
    let hold = quic(ZeroBeta::Hold);
    let ef2 = &hold.get(Topology::Multihop, Scheme::Eecn).flows[1];
    assert_eq!((ef2.name.as_str(), ef2.fct_ms), ("EF2", None));
    let grow = quic(ZeroBeta::Grow);
    for t in [Topology::Dumbbell, Topology::Multihop] {
        let run = grow.get(t, Scheme::Eecn);
        assert!(run.flows.iter().all(|f| f.fct_ms.is_some()), "{t:?}: every flow completes");
        assert_eq!(run.drops, 0);
    }
    let tcp = reproduce(&EecnSettings { sample_ns: 0, zero_beta: ZeroBeta::Grow, ..Default::default() });
    assert!(tcp.runs.iter().filter(|r| r.scheme == Scheme::Eecn).all(|r| r.drops == 0));
}
