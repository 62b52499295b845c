//! The resolved input of a run: the scenario after its defaults, profiles and presets,
//! `--set` overrides and `--seed`, with every field a run depends on written out, as a
//! scenario again (the run document's `input.resolved`; README "Output").
//!
//! It is the parsed [`Scenario`] serialized (`#[derive(Serialize)]` on the scenario types,
//! quantities as integers in their base unit with the unit in the name: `delay_ns`,
//! `rate_bps`, `mss_bytes`; the parser reads those names too), after:
//!
//! - the network is filled in: a `profile` topology becomes the dumbbell it stands for, a
//!   path's preset its rate, traces and delay, every link's queue, loss, reverse rate and
//!   reverse loss explicit, file paths as the run found them;
//! - every flow's transport is what its connections ran, converted back from the core's
//!   [`ConnectionConfig`] ([`transport_of`]), per variant. Transports are layered (variant over
//!   flow over `[transport]`, field by field), so each field is placed where it gives every
//!   (variant, flow) the value it ran with: on `[transport]` when they all ran with the same
//!   value, else on a variant when all its flows did, else on the flows (on `[transport]` when
//!   every flow's is the same). A field no
//!   placement can express keeps its layers as written, which give the same values;
//! - page loads carry their request size, discovery delays and client as the run used them.
//!
//! Fed back (`triage run resolved.json`), it runs the same simulation: a test runs every
//! built-in scenario, then its resolved input, and compares the documents.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use triage_core::cc::ControllerKind;
use triage_core::ecn::EcnMode;
use triage_core::quic::{DatagramFraming, DatagramOrder, MultipathConfig, PathSchedulerKind};
use triage_core::sched::stream::StreamSchedulerKind;
use triage_core::{ConnectionConfig, SchedulerKind, TransportMode};

use crate::app::AppSpec;
use crate::loss::LossModel;
use crate::queue::{Limit, QueueKind};
use crate::scenario::{
    profile_links, AppToml, CatsToml, DatagramOrderName, DiscoveryToml, FramingName, LinkToml, LoadSheddingToml,
    ModeName, Scenario, SchedulerName, TopologyToml, TransportToml,
};
use crate::scenario_ecn::{EecnToml, QueueKindName, QueueToml, VcpToml};
use crate::scenario_paths::{MultipathToml, PathSchedulerName, PathToml, PriorityBucketToml, SaEcfToml};
use crate::units::{Duration, Rate, Size};

/// Serializers of quantities as integers of their base unit (nanoseconds, bytes, bits per
/// second), for `#[serde(serialize_with = ...)]` on the scenario types.
pub mod ser {
    use serde::Serializer;

    use crate::units::{Duration, Rate, Size};

    /// A quantity's value in its base unit.
    pub trait Base {
        /// The value.
        fn base(&self) -> u64;
    }
    impl Base for Duration {
        fn base(&self) -> u64 {
            self.0
        }
    }
    impl Base for Size {
        fn base(&self) -> u64 {
            self.0
        }
    }
    impl Base for Rate {
        fn base(&self) -> u64 {
            self.0
        }
    }

    /// A quantity as an integer.
    pub fn base<T: Base, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.base())
    }

    /// An optional quantity as an integer (fields skip `None`).
    pub fn opt_base<T: Base, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_u64(v.base()),
            None => s.serialize_none(),
        }
    }

    /// Five quantities (one per priority) as integers.
    pub fn opt_arr<T: Base, S: Serializer>(v: &Option<[T; 5]>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(a) => s.collect_seq(a.iter().map(Base::base)),
            None => s.serialize_none(),
        }
    }

    /// A probability as a number.
    pub fn opt_prob<S: Serializer>(v: &Option<crate::loss::Probability>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(p) => s.serialize_f64(p.0),
            None => s.serialize_none(),
        }
    }
}

