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
    /// When the receiver's application got its first bytes (the response's first byte).
    pub first_byte_ms: Option<f64>,
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
    /// Bytes the transport delivered in order to the two ends' applications by the end of
    /// the run: for a complete flow over reliable streams, `bytes`, plus the TLS handshake's
    /// records where a page load's browser model runs TLS over TCP (4,512 bytes per
    /// connection by default); datagrams lost for good are missing.
    pub delivered_bytes: u64,
    /// Goodput over the flow's lifetime: `bytes` over `fct_ms` for a complete flow; for one
    /// still open when the run stopped (a long-lived flow, as in a fairness experiment),
    /// `delivered_bytes` over the time from its start to the end of the run. `None` for a
    /// flow that had not started (or no time had passed).
    pub goodput_mbps: Option<f64>,
    /// Segments retransmitted by both ends.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// Packets sent by the server end and by the client end.
    pub packets_sent: [u64; 2],
    /// TCP segments from the peer that reached beyond the receive window (or the bounded
    /// out-of-order buffer) and were dropped unread, both ends; left out when 0. A peer that
    /// keeps the window never causes one.
    #[serde(skip_serializing_if = "is_zero")]
    pub out_of_window_segments: u64,
    /// Connections the client opened: several for a page load with `[flows.browser]`
    /// (one per origin); left out when 1 (or 0, a flow that never started).
    #[serde(skip_serializing_if = "at_most_one")]
    pub connections: u32,
    /// For a page load: what a user would see (see `triage_web::qoe`).
    pub page: Option<PageReport>,
    /// QUIC mode only: the connection's own counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicFlowReport>,
    /// A multipath flow (a `[[paths]]` scenario): per path, by path ID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathReport>>,
}

/// One path of a multipath flow; each counter is `[server end, client end]` (as
/// `packets_sent`), 0 at an end that never had the path.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct PathReport {
    /// Path ID (0: the path the connection was opened on).
    pub id: u32,
    /// The scenario's name for the path (`path<ID>` when the report was not given names).
    pub name: String,
    /// Packets sent on the path.
    pub packets_sent: [u64; 2],
    /// UDP payload bytes sent on the path.
    pub bytes_sent: [u64; 2],
    /// STREAM and DATAGRAM payload bytes sent on the path, retransmissions included: the
    /// data the path carried from that end.
    pub data_bytes_sent: [u64; 2],
    /// Packets received on the path.
    pub packets_received: [u64; 2],
    /// Packets declared lost on the path.
    pub packets_lost: [u64; 2],
    /// Probe timeouts on the path.
    pub pto_count: [u64; 2],
    /// Times the path was declared failed.
    pub failures: [u64; 2],
    /// Smoothed RTT when the run ended (0 before a sample).
    pub srtt_ms: [f64; 2],
    /// Congestion window when the run ended.
    pub cwnd_bytes: [u64; 2],
}

/// QUIC-mode counters of a flow, each as `[server end, client end]` (as `packets_sent`).
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct QuicFlowReport {
    /// When the client's handshake completed (its Finished sent), from t=0.
    pub handshake_ms: Option<f64>,
    /// Packets declared lost (RFC 9002 §6.1).
    pub packets_lost: [u64; 2],
    /// Probe timeouts (RFC 9002 §6.2).
    pub pto_count: [u64; 2],
    /// Persistent congestion episodes (RFC 9002 §7.6).
    pub persistent_congestion: [u64; 2],
    /// STREAM bytes sent again after a loss.
    pub stream_bytes_retransmitted: [u64; 2],
    /// DATAGRAM chunks sent.
    pub datagrams_sent: [u64; 2],
    /// DATAGRAM chunks declared lost (never sent again).
    pub datagrams_lost: [u64; 2],
    /// Times a stream was held at its MAX_STREAM_DATA limit.
    pub stream_data_blocked: [u64; 2],
    /// Streams that waited for MAX_STREAMS credit before opening.
    pub streams_blocked: [u64; 2],
}

