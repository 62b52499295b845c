//! Export in the shape of the thesis's HAR_Replica tool (§5.7): a `transfer_sequence.json`
//! and one dummy file per object, of the object's size and type.
//!
//! `transfer_sequence.json` is an array, one element per object in request order, with the
//! attributes §5.7 lists — object ID, resource category, file extension, size, transfer time,
//! start time and a file name generated from the ID and extension:
//!
//! ```json
//! [{"id": 0, "category": "HTML", "extension": "html", "size": 32894,
//!   "transfer_time": 1084.2, "start_time": 0.0, "file_name": "0.html",
//!   "url": "https://...", "type": "html", "mime": "text/html", "cats_level": 0,
//!   "essential": "essential", "parent": null, "priority": "VeryHigh", "render_blocking": "non_blocking"}]
//! ```
//!
//! `size` is bytes on the wire; `transfer_time` and `start_time` are milliseconds from the
//! recording (0 for built-in pages). `url` onwards are our additions, enough for
//! [`crate::sequence`] to read the page back with its classification. Dummy files start with a
//! marker of their type (`<!doctype html>`, `/*`, PNG/JPEG/GIF/WOFF2 magic, `{`) and are padded
//! deterministically to exactly `size` bytes (JSON dummies stay valid JSON when `size` allows).
//!
//! Dummy files are written in blocks, never built in memory, and their sizes are checked up
//! front against [`MAX_EXPORT_FILE_BYTES`] and [`MAX_EXPORT_BYTES`]: an imported size of
//! 1e300 once made the export allocate 14.6 GB.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::WebError;
use crate::model::{ContentType, Page, RenderBlocking, WebObject};
use crate::urlparts;

/// One element of `transfer_sequence.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferItem {
    /// Object id.
    pub id: u32,
    /// Thesis content category (Table 4 name).
    pub category: String,
    /// File extension.
    pub extension: String,
    /// Bytes on the wire.
    pub size: u64,
    /// Recorded transfer time, ms.
    pub transfer_time: f64,
    /// Recorded start time, ms after the first request.
    pub start_time: f64,
    /// Generated file name `{id}.{extension}`.
    pub file_name: String,
    /// Original URL.
    pub url: String,
    /// Content type.
    #[serde(rename = "type")]
    pub kind: ContentType,
    /// MIME type as recorded (may be empty).
    pub mime: String,
    /// CATS level.
    pub cats_level: u8,
    /// Essentialness.
    pub essential: String,
    /// Discovery parent id.
    pub parent: Option<u32>,
    /// The browser's priority (DevTools name), when known.
    pub priority: Option<&'static str>,
    /// Render-blocking status, when known.
    pub render_blocking: Option<RenderBlocking>,
}

/// The extension a dummy file gets: the URL's if it fits the type, else the type's default.
pub fn extension_for(o: &WebObject) -> String {
    let fits = |e: &str| crate::content::from_extension(&format!("x.{e}")) == Some(o.kind);
    match urlparts::extension(&o.url) {
        Some(e) if fits(&e) => e,
        _ => o.kind.default_extension().to_string(),
    }
}

/// The transfer sequence of a page, in request order: object id order, the order in which an
/// import places recorded requests (by start time, the root first) and in which
/// [`crate::sequence`] reads a file back, so export and import round-trip exactly.
pub fn transfer_sequence(page: &Page) -> Vec<TransferItem> {
    page.objects()
        .iter()
        .map(|o| {
            let extension = extension_for(o);
            TransferItem {
                id: o.id.0,
                category: o.category.name().to_string(),
                file_name: format!("{}.{extension}", o.id.0),
                extension,
                size: o.wire_bytes,
                transfer_time: o.recorded_duration_ns as f64 / 1e6,
                start_time: o.recorded_start_ns as f64 / 1e6,
                url: o.url.clone(),
                kind: o.kind,
                mime: o.mime.clone(),
                cats_level: o.cats_level,
                essential: o.essential.name().to_string(),
                parent: o.parent.map(|p| p.0),
                priority: o.browser_priority.map(|p| p.name()),
                render_blocking: o.render_blocking,
            }
        })
        .collect()
}

/// Largest dummy file an export writes: 4 GiB, the simulator's largest message.
pub const MAX_EXPORT_FILE_BYTES: u64 = u32::MAX as u64;
/// Largest total an export writes: 16 GiB.
pub const MAX_EXPORT_BYTES: u64 = 16 << 30;

