//! The page model: web objects, their classes, and the discovery graph.
//!
//! # How a simulator walks a [`Page`]
//!
//! A page is a tree rooted at the main HTML document ([`Page::root`]). Each object has at most
//! one *discovery parent*: the object whose arrival (and processing) lets the browser find it
//! (the HTML for a `<link>` or `<img>`, a stylesheet for a font, a script for what it fetches).
//! A simulated client loads a page like this:
//!
//! 1. At the start time `t0` it requests [`Page::root`].
//! 2. When object `p` has fully arrived at time `t`, it requests every child `c` in
//!    [`Page::children`]`(p)` at `t + DiscoveryConfig::discovery_delay_ns(p.kind)` (the time
//!    the browser needs to parse or run `p` before it sees `c`; zero by default). A client
//!    that models streaming HTML parsing requests a child of an HTML document earlier, once
//!    the first [`Page::discovery_offsets_bytes`] bytes of the document have arrived.
//! 3. The page is loaded when every object has arrived. Record each object's request and
//!    completion time in a [`crate::qoe::Deliveries`] map and hand it to
//!    [`crate::qoe::estimate`] for FCP, first render, LCP, TTI, Speed Index, PLT and CLS risk.
//!
//! Objects are stored in topological order: `objects()[0]` is the root and every parent has a
//! smaller id than its children, so iterating ids in order never meets a child before its
//! parent. Each object carries what a scheduler needs to prioritise it: the browser's
//! priority, the CATS level (0-4, CATS §II-D-1), the thesis's essentialness (§5.3.2) and
//! whether it blocks rendering. [`crate::qoe::ideal_deliveries`] is a reference walk with a
//! caller-given fetch time per object, useful as an infinite-bandwidth bound and in tests.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::classify::{ContentCategory, Essentialness};
use crate::error::WebError;

/// Index of an object in its [`Page`]; the root is `ObjectId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectId(pub u32);

impl ObjectId {
    /// The object's index into [`Page::objects`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What an object is, from its MIME type, the browser's resource type or its file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentType {
    /// An HTML document (the page itself or an iframe).
    Html,
    /// A stylesheet.
    Css,
    /// A script (including modules and workers).
    Js,
    /// A web font.
    Font,
    /// An image (raster or SVG).
    Image,
    /// Audio or video.
    Media,
    /// JSON or other structured data fetched by scripts.
    Json,
    /// Anything else (text, binary, beacons, manifests, favicons of unknown type).
    Other,
}

impl ContentType {
    /// Every content type, in display order.
    pub const ALL: [ContentType; 8] = [
        ContentType::Html,
        ContentType::Css,
        ContentType::Js,
        ContentType::Font,
        ContentType::Image,
        ContentType::Media,
        ContentType::Json,
        ContentType::Other,
    ];

    /// Lower-case name, as used in rules files and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            ContentType::Html => "html",
            ContentType::Css => "css",
            ContentType::Js => "js",
            ContentType::Font => "font",
            ContentType::Image => "image",
            ContentType::Media => "media",
            ContentType::Json => "json",
            ContentType::Other => "other",
        }
    }

    /// Parses a name as [`ContentType::name`] writes it (also `javascript`, `script`,
    /// `stylesheet`, `document`, `img`, `video`, `audio`).
    pub fn from_name(s: &str) -> Option<ContentType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "html" | "document" => ContentType::Html,
            "css" | "stylesheet" => ContentType::Css,
            "js" | "javascript" | "script" => ContentType::Js,
            "font" => ContentType::Font,
            "image" | "img" => ContentType::Image,
            "media" | "video" | "audio" => ContentType::Media,
            "json" => ContentType::Json,
            "other" => ContentType::Other,
            _ => return None,
        })
    }

    /// A plausible file extension for dummy files (thesis §5.7, HAR_Replica).
    pub fn default_extension(self) -> &'static str {
        match self {
            ContentType::Html => "html",
            ContentType::Css => "css",
            ContentType::Js => "js",
            ContentType::Font => "woff2",
            ContentType::Image => "jpg",
            ContentType::Media => "mp4",
            ContentType::Json => "json",
            ContentType::Other => "bin",
        }
    }
}

impl fmt::Display for ContentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Chrome's network priority for a request, as DevTools names it. WebPageTest's names map
/// onto it (`Highest` = `VeryHigh`, `Lowest`/`Idle` = `VeryLow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum BrowserPriority {
    /// Lowest, Idle.
    VeryLow,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// VeryHigh, Highest.
    VeryHigh,
}

