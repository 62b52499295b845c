//! Topology builders.

use triage_core::ConnectionConfig;

use crate::app::AppSpec;
use crate::link::{Link, RateModel};
use crate::loss::{LossModel, LossProcess};
use crate::queue::{Limit, QueueKind};
use crate::rng::component_rng;
use crate::sim::{FlowSpec, Network, NodeKind, Simulator};

/// One direction of a link as a builder describes it.
#[derive(Clone, Debug)]
pub struct LinkParams {
    /// Rate in bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay_ns: u64,
    /// Queue limit.
    pub queue: Limit,
    /// Random loss.
    pub loss: LossModel,
    /// Queue discipline (DropTail unless set).
    pub kind: QueueKind,
}

impl LinkParams {
    /// A lossless link with a DropTail queue of `queue_packets`.
    pub fn new(rate_bps: u64, delay_ns: u64, queue_packets: u64) -> Self {
        Self {
            rate_bps,
            delay_ns,
            queue: Limit::Packets(queue_packets),
            loss: LossModel::None,
            kind: QueueKind::DropTail,
        }
    }

    /// The same link with another queue discipline.
    pub fn with_queue(mut self, kind: QueueKind) -> Self {
        self.kind = kind;
        self
    }
}

/// Adds both directions of a link between `a` and `b`, each with its own queue and its
/// own loss stream (named after the direction).
pub fn add_duplex(net: &mut Network, seed: u64, a: u32, b: u32, p: &LinkParams) -> (u32, u32) {
    let ab = add_simplex(net, seed, a, b, p);
    let ba = add_simplex(net, seed, b, a, p);
    (ab, ba)
}

/// Adds one direction of a link, `from` to `to`, with its own queue and its own loss stream
/// (named after the direction, so a direction draws the same losses whatever else exists).
pub fn add_simplex(net: &mut Network, seed: u64, from: u32, to: u32, p: &LinkParams) -> u32 {
    let name = format!("{}->{}", net.nodes[from as usize].name, net.nodes[to as usize].name);
    let loss = LossProcess::new(p.loss.clone(), component_rng(seed, &format!("loss:{name}")));
    let q = p.kind.build(p.queue, p.rate_bps, component_rng(seed, &format!("queue:{name}")));
    net.add_link(Link::new(
        name,
        from,
        to,
        RateModel::Constant { rate_bps: p.rate_bps, overhead_bytes: 0 },
        p.delay_ns,
        loss,
        q,
    ))
}

/// The classic dumbbell: senders `s0..sN-1` — router `r1` — bottleneck — router `r2` —
/// receivers `c0..cN-1`. Returns (network, senders, receivers).
pub fn dumbbell(seed: u64, pairs: u32, access: &LinkParams, bottleneck: &LinkParams) -> (Network, Vec<u32>, Vec<u32>) {
    let mut net = Network::default();
    let senders: Vec<u32> = (0..pairs).map(|i| net.add_node(&format!("s{i}"), NodeKind::Host)).collect();
    let r1 = net.add_node("r1", NodeKind::Router);
    let r2 = net.add_node("r2", NodeKind::Router);
    let receivers: Vec<u32> = (0..pairs).map(|i| net.add_node(&format!("c{i}"), NodeKind::Host)).collect();
    add_duplex(&mut net, seed, r1, r2, bottleneck);
    for (&s, &c) in senders.iter().zip(&receivers) {
        add_duplex(&mut net, seed, s, r1, access);
        add_duplex(&mut net, seed, r2, c, access);
    }
    (net, senders, receivers)
}

/// One flow named `name` over a one-pair [`dumbbell`] (seed 1; 100 Mbps, 0 ms access links
/// with 1000-packet queues; `bottleneck` between the routers): the client `c0` opens it at
/// t = 0 and sinks, the server `s0` writes `server_app`, both ends with `cfg`. Time series
/// are sampled every `sample_ns` (0: none).
pub fn one_flow_dumbbell(
    name: &str,
    cfg: ConnectionConfig,
    bottleneck: &LinkParams,
    server_app: AppSpec,
    sample_ns: u64,
) -> Simulator {
    let (net, s, c) = dumbbell(1, 1, &LinkParams::new(100_000_000, 0, 1000), bottleneck);
    let mut sim = Simulator::new(net, sample_ns);
    sim.add_flow(FlowSpec {
        name: name.into(),
        client: c[0],
        server: s[0],
        start_ns: 0,
        client_transport: cfg.clone(),
        server_transport: cfg,
        client_app: AppSpec::Sink,
        server_app,
        extra_paths: Vec::new(),
    });
    sim
}

/// Two multi-homed hosts over disjoint paths (PriorityBucket Fig. 2): the client has one
/// interface per path (`c.0`, `c.1`, ...), the server too (`s.0`, `s.1`, ...), and path `i`
/// is one duplex link `s.i` — `c.i` with `paths[i]`'s rate, delay, queue and loss in each
/// direction (its own loss stream per direction). Returns the network and each path's
/// (client, server) interface nodes: path 0 is the flow's `client` / `server`, the rest its
/// [`FlowSpec::extra_paths`].
pub fn multipath(seed: u64, paths: &[LinkParams]) -> (Network, Vec<(u32, u32)>) {
    let mut net = Network::default();
    let mut ends = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let s = net.add_node(&format!("s.{i}"), NodeKind::Host);
        let c = net.add_node(&format!("c.{i}"), NodeKind::Host);
        add_duplex(&mut net, seed, s, c, p);
        ends.push((c, s));
    }
    (net, ends)
}

/// One flow over the paths [`multipath`] built, opened by the client at t = 0: path 0's
/// interfaces are its ends, the other paths its [`FlowSpec::extra_paths`]; both ends use
/// `cfg`.
pub fn multipath_flow(
    name: &str,
    ends: &[(u32, u32)],
    cfg: ConnectionConfig,
    client_app: AppSpec,
    server_app: AppSpec,
) -> FlowSpec {
    FlowSpec {
        name: name.into(),
        client: ends[0].0,
        server: ends[0].1,
        start_ns: 0,
        client_transport: cfg.clone(),
        server_transport: cfg,
        client_app,
        server_app,
        extra_paths: ends[1..].to_vec(),
    }
}

/// What a path's ends know of it before using it (PriorityBucket §4.1 "prior knowledge"):
/// its RTT (twice the one-way delay) and its rate, for [`triage_core::quic::MultipathConfig::priors`].
pub fn path_priors(paths: &[LinkParams]) -> Vec<triage_core::quic::PathPrior> {
    paths
        .iter()
        .map(|p| triage_core::quic::PathPrior { rtt_ns: Some(2 * p.delay_ns), bandwidth_bps: p.rate_bps })
        .collect()
}
