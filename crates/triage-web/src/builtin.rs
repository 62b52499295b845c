//! Built-in pages from the seed papers, with the sizes they give and, where they give none,
//! the sizes we assume (stated on each page).
//!
//! | name | source | objects |
//! | --- | --- | --- |
//! | `cats` | CATS §III-A | P0 8 KiB critical HTML/CSS, P1 25 KiB CSS framework, P2 40 KiB application JS, P3 60 KiB images, P4 150 KiB analytics |
//! | `bing` | PriorityBucket §5.1 | 1 HTML, 1 image |
//! | `youtube` | PriorityBucket §5.1 | 1 HTML, 2 CSS, 2 JS, 20 images |
//! | `news` | thesis §5.3.2, Table 4 | the per-category average request counts and sizes |
//! | `large` | none: a synthetic page for timing the page model | 300 objects on 17 origins |
//! | `news-v1` ... `news-v6` | thesis §5.7, §5.8.3, Tables 2 and 4 | six versions of a nytimes.com-like page, 156 objects, ≈ 17.5 MB with one video ([`crate::news_versions`]) |

use crate::classify::{self, ContentCategory, Essentialness};
use crate::model::{BrowserPriority, ContentType, FetchPriority, ObjectId, Page, RenderBlocking, WebObject};
use crate::urlparts;

const KIB: u64 = 1024;
/// The thesis writes KB; we read it as 1000 bytes.
const KB: u64 = 1000;

/// Names and one-line descriptions of the built-in pages.
pub const BUILTIN_PAGES: &[(&str, &str)] = &[
    (
        "cats",
        "CATS §III-A page: P0 8 KiB HTML/CSS, P1 25 KiB CSS, P2 40 KiB JS, P3 60 KiB images, P4 150 KiB analytics",
    ),
    ("bing", "PriorityBucket §5.1 Bing: 1 HTML (assumed 60 KiB), 1 image (assumed 150 KiB)"),
    ("youtube", "PriorityBucket §5.1 YouTube: 1 HTML, 2 CSS, 2 JS, 20 images (assumed sizes)"),
    ("news", "thesis Table 4 averages: 129 objects in the eight content categories"),
    ("large", "synthetic 300-object page on 17 origins, for timing the page model (assumed sizes)"),
    ("news-v1", "thesis §5.7 page version 1 of 6: nytimes-like, 156 objects, ~17.5 MB with one video"),
    ("news-v2", "thesis §5.7 page version 2 of 6: nytimes-like, 156 objects, ~17.5 MB with one video"),
    ("news-v3", "thesis §5.7 page version 3 of 6: nytimes-like, 156 objects, ~17.5 MB with one video"),
    ("news-v4", "thesis §5.7 page version 4 of 6: nytimes-like, 156 objects, ~17.5 MB with one video"),
    ("news-v5", "thesis §5.7 page version 5 of 6: nytimes-like, 156 objects, ~17.5 MB with one video"),
    ("news-v6", "thesis §5.7 page version 6 of 6: nytimes-like, 156 objects, ~17.5 MB with one video"),
];

/// A built-in page by name.
pub fn builtin(name: &str) -> Option<Page> {
    match name {
        "cats" => Some(cats_page()),
        "bing" => Some(bing_page()),
        "youtube" => Some(youtube_page()),
        "news" => Some(news_page()),
        "large" => Some(large_page()),
        _ => name.strip_prefix("news-v").and_then(|v| v.parse().ok()).and_then(crate::news_versions::news_version),
    }
}

