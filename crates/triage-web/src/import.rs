//! Import of recorded page loads: HAR 1.2 ([`crate::har`]) and Chrome DevTools protocol logs
//! ([`crate::devtools`]), into a [`Page`]; a transfer sequence ([`crate::sequence`]) is
//! recognised too and read in file order.
//!
//! Both parsers reduce their input to [`RawEntry`] records grouped by page; [`build_page`] then
//! turns the chosen page's entries into objects:
//!
//! - A subresource's redirect hop is an object of its own ([`WebObject::redirect`]): a small
//!   response whose arrival lets its target, its child, be requested.
//! - Entries that are not a network fetch of a page object are skipped and counted by
//!   [`SkipReason`]: the navigation's redirects (before the root), `data:` and other non-HTTP URLs, 304s,
//!   failed or unfinished requests, CORS preflights, and entries of other pages.
//! - Cache hits stay in the page as zero-network objects ([`WebObject::from_cache`],
//!   `wire_bytes` 0): they still discover their children and hold paint back, at no network
//!   cost. [`ImportOptions::keep_cache_hits`] fetches them instead, sized by their content
//!   (a cold load). A response from an Early Hints preload is a network fetch.
//! - The root is the navigation's document: the DevTools log's main-frame `Document` request
//!   that started the page, or in a HAR the earliest HTML document (or redirect), followed
//!   through its redirects. When that document has no usable response (failed, unfinished)
//!   the import fails rather than promote another object to root; a file with no HTML
//!   document and no redirect at all (a capture of one image or API call) is rooted at its
//!   first usable entry.
//! - Each object's discovery parent is the object at its initiator URL (`_initiator`,
//!   `_initiator_detail`, DevTools `initiator.url` or the top stack frame), else at its
//!   `Referer`; a redirect source stands for its target and a skipped entry for its own parent;
//!   an initiator that is unknown, or not requested earlier, falls back to the root.
//! - Bytes on the wire: `_transferSize` / `encodedDataLength`, else `_bytesIn`, else
//!   `headersSize + bodySize`, else the content size (-1 means unknown throughout).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::classify::{self, ContentCategory, Essentialness};
use crate::content;
use crate::error::{FileError, WebError};
use crate::model::{
    BrowserPriority, ContentType, FetchPriority, HttpProtocol, ObjectId, Page, RenderBlocking, WebObject,
};
use crate::qoe::{Deliveries, Delivery};
use crate::urlparts;

/// Why an entry of the file did not become a page object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A 3xx response; its target is a separate entry.
    Redirect,
    /// A `data:` URL (inline, no network fetch).
    DataUrl,
    /// Another non-HTTP URL (`blob:`, `about:`, `chrome-extension:` ...).
    NonHttpUrl,
    /// Served from the browser's cache (no bytes on the wire). Parsers mark entries with it;
    /// the import keeps them as zero-network objects, so it is no longer counted as skipped.
    CacheHit,
    /// 304 Not Modified (a revalidation of a cached object).
    NotModified,
    /// No response: network error, cancelled, or status 0.
    Failed,
    /// A request with no end in the log (DevTools logs).
    Unfinished,
    /// A CORS preflight (`OPTIONS`).
    CorsPreflight,
    /// Belongs to another page in the same file.
    OtherPage,
    /// Its start time is not a usable time (not finite, or more than
    /// [`MAX_TIMESTAMP_MS`] from the epoch or the log's clock origin).
    InvalidTime,
}

/// Largest object size an import keeps: 1 TiB. Larger sizes (a HAR `size` of 1e300) are
/// clamped to it and counted ([`Adjustment::SizeClamped`]); sums over a page's objects then
/// cannot overflow. Simulating or exporting such an object is refused later with the limit
/// of that use (4 GiB per message or file).
pub const MAX_OBJECT_BYTES: u64 = 1 << 40;
/// Largest request duration an import keeps: one day, in ms.
pub const MAX_DURATION_MS: f64 = 86_400_000.0;
/// Largest start time an import accepts, in ms (year 2286 on the epoch clock; DevTools
/// timestamps count from boot and are far smaller).
pub const MAX_TIMESTAMP_MS: f64 = 1e13;

/// A value of the file the import changed or ignored, counted in [`Import::adjusted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjustment {
    /// A size above [`MAX_OBJECT_BYTES`] (or infinite), clamped to it.
    SizeClamped,
    /// A negative size other than -1 (the formats' "unknown"), read as unknown.
    SizeNegative,
    /// A request duration over [`MAX_DURATION_MS`], clamped to it.
    TimeClamped,
    /// A negative or non-finite request duration, read as 0.
    TimeInvalid,
    /// A cache hit fetched for a cold load ([`ImportOptions::keep_cache_hits`]) with no
    /// `Content-Length` to size it: sized by its decoded content, which overstates a
    /// compressed response.
    ColdSizeDecoded,
}

