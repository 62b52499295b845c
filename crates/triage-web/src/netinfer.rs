//! The network a recording was made over, inferred from its own timings, so that a page can
//! be simulated "as recorded" and checked against the paint times the recording measured
//! (issue 9, must-show 2).
//!
//! - Round-trip time: per origin, the shortest TCP handshake the recording shows for it: the
//!   connect time (HAR `timings.connect`, DevTools `connectEnd - connectStart`, both including
//!   TLS) less its TLS part (HAR `timings.ssl`, DevTools `sslEnd - sslStart`), one round trip;
//!   when the TLS part is unknown, the connect time over two for https (TCP's and TLS 1.3's
//!   round trips) and over one for http. The median over origins. The TLS part is left out
//!   when known because it also holds certificate work on both ends: ferguson.com's root
//!   connection spent 4 ms in TCP and 692 ms in TLS.
//!   A log recorded behind a fetching proxy (Lightrider) gives these times from the proxy's
//!   timing headers (`X-TCPMs`, `X-SSLMs`: see the DevTools reader), the origin's side.
//! - Bandwidth: the bytes of every response with timings, over the time during which at least
//!   one response was arriving (the union of the intervals from each response's first byte
//!   to its end). That is what the load achieved while it was downloading: a lower bound of
//!   the path's capacity, and the right one for a load that never filled it.

use crate::model::Page;

/// A recording's network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedNetwork {
    /// Round-trip time (ns).
    pub rtt_ns: u64,
    /// Bandwidth (bits per second).
    pub rate_bps: u64,
    /// Origins whose connect time the estimate used.
    pub origins: usize,
    /// Bytes and time (ns) of the bandwidth estimate.
    pub bytes: u64,
    /// See [`RecordedNetwork::bytes`].
    pub busy_ns: u64,
}

/// A round trip from a recorded connect time to `url` and its TLS part (0: unknown): the
/// TCP handshake (connect less TLS) when the TLS part is known and shorter than the connect
/// time; else the connect time over two for https (TCP's and TLS 1.3's round trips), over
/// one for http.
pub fn rtt_from_connect_ns(connect_ns: u64, tls_ns: u64, url: &str) -> u64 {
    if tls_ns > 0 && tls_ns < connect_ns {
        return connect_ns - tls_ns;
    }
    connect_ns / if url.starts_with("https:") { 2 } else { 1 }
}

/// What a recorded connection setup took beyond its handshakes' round trips (ns): the
/// connect time less one round trip ([`rtt_from_connect_ns`]) for TCP and, on https, one
/// more for TLS 1.3. Certificate work on either end or a slow server; 0 when the TLS part is
/// unknown (the round trip is then inferred as exactly half the connect time).
pub fn connect_extra_ns(connect_ns: u64, tls_ns: u64, url: &str) -> u64 {
    let rtt = rtt_from_connect_ns(connect_ns, tls_ns, url);
    let rtts = if url.starts_with("https:") { 2 } else { 1 };
    connect_ns.saturating_sub(rtt.saturating_mul(rtts))
}

/// Each origin's round-trip time in the recording: the shortest connect time to it
/// ([`rtt_from_connect_ns`]); origins the recording opened no connection to are absent.
pub fn origin_rtts(page: &Page) -> std::collections::BTreeMap<&str, u64> {
    let mut per_origin: std::collections::BTreeMap<&str, u64> = Default::default();
    for o in page.objects().iter().filter(|o| o.recorded_connect_ns > 0) {
        let est = rtt_from_connect_ns(o.recorded_connect_ns, o.recorded_tls_ns, &o.origin);
        let e = per_origin.entry(o.origin.as_str()).or_insert(est);
        *e = (*e).min(est);
    }
    per_origin
}

