//! Import of the thesis's `transfer_sequence.json` (HAR_Replica, §5.7) into a [`Page`].
//!
//! The thesis's client "processes requests based on a predefined sequence specified in a
//! transfer_sequence.json file" (§5.8.2); the file is "an array of objects representing the
//! resources transferred during the recorded session, with key attributes such as object ID,
//! resource category, file extension, size, transfer time, start time, and a generated file name
//! based on its ID and extension" (§5.7). The thesis does not publish the file, so we read the
//! shape [`crate::export`] writes, which carries those seven attributes under these keys (and
//! accept the aliases in brackets):
//!
//! | key | meaning | required |
//! | --- | --- | --- |
//! | `id` (`object_id`, `objectId`) | object id, a non-negative integer, unique | no: the element's index |
//! | `category` (`resource_category`) | Table 4 category: `HTML`, `CSS`, `JavaScript`, `Ads/Analytics`, `Fonts`, `JSON`, `Images`, `Others` (any case; `ads`, `fonts`, `images`, ... too) | no: classified |
//! | `extension` (`file_extension`) | file extension | no |
//! | `size` (`objectSize`) | bytes, a non-negative number | **yes** |
//! | `transfer_time` (`transferTime`) | ms, at most 1e9 | no: 0 |
//! | `start_time` (`startTime`) | ms after the first request, at most 1e9 | no: 0 |
//! | `file_name` (`fileName`, `filename`) | dummy file name | no |
//!
//! and our additions, all optional: `url`, `type` (html, css, js, font, image, media, json,
//! other), `mime`, `cats_level` (0-4), `essential` (essential, non-essential, maybe), `parent`
//! (the id of an earlier element), `priority` (DevTools names), `render_blocking` (Chrome's
//! names, or a boolean).
//!
//! **The request order is the file order**: element `i` becomes object `i` (the first element
//! is the root document), whatever its `id`; `parent` ids are mapped to positions and must name
//! an earlier element. Missing values are derived as an import of a recording would: the type
//! from `type`, else the extension (of `extension`, `file_name` or `url`), else the category;
//! the URL, when absent, is `https://replica.invalid/{file_name}` (so every object is first
//! party); the parent, when absent, is the root; category, essentialness and CATS level are
//! classified ([`crate::classify`]) unless given; render-blocking status, when absent, is
//! inferred ([`crate::classify::infer_render_blocking`]: a stylesheet found by the root counts
//! as blocking, so under a reliability policy it stays reliable; write `render_blocking` to say
//! otherwise).
//!
//! Errors name the source, the element and the field
//! (`transfer_sequence.json[12].size: expected a number, found a string`); no input panics.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::builtin::object;
use crate::classify::{self, ContentCategory, Essentialness};
use crate::content;
use crate::error::{FileError, WebError};
use crate::json::{missing, wrong};
use crate::model::{BrowserPriority, ContentType, Page, RenderBlocking};
use crate::urlparts;

/// True if a JSON value looks like a transfer sequence rather than a DevTools log: a
/// non-empty array of objects, none with a `method` or `message` (DevTools events), the first
/// with a `size`.
pub fn looks_like(value: &Value) -> bool {
    let Value::Array(items) = value else { return false };
    let first_has_size = items
        .first()
        .and_then(Value::as_object)
        .is_some_and(|o| ["size", "objectSize"].iter().any(|k| o.contains_key(*k)));
    first_has_size
        && items.iter().all(|v| v.as_object().is_some_and(|o| !o.contains_key("method") && !o.contains_key("message")))
}

/// Reads a `transfer_sequence.json` file; errors name the file.
pub fn read_file(path: &Path) -> Result<Page, FileError> {
    let file = path.display().to_string();
    let err = |error| FileError { file: file.clone(), error };
    let bytes = std::fs::read(path).map_err(|e| err(WebError::Io(e.to_string())))?;
    let source = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| file.clone());
    parse_str(&String::from_utf8_lossy(&bytes), &source).map_err(err)
}

/// Parses a transfer sequence from text; `source` names it in errors and becomes the page name.
pub fn parse_str(text: &str, source: &str) -> Result<Page, WebError> {
    let value: Value = serde_json::from_str(text).map_err(|e| WebError::Json(format!("{source}: {e}")))?;
    parse_value(&value, source)
}

