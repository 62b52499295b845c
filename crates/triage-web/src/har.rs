//! HAR 1.2 reader, for the files Chrome DevTools, chrome-har (browsertime, sitespeed.io) and
//! WebPageTest write.
//!
//! Besides the standard fields it reads the custom ones these tools add: `_priority` (else
//! `_initialPriority`; DevTools and WebPageTest names), `_resourceType`, `_renderBlocking`,
//! `_transferSize`, WebPageTest's `_bytesIn`, `_initiator` (a URL string, or an object with
//! `url`/`stack`), `_initiator_detail` (the same object, often as a JSON string), and
//! `response.fromDiskCache` / `_fromCache` / `_was_cached` (cache hits, unless `fromEarlyHints` /
//! `_fromEarlyHints` says an Early Hints preload fetched it). Entries are grouped by `pageref`
//! against `log.pages`; with no pages, every entry belongs to one page `page_1`.

use serde_json::{Map, Value};

use crate::error::WebError;
use crate::import::{resolve_url, Adjusted, RawEntry, RawPage, SkipReason};
use crate::json::{
    initiator_object_url, opt_arr, opt_bool, opt_bytes, opt_num, opt_obj, opt_str, parse_iso_ms, req_obj, req_str,
    wrong,
};
use crate::model::{BrowserPriority, HttpProtocol, RenderBlocking};

/// Parses a HAR into pages of raw entries; also returns the number of entries that belong to
/// no page (a `pageref` naming no page when the file has several).
pub fn parse(value: &Value) -> Result<(Vec<RawPage>, usize), WebError> {
    let root = value.as_object().ok_or_else(|| wrong("(top level)", "an object", value))?;
    let log = req_obj(root, "log", "")?;
    let entries = match log.get("entries") {
        None | Some(Value::Null) => {
            return Err(WebError::Field {
                path: "log.entries".into(),
                problem: "missing (expected an array of entries)".into(),
            })
        }
        Some(Value::Array(a)) => a,
        Some(v) => return Err(wrong("log.entries", "an array", v)),
    };
    let mut pages: Vec<RawPage> = Vec::new();
    if let Some(ps) = opt_arr(log, "pages", "log")? {
        for (i, p) in ps.iter().enumerate() {
            let path = format!("log.pages[{i}]");
            let p = p.as_object().ok_or_else(|| wrong(&path, "an object", p))?;
            let id = opt_str(p, "id", &path)?.map(str::to_string).unwrap_or_else(|| format!("page_{}", i + 1));
            let title = opt_str(p, "title", &path)?.unwrap_or("").to_string();
            pages.push(RawPage { id, title, entries: Vec::new(), client_redirect: false });
        }
    }
    let mut loose = 0;
    for (i, e) in entries.iter().enumerate() {
        let path = format!("log.entries[{i}]");
        let obj = e.as_object().ok_or_else(|| wrong(&path, "an object", e))?;
        let (pageref, raw) = entry(obj, &path)?;
        if pages.is_empty() {
            pages.push(RawPage { id: pageref.clone().unwrap_or_else(|| "page_1".into()), ..RawPage::default() });
        }
        let target = match &pageref {
            Some(r) => pages.iter().position(|p| &p.id == r),
            None => None,
        };
        match target {
            Some(t) => pages[t].entries.push(raw),
            None if pages.len() == 1 => pages[0].entries.push(raw),
            None => loose += 1,
        }
    }
    Ok((pages, loose))
}

