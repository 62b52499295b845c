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
