//! Tracking and advertising hosts (CATS Table I's "Analytics/Tracking (P4)" group; the
//! thesis's "Ads/Analytics" category, §5.3.2 and §5.4.4, which names e.g.
//! pagead2.googlesyndication.com).
//!
//! The list is **third-party-web** ([`THIRD_PARTY_WEB_VERSION`], npm `third-party-web`, MIT,
//! by Patrick Hulce, <https://github.com/patrickhulce/third-party-web>; Lighthouse uses it to
//! name third parties): `data/third-party-web.tsv` (domain pattern, entity, category), which
//! `scripts/update-third-party-web.sh` regenerates from the package. A host belongs to the
//! entity of its exact pattern, else of the longest `*.domain` pattern it is under, as the
//! package's own finder does. Its categories map onto the tracker flag like this:
//!
//! | third-party-web category | tracker |
//! | --- | --- |
//! | `ad`, `analytics`, `tag-manager` | yes |
//! | `social`, `customer-success`, `marketing`, `consent-provider`, `utility` (incl. RUM monitoring), `video`, `content`, `cdn`, `hosting`, `other` | no |
//!
//! Social entities (Facebook, Twitter, Pinterest, TikTok, LinkedIn) serve page content too
//! (embedded posts, widgets, the network's own site), so a whole social domain is not a
//! tracker; their beacons are, by path (`facebook.com/tr/`).
//!
//! [`EXTRA_TRACKER_DOMAINS`] keeps the hand-written domains third-party-web has no entry
//! for, and [`is_tracker_url`] adds well-known beacon paths on any host (`/collect`,
//! `/gen_204`, `/beacon`, `/pixel`, `/tr`). Extend with rules (`tracker = true`).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::urlparts;

/// The third-party-web list, as the update script writes it.
const THIRD_PARTY_WEB_TSV: &str = include_str!("../data/third-party-web.tsv");

/// Version of third-party-web the list was derived from.
pub const THIRD_PARTY_WEB_VERSION: &str = "0.30.0";

/// Hand-written tracker domains third-party-web 0.30.0 has no entry for (a host matches a
/// domain if it is that domain or a subdomain of it). Sorted.
pub const EXTRA_TRACKER_DOMAINS: &[&str] = &["oracleinfinity.io"];

/// A third-party-web entity of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entity {
    /// Entity name (`Google Analytics`, `Facebook`).
    pub name: &'static str,
    /// third-party-web category (`ad`, `analytics`, `social`, `tag-manager`, `utility`, ...).
    pub category: &'static str,
}

struct List {
    exact: HashMap<&'static str, Entity>,
    wildcard: HashMap<&'static str, Entity>,
    version: &'static str,
}

fn list() -> &'static List {
    static LIST: OnceLock<List> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut l = List { exact: HashMap::new(), wildcard: HashMap::new(), version: "" };
        for line in THIRD_PARTY_WEB_TSV.lines() {
            if let Some(v) = line.strip_prefix("# version: ") {
                l.version = v.trim();
            }
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let mut cells = line.split('\t');
            let (Some(pattern), Some(name), Some(category)) = (cells.next(), cells.next(), cells.next()) else {
                continue;
            };
            let entity = Entity { name, category };
            match pattern.strip_prefix("*.") {
                Some(domain) => l.wildcard.entry(domain).or_insert(entity),
                None => l.exact.entry(pattern).or_insert(entity),
            };
        }
        l
    })
}

/// The version recorded in the list file (the `# version:` line).
pub fn list_version() -> &'static str {
    list().version
}

/// Number of domain patterns in the list.
pub fn list_len() -> usize {
    let l = list();
    l.exact.len() + l.wildcard.len()
}

/// The third-party-web entity of a host (lower case), if the list has one.
pub fn entity(host: &str) -> Option<Entity> {
    let l = list();
    let host = host.trim_end_matches('.');
    if let Some(e) = l.exact.get(host) {
        return Some(*e);
    }
    let mut rest = host;
    loop {
        if let Some(e) = l.wildcard.get(rest) {
            return Some(*e);
        }
        match rest.find('.') {
            Some(i) => rest = &rest[i + 1..],
            None => return None,
        }
    }
}