impl Adjustment {
    /// Snake-case name, as in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Adjustment::SizeClamped => "size_clamped",
            Adjustment::SizeNegative => "size_negative",
            Adjustment::TimeClamped => "time_clamped",
            Adjustment::TimeInvalid => "time_invalid",
            Adjustment::ColdSizeDecoded => "cold_size_decoded",
        }
    }

    /// What the import did, for reports.
    pub fn what(self) -> &'static str {
        match self {
            Adjustment::SizeClamped => "sizes above 1 TiB clamped to 1 TiB",
            Adjustment::SizeNegative => "negative sizes read as unknown",
            Adjustment::TimeClamped => "durations over a day clamped to a day",
            Adjustment::TimeInvalid => "negative or non-finite durations read as 0",
            Adjustment::ColdSizeDecoded => {
                "cache hits fetched for a cold load with no Content-Length, sized by their decoded \
                 content (more than a compressed response sends)"
            }
        }
    }
}

impl fmt::Display for Adjustment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Values of one entry a parser could not take as they were (see [`Adjustment`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Adjusted {
    /// Negative sizes other than -1.
    pub size_negative: u32,
}

impl SkipReason {
    /// Snake-case name, as in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Redirect => "redirect",
            SkipReason::DataUrl => "data_url",
            SkipReason::NonHttpUrl => "non_http_url",
            SkipReason::CacheHit => "cache_hit",
            SkipReason::NotModified => "not_modified",
            SkipReason::Failed => "failed",
            SkipReason::Unfinished => "unfinished",
            SkipReason::CorsPreflight => "cors_preflight",
            SkipReason::OtherPage => "other_page",
            SkipReason::InvalidTime => "invalid_time",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The input format an import read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// HAR 1.2 (DevTools, chrome-har/browsertime, WebPageTest).
    Har,
    /// Chrome DevTools protocol log: a JSON array of `{method, params}` (Lighthouse).
    DevtoolsLog,
    /// Chrome performance log: entries wrapping `{message: {method, params}}`, possibly as
    /// JSON strings (Selenium/ChromeDriver).
    PerfLog,
    /// The thesis's `transfer_sequence.json` ([`crate::sequence`]): one page, in file order.
    TransferSequence,
}

/// Import settings.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Page to import (a HAR page id such as `page_1`, or for DevTools logs `page_N` in
    /// navigation order); `None` picks the first page with a usable entry.
    pub page: Option<String>,
    /// Simulate the recording's cache hits as misses: fetch them over the network, sized by
    /// their content (a cold load). Off, they are zero-network objects
    /// ([`WebObject::from_cache`]).
    pub keep_cache_hits: bool,
}

/// One page found in a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageSummary {
    /// Id (`--page`).
    pub id: String,
    /// Title or URL.
    pub title: String,
    /// Number of entries.
    pub entries: usize,
}

/// A format-neutral request record, what the parsers produce.
#[derive(Debug, Clone, Default)]
pub struct RawEntry {
    /// Request URL.
    pub url: String,
    /// HTTP method (upper case); empty if unknown.
    pub method: String,
    /// Response status; 0 if none.
    pub status: i64,
    /// MIME type.
    pub mime: String,
    /// Browser resource type (`script`, `image`, ...).
    pub resource_type: Option<String>,
    /// Bytes on the wire, if known.
    pub wire_bytes: Option<u64>,
    /// Decoded body size, if known.
    pub body_bytes: Option<u64>,
    /// The response's `Content-Length` header: the body as the server sent it (compressed,
    /// when it was). A cache hit moved no bytes, so this is what sizes it when a cold load
    /// fetches it ([`ImportOptions::keep_cache_hits`]); its decoded size overstates a
    /// compressed response (a 30 KB gzip document that decodes to 186 KB).
    pub content_length: Option<u64>,
    /// Browser priority.
    pub priority: Option<BrowserPriority>,
    /// Render-blocking status.
    pub render_blocking: Option<RenderBlocking>,
    /// Initiator URL.
    pub initiator_url: Option<String>,
    /// Referer header.
    pub referer: Option<String>,
    /// Redirect target (absolute) for a redirect.
    pub redirect_to: Option<String>,
    /// Request start, ms on the file's clock.
    pub start_ms: f64,
    /// Duration in ms (0 if unknown).
    pub duration_ms: f64,
    /// Recorded connection id (see [`WebObject::connection_id`]).
    pub connection_id: Option<u64>,
    /// HTTP version of the response.
    pub protocol: Option<HttpProtocol>,
    /// Server wait in ms (0 if unknown).
    pub server_wait_ms: f64,
    /// Connection setup (TCP + TLS) in ms (0 if none).
    pub connect_ms: f64,
    /// The TLS part of `connect_ms` in ms (0 if unknown).
    pub tls_ms: f64,
    /// DNS lookup in ms (0 if none).
    pub dns_ms: f64,
    /// Time the browser held the request before its DNS lookup, connection or send began,
    /// in ms (0 if none or unknown).
    pub stall_ms: f64,
    /// When the response's first byte arrived, ms on the file's clock, if known.
    pub response_start_ms: Option<f64>,
    /// A reason decided by the parser (failed, cache hit, unfinished, preflight).
    pub skip: Option<SkipReason>,
    /// Values the parser could not take as they were.
    pub adjusted: Adjusted,
    /// How the request was initiated (`parser`, `script`, `preload`, `other`, ...), DevTools
    /// `initiator.type`, HAR `_initiator_type` or the `_initiator` object's `type`.
    pub initiator_type: Option<String>,
    /// The request was made by a frame other than the page's main frame (an iframe).
    pub subframe: bool,
    /// The request that started the page's navigation (DevTools: the main frame's first
    /// `Document` request of the page); HAR entries leave it false.
    pub navigation: bool,
    /// The connection, wait and first-byte times and the byte count are a fetching proxy's
    /// view of the origin (Lightrider's `X-TCPMs` ... headers), not the browser's.
    pub proxy_timing: bool,
}