/// The resolved input of `s` (see the module documentation) as JSON. `file` and `base_dir`
/// are what the run was built with (relative paths are looked up from `base_dir`).
pub fn resolved_input(s: &Scenario, file: &str, base_dir: Option<&Path>) -> Result<Value, String> {
    let built = s.build_variants(file, base_dir).map_err(|e| e.to_string())?;
    let mut r = s.clone();
    r.stop = Some(Duration(built.first().map_or(0, |(_, b)| b.stop_ns)));
    r.topology = match &s.topology {
        None => None,
        Some(TopologyToml::Dumbbell { pairs, bottleneck, access }) => Some(TopologyToml::Dumbbell {
            pairs: *pairs,
            bottleneck: link(bottleneck, base_dir)?,
            access: link(access, base_dir)?,
        }),
        Some(TopologyToml::Profile { name, queue, loss }) => {
            let (b, a) = profile_links(name, queue, loss).ok_or_else(|| format!("no profile \"{name}\""))?;
            Some(TopologyToml::Dumbbell { pairs: 1, bottleneck: link(&b, base_dir)?, access: link(&a, base_dir)? })
        }
        Some(TopologyToml::Custom { hosts, routers, links }) => Some(TopologyToml::Custom {
            hosts: hosts.clone(),
            routers: routers.clone(),
            links: links.iter().map(|l| link(l, base_dir)).collect::<Result<_, _>>()?,
        }),
    };
    r.paths = s.paths.iter().enumerate().map(|(i, p)| path(p, i, base_dir)).collect::<Result<_, _>>()?;
    // Flows: what the first variant built (every variant builds the same applications).
    let sim0 = &built.first().ok_or("no variant")?.1.sim;
    for (i, f) in r.flows.iter_mut().enumerate() {
        let spec = sim0.flow_spec(i).ok_or("a flow was not built")?;
        match &spec.client_app {
            AppSpec::PageClient(load) => {
                if let Some(p) = &f.page {
                    if !p.starts_with("builtin:") {
                        f.page = Some(found(Path::new(p), base_dir).display().to_string());
                    }
                }
                f.rules = f.rules.as_ref().map(|r| found(Path::new(r), base_dir).display().to_string());
                f.keep_cache_hits = Some(f.keep_cache_hits.unwrap_or(false));
                f.request_size = Some(Size(load.request_bytes));
                let d = &load.discovery;
                f.discovery = Some(DiscoveryToml {
                    html: Duration(d.html_ns),
                    css: Duration(d.css_ns),
                    js: Duration(d.js_ns),
                    other: Duration(d.other_ns),
                    recorded_gaps: d.recorded_gaps,
                    cpu_slowdown: d.recorded_gaps.then_some(d.gap_scale_permille as f64 / 1000.0),
                });
                f.sequential = Some(load.sequential);
            }
            _ => {
                for app in [&mut f.client_app, &mut f.server_app] {
                    let a = app.take().unwrap_or(AppToml::Sink);
                    *app = Some(match a {
                        AppToml::Messages { mut messages } => {
                            for m in &mut messages {
                                m.unreliable = Some(m.unreliable.unwrap_or(false));
                            }
                            AppToml::Messages { messages }
                        }
                        a => a,
                    });
                }
            }
        }
    }
    // Transports: what every (variant, flow) ran, then placed on the layers.
    let layered = |v: Option<&TransportToml>, i: usize| {
        let t = s.flows[i].transport.or(&s.transport);
        v.map_or(t.clone(), |v| v.or(&t))
    };
    let variants: Vec<Option<&TransportToml>> =
        if s.variants.is_empty() { vec![None] } else { s.variants.iter().map(|v| Some(&v.transport)).collect() };
    let mut ran: Vec<Vec<Map<String, Value>>> = Vec::new();
    for ((_, b), v) in built.iter().zip(&variants) {
        let mut row = Vec::new();
        for i in 0..s.flows.len() {
            let cfg = &b.sim.flow_spec(i).ok_or("a flow was not built")?.client_transport;
            row.push(object(&transport_of(cfg, &layered(*v, i), !s.paths.is_empty()))?);
        }
        ran.push(row);
    }
    let as_written_flows: Vec<Map<String, Value>> =
        (0..s.flows.len()).map(|i| object(&s.flows[i].transport.or(&s.transport))).collect::<Result<_, _>>()?;
    let as_written_variants: Vec<Map<String, Value>> =
        s.variants.iter().map(|v| object(&v.transport)).collect::<Result<_, _>>()?;
    let (top, flows, vars) = place(&ran, &as_written_flows, &as_written_variants, !s.variants.is_empty());

    let mut doc = serde_json::to_value(&r).map_err(|e| e.to_string())?;
    doc["transport"] = Value::Object(top);
    for (i, t) in flows.into_iter().enumerate() {
        doc["flows"][i]["transport"] = Value::Object(t);
    }
    for (j, t) in vars.into_iter().enumerate() {
        doc["variants"][j]["transport"] = Value::Object(t);
    }
    Ok(doc)
}

