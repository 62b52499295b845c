//! `triage page`: import real pages (HAR, DevTools logs) or built-in ones, classify their
//! objects and export them for replay.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;
use triage_web::builtin::{builtin, BUILTIN_PAGES};
use triage_web::export::write_replica;
use triage_web::qoe::{estimate, Qoe, QoeConfig};
use triage_web::{import_file, ContentType, Essentialness, ImportOptions, Page, Rules, SkipReason};

/// Import and analyze real pages (HAR, DevTools logs).
#[derive(clap::Args)]
pub struct PageArgs {
    #[command(subcommand)]
    command: PageCommand,
}

#[derive(Subcommand)]
enum PageCommand {
    /// Print every object (type, bytes, browser priority, CATS level, essentialness, parent),
    /// totals per class, skipped entries by reason, and QoE estimates of the recorded load.
    Analyze(AnalyzeArgs),
    /// Write the thesis's transfer_sequence.json and dummy files of each object's size and
    /// type (HAR_Replica, thesis §5.7) into a directory.
    Export(ExportArgs),
    /// List the built-in pages (usable wherever a FILE is expected).
    Builtin,
}

#[derive(clap::Args)]
struct SourceArgs {
    /// A HAR 1.2 file, a DevTools protocol log or Chrome performance log (JSON), or the name
    /// of a built-in page (see `triage page builtin`).
    file: String,
    /// The page to use when the file holds several (a HAR page id such as `page_1`; in
    /// DevTools logs pages are `page_1`, `page_2`, ... in navigation order). Default: the
    /// first page with a usable entry.
    #[arg(long, value_name = "ID")]
    page: Option<String>,
    /// Rules (TOML) that override CATS levels and essentialness by URL glob, domain or type.
    #[arg(long, value_name = "RULES.toml")]
    rules: Option<PathBuf>,
    /// Keep cache hits as objects (sized by their content), as for a cold load.
    #[arg(long)]
    keep_cache_hits: bool,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ExportArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Output directory (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// What analyze and export work on.
struct Loaded {
    file: String,
    format: String,
    page_id: String,
    pages: Vec<String>,
    entries: usize,
    page: Page,
    skipped: BTreeMap<SkipReason, usize>,
    /// Values the import clamped or ignored (sizes, durations), by kind.
    adjusted: BTreeMap<triage_web::Adjustment, usize>,
    recorded_qoe: Option<Qoe>,
}

fn load(src: &SourceArgs) -> Result<Loaded, String> {
    let path = Path::new(&src.file);
    let mut recorded = None;
    // `builtin:NAME`, as scenarios write it (a bare NAME too, when no file has that name).
    let name = src.file.strip_prefix("builtin:").unwrap_or(&src.file);
    let mut loaded = if (src.file.starts_with("builtin:") || !path.exists()) && builtin(name).is_some() {
        let page = builtin(name).unwrap_or_else(|| unreachable!());
        Loaded {
            file: format!("built-in page {name}"),
            format: "builtin".into(),
            page_id: name.to_string(),
            pages: vec![name.to_string()],
            entries: page.len(),
            page,
            skipped: BTreeMap::new(),
            adjusted: BTreeMap::new(),
            recorded_qoe: None,
        }
    } else {
        if !path.exists() {
            return Err(format!(
                "{}: no such file, and no built-in page of that name (built-in: {})",
                src.file,
                BUILTIN_PAGES.iter().map(|p| format!("builtin:{}", p.0)).collect::<Vec<_>>().join(", ")
            ));
        }
        let opts = ImportOptions { page: src.page.clone(), keep_cache_hits: src.keep_cache_hits };
        let imp = import_file(path, &opts).map_err(|e| e.to_string())?;
        recorded = Some(imp.recorded_deliveries());
        Loaded {
            file: src.file.clone(),
            format: serde_json::to_value(imp.format)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            page_id: imp.page_id.clone(),
            pages: imp.pages.iter().map(|p| p.id.clone()).collect(),
            entries: imp.entries_total,
            skipped: imp.skipped,
            adjusted: imp.adjusted,
            page: imp.page,
            recorded_qoe: None,
        }
    };
    if let Some(rules) = &src.rules {
        let rules = Rules::from_file(rules).map_err(|e| e.to_string())?;
        rules.apply(&mut loaded.page);
    }
    // After the rules: the TTI proxy reads CATS levels.
    loaded.recorded_qoe = recorded.map(|d| estimate(&loaded.page, &d, &QoeConfig::default()));
    Ok(loaded)
}

/// Runs `triage page ...`.
pub fn run(a: PageArgs) -> Result<(), String> {
    match a.command {
        PageCommand::Analyze(a) => analyze(a),
        PageCommand::Export(a) => export(a),
        PageCommand::Builtin => {
            for (name, desc) in BUILTIN_PAGES {
                outln!("{name:<10} {desc}");
            }
            Ok(())
        }
    }
}

fn export(a: ExportArgs) -> Result<(), String> {
    let l = load(&a.source)?;
    let seq = write_replica(&l.page, &a.out).map_err(|e| format!("{}: {e}", l.file))?;
    if let Some(line) = triage_web::import::adjusted_summary(&l.adjusted) {
        eprintln!("warning: {}: {line}", l.file);
    }
    let bytes = seq.iter().fold(0u64, |a, t| a.saturating_add(t.size));
    outln!(
        "{}: wrote {} dummy files ({} bytes) and transfer_sequence.json to {}",
        l.file,
        seq.len(),
        bytes,
        a.out.display()
    );
    Ok(())
}

#[derive(Serialize)]
struct JsonObject<'a> {
    id: u32,
    url: &'a str,
    #[serde(rename = "type")]
    kind: ContentType,
    bytes: u64,
    cats_level: u8,
    essential: Essentialness,
    category: &'static str,
    priority: Option<&'static str>,
    render_blocking: bool,
    third_party: bool,
    parent: Option<u32>,
}

#[derive(Serialize, Default)]
struct Class {
    objects: usize,
    bytes: u64,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    file: &'a str,
    format: &'a str,
    page: &'a str,
    pages: &'a [String],
    entries: usize,
    objects: Vec<JsonObject<'a>>,
    totals: BTreeMap<&'static str, BTreeMap<String, Class>>,
    skipped: BTreeMap<String, usize>,
    adjusted: BTreeMap<String, usize>,
    recorded_qoe_ms: Option<BTreeMap<&'static str, Option<f64>>>,
}

fn totals(page: &Page) -> BTreeMap<&'static str, BTreeMap<String, Class>> {
    let mut t: BTreeMap<&'static str, BTreeMap<String, Class>> = BTreeMap::new();
    for o in page.objects() {
        for (class, key) in [
            ("type", o.kind.name().to_string()),
            ("cats_level", o.cats_level.to_string()),
            ("essential", o.essential.name().to_string()),
            ("category", o.category.name().to_string()),
        ] {
            let c = t.entry(class).or_default().entry(key).or_default();
            c.objects += 1;
            c.bytes = c.bytes.saturating_add(o.wire_bytes);
        }
    }
    t
}