/// Entries of one page, from a parser.
#[derive(Debug, Clone, Default)]
pub struct RawPage {
    /// Page id.
    pub id: String,
    /// The page's navigation was started by the previous page's document (a script, or a
    /// `<meta>`/`Refresh` header refresh): a client-side redirect (DevTools logs).
    pub client_redirect: bool,
    /// Title or URL.
    pub title: String,
    /// Entries in file order.
    pub entries: Vec<RawEntry>,
}

/// The result of importing a file.
#[derive(Debug, Clone)]
pub struct Import {
    /// Input format.
    pub format: SourceFormat,
    /// The chosen page.
    pub page: Page,
    /// Its id.
    pub page_id: String,
    /// All pages in the file.
    pub pages: Vec<PageSummary>,
    /// Entries in the file (all pages, plus entries that belong to no page).
    pub entries_total: usize,
    /// Entries not used, by reason.
    pub skipped: BTreeMap<SkipReason, usize>,
    /// Values of the chosen page's entries that were clamped or ignored, by kind.
    pub adjusted: BTreeMap<Adjustment, usize>,
    /// Objects the recording served from the browser's cache, kept as zero-network objects
    /// (0 with [`ImportOptions::keep_cache_hits`], which fetches them).
    pub cache_hits: usize,
    /// Cache hits fetched over the network instead, with [`ImportOptions::keep_cache_hits`]
    /// (a cold load), each sized by its `Content-Length` or else by its decoded content
    /// ([`Adjustment::ColdSizeDecoded`]).
    pub cache_hits_fetched: usize,
    /// Redirect hops of subresources kept as objects ([`WebObject::redirect`]); the
    /// navigation's own hops are not objects, are counted as `redirect`, and are kept as
    /// [`Page::navigation_redirects`] (round trips the load pays before its root).
    pub redirect_hops: usize,
    /// Client-side redirects before the page: pages whose document only sent the browser on
    /// to the next (their documents are kept as [`Page::navigation_redirects`] with a
    /// [`NavigationHop::client_delay_ns`](crate::model::NavigationHop::client_delay_ns)).
    pub client_redirects: usize,
    /// Requests of the chosen page whose network timing and size came from a fetching
    /// proxy's headers (Lightrider's `X-TCPMs`, `X-TotalFetchedSize` ...: see
    /// [`RawEntry::proxy_timing`]) because the browser behind it saw each response arrive whole.
    pub proxy_timed: usize,
}

impl Import {
    /// The recorded request and completion time of every object (ns after the page's first
    /// request): feed to [`crate::qoe::estimate`] for the recorded load's QoE.
    pub fn recorded_deliveries(&self) -> Deliveries {
        self.page
            .objects()
            .iter()
            .map(|o| {
                (
                    o.id,
                    Delivery {
                        request_ns: o.recorded_start_ns,
                        complete_ns: o.recorded_start_ns.saturating_add(o.recorded_duration_ns),
                    },
                )
            })
            .collect()
    }

    /// Number of skipped entries.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }

    /// One line on the values the import clamped or ignored (`None` when there were none):
    /// `2 values adjusted: 1 size_clamped (sizes above 1 TiB clamped to 1 TiB), ...`.
    pub fn adjusted_summary(&self) -> Option<String> {
        adjusted_summary(&self.adjusted)
    }

    /// One line on the recording's cache hits, if it has any (see [`cache_summary`]).
    pub fn cache_summary(&self) -> Option<String> {
        cache_summary(&self.page, self.cache_hits_fetched)
    }
}

/// Imports a HAR or DevTools log from its text, detecting the format.
pub fn import_str(text: &str, opts: &ImportOptions) -> Result<Import, WebError> {
    let value: Value = serde_json::from_str(text).map_err(|e| WebError::Json(e.to_string()))?;
    import_value(&value, opts)
}

/// Imports an already parsed JSON value.
pub fn import_value(value: &Value, opts: &ImportOptions) -> Result<Import, WebError> {
    if crate::sequence::looks_like(value) {
        return import_sequence(value, opts);
    }
    let (format, pages, loose) = match value {
        Value::Object(o) if o.contains_key("log") => {
            let (pages, loose) = crate::har::parse(value)?;
            (SourceFormat::Har, pages, loose)
        }
        Value::Array(_) | Value::Object(_) => {
            let (format, pages, loose) = crate::devtools::parse(value)?;
            (format, pages, loose)
        }
        _ => {
            return Err(WebError::Format(
                "neither a HAR (an object with `log.entries`) nor a DevTools log (an array of events)".into(),
            ))
        }
    };
    choose(format, pages, loose, opts)
}

/// The page id a transfer sequence gets (it holds one page).
const SEQUENCE_PAGE: &str = "transfer_sequence";

