//! `transfer_sequence.json` round trips: real recordings from ../shared/data/pages and the
//! thesis's page versions are exported with dummy files (HAR_Replica's shape, §5.7), read back
//! through the ordinary import (format detection) and through `sequence::read_file`, and give
//! the same sequence, classification and reliability plans.

mod common;
use std::path::PathBuf;

use triage_web::export::{transfer_sequence, write_replica};
use triage_web::{import_file, ImportOptions, Page, ReliabilityPolicy, SourceFormat};

use common::data_dir;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("triage-web-seq-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn round_trip(page: &Page, name: &str) {
    let dir = scratch(name);
    let seq = write_replica(page, &dir).unwrap();
    let file = dir.join("transfer_sequence.json");
    let imp = import_file(&file, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imp.format, SourceFormat::TransferSequence);
    assert_eq!((imp.page.len(), imp.entries_total, imp.skipped_total()), (page.len(), page.len(), 0));
    let direct = triage_web::sequence::read_file(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(direct.name(), "transfer_sequence.json");
    for back in [&imp.page, &direct] {
        assert_eq!(transfer_sequence(back), seq, "{name}");
        for p in ReliabilityPolicy::ALL {
            let (a, b) = (p.plan(page), p.plan(back));
            assert_eq!(
                (a.unreliable, a.overridden, a.unreliable_bytes),
                (b.unreliable, b.overridden, b.unreliable_bytes),
                "{name} {p}"
            );
        }
    }
    // Every dummy file has the object's size.
    for item in &seq {
        let len = std::fs::metadata(dir.join("dummy_files").join(&item.file_name)).unwrap().len();
        assert_eq!(len, item.size, "{name} {}", item.file_name);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn real_pages_round_trip() {
    for name in ["ferguson.com.har", "paulirish.com.devtoolslog.json", "etat.lu.har", "bbc.com.devtools.har"] {
        let page =
            import_file(&data_dir().join(name), &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}")).page;
        // Recorded pages are built in request order, so file order = id order.
        let seq = transfer_sequence(&page);
        assert!(seq.iter().enumerate().all(|(i, t)| t.id as usize == i), "{name}");
        round_trip(&page, name);
    }
}

#[test]
fn thesis_versions_round_trip() {
    for page in triage_web::news_versions::news_versions() {
        let name = page.name().to_string();
        round_trip(&page, &name);
    }
}

#[test]
fn a_page_option_other_than_the_sequence_is_an_error() {
    let v = serde_json::json!([{"size": 10}]);
    let opts = ImportOptions { page: Some("page_2".into()), keep_cache_hits: false };
    let e = triage_web::import_value(&v, &opts).unwrap_err().to_string();
    assert_eq!(e, "no page \"page_2\" in this file (pages: transfer_sequence)");
    let opts = ImportOptions { page: Some("transfer_sequence".into()), keep_cache_hits: false };
    assert_eq!(triage_web::import_value(&v, &opts).unwrap().page.len(), 1);
}

mod props {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};
    use triage_web::export::transfer_sequence;
    use triage_web::sequence::parse_value;

    /// A value for one of the sequence's keys: mostly well-typed, sometimes not.
    fn value_for(key: &'static str) -> BoxedStrategy<Value> {
        let good: BoxedStrategy<Value> = match key {
            "id" | "parent" => (0u32..8).prop_map(|n| json!(n)).boxed(),
            "size" => (0.0f64..1e7).prop_map(|f| json!(f)).boxed(),
            "transfer_time" | "start_time" => (0.0f64..1.2e9).prop_map(|f| json!(f)).boxed(),
            "cats_level" => (0u8..5).prop_map(|n| json!(n)).boxed(),
            "category" => prop::sample::select(vec![
                "HTML",
                "CSS",
                "JavaScript",
                "Ads/Analytics",
                "Fonts",
                "JSON",
                "Images",
                "Others",
            ])
            .prop_map(|s| json!(s))
            .boxed(),
            "type" => prop::sample::select(vec!["html", "css", "js", "font", "image", "media", "json", "other"])
                .prop_map(|s| json!(s))
                .boxed(),
            "essential" => {
                prop::sample::select(vec!["essential", "non-essential", "maybe"]).prop_map(|s| json!(s)).boxed()
            }
            "priority" => prop::sample::select(vec!["VeryHigh", "High", "Medium", "Low", "VeryLow"])
                .prop_map(|s| json!(s))
                .boxed(),
            "render_blocking" => {
                prop_oneof![any::<bool>().prop_map(|b| json!(b)), Just(json!("blocking")), Just(json!("non_blocking"))]
                    .boxed()
            }
            "url" => prop::sample::select(vec![
                "https://a.example/",
                "https://cdn.a.example/x.css",
                "https://www.google-analytics.com/analytics.js",
                "https://fonts.gstatic.com/f.woff2",
                "not a url",
            ])
            .prop_map(|s| json!(s))
            .boxed(),
            _ => "[a-z0-9.]{0,8}".prop_map(|s| json!(s)).boxed(),
        };
        let bad = prop_oneof![Just(Value::Null), Just(json!(-1)), Just(json!("x")), Just(json!([1])), Just(json!(1.5))];
        prop_oneof![8 => good, 1 => bad].boxed()
    }

    const KEYS: [&str; 14] = [
        "id",
        "category",
        "extension",
        "size",
        "transfer_time",
        "start_time",
        "file_name",
        "url",
        "type",
        "cats_level",
        "essential",
        "parent",
        "priority",
        "render_blocking",
    ];

    fn element() -> impl Strategy<Value = Value> {
        prop::collection::vec((prop::sample::select(KEYS.to_vec()), any::<u8>()), 0..10).prop_flat_map(|picked| {
            let keys: Vec<&'static str> = picked.iter().map(|(k, _)| *k).chain(std::iter::once("size")).collect();
            keys.iter().map(|k| value_for(k)).collect::<Vec<_>>().prop_map(move |vals| {
                let mut m = Map::new();
                for (k, v) in keys.iter().zip(vals) {
                    m.insert(k.to_string(), v);
                }
                Value::Object(m)
            })
        })
    }

    proptest! {
        #[test]
        fn sequences_parse_or_fail_cleanly_and_round_trip(items in prop::collection::vec(element(), 0..8)) {
            match parse_value(&Value::Array(items), "t.json") {
                Ok(page) => {
                    let seq = transfer_sequence(&page);
                    let back = parse_value(&serde_json::to_value(&seq).unwrap(), "t.json").unwrap();
                    prop_assert_eq!(transfer_sequence(&back), seq);
                }
                Err(e) => prop_assert!(e.to_string().starts_with("t.json"), "{}", e),
            }
        }
    }
}
