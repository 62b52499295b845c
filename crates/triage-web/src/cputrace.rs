//! Main-thread CPU time from a Chrome trace, per page object (issue 9, "No CPU"): what Lantern
//! builds its CPU nodes from (Lighthouse's `PageDependencyGraph`), reduced to what our page
//! client needs: for each object, the top-level main-thread tasks that processed it, in
//! recorded order, as durations.
//!
//! - The main thread is the `CrRendererMain` thread that ran the most task time (the page's
//!   renderer; out-of-process iframes run on others).
//! - Times are taken from the main frame's `navigationStart` (the one whose
//!   `documentLoaderURL` is the root document; Lighthouse's time origin), or, in a trace
//!   without one, from the root document's `ResourceSendRequest`. The root's recorded request
//!   is within a few milliseconds of `navigationStart` (the browser sends it), while the
//!   renderer's `ResourceSendRequest` for it can come a second later.
//! - A top-level task is a complete (`ph = "X"`) `RunTask` event of that thread that starts
//!   once the root document's response has begun to arrive in the recording (earlier ones
//!   belong to the page before, or to the navigation itself: intercom-widget's renderer ran
//!   1.2 s of them before its document came). It *performed layout*
//!   when a `Layout` event runs inside it (Lantern's `didPerformLayout`).
//! - A task belongs to the page object whose URL the first URL-bearing event inside it names:
//!   `ParseHTML` (`beginData.url`), `EvaluateScript`, `v8.compile`, `FunctionCall`,
//!   `XHRReadyStateChange`, `TimerFire`... (`data.url`), `ParseAuthorStyleSheet`
//!   (`data.styleSheetUrl`). A task naming no object of the page (layout, style, paint, GC,
//!   timers without a URL) belongs to the object whose recorded response ended last before
//!   the task started (Lantern makes a CPU node depend on the network nodes finished before
//!   it); such tasks shorter than 10 ms are left out, as Lantern prunes insignificant CPU
//!   nodes (`SIGNIFICANT_DUR_THRESHOLD_MS`), and counted.
//! - What Chrome observed while recording ([`Observed`]): the main frame's
//!   `firstContentfulPaint`, its last `largestContentfulPaint::Candidate`, and the Speed
//!   Index of the trace's screenshots ([`crate::speedline`]), as Lighthouse reads them; Lantern
//!   cuts its LCP graph at the observed LCP and blends the observed Speed Index into its own
//!   ([`crate::qoe::lantern`]).

use serde_json::Value;

use crate::model::Page;

/// Lantern's threshold for a CPU task that does not process a page object (10 ms).
pub const SIGNIFICANT_TASK_NS: u64 = 10_000_000;

/// One top-level main-thread task, as recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTask {
    /// Its duration (ns).
    pub dur_ns: u64,
    /// A `Layout` event ran inside it.
    pub layout: bool,
    /// When it started in the recording (ns from the trace's time origin, as
    /// [`Observed`]'s marks): Lantern keeps a script in a paint's graph only when its first
    /// evaluation started by the paint ([`crate::qoe::lantern`]).
    pub recorded_start_ns: u64,
}

/// What Chrome measured while recording (ns from the trace's time origin); `None` when the
/// trace does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// The main frame's first contentful paint.
    pub fcp_ns: Option<u64>,
    /// The main frame's last largest-contentful-paint candidate.
    pub lcp_ns: Option<u64>,
    /// Speed Index of the trace's screenshots ([`crate::speedline`]).
    pub speed_index_ns: Option<u64>,
    /// Screenshots in the trace.
    pub screenshots: usize,
    /// Screenshots that could not be decoded (left out of the Speed Index).
    pub bad_screenshots: usize,
}

