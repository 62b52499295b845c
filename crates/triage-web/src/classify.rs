//! The two classifiers every imported object goes through.
//!
//! **CATS levels** (CATS §II-D-1 and Table I): five semantic priorities, 0 (critical) to 4
//! (background), that "application developers can derive ... from the standard `fetchpriority`
//! HTML attribute" and the browser's own classification ("'High' for render-blocking CSS").
//! [`cats_level`] maps an object onto Table I's groups:
//!
//! | level | Table I group | objects |
//! | --- | --- | --- |
//! | 0 | Critical HTML/CSS | the root document; render-blocking first-party CSS |
//! | 1 | CSS framework | other CSS (third-party or non-blocking); web fonts |
//! | 2 | Application JS | scripts, JSON/XHR data, iframe documents; images the browser or author boosts |
//! | 3 | Images/Media | images, audio, video, other resources |
//! | 4 | Analytics/Tracking | anything from a tracking/advertising domain ([`crate::trackers`]); `VeryLow`-priority beacons |
//!
//! `fetchpriority="high"` moves a non-tracking object one level up (towards 0),
//! `fetchpriority="low"` one level down (at most 3; level 4 is reserved for tracking).
//!
//! **Essentialness** (thesis §5.3.2, Table 4): the eight content categories and whether each is
//! Essential ("Yes"), Non-Essential ("No") or "Maybe". See [`ContentCategory::essentialness`].
//!
//! Both can be overridden per object by [`crate::rules`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{BrowserPriority, ContentType, FetchPriority, RenderBlocking, WebObject};
use crate::trackers;

/// The thesis's eight content categories (§5.3.2: "HTML, CSS, JavaScript, Ads/Analytics,
/// Fonts, JSON, Images, and Others").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentCategory {
    /// HTML documents.
    Html,
    /// Stylesheets.
    Css,
    /// Scripts.
    JavaScript,
    /// Anything from an ads or analytics domain, whatever its type.
    AdsAnalytics,
    /// Web fonts.
    Fonts,
    /// JSON data.
    Json,
    /// Images.
    Images,
    /// Everything else (media, text, binary).
    Others,
}

impl ContentCategory {
    /// All eight, in Table 4's order of discussion.
    pub const ALL: [ContentCategory; 8] = [
        ContentCategory::Html,
        ContentCategory::Css,
        ContentCategory::JavaScript,
        ContentCategory::AdsAnalytics,
        ContentCategory::Fonts,
        ContentCategory::Json,
        ContentCategory::Images,
        ContentCategory::Others,
    ];

    /// Thesis Table 4, column "Essential": Ads/Analytics No, Images Maybe, HTML Yes,
    /// JavaScript Yes, JSON Maybe, CSS Yes, Fonts No, Others Maybe.
    pub fn essentialness(self) -> Essentialness {
        match self {
            ContentCategory::Html | ContentCategory::Css | ContentCategory::JavaScript => Essentialness::Essential,
            ContentCategory::AdsAnalytics | ContentCategory::Fonts => Essentialness::NonEssential,
            ContentCategory::Images | ContentCategory::Json | ContentCategory::Others => Essentialness::Maybe,
        }
    }

    /// Table 4's name.
    pub fn name(self) -> &'static str {
        match self {
            ContentCategory::Html => "HTML",
            ContentCategory::Css => "CSS",
            ContentCategory::JavaScript => "JavaScript",
            ContentCategory::AdsAnalytics => "Ads/Analytics",
            ContentCategory::Fonts => "Fonts",
            ContentCategory::Json => "JSON",
            ContentCategory::Images => "Images",
            ContentCategory::Others => "Others",
        }
    }

    /// The category of a non-tracking object of this content type.
    pub fn of_type(kind: ContentType) -> ContentCategory {
        match kind {
            ContentType::Html => ContentCategory::Html,
            ContentType::Css => ContentCategory::Css,
            ContentType::Js => ContentCategory::JavaScript,
            ContentType::Font => ContentCategory::Fonts,
            ContentType::Image => ContentCategory::Images,
            ContentType::Json => ContentCategory::Json,
            ContentType::Media | ContentType::Other => ContentCategory::Others,
        }
    }
}