impl BrowserPriority {
    /// Parses DevTools (`VeryHigh` ... `VeryLow`) and WebPageTest (`Highest`, `Lowest`,
    /// `Idle`, upper case) names, case-insensitively.
    pub fn parse(s: &str) -> Option<BrowserPriority> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "veryhigh" | "highest" | "very high" => BrowserPriority::VeryHigh,
            "high" => BrowserPriority::High,
            "medium" => BrowserPriority::Medium,
            "low" => BrowserPriority::Low,
            "verylow" | "lowest" | "idle" | "throttled" | "very low" => BrowserPriority::VeryLow,
            _ => return None,
        })
    }

    /// The RFC 9218 urgency Chrome sends over HTTP/3 for this priority: its net priorities
    /// HIGHEST, MEDIUM, LOW, LOWEST, IDLE (DevTools VeryHigh, High, Medium, Low, VeryLow)
    /// map to urgency 0 to 4.
    pub fn rfc9218_urgency(self) -> u8 {
        match self {
            BrowserPriority::VeryHigh => 0,
            BrowserPriority::High => 1,
            BrowserPriority::Medium => 2,
            BrowserPriority::Low => 3,
            BrowserPriority::VeryLow => 4,
        }
    }

    /// DevTools name.
    pub fn name(self) -> &'static str {
        match self {
            BrowserPriority::VeryLow => "VeryLow",
            BrowserPriority::Low => "Low",
            BrowserPriority::Medium => "Medium",
            BrowserPriority::High => "High",
            BrowserPriority::VeryHigh => "VeryHigh",
        }
    }
}

/// The `fetchpriority` HTML attribute (a hint from the page author; CATS §II-D-1 names it as
/// a source of semantic priority). Recordings do not carry it, so it comes from rules or
/// built-in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FetchPriority {
    /// No hint.
    #[default]
    Auto,
    /// `fetchpriority="high"`.
    High,
    /// `fetchpriority="low"`.
    Low,
}

/// Whether a resource blocks the first paint, as Chrome's `renderBlocking` field says
/// (`blocking`, `in_body_parser_blocking`, `potentially_blocking`, `non_blocking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenderBlocking {
    /// Blocks rendering (stylesheets and synchronous scripts in `<head>`).
    Blocking,
    /// A parser-blocking script in `<body>`: blocks rendering of what follows it.
    InBodyParserBlocking,
    /// May block (e.g. a dynamically inserted stylesheet).
    PotentiallyBlocking,
    /// Does not block rendering.
    NonBlocking,
}

impl RenderBlocking {
    /// Parses Chrome's names (also `non-blocking`, `render-blocking`).
    pub fn parse(s: &str) -> Option<RenderBlocking> {
        Some(match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "blocking" | "render_blocking" => RenderBlocking::Blocking,
            "in_body_parser_blocking" => RenderBlocking::InBodyParserBlocking,
            "potentially_blocking" => RenderBlocking::PotentiallyBlocking,
            "non_blocking" | "none" => RenderBlocking::NonBlocking,
            _ => return None,
        })
    }

    /// True for `Blocking` and `InBodyParserBlocking`: the resources first paint waits for.
    pub fn blocks_first_paint(self) -> bool {
        matches!(self, RenderBlocking::Blocking | RenderBlocking::InBodyParserBlocking)
    }
}

/// The HTTP version a recorded response came over (HAR `_protocol` / `response.httpVersion`,
/// DevTools `response.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpProtocol {
    /// HTTP/1.0 or HTTP/1.1 (RFC 9112).
    Http1,
    /// HTTP/2 (RFC 9113), also SPDY.
    Http2,
    /// HTTP/3 over QUIC (RFC 9114), including drafts (`h3-29`) and gQUIC.
    Http3,
}

/// Who made a recorded request (DevTools `initiator.type`, HAR `_initiator_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Initiator {
    /// The HTML parser or its preload scanner, from markup (`parser`).
    Parser,
    /// A script (`script`): inserted elements, fetch, XHR.
    Script,
    /// A `<link rel=preload>` or an HTTP `Link` header (`preload`).
    Preload,
    /// Anything else the recording names (`other`: the navigation, CSS `url()`, fonts ...).
    Other,
}

