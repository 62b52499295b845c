//! Scenario files (TOML): topology, queues, transport settings, applications, measurement
//! and a seed. Unknown fields are errors; every error names the file, the field and what
//! was expected. See the README's "Writing a scenario" for the full reference.

use std::path::{Path, PathBuf};

use rand::RngExt;
use serde::{Deserialize, Serialize};
use triage_core::cc::ControllerKind;
use triage_core::quic::{DatagramFraming, DatagramOrder};
use triage_core::sched::stream::StreamSchedulerKind;
use triage_core::sched::CatsConfig;
use triage_core::TransportMode;
use triage_core::{ConnectionConfig, LoadShedding, SchedulerKind};

use std::sync::Arc;

use crate::app::{AppSpec, MessageSpec, PageLoad};
use crate::link::{Link, RateModel};
use crate::loss::{LossModel, LossProcess};
use crate::queue::{Limit, QueueKind};
use crate::rng::component_rng;
pub use crate::scenario_ecn::{EecnToml, QueueToml, VcpToml};
use crate::scenario_fields as fields;
use crate::scenario_paths as mp;
pub use crate::scenario_paths::{MultipathToml, PathPreset, PathToml};
use crate::scenario_resolved::ser;
use crate::sim::{FlowSpec, Network, NodeKind, Simulator, MAX_FLOWS};
use crate::trace::{MahimahiTrace, TraceCursor};
use crate::units::{Duration, Rate, Size};

/// An error in a scenario file.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// File.
        file: String,
        /// Cause.
        source: std::io::Error,
    },
    /// TOML syntax, an unknown field or a value of the wrong type.
    #[error("{file}: {message}")]
    Parse {
        /// File.
        file: String,
        /// The parser's message, with line, column and field.
        message: String,
    },
    /// A value that parses but makes no sense.
    #[error("{file}: {field}: {message}")]
    Invalid {
        /// File.
        file: String,
        /// Dotted path of the field.
        field: String,
        /// What was wrong and what was expected.
        message: String,
    },
}

/// A scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name for reports.
    pub name: String,
    /// What the scenario reproduces.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Seed of every random component.
    #[serde(default)]
    pub seed: u64,
    /// Simulated time limit (default 600 s).
    #[serde(default)]
    #[serde(
        rename(serialize = "stop_ns"),
        alias = "stop_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop: Option<Duration>,
    /// Transport defaults for every flow end.
    #[serde(default)]
    pub transport: TransportToml,
    /// Measurement options.
    #[serde(default)]
    pub measure: MeasureToml,
    /// The network, unless `paths` gives it.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyToml>,
    /// A multipath network instead of `topology` (see [`crate::scenario_paths`]): path `i`
    /// joins the server's interface `s.i` to the client's `c.i`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathToml>,
    /// The flows.
    pub flows: Vec<FlowToml>,
    /// Variants to compare: the scenario runs once per variant, each with its transport
    /// settings laid over every flow's (same network, same seed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantToml>,
}

/// One variant of a scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VariantToml {
    /// Name in reports ("fifo", "cats", ...).
    pub name: String,
    /// Transport settings that override the flows' and the scenario's.
    #[serde(default)]
    pub transport: TransportToml,
}

/// A network profile users know (../shared/data/README.md): downlink, uplink, RTT.
pub const PROFILES: &[(&str, u64, u64, u64, &str)] = &[
    // (name, down bps, up bps, rtt ms, source)
    (
        "lighthouse-mobile-slow-4g",
        1_638_400,
        1_638_400,
        150,
        "Lighthouse mobileSlow4G (Lantern: 150 ms RTT, 1638.4 kbps)",
    ),
    ("lighthouse-mobile-regular-3g", 700_000, 700_000, 300, "Lighthouse mobileRegular3G"),
    ("lighthouse-desktop-dense-4g", 10_240_000, 10_240_000, 40, "Lighthouse desktopDense4G"),
    ("devtools-3g", 400_000, 400_000, 2000, "Chrome DevTools 3G (latency as RTT)"),
    ("devtools-slow-4g", 1_440_000, 675_000, 563, "Chrome DevTools Slow 4G (562.5 ms latency as RTT)"),
    ("devtools-fast-4g", 8_100_000, 1_350_000, 165, "Chrome DevTools Fast 4G"),
    ("wpt-cable", 5_000_000, 1_000_000, 28, "WebPageTest Cable"),
    ("wpt-dsl", 1_500_000, 384_000, 50, "WebPageTest DSL"),
    ("wpt-3g-slow", 400_000, 400_000, 400, "WebPageTest 3GSlow"),
    ("wpt-3g", 1_600_000, 768_000, 300, "WebPageTest 3G"),
    ("wpt-3g-fast", 1_600_000, 768_000, 150, "WebPageTest 3GFast"),
    ("wpt-4g", 9_000_000, 9_000_000, 170, "WebPageTest 4G"),
    ("wpt-lte", 12_000_000, 12_000_000, 70, "WebPageTest LTE"),
    ("wpt-edge", 240_000, 200_000, 840, "WebPageTest Edge"),
    ("wpt-2g", 280_000, 256_000, 800, "WebPageTest 2G"),
    ("wpt-fios", 20_000_000, 5_000_000, 4, "WebPageTest FIOS"),
];

/// The bottleneck queue of a `profile` topology when the scenario gives none: twice the
/// bandwidth-delay product in 1500-byte packets, at least 100.
pub fn profile_queue_packets(down_bps: u64, rtt_ms: u64) -> u64 {
    let bdp_packets = down_bps * rtt_ms / 8 / 1000 / 1500;
    100.max(2 * bdp_packets)
}

/// The bottleneck and access links of a `profile` topology ([`TopologyToml::Profile`]), the
/// dumbbell of one pair it stands for; `None` when no profile has that name.
pub(crate) fn profile_links(
    name: &str,
    queue: &Option<QueueToml>,
    loss: &Option<LossModel>,
) -> Option<(LinkToml, LinkToml)> {
    let &(_, down, up, rtt_ms, _) = PROFILES.iter().find(|p| p.0 == name)?;
    let bottleneck = LinkToml {
        between: None,
        rate: Some(Rate(down)),
        delay: Duration(rtt_ms * 1_000_000 / 2),
        queue: Some(
            queue
                .clone()
                .unwrap_or(QueueToml { packets: Some(profile_queue_packets(down, rtt_ms)), ..Default::default() }),
        ),
        loss: loss.clone(),
        trace: None,
        reverse_trace: None,
        reverse_rate: Some(Rate(up)),
        reverse_loss: None,
        jitter: None,
        duplicate: None,
        overhead: None,
    };
    let access = LinkToml {
        between: None,
        rate: Some(Rate(1_000_000_000)),
        delay: Duration(0),
        queue: None,
        loss: None,
        trace: None,
        reverse_trace: None,
        reverse_rate: None,
        reverse_loss: None,
        jitter: None,
        duplicate: None,
        overhead: None,
    };
    Some((bottleneck, access))
}