/// Checks every object's size against [`MAX_EXPORT_FILE_BYTES`] and the total against
/// [`MAX_EXPORT_BYTES`] before anything is written. The error names the object.
pub fn check_sizes(seq: &[TransferItem]) -> Result<(), WebError> {
    let mut total = 0u64;
    for item in seq {
        if item.size > MAX_EXPORT_FILE_BYTES {
            return Err(WebError::Field {
                path: format!("object {} ({})", item.id, item.url),
                problem: format!(
                    "{} bytes; export writes each object as a dummy file of its size, at most {MAX_EXPORT_FILE_BYTES} \
                     bytes (4 GiB)",
                    item.size
                ),
            });
        }
        total = total.saturating_add(item.size);
    }
    if total > MAX_EXPORT_BYTES {
        return Err(WebError::Field {
            path: "objects".into(),
            problem: format!(
                "{total} bytes in all; export writes every object as a dummy file of its size, at most \
                 {MAX_EXPORT_BYTES} bytes (16 GiB) in all"
            ),
        });
    }
    Ok(())
}

/// Dummy content of exactly `size` bytes for a file of this type and extension, in memory
/// (for small sizes; [`write_dummy`] streams it).
pub fn dummy_content(kind: ContentType, extension: &str, size: u64) -> Vec<u8> {
    let mut v = Vec::new();
    write_dummy(&mut v, kind, extension, size).unwrap_or_else(|_| unreachable!("writing to a Vec never fails"));
    v
}

/// Writes the dummy content of exactly `size` bytes to `w`, in blocks of at most 64 KiB.
pub fn write_dummy(w: &mut impl Write, kind: ContentType, extension: &str, size: u64) -> std::io::Result<()> {
    let head: &[u8] = match (kind, extension) {
        (ContentType::Html, _) => b"<!doctype html><!-- dummy -->\n",
        (ContentType::Css, _) => b"/* dummy */\n",
        (ContentType::Js, _) => b"// dummy\n",
        (_, "png") => b"\x89PNG\r\n\x1a\n",
        (_, "gif") => b"GIF89a",
        (_, "webp") => b"RIFF\0\0\0\0WEBP",
        (_, "svg") => b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
        (ContentType::Image, _) => b"\xff\xd8\xff\xe0",
        (_, "woff") => b"wOFF",
        (ContentType::Font, _) => b"wOF2",
        _ => b"",
    };
    // Head, then `size - head - tail` bytes of a repeating filler, then the tail.
    let (head, fill, tail): (&[u8], &[u8], &[u8]) = if kind == ContentType::Json && size >= 10 {
        (b"{\"pad\":\"", b"x", b"\"}")
    } else {
        (&head[..head.len().min(usize::try_from(size).unwrap_or(usize::MAX))], b"triage dummy object ", b"")
    };
    w.write_all(head)?;
    let mut left = size - head.len() as u64 - tail.len() as u64;
    let block: Vec<u8> = fill.iter().copied().cycle().take(fill.len() * (65_536 / fill.len())).collect();
    let mut at = 0usize; // the filler's phase, so the pattern runs on across blocks
    while left > 0 {
        let n = (block.len() - at).min(usize::try_from(left).unwrap_or(usize::MAX));
        w.write_all(&block[at..at + n])?;
        left -= n as u64;
        at = (at + n) % block.len();
    }
    w.write_all(tail)
}

/// Writes `transfer_sequence.json` and `dummy_files/` into `dir` (created if needed).
pub fn write_replica(page: &Page, dir: &Path) -> Result<Vec<TransferItem>, WebError> {
    let io = |p: &Path, e: std::io::Error| WebError::Io(format!("{}: {e}", p.display()));
    let seq = transfer_sequence(page);
    check_sizes(&seq)?;
    let files = dir.join("dummy_files");
    std::fs::create_dir_all(&files).map_err(|e| io(&files, e))?;
    for item in &seq {
        let path = files.join(&item.file_name);
        let file = std::fs::File::create(&path).map_err(|e| io(&path, e))?;
        let mut w = std::io::BufWriter::new(file);
        write_dummy(&mut w, item.kind, &item.extension, item.size)
            .and_then(|()| w.flush())
            .map_err(|e| io(&path, e))?;
    }
    let json = serde_json::to_string_pretty(&seq).map_err(|e| WebError::Io(e.to_string()))?;
    let path = dir.join("transfer_sequence.json");
    std::fs::write(&path, json + "\n").map_err(|e| io(&path, e))?;
    Ok(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dummies_have_exact_sizes() {
        for kind in ContentType::ALL {
            for size in [0u64, 1, 5, 9, 10, 11, 100, 4096] {
                let d = dummy_content(kind, kind.default_extension(), size);
                assert_eq!(d.len() as u64, size, "{kind} {size}");
            }
        }
        let j = dummy_content(ContentType::Json, "json", 40);
        assert!(serde_json::from_slice::<serde_json::Value>(&j).is_ok());
    }

    #[test]
    fn sequence_of_cats_page() {
        let seq = transfer_sequence(&crate::builtin::cats_page());
        let names: Vec<&str> = seq.iter().map(|t| t.file_name.as_str()).collect();
        assert_eq!(names, vec!["0.html", "1.css", "2.js", "3.jpg", "4.js"]);
        assert_eq!(seq[4].category, "Ads/Analytics");
        assert_eq!(seq[1].size, 25 * 1024);
    }
}