fn import_sequence(value: &Value, opts: &ImportOptions) -> Result<Import, WebError> {
    if let Some(wanted) = opts.page.as_ref().filter(|p| p.as_str() != SEQUENCE_PAGE) {
        return Err(WebError::NoSuchPage { wanted: wanted.clone(), available: SEQUENCE_PAGE.into() });
    }
    let page = crate::sequence::parse_value(value, "transfer_sequence.json")?;
    let n = page.len();
    Ok(Import {
        format: SourceFormat::TransferSequence,
        pages: vec![PageSummary { id: SEQUENCE_PAGE.into(), title: page.name().to_string(), entries: n }],
        page,
        page_id: SEQUENCE_PAGE.into(),
        entries_total: n,
        skipped: BTreeMap::new(),
        adjusted: BTreeMap::new(),
        cache_hits: 0,
        cache_hits_fetched: 0,
        client_redirects: 0,
        redirect_hops: 0,
        proxy_timed: 0,
    })
}

/// Reads and imports a file; errors name the file.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Import, FileError> {
    let file = path.display().to_string();
    let text = std::fs::read(path).map_err(|e| FileError { file: file.clone(), error: WebError::Io(e.to_string()) })?;
    let text = String::from_utf8_lossy(&text);
    import_str(&text, opts).map_err(|error| FileError { file, error })
}

fn choose(format: SourceFormat, pages: Vec<RawPage>, loose: usize, opts: &ImportOptions) -> Result<Import, WebError> {
    let entries_total = pages.iter().map(|p| p.entries.len()).sum::<usize>() + loose;
    if entries_total == 0 {
        return Err(WebError::NoEntries(match format {
            SourceFormat::Har => "no entries: `log.entries` is empty".into(),
            _ => "no requests: the log has no `Network.requestWillBeSent` event".into(),
        }));
    }
    let summaries: Vec<PageSummary> = pages
        .iter()
        .map(|p| PageSummary { id: p.id.clone(), title: p.title.clone(), entries: p.entries.len() })
        .collect();
    let index = match &opts.page {
        Some(wanted) => pages.iter().position(|p| &p.id == wanted).ok_or_else(|| WebError::NoSuchPage {
            wanted: wanted.clone(),
            available: if summaries.is_empty() {
                "none".into()
            } else {
                summaries.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", ")
            },
        })?,
        None => {
            let first = pages
                .iter()
                .position(|p| navigation_entry(&p.entries).is_some_and(|i| classify_skip(&p.entries[i]).is_none()))
                .or_else(|| {
                    pages.iter().position(|p| {
                        navigation_entry(&p.entries).is_none() && p.entries.iter().any(|e| classify_skip(e).is_none())
                    })
                })
                .unwrap_or(0);
            // A client-side redirect's target is the page the user sees.
            let mut i = first;
            while pages.get(i + 1).is_some_and(|p| p.client_redirect) {
                i += 1;
            }
            i
        }
    };
    // The pages whose documents redirected (client-side) to the chosen one, in order.
    let mut before = index;
    while before > 0 && pages[before].client_redirect {
        before -= 1;
    }
    let interstitials = before..index;
    let Some(chosen) = pages.get(index) else {
        return Err(WebError::NoEntries(format!("{entries_total} events but no page: no main-frame document request")));
    };
    let mut skipped = BTreeMap::new();
    let mut others = entries_total - chosen.entries.len();
    // Each interstitial's document is a navigation hop, counted as a redirect.
    let interstitial_docs = interstitials.clone().filter(|&k| navigation_entry(&pages[k].entries).is_some()).count();
    others -= interstitial_docs;
    if interstitial_docs > 0 {
        skipped.insert(SkipReason::Redirect, interstitial_docs);
    }
    if others > 0 {
        skipped.insert(SkipReason::OtherPage, others);
    }
    let mut adjusted = BTreeMap::new();
    let mut cache_hits_fetched = 0;
    let page = build_page(
        &chosen.title,
        &chosen.entries,
        opts.keep_cache_hits,
        &mut skipped,
        &mut adjusted,
        &mut cache_hits_fetched,
    )
    .map_err(|e| match e {
        WebError::NoEntries(m) => WebError::NoEntries(format!("page {}: {m}", chosen.id)),
        e => e,
    })?;
    let mut page = page;
    let client_redirects = interstitials.len();
    if client_redirects > 0 {
        let next_start = |k: usize| {
            let chain = navigation_chain(&pages[k].entries);
            chain.first().map(|&i| pages[k].entries[i].start_ms)
        };
        let root_start = next_start(index).unwrap_or(0.0);
        let mut hops = Vec::new();
        for k in interstitials {
            let entries = &pages[k].entries;
            let chain = navigation_chain(entries);
            for (n, &i) in chain.iter().enumerate() {
                let e = &entries[i];
                let last = n + 1 == chain.len();
                // The document's first byte (else its end) to the next navigation's request.
                let client_delay_ns = if last {
                    let first_byte = e.response_start_ms.unwrap_or(e.start_ms + e.duration_ms);
                    next_start(k + 1).map_or(0, |t| ms_to_ns((t - first_byte).min(MAX_DURATION_MS)))
                } else {
                    0
                };
                hops.push(navigation_hop(e, root_start, client_delay_ns));
            }
        }
        hops.extend(page.navigation_redirects().iter().cloned());
        page.set_navigation_redirects(hops);
    }
    let cache_hits = page.objects().iter().filter(|o| o.from_cache).count();
    let redirect_hops = page.objects().iter().filter(|o| o.redirect).count();
    Ok(Import {
        format,
        page,
        page_id: chosen.id.clone(),
        pages: summaries,
        entries_total,
        skipped,
        adjusted,
        cache_hits,
        cache_hits_fetched,
        redirect_hops,
        client_redirects,
        proxy_timed: chosen.entries.iter().filter(|e| e.proxy_timing && e.skip.is_none()).count(),
    })
}