/// Parses an already parsed JSON value (see the module docs).
pub fn parse_value(value: &Value, source: &str) -> Result<Page, WebError> {
    let items = match value {
        Value::Array(a) => a,
        v => return Err(wrong(source, "an array of objects", v)),
    };
    if items.is_empty() {
        return Err(WebError::NoEntries(format!("{source}: an empty array; a page needs at least its root document")));
    }
    let mut position_of: BTreeMap<u64, usize> = BTreeMap::new();
    let mut objects = Vec::with_capacity(items.len());
    let mut root_site = String::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{source}[{i}]");
        let obj = item.as_object().ok_or_else(|| wrong(&at, "an object", item))?;
        let e = Element::read(obj, &at, i)?;
        if let Some(first) = position_of.insert(e.id, i) {
            return Err(WebError::Field {
                path: format!("{at}.{}", e.id_key),
                problem: format!("duplicate id {} (element {first} has it too)", e.id),
            });
        }
        let parent = match (i, e.parent) {
            (0, None) => None,
            (0, Some((key, p))) => {
                return Err(WebError::Field {
                    path: format!("{at}.{key}"),
                    problem: format!("the first element is the root document and has no parent, found {p}"),
                })
            }
            (_, None) => Some(0),
            (_, Some((key, p))) => match position_of.get(&p) {
                Some(&pos) if pos < i => Some(pos as u32),
                _ => {
                    return Err(WebError::Field {
                        path: format!("{at}.{key}"),
                        problem: format!(
                            "id {p} is not an earlier element (the file order is the request order, so a \
                             parent comes before its children)"
                        ),
                    })
                }
            },
        };
        let url = e.url.clone().unwrap_or_else(|| format!("https://replica.invalid/{}", e.file_name()));
        if i == 0 {
            root_site = urlparts::site(&urlparts::host(&url));
        }
        let mut o = object(i as u32, parent, &url, e.kind(), e.size);
        o.third_party = urlparts::site(&urlparts::host(&url)) != root_site;
        o.mime = e.mime.clone().unwrap_or_default();
        o.browser_priority = e.priority;
        o.render_blocking = e.render_blocking;
        o.recorded_start_ns = e.start_ns;
        o.recorded_duration_ns = e.transfer_ns;
        classify::classify(&mut o);
        if let Some(cat) = e.category {
            o.category = cat;
            o.tracker = cat == ContentCategory::AdsAnalytics;
            o.essential = cat.essentialness();
            o.cats_level = classify::cats_level(&o);
        }
        if let Some(ess) = e.essential {
            o.essential = ess;
        }
        if let Some(level) = e.cats_level {
            o.cats_level = level;
        }
        objects.push(o);
    }
    Page::new(source, objects)
}

