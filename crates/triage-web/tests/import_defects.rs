//! Import and classification defects of issue 9, each shown on a file that has it: a real
//! recording from ../shared/data/pages where one shows it, else a minimal hand-written log
//! (said at each test).

mod common;

use triage_web::{import_file, import_str, ContentType, Import, ImportOptions};

use common::data_dir;

fn load(name: &str) -> Import {
    load_with(name, &ImportOptions::default())
}

fn load_with(name: &str, opts: &ImportOptions) -> Import {
    import_file(&data_dir().join(name), opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Real recording: ferguson.com's two Facebook pixel hits `https://www.facebook.com/tr/?id=...`
/// (path `/tr/`, a trailing slash before the query) are trackers.
#[test]
fn facebook_pixel_with_query_is_a_tracker() {
    let imp = load("ferguson.com.har");
    let pixels: Vec<_> =
        imp.page.objects().iter().filter(|o| o.url.starts_with("https://www.facebook.com/tr/?")).collect();
    assert_eq!(pixels.len(), 2);
    for p in pixels {
        assert!(p.tracker, "{}", p.url);
        assert_eq!(p.cats_level, 4, "{}", p.url);
    }
}

/// One DevTools event as JSON text.
fn ev(method: &str, params: &str) -> String {
    format!(r#"{{"method": "{method}", "params": {params}}}"#)
}

/// A request of a minimal DevTools log: requestWillBeSent, responseReceived (with `extra`
/// response fields) and loadingFinished with `bytes` on the wire.
#[allow(clippy::too_many_arguments)]
fn request(
    id: &str,
    kind: &str,
    url: &str,
    t_s: f64,
    mime: &str,
    extra: &str,
    bytes: u64,
    initiator: &str,
) -> Vec<String> {
    vec![
        ev(
            "Network.requestWillBeSent",
            &format!(
                r#"{{"requestId": "{id}", "loaderId": "L1", "frameId": "F1", "type": "{kind}", "timestamp": {t_s},
                "request": {{"url": "{url}", "method": "GET"}}, "initiator": {initiator}}}"#
            ),
        ),
        ev(
            "Network.responseReceived",
            &format!(
                r#"{{"requestId": "{id}", "type": "{kind}", "timestamp": {},
                "response": {{"status": 200, "mimeType": "{mime}" {extra}}}}}"#,
                t_s + 0.05
            ),
        ),
        ev(
            "Network.loadingFinished",
            &format!(r#"{{"requestId": "{id}", "timestamp": {}, "encodedDataLength": {bytes}}}"#, t_s + 0.1),
        ),
    ]
}

fn log(events: Vec<Vec<String>>) -> String {
    format!("[{}]", events.concat().join(",\n"))
}

/// Hand-written (no recording in ../shared has Early Hints): a stylesheet preloaded on an
/// Early Hints response, which Chrome reports with `fromEarlyHints` beside `fromMemoryCache`
/// and a `requestServedFromCache` event, is a network fetch, not a cache hit.
#[test]
fn early_hints_responses_are_network_fetches() {
    let root = r#"{"type": "other"}"#;
    let parser = r#"{"type": "parser", "url": "https://a.com/"}"#;
    let mut css = request(
        "2",
        "Stylesheet",
        "https://a.com/site.css",
        10.01,
        "text/css",
        r#", "fromEarlyHints": true, "fromMemoryCache": true"#,
        3000,
        parser,
    );
    css.insert(1, ev("Network.requestServedFromCache", r#"{"requestId": "2"}"#));
    let cached =
        request("3", "Stylesheet", "https://a.com/old.css", 10.02, "text/css", r#", "fromDiskCache": true"#, 0, parser);
    let text = log(vec![request("1", "Document", "https://a.com/", 10.0, "text/html", "", 5000, root), css, cached]);
    let imp = import_str(&text, &ImportOptions::default()).unwrap();
    let css = imp.page.objects().iter().find(|o| o.url.ends_with("/site.css")).unwrap();
    assert_eq!(css.wire_bytes, 3000);
    assert!(!css.from_cache);
    // A real disk-cache hit still is one.
    let old = imp.page.objects().iter().find(|o| o.url.ends_with("/old.css")).unwrap();
    assert!(old.from_cache);

    // The same in a HAR: `_transferSize` 0 with `fromEarlyHints`.
    let har = r#"{"log": {"entries": [
      {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/"},
       "response": {"status": 200, "content": {"size": 900, "mimeType": "text/html"}, "_transferSize": 1000}},
      {"startedDateTime": "2024-01-01T00:00:00.010Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/site.css"},
       "response": {"status": 200, "content": {"size": 2900, "mimeType": "text/css"}, "_transferSize": 0,
                    "fromEarlyHints": true}}]}}"#;
    let imp = import_str(har, &ImportOptions::default()).unwrap();
    let css = &imp.page.objects()[1];
    assert_eq!((css.url.as_str(), css.wire_bytes, css.from_cache), ("https://a.com/site.css", 2900, false));
}

