//! Content type from what a recording says: the MIME type first, then the browser's resource
//! type (`_resourceType`, DevTools `type`), then the URL's extension.

use crate::model::ContentType;
use crate::urlparts;

/// Content type from a MIME type (parameters ignored), or `None` if it says nothing useful
/// (empty, `application/octet-stream`, `text/plain`).
pub fn from_mime(mime: &str) -> Option<ContentType> {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let t = match m.as_str() {
        "" | "application/octet-stream" | "text/plain" | "binary/octet-stream" => return None,
        "text/html" | "application/xhtml+xml" => ContentType::Html,
        "text/css" => ContentType::Css,
        "application/javascript"
        | "text/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "text/ecmascript"
        | "module"
        | "application/wasm" => ContentType::Js,
        "application/json" | "text/json" | "application/ld+json" | "application/manifest+json" => ContentType::Json,
        "text/xml" | "application/xml" => ContentType::Other,
        _ if m.starts_with("image/") => ContentType::Image,
        _ if m.starts_with("font/") || m.contains("font-") || m.ends_with("font") || m.contains("woff") => {
            ContentType::Font
        }
        _ if m.starts_with("video/") || m.starts_with("audio/") || m == "application/vnd.apple.mpegurl" => {
            ContentType::Media
        }
        _ if m.ends_with("+json") => ContentType::Json,
        _ if m.contains("javascript") => ContentType::Js,
        _ => ContentType::Other,
    };
    Some(t)
}

/// Content type from Chrome's resource type (`document`, `stylesheet`, `script`, `image`,
/// `font`, `media`, `xhr`, `fetch`, ...), or `None` if it says nothing specific.
pub fn from_resource_type(rt: &str) -> Option<ContentType> {
    Some(match rt.to_ascii_lowercase().as_str() {
        "document" => ContentType::Html,
        "stylesheet" => ContentType::Css,
        "script" => ContentType::Js,
        "image" => ContentType::Image,
        "font" => ContentType::Font,
        "media" => ContentType::Media,
        "manifest" => ContentType::Json,
        _ => return None,
    })
}

/// Content type from the URL's extension, or `None`.
pub fn from_extension(url: &str) -> Option<ContentType> {
    let ext = urlparts::extension(url)?;
    Some(match ext.as_str() {
        "html" | "htm" | "php" | "asp" | "aspx" | "jsp" => ContentType::Html,
        "css" => ContentType::Css,
        "js" | "mjs" | "cjs" => ContentType::Js,
        "woff" | "woff2" | "ttf" | "otf" | "eot" => ContentType::Font,
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "avif" | "svg" | "ico" | "bmp" => ContentType::Image,
        "mp4" | "webm" | "m4s" | "ts" | "mp3" | "m3u8" | "ogg" => ContentType::Media,
        "json" => ContentType::Json,
        _ => return None,
    })
}

/// The content type of a recorded response: MIME type, then resource type, then extension,
/// else `Other`.
pub fn detect(mime: &str, resource_type: Option<&str>, url: &str) -> ContentType {
    from_mime(mime)
        .or_else(|| resource_type.and_then(from_resource_type))
        .or_else(|| from_extension(url))
        .unwrap_or(ContentType::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects() {
        assert_eq!(detect("text/html; charset=utf-8", None, "https://a/"), ContentType::Html);
        assert_eq!(detect("application/x-javascript", None, "https://a/x"), ContentType::Js);
        assert_eq!(detect("application/octet-stream", Some("font"), "https://a/x"), ContentType::Font);
        assert_eq!(detect("", None, "https://a/f.woff2?v=1"), ContentType::Font);
        assert_eq!(detect("image/svg+xml", None, "https://a/x"), ContentType::Image);
        assert_eq!(detect("font/woff2", None, "https://a/x"), ContentType::Font);
        assert_eq!(detect("application/font-woff", None, "https://a/x"), ContentType::Font);
        assert_eq!(detect("text/plain", Some("xhr"), "https://a/x"), ContentType::Other);
    }
}
