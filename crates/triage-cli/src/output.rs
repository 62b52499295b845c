//! Tables, CSV files and time series.
// Table headers go through the same format string as their rows, so the columns line up.
#![allow(clippy::write_literal)]

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use triage_sim::report::{ms, RunReport};
use triage_sim::Simulator;

use crate::chart;
use crate::table::{middle, or_empty, width, CsvFile, CsvResult, RunParams};

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"))
}

/// Longest flow, link or page name a table shows whole; longer ones are shortened from the
/// middle ([`middle`]) so that names differing at their end stay distinct.
const NAME_MAX: usize = 40;

/// The human-readable result. Every numeric column names its unit.
pub fn print_table(r: &RunReport) {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {} (seed {}), ended at {:.1} ms simulated, {} packet-hops",
        r.scenario, r.seed, r.end_ms, r.packet_hops
    );
    let _ = writeln!(s);
    let fw = width("flow", r.flows.iter().map(|f| f.name.as_str()), 12, NAME_MAX);
    let mw = width("message", r.messages.iter().map(|m| m.name.as_str()), 10, NAME_MAX);
    let _ = writeln!(
        s,
        "{:<fw$} {:<7} {:<mw$} {:>10} {:>4} {:>12} {:>14} {:>8}  {}",
        "flow", "from", "message", "bytes", "prio", "written_ms", "completed_ms", "rx_prio", "discarded"
    );
    for m in &r.messages {
        let discarded = match (m.discarded_bytes, m.discard_reason) {
            (Some(b), Some(why)) => format!(
                "{b} bytes ({}) at {:.1} ms",
                serde_json::to_value(why).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
                m.discarded_ms.unwrap_or(0.0)
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "{:<fw$} {:<7} {:<mw$} {:>10} {:>4} {:>12} {:>14} {:>8}  {}",
            middle(&m.flow, fw),
            m.from,
            middle(&m.name, mw),
            m.bytes,
            m.priority,
            opt(m.written_ms),
            opt(m.completed_ms),
            m.received_priority.map_or("-".into(), |p| p.to_string()),
            discarded
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<fw$} {:>10} {:>13} {:>15} {:>12} {:>12} {:>6} {:>8}",
        "flow", "fct_ms", "bytes", "delivered_bytes", "goodput_mbps", "retrans_segs", "rtos", "recov"
    );
    for f in &r.flows {
        let _ = writeln!(
            s,
            "{:<fw$} {:>10} {:>13} {:>15} {:>12} {:>12} {:>6} {:>8}",
            middle(&f.name, fw),
            opt(f.fct_ms),
            f.bytes,
            f.delivered_bytes,
            f.goodput_mbps.map_or("-".into(), |g| format!("{g:.3}")),
            f.retransmissions,
            f.rtos,
            f.fast_recoveries
        );
    }
    if r.flows.iter().any(|f| f.page.is_some()) {
        let pw = width("page", r.flows.iter().filter_map(|f| f.page.as_ref().map(|p| p.name.as_str())), 14, NAME_MAX);
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<fw$} {:<pw$} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
            "flow", "page", "objects", "fcp_ms", "render_ms", "lcp_ms", "tti_ms", "si_ms", "plt_ms", "cls"
        );
        for f in &r.flows {
            if let Some(p) = &f.page {
                let _ = writeln!(
                    s,
                    "{:<fw$} {:<pw$} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
                    middle(&f.name, fw),
                    middle(&p.name, pw),
                    format!("{}/{}", p.delivered, p.objects),
                    opt(p.fcp_ms),
                    opt(p.first_render_ms),
                    opt(p.lcp_ms),
                    opt(p.tti_ms),
                    opt(p.speed_index_ms),
                    opt(p.plt_ms),
                    p.cls.clone().unwrap_or_default()
                );
                if let Some(d) = &p.datagrams {
                    let _ = writeln!(
                        s,
                        "{:<fw$} datagrams: {} objects, {} bytes; {} incomplete, {} bytes lost = {:.2}% of datagram bytes ({:.2}% of the page)",
                        "", d.objects, d.bytes, d.incomplete, d.lost_bytes, d.lost_pct, d.page_lost_pct
                    );
                }
            }
        }
    }
    if r.flows.iter().any(|f| f.paths.is_some()) {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<fw$} {:<16} {:<7} {:>10} {:>12} {:>7} {:>10} {:>6} {:>6} {:>9} {:>10}",
            "flow",
            "path",
            "end",
            "packets",
            "data_bytes",
            "share",
            "rx_packets",
            "lost",
            "ptos",
            "srtt_ms",
            "failures"
        );
        for f in &r.flows {
            let Some(paths) = &f.paths else { continue };
            for (end, e) in [("server", 0), ("client", 1)] {
                let total: u64 = paths.iter().map(|p| p.data_bytes_sent[e]).sum();
                for p in paths {
                    let share = p.data_bytes_sent[e] as f64 * 100.0 / total.max(1) as f64;
                    let _ = writeln!(
                        s,
                        "{:<fw$} {:<16} {:<7} {:>10} {:>12} {:>6.1}% {:>10} {:>6} {:>6} {:>9.1} {:>10}",
                        middle(&f.name, fw),
                        middle(&format!("{} {}", p.id, p.name), 16),
                        end,
                        p.packets_sent[e],
                        p.data_bytes_sent[e],
                        share,
                        p.packets_received[e],
                        p.packets_lost[e],
                        p.pto_count[e],
                        p.srtt_ms[e],
                        p.failures[e]
                    );
                }
            }
        }
    }
    let _ = writeln!(s);
    let lw = width("link", r.links.iter().map(|l| l.name.as_str()), 16, NAME_MAX);
    let _ = writeln!(
        s,
        "{:<lw$} {:>10} {:>12} {:>12} {:>9} {:>14} {:>14}",
        "link", "tx_packets", "tx_bytes", "dropped_pkts", "lost_pkts", "ecn_marks_pkts", "max_queue_pkts"
    );
    for l in &r.links {
        let _ = writeln!(
            s,
            "{:<lw$} {:>10} {:>12} {:>12} {:>9} {:>14} {:>14}",
            middle(&l.name, lw),
            l.tx_packets,
            l.tx_bytes,
            l.queue.dropped_packets,
            l.lost_packets,
            l.queue.marked_packets,
            l.queue.max_len_packets
        );
    }
    out!("{s}");
}