impl Initiator {
    /// Parses a recording's initiator type, case-insensitively; unknown names are `Other`.
    pub fn parse(s: &str) -> Initiator {
        match s.trim().to_ascii_lowercase().as_str() {
            "parser" => Initiator::Parser,
            "script" => Initiator::Script,
            "preload" => Initiator::Preload,
            _ => Initiator::Other,
        }
    }
}

impl HttpProtocol {
    /// Parses the names recordings use, case-insensitively: `http/1.1`, `HTTP/1.0`,
    /// `http/0.9` (HTTP/1); `h2`, `h2c`, `http/2`, `http/2.0`, `spdy/3.1` (HTTP/2); `h3`,
    /// `h3-29`, `http/3`, `http/3.0`, `quic`, `http/2+quic/46` (HTTP/3). Anything else
    /// (`data`, `blob`, empty) is `None`.
    pub fn parse(s: &str) -> Option<HttpProtocol> {
        let s = s.trim().to_ascii_lowercase();
        if s.starts_with("h3") || s.starts_with("http/3") || s.contains("quic") {
            Some(HttpProtocol::Http3)
        } else if s == "h2" || s == "h2c" || s.starts_with("http/2") || s.starts_with("spdy") {
            Some(HttpProtocol::Http2)
        } else if s.starts_with("http/1") || s == "http/0.9" {
            Some(HttpProtocol::Http1)
        } else {
            None
        }
    }

    /// Lower-case name, as in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            HttpProtocol::Http1 => "http1",
            HttpProtocol::Http2 => "http2",
            HttpProtocol::Http3 => "http3",
        }
    }
}

/// One object of a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebObject {
    /// Position in the page (topological order).
    pub id: ObjectId,
    /// Full URL as recorded.
    pub url: String,
    /// `scheme://host[:port]`.
    pub origin: String,
    /// True if the object's site (registrable domain) differs from the root document's.
    pub third_party: bool,
    /// Content type.
    pub kind: ContentType,
    /// MIME type as recorded (may be empty).
    pub mime: String,
    /// Bytes on the wire for the response (headers and encoded body), what a transport carries.
    pub wire_bytes: u64,
    /// Decoded body size when known (used as an image-area stand-in for LCP), else `wire_bytes`.
    pub body_bytes: u64,
    /// The browser's final priority for the request, when recorded.
    pub browser_priority: Option<BrowserPriority>,
    /// The author's `fetchpriority` hint.
    pub fetch_priority: FetchPriority,
    /// Render-blocking status, when recorded or inferred.
    pub render_blocking: Option<RenderBlocking>,
    /// Discovery parent; `None` only for the root.
    pub parent: Option<ObjectId>,
    /// CATS priority level 0 (critical) to 4 (analytics), CATS §II-D-1 and Table I.
    pub cats_level: u8,
    /// Thesis content category (§5.3.2, Table 4).
    pub category: ContentCategory,
    /// Thesis essentialness (§5.3.2, Table 4).
    pub essential: Essentialness,
    /// True if the host is on the tracking and advertising list (or a rule said so).
    pub tracker: bool,
    /// Request start in the recording, ns after the root document's request (0 for built-in
    /// pages; objects requested before the root, e.g. by a service worker, count as 0).
    pub recorded_start_ns: u64,
    /// Request duration in the recording (ns), 0 when unknown.
    pub recorded_duration_ns: u64,
    /// The recording served this object from the browser's cache: it costs no network
    /// (`wire_bytes` 0, `body_bytes` its content size) but still takes part in discovery and
    /// paint. Import with [`crate::ImportOptions::keep_cache_hits`] to fetch it instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_cache: bool,
    /// A redirect response (3xx) of a subresource: its arrival lets its target, its only
    /// child, be requested (one round trip more). Its bytes are the redirect response's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redirect: bool,
    /// The recording's connection id for the request (HAR `connection`: a string of digits is
    /// read as the number, any other string as its 64-bit FNV-1a hash; DevTools
    /// `response.connectionId`, where Chrome's 0 for "no connection" reads as `None`).
    /// Requests sharing an id shared a connection. `None` when not recorded (built-in pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_id: Option<u64>,
    /// The HTTP version the response came over, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<HttpProtocol>,
    /// Time the server took (ns): from the request's last byte sent to the response's first
    /// byte (HAR `timings.wait`; DevTools `timing.receiveHeadersEnd - timing.sendEnd`). 0 when
    /// unknown (HAR -1, no timing).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub server_wait_ns: u64,
    /// Connection setup the recording spent on this request (ns): TCP plus TLS handshakes
    /// (HAR `timings.connect`, which includes `ssl`; DevTools `connectEnd - connectStart`).
    /// Non-zero only on requests that opened a connection.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorded_connect_ns: u64,
    /// The TLS part of [`WebObject::recorded_connect_ns`] (ns): HAR `timings.ssl`, DevTools
    /// `sslEnd - sslStart`; 0 when unknown or plain http.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorded_tls_ns: u64,
    /// DNS lookup the recording spent on this request (ns) (HAR `timings.dns`; DevTools
    /// `dnsEnd - dnsStart`). Non-zero only on requests that looked a name up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorded_dns_ns: u64,
    /// Time the recording's browser held the request before its DNS lookup, connection or send
    /// began (ns; Chrome's "stalled"/"queueing": DevTools `timing.requestTime` plus the first of
    /// `dnsStart`, `connectStart`, `sendStart`, less the `requestWillBeSent` timestamp; HAR
    /// `timings.blocked`). 0 when unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorded_stall_ns: u64,
    /// When the response's first byte arrived in the recording, ns after the root document's
    /// request (like [`WebObject::recorded_start_ns`]); 0 when unknown. HAR: start +
    /// `blocked + dns + connect + send + wait`; DevTools: `timing.requestTime +
    /// receiveHeadersEnd`, else the `responseReceived` timestamp.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorded_response_start_ns: u64,
    /// Who made the request in the recording; `None` when it does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_initiator: Option<Initiator>,
    /// Reliability a user rule asked for ([`crate::rules`]); `None` lets the
    /// [`crate::reliability::ReliabilityPolicy`] decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<crate::reliability::Reliability>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl WebObject {
    /// True if first paint waits for this object: the root HTML, or a resource whose
    /// render-blocking status is `Blocking`/`InBodyParserBlocking`.
    pub fn blocks_first_paint(&self) -> bool {
        self.parent.is_none() || self.render_blocking.is_some_and(RenderBlocking::blocks_first_paint)
    }
}