/// Transport settings; every field is optional and falls back to the scenario's
/// `[transport]`, then to the built-in default.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TransportToml {
    /// Framing mode: "tcp" (default) or "quic" (RFC 9000 streams and DATAGRAM frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeName>,
    /// Congestion controller: "newreno", "bbr", "cubic", "newreno_ecn", "eecn" or "vcp".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<ControllerKind>,
    /// CUBIC only: run HyStart++ (RFC 9406) in the initial slow start (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hystart: Option<bool>,
    /// TCP mode only: RACK-TLP (RFC 8985, Linux's default): losses also judged by time, and
    /// a tail loss probe two round trips after the last ACK instead of waiting for the RTO
    /// (default false: RFC 6675's duplicate ACKs and the RTO, as ns-3 3.37).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rack: Option<bool>,
    /// TCP mode only: the retransmission timer as Linux runs it: SRTT plus a variance term of
    /// at least `min_rto`, restarted when the oldest segment is retransmitted (default false:
    /// RFC 6298, as ns-3 3.37).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux_rto: Option<bool>,
    /// TCP mode only: acknowledge as Linux's receiver does: at once for its first 16
    /// segments, after a duplicate and each time its receive window grows (which
    /// receive-buffer autotuning lets it do once per RTT), else every second segment (default
    /// false: RFC 5681 as ns-3 3.37, every second segment after a first one acknowledged at
    /// once). ACK timing only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux_ack: Option<bool>,
    /// TCP mode only: ns-3 3.37's TCP rules where they differ from Linux and the RFCs
    /// (default false): SYN and SYN-ACK without the MSS option (56-byte headers), ssthresh
    /// from the pipe after the ACK that starts a recovery, PRR's conservative bound (no
    /// more than the ACK delivered unless it acknowledges a retransmission), the whole
    /// receive buffer offered whatever is held out of order, lost retransmissions left to
    /// the RTO, and with `send_buffer` ns-3's buffer refills and NextSeg() rule (3). For
    /// comparisons with ns-3; pair it with `newreno_growth = "per_ack"`, links'
    /// `overhead = "2B"` and ns-3's `SndBufSize` as `send_buffer` (benchmarks/scaling.sh
    /// --shares does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns3_compat: Option<bool>,
    /// ECN variant: "off", "classic", "eecn" or "vcp" (default: the controller's own —
    /// classic for newreno_ecn, eecn for eecn, vcp for vcp, off otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<triage_core::ecn::EcnMode>,
    /// EECN sender parameters (§4.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eecn: Option<EecnToml>,
    /// VCP end-host parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcp: Option<VcpToml>,
    /// NewReno window growth: "bytes" (RFC 3465 byte counting, as Linux; default) or
    /// "per_ack" (one segment per ACK in slow start, as ns-3's TcpNewReno).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newreno_growth: Option<triage_core::cc::Growth>,
    /// Maximum segment size (default 1448).
    #[serde(
        rename(serialize = "mss_bytes"),
        alias = "mss_bytes",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub mss: Option<Size>,
    /// Initial window in segments (default 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<u32>,
    /// ACK every this many segments (default 2; 1 disables delayed ACK).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed_ack_segments: Option<u32>,
    /// Delayed-ACK timer (default 200 ms).
    #[serde(
        rename(serialize = "delayed_ack_timeout_ns"),
        alias = "delayed_ack_timeout_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub delayed_ack_timeout: Option<Duration>,
    /// RTO floor (default 1 s, RFC 6298).
    #[serde(
        rename(serialize = "min_rto_ns"),
        alias = "min_rto_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_rto: Option<Duration>,
    /// RTO before the first RTT sample (default 1 s).
    #[serde(
        rename(serialize = "initial_rto_ns"),
        alias = "initial_rto_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub initial_rto: Option<Duration>,
    /// Receive buffer, the largest advertised window (default 1 MiB).
    #[serde(
        rename(serialize = "receive_buffer_bytes"),
        alias = "receive_buffer_bytes",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub receive_buffer: Option<Size>,
    /// TCP mode only: the send buffer, what the sender holds (sent and not yet acknowledged,
    /// written and not yet sent; default unlimited). With `ns3_compat` the application
    /// refills it as ns-3's BulkSendApplication does (whole segments, when ns-3 tells it).
    #[serde(
        rename(serialize = "send_buffer_bytes"),
        alias = "send_buffer_bytes",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub send_buffer: Option<Size>,
    /// Send scheduler: "fifo" (default) or "cats" (the CATS Conductor); in QUIC mode also
    /// "rr" (round robin, quinn's default), "prio" (strict priority), "rfc9218" and "wrr"
    /// (weighted round robin by HTTP/2 weight, SA-ECF's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedulerName>,
    /// The Conductor's fairness parameters (CATS §II-E); defaults in the README.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cats: Option<CatsToml>,
    /// Priority of messages written without one (default 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_priority: Option<u8>,
    /// Carry each data segment's priority in TCP option kind 254 (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority_option: Option<bool>,
    /// Receiver: ACK priority-0 segments at once, bypassing delayed ACK (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_priority0_immediately: Option<bool>,
    /// DSCP per priority 0..4 on data packets, e.g. [46, 34, 26, 18, 0] (default: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dscp: Option<[u8; 5]>,
    /// Save-Data: messages less important than this priority are not sent (default: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub save_data: Option<u8>,
    /// Source load shedding under severe, persistent congestion (default: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_shedding: Option<LoadSheddingToml>,
    /// QUIC mode, page loads: which objects the server sends as DATAGRAM chunks, a
    /// reliability policy: "reliable" (default), "fonts", "ads", "third_party", "fonts_ads",
    /// "fonts_third_party", "essentialness" or "cats_level4" (see the README). The root and
    /// render-blocking objects always go on streams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliability: Option<String>,
    /// QUIC mode: how datagram chunks are framed: "http3" (RFC 9297, the default when
    /// `reliability` is set) or "reference" (the reference tool's 9-byte header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagram_framing: Option<FramingName>,
    /// QUIC mode: "first" (default: DATAGRAM frames ahead of stream data, as quinn writes
    /// them) or "priority" (ahead only of less urgent stream data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagram_order: Option<DatagramOrderName>,
    /// Page loads with a reliability policy: how long the client waits for an incomplete
    /// datagram object of each type, from its request (`{ font = "3s", image = "2s" }`; types
    /// html, css, js, font, image, media, json, other; default: until its response ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_deadlines: Option<DeadlinesToml>,
    /// QUIC mode over `[[paths]]`: the path scheduler and its options (see
    /// [`MultipathToml`]); a variant's or flow's table replaces the scenario's whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multipath: Option<MultipathToml>,
}

/// `transport.partial_deadlines`: per content type.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeadlinesToml {
    /// HTML documents.
    #[serde(
        rename(serialize = "html_ns"),
        alias = "html_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub html: Option<Duration>,
    /// Stylesheets.
    #[serde(
        rename(serialize = "css_ns"),
        alias = "css_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub css: Option<Duration>,
    /// Scripts.
    #[serde(
        rename(serialize = "js_ns"),
        alias = "js_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub js: Option<Duration>,
    /// Web fonts.
    #[serde(
        rename(serialize = "font_ns"),
        alias = "font_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub font: Option<Duration>,
    /// Images.
    #[serde(
        rename(serialize = "image_ns"),
        alias = "image_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub image: Option<Duration>,
    /// Audio and video.
    #[serde(
        rename(serialize = "media_ns"),
        alias = "media_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub media: Option<Duration>,
    /// JSON.
    #[serde(
        rename(serialize = "json_ns"),
        alias = "json_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub json: Option<Duration>,
    /// Anything else.
    #[serde(
        rename(serialize = "other_ns"),
        alias = "other_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub other: Option<Duration>,
}

impl DeadlinesToml {
    fn to_config(self) -> triage_web::PartialConfig {
        let ns = |d: Option<Duration>| d.map(|d| d.0);
        triage_web::PartialConfig {
            html_ns: ns(self.html),
            css_ns: ns(self.css),
            js_ns: ns(self.js),
            font_ns: ns(self.font),
            image_ns: ns(self.image),
            media_ns: ns(self.media),
            json_ns: ns(self.json),
            other_ns: ns(self.other),
        }
    }
}

/// `transport.datagram_framing` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FramingName {
    /// RFC 9297 HTTP/3 datagrams.
    Http3,
    /// The reference tool's chunks.
    Reference,
}

/// `transport.datagram_order` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DatagramOrderName {
    /// Ahead of stream data.
    First,
    /// By priority.
    Priority,
}

/// Smallest and largest `transport.mss`.
const MIN_MSS: u32 = 64;
const MAX_MSS: u32 = 65_000;
/// Largest `transport.receive_buffer`: TCP's largest window (2^30 bytes, RFC 7323 §2.3);
/// also the largest `transport.send_buffer`.
const MAX_RECEIVE_BUFFER: u64 = 1 << 30;

/// A buffer size of `transport.FIELD` within [`MAX_RECEIVE_BUFFER`], or the error naming the
/// field (`why`: what the bound is, after the byte count).
fn buffer_bytes(field: &str, size: Size, why: &str) -> Result<u64, (String, String)> {
    if size.0 > MAX_RECEIVE_BUFFER {
        return Err((
            format!("transport.{field}"),
            format!("expected at most 1 GiB ({MAX_RECEIVE_BUFFER} bytes{why}), got {}", size.0),
        ));
    }
    Ok(size.0)
}
/// Largest message, page object and request: the core numbers a message's bytes with u32.
const MAX_MESSAGE: u64 = u32::MAX as u64;

/// Send scheduler names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerName {
    /// Write order.
    Fifo,
    /// The CATS Conductor.
    Cats,
    /// QUIC mode: round robin between streams, one packet's worth at a time.
    Rr,
    /// QUIC mode: strict priority between streams.
    Prio,
    /// QUIC mode: RFC 9218 urgency and incremental.
    Rfc9218,
    /// QUIC mode: weighted round robin by Chrome's HTTP/2 weights (SA-ECF's; the default
    /// when `transport.multipath.scheduler = "sa_ecf"` names no scheduler).
    Wrr,
}

/// Framing modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeName {
    /// TCP mode.
    Tcp,
    /// QUIC mode.
    Quic,
}

/// CATS §II-E parameters, one value per priority queue 0..4.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CatsToml {
    /// High watermarks `H_i`.
    #[serde(
        rename(serialize = "high_watermark_bytes"),
        alias = "high_watermark_bytes",
        serialize_with = "ser::opt_arr",
        skip_serializing_if = "Option::is_none"
    )]
    pub high_watermark: Option<[Size; 5]>,
    /// Low watermarks `L_i`.
    #[serde(
        rename(serialize = "low_watermark_bytes"),
        alias = "low_watermark_bytes",
        serialize_with = "ser::opt_arr",
        skip_serializing_if = "Option::is_none"
    )]
    pub low_watermark: Option<[Size; 5]>,
    /// Payback multipliers `M_i`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payback_multiplier: Option<[u64; 5]>,
}

