//! Run results as the command line prints them: a serializable report, byte-identical for
//! the same scenario and seed.

use serde::Serialize;

use crate::queue::QueueStats;
use crate::sim::Simulator;

/// Milliseconds with microsecond resolution, from nanoseconds.
pub fn ms(ns: u64) -> f64 {
    (ns / 1_000) as f64 / 1_000.0
}

/// One message.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MessageReport {
    /// Flow name.
    pub flow: String,
    /// "server" or "client": which end wrote it.
    pub from: &'static str,
    /// Message name.
    pub name: String,
    /// Size.
    pub bytes: u64,
    /// Priority.
    pub priority: u8,
    /// When the application wrote it.
    pub written_ms: Option<f64>,
    /// When the receiver held all of it, in order.
    pub completed_ms: Option<f64>,
    /// The priority the receiver read from the segments' priority option, if sent.
    pub received_priority: Option<u8>,
    /// Bytes the sender discarded (Save-Data) or shed (load shedding), if any.
    pub discarded_bytes: Option<u64>,
    /// Why they were discarded: "save_data" or "load_shed".
    pub discard_reason: Option<triage_core::sched::DiscardReason>,
    /// When they were discarded.
    pub discarded_ms: Option<f64>,
}

/// One flow.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowReport {
    /// Name.
    pub name: String,
    /// Start time.
    pub start_ms: f64,
    /// Completion time (the last message of either direction complete), from t=0.
    pub completed_ms: Option<f64>,
    /// Flow completion time: completion minus start.
    pub fct_ms: Option<f64>,
    /// Application bytes of both directions.
    pub bytes: u64,
    /// Goodput over the flow's lifetime.
    pub goodput_mbps: Option<f64>,
    /// Segments retransmitted by both ends.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// Packets sent by the server end and by the client end.
    pub packets_sent: [u64; 2],
}

/// One link direction.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkReport {
    /// "a->b".
    pub name: String,
    /// Packets serialized.
    pub tx_packets: u64,
    /// Bytes serialized.
    pub tx_bytes: u64,
    /// Packets lost to the link's loss model.
    pub lost_packets: u64,
    /// Queue counters.
    pub queue: QueueStats,
}

/// The whole run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunReport {
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Simulated time when the run ended.
    pub end_ms: f64,
    /// Events processed.
    pub events: u64,
    /// Packets serialized over links, counted per hop.
    pub packet_hops: u64,
    /// Packets no route or socket took.
    pub undeliverable_packets: u64,
    /// Flows.
    pub flows: Vec<FlowReport>,
    /// Messages of every flow.
    pub messages: Vec<MessageReport>,
    /// Links, only those that carried packets.
    pub links: Vec<LinkReport>,
}

impl RunReport {
    /// Collects the report of a finished run.
    pub fn new(scenario: &str, seed: u64, sim: &Simulator) -> Self {
        let flows_res = sim.flow_results();
        let flows = flows_res
            .iter()
            .map(|f| {
                let fct = f.completed_ns.map(|c| c - f.start_ns);
                FlowReport {
                    name: f.name.clone(),
                    start_ms: ms(f.start_ns),
                    completed_ms: f.completed_ns.map(ms),
                    fct_ms: fct.map(ms),
                    bytes: f.bytes,
                    goodput_mbps: fct.filter(|&d| d > 0).map(|d| ((f.bytes as f64 * 8.0 / (d as f64 / 1e9)) / 1e3).round() / 1e3),
                    retransmissions: f.retransmitted_segments,
                    rtos: f.rto_count,
                    fast_recoveries: f.fast_recoveries,
                    packets_sent: [f.conn_stats[1].packets_sent, f.conn_stats[0].packets_sent],
                }
            })
            .collect();
        let messages = sim
            .recorder()
            .messages
            .iter()
            .map(|m| MessageReport {
                flow: flows_res[m.flow as usize].name.clone(),
                from: if m.from_server { "server" } else { "client" },
                name: m.name.clone(),
                bytes: m.bytes,
                priority: m.priority,
                written_ms: m.written_ns.map(ms),
                completed_ms: m.completed_ns.map(ms),
                received_priority: m.received_priority,
                discarded_bytes: m.discarded.map(|d| d.1),
                discard_reason: m.discarded.map(|d| d.0),
                discarded_ms: m.discarded.map(|d| ms(d.2)),
            })
            .collect();
        let links = sim
            .network()
            .links
            .iter()
            .filter(|l| l.stats().tx_packets > 0 || l.queue().stats().dropped_packets > 0)
            .map(|l| LinkReport {
                name: l.name.clone(),
                tx_packets: l.stats().tx_packets,
                tx_bytes: l.stats().tx_bytes,
                lost_packets: l.stats().lost_packets,
                queue: l.queue().stats().clone(),
            })
            .collect();
        let st = sim.stats();
        RunReport {
            scenario: scenario.to_string(),
            seed,
            end_ms: ms(sim.now_ns()),
            events: st.events,
            packet_hops: st.packet_hops,
            undeliverable_packets: st.unroutable_packets + st.no_socket_packets,
            flows,
            messages,
            links,
        }
    }
}