/// True for the categories that make a host a tracker wherever it is loaded.
fn tracking_category(category: &str) -> bool {
    matches!(category, "ad" | "analytics" | "tag-manager")
}

/// True if `host` is a tracker: a third-party-web entity of category `ad`, `analytics` or
/// `tag-manager`, or (for hosts the list lacks) one of [`EXTRA_TRACKER_DOMAINS`].
pub fn is_tracker_host(host: &str) -> bool {
    match entity(host) {
        Some(e) => tracking_category(e.category),
        None => EXTRA_TRACKER_DOMAINS.iter().any(|d| urlparts::host_matches(host, d)),
    }
}

/// True if the URL's host is a tracker ([`is_tracker_host`]), or the URL is a well-known
/// beacon path on any host (`/collect`, `/gen_204`, `/beacon`, `/pixel`, `/tr`; the last
/// non-empty path segment, so `facebook.com/tr/?id=...` counts).
pub fn is_tracker_url(url: &str) -> bool {
    is_tracker_host(&urlparts::host(url)) || is_beacon_url(url)
}

/// True if the URL is a well-known beacon path on any host: its last non-empty path segment
/// is `collect`, `gen_204`, `beacon`, `pixel`, `pixel.gif` or `tr`.
pub fn is_beacon_url(url: &str) -> bool {
    // The last non-empty path segment: `facebook.com/tr/?id=...` has the path `/tr/`.
    let p = urlparts::path(url).to_ascii_lowercase();
    let last = p.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    matches!(last, "collect" | "gen_204" | "beacon" | "pixel" | "pixel.gif" | "tr")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_third_party_web() {
        assert_eq!(list_version(), THIRD_PARTY_WEB_VERSION);
        assert_eq!(list_len(), 3132);
        assert!(EXTRA_TRACKER_DOMAINS.windows(2).all(|w| w[0] < w[1]), "keep EXTRA_TRACKER_DOMAINS sorted");
        for d in EXTRA_TRACKER_DOMAINS {
            assert_eq!(entity(d), None, "{d} is in third-party-web now: drop it from the extras");
        }
        assert_eq!(entity("www.google-analytics.com").map(|e| e.category), Some("analytics"));
        assert_eq!(entity("stats.g.doubleclick.net").map(|e| e.name), Some("Google/Doubleclick Ads"));
        assert_eq!(entity("fonts.gstatic.com").map(|e| e.category), Some("cdn"));
        assert_eq!(entity("example.org"), None);
    }

    #[test]
    fn trackers_match() {
        assert!(is_tracker_url("https://www.google-analytics.com/analytics.js"));
        assert!(is_tracker_url("https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js"));
        assert!(is_tracker_url("https://www.googletagmanager.com/gtm.js?id=GTM-1"));
        assert!(is_tracker_url("https://www.google.se/gen_204?atyp=i"));
        assert!(is_tracker_url("https://www.facebook.com/tr/?id=1&ev=PageView"));
        assert!(is_tracker_url("https://www.facebook.com/tr?id=1"));
        assert!(is_tracker_url("https://dc.oracleinfinity.io/v3/x"));
        assert!(!is_tracker_url("https://a.com/"));
        assert!(!is_tracker_url("https://www.wikipedia.org/portal/app.js"));
        assert!(!is_tracker_url("https://fonts.gstatic.com/s/x.woff2"));
        // Monitoring (utility) and social domains are not trackers; social beacons are.
        assert!(!is_tracker_url("https://cdn.appdynamics.com/adrum/adrum.js"));
        assert_eq!(entity("connect.facebook.net").map(|e| e.category), Some("social"));
        assert!(!is_tracker_url("https://connect.facebook.net/en_US/fbevents.js"));
    }
}
