//! Applications: what each end of a flow writes, and when.

use std::sync::Arc;

use triage_web::{DiscoveryConfig, Page};

/// A message an application writes.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageSpec {
    /// Name reported in results (e.g. "P0").
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Priority, 0 most urgent (used by priority schedulers and carried to the receiver);
    /// `None` takes the connection's default priority.
    pub priority: Option<u8>,
    /// Write time relative to the flow start; `None` writes as soon as the connection is up.
    /// A time before the connection is up also writes at connection time.
    pub at_ns: Option<u64>,
    /// QUIC mode: send as DATAGRAM chunks (RFC 9221), never retransmitted.
    pub unreliable: bool,
    /// QUIC mode: travel on the stream of this end's earlier message at that index, behind
    /// it (several messages in order on one stream); `None`: a stream of its own.
    pub same_stream_as: Option<usize>,
}

/// The application on one end of a flow.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum AppSpec {
    /// Writes nothing; closes when the peer closes.
    #[default]
    Sink,
    /// Writes `bytes` as one message named "bulk" as soon as the connection is up.
    Bulk {
        /// Bytes to send.
        bytes: u64,
    },
    /// Writes named, sized messages into the one connection.
    Messages(Vec<MessageSpec>),
    /// A browser loading a page (client end): requests the root when connected, and each
    /// object once its discovery parent has arrived (plus the parent type's processing
    /// delay), one request message per object over the one connection.
    PageClient(Arc<PageLoad>),
    /// The web server of a page (server end): answers each request with the object's bytes,
    /// written with the priority the classifier gave it (its CATS level).
    PageServer(Arc<PageLoad>),
}

/// A page load: the page and how it is fetched.
#[derive(Clone, Debug, PartialEq)]
pub struct PageLoad {
    /// The page.
    pub page: Page,
    /// Size of one request message (headers; default 300 bytes).
    pub request_bytes: u64,
    /// Processing delay before a parent's children are discovered.
    pub discovery: DiscoveryConfig,
    /// QUIC mode: objects the server answers with DATAGRAM chunks, by object index (a
    /// reliability policy's plan, thesis §5.9); empty: every object on a stream.
    pub unreliable: Vec<bool>,
    /// How long the client waits for an incomplete unreliable object, per type.
    pub partial: triage_web::PartialConfig,
    /// The thesis's client (§5.8, the reproduction's PR-1): one request at a time in page
    /// order (a `transfer_sequence.json`'s order), the next once the previous object is
    /// complete or given up; `false`: requests as the page load discovers objects.
    pub sequential: bool,
    /// How long the client waits, after an unreliable object's response ended, for chunks
    /// still on their way before it gives the object up: `None` is the reproduction spec's
    /// PR-3 rule, max(2·SRTT, 10 ms), since its last chunk; `Some(t)`: `t` since its last
    /// chunk (0: at the end of the response).
    pub end_idle_ns: Option<u64>,
    /// How the browser reaches the page's servers: one connection for everything (the
    /// default, as the CATS, PriorityBucket and thesis experiments load pages), or a
    /// connection per origin with DNS, TLS and server time ([`BrowserModel`]).
    pub browser: BrowserModel,
    /// With recorded gaps ([`DiscoveryConfig::recorded_gaps`]), each object's
    /// [`triage_web::RecordedGate`]: it is requested once its parent is found and its gates are
    /// processed, its processing gap (scaled) later. Empty otherwise.
    pub gates: Vec<triage_web::RecordedGate>,
    /// Per object, the objects whose gates include it (the reverse of `gates`).
    pub gated_by: Vec<Vec<u32>>,
}

