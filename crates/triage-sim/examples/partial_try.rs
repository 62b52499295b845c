use triage_sim::experiments::partial::*;
fn main() {
    let versions: Vec<_> = (1..=6).map(|v| triage_web::builtin::builtin(&format!("news-v{v}")).unwrap()).collect();
    for idle in [Some(0u64)] {
        let mut runs = Vec::new();
        for pol in POLICIES {
            for r in 0..120usize {
                runs.push(run_one(PartialNetwork::Mbps9Loss5, pol, "news", r % 6, &versions[r % 6], 1 + r as u64, idle));
                runs.push(run_one(PartialNetwork::Mbps12, pol, "news", r % 6, &versions[r % 6], 1 + r as u64, idle));
            }
        }
        for row in summarize(&runs) {
            println!("{:?} {} {} mean {:.0} p90 {:.0} red {:.1} {:?} red90 {:.1} loss {:.2}% partial {:.1}", idle, row.network, row.policy, row.mean_fetch_ms, row.p90_fetch_ms, row.reduction_mean_ms, row.reduction_mean_ci95_ms.map(|x| x.round()), row.reduction_p90_ms, row.data_loss_pct, row.partial_objects);
        }
    }
}
