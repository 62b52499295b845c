//! Writes and reads qlog traces of QUIC-mode connections as JSON-SEQ (`.sqlog`), the form
//! qvis (qvis.quictools.info) opens.
//!
//! Format: qlog version "0.3", draft-ietf-quic-qlog-main-schema-04 §6.2 (QlogFileSeq): a
//! sequence of JSON texts as in RFC 7464, each record preceded by the record separator 0x1E
//! and followed by a newline. The first record is the header (`qlog_version`, `qlog_format`
//! "JSON-SEQ", `title`, and `trace` with `vantage_point` and `common_fields`); every further
//! record is one event `{"time", "name", "data"}` (§3.4) whose name and data follow
//! draft-ietf-quic-qlog-quic-events-03 (see [`triage_core::qlog`]).
//!
//! Units: the core keeps integer nanoseconds; the file has milliseconds as numbers (`time`,
//! the RTTs of `metrics_updated`, `ack_delay`). A nanosecond count `n` is written as the
//! binary64 nearest `n / 10^6`, which serde_json prints as the shortest decimal that reads back
//! to the same binary64; for `n ≤` [`MAX_TIME_NS`] (15 significant digits) that decimal is
//! `n / 10^6` itself, and reading rounds `ms · 10^6` back to `n` exactly. Times are relative
//! to `reference_time` 0 (`time_format` "relative"): simulated time has no wall clock.
//!
//! Nothing here panics on any input: [`read`] returns [`QlogError`] for anything that is not
//! a trace this module could have written (unknown fields are ignored).

use std::io::{Read, Write};

use serde::Serialize;
use serde_json::{Map, Value};
use triage_core::qlog::{
    parse_hex, CongestionTrigger, ErrorSpace, Event, EventData, Frame, LossTrigger, Metrics, PacketEvent, PacketHeader,
    PacketNumberSpace, PacketType, Trace, VantagePoint, MAX_TIME_NS,
};

/// The `qlog_version` this module writes and reads (main schema -02 to -05 define "0.3").
pub const QLOG_VERSION: &str = "0.3";
/// The `qlog_format` of a JSON-SEQ file (main schema -04 §6.2).
pub const QLOG_FORMAT: &str = "JSON-SEQ";
/// RFC 7464 §2: every JSON text of a sequence starts with this record separator.
pub const RECORD_SEPARATOR: u8 = 0x1e;