/// Real recording: bbc.com's DevTools HAR served its main document from the cache. The root
/// is that document (kept as a zero-network object), never another object of the page.
#[test]
fn cached_main_document_stays_the_root() {
    let imp = load("bbc.com.devtools.har");
    let root = imp.page.get(imp.page.root());
    assert_eq!(root.url, "http://www.bbc.com/");
    assert_eq!((root.kind, root.from_cache, root.wire_bytes, root.body_bytes), (ContentType::Html, true, 0, 186_054));
    assert!(!root.tracker && !root.third_party && root.cats_level == 0);
    // Its stylesheets are still discovered by it and still hold the first paint back.
    let css = imp.page.objects().iter().find(|o| o.url.ends_with("/orb/4/style/orb.min.css")).unwrap();
    assert_eq!(css.parent, Some(imp.page.root()));
    assert!(css.from_cache && css.blocks_first_paint());
}

/// Hand-written: a HAR whose navigation failed (status 0) is refused, naming the document,
/// instead of promoting a later object to root.
#[test]
fn failed_navigation_is_refused() {
    let har = r#"{"log": {"entries": [
      {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/"},
       "response": {"status": 0, "content": {"size": 0, "mimeType": "text/html"}}},
      {"startedDateTime": "2024-01-01T00:00:00.100Z", "time": 50, "request": {"method": "GET", "url": "https://t.com/p.gif"},
       "response": {"status": 200, "content": {"size": 164, "mimeType": "image/gif"}, "_transferSize": 164}}]}}"#;
    let err = import_str(har, &ImportOptions::default()).unwrap_err().to_string();
    assert!(err.contains("navigation's document https://a.com/ was not loaded (failed)"), "{err}");
}

/// Hand-written (no recording in ../shared has an error response): a script answered with a
/// 404 HTML error page is a script, an XHR answered with a 500 HTML page is `other`; neither
/// becomes an essential HTML document. An error on the navigation itself stays its document.
#[test]
fn http_errors_are_typed_by_the_request_not_the_error_page() {
    let har = r#"{"log": {"entries": [
      {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/"},
       "response": {"status": 200, "content": {"size": 900, "mimeType": "text/html"}, "_transferSize": 1000}},
      {"startedDateTime": "2024-01-01T00:00:00.100Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/app.js"},
       "_resourceType": "script",
       "response": {"status": 404, "content": {"size": 500, "mimeType": "text/html"}, "_transferSize": 600}},
      {"startedDateTime": "2024-01-01T00:00:00.200Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/api/x"},
       "_resourceType": "xhr",
       "response": {"status": 503, "content": {"size": 400, "mimeType": "text/html"}, "_transferSize": 500}},
      {"startedDateTime": "2024-01-01T00:00:00.300Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/gone.png"},
       "response": {"status": 410, "content": {"size": 300, "mimeType": "text/html"}, "_transferSize": 400}}]}}"#;
    let imp = import_str(har, &ImportOptions::default()).unwrap();
    let kinds: Vec<_> = imp.page.objects().iter().map(|o| (o.kind, o.category)).collect();
    use triage_web::ContentCategory as C;
    assert_eq!(
        kinds,
        vec![
            (ContentType::Html, C::Html),
            (ContentType::Js, C::JavaScript),
            (ContentType::Other, C::Others),
            (ContentType::Image, C::Images)
        ]
    );
    assert!(imp.page.objects()[1..]
        .iter()
        .all(|o| o.essential != triage_web::Essentialness::Essential || o.kind == ContentType::Js));
    // A 500 on the navigation is still the page's document.
    let nav_error = r#"{"log": {"entries": [
      {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50, "request": {"method": "GET", "url": "https://a.com/"},
       "response": {"status": 500, "content": {"size": 900, "mimeType": "text/html"}, "_transferSize": 1000}}]}}"#;
    let imp = import_str(nav_error, &ImportOptions::default()).unwrap();
    assert_eq!(imp.page.objects()[0].kind, ContentType::Html);
}

