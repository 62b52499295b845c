//! What a person sees: QoE estimates from per-object delivery times.
//!
//! Input: a [`Page`] and, for each delivered object, when it was requested and when its last
//! byte arrived ([`Deliveries`]; times in ns from navigation start, the first request being
//! at or after 0). Objects missing from the map were never delivered (e.g. non-essential
//! objects lost on an unreliable path); they are listed in [`Qoe::undelivered`] and left out.
//! Like CATS §III-C and PriorityBucket §5.1, these are network-level lower bounds: no parsing,
//! layout, script or paint time is modelled (add [`crate::model::DiscoveryConfig`] delays in the
//! walk to approximate processing).
//!
//! Definitions (each `None` when the root document was not delivered):
//!
//! - **First contentful paint** (after CATS Table II note a, generalised): the completion of
//!   the root HTML and of every render-blocking resource discovered before first paint. Start
//!   with `t` = the root's completion; while some delivered render-blocking object was
//!   requested at or before `t` and completes after it, move `t` to its completion.
//! - **First render** (PriorityBucket §5.1, "determined by the last finished critical stream"):
//!   the last completion among HTML, CSS and JavaScript objects ("the critical streams (HTML,
//!   CSS and JavaScript)"), leaving out scripts from tracking domains, which no render waits
//!   for (the CATS page's 150 KiB analytics script would otherwise set its first render).
//! - **Largest contentful paint**: with no layout, the largest image by decoded bytes stands in
//!   for the largest element by area; images from tracking domains, images the browser fetched
//!   on its own (initiator `other`: favicons, a web-app manifest's icons and screenshots) and
//!   images under [`QoeConfig::lcp_min_image_bytes`] (icons, spacers) are not candidates. When the
//!   recording shows some candidates in the viewport, only those count: Chrome raises an
//!   image it lays out in the viewport to High priority, so a recorded High or VeryHigh image
//!   was visible (ferguson.com: the 31 KB High hero image painted its LCP, not the 68 KB Low
//!   CSS sprite). LCP is the later of
//!   that image's completion and FCP (nothing paints before first paint); with no candidate
//!   image the largest element is the text painted at FCP, so LCP = FCP. CATS Table II note c
//!   instead takes the largest image's completion alone (1018 ms for its baseline, before that
//!   baseline's FCP); that value is [`Qoe::largest_image_complete_ns`].
//! - **Time to interactive (proxy)** (CATS Table II note b, generalised): the later of FCP and
//!   the last completion among objects of CATS level 0-2 (critical HTML/CSS, CSS framework and
//!   fonts, application JS and data), leaving out what the browser fetched for itself
//!   (initiator `other`: a web-app manifest and its icons). No main-thread or quiet-window model.
//! - **Speed Index (proxy)**: `∫ (1 - VC(t)) dt` over the visual-completeness curve, where the
//!   page's visual content is the first paint (weighted by the decoded bytes of the HTML and
//!   render-blocking CSS that FCP waited for) plus each non-tracking image (weighted by its
//!   decoded bytes, painted at the later of its completion and FCP). With weights `w_i` painted
//!   at `t_i` this is `Σ w_i t_i / Σ w_i`.
//! - **Page load time** (PriorityBucket §5.1): the last completion of any delivered object.
//! - **Where a Chrome trace gives what Chrome observed** ([`lantern`]): LCP and Speed Index
//!   as Lantern defines them, replacing the stand-ins above.
//! - **CLS risk** (CATS §III-C, Table II note d): layout is stable when the last stylesheet
//!   completes (FCP if there is none); images (non-tracking) that complete more than
//!   [`QoeConfig::cls_grace_ns`] after that shift the layout when they render, as the paper
//!   argues for CATS (P1 at 282 ms, P3 at 815 ms: CLS > 0.1), while images that arrive before
//!   the layout is known do not (its baseline: CLS <= 0.1). Rating: `Good` (<= 0.1) if no
//!   image is late, else `Poor` (> 0.1).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{ContentType, DiscoveryConfig, ObjectId, Page, WebObject};

/// When one object was requested and fully delivered (ns from navigation start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Request sent.
    pub request_ns: u64,
    /// Last byte arrived.
    pub complete_ns: u64,
}

/// Per-object deliveries, keyed by object id (a BTreeMap: deterministic order).
pub type Deliveries = BTreeMap<ObjectId, Delivery>;

/// Thresholds of the estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QoeConfig {
    /// Images smaller than this (decoded) are not LCP candidates (icons, spacers, pixels).
    pub lcp_min_image_bytes: u64,
    /// An image completing within this time after layout stabilises does not count as a shift.
    pub cls_grace_ns: u64,
}

impl Default for QoeConfig {
    fn default() -> Self {
        QoeConfig { lcp_min_image_bytes: 10_000, cls_grace_ns: 0 }
    }
}

/// What stands in for the largest contentful element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LcpElement {
    /// The largest image (by decoded bytes).
    Image(ObjectId),
    /// Text painted at first contentful paint (no candidate image).
    Text,
    /// Lantern's LCP graph ([`lantern`]): what the recording had loaded by its observed LCP;
    /// the object of it that completed last.
    RecordedByLcp(ObjectId),
}

/// CLS rating, CATS Table II.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClsRating {
    /// CLS <= 0.1: no image renders after the layout is known.
    Good,
    /// CLS > 0.1: images render after the layout is known.
    Poor,
}

