//! Scenario-file syntax for queue disciplines and ECN transports (the `queue` table of a
//! link, `transport.eecn` and `transport.vcp`). Kept apart from `scenario.rs` so each
//! discipline's parameters sit beside their checks.
//!
//! ```toml
//! queue = { packets = 100 }                                          # DropTail
//! queue = { kind = "red", packets = 100, min_th = 30, max_th = 60 }  # RED, drops
//! queue = { kind = "red", packets = 100, min_th = 30, max_th = 60, ecn = true }
//! queue = { kind = "eecn", packets = 100, th1 = 0.3, th2 = 0.5 }     # EECN §4.3
//! queue = { kind = "vcp", packets = 100, t_rho = "200ms" }           # VCP router
//! ```

use serde::{Deserialize, Serialize};
use triage_core::cc::{AvgRtt, EecnConfig, VcpConfig, ZeroBeta};

use crate::queue::{EecnMarkerConfig, Limit, QueueKind, RedConfig, VcpRouterConfig};
use crate::scenario_resolved::ser;
use crate::units::{Duration, Rate, Size};

/// Queue discipline names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKindName {
    /// Tail drop (default).
    Droptail,
    /// RED in packet mode.
    Red,
    /// The EECN router.
    Eecn,
    /// The VCP router.
    Vcp,
}

/// A link's queue: a limit (`packets` or `bytes`) and optionally a discipline with its
/// parameters. Parameters of another discipline are errors.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table: { packets = 100 }, { bytes = \"150KB\" } or a discipline such as { kind = \"red\", packets = 100, min_th = 30, max_th = 60 }"
)]
pub struct QueueToml {
    /// Limit in packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    /// Limit in bytes (DropTail only).
    #[serde(serialize_with = "ser::opt_base", skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// "droptail" (default), "red", "eecn" or "vcp".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<QueueKindName>,
    /// RED: minimum threshold, packets (default 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// RED: maximum threshold, packets (default 60).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// RED: max_p (default 1/50, ns-3's LInterm 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_p: Option<f64>,
    /// RED: averaging weight (default 0.002).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qw: Option<f64>,
    /// RED: gentle mode (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// RED: mark CE instead of early drops (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// RED: rate that ages the average while idle (default 1.5 Mbps, as ns-3).
    #[serde(
        rename(serialize = "idle_rate_bps"),
        alias = "idle_rate_bps",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub idle_rate: Option<Rate>,
    /// RED: mean packet size for the idle correction (default 500 B, as ns-3).
    #[serde(
        rename(serialize = "mean_packet_size_bytes"),
        alias = "mean_packet_size_bytes",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub mean_packet_size: Option<Size>,
    /// EECN: Th1 (default 0.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub th1: Option<f64>,
    /// EECN: Th2 (default 0.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub th2: Option<f64>,
    /// EECN: prediction horizon of eq. (1) (default 100 ms).
    #[serde(
        rename(serialize = "horizon_ns"),
        alias = "horizon_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub horizon: Option<Duration>,
    /// EECN: rate-measurement window (default 100 ms).
    #[serde(
        rename(serialize = "rate_window_ns"),
        alias = "rate_window_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub rate_window: Option<Duration>,
    /// EECN: buckets of the window (default 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_buckets: Option<u32>,
    /// VCP: load interval t_ρ (default 200 ms).
    #[serde(
        rename(serialize = "t_rho_ns"),
        alias = "t_rho_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub t_rho: Option<Duration>,
    /// VCP: target utilization γ (default 0.98).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_utilization: Option<f64>,
    /// VCP: queue weight κ_q (default 0.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa_q: Option<f64>,
    /// Any kind: a device transmit ring of this many packets below the discipline, as
    /// ns-3's point-to-point devices have (default none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_packets: Option<u64>,
}

