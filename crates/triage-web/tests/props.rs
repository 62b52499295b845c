//! Properties: the classifiers are total over arbitrary URLs, glob matching agrees with a
//! reference matcher, the parsers never panic on arbitrary or JSON-shaped input, and the QoE
//! estimates are ordered as their definitions imply.

use proptest::prelude::*;
use serde_json::{json, Value};
use triage_web::builtin::{self, object};
use triage_web::classify::{classify, ContentCategory};
use triage_web::glob::Glob;
use triage_web::qoe::{estimate, Deliveries, Delivery, QoeConfig};
use triage_web::{import_str, import_value, urlparts, ContentType, ImportOptions};

/// Reference glob matcher: plain recursion (exponential, fine for short inputs).
fn reference(p: &[char], t: &[char]) -> bool {
    match p.split_first() {
        None => t.is_empty(),
        Some(('*', rest)) => (0..=t.len()).any(|i| reference(rest, &t[i..])),
        Some(('?', rest)) => !t.is_empty() && reference(rest, &t[1..]),
        Some((c, rest)) => t.first() == Some(c) && reference(rest, &t[1..]),
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        (-1.0e12f64..1.0e12).prop_map(|f| json!(f)),
        "[a-zA-Z0-9:/._ -]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("https://a.com/"),
            Just("data:x"),
            Just("2024-01-01T00:00:00Z"),
            Just("Document"),
            Just("VeryHigh"),
            Just("Network.requestWillBeSent"),
            Just("Network.loadingFinished"),
            Just("text/html"),
            Just("blocking"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop_oneof![
            Just("url"),
            Just("request"),
            Just("response"),
            Just("status"),
            Just("method"),
            Just("params"),
            Just("requestId"),
            Just("timestamp"),
            Just("_initiator"),
            Just("content"),
            Just("mimeType"),
            Just("type"),
            Just("loaderId"),
            Just("frameId"),
            Just("startedDateTime"),
            Just("message"),
            Just("encodedDataLength"),
            Just("redirectURL"),
            Just("pageref"),
            Just("_transferSize"),
            Just("initiator"),
            Just("redirectResponse"),
            Just("headers"),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(keys.prop_map(str::to_string), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn classifiers_are_total(url in "\\PC{0,80}", k in 0usize..8, bytes in any::<u32>()) {
        let kind = ContentType::ALL[k];
        let _ = (urlparts::host(&url), urlparts::origin(&url), urlparts::path(&url), urlparts::extension(&url));
        let _ = urlparts::site(&urlparts::host(&url));
        let mut o = object(1, Some(0), &url, kind, u64::from(bytes));
        classify(&mut o);
        prop_assert!(o.cats_level <= 4);
        prop_assert_eq!(o.essential, o.category.essentialness());
        prop_assert_eq!(o.tracker, o.category == ContentCategory::AdsAnalytics);
        if o.tracker {
            prop_assert_eq!(o.cats_level, 4);
        }
    }

    #[test]
    fn glob_agrees_with_reference(p in "[ab*?]{0,8}", t in "[abc]{0,10}") {
        let pc: Vec<char> = p.chars().collect();
        let tc: Vec<char> = t.chars().collect();
        prop_assert_eq!(Glob::new(&p).matches(&t), reference(&pc, &tc));
    }

    #[test]
    fn glob_literals_and_stars(t in "\\PC{0,30}", cut in 0usize..31) {
        let lit: String = t.chars().filter(|c| *c != '*' && *c != '?').collect();
        prop_assert!(Glob::new(&lit).matches(&lit));
        prop_assert!(Glob::new("*").matches(&t));
        let prefix: String = lit.chars().take(cut).collect();
        let pattern = format!("{}*", prefix);
        prop_assert!(Glob::new(&pattern).matches(&lit));
    }

    #[test]
    fn parsers_never_panic_on_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = import_str(&String::from_utf8_lossy(&data), &ImportOptions::default());
    }

    #[test]
    fn parsers_never_panic_on_json_shapes(v in json_value(), entries in prop::collection::vec(json_value(), 0..6)) {
        let opts = ImportOptions::default();
        let _ = import_value(&v, &opts);
        let _ = import_value(&json!({"log": {"entries": entries.clone(), "pages": v.clone()}}), &opts);
        let _ = import_value(&Value::Array(entries.clone()), &opts);
        let wrapped: Vec<Value> = entries.iter().map(|e| json!({"message": e.to_string()})).collect();
        let _ = import_value(&Value::Array(wrapped), &opts);
        let _ = import_value(&Value::Array(entries.iter().map(|e| json!({"method": "Network.requestWillBeSent", "params": e})).collect()), &opts);
    }

    #[test]
    fn qoe_estimates_are_ordered(page_ix in 0usize..4, seeds in prop::collection::vec((0u64..5_000, 0u64..5_000), 129)) {
        let page = builtin::builtin(builtin::BUILTIN_PAGES[page_ix].0).unwrap();
        // Requests after the parent's completion, completions after requests.
        let mut d = Deliveries::new();
        for o in page.objects() {
            let (gap, dur) = seeds[o.id.index() % seeds.len()];
            let request_ns = o.parent.map(|p| d[&p].complete_ns + gap).unwrap_or(0);
            d.insert(o.id, Delivery { request_ns, complete_ns: request_ns + dur + 1 });
        }
        let q = estimate(&page, &d, &QoeConfig::default());
        let fcp = q.first_contentful_paint_ns.unwrap();
        let plt = q.page_load_ns.unwrap();
        prop_assert!(fcp >= d[&page.root()].complete_ns);
        prop_assert!(fcp <= q.largest_contentful_paint_ns.unwrap());
        prop_assert!(fcp <= q.time_to_interactive_ns.unwrap());
        prop_assert!(fcp <= plt && q.first_render_ns.unwrap() <= plt && q.time_to_interactive_ns.unwrap() <= plt);
        let si = q.speed_index_ns.unwrap();
        prop_assert!(fcp <= si && si <= plt, "SI {} outside [{}, {}]", si, fcp, plt);
    }
}

#[test]
fn chrome_priorities_map_to_rfc9218_urgencies_in_order() {
    use triage_web::BrowserPriority as B;
    let all = [B::VeryHigh, B::High, B::Medium, B::Low, B::VeryLow];
    let u: Vec<u8> = all.iter().map(|b| b.rfc9218_urgency()).collect();
    assert_eq!(u, [0, 1, 2, 3, 4]);
}