/// Why a trace could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum QlogError {
    /// The underlying reader or writer failed.
    #[error("qlog I/O: {0}")]
    Io(#[from] std::io::Error),
    /// An event cannot be written as the schema requires (index into `Trace::events`).
    #[error("qlog event {index}: {message}")]
    Invalid {
        /// Which event.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A record of the file is not what this module writes (0 is the header record).
    #[error("qlog record {record}: {message}")]
    Format {
        /// Which record, counting the header as 0.
        record: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// Writes `trace` as a JSON-SEQ qlog file: the header record, then one record per event.
///
/// Every event is checked before anything is written, so an invalid trace writes nothing.
pub fn write<W: Write>(trace: &Trace, mut out: W) -> Result<(), QlogError> {
    for (index, event) in trace.events.iter().enumerate() {
        check_event(event).map_err(|message| QlogError::Invalid { index, message })?;
    }
    write_header(trace, &mut out)?;
    for (index, event) in trace.events.iter().enumerate() {
        write_event(index, event, &mut out)?;
    }
    Ok(())
}

/// Writes the header record of `trace` (main schema -04 §6.2); [`write_event`] appends events,
/// for a connection that streams its trace to a file as it runs.
pub fn write_header<W: Write>(trace: &Trace, out: &mut W) -> Result<(), QlogError> {
    let odcid = trace.odcid_hex();
    let header = HeaderOut {
        qlog_version: QLOG_VERSION,
        qlog_format: QLOG_FORMAT,
        title: &trace.title,
        trace: TraceOut {
            title: &trace.title,
            vantage_point: VantagePointOut { kind: trace.vantage_point.as_str() },
            common_fields: CommonFieldsOut {
                odcid: &odcid,
                group_id: &odcid,
                protocol_type: ["QUIC"],
                time_format: "relative",
                reference_time: 0.0,
            },
        },
    };
    record(out, &header)
}

/// Writes one event record; `index` only labels errors.
pub fn write_event<W: Write>(index: usize, event: &Event, out: &mut W) -> Result<(), QlogError> {
    check_event(event).map_err(|message| QlogError::Invalid { index, message })?;
    let time = ms(event.time_ns);
    let name = event.data.name();
    match &event.data {
        EventData::PacketSent(packet) | EventData::PacketReceived(packet) => {
            record(out, &RecordOut { time, name, data: packet_out(packet) })
        }
        EventData::PacketsAcked { space, packet_numbers } => record(
            out,
            &RecordOut { time, name, data: AckedOut { packet_number_space: space.as_str(), packet_numbers } },
        ),
        EventData::PacketLost { header, trigger } => record(
            out,
            &RecordOut { time, name, data: LostOut { header: header_out(header), trigger: trigger.as_str() } },
        ),
        EventData::MetricsUpdated(m) => {
            let data = MetricsOut {
                min_rtt: m.min_rtt_ns.map(ms),
                smoothed_rtt: m.smoothed_rtt_ns.map(ms),
                latest_rtt: m.latest_rtt_ns.map(ms),
                rtt_variance: m.rtt_variance_ns.map(ms),
                congestion_window: m.congestion_window_bytes,
                bytes_in_flight: m.bytes_in_flight,
                ssthresh: m.ssthresh_bytes,
                pacing_rate: m.pacing_rate_bps,
            };
            record(out, &RecordOut { time, name, data })
        }
        EventData::CongestionStateUpdated { old, new, trigger } => {
            let data = CongestionOut { old: old.as_deref(), new, trigger: trigger.map(CongestionTrigger::as_str) };
            record(out, &RecordOut { time, name, data })
        }
    }
}

/// Reads a JSON-SEQ qlog file written by [`write()`] back into a trace.
pub fn read<R: Read>(mut input: R) -> Result<Trace, QlogError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    parse(&bytes)
}

/// Parses the bytes of a JSON-SEQ qlog file (see [`read`]).
pub fn parse(bytes: &[u8]) -> Result<Trace, QlogError> {
    let mut chunks = bytes.split(|b| *b == RECORD_SEPARATOR);
    // RFC 7464 §2.1: the sequence starts with a record separator, so nothing comes before it.
    if chunks.next().is_some_and(|before| !before.is_empty()) || bytes.is_empty() {
        return Err(format_err(0, "the file does not start with the record separator 0x1E"));
    }
    // RFC 7464 §2.1: consecutive separators do not denote empty elements.
    let mut records = chunks.filter(|chunk| !chunk.is_empty()).enumerate();
    let (_, header) = records.next().ok_or_else(|| format_err(0, "no header record"))?;
    let mut trace = parse_header(&json(0, header)?).map_err(|message| format_err(0, message))?;
    for (record, text) in records {
        let event = parse_event(&json(record, text)?).map_err(|message| format_err(record, message))?;
        trace.events.push(event);
    }
    Ok(trace)
}

// ---- writing -------------------------------------------------------------------------------

/// Nanoseconds to the schema's milliseconds (exact for values up to `MAX_TIME_NS`; callers
/// check the range first).
fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn check_ns(what: &str, ns: u64) -> Result<(), String> {
    if ns > MAX_TIME_NS {
        return Err(format!("{what} {ns} ns is above {MAX_TIME_NS} ns, the largest time written exactly"));
    }
    Ok(())
}

/// The checks that make an event writable as the schema requires and readable back equal.
fn check_event(event: &Event) -> Result<(), String> {
    check_ns("time", event.time_ns)?;
    let frames = match &event.data {
        EventData::PacketSent(p) | EventData::PacketReceived(p) => &p.frames,
        EventData::MetricsUpdated(m) => {
            if m.is_empty() {
                return Err("metrics_updated carries no metric (quic-events-03 §7.2 needs one)".into());
            }
            for (what, value) in [
                ("min_rtt", m.min_rtt_ns),
                ("smoothed_rtt", m.smoothed_rtt_ns),
                ("latest_rtt", m.latest_rtt_ns),
                ("rtt_variance", m.rtt_variance_ns),
            ] {
                if let Some(ns) = value {
                    check_ns(what, ns)?;
                }
            }
            return Ok(());
        }
        _ => return Ok(()),
    };
    for frame in frames {
        if let Frame::Ack { ack_delay_ns, acked_ranges, .. } = frame {
            if let Some(ns) = ack_delay_ns {
                check_ns("ack_delay", *ns)?;
            }
            if let Some((from, to)) = acked_ranges.iter().find(|(from, to)| from > to) {
                return Err(format!("ACK range [{from}, {to}] runs backwards"));
            }
        }
    }
    Ok(())
}

fn record<W: Write, T: Serialize>(out: &mut W, value: &T) -> Result<(), QlogError> {
    out.write_all(&[RECORD_SEPARATOR])?;
    serde_json::to_writer(&mut *out, value).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}

#[derive(Serialize)]
struct HeaderOut<'a> {
    qlog_version: &'static str,
    qlog_format: &'static str,
    title: &'a str,
    trace: TraceOut<'a>,
}

#[derive(Serialize)]
struct TraceOut<'a> {
    title: &'a str,
    vantage_point: VantagePointOut,
    common_fields: CommonFieldsOut<'a>,
}

