//! Scenario errors that name the field and point at the value.
//!
//! serde's messages name Rust types and no field: `pairs = "three"` gave "invalid type:
//! string \"three\", expected u32" at the `[topology]` header, and `loss = 0.05` gave
//! "expected internally tagged enum LossModelSpec". Two things fix that:
//!
//! - **No buffering.** Tables with a `kind` (the topology, a loss model, an application) are
//!   read as flat structs and converted with `TryFrom` (see [`TopologyTable`], [`AppTable`]
//!   and `loss::LossModelSpec`), not as internally tagged enums: serde buffers those, and a
//!   buffered value has no position, so every error inside one pointed at the enclosing
//!   table. Now the TOML parser reports the line and column of the value itself.
//! - **The path from the position.** [`render_parse_error`] finds the key path of the
//!   error's span in the document (`topology.bottleneck.loss.loss_prob`, `flows[0].server_app`)
//!   and puts it in front of the message, and rewrites serde's wrong-type message for
//!   table-valued fields into "expected FORMS, got X" with the accepted forms below.
//!
//! Errors a conversion raises (a missing `kind`, a field of another kind) point at their
//! table and name the field relative to it (`pairs: only applies to ...`), which becomes
//! `topology.pairs: ...`.

use std::ops::Range;

use serde::Deserialize;
use toml_edit::{Item, TableLike, Value};

use crate::link::Jitter;
use crate::loss::LossModel;
use crate::scenario::{AppToml, LinkToml, MessageToml, TopologyToml};
use crate::scenario_ecn::QueueToml;
use crate::units::{Duration, Size};

/// What a `loss` or `reverse_loss` field accepts (also `LossModelSpec`'s serde `expecting`).
pub const LOSS_FORMS: &str = "a table: { kind = \"none\" }, { kind = \"bernoulli\", loss_prob = 0.02 }, \
{ kind = \"gilbert_elliott\", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0.0, loss_bad = 0.5 } \
or { kind = \"list\", lost = [3, 17] }";

/// What `client_app` and `server_app` accept (also [`AppTable`]'s serde `expecting`).
pub const APP_FORMS: &str = "a table: { kind = \"sink\" }, { kind = \"bulk\", size = \"10MB\" } or \
{ kind = \"messages\", messages = [{ name = \"a\", size = \"8KiB\", priority = 0 }] }";

/// What `[topology]` accepts (also [`TopologyTable`]'s serde `expecting`).
pub const TOPOLOGY_FORMS: &str = "a table with kind = \"dumbbell\" (pairs, bottleneck, access), \
\"profile\" (name, queue, loss) or \"custom\" (hosts, routers, links)";

/// What a link's `queue` accepts (also `QueueToml`'s serde `expecting`).
pub const QUEUE_FORMS: &str = "a table: { packets = 100 }, { bytes = \"150KB\" } or a discipline such as \
{ kind = \"red\", packets = 100, min_th = 30, max_th = 60 }";

/// What a link accepts (also `LinkToml`'s serde `expecting`).
pub const LINK_FORMS: &str = "a link table like { rate = \"2Mbps\", delay = \"25ms\" }";

/// What a link's `jitter` accepts (also [`JitterTable`]'s serde `expecting`).
pub const JITTER_FORMS: &str =
    "a table: { kind = \"uniform\", max = \"10ms\" } or { kind = \"exponential\", mean = \"5ms\" }";

const FORMS: [&str; 6] = [LOSS_FORMS, APP_FORMS, TOPOLOGY_FORMS, QUEUE_FORMS, LINK_FORMS, JITTER_FORMS];

/// Whether `m` starts with a field path (`a.b[3].c: ...`).
fn has_path(m: &str) -> bool {
    let Some((path, _)) = m.split_once(": ") else { return false };
    !path.is_empty()
        && path.split('.').all(|seg| {
            let name = seg.split_once('[').map_or(seg, |(n, idx)| {
                if idx.strip_suffix(']').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
                    n
                } else {
                    ""
                }
            });
            !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && name.as_bytes()[0].is_ascii_lowercase()
        })
}