/// One line per variant and flow: what a user would see, side by side.
pub fn print_comparison(reports: &[(String, RunReport)]) {
    let vw = width("variant", reports.iter().map(|r| r.0.as_str()), 10, NAME_MAX);
    let fw = width("flow", reports.iter().flat_map(|r| r.1.flows.iter().map(|f| f.name.as_str())), 12, NAME_MAX);
    outln!("comparison of variants");
    outln!(
        "{:<vw$} {:<fw$} {:>10} {:>9} {:>9} {:>9} {:>9} {:>12}",
        "variant",
        "flow",
        "fct_ms",
        "fcp_ms",
        "lcp_ms",
        "tti_ms",
        "plt_ms",
        "retrans_segs"
    );
    for (name, r) in reports {
        for f in &r.flows {
            let p = f.page.as_ref();
            outln!(
                "{:<vw$} {:<fw$} {:>10} {:>9} {:>9} {:>9} {:>9} {:>12}",
                middle(name, vw),
                middle(&f.name, fw),
                opt(f.fct_ms),
                opt(p.and_then(|p| p.fcp_ms)),
                opt(p.and_then(|p| p.lcp_ms)),
                opt(p.and_then(|p| p.tti_ms)),
                opt(p.and_then(|p| p.plt_ms)),
                f.retransmissions
            );
        }
    }
}

/// One object of a page load, as `objects.csv` holds it and the HTML report's waterfall
/// draws it. Times are from t=0 of the run; `object_id` is the page's object id, the `id`
/// of `triage page analyze --json` on the same page.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ObjectRow {
    /// The variant (empty without variants).
    #[serde(default)]
    pub variant: String,
    /// The page-load flow.
    pub flow: String,
    /// The page's object id.
    pub object_id: u32,
    /// The object's URL, whole.
    pub url: String,
    /// Content type (html, css, js, font, image, media, json, other).
    #[serde(rename = "type")]
    pub kind: String,
    /// Bytes on the wire.
    pub bytes: u64,
    /// The browser's fetch priority (highest … lowest), empty when unknown.
    pub browser_priority: String,
    /// CATS level 0 (most urgent) … 4.
    pub cats_level: u8,
    /// Essentialness class.
    pub essential: String,
    /// The object that made the browser fetch this one, if any.
    pub parent_id: Option<u32>,
    /// The connection that carried it: "FLOW connection N", N its group of a pooled page
    /// load (`[flows.browser]`), 0 for the flow's one connection.
    pub connection: String,
    /// The flow's start: the client opened the connection.
    pub connection_start_ms: f64,
    /// The client's connection was established.
    pub connected_ms: Option<f64>,
    /// When the browser asked for it (its parent arrived or was processed, plus any
    /// discovery delay; the connection established for the root of a one-connection load, the
    /// flow start with `[flows.browser]`); the request is written later while its connection
    /// is being set up or Chrome holds it back.
    pub discovered_ms: Option<f64>,
    /// The client wrote the request.
    pub request_ms: Option<f64>,
    /// The server wrote the response (the request arrived and was processed).
    pub response_start_ms: Option<f64>,
    /// The client got the response's first bytes.
    pub first_byte_ms: Option<f64>,
    /// The client held all of the response.
    pub complete_ms: Option<f64>,
}

