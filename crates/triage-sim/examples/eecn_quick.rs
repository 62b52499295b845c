use triage_sim::experiments::eecn::*;
fn main() {
    let t = if std::env::args().nth(1).as_deref() == Some("m") { Topology::Multihop } else { Topology::Dumbbell };
    let s = EecnSettings { sample_ns: 0, ..Default::default() };
    for sc in Scheme::ALL {
        let r = run(t, sc, &s);
        println!(
            "{:8} drops {:5} marks {:6} drop% {:.3} jain {:.3} ef {:?} sf {:?} dly ef {:?} sf {:?} 2nd {:?}",
            sc.name(),
            r.drops,
            r.marks,
            r.drop_pct,
            r.jain,
            r.elephant_fct_mean_ms().map(|x| x.round()),
            r.short_fct_mean_ms().map(|x| (x * 10.0).round() / 10.0),
            r.mean_delay_ms("elephant"),
            r.mean_delay_ms("short"),
            r.second_router
        );
        for f in &r.flows {
            print!("{}:{:?}/L{}/R{} ", f.name, f.fct_ms.map(|x| x.round()), f.handshake_level, f.retransmissions);
        }
        println!();
    }
}
