//! Self-contained HTML reports (`triage report DIR`, `--html FILE`): results tables, bar
//! charts and, for page loads, a waterfall per variant side by side. Everything is inline
//! (CSS, SVG, one small script), so the file opens without network access.
//!
//! The script only adds hover highlighting; when it has run to its end it sets
//! `data-report-ready="yes"` on `<body>` and fills `#status`, and any script error sets
//! `data-report-error`, so a headless browser can tell that the page ran cleanly.

use std::fmt::Write as _;
use std::path::Path;

use crate::output::ObjectRow;
use crate::table::middle;

/// A table of the report: a caption, a header and rows of cells (already formatted).
pub struct Table {
    /// Caption above the table.
    pub caption: String,
    /// Column names, units included.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

/// A grouped bar chart: one group per category, one bar per series.
pub struct Bars {
    /// Title.
    pub title: String,
    /// The y axis's name and unit.
    pub y_desc: String,
    /// Category names (x axis).
    pub categories: Vec<String>,
    /// (series name, one value per category; `None`: no bar).
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

/// One page load's waterfall.
pub struct Waterfall {
    /// Panel title ("fifo: page").
    pub title: String,
    /// The objects, in page order.
    pub objects: Vec<ObjectRow>,
    /// Vertical markers: (label, ms).
    pub marks: Vec<(String, f64)>,
}

/// A whole report.
pub struct Report {
    /// Page title.
    pub title: String,
    /// Lines under the title (scenario, seed, version).
    pub subtitle: Vec<String>,
    /// Tables shown first, above the waterfalls.
    pub summary: Vec<Table>,
    /// Tables shown after the charts.
    pub tables: Vec<Table>,
    /// Charts, in order.
    pub charts: Vec<Bars>,
    /// Waterfalls, drawn two per row (FIFO and CATS side by side).
    pub waterfalls: Vec<Waterfall>,
}

/// `s` with `&`, `<`, `>` and quotes escaped for HTML text and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

const STYLE: &str = "body{font-family:sans-serif;margin:16px;color:#222;background:#fff}\
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:18px 0 6px}.sub{color:#555;font-size:13px;margin:0}\
table{border-collapse:collapse;font-size:12px;margin-bottom:8px}th,td{border:1px solid #ccc;padding:2px 6px}\
th{background:#eef;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.hl td{background:#ffd}.grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:12px}\
.panel{border:1px solid #ddd;padding:6px;overflow-x:auto}.legend span{display:inline-block;margin-right:10px;font-size:12px}\
.sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}svg text{font-family:sans-serif}\
#status{font-size:11px;color:#777}";

/// Colours of CATS levels 0 (most urgent) … 4, for the downloading part of a bar.
const LEVEL_COLOURS: [&str; 5] = ["#c0392b", "#e67e22", "#f1c40f", "#27ae60", "#2980b9"];
/// Colours of the series of bar charts.
const SERIES_COLOURS: [&str; 6] = ["#5a6e8c", "#dc7828", "#3c9650", "#c8283c", "#8e44ad", "#16a085"];
const QUEUED: &str = "#d5d8dc";
const CONNECT: &str = "#7f8c8d";
const WAITING: &str = "#aed6f1";

const SCRIPT: &str = "(function(){\
window.addEventListener('error',function(e){document.body.setAttribute('data-report-error',String(e.message));});\
var rows=document.querySelectorAll('tr[data-key]');\
rows.forEach(function(r){r.addEventListener('mouseenter',function(){r.classList.add('hl');});\
r.addEventListener('mouseleave',function(){r.classList.remove('hl');});});\
var bars=document.querySelectorAll('g.obj');\
bars.forEach(function(g){g.addEventListener('mouseenter',function(){g.setAttribute('opacity','0.6');});\
g.addEventListener('mouseleave',function(){g.removeAttribute('opacity');});});\
document.getElementById('status').textContent='report ready: '+rows.length+' table rows, '+bars.length+' waterfall objects';\
document.body.setAttribute('data-report-ready','yes');})();";

/// The report as one HTML document.
pub fn html(r: &Report) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n",
        esc(&r.title),
        esc(&r.title)
    );
    for line in &r.subtitle {
        let _ = writeln!(s, "<p class=\"sub\">{}</p>", esc(line));
    }
    for t in &r.summary {
        table_html(&mut s, t);
    }
    if !r.waterfalls.is_empty() {
        s.push_str("<h2>Waterfalls</h2>\n<div class=\"legend\">");
        for (name, c) in [
            ("queued (discovered, not yet requested)", QUEUED),
            ("connection setup", CONNECT),
            ("waiting (request to response)", WAITING),
        ] {
            let _ = write!(s, "<span><i class=\"sw\" style=\"background:{c}\"></i>{}</span>", esc(name));
        }
        for (l, c) in LEVEL_COLOURS.iter().enumerate() {
            let _ = write!(s, "<span><i class=\"sw\" style=\"background:{c}\"></i>downloading, CATS level {l}</span>");
        }
        s.push_str("</div>\n<div class=\"grid\">\n");
        let tmax = r
            .waterfalls
            .iter()
            .flat_map(|w| {
                w.objects
                    .iter()
                    .filter_map(|o| o.complete_ms.or(o.response_start_ms).or(o.request_ms))
                    .chain(w.marks.iter().map(|m| m.1))
            })
            .fold(1.0, f64::max);
        for w in &r.waterfalls {
            let _ = writeln!(s, "<div class=\"panel\"><b>{}</b>\n{}</div>", esc(&w.title), waterfall_svg(w, tmax));
        }
        s.push_str("</div>\n");
    }
    for c in &r.charts {
        let _ = writeln!(s, "<h2>{}</h2>\n{}", esc(&c.title), bars_svg(c));
    }
    for t in &r.tables {
        table_html(&mut s, t);
    }
    let _ = write!(
        s,
        "<p id=\"status\">script did not run</p>\n<p class=\"sub\">written by triage {}</p>\n<script>{SCRIPT}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    s
}

fn table_html(s: &mut String, t: &Table) {
    let _ = writeln!(s, "<h2>{}</h2>\n<table><thead><tr>", esc(&t.caption));
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>\n");
    for (i, row) in t.rows.iter().enumerate() {
        let _ = write!(s, "<tr data-key=\"{i}\">");
        for c in row {
            let numeric = !c.is_empty() && c.parse::<f64>().is_ok();
            let _ = write!(s, "<td{}>{}</td>", if numeric { " class=\"n\"" } else { "" }, esc(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
}

/// Writes the report to `path`.
pub fn write(path: &Path, r: &Report) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, html(r)).map_err(|e| format!("{}: {e}", path.display()))
}

/// A "nice" axis step near `max / 5`: 1, 2 or 5 times a power of ten.
fn step(max: f64) -> f64 {
    let raw = (max / 5.0).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|s| *s >= raw).unwrap_or(10.0 * p)
}

fn bars_svg(c: &Bars) -> String {
    let (w, h, left, bottom, top) = (760.0, 240.0, 60.0, 40.0, 30.0);
    let ymax = c.series.iter().flat_map(|s| s.1.iter().flatten()).fold(0.0, |a: f64, b| a.max(*b)).max(1e-9) * 1.1;
    let plot_h = h - bottom - top;
    let y = |v: f64| top + plot_h * (1.0 - v / ymax);
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\">");
    let st = step(ymax);
    let mut v = 0.0;
    while v <= ymax {
        let _ = write!(
            s,
            "<line x1=\"{left}\" x2=\"{w}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#eee\"/><text x=\"{1}\" y=\"{2:.1}\" font-size=\"10\" text-anchor=\"end\">{3}</text>",
            y(v),
            left - 4.0,
            y(v) + 3.0,
            v
        );
        v += st;
    }
    let _ = write!(
        s,
        "<text x=\"12\" y=\"{0}\" font-size=\"11\" transform=\"rotate(-90 12 {0})\" text-anchor=\"middle\">{1}</text>",
        top + plot_h / 2.0,
        esc(&c.y_desc)
    );
    let n = c.categories.len().max(1) as f64;
    let k = c.series.len().max(1) as f64;
    let gw = (w - left - 10.0) / n;
    for (i, cat) in c.categories.iter().enumerate() {
        let gx = left + gw * i as f64;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            gx + gw / 2.0,
            h - bottom + 14.0,
            esc(cat)
        );
        for (j, (_, vals)) in c.series.iter().enumerate() {
            let Some(val) = vals.get(i).copied().flatten() else { continue };
            let bw = gw * 0.8 / k;
            let x = gx + gw * 0.1 + bw * j as f64;
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {val}</title></rect>",
                y(val),
                (y(0.0) - y(val)).max(0.0),
                SERIES_COLOURS[j % SERIES_COLOURS.len()],
                esc(&c.series[j].0)
            );
        }
    }
    for (j, (name, _)) in c.series.iter().enumerate() {
        let x = left + 10.0 + 170.0 * j as f64;
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"6\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"15\" font-size=\"11\">{}</text>",
            SERIES_COLOURS[j % SERIES_COLOURS.len()],
            x + 16.0,
            esc(&middle(name, 24))
        );
    }
    let _ = write!(s, "<line x1=\"{left}\" x2=\"{w}\" y1=\"{0}\" y2=\"{0}\" stroke=\"#333\"/></svg>", y(0.0));
    s
}