/// The network of `page`'s recording, or `None` when it has no connect times or no response
/// timings (built-in pages, HARs without timings).
pub fn recorded_network(page: &Page) -> Option<RecordedNetwork> {
    let mut rtts: Vec<u64> = origin_rtts(page).values().copied().collect();
    rtts.sort_unstable();
    let rtt_ns = *rtts.get(rtts.len() / 2)?;
    let mut spans: Vec<(u64, u64)> = page
        .objects()
        .iter()
        .filter(|o| o.wire_bytes > 0 && o.recorded_response_start_ns > 0)
        .map(|o| (o.recorded_response_start_ns, o.recorded_start_ns + o.recorded_duration_ns))
        .filter(|(a, b)| b > a)
        .collect();
    let bytes: u64 = page
        .objects()
        .iter()
        .filter(|o| o.wire_bytes > 0 && o.recorded_response_start_ns > 0)
        .filter(|o| o.recorded_start_ns + o.recorded_duration_ns > o.recorded_response_start_ns)
        .map(|o| o.wire_bytes)
        .sum();
    spans.sort_unstable();
    let mut busy_ns = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for (a, b) in spans {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                busy_ns += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        busy_ns += e - s;
    }
    if busy_ns == 0 || bytes == 0 {
        return None;
    }
    let rate_bps = (u128::from(bytes) * 8 * 1_000_000_000 / u128::from(busy_ns)).min(u128::from(u64::MAX)) as u64;
    Some(RecordedNetwork { rtt_ns, rate_bps, origins: rtts.len(), bytes, busy_ns })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{import_str, ImportOptions};

    #[test]
    fn rtt_from_connects_and_rate_from_busy_time() {
        // https://a: connect 80 ms (TCP + TLS: 40 ms RTT); http://b: connect 60 ms (60 ms).
        // Responses arrive over [100, 200] and [150, 300] ms (busy 200 ms) and [400, 500]
        // (100 ms): 300 ms for 30,000 + 15,000 + 30,000 bytes = 2 Mbps.
        let har = r#"{"log": {"entries": [
 {"request": {"url": "https://a.example/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 200,
  "timings": {"blocked": 0, "dns": 0, "connect": 80, "send": 0, "wait": 20, "receive": 100},
  "response": {"status": 200, "headersSize": 0, "bodySize": 30000, "content": {"size": 30000, "mimeType": "text/html"}}},
 {"request": {"url": "http://b.example/x.js"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 300,
  "timings": {"blocked": 0, "dns": 0, "connect": 60, "send": 0, "wait": 90, "receive": 150},
  "response": {"status": 200, "headersSize": 0, "bodySize": 15000, "content": {"size": 15000, "mimeType": "text/javascript"}}},
 {"request": {"url": "https://a.example/y.jpg"}, "startedDateTime": "2024-01-01T00:00:00.350Z", "time": 150,
  "timings": {"blocked": 0, "dns": 0, "connect": 0, "send": 0, "wait": 50, "receive": 100},
  "response": {"status": 200, "headersSize": 0, "bodySize": 30000, "content": {"size": 30000, "mimeType": "image/jpeg"}}}
]}}"#;
        let page = import_str(har, &ImportOptions::default()).unwrap().page;
        let n = recorded_network(&page).unwrap();
        assert_eq!(n.origins, 2);
        // Median of {40, 60} ms over two origins: the upper one.
        assert_eq!(n.rtt_ns, 60_000_000);
        assert_eq!((n.bytes, n.busy_ns), (75_000, 300_000_000));
        assert_eq!(n.rate_bps, 2_000_000);
    }

    #[test]
    fn tls_part_left_out_of_the_round_trip() {
        // 700 ms connect, 690 ms TLS: a 10 ms round trip, 680 ms beyond the two round trips.
        assert_eq!(rtt_from_connect_ns(700_000_000, 690_000_000, "https://a/"), 10_000_000);
        assert_eq!(connect_extra_ns(700_000_000, 690_000_000, "https://a/"), 680_000_000);
        // Unknown TLS part: half the connect time per round trip, nothing beyond.
        assert_eq!(rtt_from_connect_ns(80_000_000, 0, "https://a/"), 40_000_000);
        assert_eq!(connect_extra_ns(80_000_000, 0, "https://a/"), 0);
        // Plain http: the connect time is the round trip.
        assert_eq!(rtt_from_connect_ns(30_000_000, 0, "http://a/"), 30_000_000);
        assert_eq!(connect_extra_ns(30_000_000, 0, "http://a/"), 0);
        // A TLS figure as long as the connect time says nothing about TCP: the fallback.
        assert_eq!(rtt_from_connect_ns(80_000_000, 80_000_000, "https://a/"), 40_000_000);
    }
}