/// One element's fields, checked.
struct Element {
    id: u64,
    id_key: &'static str,
    category: Option<ContentCategory>,
    extension: Option<String>,
    size: u64,
    transfer_ns: u64,
    start_ns: u64,
    file_name: Option<String>,
    url: Option<String>,
    kind: Option<ContentType>,
    mime: Option<String>,
    cats_level: Option<u8>,
    essential: Option<Essentialness>,
    parent: Option<(&'static str, u64)>,
    priority: Option<BrowserPriority>,
    render_blocking: Option<RenderBlocking>,
}

/// The first of `keys` present (and not null), with the key found.
fn field<'a>(obj: &'a Map<String, Value>, keys: &[&'static str]) -> Option<(&'static str, &'a Value)> {
    keys.iter().find_map(|k| obj.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
}

fn string(obj: &Map<String, Value>, keys: &[&'static str], at: &str) -> Result<Option<String>, WebError> {
    match field(obj, keys) {
        None => Ok(None),
        Some((_, Value::String(s))) => Ok(Some(s.clone())),
        Some((k, v)) => Err(wrong(&format!("{at}.{k}"), "a string", v)),
    }
}

/// A non-negative finite number (numeric strings accepted, as some exporters write them).
fn number(obj: &Map<String, Value>, keys: &[&'static str], at: &str) -> Result<Option<(&'static str, f64)>, WebError> {
    let Some((k, v)) = field(obj, keys) else { return Ok(None) };
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some((k, n))),
        Some(n) => Err(WebError::Field {
            path: format!("{at}.{k}"),
            problem: format!("expected a non-negative number, found {n}"),
        }),
        None => Err(wrong(&format!("{at}.{k}"), "a number", v)),
    }
}

/// A non-negative integer.
fn integer(obj: &Map<String, Value>, keys: &[&'static str], at: &str) -> Result<Option<(&'static str, u64)>, WebError> {
    let Some((k, n)) = number(obj, keys, at)? else { return Ok(None) };
    if n.fract() != 0.0 || n > u32::MAX as f64 {
        return Err(WebError::Field {
            path: format!("{at}.{k}"),
            problem: format!("expected an integer from 0 to {}, found {n}", u32::MAX),
        });
    }
    Ok(Some((k, n as u64)))
}

/// Longest time accepted, ms (11.6 days): keeps ns below 2^50, where ms -> ns -> ms is exact,
/// so export and import round-trip.
const MAX_MS: f64 = 1e9;

/// A time in ms, as ns; 0 when absent.
fn time_ms(obj: &Map<String, Value>, keys: &[&'static str], at: &str) -> Result<u64, WebError> {
    match number(obj, keys, at)? {
        None => Ok(0),
        Some((_, ms)) if ms <= MAX_MS => Ok((ms * 1e6).round() as u64),
        Some((k, ms)) => Err(WebError::Field {
            path: format!("{at}.{k}"),
            problem: format!("{ms} ms is longer than the {MAX_MS:e} ms accepted"),
        }),
    }
}

fn parse_category(s: &str) -> Option<ContentCategory> {
    let norm: String = s.trim().to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    Some(match norm.as_str() {
        "html" => ContentCategory::Html,
        "css" => ContentCategory::Css,
        "javascript" | "js" => ContentCategory::JavaScript,
        "adsanalytics" | "ads" | "analytics" => ContentCategory::AdsAnalytics,
        "fonts" | "font" => ContentCategory::Fonts,
        "json" => ContentCategory::Json,
        "images" | "image" => ContentCategory::Images,
        "others" | "other" => ContentCategory::Others,
        _ => return None,
    })
}

impl Element {
    fn read(obj: &Map<String, Value>, at: &str, index: usize) -> Result<Element, WebError> {
        let (id_key, id) = integer(obj, &["id", "object_id", "objectId"], at)?.unwrap_or(("id", index as u64));
        let category = match field(obj, &["category", "resource_category", "resourceCategory"]) {
            None => None,
            Some((k, Value::String(s))) => Some(parse_category(s).ok_or_else(|| WebError::Field {
                path: format!("{at}.{k}"),
                problem: format!(
                    "unknown category {s:?}, expected one of HTML, CSS, JavaScript, Ads/Analytics, Fonts, JSON, \
                     Images, Others"
                ),
            })?),
            Some((k, v)) => return Err(wrong(&format!("{at}.{k}"), "a string", v)),
        };
        let size = match number(obj, &["size", "objectSize"], at)? {
            Some((_, n)) => n.round().min(u64::MAX as f64) as u64,
            None => return Err(missing(&format!("{at}.size"), "a number")),
        };
        let kind = match field(obj, &["type"]) {
            None => None,
            Some((k, Value::String(s))) => Some(ContentType::from_name(s).ok_or_else(|| WebError::Field {
                path: format!("{at}.{k}"),
                problem: format!("unknown type {s:?}, expected one of html, css, js, font, image, media, json, other"),
            })?),
            Some((k, v)) => return Err(wrong(&format!("{at}.{k}"), "a string", v)),
        };
        let cats_level = match integer(obj, &["cats_level"], at)? {
            None => None,
            Some((_, l)) if l <= 4 => Some(l as u8),
            Some((k, l)) => {
                return Err(WebError::Field {
                    path: format!("{at}.{k}"),
                    problem: format!("CATS level {l}, expected 0 to 4"),
                })
            }
        };
        let essential = match string(obj, &["essential"], at)? {
            None => None,
            Some(s) => Some(Essentialness::parse(&s).ok_or_else(|| WebError::Field {
                path: format!("{at}.essential"),
                problem: format!("unknown essentialness {s:?}, expected essential, non-essential or maybe"),
            })?),
        };
        let priority = match string(obj, &["priority"], at)? {
            None => None,
            Some(s) => Some(BrowserPriority::parse(&s).ok_or_else(|| WebError::Field {
                path: format!("{at}.priority"),
                problem: format!("unknown priority {s:?}, expected VeryHigh, High, Medium, Low or VeryLow"),
            })?),
        };
        let render_blocking = match field(obj, &["render_blocking", "renderBlocking"]) {
            None => None,
            Some((_, Value::Bool(true))) => Some(RenderBlocking::Blocking),
            Some((_, Value::Bool(false))) => Some(RenderBlocking::NonBlocking),
            Some((k, Value::String(s))) => Some(RenderBlocking::parse(s).ok_or_else(|| WebError::Field {
                path: format!("{at}.{k}"),
                problem: format!(
                    "unknown render-blocking status {s:?}, expected blocking, in_body_parser_blocking, \
                     potentially_blocking, non_blocking or a boolean"
                ),
            })?),
            Some((k, v)) => return Err(wrong(&format!("{at}.{k}"), "a string or a boolean", v)),
        };
        Ok(Element {
            id,
            id_key,
            category,
            extension: string(obj, &["extension", "file_extension", "fileExtension"], at)?,
            size,
            transfer_ns: time_ms(obj, &["transfer_time", "transferTime"], at)?,
            start_ns: time_ms(obj, &["start_time", "startTime"], at)?,
            file_name: string(obj, &["file_name", "fileName", "filename"], at)?,
            url: string(obj, &["url"], at)?,
            kind,
            mime: string(obj, &["mime", "mimeType"], at)?,
            cats_level,
            essential,
            parent: integer(obj, &["parent"], at)?,
            priority,
            render_blocking,
        })
    }

    /// The content type: `type`, else the extension of `extension`, `file_name` or `url`, else
    /// the category, else Other.
    fn kind(&self) -> ContentType {
        let by_ext = |name: &str| content::from_extension(&format!("https://x/{name}"));
        self.kind
            .or_else(|| self.extension.as_deref().and_then(|e| by_ext(&format!("x.{}", e.trim_start_matches('.')))))
            .or_else(|| self.file_name.as_deref().and_then(by_ext))
            .or_else(|| self.url.as_deref().and_then(content::from_extension))
            .or_else(|| {
                self.category.map(|c| match c {
                    ContentCategory::Html => ContentType::Html,
                    ContentCategory::Css => ContentType::Css,
                    ContentCategory::JavaScript => ContentType::Js,
                    ContentCategory::Fonts => ContentType::Font,
                    ContentCategory::Images => ContentType::Image,
                    ContentCategory::Json => ContentType::Json,
                    ContentCategory::AdsAnalytics | ContentCategory::Others => ContentType::Other,
                })
            })
            .unwrap_or(ContentType::Other)
    }

    /// `file_name`, else `{id}.{extension}`, else `{id}`.
    fn file_name(&self) -> String {
        match (&self.file_name, &self.extension) {
            (Some(f), _) if !f.is_empty() => f.clone(),
            (_, Some(e)) if !e.is_empty() => format!("{}.{}", self.id, e.trim_start_matches('.')),
            _ => self.id.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::transfer_sequence;
    use crate::model::ObjectId;

    fn err(text: &str) -> String {
        parse_str(text, "transfer_sequence.json").unwrap_err().to_string()
    }

    #[test]
    fn reads_the_thesis_attributes_alone() {
        let text = r#"[
          {"id": 0, "category": "HTML", "extension": "html", "size": 32894, "transfer_time": 84.5,
           "start_time": 0, "file_name": "0.html"},
          {"id": 1, "category": "Fonts", "extension": "woff2", "size": 40000, "transfer_time": 12,
           "start_time": 90.25, "file_name": "1.woff2"},
          {"id": 7, "category": "Ads/Analytics", "extension": "js", "size": "45000", "transfer_time": 5,
           "start_time": 100, "file_name": "7.js"},
          {"id": 3, "category": "Others", "extension": "mp4", "size": 12000000.4, "file_name": "3.mp4"}
        ]"#;
        let p = parse_str(text, "v1/transfer_sequence.json").unwrap();
        assert_eq!(p.name(), "v1/transfer_sequence.json");
        let kinds: Vec<ContentType> = p.objects().iter().map(|o| o.kind).collect();
        assert_eq!(kinds, [ContentType::Html, ContentType::Font, ContentType::Js, ContentType::Media]);
        let o = p.get(ObjectId(2));
        assert_eq!(
            (o.category, o.tracker, o.essential),
            (ContentCategory::AdsAnalytics, true, Essentialness::NonEssential)
        );
        assert_eq!((o.wire_bytes, o.recorded_start_ns, o.recorded_duration_ns), (45_000, 100_000_000, 5_000_000));
        assert_eq!(o.url, "https://replica.invalid/7.js");
        assert_eq!(p.get(ObjectId(1)).recorded_start_ns, 90_250_000);
        assert_eq!(p.get(ObjectId(3)).wire_bytes, 12_000_000);
        assert!(p.objects().iter().skip(1).all(|o| o.parent == Some(ObjectId(0)) && !o.third_party));
    }

    #[test]
    fn errors_name_element_and_field() {
        assert_eq!(
            err(r#"[{"size": 1}, {"size": "big"}]"#),
            "transfer_sequence.json[1].size: expected a number, found a string"
        );
        assert_eq!(err(r#"[{"id": 0}]"#), "transfer_sequence.json[0].size: missing (expected a number)");
        assert_eq!(err(r#"{"size": 1}"#), "transfer_sequence.json: expected an array of objects, found an object");
        assert_eq!(err(r#"[{"size": 1}, 7]"#), "transfer_sequence.json[1]: expected an object, found a number");
        assert!(err("[]").contains("empty array"));
        assert!(err("[{\"size\": 1},").starts_with("not valid JSON: transfer_sequence.json: "));
        assert_eq!(
            err(r#"[{"size": 1}, {"size": -4}]"#),
            "transfer_sequence.json[1].size: expected a non-negative number, found -4"
        );
        assert_eq!(
            err(r#"[{"id": 3, "size": 1}, {"object_id": 3, "size": 1}]"#),
            "transfer_sequence.json[1].object_id: duplicate id 3 (element 0 has it too)"
        );
        assert_eq!(
            err(r#"[{"size": 1}, {"id": 1.5, "size": 1}]"#),
            "transfer_sequence.json[1].id: expected an integer from 0 to 4294967295, found 1.5"
        );
        assert!(err(r#"[{"size": 1}, {"size": 1, "parent": 9}]"#)
            .starts_with("transfer_sequence.json[1].parent: id 9 is not an earlier element"));
        assert!(err(r#"[{"size": 1, "parent": 0}]"#).starts_with("transfer_sequence.json[0].parent: the first element"));
        assert!(err(r#"[{"size": 1, "category": "Video"}]"#).contains("[0].category: unknown category \"Video\""));
        assert!(err(r#"[{"size": 1, "type": "pdf"}]"#).contains("[0].type: unknown type"));
        assert!(err(r#"[{"size": 1, "cats_level": 5}]"#).contains("[0].cats_level: CATS level 5, expected 0 to 4"));
        assert!(
            err(r#"[{"size": 1, "render_blocking": 1}]"#).contains("expected a string or a boolean, found a number")
        );
        assert!(err(r#"[{"size": 1, "url": 1}]"#).contains("[0].url: expected a string, found a number"));
        assert!(err(r#"[{"size": 1, "start_time": 2e9}]"#).contains("[0].start_time: 2000000000 ms is longer"));
    }

    #[test]
    fn round_trips_built_in_pages() {
        for name in ["cats", "youtube", "news", "news-v2"] {
            let page = crate::builtin::builtin(name).unwrap();
            let seq = transfer_sequence(&page);
            let text = serde_json::to_string(&seq).unwrap();
            let back = parse_str(&text, name).unwrap();
            assert_eq!(transfer_sequence(&back), seq, "{name}");
            for (a, b) in page.objects().iter().zip(back.objects()) {
                assert_eq!(
                    (a.kind, a.wire_bytes, a.parent, a.category, a.essential, a.cats_level, a.tracker, a.third_party),
                    (b.kind, b.wire_bytes, b.parent, b.category, b.essential, b.cats_level, b.tracker, b.third_party),
                    "{name} {}",
                    a.id
                );
                assert_eq!(
                    (a.render_blocking, a.browser_priority, &a.url, &a.mime),
                    (b.render_blocking, b.browser_priority, &b.url, &b.mime)
                );
            }
        }
    }

    #[test]
    fn detection() {
        assert!(looks_like(&serde_json::json!([{"size": 1, "id": 0}])));
        assert!(!looks_like(&serde_json::json!([{"method": "Network.requestWillBeSent", "size": 1}])));
        assert!(!looks_like(&serde_json::json!([{"params": {}}])));
        assert!(!looks_like(&serde_json::json!([])));
    }
}