/// The message for the field at `path`: serde's wrong-type message for a table-valued field
/// becomes "expected FORMS, got X"; a message that names a field relative to `path` gets the
/// path in front of it; any other gets `path: ` in front.
fn explain(path: &str, msg: &str) -> String {
    let wrong = msg.strip_prefix("invalid type: ").or_else(|| msg.strip_prefix("invalid value: "));
    if let Some((found, forms)) = wrong.and_then(|r| r.rsplit_once(", expected ")) {
        // serde names Rust types: say what to write instead.
        let plain = match forms {
            "u8" | "u16" | "u32" | "u64" | "usize" => Some("a whole number (0 or more)"),
            "i8" | "i16" | "i32" | "i64" => Some("a whole number"),
            "f32" | "f64" => Some("a number"),
            // serde's name of a Rust struct (`struct TransportToml`): a table in TOML.
            f if f.starts_with("struct ") => Some("a table ({ field = value, ... })"),
            "a boolean" => Some("true or false"),
            f if FORMS.contains(&f) => Some(f),
            _ => None,
        };
        if let Some(forms) = plain {
            return format!("{path}: expected {forms}, got {found}");
        }
    }
    if path.is_empty() || msg.starts_with(&format!("{path}:")) || msg.starts_with(&format!("{path}.")) {
        msg.to_string()
    } else if has_path(msg) {
        format!("{path}.{msg}")
    } else {
        format!("{path}: {msg}")
    }
}

/// The key path (`topology.links[2].queue`) of the innermost key or value of the document
/// whose span holds `span`; a key gives the path of its table (an unknown field is the
/// table's error).
pub(crate) fn path_at(text: &str, span: Range<usize>) -> Option<String> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut best: Option<(usize, String)> = None;
    walk_table(doc.as_table(), "", &span, &mut best);
    best.map(|b| b.1)
}

fn consider(s: Option<Range<usize>>, span: &Range<usize>, path: &str, best: &mut Option<(usize, String)>) {
    let Some(s) = s else { return };
    if s.start <= span.start && span.end <= s.end {
        let size = s.end - s.start;
        // Ties go to the later, deeper candidate.
        if best.as_ref().is_none_or(|(b, _)| size <= *b) {
            *best = Some((size, path.to_string()));
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk_table(t: &dyn TableLike, path: &str, span: &Range<usize>, best: &mut Option<(usize, String)>) {
    for (k, item) in t.iter() {
        if let Some((key, _)) = t.get_key_value(k) {
            consider(key.span(), span, path, best);
        }
        walk_item(item, &join(path, k), span, best);
    }
}

fn walk_item(item: &Item, path: &str, span: &Range<usize>, best: &mut Option<(usize, String)>) {
    match item {
        Item::Table(t) => {
            consider(t.span(), span, path, best);
            walk_table(t, path, span, best);
        }
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                let p = format!("{path}[{i}]");
                consider(t.span(), span, &p, best);
                walk_table(t, &p, span, best);
            }
        }
        Item::Value(v) => walk_value(v, path, span, best),
        Item::None => {}
    }
}

fn walk_value(v: &Value, path: &str, span: &Range<usize>, best: &mut Option<(usize, String)>) {
    consider(v.span(), span, path, best);
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk_value(x, &format!("{path}[{i}]"), span, best);
            }
        }
        Value::InlineTable(t) => walk_table(t, path, span, best),
        _ => {}
    }
}

/// The TOML parser's error for `text`, with the field path in front of the message (see the
/// module documentation); the line, column and excerpt stay the parser's.
pub fn render_parse_error(text: &str, e: &toml::de::Error) -> String {
    let rendered = e.to_string().trim_end().to_string();
    let msg = e.message().trim_end();
    if msg == "duplicate key" {
        if let Some(named) = e.span().and_then(|s| duplicate_key(text, s)) {
            return match rendered.rfind(msg) {
                Some(i) => format!("{}{named}{}", &rendered[..i], &rendered[i + msg.len()..]),
                None => format!("{rendered}\n{named}"),
            };
        }
    }
    // The parser gives an error of the document itself (a missing top-level field) the empty
    // span 0..0, which would otherwise read as the error of a table that starts the file.
    let Some(path) = e.span().filter(|s| s.end > 0).and_then(|s| path_at(text, s)) else { return rendered };
    let new = explain(&path, msg);
    // A check made on a whole table (a field given for another `kind`) names a field inside
    // it: point at that field's value rather than at the table.
    if let Some((field, rest)) = new.split_once(": ") {
        if field != path && field.starts_with(&path) && span_of(text, field).is_some() {
            return render_at(text, field, rest);
        }
    }
    match rendered.rfind(msg) {
        Some(i) if !msg.is_empty() => format!("{}{new}{}", &rendered[..i], &rendered[i + msg.len()..]),
        _ => format!("{rendered}\n{new}"),
    }
}

