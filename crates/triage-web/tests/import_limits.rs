//! Values a recording should never hold (sizes of 1e300, negative sizes, timestamps and
//! durations of 1e300) are clamped or skipped, and counted in the import report: never
//! silent (issue 10). Export of such a page is refused before anything is allocated or
//! written.

use std::collections::BTreeMap;

use triage_web::export::{check_sizes, dummy_content, transfer_sequence, write_dummy, write_replica};
use triage_web::import::{MAX_DURATION_MS, MAX_OBJECT_BYTES};
use triage_web::{import_str, Adjustment, ContentType, ImportOptions, SkipReason};

const HAR: &str = r#"{"log": {"entries": [
 {"request": {"url": "https://a.example/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 1e300,
  "response": {"status": 200, "content": {"size": 1e300, "mimeType": "text/html"}}},
 {"request": {"url": "https://a.example/a.js"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": -5,
  "response": {"status": 200, "bodySize": -7, "content": {"size": -3, "mimeType": "text/javascript"}}},
 {"request": {"url": "https://a.example/b.css"}, "startedDateTime": "2024-01-01T00:00:00.200Z", "time": 12,
  "response": {"status": 200, "bodySize": -1, "content": {"size": 1000, "mimeType": "text/css"}}}
]}}"#;

#[test]
fn absurd_har_values_are_clamped_and_counted() {
    let imp = import_str(HAR, &ImportOptions::default()).unwrap();
    let want = BTreeMap::from([
        (Adjustment::SizeClamped, 1),
        (Adjustment::SizeNegative, 2), // -7 and -3; -1 is the format's "unknown"
        (Adjustment::TimeClamped, 1),
        (Adjustment::TimeInvalid, 1),
    ]);
    assert_eq!(imp.adjusted, want);
    let o = imp.page.objects();
    assert_eq!(o[0].wire_bytes, MAX_OBJECT_BYTES);
    assert_eq!(o[0].recorded_duration_ns, (MAX_DURATION_MS * 1e6) as u64);
    assert_eq!((o[1].wire_bytes, o[1].recorded_duration_ns), (0, 0));
    assert_eq!(o[2].wire_bytes, 1000);
    let line = imp.adjusted_summary().unwrap();
    assert!(line.starts_with("5 values adjusted: 1 size_clamped (sizes above 1 TiB clamped to 1 TiB)"), "{line}");
    // A clean file reports nothing.
    let clean = HAR.replace("1e300", "5").replace("-7", "7").replace("-3", "3").replace("-5", "5");
    assert_eq!(import_str(&clean, &ImportOptions::default()).unwrap().adjusted_summary(), None);
}

#[test]
fn devtools_timestamps_of_1e300_are_skipped_and_counted() {
    let log = r#"[
 {"method": "Network.requestWillBeSent", "params": {"requestId": "0", "frameId": "F", "loaderId": "L", "type": "Document", "timestamp": 9.0, "request": {"url": "https://a.example/", "method": "GET"}}},
 {"method": "Network.responseReceived", "params": {"requestId": "0", "response": {"status": 200, "mimeType": "text/html"}}},
 {"method": "Network.loadingFinished", "params": {"requestId": "0", "timestamp": 9.2, "encodedDataLength": 5000}},
 {"method": "Network.requestWillBeSent", "params": {"requestId": "1", "frameId": "F", "loaderId": "L", "timestamp": 1e300, "request": {"url": "https://a.example/late.js", "method": "GET"}}},
 {"method": "Network.responseReceived", "params": {"requestId": "1", "response": {"status": 200, "mimeType": "text/javascript"}}},
 {"method": "Network.loadingFinished", "params": {"requestId": "1", "timestamp": 1e300, "encodedDataLength": 3000}},
 {"method": "Network.requestWillBeSent", "params": {"requestId": "2", "frameId": "F", "loaderId": "L", "timestamp": 10.0, "request": {"url": "https://a.example/x.js", "method": "GET"}}},
 {"method": "Network.responseReceived", "params": {"requestId": "2", "response": {"status": 200, "mimeType": "text/javascript", "encodedDataLength": -9}}},
 {"method": "Network.loadingFinished", "params": {"requestId": "2", "timestamp": 1e300, "encodedDataLength": 3000}}
]"#;
    let imp = import_str(log, &ImportOptions::default()).unwrap();
    assert_eq!(imp.skipped, BTreeMap::from([(SkipReason::InvalidTime, 1)]));
    assert_eq!(imp.adjusted, BTreeMap::from([(Adjustment::SizeNegative, 1), (Adjustment::TimeClamped, 1)]));
    // The other requests keep their real times: metrics are not all 0 ms.
    let o = imp.page.objects();
    assert_eq!(o.len(), 2);
    assert_eq!(o[1].recorded_start_ns, 1_000_000_000);
}

#[test]
fn export_of_a_huge_object_is_refused_before_writing() {
    let imp = import_str(HAR, &ImportOptions::default()).unwrap();
    let seq = transfer_sequence(&imp.page);
    let e = check_sizes(&seq).unwrap_err().to_string();
    assert!(e.contains("object 0 (https://a.example/)") && e.contains("1099511627776 bytes"), "{e}");
    assert!(e.contains("at most 4294967295 bytes (4 GiB)"), "{e}");
    let dir = std::env::temp_dir().join(format!("triage-export-limit-{}", std::process::id()));
    assert!(write_replica(&imp.page, &dir).is_err());
    assert!(!dir.exists(), "nothing was written");
}

/// A reference dummy generator (the one export used to build in memory).
fn reference(kind: ContentType, head: &[u8], size: usize) -> Vec<u8> {
    if kind == ContentType::Json && size >= 10 {
        let mut v = b"{\"pad\":\"".to_vec();
        v.resize(size - 2, b'x');
        v.extend_from_slice(b"\"}");
        return v;
    }
    let mut v: Vec<u8> = head.iter().copied().take(size).collect();
    let filler = b"triage dummy object ";
    let mut i = 0;
    while v.len() < size {
        v.push(filler[i % filler.len()]);
        i += 1;
    }
    v
}

#[test]
fn streamed_dummies_match_the_in_memory_ones_across_blocks() {
    for size in [0usize, 3, 9, 10, 65_535, 65_536, 65_537, 200_003] {
        let mut streamed = Vec::new();
        write_dummy(&mut streamed, ContentType::Css, "css", size as u64).unwrap();
        assert_eq!(streamed, reference(ContentType::Css, b"/* dummy */\n", size), "css {size}");
        assert_eq!(dummy_content(ContentType::Json, "json", size as u64), reference(ContentType::Json, b"", size));
    }
}
