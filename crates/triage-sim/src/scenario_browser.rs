//! `[flows.browser]`: how a page-loading client connects, as a browser does — its connections
//! (one, or one per origin), DNS, TLS and the server's think time ([`BrowserModel`]).

use serde::Deserialize;

use crate::app::{BrowserModel, ConnGroup};
use crate::sim::MAX_PAGE_CONNECTIONS;
use crate::units::{Duration, Size};

/// The `[flows.browser]` table. Without it a page load uses the flow's one connection,
/// opened at the flow start, with no DNS, no TLS and no server time.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserToml {
    /// `"per-origin"` (default): a connection per origin, as HTTP/2 and HTTP/3 browsers
    /// open them; `"single"`: one connection for every object (DNS, TLS and server time
    /// still apply to it).
    #[serde(default)]
    pub connections: Option<String>,
    /// A host's DNS lookup before its first connection: `"auto"` (default, twice the path's
    /// base round-trip time, as Lantern assumes) or a duration (`"0ms"`: none).
    #[serde(default)]
    pub dns: Option<String>,
    /// TLS 1.3 over TCP to https origins (default true; QUIC mode has TLS in its handshake).
    #[serde(default)]
    pub tls: Option<bool>,
    /// Bytes of the ClientHello (default 512).
    #[serde(default)]
    pub tls_client_hello: Option<Size>,
    /// Bytes of the server's handshake flight, certificates included (default 4000).
    #[serde(default)]
    pub tls_server_flight: Option<Size>,
    /// The server's think time before each response: `"none"` (default), `"recorded"` (each
    /// object's recorded wait minus a round trip, [`BrowserModel::recorded_server_ns`]) or a
    /// duration for every response.
    #[serde(default)]
    pub server_time: Option<String>,
}

impl BrowserToml {
    /// The browser model for `page`, or the field (under `[flows.browser]`) and what was
    /// expected.
    pub fn to_model(&self, page: &triage_web::Page) -> Result<BrowserModel, (String, String)> {
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
                return Err((
                    "connections".into(),
                    format!("expected \"per-origin\" or \"single\", got {other:?}"),
                ))
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
            Some(s) => Some(
                s.parse::<Duration>()
                    .map_err(|e| ("dns".to_string(), format!("expected \"auto\" or a duration: {e}")))?
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
                let d = s
                    .parse::<Duration>()
                    .map_err(|e| ("server_time".to_string(), format!("expected \"recorded\", \"none\" or a duration: {e}")))?;
                vec![d.0; page.len()]
            }
        };
        Ok(m)
    }
}