/// Every object of every page-load flow of a run.
pub fn object_rows(variant: &str, r: &RunReport, sim: &Simulator) -> Vec<ObjectRow> {
    let mut rows = Vec::new();
    for (i, f) in r.flows.iter().enumerate() {
        let (Some((page, _)), Some(times)) = (sim.page_deliveries(i as u32), sim.page_object_times(i as u32)) else {
            continue;
        };
        let objects = page.page.objects();
        for (k, o) in objects.iter().enumerate() {
            let t = times.objects.get(k).copied().unwrap_or_default();
            // The connection of a pooled page load's object (the flow's one otherwise).
            let group = page.browser.group_of.get(k).copied().unwrap_or(0);
            rows.push(ObjectRow {
                variant: variant.to_string(),
                flow: f.name.clone(),
                object_id: o.id.0,
                url: o.url.clone(),
                kind: o.kind.name().to_string(),
                bytes: o.wire_bytes,
                browser_priority: o.browser_priority.map(|b| b.name().to_string()).unwrap_or_default(),
                cats_level: o.cats_level,
                essential: o.essential.name().to_string(),
                parent_id: o.parent.map(|p| p.0),
                connection: format!("{} connection {group}", f.name),
                connection_start_ms: ms(times.start_ns),
                connected_ms: times.connected_ns.map(ms),
                discovered_ms: t.discovered_ns.map(ms),
                request_ms: t.request_ns.map(ms),
                response_start_ms: t.response_ns.map(ms),
                first_byte_ms: t.first_byte_ns.map(ms),
                complete_ms: t.complete_ns.map(ms),
            });
        }
    }
    rows
}

/// Column names of `objects.csv` after the parameter columns.
const OBJECT_COLUMNS: [&str; 17] = [
    "flow",
    "object_id",
    "url",
    "type",
    "bytes",
    "browser_priority",
    "cats_level",
    "essential",
    "parent_id",
    "connection",
    "connection_start_ms",
    "connected_ms",
    "discovered_ms",
    "request_ms",
    "response_start_ms",
    "first_byte_ms",
    "complete_ms",
];

fn s<T: ToString>(v: T) -> String {
    v.to_string()
}

fn e<T: std::fmt::Display>(v: Option<T>) -> String {
    or_empty(v)
}

/// The files of `--out DIR`: each CSV holds the rows of every variant (the `variant`
/// column tells them apart), the charts are per variant.
pub struct OutDir {
    dir: PathBuf,
    messages: CsvFile,
    flows: CsvFile,
    links: CsvFile,
    pages: CsvFile,
    objects: CsvFile,
    timeseries: CsvFile,
    queues: CsvFile,
    cc_states: CsvFile,
    paths: Option<CsvFile>,
    packets: Option<CsvFile>,
    /// (variant, flow, FCP, LCP, TTI, SI, PLT) of every page load, for the page chart.
    page_metrics: Vec<(String, String, [Option<f64>; 5])>,
}

