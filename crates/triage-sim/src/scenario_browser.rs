//! `[flows.browser]`: how a page-loading client connects, as a browser does — its connections
//! (one, or one per origin), DNS, TLS, the server's think time, a trace's CPU time and
//! streaming HTML discovery ([`BrowserModel`]).

use serde::{Deserialize, Serialize};

use crate::app::{BrowserModel, ConnGroup};
use crate::sim::MAX_PAGE_CONNECTIONS;
use crate::units::{Duration, Size};

/// The `[flows.browser]` table. Without it a page load uses the flow's one connection,
/// opened at the flow start, with no DNS, no TLS and no server time.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserToml {
    /// `"per-origin"` (default): a connection per origin, as HTTP/2 and HTTP/3 browsers
    /// open them; `"single"`: one connection for every object (DNS, TLS and server time
    /// still apply to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<String>,
    /// A host's DNS lookup before its first connection: `"auto"` (default, twice the path's
    /// base round-trip time, as Lantern assumes), `"recorded"` (the recording's, per host) or
    /// a duration (`"0ms"`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<String>,
    /// TLS 1.3 over TCP to https origins (default true; QUIC mode has TLS in its handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<bool>,
    /// Bytes of the ClientHello (default 512).
    #[serde(default)]
    #[serde(
        rename(serialize = "tls_client_hello_bytes"),
        alias = "tls_client_hello_bytes",
        serialize_with = "crate::scenario_resolved::ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub tls_client_hello: Option<Size>,
    /// Bytes of the server's handshake flight, certificates included (default 4000).
    #[serde(default)]
    #[serde(
        rename(serialize = "tls_server_flight_bytes"),
        alias = "tls_server_flight_bytes",
        serialize_with = "crate::scenario_resolved::ser::opt_base",
        skip_serializing_if = "Option::is_none"
    )]
    pub tls_server_flight: Option<Size>,
    /// The server's think time before each response: `"none"` (default), `"recorded"` (each
    /// object's recorded wait minus a round trip, [`BrowserModel::recorded_server_ns`]) or a
    /// duration for every response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_time: Option<String>,
    /// How long the browser holds each request before its DNS lookup, connection or send:
    /// `"none"` (default) or `"recorded"` (each object's recorded stall,
    /// [`triage_web::WebObject::recorded_stall_ns`]: Chrome's queueing in the recording's own
    /// environment, what `triage page simulate --profile recorded` replays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<String>,
    /// How long opening a connection takes: `"auto"` (default: its round trips, TCP's and on
    /// https TLS 1.3's) or `"recorded"` (those plus what the recording's connection took
    /// beyond its own round trips, [`BrowserModel::connect_extra_ns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<String>,
    /// A Chrome trace of the recorded load (Lighthouse's `trace.json`): its main-thread
    /// tasks become each object's CPU time ([`triage_web::cputrace`]). Relative to the
    /// scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Multiplier of the trace's CPU time (default 1; Lighthouse's mobile slowdown is 4),
    /// 0 to 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_slowdown: Option<f64>,
    /// Streaming HTML discovery (default false): a child of an HTML document is requested
    /// when the parent's bytes up to its place have arrived (where the recording requested
    /// it, [`triage_web::Page::discovery_offsets_bytes`]), as Chrome's preload scanner and
    /// parser find resources while the document streams in; false: when the whole parent
    /// has arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
}