/// Real recording: bbc.com serves its main stylesheets from static.bbci.co.uk, the same
/// owner's CDN: first party, render-blocking, CATS level 0. Hand-written: the same for
/// nytimes.com's a1.nyt.com stylesheet.
#[test]
fn own_cdn_is_first_party() {
    let imp = load_with("bbc.com.devtools.har", &ImportOptions { keep_cache_hits: true, ..Default::default() });
    let css = imp.page.objects().iter().find(|o| o.url.ends_with("/orb/4/style/orb.min.css")).unwrap();
    assert!(css.url.starts_with("http://static.bbci.co.uk/"));
    assert_eq!((css.third_party, css.cats_level), (false, 0));
    let krux = imp.page.objects().iter().find(|o| o.url.contains("cdn.krxd.net")).unwrap();
    assert!(krux.third_party);

    let har = r#"{"log": {"entries": [
      {"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50, "request": {"method": "GET", "url": "https://www.nytimes.com/"},
       "response": {"status": 200, "content": {"size": 900, "mimeType": "text/html"}, "_transferSize": 1000}},
      {"startedDateTime": "2024-01-01T00:00:00.100Z", "time": 50, "request": {"method": "GET", "url": "https://a1.nyt.com/assets/homepage/global.css"},
       "_initiator": "https://www.nytimes.com/", "_priority": "VeryHigh",
       "response": {"status": 200, "content": {"size": 500, "mimeType": "text/css"}, "_transferSize": 600}}]}}"#;
    let imp = import_str(har, &ImportOptions::default()).unwrap();
    let css = &imp.page.objects()[1];
    assert_eq!((css.third_party, css.cats_level, css.blocks_first_paint()), (false, 0, true));
}