/// How a page-loading client connects, as a browser does (issue: a page model engineers can
/// trust). The default is one connection carrying every object, opened at the flow start, no
/// DNS, no TLS and no server time: a network-only lower bound.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BrowserModel {
    /// Connections of the page load; empty: the flow's one connection carries everything.
    pub groups: Vec<ConnGroup>,
    /// Per object (page order), the index into `groups` of the connection that carries it
    /// (empty when `groups` is).
    pub group_of: Vec<u32>,
    /// Time of a host's DNS lookup before its first connection opens; `None`: twice the
    /// path's base round-trip time (Lantern's `DNSCache`, `DNS_RESOLUTION_RTT_MULTIPLIER` = 2).
    /// A host's later connections wait for the same lookup, never for a second one.
    pub dns_ns: Option<u64>,
    /// `dns = "recorded"`: each host's lookup as the recording timed it (the longest DNS time
    /// of its requests; 0 for a host the recording did not look up); hosts missing here
    /// take [`BrowserModel::dns_ns`].
    pub recorded_dns_ns: Option<std::collections::BTreeMap<String, u64>>,
    /// `connect = "recorded"`: per group, how much longer than its handshakes' round trips
    /// the recording's connection took to open ([`triage_web::netinfer::connect_extra_ns`];
    /// the longest of its objects'; 0 when the recording opened none): certificate work on
    /// either end, a slow server. The simulated connection waits that long after its DNS
    /// lookup, then runs its handshakes on the simulated path. Empty: the handshakes alone.
    pub connect_extra_ns: Vec<u64>,
    /// TCP mode, on connections to https origins: the TLS 1.3 handshake (RFC 8446 §2) as
    /// two messages after the TCP handshake, the client's ClientHello and the server's flight
    /// (ServerHello to Finished, with the certificate chain); requests follow the server's
    /// flight (the client's Finished travels with the first request and is not counted).
    /// QUIC mode carries TLS in its own handshake and ignores this.
    pub tls: bool,
    /// Bytes of the ClientHello.
    pub tls_client_hello_bytes: u64,
    /// Bytes of the server's handshake flight.
    pub tls_server_flight_bytes: u64,
    /// Per object (page order), how long the server takes before it writes the response
    /// (its think time); empty: none.
    pub server_ns: Vec<u64>,
    /// Per object (page order), how long the browser holds its request before sending it (the
    /// recording's stall); empty: none.
    pub stall_ns: Vec<u64>,
    /// Chrome's request throttling for servers without HTTP/2 or HTTP/3 priorities
    /// (`ResourceScheduler`): a *delayable* request (DevTools priority Medium or lower, net
    /// LOW and below) to an HTTP/1.1 origin waits while 10 delayable requests are in flight,
    /// or 1 while a layout-blocking request (High or VeryHigh) is ("tight mode").
    pub throttle: bool,
    /// Main-thread CPU time per object (page order), as the durations of the tasks that
    /// process it, already scaled by the CPU slowdown ([`triage_web::cputrace`]); empty: no
    /// CPU model. One main thread runs them: an object's tasks start when it has arrived and
    /// the thread is free. A script's or stylesheet's children are requested once it is
    /// processed (an HTML document's as it arrives: the preload scanner needs no main
    /// thread), and the page metrics count an object when it is processed.
    pub cpu_tasks: Vec<Vec<MainTask>>,
    /// What Chrome observed while recording, from the trace: Lantern's LCP and Speed Index
    /// use it ([`triage_web::qoe::lantern`]); `None` without a trace.
    pub observed: Option<triage_web::cputrace::Observed>,
    /// Streaming HTML discovery (`[flows.browser] streaming = true`): per object (page
    /// order), how many bytes of its parent's response must have arrived before the browser
    /// finds it ([`triage_web::Page::discovery_offsets_bytes`]: children of HTML documents,
    /// placed where the recording requested them); `None`: once the whole parent has arrived
    /// (and, with a CPU model, been processed). The client asks its connection for the
    /// parent's next offset ([`triage_core::Endpoint::watch_message_bytes`]) and requests the
    /// child when those bytes are in, plus the usual discovery delay and stall. Empty: off,
    /// every child waits for its whole parent.
    pub stream_offsets_bytes: Vec<Option<u64>>,
}