/// QoE of a page-load flow, from per-object delivery times (`triage_web::qoe::estimate`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PageReport {
    /// Page name.
    pub name: String,
    /// Objects in the page.
    pub objects: usize,
    /// Objects that arrived.
    pub delivered: usize,
    /// First contentful paint.
    pub fcp_ms: Option<f64>,
    /// PriorityBucket's first render time (last critical HTML/CSS/JS).
    pub first_render_ms: Option<f64>,
    /// Largest contentful paint (its stand-in in `lcp_element`).
    pub lcp_ms: Option<f64>,
    /// What LCP used.
    pub lcp_element: Option<String>,
    /// Time-to-interactive proxy.
    pub tti_ms: Option<f64>,
    /// Speed Index proxy.
    pub speed_index_ms: Option<f64>,
    /// Total Blocking Time (a page load with a trace's CPU model, `[flows.browser] trace`):
    /// the main-thread tasks that start between FCP and TTI, each's time over 50 ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tbt_ms: Option<f64>,
    /// Page load time: the last object.
    pub plt_ms: Option<f64>,
    /// CATS's CLS-risk estimate.
    pub cls: Option<String>,
    /// QUIC mode with a reliability policy: what the objects sent as datagrams lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagrams: Option<DatagramLossReport>,
}

/// Lighthouse's Total Blocking Time over simulated main-thread tasks (start, length): for
/// each task that starts at or after FCP and before TTI, its time beyond 50 ms.
pub fn total_blocking_ns(tasks: &[(u64, u64, bool)], fcp_ns: Option<u64>, tti_ns: Option<u64>) -> u64 {
    const LONG_TASK_NS: u64 = 50_000_000;
    let (Some(fcp), Some(tti)) = (fcp_ns, tti_ns) else { return 0 };
    tasks
        .iter()
        .filter(|&&(start, _, _)| start >= fcp && start < tti)
        .map(|&(_, len, _)| len.saturating_sub(LONG_TASK_NS))
        .sum()
}

/// Data loss of the objects a page load sent as DATAGRAM chunks (thesis §6.1; PR-6).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DatagramLossReport {
    /// Objects sent as datagrams.
    pub objects: usize,
    /// Of those, objects with missing bytes.
    pub incomplete: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Bytes that never arrived.
    pub lost_bytes: u64,
    /// `lost_bytes` in percent of `bytes`.
    pub lost_pct: f64,
    /// `lost_bytes` in percent of the page's bytes.
    pub page_lost_pct: f64,
}

fn datagram_loss(sim: &Simulator, flow: u32, page: &crate::app::PageLoad) -> Option<DatagramLossReport> {
    if !page.unreliable.iter().any(|&u| u) {
        return None;
    }
    let partials = sim.page_partials(flow)?;
    let loss = triage_web::data_loss(&page.page, &partials, &page.partial);
    Some(DatagramLossReport {
        objects: page.unreliable.iter().filter(|&&u| u).count(),
        incomplete: partials.values().filter(|d| d.unreliable && !d.complete).count(),
        bytes: loss.unreliable.expected_bytes,
        lost_bytes: loss.unreliable.lost_bytes,
        lost_pct: loss.unreliable.lost_pct(),
        page_lost_pct: loss.page.lost_pct(),
    })
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
    /// Packets the link delivered twice (`duplicate`); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicated_packets: u64,
    /// Packets that overtook one sent before them (`jitter`); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub reordered_packets: u64,
    /// Queue counters.
    pub queue: QueueStats,
}

