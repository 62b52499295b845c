//! A page file is imported once per process and shared by every scenario that loads it;
//! a file whose bytes changed is imported again, and a file gone is an error again.

use triage_sim::scenario::load_page;

fn har(size_bytes: u64) -> String {
    format!(
        r#"{{"log": {{"entries": [{{"request": {{"url": "https://a.com/"}},
            "response": {{"status": 200, "bodySize": {size_bytes}, "headersSize": 0,
            "content": {{"size": {size_bytes}, "mimeType": "text/html"}}}}}}]}}}}"#
    )
}

#[test]
fn a_changed_file_is_imported_again() {
    let dir = std::env::temp_dir().join(format!("triage-import-cache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("page.har");
    let src = file.display().to_string();
    std::fs::write(&file, har(1000)).unwrap();
    let first = load_page(&src, None, None).unwrap();
    assert_eq!(first.objects().len(), 1);
    assert_eq!(first.objects()[0].url, "https://a.com/");
    assert_eq!(first.objects()[0].wire_bytes, 1000);
    // The second load is the cached import: the same page.
    assert_eq!(load_page(&src, None, None).unwrap(), first);
    // Same length, other bytes: imported again.
    std::fs::write(&file, har(2000)).unwrap();
    let second = load_page(&src, None, None).unwrap();
    assert_eq!(second.objects()[0].wire_bytes, 2000);
    // A page id the file does not have is an error, whatever was cached for the file.
    let e = load_page(&src, Some("page_9"), None).unwrap_err();
    assert!(e.contains(&src), "{e}");
    std::fs::remove_file(&file).unwrap();
    let e = load_page(&src, None, None).unwrap_err();
    assert!(e.contains(&src), "{e}");
    std::fs::remove_dir_all(dir).ok();
}