fn object<T: serde::Serialize>(t: &T) -> Result<Map<String, Value>, String> {
    match serde_json::to_value(t).map_err(|e| e.to_string())? {
        Value::Object(m) => Ok(m),
        _ => Err("a transport is not a table".into()),
    }
}

/// Places the transports that ran, `ran[variant][flow]`, on the scenario's layers: returns
/// `[transport]`, each flow's `transport` and each variant's (see the module documentation).
/// `as_written_*` are the layers as the scenario wrote them (a flow's laid over
/// `[transport]`), kept for a field no placement expresses.
#[allow(clippy::type_complexity)]
fn place(
    ran: &[Vec<Map<String, Value>>],
    as_written_flows: &[Map<String, Value>],
    as_written_variants: &[Map<String, Value>],
    has_variants: bool,
) -> (Map<String, Value>, Vec<Map<String, Value>>, Vec<Map<String, Value>>) {
    let nf = as_written_flows.len();
    let mut keys: Vec<&String> = ran.iter().flatten().flat_map(|m| m.keys()).collect();
    keys.extend(as_written_flows.iter().chain(as_written_variants).flat_map(|m| m.keys()));
    keys.sort();
    keys.dedup();
    let mut top = Map::new();
    let mut flows = vec![Map::new(); nf];
    let mut vars = vec![Map::new(); if has_variants { ran.len() } else { 0 }];
    for k in keys {
        let at = |v: usize, f: usize| ran[v][f].get(k);
        // Per variant: the value every flow ran with, when they agree.
        let agreed: Vec<Option<&Value>> = (0..ran.len())
            .map(|v| {
                let first = at(v, 0)?;
                (0..nf).all(|f| at(v, f) == Some(first)).then_some(first)
            })
            .collect();
        let on_variants = has_variants;
        // What each flow's layer must give in the variants that leave the field to it.
        let mut expressible = true;
        let flow_values: Vec<Option<&Value>> = (0..nf)
            .map(|f| {
                let mut seen: Option<Option<&Value>> = None;
                for v in (0..ran.len()).filter(|&v| !on_variants || agreed[v].is_none()) {
                    match seen {
                        None => seen = Some(at(v, f)),
                        Some(x) if x == at(v, f) => {}
                        Some(_) => expressible = false,
                    }
                }
                seen.flatten()
            })
            .collect();
        if expressible && agreed.iter().all(|a| a.is_some() && *a == agreed[0]) {
            // Every (variant, flow) ran with the same value.
            if let Some(x) = agreed[0] {
                top.insert(k.clone(), x.clone());
            }
        } else if expressible {
            if on_variants {
                for (v, a) in agreed.iter().enumerate() {
                    if let Some(a) = a {
                        vars[v].insert(k.clone(), (*a).clone());
                    }
                }
            }
            for (f, x) in flow_values.iter().enumerate() {
                if let Some(x) = x {
                    flows[f].insert(k.clone(), (*x).clone());
                }
            }
        } else {
            for (v, w) in as_written_variants.iter().enumerate() {
                if let Some(x) = w.get(k) {
                    vars[v].insert(k.clone(), x.clone());
                }
            }
            for (f, w) in as_written_flows.iter().enumerate() {
                if let Some(x) = w.get(k) {
                    flows[f].insert(k.clone(), x.clone());
                }
            }
        }
    }
    // A value every flow's layer has goes on `[transport]`.
    if let Some(first) = flows.first().cloned() {
        for (k, x) in first {
            if flows.iter().all(|f| f.get(&k) == Some(&x)) {
                for f in &mut flows {
                    f.remove(&k);
                }
                top.insert(k, x);
            }
        }
    }
    (top, flows, vars)
}