impl OutDir {
    /// Creates `dir` and the CSV files every run writes.
    pub fn create(dir: &Path) -> CsvResult<OutDir> {
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let f = |name: &str, header: &[&str]| CsvFile::create(&dir.join(name), header);
        Ok(OutDir {
            dir: dir.to_path_buf(),
            messages: f(
                "messages.csv",
                &[
                    "flow",
                    "from",
                    "message",
                    "bytes",
                    "priority",
                    "written_ms",
                    "first_byte_ms",
                    "completed_ms",
                    "received_priority",
                    "discarded_bytes",
                    "discard_reason",
                    "discarded_ms",
                ],
            )?,
            flows: f(
                "flows.csv",
                &[
                    "flow",
                    "start_ms",
                    "completed_ms",
                    "fct_ms",
                    "bytes",
                    "delivered_bytes",
                    "goodput_mbps",
                    "retransmitted_segments",
                    "rtos",
                    "fast_recoveries",
                    "server_packets_sent",
                    "client_packets_sent",
                ],
            )?,
            links: f(
                "links.csv",
                &[
                    "link",
                    "tx_packets",
                    "tx_bytes",
                    "dropped_packets",
                    "dropped_bytes",
                    "lost_packets",
                    "ecn_marked_packets",
                    "ecn_marked_bytes",
                    "max_queue_packets",
                    "max_queue_bytes",
                    "mean_sojourn_ms",
                ],
            )?,
            pages: f(
                "pages.csv",
                &[
                    "flow",
                    "page",
                    "objects",
                    "delivered_objects",
                    "fcp_ms",
                    "first_render_ms",
                    "lcp_ms",
                    "tti_ms",
                    "speed_index_ms",
                    "tbt_ms",
                    "page_load_ms",
                    "lcp_element",
                    "cls",
                ],
            )?,
            objects: f("objects.csv", &OBJECT_COLUMNS)?,
            timeseries: f(
                "timeseries.csv",
                &[
                    "flow",
                    "end",
                    "t_ms",
                    "cwnd_bytes",
                    "inflight_bytes",
                    "srtt_ms",
                    "rtt_ms",
                    "pacing_rate_bps",
                    "delivered_bytes",
                    "delivery_rate_bps",
                    "cc_state",
                ],
            )?,
            queues: f("queues.csv", &["link", "t_ms", "len_packets", "len_bytes"])?,
            cc_states: f("cc_states.csv", &["flow", "end", "t_ms", "state"])?,
            paths: None,
            packets: None,
            page_metrics: Vec::new(),
        })
    }

