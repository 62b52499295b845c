//! qlog traces of QUIC-mode connections: the exact text of a hand-written trace, the round
//! trip write → read, and every written record against the drafts' required fields
//! (`tests/data/qlog_required_fields.json`).

use proptest::prelude::*;
use serde_json::Value;
use triage_core::qlog::{
    CongestionTrigger, ErrorSpace, EventData, Frame, LossTrigger, Metrics, PacketEvent, PacketHeader,
    PacketNumberSpace, PacketType, Trace, VantagePoint, MAX_TIME_NS,
};
use triage_sim::qlog::{parse, read, write, QlogError};

const MS: u64 = 1_000_000;

fn sent(pn_type: PacketType, pn: u64, length_bytes: u64, frames: Vec<Frame>) -> EventData {
    EventData::PacketSent(PacketEvent {
        header: PacketHeader { packet_type: pn_type, packet_number: pn },
        length_bytes,
        frames,
    })
}

fn received(pn_type: PacketType, pn: u64, length_bytes: u64, frames: Vec<Frame>) -> EventData {
    EventData::PacketReceived(PacketEvent {
        header: PacketHeader { packet_type: pn_type, packet_number: pn },
        length_bytes,
        frames,
    })
}

/// A client's view of a tiny connection, with RFC 9002 arithmetic done by hand:
/// - 0 ms: Initial 0 (ClientHello in CRYPTO, padded to 1252 bytes).
/// - 25 ms: the server's Initial 0 acknowledges it: first RTT sample 25 ms, so min = smoothed =
///   latest = 25 ms and rttvar = 25/2 = 12.5 ms (§5.3); the window grows in slow start by the
///   1252 acknowledged bytes from 12000 (§7.2: min(10·1200, max(14720, 2·1200))) to 13252,
///   and nothing is in flight.
/// - 25.1 ms: the server's Handshake 0; 25.3 ms: the client's Handshake 0 (102 bytes) and two
///   1-RTT data packets (1252 bytes each) and a PING (60 bytes): 2666 bytes in flight.
/// - 50.6 ms: the server's 1-RTT 0 acknowledges 1-RTT 0 and 2 in two ranges, ACK delay
///   1.25 ms, one ECT(0) and one CE mark. Latest RTT 50.6 − 25.3 = 25.3 ms; 25.3 < min_rtt +
///   ack_delay = 26.25, so the sample is not adjusted (§5.3); rttvar = ¾·12.5 + ¼·|25 − 25.3| =
///   9.45 ms; smoothed = ⅞·25 + ⅛·25.3 = 25.0375 ms. Window 13252 + 1252 + 60 = 14564; in
///   flight 2666 − 1312 = 1354; pacing (§7.7) 1.25 · 14564·8 bit / 25.0375 ms = 5816874 bit/s.
/// - 53.7625 ms: 1-RTT 1 is lost by the time threshold (§6.1.2): 9/8 · max(25.0375, 25.3) =
///   28.4625 ms after its send time 25.3 ms. Window and ssthresh halve to 7282 (§7.3.2), in
///   flight 1354 − 1252 = 102, and the controller leaves slow start for recovery.
fn tiny_connection() -> Trace {
    let mut t = Trace::new(VantagePoint::Client, "triage QUIC client", &[0x8a, 0x3f, 0x01, 0xc2]);
    t.push(
        0,
        sent(
            PacketType::Initial,
            0,
            1252,
            vec![Frame::Crypto { offset: 0, length_bytes: 280 }, Frame::Padding { length_bytes: 945 }],
        ),
    );
    t.push(
        25 * MS,
        received(
            PacketType::Initial,
            0,
            1252,
            vec![
                Frame::Ack { ack_delay_ns: Some(0), acked_ranges: vec![(0, 0)], ect0: None, ect1: None, ce: None },
                Frame::Crypto { offset: 0, length_bytes: 90 },
            ],
        ),
    );
    t.push(25 * MS, EventData::PacketsAcked { space: PacketNumberSpace::Initial, packet_numbers: vec![0] });
    t.push(
        25 * MS,
        EventData::MetricsUpdated(Metrics {
            min_rtt_ns: Some(25 * MS),
            smoothed_rtt_ns: Some(25 * MS),
            latest_rtt_ns: Some(25 * MS),
            rtt_variance_ns: Some(12_500_000),
            congestion_window_bytes: Some(13_252),
            bytes_in_flight: Some(0),
            ssthresh_bytes: None,
            pacing_rate_bps: None,
        }),
    );
    t.push(25_100_000, received(PacketType::Handshake, 0, 1080, vec![Frame::Crypto { offset: 0, length_bytes: 1010 }]));
    t.push(
        25_300_000,
        sent(
            PacketType::Handshake,
            0,
            102,
            vec![
                Frame::Ack {
                    ack_delay_ns: Some(200_000),
                    acked_ranges: vec![(0, 0)],
                    ect0: None,
                    ect1: None,
                    ce: None,
                },
                Frame::Crypto { offset: 0, length_bytes: 36 },
            ],
        ),
    );
    t.push(
        25_300_000,
        sent(
            PacketType::OneRtt,
            0,
            1252,
            vec![Frame::Stream { stream_id: 0, offset: 0, length_bytes: 1200, fin: false }],
        ),
    );
    t.push(
        25_300_000,
        sent(
            PacketType::OneRtt,
            1,
            1252,
            vec![Frame::Stream { stream_id: 0, offset: 1200, length_bytes: 1200, fin: true }],
        ),
    );
    t.push(25_300_000, sent(PacketType::OneRtt, 2, 60, vec![Frame::Ping]));
    t.push(
        50_600_000,
        received(
            PacketType::OneRtt,
            0,
            75,
            vec![
                Frame::HandshakeDone,
                Frame::Ack {
                    ack_delay_ns: Some(1_250_000),
                    acked_ranges: vec![(2, 2), (0, 0)],
                    ect0: Some(1),
                    ect1: Some(0),
                    ce: Some(1),
                },
            ],
        ),
    );
    t.push(
        50_600_000,
        EventData::PacketsAcked { space: PacketNumberSpace::ApplicationData, packet_numbers: vec![0, 2] },
    );
    t.push(
        50_600_000,
        EventData::MetricsUpdated(Metrics {
            smoothed_rtt_ns: Some(25_037_500),
            latest_rtt_ns: Some(25_300_000),
            rtt_variance_ns: Some(9_450_000),
            congestion_window_bytes: Some(14_564),
            bytes_in_flight: Some(1354),
            pacing_rate_bps: Some(5_816_874),
            ..Metrics::default()
        }),
    );
    t.push(
        53_762_500,
        EventData::PacketLost {
            header: PacketHeader { packet_type: PacketType::OneRtt, packet_number: 1 },
            trigger: LossTrigger::TimeThreshold,
        },
    );
    t.push(
        53_762_500,
        EventData::CongestionStateUpdated { old: Some("slow_start".into()), new: "recovery".into(), trigger: None },
    );
    t.push(
        53_762_500,
        EventData::MetricsUpdated(Metrics {
            congestion_window_bytes: Some(7282),
            ssthresh_bytes: Some(7282),
            bytes_in_flight: Some(102),
            ..Metrics::default()
        }),
    );
    t
}

