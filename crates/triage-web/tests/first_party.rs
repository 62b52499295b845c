//! First- vs third-party by the Public Suffix List (issue 15): under a two-label public
//! suffix such as com.ar, a stylesheet from cdn.example.com.ar is a third party of
//! www.shop.com.ar (the old rule, the last two labels, made both "com.ar"), so it does not get
//! the first party's render-blocking CSS level.

use triage_web::{import_str, ImportOptions};

const HAR: &str = r#"{"log": {"entries": [
 {"request": {"url": "https://www.shop.com.ar/"}, "startedDateTime": "2024-01-01T00:00:00.000Z", "time": 50,
  "response": {"status": 200, "content": {"size": 20000, "mimeType": "text/html"}}},
 {"request": {"url": "https://static.shop.com.ar/site.css"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_renderBlocking": "blocking",
  "response": {"status": 200, "content": {"size": 8000, "mimeType": "text/css"}}},
 {"request": {"url": "https://cdn.example.com.ar/widget.css"}, "startedDateTime": "2024-01-01T00:00:00.100Z", "time": 20,
  "_renderBlocking": "blocking",
  "response": {"status": 200, "content": {"size": 8000, "mimeType": "text/css"}}}
]}}"#;

#[test]
fn cdn_under_com_ar_is_a_third_party_of_www_shop_com_ar() {
    let imp = import_str(HAR, &ImportOptions::default()).unwrap();
    let o = imp.page.objects();
    assert_eq!(o.len(), 3);
    assert!(!o[1].third_party, "static.shop.com.ar is shop.com.ar, the page's own site");
    assert!(o[2].third_party, "cdn.example.com.ar is example.com.ar, another site");
    // The CATS levels (CATS §II-B): the page's own render-blocking stylesheet is level 0, the
    // third party's is not.
    assert_eq!(o[1].cats_level, 0);
    assert_eq!(o[2].cats_level, 1);
}