impl fmt::Display for ContentCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether an object must be delivered reliably (thesis §5.3.2, Table 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Essentialness {
    /// Table 4 "Yes": deliver reliably.
    Essential,
    /// Table 4 "No": a candidate for unreliable (datagram) delivery.
    NonEssential,
    /// Table 4 "Maybe": depends on the page and the network.
    Maybe,
}

impl Essentialness {
    /// `essential`, `non-essential`, `maybe`.
    pub fn name(self) -> &'static str {
        match self {
            Essentialness::Essential => "essential",
            Essentialness::NonEssential => "non-essential",
            Essentialness::Maybe => "maybe",
        }
    }

    /// Parses [`Essentialness::name`] (also `yes`/`no`, `nonessential`, `non_essential`).
    pub fn parse(s: &str) -> Option<Essentialness> {
        Some(match s.to_ascii_lowercase().as_str() {
            "essential" | "yes" => Essentialness::Essential,
            "non-essential" | "nonessential" | "non_essential" | "no" => Essentialness::NonEssential,
            "maybe" => Essentialness::Maybe,
            _ => return None,
        })
    }
}

impl fmt::Display for Essentialness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// CATS level of an object (see the module table). Uses `tracker`, `kind`, `parent`,
/// `third_party`, `render_blocking`, `browser_priority` and `fetch_priority`.
pub fn cats_level(o: &WebObject) -> u8 {
    // Anything the browser must have before it can paint is on the critical rendering path
    // (Table I's P0/P1), whoever serves it: a render-blocking tracker or script sent as
    // background data would hold first paint back (CATS Table II note a). A render-blocking
    // script is level 0 beside the page's own stylesheets: first paint cannot happen without
    // it, while the fonts and third-party stylesheets of level 1 can wait (with level 1 it
    // queued behind ferguson.com's 545 KB of fonts and CATS painted 1.2 s after FIFO).
    if o.blocks_first_paint() && o.parent.is_some() {
        let own_css = o.kind == ContentType::Css && !o.third_party && !o.tracker;
        return if own_css || o.kind == ContentType::Js { 0 } else { 1 };
    }
    if o.tracker {
        return 4;
    }
    let boosted_by_browser = matches!(o.browser_priority, Some(BrowserPriority::High | BrowserPriority::VeryHigh));
    let base: u8 = match o.kind {
        ContentType::Html if o.parent.is_none() => return 0,
        ContentType::Html => 2,
        ContentType::Css if o.blocks_first_paint() && !o.third_party => 0,
        ContentType::Css | ContentType::Font => 1,
        ContentType::Js | ContentType::Json => 2,
        ContentType::Image if boosted_by_browser => 2,
        ContentType::Image | ContentType::Media => 3,
        ContentType::Other if o.browser_priority == Some(BrowserPriority::VeryLow) => return 4,
        ContentType::Other => 3,
    };
    match o.fetch_priority {
        FetchPriority::Auto => base,
        FetchPriority::High => base.saturating_sub(1),
        FetchPriority::Low => (base + 1).min(3),
    }
}

/// Render-blocking status for an object whose recording does not say: stylesheets found by
/// the root document are blocking unless the browser gave them a priority below High (print
/// or media-query stylesheets); scripts found by the root document at `High`/`VeryHigh` are
/// blocking (Chrome's priority for synchronous `<head>` scripts), at `Medium` parser-blocking
/// in the body; everything else does not block.
pub fn infer_render_blocking(o: &WebObject) -> RenderBlocking {
    let from_root = o.parent.map(|p| p.0 == 0).unwrap_or(true);
    match (o.kind, o.browser_priority) {
        (ContentType::Css, Some(BrowserPriority::High | BrowserPriority::VeryHigh) | None) if from_root => {
            RenderBlocking::Blocking
        }
        (ContentType::Js, Some(BrowserPriority::High | BrowserPriority::VeryHigh)) if from_root => {
            RenderBlocking::Blocking
        }
        (ContentType::Js, Some(BrowserPriority::Medium)) if from_root => RenderBlocking::InBodyParserBlocking,
        _ => RenderBlocking::NonBlocking,
    }
}