/// One main-thread task of the CPU model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MainTask {
    /// Its length (ns, scaled by the CPU slowdown).
    pub ns: u64,
    /// It performed layout (Lantern's layout-based Speed Index weighs these).
    pub layout: bool,
    /// The page object it processes (page order).
    pub object: u32,
    /// When the recording started it (ns from the trace's time origin).
    pub recorded_start_ns: u64,
}

/// One connection of a page load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnGroup {
    /// `scheme://host[:port]` of the objects it carries (the first object's, when a
    /// recorded connection was coalesced across origins).
    pub origin: String,
    /// The host looked up in DNS before it opens.
    pub host: String,
    /// An https origin: TLS runs over it (TCP mode, when [`BrowserModel::tls`] is on).
    pub https: bool,
    /// HTTP/1.1: one request at a time, the next once the previous response is complete.
    pub http1: bool,
}

impl BrowserModel {
    /// Default TLS 1.3 sizes: a ClientHello with an X25519 key share (512 bytes) and a
    /// server flight with a two-certificate RSA-2048 chain (4,000 bytes).
    pub const TLS_CLIENT_HELLO_BYTES: u64 = 512;
    /// See [`BrowserModel::TLS_CLIENT_HELLO_BYTES`].
    pub const TLS_SERVER_FLIGHT_BYTES: u64 = 4000;

    /// The connections a browser opens for `page`: over HTTP/2 and HTTP/3 (or an unknown
    /// protocol) one per origin, and one for several origins when the recording shows them
    /// sharing a connection (coalescing, RFC 9113 §9.1.1: same certificate and address);
    /// over HTTP/1.1 the recording's connections (at most 6 per host, as Chrome), or, when
    /// it names none, 6 per origin taken in turn. With DNS, TLS on https origins and no
    /// server time; [`BrowserModel::server_ns`] and the DNS time are the caller's.
    pub fn per_origin(page: &triage_web::Page) -> BrowserModel {
        use triage_web::model::HttpProtocol;
        let objects = page.objects();
        // Coalescing: origins that shared a recorded HTTP/2 or HTTP/3 connection join the
        // first origin seen on it.
        let mut joined: std::collections::BTreeMap<&str, &str> = Default::default();
        let mut first_on: std::collections::BTreeMap<u64, &str> = Default::default();
        for o in objects.iter().filter(|o| o.protocol != Some(HttpProtocol::Http1)) {
            if let Some(id) = o.connection_id {
                let head = *first_on.entry(id).or_insert(o.origin.as_str());
                let rep = joined.get(head).copied().unwrap_or(head);
                joined.entry(o.origin.as_str()).or_insert(rep);
            }
        }
        let mut groups: Vec<ConnGroup> = Vec::new();
        let mut keys: Vec<(String, u64)> = Vec::new();
        let mut turns: std::collections::BTreeMap<&str, u64> = Default::default();
        let mut group_of = Vec::with_capacity(page.len());
        for o in objects {
            let http1 = o.protocol == Some(HttpProtocol::Http1);
            let key = if http1 {
                let n = match o.connection_id {
                    Some(id) => id,
                    None => {
                        let t = turns.entry(o.origin.as_str()).or_insert(0);
                        *t += 1;
                        u64::MAX - (*t - 1) % Self::HTTP1_CONNECTIONS_PER_HOST
                    }
                };
                (o.origin.clone(), n)
            } else {
                (joined.get(o.origin.as_str()).copied().unwrap_or(o.origin.as_str()).to_string(), 0)
            };
            let g = match keys.iter().position(|k| *k == key) {
                Some(g) => g,
                None => {
                    keys.push(key);
                    groups.push(ConnGroup {
                        origin: o.origin.clone(),
                        host: triage_web::urlparts::host(&o.url),
                        https: o.origin.starts_with("https:"),
                        http1,
                    });
                    groups.len() - 1
                }
            };
            group_of.push(g as u32);
        }
        BrowserModel {
            groups,
            group_of,
            dns_ns: None,
            recorded_dns_ns: None,
            connect_extra_ns: Vec::new(),
            tls: true,
            tls_client_hello_bytes: Self::TLS_CLIENT_HELLO_BYTES,
            tls_server_flight_bytes: Self::TLS_SERVER_FLIGHT_BYTES,
            server_ns: Vec::new(),
            stall_ns: Vec::new(),
            throttle: true,
            cpu_tasks: Vec::new(),
            observed: None,
            stream_offsets_bytes: Vec::new(),
        }
    }