    /// Adds the rows of one run (one variant) and writes its charts.
    pub fn add(&mut self, p: &RunParams, r: &RunReport, sim: &Simulator, objects: &[ObjectRow]) -> CsvResult<()> {
        for x in &r.messages {
            let reason = x
                .discard_reason
                .and_then(|w| serde_json::to_value(w).ok())
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            self.messages.row(
                p,
                &[
                    s(&x.flow),
                    s(x.from),
                    s(&x.name),
                    s(x.bytes),
                    s(x.priority),
                    e(x.written_ms),
                    e(x.first_byte_ms),
                    e(x.completed_ms),
                    e(x.received_priority),
                    e(x.discarded_bytes),
                    reason,
                    e(x.discarded_ms),
                ],
            )?;
        }
        for x in &r.flows {
            self.flows.row(
                p,
                &[
                    s(&x.name),
                    s(x.start_ms),
                    e(x.completed_ms),
                    e(x.fct_ms),
                    s(x.bytes),
                    s(x.delivered_bytes),
                    e(x.goodput_mbps),
                    s(x.retransmissions),
                    s(x.rtos),
                    s(x.fast_recoveries),
                    s(x.packets_sent[0]),
                    s(x.packets_sent[1]),
                ],
            )?;
            if let Some(pg) = &x.page {
                self.pages.row(
                    p,
                    &[
                        s(&x.name),
                        s(&pg.name),
                        s(pg.objects),
                        s(pg.delivered),
                        e(pg.fcp_ms),
                        e(pg.first_render_ms),
                        e(pg.lcp_ms),
                        e(pg.tti_ms),
                        e(pg.speed_index_ms),
                        // Total Blocking Time needs the CPU model of a trace
                        // (`[flows.browser] trace`): empty without one.
                        e(pg.tbt_ms),
                        e(pg.plt_ms),
                        pg.lcp_element.clone().unwrap_or_default(),
                        pg.cls.clone().unwrap_or_default(),
                    ],
                )?;
                self.page_metrics.push((
                    p.variant.clone(),
                    x.name.clone(),
                    [pg.fcp_ms, pg.lcp_ms, pg.tti_ms, pg.speed_index_ms, pg.plt_ms],
                ));
            }
        }
        for o in objects {
            self.objects.row(
                p,
                &[
                    s(&o.flow),
                    s(o.object_id),
                    s(&o.url),
                    s(&o.kind),
                    s(o.bytes),
                    s(&o.browser_priority),
                    s(o.cats_level),
                    s(&o.essential),
                    e(o.parent_id),
                    s(&o.connection),
                    s(o.connection_start_ms),
                    e(o.connected_ms),
                    e(o.discovered_ms),
                    e(o.request_ms),
                    e(o.response_start_ms),
                    e(o.first_byte_ms),
                    e(o.complete_ms),
                ],
            )?;
        }
        for x in &r.links {
            let sojourn = x.queue.sojourn_total_ns.checked_div(x.queue.dequeued_packets).map_or(0.0, ms);
            self.links.row(
                p,
                &[
                    s(&x.name),
                    s(x.tx_packets),
                    s(x.tx_bytes),
                    s(x.queue.dropped_packets),
                    s(x.queue.dropped_bytes),
                    s(x.lost_packets),
                    s(x.queue.marked_packets),
                    s(x.queue.marked_bytes),
                    s(x.queue.max_len_packets),
                    s(x.queue.max_len_bytes),
                    s(sojourn),
                ],
            )?;
        }
        if r.flows.iter().any(|f| f.paths.is_some()) {
            if self.paths.is_none() {
                self.paths = Some(CsvFile::create(
                    &self.dir.join("paths.csv"),
                    &[
                        "flow",
                        "path_id",
                        "path",
                        "end",
                        "packets_sent",
                        "bytes_sent",
                        "data_bytes_sent",
                        "packets_received",
                        "packets_lost",
                        "pto_count",
                        "failures",
                        "srtt_ms",
                        "cwnd_bytes",
                    ],
                )?);
            }
            let paths = self.paths.as_mut().unwrap_or_else(|| unreachable!());
            for f in &r.flows {
                for x in f.paths.iter().flatten() {
                    for (end, i) in [("server", 0), ("client", 1)] {
                        paths.row(
                            p,
                            &[
                                s(&f.name),
                                s(x.id),
                                s(&x.name),
                                s(end),
                                s(x.packets_sent[i]),
                                s(x.bytes_sent[i]),
                                s(x.data_bytes_sent[i]),
                                s(x.packets_received[i]),
                                s(x.packets_lost[i]),
                                s(x.pto_count[i]),
                                s(x.failures[i]),
                                s(x.srtt_ms[i]),
                                s(x.cwnd_bytes[i]),
                            ],
                        )?;
                    }
                }
            }
        }
        let rec = sim.recorder();
        let end_name = |server: bool| if server { "server" } else { "client" };
        for series in &rec.conn_series {
            let flow = &r.flows[series.flow as usize].name;
            let end = end_name(series.is_server);
            let mut prev: Option<(u64, u64)> = None;
            for x in &series.samples {
                let rate = prev.map_or(0, |(pt, pd)| {
                    if x.t_ns > pt {
                        x.delivered_bytes.saturating_sub(pd).saturating_mul(8_000_000_000) / (x.t_ns - pt)
                    } else {
                        0
                    }
                });
                prev = Some((x.t_ns, x.delivered_bytes));
                self.timeseries.row(
                    p,
                    &[
                        s(flow),
                        s(end),
                        s(ms(x.t_ns)),
                        s(x.cwnd_bytes),
                        s(x.inflight_bytes),
                        s(ms(x.srtt_ns)),
                        s(ms(x.rtt_ns)),
                        s(x.pacing_rate_bps),
                        s(x.delivered_bytes),
                        s(rate),
                        s(x.cc_state),
                    ],
                )?;
            }
        }
        for (i, link) in sim.network().links.iter().enumerate() {
            if link.stats().tx_packets == 0 {
                continue;
            }
            for x in &rec.queue_series[i] {
                self.queues.row(p, &[s(&link.name), s(ms(x.t_ns)), s(x.len_packets), s(x.len_bytes)])?;
            }
        }
        for (series, t, state) in &rec.state_changes {
            let c = &rec.conn_series[*series];
            self.cc_states
                .row(p, &[s(&r.flows[c.flow as usize].name), s(end_name(c.is_server)), s(ms(*t)), s(state)])?;
        }
        if !rec.packets.is_empty() {
            if self.packets.is_none() {
                self.packets = Some(CsvFile::create(
                    &self.dir.join("packets.csv"),
                    &[
                        "t_ms",
                        "link",
                        "event",
                        "src",
                        "dst",
                        "flags",
                        "seq",
                        "ack",
                        "payload_bytes",
                        "wire_bytes",
                        "ecn",
                        "dscp",
                        "priority_option",
                        "sack_blocks",
                    ],
                )?);
            }
            let packets = self.packets.as_mut().unwrap_or_else(|| unreachable!());
            let net = sim.network();
            for x in &rec.packets {
                packets.row(
                    p,
                    &[
                        s(ms(x.t_ns)),
                        s(&net.links[x.link as usize].name),
                        s(x.event),
                        format!("{}:{}", net.nodes[x.src.0 as usize].name, x.src.1),
                        format!("{}:{}", net.nodes[x.dst.0 as usize].name, x.dst.1),
                        format!("{:#04x}", x.flags),
                        s(x.seq),
                        s(x.ack),
                        s(x.payload_bytes),
                        s(x.wire_bytes),
                        s(x.ecn),
                        s(x.dscp),
                        e(x.priority_option),
                        s(x.sack_blocks),
                    ],
                )?;
            }
        }
        self.charts(&p.variant, r, sim).map_err(|e| format!("{}: chart: {e}", self.dir.display()))
    }