/// A flow end's transport settings as the scenario writes them, from the configuration its
/// connection ran with (`layered`: the scenario's layers for this flow and variant, for the
/// settings that live outside the core's configuration). `multipath`: a `[[paths]]` scenario.
pub fn transport_of(c: &ConnectionConfig, layered: &TransportToml, multipath: bool) -> TransportToml {
    let quic = c.mode == TransportMode::Quic;
    let cats = |x: &triage_core::sched::CatsConfig| CatsToml {
        high_watermark: Some(x.high_watermark_bytes.map(Size)),
        low_watermark: Some(x.low_watermark_bytes.map(Size)),
        payback_multiplier: Some(x.payback_multiplier),
    };
    let (scheduler, cats_toml) = if quic {
        match &c.quic.scheduler {
            StreamSchedulerKind::Fifo => (SchedulerName::Fifo, None),
            StreamSchedulerKind::Rr => (SchedulerName::Rr, None),
            StreamSchedulerKind::Prio => (SchedulerName::Prio, None),
            StreamSchedulerKind::Rfc9218 => (SchedulerName::Rfc9218, None),
            StreamSchedulerKind::Wrr => (SchedulerName::Wrr, None),
            StreamSchedulerKind::Cats(x) => (SchedulerName::Cats, Some(cats(x))),
        }
    } else {
        match &c.scheduler {
            SchedulerKind::Fifo => (SchedulerName::Fifo, None),
            SchedulerKind::Cats(x) => (SchedulerName::Cats, Some(cats(x))),
            SchedulerKind::Priority => (SchedulerName::Prio, None),
        }
    };
    let ecn = c.ecn_mode();
    let e = &c.eecn;
    let v = &c.vcp;
    TransportToml {
        mode: Some(if quic { ModeName::Quic } else { ModeName::Tcp }),
        cc: Some(c.controller.clone()),
        hystart: (c.controller == ControllerKind::Cubic).then_some(c.cubic.hystart),
        ecn: Some(ecn),
        eecn: (c.controller == ControllerKind::Eecn || ecn == EcnMode::Eecn || layered.eecn.is_some()).then(|| {
            EecnToml {
                d: Some(e.d),
                sigma_slow_start: Some(e.sigma_slow_start),
                sigma_congestion_avoidance: Some(e.sigma_congestion_avoidance),
                beta_unit: Some(Duration(e.beta_unit_ns)),
                avg_rtt: Some(e.avg_rtt),
                initial_window_cl1: Some(e.initial_window_cl[0]),
                initial_window_cl2: Some(e.initial_window_cl[1]),
                cl1_echo_acks: Some(e.cl1_echo_acks),
                zero_beta: Some(e.zero_beta),
            }
        }),
        vcp: (c.controller == ControllerKind::Vcp || ecn == EcnMode::Vcp || layered.vcp.is_some()).then_some(VcpToml {
            xi: Some(v.xi),
            alpha: Some(v.alpha),
            beta: Some(v.beta),
            t_rho: Some(Duration(v.t_rho_ns)),
            hold_t_rho: Some(v.hold_t_rho),
            slow_start: Some(v.slow_start),
        }),
        newreno_growth: Some(c.newreno_growth),
        rack: (c.mode == triage_core::config::TransportMode::Tcp).then_some(c.rack),
        linux_rto: (c.mode == triage_core::config::TransportMode::Tcp).then_some(c.linux_rto),
        linux_ack: (c.mode == triage_core::config::TransportMode::Tcp).then_some(c.linux_ack),
        // Echoed only when on, so that documents of runs without it keep their bytes.
        ns3_compat: c.ns3_compat.then_some(true),
        mss: Some(Size(u64::from(c.mss_bytes))),
        initial_window: Some(c.initial_window_segments),
        delayed_ack_segments: Some(c.delayed_ack_segments),
        delayed_ack_timeout: Some(Duration(c.delayed_ack_timeout_ns)),
        min_rto: Some(Duration(c.min_rto_ns)),
        initial_rto: Some(Duration(c.initial_rto_ns)),
        receive_buffer: Some(Size(c.receive_buffer_bytes)),
        // Echoed only when set, as `ns3_compat`.
        send_buffer: c.send_buffer_bytes.map(Size),
        scheduler: Some(scheduler),
        cats: cats_toml,
        default_priority: Some(c.default_priority),
        // TCP-mode options (an error in QUIC mode).
        priority_option: (!quic).then_some(c.priority_option),
        ack_priority0_immediately: (!quic).then_some(c.ack_priority0_immediately),
        dscp: c.dscp_by_priority,
        save_data: c.save_data_threshold,
        load_shedding: c.load_shedding.as_ref().map(|l| LoadSheddingToml {
            consecutive_rtos: Some(l.consecutive_rtos),
            loss_window_packets: Some(l.loss_window_packets),
            loss_rate: Some(f64::from(l.loss_rate_permille) / 1000.0),
            min_priority: Some(l.min_priority),
        }),
        // A page load's policy and deadlines live outside the connection's configuration.
        reliability: layered.reliability.clone(),
        datagram_framing: quic.then_some(match c.quic.datagram_framing {
            DatagramFraming::Http3 => FramingName::Http3,
            DatagramFraming::Reference => FramingName::Reference,
        }),
        datagram_order: quic.then_some(match c.quic.datagram_order {
            DatagramOrder::First => DatagramOrderName::First,
            DatagramOrder::Priority => DatagramOrderName::Priority,
        }),
        partial_deadlines: layered.partial_deadlines,
        multipath: multipath.then(|| multipath_of(&c.quic.multipath)),
    }
}

