//! Chrome DevTools protocol log reader: Lighthouse's `devtoolslog.json` (an array of
//! `{method, params}`) and Chrome performance logs (ChromeDriver's `performance` log: an array
//! of `{message, webview, ...}` whose `message` is `{method, params}` or `{message: {method,
//! params}}`, possibly serialised as a JSON string). A top-level object with one array of
//! events (Lighthouse's `{"defaultPass": [...]}`) is accepted too.
//!
//! Requests are rebuilt from `Network.requestWillBeSent` (a repeat with `redirectResponse`
//! ends the previous hop as a redirect), `responseReceived`, `dataReceived`,
//! `resourceChangedPriority`, `requestServedFromCache`, `loadingFinished` and
//! `loadingFailed`. A response with `fromEarlyHints` (a resource the browser preloaded on an
//! Early Hints 103 response, RFC 8297) is a network fetch, never a cache hit. Pages: a `Document` request with a new `loaderId` in a top-level frame
//! (the first document's frame, or any frame that
//! `Page.frameAttached`/`frameNavigated` never gives a parent) starts a page (`page_1`,
//! `page_2`, ... in log order); later requests (including iframes') belong to the latest page.
//! Out-of-process iframes (site isolation) run in targets of their own: a
//! `Target.attachedToTarget` of type `iframe` names their session (events carry `sessionId`)
//! and frame (its `targetId`); documents in such a session, in a frame so named, or in any
//! session other than the main frame's first document never start a page, so an OOPIF's
//! requests stay with the page that embeds them and are marked as in a subframe. A page whose
//! navigation its predecessor started (the document request's `initiator.type` is `script`,
//! or a main-frame `Page.frameRequestedNavigation`/`frameScheduledNavigation` with reason
//! `scriptInitiated`, `metaTagRefresh` or `httpHeaderRefresh` came before it) is a client-side
//! redirect's target ([`RawPage::client_redirect`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::WebError;
use crate::import::{RawEntry, RawPage, SkipReason, SourceFormat};
use crate::json::{initiator_object_url, opt_bool, opt_bytes, opt_num, opt_obj, opt_str, req_obj, req_str, wrong};
use crate::model::{BrowserPriority, HttpProtocol};

#[derive(Default)]
struct Req {
    entry: RawEntry,
    page: Option<usize>,
    finished: bool,
    data_bytes: u64,
    data_encoded: u64,
    header_bytes: Option<u64>,
    end_s: Option<f64>,
    /// The response came from an Early Hints (103) preload: a network fetch, whatever cache
    /// flag or `requestServedFromCache` event comes with it.
    early_hints: bool,
    /// The bytes a fetching proxy took from the origin ([`ProxyTiming::fetched_bytes`]),
    /// which replace what the browser saw when the load finishes.
    proxy_fetched_bytes: Option<u64>,
}

/// The origin-side timing a fetching proxy (Lighthouse's Lightrider) adds to each response
/// as headers, because the browser behind it sees every response arrive whole: `X-TCPMs`
/// (connection set-up, TLS included), `X-SSLMs` (its TLS part), `X-RequestMs` (request sent
/// to first byte), `X-ResponseMs` (first byte to last), `X-TotalMs` (all of it),
/// `X-TotalFetchedSize` (bytes fetched from the origin) and `X-ProtocolIsH2`. Read with
/// Lighthouse's rules (core/lib/network-request.js, `_updateTimingsForLightrider`): no
/// `X-TotalMs`, parts that miss it by 25 ms or more, or a TLS part longer than the
/// connection's, and the timing is not used.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ProxyTiming {
    connect_ms: f64,
    tls_ms: f64,
    request_ms: f64,
    response_ms: f64,
    fetched_bytes: Option<u64>,
    h2: bool,
}

impl ProxyTiming {
    /// The proxy's timing from a response's `headers` object, if it carries a usable one.
    fn from_headers(headers: &Map<String, Value>) -> Option<ProxyTiming> {
        let get = |name: &str| {
            headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).and_then(|(_, v)| v.as_str()).map(str::trim)
        };
        // Lighthouse's parseInt: whole milliseconds, negative parts as 0.
        let ms = |name: &str| get(name).and_then(|v| v.parse::<i64>().ok());
        let total = ms("X-TotalMs")?;
        let part = |name: &str| ms(name).map_or(0, |v| v.max(0));
        let (tcp, ssl, req, res) = (part("X-TCPMs"), part("X-SSLMs"), part("X-RequestMs"), part("X-ResponseMs"));
        if (tcp + req + res - total).abs() >= 25 || ssl > tcp {
            return None;
        }
        Some(ProxyTiming {
            connect_ms: tcp as f64,
            tls_ms: ssl as f64,
            request_ms: req as f64,
            response_ms: res as f64,
            fetched_bytes: get("X-TotalFetchedSize")
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|b| b.is_finite() && *b >= 0.0 && *b < 1e15)
                .map(|b| b as u64),
            h2: get("X-ProtocolIsH2").is_some(),
        })
    }
}