#[derive(Serialize)]
struct VantagePointOut {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct CommonFieldsOut<'a> {
    #[serde(rename = "ODCID")]
    odcid: &'a str,
    group_id: &'a str,
    protocol_type: [&'static str; 1],
    time_format: &'static str,
    reference_time: f64,
}

#[derive(Serialize)]
struct RecordOut<D> {
    time: f64,
    name: &'static str,
    data: D,
}

#[derive(Serialize)]
struct HeaderFieldsOut {
    packet_type: &'static str,
    packet_number: u64,
}

#[derive(Serialize)]
struct RawOut {
    length: u64,
}

#[derive(Serialize)]
struct PacketOut {
    header: HeaderFieldsOut,
    raw: RawOut,
    frames: Vec<FrameOut>,
}

#[derive(Serialize)]
struct AckedOut<'a> {
    packet_number_space: &'static str,
    // quic-events-03 §5.9: `? packet_numbers: [+ uint64]`, so an empty list is left out.
    #[serde(skip_serializing_if = "<[u64]>::is_empty")]
    packet_numbers: &'a [u64],
}

#[derive(Serialize)]
struct LostOut {
    header: HeaderFieldsOut,
    trigger: &'static str,
}

#[derive(Serialize)]
struct MetricsOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    min_rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    smoothed_rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latest_rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_variance: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    congestion_window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_in_flight: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ssthresh: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pacing_rate: Option<u64>,
}

#[derive(Serialize)]
struct CongestionOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    old: Option<&'a str>,
    new: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    trigger: Option<&'static str>,
}