fn written(trace: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    write(trace, &mut out).expect("the trace is valid");
    out
}

#[test]
fn tiny_connection_writes_the_expected_records() {
    let text = String::from_utf8(written(&tiny_connection())).unwrap();
    // Each record is RS, one JSON text, newline (RFC 7464 §2.2).
    assert!(text.starts_with('\u{1e}'));
    let records: Vec<&str> = text.split('\u{1e}').skip(1).collect();
    assert_eq!(records.len(), 1 + 15);
    assert!(records.iter().all(|r| r.ends_with('\n') && r.matches('\n').count() == 1));

    // Header: title, vantage point and ODCID 8a3f01c2 as given; times in ms relative to 0.
    assert_eq!(
        records[0],
        concat!(
            r#"{"qlog_version":"0.3","qlog_format":"JSON-SEQ","title":"triage QUIC client","#,
            r#""trace":{"title":"triage QUIC client","vantage_point":{"type":"client"},"#,
            r#""common_fields":{"ODCID":"8a3f01c2","group_id":"8a3f01c2","protocol_type":["QUIC"],"#,
            r#""time_format":"relative","reference_time":0.0}}}"#,
            "\n"
        )
    );
    // Initial 0 at time 0: 280 CRYPTO bytes and 945 of padding (`payload_length`).
    assert_eq!(
        records[1],
        concat!(
            r#"{"time":0.0,"name":"transport:packet_sent","data":{"header":{"packet_type":"initial","packet_number":0},"#,
            r#""raw":{"length":1252},"frames":[{"frame_type":"crypto","offset":0,"length":280},"#,
            r#"{"frame_type":"padding","payload_length":945}]}}"#,
            "\n"
        )
    );
    // 25 000 000 ns is 25 ms; a one-packet range is written [0]; a zero ACK delay is 0.0 ms.
    assert_eq!(
        records[2],
        concat!(
            r#"{"time":25.0,"name":"transport:packet_received","data":{"header":{"packet_type":"initial","packet_number":0},"#,
            r#""raw":{"length":1252},"frames":[{"frame_type":"ack","ack_delay":0.0,"acked_ranges":[[0]]},"#,
            r#"{"frame_type":"crypto","offset":0,"length":90}]}}"#,
            "\n"
        )
    );
    assert_eq!(
        records[3],
        concat!(
            r#"{"time":25.0,"name":"transport:packets_acked","data":{"packet_number_space":"initial","packet_numbers":[0]}}"#,
            "\n"
        )
    );
    // RTTs in ms: 12 500 000 ns is 12.5 ms; no ssthresh or pacing rate yet, so none written.
    assert_eq!(
        records[4],
        concat!(
            r#"{"time":25.0,"name":"recovery:metrics_updated","data":{"min_rtt":25.0,"smoothed_rtt":25.0,"#,
            r#""latest_rtt":25.0,"rtt_variance":12.5,"congestion_window":13252,"bytes_in_flight":0}}"#,
            "\n"
        )
    );
    // The second data packet ends the stream: fin written only when true.
    assert_eq!(
        records[8],
        concat!(
            r#"{"time":25.3,"name":"transport:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":1},"#,
            r#""raw":{"length":1252},"frames":[{"frame_type":"stream","stream_id":0,"offset":1200,"length":1200,"fin":true}]}}"#,
            "\n"
        )
    );
    // The ACK with two ranges, 1.25 ms of delay and the ECN counts.
    assert_eq!(
        records[10],
        concat!(
            r#"{"time":50.6,"name":"transport:packet_received","data":{"header":{"packet_type":"1RTT","packet_number":0},"#,
            r#""raw":{"length":75},"frames":[{"frame_type":"handshake_done"},{"frame_type":"ack","ack_delay":1.25,"#,
            r#""acked_ranges":[[2],[0]],"ect1":0,"ect0":1,"ce":1}]}}"#,
            "\n"
        )
    );
    assert_eq!(
        records[12],
        concat!(
            r#"{"time":50.6,"name":"recovery:metrics_updated","data":{"smoothed_rtt":25.0375,"latest_rtt":25.3,"#,
            r#""rtt_variance":9.45,"congestion_window":14564,"bytes_in_flight":1354,"pacing_rate":5816874}}"#,
            "\n"
        )
    );
    assert_eq!(
        records[13],
        concat!(
            r#"{"time":53.7625,"name":"recovery:packet_lost","data":{"header":{"packet_type":"1RTT","packet_number":1},"#,
            r#""trigger":"time_threshold"}}"#,
            "\n"
        )
    );
    assert_eq!(
        records[14],
        concat!(
            r#"{"time":53.7625,"name":"recovery:congestion_state_updated","data":{"old":"slow_start","new":"recovery"}}"#,
            "\n"
        )
    );
}