/// Fills `tracker`, `category`, `essential` and `cats_level` of an object from its other
/// fields, and infers `render_blocking` if it is unknown. The tracker list
/// ([`crate::trackers`]) applies to third-party objects only (set `third_party` first).
pub fn classify(o: &mut WebObject) {
    // The list names third parties: on its owner's own site (bing.com's objects, whose
    // domain third-party-web files under Bing Ads) a host is first party, as Lighthouse
    // treats the main document's entity.
    // Beacon paths count on any host, first party included.
    o.tracker = o.tracker
        || (o.third_party && trackers::is_tracker_host(&crate::urlparts::host(&o.url)))
        || trackers::is_beacon_url(&o.url);
    if o.render_blocking.is_none() {
        o.render_blocking = Some(infer_render_blocking(o));
    }
    o.category = if o.tracker { ContentCategory::AdsAnalytics } else { ContentCategory::of_type(o.kind) };
    o.essential = o.category.essentialness();
    o.cats_level = cats_level(o);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::object;
    use crate::model::ObjectId;

    #[test]
    fn table_four() {
        use ContentCategory as C;
        use Essentialness as E;
        let expect = [
            (C::AdsAnalytics, E::NonEssential),
            (C::Images, E::Maybe),
            (C::Html, E::Essential),
            (C::JavaScript, E::Essential),
            (C::Json, E::Maybe),
            (C::Css, E::Essential),
            (C::Fonts, E::NonEssential),
            (C::Others, E::Maybe),
        ];
        for (c, e) in expect {
            assert_eq!(c.essentialness(), e, "{c}");
        }
    }

    #[test]
    fn cats_levels_follow_table_one() {
        let mut root = object(0, None, "https://a.com/", ContentType::Html, 1000);
        classify(&mut root);
        assert_eq!(root.cats_level, 0);
        let mut css = object(1, Some(0), "https://a.com/site.css", ContentType::Css, 1000);
        classify(&mut css);
        assert_eq!((css.cats_level, css.render_blocking), (0, Some(RenderBlocking::Blocking)));
        let mut fw = object(2, Some(0), "https://cdn.jsdelivr.net/bootstrap.css", ContentType::Css, 1000);
        fw.third_party = true;
        classify(&mut fw);
        assert_eq!(fw.cats_level, 1);
        let mut js = object(3, Some(0), "https://a.com/app.js", ContentType::Js, 1000);
        classify(&mut js);
        assert_eq!(js.cats_level, 2);
        let mut img = object(4, Some(0), "https://a.com/hero.jpg", ContentType::Image, 1000);
        classify(&mut img);
        assert_eq!((img.cats_level, img.essential), (3, Essentialness::Maybe));
        img.fetch_priority = FetchPriority::High;
        classify(&mut img);
        assert_eq!(img.cats_level, 2);
        let mut ga = object(5, Some(3), "https://www.google-analytics.com/analytics.js", ContentType::Js, 1000);
        ga.third_party = true;
        classify(&mut ga);
        assert_eq!(
            (ga.cats_level, ga.category, ga.essential),
            (4, ContentCategory::AdsAnalytics, Essentialness::NonEssential)
        );
        assert_eq!(ga.parent, Some(ObjectId(3)));
        // A render-blocking tracker or script is on the critical rendering path: level 0,
        // beside the page's own stylesheets (a third party's blocking stylesheet is 1).
        let mut tag = object(6, Some(0), "https://www.googletagmanager.com/gtm.js", ContentType::Js, 1000);
        tag.third_party = true;
        tag.render_blocking = Some(RenderBlocking::Blocking);
        classify(&mut tag);
        assert_eq!((tag.cats_level, tag.category), (0, ContentCategory::AdsAnalytics));
        let mut head_js = object(7, Some(0), "https://a.com/head.js", ContentType::Js, 1000);
        head_js.render_blocking = Some(RenderBlocking::Blocking);
        classify(&mut head_js);
        assert_eq!(head_js.cats_level, 0);
        // On its owner's site a listed domain is first party: bing.com is "Bing Ads" in
        // third-party-web, but www.bing.com's own objects are not trackers there.
        let mut bing = object(8, Some(0), "https://www.bing.com/sa/simg/app.js", ContentType::Js, 1000);
        classify(&mut bing);
        assert!(!bing.tracker);
        bing.third_party = true;
        classify(&mut bing);
        assert!(bing.tracker);
        // A beacon path is a tracker on any host.
        let mut beacon = object(9, Some(0), "https://www.google.se/gen_204?atyp=i", ContentType::Other, 10);
        classify(&mut beacon);
        assert!(beacon.tracker);
    }
}