impl QueueToml {
    /// The limit and discipline, or (sub-field, message) naming what is wrong.
    pub fn to_kind(&self) -> Result<(Limit, QueueKind), (String, String)> {
        let kind = self.kind.unwrap_or(QueueKindName::Droptail);
        let limit = match (self.packets, self.bytes) {
            (Some(p), None) if p > 0 => Limit::Packets(p),
            (None, Some(b)) if b.0 > 0 && kind == QueueKindName::Droptail => Limit::Bytes(b.0),
            (None, Some(_)) if kind != QueueKindName::Droptail => {
                return Err((".bytes".into(), "RED, EECN and VCP queues count packets: use `packets`".into()))
            }
            (None, None) if kind != QueueKindName::Droptail => Limit::Packets(100),
            (Some(0), None) | (None, Some(_)) => return Err(("".into(), "expected a positive queue size".into())),
            _ => return Err(("".into(), "expected exactly one of `packets` or `bytes`".into())),
        };
        let red = [
            ("min_th", self.min_th.is_some()),
            ("max_th", self.max_th.is_some()),
            ("max_p", self.max_p.is_some()),
            ("qw", self.qw.is_some()),
            ("gentle", self.gentle.is_some()),
            ("ecn", self.ecn.is_some()),
            ("idle_rate", self.idle_rate.is_some()),
            ("mean_packet_size", self.mean_packet_size.is_some()),
        ];
        let eecn = [
            ("th1", self.th1.is_some()),
            ("th2", self.th2.is_some()),
            ("horizon", self.horizon.is_some()),
            ("rate_window", self.rate_window.is_some()),
            ("rate_buckets", self.rate_buckets.is_some()),
        ];
        let vcp = [
            ("t_rho", self.t_rho.is_some()),
            ("target_utilization", self.target_utilization.is_some()),
            ("kappa_q", self.kappa_q.is_some()),
        ];
        for (owner, fields) in
            [(QueueKindName::Red, &red[..]), (QueueKindName::Eecn, &eecn[..]), (QueueKindName::Vcp, &vcp[..])]
        {
            if owner != kind {
                if let Some((f, _)) = fields.iter().find(|(_, set)| *set) {
                    return Err((
                        format!(".{f}"),
                        format!("only applies to kind = \"{}\"", format!("{owner:?}").to_lowercase()),
                    ));
                }
            }
        }
        let packets = match limit {
            Limit::Packets(p) => p,
            Limit::Bytes(_) => 0,
        };
        let q = match kind {
            QueueKindName::Droptail => QueueKind::DropTail,
            QueueKindName::Red => {
                let d = RedConfig::default();
                let c = RedConfig {
                    limit_packets: packets,
                    min_th: self.min_th.unwrap_or(d.min_th),
                    max_th: self.max_th.unwrap_or(d.max_th),
                    max_p: self.max_p.unwrap_or(d.max_p),
                    qw: self.qw.unwrap_or(d.qw),
                    gentle: self.gentle.unwrap_or(d.gentle),
                    ecn: self.ecn.unwrap_or(d.ecn),
                    idle_rate_bps: self.idle_rate.map_or(d.idle_rate_bps, |r| r.0),
                    mean_packet_bytes: self.mean_packet_size.map_or(d.mean_packet_bytes, |s| s.0),
                };
                c.validate().map_err(sub_field)?;
                QueueKind::Red(c)
            }
            QueueKindName::Eecn => {
                let d = EecnMarkerConfig::default();
                let c = EecnMarkerConfig {
                    limit_packets: packets,
                    th1: self.th1.unwrap_or(d.th1),
                    th2: self.th2.unwrap_or(d.th2),
                    horizon_ns: self.horizon.map_or(d.horizon_ns, |x| x.0),
                    rate_window_ns: self.rate_window.map_or(d.rate_window_ns, |x| x.0),
                    rate_buckets: self.rate_buckets.unwrap_or(d.rate_buckets),
                };
                c.validate().map_err(sub_field)?;
                QueueKind::Eecn(c)
            }
            QueueKindName::Vcp => {
                let d = VcpRouterConfig::default();
                let c = VcpRouterConfig {
                    limit_packets: packets,
                    t_rho_ns: self.t_rho.map_or(d.t_rho_ns, |x| x.0),
                    target_utilization: self.target_utilization.unwrap_or(d.target_utilization),
                    kappa_q: self.kappa_q.unwrap_or(d.kappa_q),
                    ..d
                };
                c.validate().map_err(sub_field)?;
                QueueKind::Vcp(c)
            }
        };
        let q = match self.device_packets {
            None => q,
            Some(0) | Some(100_001..) => return Err((".device_packets".into(), "expected 1..100000 packets".into())),
            Some(n) => QueueKind::WithDeviceRing(Box::new(q), n),
        };
        Ok((limit, q))
    }
}