/// Real recordings, Lantern's FCP rule: paulirish.com's three parser-inserted scripts at
/// Medium priority (modernizr, ender, octopress) and its Medium Google Fonts stylesheet, and
/// squoosh.app's High-priority scripts that a script inserted, do not block first paint;
/// ferguson.com's stylesheets and scripts parsed inside the Kampyle form iframe do not
/// either, while its head stylesheets and AppDynamics' High head script still do.
#[test]
fn render_blocking_follows_lantern() {
    let blocking = |imp: &Import| -> Vec<String> {
        imp.page.objects().iter().skip(1).filter(|o| o.blocks_first_paint()).map(|o| o.url.clone()).collect()
    };
    let paul = load("paulirish.com.devtoolslog.json");
    assert_eq!(blocking(&paul), Vec::<String>::new());
    let modernizr = paul.page.objects().iter().find(|o| o.url.ends_with("/modernizr-2.0.js")).unwrap();
    assert_eq!(modernizr.render_blocking, Some(triage_web::RenderBlocking::NonBlocking));
    let squoosh = load("squoosh.app.devtoolslog.json");
    assert_eq!(blocking(&squoosh), Vec::<String>::new());

    let ferg = load("ferguson.com.har");
    let b = blocking(&ferg);
    assert!(b.iter().all(|u| !u.contains("kampyle.com")), "{b:?}");
    assert!(b.iter().any(|u| u.starts_with("https://cdn.appdynamics.com/adrum/")));
    assert_eq!(b.len(), 9, "{b:?}");
    assert_eq!(ferg.page.objects().iter().filter(|o| o.kind == ContentType::Css && o.blocks_first_paint()).count(), 8);

    // Hand-written: a High script a script inserted, a Medium in-body script, and a script in
    // an iframe (DevTools frameId of a subframe) do not block; a High head script does.
    let parser = r#"{"type": "parser", "url": "https://a.com/"}"#;
    let by_script = r#"{"type": "script", "url": "https://a.com/head.js"}"#;
    let mut ev = vec![
        request("1", "Document", "https://a.com/", 1.0, "text/html", "", 5000, r#"{"type": "other"}"#),
        request("2", "Script", "https://a.com/head.js", 1.1, "text/javascript", "", 900, parser),
        request("3", "Script", "https://a.com/inserted.js", 1.2, "text/javascript", "", 900, by_script),
        request("4", "Script", "https://a.com/body.js", 1.3, "text/javascript", "", 900, parser),
        request("5", "Script", "https://a.com/frame.js", 1.4, "text/javascript", "", 900, parser),
    ];
    let prio = ["VeryHigh", "High", "High", "Medium", "High"];
    for (i, r) in ev.iter_mut().enumerate() {
        r[0] = r[0].replace(r#""method": "GET"}"#, &format!(r#""method": "GET", "initialPriority": "{}"}}"#, prio[i]));
    }
    ev[4][0] = ev[4][0].replace(r#""frameId": "F1""#, r#""frameId": "F2""#);
    let imp = import_str(&log(ev), &ImportOptions::default()).unwrap();
    assert_eq!(blocking(&imp), vec!["https://a.com/head.js".to_string()]);
}

/// Hand-written (the recordings in ../shared have no out-of-process iframe): a page embeds a
/// cross-site iframe that Chrome runs in its own target. Its events carry the iframe target's
/// `sessionId`, and no `Page.frameAttached` in the page's session names its frame. The
/// iframe's document and its script belong to the page (one page, not two), in a subframe.
#[test]
fn out_of_process_iframes_stay_in_their_page() {
    let root = r#"{"type": "other"}"#;
    let parser = r#"{"type": "parser", "url": "https://a.com/"}"#;
    let in_frame = r#"{"type": "parser", "url": "https://ads.b.com/frame.html"}"#;
    let with_session = |reqs: Vec<String>, sid: &str| -> Vec<String> {
        reqs.into_iter().map(|e| format!(r#"{}, "sessionId": "{sid}"}}"#, e.strip_suffix('}').unwrap())).collect()
    };
    let mut frame_doc = request("10", "Document", "https://ads.b.com/frame.html", 1.2, "text/html", "", 2000, parser);
    for e in &mut frame_doc {
        *e = e.replace(r#""loaderId": "L1", "frameId": "F1""#, r#""loaderId": "L9", "frameId": "F9""#);
    }
    let mut frame_js = request("11", "Script", "https://ads.b.com/ad.js", 1.3, "text/javascript", "", 700, in_frame);
    for e in &mut frame_js {
        *e = e.replace(r#""loaderId": "L1", "frameId": "F1""#, r#""loaderId": "L9", "frameId": "F9""#);
    }
    let attach = vec![ev(
        "Target.attachedToTarget",
        r#"{"sessionId": "S9", "targetInfo": {"targetId": "F9", "type": "iframe", "url": ""}, "waitingForDebugger": false}"#,
    )];
    let events = vec![
        request("1", "Document", "https://a.com/", 1.0, "text/html", "", 5000, root),
        request("2", "Stylesheet", "https://a.com/site.css", 1.05, "text/css", "", 800, parser),
        attach,
        with_session(frame_doc, "S9"),
        with_session(frame_js, "S9"),
    ];
    let imp = import_str(&log(events), &ImportOptions::default()).unwrap();
    assert_eq!(imp.pages.len(), 1, "{:?}", imp.pages);
    assert_eq!(imp.page.len(), 4);
    let frame = imp.page.objects().iter().find(|o| o.url.ends_with("/frame.html")).unwrap();
    let ad = imp.page.objects().iter().find(|o| o.url.ends_with("/ad.js")).unwrap();
    assert_eq!((frame.parent, ad.parent), (Some(imp.page.root()), Some(frame.id)));
    assert!(!frame.blocks_first_paint() && !ad.blocks_first_paint());
}

/// Real recordings: ferguson.com's eight subresource redirects (tracking pixels bouncing to
/// their next host) and bbc.com's four are objects of their own, each the discovery parent of
/// its target, with the redirect response's bytes; etat.lu's two navigation redirects come
/// before the root and stay skipped.
#[test]
fn redirect_hops_are_objects() {
    let imp = load("ferguson.com.har");
    assert_eq!(imp.redirect_hops, 8);
    assert_eq!(imp.skipped.get(&triage_web::SkipReason::Redirect), None);
    let p = &imp.page;
    for hop in p.objects().iter().filter(|o| o.redirect) {
        assert_ne!(hop.kind, ContentType::Html, "{}", hop.url);
        let children = p.children(hop.id);
        assert!(!children.is_empty(), "{} has no target", hop.url);
        for c in children {
            assert!(p.get(*c).recorded_start_ns >= hop.recorded_start_ns);
        }
    }
    assert_eq!(load("bbc.com.devtools.har").redirect_hops, 4);
    let etat = load("etat.lu.har");
    assert_eq!((etat.redirect_hops, etat.skipped.get(&triage_web::SkipReason::Redirect)), (0, Some(&2)));
}

/// wikipedia.org's recording starts at a mistyped host that redirects to the real one: the hop
/// is no object of the page but is kept, with its recorded DNS lookup, as a round trip the
/// load pays before its root (it was skipped and lost before).
#[test]
fn navigation_redirect_hops_are_kept_as_round_trips() {
    let imp = load("wikipedia.org.browsertime.har");
    let hops = imp.page.navigation_redirects();
    assert_eq!(hops.len(), 1);
    assert_eq!(hops[0].url, "https://www.wikpedia.org/");
    assert_eq!((hops[0].recorded_dns_ns, hops[0].recorded_connect_ns), (441_353_000, 62_684_000));
    // The root was requested 535 ms after the navigation began (the recorded times count from
    // the root's request; a trace's paint marks from the navigation's start).
    assert_eq!(imp.page.recorded_redirect_ns(), 535_000_000);
    assert!(imp.page.objects().iter().all(|o| o.url != hops[0].url));
    assert_eq!(imp.skipped.get(&triage_web::SkipReason::Redirect), Some(&1));
    // A load without redirects has none.
    assert!(load("ferguson.com.har").page.navigation_redirects().is_empty());
}

/// A DevTools log of a client-side redirect: a.example's document sends the browser on to
/// b.example (the next document's initiator is a script of it, or a `<meta refresh>` asked for
/// the navigation). By default the page is b.example's, with a.example's document as a
/// navigation hop that costs its round trips plus the recorded time from its first byte to the
/// next navigation; a user's navigation to another page is not a redirect.
#[test]
fn client_side_redirects_are_hops_before_the_page() {
    let other = r#"{"type": "other"}"#;
    let script = r#"{"type": "script", "url": "https://a.example/"}"#;
    let parser = r#"{"type": "parser", "url": "https://b.example/"}"#;
    let on_loader = |reqs: Vec<String>| -> Vec<String> {
        reqs.into_iter().map(|e| e.replace(r#""loaderId": "L1""#, r#""loaderId": "L2""#)).collect()
    };
    let build = |b_initiator: &str, between: Vec<String>| {
        log(vec![
            request("1", "Document", "https://a.example/", 1.0, "text/html", "", 900, other),
            between,
            on_loader(request("2", "Document", "https://b.example/", 1.5, "text/html", "", 5000, b_initiator)),
            on_loader(request("3", "Stylesheet", "https://b.example/s.css", 1.6, "text/css", "", 800, parser)),
        ])
    };
    // A script of a.example's document navigated.
    let imp = import_str(&build(script, vec![]), &ImportOptions::default()).unwrap();
    assert_eq!((imp.pages.len(), imp.page_id.as_str(), imp.client_redirects), (2, "page_2", 1));
    assert_eq!(imp.page.objects()[0].url, "https://b.example/");
    let hops = imp.page.navigation_redirects();
    assert_eq!(hops.len(), 1);
    assert_eq!(hops[0].url, "https://a.example/");
    // Its first byte at 1.05 s (the response event), the next navigation at 1.5 s.
    assert_eq!(hops[0].client_delay_ns, 450_000_000);
    assert_eq!(hops[0].recorded_before_root_ns, 500_000_000);
    assert_eq!(imp.skipped.get(&triage_web::import::SkipReason::Redirect), Some(&1));
    assert_eq!(imp.skipped.get(&triage_web::import::SkipReason::OtherPage), None);
    // A `<meta refresh>`: the next document's initiator is `other`, but the main frame asked.
    let refresh = vec![ev(
        "Page.frameRequestedNavigation",
        r#"{"frameId": "F1", "reason": "metaTagRefresh", "url": "https://b.example/", "disposition": "currentTab"}"#,
    )];
    let imp = import_str(&build(other, refresh), &ImportOptions::default()).unwrap();
    assert_eq!((imp.page_id.as_str(), imp.client_redirects), ("page_2", 1));
    // A navigation of the user's: two pages, the first by default, no hop.
    let imp = import_str(&build(other, vec![]), &ImportOptions::default()).unwrap();
    assert_eq!((imp.pages.len(), imp.page_id.as_str(), imp.client_redirects), (2, "page_1", 0));
    assert!(imp.page.navigation_redirects().is_empty());
    // Asking for the interstitial page gives it alone.
    let opts = ImportOptions { page: Some("page_1".into()), ..Default::default() };
    let imp = import_str(&build(script, vec![]), &opts).unwrap();
    assert_eq!((imp.page.objects()[0].url.as_str(), imp.client_redirects), ("https://a.example/", 0));
}

/// Hand-written: a cache hit fetched for a cold load (`keep_cache_hits`) is sized by the body
/// its server sent (`Content-Length`), not by its decoded size; without a usable
/// Content-Length (none, or not a number) the decoded size stands in and is counted. Both
/// formats: a HAR's `response.headers` array, a DevTools log's `response.headers` object.
#[test]
fn cold_loaded_cache_hits_are_sized_by_content_length() {
    let cold = ImportOptions { keep_cache_hits: true, ..Default::default() };
    let entry = |url: &str, mime: &str, size: u64, headers: &str| {
        format!(
            r#"{{"startedDateTime": "2024-01-01T00:00:00.000Z", "time": 2, "request": {{"method": "GET", "url": "{url}"}},
               "response": {{"status": 200, "bodySize": 0, "headersSize": -1, "headers": [{headers}],
                            "content": {{"size": {size}, "mimeType": "{mime}"}}}}}}"#
        )
    };
    let har = format!(
        r#"{{"log": {{"entries": [{}, {}, {}, {}]}}}}"#,
        entry("https://a.com/", "text/html", 40_000, r#"{"name": "Content-Length", "value": "9000"}"#),
        entry("https://a.com/app.js", "text/javascript", 120_000, r#"{"name": "content-length", "value": " 31000 "}"#),
        entry("https://a.com/a.css", "text/css", 5_000, r#"{"name": "Content-Length", "value": "gzip"}"#),
        entry("https://a.com/b.png", "image/png", 7_000, ""),
    );
    let warm = import_str(&har, &ImportOptions::default()).unwrap();
    assert_eq!((warm.cache_hits, warm.cache_hits_fetched), (4, 0));
    assert!(warm.page.objects().iter().all(|o| o.from_cache && o.wire_bytes == 0));
    assert_eq!(
        warm.cache_summary().unwrap(),
        "4 of 4 objects were served from the browser's cache in the recording, the document among them (a warm \
         load): no bytes on the network here; keep_cache_hits (--keep-cache-hits) loads them over the network, as \
         a first visit would"
    );
    let imp = import_str(&har, &cold).unwrap();
    let wire: Vec<u64> = imp.page.objects().iter().map(|o| o.wire_bytes).collect();
    assert_eq!(wire, [9_000, 31_000, 5_000, 7_000]);
    assert_eq!((imp.cache_hits, imp.cache_hits_fetched), (0, 4));
    assert_eq!(imp.adjusted.get(&triage_web::Adjustment::ColdSizeDecoded), Some(&2));
    assert_eq!(
        imp.adjusted_summary().unwrap(),
        "2 values adjusted: 2 cold_size_decoded (cache hits fetched for a cold load with no Content-Length, sized \
         by their decoded content (more than a compressed response sends))"
    );

    // DevTools: a disk-cache hit whose response headers say Content-Length 2100.
    let root = r#"{"type": "other"}"#;
    let parser = r#"{"type": "parser", "url": "https://a.com/"}"#;
    let css = request(
        "2",
        "Stylesheet",
        "https://a.com/site.css",
        10.01,
        "text/css",
        r#", "fromDiskCache": true, "headers": {"content-type": "text/css", "Content-Length": "2100"}"#,
        0,
        parser,
    );
    let text = log(vec![request("1", "Document", "https://a.com/", 10.0, "text/html", "", 5000, root), css]);
    let warm = import_str(&text, &ImportOptions::default()).unwrap();
    assert_eq!((warm.page.objects()[1].from_cache, warm.page.objects()[1].wire_bytes), (true, 0));
    assert!(warm
        .cache_summary()
        .unwrap()
        .starts_with("1 of 2 objects were served from the browser's cache in the recording: "));
    let imp = import_str(&text, &cold).unwrap();
    assert_eq!((imp.page.objects()[1].from_cache, imp.page.objects()[1].wire_bytes), (false, 2100));
    assert!(!imp.adjusted.contains_key(&triage_web::Adjustment::ColdSizeDecoded));
}