/// CLS-risk estimate (CATS §III-C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClsEstimate {
    /// When the layout is known: last stylesheet's completion (FCP without stylesheets).
    pub layout_stable_ns: u64,
    /// Last non-tracking image's completion, if any image was delivered.
    pub last_image_ns: Option<u64>,
    /// Images that complete after `layout_stable_ns + cls_grace_ns`.
    pub late_images: usize,
    /// `last_image_ns - layout_stable_ns`, 0 if not later.
    pub delta_ns: u64,
    /// Rating.
    pub rating: ClsRating,
}

/// The estimates (see the module docs for each definition).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Qoe {
    /// First contentful paint.
    pub first_contentful_paint_ns: Option<u64>,
    /// PriorityBucket's first render time.
    pub first_render_ns: Option<u64>,
    /// Largest contentful paint (never before FCP).
    pub largest_contentful_paint_ns: Option<u64>,
    /// What LCP used.
    pub lcp_element: Option<LcpElement>,
    /// Completion of the largest candidate image (CATS Table II note c).
    pub largest_image_complete_ns: Option<u64>,
    /// Time-to-interactive proxy.
    pub time_to_interactive_ns: Option<u64>,
    /// Speed Index proxy.
    pub speed_index_ns: Option<u64>,
    /// Page load time.
    pub page_load_ns: Option<u64>,
    /// CLS risk.
    pub cls: Option<ClsEstimate>,
    /// Objects with no delivery.
    pub undelivered: Vec<ObjectId>,
}

/// An image the page paints: not a tracker's, and not one the browser fetched on its own
/// (the recording's initiator `other`: a favicon, a web-app manifest's icons and screenshots,
/// which squoosh.app's log has at High priority and up to 72 KB), which no page element shows.
fn is_visual_image(o: &WebObject) -> bool {
    o.kind == ContentType::Image && !o.tracker && !browser_fetched(o)
}

/// An object the browser fetched on its own, for itself rather than for the page: the
/// recording's initiator `other` (a favicon, a web-app manifest and its icons and
/// screenshots) on anything but the root (the navigation's document, whose initiator is
/// `other` too, and the only object without a parent).
fn browser_fetched(o: &WebObject) -> bool {
    o.parent.is_some() && o.recorded_initiator == Some(crate::model::Initiator::Other)
}

/// Computes every estimate.
pub fn estimate(page: &Page, deliveries: &Deliveries, cfg: &QoeConfig) -> Qoe {
    let undelivered: Vec<ObjectId> = page.topological_order().filter(|id| !deliveries.contains_key(id)).collect();
    let delivered = || page.objects().iter().filter_map(|o| deliveries.get(&o.id).map(|d| (o, *d)));
    let Some(root) = deliveries.get(&page.root()) else {
        return Qoe {
            first_contentful_paint_ns: None,
            first_render_ns: None,
            largest_contentful_paint_ns: None,
            lcp_element: None,
            largest_image_complete_ns: None,
            time_to_interactive_ns: None,
            speed_index_ns: None,
            page_load_ns: delivered().map(|(_, d)| d.complete_ns).max(),
            cls: None,
            undelivered,
        };
    };

    // FCP: fixed point over render-blocking objects discovered before first paint, and every
    // render-blocking object of the root's parser chain whenever it was requested (a
    // processing delay may request it after the root has arrived; first paint waits for it
    // all the same). The parser chain: render-blocking objects whose parent is in it and
    // which the HTML parser requested: the recording says so (its initiator is `parser`), or,
    // when it does not say, it requested them while their parent was still arriving (a
    // render-blocking object requested only after its parent had arrived was inserted later,
    // by a script or a timer, and does not hold the first paint back). The recording's word
    // comes first: ferguson.com's head stylesheets were requested 33 ms after the HTML had
    // arrived (in one 4 ms burst) and first paint waited for them.
    let mut chain = vec![false; page.len()];
    for id in page.topological_order() {
        let o = page.get(id);
        chain[id.index()] = match o.parent {
            None => true,
            Some(p) => {
                let parent = page.get(p);
                let parent_end = parent.recorded_start_ns.saturating_add(parent.recorded_duration_ns);
                let by_parser = match o.recorded_initiator {
                    Some(i) => i == crate::model::Initiator::Parser,
                    None => o.recorded_start_ns <= parent_end,
                };
                o.blocks_first_paint() && chain[p.index()] && by_parser
            }
        };
    }
    let mut fcp = root.complete_ns;
    loop {
        let next = delivered()
            .filter(|(o, d)| o.blocks_first_paint() && (d.request_ns <= fcp || chain[o.id.index()]))
            .map(|(_, d)| d.complete_ns)
            .fold(fcp, u64::max);
        if next == fcp {
            break;
        }
        fcp = next;
    }

    let first_render = delivered()
        .filter(|(o, _)| !o.tracker && matches!(o.kind, ContentType::Html | ContentType::Css | ContentType::Js))
        .map(|(_, d)| d.complete_ns)
        .max();

    // LCP: largest candidate image by decoded bytes (ties: lower id), among the images the
    // recording shows in the viewport if it shows any.
    let candidate = |o: &WebObject| is_visual_image(o) && o.body_bytes >= cfg.lcp_min_image_bytes;
    let in_viewport = |o: &WebObject| o.browser_priority.is_some_and(|p| p >= crate::BrowserPriority::High);
    let any_in_viewport = page.objects().iter().any(|o| candidate(o) && in_viewport(o));
    let largest = delivered().filter(|(o, _)| candidate(o) && (!any_in_viewport || in_viewport(o))).fold(
        None::<(&WebObject, Delivery)>,
        |best, (o, d)| match best {
            Some((b, _)) if b.body_bytes >= o.body_bytes => best,
            _ => Some((o, d)),
        },
    );
    let (lcp, lcp_element, largest_image) = match largest {
        Some((o, d)) => (d.complete_ns.max(fcp), LcpElement::Image(o.id), Some(d.complete_ns)),
        None => (fcp, LcpElement::Text, None),
    };

    let tti = delivered()
        .filter(|(o, _)| o.cats_level <= 2 && !browser_fetched(o))
        .map(|(_, d)| d.complete_ns)
        .fold(fcp, u64::max);

    // Speed Index: weighted mean paint time.
    let first_paint_weight: u128 = delivered()
        .filter(|(o, d)| {
            o.blocks_first_paint() && matches!(o.kind, ContentType::Html | ContentType::Css) && d.complete_ns <= fcp
        })
        .map(|(o, _)| u128::from(o.body_bytes.max(1)))
        .sum();
    let mut weighted: u128 = first_paint_weight.saturating_mul(u128::from(fcp));
    let mut total: u128 = first_paint_weight;
    for (o, d) in delivered().filter(|(o, _)| is_visual_image(o)) {
        let w = u128::from(o.body_bytes.max(1));
        weighted = weighted.saturating_add(w * u128::from(d.complete_ns.max(fcp)));
        total = total.saturating_add(w);
    }
    let speed_index = weighted.checked_div(total).map_or(fcp, |si| u64::try_from(si).unwrap_or(u64::MAX));

    let page_load = delivered().map(|(_, d)| d.complete_ns).max();

    let layout_stable =
        delivered().filter(|(o, _)| o.kind == ContentType::Css).map(|(_, d)| d.complete_ns).max().unwrap_or(fcp);
    let images: Vec<u64> = delivered().filter(|(o, _)| is_visual_image(o)).map(|(_, d)| d.complete_ns).collect();
    let late = images.iter().filter(|&&t| t > layout_stable.saturating_add(cfg.cls_grace_ns)).count();
    let last_image = images.iter().copied().max();
    let cls = ClsEstimate {
        layout_stable_ns: layout_stable,
        last_image_ns: last_image,
        late_images: late,
        delta_ns: last_image.map(|t| t.saturating_sub(layout_stable)).unwrap_or(0),
        rating: if late == 0 { ClsRating::Good } else { ClsRating::Poor },
    };

    Qoe {
        first_contentful_paint_ns: Some(fcp),
        first_render_ns: first_render,
        largest_contentful_paint_ns: Some(lcp),
        lcp_element: Some(lcp_element),
        largest_image_complete_ns: largest_image,
        time_to_interactive_ns: Some(tti),
        speed_index_ns: Some(speed_index),
        page_load_ns: page_load,
        cls: Some(cls),
        undelivered,
    }
}