fn multipath_of(m: &MultipathConfig) -> MultipathToml {
    let (scheduler, priority_bucket, sa_ecf) = match &m.scheduler {
        PathSchedulerKind::Single => (PathSchedulerName::Single, None, None),
        PathSchedulerKind::Lrf => (PathSchedulerName::Lrf, None, None),
        PathSchedulerKind::SaEcf(c) => (
            PathSchedulerName::SaEcf,
            None,
            Some(SaEcfToml { beta: Some([c.beta.0, c.beta.1]), formula: Some(c.formula) }),
        ),
        PathSchedulerKind::PriorityBucket(c) => (
            PathSchedulerName::PriorityBucket,
            Some(PriorityBucketToml {
                tail_on_any_path: Some(c.tail_on_any_path),
                min_share_bytes: Some(Size(c.min_share_bytes)),
                cats_fairness: Some(c.cats_fairness),
            }),
            None,
        ),
    };
    MultipathToml {
        scheduler: Some(scheduler),
        failure_ptos: Some(m.failure_ptos),
        estimate_bandwidth: Some(m.estimate_bandwidth),
        priority_bucket,
        sa_ecf,
    }
}

/// A file as the run found it: beside the scenario when it exists there, else as written
/// (from the current directory), as `Scenario::build` looks it up.
fn found(p: &Path, base: Option<&Path>) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match base.map(|b| b.join(p)) {
        Some(c) if c.exists() => c,
        _ => p.to_path_buf(),
    }
}

