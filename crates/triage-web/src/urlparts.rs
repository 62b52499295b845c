//! Minimal URL splitting (scheme, host, origin, path, extension, site). Hand-written so that
//! any string, however malformed, gives an answer and never panics.

/// Scheme (lower case) of a URL, or "" if it has none.
pub fn scheme(url: &str) -> String {
    match url.find(':') {
        Some(i) if i > 0 && url[..i].bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) => {
            url[..i].to_ascii_lowercase()
        }
        _ => String::new(),
    }
}

/// The authority part (`host[:port]`, without user info), or "" if none.
fn authority(url: &str) -> &str {
    let rest = match url.find("://") {
        Some(i) => &url[i + 3..],
        None => match url.strip_prefix("//") {
            Some(r) => r,
            None => return "",
        },
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let auth = &rest[..end];
    match auth.rfind('@') {
        Some(i) => &auth[i + 1..],
        None => auth,
    }
}

/// Host in lower case, without port or brackets' contents changed; "" if none.
pub fn host(url: &str) -> String {
    let auth = authority(url);
    let host = if auth.starts_with('[') {
        match auth.find(']') {
            Some(i) => &auth[..=i],
            None => auth,
        }
    } else {
        match auth.rfind(':') {
            Some(i) => &auth[..i],
            None => auth,
        }
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// `scheme://host[:port]` in lower case; for URLs without an authority, `scheme:`.
pub fn origin(url: &str) -> String {
    let s = scheme(url);
    let auth = authority(url);
    if auth.is_empty() {
        format!("{s}:")
    } else {
        format!("{s}://{}", auth.to_ascii_lowercase())
    }
}

/// Path without query or fragment ("/" if empty).
pub fn path(url: &str) -> &str {
    let rest = match url.find("://") {
        Some(i) => &url[i + 3..],
        None => url,
    };
    let start = match rest.find('/') {
        Some(i) => i,
        None => return "/",
    };
    let p = &rest[start..];
    let end = p.find(['?', '#']).unwrap_or(p.len());
    &p[..end]
}

/// Lower-case file extension of the last path segment, if any (at most 8 characters).
pub fn extension(url: &str) -> Option<String> {
    let p = path(url);
    let last = p.rsplit('/').next().unwrap_or("");
    let dot = last.rfind('.')?;
    let ext = &last[dot + 1..];
    (!ext.is_empty() && ext.len() <= 8 && ext.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then(|| ext.to_ascii_lowercase())
}

/// Registrable domain ("site") of a host: the public suffix plus one label, by the Public
/// Suffix List (<https://publicsuffix.org/list/>, ICANN and private sections, as browsers
/// use it for "site"), compiled into the `psl` crate; the version in use is
/// [`PUBLIC_SUFFIX_LIST`]. A host that is itself a public suffix, an IP address or a single
/// label is its own site. Lower case.
pub fn site(host: &str) -> String {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    if h.starts_with('[') || h.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return h;
    }
    match psl::domain_str(&h) {
        Some(d) => d.to_string(),
        None => h,
    }
}

/// The Public Suffix List in use: the `psl` crate's version (its patch number counts the
/// list's updates).
pub const PUBLIC_SUFFIX_LIST: &str = "psl 2.1.247";

/// Registrable domains that belong to one owner, who serves a site from several of them (its
/// own CDN or asset domains). A page's objects on any domain of its root's group are first
/// party. Small on purpose: each group is a publisher and the asset domains its pages load
/// render-critical files from. Sources: third-party-web 0.30.0 (the list [`crate::trackers`]
/// uses) puts facebook.com/fbcdn.net/facebook.net/fbsbx.com in one entity (Facebook),
/// youtube.com/ytimg.com/ggpht.com/youtube-nocookie.com in one (YouTube), and www.gstatic.com
/// and googleapis.com under the company Google; the others are from the recordings and the
/// publishers' own pages: nytimes.com loads its stylesheets from a1.nyt.com (the thesis §5.5
/// names a1/g1/static01.nyt.com), bbc.com from static.bbci.co.uk and static.bbc.co.uk
/// (../shared/data/pages/bbc.com.devtools.har), github.com from assets-cdn.github.com and
/// githubassets.com, wikipedia.org from upload.wikimedia.org, twitter.com from twimg.com.
pub const SAME_OWNER: &[&[&str]] = &[
    &["nytimes.com", "nyt.com"],
    &["bbc.com", "bbc.co.uk", "bbci.co.uk"],
    &["facebook.com", "fbcdn.net", "facebook.net", "fbsbx.com"],
    &["youtube.com", "ytimg.com", "ggpht.com", "youtube-nocookie.com"],
    &["google.com", "gstatic.com", "googleapis.com", "googleusercontent.com"],
    &["github.com", "githubassets.com", "githubusercontent.com"],
    &["wikipedia.org", "wikimedia.org"],
    &["twitter.com", "x.com", "twimg.com"],
];

/// True if two sites (registrable domains, [`site`]) have one owner: equal, or in one group
/// of [`SAME_OWNER`].
pub fn same_owner(site_a: &str, site_b: &str) -> bool {
    site_a.eq_ignore_ascii_case(site_b)
        || SAME_OWNER.iter().any(|g| {
            g.iter().any(|d| d.eq_ignore_ascii_case(site_a)) && g.iter().any(|d| d.eq_ignore_ascii_case(site_b))
        })
}

/// True if `host` is `domain` or a subdomain of it.
pub fn host_matches(host: &str, domain: &str) -> bool {
    let domain = domain.trim_start_matches("*.").trim_start_matches('.');
    let (h, d) = (host.as_bytes(), domain.as_bytes());
    !d.is_empty()
        && (h.eq_ignore_ascii_case(d)
            || (h.len() > d.len()
                && h[h.len() - d.len() - 1] == b'.'
                && h[h.len() - d.len()..].eq_ignore_ascii_case(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_urls() {
        let u = "https://user@Cdn.Example.co.uk:8443/a/b/app.min.JS?x=1#f";
        assert_eq!(scheme(u), "https");
        assert_eq!(host(u), "cdn.example.co.uk");
        assert_eq!(origin(u), "https://cdn.example.co.uk:8443");
        assert_eq!(path(u), "/a/b/app.min.JS");
        assert_eq!(extension(u).as_deref(), Some("js"));
        assert_eq!(site(&host(u)), "example.co.uk");
        assert_eq!(site("www.google-analytics.com"), "google-analytics.com");
        assert_eq!(site("10.0.0.1"), "10.0.0.1");
        assert_eq!(origin("data:image/png;base64,xx"), "data:");
        assert_eq!(host("data:image/png;base64,xx"), "");
        assert_eq!(extension("https://a.com/"), None);
        assert!(host_matches("stats.g.doubleclick.net", "doubleclick.net"));
        assert!(!host_matches("notdoubleclick.net", "doubleclick.net"));
        assert!(host_matches("doubleclick.net", "*.doubleclick.net"));
    }

    #[test]
    fn sites_follow_the_public_suffix_list() {
        // com.ar is a public suffix: cdn.example.com.ar is not the site of www.shop.com.ar.
        assert_eq!(site("www.shop.com.ar"), "shop.com.ar");
        assert_eq!(site("cdn.example.com.ar"), "example.com.ar");
        assert_ne!(site("cdn.example.com.ar"), site("www.shop.com.ar"));
        assert_eq!(site("static.bbc.co.uk"), "bbc.co.uk");
        assert_eq!(site("a.b.example.com"), "example.com");
        // Private-section suffixes separate sites too (two github.io users are two sites).
        assert_eq!(site("alice.github.io"), "alice.github.io");
        assert_ne!(site("alice.github.io"), site("bob.github.io"));
        // A public suffix, a single label and an address are their own site.
        assert_eq!(site("com.ar"), "com.ar");
        assert_eq!(site("localhost"), "localhost");
        assert_eq!(site("[::1]"), "[::1]");
        assert_eq!(site("WWW.Example.COM."), "example.com");
    }

    #[test]
    fn same_owner_groups() {
        assert!(same_owner(&site("a1.nyt.com"), &site("www.nytimes.com")));
        assert!(same_owner("bbci.co.uk", "bbc.com"));
        assert!(same_owner("example.com", "example.com"));
        assert!(!same_owner("nyt.com", "bbc.com"));
        assert!(!same_owner("google-analytics.com", "google.com"));
    }
}