/// "duplicate key `KEY` in table `TABLE`" for the key at `span` (the TOML parser says only
/// "duplicate key", and the document does not parse, so [`path_at`] cannot help): the
/// table is the last `[TABLE]` or `[[TABLE]]` header above a key that starts its line.
fn duplicate_key(text: &str, span: Range<usize>) -> Option<String> {
    let key = text.get(span.clone())?.trim();
    if key.is_empty() {
        return None;
    }
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..span.start].trim().is_empty() {
        // Inside an inline table: the header above is not its table.
        return Some(format!("duplicate key `{key}`"));
    }
    let table = text[..line_start].lines().rev().map(str::trim).find(|l| l.starts_with('[')).map(|h| {
        let h = h.split('#').next().unwrap_or(h).trim();
        h.trim_start_matches('[').trim_end_matches(']').trim().to_string()
    });
    Some(match table {
        Some(t) => format!("duplicate key `{key}` in table `{t}`"),
        None => format!("duplicate key `{key}` at the top level"),
    })
}

/// The span of the key or table at `path` (`paths[2].rate`, `transport.mode`, `topology`)
/// in `text`: a value's own span, or a table's (from its header). `None` when the document
/// does not parse or has no such field (it came from a default or another table).
pub(crate) fn span_of(text: &str, path: &str) -> Option<Range<usize>> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut found = None;
    find_table(doc.as_table(), "", path, &mut found);
    found
}

fn find_table(t: &dyn TableLike, at: &str, path: &str, found: &mut Option<Range<usize>>) {
    for (k, item) in t.iter() {
        let p = join(at, k);
        if path == p || path.starts_with(&format!("{p}.")) || path.starts_with(&format!("{p}[")) {
            find_item(item, &p, path, found);
        }
    }
}

fn find_item(item: &Item, at: &str, path: &str, found: &mut Option<Range<usize>>) {
    match item {
        Item::Table(t) if at == path => *found = t.span(),
        Item::Table(t) => find_table(t, at, path, found),
        Item::ArrayOfTables(a) if at == path => *found = a.iter().next().and_then(|t| t.span()),
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                let p = format!("{at}[{i}]");
                if path == p {
                    *found = t.span();
                } else if path.starts_with(&p) {
                    find_table(t, &p, path, found);
                }
            }
        }
        Item::Value(v) => find_value(v, at, path, found),
        Item::None => {}
    }
}

fn find_value(v: &Value, at: &str, path: &str, found: &mut Option<Range<usize>>) {
    if at == path {
        *found = v.span();
        return;
    }
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}[{i}]");
                if path == p || path.starts_with(&p) {
                    find_value(x, &p, path, found);
                }
            }
        }
        Value::InlineTable(t) => find_table(t, at, path, found),
        _ => {}
    }
}

/// `message` in the TOML parser's layout, pointing at the field at `path` when `text` has
/// it (`TOML parse error at line L, column C`, the line, a caret under the value, then
/// `path: message`), so that checks made after parsing read like the parser's own errors.
pub(crate) fn render_at(text: &str, path: &str, message: &str) -> String {
    let line = if path.is_empty() { message.to_string() } else { format!("{path}: {message}") };
    let Some(span) = span_of(text, path) else { return line };
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let row = text[..line_start].matches('\n').count();
    let column = text[line_start..start].chars().count();
    let content = text[line_start..].split('\n').next().unwrap_or("").trim_end_matches('\r');
    // The caret runs along the value on its first line.
    let width = text[start..span.end.min(text.len())].split('\n').next().map_or(1, |s| s.chars().count().max(1));
    let (num, gutter) = ((row + 1).to_string(), " ".repeat((row + 1).to_string().len() + 1));
    format!(
        "TOML parse error at line {num}, column {}\n{gutter}|\n{num} | {content}\n{gutter}|{}{}\n{line}",
        column + 1,
        " ".repeat(column + 1),
        "^".repeat(width)
    )
}

/// A field given for another kind of table: `FIELD: only applies to kind = "KIND"`.
fn misplaced(present: &[(&str, bool)], owner: &str) -> Result<(), String> {
    match present.iter().find(|(_, set)| *set) {
        Some((f, _)) => Err(format!("{f}: only applies to kind = \"{owner}\"")),
        None => Ok(()),
    }
}

/// Largest jitter (`max` or `mean`) a link accepts: 10 s.
pub const MAX_JITTER_NS: u64 = 10_000_000_000;

/// Jitter kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JitterKind {
    /// Uniform in [0, max].
    Uniform,
    /// Exponential with a mean.
    Exponential,
}

