//! QUIC mode against a real QUIC stack: the CATS page over one link, as
//! ../shared/reference/quic delivers it with quinn through a userspace link emulator.
//!
//! The network is one duplex link (rate and one-way delay both directions, a 1000-packet
//! FIFO, optional Bernoulli loss per direction). The client opens the connection at t = 0;
//! once the handshake completes on the server, it writes P4 150 KiB, P3 60 KiB, P2 40 KiB,
//! P1 25 KiB and P0 8 KiB in that order, one stream each (or as DATAGRAM chunks). The
//! transport is configured as the reference's "exact transport configuration": 1452-byte
//! UDP payloads, an initial window of 14520 bytes, RFC 9000's ACK policy, RFC 9002's
//! thresholds, the reference's pacer, 1405-byte datagram chunks behind a 9-byte header.
//! `tcp` runs TCP mode (MSS 1448, IW 10, delayed ACK every 2 segments) over the same link,
//! the counterpart of the reference's Linux TCP runs.

use serde::Serialize;
use triage_core::cc::ControllerKind;
use triage_core::sched::stream::StreamSchedulerKind;
use triage_core::{ConnectionConfig, SchedulerKind, TransportMode};

use crate::app::{AppSpec, MessageSpec};
use crate::experiments::cats::PAGE;
use crate::loss::LossModel;
use crate::report::ms;
use crate::sim::{FlowSpec, Network, NodeKind, Simulator};
use crate::topology::{add_duplex, add_simplex, LinkParams};

/// The sending modes of the reference (plus RFC 9218 and CATS over streams).
pub const MODES: [&str; 8] = ["tcp", "fifo", "rr", "prio", "rfc9218", "cats", "dg01", "dgall"];

/// One setting of the reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuicSetting {
    /// Sending mode, one of [`MODES`].
    pub mode: String,
    /// Congestion controller name.
    pub cc: String,
    /// Link rate, both directions.
    pub rate_bps: u64,
    /// One-way delay in ms.
    pub owd_ms: f64,
    /// Random loss per packet and direction.
    pub loss: f64,
    /// Seed of the loss processes.
    pub seed: u64,
    /// Instead of our own loss draws, the reference link emulator's with this seed
    /// ([`emulator_losses`](super::emulator_losses)): the run meets exactly the losses the
    /// reference run with that seed met, packet position by packet position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_seed: Option<u64>,
}

impl QuicSetting {
    /// Whether a run of this rate, one-way delay, loss, controller and mode belongs to this
    /// setting's cell (delay and loss equal within 1e-9).
    pub fn is_cell(&self, rate_bps: u64, owd_ms: f64, loss: f64, cc: &str, mode: &str) -> bool {
        self.rate_bps == rate_bps
            && (self.owd_ms - owd_ms).abs() < 1e-9
            && (self.loss - loss).abs() < 1e-9
            && self.cc == cc
            && self.mode == mode
    }
}

/// Packets per direction whose emulator draws a replayed run takes (a page run sends a few
/// hundred; past these no packet is lost).
const REPLAY_PACKETS: u64 = 100_000;

/// One group's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupOutcome {
    /// When the client held every byte (streams), or when the last chunk that arrived came
    /// in (datagrams), in ms from the client's first packet; `None` when nothing arrived.
    pub completed_ms: Option<f64>,
    /// Datagram chunks sent (0 for a stream group).
    pub chunks: u32,
    /// Datagram chunks that never arrived.
    pub lost: u32,
    /// True when the group was sent as datagrams.
    pub datagram: bool,
}

/// One run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuicRun {
    /// What was run.
    #[serde(flatten)]
    pub setting: QuicSetting,
    /// Groups by name, P4..P0.
    pub groups: Vec<(String, GroupOutcome)>,
    /// Packets the server declared lost (QUIC) or retransmitted segments (TCP).
    pub server_losses: u64,
    /// Handshake completion at the client, ms.
    pub handshake_ms: Option<f64>,
}

/// Errors in a setting.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum QuicSettingError {
    /// Unknown mode.
    #[error("unknown mode `{0}`: expected one of tcp, fifo, rr, prio, rfc9218, cats, dg01, dgall")]
    Mode(String),
    /// Unknown controller.
    #[error("unknown congestion controller `{0}`: expected newreno, cubic or bbr")]
    Cc(String),
    /// Rate out of range.
    #[error("rate {0} bps: expected 10 kbps to 100 Gbps")]
    Rate(u64),
    /// Loss out of range.
    #[error("loss {0}: expected a probability in [0, 0.5]")]
    Loss(f64),
    /// A qlog file could not be written.
    #[error("qlog: {0}")]
    Io(String),
    /// Delay out of range.
    #[error("one-way delay {0} ms: expected 0 to 10000 ms")]
    Delay(f64),
}