/// A discipline's `FIELD: what was expected` as (`.FIELD`, what was expected), so that the
/// error names the field under `queue`; a message naming several fields stays whole.
fn sub_field(m: String) -> (String, String) {
    match m.split_once(": ") {
        Some((f, what)) if f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            (format!(".{f}"), what.to_string())
        }
        _ => (String::new(), m),
    }
}

/// `transport.eecn`: EECN sender parameters (§4.4; defaults are the paper's).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EecnToml {
    /// Algorithm 1's divisor d (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d: Option<u32>,
    /// Slow-start σ when cRTT ≥ avgRTT (default 0.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigma_slow_start: Option<f64>,
    /// Congestion-avoidance σ (default 0.02).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigma_congestion_avoidance: Option<f64>,
    /// The unit of β in e^−β: "1s" (default) takes β in seconds, "1ms" in milliseconds.
    #[serde(
        rename(serialize = "beta_unit_ns"),
        alias = "beta_unit_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub beta_unit: Option<Duration>,
    /// avgRTT: "srtt" (default, RFC 6298 smoothing) or "mean" (of every sample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_rtt: Option<AvgRtt>,
    /// Initial window after CL(1) on the handshake (default 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window_cl1: Option<u32>,
    /// Initial window after CL(2) on the handshake (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window_cl2: Option<u32>,
    /// ACKs that repeat a CL(1) echo (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cl1_echo_acks: Option<u32>,
    /// Algorithm 2 when cRTT equals avgRTT (β = 0): "hold" (default, the listing's
    /// cRTT ≥ avgRTT: no change) or "grow" (the prose: decay only when β is positive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_beta: Option<ZeroBeta>,
}

impl EecnToml {
    /// The configuration (checked with the rest of the transport:
    /// `ConnectionConfig::validate`).
    pub fn to_config(&self) -> Result<EecnConfig, String> {
        let d = EecnConfig::default();
        let c = EecnConfig {
            d: self.d.unwrap_or(d.d),
            sigma_slow_start: self.sigma_slow_start.unwrap_or(d.sigma_slow_start),
            sigma_congestion_avoidance: self.sigma_congestion_avoidance.unwrap_or(d.sigma_congestion_avoidance),
            beta_unit_ns: self.beta_unit.map_or(d.beta_unit_ns, |x| x.0),
            avg_rtt: self.avg_rtt.unwrap_or(d.avg_rtt),
            initial_window_cl: [
                self.initial_window_cl1.unwrap_or(d.initial_window_cl[0]),
                self.initial_window_cl2.unwrap_or(d.initial_window_cl[1]),
            ],
            cl1_echo_acks: self.cl1_echo_acks.unwrap_or(d.cl1_echo_acks),
            zero_beta: self.zero_beta.unwrap_or(d.zero_beta),
        };
        Ok(c)
    }
}

/// `transport.vcp`: VCP end-host parameters (defaults from the VCP paper).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VcpToml {
    /// MI factor ξ (default 0.0625).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xi: Option<f64>,
    /// AI in segments per RTT (default 1.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// MD factor (default 0.875).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// t_ρ (default 200 ms).
    #[serde(
        rename(serialize = "t_rho_ns"),
        alias = "t_rho_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub t_rho: Option<Duration>,
    /// Hold max(RTT, t_ρ) after an MD instead of one RTT (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_t_rho: Option<bool>,
    /// Slow start until the first high-load echo (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_start: Option<bool>,
}

impl VcpToml {
    /// The configuration (checked with the rest of the transport:
    /// `ConnectionConfig::validate`).
    pub fn to_config(&self) -> Result<VcpConfig, String> {
        let d = VcpConfig::default();
        let c = VcpConfig {
            xi: self.xi.unwrap_or(d.xi),
            alpha: self.alpha.unwrap_or(d.alpha),
            beta: self.beta.unwrap_or(d.beta),
            t_rho_ns: self.t_rho.map_or(d.t_rho_ns, |x| x.0),
            hold_t_rho: self.hold_t_rho.unwrap_or(d.hold_t_rho),
            slow_start: self.slow_start.unwrap_or(d.slow_start),
        };
        Ok(c)
    }
}
