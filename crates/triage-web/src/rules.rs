//! User rules that override the classifiers, read from TOML.
//!
//! ```toml
//! # Rules apply in file order; for each object, every matching rule applies and later
//! # rules override earlier ones. A rule matches when all the matchers it gives match.
//! [[rule]]
//! url = "https://cdn.example.com/*.css"   # glob on the whole URL: * any run, ? one character
//! domain = "example.com"                  # the host, or any subdomain of it
//! type = "css"                            # html, css, js, font, image, media, json, other
//! # what to set (at least one):
//! cats_level = 1                          # CATS level 0-4 (CATS §II-D-1)
//! essential = "non-essential"             # essential, non-essential, maybe (thesis Table 4)
//! fetch_priority = "high"                 # high, low, auto: re-derives the CATS level
//! tracker = true                          # treat as analytics/tracking (level 4, Ads/Analytics)
//! reliability = "unreliable"              # unreliable or reliable: replaces the reliability
//!                                         # policy's choice (crate::reliability)
//! ```
//!
//! Unknown fields and bad values are errors that name the file, the line and what was expected.

use std::path::Path;

use serde::Deserialize;

use crate::classify::{cats_level, ContentCategory, Essentialness};
use crate::error::WebError;
use crate::glob::Glob;
use crate::model::{ContentType, FetchPriority, Page};
use crate::reliability::Reliability;
use crate::urlparts;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    url: Option<String>,
    domain: Option<String>,
    #[serde(rename = "type")]
    kind: Option<TypeName>,
    cats_level: Option<Level>,
    essential: Option<EssentialName>,
    fetch_priority: Option<FetchPriority>,
    tracker: Option<bool>,
    reliability: Option<ReliabilityName>,
}

#[derive(Deserialize)]
#[serde(try_from = "String")]
struct ReliabilityName(Reliability);

impl TryFrom<String> for ReliabilityName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Reliability::parse(&s)
            .map(ReliabilityName)
            .ok_or_else(|| format!("unknown reliability {s:?}, expected reliable or unreliable"))
    }
}

#[derive(Deserialize)]
#[serde(try_from = "String")]
struct TypeName(ContentType);

impl TryFrom<String> for TypeName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        ContentType::from_name(&s).map(TypeName).ok_or_else(|| {
            format!("unknown type {s:?}, expected one of html, css, js, font, image, media, json, other")
        })
    }
}

#[derive(Deserialize)]
#[serde(try_from = "i64")]
struct Level(u8);

impl TryFrom<i64> for Level {
    type Error = String;
    fn try_from(v: i64) -> Result<Self, String> {
        u8::try_from(v)
            .ok()
            .filter(|l| *l <= 4)
            .map(Level)
            .ok_or_else(|| format!("CATS level {v} out of range, expected 0 to 4"))
    }
}

#[derive(Deserialize)]
#[serde(try_from = "String")]
struct EssentialName(Essentialness);

impl TryFrom<String> for EssentialName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Essentialness::parse(&s)
            .map(EssentialName)
            .ok_or_else(|| format!("unknown essentialness {s:?}, expected essential, non-essential or maybe"))
    }
}

/// One rule: matchers and the values it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Glob on the whole URL.
    pub url: Option<Glob>,
    /// Host or any subdomain.
    pub domain: Option<String>,
    /// Content type.
    pub kind: Option<ContentType>,
    /// CATS level to set.
    pub cats_level: Option<u8>,
    /// Essentialness to set.
    pub essential: Option<Essentialness>,
    /// `fetchpriority` to set.
    pub fetch_priority: Option<FetchPriority>,
    /// Tracker flag to set.
    pub tracker: Option<bool>,
    /// Reliability to set (replaces the reliability policy's choice).
    pub reliability: Option<Reliability>,
}

impl Rule {
    /// True if every matcher the rule gives matches the object's URL and type.
    pub fn matches(&self, url: &str, kind: ContentType) -> bool {
        self.url.as_ref().is_none_or(|g| g.matches(url))
            && self.domain.as_ref().is_none_or(|d| urlparts::host_matches(&urlparts::host(url), d))
            && self.kind.is_none_or(|k| k == kind)
    }
}

