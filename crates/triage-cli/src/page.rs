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
    /// Simulate one load of a page without writing a scenario: a network profile (or
    /// --rate/--rtt), a transport, and the page metrics (FCP, LCP, Speed Index, TTI, load).
    Simulate(Box<SimulateArgs>),
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// A HAR file, a DevTools log, or `builtin:NAME`.
    file: String,
    /// The page to use when the file holds several (see `page analyze`).
    #[arg(long, value_name = "ID")]
    page: Option<String>,
    /// Load the recording's cache hits over the network too (a cold load).
    #[arg(long)]
    keep_cache_hits: bool,
    /// Rules (TOML) that override CATS levels and essentialness.
    #[arg(long, value_name = "RULES.toml")]
    rules: Option<PathBuf>,
    /// A network profile (`triage profiles`), or `recorded`: the recording's own network
    /// (round trip and bandwidth inferred from its timings, or from a fetching proxy's timing headers when the browser saw none; CPU slowdown 1); default
    /// lighthouse-mobile-slow-4g unless --rate and --rtt are given.
    #[arg(long, conflicts_with_all = ["rate", "rtt"])]
    profile: Option<String>,
    /// Bottleneck rate, both directions (with --rtt): a dumbbell with 1 Gbps access links.
    #[arg(long, requires = "rtt")]
    rate: Option<triage_sim::units::Rate>,
    /// Round-trip time of the path (with --rate), half each way.
    #[arg(long, requires = "rate")]
    rtt: Option<triage_sim::units::Duration>,
    /// Random loss on the bottleneck's downlink: a probability (0.02) or a percentage ("2%").
    #[arg(long)]
    loss: Option<String>,
    /// Congestion controller: newreno, cubic or bbr.
    #[arg(long, default_value = "bbr")]
    cc: String,
    /// Transport: tcp (HTTP/2-like: messages on each TCP connection) or quic (HTTP/3-like: a
    /// stream per object).
    #[arg(long, default_value = "tcp")]
    mode: String,
    /// Send scheduler: fifo, prio or cats (TCP); fifo, rr, prio, rfc9218 or cats (QUIC).
    /// Default prio (a server honouring the browser's priorities; fifo with
    /// --connections flow).
    #[arg(long)]
    scheduler: Option<String>,
    /// Wait, after an object's parent arrived (or was processed), for the render- and
    /// parser-blocking objects the recording shows it waiting for, then for its recorded
    /// processing gap (parsing, script execution, timers) × --cpu-slowdown: the CPU model
    /// without a trace. Default with --profile recorded when there is no trace.
    #[arg(long, conflicts_with = "no_recorded_gaps")]
    recorded_gaps: bool,
    /// No recorded gaps, even with --profile recorded.
    #[arg(long)]
    no_recorded_gaps: bool,
    /// A Chrome trace of the recording (Lighthouse's trace.json): its main-thread tasks
    /// become each object's CPU time. Default: trace.json beside a devtoolslog.json, if
    /// there is one.
    #[arg(long, value_name = "TRACE.json")]
    trace: Option<PathBuf>,
    /// No CPU model, even with a trace beside the log.
    #[arg(long, conflicts_with = "trace")]
    no_trace: bool,
    /// Scale the trace's CPU time (and the recorded gaps with --recorded-gaps); default 4
    /// with a trace (Lighthouse's mobile slowdown), else 1.
    #[arg(long)]
    cpu_slowdown: Option<f64>,
    /// Write CSV files, run.json and charts into this directory (as `triage run --out`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write a self-contained HTML report with the page's waterfall to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Seed of the run's random streams (loss).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How the browser connects: per-origin (a connection per origin, each after DNS,
    /// TCP and TLS set-up), single (one connection, with DNS and TLS), or flow (the
    /// scenario default: one connection open at the start, no DNS, TLS or server time).
    #[arg(long, default_value = "per-origin", value_parser = ["per-origin", "single", "flow"])]
    connections: String,
    /// A host's DNS lookup: auto (twice the path's RTT, as Lantern; with --profile recorded,
    /// the recording's own), recorded, or a duration.
    #[arg(long, default_value = "auto")]
    dns: String,
    /// No TLS handshake on https origins (TCP mode).
    #[arg(long)]
    no_tls: bool,
    /// The server's think time before each response: recorded (from the recording's
    /// waits), none, or a duration.
    #[arg(long, default_value = "recorded")]
    server_time: String,
    /// How long the browser holds each request before sending it: none, or recorded (Chrome's
    /// queueing in the recording; default with --profile recorded, else none).
    #[arg(long, value_parser = ["none", "recorded"])]
    stall: Option<String>,
    /// How long opening a connection takes: auto (its round trips: TCP, and TLS on https),
    /// or recorded (at least what the recording's connection took, TLS certificate work
    /// included; default with --profile recorded, else auto).
    #[arg(long, value_parser = ["auto", "recorded"])]
    connect: Option<String>,
    /// Streaming HTML discovery (the default): request a child of an HTML document when the
    /// document's bytes up to its place have arrived (where the recording requested it), as
    /// Chrome's preload scanner does.
    #[arg(long, overrides_with = "no_streaming")]
    streaming: bool,
    /// Request a child only once its whole parent has arrived.
    #[arg(long, overrides_with = "streaming")]
    no_streaming: bool,
    /// Print {"page","network","fcp_ms","lcp_ms","si_ms","tti_ms","tbt_ms","trace","plt_ms","objects","connections","complete","warnings"}.
    #[arg(long)]
    json: bool,
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
    /// Requests whose network timing and size came from a fetching proxy's headers.
    proxy_timed: usize,
    /// Cache hits loaded over the network ([`ImportOptions::keep_cache_hits`]).
    cache_hits_fetched: usize,
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
            proxy_timed: 0,
            cache_hits_fetched: 0,
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
            proxy_timed: imp.proxy_timed,
            cache_hits_fetched: imp.cache_hits_fetched,
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
        PageCommand::Simulate(a) => simulate(*a),
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
    for line in triage_web::import::adjusted_summary(&l.adjusted)
        .into_iter()
        .chain(triage_web::import::cache_summary(&l.page, l.cache_hits_fetched))
    {
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
    /// Served from the browser's cache in the recording: no bytes on the network.
    from_cache: bool,
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
    /// Requests timed by a fetching proxy's headers (Lightrider's `X-TCPMs` ...).
    proxy_timed: usize,
    /// Objects the recording's browser served from its cache, kept at no network cost.
    cache_hits: usize,
    /// Cache hits loaded over the network instead (`--keep-cache-hits`).
    cache_hits_fetched: usize,
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
                    from_cache: o.from_cache,
                    parent: o.parent.map(|p| p.0),
                })
                .collect(),
            totals: totals(&l.page),
            skipped: l.skipped.iter().map(|(r, n)| (r.name().to_string(), *n)).collect(),
            adjusted: l.adjusted.iter().map(|(r, n)| (r.name().to_string(), *n)).collect(),
            proxy_timed: l.proxy_timed,
            cache_hits: l.page.objects().iter().filter(|o| o.from_cache).count(),
            cache_hits_fetched: l.cache_hits_fetched,
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
            "{:>4}  {:<6} {:>9}  {:<8} {:>4}  {:<13} {:>6}  {}{}{}",
            o.id.0,
            o.kind.name(),
            o.wire_bytes,
            o.browser_priority.map(|b| b.name()).unwrap_or("-"),
            o.cats_level,
            o.essential.name(),
            o.parent.map(|x| x.0.to_string()).unwrap_or_else(|| "-".into()),
            if o.from_cache { "[cache] " } else { "" },
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
    if let Some(line) = triage_web::import::cache_summary(p, l.cache_hits_fetched) {
        outln!("{line}");
    }
    if l.proxy_timed > 0 {
        outln!(
            "timed by a fetching proxy: {} requests (connect, wait, download and bytes from its X-TCPMs, \
             X-RequestMs, X-ResponseMs, X-TotalFetchedSize headers: the browser saw each response arrive whole)",
            l.proxy_timed
        );
    }
    let hops = p.navigation_redirects();
    if !hops.is_empty() {
        let urls: Vec<&str> = hops.iter().map(|h| h.url.as_str()).collect();
        let client = hops.iter().filter(|h| h.client_delay_ns > 0).count();
        outln!(
            "navigation before the root: {} (redirects, {client} client-side; simulated as round trips)",
            urls.join(" -> ")
        );
    }
    if let Some(q) = &l.recorded_qoe {
        let cells: Vec<String> = qoe_ms(q)
            .into_iter()
            .map(|(k, v)| format!("{k} {}", v.map(|x| format!("{x:.0} ms")).unwrap_or_else(|| "-".into())))
            .collect();
        outln!("recorded load (network-level estimates): {}", cells.join(", "));
    }
}