/// See [`Import::adjusted_summary`].
pub fn adjusted_summary(adjusted: &BTreeMap<Adjustment, usize>) -> Option<String> {
    if adjusted.is_empty() {
        return None;
    }
    let total: usize = adjusted.values().sum();
    let cells: Vec<String> = adjusted.iter().map(|(a, n)| format!("{n} {a} ({})", a.what())).collect();
    Some(format!("{total} value{} adjusted: {}", if total == 1 { "" } else { "s" }, cells.join(", ")))
}

/// One line on a page's cache hits, if the recording has any: how many objects the browser
/// served from its cache (kept with no bytes on the network, the document among them when it was: a
/// warm load, whose simulated paints are not a first visit's), or, when `fetched` (cache
/// hits loaded over the network with [`ImportOptions::keep_cache_hits`]), how many.
pub fn cache_summary(page: &Page, fetched: usize) -> Option<String> {
    let cached = page.objects().iter().filter(|o| o.from_cache).count();
    if fetched > 0 {
        return Some(format!(
            "{fetched} of {} objects were served from the browser's cache in the recording; loaded over the \
             network here (a cold load), sized by their Content-Length where the recording has it",
            page.len()
        ));
    }
    if cached == 0 {
        return None;
    }
    let root = page.objects().first().is_some_and(|o| o.from_cache);
    Some(format!(
        "{cached} of {} objects were served from the browser's cache in the recording{}: no bytes on \
         the network here; keep_cache_hits (--keep-cache-hits) loads them over the network, as a first visit would",
        page.len(),
        if root { ", the document among them (a warm load)" } else { "" }
    ))
}

/// The reason an entry is skipped, if any.
fn classify_skip(e: &RawEntry) -> Option<SkipReason> {
    if !(e.start_ms.is_finite() && e.start_ms.abs() <= MAX_TIMESTAMP_MS) {
        return Some(SkipReason::InvalidTime);
    }
    let scheme = urlparts::scheme(&e.url);
    if scheme == "data" {
        return Some(SkipReason::DataUrl);
    }
    if scheme != "http" && scheme != "https" {
        return Some(SkipReason::NonHttpUrl);
    }
    if e.method.eq_ignore_ascii_case("OPTIONS") {
        return Some(SkipReason::CorsPreflight);
    }
    match e.skip {
        Some(SkipReason::CacheHit) => {}
        Some(r) => return Some(r),
        None => {}
    }
    if is_redirect(e) {
        return Some(SkipReason::Redirect);
    }
    if e.status == 304 {
        return Some(SkipReason::NotModified);
    }
    if e.status <= 0 {
        return Some(SkipReason::Failed);
    }
    None
}

/// The entry of the navigation's document: the DevTools entry flagged as the navigation,
/// else the earliest entry (by start time, ties in file order) that is an HTML document or
/// a redirect, then followed through its redirects (each hop to the earliest entry of its
/// target URL starting no earlier). `None` if there is no candidate.
fn navigation_entry(entries: &[RawEntry]) -> Option<usize> {
    navigation_chain(entries).last().copied()
}

/// The navigation's entries: its first request, then each redirect hop's target, ending at
/// the document (see [`navigation_entry`]). Empty if there is no candidate.
fn navigation_chain(entries: &[RawEntry]) -> Vec<usize> {
    let is_doc = |e: &RawEntry| {
        let scheme = urlparts::scheme(&e.url);
        (scheme == "http" || scheme == "https")
            && !e.method.eq_ignore_ascii_case("OPTIONS")
            && (is_redirect(e) || content::detect(&e.mime, e.resource_type.as_deref(), &e.url) == ContentType::Html)
    };
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| entries[a].start_ms.total_cmp(&entries[b].start_ms));
    let mut at = match entries.iter().position(|e| e.navigation) {
        Some(i) => i,
        None => match order.iter().copied().find(|&i| is_doc(&entries[i])) {
            Some(i) => i,
            None => return Vec::new(),
        },
    };
    let mut chain = vec![at];
    for _ in 0..32 {
        let Some(target) = entries[at].redirect_to.as_deref().filter(|t| *t != entries[at].url) else { break };
        let start = entries[at].start_ms;
        match order.iter().copied().find(|&i| entries[i].url == target && entries[i].start_ms >= start && i != at) {
            Some(next) if !chain.contains(&next) => {
                at = next;
                chain.push(at);
            }
            _ => break,
        }
    }
    chain
}