fn controller(name: &str) -> Result<ControllerKind, QuicSettingError> {
    match name {
        "newreno" => Ok(ControllerKind::NewReno),
        "bbr" => Ok(ControllerKind::Bbr),
        other => serde_json::from_value(serde_json::Value::String(other.into()))
            .map_err(|_| QuicSettingError::Cc(other.into())),
    }
}

/// The stream scheduler and the datagram groups of a QUIC mode.
fn quic_mode(mode: &str) -> Option<(StreamSchedulerKind, &'static [&'static str])> {
    Some(match mode {
        "fifo" | "dgall" => {
            (StreamSchedulerKind::Fifo, if mode == "dgall" { &["P4", "P3", "P2", "P1", "P0"] } else { &[] })
        }
        "rr" => (StreamSchedulerKind::Rr, &[]),
        "dg01" => (StreamSchedulerKind::Rr, &["P1", "P0"]),
        "prio" => (StreamSchedulerKind::Prio, &[]),
        "rfc9218" => (StreamSchedulerKind::Rfc9218, &[]),
        "cats" => (StreamSchedulerKind::Cats(triage_core::sched::CatsConfig::default()), &[]),
        _ => return None,
    })
}

/// The transport of a setting, as the reference configures it.
pub fn transport(s: &QuicSetting) -> Result<ConnectionConfig, QuicSettingError> {
    let cc = controller(&s.cc)?;
    let mut cfg = ConnectionConfig { controller: cc, seed: s.seed, ..Default::default() };
    if s.mode == "tcp" {
        cfg.scheduler = SchedulerKind::Fifo;
        // Linux: 200 ms minimum RTO, 40 ms delayed-ACK ceiling.
        cfg.min_rto_ns = 200_000_000;
        cfg.delayed_ack_timeout_ns = 40_000_000;
        // Linux's default loss recovery: RACK-TLP (RFC 8985).
        cfg.rack = true;
        // Linux's retransmission timer (SRTT + at least 200 ms, restarted by a fast
        // retransmission).
        cfg.linux_rto = true;
        // Linux's receiver: quick ACKs while its window grows, autotuning.
        cfg.linux_ack = true;
        return Ok(cfg);
    }
    let (sched, _) = quic_mode(&s.mode).ok_or_else(|| QuicSettingError::Mode(s.mode.clone()))?;
    cfg.mode = TransportMode::Quic;
    cfg.quic.scheduler = sched;
    // The reference's host: 0.7 ms per public-key TLS step (see `QuicConfig::tls_cpu_ns`).
    cfg.quic.tls_cpu_ns = 700_000;
    // quinn starts a STREAM frame only with more than 25 bytes left in the packet.
    cfg.quic.stream_frame_min_room_bytes = 25;
    // quinn's CUBIC (`Cubic::as_quinn`).
    cfg.quic.cubic_as_quinn = true;
    // 10 packets of 1452 bytes: 14520 bytes for every controller.
    cfg.initial_window_segments = 10;
    Ok(cfg)
}

fn validate(s: &QuicSetting) -> Result<(), QuicSettingError> {
    if !MODES.contains(&s.mode.as_str()) {
        return Err(QuicSettingError::Mode(s.mode.clone()));
    }
    controller(&s.cc)?;
    if !(10_000..=100_000_000_000).contains(&s.rate_bps) {
        return Err(QuicSettingError::Rate(s.rate_bps));
    }
    if !(0.0..=0.5).contains(&s.loss) {
        return Err(QuicSettingError::Loss(s.loss));
    }
    if !(0.0..=10_000.0).contains(&s.owd_ms) {
        return Err(QuicSettingError::Delay(s.owd_ms));
    }
    Ok(())
}

/// Builds the simulation of one setting (not run yet). The flow is flow 0; the client is
/// node "client", the server node "server".
pub fn build(s: &QuicSetting) -> Result<Simulator, QuicSettingError> {
    build_with_qlog(s, false)
}

