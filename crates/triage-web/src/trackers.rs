//! Built-in list of well-known analytics, tracking and advertising domains (CATS Table I's
//! "Analytics/Tracking (P4)" group; the thesis's "Ads/Analytics" category, §5.3.2 and §5.4.4,
//! which names e.g. pagead2.googlesyndication.com). A host matches a domain if it is that
//! domain or a subdomain of it. Extend it with rules (`tracker = true`).

use crate::urlparts;

/// The built-in domains, sorted.
pub const TRACKER_DOMAINS: &[&str] = &[
    "2mdn.net",
    "33across.com",
    "adform.net",
    "adnxs.com",
    "adroll.com",
    "ads-twitter.com",
    "adsafeprotected.com",
    "adservice.google.com",
    "adsrvr.org",
    "adsymptotic.com",
    "agkn.com",
    "amazon-adsystem.com",
    "amplitude.com",
    "analytics.tiktok.com",
    "analytics.twitter.com",
    "analytics.yahoo.com",
    "appdynamics.com",
    "bat.bing.com",
    "bidswitch.net",
    "bkrtx.com",
    "bluekai.com",
    "bounceexchange.com",
    "branch.io",
    "casalemedia.com",
    "chartbeat.com",
    "chartbeat.net",
    "clarity.ms",
    "contentsquare.net",
    "crazyegg.com",
    "criteo.com",
    "criteo.net",
    "ct.pinterest.com",
    "decibelinsight.net",
    "demdex.net",
    "doubleclick.net",
    "doubleverify.com",
    "ensighten.com",
    "everesttech.net",
    "exelator.com",
    "facebook.net",
    "fullstory.com",
    "go-mpulse.net",
    "google-analytics.com",
    "googleadservices.com",
    "googlesyndication.com",
    "googletagmanager.com",
    "googletagservices.com",
    "hotjar.com",
    "hs-analytics.net",
    "indexww.com",
    "kampyle.com",
    "krxd.net",
    "linkedin.oribi.io",
    "mathtag.com",
    "maxymiser.net",
    "mc.yandex.ru",
    "mixpanel.com",
    "moatads.com",
    "mouseflow.com",
    "newrelic.com",
    "nr-data.net",
    "omtrdc.net",
    "openx.net",
    "optimizely.com",
    "oracleinfinity.io",
    "outbrain.com",
    "pubmatic.com",
    "px.ads.linkedin.com",
    "quantcount.com",
    "quantserve.com",
    "rlcdn.com",
    "rubiconproject.com",
    "scorecardresearch.com",
    "segment.com",
    "segment.io",
    "sharethrough.com",
    "smartadserver.com",
    "snap.licdn.com",
    "steelhousemedia.com",
    "taboola.com",
    "tapad.com",
    "teads.tv",
    "tealiumiq.com",
    "tiqcdn.com",
    "tr.snapchat.com",
    "turn.com",
    "yieldmo.com",
    "zemanta.com",
];

/// True if `host` is on the built-in tracking and advertising list.
pub fn is_tracker_host(host: &str) -> bool {
    TRACKER_DOMAINS.iter().any(|d| urlparts::host_matches(host, d))
}

/// True if the URL's host is on the list, or the URL is a well-known beacon path on a
/// first-party host (`/collect`, `/gen_204`, `/beacon`, `/pixel`).
pub fn is_tracker_url(url: &str) -> bool {
    if is_tracker_host(&urlparts::host(url)) {
        return true;
    }
    // The last non-empty path segment: `facebook.com/tr/?id=...` has the path `/tr/`.
    let p = urlparts::path(url).to_ascii_lowercase();
    let last = p.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    matches!(last, "collect" | "gen_204" | "beacon" | "pixel" | "pixel.gif" | "tr")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_and_matches() {
        assert!(TRACKER_DOMAINS.windows(2).all(|w| w[0] < w[1]), "keep TRACKER_DOMAINS sorted");
        assert!(is_tracker_url("https://www.google-analytics.com/analytics.js"));
        assert!(is_tracker_url("https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js"));
        assert!(is_tracker_url("https://www.google.se/gen_204?atyp=i"));
        assert!(is_tracker_url("https://www.facebook.com/tr/?id=1&ev=PageView"));
        assert!(is_tracker_url("https://www.facebook.com/tr?id=1"));
        assert!(!is_tracker_url("https://a.com/"));
        assert!(!is_tracker_url("https://www.wikipedia.org/portal/app.js"));
        assert!(!is_tracker_url("https://fonts.gstatic.com/s/x.woff2"));
    }
}