/// Parses a DevTools or performance log into pages of raw entries.
pub fn parse(value: &Value) -> Result<(SourceFormat, Vec<RawPage>, usize), WebError> {
    let events: &Vec<Value> = match value {
        Value::Array(a) => a,
        Value::Object(o) => {
            let arrays: Vec<&Vec<Value>> = o.values().filter_map(Value::as_array).collect();
            match arrays.as_slice() {
                [one] => one,
                _ => {
                    return Err(WebError::Format(
                        "neither a HAR (an object with `log.entries`) nor a DevTools log (an array of events)".into(),
                    ))
                }
            }
        }
        _ => return Err(WebError::Format("neither a HAR nor a DevTools log".into())),
    };
    let mut format = SourceFormat::DevtoolsLog;
    let mut reqs: Vec<Req> = Vec::new();
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    let mut pages: Vec<RawPage> = Vec::new();
    let mut main_frame: Option<String> = None;
    let mut current_loader: Option<String> = None;
    // A client-side navigation was asked for since the last page started.
    let mut client_navigation = false;
    // Frames that have a parent (iframes), from Page.frameAttached / Page.frameNavigated
    // anywhere in the log: their documents never start a page.
    let mut child_frames: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    // Sessions of out-of-process iframes (`Target.attachedToTarget` with `targetInfo.type`
    // "iframe"): their requests belong to the page that embeds them.
    let mut iframe_sessions: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    // The session of the main frame's first document (`None`: events without a session).
    let mut main_session: Option<Option<String>> = None;
    for ev in events {
        let msg = ev.get("message").and_then(|m| m.get("message").or(Some(m))).unwrap_or(ev);
        let params = msg.get("params");
        match msg.get("method").and_then(Value::as_str) {
            Some("Page.frameAttached") => {
                if let (Some(f), Some(_)) = (
                    params.and_then(|p| p.get("frameId")).and_then(Value::as_str),
                    params.and_then(|p| p.get("parentFrameId")).and_then(Value::as_str),
                ) {
                    child_frames.insert(f.to_string());
                }
            }
            Some("Page.frameNavigated") => {
                let frame = params.and_then(|p| p.get("frame"));
                if let (Some(f), Some(_)) = (
                    frame.and_then(|f| f.get("id")).and_then(Value::as_str),
                    frame.and_then(|f| f.get("parentId")).and_then(Value::as_str),
                ) {
                    child_frames.insert(f.to_string());
                }
            }
            Some("Target.attachedToTarget") => {
                // An out-of-process iframe's target: its events carry this session id.
                let session = params.and_then(|p| p.get("sessionId")).and_then(Value::as_str);
                let info = params.and_then(|p| p.get("targetInfo"));
                let kind = info.and_then(|t| t.get("type")).and_then(Value::as_str);
                if let (Some(sid), Some("iframe")) = (session, kind) {
                    iframe_sessions.insert(sid.to_string());
                    if let Some(t) = info.and_then(|t| t.get("targetId")).and_then(Value::as_str) {
                        // An OOPIF's target id is its frame id.
                        child_frames.insert(t.to_string());
                    }
                }
            }
            _ => {}
        }
    }

    for (i, ev) in events.iter().enumerate() {
        let path = format!("[{i}]");
        // The performance log may serialise each message as a JSON string: parse it first.
        let ev: Cow<'_, Value> = match ev.get("message") {
            Some(Value::String(text)) if !ev.as_object().is_some_and(|o| o.contains_key("method")) => {
                let owned = serde_json::from_str::<Value>(text).map_err(|e| WebError::Field {
                    path: format!("{path}.message"),
                    problem: format!("a JSON string that does not parse: {e}"),
                })?;
                format = SourceFormat::PerfLog;
                let mut wrapper = Map::new();
                wrapper.insert("message".into(), owned);
                Cow::Owned(Value::Object(wrapper))
            }
            _ => Cow::Borrowed(ev),
        };
        let (method, params, wrapped) = unwrap_event(&ev, &path)?;
        if wrapped {
            format = SourceFormat::PerfLog;
        }
        let Some(method) = method else { continue };
        if matches!(method, "Page.frameRequestedNavigation" | "Page.frameScheduledNavigation") {
            // A navigation the page itself asks for (Chrome's ClientNavigationReason): the
            // next page it starts is a client-side redirect.
            let reason = params.and_then(|p| p.get("reason")).and_then(Value::as_str);
            let frame = params.and_then(|p| p.get("frameId")).and_then(Value::as_str);
            let main = main_frame.as_deref().is_none_or(|m| Some(m) == frame);
            if main && matches!(reason, Some("scriptInitiated" | "metaTagRefresh" | "httpHeaderRefresh")) {
                client_navigation = true;
            }
            continue;
        }
        if !method.starts_with("Network.") {
            continue;
        }
        let ppath = format!("{path}.params");
        let params = match params {
            Some(p) => p,
            None => return Err(crate::json::missing(&ppath, "an object")),
        };
        let id = || req_str(params, "requestId", &ppath).map(str::to_string);
        match method {
            "Network.requestWillBeSent" => {
                let rid = id()?;
                let request = req_obj(params, "request", &ppath)?;
                let rpath = format!("{ppath}.request");
                let url = req_str(request, "url", &rpath)?.to_string();
                let ts = opt_num(params, "timestamp", &ppath)?.unwrap_or(0.0);
                // A repeat of the id with a redirect response ends the previous hop.
                if let Some(&prev) = by_id.get(&rid) {
                    let r = &mut reqs[prev];
                    if !r.finished {
                        if let Some(resp) = opt_obj(params, "redirectResponse", &ppath)? {
                            r.entry.status =
                                opt_num(resp, "status", &format!("{ppath}.redirectResponse"))?.unwrap_or(302.0) as i64;
                            r.entry.wire_bytes = opt_bytes(
                                resp,
                                "encodedDataLength",
                                &format!("{ppath}.redirectResponse"),
                                &mut r.entry.adjusted,
                            )?
                            .filter(|b| *b > 0);
                        }
                        r.entry.redirect_to = Some(url.clone());
                        r.entry.duration_ms = (ts - r.entry.start_ms / 1000.0) * 1000.0;
                        r.finished = true;
                    }
                }
                let kind = opt_str(params, "type", &ppath)?.map(str::to_string);
                let frame = opt_str(params, "frameId", &ppath)?.map(str::to_string);
                let loader = opt_str(params, "loaderId", &ppath)?.map(str::to_string);
                let is_doc = kind.as_deref() == Some("Document");
                let session = ev.get("sessionId").and_then(Value::as_str).map(str::to_string);
                let in_iframe_session = session.as_ref().is_some_and(|s| iframe_sessions.contains(s));
                if is_doc && main_frame.is_none() && !in_iframe_session {
                    main_frame = frame.clone();
                    main_session = Some(session.clone());
                }
                let other_session = main_session.as_ref().is_some_and(|m| *m != session);
                let top_level = !in_iframe_session
                    && !other_session
                    && (frame == main_frame || frame.as_ref().is_some_and(|f| !child_frames.contains(f)));
                let starts_page = is_doc && top_level && loader.is_some() && loader != current_loader;
                let initiator = opt_obj(params, "initiator", &ppath)?;
                if starts_page {
                    current_loader = loader.clone();
                    // Started by the previous page's document: a script, or a refresh.
                    let by_script = initiator.and_then(|o| o.get("type")).and_then(Value::as_str) == Some("script");
                    pages.push(RawPage {
                        id: format!("page_{}", pages.len() + 1),
                        title: url.clone(),
                        entries: Vec::new(),
                        client_redirect: !pages.is_empty() && (by_script || client_navigation),
                    });
                    client_navigation = false;
                }
                let preflight = initiator.and_then(|o| o.get("type")).and_then(Value::as_str) == Some("preflight");
                let headers = opt_obj(request, "headers", &rpath)?;
                let referer = headers.and_then(|h| {
                    h.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("referer"))
                        .and_then(|(_, v)| v.as_str())
                        .map(str::to_string)
                });
                let entry = RawEntry {
                    url,
                    method: opt_str(request, "method", &rpath)?.unwrap_or("GET").to_ascii_uppercase(),
                    resource_type: kind,
                    priority: opt_str(request, "initialPriority", &rpath)?.and_then(BrowserPriority::parse),
                    initiator_url: initiator.and_then(initiator_object_url),
                    referer,
                    start_ms: ts * 1000.0,
                    skip: preflight.then_some(SkipReason::CorsPreflight),
                    navigation: starts_page,
                    initiator_type: initiator.and_then(|o| o.get("type")).and_then(Value::as_str).map(str::to_string),
                    subframe: in_iframe_session || (frame.is_some() && main_frame.is_some() && frame != main_frame),
                    ..RawEntry::default()
                };
                by_id.insert(rid, reqs.len());
                reqs.push(Req { entry, page: pages.len().checked_sub(1), ..Req::default() });
            }
            "Network.responseReceived" => {
                let Some(r) = by_id.get(&id()?).map(|&k| &mut reqs[k]) else { continue };
                let resp = req_obj(params, "response", &ppath)?;
                let rp = format!("{ppath}.response");
                r.entry.status = opt_num(resp, "status", &rp)?.unwrap_or(0.0) as i64;
                r.entry.mime = opt_str(resp, "mimeType", &rp)?.unwrap_or("").to_string();
                r.header_bytes = opt_bytes(resp, "encodedDataLength", &rp, &mut r.entry.adjusted)?;
                r.early_hints = opt_bool(resp, "fromEarlyHints", &rp)?.unwrap_or(false);
                r.entry.content_length = opt_obj(resp, "headers", &rp)?.and_then(|h| {
                    h.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                        .and_then(|(_, v)| v.as_str())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                });
                if opt_bool(resp, "fromDiskCache", &rp)?.unwrap_or(false)
                    || opt_bool(resp, "fromPrefetchCache", &rp)?.unwrap_or(false)
                    || opt_bool(resp, "fromMemoryCache", &rp)?.unwrap_or(false)
                {
                    r.entry.skip.get_or_insert(SkipReason::CacheHit);
                }
                if r.entry.resource_type.is_none() {
                    r.entry.resource_type = opt_str(params, "type", &ppath)?.map(str::to_string);
                }
                r.entry.protocol = opt_str(resp, "protocol", &rp)?.and_then(HttpProtocol::parse);
                r.entry.connection_id =
                    opt_num(resp, "connectionId", &rp)?.filter(|c| c.is_finite() && *c >= 1.0).map(|c| c as u64);
                let event_ms = opt_num(params, "timestamp", &ppath)?.map(|t| t * 1000.0);
                r.entry.response_start_ms = event_ms;
                if let Some(t) = opt_obj(resp, "timing", &rp)? {
                    let tp = format!("{rp}.timing");
                    // Offsets in ms from `requestTime` (s); -1 means "did not happen".
                    let at = |name: &str| -> Result<Option<f64>, WebError> {
                        Ok(opt_num(t, name, &tp)?.filter(|v| v.is_finite() && *v >= 0.0))
                    };
                    let span = |a: Option<f64>, b: Option<f64>| match (a, b) {
                        (Some(a), Some(b)) if b > a => b - a,
                        _ => 0.0,
                    };
                    let (dns_start, dns_end) = (at("dnsStart")?, at("dnsEnd")?);
                    let (connect_start, connect_end) = (at("connectStart")?, at("connectEnd")?);
                    let (send_end, headers_end) = (at("sendEnd")?, at("receiveHeadersEnd")?);
                    r.entry.dns_ms = span(dns_start, dns_end);
                    r.entry.connect_ms = span(connect_start, connect_end);
                    r.entry.tls_ms = span(at("sslStart")?, at("sslEnd")?);
                    r.entry.server_wait_ms = span(send_end, headers_end);
                    let base = opt_num(t, "requestTime", &tp)?.filter(|v| *v > 0.0);
                    if let (Some(base), Some(h)) = (base, headers_end) {
                        r.entry.response_start_ms = Some(base * 1000.0 + h);
                    }
                    // Stalled: from the request's creation to its DNS, connection or send.
                    let first = [dns_start, connect_start, at("sendStart")?].into_iter().flatten().reduce(f64::min);
                    if let (Some(base), Some(first)) = (base, first) {
                        let stall = base * 1000.0 + first - r.entry.start_ms;
                        r.entry.stall_ms = if stall.is_finite() && stall > 0.0 { stall } else { 0.0 };
                    }
                }
                // A browser behind a fetching proxy saw no connection, send or download: take
                // the proxy's timing of the origin (connect, TLS, wait, and a first byte that
                // many ms before the browser had the response whole) and its byte count.
                let browser_saw_network =
                    r.entry.connect_ms > 0.0 || r.entry.server_wait_ms > 0.0 || r.entry.dns_ms > 0.0;
                let proxy = opt_obj(resp, "headers", &rp)?.and_then(ProxyTiming::from_headers);
                if let Some(p) = proxy.filter(|_| !browser_saw_network) {
                    r.entry.connect_ms = p.connect_ms;
                    r.entry.tls_ms = p.tls_ms;
                    r.entry.server_wait_ms = p.request_ms;
                    r.entry.response_start_ms = r.entry.response_start_ms.map(|t| t - p.response_ms);
                    r.proxy_fetched_bytes = p.fetched_bytes;
                    if p.h2 {
                        r.entry.protocol = Some(HttpProtocol::Http2);
                    }
                    r.entry.proxy_timing = true;
                }
            }
            "Network.dataReceived" => {
                let Some(r) = by_id.get(&id()?).map(|&k| &mut reqs[k]) else { continue };
                let adj = &mut r.entry.adjusted;
                r.data_bytes = r.data_bytes.saturating_add(opt_bytes(params, "dataLength", &ppath, adj)?.unwrap_or(0));
                r.data_encoded =
                    r.data_encoded.saturating_add(opt_bytes(params, "encodedDataLength", &ppath, adj)?.unwrap_or(0));
            }
            "Network.resourceChangedPriority" => {
                let Some(r) = by_id.get(&id()?).map(|&k| &mut reqs[k]) else { continue };
                if let Some(p) = opt_str(params, "newPriority", &ppath)?.and_then(BrowserPriority::parse) {
                    r.entry.priority = Some(p);
                }
            }
            "Network.requestServedFromCache" => {
                let Some(r) = by_id.get(&id()?).map(|&k| &mut reqs[k]) else { continue };
                r.entry.skip.get_or_insert(SkipReason::CacheHit);
            }
            "Network.loadingFinished" => {
                let Some(r) = by_id.get(&id()?).map(|&k| &mut reqs[k]) else { continue };
                r.finished = true;
                r.end_s = opt_num(params, "timestamp", &ppath)?;
                let total = opt_bytes(params, "encodedDataLength", &ppath, &mut r.entry.adjusted)?.filter(|b| *b > 0);
                let sum = r.header_bytes.unwrap_or(0).saturating_add(r.data_encoded);
                r.entry.wire_bytes = total.or((sum > 0).then_some(sum));
            }
            "Network.loadingFailed" => {
                let Some(r) = by_id.get(&id()?).map(|&k| &mut reqs[k]) else { continue };
                r.finished = true;
                r.end_s = opt_num(params, "timestamp", &ppath)?;
                r.entry.skip = Some(SkipReason::Failed);
            }
            _ => {}
        }
    }

    let mut loose = 0;
    for mut r in reqs {
        if r.early_hints && r.entry.skip == Some(SkipReason::CacheHit) {
            r.entry.skip = None;
        }
        if !r.finished && r.entry.skip.is_none() {
            r.entry.skip = Some(SkipReason::Unfinished);
        }
        if let Some(end) = r.end_s {
            // Checked (negative, non-finite, over a day: counted) by import::build_page.
            r.entry.duration_ms = (end * 1000.0) - r.entry.start_ms;
        }
        if r.data_bytes > 0 {
            r.entry.body_bytes = Some(r.data_bytes);
        }
        if let Some(b) = r.proxy_fetched_bytes.filter(|_| r.finished) {
            r.entry.wire_bytes = Some(b);
        }
        match r.page {
            Some(p) => pages[p].entries.push(r.entry),
            None => loose += 1,
        }
    }
    Ok((format, pages, loose))
}

/// The method and params of one log element, and whether it was wrapped (performance log).
/// An event's method, params and whether it was wrapped.
type Event<'a> = (Option<&'a str>, Option<&'a Map<String, Value>>, bool);

fn unwrap_event<'a>(ev: &'a Value, path: &str) -> Result<Event<'a>, WebError> {
    let obj = ev.as_object().ok_or_else(|| wrong(path, "an object (an event)", ev))?;
    if obj.contains_key("method") {
        let m = opt_str(obj, "method", path)?;
        return Ok((m, opt_obj(obj, "params", path)?, false));
    }
    match obj.get("message") {
        Some(Value::Object(m)) => {
            let inner = match m.get("message") {
                Some(Value::Object(i)) => i,
                _ => m,
            };
            let p = format!("{path}.message");
            Ok((opt_str(inner, "method", &p)?, opt_obj(inner, "params", &p)?, true))
        }
        Some(v) => Err(wrong(&format!("{path}.message"), "an object or a JSON string", v)),
        None => Ok((None, None, false)),
    }
}