/// [`build`], with qlog traces kept at both ends when `qlog` (QUIC modes only).
pub fn build_with_qlog(s: &QuicSetting, qlog: bool) -> Result<Simulator, QuicSettingError> {
    validate(s)?;
    let mut cfg = transport(s)?;
    cfg.quic.qlog = qlog;
    let dgram: &[&str] = quic_mode(&s.mode).map_or(&[], |m| m.1);
    let mut net = Network::default();
    let server = net.add_node("server", NodeKind::Host);
    let client = net.add_node("client", NodeKind::Host);
    let mut link = LinkParams::new(s.rate_bps, (s.owd_ms * 1e6).round() as u64, 1000);
    match s.replay_seed {
        Some(seed) if s.loss > 0.0 => {
            use super::emulator_losses::{lost_positions, Direction};
            let mut down = link.clone();
            down.loss = LossModel::List { lost: lost_positions(seed, Direction::Down, s.loss, REPLAY_PACKETS) };
            link.loss = LossModel::List { lost: lost_positions(seed, Direction::Up, s.loss, REPLAY_PACKETS) };
            add_simplex(&mut net, s.seed, server, client, &down);
            add_simplex(&mut net, s.seed, client, server, &link);
        }
        _ => {
            if s.loss > 0.0 {
                link.loss = LossModel::Bernoulli { loss_prob: s.loss };
            }
            add_duplex(&mut net, s.seed, server, client, &link);
        }
    }
    let msgs = PAGE
        .iter()
        .map(|&(name, prio, bytes)| MessageSpec {
            name: name.into(),
            bytes,
            priority: Some(prio),
            at_ns: None,
            unreliable: dgram.contains(&name),
            same_stream_as: None,
        })
        .collect();
    let mut sim = Simulator::new(net, 0);
    sim.add_flow(FlowSpec {
        name: "page".into(),
        client,
        server,
        start_ns: 0,
        client_transport: cfg.clone(),
        server_transport: cfg,
        client_app: AppSpec::Sink,
        server_app: AppSpec::Messages(msgs),
        extra_paths: Vec::new(),
    });
    Ok(sim)
}

/// Runs one setting.
pub fn run(s: &QuicSetting) -> Result<QuicRun, QuicSettingError> {
    run_with_qlog(s, None)
}

/// Runs one setting; with `qlog`, the client's and the server's traces are written into
/// that directory as `<mode>_<rate>bps_<owd>ms_seed<seed>_<client|server>.sqlog`.
pub fn run_with_qlog(s: &QuicSetting, qlog: Option<&std::path::Path>) -> Result<QuicRun, QuicSettingError> {
    let mut sim = build_with_qlog(s, qlog.is_some())?;
    sim.run(600_000_000_000, |_| {});
    if let Some(dir) = qlog {
        for server in [false, true] {
            if let Some(t) = sim.endpoint(0, server).and_then(|e| e.quic()).and_then(|q| q.qlog_trace()) {
                let side = if server { "server" } else { "client" };
                let name = format!("{}_{}bps_{}ms_seed{}_{side}.sqlog", s.mode, s.rate_bps, s.owd_ms, s.seed);
                let path = dir.join(name);
                let file = std::fs::File::create(&path)
                    .map_err(|e| QuicSettingError::Io(format!("{}: {e}", path.display())))?;
                crate::qlog::write(t, std::io::BufWriter::new(file))
                    .map_err(|e| QuicSettingError::Io(format!("{}: {e}", path.display())))?;
            }
        }
    }
    let dgram: &[&str] = quic_mode(&s.mode).map_or(&[], |m| m.1);
    let client = sim.endpoint(0, false).and_then(|e| e.quic());
    let server = sim.endpoint(0, true);
    let objects = client.map(|c| c.datagram_objects()).unwrap_or_default();
    let fates = server.and_then(|e| e.quic()).map(|c| c.datagram_fates()).unwrap_or_default();
    let mut groups = Vec::new();
    for (i, &(name, _, _)) in PAGE.iter().enumerate() {
        let rec = sim.recorder().messages.iter().find(|m| m.from_server && m.name == name).expect("a page group");
        let is_dg = dgram.contains(&name);
        let mut out = GroupOutcome { completed_ms: rec.completed_ns.map(ms), chunks: 0, lost: 0, datagram: is_dg };
        if is_dg {
            let id = i as u32;
            out.chunks = fates.iter().find(|f| f.0 == id).map_or(0, |f| f.1);
            if let Some(p) = objects.iter().find(|p| p.msg_id == id && !p.complete) {
                out.lost = p.chunks_missing();
                out.completed_ms = Some(ms(p.last_chunk_ns));
            } else if rec.completed_ns.is_none() {
                out.lost = out.chunks;
            }
        }
        groups.push((name.to_string(), out));
    }
    let server_losses = match server {
        Some(e) => match e.quic() {
            Some(q) => q.quic_stats().packets_lost,
            None => e.stats().retransmitted_segments,
        },
        None => 0,
    };
    let handshake_ms = client.and_then(|c| c.quic_stats().handshake_done_ns).map(ms);
    Ok(QuicRun { setting: s.clone(), groups, server_losses, handshake_ms })
}