/// Lantern's FCP, LCP and Speed Index (Lighthouse 13, `lantern/metrics/FirstContentfulPaint`,
/// `LargestContentfulPaint` and `SpeedIndex`) for a simulated load whose recording has a Chrome
/// trace, reduced to one simulation of the whole page (Lantern simulates an optimistic and a
/// pessimistic subgraph each; ours keeps every request's contention, so schedulers still
/// matter):
///
/// - **FCP**: the trace's observed FCP (unthrottled) is a cutoff: the objects the recording had
///   finished by it with a render-blocking priority (VeryHigh, or a High script or document:
///   Lantern's `hasRenderBlockingPriority`) are what the first paint needed. The pessimistic
///   estimate is the last simulated completion of the root and of those (the root and scripts
///   once processed by the CPU model, other objects once arrived); the optimistic one leaves
///   out objects a script requested; FCP is their mean, plus the recording's *render delay*: the
///   time from the last of those objects to arrive (or the root) to the observed FCP, as
///   recorded: style, layout and paint work and the wait for the next frame, which the
///   simulated main thread does not hold (Lantern holds the first layout and paint tasks; ours,
///   queued behind every earlier task, overshot: lr +96%). It is not scaled by the CPU
///   slowdown: scaled ×4 it measured 22% median Speed Index error against Lantern, and the
///   trace does not tell the frame wait from the work. (The cutoff counts from the
///   navigation's start, the recorded times from the root's request, after any redirects.)
///   Lantern also drops scripts the recording had not run by the cutoff; we do not have
///   per-task recorded times here and keep them.
/// - **LCP**: the trace's observed LCP (the main frame's last `largestContentfulPaint::Candidate`,
///   unthrottled) is a cutoff: the objects the recording had finished by it, low-priority
///   images (browser priority Low or VeryLow: below the fold) left out, are what the largest
///   paint needed; LCP is the last of their simulated completions (counted as for FCP), never
///   before FCP. Lantern takes the mean of an optimistic graph (those objects)
///   and a pessimistic one (also the low-priority images, and every layout task before the
///   cutoff), each estimated by the same "last non-low-priority-image node"; in one simulation
///   of the whole page the two coincide but for the layout tasks, which we leave out.
/// - **Speed Index**: `max(FCP, a · SI_observed + b · SI_layout)`, where `SI_observed` is the
///   trace's screenshots' Speed Index ([`crate::speedline`]), `SI_layout` the mean end time of the
///   simulated main-thread tasks that performed layout, each weighted by `max(log2(length in ms),
///   0)` and taken no earlier than FCP (FCP if there is none), and `a = 0.5 + 0.9 m`,
///   `b = 0.5 − 0.1 m` with `m = max((RTT_ms − 30) / 120, 0)` (1.4 and 0.4 at the 150 ms of
///   mobileSlow4G, 0.5 each at 30 ms): Lantern's `getScaledCoefficients`, RTT being the path's
///   base round trip. Without screenshots the stand-in above stays.
pub mod lantern {
    use super::{Deliveries, LcpElement, Qoe};
    use crate::cputrace::Observed;
    use crate::model::{BrowserPriority, ContentType, Page};

