//! The nine real recordings in ../shared/data/pages import and classify, with the object
//! counts per type and skipped entries per reason pinned. The folder must exist: a missing
//! folder fails the tests, never skips them.

mod common;
use std::collections::BTreeMap;

use triage_web::qoe::{estimate, QoeConfig};
use triage_web::{import_file, ContentType, Import, ImportOptions, ObjectId, SourceFormat};

use common::data_dir;

fn load(name: &str) -> Import {
    load_with(name, &ImportOptions::default())
}

fn load_with(name: &str, opts: &ImportOptions) -> Import {
    let path = data_dir().join(name);
    import_file(&path, opts).unwrap_or_else(|e| panic!("{e}"))
}

type Expect = (&'static str, usize, usize, &'static [(&'static str, usize)], &'static [(&'static str, usize)]);

/// (file, entries, objects, objects per type, skipped per reason).
const EXPECTED: &[Expect] = &[
    (
        "bbc.com.devtools.har",
        120,
        118,
        &[("css", 6), ("font", 1), ("html", 5), ("image", 52), ("js", 44), ("json", 2), ("other", 8)],
        &[("cors_preflight", 1), ("not_modified", 1)],
    ),
    ("etat.lu.har", 22, 20, &[("css", 1), ("font", 4), ("html", 1), ("image", 12), ("js", 2)], &[("redirect", 2)]),
    (
        "ferguson.com.har",
        174,
        174,
        &[("css", 16), ("font", 10), ("html", 7), ("image", 73), ("js", 49), ("json", 11), ("other", 8)],
        &[],
    ),
    (
        "github.com.devtools.har",
        20,
        19,
        &[("css", 6), ("html", 1), ("image", 9), ("js", 2), ("json", 1)],
        &[("cors_preflight", 1)],
    ),
    (
        "google.com.perflog.json",
        26,
        13,
        &[("html", 3), ("image", 6), ("js", 4)],
        &[("data_url", 6), ("failed", 1), ("other_page", 5), ("redirect", 1)],
    ),
    (
        "paulirish.com.devtoolslog.json",
        27,
        24,
        &[("css", 1), ("font", 6), ("html", 1), ("image", 5), ("js", 7), ("json", 2), ("other", 2)],
        &[("cors_preflight", 2), ("data_url", 1)],
    ),
    (
        "squoosh.app.devtoolslog.json",
        25,
        23,
        &[("html", 1), ("image", 14), ("js", 6), ("json", 1), ("other", 1)],
        &[("data_url", 2)],
    ),
    ("wikipedia.org.browsertime.har", 7, 6, &[("html", 1), ("image", 3), ("js", 2)], &[("redirect", 1)]),
    (
        "wikipedia.org.perflog.json",
        30,
        12,
        &[("html", 3), ("image", 5), ("js", 2), ("json", 2)],
        &[("failed", 2), ("other_page", 15), ("redirect", 1)],
    ),
];

#[test]
fn all_nine_files_import_with_pinned_counts() {
    let files: Vec<String> = std::fs::read_dir(data_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".har") || n.ends_with(".json"))
        .collect();
    assert_eq!(files.len(), 9, "expected the nine recordings, found {files:?}");
    // Every file's counts first, so one run shows all that moved.
    for (name, ..) in EXPECTED {
        let imp = load(name);
        let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
        for o in imp.page.objects() {
            *by_type.entry(o.kind.name()).or_default() += 1;
        }
        let by_reason: BTreeMap<&str, usize> = imp.skipped.iter().map(|(r, n)| (r.name(), *n)).collect();
        println!(
            "{name}: {} entries, {} objects, types {by_type:?}, skipped {by_reason:?}",
            imp.entries_total,
            imp.page.len()
        );
    }
    for (name, entries, objects, types, skipped) in EXPECTED {
        let imp = load(name);
        let page = &imp.page;
        let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
        for o in page.objects() {
            *by_type.entry(o.kind.name()).or_default() += 1;
        }
        let by_reason: BTreeMap<&str, usize> = imp.skipped.iter().map(|(r, n)| (r.name(), *n)).collect();
        assert_eq!(imp.entries_total, *entries, "{name}: entries");
        assert_eq!(page.len(), *objects, "{name}: objects");
        assert_eq!(by_type, types.iter().copied().collect(), "{name}: objects per type");
        assert_eq!(by_reason, skipped.iter().copied().collect(), "{name}: skipped per reason");
        assert_eq!(page.len() + imp.skipped_total(), imp.entries_total, "{name}: every entry is used or counted");
        // Invariants of the model.
        assert_eq!(page.get(page.root()).kind, ContentType::Html, "{name}: root is the HTML document");
        for o in page.objects().iter().skip(1) {
            assert!(o.parent.unwrap() < o.id, "{name}: parent before child");
            assert!(o.cats_level <= 4);
        }
        assert!(page.total_wire_bytes() > 0, "{name}");
        let q = estimate(page, &imp.recorded_deliveries(), &QoeConfig::default());
        let fcp = q.first_contentful_paint_ns.unwrap();
        assert!(fcp <= q.largest_contentful_paint_ns.unwrap() && fcp <= q.time_to_interactive_ns.unwrap());
        assert!(q.page_load_ns.unwrap() >= q.first_render_ns.unwrap());
    }
}

#[test]
fn formats_are_detected() {
    assert_eq!(load("ferguson.com.har").format, SourceFormat::Har);
    assert_eq!(load("paulirish.com.devtoolslog.json").format, SourceFormat::DevtoolsLog);
    assert_eq!(load("google.com.perflog.json").format, SourceFormat::DevtoolsLog);
}

#[test]
fn redirect_chain_leads_to_the_root_and_initiators_to_parents() {
    // etat.lu: www.etat.lu -> www.etat.public.lu -> /fr/index.php (two 302s skipped).
    let imp = load("etat.lu.har");
    let p = &imp.page;
    assert_eq!(p.get(p.root()).url, "http://www.etat.public.lu/fr/index.php");
    let css = p.objects().iter().find(|o| o.url.ends_with("/assets/css/main.css")).unwrap();
    assert_eq!(css.parent, Some(p.root()));
    assert!(css.blocks_first_paint() && css.cats_level == 0);
    // paulirish.com: Google Fonts files are discovered by the fonts.googleapis.com stylesheet.
    let imp = load("paulirish.com.devtoolslog.json");
    let p = &imp.page;
    let sheet = p.objects().iter().find(|o| o.url.starts_with("https://fonts.googleapis.com/css")).unwrap();
    let fonts: Vec<_> = p.objects().iter().filter(|o| o.kind == ContentType::Font).collect();
    assert_eq!(fonts.len(), 6);
    assert!(fonts.iter().all(|f| f.parent == Some(sheet.id) && f.third_party));
    assert!(p.children(sheet.id).len() >= 6);
    // The analytics script and its beacons are level 4, Ads/Analytics, non-essential.
    let ga = p.objects().iter().find(|o| o.url == "https://www.google-analytics.com/analytics.js").unwrap();
    assert_eq!((ga.cats_level, ga.essential), (4, triage_web::Essentialness::NonEssential));
    // ferguson.com: script-initiated requests hang below their scripts.
    let imp = load("ferguson.com.har");
    assert!(imp.page.objects().iter().any(|o| o.parent.is_some_and(|x| x != ObjectId(0))));
}

#[test]
fn several_pages_one_file() {
    let first = load("wikipedia.org.perflog.json");
    assert_eq!(first.pages.len(), 2);
    assert_eq!(first.page_id, "page_1");
    let second =
        load_with("wikipedia.org.perflog.json", &ImportOptions { page: Some("page_2".into()), ..Default::default() });
    assert_eq!(second.page_id, "page_2");
    assert_eq!(second.skipped.get(&triage_web::SkipReason::OtherPage), Some(&15));
    // google.com: the first navigation failed (name not resolved); the default is the first
    // page with a usable entry.
    let g = load("google.com.perflog.json");
    assert_eq!(g.page_id, "page_2");
    let err = import_file(
        &data_dir().join("google.com.perflog.json"),
        &ImportOptions { page: Some("page_9".into()), ..Default::default() },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("google.com.perflog.json") && err.contains("page_9") && err.contains("page_1, page_2"),
        "{err}"
    );
}

#[test]
fn cache_hits_are_zero_network_objects_or_fetched() {
    // bbc.com: 85 entries were served from the browser's cache.
    let imp = load("bbc.com.devtools.har");
    assert_eq!((imp.page.len(), imp.cache_hits), (118, 85));
    let cached: Vec<_> = imp.page.objects().iter().filter(|o| o.from_cache).collect();
    assert_eq!(cached.len(), 85);
    assert!(cached.iter().all(|o| o.wire_bytes == 0));
    // The document is among them: the report says the recording is a warm load.
    assert!(imp.page.get(imp.page.root()).from_cache);
    let line = imp.cache_summary().expect("a line on the cache hits");
    assert!(line.starts_with("85 of 118 objects were served from the browser's cache"), "{line}");
    assert!(line.contains("the document among them (a warm load)") && line.contains("--keep-cache-hits"), "{line}");
    assert_eq!(imp.cache_hits_fetched, 0);
    // Simulated as misses, the same objects are fetched, each with the body its server sent
    // (Content-Length), or, for the 7 whose response has none, with its decoded size.
    let cold = load_with("bbc.com.devtools.har", &ImportOptions { keep_cache_hits: true, ..Default::default() });
    assert_eq!((cold.page.len(), cold.cache_hits, cold.cache_hits_fetched), (118, 0, 85));
    assert!(cold.page.objects().iter().all(|o| !o.from_cache));
    // The document: Content-Length 30,536 (gzip), where its decoded size is 186,054.
    let root = cold.page.get(cold.page.root());
    assert_eq!((root.wire_bytes, root.body_bytes), (30_536, 186_054));
    assert_eq!(cold.adjusted.get(&triage_web::Adjustment::ColdSizeDecoded), Some(&7));
    assert!(!imp.adjusted.contains_key(&triage_web::Adjustment::ColdSizeDecoded));
    let line = cold.cache_summary().expect("a line on the fetched cache hits");
    assert!(line.starts_with("85 of 118 objects") && line.contains("(a cold load)"), "{line}");
    assert!(!imp.skipped.contains_key(&triage_web::SkipReason::CacheHit));
}

#[test]
fn a_page_without_cache_hits_has_no_cache_line() {
    let imp = load("ferguson.com.har");
    assert_eq!((imp.cache_hits, imp.cache_hits_fetched), (0, 0));
    assert_eq!(imp.cache_summary(), None);
}

#[test]
fn recorded_estimates_are_network_lower_bounds() {
    // The HAR pages carry the browser's own paint times (ms): our network-level FCP must not
    // exceed them. ferguson.com: FCP 1476, LCP 2202; wikipedia.org: FCP = LCP 1016.
    for (name, fcp_ms, lcp_ms) in [("ferguson.com.har", 1476, 2202), ("wikipedia.org.browsertime.har", 1016, 1016)] {
        let imp = load(name);
        let q = estimate(&imp.page, &imp.recorded_deliveries(), &QoeConfig::default());
        let fcp = q.first_contentful_paint_ns.unwrap() / 1_000_000;
        let lcp = q.largest_contentful_paint_ns.unwrap() / 1_000_000;
        println!("{name}: FCP {fcp} ms (browser {fcp_ms}), LCP {lcp} ms (browser {lcp_ms})");
        assert!(fcp <= fcp_ms, "{name}: FCP {fcp} > {fcp_ms}");
        assert!(fcp > 0);
    }
}