    /// The time-series charts of one variant: congestion window, RTT and pacing rate of
    /// every connection end that sent data, and the backlog of every link that queued.
    fn charts(&self, variant: &str, r: &RunReport, sim: &Simulator) -> chart::ChartResult {
        let rec = sim.recorder();
        let suffix = if variant.is_empty() { String::new() } else { format!("_{}", sanitize(variant)) };
        let senders: Vec<_> =
            rec.conn_series.iter().filter(|c| c.samples.iter().any(|x| x.delivered_bytes > 0)).take(8).collect();
        if rec.conn_series.iter().all(|c| c.samples.is_empty()) {
            // No time series (`[measure] interval = "0ms"`): nothing to draw.
            return Ok(());
        }
        let label = |c: &triage_sim::recorder::ConnSeries| {
            format!("{} {}", r.flows[c.flow as usize].name, if c.is_server { "server" } else { "client" })
        };
        let of_senders = |f: fn(&triage_sim::recorder::ConnSample) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
            senders.iter().map(|c| (label(c), c.samples.iter().map(|x| (ms(x.t_ns), f(x))).collect())).collect()
        };
        let title = |what: &str| if variant.is_empty() { what.to_string() } else { format!("{what} ({variant})") };
        chart::lines(
            &self.dir.join(format!("cwnd{suffix}.svg")),
            &title("congestion window"),
            "cwnd (KB)",
            &of_senders(|x| x.cwnd_bytes as f64 / 1e3),
        )?;
        chart::lines(
            &self.dir.join(format!("rtt{suffix}.svg")),
            &title("smoothed RTT"),
            "SRTT (ms)",
            &of_senders(|x| ms(x.srtt_ns)),
        )?;
        chart::lines(
            &self.dir.join(format!("pacing_rate{suffix}.svg")),
            &title("pacing rate"),
            "pacing rate (Mbps)",
            &of_senders(|x| x.pacing_rate_bps as f64 / 1e6),
        )?;
        let queues: Vec<(String, Vec<(f64, f64)>)> = sim
            .network()
            .links
            .iter()
            .enumerate()
            .filter(|(i, _)| rec.queue_series[*i].iter().any(|x| x.len_packets > 0))
            .take(8)
            .map(|(i, l)| {
                (l.name.clone(), rec.queue_series[i].iter().map(|x| (ms(x.t_ns), x.len_packets as f64)).collect())
            })
            .collect();
        chart::lines(
            &self.dir.join(format!("queue{suffix}.svg")),
            &title("queue backlog"),
            "queue (packets)",
            &queues,
        )?;
        Ok(())
    }

    /// Flushes every file, draws the page-metric chart and writes `run.json`.
    pub fn finish(self, json: &serde_json::Value) -> CsvResult<()> {
        let dir = self.dir.clone();
        for f in [
            self.messages,
            self.flows,
            self.links,
            self.pages,
            self.objects,
            self.timeseries,
            self.queues,
            self.cc_states,
        ]
        .into_iter()
        .chain(self.paths)
        .chain(self.packets)
        {
            f.finish().map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        if !self.page_metrics.is_empty() {
            let cats = ["FCP", "LCP", "TTI", "Speed Index", "page load"].map(String::from).to_vec();
            let series: Vec<(String, Vec<f64>)> = self
                .page_metrics
                .iter()
                .take(4)
                .map(|(v, f, m)| {
                    let label = if v.is_empty() { f.clone() } else { format!("{v} {f}") };
                    (label, m.iter().map(|x| x.unwrap_or(0.0)).collect())
                })
                .collect();
            chart::bars(&dir.join("pages.svg"), "page metrics", "ms", &cats, &series)
                .map_err(|e| format!("{}: chart: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(json).map_err(|e| e.to_string())?;
        fs::write(dir.join("run.json"), text + "\n").map_err(|e| format!("{}: {e}", dir.display()))
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}