/// The frames as quic-events-03 §8.11 writes them, `frame_type` first.
#[derive(Serialize)]
#[serde(tag = "frame_type", rename_all = "snake_case")]
enum FrameOut {
    Ack {
        #[serde(skip_serializing_if = "Option::is_none")]
        ack_delay: Option<f64>,
        // `? acked_ranges: [+ AckRange]`: left out when empty.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        acked_ranges: Vec<Vec<u64>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ect1: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ect0: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ce: Option<u64>,
    },
    Stream {
        stream_id: u64,
        offset: u64,
        length: u64,
        // §8.11.8: "MUST only be set if the value is true".
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        fin: bool,
    },
    Datagram {
        length: u64,
    },
    Crypto {
        offset: u64,
        length: u64,
    },
    Padding {
        payload_length: u64,
    },
    Ping,
    MaxData {
        maximum: u64,
    },
    MaxStreamData {
        stream_id: u64,
        maximum: u64,
    },
    HandshakeDone,
    ConnectionClose {
        error_space: &'static str,
        raw_error_code: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

fn header_out(header: &PacketHeader) -> HeaderFieldsOut {
    HeaderFieldsOut { packet_type: header.packet_type.as_str(), packet_number: header.packet_number }
}

fn packet_out(packet: &PacketEvent) -> PacketOut {
    PacketOut {
        header: header_out(&packet.header),
        raw: RawOut { length: packet.length_bytes },
        frames: packet.frames.iter().map(frame_out).collect(),
    }
}

fn frame_out(frame: &Frame) -> FrameOut {
    match frame {
        Frame::Ack { ack_delay_ns, acked_ranges, ect0, ect1, ce } => FrameOut::Ack {
            ack_delay: ack_delay_ns.map(ms),
            // §8.11.3: a range of one packet SHOULD be logged as [n].
            acked_ranges: acked_ranges
                .iter()
                .map(|&(from, to)| if from == to { vec![from] } else { vec![from, to] })
                .collect(),
            ect1: *ect1,
            ect0: *ect0,
            ce: *ce,
        },
        Frame::Stream { stream_id, offset, length_bytes, fin } => {
            FrameOut::Stream { stream_id: *stream_id, offset: *offset, length: *length_bytes, fin: *fin }
        }
        Frame::Datagram { length_bytes } => FrameOut::Datagram { length: *length_bytes },
        Frame::Crypto { offset, length_bytes } => FrameOut::Crypto { offset: *offset, length: *length_bytes },
        Frame::Padding { length_bytes } => FrameOut::Padding { payload_length: *length_bytes },
        Frame::Ping => FrameOut::Ping,
        Frame::MaxData { maximum } => FrameOut::MaxData { maximum: *maximum },
        Frame::MaxStreamData { stream_id, maximum } => {
            FrameOut::MaxStreamData { stream_id: *stream_id, maximum: *maximum }
        }
        Frame::HandshakeDone => FrameOut::HandshakeDone,
        Frame::ConnectionClose { error_space, error_code, reason } => FrameOut::ConnectionClose {
            error_space: error_space.as_str(),
            raw_error_code: *error_code,
            reason: reason.clone(),
        },
    }
}

// ---- reading -------------------------------------------------------------------------------

fn format_err(record: usize, message: impl Into<String>) -> QlogError {
    QlogError::Format { record, message: message.into() }
}

fn json(record: usize, text: &[u8]) -> Result<Value, QlogError> {
    serde_json::from_slice(text).map_err(|e| format_err(record, format!("not JSON: {e}")))
}

type Fields = Map<String, Value>;

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Fields, String> {
    value.as_object().ok_or_else(|| format!("{what} is not an object"))
}

fn field<'a>(fields: &'a Fields, key: &str) -> Result<&'a Value, String> {
    fields.get(key).ok_or_else(|| format!("missing field {key:?}"))
}

fn as_u64(value: &Value, key: &str) -> Result<u64, String> {
    value.as_u64().ok_or_else(|| format!("field {key:?} is not an unsigned integer"))
}

fn as_str<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    value.as_str().ok_or_else(|| format!("field {key:?} is not a string"))
}

fn u64_field(fields: &Fields, key: &str) -> Result<u64, String> {
    as_u64(field(fields, key)?, key)
}

fn opt_u64(fields: &Fields, key: &str) -> Result<Option<u64>, String> {
    fields.get(key).map(|v| as_u64(v, key)).transpose()
}

fn str_field<'a>(fields: &'a Fields, key: &str) -> Result<&'a str, String> {
    as_str(field(fields, key)?, key)
}

fn opt_str<'a>(fields: &'a Fields, key: &str) -> Result<Option<&'a str>, String> {
    fields.get(key).map(|v| as_str(v, key)).transpose()
}

/// Milliseconds (a JSON number) back to nanoseconds: the inverse of [`ms`] on
/// `0..=MAX_TIME_NS`; other numbers round to the nearest nanosecond.
fn ns_from_ms(value: &Value, key: &str) -> Result<u64, String> {
    let ms = value.as_f64().ok_or_else(|| format!("field {key:?} is not a number"))?;
    let ns = (ms * 1e6).round();
    if ns.is_nan() || ns < 0.0 || ns > MAX_TIME_NS as f64 {
        return Err(format!("field {key:?} = {ms} ms is outside 0..={MAX_TIME_NS} ns"));
    }
    Ok(ns as u64)
}

fn opt_ns(fields: &Fields, key: &str) -> Result<Option<u64>, String> {
    fields.get(key).map(|v| ns_from_ms(v, key)).transpose()
}