/// Load-shedding trigger (see `triage_core::LoadShedding`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSheddingToml {
    /// RTOs in a row that trigger shedding (default 2; 0 disables this trigger).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consecutive_rtos: Option<u32>,
    /// Packets in the loss-rate window (default 64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_window_packets: Option<u32>,
    /// Loss fraction over the window that triggers shedding (default 0.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_rate: Option<f64>,
    /// The most important priority that may be shed (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_priority: Option<u8>,
}

impl TransportToml {
    /// `self` laid over `base`, field by field (a table replaces the base's whole).
    pub(crate) fn or(&self, base: &TransportToml) -> TransportToml {
        TransportToml {
            cc: self.cc.clone().or(base.cc.clone()),
            hystart: self.hystart.or(base.hystart),
            rack: self.rack.or(base.rack),
            linux_rto: self.linux_rto.or(base.linux_rto),
            linux_ack: self.linux_ack.or(base.linux_ack),
            ns3_compat: self.ns3_compat.or(base.ns3_compat),
            mode: self.mode.or(base.mode),
            ecn: self.ecn.or(base.ecn),
            newreno_growth: self.newreno_growth.or(base.newreno_growth),
            eecn: self.eecn.clone().or(base.eecn.clone()),
            vcp: self.vcp.clone().or(base.vcp.clone()),
            mss: self.mss.or(base.mss),
            initial_window: self.initial_window.or(base.initial_window),
            delayed_ack_segments: self.delayed_ack_segments.or(base.delayed_ack_segments),
            delayed_ack_timeout: self.delayed_ack_timeout.or(base.delayed_ack_timeout),
            min_rto: self.min_rto.or(base.min_rto),
            initial_rto: self.initial_rto.or(base.initial_rto),
            receive_buffer: self.receive_buffer.or(base.receive_buffer),
            send_buffer: self.send_buffer.or(base.send_buffer),
            scheduler: self.scheduler.or(base.scheduler),
            cats: self.cats.clone().or(base.cats.clone()),
            default_priority: self.default_priority.or(base.default_priority),
            priority_option: self.priority_option.or(base.priority_option),
            ack_priority0_immediately: self.ack_priority0_immediately.or(base.ack_priority0_immediately),
            dscp: self.dscp.or(base.dscp),
            save_data: self.save_data.or(base.save_data),
            load_shedding: self.load_shedding.clone().or(base.load_shedding.clone()),
            reliability: self.reliability.clone().or(base.reliability.clone()),
            datagram_framing: self.datagram_framing.or(base.datagram_framing),
            datagram_order: self.datagram_order.or(base.datagram_order),
            partial_deadlines: self.partial_deadlines.or(base.partial_deadlines),
            multipath: self.multipath.clone().or(base.multipath.clone()),
        }
    }

    fn to_config(&self, seed: u64) -> Result<ConnectionConfig, (String, String)> {
        let d = ConnectionConfig::default();
        let scheduler = match (self.scheduler, &self.cats) {
            (Some(SchedulerName::Cats), c) => {
                let base = CatsConfig::default();
                let c = c.clone().unwrap_or_default();
                let cfg = CatsConfig {
                    high_watermark_bytes: c.high_watermark.map_or(base.high_watermark_bytes, |a| a.map(|s| s.0)),
                    low_watermark_bytes: c.low_watermark.map_or(base.low_watermark_bytes, |a| a.map(|s| s.0)),
                    payback_multiplier: c.payback_multiplier.unwrap_or(base.payback_multiplier),
                };
                SchedulerKind::Cats(cfg)
            }
            (_, Some(_)) => {
                return Err(("transport.cats".into(), "fairness parameters need scheduler = \"cats\"".into()));
            }
            (Some(SchedulerName::Prio), _) => SchedulerKind::Priority,
            _ => SchedulerKind::Fifo,
        };
        let quic_mode = self.mode == Some(ModeName::Quic);
        let stream_scheduler = match (&self.scheduler, &scheduler) {
            (Some(SchedulerName::Rr), _) => StreamSchedulerKind::Rr,
            (Some(SchedulerName::Prio), _) => StreamSchedulerKind::Prio,
            (Some(SchedulerName::Rfc9218), _) => StreamSchedulerKind::Rfc9218,
            (Some(SchedulerName::Wrr), _) => StreamSchedulerKind::Wrr,
            (_, SchedulerKind::Cats(c)) => StreamSchedulerKind::Cats(c.clone()),
            _ => StreamSchedulerKind::Fifo,
        };
        if !quic_mode && matches!(self.scheduler, Some(SchedulerName::Rr | SchedulerName::Rfc9218 | SchedulerName::Wrr))
        {
            return Err((
                "transport.scheduler".into(),
                "rr, rfc9218 and wrr schedule streams: they need mode = \"quic\" (TCP mode has fifo, prio and cats)"
                    .into(),
            ));
        }
        if quic_mode
            && (self.priority_option.is_some() || self.dscp.is_some() || self.ack_priority0_immediately.is_some())
        {
            return Err((
                "transport.mode".into(),
                "priority_option, dscp and ack_priority0_immediately are TCP-mode options".into(),
            ));
        }
        for (name, set) in [
            ("reliability", self.reliability.is_some()),
            ("datagram_framing", self.datagram_framing.is_some()),
            ("datagram_order", self.datagram_order.is_some()),
            ("partial_deadlines", self.partial_deadlines.is_some()),
        ] {
            if set && !quic_mode {
                return Err((format!("transport.{name}"), "datagrams need mode = \"quic\"".into()));
            }
        }
        if let Some(r) = &self.reliability {
            triage_web::ReliabilityPolicy::parse(r)
                .map_err(|e| ("transport.reliability".to_string(), e.to_string()))?;
        }
        for (name, v) in [("default_priority", self.default_priority), ("save_data", self.save_data)] {
            if v.is_some_and(|p| p > 4) {
                return Err((
                    format!("transport.{name}"),
                    "expected a priority from 0 (critical) to 4 (background)".into(),
                ));
            }
        }
        if self.dscp.is_some_and(|m| m.iter().any(|&x| x > 63)) {
            return Err(("transport.dscp".into(), "expected DSCP values 0..63".into()));
        }
        let load_shedding = match &self.load_shedding {
            None => None,
            Some(l) => {
                let dft = LoadShedding::default();
                let rate = l.loss_rate.unwrap_or(dft.loss_rate_permille as f64 / 1000.0);
                if !(0.0..=1.0).contains(&rate) || rate.is_nan() {
                    return Err((
                        "transport.load_shedding.loss_rate".into(),
                        format!("expected a fraction in [0, 1], got {rate}"),
                    ));
                }
                if l.min_priority.is_some_and(|p| p > 4) {
                    return Err(("transport.load_shedding.min_priority".into(), "expected 0..4".into()));
                }
                Some(LoadShedding {
                    consecutive_rtos: l.consecutive_rtos.unwrap_or(dft.consecutive_rtos),
                    loss_window_packets: match l.loss_window_packets {
                        Some(0) => {
                            return Err((
                                "transport.load_shedding.loss_window_packets".into(),
                                "expected at least 1 packet".into(),
                            ))
                        }
                        w => w.unwrap_or(dft.loss_window_packets),
                    },
                    loss_rate_permille: (rate * 1000.0).round() as u32,
                    min_priority: l.min_priority.unwrap_or(dft.min_priority),
                })
            }
        };
        let controller = self.cc.clone().unwrap_or(d.controller.clone());
        if self.hystart.is_some() && controller != ControllerKind::Cubic {
            return Err(("transport.hystart".into(), "HyStart++ needs cc = \"cubic\"".into()));
        }
        if self.rack == Some(true) && quic_mode {
            return Err((
                "transport.rack".into(),
                "RACK-TLP is TCP mode's (QUIC mode judges losses by time and probes tails itself, RFC 9002)".into(),
            ));
        }
        if self.linux_rto == Some(true) && quic_mode {
            return Err((
                "transport.linux_rto".into(),
                "Linux's retransmission timer is TCP mode's (QUIC mode's probe timeout is RFC 9002's)".into(),
            ));
        }
        if self.linux_ack == Some(true) && quic_mode {
            return Err((
                "transport.linux_ack".into(),
                "Linux's receiver ACK policy is TCP mode's (QUIC mode acknowledges as RFC 9000 §13.2 says)".into(),
            ));
        }
        if self.ns3_compat == Some(true) && quic_mode {
            return Err(("transport.ns3_compat".into(), "ns-3's TCP rules are TCP mode's".into()));
        }
        if self.send_buffer.is_some() && quic_mode {
            return Err(("transport.send_buffer".into(), "a send buffer is TCP mode's (QUIC mode has none)".into()));
        }
        let eecn = self.eecn.clone().unwrap_or_default().to_config().map_err(|m| ("transport.eecn".to_string(), m))?;
        let vcp = self.vcp.clone().unwrap_or_default().to_config().map_err(|m| ("transport.vcp".to_string(), m))?;
        Ok(ConnectionConfig {
            ecn: self.ecn,
            newreno_growth: self.newreno_growth.unwrap_or_default(),
            eecn,
            vcp,
            mss_bytes: match self.mss {
                None => d.mss_bytes,
                // A checked conversion: `as u32` once turned 4294968744 B into 1448.
                Some(s) => u32::try_from(s.0).ok().filter(|m| (MIN_MSS..=MAX_MSS).contains(m)).ok_or_else(|| {
                    ("transport.mss".to_string(), format!("expected {MIN_MSS}..{MAX_MSS} bytes, got {}", s.0))
                })?,
            },
            initial_window_segments: self.initial_window.unwrap_or(d.initial_window_segments),
            controller,
            cubic: triage_core::cc::CubicConfig { hystart: self.hystart.unwrap_or(false) },
            delayed_ack_segments: self.delayed_ack_segments.unwrap_or(d.delayed_ack_segments),
            delayed_ack_timeout_ns: self.delayed_ack_timeout.map_or(d.delayed_ack_timeout_ns, |x| x.0),
            initial_rto_ns: self.initial_rto.map_or(d.initial_rto_ns, |x| x.0),
            min_rto_ns: self.min_rto.map_or(d.min_rto_ns, |x| x.0),
            rack: self.rack.unwrap_or(d.rack),
            linux_rto: self.linux_rto.unwrap_or(d.linux_rto),
            linux_ack: self.linux_ack.unwrap_or(d.linux_ack),
            ns3_compat: self.ns3_compat.unwrap_or(d.ns3_compat),
            receive_buffer_bytes: match self.receive_buffer {
                None => d.receive_buffer_bytes,
                Some(b) => buffer_bytes("receive_buffer", b, ", TCP's largest window with window scaling, RFC 7323")?,
            },
            send_buffer_bytes: match self.send_buffer {
                None => d.send_buffer_bytes,
                Some(b) => Some(buffer_bytes("send_buffer", b, "")?),
            },
            seed,
            scheduler,
            default_priority: self.default_priority.unwrap_or(d.default_priority),
            priority_option: self.priority_option.unwrap_or(d.priority_option),
            ack_priority0_immediately: self.ack_priority0_immediately.unwrap_or(d.ack_priority0_immediately),
            dscp_by_priority: self.dscp,
            save_data_threshold: self.save_data,
            load_shedding,
            mode: if quic_mode { TransportMode::Quic } else { TransportMode::Tcp },
            quic: triage_core::quic::QuicConfig {
                scheduler: stream_scheduler,
                datagram_framing: match self.datagram_framing {
                    Some(FramingName::Reference) => DatagramFraming::Reference,
                    Some(FramingName::Http3) => DatagramFraming::Http3,
                    None if self.reliability.is_some() => DatagramFraming::Http3,
                    None => DatagramFraming::Reference,
                },
                datagram_order: match self.datagram_order {
                    Some(DatagramOrderName::Priority) => DatagramOrder::Priority,
                    _ => DatagramOrder::First,
                },
                // A page server ends each datagram response with HEADERS and FIN on its
                // request stream (see `QuicConfig::response_headers_bytes`).
                response_headers_bytes: if self.reliability.is_some() { 24 } else { 0 },
                ..Default::default()
            },
            ..d
        })
    }
}