fn at_most_one(x: &u32) -> bool {
    *x <= 1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// What building the run had to say about its inputs, the lines `triage run` prints as
    /// warnings: a recording's entries skipped or adjusted, its cache hits. Absent when
    /// there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl RunReport {
    /// Collects the report of a finished run.
    pub fn new(scenario: &str, seed: u64, sim: &Simulator) -> Self {
        let flows_res = sim.flow_results();
        let end_ns = sim.now_ns();
        let flows = flows_res
            .iter()
            .map(|f| {
                let fct = f.completed_ns.map(|c| c - f.start_ns);
                let delivered_bytes = f.conn_stats.iter().map(|s| s.bytes_delivered).sum();
                // (bytes, time) the goodput is taken over: the whole transfer, or what the
                // run moved of an incomplete one.
                let (goodput_bytes, goodput_ns) = match fct {
                    Some(d) => (f.bytes, d),
                    None => (delivered_bytes, end_ns.saturating_sub(f.start_ns)),
                };
                FlowReport {
                    name: f.name.clone(),
                    start_ms: ms(f.start_ns),
                    completed_ms: f.completed_ns.map(ms),
                    fct_ms: fct.map(ms),
                    bytes: f.bytes,
                    delivered_bytes,
                    goodput_mbps: (goodput_ns > 0)
                        .then(|| ((goodput_bytes as f64 * 8.0 / (goodput_ns as f64 / 1e9)) / 1e3).round() / 1e3),
                    retransmissions: f.retransmitted_segments,
                    rtos: f.rto_count,
                    fast_recoveries: f.fast_recoveries,
                    packets_sent: [f.conn_stats[1].packets_sent, f.conn_stats[0].packets_sent],
                    out_of_window_segments: f.conn_stats.iter().map(|s| s.out_of_window_segments).sum(),
                    connections: f.connections,
                    page: None,
                    quic: None,
                    paths: None,
                }
            })
            .collect::<Vec<FlowReport>>();
        let mut flows = flows;
        for (i, fr) in flows.iter_mut().enumerate() {
            fr.quic = quic_report(sim, i as u32);
            fr.paths = path_report(sim, i);
            if let Some((page, d)) = sim.page_deliveries(i as u32) {
                let mut q = triage_web::estimate(&page.page, &d, &triage_web::QoeConfig::default());
                let tasks: Option<Vec<(u64, u64, bool)>> = sim
                    .page_main_tasks(i as u32)
                    .map(|v| v.iter().map(|&(start, task)| (start, task.ns, task.layout)).collect());
                if let Some(observed) = page.browser.observed {
                    let arrived = sim.page_arrivals(i as u32).unwrap_or_default();
                    // Each object's first task: the main thread runs an object's tasks back
                    // to back, so its first in the run's order.
                    let mut first_tasks = vec![None; page.page.len()];
                    for &(start, task) in sim.page_main_tasks(i as u32).unwrap_or(&[]) {
                        if let Some(slot) = first_tasks.get_mut(task.object as usize).filter(|s| s.is_none()) {
                            *slot = Some((task.recorded_start_ns, start.saturating_add(task.ns)));
                        }
                    }
                    let t = triage_web::qoe::lantern::TraceMetrics {
                        observed,
                        arrived_ns: &arrived,
                        rtt_ns: sim.flow_base_rtt_ns(i as u32),
                        tasks: tasks.as_deref().unwrap_or(&[]),
                        first_tasks: &first_tasks,
                    };
                    triage_web::qoe::lantern::apply(&mut q, &page.page, &d, &t);
                }
                let t = |x: Option<u64>| x.map(ms);
                fr.page = Some(PageReport {
                    name: page.page.name().to_string(),
                    objects: page.page.len(),
                    delivered: d.len(),
                    fcp_ms: t(q.first_contentful_paint_ns),
                    first_render_ms: t(q.first_render_ns),
                    lcp_ms: t(q.largest_contentful_paint_ns),
                    lcp_element: q.lcp_element.map(|e| match e {
                        triage_web::qoe::LcpElement::Image(id) => format!("image {}", page.object_name(id.index())),
                        triage_web::qoe::LcpElement::Text => "text at first paint".to_string(),
                        triage_web::qoe::LcpElement::RecordedByLcp(id) => {
                            format!("what the recording loaded by its LCP (last: {})", page.object_name(id.index()))
                        }
                    }),
                    tti_ms: t(q.time_to_interactive_ns),
                    speed_index_ms: t(q.speed_index_ns),
                    tbt_ms: tasks.as_deref().map(|tasks| {
                        ms(total_blocking_ns(tasks, q.first_contentful_paint_ns, q.time_to_interactive_ns))
                    }),
                    plt_ms: t(q.page_load_ns),
                    cls: q.cls.map(|c| match c.rating {
                        triage_web::qoe::ClsRating::Good => "<= 0.1".to_string(),
                        triage_web::qoe::ClsRating::Poor => format!("> 0.1 ({} late images)", c.late_images),
                    }),
                    datagrams: datagram_loss(sim, i as u32, &page),
                });
            }
        }
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
                first_byte_ms: m.first_byte_ns.map(ms),
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
                duplicated_packets: l.stats().duplicated_packets,
                reordered_packets: l.stats().reordered_packets,
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
            warnings: Vec::new(),
        }
    }
}