impl BrowserToml {
    /// The browser model for `page`, or the field (under `[flows.browser]`) and what was
    /// expected.
    pub fn to_model(
        &self,
        page: &triage_web::Page,
        base_dir: Option<&std::path::Path>,
    ) -> Result<BrowserModel, (String, String)> {
        let mut m = match self.connections.as_deref().unwrap_or("per-origin") {
            "per-origin" => BrowserModel::per_origin(page),
            "single" => {
                let mut m = BrowserModel::per_origin(page);
                let root = m.groups.first().cloned().unwrap_or(ConnGroup {
                    origin: String::new(),
                    host: String::new(),
                    https: false,
                    http1: false,
                });
                m.groups = vec![root];
                m.group_of = vec![0; page.len()];
                m
            }
            other => {
                return Err(("connections".into(), format!("expected \"per-origin\" or \"single\", got {other:?}")))
            }
        };
        if m.groups.len() > MAX_PAGE_CONNECTIONS {
            return Err((
                "connections".into(),
                format!(
                    "the page has {} origins; a page load opens at most {MAX_PAGE_CONNECTIONS} connections",
                    m.groups.len()
                ),
            ));
        }
        m.dns_ns = match self.dns.as_deref() {
            None | Some("auto") => None,
            Some("recorded") => {
                // Every lookup the recording made: its objects' and its navigation redirects'.
                let lookups = page.objects().iter().map(|o| (&o.url, o.recorded_dns_ns));
                let hops = page.navigation_redirects().iter().map(|h| (&h.url, h.recorded_dns_ns));
                let mut by_host = std::collections::BTreeMap::new();
                for (url, dns_ns) in lookups.chain(hops) {
                    let t = by_host.entry(triage_web::urlparts::host(url)).or_insert(0u64);
                    *t = (*t).max(dns_ns);
                }
                m.recorded_dns_ns = Some(by_host);
                None
            }
            Some(s) => Some(
                s.parse::<Duration>()
                    .map_err(|e| ("dns".to_string(), format!("expected \"auto\", \"recorded\" or a duration: {e}")))?
                    .0,
            ),
        };
        m.tls = self.tls.unwrap_or(true);
        if let Some(s) = self.tls_client_hello {
            m.tls_client_hello_bytes = s.0.max(1);
        }
        if let Some(s) = self.tls_server_flight {
            m.tls_server_flight_bytes = s.0.max(1);
        }
        m.server_ns = match self.server_time.as_deref() {
            None | Some("none") => Vec::new(),
            Some("recorded") => BrowserModel::recorded_server_ns(page),
            Some(s) => {
                let d = s.parse::<Duration>().map_err(|e| {
                    ("server_time".to_string(), format!("expected \"recorded\", \"none\" or a duration: {e}"))
                })?;
                vec![d.0; page.len()]
            }
        };
        m.stall_ns = match self.stall.as_deref() {
            None | Some("none") => Vec::new(),
            Some("recorded") => page.objects().iter().map(|o| o.recorded_stall_ns).collect(),
            Some(other) => return Err(("stall".into(), format!("expected \"none\" or \"recorded\", got {other:?}"))),
        };
        match self.connect.as_deref() {
            None | Some("auto") => {}
            Some("recorded") => {
                m.connect_extra_ns = BrowserModel::recorded_connect_extra_ns(page, &m.group_of, m.groups.len())
            }
            Some(other) => return Err(("connect".into(), format!("expected \"auto\" or \"recorded\", got {other:?}"))),
        }
        if self.streaming == Some(true) {
            m.stream_offsets_bytes = page.discovery_offsets_bytes();
        }
        let slowdown = self.cpu_slowdown.unwrap_or(1.0);
        if !(0.0..=100.0).contains(&slowdown) {
            return Err(("cpu_slowdown".into(), format!("expected 0 to 100, got {slowdown}")));
        }
        match &self.trace {
            None if self.cpu_slowdown.is_some() => {
                return Err(("cpu_slowdown".into(), "scales a trace's CPU time: give `trace` too".into()))
            }
            None => {}
            Some(t) => {
                let path = crate::scenario::resolve(std::path::Path::new(t), base_dir);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| ("trace".to_string(), format!("{}: {e}", path.display())))?;
                let cpu = triage_web::cputrace::cpu_tasks(&text, page)
                    .map_err(|e| ("trace".to_string(), format!("{}: {e}", path.display())))?;
                let permille = (slowdown * 1000.0).round() as u128;
                m.cpu_tasks = cpu
                    .per_object
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        v.iter()
                            .map(|t| crate::app::MainTask {
                                ns: (u128::from(t.dur_ns) * permille / 1000).min(u128::from(u64::MAX)) as u64,
                                layout: t.layout,
                                object: k as u32,
                                recorded_start_ns: t.recorded_start_ns,
                            })
                            .collect()
                    })
                    .collect();
                m.observed = Some(cpu.observed);
            }
        }
        Ok(m)
    }
}