fn parse_header(value: &Value) -> Result<Trace, String> {
    let fields = object(value, "the header record")?;
    let version = str_field(fields, "qlog_version")?;
    if version != QLOG_VERSION {
        return Err(format!("qlog_version {version:?} is not {QLOG_VERSION:?}"));
    }
    let format = str_field(fields, "qlog_format")?;
    if format != QLOG_FORMAT {
        return Err(format!("qlog_format {format:?} is not {QLOG_FORMAT:?}"));
    }
    let title = opt_str(fields, "title")?.unwrap_or_default().to_string();
    let trace = object(field(fields, "trace")?, "trace")?;
    let vantage_point = object(field(trace, "vantage_point")?, "vantage_point")?;
    let vantage_point = match str_field(vantage_point, "type")? {
        "client" => VantagePoint::Client,
        "server" => VantagePoint::Server,
        other => return Err(format!("vantage point {other:?} is neither client nor server")),
    };
    let common = object(field(trace, "common_fields")?, "common_fields")?;
    let odcid = str_field(common, "ODCID")?;
    let odcid = parse_hex(odcid).ok_or_else(|| format!("ODCID {odcid:?} is not hex"))?;
    if let Some(format) = opt_str(common, "time_format")? {
        if format != "relative" {
            return Err(format!("time_format {format:?} is not \"relative\""));
        }
    }
    if let Some(reference) = common.get("reference_time") {
        if reference.as_f64() != Some(0.0) {
            return Err("reference_time is not 0".into());
        }
    }
    Ok(Trace { vantage_point, title, odcid, events: Vec::new() })
}

fn parse_event(value: &Value) -> Result<Event, String> {
    let fields = object(value, "the event record")?;
    let time_ns = ns_from_ms(field(fields, "time")?, "time")?;
    let name = str_field(fields, "name")?;
    let data = object(field(fields, "data")?, "data")?;
    let data = match name {
        "transport:packet_sent" => EventData::PacketSent(parse_packet(data)?),
        "transport:packet_received" => EventData::PacketReceived(parse_packet(data)?),
        "transport:packets_acked" => {
            let space = match opt_str(data, "packet_number_space")? {
                // §5.9: an omitted space means application_data.
                None => PacketNumberSpace::ApplicationData,
                Some(name) => {
                    PacketNumberSpace::from_name(name).ok_or_else(|| format!("unknown packet number space {name:?}"))?
                }
            };
            let packet_numbers = match data.get("packet_numbers") {
                None => Vec::new(),
                Some(list) => list
                    .as_array()
                    .ok_or("packet_numbers is not an array")?
                    .iter()
                    .map(|n| as_u64(n, "packet_numbers"))
                    .collect::<Result<_, _>>()?,
            };
            EventData::PacketsAcked { space, packet_numbers }
        }
        "recovery:packet_lost" => {
            let header = parse_packet_header(field(data, "header")?)?;
            let trigger = str_field(data, "trigger")?;
            let trigger = LossTrigger::from_name(trigger).ok_or_else(|| format!("unknown loss trigger {trigger:?}"))?;
            EventData::PacketLost { header, trigger }
        }
        "recovery:metrics_updated" => {
            let metrics = Metrics {
                min_rtt_ns: opt_ns(data, "min_rtt")?,
                smoothed_rtt_ns: opt_ns(data, "smoothed_rtt")?,
                latest_rtt_ns: opt_ns(data, "latest_rtt")?,
                rtt_variance_ns: opt_ns(data, "rtt_variance")?,
                congestion_window_bytes: opt_u64(data, "congestion_window")?,
                bytes_in_flight: opt_u64(data, "bytes_in_flight")?,
                ssthresh_bytes: opt_u64(data, "ssthresh")?,
                pacing_rate_bps: opt_u64(data, "pacing_rate")?,
            };
            if metrics.is_empty() {
                return Err("metrics_updated carries no metric".into());
            }
            EventData::MetricsUpdated(metrics)
        }
        "recovery:congestion_state_updated" => {
            let old = opt_str(data, "old")?.map(str::to_string);
            let new = str_field(data, "new")?.to_string();
            let trigger = match opt_str(data, "trigger")? {
                None => None,
                Some(name) => Some(
                    CongestionTrigger::from_name(name).ok_or_else(|| format!("unknown congestion trigger {name:?}"))?,
                ),
            };
            EventData::CongestionStateUpdated { old, new, trigger }
        }
        other => return Err(format!("unsupported event {other:?}")),
    };
    Ok(Event { time_ns, data })
}