/// Per-type processing delay before an object's children are discovered (HTML parsing, CSS
/// parsing, script execution). All zero by default: a pure network lower bound, as CATS
/// §III-C and PriorityBucket §5.1 measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiscoveryConfig {
    /// Delay after an HTML document arrives.
    pub html_ns: u64,
    /// Delay after a stylesheet arrives.
    pub css_ns: u64,
    /// Delay after a script arrives (execution).
    pub js_ns: u64,
    /// Delay after any other type arrives.
    pub other_ns: u64,
    /// Add each object's recorded processing gap ([`RecordedGate`]): how long after its
    /// discovery parent completed the recording requested it, less what the network explains
    /// (the render- or parser-blocking objects it waited for, which the simulated load then
    /// also waits for), taken as CPU time (parsing, script execution) or timers. Objects the
    /// recording requested before their parent completed (the preload scanner) have no gap.
    pub recorded_gaps: bool,
    /// Multiplier of recorded gaps, in thousandths (1000: as recorded; 4000: Lighthouse's
    /// 4× mobile CPU slowdown), applied as if the whole gap were CPU time.
    pub gap_scale_permille: u32,
}

impl DiscoveryConfig {
    /// How long after `parent` is found (arrived, or processed) and its child's gates have
    /// completed the child is requested: the parent type's delay, plus, when
    /// [`DiscoveryConfig::recorded_gaps`] is on, the child's recorded processing gap
    /// ([`RecordedGate::processing_ns`]) scaled.
    pub fn child_delay_ns(&self, parent: &WebObject, processing_ns: u64) -> u64 {
        let typed = self.discovery_delay_ns(parent.kind);
        if !self.recorded_gaps {
            return typed;
        }
        let scaled =
            (processing_ns as u128 * u128::from(self.gap_scale_permille) / 1000).min(u128::from(u64::MAX)) as u64;
        typed.saturating_add(scaled)
    }

    /// Time between a parent of type `parent_kind` arriving and its children being requested.
    pub fn discovery_delay_ns(&self, parent_kind: ContentType) -> u64 {
        match parent_kind {
            ContentType::Html => self.html_ns,
            ContentType::Css => self.css_ns,
            ContentType::Js => self.js_ns,
            _ => self.other_ns,
        }
    }
}

