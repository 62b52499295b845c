use triage_sim::app::{AppSpec, PageLoad};
use triage_sim::experiments::priority_bucket::*;
use triage_sim::topology::multipath;
use triage_sim::{FlowSpec, Simulator};
fn main() {
    let page = with_chrome_buckets(&triage_web::builtin::bing_page());
    let o = Options::default();
    let links = Setting::High.links(None);
    let (net, ends) = multipath(1, &links);
    let cfg = transport(Scheduler::PriorityBucket, &o, &links);
    let load = std::sync::Arc::new(PageLoad::new(page.clone(), 300, triage_web::DiscoveryConfig::default()));
    let mut sim = Simulator::new(net, 0);
    sim.set_packet_trace(true);
    sim.add_flow(FlowSpec {
        name: "x".into(),
        client: ends[0].0,
        server: ends[0].1,
        start_ns: 0,
        client_transport: cfg.clone(),
        server_transport: cfg,
        client_app: AppSpec::PageClient(load.clone()),
        server_app: AppSpec::PageServer(load),
        extra_paths: ends[1..].to_vec(),
    });
    sim.run(10_000_000_000, |_| {});
    for m in &sim.recorder().messages {
        println!(
            "{} {} w={:?} c={:?}",
            m.name,
            m.bytes,
            m.written_ns.map(|x| x / 1000),
            m.completed_ns.map(|x| x / 1000)
        );
    }
    let names: Vec<String> = sim.network().links.iter().map(|l| l.name.clone()).collect();
    for p in sim.recorder().packets.iter().filter(|p| p.t_ns > 150_000_000 && p.t_ns < 400_000_000) {
        println!("{:>9} {:<10} {:<8} {:>5}", p.t_ns / 1000, names[p.link as usize], p.event, p.wire_bytes);
    }
}
