//! The document `triage run --json` prints (and the Python package returns): one shape with
//! or without variants, versioned (`schema_version`, see `schema/run.schema.json`), with the
//! input it ran from and what every variant resolved to.

use crate::report::{ms, RunReport};
use crate::scenario::Scenario;
use crate::Simulator;

/// Version of the document's shape; `schema/run.schema.json` describes it.
pub const SCHEMA_VERSION: u64 = 1;

/// The JSON of a run (`--json`, `run.json`; schema/run.schema.json): one shape with or
/// without variants. `input` is the scenario as read (its TOML as JSON) with the seed in
/// force, the resolved stop time and the resolved input (`resolved`: the scenario after
/// defaults, profiles, presets and overrides, every field written out, which runs the same
/// simulation when fed back; see [`crate::scenario_resolved`]); `variants` always a list (one
/// entry named "" when the scenario has none), each with what it ran (`resolved`: every
/// transport end and link after defaults and overrides) and its report. `base_dir` is the
/// folder the scenario's relative paths were looked up from.
pub fn run_document(
    scenario: &Scenario,
    file: &str,
    base_dir: Option<&std::path::Path>,
    text: &str,
    stop_ns: u64,
    reports: &[(String, RunReport)],
    resolved: Vec<serde_json::Value>,
) -> Result<serde_json::Value, String> {
    let input = crate::scenario_resolved::resolved_input(scenario, file, base_dir)?;
    let mut toml: serde_json::Value = toml::from_str::<toml::Value>(text)
        .map_err(|e| format!("{file}: {e}"))
        .and_then(|v| serde_json::to_value(v).map_err(|e| format!("{file}: {e}")))?;
    toml["seed"] = serde_json::json!(scenario.seed);
    let variants: Vec<serde_json::Value> = reports
        .iter()
        .zip(resolved)
        .map(|((n, r), x)| serde_json::json!({"name": n, "resolved": x, "report": r}))
        .collect();
    Ok(serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "triage_version": env!("CARGO_PKG_VERSION"),
        "scenario": scenario.name,
        "seed": scenario.seed,
        "input": {"source": file, "stop_ms": crate::report::ms(stop_ns), "scenario": toml, "resolved": input},
        "variants": variants,
    }))
}

/// What a run was built from, after the scenario's defaults, the variant's overrides and
/// per-flow overrides were applied: every flow's two transport ends as the connections ran
/// them, and every link's rate and delay. Units are in the names.
pub fn resolved_json(sim: &Simulator, stop_ns: u64) -> serde_json::Value {
    use serde_json::json;
    use triage_core::config::SchedulerKind;
    let net = sim.network();
    let node = |i: u32| net.nodes.get(i as usize).map_or(String::new(), |n| n.name.clone());
    let cats = |c: &triage_core::sched::CatsConfig| {
        json!({
            "high_watermark_bytes": c.high_watermark_bytes,
            "low_watermark_bytes": c.low_watermark_bytes,
            "payback_multiplier": c.payback_multiplier,
        })
    };
    let transport = |t: &triage_core::ConnectionConfig| {
        let quic = t.mode == triage_core::config::TransportMode::Quic;
        let (scheduler, cats_config) = if quic {
            let s = &t.quic.scheduler;
            let c = match s {
                triage_core::sched::stream::StreamSchedulerKind::Cats(c) => Some(cats(c)),
                _ => None,
            };
            (s.name().to_string(), c)
        } else {
            match &t.scheduler {
                SchedulerKind::Fifo => ("fifo".to_string(), None),
                SchedulerKind::Cats(c) => ("cats".to_string(), Some(cats(c))),
                SchedulerKind::Priority => ("prio".to_string(), None),
            }
        };
        let mut v = json!({
            "mode": if quic { "quic" } else { "tcp" },
            "cc": t.controller,
            "ecn": t.ecn_mode(),
            "newreno_growth": t.newreno_growth,
            "mss_bytes": t.mss_bytes,
            "initial_window_segments": t.initial_window_segments,
            "delayed_ack_segments": t.delayed_ack_segments,
            "delayed_ack_timeout_ms": ms(t.delayed_ack_timeout_ns),
            "initial_rto_ms": ms(t.initial_rto_ns),
            "min_rto_ms": ms(t.min_rto_ns),
            "max_rto_ms": ms(t.max_rto_ns),
            "receive_buffer_bytes": t.receive_buffer_bytes,
            "dup_thresh_segments": t.dup_thresh,
            "rack": t.rack,
            "linux_rto": t.linux_rto,
            "linux_ack": t.linux_ack,
            "scheduler": scheduler,
            "cats": cats_config,
            "default_priority": t.default_priority,
            "priority_option": t.priority_option,
            "ack_priority0_immediately": t.ack_priority0_immediately,
            "dscp_by_priority": t.dscp_by_priority,
            "save_data_threshold": t.save_data_threshold,
            "load_shedding": t.load_shedding.as_ref().map(|l| json!({
                "consecutive_rtos": l.consecutive_rtos,
                "loss_window_packets": l.loss_window_packets,
                "loss_rate_permille": l.loss_rate_permille,
                "min_priority": l.min_priority,
            })),
        });
        // Only when on, so that documents of runs without it keep their bytes.
        if t.ns3_compat {
            v["ns3_compat"] = json!(true);
        }
        if let Some(b) = t.send_buffer_bytes {
            v["send_buffer_bytes"] = json!(b);
        }
        if quic {
            let q = &t.quic;
            v["quic"] = json!({
                "max_udp_payload_bytes": q.max_udp_payload_bytes,
                "initial_rtt_ms": ms(q.initial_rtt_ns),
                "max_ack_delay_ms": ms(q.max_ack_delay_ns),
                "stream_receive_window_bytes": q.stream_receive_window_bytes,
                "connection_receive_window_bytes": q.connection_receive_window_bytes,
            });
        }
        v
    };
    let mut flows = Vec::new();
    let mut i = 0;
    while let Some(f) = sim.flow_spec(i) {
        let mut flow = json!({
            "name": f.name,
            "client": node(f.client),
            "server": node(f.server),
            "start_ms": ms(f.start_ns),
            "client_transport": transport(&f.client_transport),
            "server_transport": transport(&f.server_transport),
        });
        // `start_ms` keeps whole microseconds; a start finer than that (a `start_jitter`
        // draw) is echoed exactly too, so that another simulator can start the same flow
        // at the same instant (benchmarks/scaling.sh --shares hands it to ns-3).
        if f.start_ns % 1_000 != 0 {
            flow["start_ns"] = json!(f.start_ns);
        }
        flows.push(flow);
        i += 1;
    }
    let links: Vec<serde_json::Value> = net
        .links
        .iter()
        .map(|l| {
            json!({
                "name": l.name,
                "from": node(l.from),
                "to": node(l.to),
                "rate_bps": l.rate_bps(),
                "delay_ms": ms(l.delay_ns()),
            })
        })
        .collect();
    json!({"stop_ms": ms(stop_ns), "flows": flows, "links": links})
}
