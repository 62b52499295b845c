//! Streaming HTML discovery offsets ([`triage_web::Page::discovery_offsets_bytes`]) from a
//! small hand-written HAR, each value computed by hand from the file below.

use triage_web::{builtin::builtin, import_str, ImportOptions};

/// An HTML document of 10,000 wire bytes requested at 0 ms, its first byte at 100 ms
/// (`wait` 100), its last at 500 ms (`receive` 400): a 400 ms download. Its children:
/// - style.css at 200 ms: 100 ms into the download, a quarter: byte 2,500;
/// - early.js at 50 ms, before the first byte (a `Link` header): byte 1;
/// - hero.jpg at 333 ms: 233/400 × 10,000 = 5,825 bytes;
/// - late.js at 600 ms, after the document ended (script-inserted): the whole 10,000;
/// - font.woff2, a child of style.css: found only once the stylesheet is whole (`None`).
///
/// And an iframe document (frame.html, 2,000 bytes) with no `wait`/`receive` timing
/// (no response start): of its children, ad.js, which a script requested, needs all of it;
/// a.png and b.png are spread evenly over it, at 1/2 and 2/2.
const HAR: &str = r#"{"log": {"version": "1.2", "entries": [
  {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 500,
   "request": {"method": "GET", "url": "https://a.com/", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 30000, "mimeType": "text/html"}, "_transferSize": 10000},
   "timings": {"blocked": 0, "dns": 0, "connect": 0, "send": 0, "wait": 100, "receive": 400}},
  {"startedDateTime": "2024-01-01T00:00:00.050Z", "time": 100, "_initiator": "https://a.com/",
   "request": {"method": "GET", "url": "https://a.com/early.js", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 900, "mimeType": "application/javascript"}, "_transferSize": 1000},
   "timings": {"send": 0, "wait": 50, "receive": 50}},
  {"startedDateTime": "2024-01-01T00:00:00.200Z", "time": 100, "_initiator": "https://a.com/",
   "request": {"method": "GET", "url": "https://a.com/style.css", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 900, "mimeType": "text/css"}, "_transferSize": 1000},
   "timings": {"send": 0, "wait": 50, "receive": 50}},
  {"startedDateTime": "2024-01-01T00:00:00.333Z", "time": 100, "_initiator": "https://a.com/",
   "request": {"method": "GET", "url": "https://a.com/hero.jpg", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 900, "mimeType": "image/jpeg"}, "_transferSize": 1000},
   "timings": {"send": 0, "wait": 50, "receive": 50}},
  {"startedDateTime": "2024-01-01T00:00:00.350Z", "time": 100, "_initiator": "https://a.com/style.css",
   "request": {"method": "GET", "url": "https://a.com/font.woff2", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 900, "mimeType": "font/woff2"}, "_transferSize": 1000},
   "timings": {"send": 0, "wait": 50, "receive": 50}},
  {"startedDateTime": "2024-01-01T00:00:00.400Z", "time": 100, "_initiator": "https://a.com/",
   "request": {"method": "GET", "url": "https://a.com/frame.html", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 1900, "mimeType": "text/html"}, "_transferSize": 2000},
   "timings": {"send": 0, "wait": -1, "receive": -1}},
  {"startedDateTime": "2024-01-01T00:00:00.450Z", "time": 10, "_initiator": "https://a.com/frame.html",
   "request": {"method": "GET", "url": "https://a.com/a.png", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 90, "mimeType": "image/png"}, "_transferSize": 100},
   "timings": {"send": 0, "wait": 5, "receive": 5}},
  {"startedDateTime": "2024-01-01T00:00:00.460Z", "time": 10, "_initiator": "https://a.com/frame.html",
   "request": {"method": "GET", "url": "https://a.com/b.png", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 90, "mimeType": "image/png"}, "_transferSize": 100},
   "timings": {"send": 0, "wait": 5, "receive": 5}},
  {"startedDateTime": "2024-01-01T00:00:00.455Z", "time": 10, "_initiator": "https://a.com/frame.html",
   "_initiator_type": "script",
   "request": {"method": "GET", "url": "https://a.com/ad.js", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 90, "mimeType": "application/javascript"}, "_transferSize": 100},
   "timings": {"send": 0, "wait": 5, "receive": 5}},
  {"startedDateTime": "2024-01-01T00:00:00.600Z", "time": 100, "_initiator": "https://a.com/",
   "request": {"method": "GET", "url": "https://a.com/late.js", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"size": 900, "mimeType": "application/javascript"}, "_transferSize": 1000},
   "timings": {"send": 0, "wait": 50, "receive": 50}}
]}}"#;

#[test]
fn offsets_follow_the_recorded_request_times_over_the_parents_download() {
    let page = import_str(HAR, &ImportOptions::default()).unwrap().page;
    let offsets = page.discovery_offsets_bytes();
    let of = |path: &str| {
        let o = page.objects().iter().find(|o| o.url == format!("https://a.com/{path}")).expect(path);
        offsets[o.id.index()]
    };
    assert_eq!(page.objects()[0].wire_bytes, 10_000);
    assert_eq!(page.objects()[0].recorded_response_start_ns, 100_000_000);
    assert_eq!(offsets[0], None, "the root is requested first, not discovered");
    assert_eq!(of("style.css"), Some(2_500));
    assert_eq!(of("early.js"), Some(1));
    assert_eq!(of("hero.jpg"), Some(5_825));
    assert_eq!(of("late.js"), Some(10_000));
    assert_eq!(of("font.woff2"), None, "a stylesheet's child waits for all of it");
    // frame.html itself: requested at 400 ms, 300/400 of the root's download.
    assert_eq!(of("frame.html"), Some(7_500));
    // Its children: no response start recorded for it, so proportionally.
    assert_eq!(page.objects().iter().find(|o| o.url.ends_with("frame.html")).unwrap().recorded_response_start_ns, 0);
    assert_eq!(of("a.png"), Some(1_000));
    assert_eq!(of("b.png"), Some(2_000));
    assert_eq!(of("ad.js"), Some(2_000), "script-inserted: the whole document");
}

#[test]
fn a_built_in_page_has_no_timing_and_spreads_its_html_children_evenly() {
    let page = builtin("news").expect("built-in page");
    let offsets = page.discovery_offsets_bytes();
    let root = &page.objects()[0];
    let kids = page.children(root.id);
    let n = kids.len() as u64;
    assert!(n > 1);
    for (k, c) in kids.iter().enumerate() {
        let want = ((k as u64 + 1) * root.wire_bytes).div_ceil(n);
        assert_eq!(offsets[c.index()], Some(want), "child {k} of {n}");
    }
    // Children of non-HTML objects: whole parent.
    for o in page.objects() {
        if o.parent.is_some_and(|p| page.get(p).kind != triage_web::ContentType::Html) {
            assert_eq!(offsets[o.id.index()], None);
        }
    }
}