/// Measurement options.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureToml {
    /// Time-series sampling interval (default 10 ms; "0ms" records none).
    #[serde(default = "default_interval")]
    #[serde(rename(serialize = "interval_ns"), alias = "interval_ns", serialize_with = "ser::base")]
    pub interval: Duration,
    /// Record every packet enqueued or dropped at every link (default false).
    #[serde(default)]
    pub packet_trace: bool,
}

fn default_interval() -> Duration {
    Duration(10_000_000)
}

impl Default for MeasureToml {
    fn default() -> Self {
        Self { interval: default_interval(), packet_trace: false }
    }
}

/// Largest framing overhead a link accepts per packet (`overhead`): 1 KiB.
pub const MAX_LINK_OVERHEAD_BYTES: u64 = 1024;

/// One link's properties, used in both directions unless a `reverse_*` field says otherwise.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, expecting = "a link table like { rate = \"2Mbps\", delay = \"25ms\" }")]
pub struct LinkToml {
    /// The two nodes it joins (custom topologies only).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub between: Option<[String; 2]>,
    /// Rate; may be omitted in a direction that follows a trace.
    #[serde(
        rename(serialize = "rate_bps"),
        alias = "rate_bps",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub rate: Option<Rate>,
    /// One-way propagation delay.
    #[serde(rename(serialize = "delay_ns"), alias = "delay_ns", serialize_with = "ser::base")]
    pub delay: Duration,
    /// Queue limit (default 1000 packets).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueToml>,
    /// Random loss in both directions (default none).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossModel>,
    /// Mahimahi trace for the forward direction (first node to second; for a dumbbell's
    /// bottleneck, r1 to r2, the data direction).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<PathBuf>,
    /// Mahimahi trace for the reverse direction.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_trace: Option<PathBuf>,
    /// Rate of the reverse direction, when it differs.
    #[serde(default)]
    #[serde(
        rename(serialize = "reverse_rate_bps"),
        alias = "reverse_rate_bps",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub reverse_rate: Option<Rate>,
    /// Loss of the reverse direction, when it differs.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossModel>,
    /// Extra random delay per packet, both directions (default none); packets may overtake
    /// each other: `{ kind = "uniform", max = "10ms" }` or `{ kind = "exponential", mean = "5ms" }`.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<fields::JitterSpec>,
    /// Probability that a packet is delivered twice, both directions (default 0).
    #[serde(default)]
    #[serde(serialize_with = "ser::opt_prob", skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<crate::loss::Probability>,
    /// Link-layer framing each packet adds to its serialization on this link, both
    /// directions (default none): ns-3's point-to-point devices add a 2-byte PPP header,
    /// Ethernet on the wire 38 bytes (header, FCS, preamble and gap). Only the time a packet
    /// takes changes: the link's byte counters stay IP bytes, as ns-3's PPP device counts
    /// them without its header. Constant-rate directions only (a Mahimahi trace's delivery
    /// opportunities count IP bytes).
    #[serde(default)]
    #[serde(
        rename(serialize = "overhead_bytes"),
        alias = "overhead_bytes",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub overhead: Option<Size>,
}

/// The network.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(try_from = "fields::TopologyTable", tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum TopologyToml {
    /// Senders `s0..`, routers `r1`, `r2`, receivers `c0..`.
    Dumbbell {
        /// Sender/receiver pairs (default 1).
        pairs: u32,
        /// The r1–r2 link.
        bottleneck: LinkToml,
        /// Every host's link to its router.
        access: LinkToml,
    },
    /// A named network profile as a dumbbell with one pair: the server `s0`, the client
    /// `c0`; the bottleneck carries the profile's downlink from r1 to r2 (towards the client)
    /// and its uplink back, with half the RTT each way; access links are 1 Gbps / 0 ms.
    Profile {
        /// Profile name (see `PROFILES`), e.g. "lighthouse-mobile-slow-4g".
        name: String,
        /// Bottleneck queue (default: twice the BDP, at least 100 packets).
        #[serde(skip_serializing_if = "Option::is_none")]
        queue: Option<QueueToml>,
        /// Random loss on the bottleneck (default none).
        #[serde(skip_serializing_if = "Option::is_none")]
        loss: Option<LossModel>,
    },
    /// Any graph of hosts and routers.
    Custom {
        /// Host names.
        hosts: Vec<String>,
        /// Router names.
        routers: Vec<String>,
        /// Links, each with `between = ["a", "b"]`.
        links: Vec<LinkToml>,
    },
}

/// A flow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowToml {
    /// Name for reports.
    pub name: String,
    /// Host that opens the connection (a browser opens it to a server).
    pub client: String,
    /// Host that accepts it.
    pub server: String,
    /// When the client opens the connection (default 0).
    #[serde(default)]
    #[serde(rename(serialize = "start_ns"), alias = "start_ns", serialize_with = "ser::base")]
    pub start: Duration,
    /// A random delay added to `start`, uniform in [0, start_jitter), drawn from the flow's
    /// own stream of the scenario seed (component `start:NAME`): flows of one network no
    /// longer open in lockstep, and each seed of a sweep gives another draw (default none).
    #[serde(default)]
    #[serde(
        rename(serialize = "start_jitter_ns"),
        alias = "start_jitter_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub start_jitter: Option<Duration>,
    /// Transport overrides for this flow.
    #[serde(default)]
    pub transport: TransportToml,
    /// What the client writes (default: nothing).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_app: Option<AppToml>,
    /// What the server writes (default: nothing).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_app: Option<AppToml>,
    /// A page to load instead of the apps: a HAR or DevTools-log file, or `builtin:NAME`
    /// (cats, bing, youtube, news). The client requests objects as it discovers them; the
    /// server answers each with the priority the classifier gives (its CATS level).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// Which page of a file with several (a HAR page id such as "page_1").
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_id: Option<String>,
    /// Fetch the recording's cache hits over the network (a cold load; default false: they
    /// are objects the browser has at once, with no request on the network).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_cache_hits: Option<bool>,
    /// Bytes of one request (default 300).
    #[serde(default)]
    #[serde(
        rename(serialize = "request_size_bytes"),
        alias = "request_size_bytes",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub request_size: Option<Size>,
    /// Processing delay after a parent arrives before its children are requested
    /// (default 0 for every type: a network-only lower bound).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery: Option<DiscoveryToml>,
    /// The thesis's client: one request at a time in the page's order (a
    /// `transfer_sequence.json`'s order), the next once the previous object is done, instead of
    /// requests as the page load discovers objects (default false).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<bool>,
    /// A rules file (`triage page --rules` format) applied to the page before anything else:
    /// it may reclassify objects (CATS level, essentialness) and set `reliability` per
    /// object, which a reliability policy then respects.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    /// How the browser connects: per-origin connections, DNS, TLS, server time
    /// ([`crate::scenario_browser::BrowserToml`]); without it, the flow's one connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<crate::scenario_browser::BrowserToml>,
}