/// An ordered list of rules.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// Parses rules; `source` names the file in error messages.
    pub fn parse(text: &str, source: &str) -> Result<Rules, WebError> {
        let file: RulesFile = toml::from_str(text).map_err(|e| {
            // One line: file, line and column, and toml's message (what was expected).
            let at = match e.span() {
                Some(span) => {
                    let before = &text.as_bytes()[..span.start.min(text.len())];
                    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
                    format!("line {line}, column {column}: ")
                }
                None => String::new(),
            };
            WebError::Rules(format!("{source}: {at}{}", e.message().trim_end().replace('\n', " ")))
        })?;
        let mut rules = Vec::with_capacity(file.rule.len());
        for (i, r) in file.rule.into_iter().enumerate() {
            let n = i + 1;
            if r.url.is_none() && r.domain.is_none() && r.kind.is_none() {
                return Err(WebError::Rules(format!(
                    "{source}: rule {n} matches nothing: give at least one of url, domain, type"
                )));
            }
            if r.cats_level.is_none()
                && r.essential.is_none()
                && r.fetch_priority.is_none()
                && r.tracker.is_none()
                && r.reliability.is_none()
            {
                return Err(WebError::Rules(format!(
                    "{source}: rule {n} sets nothing: give at least one of cats_level, essential, fetch_priority, \
                     tracker, reliability"
                )));
            }
            rules.push(Rule {
                url: r.url.as_deref().map(Glob::new),
                domain: r.domain,
                kind: r.kind.map(|t| t.0),
                cats_level: r.cats_level.map(|l| l.0),
                essential: r.essential.map(|e| e.0),
                fetch_priority: r.fetch_priority,
                tracker: r.tracker,
                reliability: r.reliability.map(|r| r.0),
            });
        }
        Ok(Rules { rules })
    }

    /// Reads and parses a rules file.
    pub fn from_file(path: &Path) -> Result<Rules, WebError> {
        let text = std::fs::read_to_string(path).map_err(|e| WebError::Rules(format!("{}: {e}", path.display())))?;
        Rules::parse(&text, &path.display().to_string())
    }

    /// The rules in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Applies the rules to every object; returns how many objects matched at least one rule.
    /// Setting `tracker` or `fetch_priority` re-derives category, essentialness and CATS level;
    /// `cats_level` and `essential` then override the derived values. `reliability` is stored on
    /// the object for [`crate::reliability::ReliabilityPolicy`]; rules that set only
    /// `reliability` leave the classification untouched.
    pub fn apply(&self, page: &mut Page) -> usize {
        let mut matched = 0;
        for o in page.objects_mut() {
            let mut hit = false;
            let (mut level, mut essential, mut fetch, mut tracker, mut reliability) = (None, None, None, None, None);
            for r in self.rules.iter().filter(|r| r.matches(&o.url, o.kind)) {
                hit = true;
                level = r.cats_level.or(level);
                essential = r.essential.or(essential);
                fetch = r.fetch_priority.or(fetch);
                tracker = r.tracker.or(tracker);
                reliability = r.reliability.or(reliability);
            }
            if !hit {
                continue;
            }
            matched += 1;
            if reliability.is_some() {
                o.reliability = reliability;
            }
            if (level, essential, fetch, tracker) == (None, None, None, None) {
                // Only reliability: the classification stays as it was.
                continue;
            }
            if let Some(t) = tracker {
                o.tracker = t;
            }
            if let Some(f) = fetch {
                o.fetch_priority = f;
            }
            o.category = if o.tracker { ContentCategory::AdsAnalytics } else { ContentCategory::of_type(o.kind) };
            o.essential = essential.unwrap_or(o.category.essentialness());
            o.cats_level = level.unwrap_or(cats_level(o));
        }
        matched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_clearly() {
        let r = Rules::parse("[[rule]]\ndomain = \"x.com\"\ncats_level = 1\n", "r.toml").unwrap();
        assert_eq!(r.rules().len(), 1);
        let e = Rules::parse("[[rule]]\ndomain = \"x.com\"\npriority = 1\n", "r.toml").unwrap_err().to_string();
        assert!(e.starts_with("r.toml: ") && e.contains("line 3") && e.contains("unknown field `priority`"), "{e}");
        assert!(e.contains("cats_level"), "lists expected fields: {e}");
        let e = Rules::parse("[[rule]]\ndomain = \"x.com\"\ncats_level = 7\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("expected 0 to 4"), "{e}");
        let e = Rules::parse("[[rule]]\ntype = \"pdf\"\ncats_level = 1\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("expected one of html"), "{e}");
        let e = Rules::parse("[[rule]]\ntype = \"css\"\nessential = \"perhaps\"\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("non-essential"), "{e}");
        let e = Rules::parse("[[rule]]\ncats_level = 1\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("rule 1 matches nothing"), "{e}");
        let e = Rules::parse("[[rule]]\ntype = \"css\"\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("rule 1 sets nothing"), "{e}");
        let e = Rules::parse("[[rule]\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("r.toml") && e.contains("line 1"), "{e}");
        let e =
            Rules::parse("[[rule]]\ntype = \"font\"\nreliability = \"sometimes\"\n", "r.toml").unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("expected reliable or unreliable"), "{e}");
    }

    #[test]
    fn reliability_rules_feed_the_policy() {
        use crate::reliability::ReliabilityPolicy as P;
        let mut page = crate::builtin::news_page();
        let rules = Rules::parse(
            "[[rule]]\ndomain = \"static.news.example\"\nurl = \"*/images/1?.jpg\"\nreliability = \"unreliable\"\n\
             [[rule]]\ntype = \"font\"\nreliability = \"reliable\"\n\
             [[rule]]\nurl = \"https://news.example/\"\nreliability = \"unreliable\"\n",
            "r.toml",
        )
        .unwrap();
        assert_eq!(rules.apply(&mut page), 10 + 12 + 1);
        // Images 10-19 are ids 85-94; fonts (9-20) are pinned reliable; the root cannot go.
        let plan = P::Reliable.plan(&page);
        assert_eq!(plan.unreliable.iter().map(|i| i.0).collect::<Vec<_>>(), (85..=94).collect::<Vec<_>>());
        assert_eq!(plan.overridden, vec![crate::model::ObjectId(0)]);
        // A reliability-only rule leaves the classification alone.
        let mut p2 = crate::builtin::news_page();
        let cats = |p: &Page| p.objects().iter().map(|o| (o.essential, o.cats_level, o.category)).collect::<Vec<_>>();
        let before = cats(&p2);
        Rules::parse("[[rule]]\ntype = \"image\"\nreliability = \"unreliable\"\n", "r.toml").unwrap().apply(&mut p2);
        assert_eq!(cats(&p2), before);
        let plan = P::FontsAds.plan(&page);
        assert_eq!(
            plan.unreliable.iter().map(|i| i.0).collect::<Vec<_>>(),
            (66..=74).chain(85..=94).collect::<Vec<_>>()
        );
    }
}
