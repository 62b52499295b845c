//! The reliability policies on real recordings from ../shared/data/pages, with the number of
//! unreliable objects, their bytes and the guard's overrides pinned. The folder must exist: a
//! missing folder fails the tests, never skips them.

mod common;

use common::data_dir;
use triage_web::reliability::FirstParty;
use triage_web::{import_file, ImportOptions, ObjectId, Page, ReliabilityPolicy};

fn load(name: &str) -> Page {
    import_file(&data_dir().join(name), &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}")).page
}

/// (policy, unreliable objects, their wire bytes, overridden ids).
type Row = (ReliabilityPolicy, usize, u64, &'static [u32]);

fn check(page: &Page, name: &str, rows: &[Row]) {
    // Every row first, so one run shows all that moved.
    for &(policy, ..) in rows {
        let plan = policy.plan(page);
        println!(
            "{name} {policy}: {} objects, {} bytes, overridden {:?}",
            plan.unreliable.len(),
            plan.unreliable_bytes,
            plan.overridden
        );
    }
    for &(policy, n, bytes, overridden) in rows {
        let plan = policy.plan(page);
        assert_eq!(plan.unreliable.len(), n, "{name} {policy}: objects");
        assert_eq!(plan.unreliable_bytes, bytes, "{name} {policy}: bytes");
        assert_eq!(plan.overridden, overridden.iter().map(|&i| ObjectId(i)).collect::<Vec<_>>(), "{name} {policy}");
        for o in page.objects() {
            assert_eq!(policy.is_unreliable(page, o), plan.unreliable.contains(&o.id), "{name} {policy} {}", o.id);
        }
        // The root and whatever blocks first paint never go unreliable.
        assert!(plan.unreliable.iter().all(|&id| !page.get(id).blocks_first_paint()));
    }
    // The combined scenarios are unions.
    let set = |p: ReliabilityPolicy| p.plan(page).unreliable;
    let union = |a: ReliabilityPolicy, b: ReliabilityPolicy| {
        let mut v = set(a);
        v.extend(set(b));
        v.sort();
        v.dedup();
        v
    };
    use ReliabilityPolicy as P;
    assert_eq!(set(P::FontsAds), union(P::Fonts, P::Ads), "{name}");
    assert_eq!(set(P::FontsThirdParty), union(P::Fonts, P::ThirdParty), "{name}");
    assert!(set(P::Ads).iter().all(|id| set(P::ThirdParty).contains(id)), "{name}: ads within third_party");
}

/// ferguson.com: 10 fonts (545 KB); 64 ads/analytics objects (1049 KB) by third-party-web
/// 0.30.0 (with four tracking redirect hops, the two Facebook pixel hits
/// `facebook.com/tr/?...` and micpn.com; not
/// AppDynamics, a `utility` there). No render-blocking object is a tracker, so the guard keeps
/// none. AppDynamics' render-blocking head script makes appdynamics.com first party. Third
/// party adds three non-tracker scripts (#66 and #88 connect.facebook.net, `social` in
/// third-party-web; #102 img.en25.com).
#[test]
fn ferguson() {
    use ReliabilityPolicy as P;
    let page = load("ferguson.com.har");
    assert_eq!(FirstParty::of(&page).sites().collect::<Vec<_>>(), vec!["appdynamics.com", "ferguson.com"]);
    const G: &[u32] = &[];
    check(
        &page,
        "ferguson.com",
        &[
            (P::Reliable, 0, 0, &[]),
            (P::Fonts, 10, 545_252, &[]),
            (P::Ads, 64, 1_048_861, G),
            (P::ThirdParty, 67, 1_167_968, G),
            (P::FontsAds, 74, 1_594_113, G),
            (P::FontsThirdParty, 77, 1_713_220, G),
            (P::Essentialness, 74, 1_594_113, G),
        ],
    );
    let extra: Vec<u32> = P::ThirdParty
        .plan(&page)
        .unreliable
        .into_iter()
        .filter(|id| !P::Ads.plan(&page).unreliable.contains(id))
        .map(|id| id.0)
        .collect();
    assert_eq!(extra, vec![66, 88, 102]);
}

/// paulirish.com: six Google Fonts files (77 KB); four Google Analytics / Tag Manager objects;
/// third party adds the Google Fonts stylesheet (#4) and Disqus's script (#18).
#[test]
fn paulirish() {
    use ReliabilityPolicy as P;
    let page = load("paulirish.com.devtoolslog.json");
    check(
        &page,
        "paulirish.com",
        &[
            (P::Reliable, 0, 0, &[]),
            (P::Fonts, 6, 77_068, &[]),
            (P::Ads, 4, 116_240, &[]),
            (P::ThirdParty, 6, 120_726, &[]),
            (P::FontsAds, 10, 193_308, &[]),
            (P::FontsThirdParty, 12, 197_794, &[]),
            (P::Essentialness, 10, 193_308, &[]),
        ],
    );
    assert_eq!(P::ThirdParty.plan(&page).unreliable, [1, 4, 17, 18, 19, 20].map(ObjectId).to_vec());
}

/// etat.lu: the page (www.etat.public.lu) loads its render-blocking require.js from
/// cdn.public.lu, the same registrable domain by the Public Suffix List (public.lu is not a
/// public suffix), so its first party is public.lu; its four fonts come from the CDN too. No
/// trackers, no third-party code.
#[test]
fn etat_lu_treats_its_cdn_as_its_own() {
    use ReliabilityPolicy as P;
    let page = load("etat.lu.har");
    assert_eq!(FirstParty::of(&page).sites().collect::<Vec<_>>(), vec!["public.lu"]);
    check(
        &page,
        "etat.lu",
        &[
            (P::Reliable, 0, 0, &[]),
            (P::Fonts, 4, 90_552, &[]),
            (P::Ads, 0, 0, &[]),
            (P::ThirdParty, 0, 0, &[]),
            (P::FontsAds, 4, 90_552, &[]),
            (P::FontsThirdParty, 4, 90_552, &[]),
            (P::Essentialness, 4, 90_552, &[]),
        ],
    );
}