fn entry(e: &Map<String, Value>, path: &str) -> Result<(Option<String>, RawEntry), WebError> {
    let pageref = opt_str(e, "pageref", path)?.map(str::to_string);
    let req_path = format!("{path}.request");
    let request = req_obj(e, "request", path)?;
    let url = req_str(request, "url", &req_path)?.to_string();
    let method = opt_str(request, "method", &req_path)?.unwrap_or("GET").to_ascii_uppercase();
    let referer = header(request, "referer", &req_path)?;

    let resp_path = format!("{path}.response");
    let response = opt_obj(e, "response", path)?;
    let empty = Map::new();
    let response = response.unwrap_or(&empty);
    let status = opt_num(response, "status", &resp_path)?.unwrap_or(0.0) as i64;
    let content_path = format!("{resp_path}.content");
    let content = opt_obj(response, "content", &resp_path)?.unwrap_or(&empty);
    let mime = opt_str(content, "mimeType", &content_path)?.unwrap_or("").to_string();
    let mut adjusted = Adjusted::default();
    let content_size = opt_bytes(content, "size", &content_path, &mut adjusted)?;
    let transfer = opt_bytes(response, "_transferSize", &resp_path, &mut adjusted)?;
    let bytes_in = opt_bytes(e, "_bytesIn", path, &mut adjusted)?;
    let body_size = opt_bytes(response, "bodySize", &resp_path, &mut adjusted)?;
    let headers_size = opt_bytes(response, "headersSize", &resp_path, &mut adjusted)?;
    let wire_bytes = transfer
        .filter(|b| *b > 0)
        .or(bytes_in.filter(|b| *b > 0))
        .or_else(|| {
            let sum = headers_size.unwrap_or(0).saturating_add(body_size.unwrap_or(0));
            (sum > 0).then_some(sum)
        })
        .or(content_size);

    // Sizes a cache hit fetched for a cold load (`RawEntry::content_length`); a value that is
    // not a byte count leaves the decoded size to stand in, counted by the import.
    let content_length = header(response, "content-length", &resp_path)?.and_then(|v| v.trim().parse::<u64>().ok());
    let from_cache = opt_bool(response, "fromDiskCache", &resp_path)?.unwrap_or(false)
        || opt_bool(response, "fromMemoryCache", &resp_path)?.unwrap_or(false)
        || opt_bool(e, "_fromCache", path)?.unwrap_or(false)
        || opt_bool(e, "_was_cached", path)?.unwrap_or(false);
    // DevTools writes cache hits as a 2xx with nothing transferred.
    let nothing_on_wire = transfer == Some(0)
        || (transfer.is_none() && bytes_in.is_none() && body_size == Some(0) && content_size.unwrap_or(0) > 0);
    // A resource preloaded on an Early Hints (103) response (RFC 8297) was fetched over the
    // network, though Chrome reports it as served from its preload cache.
    let early_hints = opt_bool(response, "fromEarlyHints", &resp_path)?.unwrap_or(false)
        || opt_bool(response, "_fromEarlyHints", &resp_path)?.unwrap_or(false)
        || opt_bool(e, "_fromEarlyHints", path)?.unwrap_or(false);
    let cache_hit = (200..300).contains(&status) && status != 204 && (from_cache || nothing_on_wire) && !early_hints;

    let redirect = opt_str(response, "redirectURL", &resp_path)?.filter(|s| !s.is_empty()).map(str::to_string);
    let redirect = match redirect {
        Some(r) => Some(r),
        None if (300..400).contains(&status) && status != 304 => header(response, "location", &resp_path)?,
        None => None,
    }
    .filter(|_| (300..400).contains(&status) && status != 304)
    .map(|r| resolve_url(&url, &r));

    let priority =
        opt_str(e, "_priority", path)?
            .and_then(BrowserPriority::parse)
            .or(opt_str(e, "_initialPriority", path)?.and_then(BrowserPriority::parse));
    let render_blocking = opt_str(e, "_renderBlocking", path)?.and_then(RenderBlocking::parse);
    let resource_type = opt_str(e, "_resourceType", path)?.map(str::to_string);

    let mut initiator_url = match e.get("_initiator") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Object(o)) => initiator_object_url(o),
        Some(Value::String(_)) | Some(Value::Null) | None => None,
        Some(v) => return Err(wrong(&format!("{path}._initiator"), "a string or an object", v)),
    };
    if initiator_url.is_none() {
        initiator_url = match e.get("_initiator_detail") {
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(o)) => initiator_object_url(&o),
                _ => None,
            },
            Some(Value::Object(o)) => initiator_object_url(o),
            _ => None,
        };
    }

    let initiator_type =
        opt_str(e, "_initiator_type", path)?.map(str::to_string).or_else(|| match e.get("_initiator") {
            Some(Value::Object(o)) => o.get("type").and_then(Value::as_str).map(str::to_string),
            _ => match e.get("_initiator_detail") {
                Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                    .ok()
                    .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string)),
                Some(Value::Object(o)) => o.get("type").and_then(Value::as_str).map(str::to_string),
                _ => None,
            },
        });

    let started = opt_str(e, "startedDateTime", path)?;
    let start_ms = match started {
        Some(s) => parse_iso_ms(s).ok_or_else(|| WebError::Field {
            path: format!("{path}.startedDateTime"),
            problem: format!("expected an ISO 8601 date-time, found {s:?}"),
        })?,
        None => 0.0,
    };
    // Checked (negative, non-finite, over a day: counted) by import::build_page.
    let duration_ms = opt_num(e, "time", path)?.unwrap_or(0.0);

    let protocol =
        opt_str(e, "_protocol", path)?
            .and_then(HttpProtocol::parse)
            .or(opt_str(response, "httpVersion", &resp_path)?.and_then(HttpProtocol::parse));
    let connection_id = match e.get("connection") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(connection_number(s.trim())),
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    };
    // HAR 1.2 timings: -1 (or absent) means "does not apply"; `connect` includes `ssl`.
    let tpath = format!("{path}.timings");
    let timings = opt_obj(e, "timings", path)?;
    let timing = |name: &str| -> Result<Option<f64>, WebError> {
        Ok(match timings {
            Some(t) => opt_num(t, name, &tpath)?.filter(|v| v.is_finite() && *v >= 0.0),
            None => None,
        })
    };
    let (blocked, dns, connect, send, wait) =
        (timing("blocked")?, timing("dns")?, timing("connect")?, timing("send")?, timing("wait")?);
    let response_start_ms = match (started, wait) {
        (Some(_), Some(w)) => Some(
            start_ms + blocked.unwrap_or(0.0) + dns.unwrap_or(0.0) + connect.unwrap_or(0.0) + send.unwrap_or(0.0) + w,
        ),
        _ => None,
    };

    let raw = RawEntry {
        url,
        method,
        status,
        mime,
        resource_type,
        wire_bytes,
        body_bytes: content_size,
        content_length,
        priority,
        render_blocking,
        initiator_url,
        referer,
        redirect_to: redirect,
        start_ms,
        duration_ms,
        skip: if cache_hit { Some(SkipReason::CacheHit) } else { None },
        adjusted,
        connection_id,
        protocol,
        server_wait_ms: wait.unwrap_or(0.0),
        connect_ms: connect.unwrap_or(0.0),
        tls_ms: timing("ssl")?.unwrap_or(0.0),
        dns_ms: dns.unwrap_or(0.0),
        stall_ms: blocked.unwrap_or(0.0),
        response_start_ms,
        navigation: false,
        initiator_type,
        subframe: false,
        proxy_timing: false,
    };
    Ok((pageref, raw))
}

/// A header's value (case-insensitive name) from a HAR `headers` array.
fn header(obj: &Map<String, Value>, name: &str, path: &str) -> Result<Option<String>, WebError> {
    let Some(headers) = opt_arr(obj, "headers", path)? else {
        return Ok(None);
    };
    for (i, h) in headers.iter().enumerate() {
        let hp = format!("{path}.headers[{i}]");
        let h = h.as_object().ok_or_else(|| wrong(&hp, "an object", h))?;
        if opt_str(h, "name", &hp)?.is_some_and(|n| n.eq_ignore_ascii_case(name)) {
            return Ok(opt_str(h, "value", &hp)?.map(str::to_string));
        }
    }
    Ok(None)
}

/// A HAR `connection` value as a number: a string of digits (Chrome, WebPageTest) is that
/// number; any other string (an address and port, a hex id) its 64-bit FNV-1a hash, stable
/// across runs and platforms.
fn connection_number(s: &str) -> u64 {
    if let Ok(n) = s.parse::<u64>() {
        return n;
    }
    s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