fn waterfall_svg(wf: &Waterfall, tmax: f64) -> String {
    let (w, label_w, row, top) = (620.0, 200.0, 14.0, 22.0);
    let h = top + row * wf.objects.len() as f64 + 8.0;
    let x = |t: f64| label_w + (w - label_w - 8.0) * (t / tmax).clamp(0.0, 1.0);
    let mut s =
        format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" viewBox=\"0 0 {w} {h:.0}\" role=\"img\">");
    let st = step(tmax);
    let mut t = 0.0;
    while t <= tmax {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{h:.0}\" stroke=\"#eee\"/><text x=\"{0:.1}\" y=\"{1}\" font-size=\"9\" text-anchor=\"middle\">{2} ms</text>",
            x(t),
            top - 10.0,
            t
        );
        t += st;
    }
    for (i, o) in wf.objects.iter().enumerate() {
        let y = top + row * i as f64;
        let label = format!("{} {}", o.object_id, middle(url_tail(&o.url), 30));
        let _ = write!(
            s,
            "<g class=\"obj\"><title>#{} {} ({}, {} bytes, {} priority, CATS level {}): request {} ms, response {} ms, complete {} ms</title>\
<text x=\"2\" y=\"{:.1}\" font-size=\"10\">{}</text>",
            o.object_id,
            esc(&o.url),
            esc(&o.kind),
            o.bytes,
            esc(if o.browser_priority.is_empty() { "unknown" } else { &o.browser_priority }),
            o.cats_level,
            opt(o.request_ms),
            opt(o.response_start_ms),
            opt(o.complete_ms),
            y + 10.0,
            esc(&label)
        );
        let level = LEVEL_COLOURS[(o.cats_level as usize).min(4)];
        let mut seg = |a: Option<f64>, b: Option<f64>, colour: &str| {
            if let (Some(a), Some(b)) = (a, b) {
                if b >= a {
                    let _ = write!(
                        s,
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>",
                        x(a),
                        y + 2.0,
                        (x(b) - x(a)).max(1.0),
                        row - 4.0
                    );
                }
            }
        };
        if o.parent_id.is_none() {
            seg(Some(o.connection_start_ms), o.connected_ms, CONNECT);
        }
        seg(o.discovered_ms, o.request_ms, QUEUED);
        // Waiting until the first byte arrived, downloading from then (a browser's
        // responseStart); the server's write time when the first byte is unknown.
        let first_byte = o.first_byte_ms.or(o.response_start_ms);
        seg(o.request_ms, first_byte, WAITING);
        seg(first_byte, o.complete_ms, level);
        s.push_str("</g>");
    }
    for (j, (name, t)) in wf.marks.iter().enumerate() {
        let colour = ["#8e44ad", "#c0392b", "#16a085", "#34495e"][j % 4];
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{h:.0}\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\"/>\
<text x=\"{2:.1}\" y=\"{3}\" font-size=\"10\" fill=\"{colour}\" text-anchor=\"{6}\">{4} {5:.0} ms</text>",
            x(*t),
            top - 2.0,
            // Labels of lines in the right part of the chart go to the line's left.
            if x(*t) > w * 0.75 { x(*t) - 3.0 } else { x(*t) + 3.0 },
            top + 8.0 + 10.0 * j as f64,
            esc(name),
            t,
            if x(*t) > w * 0.75 { "end" } else { "start" }
        );
    }
    s.push_str("</svg>");
    s
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