/// Per-type processing delays of a page load.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoveryToml {
    /// After an HTML document.
    #[serde(default)]
    #[serde(rename(serialize = "html_ns"), alias = "html_ns", serialize_with = "ser::base")]
    pub html: Duration,
    /// After a stylesheet.
    #[serde(default)]
    #[serde(rename(serialize = "css_ns"), alias = "css_ns", serialize_with = "ser::base")]
    pub css: Duration,
    /// After a script.
    #[serde(default)]
    #[serde(rename(serialize = "js_ns"), alias = "js_ns", serialize_with = "ser::base")]
    pub js: Duration,
    /// After anything else.
    #[serde(default)]
    #[serde(rename(serialize = "other_ns"), alias = "other_ns", serialize_with = "ser::base")]
    pub other: Duration,
    /// Add each object's recorded gap after its parent completed (see
    /// `triage_web::DiscoveryConfig::recorded_gaps`).
    #[serde(default)]
    pub recorded_gaps: bool,
    /// Multiplier of the recorded gaps (default 1; Lighthouse's mobile CPU slowdown is 4),
    /// 0 to 100.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_slowdown: Option<f64>,
}

/// An application.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(try_from = "fields::AppTable", tag = "kind", rename_all = "snake_case")]
pub enum AppToml {
    /// Writes nothing.
    Sink,
    /// One message of `size` bytes as soon as the connection is up.
    Bulk {
        /// Bytes to send.
        #[serde(rename(serialize = "size_bytes"), serialize_with = "ser::base")]
        size: Size,
    },
    /// Named, sized messages.
    Messages {
        /// The messages, in write order.
        messages: Vec<MessageToml>,
    },
}

/// A message of a message writer.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MessageToml {
    /// Name reported in results.
    pub name: String,
    /// Size.
    #[serde(rename(serialize = "size_bytes"), alias = "size_bytes", serialize_with = "ser::base")]
    pub size: Size,
    /// Priority 0 (most urgent) to 4; omitted: the connection's `default_priority`.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// Write time after the flow start; omitted: as soon as the connection is up.
    #[serde(default)]
    #[serde(
        rename(serialize = "at_ns"),
        alias = "at_ns",
        serialize_with = "ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub at: Option<Duration>,
    /// QUIC mode: send as DATAGRAM chunks, never retransmitted (default false).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreliable: Option<bool>,
    /// QUIC mode: messages of one end with the same label travel in write order on one
    /// stream (the first opens it); omitted: a stream of its own. TCP mode has one byte
    /// stream for everything, so the label changes nothing there.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
}

/// A scenario ready to run.
#[derive(Debug)]
pub struct Built {
    /// The simulator with its network and flows.
    pub sim: Simulator,
    /// Simulated time limit.
    pub stop_ns: u64,
    /// What the build did instead of what a file said, for stderr (`FIELD: what`): values an
    /// imported page had clamped or ignored.
    pub warnings: Vec<String>,
    /// A `[[paths]]` scenario: each path's name, by path ID (empty otherwise); see
    /// [`crate::report::RunReport::with_path_names`].
    pub path_names: Vec<String>,
}