/// What held an object's request back in the recording after its discovery parent had
/// completed (issue 9: "derive each object's processing delay from the recording: the gap
/// between its discovery parent finishing and its request starting, minus what the network
/// explains").
///
/// The gap runs from the parent's recorded end to the object's recorded request. The network
/// explains the part of it spent waiting for *gates*: render- or parser-blocking objects
/// (`Blocking`, `InBodyParserBlocking`) requested before the object that completed inside the
/// gap (a parser waiting for a stylesheet or a synchronous script before it reaches the next
/// element; a script that runs only once the stylesheets before it have loaded). What is left
/// after the last of them, or after the parent when none, is the processing gap: main-thread
/// work or a timer. Objects requested before their parent completed have neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedGate {
    /// The objects it waited for, by id.
    pub gates: Vec<ObjectId>,
    /// Its recorded request less the later of its parent's and its gates' recorded ends (ns).
    pub processing_ns: u64,
}

/// One redirect hop of the navigation, before the root document (e.g. `http://example.com/`
/// -> `https://www.example.com/`): the browser requests it, waits for the 3xx response, and
/// only then requests the next URL. A page load pays its round trips before anything else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NavigationHop {
    /// The URL requested.
    pub url: String,
    /// How long before the root document's request the recording requested it (ns): the
    /// first hop's is how much later than the navigation's start the page's recorded times
    /// (which count from the root's request) begin.
    pub recorded_before_root_ns: u64,
    /// Server time the recording shows for it (ns; see [`WebObject::server_wait_ns`]).
    pub server_wait_ns: u64,
    /// DNS lookup it spent in the recording (ns).
    pub recorded_dns_ns: u64,
    /// Connection setup it spent in the recording (ns).
    pub recorded_connect_ns: u64,
    /// The TLS part of that (ns; 0 when unknown).
    pub recorded_tls_ns: u64,
    /// A client-side redirect (the document of a page whose script or `<meta refresh>`
    /// started the navigation to the next): how long after its first response byte the
    /// recording requested the next navigation (its download, parsing, the script or the
    /// refresh timer), paid after its round trips. 0 for an HTTP redirect.
    pub client_delay_ns: u64,
}

/// A page: objects in topological order and their discovery tree. See the module docs for
/// how a simulator walks it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page {
    name: String,
    objects: Vec<WebObject>,
    #[serde(skip)]
    children: Vec<Vec<ObjectId>>,
    /// The navigation's redirect hops before the root document, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    navigation_redirects: Vec<NavigationHop>,
}

impl Page {
    /// Each object's [`RecordedGate`], by id.
    pub fn recorded_gates(&self) -> Vec<RecordedGate> {
        let end = |o: &WebObject| o.recorded_start_ns.saturating_add(o.recorded_duration_ns);
        let blocking: Vec<&WebObject> =
            self.objects.iter().filter(|o| o.render_blocking.is_some_and(RenderBlocking::blocks_first_paint)).collect();
        self.objects
            .iter()
            .map(|o| {
                let Some(p) = o.parent else { return RecordedGate::default() };
                let parent_end = end(&self.objects[p.index()]);
                if o.recorded_start_ns <= parent_end {
                    return RecordedGate::default();
                }
                let gates: Vec<ObjectId> = blocking
                    .iter()
                    .filter(|g| {
                        g.id != o.id
                            && g.id != p
                            && g.recorded_start_ns < o.recorded_start_ns
                            && end(g) > parent_end
                            && end(g) <= o.recorded_start_ns
                    })
                    .map(|g| g.id)
                    .collect();
                let waited = gates.iter().map(|g| end(&self.objects[g.index()])).fold(parent_end, u64::max);
                RecordedGate { gates, processing_ns: o.recorded_start_ns - waited }
            })
            .collect()
    }