/// A link's `jitter` as written: `{ kind = "uniform", max = "10ms" }` or
/// `{ kind = "exponential", mean = "5ms" }`.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table: { kind = \"uniform\", max = \"10ms\" } or { kind = \"exponential\", mean = \"5ms\" }"
)]
pub struct JitterTable {
    kind: Option<JitterKind>,
    #[serde(alias = "max_ns")]
    max: Option<Duration>,
    #[serde(alias = "mean_ns")]
    mean: Option<Duration>,
}

/// A link's jitter (see [`Jitter`]).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "JitterTable")]
pub struct JitterSpec(pub Jitter);

/// As the resolved input writes it: `{ kind = "uniform", max_ns = N }` or
/// `{ kind = "exponential", mean_ns = N }` (read back through the `max_ns`/`mean_ns` aliases).
impl serde::Serialize for JitterSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        match self.0 {
            Jitter::None => m.serialize_entry("kind", "uniform").and_then(|()| m.serialize_entry("max_ns", &0u64))?,
            Jitter::Uniform { max_ns } => {
                m.serialize_entry("kind", "uniform")?;
                m.serialize_entry("max_ns", &max_ns)?
            }
            Jitter::Exponential { mean_ns } => {
                m.serialize_entry("kind", "exponential")?;
                m.serialize_entry("mean_ns", &mean_ns)?
            }
        }
        m.end()
    }
}

impl TryFrom<JitterTable> for JitterSpec {
    type Error = String;

    fn try_from(j: JitterTable) -> Result<Self, String> {
        let bounded = |name: &str, d: Option<Duration>, kind: &str| {
            let d = d.ok_or_else(|| format!("{name}: missing; kind = \"{kind}\" needs it"))?;
            if d.0 > MAX_JITTER_NS {
                return Err(format!("{name}: expected at most 10s, got {d}"));
            }
            Ok(d.0)
        };
        match j.kind {
            None => Err(format!("missing `kind`; expected {JITTER_FORMS}")),
            Some(JitterKind::Uniform) => {
                misplaced(&[("mean", j.mean.is_some())], "exponential")?;
                Ok(JitterSpec(Jitter::Uniform { max_ns: bounded("max", j.max, "uniform")? }))
            }
            Some(JitterKind::Exponential) => {
                misplaced(&[("max", j.max.is_some())], "uniform")?;
                Ok(JitterSpec(Jitter::Exponential { mean_ns: bounded("mean", j.mean, "exponential")? }))
            }
        }
    }
}

/// Topology kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// A dumbbell.
    Dumbbell,
    /// A named network profile.
    Profile,
    /// Any graph.
    Custom,
}

/// `[topology]` as written: every field of every kind, read without buffering (see the
/// module documentation), then checked against its `kind` ([`TopologyToml`]'s `TryFrom`).
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with kind = \"dumbbell\" (pairs, bottleneck, access), \"profile\" (name, queue, loss) or \"custom\" (hosts, routers, links)"
)]
pub struct TopologyTable {
    kind: Option<TopologyKind>,
    pairs: Option<u32>,
    bottleneck: Option<LinkToml>,
    access: Option<LinkToml>,
    name: Option<String>,
    queue: Option<QueueToml>,
    loss: Option<LossModel>,
    hosts: Option<Vec<String>>,
    routers: Option<Vec<String>>,
    links: Option<Vec<LinkToml>>,
}

impl TryFrom<TopologyTable> for TopologyToml {
    type Error = String;

    fn try_from(t: TopologyTable) -> Result<Self, String> {
        let kind = match t.kind {
            Some(TopologyKind::Dumbbell) => "dumbbell",
            Some(TopologyKind::Profile) => "profile",
            Some(TopologyKind::Custom) => "custom",
            None => "",
        };
        let missing = |f: &str| format!("{f}: missing; kind = \"{kind}\" needs it");
        let dumbbell =
            [("pairs", t.pairs.is_some()), ("bottleneck", t.bottleneck.is_some()), ("access", t.access.is_some())];
        let profile = [("name", t.name.is_some()), ("queue", t.queue.is_some()), ("loss", t.loss.is_some())];
        let custom = [("hosts", t.hosts.is_some()), ("routers", t.routers.is_some()), ("links", t.links.is_some())];
        match t.kind {
            None => Err(format!("missing `kind`; expected {TOPOLOGY_FORMS}")),
            Some(TopologyKind::Dumbbell) => {
                misplaced(&profile, "profile")?;
                misplaced(&custom, "custom")?;
                Ok(TopologyToml::Dumbbell {
                    pairs: t.pairs.unwrap_or(1),
                    bottleneck: t.bottleneck.ok_or_else(|| missing("bottleneck"))?,
                    access: t.access.ok_or_else(|| missing("access"))?,
                })
            }
            Some(TopologyKind::Profile) => {
                misplaced(&dumbbell, "dumbbell")?;
                misplaced(&custom, "custom")?;
                Ok(TopologyToml::Profile { name: t.name.ok_or_else(|| missing("name"))?, queue: t.queue, loss: t.loss })
            }
            Some(TopologyKind::Custom) => {
                misplaced(&dumbbell, "dumbbell")?;
                misplaced(&profile, "profile")?;
                Ok(TopologyToml::Custom {
                    hosts: t.hosts.ok_or_else(|| missing("hosts"))?,
                    routers: t.routers.unwrap_or_default(),
                    links: t.links.ok_or_else(|| missing("links"))?,
                })
            }
        }
    }
}