    /// Per group of `group_of`, the longest connection set-up time beyond round trips its
    /// objects show ([`BrowserModel::connect_extra_ns`]).
    pub fn recorded_connect_extra_ns(page: &triage_web::Page, group_of: &[u32], groups: usize) -> Vec<u64> {
        let mut v = vec![0u64; groups];
        for (o, &g) in page.objects().iter().zip(group_of) {
            if let Some(t) = v.get_mut(g as usize) {
                let extra = triage_web::netinfer::connect_extra_ns(o.recorded_connect_ns, o.recorded_tls_ns, &o.origin);
                *t = (*t).max(extra);
            }
        }
        v
    }

    /// Delayable requests in flight at most (Chrome's `kMaxNumDelayableRequestsPerClient`).
    pub const MAX_DELAYABLE_IN_FLIGHT: usize = 10;
    /// ... while a layout-blocking request is in flight
    /// (`kMaxNumDelayableWhileLayoutBlockingRequests`).
    pub const MAX_DELAYABLE_WHILE_LAYOUT_BLOCKING: usize = 1;

    /// True if Chrome's scheduler may hold object `k`'s request back: Medium priority or
    /// lower, to an HTTP/1.1 origin.
    pub fn delayable(&self, page: &triage_web::Page, k: usize) -> bool {
        use triage_web::BrowserPriority as P;
        self.throttle
            && self.group_of.get(k).is_some_and(|&g| self.groups[g as usize].http1)
            && page.objects()[k].browser_priority.is_some_and(|p| p <= P::Medium)
    }

    /// True if object `k`'s request keeps Chrome's scheduler in tight mode while in flight:
    /// High or VeryHigh priority.
    pub fn layout_blocking(&self, page: &triage_web::Page, k: usize) -> bool {
        use triage_web::BrowserPriority as P;
        self.throttle && page.objects()[k].browser_priority.is_some_and(|p| p >= P::High)
    }

    /// Chrome's limit of HTTP/1.1 connections per host.
    pub const HTTP1_CONNECTIONS_PER_HOST: u64 = 6;

    /// Each object's server think time from the recording: the time from its request's end
    /// to its response's first byte (HAR `timings.wait`, DevTools `receiveHeadersEnd -
    /// sendEnd`) minus one round trip of the recording's connection to its origin. That
    /// round trip is estimated from the connections the recording opened to the origin: the
    /// shortest connect time, over two (TCP and TLS 1.3's round trips) for https, over one
    /// for http; an origin whose connections the recording does not show takes the median
    /// of the others'. 0 for objects without a recorded wait.
    pub fn recorded_server_ns(page: &triage_web::Page) -> Vec<u64> {
        let rtt = triage_web::netinfer::origin_rtts(page);
        let mut all: Vec<u64> = rtt.values().copied().collect();
        all.sort_unstable();
        let median = all.get(all.len() / 2).copied().unwrap_or(0);
        page.objects()
            .iter()
            .map(|o| o.server_wait_ns.saturating_sub(rtt.get(o.origin.as_str()).copied().unwrap_or(median)))
            .collect()
    }

    /// True when the page load uses a pool of connections rather than the flow's one.
    pub fn pooled(&self) -> bool {
        !self.groups.is_empty()
    }

    /// The server's think time for object `k`.
    pub fn server_ns(&self, k: usize) -> u64 {
        self.server_ns.get(k).copied().unwrap_or(0)
    }

    /// Streaming discovery: the offset into its parent at which object `k` is found, when
    /// that is before the parent's last byte (`None`: found when the whole parent is in).
    pub fn stream_offset_bytes(&self, page: &triage_web::Page, k: usize) -> Option<u64> {
        let off = self.stream_offsets_bytes.get(k).copied().flatten()?;
        let parent = page.objects()[k].parent?;
        (off < page.get(parent).wire_bytes.max(1)).then_some(off)
    }

