//! Which objects of a page may travel unreliably: the thesis's scenarios (§5.9) as policies.
//!
//! The thesis moves "Non-Essential" objects from reliable QUIC streams to unreliable DATAGRAM
//! chunks (§5.8) and tests five groupings against an all-reliable baseline (§5.9, list verbatim
//! in the reproduction spec §B.1.4). [`ReliabilityPolicy`] names each of them, plus the
//! classifier's own verdict:
//!
//! | name | unreliable objects | thesis |
//! | --- | --- | --- |
//! | `reliable` | none (the baseline) | §5.9 "Baseline Configuration" |
//! | `fonts` | web fonts | "Fonts as Non-Essential: Additional styling font files were sent via datagrams" |
//! | `ads` | ads/analytics objects and their CSS | "Ad files and `.css` as Non-Essential: Ads, analytics and corresponding files" |
//! | `third_party` | everything `ads` moves, plus third-party scripts and stylesheets | "3rd Party Objects as Non-Essential: ... additional `.js` scripts, trackers, and extra `.css` scripts" |
//! | `fonts_ads` | `fonts` ∪ `ads` | "Fonts and Ads as Non-Essential" |
//! | `fonts_third_party` | `fonts` ∪ `third_party` | "Fonts and 3rd Party Objects as Non-Essential" |
//! | `essentialness` | every object the §5.3.2 classifier calls Non-Essential (Table 4: Fonts and Ads/Analytics, plus rules' `essential = "non-essential"`) | §5.3.2, Table 4 |
//! | `cats_level4` | every object the CATS classifier puts at level 4 (background) | CATS §II-B, with the thesis's datagrams |
//!
//! # Classification (the reproduction spec's PR-10)
//!
//! - **Fonts**: the object's type is font, or its MIME type or URL extension says font
//!   (`font/*`, `application/font-woff`, `.woff`, `.woff2`, `.ttf`, `.otf`, `.eot`).
//! - **Ads/analytics**: the object's host is on the tracking and advertising list
//!   ([`crate::trackers`]) or a rule set `tracker = true`. **Their CSS**: a stylesheet from such
//!   a host (already a tracker object), or a stylesheet whose discovery parent is an
//!   ads/analytics object (a creative's stylesheet served from a host not on the list).
//! - **First party** ([`FirstParty`]): the registrable domain of the root document, plus the
//!   registrable domain of every non-tracker host that serves the page a render-blocking
//!   stylesheet or script. The page cannot paint without those hosts, so it treats them as its
//!   own: nytimes.com's nyt.com (§5.5 names a1/g1/static01/vp.nyt.com beside nytimes.com).
//!   Registrable domains come from [`crate::urlparts::site`] (the Public Suffix List).
//!   Why not the initiator, as §5.5 does ("objects from nytimes.com as initiator were
//!   crucial")? Every object a first-party script fetches, trackers included, has a
//!   first-party initiator; the host is what the scenario's "3rd party" names.
//! - **Third-party objects**: ads/analytics objects and their CSS, plus scripts and
//!   stylesheets whose host is not first party. Third-party images, fonts, JSON and documents
//!   stay reliable (§5.9 lists only "additional .js scripts, trackers, and extra .css").
//!
//! # What is never unreliable
//!
//! The root document and every object that blocks first paint (render-blocking stylesheets
//! and scripts, and the rare blocking JSON or document) stay reliable whatever the policy or
//! a rule says: the thesis counts "Critical Path files", the "Initial HTML" and
//! "Render-Critical JavaScript" as always essential (§5.3.1). [`ReliabilityPlan::overridden`]
//! lists the objects a policy or rule would have sent unreliably but this guard kept reliable
//! (on ferguson.com, five render-blocking tracker scripts and stylesheets under `ads`).
//!
//! # User rules
//!
//! A rule ([`crate::rules`]) can set `reliability = "unreliable"` or `"reliable"` on objects
//! by URL glob, domain or type; the rule's choice replaces the policy's for those objects
//! (the guard above still applies). With the `reliable` policy, exactly the objects rules
//! mark unreliable go as datagrams.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::classify::Essentialness;
use crate::content;
use crate::model::{ContentType, ObjectId, Page, WebObject};
use crate::urlparts;

/// How an object travels: on a stream (retransmitted) or as datagram chunks (never
/// retransmitted, loss counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reliability {
    /// A reliable stream.
    Reliable,
    /// Unreliable datagram chunks.
    Unreliable,
}

