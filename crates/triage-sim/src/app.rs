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
}

impl PageLoad {
    /// A page fetched as a browser discovers it, every object reliable.
    pub fn new(page: Page, request_bytes: u64, discovery: DiscoveryConfig) -> PageLoad {
        PageLoad {
            page,
            request_bytes,
            discovery,
            unreliable: Vec::new(),
            partial: triage_web::PartialConfig::default(),
            sequential: false,
            end_idle_ns: None,
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
