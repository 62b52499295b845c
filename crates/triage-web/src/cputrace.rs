//! Main-thread CPU time from a Chrome trace, per page object (issue 9, "No CPU"): what Lantern
//! builds its CPU nodes from (Lighthouse's `PageDependencyGraph`), reduced to what our page
//! client needs: for each object, the top-level main-thread tasks that processed it, in
//! recorded order, as durations.
//!
//! - The main thread is the `CrRendererMain` thread that ran the most task time (the page's
//!   renderer; out-of-process iframes run on others).
//! - A top-level task is a complete (`ph = "X"`) `RunTask` event of that thread that starts
//!   after the root document's `ResourceSendRequest` (earlier ones belong to the page before).
//! - A task belongs to the page object whose URL the first URL-bearing event inside it names:
//!   `ParseHTML` (`beginData.url`), `EvaluateScript`, `v8.compile`, `FunctionCall`,
//!   `XHRReadyStateChange`, `TimerFire`... (`data.url`), `ParseAuthorStyleSheet`
//!   (`data.styleSheetUrl`). A task naming no object of the page (layout, style, paint, GC,
//!   timers without a URL) belongs to the object whose recorded response ended last before
//!   the task started (Lantern makes a CPU node depend on the network nodes finished before
//!   it); such tasks shorter than 10 ms are left out, as Lantern prunes insignificant CPU
//!   nodes (`SIGNIFICANT_DUR_THRESHOLD_MS`), and counted.

use serde_json::Value;

use crate::model::Page;

/// Lantern's threshold for a CPU task that does not process a page object (10 ms).
pub const SIGNIFICANT_TASK_NS: u64 = 10_000_000;

/// Main-thread tasks per object, from a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTasks {
    /// Per object (page order), the durations (ns, as recorded) of the tasks that processed
    /// it, in recorded order.
    pub per_object: Vec<Vec<u64>>,
    /// Tasks kept, and their total duration (ns).
    pub tasks: usize,
    /// Total recorded duration of the tasks kept (ns).
    pub total_ns: u64,
    /// Tasks naming an object of the page.
    pub attributed: usize,
    /// Tasks under 10 ms that named no object, left out.
    pub dropped_short: usize,
}

impl CpuTasks {
    /// Total CPU time of object `k` (ns, as recorded).
    pub fn object_ns(&self, k: usize) -> u64 {
        self.per_object.get(k).map_or(0, |v| v.iter().sum())
    }
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
    let root_ts = events
        .iter()
        .filter(|e| e.get("name").and_then(Value::as_str) == Some("ResourceSendRequest"))
        .find(|e| e.pointer("/args/data/url").and_then(Value::as_str) == Some(root_url.as_str()))
        .and_then(|e| num(e, "ts"))
        .ok_or_else(|| format!("the trace has no ResourceSendRequest for the page's root document {root_url}"))?;
    // The main thread's events in time order.
    let mut on_main: Vec<&Value> = events.iter().filter(|e| thread(e) == main && num(e, "ts").is_some()).collect();
    on_main.sort_by(|a, b| num(a, "ts").partial_cmp(&num(b, "ts")).unwrap_or(std::cmp::Ordering::Equal));
    // Each object's recorded response end on the trace's clock (µs).
    let ends_us: Vec<f64> =
        objects.iter().map(|o| root_ts + (o.recorded_start_ns + o.recorded_duration_ns) as f64 / 1000.0).collect();
    let mut out = CpuTasks { per_object: vec![Vec::new(); objects.len()], ..Default::default() };
    let mut i = 0;
    while i < on_main.len() {
        let e = on_main[i];
        i += 1;
        if !is_task(e) {
            continue;
        }
        let (Some(ts), Some(dur)) = (num(e, "ts"), num(e, "dur")) else { continue };
        if ts < root_ts || dur <= 0.0 {
            continue;
        }
        let end = ts + dur;
        let mut owner = None;
        let mut j = i;
        while j < on_main.len() && num(on_main[j], "ts").unwrap_or(f64::MAX) < end {
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
        out.per_object[owner].push(dur_ns);
        out.tasks += 1;
        out.total_ns += dur_ns;
    }
    Ok(out)
}