/// Main-thread tasks per object, from a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTasks {
    /// Per object (page order), the tasks that processed it, in recorded order.
    pub per_object: Vec<Vec<CpuTask>>,
    /// Tasks kept, and their total duration (ns).
    pub tasks: usize,
    /// Total recorded duration of the tasks kept (ns).
    pub total_ns: u64,
    /// Tasks naming an object of the page.
    pub attributed: usize,
    /// Tasks under 10 ms that named no object, left out.
    pub dropped_short: usize,
    /// Paints and Speed Index Chrome observed.
    pub observed: Observed,
}

impl CpuTasks {
    /// Total CPU time of object `k` (ns, as recorded).
    pub fn object_ns(&self, k: usize) -> u64 {
        self.per_object.get(k).map_or(0, |v| v.iter().map(|t| t.dur_ns).sum())
    }
}

fn name(e: &Value) -> Option<&str> {
    e.get("name").and_then(Value::as_str)
}

fn url_of(e: &Value) -> Option<&str> {
    let a = e.get("args")?;
    a.pointer("/beginData/url")
        .or_else(|| a.pointer("/data/url"))
        .or_else(|| a.pointer("/data/styleSheetUrl"))
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
}

/// Reads `text` (a trace: `{"traceEvents": [...]}` or a bare array) for `page`. Errors name
/// what was expected.
pub fn cpu_tasks(text: &str, page: &Page) -> Result<CpuTasks, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let events = match &v {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or("expected a Chrome trace: an object with a `traceEvents` array, or an array of events")?,
        _ => return Err("expected a Chrome trace: an object with `traceEvents`, or an array of events".into()),
    };
    let num = |e: &Value, k: &str| e.get(k).and_then(Value::as_f64);
    let thread = |e: &Value| (e.get("pid").and_then(Value::as_i64), e.get("tid").and_then(Value::as_i64));
    // Renderer main threads, and each one's task time.
    let mains: Vec<(Option<i64>, Option<i64>)> = events
        .iter()
        .filter(|e| {
            e.get("ph").and_then(Value::as_str) == Some("M")
                && e.get("name").and_then(Value::as_str) == Some("thread_name")
                && e.pointer("/args/name").and_then(Value::as_str) == Some("CrRendererMain")
        })
        .map(thread)
        .collect();
    let is_task = |e: &Value| {
        e.get("ph").and_then(Value::as_str) == Some("X") && e.get("name").and_then(Value::as_str) == Some("RunTask")
    };
    let main = mains
        .iter()
        .max_by_key(|m| {
            events.iter().filter(|e| thread(e) == **m && is_task(e)).filter_map(|e| num(e, "dur")).sum::<f64>() as u64
        })
        .copied()
        .ok_or("the trace has no renderer main thread (a `thread_name` of CrRendererMain)")?;
    let objects = page.objects();
    let root_url = &objects[page.root().index()].url;
    // The time origin: the main frame's navigationStart for the root document (or, after
    // redirects, for the URL the navigation began at).
    let first_url = page.navigation_redirects().first().map_or(root_url.as_str(), |h| h.url.as_str());
    let nav = [root_url.as_str(), first_url].into_iter().find_map(|url| {
        events.iter().find(|e| {
            name(e) == Some("navigationStart")
                && e.pointer("/args/data/documentLoaderURL").and_then(Value::as_str) == Some(url)
        })
    });
    let main_frame = nav.and_then(|e| e.pointer("/args/frame")).and_then(Value::as_str);
    let root_ts = nav
        .and_then(|e| num(e, "ts"))
        .or_else(|| {
            events
                .iter()
                .filter(|e| name(e) == Some("ResourceSendRequest"))
                .find(|e| e.pointer("/args/data/url").and_then(Value::as_str) == Some(root_url.as_str()))
                .and_then(|e| num(e, "ts"))
        })
        .ok_or_else(|| {
            format!(
                "the trace has neither a navigationStart nor a ResourceSendRequest for the page's root document \
                 {root_url}"
            )
        })?;
    let since = |ts: f64| (ts >= root_ts).then(|| ((ts - root_ts) * 1000.0).round() as u64);
    let in_main_frame =
        |e: &Value| main_frame.is_none() || e.pointer("/args/frame").and_then(Value::as_str) == main_frame;
    let mut observed = Observed::default();
    let mut frames = Vec::new();
    for e in events {
        match name(e) {
            Some("firstContentfulPaint") if in_main_frame(e) => {
                if let Some(t) = num(e, "ts").and_then(since) {
                    observed.fcp_ns = Some(observed.fcp_ns.map_or(t, |f: u64| f.min(t)));
                }
            }
            Some("largestContentfulPaint::Candidate") if in_main_frame(e) => {
                if let Some(t) = num(e, "ts").and_then(since) {
                    observed.lcp_ns = Some(observed.lcp_ns.map_or(t, |l: u64| l.max(t)));
                }
            }
            Some("Screenshot") => {
                if let (Some(t), Some(shot)) = (num(e, "ts"), e.pointer("/args/snapshot").and_then(Value::as_str)) {
                    frames.push((t, shot));
                }
            }
            _ => {}
        }
    }
    observed.screenshots = frames.len();
    let speed = crate::speedline::speed_index(&frames, root_ts);
    observed.speed_index_ns = speed.speed_index_ns;
    observed.bad_screenshots = speed.undecodable;
    // The main thread's events in time order.
    let mut on_main: Vec<&Value> = events.iter().filter(|e| thread(e) == main && num(e, "ts").is_some()).collect();
    on_main.sort_by(|a, b| num(a, "ts").partial_cmp(&num(b, "ts")).unwrap_or(std::cmp::Ordering::Equal));
    // Each object's recorded response end on the trace's clock (µs): the page's recorded
    // times count from the root's request, after the navigation's redirect hops.
    // (The fallback origin, the root's ResourceSendRequest, is already after them.)
    let doc_ts = if nav.is_some() { root_ts + page.recorded_redirect_ns() as f64 / 1000.0 } else { root_ts };
    let ends_us: Vec<f64> =
        objects.iter().map(|o| doc_ts + (o.recorded_start_ns + o.recorded_duration_ns) as f64 / 1000.0).collect();
    let first_task_us = doc_ts + objects[page.root().index()].recorded_response_start_ns as f64 / 1000.0;
    let mut out = CpuTasks { per_object: vec![Vec::new(); objects.len()], observed, ..Default::default() };
    let mut i = 0;
    while i < on_main.len() {
        let e = on_main[i];
        i += 1;
        if !is_task(e) {
            continue;
        }
        let (Some(ts), Some(dur)) = (num(e, "ts"), num(e, "dur")) else { continue };
        if ts < first_task_us || dur <= 0.0 {
            continue;
        }
        let end = ts + dur;
        let mut owner = None;
        let mut layout = false;
        let mut j = i;
        while j < on_main.len() && num(on_main[j], "ts").unwrap_or(f64::MAX) < end {
            layout |= name(on_main[j]) == Some("Layout");
            if owner.is_none() {
                if let Some(u) = url_of(on_main[j]) {
                    owner = objects.iter().position(|o| o.url == u);
                }
            }
            j += 1;
        }
        let dur_ns = (dur * 1000.0).round() as u64;
        let owner = match owner {
            Some(k) => {
                out.attributed += 1;
                k
            }
            None if dur_ns < SIGNIFICANT_TASK_NS => {
                out.dropped_short += 1;
                continue;
            }
            None => {
                // The object whose response ended last before the task (the root if none).
                let mut best = page.root().index();
                let mut best_end = f64::MIN;
                for (k, &t) in ends_us.iter().enumerate() {
                    if t <= ts && t > best_end {
                        best = k;
                        best_end = t;
                    }
                }
                best
            }
        };
        out.per_object[owner].push(CpuTask { dur_ns, layout, recorded_start_ns: since(ts).unwrap_or(0) });
        out.tasks += 1;
        out.total_ns += dur_ns;
    }
    Ok(out)
}