    /// What the trace gives and the simulation ran.
    #[derive(Clone, Copy, Debug)]
    pub struct TraceMetrics<'a> {
        /// What Chrome observed while recording.
        pub observed: Observed,
        /// When each object's last byte arrived (page order), before its CPU processing.
        pub arrived_ns: &'a [Option<u64>],
        /// The path's base round-trip time (ns).
        pub rtt_ns: u64,
        /// The simulated main-thread tasks: (start ns, length ns, performed layout).
        pub tasks: &'a [(u64, u64, bool)],
        /// Each object's first main-thread task (page order): when the recording started it
        /// (ns from the trace's time origin) and when it ended in the simulation (ns);
        /// `None` for an object the trace gave no task.
        pub first_tasks: &'a [Option<(u64, u64)>],
    }

    /// Lantern's `getScaledCoefficients` for Speed Index at `rtt_ns`: (observed, layout).
    pub fn speed_index_coefficients(rtt_ns: u64) -> (f64, f64) {
        let m = ((rtt_ns as f64 / 1e6 - 30.0) / 120.0).max(0.0);
        (0.5 + (1.4 - 0.5) * m, 0.5 + (0.4 - 0.5) * m)
    }

    /// Lantern's layout-based Speed Index (ns) of simulated tasks, never before `fcp_ns`.
    pub fn layout_speed_index_ns(tasks: &[(u64, u64, bool)], fcp_ns: u64) -> u64 {
        let (mut weighted, mut total) = (0.0f64, 0.0f64);
        for &(start, len, layout) in tasks {
            if !layout {
                continue;
            }
            let w = (len as f64 / 1e6).log2().max(0.0);
            weighted += w * start.saturating_add(len).max(fcp_ns) as f64;
            total += w;
        }
        if total > 0.0 {
            (weighted / total).round() as u64
        } else {
            fcp_ns
        }
    }

    /// Lantern's `hasRenderBlockingPriority`.
    fn render_blocking_priority(o: &crate::model::WebObject) -> bool {
        match o.browser_priority {
            Some(BrowserPriority::VeryHigh) => true,
            Some(BrowserPriority::High) => matches!(o.kind, ContentType::Js | ContentType::Html),
            _ => false,
        }
    }

    /// When the recording finished `o`, from the navigation's start (the trace's marks count
    /// from there, the recorded times from the root's request, after any redirect hops).
    fn recorded_end_ns(page: &Page, o: &crate::model::WebObject) -> u64 {
        o.recorded_start_ns.saturating_add(o.recorded_duration_ns).saturating_add(page.recorded_redirect_ns())
    }

    /// The last simulated completion among the root and the objects `keep` selects that the
    /// recording had finished by `cutoff_ns`. The root document and scripts count once their
    /// first main-thread task has run (Lantern's `getRenderBlockingNodeData`: a paint's graph
    /// holds the first HTML parse and, of each script it keeps, the task of its earliest
    /// evaluation, not the timers and handlers the script ran later), other objects once
    /// arrived (their main-thread tasks, e.g. a long task the trace could only attribute to
    /// the font that had just arrived, are not in those graphs). A script whose first task
    /// the recording started after the cutoff did not block the paint and is left out, as
    /// Lantern leaves it out ("definitely not render-blocking"); an object the trace gave no
    /// task counts on arrival.
    fn last_by(
        page: &Page,
        deliveries: &Deliveries,
        t: &TraceMetrics<'_>,
        cutoff_ns: u64,
        keep: impl Fn(&crate::model::WebObject) -> bool,
    ) -> Option<(u64, crate::model::ObjectId)> {
        page.objects()
            .iter()
            .filter(|o| o.id == page.root() || (recorded_end_ns(page, o) <= cutoff_ns && keep(o)))
            .filter_map(|o| {
                let d = deliveries.get(&o.id)?;
                let arrived = t.arrived_ns.get(o.id.index()).copied().flatten().unwrap_or(d.complete_ns);
                let processed = o.id == page.root() || o.kind == ContentType::Js;
                let done = match t.first_tasks.get(o.id.index()).copied().flatten() {
                    Some((recorded, end)) if processed && recorded <= cutoff_ns => end,
                    Some(_) if processed && o.id != page.root() => return None,
                    _ => arrived,
                };
                Some((done, o.id))
            })
            .max_by_key(|&(c, id)| (c, std::cmp::Reverse(id)))
    }

    /// Replaces `q`'s FCP, LCP and Speed Index by Lantern's where the trace allows (see the
    /// module); TTI stays no earlier than FCP.
    pub fn apply(q: &mut Qoe, page: &Page, deliveries: &Deliveries, t: &TraceMetrics<'_>) {
        if let Some(cutoff) = t.observed.fcp_ns {
            let by_script = |o: &crate::model::WebObject| o.parent.is_some_and(|p| page.get(p).kind == ContentType::Js);
            let pess = last_by(page, deliveries, t, cutoff, render_blocking_priority);
            let opt = last_by(page, deliveries, t, cutoff, |o| render_blocking_priority(o) && !by_script(o));
            if let (Some((p, _)), Some((o, _))) = (pess, opt) {
                // The recording's time from the paint's last needed byte to the paint.
                let last_needed = page
                    .objects()
                    .iter()
                    .filter(|x| x.id == page.root() || render_blocking_priority(x))
                    .map(|x| recorded_end_ns(page, x))
                    .filter(|&end| end <= cutoff)
                    .max()
                    .unwrap_or(0);
                let render = cutoff.saturating_sub(last_needed);
                q.first_contentful_paint_ns = Some((p / 2 + o / 2 + (p % 2 + o % 2) / 2).saturating_add(render));
            }
        }
        let Some(fcp) = q.first_contentful_paint_ns else { return };
        // Nothing paints before the first paint, and TTI is not before it either (the
        // stand-ins below hold when the trace gives no LCP or screenshots).
        q.time_to_interactive_ns = q.time_to_interactive_ns.map(|t| t.max(fcp));
        q.largest_contentful_paint_ns = q.largest_contentful_paint_ns.map(|t| t.max(fcp));
        q.speed_index_ns = q.speed_index_ns.map(|t| t.max(fcp));
        if let Some(cutoff) = t.observed.lcp_ns {
            let low_image = |o: &crate::model::WebObject| {
                o.kind == ContentType::Image
                    && matches!(o.browser_priority, Some(BrowserPriority::Low | BrowserPriority::VeryLow))
            };
            if let Some((complete, id)) = last_by(page, deliveries, t, cutoff, |o| !low_image(o)) {
                q.largest_contentful_paint_ns = Some(complete.max(fcp));
                q.lcp_element = Some(LcpElement::RecordedByLcp(id));
            }
        }
        if let Some(observed_si) = t.observed.speed_index_ns {
            let (a, b) = speed_index_coefficients(t.rtt_ns);
            let layout = layout_speed_index_ns(t.tasks, fcp);
            let si = a * observed_si as f64 + b * layout as f64;
            q.speed_index_ns = Some((si.round().max(0.0) as u64).max(fcp));
        }
    }
}