fn qoe_ms(q: &Qoe) -> BTreeMap<&'static str, Option<f64>> {
    let ms = |v: Option<u64>| v.map(|ns| (ns as f64 / 1e3).round() / 1e3);
    BTreeMap::from([
        ("first_contentful_paint", ms(q.first_contentful_paint_ns)),
        ("first_render", ms(q.first_render_ns)),
        ("largest_contentful_paint", ms(q.largest_contentful_paint_ns)),
        ("time_to_interactive", ms(q.time_to_interactive_ns)),
        ("speed_index", ms(q.speed_index_ns)),
        ("page_load", ms(q.page_load_ns)),
        ("cls_layout_to_last_image", ms(q.cls.map(|c| c.delta_ns))),
    ])
}

fn analyze(a: AnalyzeArgs) -> Result<(), String> {
    let l = load(&a.source)?;
    if a.json {
        let report = JsonReport {
            file: &l.file,
            format: &l.format,
            page: &l.page_id,
            pages: &l.pages,
            entries: l.entries,
            objects: l
                .page
                .objects()
                .iter()
                .map(|o| JsonObject {
                    id: o.id.0,
                    url: &o.url,
                    kind: o.kind,
                    bytes: o.wire_bytes,
                    cats_level: o.cats_level,
                    essential: o.essential,
                    category: o.category.name(),
                    priority: o.browser_priority.map(|p| p.name()),
                    render_blocking: o.blocks_first_paint(),
                    third_party: o.third_party,
                    parent: o.parent.map(|p| p.0),
                })
                .collect(),
            totals: totals(&l.page),
            skipped: l.skipped.iter().map(|(r, n)| (r.name().to_string(), *n)).collect(),
            adjusted: l.adjusted.iter().map(|(r, n)| (r.name().to_string(), *n)).collect(),
            recorded_qoe_ms: l.recorded_qoe.as_ref().map(qoe_ms),
        };
        outln!("{}", serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?);
        return Ok(());
    }
    print_table(&l);
    Ok(())
}

fn print_table(l: &Loaded) {
    let p = &l.page;
    outln!(
        "{}: {} page {} ({}), {} entries in the file, {} objects, {} bytes on the wire",
        l.file,
        l.format,
        l.page_id,
        p.name(),
        l.entries,
        p.len(),
        p.total_wire_bytes()
    );
    if l.pages.len() > 1 {
        outln!("pages in the file: {} (choose with --page)", l.pages.join(", "));
    }
    outln!();
    outln!(
        "{:>4}  {:<6} {:>9}  {:<8} {:>4}  {:<13} {:>6}  url",
        "id",
        "type",
        "bytes",
        "priority",
        "cats",
        "essential",
        "parent"
    );
    for o in p.objects() {
        outln!(
            "{:>4}  {:<6} {:>9}  {:<8} {:>4}  {:<13} {:>6}  {}{}",
            o.id.0,
            o.kind.name(),
            o.wire_bytes,
            o.browser_priority.map(|b| b.name()).unwrap_or("-"),
            o.cats_level,
            o.essential.name(),
            o.parent.map(|x| x.0.to_string()).unwrap_or_else(|| "-".into()),
            if o.blocks_first_paint() { "[blocking] " } else { "" },
            crate::table::middle(&o.url, 90)
        );
    }
    outln!();
    for (class, rows) in totals(p) {
        let cells: Vec<String> = rows.iter().map(|(k, c)| format!("{k} {} ({} B)", c.objects, c.bytes)).collect();
        outln!("by {class:<11} {}", cells.join(", "));
    }
    outln!();
    if l.skipped.is_empty() {
        outln!("skipped: none");
    } else {
        let total: usize = l.skipped.values().sum();
        let cells: Vec<String> = l.skipped.iter().map(|(r, n)| format!("{r} {n}")).collect();
        outln!("skipped: {total} ({})", cells.join(", "));
    }
    if let Some(line) = triage_web::import::adjusted_summary(&l.adjusted) {
        outln!("{line}");
    }
    if let Some(q) = &l.recorded_qoe {
        let cells: Vec<String> = qoe_ms(q)
            .into_iter()
            .map(|(k, v)| format!("{k} {}", v.map(|x| format!("{x:.0} ms")).unwrap_or_else(|| "-".into())))
            .collect();
        outln!("recorded load (network-level estimates): {}", cells.join(", "));
    }
}