/// Content type of an entry's object. An HTTP error response (4xx, 5xx) carries an error
/// page whose MIME type (usually `text/html`) says nothing about what was requested: its type
/// comes from the request's resource type, then the URL's extension, else `Other`, and it is
/// never an HTML document unless it is the navigation (`is_root`).
fn entry_kind(e: &RawEntry, is_root: bool) -> ContentType {
    if e.status < 400 || is_root {
        return content::detect(&e.mime, e.resource_type.as_deref(), &e.url);
    }
    e.resource_type
        .as_deref()
        .and_then(content::from_resource_type)
        .or_else(|| content::from_extension(&e.url))
        .filter(|k| *k != ContentType::Html)
        .unwrap_or(ContentType::Other)
}

/// Whether an object blocks the first paint, by the rule of Lighthouse's Lantern FCP graph
/// (`lantern/metrics/FirstContentfulPaint.js`, optimistic graph: a network node counts when
/// `hasRenderBlockingPriority()` and its initiator is not a script;
/// `lantern/graph/NetworkNode.js`: priority VeryHigh, or High for a script or document):
///
/// - a stylesheet at `VeryHigh`, a script at `High`/`VeryHigh`, is `Blocking`; with no
///   recorded priority, a stylesheet the root document found (unless recorded non-blocking)
///   and a script the root found that the recording marks blocking;
/// - unless a script inserted it (`initiator.type == "script"`) or it is in an iframe;
/// - everything else (`Medium` in-body scripts, print stylesheets, images, fonts, XHRs) does
///   not block. A recorded `non_blocking` (HAR `_renderBlocking`) is kept; a recorded
///   `blocking`/`in_body_parser_blocking` only where the rule above agrees.
fn render_blocking(e: &RawEntry, kind: ContentType, in_subframe: bool, from_root: bool) -> RenderBlocking {
    use BrowserPriority as P;
    if e.render_blocking == Some(RenderBlocking::NonBlocking)
        || in_subframe
        || e.initiator_type.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("script"))
    {
        return RenderBlocking::NonBlocking;
    }
    let recorded_blocking = e.render_blocking.is_some_and(RenderBlocking::blocks_first_paint);
    let blocking = match (kind, e.priority) {
        (ContentType::Css, Some(P::VeryHigh)) => true,
        (ContentType::Css, None) => from_root && (e.render_blocking.is_none() || recorded_blocking),
        (ContentType::Js, Some(P::High | P::VeryHigh)) => true,
        (ContentType::Js, None) => from_root && recorded_blocking,
        _ => false,
    };
    if blocking {
        RenderBlocking::Blocking
    } else {
        RenderBlocking::NonBlocking
    }
}

/// Content type of a redirect hop: what was requested (resource type, else the URL's
/// extension, else the type of the entry at its target URL), never HTML unless the resource
/// type says a document was requested.
fn hop_kind(e: &RawEntry, entries: &[RawEntry]) -> ContentType {
    e.resource_type
        .as_deref()
        .and_then(content::from_resource_type)
        .or_else(|| content::from_extension(&e.url).filter(|k| *k != ContentType::Html))
        .or_else(|| {
            let target = e.redirect_to.as_deref()?;
            let t = entries.iter().find(|x| x.url == target && !is_redirect(x))?;
            Some(entry_kind(t, false)).filter(|k| *k != ContentType::Html)
        })
        .unwrap_or(ContentType::Other)
}

/// True for a redirect response (3xx with a target, or a redirect status).
fn is_redirect(e: &RawEntry) -> bool {
    e.redirect_to.is_some() || matches!(e.status, 301 | 302 | 303 | 307 | 308)
}

/// Resolves a possibly relative URL (`//host/x`, `/x`, `x`) against a base URL.
pub fn resolve_url(base: &str, target: &str) -> String {
    let t = target.trim();
    if !urlparts::scheme(t).is_empty() && t.contains(':') && !t.starts_with('/') {
        // A bare origin (`http://host`) is the URL of its `/`, as browsers request it.
        if let Some(i) = t.find("://") {
            if !t[i + 3..].contains(['/', '?', '#']) {
                return format!("{t}/");
            }
        }
        return t.to_string();
    }
    if let Some(rest) = t.strip_prefix("//") {
        return format!("{}://{rest}", urlparts::scheme(base));
    }
    let origin = urlparts::origin(base);
    if t.starts_with('/') {
        return format!("{origin}{t}");
    }
    let path = urlparts::path(base);
    let dir = &path[..path.rfind('/').map(|i| i + 1).unwrap_or(0)];
    format!("{origin}{dir}{t}")
}

/// A navigation hop from its recorded entry: `root_start_ms` is the root document's request
/// on the file's clock; `client_delay_ns` is 0 for an HTTP redirect.
fn navigation_hop(e: &RawEntry, root_start_ms: f64, client_delay_ns: u64) -> crate::model::NavigationHop {
    crate::model::NavigationHop {
        url: e.url.clone(),
        recorded_before_root_ns: ms_to_ns(root_start_ms - e.start_ms),
        server_wait_ns: ms_to_ns(e.server_wait_ms),
        recorded_dns_ns: ms_to_ns(e.dns_ms),
        recorded_connect_ns: ms_to_ns(e.connect_ms),
        recorded_tls_ns: ms_to_ns(e.tls_ms.min(e.connect_ms)),
        client_delay_ns,
    }
}