/// An unclassified object with the given id, parent, URL, type and size (wire = body bytes),
/// first-party relative to nothing; fill further fields and call
/// [`crate::classify::classify`]. Handy for tests and hand-built pages.
pub fn object(id: u32, parent: Option<u32>, url: &str, kind: ContentType, bytes: u64) -> WebObject {
    WebObject {
        id: ObjectId(id),
        url: url.to_string(),
        origin: urlparts::origin(url),
        third_party: false,
        kind,
        mime: String::new(),
        wire_bytes: bytes,
        body_bytes: bytes,
        browser_priority: None,
        fetch_priority: FetchPriority::Auto,
        render_blocking: None,
        parent: parent.map(ObjectId),
        cats_level: 0,
        category: ContentCategory::Others,
        essential: Essentialness::Maybe,
        tracker: false,
        recorded_start_ns: 0,
        recorded_duration_ns: 0,
        from_cache: false,
        redirect: false,
        connection_id: None,
        protocol: None,
        server_wait_ns: 0,
        recorded_connect_ns: 0,
        recorded_tls_ns: 0,
        recorded_initiator: None,
        recorded_dns_ns: 0,
        recorded_stall_ns: 0,
        recorded_response_start_ns: 0,
        reliability: None,
    }
}

/// Builds and classifies a page from (parent, url, type, bytes, priority) rows; object i's id
/// is i; third party is decided against the first row's site.
/// (parent, url, type, bytes, browser priority) of one built-in object.
pub(crate) type Row = (Option<u32>, String, ContentType, u64, Option<BrowserPriority>);

pub(crate) fn build(name: &str, rows: Vec<Row>) -> Page {
    let root_site = urlparts::site(&urlparts::host(&rows[0].1));
    let objects = rows
        .into_iter()
        .enumerate()
        .map(|(i, (parent, url, kind, bytes, prio))| {
            let mut o = object(i as u32, parent, &url, kind, bytes);
            o.third_party = urlparts::site(&urlparts::host(&url)) != root_site;
            o.browser_priority = prio;
            o.mime = mime_of(kind).to_string();
            classify::classify(&mut o);
            o
        })
        .collect();
    match Page::new(name, objects) {
        Ok(p) => p,
        Err(e) => unreachable!("built-in page {name} is invalid: {e}"),
    }
}

fn mime_of(kind: ContentType) -> &'static str {
    match kind {
        ContentType::Html => "text/html",
        ContentType::Css => "text/css",
        ContentType::Js => "application/javascript",
        ContentType::Font => "font/woff2",
        ContentType::Image => "image/jpeg",
        ContentType::Media => "video/mp4",
        ContentType::Json => "application/json",
        ContentType::Other => "application/octet-stream",
    }
}

use BrowserPriority as P;
use ContentType as T;

/// CATS §III-A's page: five groups, one object each, sizes in KiB as
/// `scenarios/cats-fifo.toml` writes them. P1 is served from a CSS-framework CDN (so it is
/// level 1, not critical), P4 from an analytics domain. Every group is a child of the root;
/// the paper's server writes all five at once.
pub fn cats_page() -> Page {
    build(
        "cats",
        vec![
            (None, "https://cats.example/".into(), T::Html, 8 * KIB, Some(P::VeryHigh)),
            (Some(0), "https://cdn.jsdelivr.net/framework.css".into(), T::Css, 25 * KIB, Some(P::VeryHigh)),
            (Some(0), "https://cats.example/app.js".into(), T::Js, 40 * KIB, Some(P::Low)),
            (Some(0), "https://cats.example/images.jpg".into(), T::Image, 60 * KIB, Some(P::Low)),
            (Some(0), "https://www.google-analytics.com/analytics.js".into(), T::Js, 150 * KIB, Some(P::Low)),
        ],
    )
}

/// PriorityBucket §5.1's Bing: "only two web objects, an HTML and an image". Assumed sizes:
/// HTML 60 KiB (compressed), background image 150 KiB.
pub fn bing_page() -> Page {
    build(
        "bing",
        vec![
            (None, "https://www.bing.com/".into(), T::Html, 60 * KIB, Some(P::VeryHigh)),
            (Some(0), "https://www.bing.com/th?id=background.jpg".into(), T::Image, 150 * KIB, Some(P::Low)),
        ],
    )
}