impl Scenario {
    /// Parses scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, ScenarioError> {
        let s: Self = toml::from_str(text).map_err(|e| ScenarioError::Parse {
            file: file.to_string(),
            message: fields::render_parse_error(text, &e),
        })?;
        // Checks across tables, pointing at the value as the parser does.
        mp::check(&s).map_err(|(field, m)| ScenarioError::Parse {
            file: file.to_string(),
            message: fields::render_at(text, &field, &m),
        })?;
        Ok(s)
    }

    /// Reads and parses a scenario file.
    pub fn from_file(path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io { file: file.clone(), source })?;
        Self::parse(&text, &file)
    }

    /// Builds the simulator. Relative trace paths are looked up beside the scenario file
    /// (`base_dir`) first, then in the current directory.
    pub fn build(&self, file: &str, base_dir: Option<&Path>) -> Result<Built, ScenarioError> {
        self.build_variant(file, base_dir, None)
    }

    /// Builds one variant per `[[variants]]` entry (or the scenario itself when it has none),
    /// with the variant's name.
    pub fn build_variants(&self, file: &str, base_dir: Option<&Path>) -> Result<Vec<(String, Built)>, ScenarioError> {
        if self.variants.is_empty() {
            return Ok(vec![(self.name.clone(), self.build(file, base_dir)?)]);
        }
        let mut names = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for (i, v) in self.variants.iter().enumerate() {
            if !names.insert(v.name.as_str()) {
                return Err(ScenarioError::Invalid {
                    file: file.to_string(),
                    field: format!("variants[{i}].name"),
                    message: format!("\"{}\" is used twice", v.name),
                });
            }
            out.push((v.name.clone(), self.build_variant(file, base_dir, Some((i, &v.transport)))?));
        }
        Ok(out)
    }

    /// Builds the simulator with a variant's transport laid over every flow's.
    fn build_variant(
        &self,
        file: &str,
        base_dir: Option<&Path>,
        variant: Option<(usize, &TransportToml)>,
    ) -> Result<Built, ScenarioError> {
        let invalid =
            |field: String, message: String| ScenarioError::Invalid { file: file.to_string(), field, message };
        // A scenario built without `parse` (its fields set by code) gets the same checks.
        mp::check(self).map_err(|(f, m)| invalid(f, m))?;
        let path_names: Vec<String> = self.paths.iter().enumerate().map(|(i, p)| p.report_name(i)).collect();
        let mut net = Network::default();
        let seed = self.seed;
        // Queues limited in bytes, checked against the flows' packet size below.
        // (field, bytes, the link of each direction)
        let mut byte_queues: Vec<(String, u64, [usize; 2])> = Vec::new();
        let mut add = |net: &mut Network, a: u32, b: u32, l: &LinkToml, field: &str| -> Result<(), ScenarioError> {
            if a == b {
                return Err(invalid(
                    format!("{field}.between"),
                    format!("a link joins two different nodes, not \"{}\" to itself", net.nodes[a as usize].name),
                ));
            }
            // A direction that follows a trace takes its rate from the trace.
            for (rate, trace, rate_name, trace_name) in [
                (l.rate.is_some(), l.trace.is_some(), "rate", "trace"),
                (l.reverse_rate.is_some(), l.reverse_trace.is_some(), "reverse_rate", "reverse_trace"),
            ] {
                if rate && trace {
                    let hint = if rate_name == "rate" && l.reverse_trace.is_none() && l.reverse_rate.is_none() {
                        "; give the reverse direction's rate as `reverse_rate`"
                    } else {
                        ""
                    };
                    return Err(invalid(
                        format!("{field}.{rate_name}"),
                        format!("`{rate_name}` would be ignored: that direction follows `{trace_name}`{hint}"),
                    ));
                }
            }
            let (queue, kind) = match &l.queue {
                None => (Limit::Packets(1000), QueueKind::DropTail),
                Some(q) => q.to_kind().map_err(|(f, m)| invalid(format!("{field}.queue{f}"), m))?,
            };
            if let Limit::Bytes(bytes) = queue {
                let first = net.links.len();
                byte_queues.push((format!("{field}.queue.bytes"), bytes, [first, first + 1]));
            }
            let overhead_bytes = l.overhead.map_or(0, |s| s.0);
            if overhead_bytes > MAX_LINK_OVERHEAD_BYTES {
                return Err(invalid(
                    format!("{field}.overhead"),
                    format!("expected at most {MAX_LINK_OVERHEAD_BYTES} bytes of framing per packet"),
                ));
            }
            if overhead_bytes > 0 && (l.trace.is_some() || l.reverse_trace.is_some()) {
                return Err(invalid(
                    format!("{field}.overhead"),
                    "framing overhead applies to constant-rate links; a trace's delivery opportunities count IP bytes, as Mahimahi's".into(),
                ));
            }
            for (dir, (from, to)) in [(0, (a, b)), (1, (b, a))] {
                let name = format!("{}->{}", net.nodes[from as usize].name, net.nodes[to as usize].name);
                let trace = if dir == 0 { &l.trace } else { &l.reverse_trace };
                let rate = if dir == 0 { l.rate } else { l.reverse_rate.or(l.rate) };
                let rate_model = match (trace, rate) {
                    (Some(t), _) => {
                        let path = resolve(t, base_dir);
                        let tr = MahimahiTrace::from_file(&path).map_err(|e| {
                            invalid(
                                format!("{field}.{}", if dir == 0 { "trace" } else { "reverse_trace" }),
                                e.to_string(),
                            )
                        })?;
                        RateModel::trace(TraceCursor::new(tr))
                    }
                    // At most MAX_LINK_OVERHEAD_BYTES (checked above).
                    (None, Some(r)) if r.0 > 0 => {
                        RateModel::Constant { rate_bps: r.0, overhead_bytes: overhead_bytes as u32 }
                    }
                    _ => {
                        return Err(invalid(
                            format!("{field}.{}", if dir == 0 { "rate" } else { "reverse_rate" }),
                            "expected a positive rate like \"2Mbps\" (or a trace for that direction)".into(),
                        ))
                    }
                };
                let loss = if dir == 0 { l.loss.clone() } else { l.reverse_loss.clone().or(l.loss.clone()) };
                let loss = LossProcess::new(loss.unwrap_or_default(), component_rng(seed, &format!("loss:{name}")));
                let q = kind.build(queue, rate.map_or(0, |r| r.0), component_rng(seed, &format!("queue:{name}")));
                let disorder = crate::link::Disorder {
                    jitter: l.jitter.map_or(crate::link::Jitter::None, |j| j.0),
                    duplicate_prob: l.duplicate.map_or(0.0, |p| p.0),
                    rng: component_rng(seed, &format!("disorder:{name}")),
                };
                net.add_link(Link::new(name, from, to, rate_model, l.delay.0, loss, q).with_disorder(disorder));
            }
            Ok(())
        };
        // A `[[paths]]` network: each path's link (a preset's filled in), for the priors.
        let mut path_links: Vec<LinkToml> = Vec::new();
        match &self.topology {
            None => {
                for (i, p) in self.paths.iter().enumerate() {
                    let field = format!("paths[{i}]");
                    let link = p.to_link(base_dir).map_err(|(f, m)| {
                        invalid(if f.is_empty() { field.clone() } else { format!("{field}.{f}") }, m)
                    })?;
                    // As `topology::multipath`: the server's interface, then the client's.
                    let s = net.add_node(&format!("s.{i}"), NodeKind::Host);
                    let c = net.add_node(&format!("c.{i}"), NodeKind::Host);
                    add(&mut net, s, c, &link, &field)?;
                    if let Some(down) = p.down_at {
                        let n = net.links.len();
                        for l in &mut net.links[n - 2..] {
                            l.set_outage(down.0, p.up_at.map_or(u64::MAX, |u| u.0));
                        }
                    }
                    path_links.push(link);
                }
            }
            Some(TopologyToml::Dumbbell { pairs, bottleneck, access }) => {
                if *pairs == 0 || *pairs > 1000 {
                    return Err(invalid("topology.pairs".into(), format!("expected 1 to 1000, got {pairs}")));
                }
                for (f, l) in [("topology.bottleneck", bottleneck), ("topology.access", access)] {
                    if l.between.is_some() {
                        return Err(invalid(
                            format!("{f}.between"),
                            "a dumbbell names its own nodes; remove `between`".into(),
                        ));
                    }
                }
                let senders: Vec<u32> = (0..*pairs).map(|i| net.add_node(&format!("s{i}"), NodeKind::Host)).collect();
                let r1 = net.add_node("r1", NodeKind::Router);
                let r2 = net.add_node("r2", NodeKind::Router);
                let receivers: Vec<u32> = (0..*pairs).map(|i| net.add_node(&format!("c{i}"), NodeKind::Host)).collect();
                add(&mut net, r1, r2, bottleneck, "topology.bottleneck")?;
                for (&s, &c) in senders.iter().zip(&receivers) {
                    add(&mut net, s, r1, access, "topology.access")?;
                    add(&mut net, r2, c, access, "topology.access")?;
                }
            }
            Some(TopologyToml::Profile { name, queue, loss }) => {
                let Some((bottleneck, access)) = profile_links(name, queue, loss) else {
                    let names: Vec<&str> = PROFILES.iter().map(|p| p.0).collect();
                    return Err(invalid(
                        "topology.name".into(),
                        format!("no profile \"{name}\" (profiles: {})", names.join(", ")),
                    ));
                };
                let s = net.add_node("s0", NodeKind::Host);
                let r1 = net.add_node("r1", NodeKind::Router);
                let r2 = net.add_node("r2", NodeKind::Router);
                let c = net.add_node("c0", NodeKind::Host);
                add(&mut net, r1, r2, &bottleneck, "topology")?;
                add(&mut net, s, r1, &access, "topology")?;
                add(&mut net, r2, c, &access, "topology")?;
            }
            Some(TopologyToml::Custom { hosts, routers, links }) => {
                if hosts.len() + routers.len() > 2000 {
                    return Err(invalid("topology".into(), "expected at most 2000 nodes".into()));
                }
                for (names, kind, f) in [(hosts, NodeKind::Host, "hosts"), (routers, NodeKind::Router, "routers")] {
                    for n in names {
                        if net.node(n).is_some() {
                            return Err(invalid(format!("topology.{f}"), format!("node \"{n}\" is named twice")));
                        }
                        net.add_node(n, kind);
                    }
                }
                for (i, l) in links.iter().enumerate() {
                    let field = format!("topology.links[{i}]");
                    let Some([a, b]) = &l.between else {
                        return Err(invalid(
                            format!("{field}.between"),
                            "expected the two nodes it joins, like [\"a\", \"r1\"]".into(),
                        ));
                    };
                    let find = |n: &str| {
                        net.node(n).ok_or_else(|| {
                            let known: Vec<&str> = net.nodes.iter().map(|x| x.name.as_str()).collect();
                            invalid(
                                format!("{field}.between"),
                                format!("no node named \"{n}\" (nodes: {})", known.join(", ")),
                            )
                        })
                    };
                    let (a, b) = (find(a)?, find(b)?);
                    add(&mut net, a, b, l, &field)?;
                }
            }
        }
        let stop_ns = self.stop.map_or(600_000_000_000, |d| d.0);
        if stop_ns == 0 {
            return Err(invalid("stop".into(), "expected a positive duration; a run of 0 s sends nothing".into()));
        }
        // Flows.
        if self.flows.len() > MAX_FLOWS {
            return Err(invalid(
                "flows".into(),
                format!(
                    "expected at most {MAX_FLOWS} flows (each has client port 40000 + its index, up to 65535), got {}",
                    self.flows.len()
                ),
            ));
        }
        let mut specs = Vec::new();
        let mut warnings: Vec<String> = Vec::new();
        // What each end knows of the paths before using them: the downlink's rate for the
        // end at `s.0` (it sends on it), the uplink's for the end at `c.0`.
        let (down_priors, up_priors) = (mp::priors(&path_links, 0, base_dir), mp::priors(&path_links, 1, base_dir));
        // Nodes by name and the first flow of each name, looked up once per flow instead of
        // scanned (a 512-pair dumbbell has 1,026 nodes and 512 flows).
        let mut node_ids: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for (i, n) in net.nodes.iter().enumerate() {
            node_ids.entry(n.name.clone()).or_insert(i as u32);
        }
        let mut flow_names: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, f) in self.flows.iter().enumerate() {
            let field = format!("flows[{i}]");
            let host = |n: &str, what: &str| -> Result<u32, ScenarioError> {
                match node_ids.get(n).copied() {
                    Some(id) if net.nodes[id as usize].kind == NodeKind::Host => Ok(id),
                    _ => {
                        let hosts: Vec<&str> =
                            net.nodes.iter().filter(|x| x.kind == NodeKind::Host).map(|x| x.name.as_str()).collect();
                        Err(invalid(
                            format!("{field}.{what}"),
                            format!("no host named \"{n}\" (hosts: {})", hosts.join(", ")),
                        ))
                    }
                }
            };
            if let Some(&j) = flow_names.get(f.name.as_str()) {
                return Err(invalid(
                    format!("{field}.name"),
                    format!("\"{}\" is also the name of flows[{j}]; reports and --out files are per flow name", f.name),
                ));
            }
            flow_names.insert(&f.name, i);
            if f.start.0 >= stop_ns {
                return Err(invalid(
                    format!("{field}.start"),
                    format!("{} is not before `stop` ({}): the flow would never start", f.start, Duration(stop_ns)),
                ));
            }
            let jitter_ns = f.start_jitter.map_or(0, |j| j.0);
            if f.start.0.saturating_add(jitter_ns) > stop_ns {
                return Err(invalid(
                    format!("{field}.start_jitter"),
                    format!(
                        "start ({}) plus start_jitter ({}) reaches past `stop` ({}): the flow might never start",
                        f.start,
                        Duration(jitter_ns),
                        Duration(stop_ns)
                    ),
                ));
            }
            let start_ns = if jitter_ns > 0 {
                f.start.0 + component_rng(seed, &format!("start:{}", f.name)).random_range(0..jitter_ns)
            } else {
                f.start.0
            };
            let client = host(&f.client, "client")?;
            let server = host(&f.server, "server")?;
            if client == server {
                return Err(invalid(format!("{field}.server"), "client and server must be different hosts".into()));
            }
            let t = f.transport.or(&self.transport);
            let t = match variant {
                Some((_, v)) => v.or(&t),
                None => t,
            };
            let cfg = t
                .to_config(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .map_err(|(f, m)| invalid(format!("{field}.{f}"), m))?;
            // Every controller and scheduler parameter, named by its path under `transport`
            // (the core's message reads `cats.payback_multiplier[4]: expected ...`).
            cfg.validate().map_err(|m| match m.split_once(": ") {
                Some((sub, what)) => invalid(format!("{field}.transport.{sub}"), what.to_string()),
                None => invalid(format!("{field}.transport"), m),
            })?;
            if f.rules.is_some() && f.page.is_none() {
                return Err(invalid(format!("{field}.rules"), "rules reclassify a `page`'s objects".into()));
            }
            if f.page.is_none() {
                // Fields of a page load, given without one, would be silently ignored.
                let page_only = [
                    ("page_id", f.page_id.is_some()),
                    ("keep_cache_hits", f.keep_cache_hits.is_some()),
                    ("request_size", f.request_size.is_some()),
                    ("discovery", f.discovery.is_some()),
                    ("rules", f.rules.is_some()),
                    ("browser", f.browser.is_some()),
                ];
                if let Some((name, _)) = page_only.iter().find(|(_, set)| *set) {
                    return Err(invalid(
                        format!("{field}.{name}"),
                        "only applies to a flow that loads a `page`".into(),
                    ));
                }
            }
            if f.sequential.is_some() && f.page.is_none() {
                return Err(invalid(format!("{field}.sequential"), "the sequential client loads a `page`".into()));
            }
            if (t.reliability.is_some() || t.partial_deadlines.is_some()) && f.page.is_none() {
                return Err(invalid(
                    format!("{field}.transport.reliability"),
                    "a reliability policy chooses among a page's objects: it needs `page`; for messages use \
                     `unreliable = true`"
                        .into(),
                ));
            }
            let app = |a: &Option<AppToml>, what: &str| -> Result<AppSpec, ScenarioError> {
                Ok(match a {
                    None | Some(AppToml::Sink) => AppSpec::Sink,
                    Some(AppToml::Bulk { size }) => {
                        if size.0 == 0 {
                            return Err(invalid(format!("{field}.{what}.size"), "expected at least 1 byte".into()));
                        }
                        AppSpec::Bulk { bytes: size.0 }
                    }
                    Some(AppToml::Messages { messages }) => {
                        let mut out = Vec::new();
                        let mut last_at = 0u64;
                        for (j, m) in messages.iter().enumerate() {
                            // Messages are written in list order: a later one cannot be due earlier.
                            if let Some(at) = m.at {
                                if at.0 < last_at {
                                    return Err(invalid(
                                        format!("{field}.{what}.messages[{j}].at"),
                                        "expected messages in write order: `at` may not decrease down the list".into(),
                                    ));
                                }
                                last_at = at.0;
                            }
                            if m.priority.is_some_and(|p| p > 4) {
                                return Err(invalid(
                                    format!("{field}.{what}.messages[{j}].priority"),
                                    "expected 0 (critical) to 4 (background)".into(),
                                ));
                            }
                            if m.size.0 == 0 || m.size.0 > MAX_MESSAGE {
                                return Err(invalid(
                                    format!("{field}.{what}.messages[{j}].size"),
                                    "expected 1 byte to 4 GiB".into(),
                                ));
                            }
                            let unreliable = m.unreliable.unwrap_or(false);
                            if unreliable && m.stream.is_some() {
                                return Err(invalid(
                                    format!("{field}.{what}.messages[{j}].stream"),
                                    "no stream for an unreliable message (it travels as DATAGRAM chunks)".into(),
                                ));
                            }
                            let same_stream_as = m
                                .stream
                                .as_ref()
                                .and_then(|label| messages[..j].iter().position(|o| o.stream.as_ref() == Some(label)));
                            out.push(MessageSpec {
                                name: m.name.clone(),
                                bytes: m.size.0,
                                priority: m.priority,
                                at_ns: m.at.map(|d| d.0),
                                unreliable,
                                same_stream_as,
                            });
                        }
                        AppSpec::Messages(out)
                    }
                })
            };
            let (client_app, server_app) = match &f.page {
                None => (app(&f.client_app, "client_app")?, app(&f.server_app, "server_app")?),
                Some(src) => {
                    if f.client_app.is_some() || f.server_app.is_some() {
                        return Err(invalid(
                            format!("{field}.page"),
                            "a page load replaces client_app and server_app; remove them".into(),
                        ));
                    }
                    let (mut page, adjusted) =
                        load_page_reporting(src, f.page_id.as_deref(), f.keep_cache_hits.unwrap_or(false), base_dir)
                            .map_err(|m| invalid(format!("{field}.page"), m))?;
                    for line in adjusted {
                        warnings.push(format!("{field}.page: {src}: {line}"));
                    }
                    if let Some(r) = &f.rules {
                        let path = resolve(Path::new(r), base_dir);
                        let rules = triage_web::Rules::from_file(&path)
                            .map_err(|e| invalid(format!("{field}.rules"), e.to_string()))?;
                        rules.apply(&mut page);
                    }
                    if let Some(o) = page.objects().iter().find(|o| o.wire_bytes > MAX_MESSAGE) {
                        return Err(invalid(
                            format!("{field}.page"),
                            format!(
                                "{src}: object {} ({}) is {} bytes; a page load sends each object as one \
                                 message of at most {MAX_MESSAGE} bytes (4 GiB)",
                                o.id, o.url, o.wire_bytes
                            ),
                        ));
                    }
                    let request_bytes = match f.request_size {
                        None => 300,
                        Some(s) if (1..=MAX_MESSAGE).contains(&s.0) => s.0,
                        Some(s) => {
                            return Err(invalid(
                                format!("{field}.request_size"),
                                format!("expected 1 byte to 4 GiB, got {} bytes", s.0),
                            ))
                        }
                    };
                    let d = f.discovery.clone().unwrap_or_default();
                    let slowdown = d.cpu_slowdown.unwrap_or(1.0);
                    if !(0.0..=100.0).contains(&slowdown) {
                        return Err(invalid(
                            format!("{field}.discovery.cpu_slowdown"),
                            format!("expected 0 to 100, got {slowdown}"),
                        ));
                    }
                    if d.cpu_slowdown.is_some() && !d.recorded_gaps {
                        return Err(invalid(
                            format!("{field}.discovery.cpu_slowdown"),
                            "scales the recorded gaps: set recorded_gaps = true too".into(),
                        ));
                    }
                    let mut load = PageLoad::new(
                        page,
                        request_bytes,
                        triage_web::DiscoveryConfig {
                            html_ns: d.html.0,
                            css_ns: d.css.0,
                            js_ns: d.js.0,
                            other_ns: d.other.0,
                            recorded_gaps: d.recorded_gaps,
                            gap_scale_permille: (slowdown * 1000.0).round() as u32,
                        },
                    );
                    load.sequential = f.sequential.unwrap_or(false);
                    if let Some(b) = &f.browser {
                        load.browser = b
                            .to_model(&load.page, base_dir)
                            .map_err(|(k, m)| invalid(format!("{field}.browser.{k}"), m))?;
                        if load.sequential {
                            return Err(invalid(
                                format!("{field}.browser"),
                                "the sequential client (the thesis's) runs over the flow's one connection".into(),
                            ));
                        }
                    }
                    load.partial = t.partial_deadlines.unwrap_or_default().to_config();
                    if let Some(policy) =
                        t.reliability.as_deref().and_then(|r| triage_web::ReliabilityPolicy::parse(r).ok())
                    {
                        let plan = policy.plan(&load.page);
                        load.unreliable = vec![false; load.page.len()];
                        for id in plan.unreliable {
                            load.unreliable[id.index()] = true;
                        }
                        if load.browser.pooled() && load.unreliable.iter().any(|&u| u) {
                            return Err(invalid(
                                format!("{field}.browser"),
                                "partially reliable page loads (transport.reliability) run over the flow's one \
                                 connection; remove [flows.browser] or the reliability policy"
                                    .into(),
                            ));
                        }
                    }
                    let load = Arc::new(load);
                    (AppSpec::PageClient(load.clone()), AppSpec::PageServer(load))
                }
            };
            let (mut client_transport, mut server_transport) = (cfg.clone(), cfg);
            let mut extra_paths = Vec::new();
            if !path_links.is_empty() {
                // Every flow runs over every path, from path 0's interfaces.
                let (c0, s0) = (net.node("c.0"), net.node("s.0"));
                let browser_at_c = match (Some(client), Some(server)) {
                    (c, s) if c == c0 && s == s0 => true,
                    (c, s) if c == s0 && s == c0 => false,
                    _ => {
                        return Err(invalid(
                            format!("{field}.client"),
                            "a flow over [[paths]] runs between path 0's interfaces, client = \"c.0\" and \
                             server = \"s.0\" (or the other way round), and opens every other path from there"
                                .into(),
                        ))
                    }
                };
                let mut config = t
                    .multipath
                    .clone()
                    .unwrap_or_default()
                    .to_config(mp::default_scheduler(path_links.len()))
                    .map_err(|(f, m)| invalid(format!("{field}.transport.multipath.{f}"), m))?;
                // With the single-path scheduler the connection stays on path 0 (the core
                // opens no other path without a path scheduler).
                if config.scheduler != triage_core::quic::PathSchedulerKind::Single {
                    extra_paths = (1..path_links.len())
                        .map(|i| {
                            let (c, s) = (net.node(&format!("c.{i}")), net.node(&format!("s.{i}")));
                            let (c, s) = (c.unwrap_or_default(), s.unwrap_or_default());
                            if browser_at_c {
                                (c, s)
                            } else {
                                (s, c)
                            }
                        })
                        .collect();
                }
                let (server_priors, client_priors) =
                    if browser_at_c { (&down_priors, &up_priors) } else { (&up_priors, &down_priors) };
                if matches!(config.scheduler, triage_core::quic::PathSchedulerKind::SaEcf(_)) && t.scheduler.is_none() {
                    // SA-ECF decides per stream, over its own weighted round robin.
                    client_transport.quic.scheduler = triage_core::sched::stream::StreamSchedulerKind::Wrr;
                    server_transport.quic.scheduler = triage_core::sched::stream::StreamSchedulerKind::Wrr;
                }
                config.priors = client_priors.clone();
                client_transport.quic.multipath = config.clone();
                config.priors = server_priors.clone();
                server_transport.quic.multipath = config;
            }
            specs.push(FlowSpec {
                name: f.name.clone(),
                client,
                server,
                start_ns,
                client_transport,
                server_transport,
                client_app,
                server_app,
                extra_paths,
            });
        }
        if specs.is_empty() {
            return Err(invalid("flows".into(), "expected at least one [[flows]] entry".into()));
        }
        // A byte-limited queue smaller than one full-sized data packet of a flow whose data
        // crosses it drops every one of them: checked per route, so a small queue on a link
        // that only small-packet flows (or only ACKs) cross is fine.
        let mut sized: Vec<(u32, u32, u64, usize)> = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let client_writes = matches!(s.client_app, AppSpec::Bulk { .. } | AppSpec::Messages(_));
            let ends = std::iter::once((s.client, s.server)).chain(s.extra_paths.iter().copied());
            for (c, sv) in ends {
                sized.push((sv, c, full_packet_bytes(&s.server_transport), i));
                if client_writes {
                    sized.push((c, sv, full_packet_bytes(&s.client_transport), i));
                }
            }
        }
        // Time series live in memory until the run ends: bounded up front (a 1 ns interval
        // once grew to 22 GB in 30 s).
        crate::recorder::check_series_budget(
            self.measure.interval.0,
            stop_ns,
            2 * specs.len() as u64,
            net.links.len() as u64,
        )
        .map_err(|m| invalid("measure.interval".into(), m))?;
        let mut sim = Simulator::new(net, self.measure.interval.0);
        sim.set_packet_trace(self.measure.packet_trace);
        // Checked on the simulator's routes (computed once, by `Simulator::new`).
        if !byte_queues.is_empty() {
            for &(from, to, packet, flow) in &sized {
                for link in route_links(sim.network(), from, to) {
                    let small = byte_queues.iter().find(|(_, b, l)| l.contains(&link) && *b < packet);
                    if let Some((field, bytes, _)) = small {
                        return Err(invalid(
                            field.clone(),
                            format!(
                                "{bytes} bytes cannot hold one full-sized data packet of flows[{flow}] ({packet} \
                                 bytes), which crosses this link, so every such packet would be dropped; expected \
                                 at least {packet} bytes"
                            ),
                        ));
                    }
                }
            }
        }

        for s in specs {
            let (client, server) = (s.client, s.server);
            if sim.network().route(client, server).is_none() || sim.network().route(server, client).is_none() {
                return Err(invalid(
                    format!("flows[\"{}\"]", s.name),
                    "client and server are not connected by links".into(),
                ));
            }
            sim.add_flow(s);
        }
        Ok(Built { sim, stop_ns, warnings, path_names })
    }
}