impl Reliability {
    /// `reliable` or `unreliable`.
    pub fn name(self) -> &'static str {
        match self {
            Reliability::Reliable => "reliable",
            Reliability::Unreliable => "unreliable",
        }
    }

    /// Parses [`Reliability::name`] (case-insensitive).
    pub fn parse(s: &str) -> Option<Reliability> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reliable" => Some(Reliability::Reliable),
            "unreliable" => Some(Reliability::Unreliable),
            _ => None,
        }
    }
}

impl fmt::Display for Reliability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which objects go unreliably (see the module docs for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReliabilityPolicy {
    /// Everything on streams: the thesis's baseline.
    Reliable,
    /// Web fonts unreliable.
    Fonts,
    /// Ads/analytics objects and their CSS unreliable.
    Ads,
    /// Ads/analytics, their CSS, and third-party scripts and stylesheets unreliable.
    ThirdParty,
    /// `Fonts` and `Ads`.
    FontsAds,
    /// `Fonts` and `ThirdParty`.
    FontsThirdParty,
    /// Every object the essentialness classifier calls Non-Essential (§5.3.2, Table 4).
    Essentialness,
    /// Every object the CATS classifier puts at level 4, "background" (CATS §II-B): what CATS
    /// already sends last is what may arrive incomplete.
    CatsLevel4,
}

/// The error of [`ReliabilityPolicy::parse`]: names the input and the accepted names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = ReliabilityPolicy::ALL.iter().map(|p| p.name()).collect();
        write!(f, "unknown reliability policy {:?}, expected one of {}", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownPolicy {}

impl ReliabilityPolicy {
    /// Every policy, in the order of the module table.
    pub const ALL: [ReliabilityPolicy; 8] = [
        ReliabilityPolicy::Reliable,
        ReliabilityPolicy::Fonts,
        ReliabilityPolicy::Ads,
        ReliabilityPolicy::ThirdParty,
        ReliabilityPolicy::FontsAds,
        ReliabilityPolicy::FontsThirdParty,
        ReliabilityPolicy::Essentialness,
        ReliabilityPolicy::CatsLevel4,
    ];

    /// The thesis's six runs (§5.9): the all-reliable baseline and the five scenarios.
    pub const THESIS: [ReliabilityPolicy; 6] = [
        ReliabilityPolicy::Reliable,
        ReliabilityPolicy::Fonts,
        ReliabilityPolicy::Ads,
        ReliabilityPolicy::ThirdParty,
        ReliabilityPolicy::FontsAds,
        ReliabilityPolicy::FontsThirdParty,
    ];

    /// Name as in the module table and in JSON output (`reliable`, `fonts`, `ads`,
    /// `third_party`, `fonts_ads`, `fonts_third_party`, `essentialness`, `cats_level4`).
    pub fn name(self) -> &'static str {
        match self {
            ReliabilityPolicy::Reliable => "reliable",
            ReliabilityPolicy::Fonts => "fonts",
            ReliabilityPolicy::Ads => "ads",
            ReliabilityPolicy::ThirdParty => "third_party",
            ReliabilityPolicy::FontsAds => "fonts_ads",
            ReliabilityPolicy::FontsThirdParty => "fonts_third_party",
            ReliabilityPolicy::Essentialness => "essentialness",
            ReliabilityPolicy::CatsLevel4 => "cats_level4",
        }
    }

    /// Parses [`ReliabilityPolicy::name`]; case-insensitive, `-` for `_` accepted. The
    /// error lists the accepted names.
    pub fn parse(s: &str) -> Result<ReliabilityPolicy, UnknownPolicy> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        ReliabilityPolicy::ALL.into_iter().find(|p| p.name() == norm).ok_or_else(|| UnknownPolicy(s.to_string()))
    }

    /// True if this object goes as datagram chunks under this policy (after rules and the
    /// never-unreliable guard; see the module docs).
    pub fn is_unreliable(&self, page: &Page, obj: &WebObject) -> bool {
        self.decide(page, obj).unreliable
    }

    /// The decision for one object, and whether the guard overrode it.
    pub fn decide(&self, page: &Page, obj: &WebObject) -> Decision {
        // First party is needed only by the third-party policies; computing it per call keeps
        // this function self-contained (a page has hundreds of objects, not millions).
        let first_party = match self {
            ReliabilityPolicy::ThirdParty | ReliabilityPolicy::FontsThirdParty => Some(FirstParty::of(page)),
            _ => None,
        };
        self.decide_with(page, obj, first_party.as_ref())
    }

    fn decide_with(&self, page: &Page, obj: &WebObject, first_party: Option<&FirstParty>) -> Decision {
        let wanted = match obj.reliability {
            Some(r) => r == Reliability::Unreliable,
            None => self.wants_unreliable(page, obj, first_party),
        };
        let guarded = never_unreliable(obj);
        Decision { unreliable: wanted && !guarded, overridden: wanted && guarded }
    }

    fn wants_unreliable(&self, page: &Page, obj: &WebObject, first_party: Option<&FirstParty>) -> bool {
        let third_party = || match first_party {
            Some(fp) => is_third_party_extra(page, obj, fp),
            None => is_third_party_extra(page, obj, &FirstParty::of(page)),
        };
        match self {
            ReliabilityPolicy::Reliable => false,
            ReliabilityPolicy::Fonts => is_font(obj),
            ReliabilityPolicy::Ads => is_ad(page, obj),
            ReliabilityPolicy::ThirdParty => third_party(),
            ReliabilityPolicy::FontsAds => is_font(obj) || is_ad(page, obj),
            ReliabilityPolicy::FontsThirdParty => is_font(obj) || third_party(),
            ReliabilityPolicy::Essentialness => obj.essential == Essentialness::NonEssential,
            ReliabilityPolicy::CatsLevel4 => obj.cats_level == 4,
        }
    }

    /// Decides every object of a page.
    pub fn plan(&self, page: &Page) -> ReliabilityPlan {
        let fp = FirstParty::of(page);
        let mut plan = ReliabilityPlan {
            policy: *self,
            unreliable: Vec::new(),
            overridden: Vec::new(),
            unreliable_bytes: 0,
            total_bytes: page.total_wire_bytes(),
        };
        for o in page.objects() {
            let d = self.decide_with(page, o, Some(&fp));
            if d.unreliable {
                plan.unreliable.push(o.id);
                plan.unreliable_bytes = plan.unreliable_bytes.saturating_add(o.wire_bytes);
            }
            if d.overridden {
                plan.overridden.push(o.id);
            }
        }
        plan
    }
}