impl RunReport {
    /// Carries the warnings building the run gave ([`crate::scenario::Built::warnings`]).
    pub fn with_warnings(mut self, warnings: &[String]) -> Self {
        self.warnings = warnings.to_vec();
        self
    }

    /// Names the paths of every multipath flow (by path ID, as
    /// [`crate::scenario::Built::path_names`] lists them).
    pub fn with_path_names(mut self, names: &[String]) -> Self {
        for p in self.flows.iter_mut().flat_map(|f| f.paths.iter_mut().flatten()) {
            if let Some(n) = names.get(p.id as usize) {
                p.name = n.clone();
            }
        }
        self
    }
}

/// The per-path counters of flow `flow` when it is a multipath flow: it has paths beyond
/// the first, or path priors (a `[[paths]]` scenario of one path). Single-path flows report
/// none, so their JSON stays as it was.
fn path_report(sim: &Simulator, flow: usize) -> Option<Vec<PathReport>> {
    let spec = sim.flow_spec(flow)?;
    let multipath = !spec.extra_paths.is_empty()
        || !spec.server_transport.quic.multipath.priors.is_empty()
        || !spec.client_transport.quic.multipath.priors.is_empty();
    if !multipath {
        return None;
    }
    let [client, server] = sim.flow_path_stats(flow);
    let n = (1 + spec.extra_paths.len()).max(client.len()).max(server.len());
    let paths = (0..n)
        .map(|i| {
            let (s, c) = (server.get(i).cloned().unwrap_or_default(), client.get(i).cloned().unwrap_or_default());
            let both = |f: fn(&triage_core::quic::PathStats) -> u64| [f(&s), f(&c)];
            PathReport {
                id: i as u32,
                name: format!("path{i}"),
                packets_sent: both(|x| x.packets_sent),
                bytes_sent: both(|x| x.bytes_sent),
                data_bytes_sent: both(|x| x.data_bytes_sent),
                packets_received: both(|x| x.packets_received),
                packets_lost: both(|x| x.packets_lost),
                pto_count: both(|x| x.pto_count),
                failures: both(|x| x.failures),
                srtt_ms: [ms(s.srtt_ns), ms(c.srtt_ns)],
                cwnd_bytes: both(|x| x.cwnd_bytes),
            }
        })
        .collect();
    Some(paths)
}

/// The QUIC counters of flow `flow`, when both its ends ran in QUIC mode.
fn quic_report(sim: &Simulator, flow: u32) -> Option<QuicFlowReport> {
    let q = |server: bool| match sim.endpoint(flow, server) {
        Some(triage_core::Endpoint::Quic(c)) => Some(c.quic_stats().clone()),
        _ => None,
    };
    let (s, c) = (q(true)?, q(false)?);
    let both = |f: fn(&triage_core::quic::QuicStats) -> u64| [f(&s), f(&c)];
    Some(QuicFlowReport {
        handshake_ms: c.handshake_done_ns.map(ms),
        packets_lost: both(|x| x.packets_lost),
        pto_count: both(|x| x.pto_count),
        persistent_congestion: both(|x| x.persistent_congestion),
        stream_bytes_retransmitted: both(|x| x.stream_bytes_retransmitted),
        datagrams_sent: both(|x| x.datagrams_sent),
        datagrams_lost: both(|x| x.datagrams_lost),
        stream_data_blocked: both(|x| x.stream_data_blocked),
        streams_blocked: both(|x| x.streams_blocked),
    })
}