#[test]
fn tiny_connection_reads_back_equal() {
    let trace = tiny_connection();
    assert_eq!(read(written(&trace).as_slice()).unwrap(), trace);
}

// ---- the required fields of the drafts -----------------------------------------------------

fn spec() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/qlog_required_fields.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, key| v.get(key))
}

fn strings(value: Option<&Value>) -> Vec<&str> {
    value.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// Checks `object` against one entry of the spec (`required`, `values`, `one_of`, `nonempty`,
/// `contains`); returns what is wrong.
fn check_rules(rules: &Value, object: &Value, what: &str) -> Vec<String> {
    let mut errors = Vec::new();
    for path in strings(rules.get("required")) {
        if at(object, path).is_none() {
            errors.push(format!("{what}: missing required {path}"));
        }
    }
    if let Some(values) = rules.get("values").and_then(Value::as_object) {
        for (path, allowed) in values {
            if let Some(v) = at(object, path) {
                if !allowed.as_array().unwrap().contains(v) {
                    errors.push(format!("{what}: {path} = {v} is not one of {allowed}"));
                }
            }
        }
    }
    let one_of = strings(rules.get("one_of"));
    if !one_of.is_empty() && !one_of.iter().any(|path| at(object, path).is_some()) {
        errors.push(format!("{what}: none of {one_of:?}"));
    }
    for path in strings(rules.get("nonempty")) {
        if at(object, path).and_then(Value::as_array).is_some_and(Vec::is_empty) {
            errors.push(format!("{what}: {path} is an empty list"));
        }
    }
    if let Some(contains) = rules.get("contains").and_then(Value::as_object) {
        for (path, item) in contains {
            if !at(object, path).and_then(Value::as_array).is_some_and(|a| a.contains(item)) {
                errors.push(format!("{what}: {path} does not contain {item}"));
            }
        }
    }
    errors
}

/// Every record of a JSON-SEQ file against the spec.
fn schema_errors(spec: &Value, text: &[u8]) -> Vec<String> {
    let mut errors = Vec::new();
    for (i, record) in text.split(|b| *b == 0x1e).skip(1).enumerate() {
        let record: Value = serde_json::from_slice(record).unwrap();
        if i == 0 {
            errors.extend(check_rules(&spec["header"], &record, "header"));
            continue;
        }
        let what = format!("record {i}");
        errors.extend(check_rules(&spec["event"], &record, &what));
        let name = record["name"].as_str().unwrap_or_default();
        let Some(rules) = spec["events"].get(name) else {
            errors.push(format!("{what}: event {name} is not in the spec"));
            continue;
        };
        let data = &record["data"];
        errors.extend(check_rules(rules, data, &format!("{what} {name}")));
        if let Some(frames) = rules.get("frames").and_then(Value::as_str).and_then(|p| at(data, p)) {
            for (j, frame) in frames.as_array().unwrap().iter().enumerate() {
                let what = format!("{what} frame {j}");
                errors.extend(check_rules(&spec["frames"], frame, &what));
                let kind = frame["frame_type"].as_str().unwrap_or_default();
                match spec["frames"]["types"].get(kind) {
                    Some(rules) => errors.extend(check_rules(rules, frame, &format!("{what} {kind}"))),
                    None => errors.push(format!("{what}: frame type {kind} is not in the spec")),
                }
            }
        }
    }
    errors
}

#[test]
fn spec_cites_its_drafts() {
    let spec = spec();
    let about = spec["about"].as_str().unwrap();
    assert!(
        about.contains("draft-ietf-quic-qlog-main-schema-04") && about.contains("draft-ietf-quic-qlog-quic-events-03")
    );
    for (name, rules) in spec["events"].as_object().unwrap() {
        assert!(rules["section"].as_str().is_some_and(|s| s.contains('§')), "{name} cites no section");
    }
}

#[test]
fn every_written_record_has_the_required_fields() {
    let spec = spec();
    let mut trace = tiny_connection();
    // Also the frames the tiny connection does not use.
    trace.push(
        60 * MS,
        sent(
            PacketType::OneRtt,
            3,
            1200,
            vec![
                Frame::Datagram { length_bytes: 500 },
                Frame::MaxData { maximum: 1 << 20 },
                Frame::MaxStreamData { stream_id: 4, maximum: 1 << 18 },
                Frame::Ack { ack_delay_ns: None, acked_ranges: vec![], ect0: None, ect1: None, ce: None },
                Frame::ConnectionClose {
                    error_space: ErrorSpace::Transport,
                    error_code: 0,
                    reason: Some("done".into()),
                },
            ],
        ),
    );
    trace.push(61 * MS, EventData::PacketsAcked { space: PacketNumberSpace::Handshake, packet_numbers: vec![] });
    trace.push(
        62 * MS,
        EventData::CongestionStateUpdated {
            old: None,
            new: "slow_start".into(),
            trigger: Some(CongestionTrigger::Ecn),
        },
    );
    let errors = schema_errors(&spec, &written(&trace));
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn the_schema_check_finds_missing_fields() {
    // The checker must be able to fail: remove required fields and break value sets by hand.
    let spec = spec();
    let text = String::from_utf8(written(&tiny_connection())).unwrap();
    let broken = text
        .replacen(r#""qlog_format":"JSON-SEQ","#, "", 1)
        .replacen(r#"{"packet_type":"initial","packet_number":0}"#, r#"{"packet_number":0}"#, 1)
        .replacen(r#""stream_id":0,"#, "", 1)
        .replacen(r#""trigger":"time_threshold""#, r#""trigger":"timeout""#, 1)
        .replacen(r#""new":"recovery""#, r#""state":"recovery""#, 1)
        .replacen(r#""acked_ranges":[[2],[0]]"#, r#""acked_ranges":[]"#, 1);
    let errors = schema_errors(&spec, broken.as_bytes());
    let expected = [
        "header: missing required qlog_format",
        "record 1 transport:packet_sent: missing required header.packet_type",
        "record 7 frame 0 stream: missing required stream_id",
        "record 13 recovery:packet_lost: trigger = \"timeout\"",
        "record 14 recovery:congestion_state_updated: missing required new",
        "record 10 frame 1 ack: acked_ranges is an empty list",
    ];
    for want in expected {
        assert!(errors.iter().any(|e| e.starts_with(want)), "no {want:?} in {errors:#?}");
    }
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
}

// ---- units and errors ----------------------------------------------------------------------

fn one_event(time_ns: u64) -> Trace {
    let mut t = Trace::new(VantagePoint::Server, "", &[]);
    t.push(time_ns, EventData::PacketsAcked { space: PacketNumberSpace::ApplicationData, packet_numbers: vec![7] });
    t
}

fn time_text(time_ns: u64) -> String {
    let text = String::from_utf8(written(&one_event(time_ns))).unwrap();
    let start = text.find(r#"{"time":"#).unwrap() + 8;
    text[start..start + text[start..].find(',').unwrap()].to_string()
}

#[test]
fn times_are_exact_decimal_milliseconds() {
    // n ns is n / 10^6 ms, written as that decimal (shortest form, serde_json's notation).
    assert_eq!(time_text(1), "1e-6");
    assert_eq!(time_text(1_500), "0.0015");
    assert_eq!(time_text(123_456_789), "123.456789");
    assert_eq!(time_text(MAX_TIME_NS), "999999999.999999");
    assert_eq!(time_text(MAX_TIME_NS - 1), "999999999.999998");
    for ns in [0, 1, 999, 1_500, 123_456_789, 3_600 * 1_000 * MS + 1, MAX_TIME_NS - 1, MAX_TIME_NS] {
        assert_eq!(read(written(&one_event(ns)).as_slice()).unwrap(), one_event(ns));
    }
}

#[test]
fn out_of_range_and_malformed_input_are_errors() {
    // Beyond MAX_TIME_NS a time is not written exactly: nothing is written at all.
    let mut out = Vec::new();
    assert!(matches!(write(&one_event(MAX_TIME_NS + 1), &mut out), Err(QlogError::Invalid { index: 0, .. })));
    assert!(out.is_empty());
    let mut empty_metrics = one_event(0);
    empty_metrics.push(1, EventData::MetricsUpdated(Metrics::default()));
    assert!(matches!(write(&empty_metrics, &mut out), Err(QlogError::Invalid { index: 1, .. })));
    let mut backwards = one_event(0);
    backwards.push(
        1,
        sent(
            PacketType::OneRtt,
            0,
            50,
            vec![Frame::Ack { ack_delay_ns: None, acked_ranges: vec![(5, 3)], ect0: None, ect1: None, ce: None }],
        ),
    );
    assert!(write(&backwards, &mut out).is_err());

    let good = String::from_utf8(written(&one_event(0))).unwrap();
    for bad in [
        String::new(),
        good.trim_start_matches('\u{1e}').to_string(),
        good.replace("0.3", "0.4"),
        good.replace(r#""type":"server""#, r#""type":"network""#),
        good.replace(r#""time":0.0"#, r#""time":-1.0"#),
        good.replace(r#""time":0.0"#, r#""time":1e300"#),
        good.replace("transport:packets_acked", "transport:datagrams_sent"),
        good.replace(r#"[7]"#, r#"[-7]"#),
        good.replace(r#""ODCID":"""#, r#""ODCID":"xyz""#),
        format!("{good}\u{1e}{{\"time\":"),
    ] {
        assert!(parse(bad.as_bytes()).is_err(), "accepted {bad:?}");
    }
    // Consecutive separators are not empty records (RFC 7464 §2.1).
    assert_eq!(parse(good.replace('\u{1e}', "\u{1e}\u{1e}").as_bytes()).unwrap(), one_event(0));
}

// ---- round trip ----------------------------------------------------------------------------

fn time_ns() -> impl Strategy<Value = u64> {
    prop_oneof![0..=MAX_TIME_NS, 0..=10_000 * MS, Just(MAX_TIME_NS)]
}

fn header() -> impl Strategy<Value = PacketHeader> {
    (prop_oneof![Just(PacketType::Initial), Just(PacketType::Handshake), Just(PacketType::OneRtt)], any::<u64>())
        .prop_map(|(packet_type, packet_number)| PacketHeader { packet_type, packet_number })
}

fn frame() -> impl Strategy<Value = Frame> {
    let ranges = prop::collection::vec((any::<u64>(), any::<u64>()).prop_map(|(a, b)| (a.min(b), a.max(b))), 0..4);
    prop_oneof![
        (prop::option::of(time_ns()), ranges, any::<Option<u64>>(), any::<Option<u64>>(), any::<Option<u64>>())
            .prop_map(|(ack_delay_ns, acked_ranges, ect0, ect1, ce)| Frame::Ack {
                ack_delay_ns,
                acked_ranges,
                ect0,
                ect1,
                ce
            }),
        (any::<u64>(), any::<u64>(), any::<u64>(), any::<bool>())
            .prop_map(|(stream_id, offset, length_bytes, fin)| Frame::Stream { stream_id, offset, length_bytes, fin }),
        any::<u64>().prop_map(|length_bytes| Frame::Datagram { length_bytes }),
        (any::<u64>(), any::<u64>()).prop_map(|(offset, length_bytes)| Frame::Crypto { offset, length_bytes }),
        any::<u64>().prop_map(|length_bytes| Frame::Padding { length_bytes }),
        Just(Frame::Ping),
        any::<u64>().prop_map(|maximum| Frame::MaxData { maximum }),
        (any::<u64>(), any::<u64>()).prop_map(|(stream_id, maximum)| Frame::MaxStreamData { stream_id, maximum }),
        Just(Frame::HandshakeDone),
        (any::<bool>(), any::<u64>(), prop::option::of(".*")).prop_map(|(transport, error_code, reason)| {
            let error_space = if transport { ErrorSpace::Transport } else { ErrorSpace::Application };
            Frame::ConnectionClose { error_space, error_code, reason }
        }),
    ]
}

fn metrics() -> impl Strategy<Value = Metrics> {
    (
        (
            prop::option::of(time_ns()),
            prop::option::of(time_ns()),
            prop::option::of(time_ns()),
            prop::option::of(time_ns()),
        ),
        (any::<Option<u64>>(), any::<Option<u64>>(), any::<Option<u64>>(), any::<Option<u64>>()),
    )
        .prop_map(|((min, smoothed, latest, var), (cwnd, in_flight, ssthresh, pacing))| Metrics {
            min_rtt_ns: min,
            smoothed_rtt_ns: smoothed,
            latest_rtt_ns: latest,
            rtt_variance_ns: var,
            congestion_window_bytes: cwnd,
            bytes_in_flight: in_flight,
            ssthresh_bytes: ssthresh,
            pacing_rate_bps: pacing,
        })
        .prop_filter("metrics_updated carries at least one metric", |m| !m.is_empty())
}

fn event_data() -> impl Strategy<Value = EventData> {
    let packet = || {
        (header(), any::<u64>(), prop::collection::vec(frame(), 0..5))
            .prop_map(|(header, length_bytes, frames)| PacketEvent { header, length_bytes, frames })
    };
    let space = prop_oneof![
        Just(PacketNumberSpace::Initial),
        Just(PacketNumberSpace::Handshake),
        Just(PacketNumberSpace::ApplicationData)
    ];
    let loss = prop_oneof![
        Just(LossTrigger::ReorderingThreshold),
        Just(LossTrigger::TimeThreshold),
        Just(LossTrigger::PtoExpired)
    ];
    let cc_trigger =
        prop::option::of(prop_oneof![Just(CongestionTrigger::PersistentCongestion), Just(CongestionTrigger::Ecn)]);
    prop_oneof![
        packet().prop_map(EventData::PacketSent),
        packet().prop_map(EventData::PacketReceived),
        (space, prop::collection::vec(any::<u64>(), 0..6))
            .prop_map(|(space, packet_numbers)| EventData::PacketsAcked { space, packet_numbers }),
        (header(), loss).prop_map(|(header, trigger)| EventData::PacketLost { header, trigger }),
        metrics().prop_map(EventData::MetricsUpdated),
        (prop::option::of(".*"), ".*", cc_trigger).prop_map(|(old, new, trigger)| EventData::CongestionStateUpdated {
            old,
            new,
            trigger
        }),
    ]
}

fn trace() -> impl Strategy<Value = Trace> {
    (
        prop_oneof![Just(VantagePoint::Client), Just(VantagePoint::Server)],
        ".*",
        prop::collection::vec(any::<u8>(), 0..21),
        prop::collection::vec((time_ns(), event_data()), 0..12),
    )
        .prop_map(|(vantage_point, title, odcid, events)| {
            let mut trace = Trace::new(vantage_point, title, &odcid);
            for (time_ns, data) in events {
                trace.push(time_ns, data);
            }
            trace
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_traces_round_trip(trace in trace()) {
        let text = written(&trace);
        prop_assert_eq!(read(text.as_slice()).unwrap(), trace);
        // And every record of a random trace satisfies the drafts' required fields.
        let errors = schema_errors(&spec(), &text);
        prop_assert!(errors.is_empty(), "{:#?}", errors);
    }
}

#[test]
fn fuzz_seeds_parse_and_round_trip() {
    // The seed files of the `qlog` fuzz target are valid traces (a seed the reader rejects
    // would start the fuzzer from nothing).
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/qlog");
    for name in ["handshake.sqlog", "recovery.sqlog", "header_only.sqlog"] {
        let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
        let trace = parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(written(&trace), bytes, "{name} is not in the writer's exact form");
    }
}
