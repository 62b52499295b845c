//! Typed access to `serde_json::Value` with JSON paths in errors. `null` counts as absent
//! (real recordings write it for unknown values); a present value of the wrong type is an
//! error naming its path and both types.

use serde_json::{Map, Value};

use crate::error::WebError;

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn wrong(path: &str, expected: &str, found: &Value) -> WebError {
    WebError::Field { path: path.to_string(), problem: format!("expected {expected}, found {}", type_name(found)) }
}

pub(crate) fn missing(path: &str, expected: &str) -> WebError {
    WebError::Field { path: path.to_string(), problem: format!("missing (expected {expected})") }
}

fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

pub(crate) fn opt_obj<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Map<String, Value>>, WebError> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(v) => Err(wrong(&format!("{path}.{key}"), "an object", v)),
    }
}

pub(crate) fn req_obj<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Map<String, Value>, WebError> {
    opt_obj(obj, key, path)?.ok_or_else(|| missing(&format!("{path}.{key}"), "an object"))
}

pub(crate) fn opt_arr<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Vec<Value>>, WebError> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(wrong(&format!("{path}.{key}"), "an array", v)),
    }
}

pub(crate) fn opt_str<'a>(obj: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>, WebError> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong(&format!("{path}.{key}"), "a string", v)),
    }
}

pub(crate) fn req_str<'a>(obj: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a str, WebError> {
    opt_str(obj, key, path)?.ok_or_else(|| missing(&format!("{path}.{key}"), "a string"))
}

/// A number; numeric strings ("123") are accepted, as some exporters write them.
pub(crate) fn opt_num(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, WebError> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) if s.trim().parse::<f64>().is_ok() => Ok(s.trim().parse::<f64>().ok()),
        Some(v) => Err(wrong(&format!("{path}.{key}"), "a number", v)),
    }
}

/// A byte count: -1 is the formats' "unknown" and gives `None`; any other negative value
/// gives `None` too and is counted in `adjusted` (never silent); an infinite one saturates
/// (and [`crate::import`] clamps it, counted, to its object-size limit).
pub(crate) fn opt_bytes(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    adjusted: &mut crate::import::Adjusted,
) -> Result<Option<u64>, WebError> {
    Ok(match opt_num(obj, key, path)? {
        None => None,
        Some(-1.0) => None,
        Some(n) if n < 0.0 || n.is_nan() => {
            adjusted.size_negative += 1;
            None
        }
        Some(n) => Some(n.min(u64::MAX as f64) as u64),
    })
}

pub(crate) fn opt_bool(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>, WebError> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::Number(n)) => Ok(Some(n.as_f64().unwrap_or(0.0) != 0.0)),
        Some(v) => Err(wrong(&format!("{path}.{key}"), "a boolean", v)),
    }
}

/// The URL an initiator object names: its `url`, else the first non-empty `url` in its stack's
/// call frames (following `stack.parent`).
pub(crate) fn initiator_object_url(o: &Map<String, Value>) -> Option<String> {
    if let Some(Value::String(u)) = o.get("url") {
        if !u.is_empty() {
            return Some(u.clone());
        }
    }
    let mut stack = o.get("stack").and_then(Value::as_object);
    let mut depth = 0;
    while let Some(s) = stack {
        if let Some(frames) = s.get("callFrames").and_then(Value::as_array) {
            for f in frames {
                if let Some(u) = f.get("url").and_then(Value::as_str) {
                    if !u.is_empty() {
                        return Some(u.to_string());
                    }
                }
            }
        }
        depth += 1;
        if depth > 64 {
            break;
        }
        stack = s.get("parent").and_then(Value::as_object);
    }
    None
}

/// Milliseconds since the Unix epoch from an ISO 8601 date-time
/// (`2022-02-04T05:23:40.045Z`, `...+01:00`, `...+0100`, or no zone = UTC).
pub(crate) fn parse_iso_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes().all(|c| c.is_ascii_digit()).then(|| t.parse().ok()).flatten()
    };
    let (y, mo, d, h, mi, sec) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac = 0.0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        frac = format!("0.{}", &s[start..i.min(start + 9)]).parse().ok()?;
    }
    let offset_min: i64 = match b.get(i) {
        None => 0,
        Some(b'Z') | Some(b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &s[i + 1..];
            let (oh, om) = match rest.len() {
                5 if rest.as_bytes()[2] == b':' => (rest.get(0..2)?, rest.get(3..5)?),
                4 => (rest.get(0..2)?, rest.get(2..4)?),
                2 => (rest.get(0..2)?, "00"),
                _ => return None,
            };
            let v = oh.parse::<i64>().ok()? * 60 + om.parse::<i64>().ok()?;
            if sign == b'+' {
                v
            } else {
                -v
            }
        }
        _ => return None,
    };
    // Days from civil (H. Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_iso_ms("1970-01-01T00:00:01.5Z"), Some(1500.0));
        assert_eq!(parse_iso_ms("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(parse_iso_ms("2000-03-01T00:00:00Z"), Some(951_868_800_000.0));
        let a = parse_iso_ms("2022-02-04T05:23:40.044Z").unwrap();
        let b = parse_iso_ms("2022-02-04T05:23:40.045Z").unwrap();
        assert!((b - a - 1.0).abs() < 1e-6);
        assert_eq!(parse_iso_ms("2022-02-04"), None);
        assert_eq!(parse_iso_ms("2022-13-04T05:23:40Z"), None);
        assert_eq!(parse_iso_ms("2022-02-04T05:23:40.Z"), None);
    }
}