/// A reference walk of the discovery graph (see [`crate::model`]): the root is requested at
/// 0, each object takes `fetch_ns(object)` from request to completion, and children are
/// requested at their parent's completion plus the discovery delay (with recorded gaps, its
/// processing gap; the walk does not wait for the gates). With no contention this is the
/// infinite-bandwidth bound a simulator's page load should never beat.
pub fn ideal_deliveries(page: &Page, discovery: &DiscoveryConfig, fetch_ns: impl Fn(&WebObject) -> u64) -> Deliveries {
    let mut out = Deliveries::new();
    let gates = if discovery.recorded_gaps { page.recorded_gates() } else { Vec::new() };
    for o in page.objects() {
        let request_ns = match o.parent {
            None => 0,
            Some(p) => {
                let pd = out[&p];
                let processing = gates.get(o.id.index()).map_or(0, |g| g.processing_ns);
                pd.complete_ns.saturating_add(discovery.child_delay_ns(page.get(p), processing))
            }
        };
        out.insert(o.id, Delivery { request_ns, complete_ns: request_ns.saturating_add(fetch_ns(o)) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    const MS: u64 = 1_000_000;

    /// The CATS page with every group requested at 0 and completing at the given times.
    fn cats_at(times_ms: [u64; 5]) -> (Page, Deliveries) {
        let page = builtin::cats_page();
        let d = page
            .topological_order()
            .map(|id| (id, Delivery { request_ns: 0, complete_ns: times_ms[id.index()] * MS }))
            .collect();
        (page, d)
    }

    #[test]
    fn cats_table_two_cats_column() {
        // CATS Table I, CATS column: P0 130, P1 282, P2 523, P3 815, P4 1327 ms.
        let (page, d) = cats_at([130, 282, 523, 815, 1327]);
        let q = estimate(&page, &d, &QoeConfig::default());
        assert_eq!(q.first_contentful_paint_ns, Some(282 * MS)); // Table II: 282
        assert_eq!(q.time_to_interactive_ns, Some(523 * MS)); // Table II: 523
        assert_eq!(q.largest_contentful_paint_ns, Some(815 * MS)); // Table II: 815
        assert_eq!(q.largest_image_complete_ns, Some(815 * MS));
        assert_eq!(q.lcp_element, Some(LcpElement::Image(crate::model::ObjectId(3))));
        assert_eq!(q.first_render_ns, Some(523 * MS)); // HTML, CSS and JS: P0-P2
        assert_eq!(q.page_load_ns, Some(1327 * MS));
        // Speed Index: first paint weight 8 + 25 KiB at 282, image 60 KiB at 815:
        // (33 * 282 + 60 * 815) / 93 = 625.87... ms.
        assert_eq!(q.speed_index_ns, Some(((33u128 * 282 + 60 * 815) * MS as u128 / 93) as u64));
        let cls = q.cls.unwrap();
        assert_eq!(
            (cls.layout_stable_ns, cls.delta_ns, cls.late_images, cls.rating),
            (282 * MS, 533 * MS, 1, ClsRating::Poor)
        );
        assert!(q.undelivered.is_empty());
    }

    #[test]
    fn cats_table_two_baseline_column() {
        // Baseline: P0 1327, P1 1293, P2 1187, P3 1018, P4 764 ms.
        let (page, d) = cats_at([1327, 1293, 1187, 1018, 764]);
        let q = estimate(&page, &d, &QoeConfig::default());
        assert_eq!(q.first_contentful_paint_ns, Some(1327 * MS)); // Table II: 1327
        assert_eq!(q.time_to_interactive_ns, Some(1327 * MS)); // Table II: 1327
        assert_eq!(q.largest_image_complete_ns, Some(1018 * MS)); // Table II LCP: 1018
        assert_eq!(q.largest_contentful_paint_ns, Some(1327 * MS)); // never before FCP
        assert_eq!(q.speed_index_ns, Some(1327 * MS));
        assert_eq!(q.page_load_ns, Some(1327 * MS));
        assert_eq!(q.cls.unwrap().rating, ClsRating::Good); // Table II: <= 0.1
    }

    #[test]
    fn fcp_only_waits_for_blocking_resources_discovered_before_paint() {
        // Root at 100; blocking CSS requested at 100, done 150; a second blocking CSS
        // requested at 140 (before paint), done 300; a non-blocking CSS (inserted by a
        // script) requested at 400 does not delay FCP.
        use crate::builtin::object;
        use crate::model::RenderBlocking;
        let mut objs = vec![object(0, None, "https://a.com/", ContentType::Html, 1000)];
        for (i, url) in ["https://a.com/1.css", "https://a.com/2.css", "https://a.com/3.css"].iter().enumerate() {
            let mut o = object(i as u32 + 1, Some(0), url, ContentType::Css, 1000);
            o.render_blocking = Some(if i < 2 { RenderBlocking::Blocking } else { RenderBlocking::NonBlocking });
            objs.push(o);
        }
        let page = Page::new("t", objs).unwrap();
        let d: Deliveries = [(0, 0, 100), (1, 100, 150), (2, 140, 300), (3, 400, 500)]
            .into_iter()
            .map(|(i, r, c)| (ObjectId(i), Delivery { request_ns: r * MS, complete_ns: c * MS }))
            .collect();
        let q = estimate(&page, &d, &QoeConfig::default());
        assert_eq!(q.first_contentful_paint_ns, Some(300 * MS));
        assert_eq!(q.lcp_element, Some(LcpElement::Text));
        assert_eq!(q.largest_contentful_paint_ns, Some(300 * MS));
        // Layout stable at the last stylesheet (500); no images: good.
        assert_eq!(q.cls.unwrap().layout_stable_ns, 500 * MS);
        assert_eq!(q.cls.unwrap().rating, ClsRating::Good);
    }

    #[test]
    fn render_blocking_children_of_the_root_delay_fcp_when_requested_late() {
        // A processing delay (or a recorded gap) requests the root's blocking CSS at 400, after
        // the root arrived at 100: first paint still waits for it (500), and for its own
        // blocking child (an @import, requested at 500, done 650). A blocking script that a
        // non-blocking script inserted, requested at 700, does not (it was not discovered by
        // the parser of the document being painted).
        use crate::builtin::object;
        use crate::model::RenderBlocking;
        let blocking = |mut o: WebObject| {
            o.render_blocking = Some(RenderBlocking::Blocking);
            o
        };
        let objs = vec![
            object(0, None, "https://a.com/", ContentType::Html, 1000),
            blocking(object(1, Some(0), "https://a.com/1.css", ContentType::Css, 1000)),
            blocking(object(2, Some(1), "https://a.com/import.css", ContentType::Css, 1000)),
            object(3, Some(0), "https://a.com/async.js", ContentType::Js, 1000),
            blocking(object(4, Some(3), "https://a.com/inserted.js", ContentType::Js, 1000)),
        ];
        let page = Page::new("t", objs).unwrap();
        let d: Deliveries = [(0, 0, 100), (1, 400, 500), (2, 500, 650), (3, 100, 200), (4, 700, 800)]
            .into_iter()
            .map(|(i, r, c)| (ObjectId(i), Delivery { request_ns: r * MS, complete_ns: c * MS }))
            .collect();
        let q = estimate(&page, &d, &QoeConfig::default());
        assert_eq!(q.first_contentful_paint_ns, Some(650 * MS));
    }

    #[test]
    fn recorded_parser_initiator_keeps_a_late_stylesheet_in_the_first_paint() {
        // The recording: root 0-100 ms, its blocking stylesheet requested at 130 (after the
        // root had arrived, the parser busy). Simulated: root done at 100, the stylesheet
        // requested at 120, done at 400.
        use crate::builtin::object;
        use crate::model::{Initiator, RenderBlocking};
        let fcp = |initiator: Option<Initiator>| {
            let mut root = object(0, None, "https://a.com/", ContentType::Html, 1000);
            root.recorded_duration_ns = 100 * MS;
            let mut css = object(1, Some(0), "https://a.com/1.css", ContentType::Css, 1000);
            css.render_blocking = Some(RenderBlocking::Blocking);
            css.recorded_start_ns = 130 * MS;
            css.recorded_initiator = initiator;
            let page = Page::new("t", vec![root, css]).unwrap();
            let d: Deliveries = [(0, 0, 100), (1, 120, 400)]
                .into_iter()
                .map(|(i, r, c)| (ObjectId(i), Delivery { request_ns: r * MS, complete_ns: c * MS }))
                .collect();
            estimate(&page, &d, &QoeConfig::default()).first_contentful_paint_ns
        };
        // The recording says the parser requested it: first paint waits for it.
        assert_eq!(fcp(Some(Initiator::Parser)), Some(400 * MS));
        // It says a script did, or says nothing and requested it after the root: it does not.
        assert_eq!(fcp(Some(Initiator::Script)), Some(100 * MS));
        assert_eq!(fcp(None), Some(100 * MS));
    }

    #[test]
    fn lcp_candidates_are_the_images_recorded_in_the_viewport() {
        // A 60 KB Low image (a sprite, below the fold) done at 300 and a 30 KB High one (laid
        // out in the viewport) done at 500: the High one is the LCP; without any High image,
        // the largest.
        use crate::builtin::object;
        use crate::BrowserPriority as P;
        let lcp_with = |hero: P, hero_initiator: Option<crate::model::Initiator>| {
            let mut sprite = object(1, Some(0), "https://a.com/sprite.png", ContentType::Image, 60_000);
            sprite.browser_priority = Some(P::Low);
            let mut photo = object(2, Some(0), "https://a.com/hero.jpg", ContentType::Image, 30_000);
            photo.browser_priority = Some(hero);
            photo.recorded_initiator = hero_initiator;
            let page = Page::new("t", vec![object(0, None, "https://a.com/", ContentType::Html, 1000), sprite, photo])
                .unwrap();
            let d: Deliveries = [(0, 0, 100), (1, 100, 300), (2, 100, 500)]
                .into_iter()
                .map(|(i, r, c)| (ObjectId(i), Delivery { request_ns: r * MS, complete_ns: c * MS }))
                .collect();
            let q = estimate(&page, &d, &QoeConfig::default());
            (q.lcp_element, q.largest_contentful_paint_ns)
        };
        let lcp = |hero: P| lcp_with(hero, None);
        assert_eq!(lcp(P::High), (Some(LcpElement::Image(ObjectId(2))), Some(500 * MS)));
        assert_eq!(lcp(P::Low), (Some(LcpElement::Image(ObjectId(1))), Some(300 * MS)));
        // The same High image fetched by the browser on its own (initiator `other`: a
        // manifest's screenshot) is no page content: the Low sprite is the LCP again; found by
        // the parser, it is the candidate.
        use crate::model::Initiator;
        assert_eq!(lcp_with(P::High, Some(Initiator::Other)), (Some(LcpElement::Image(ObjectId(1))), Some(300 * MS)));
        assert_eq!(lcp_with(P::High, Some(Initiator::Parser)), (Some(LcpElement::Image(ObjectId(2))), Some(500 * MS)));
    }

    /// TTI waits for CATS level 0-2 objects, but not for one the browser fetched for itself
    /// (a web-app manifest: initiator `other`), whatever its level.
    #[test]
    fn tti_does_not_wait_for_what_the_browser_fetched_for_itself() {
        use crate::builtin::object;
        use crate::model::Initiator;
        let tti = |initiator: Initiator| {
            let script = object(1, Some(0), "https://a.com/app.js", ContentType::Js, 10_000);
            let mut manifest = object(2, Some(0), "https://a.com/manifest.json", ContentType::Json, 800);
            manifest.recorded_initiator = Some(initiator);
            assert!(script.cats_level <= 2 && manifest.cats_level <= 2);
            let page =
                Page::new("t", vec![object(0, None, "https://a.com/", ContentType::Html, 1000), script, manifest])
                    .unwrap();
            let d: Deliveries = [(0, 0, 100), (1, 100, 300), (2, 100, 900)]
                .into_iter()
                .map(|(i, r, c)| (ObjectId(i), Delivery { request_ns: r * MS, complete_ns: c * MS }))
                .collect();
            estimate(&page, &d, &QoeConfig::default()).time_to_interactive_ns
        };
        assert_eq!(tti(Initiator::Other), Some(300 * MS));
        assert_eq!(tti(Initiator::Parser), Some(900 * MS));
    }

    #[test]
    fn undelivered_objects_are_listed_and_left_out() {
        let (page, mut d) = cats_at([130, 282, 523, 815, 1327]);
        d.remove(&ObjectId(4));
        let q = estimate(&page, &d, &QoeConfig::default());
        assert_eq!(q.undelivered, vec![ObjectId(4)]);
        assert_eq!(q.page_load_ns, Some(815 * MS));
        d.remove(&ObjectId(0));
        let q = estimate(&page, &d, &QoeConfig::default());
        assert_eq!(q.first_contentful_paint_ns, None);
    }

    #[test]
    fn ideal_walk_follows_parents_and_delays() {
        let page = builtin::youtube_page();
        let cfg = DiscoveryConfig { html_ns: 5 * MS, ..DiscoveryConfig::default() };
        let d = ideal_deliveries(&page, &cfg, |_| 10 * MS);
        assert_eq!(d[&page.root()], Delivery { request_ns: 0, complete_ns: 10 * MS });
        for o in page.objects().iter().skip(1) {
            let p = d[&o.parent.unwrap()];
            assert!(d[&o.id].request_ns >= p.complete_ns);
        }
        let q = estimate(&page, &d, &QoeConfig::default());
        // Every object is a child of the root: requested at 15 ms, done at 25 ms.
        assert_eq!(q.page_load_ns, Some(25 * MS));
        assert_eq!(q.first_render_ns, Some(25 * MS));
    }

    /// Lantern's definitions on a hand-built load: root (HTML), a stylesheet and a font that
    /// the recording finished before its FCP (100 ms), a script finished after its LCP
    /// (300 ms), a High and a Low image finished before LCP, a stylesheet the script
    /// inserted, finished before FCP, and two scripts finished before FCP: one the recording
    /// first evaluated before FCP (later tasks of it ran long after), one first evaluated
    /// between FCP and LCP.
    #[test]
    fn lantern_cutoffs_and_speed_index() {
        use crate::builtin::object;
        use crate::cputrace::Observed;
        use crate::model::BrowserPriority::{self, High, Low, VeryHigh};
        let spec: [(Option<u32>, ContentType, BrowserPriority, u64); 9] = [
            (None, ContentType::Html, VeryHigh, 50),
            (Some(0), ContentType::Css, VeryHigh, 80),
            (Some(1), ContentType::Font, VeryHigh, 100),
            (Some(0), ContentType::Js, High, 400),
            (Some(0), ContentType::Image, High, 250),
            (Some(0), ContentType::Image, Low, 200),
            (Some(3), ContentType::Css, VeryHigh, 90),
            (Some(0), ContentType::Js, High, 60),
            (Some(0), ContentType::Js, High, 70),
        ];
        let objects = spec
            .iter()
            .enumerate()
            .map(|(i, &(parent, kind, prio, end_ms))| {
                let mut o = object(i as u32, parent, &format!("https://a.test/{i}"), kind, 20_000);
                o.browser_priority = Some(prio);
                o.recorded_duration_ns = end_ms * MS;
                o
            })
            .collect();
        let page = Page::new("p", objects).unwrap();
        // Simulated: processed (deliveries) and arrived times, ms.
        let done_ms = [1000, 1500, 2600, 5000, 3000, 4000, 2800, 6000, 5500];
        let arrived_ms = [900, 1500, 2400, 4800, 3000, 4000, 2800, 2000, 3400];
        // First tasks: (recorded start, simulated end), ms.
        let first_ms =
            [Some((60, 1000)), None, None, Some((500, 4900)), None, None, None, Some((70, 2300)), Some((150, 3500))];
        let first_tasks: Vec<Option<(u64, u64)>> = first_ms.iter().map(|f| f.map(|(r, e)| (r * MS, e * MS))).collect();
        let d: Deliveries =
            (0..9).map(|k| (ObjectId(k as u32), Delivery { request_ns: 0, complete_ns: done_ms[k] * MS })).collect();
        let arrived: Vec<Option<u64>> = arrived_ms.iter().map(|&a| Some(a * MS)).collect();
        let mut q = estimate(&page, &d, &QoeConfig::default());
        let tasks = [(1000 * MS, 8 * MS, true), (2000 * MS, 2 * MS, false), (3000 * MS, 32 * MS, true)];
        let t = lantern::TraceMetrics {
            observed: Observed {
                fcp_ns: Some(100 * MS),
                lcp_ns: Some(300 * MS),
                speed_index_ns: Some(1100 * MS),
                ..Observed::default()
            },
            arrived_ns: &arrived,
            rtt_ns: 150 * MS,
            tasks: &tasks,
            first_tasks: &first_tasks,
        };
        lantern::apply(&mut q, &page, &d, &t);
        // FCP: pessimistic = the script-inserted stylesheet at 2800; optimistic leaves it out
        // (its parent 3 is a script): the font, arrived at 2400 (fonts count once arrived;
        // its 2600 includes CPU). Mean 2600. Script 7 counts at the end of its first task
        // (2300), not of all its tasks (6000); script 8, first evaluated at 150 ms, after the
        // paint, is left out (its first task ends at 3500).
        assert_eq!(q.first_contentful_paint_ns, Some(2600 * MS));
        // LCP: the High image (3000) and script 8's first task (3500, started by the LCP at
        // 300 ms) count; the Low image (4000) and script 3 (ended after the cutoff) do not.
        assert_eq!(q.largest_contentful_paint_ns, Some(3500 * MS));
        assert_eq!(q.lcp_element, Some(LcpElement::RecordedByLcp(ObjectId(8))));
        // SI at 150 ms: 1.4 x 1100 + 0.4 x layout SI, never before FCP; layout SI weighs the 8 ms task
        // (log2 8 = 3) ending at 1008 -> max(1008, FCP 2600) = 2600, and the 32 ms one (5)
        // ending at 3032: (3 x 2600 + 5 x 3032) / 8 = 2870 -> 1540 + 1148 = 2688.
        assert_eq!(lantern::layout_speed_index_ns(&tasks, 2600 * MS), 2870 * MS);
        assert_eq!(q.speed_index_ns, Some(2688 * MS));
        // At 30 ms both weigh 0.5; at 90 ms halfway between.
        assert_eq!(lantern::speed_index_coefficients(30 * MS), (0.5, 0.5));
        let (a, b) = lantern::speed_index_coefficients(90 * MS);
        assert!((a - 0.95).abs() < 1e-12 && (b - 0.45).abs() < 1e-12);
        // TTI is never before FCP.
        assert!(q.time_to_interactive_ns.unwrap() >= 2600 * MS);
        // Render delay: had the recording painted at 130 ms, 30 ms after the font (the last
        // render-blocking object it had, at 100 ms), that time is added as recorded.
        let mut q2 = estimate(&page, &d, &QoeConfig::default());
        let later = lantern::TraceMetrics { observed: Observed { fcp_ns: Some(130 * MS), ..t.observed }, ..t };
        lantern::apply(&mut q2, &page, &d, &later);
        assert_eq!(q2.first_contentful_paint_ns, Some(2630 * MS));
    }
}