/// Application kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    /// Writes nothing.
    Sink,
    /// One message.
    Bulk,
    /// Named messages.
    Messages,
}

/// `client_app` / `server_app` as written (see [`TopologyTable`] for why it is flat).
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table: { kind = \"sink\" }, { kind = \"bulk\", size = \"10MB\" } or { kind = \"messages\", messages = [{ name = \"a\", size = \"8KiB\", priority = 0 }] }"
)]
pub struct AppTable {
    kind: Option<AppKind>,
    #[serde(alias = "size_bytes")]
    size: Option<Size>,
    messages: Option<Vec<MessageToml>>,
}

impl TryFrom<AppTable> for AppToml {
    type Error = String;

    fn try_from(a: AppTable) -> Result<Self, String> {
        let (size, messages) = (("size", a.size.is_some()), ("messages", a.messages.is_some()));
        match a.kind {
            None => Err(format!("missing `kind`; expected {APP_FORMS}")),
            Some(AppKind::Sink) => {
                misplaced(&[size], "bulk")?;
                misplaced(&[messages], "messages")?;
                Ok(AppToml::Sink)
            }
            Some(AppKind::Bulk) => {
                misplaced(&[messages], "messages")?;
                Ok(AppToml::Bulk { size: a.size.ok_or("size: missing; kind = \"bulk\" needs it")? })
            }
            Some(AppKind::Messages) => {
                misplaced(&[size], "bulk")?;
                Ok(AppToml::Messages { messages: a.messages.ok_or("messages: missing; kind = \"messages\" needs it")? })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;

    /// Each type's serde `expecting` is the text `explain` matches on.
    #[test]
    fn the_forms_are_the_types_expecting() {
        fn err<T: DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
            serde_json::from_str::<T>(json).unwrap_err().to_string()
        }
        assert!(err::<LossModel>("0.05").contains(LOSS_FORMS));
        assert!(err::<AppToml>("\"bulk\"").contains(APP_FORMS));
        assert!(err::<TopologyToml>("1").contains(TOPOLOGY_FORMS));
        assert!(err::<QueueToml>("100").contains(QUEUE_FORMS));
        assert!(err::<LinkToml>("100").contains(LINK_FORMS));
        assert!(err::<JitterSpec>("100").contains(JITTER_FORMS));
    }

    #[test]
    fn paths_are_told_from_serde_messages() {
        for p in ["loss: x", "bottleneck.loss: x", "links[2].queue: x", "a_b.c1[10]: x"] {
            assert!(has_path(p), "{p}");
        }
        for m in [
            "invalid type: integer `5`, expected a table",
            "missing field `kind`",
            "unknown field `x`, expected `a`",
            "links[]: x",
            "links[a]: x",
            "Loss: x",
            ": x",
            "expected \"25ms\", got \"x\" (units: s)",
        ] {
            assert!(!has_path(m), "{m}");
        }
    }

    #[test]
    fn the_path_of_a_span() {
        let text = "name = \"t\"\n[topology]\nkind = \"custom\"\nlinks = [{ a = 1 }, { b = { c = \"x\" } }]\n[[flows]]\nn = 2\n[[flows]]\nn = 3\n";
        let at = |needle: &str| {
            let i = text.find(needle).unwrap();
            path_at(text, i..i + needle.len())
        };
        assert_eq!(at("\"x\"").as_deref(), Some("topology.links[1].b.c"));
        assert_eq!(at("c =").as_deref(), Some("topology.links[1].b"), "a key gives its table");
        assert_eq!(at("3").as_deref(), Some("flows[1].n"));
        assert_eq!(at("\"custom\"").as_deref(), Some("topology.kind"));
        assert_eq!(at("b ").as_deref(), Some("topology.links[1]"), "a key gives its table");
    }
}