/// PriorityBucket §5.1's YouTube: "one HTML, two CSS, two JavaScript, and twenty image
/// objects". Assumed sizes: HTML 50 KiB; CSS 40 and 15 KiB (render-blocking); JS 300 and
/// 80 KiB; images 20 thumbnails of 12-30 KiB. All discovered by the HTML.
pub fn youtube_page() -> Page {
    let mut rows = vec![
        (None, "https://www.youtube.com/".to_string(), T::Html, 50 * KIB, Some(P::VeryHigh)),
        (Some(0), "https://www.youtube.com/s/desktop/main.css".into(), T::Css, 40 * KIB, Some(P::VeryHigh)),
        (Some(0), "https://www.youtube.com/s/desktop/player.css".into(), T::Css, 15 * KIB, Some(P::VeryHigh)),
        (Some(0), "https://www.youtube.com/s/desktop/app.js".into(), T::Js, 300 * KIB, Some(P::High)),
        (Some(0), "https://www.youtube.com/s/desktop/player.js".into(), T::Js, 80 * KIB, Some(P::Low)),
    ];
    for i in 0..20u64 {
        rows.push((
            Some(0),
            format!("https://i.ytimg.com/vi/video{i:02}/hqdefault.jpg"),
            T::Image,
            (12 + (i * 7) % 19) * KIB,
            Some(if i < 4 { P::High } else { P::Low }),
        ));
    }
    build("youtube", rows)
}

/// A synthetic 300-object page, for timing the page model on a page of the size the issue
/// names (no recording here has 300 objects). All sizes and the structure are assumed: a
/// 60 KiB HTML document on `www.large.example` finds 12 stylesheets (8 render-blocking, 20 KiB
/// each), 40 scripts (30 KiB; the first 4 render-blocking, 10 on three third-party origins), 100
/// images (15 KiB; the first 8 High, in the viewport) on 10 image hosts; its first stylesheet
/// finds 8 fonts (30 KiB); its first script loads 20 more scripts (12 KiB), 100 images
/// (8 KiB, lazily, Low) and 19 JSON responses (2 KiB) from an API origin. 1 + 12 + 40 + 100 +
/// 8 + 20 + 100 + 19 = 300 objects; 17 origins.
pub fn large_page() -> Page {
    let mut rows: Vec<Row> = vec![(None, "https://www.large.example/".into(), T::Html, 60 * KIB, Some(P::VeryHigh))];
    // 1-12: stylesheets (the first 8 render-blocking, VeryHigh; the others print/media, VeryLow).
    for i in 0..12u64 {
        let prio = if i < 8 { P::VeryHigh } else { P::VeryLow };
        rows.push((Some(0), format!("https://static.large.example/css/{i}.css"), T::Css, 20 * KIB, Some(prio)));
    }
    // 13-52: scripts (the first 4 in <head>, High; the last 10 on three third-party origins).
    for i in 0..40u64 {
        let url = if i < 30 {
            format!("https://static.large.example/js/{i}.js")
        } else {
            format!("https://cdn.thirdparty{}.example/tag{i}.js", i % 3)
        };
        rows.push((Some(0), url, T::Js, 30 * KIB, Some(if i < 4 { P::High } else { P::Low })));
    }
    // 53-152: images on ten image hosts (the first 8 in the viewport, High).
    for i in 0..100u64 {
        let url = format!("https://img{}.large.example/photo{i}.jpg", i % 10);
        rows.push((Some(0), url, T::Image, 15 * KIB, Some(if i < 8 { P::High } else { P::Low })));
    }
    // 153-160: fonts, found by the first stylesheet.
    for i in 0..8u64 {
        rows.push((Some(1), format!("https://fonts.large.example/f{i}.woff2"), T::Font, 30 * KIB, Some(P::VeryHigh)));
    }
    // 161-180: scripts the first script loads.
    for i in 0..20u64 {
        rows.push((Some(13), format!("https://static.large.example/js/lazy{i}.js"), T::Js, 12 * KIB, Some(P::Low)));
    }
    // 181-280: lazily loaded images, from the first script.
    for i in 0..100u64 {
        let url = format!("https://img{}.large.example/lazy{i}.jpg", i % 10);
        rows.push((Some(13), url, T::Image, 8 * KIB, Some(P::Low)));
    }
    // 281-299: API responses.
    for i in 0..19u64 {
        rows.push((Some(13), format!("https://api.large.example/v1/item/{i}"), T::Json, 2 * KIB, Some(P::High)));
    }
    let mut page = build("large", rows);
    // Render-blocking: the first 8 stylesheets and the 4 head scripts.
    for o in page.objects_mut() {
        let i = o.id.index();
        o.render_blocking = Some(if (1..=8).contains(&i) || (13..=16).contains(&i) {
            RenderBlocking::Blocking
        } else {
            RenderBlocking::NonBlocking
        });
        o.cats_level = classify::cats_level(o);
    }
    page
}