/// `triage page simulate`: the scenario a user would write for one page load, run.
fn simulate(a: SimulateArgs) -> Result<(), String> {
    use toml::Value as V;
    let abs = |p: &Path| {
        std::fs::canonicalize(p).map(|p| p.display().to_string()).unwrap_or_else(|_| p.display().to_string())
    };
    let page = if a.file.starts_with("builtin:") { a.file.clone() } else { abs(Path::new(&a.file)) };
    // A trace: given, or Lighthouse's trace.json beside its devtoolslog.json (the CPU model is
    // part of the browser model: not taken by default for --connections flow).
    let trace = a.trace.clone().or_else(|| {
        let p = Path::new(&a.file);
        let beside = p.with_file_name("trace.json");
        let wanted = !a.no_trace && a.connections != "flow";
        (wanted && p.file_name().is_some_and(|n| n == "devtoolslog.json") && beside.is_file()).then_some(beside)
    });
    if trace.is_some() && a.connections == "flow" {
        return Err("--trace: the CPU model is part of the browser model; not with --connections flow".into());
    }
    if a.streaming && a.connections == "flow" {
        return Err("--streaming: streaming discovery is part of the browser model; not with --connections flow".into());
    }
    // The recording's own machine without a trace: its processing gaps stand in for CPU.
    let recorded_gaps =
        a.recorded_gaps || (a.profile.as_deref() == Some("recorded") && trace.is_none() && !a.no_recorded_gaps);
    if a.cpu_slowdown.is_some() && trace.is_none() && !recorded_gaps {
        return Err("--cpu-slowdown scales a trace's CPU time (--trace) or the recorded gaps (--recorded-gaps)".into());
    }
    let mut transport = toml::Table::new();
    transport.insert("cc".into(), V::String(a.cc.clone()));
    transport.insert("mode".into(), V::String(a.mode.clone()));
    // A browser's load: an HTTP/2 (or HTTP/3) server honouring Chrome's priorities, unless
    // the run asks for another scheduler or keeps the scenario's plain connection.
    let scheduler = a.scheduler.clone().or_else(|| (a.connections != "flow").then(|| "prio".to_string()));
    if let Some(s) = &scheduler {
        transport.insert("scheduler".into(), V::String(s.clone()));
    }
    let loss = match &a.loss {
        None => None,
        Some(l) => {
            let p = triage_sim::units::parse_probability(l, 1.0).map_err(|e| format!("--loss {l}: {e}"))?;
            let mut t = toml::Table::new();
            t.insert("kind".into(), V::String("bernoulli".into()));
            t.insert("loss_prob".into(), V::Float(p));
            Some(V::Table(t))
        }
    };
    let mut topology = toml::Table::new();
    // `--profile recorded`: the recording's own network (round trip and bandwidth inferred
    // from its timings, triage_web::netinfer), to compare with the paint times it measured.
    let recorded = a.profile.as_deref() == Some("recorded");
    let (rate, rtt) = if recorded {
        if a.file.starts_with("builtin:") {
            return Err("--profile recorded: a built-in page has no recorded network".into());
        }
        let opts = ImportOptions { page: a.page.clone(), keep_cache_hits: a.keep_cache_hits };
        let imp = import_file(Path::new(&a.file), &opts).map_err(|e| e.to_string())?;
        let n = triage_web::netinfer::recorded_network(&imp.page).ok_or_else(|| {
            format!("--profile recorded: {} has no connect times or response timings to infer its network from", a.file)
        })?;
        (Some(triage_sim::units::Rate(n.rate_bps.max(1))), Some(triage_sim::units::Duration(n.rtt_ns.max(1))))
    } else {
        (a.rate, a.rtt)
    };
    let network = match (rate, rtt) {
        (Some(rate), Some(rtt)) => {
            topology.insert("kind".into(), V::String("dumbbell".into()));
            let mut b = toml::Table::new();
            b.insert("rate".into(), V::String(rate.to_string()));
            b.insert("delay".into(), V::String(format!("{}ns", rtt.0 / 2)));
            if let Some(l) = loss {
                b.insert("loss".into(), l);
            }
            topology.insert("bottleneck".into(), V::Table(b));
            let mut acc = toml::Table::new();
            acc.insert("rate".into(), V::String("1Gbps".into()));
            acc.insert("delay".into(), V::String("0ms".into()));
            topology.insert("access".into(), V::Table(acc));
            if recorded {
                let (mbps, ms) = (rate.0 as f64 / 1e6, rtt.0 as f64 / 1e6);
                format!("the recording's network ({mbps:.1} Mbps, RTT {ms:.1} ms)")
            } else {
                format!("{rate}, RTT {rtt}")
            }
        }
        _ => {
            let name = a.profile.clone().unwrap_or_else(|| "lighthouse-mobile-slow-4g".into());
            if !triage_sim::scenario::PROFILES.iter().any(|p| p.0 == name) {
                return Err(format!("--profile {name}: no such profile (`triage profiles` lists them)"));
            }
            topology.insert("kind".into(), V::String("profile".into()));
            topology.insert("name".into(), V::String(name.clone()));
            if let Some(l) = loss {
                topology.insert("loss".into(), l);
            }
            name
        }
    };
    let mut flow = toml::Table::new();
    for (k, v) in [("name", "page"), ("client", "c0"), ("server", "s0")] {
        flow.insert(k.into(), V::String(v.into()));
    }
    flow.insert("page".into(), V::String(page));
    if let Some(id) = &a.page {
        flow.insert("page_id".into(), V::String(id.clone()));
    }
    if a.keep_cache_hits {
        flow.insert("keep_cache_hits".into(), V::Boolean(true));
    }
    if let Some(r) = &a.rules {
        flow.insert("rules".into(), V::String(abs(r)));
    }
    if recorded_gaps {
        let mut d = toml::Table::new();
        d.insert("recorded_gaps".into(), V::Boolean(true));
        if let Some(x) = a.cpu_slowdown.filter(|_| trace.is_none()) {
            d.insert("cpu_slowdown".into(), V::Float(x));
        }
        flow.insert("discovery".into(), V::Table(d));
    }
    if a.connections != "flow" {
        let mut b = toml::Table::new();
        if let Some(t) = &trace {
            b.insert("trace".into(), V::String(abs(t)));
            // The recording's own machine: no slowdown; Lighthouse's mobile: 4.
            let default = if recorded { 1.0 } else { 4.0 };
            b.insert("cpu_slowdown".into(), V::Float(a.cpu_slowdown.unwrap_or(default)));
        }
        b.insert("connections".into(), V::String(a.connections.clone()));
        // The recording's own network: its own DNS times too, unless told otherwise.
        let dns = if recorded && a.dns == "auto" { "recorded".to_string() } else { a.dns.clone() };
        b.insert("dns".into(), V::String(dns));
        b.insert("tls".into(), V::Boolean(!a.no_tls));
        b.insert("server_time".into(), V::String(a.server_time.clone()));
        // The recording's own environment: its browser's queueing too, unless told otherwise.
        let stall = a.stall.clone().unwrap_or_else(|| if recorded { "recorded" } else { "none" }.to_string());
        b.insert("stall".into(), V::String(stall));
        let connect = a.connect.clone().unwrap_or_else(|| if recorded { "recorded" } else { "auto" }.to_string());
        b.insert("connect".into(), V::String(connect));
        // Streaming discovery by default: it brought every metric closer to Lantern's and to
        // the recordings' own paints (README, "How our model differs from Lantern's").
        if !a.no_streaming {
            b.insert("streaming".into(), V::Boolean(true));
        }
        flow.insert("browser".into(), V::Table(b));
    }
    let mut measure = toml::Table::new();
    measure.insert("interval".into(), V::String("0ms".into()));
    let mut doc = toml::Table::new();
    doc.insert("name".into(), V::String("page-simulate".into()));
    doc.insert("seed".into(), V::Integer(i64::try_from(a.seed).map_err(|_| "--seed: at most 2^63 - 1".to_string())?));
    doc.insert("stop".into(), V::String("600s".into()));
    doc.insert("transport".into(), V::Table(transport));
    doc.insert("measure".into(), V::Table(measure));
    doc.insert("topology".into(), V::Table(topology));
    doc.insert("flows".into(), V::Array(vec![V::Table(flow)]));
    let text = toml::to_string(&doc).map_err(|e| e.to_string())?;
    let what = format!("page simulate {}", a.file);
    let scenario = triage_sim::scenario::Scenario::parse(&text, &what).map_err(|e| e.to_string())?;
    let outputs = crate::RunOutputs { out: a.out.as_deref(), html: a.html.as_deref(), qlog: None, pcap: None };
    let (v, reports) = crate::run_loaded(&scenario, &what, None, &text, &outputs)?;
    let complete = reports.iter().all(|(_, r)| r.flows.iter().all(|f| f.completed_ms.is_some()));
    let p = &v["variants"][0]["report"]["flows"][0]["page"];
    let connections = v["variants"][0]["report"]["flows"][0]["connections"].as_u64().unwrap_or(1);
    let num = |k: &str| p[k].as_f64();
    if a.json {
        let out = serde_json::json!({
            "page": p["name"],
            "network": network,
            "fcp_ms": num("fcp_ms"),
            "lcp_ms": num("lcp_ms"),
            "si_ms": num("speed_index_ms"),
            "tti_ms": num("tti_ms"),
            // Total Blocking Time needs main-thread tasks: null without a trace.
            "tbt_ms": num("tbt_ms"),
            "trace": trace.as_ref().map(|t| t.display().to_string()),
            "plt_ms": num("plt_ms"),
            "objects": p["objects"],
            "connections": connections,
            "complete": complete,
            // What the import had to say (also printed as warnings): skipped or adjusted
            // entries, cache hits.
            "warnings": v["variants"][0]["report"].get("warnings").cloned().unwrap_or_else(|| serde_json::json!([])),
        });
        outln!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
    } else {
        outln!(
            "{} over {network} ({} {}, {} objects, {connections} connection{})",
            a.file,
            a.mode,
            a.cc,
            p["objects"],
            if connections == 1 { "" } else { "s" }
        );
        let cell = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.0}"));
        outln!("{:>8} {:>8} {:>8} {:>8} {:>8} {:>8}", "FCP ms", "LCP ms", "SI ms", "TTI ms", "TBT ms", "load ms");
        outln!(
            "{:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            cell(num("fcp_ms")),
            cell(num("lcp_ms")),
            cell(num("speed_index_ms")),
            cell(num("tti_ms")),
            cell(num("tbt_ms")),
            cell(num("plt_ms"))
        );
        match &trace {
            Some(t) => {
                outln!("(CPU from {} × {})", t.display(), a.cpu_slowdown.unwrap_or(if recorded { 1.0 } else { 4.0 }))
            }
            None if a.connections == "flow" => {
                outln!("(one connection open from the start: no DNS, TLS, server or CPU time)")
            }
            None if recorded_gaps => outln!(
                "(no trace: the recording's processing gaps × {} stand in for CPU; no Total Blocking Time)",
                a.cpu_slowdown.unwrap_or(1.0)
            ),
            None => outln!("(no trace: network and server time only, so no Total Blocking Time)"),
        }
    }
    if !complete {
        eprintln!("error: the page load did not complete within 600 s of simulated time");
        crate::INCOMPLETE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}