    /// Streaming discovery: the smallest offset into object `parent` at which a child of it
    /// not found yet (`found`, by object) is found before the parent is whole; `None` when
    /// no child is left to find early.
    pub fn next_stream_offset_bytes(
        &self,
        page: &triage_web::Page,
        parent: usize,
        found: &[Option<u64>],
    ) -> Option<u64> {
        if self.stream_offsets_bytes.is_empty() {
            return None;
        }
        page.children(triage_web::ObjectId(parent as u32))
            .iter()
            .filter(|c| found.get(c.index()).is_none_or(|t| t.is_none()))
            .filter_map(|c| self.stream_offset_bytes(page, c.index()))
            .min()
    }
}

impl PageLoad {
    /// A page fetched as a browser discovers it, every object reliable.
    pub fn new(page: Page, request_bytes: u64, discovery: DiscoveryConfig) -> PageLoad {
        let gates = if discovery.recorded_gaps { page.recorded_gates() } else { Vec::new() };
        let mut gated_by = vec![Vec::new(); if gates.is_empty() { 0 } else { page.len() }];
        for (i, g) in gates.iter().enumerate() {
            for &id in &g.gates {
                gated_by[id.index()].push(i as u32);
            }
        }
        PageLoad {
            gates,
            gated_by,
            page,
            request_bytes,
            discovery,
            unreliable: Vec::new(),
            partial: triage_web::PartialConfig::default(),
            sequential: false,
            end_idle_ns: None,
            browser: BrowserModel::default(),
        }
    }

    /// True if object `i` is answered with DATAGRAM chunks.
    pub fn is_unreliable(&self, i: usize) -> bool {
        self.unreliable.get(i).copied().unwrap_or(false)
    }
}

impl PageLoad {
    /// The name of object `i`: its URL without the scheme (host, path and query), whole, so
    /// that objects differing only at their end keep distinct names.
    pub fn object_name(&self, i: usize) -> String {
        let url = &self.page.objects()[i].url;
        let rest = url.split_once("://").map_or(url.as_str(), |x| x.1);
        let path = rest.find('/').map_or("/", |k| &rest[k..]);
        let host = rest.split('/').next().unwrap_or("");
        format!("{host}{path}")
    }
}

impl AppSpec {
    /// The messages this application writes, in write order.
    pub fn messages(&self) -> Vec<MessageSpec> {
        match self {
            AppSpec::Sink => Vec::new(),
            AppSpec::Bulk { bytes } => {
                vec![MessageSpec {
                    name: "bulk".into(),
                    bytes: *bytes,
                    priority: None,
                    at_ns: None,
                    unreliable: false,
                    same_stream_as: None,
                }]
            }
            AppSpec::Messages(m) => m.clone(),
            // Requests and responses are written as the page is discovered, not up front;
            // they are listed here (ids = object ids) so every one is recorded.
            AppSpec::PageClient(p) => (0..p.page.len())
                .map(|i| MessageSpec {
                    name: format!("GET {}", p.object_name(i)),
                    bytes: p.request_bytes,
                    priority: Some(p.page.objects()[i].cats_level),
                    at_ns: None,
                    unreliable: false,
                    same_stream_as: None,
                })
                .collect(),
            AppSpec::PageServer(p) => (0..p.page.len())
                .map(|i| MessageSpec {
                    name: p.object_name(i),
                    bytes: p.page.objects()[i].wire_bytes.max(1),
                    priority: Some(p.page.objects()[i].cats_level),
                    at_ns: None,
                    unreliable: p.is_unreliable(i),
                    same_stream_as: None,
                })
                .collect(),
        }
    }

    /// True when messages are written in response to events, not in list order.
    pub fn is_reactive(&self) -> bool {
        matches!(self, AppSpec::PageClient(_) | AppSpec::PageServer(_))
    }
}