/// Bytes of a full-sized data packet at the IP layer: MSS plus IP, TCP and timestamp headers
/// (and the priority option when on), or a full QUIC packet plus IP and UDP headers.
/// The links a packet from `from` to `to` crosses, in order (empty when there is no route).
fn route_links(net: &Network, from: u32, to: u32) -> Vec<usize> {
    let mut links = Vec::new();
    let mut at = from;
    // A route never repeats a link: stop after as many hops as there are links.
    while at != to && links.len() < net.links.len() {
        let Some(l) = net.route(at, to) else { break };
        links.push(l as usize);
        at = net.links[l as usize].to;
    }
    links
}

fn full_packet_bytes(cfg: &ConnectionConfig) -> u64 {
    use triage_core::wire::{IP_HEADER_BYTES, TCP_BASE_HEADER_BYTES, TCP_TIMESTAMP_OPTION_BYTES};
    let bytes = match cfg.mode {
        TransportMode::Quic => triage_core::wire::quic::IP_UDP_HEADER_BYTES + cfg.quic.max_udp_payload_bytes,
        TransportMode::Tcp => {
            let options = TCP_TIMESTAMP_OPTION_BYTES + if cfg.priority_option { 3 } else { 0 };
            cfg.mss_bytes + IP_HEADER_BYTES + TCP_BASE_HEADER_BYTES + options.div_ceil(4) * 4
        }
    };
    u64::from(bytes)
}