/// A link with its queue, loss, reverse rate and reverse loss explicit.
fn link(l: &LinkToml, base_dir: Option<&Path>) -> Result<LinkToml, String> {
    let loss = l.loss.clone().unwrap_or(LossModel::None);
    Ok(LinkToml {
        between: l.between.clone(),
        rate: l.rate,
        delay: l.delay,
        queue: Some(queue(&l.queue)?),
        reverse_loss: Some(l.reverse_loss.clone().unwrap_or(loss.clone())),
        loss: Some(loss),
        trace: l.trace.as_ref().map(|t| found(t, base_dir)),
        reverse_trace: l.reverse_trace.as_ref().map(|t| found(t, base_dir)),
        // Without a reverse trace, the reverse direction runs at `reverse_rate`, else `rate`.
        reverse_rate: if l.reverse_trace.is_none() { l.reverse_rate.or(l.rate) } else { l.reverse_rate },
        jitter: l.jitter,
        duplicate: Some(l.duplicate.unwrap_or(crate::loss::Probability(0.0))),
        overhead: l.overhead,
    })
}

/// A path with its preset's rate, traces and delay written out, and its name.
fn path(p: &PathToml, i: usize, base_dir: Option<&Path>) -> Result<PathToml, String> {
    let l = p.to_link(base_dir).map_err(|(f, m)| format!("paths[{i}].{f}: {m}"))?;
    let l = link(&l, base_dir)?;
    Ok(PathToml {
        name: Some(p.report_name(i)),
        preset: None,
        rate: l.rate,
        reverse_rate: l.reverse_rate,
        trace: l.trace,
        reverse_trace: l.reverse_trace,
        delay: Some(l.delay),
        queue: l.queue,
        loss: l.loss,
        reverse_loss: l.reverse_loss,
        jitter: l.jitter,
        duplicate: l.duplicate,
        down_at: p.down_at,
        up_at: p.up_at,
    })
}

/// A queue with its limit and every parameter of its discipline written out.
fn queue(q: &Option<QueueToml>) -> Result<QueueToml, String> {
    let (limit, kind) = match q {
        None => (Limit::Packets(1000), QueueKind::DropTail),
        Some(q) => q.to_kind().map_err(|(f, m)| format!("queue{f}: {m}"))?,
    };
    let mut out = QueueToml::default();
    match limit {
        Limit::Packets(p) => out.packets = Some(p),
        Limit::Bytes(b) => out.bytes = Some(Size(b)),
    }
    let kind = match kind {
        QueueKind::WithDeviceRing(k, n) => {
            out.device_packets = Some(n);
            *k
        }
        k => k,
    };
    match kind {
        QueueKind::DropTail | QueueKind::WithDeviceRing(..) => out.kind = Some(QueueKindName::Droptail),
        QueueKind::Red(c) => {
            out.kind = Some(QueueKindName::Red);
            out.min_th = Some(c.min_th);
            out.max_th = Some(c.max_th);
            out.max_p = Some(c.max_p);
            out.qw = Some(c.qw);
            out.gentle = Some(c.gentle);
            out.ecn = Some(c.ecn);
            out.idle_rate = Some(Rate(c.idle_rate_bps));
            out.mean_packet_size = Some(Size(c.mean_packet_bytes));
        }
        QueueKind::Eecn(c) => {
            out.kind = Some(QueueKindName::Eecn);
            out.th1 = Some(c.th1);
            out.th2 = Some(c.th2);
            out.horizon = Some(Duration(c.horizon_ns));
            out.rate_window = Some(Duration(c.rate_window_ns));
            out.rate_buckets = Some(c.rate_buckets);
        }
        QueueKind::Vcp(c) => {
            out.kind = Some(QueueKindName::Vcp);
            out.t_rho = Some(Duration(c.t_rho_ns));
            out.target_utilization = Some(c.target_utilization);
            out.kappa_q = Some(c.kappa_q);
        }
    }
    Ok(out)
}