fn ms_to_ns(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        (ms * 1e6).round().min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// Builds a classified page from one page's entries, counting skipped entries into `skipped`
/// and values clamped or ignored into `adjusted` (sizes above [`MAX_OBJECT_BYTES`],
/// durations negative, non-finite or above [`MAX_DURATION_MS`], and what the parser saw).
pub fn build_page(
    name: &str,
    entries: &[RawEntry],
    keep_cache_hits: bool,
    skipped: &mut BTreeMap<SkipReason, usize>,
    adjusted: &mut BTreeMap<Adjustment, usize>,
    cache_hits_fetched: &mut usize,
) -> Result<Page, WebError> {
    let mut count = |a: Adjustment, n: usize| {
        if n > 0 {
            *adjusted.entry(a).or_insert(0) += n;
        }
    };
    for e in entries {
        count(Adjustment::SizeNegative, e.adjusted.size_negative as usize);
    }
    // Time order (stable for ties), as the browser issued the requests.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| entries[a].start_ms.total_cmp(&entries[b].start_ms));
    let reasons: Vec<Option<SkipReason>> = entries.iter().map(classify_skip).collect();
    // With no navigation document at all (a capture of a single image or API call), the
    // first usable entry is the root: there is no other document it could displace.
    let nav = navigation_entry(entries);
    let root_entry = match nav {
        Some(i) => Some(i).filter(|&i| reasons[i].is_none()),
        None => order.iter().copied().find(|&i| reasons[i].is_none()),
    };
    let Some(root_entry) = root_entry else {
        for r in reasons.iter().flatten() {
            *skipped.entry(*r).or_insert(0) += 1;
        }
        let why = skipped.iter().map(|(r, n)| format!("{n} {r}")).collect::<Vec<_>>().join(", ");
        return Err(WebError::NoEntries(match nav {
            Some(i) => format!(
                "the navigation's document {} was not loaded ({}); {} entries, skipped: {why}",
                entries[i].url,
                reasons[i].map_or("no response", SkipReason::name),
                entries.len()
            ),
            None => format!("no usable entry: all {} skipped ({why})", entries.len()),
        }));
    };
    let root_url = entries[root_entry].url.clone();
    // Times count from the root document's request (redirects before it are not counted).
    let t0 = if entries[root_entry].start_ms.is_finite() { entries[root_entry].start_ms } else { 0.0 };
    let root_site = urlparts::site(&urlparts::host(&root_url));

    // Redirect source -> target, to follow initiators that name a redirect's source.
    let mut alias: BTreeMap<&str, &str> = BTreeMap::new();
    for e in entries {
        if let Some(t) = &e.redirect_to {
            if t != &e.url {
                alias.insert(e.url.as_str(), t.as_str());
            }
        }
    }
    let mut placed: BTreeMap<String, ObjectId> = BTreeMap::new();
    let mut standin: BTreeMap<String, ObjectId> = BTreeMap::new();
    let mut objects: Vec<WebObject> = Vec::new();
    let mut subframe: Vec<bool> = Vec::new();

    let resolve = |url: &str, placed: &BTreeMap<String, ObjectId>, standin: &BTreeMap<String, ObjectId>| {
        let mut u = url;
        for _ in 0..16 {
            if let Some(id) = placed.get(u) {
                return Some(*id);
            }
            if let Some(id) = standin.get(u) {
                return Some(*id);
            }
            match alias.get(u) {
                Some(next) => u = next,
                None => break,
            }
        }
        None
    };

    let nav_chain = navigation_chain(entries);
    // Redirect target URL -> the hop object that leads to it.
    let mut hop_to: BTreeMap<String, ObjectId> = BTreeMap::new();
    let sequence = std::iter::once(root_entry).chain(order.iter().copied().filter(|&i| i != root_entry));
    for i in sequence {
        let e = &entries[i];
        let parent = if objects.is_empty() {
            None
        } else {
            let by_initiator =
                e.initiator_url.as_deref().filter(|u| *u != e.url).and_then(|u| resolve(u, &placed, &standin));
            let by_referer = e.referer.as_deref().filter(|u| *u != e.url).and_then(|u| resolve(u, &placed, &standin));
            let by_hop = hop_to.get(&e.url).copied();
            Some(by_hop.or(by_initiator).or(by_referer).unwrap_or(ObjectId(0)))
        };
        // A redirect hop of a subresource is an object of its own: a small response whose
        // arrival lets its target (its child) be requested, one round trip more. The
        // navigation's own hops precede the root and stay skipped.
        let hop = reasons[i] == Some(SkipReason::Redirect)
            && !nav_chain.contains(&i)
            && e.status > 0
            && e.redirect_to.as_deref().is_some_and(|t| t != e.url);
        if let Some(r) = reasons[i].filter(|_| !hop) {
            *skipped.entry(r).or_insert(0) += 1;
            if let Some(p) = parent {
                standin.entry(e.url.clone()).or_insert(p);
            }
            continue;
        }
        let id = ObjectId(objects.len() as u32);
        // In an iframe: the log says so, or its discovery parent is a document other than
        // the root, or is itself in an iframe.
        let in_subframe = e.subframe
            || parent.is_some_and(|p| {
                let po: &WebObject = &objects[p.index()];
                subframe[p.index()] || (p != ObjectId(0) && po.kind == ContentType::Html)
            });
        subframe.push(in_subframe);
        let kind = if hop { hop_kind(e, entries) } else { entry_kind(e, objects.is_empty()) };
        let over = |b: Option<u64>| b.is_some_and(|b| b > MAX_OBJECT_BYTES);
        count(Adjustment::SizeClamped, usize::from(over(e.wire_bytes) || over(e.body_bytes)));
        let clamp = |b: Option<u64>| b.map(|b| b.min(MAX_OBJECT_BYTES));
        let (wire_bytes, body_bytes) = (clamp(e.wire_bytes), clamp(e.body_bytes));
        let cache_hit = e.skip == Some(SkipReason::CacheHit);
        let from_cache = cache_hit && !keep_cache_hits;
        let wire = if from_cache {
            0
        } else if cache_hit {
            *cache_hits_fetched += 1;
            // A cold load of what the recording had cached: the body as the server sent it
            // (its Content-Length), else the decoded size, counted (it overstates a
            // compressed response).
            clamp(e.content_length).unwrap_or_else(|| {
                count(Adjustment::ColdSizeDecoded, 1);
                wire_bytes.or(body_bytes).unwrap_or(0)
            })
        } else {
            wire_bytes.or(body_bytes).unwrap_or(0)
        };
        let duration_ms = if !e.duration_ms.is_finite() || e.duration_ms < 0.0 {
            count(Adjustment::TimeInvalid, 1);
            0.0
        } else if e.duration_ms > MAX_DURATION_MS {
            count(Adjustment::TimeClamped, 1);
            MAX_DURATION_MS
        } else {
            e.duration_ms
        };
        let mut o = WebObject {
            id,
            url: e.url.clone(),
            origin: urlparts::origin(&e.url),
            third_party: !urlparts::same_owner(&urlparts::site(&urlparts::host(&e.url)), &root_site),
            kind,
            mime: e.mime.split(';').next().unwrap_or("").trim().to_string(),
            wire_bytes: wire,
            body_bytes: body_bytes.filter(|b| *b > 0).or(wire_bytes).unwrap_or(wire),
            browser_priority: e.priority,
            fetch_priority: FetchPriority::Auto,
            render_blocking: Some(render_blocking(e, kind, in_subframe, parent == Some(ObjectId(0)))),
            parent,
            cats_level: 0,
            category: ContentCategory::Others,
            essential: Essentialness::Maybe,
            tracker: false,
            recorded_start_ns: ms_to_ns(e.start_ms - t0),
            recorded_duration_ns: ms_to_ns(duration_ms),
            from_cache,
            redirect: hop,
            connection_id: e.connection_id,
            protocol: e.protocol,
            server_wait_ns: ms_to_ns(e.server_wait_ms.min(MAX_DURATION_MS)),
            recorded_connect_ns: ms_to_ns(e.connect_ms.min(MAX_DURATION_MS)),
            recorded_tls_ns: ms_to_ns(e.tls_ms.min(e.connect_ms).min(MAX_DURATION_MS)),
            recorded_dns_ns: ms_to_ns(e.dns_ms.min(MAX_DURATION_MS)),
            recorded_stall_ns: ms_to_ns(e.stall_ms.min(MAX_DURATION_MS)),
            recorded_response_start_ns: e
                .response_start_ms
                .filter(|t| t.is_finite() && t.abs() <= MAX_TIMESTAMP_MS)
                .map_or(0, |t| ms_to_ns(t - t0)),
            recorded_initiator: e.initiator_type.as_deref().map(crate::model::Initiator::parse),
            reliability: None,
        };
        classify::classify(&mut o);
        if hop {
            if let Some(t) = &e.redirect_to {
                // The latest hop to a URL: a second request of the same URL has its own hop.
                hop_to.insert(t.clone(), id);
            }
        }
        placed.insert(e.url.clone(), id);
        objects.push(o);
    }
    let name = if name.is_empty() { root_url } else { name.to_string() };
    let mut page = Page::new(name, objects)?;
    // The navigation's redirect hops before the root: skipped as objects (counted as
    // `redirect`), kept as round trips the load pays first.
    let hops = nav_chain
        .iter()
        .take_while(|&&i| i != root_entry)
        .filter(|&&i| reasons[i] == Some(SkipReason::Redirect))
        .map(|&i| navigation_hop(&entries[i], t0, 0))
        .collect();
    page.set_navigation_redirects(hops);
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_urls() {
        assert_eq!(resolve_url("https://a.com/x/y", "//b.com/z"), "https://b.com/z");
        assert_eq!(resolve_url("https://a.com/x/y", "/z"), "https://a.com/z");
        assert_eq!(resolve_url("https://a.com/x/y", "z"), "https://a.com/x/z");
        assert_eq!(resolve_url("https://a.com/x/y", "http://c.com/"), "http://c.com/");
        assert_eq!(resolve_url("https://a.com/x/y", "http://c.com"), "http://c.com/");
    }
}
