//! Errors of table-valued scenario fields that say which field and what it accepts.
//!
//! serde's derived messages for a table-valued field name Rust types and omit the field:
//! `loss = 0.05` gave "invalid type: floating point `0.05`, expected internally tagged enum
//! LossModelSpec", and a table without `kind` gave "missing field `kind`". The fields below
//! (`#[serde(deserialize_with = ...)]` in `scenario.rs`) rewrite those two messages into
//! "topology.bottleneck.loss: expected a table: { kind = \"bernoulli\", ... }, got floating
//! point `0.05`", with the accepted forms. Each type also carries the same text as its serde
//! `expecting`, so other formats (JSON) get it too.
//!
//! Everything under `[topology]` is parsed from serde's buffered copy of the table (the
//! topology is an internally tagged enum), where errors have no position of their own: there
//! every error is prefixed with its field path (`topology.links[2].queue: unknown field ...`).
//! Elsewhere (`client_app`, `server_app`) only the two messages above are rewritten, so that
//! other errors keep the exact line and column the TOML parser gives them.

use serde::de::{DeserializeOwned, DeserializeSeed, Error, SeqAccess, Visitor};
use serde::Deserializer;

use crate::loss::LossModel;
use crate::scenario::{AppToml, LinkToml, TopologyToml};
use crate::scenario_ecn::QueueToml;

/// What a `loss` or `reverse_loss` field accepts (also `LossModelSpec`'s serde `expecting`).
pub const LOSS_FORMS: &str = "a table: { kind = \"none\" }, { kind = \"bernoulli\", loss_prob = 0.02 } or \
{ kind = \"gilbert_elliott\", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0.0, loss_bad = 0.5 }";

/// What `client_app` and `server_app` accept (also `AppToml`'s serde `expecting`).
pub const APP_FORMS: &str = "a table: { kind = \"sink\" }, { kind = \"bulk\", size = \"10MB\" } or \
{ kind = \"messages\", messages = [{ name = \"a\", size = \"8KiB\", priority = 0 }] }";

/// What `[topology]` accepts (also `TopologyToml`'s serde `expecting`).
pub const TOPOLOGY_FORMS: &str = "a table with kind = \"dumbbell\" (pairs, bottleneck, access), \
\"profile\" (name, queue, loss) or \"custom\" (hosts, routers, links)";

/// What a link's `queue` accepts (also `QueueToml`'s serde `expecting`).
pub const QUEUE_FORMS: &str = "a table: { packets = 100 }, { bytes = \"150KB\" } or a discipline such as \
{ kind = \"red\", packets = 100, min_th = 30, max_th = 60 }";

/// What a link accepts (also `LinkToml`'s serde `expecting`).
pub const LINK_FORMS: &str = "a link table like { rate = \"2Mbps\", delay = \"25ms\" }";

/// How much of an error below a field to rewrite.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// Under `[topology]`: errors have no position of their own, so prefix every one.
    Buffered,
    /// Elsewhere: rewrite only the wrong-type and missing-`kind` messages, and prefix
    /// messages that already carry a field path.
    Positioned,
}

/// Whether `m` starts with a field path written by this module (`a.b[3].c: ...`).
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

/// Rewrites the error of the field `name` as described in the module doc.
fn rewrite<E: Error>(e: E, name: &str, forms: &str, tagged: bool, scope: Scope) -> E {
    let text = e.to_string();
    let m = first_line(&text);
    if let Some(found) = m.strip_prefix("invalid type: ").and_then(|r| r.strip_suffix(&format!(", expected {forms}"))) {
        return E::custom(format!("{name}: expected {forms}, got {found}"));
    }
    if tagged && m == "missing field `kind`" {
        return E::custom(format!("{name}: missing `kind`; expected {forms}"));
    }
    if has_path(m) {
        return E::custom(format!("{name}.{m}"));
    }
    match scope {
        Scope::Buffered => E::custom(format!("{name}: {m}")),
        Scope::Positioned => e,
    }
}

/// The message of an error: a TOML error may add "in `key`" on a line below.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim_end()
}

fn field<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
    name: &str,
    forms: &str,
    tagged: bool,
    scope: Scope,
) -> Result<T, D::Error> {
    T::deserialize(d).map_err(|e| rewrite(e, name, forms, tagged, scope))
}

/// `loss` of a link or profile.
pub(crate) fn loss<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LossModel>, D::Error> {
    field(d, "loss", LOSS_FORMS, true, Scope::Buffered).map(Some)
}

/// `reverse_loss` of a link.
pub(crate) fn reverse_loss<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LossModel>, D::Error> {
    field(d, "reverse_loss", LOSS_FORMS, true, Scope::Buffered).map(Some)
}

/// `queue` of a link or profile.
pub(crate) fn queue<'de, D: Deserializer<'de>>(d: D) -> Result<Option<QueueToml>, D::Error> {
    field(d, "queue", QUEUE_FORMS, false, Scope::Buffered).map(Some)
}

/// `bottleneck` of a dumbbell.
pub(crate) fn bottleneck<'de, D: Deserializer<'de>>(d: D) -> Result<LinkToml, D::Error> {
    field(d, "bottleneck", LINK_FORMS, false, Scope::Buffered)
}

/// `access` of a dumbbell.
pub(crate) fn access<'de, D: Deserializer<'de>>(d: D) -> Result<LinkToml, D::Error> {
    field(d, "access", LINK_FORMS, false, Scope::Buffered)
}

/// `links` of a custom topology: errors name the link's index.
pub(crate) fn links<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<LinkToml>, D::Error> {
    struct Links;
    struct One(usize);
    impl<'de> DeserializeSeed<'de> for One {
        type Value = LinkToml;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<LinkToml, D::Error> {
            field(d, &format!("links[{}]", self.0), LINK_FORMS, false, Scope::Buffered)
        }
    }
    impl<'de> Visitor<'de> for Links {
        type Value = Vec<LinkToml>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of links, each {LINK_FORMS} and `between = [\"a\", \"b\"]`")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<LinkToml>, A::Error> {
            let mut out = Vec::new();
            while let Some(l) = seq.next_element_seed(One(out.len()))? {
                out.push(l);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Links).map_err(|e| {
        // An element's error already says `links[i]`.
        if first_line(&e.to_string()).starts_with("links[") {
            e
        } else {
            rewrite(e, "links", "", false, Scope::Buffered)
        }
    })
}

/// `[topology]`.
pub(crate) fn topology<'de, D: Deserializer<'de>>(d: D) -> Result<TopologyToml, D::Error> {
    field(d, "topology", TOPOLOGY_FORMS, true, Scope::Positioned)
}

/// `client_app` of a flow.
pub(crate) fn client_app<'de, D: Deserializer<'de>>(d: D) -> Result<Option<AppToml>, D::Error> {
    field(d, "client_app", APP_FORMS, true, Scope::Positioned).map(Some)
}

/// `server_app` of a flow.
pub(crate) fn server_app<'de, D: Deserializer<'de>>(d: D) -> Result<Option<AppToml>, D::Error> {
    field(d, "server_app", APP_FORMS, true, Scope::Positioned).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each type's serde `expecting` is the text `rewrite` matches on.
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
}