/// A news page from the thesis's Table 4 averages (§5.3.2): per category, the average number
/// of requests and the average size, read as the category's total (KB = 1000 bytes) split
/// evenly. Others' range 1130-3778 KB is taken at its lower end. Structure (assumed): the root
/// HTML finds 4 iframe documents, 4 stylesheets (2 render-blocking), 5 scripts and all images
/// and other objects; fonts come from the first stylesheet; the first script loads the other
/// 24 scripts, the 16 JSON requests and the 9 ads/analytics objects.
pub fn news_page() -> Page {
    let mut rows: Vec<Row> = Vec::new();
    let add =
        |rows: &mut Vec<_>, n: u64, total_kb: u64, f: &dyn Fn(u64) -> (Option<u32>, String, ContentType, Option<P>)| {
            for i in 0..n {
                let (parent, url, kind, prio) = f(i);
                // Split the total exactly: the first (total % n) objects get one byte more.
                let total = total_kb * KB;
                let size = total / n + u64::from(i < total % n);
                rows.push((parent, url, kind, size, prio));
            }
        };
    add(&mut rows, 5, 238, &|i| {
        if i == 0 {
            (None, "https://news.example/".into(), T::Html, Some(P::VeryHigh))
        } else {
            (Some(0), format!("https://news.example/embed/{i}.html"), T::Html, Some(P::VeryHigh))
        }
    }); // ids 0-4
    add(&mut rows, 4, 30, &|i| {
        (Some(0), format!("https://news.example/css/{i}.css"), T::Css, Some(if i < 2 { P::VeryHigh } else { P::Low }))
    }); // ids 5-8
    add(&mut rows, 12, 338, &|i| {
        (Some(5), format!("https://fonts.news.example/f{i}.woff2"), T::Font, Some(P::VeryHigh))
    }); // 9-20
    add(&mut rows, 29, 733, &|i| {
        if i < 5 {
            (Some(0), format!("https://news.example/js/head{i}.js"), T::Js, Some(if i == 0 { P::High } else { P::Low }))
        } else {
            (Some(21), format!("https://news.example/js/chunk{i}.js"), T::Js, Some(P::Low))
        }
    }); // 21-49 (733.5 KB rounded down)
    add(&mut rows, 16, 120, &|i| {
        (Some(21), format!("https://api.news.example/v1/feed{i}.json"), T::Json, Some(P::High))
    }); // 50-65
    const ADS: [&str; 9] = [
        "https://securepubads.g.doubleclick.net/tag/js/gpt.js",
        "https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js",
        "https://www.googletagmanager.com/gtm.js",
        "https://www.google-analytics.com/analytics.js",
        "https://c.amazon-adsystem.com/aax2/apstag.js",
        "https://static.chartbeat.com/js/chartbeat.js",
        "https://sb.scorecardresearch.com/beacon.js",
        "https://cdn.taboola.com/libtrc/loader.js",
        "https://tpc.googlesyndication.com/simgad/ad.jpg",
    ];
    add(&mut rows, 9, 405, &|i| {
        let url = ADS[i as usize].to_string();
        let kind = if url.ends_with(".jpg") { T::Image } else { T::Js };
        (Some(21), url, kind, Some(P::Low))
    }); // 66-74
    add(&mut rows, 40, 815, &|i| {
        (
            Some(0),
            format!("https://static.news.example/images/{i}.jpg"),
            T::Image,
            Some(if i < 3 { P::High } else { P::Low }),
        )
    }); // 75-114
    add(&mut rows, 14, 1130, &|i| (Some(0), format!("https://video.news.example/clip{i}.mp4"), T::Media, Some(P::Low))); // 115-128
    let mut page = build("news", rows);
    // The first stylesheets are render-blocking, the others not (their priority says so).
    for o in page.objects_mut() {
        if o.kind == T::Css {
            o.render_blocking = Some(if o.browser_priority == Some(P::VeryHigh) {
                RenderBlocking::Blocking
            } else {
                RenderBlocking::NonBlocking
            });
            o.cats_level = classify::cats_level(o);
        }
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_page_has_300_objects_on_17_origins() {
        let p = large_page();
        assert_eq!(p.len(), 300);
        let origins: std::collections::BTreeSet<&str> = p.objects().iter().map(|o| o.origin.as_str()).collect();
        assert_eq!(origins.len(), 17);
        let blocking = p.objects().iter().filter(|o| o.render_blocking == Some(RenderBlocking::Blocking)).count();
        assert_eq!(blocking, 12);
        let bytes: u64 = p.objects().iter().map(|o| o.wire_bytes).sum();
        // 60 + 12·20 + 40·30 + 100·15 + 8·30 + 20·12 + 100·8 + 19·2 KiB.
        assert_eq!(bytes, (60 + 240 + 1200 + 1500 + 240 + 240 + 800 + 38) * KIB);
        assert_eq!(p.children(ObjectId(13)).len(), 139);
    }

    #[test]
    fn cats_page_matches_table_one() {
        let p = cats_page();
        let levels: Vec<u8> = p.objects().iter().map(|o| o.cats_level).collect();
        assert_eq!(levels, vec![0, 1, 2, 3, 4]);
        let sizes: Vec<u64> = p.objects().iter().map(|o| o.wire_bytes / KIB).collect();
        assert_eq!(sizes, vec![8, 25, 40, 60, 150]);
        assert_eq!(p.total_wire_bytes(), 283 * KIB);
    }

    #[test]
    fn priority_bucket_pages() {
        let count = |p: &Page, k: ContentType| p.objects().iter().filter(|o| o.kind == k).count();
        let b = bing_page();
        assert_eq!((b.len(), count(&b, T::Html), count(&b, T::Image)), (2, 1, 1));
        let y = youtube_page();
        assert_eq!((count(&y, T::Html), count(&y, T::Css), count(&y, T::Js), count(&y, T::Image)), (1, 2, 2, 20));
    }

    #[test]
    fn news_page_matches_table_four() {
        let p = news_page();
        assert_eq!(p.len(), 129);
        for (cat, n, kb) in [
            (ContentCategory::AdsAnalytics, 9, 405),
            (ContentCategory::Images, 40, 815),
            (ContentCategory::Html, 5, 238),
            (ContentCategory::JavaScript, 29, 733),
            (ContentCategory::Json, 16, 120),
            (ContentCategory::Css, 4, 30),
            (ContentCategory::Fonts, 12, 338),
            (ContentCategory::Others, 14, 1130),
        ] {
            let objs: Vec<_> = p.objects().iter().filter(|o| o.category == cat).collect();
            assert_eq!(objs.len(), n, "{cat}");
            assert_eq!(objs.iter().map(|o| o.wire_bytes).sum::<u64>(), kb * KB, "{cat}");
            assert!(objs.iter().all(|o| o.essential == cat.essentialness()));
        }
        for name in BUILTIN_PAGES.iter().map(|p| p.0) {
            assert!(builtin(name).is_some());
        }
    }
}