    /// Builds a page, checking the invariants: at least one object; ids equal positions;
    /// object 0 (the root) has no parent; every other object's parent has a smaller id.
    pub fn new(name: impl Into<String>, objects: Vec<WebObject>) -> Result<Page, WebError> {
        if objects.is_empty() {
            return Err(WebError::Invalid("a page needs at least one object (its root document)".into()));
        }
        let mut children = vec![Vec::new(); objects.len()];
        for (i, o) in objects.iter().enumerate() {
            if o.id.index() != i {
                return Err(WebError::Invalid(format!("object at position {i} has id {}", o.id)));
            }
            match (i, o.parent) {
                (0, None) => {}
                (0, Some(_)) => return Err(WebError::Invalid("the root (object 0) cannot have a parent".into())),
                (_, None) => {
                    return Err(WebError::Invalid(format!("object {} has no parent; only the root may", o.id)))
                }
                (_, Some(p)) if p.index() >= i => {
                    return Err(WebError::Invalid(format!("object {} has parent {p}, which is not before it", o.id)))
                }
                (_, Some(p)) => children[p.index()].push(o.id),
            }
            if o.cats_level > 4 {
                return Err(WebError::Invalid(format!("object {} has CATS level {} (0-4)", o.id, o.cats_level)));
            }
        }
        Ok(Page { name: name.into(), objects, children, navigation_redirects: Vec::new() })
    }

    /// The navigation's redirect hops before the root document, in order (empty for built-in
    /// pages and recordings whose navigation was not redirected).
    pub fn navigation_redirects(&self) -> &[NavigationHop] {
        &self.navigation_redirects
    }

    /// How much later than the navigation's start the root document was requested in the
    /// recording (ns): the first redirect hop's lead, 0 without redirects.
    pub fn recorded_redirect_ns(&self) -> u64 {
        self.navigation_redirects.first().map_or(0, |h| h.recorded_before_root_ns)
    }

    /// Sets the navigation's redirect hops.
    pub fn set_navigation_redirects(&mut self, hops: Vec<NavigationHop>) {
        self.navigation_redirects = hops;
    }

    /// Name (the page URL for imported pages).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The root document.
    pub fn root(&self) -> ObjectId {
        ObjectId(0)
    }