impl fmt::Display for ReliabilityPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReliabilityPolicy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, UnknownPolicy> {
        ReliabilityPolicy::parse(s)
    }
}

/// One object's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Goes as datagram chunks.
    pub unreliable: bool,
    /// The policy or a rule wanted it unreliable, but it is the root or blocks first paint,
    /// so it stays reliable.
    pub overridden: bool,
}

/// Every object's decision under one policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReliabilityPlan {
    /// The policy.
    pub policy: ReliabilityPolicy,
    /// Objects sent unreliably, in id order.
    pub unreliable: Vec<ObjectId>,
    /// Objects kept reliable by the guard although the policy or a rule chose unreliable.
    pub overridden: Vec<ObjectId>,
    /// Wire bytes of the unreliable objects.
    pub unreliable_bytes: u64,
    /// Wire bytes of the page.
    pub total_bytes: u64,
}

/// True for the root document and any object that blocks first paint: always reliable.
pub fn never_unreliable(obj: &WebObject) -> bool {
    obj.blocks_first_paint()
}

/// A web font, by type, MIME type or URL extension.
pub fn is_font(obj: &WebObject) -> bool {
    obj.kind == ContentType::Font
        || content::from_mime(&obj.mime) == Some(ContentType::Font)
        || content::from_extension(&obj.url) == Some(ContentType::Font)
}

/// An ads/analytics object (tracker host or rule), or a stylesheet one of them initiated.
pub fn is_ad(page: &Page, obj: &WebObject) -> bool {
    obj.tracker
        || (obj.kind == ContentType::Css && obj.parent.is_some_and(|p| p.index() < page.len() && page.get(p).tracker))
}

/// The third-party objects of §5.9's third scenario: ads/analytics and their CSS, plus
/// scripts and stylesheets from hosts that are not first party.
pub fn is_third_party_extra(page: &Page, obj: &WebObject, first_party: &FirstParty) -> bool {
    is_ad(page, obj) || (matches!(obj.kind, ContentType::Js | ContentType::Css) && !first_party.contains_url(&obj.url))
}

