//! Tables, CSV files and time series.
// Table headers go through the same format string as their rows, so the columns line up.
#![allow(clippy::write_literal)]

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use triage_sim::report::{ms, RunReport};
use triage_sim::Simulator;

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"))
}

/// The human-readable result.
pub fn print_table(r: &RunReport) {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {} (seed {}), ended at {:.1} ms simulated, {} packet-hops",
        r.scenario, r.seed, r.end_ms, r.packet_hops
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<12} {:<7} {:<10} {:>10} {:>4} {:>12} {:>14} {:>8}  {}",
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
            "{:<12} {:<7} {:<10} {:>10} {:>4} {:>12} {:>14} {:>8}  {}",
            m.flow,
            m.from,
            m.name,
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
        "{:<12} {:>10} {:>12} {:>10} {:>8} {:>6} {:>8}",
        "flow", "fct_ms", "bytes", "goodput", "retrans", "rtos", "recov"
    );
    for f in &r.flows {
        let _ = writeln!(
            s,
            "{:<12} {:>10} {:>12} {:>10} {:>8} {:>6} {:>8}",
            f.name,
            opt(f.fct_ms),
            f.bytes,
            f.goodput_mbps.map_or("-".into(), |g| format!("{g:.3}M")),
            f.retransmissions,
            f.rtos,
            f.fast_recoveries
        );
    }
    if r.flows.iter().any(|f| f.page.is_some()) {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<12} {:<14} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
            "flow", "page", "objects", "fcp_ms", "render_ms", "lcp_ms", "tti_ms", "si_ms", "plt_ms", "cls"
        );
        for f in &r.flows {
            if let Some(p) = &f.page {
                let _ = writeln!(
                    s,
                    "{:<12} {:<14} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
                    f.name,
                    p.name.chars().take(14).collect::<String>(),
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
                        "{:<12} datagrams: {} objects, {} bytes; {} incomplete, {} bytes lost = {:.2}% of datagram bytes ({:.2}% of the page)",
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
            "{:<12} {:<12} {:<7} {:>10} {:>12} {:>7} {:>10} {:>6} {:>6} {:>9} {:>10}",
            "flow", "path", "end", "packets", "data_bytes", "share", "received", "lost", "ptos", "srtt_ms", "failures"
        );
        for f in &r.flows {
            let Some(paths) = &f.paths else { continue };
            for (end, e) in [("server", 0), ("client", 1)] {
                let total: u64 = paths.iter().map(|p| p.data_bytes_sent[e]).sum();
                for p in paths {
                    let share = p.data_bytes_sent[e] as f64 * 100.0 / total.max(1) as f64;
                    let _ = writeln!(
                        s,
                        "{:<12} {:<12} {:<7} {:>10} {:>12} {:>6.1}% {:>10} {:>6} {:>6} {:>9.1} {:>10}",
                        f.name,
                        format!("{} {}", p.id, p.name).chars().take(12).collect::<String>(),
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
    let _ = writeln!(
        s,
        "{:<16} {:>10} {:>12} {:>8} {:>8} {:>9} {:>9}",
        "link", "packets", "bytes", "drops", "lost", "ecn_marks", "max_queue"
    );
    for l in &r.links {
        let _ = writeln!(
            s,
            "{:<16} {:>10} {:>12} {:>8} {:>8} {:>9} {:>9}",
            l.name,
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
    outln!("comparison of variants");
    outln!(
        "{:<10} {:<12} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "variant",
        "flow",
        "fct_ms",
        "fcp_ms",
        "lcp_ms",
        "tti_ms",
        "plt_ms",
        "retrans"
    );
    for (name, r) in reports {
        for f in &r.flows {
            let p = f.page.as_ref();
            outln!(
                "{:<10} {:<12} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}",
                name,
                f.name,
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

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Writes CSV files and time series into `dir`.
pub fn write_out(dir: &Path, r: &RunReport, sim: &Simulator) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut m = String::from(
        "flow,from,name,bytes,priority,written_ms,completed_ms,received_priority,discarded_bytes,discard_reason\n",
    );
    for x in &r.messages {
        let _ = writeln!(
            m,
            "{},{},{},{},{},{},{},{},{},{}",
            x.flow,
            x.from,
            x.name,
            x.bytes,
            x.priority,
            x.written_ms.map_or(String::new(), |v| v.to_string()),
            x.completed_ms.map_or(String::new(), |v| v.to_string()),
            x.received_priority.map_or(String::new(), |v| v.to_string()),
            x.discarded_bytes.map_or(String::new(), |v| v.to_string()),
            x.discard_reason
                .and_then(|w| serde_json::to_value(w).ok())
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        );
    }
    fs::write(dir.join("messages.csv"), m)?;
    let mut f = String::from("flow,start_ms,completed_ms,fct_ms,bytes,retransmissions,rtos,fast_recoveries\n");
    for x in &r.flows {
        let _ = writeln!(
            f,
            "{},{},{},{},{},{},{},{}",
            x.name,
            x.start_ms,
            x.completed_ms.map_or(String::new(), |v| v.to_string()),
            x.fct_ms.map_or(String::new(), |v| v.to_string()),
            x.bytes,
            x.retransmissions,
            x.rtos,
            x.fast_recoveries
        );
    }
    fs::write(dir.join("flows.csv"), f)?;
    let mut l = String::from(
        "link,tx_packets,tx_bytes,dropped_packets,dropped_bytes,lost_packets,ecn_marked_packets,ecn_marked_bytes,\
         max_queue_packets,mean_sojourn_ms\n",
    );
    for x in &r.links {
        let sojourn = x.queue.sojourn_total_ns.checked_div(x.queue.dequeued_packets).map_or(0.0, ms);
        let _ = writeln!(
            l,
            "{},{},{},{},{},{},{},{},{},{}",
            x.name,
            x.tx_packets,
            x.tx_bytes,
            x.queue.dropped_packets,
            x.queue.dropped_bytes,
            x.lost_packets,
            x.queue.marked_packets,
            x.queue.marked_bytes,
            x.queue.max_len_packets,
            sojourn
        );
    }
    fs::write(dir.join("links.csv"), l)?;
    if r.flows.iter().any(|f| f.paths.is_some()) {
        let mut p = String::from(
            "flow,path_id,path,end,packets_sent,bytes_sent,data_bytes_sent,packets_received,packets_lost,pto_count,\
             failures,srtt_ms,cwnd_bytes\n",
        );
        for f in &r.flows {
            for x in f.paths.iter().flatten() {
                for (end, e) in [("server", 0), ("client", 1)] {
                    let _ = writeln!(
                        p,
                        "{},{},{},{end},{},{},{},{},{},{},{},{},{}",
                        f.name,
                        x.id,
                        x.name,
                        x.packets_sent[e],
                        x.bytes_sent[e],
                        x.data_bytes_sent[e],
                        x.packets_received[e],
                        x.packets_lost[e],
                        x.pto_count[e],
                        x.failures[e],
                        x.srtt_ms[e],
                        x.cwnd_bytes[e]
                    );
                }
            }
        }
        fs::write(dir.join("paths.csv"), p)?;
    }
    let rec = sim.recorder();
    for series in &rec.conn_series {
        let flow = &r.flows[series.flow as usize].name;
        let end = if series.is_server { "server" } else { "client" };
        let mut t = String::from("t_ms,cwnd_bytes,inflight_bytes,srtt_ms,rtt_ms,pacing_rate_bps,delivered_bytes,delivery_rate_bps,cc_state\n");
        let mut prev: Option<(u64, u64)> = None;
        for s in &series.samples {
            let rate = prev.map_or(0, |(pt, pd)| {
                if s.t_ns > pt {
                    (s.delivered_bytes - pd) * 8 * 1_000_000_000 / (s.t_ns - pt)
                } else {
                    0
                }
            });
            prev = Some((s.t_ns, s.delivered_bytes));
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{},{},{}",
                ms(s.t_ns),
                s.cwnd_bytes,
                s.inflight_bytes,
                ms(s.srtt_ns),
                ms(s.rtt_ns),
                s.pacing_rate_bps,
                s.delivered_bytes,
                rate,
                s.cc_state
            );
        }
        fs::write(dir.join(format!("timeseries_{}_{end}.csv", sanitize(flow))), t)?;
    }
    for (i, link) in sim.network().links.iter().enumerate() {
        if link.stats().tx_packets == 0 {
            continue;
        }
        let mut q = String::from("t_ms,len_packets,len_bytes\n");
        for s in &rec.queue_series[i] {
            let _ = writeln!(q, "{},{},{}", ms(s.t_ns), s.len_packets, s.len_bytes);
        }
        fs::write(dir.join(format!("queue_{}.csv", sanitize(&link.name))), q)?;
    }
    let mut st = String::from("flow,end,t_ms,state\n");
    for (series, t, state) in &rec.state_changes {
        let s = &rec.conn_series[*series];
        let _ = writeln!(
            st,
            "{},{},{},{}",
            r.flows[s.flow as usize].name,
            if s.is_server { "server" } else { "client" },
            ms(*t),
            state
        );
    }
    fs::write(dir.join("cc_states.csv"), st)?;
    if !rec.packets.is_empty() {
        let mut p = String::from(
            "t_ms,link,event,src,dst,flags,seq,ack,payload_bytes,wire_bytes,ecn,dscp,priority_option,sack_blocks\n",
        );
        for x in &rec.packets {
            let _ = writeln!(
                p,
                "{},{},{},{}:{},{}:{},{:#04x},{},{},{},{},{},{},{},{}",
                ms(x.t_ns),
                sim.network().links[x.link as usize].name,
                x.event,
                sim.network().nodes[x.src.0 as usize].name,
                x.src.1,
                sim.network().nodes[x.dst.0 as usize].name,
                x.dst.1,
                x.flags,
                x.seq,
                x.ack,
                x.payload_bytes,
                x.wire_bytes,
                x.ecn,
                x.dscp,
                x.priority_option.map_or(String::new(), |v| v.to_string()),
                x.sack_blocks
            );
        }
        fs::write(dir.join("packets.csv"), p)?;
    }
    fs::write(dir.join("report.json"), serde_json::to_string_pretty(r).unwrap_or_default())?;
    Ok(())
}