    /// All objects, in topological order (parents before children).
    pub fn objects(&self) -> &[WebObject] {
        &self.objects
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Always false: a page has at least its root.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The object with this id. Panics if the id is not from this page.
    pub fn get(&self, id: ObjectId) -> &WebObject {
        &self.objects[id.index()]
    }

    /// Objects discovered from `id`, in id order.
    pub fn children(&self, id: ObjectId) -> &[ObjectId] {
        self.children.get(id.index()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Ids in topological order (parents first): simply `0..len`.
    pub fn topological_order(&self) -> impl Iterator<Item = ObjectId> + '_ {
        (0..self.objects.len() as u32).map(ObjectId)
    }

    /// Depth of an object in the discovery tree (root = 0).
    pub fn depth(&self, id: ObjectId) -> usize {
        let mut d = 0;
        let mut cur = self.get(id).parent;
        while let Some(p) = cur {
            d += 1;
            cur = self.get(p).parent;
        }
        d
    }

    /// Streaming HTML discovery: for each object (page order), how many bytes of its
    /// parent's response must have arrived before the browser finds it, or `None` when it is
    /// found only once the whole parent has arrived and been processed (a stylesheet's or a
    /// script's children: they are parsed or run whole; the root; children of a redirect or
    /// of a cache hit, which have no response to stream).
    ///
    /// Offsets count the parent's response bytes as the simulator sends them,
    /// [`WebObject::wire_bytes`] (at least 1), and lie in 1..=that: a browser's HTML parser
    /// and preload scanner tokenize the document as its bytes arrive (WHATWG HTML §13.2.3,
    /// "The input byte stream"), so a child of an HTML document is found at its place in
    /// the document, which the recording shows:
    /// - When the parent's download is recorded (`recorded_response_start_ns` known and
    ///   before its end, `recorded_start_ns + recorded_duration_ns`): a child requested at or
    ///   after that end needs the whole parent, as without streaming (a script inserted it,
    ///   or the parser reached it only then); any other linearly over the download,
    ///   `ceil((child start − response start) / (end − response start) × wire_bytes)`, at
    ///   least the first byte (a child requested before the response's first byte, from a
    ///   `Link` header or Early Hints, needs that byte here: the simulated server sends no
    ///   headers ahead of the body).
    /// - Otherwise (no response start; a response that arrived whole, as in Lightrider's
    ///   logs, whose end is its first byte; a built-in page) the recorded times cannot place
    ///   a child in the document: a child the recording says a script requested needs the
    ///   whole parent, and the others are spread evenly through it in page order, the `k`-th
    ///   (from 1) of `n` at `ceil(k × wire_bytes / n)` (the last at its end, so a single
    ///   child waits for the whole parent, as without streaming).
    pub fn discovery_offsets_bytes(&self) -> Vec<Option<u64>> {
        let mut out = vec![None; self.objects.len()];
        for parent in &self.objects {
            if parent.kind != ContentType::Html || parent.redirect || parent.from_cache {
                continue;
            }
            let kids = self.children(parent.id);
            if kids.is_empty() {
                continue;
            }
            let len = parent.wire_bytes.max(1);
            let end = parent.recorded_start_ns.saturating_add(parent.recorded_duration_ns);
            let response = parent.recorded_response_start_ns;
            let mut spread = Vec::new();
            for &c in kids {
                let child = self.get(c);
                out[c.index()] = Some(if response > 0 && end > response {
                    if child.recorded_start_ns >= end {
                        len
                    } else {
                        let into = child.recorded_start_ns.saturating_sub(response);
                        let at = (u128::from(into) * u128::from(len)).div_ceil(u128::from(end - response));
                        (at as u64).clamp(1, len)
                    }
                } else if child.recorded_initiator == Some(Initiator::Script) {
                    len
                } else {
                    spread.push(c);
                    continue;
                });
            }
            let n = spread.len() as u128;
            for (k, c) in spread.into_iter().enumerate() {
                let at = ((k as u128 + 1) * u128::from(len)).div_ceil(n);
                out[c.index()] = Some((at as u64).clamp(1, len));
            }
        }
        out
    }

    /// Total bytes on the wire (saturating).
    pub fn total_wire_bytes(&self) -> u64 {
        self.objects.iter().fold(0u64, |a, o| a.saturating_add(o.wire_bytes))
    }

    /// Changes classification fields of objects (used by rules); structure is untouched.
    pub(crate) fn objects_mut(&mut self) -> impl Iterator<Item = &mut WebObject> {
        self.objects.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::object;

    #[test]
    fn recorded_gates_and_processing() {
        // Root 0-100 ms; a blocking stylesheet 10-300 and an in-body parser-blocking script
        // 20-250; a non-blocking image 30-400; then an image requested at 350 (it waited for
        // the stylesheet and the script: 50 ms of processing after the later, 300), one at 90
        // (the preload scanner: no gap) and a beacon at 1000 (700 ms after the same gates).
        let at = |mut o: WebObject, start_ms: u64, end_ms: u64, rb: Option<RenderBlocking>| {
            o.recorded_start_ns = start_ms * 1_000_000;
            o.recorded_duration_ns = (end_ms - start_ms) * 1_000_000;
            o.render_blocking = rb;
            o
        };
        let js = object(2, Some(0), "https://a/p.js", ContentType::Js, 1000);
        let objs = vec![
            at(object(0, None, "https://a/", ContentType::Html, 1000), 0, 100, None),
            at(object(1, Some(0), "https://a/s.css", ContentType::Css, 1000), 10, 300, Some(RenderBlocking::Blocking)),
            at(js, 20, 250, Some(RenderBlocking::InBodyParserBlocking)),
            at(object(3, Some(0), "https://a/big.jpg", ContentType::Image, 1000), 30, 400, None),
            at(object(4, Some(0), "https://a/late.jpg", ContentType::Image, 1000), 350, 360, None),
            at(object(5, Some(0), "https://a/early.jpg", ContentType::Image, 1000), 90, 120, None),
            at(object(6, Some(0), "https://a/beacon", ContentType::Other, 1000), 1000, 1010, None),
        ];
        let page = Page::new("t", objs).unwrap();
        let g = page.recorded_gates();
        assert_eq!(g[0], RecordedGate::default());
        assert_eq!(g[1], RecordedGate::default());
        assert_eq!(g[4], RecordedGate { gates: vec![ObjectId(1), ObjectId(2)], processing_ns: 50_000_000 });
        assert_eq!(g[5], RecordedGate::default());
        assert_eq!(g[6], RecordedGate { gates: vec![ObjectId(1), ObjectId(2)], processing_ns: 700_000_000 });
        // The typed delay plus the processing gap, scaled.
        let d = DiscoveryConfig { js_ns: 5, recorded_gaps: true, gap_scale_permille: 4000, ..Default::default() };
        assert_eq!(d.child_delay_ns(page.get(ObjectId(2)), 50), 205);
        let off = DiscoveryConfig { js_ns: 5, ..Default::default() };
        assert_eq!(off.child_delay_ns(page.get(ObjectId(2)), 50), 5);
    }
}