/// The part of a URL after its scheme (host and path), for labels.
fn url_tail(url: &str) -> &str {
    url.split_once("://").map_or(url, |x| x.1)
}

/// The report of a `triage run`: `doc` is its JSON (`run.json`), `objects` the rows of
/// `objects.csv`.
pub fn of_run(doc: &serde_json::Value, objects: &[ObjectRow]) -> Report {
    let str_of = |v: &serde_json::Value| match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let variants = doc["variants"].as_array().cloned().unwrap_or_default();
    let vname = |v: &serde_json::Value| str_of(&v["name"]);
    let mut flows = Table {
        caption: "Flows".into(),
        header: [
            "variant",
            "flow",
            "fct_ms",
            "bytes",
            "delivered_bytes",
            "goodput_mbps",
            "retransmitted_segments",
            "rtos",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let mut pages = Table {
        caption: "Page loads".into(),
        header: [
            "variant",
            "flow",
            "page",
            "objects",
            "fcp_ms",
            "lcp_ms",
            "tti_ms",
            "speed_index_ms",
            "tbt_ms",
            "page_load_ms",
            "cls",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let mut links = Table {
        caption: "Links".into(),
        header: [
            "variant",
            "link",
            "tx_packets",
            "tx_bytes",
            "dropped_packets",
            "lost_packets",
            "ecn_marked_packets",
            "max_queue_packets",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let metric_names = ["fcp_ms", "lcp_ms", "tti_ms", "speed_index_ms", "plt_ms"];
    let mut page_chart = Bars {
        title: "Page metrics".into(),
        y_desc: "ms".into(),
        categories: ["FCP", "LCP", "TTI", "Speed Index", "page load"].map(String::from).to_vec(),
        series: Vec::new(),
    };
    let mut fct_chart = Bars {
        title: "Flow completion time".into(),
        y_desc: "fct (ms)".into(),
        categories: Vec::new(),
        series: Vec::new(),
    };
    let mut waterfalls = Vec::new();
    for v in &variants {
        let name = vname(v);
        let r = &v["report"];
        let mut fcts = Vec::new();
        for f in r["flows"].as_array().into_iter().flatten() {
            let flow = str_of(&f["name"]);
            flows.rows.push(vec![
                name.clone(),
                flow.clone(),
                str_of(&f["fct_ms"]),
                str_of(&f["bytes"]),
                str_of(&f["delivered_bytes"]),
                str_of(&f["goodput_mbps"]),
                str_of(&f["retransmissions"]),
                str_of(&f["rtos"]),
            ]);
            if !fct_chart.categories.contains(&flow) {
                fct_chart.categories.push(flow.clone());
            }
            fcts.push((flow.clone(), f["fct_ms"].as_f64()));
            let p = &f["page"];
            if p.is_object() {
                pages.rows.push(vec![
                    name.clone(),
                    flow.clone(),
                    str_of(&p["name"]),
                    format!("{}/{}", str_of(&p["delivered"]), str_of(&p["objects"])),
                    str_of(&p["fcp_ms"]),
                    str_of(&p["lcp_ms"]),
                    str_of(&p["tti_ms"]),
                    str_of(&p["speed_index_ms"]),
                    str_of(&p["tbt_ms"]),
                    str_of(&p["plt_ms"]),
                    str_of(&p["cls"]),
                ]);
                let label = if name.is_empty() { flow.clone() } else { format!("{name} {flow}") };
                page_chart.series.push((label.clone(), metric_names.iter().map(|m| p[*m].as_f64()).collect()));
                let objs: Vec<ObjectRow> =
                    objects.iter().filter(|o| o.variant == name && o.flow == flow).cloned().collect();
                let mut marks = Vec::new();
                for (m, key) in [("FCP", "fcp_ms"), ("LCP", "lcp_ms")] {
                    if let Some(t) = p[key].as_f64() {
                        marks.push((m.to_string(), t));
                    }
                }
                waterfalls.push(Waterfall { title: format!("{label}: {}", str_of(&p["name"])), objects: objs, marks });
            }
        }
        let series_name = if name.is_empty() { "fct".to_string() } else { name.clone() };
        fct_chart.series.push((
            series_name,
            fct_chart.categories.iter().map(|c| fcts.iter().find(|f| &f.0 == c).and_then(|f| f.1)).collect(),
        ));
        for l in r["links"].as_array().into_iter().flatten() {
            links.rows.push(vec![
                name.clone(),
                str_of(&l["name"]),
                str_of(&l["tx_packets"]),
                str_of(&l["tx_bytes"]),
                str_of(&l["queue"]["dropped_packets"]),
                str_of(&l["lost_packets"]),
                str_of(&l["queue"]["marked_packets"]),
                str_of(&l["queue"]["max_len_packets"]),
            ]);
        }
    }
    let mut summary = Vec::new();
    if !pages.rows.is_empty() {
        summary.push(pages);
    }
    let tables = vec![flows, links];
    let mut charts = Vec::new();
    if !page_chart.series.is_empty() {
        charts.push(page_chart);
    }
    charts.push(fct_chart);
    Report {
        title: format!("triage run: {}", str_of(&doc["scenario"])),
        subtitle: vec![format!(
            "seed {}, {} variant(s), triage {}, schema {}",
            str_of(&doc["seed"]),
            variants.len(),
            str_of(&doc["triage_version"]),
            str_of(&doc["schema_version"])
        )],
        summary,
        tables,
        charts,
        waterfalls,
    }
}

/// Reads `objects.csv` of a `--out` directory (rows of every variant).
pub fn read_objects(path: &Path) -> Result<Vec<ObjectRow>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rows = Vec::new();
    for (i, rec) in r.deserialize::<ObjectRow>().enumerate() {
        rows.push(rec.map_err(|e| format!("{}: row {}: {e}", path.display(), i + 2))?);
    }
    Ok(rows)
}

/// `triage report DIR`: the HTML report of a `triage run --out DIR`, from its `run.json`
/// and `objects.csv`, written to `out` (default `DIR/report.html`).
pub fn from_dir(dir: &Path, out: Option<&Path>) -> Result<std::path::PathBuf, String> {
    let json_path = dir.join("run.json");
    let text = std::fs::read_to_string(&json_path)
        .map_err(|e| format!("{}: {e} (give the directory a `triage run --out DIR` wrote)", json_path.display()))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json_path.display()))?;
    if doc["schema_version"].as_u64() != Some(crate::SCHEMA_VERSION) {
        return Err(format!(
            "{}: schema_version {} where this triage reads {}",
            json_path.display(),
            doc["schema_version"],
            crate::SCHEMA_VERSION
        ));
    }
    let objects_path = dir.join("objects.csv");
    let objects = if objects_path.exists() { read_objects(&objects_path)? } else { Vec::new() };
    let path = out.map_or_else(|| dir.join("report.html"), Path::to_path_buf);
    write(&path, &of_run(&doc, &objects))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
    }

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(step(100.0), 20.0);
        assert_eq!(step(1234.0), 500.0);
        assert_eq!(step(9.0), 2.0);
    }
}