/// Loads a page: `builtin:NAME` or a HAR / DevTools-log file (its import report's skipped
/// entries are available through `triage page analyze`).
/// A page named as a scenario names it: `builtin:NAME`, or a HAR, DevTools log or
/// `transfer_sequence.json` file (relative paths from `base_dir` when they exist there).
pub fn load_page(src: &str, page_id: Option<&str>, base_dir: Option<&Path>) -> Result<triage_web::Page, String> {
    load_page_reporting(src, page_id, false, base_dir).map(|(p, _)| p)
}

/// [`load_page`], with the import's lines for the report: values it clamped or ignored, and
/// the recording's cache hits (a warm load simulates at no network cost what a first visit
/// fetches), when there are any.
pub fn load_page_reporting(
    src: &str,
    page_id: Option<&str>,
    keep_cache_hits: bool,
    base_dir: Option<&Path>,
) -> Result<(triage_web::Page, Vec<String>), String> {
    if let Some(name) = src.strip_prefix("builtin:") {
        return triage_web::builtin::builtin(name)
            .map(|p| (p, Vec::new()))
            .ok_or_else(|| format!("no built-in page \"{name}\" (cats, bing, youtube, news)"));
    }
    let path = resolve(Path::new(src), base_dir);
    if !path.exists() && triage_web::builtin::builtin(src).is_some() {
        return Err(format!("{src}: no such file; the built-in page of that name is \"builtin:{src}\""));
    }
    let file = path.display().to_string();
    let file_error = |error| triage_web::FileError { file: file.clone(), error }.to_string();
    let bytes = std::fs::read(&path).map_err(|e| file_error(triage_web::WebError::Io(e.to_string())))?;
    let key = (path, page_id.map(String::from), keep_cache_hits);
    if let Some(hit) = imported_pages().lock().map_or(None, |c| c.get(&key).cloned()) {
        if hit.bytes == bytes {
            return Ok((hit.page.clone(), hit.notes.clone()));
        }
    }
    let opts = triage_web::ImportOptions { page: key.1.clone(), keep_cache_hits };
    let imp = triage_web::import_str(&String::from_utf8_lossy(&bytes), &opts).map_err(file_error)?;
    let notes: Vec<String> = imp.adjusted_summary().into_iter().chain(imp.cache_summary()).collect();
    if let Ok(mut cache) = imported_pages().lock() {
        if cache.len() >= MAX_IMPORTED_PAGES {
            cache.clear();
        }
        cache.insert(key, Arc::new(ImportedPage { bytes, page: imp.page.clone(), notes: notes.clone() }));
    }
    Ok((imp.page, notes))
}

/// A page imported from a file, kept for the rest of the process with the file's bytes.
struct ImportedPage {
    bytes: Vec<u8>,
    page: triage_web::Page,
    /// [`load_page_reporting`]'s lines.
    notes: Vec<String>,
}

/// Files kept imported at most (the cache starts over when full).
const MAX_IMPORTED_PAGES: usize = 64;

/// Pages imported in this process, by file path and import options (page id, cache hits):
/// a scenario's variants and a sweep's runs load the same recording again and again, and
/// importing it (parsing a HAR of a megabyte) cost 9 times the simulation of a page load.
/// The file is still read every time and imported again when its bytes changed, so a
/// cached page is always what importing the file now would give.
fn imported_pages() -> &'static std::sync::Mutex<std::collections::HashMap<ImportKey, Arc<ImportedPage>>> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<ImportKey, Arc<ImportedPage>>>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// File path, page id, keep cache hits.
type ImportKey = (PathBuf, Option<String>, bool);

pub(crate) fn resolve(p: &Path, base: Option<&Path>) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    if let Some(b) = base {
        let cand = b.join(p);
        if cand.exists() {
            return cand;
        }
    }
    p.to_path_buf()
}