fn parse_packet_header(value: &Value) -> Result<PacketHeader, String> {
    let header = object(value, "header")?;
    let packet_type = str_field(header, "packet_type")?;
    let packet_type =
        PacketType::from_name(packet_type).ok_or_else(|| format!("unknown packet type {packet_type:?}"))?;
    Ok(PacketHeader { packet_type, packet_number: u64_field(header, "packet_number")? })
}

fn parse_packet(data: &Fields) -> Result<PacketEvent, String> {
    let header = parse_packet_header(field(data, "header")?)?;
    let raw = object(field(data, "raw")?, "raw")?;
    let length_bytes = u64_field(raw, "length")?;
    let frames = match data.get("frames") {
        None => Vec::new(),
        Some(list) => {
            list.as_array().ok_or("frames is not an array")?.iter().map(parse_frame).collect::<Result<_, _>>()?
        }
    };
    Ok(PacketEvent { header, length_bytes, frames })
}

fn parse_frame(value: &Value) -> Result<Frame, String> {
    let f = object(value, "a frame")?;
    Ok(match str_field(f, "frame_type")? {
        "ack" => {
            let acked_ranges = match f.get("acked_ranges") {
                None => Vec::new(),
                Some(list) => list
                    .as_array()
                    .ok_or("acked_ranges is not an array")?
                    .iter()
                    .map(parse_ack_range)
                    .collect::<Result<_, _>>()?,
            };
            Frame::Ack {
                ack_delay_ns: opt_ns(f, "ack_delay")?,
                acked_ranges,
                ect0: opt_u64(f, "ect0")?,
                ect1: opt_u64(f, "ect1")?,
                ce: opt_u64(f, "ce")?,
            }
        }
        "stream" => Frame::Stream {
            stream_id: u64_field(f, "stream_id")?,
            offset: u64_field(f, "offset")?,
            length_bytes: u64_field(f, "length")?,
            fin: match f.get("fin") {
                None => false,
                Some(v) => v.as_bool().ok_or("field \"fin\" is not a boolean")?,
            },
        },
        "datagram" => Frame::Datagram { length_bytes: u64_field(f, "length")? },
        "crypto" => Frame::Crypto { offset: u64_field(f, "offset")?, length_bytes: u64_field(f, "length")? },
        "padding" => Frame::Padding { length_bytes: u64_field(f, "payload_length")? },
        "ping" => Frame::Ping,
        "max_data" => Frame::MaxData { maximum: u64_field(f, "maximum")? },
        "max_stream_data" => {
            Frame::MaxStreamData { stream_id: u64_field(f, "stream_id")?, maximum: u64_field(f, "maximum")? }
        }
        "handshake_done" => Frame::HandshakeDone,
        "connection_close" => {
            let space = str_field(f, "error_space")?;
            Frame::ConnectionClose {
                error_space: ErrorSpace::from_name(space).ok_or_else(|| format!("unknown error space {space:?}"))?,
                error_code: u64_field(f, "raw_error_code")?,
                reason: opt_str(f, "reason")?.map(str::to_string),
            }
        }
        other => return Err(format!("unsupported frame type {other:?}")),
    })
}

/// quic-events-03 §8.11.3: an AckRange is `[n]` or `[from, to]` with from ≤ to.
fn parse_ack_range(value: &Value) -> Result<(u64, u64), String> {
    let numbers = value.as_array().ok_or("an ACK range is not an array")?;
    let (from, to) = match numbers.as_slice() {
        [n] => (as_u64(n, "acked_ranges")?, as_u64(n, "acked_ranges")?),
        [from, to] => (as_u64(from, "acked_ranges")?, as_u64(to, "acked_ranges")?),
        _ => return Err("an ACK range has neither one nor two numbers".into()),
    };
    if from > to {
        return Err(format!("ACK range [{from}, {to}] runs backwards"));
    }
    Ok((from, to))
}