/// The registrable domains a page treats as its own (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct FirstParty {
    sites: BTreeSet<String>,
}

impl FirstParty {
    /// The root's registrable domain, and that of every non-tracker host serving a
    /// render-blocking stylesheet or script.
    pub fn of(page: &Page) -> FirstParty {
        let site_of = |url: &str| urlparts::site(&urlparts::host(url));
        let mut sites = BTreeSet::new();
        sites.insert(site_of(&page.get(page.root()).url));
        for o in page.objects().iter().skip(1) {
            if !o.tracker && o.blocks_first_paint() && matches!(o.kind, ContentType::Css | ContentType::Js) {
                sites.insert(site_of(&o.url));
            }
        }
        FirstParty { sites }
    }

    /// The registrable domains, sorted.
    pub fn sites(&self) -> impl Iterator<Item = &str> {
        self.sites.iter().map(String::as_str)
    }

    /// True if the URL's host belongs to a first-party registrable domain.
    pub fn contains_url(&self, url: &str) -> bool {
        self.sites.contains(&urlparts::site(&urlparts::host(url)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::{news_page, object};
    use crate::classify::classify;
    use crate::model::RenderBlocking;

    fn ids(v: &[ObjectId]) -> Vec<u32> {
        v.iter().map(|i| i.0).collect()
    }

    fn range(r: std::ops::RangeInclusive<u32>) -> Vec<u32> {
        r.collect()
    }

    #[test]
    fn cats_level4_sends_exactly_the_background_objects_that_do_not_block_paint() {
        for name in ["cats", "news-v1"] {
            let page = crate::builtin::builtin(name).unwrap();
            let plan = ReliabilityPolicy::CatsLevel4.plan(&page);
            let want: Vec<ObjectId> =
                page.objects().iter().filter(|o| o.cats_level == 4 && !o.blocks_first_paint()).map(|o| o.id).collect();
            assert!(!want.is_empty(), "{name} has background objects");
            assert_eq!(plan.unreliable, want, "{name}");
        }
    }

    #[test]
    fn names_round_trip_and_errors_list_them() {
        for p in ReliabilityPolicy::ALL {
            assert_eq!(ReliabilityPolicy::parse(p.name()), Ok(p));
            assert_eq!(p.name().parse::<ReliabilityPolicy>(), Ok(p));
        }
        assert_eq!(ReliabilityPolicy::parse("Fonts-Third-Party"), Ok(ReliabilityPolicy::FontsThirdParty));
        let e = ReliabilityPolicy::parse("images").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown reliability policy \"images\", expected one of reliable, fonts, ads, third_party, \
             fonts_ads, fonts_third_party, essentialness, cats_level4"
        );
        assert_eq!(Reliability::parse("Unreliable"), Some(Reliability::Unreliable));
        assert_eq!(Reliability::parse("maybe"), None);
    }

    /// The built-in `news` page (Table 4 averages): ids 9-20 are its fonts, 66-74 its
    /// ads/analytics objects; it has no third-party script or stylesheet outside the ads, so
    /// `third_party` moves exactly what `ads` moves.
    #[test]
    fn policies_on_the_news_page() {
        let page = news_page();
        let fonts = range(9..=20);
        let ads = range(66..=74);
        let both: Vec<u32> = fonts.iter().chain(&ads).copied().collect();
        for (policy, want) in [
            (ReliabilityPolicy::Reliable, vec![]),
            (ReliabilityPolicy::Fonts, fonts.clone()),
            (ReliabilityPolicy::Ads, ads.clone()),
            (ReliabilityPolicy::ThirdParty, ads.clone()),
            (ReliabilityPolicy::FontsAds, both.clone()),
            (ReliabilityPolicy::FontsThirdParty, both.clone()),
            (ReliabilityPolicy::Essentialness, both.clone()),
        ] {
            let plan = policy.plan(&page);
            assert_eq!(ids(&plan.unreliable), want, "{policy}");
            assert!(plan.overridden.is_empty(), "{policy}");
            for o in page.objects() {
                assert_eq!(policy.is_unreliable(&page, o), want.contains(&o.id.0), "{policy} {}", o.id);
            }
        }
        // Table 4: fonts 338 KB, ads 405 KB.
        assert_eq!(ReliabilityPolicy::Fonts.plan(&page).unreliable_bytes, 338_000);
        assert_eq!(ReliabilityPolicy::Ads.plan(&page).unreliable_bytes, 405_000);
    }

    fn page_of(rows: &[(Option<u32>, &str, ContentType, Option<RenderBlocking>)]) -> Page {
        let root_site = urlparts::site(&urlparts::host(rows[0].1));
        let objects = rows
            .iter()
            .enumerate()
            .map(|(i, (parent, url, kind, rb))| {
                let mut o = object(i as u32, *parent, url, *kind, 1000);
                o.third_party = urlparts::site(&urlparts::host(url)) != root_site;
                o.render_blocking = Some(rb.unwrap_or(RenderBlocking::NonBlocking));
                classify(&mut o);
                o
            })
            .collect();
        Page::new("t", objects).unwrap()
    }

    #[test]
    fn first_party_takes_hosts_serving_render_blocking_code() {
        use ContentType as T;
        let b = Some(RenderBlocking::Blocking);
        let page = page_of(&[
            (None, "https://www.paper.example/", T::Html, None),
            (Some(0), "https://a1.paperstatic.example/site.css", T::Css, b), // own: blocking CSS
            (Some(0), "https://a1.paperstatic.example/late.js", T::Js, None), // first party
            (Some(0), "https://cdn.widgets.example/w.js", T::Js, None),      // third party
            (Some(0), "https://www.googletagmanager.com/gtm.js", T::Js, b),  // blocking tracker
            (Some(4), "https://www.googletagmanager.com/x.js", T::Js, None), // tracker
            (Some(4), "https://creative.adpartner.example/ad.css", T::Css, None), // ad's CSS
            (Some(0), "https://g1.paperstatic.example/f.woff2", T::Font, None),
            (Some(0), "https://fonts.gstatic.com/s/x.bin", T::Other, None), // font by extension? no
            (Some(0), "https://cdn.widgets.example/w.css", T::Css, None),   // third party CSS
            (Some(0), "https://cdn.widgets.example/w.jpg", T::Image, None), // third-party image: stays
        ]);
        let fp = FirstParty::of(&page);
        assert_eq!(fp.sites().collect::<Vec<_>>(), vec!["paper.example", "paperstatic.example"]);
        let plan = |p: ReliabilityPolicy| (ids(&p.plan(&page).unreliable), ids(&p.plan(&page).overridden));
        assert_eq!(plan(ReliabilityPolicy::Fonts), (vec![7], vec![]));
        assert_eq!(plan(ReliabilityPolicy::Ads), (vec![5, 6], vec![4]));
        assert_eq!(plan(ReliabilityPolicy::ThirdParty), (vec![3, 5, 6, 9], vec![4]));
        assert_eq!(plan(ReliabilityPolicy::FontsThirdParty), (vec![3, 5, 6, 7, 9], vec![4]));
        assert_eq!(plan(ReliabilityPolicy::Essentialness), (vec![5, 7], vec![4]));
    }

    #[test]
    fn fonts_by_mime_or_extension_and_rules_override() {
        let mut root = object(0, None, "https://a.example/", ContentType::Html, 10);
        classify(&mut root);
        let mut by_mime = object(1, Some(0), "https://a.example/f", ContentType::Other, 10);
        by_mime.mime = "application/font-woff".into();
        let by_ext = object(2, Some(0), "https://a.example/f.otf?v=2", ContentType::Other, 10);
        let mut forced = object(3, Some(0), "https://a.example/hero.jpg", ContentType::Image, 10);
        forced.reliability = Some(Reliability::Unreliable);
        let mut kept = object(4, Some(0), "https://a.example/f.woff2", ContentType::Font, 10);
        kept.reliability = Some(Reliability::Reliable);
        let mut root_forced = root.clone();
        root_forced.reliability = Some(Reliability::Unreliable);
        let page = Page::new("t", vec![root_forced, by_mime, by_ext, forced, kept]).unwrap();
        let p = ReliabilityPolicy::Fonts.plan(&page);
        assert_eq!((ids(&p.unreliable), ids(&p.overridden)), (vec![1, 2, 3], vec![0]));
        let p = ReliabilityPolicy::Reliable.plan(&page);
        assert_eq!((ids(&p.unreliable), ids(&p.overridden)), (vec![3], vec![0]));
    }
}
