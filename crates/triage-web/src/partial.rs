//! Partially delivered objects: what the page model does with an object whose datagram chunks
//! did not all arrive (thesis §5.8-5.9, §7; issue 11).
//!
//! An object sent unreliably ([`crate::reliability`]) travels as DATAGRAM chunks that are never
//! retransmitted. The receiver reassembles them by offset and reports, per object, a
//! [`PartialDelivery`]: bytes expected, bytes received, chunks lost, when its last chunk
//! arrived, and whether it is complete. A reliable object is a complete delivery
//! ([`PartialDelivery::complete`]).
//!
//! # When an object counts as delivered
//!
//! A complete object counts as delivered when its last byte arrives, exactly as a
//! [`Delivery`] says: no number changes for complete objects, whatever the configuration. An
//! incomplete object counts as delivered when its last chunk arrives (or, when no chunk
//! arrived, when the end of the object was signalled), or at its deadline if its type has one
//! in [`PartialConfig`] and the deadline comes first: the page stops waiting for it then
//! ([`PartialConfig::delivered_ns`]). Deadlines are counted from the request. With the default
//! configuration (no deadlines) an object counts at its last chunk.
//!
//! # Data loss
//!
//! The bytes an object did not receive are its data loss; [`data_loss`] sums them per object,
//! per content type, over the unreliable objects and over the page, in bytes and in percent of
//! the expected bytes (the thesis reports "data loss" in percent, §6.1: "close to 9%" for fonts
//! with JavaScript; the reproduction spec's PR-6 takes lost / bytes sent as datagrams, our
//! [`DataLoss::unreliable`], and also lost / page bytes, our [`DataLoss::page`]). An object with
//! no report at all counts as wholly lost (in the page and per-type totals; whether it was sent
//! unreliably is unknown, so not in the unreliable totals).
//!
//! The lost bytes of an object are split by what lost them ([`LossCauses`]): the network
//! (chunks that never arrived), a lost metadata datagram (chunks that arrived but that a
//! receiver which needs the object's metadata datagram could not use), the client giving up
//! (chunks that arrived after the client was done with the object) and the sender's full
//! datagram queue (chunks never sent). The four add up to the lost bytes of every object a
//! receiver reported (`network` takes what the others do not explain).
//!
//! # What a browser does with a partial object, and what the model does
//!
//! A response body with a hole cannot be handed to a browser as it is: the bytes after the
//! first missing chunk are unusable to any parser or decoder that reads in order, so in
//! practice the browser gets the prefix before the first loss (or nothing). The thesis leaves
//! rendering out (§7: web objects "must be fully intact to function correctly"); here is what
//! current browsers do:
//!
//! - **Font** (WOFF/WOFF2): a truncated font fails to decode (a WOFF2 file is one Brotli
//!   stream with a table directory, which the browser's sanitiser rejects when cut), so the
//!   font load fails and the text keeps the fallback font. Under `font-display: auto`/`block`
//!   the text is invisible for the block period (about 3 s in Chrome and Firefox) and then
//!   drawn in the fallback font; a failed load ends the block period at once. The page is
//!   readable, in the wrong typeface, and never swaps.
//! - **Script**: a truncated script is a syntax error, so none of it runs (a script is parsed
//!   as a whole before any of it executes). A parser-blocking script still unblocks the parser
//!   once its bytes have arrived (or failed), so the document goes on parsing. What the
//!   script would have done (fetch other objects, render content) does not happen.
//! - **Image**: decoders read in order. A progressive JPEG (or interlaced PNG/GIF) shows the
//!   whole picture at the quality of the scans received; other images show the part received,
//!   top rows first, or nothing, and are broken.
//! - **Stylesheet**: CSS parsing is error tolerant: the sheet is parsed up to the cut (an
//!   unfinished rule is closed at the end of the input), and the rules after the cut are lost;
//!   the page renders with part of its styling.
//! - **HTML** (an iframe's document): parsed up to the cut, like a slow connection that closed.
//!
//! The model does not render, so it treats them all alike: a partial object is counted as
//! delivered at its deadline or last chunk (above) for every QoE metric, and its missing bytes
//! as data loss. It does not drop the objects a failed script would have fetched (a simulated
//! page walk that wants that can skip the children of incomplete scripts), and it counts every
//! received byte, including bytes after a hole that a browser could not use.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{ContentType, ObjectId, Page};
use crate::qoe::{Deliveries, Delivery};

/// What the receiver reports for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialDelivery {
    /// Request sent (ns from navigation start).
    pub request_ns: u64,
    /// The last chunk's arrival; when no chunk arrived, when the end of the object was
    /// signalled (ns from navigation start).
    pub last_chunk_ns: u64,
    /// Bytes the object has.
    pub expected_bytes: u64,
    /// Distinct bytes received (each byte once, however often it arrived).
    pub received_bytes: u64,
    /// Chunks that never arrived.
    pub chunks_lost: u64,
    /// Every byte arrived.
    pub complete: bool,
    /// Sent as datagram chunks (false: a reliable stream).
    pub unreliable: bool,
    /// What lost the missing bytes (all 0 for a complete object).
    #[serde(default)]
    pub causes: LossCauses,
}

/// What lost an object's missing bytes (see the module docs). The four add up to
/// [`PartialDelivery::lost_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LossCauses {
    /// Chunks the network lost (sent, never arrived).
    pub network_bytes: u64,
    /// Chunks that arrived but were discarded because the object's metadata datagram did not
    /// (a receiver that needs it, `QuicConfig::datagram_needs_metadata` in triage-core).
    pub metadata_bytes: u64,
    /// Chunks that arrived after the client had given the object up.
    pub late_bytes: u64,
    /// Chunks the sender dropped because its datagram send queue was full (never sent).
    pub local_bytes: u64,
}

impl LossCauses {
    /// The causes of `lost_bytes` lost bytes given the metadata, late and local ones: the
    /// network takes the rest (the others are capped so that they never exceed `lost_bytes`).
    pub fn split(lost_bytes: u64, metadata_bytes: u64, late_bytes: u64, local_bytes: u64) -> LossCauses {
        let local_bytes = local_bytes.min(lost_bytes);
        let metadata_bytes = metadata_bytes.min(lost_bytes - local_bytes);
        let late_bytes = late_bytes.min(lost_bytes - local_bytes - metadata_bytes);
        LossCauses {
            network_bytes: lost_bytes - local_bytes - metadata_bytes - late_bytes,
            metadata_bytes,
            late_bytes,
            local_bytes,
        }
    }

    /// The sum of the four.
    pub fn total(&self) -> u64 {
        self.network_bytes + self.metadata_bytes + self.late_bytes + self.local_bytes
    }

    fn add(&mut self, o: &LossCauses) {
        self.network_bytes = self.network_bytes.saturating_add(o.network_bytes);
        self.metadata_bytes = self.metadata_bytes.saturating_add(o.metadata_bytes);
        self.late_bytes = self.late_bytes.saturating_add(o.late_bytes);
        self.local_bytes = self.local_bytes.saturating_add(o.local_bytes);
    }
}

impl PartialDelivery {
    /// A complete delivery of `bytes` bytes with the times of `d`, sent reliably.
    pub fn complete(d: Delivery, bytes: u64) -> PartialDelivery {
        PartialDelivery {
            request_ns: d.request_ns,
            last_chunk_ns: d.complete_ns,
            expected_bytes: bytes,
            received_bytes: bytes,
            chunks_lost: 0,
            complete: true,
            unreliable: false,
            causes: LossCauses::default(),
        }
    }

    /// Received bytes, at most the expected bytes.
    pub fn received(&self) -> u64 {
        self.received_bytes.min(self.expected_bytes)
    }

    /// Bytes that never arrived: expected minus received.
    pub fn lost_bytes(&self) -> u64 {
        self.expected_bytes - self.received()
    }
}

/// Per-object reports, keyed by object id (a BTreeMap: deterministic order).
pub type PartialDeliveries = BTreeMap<ObjectId, PartialDelivery>;

/// Complete reliable deliveries for every object of `deliveries`, with the page's wire bytes:
/// what an all-reliable run reports.
pub fn from_complete(page: &Page, deliveries: &Deliveries) -> PartialDeliveries {
    deliveries
        .iter()
        .filter(|(id, _)| id.index() < page.len())
        .map(|(id, d)| (*id, PartialDelivery::complete(*d, page.get(*id).wire_bytes)))
        .collect()
}

/// How long the page waits for an incomplete object, per content type, counted from its
/// request (`None`: until its last chunk). All `None` by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PartialConfig {
    /// HTML documents.
    pub html_ns: Option<u64>,
    /// Stylesheets.
    pub css_ns: Option<u64>,
    /// Scripts.
    pub js_ns: Option<u64>,
    /// Web fonts (a browser's block period is about 3 s, see the module docs).
    pub font_ns: Option<u64>,
    /// Images.
    pub image_ns: Option<u64>,
    /// Audio and video.
    pub media_ns: Option<u64>,
    /// JSON.
    pub json_ns: Option<u64>,
    /// Anything else.
    pub other_ns: Option<u64>,
}

impl PartialConfig {
    /// The deadline for objects of this type, ns after their request.
    pub fn deadline_ns(&self, kind: ContentType) -> Option<u64> {
        match kind {
            ContentType::Html => self.html_ns,
            ContentType::Css => self.css_ns,
            ContentType::Js => self.js_ns,
            ContentType::Font => self.font_ns,
            ContentType::Image => self.image_ns,
            ContentType::Media => self.media_ns,
            ContentType::Json => self.json_ns,
            ContentType::Other => self.other_ns,
        }
    }

    /// When an object of this type counts as delivered: a complete one at its last chunk; an
    /// incomplete one at the earlier of its last chunk and its deadline (never before its
    /// request).
    pub fn delivered_ns(&self, kind: ContentType, d: &PartialDelivery) -> u64 {
        if d.complete {
            return d.last_chunk_ns;
        }
        let end = match self.deadline_ns(kind) {
            Some(deadline) => d.last_chunk_ns.min(d.request_ns.saturating_add(deadline)),
            None => d.last_chunk_ns,
        };
        end.max(d.request_ns)
    }

    /// True if the deadline, not the last chunk, ended an incomplete object.
    pub fn cut_by_deadline(&self, kind: ContentType, d: &PartialDelivery) -> bool {
        !d.complete && self.deadline_ns(kind).is_some_and(|dl| d.request_ns.saturating_add(dl) < d.last_chunk_ns)
    }

    /// The deliveries the QoE estimates take ([`crate::qoe::estimate`]): every reported object
    /// at its request and [`PartialConfig::delivered_ns`]. Reports for ids the page does not
    /// have are ignored.
    pub fn deliveries(&self, page: &Page, partials: &PartialDeliveries) -> Deliveries {
        partials
            .iter()
            .filter(|(id, _)| id.index() < page.len())
            .map(|(id, d)| {
                let complete_ns = self.delivered_ns(page.get(*id).kind, d);
                (*id, Delivery { request_ns: d.request_ns, complete_ns })
            })
            .collect()
    }
}

/// How an object arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Every byte.
    Complete,
    /// Some bytes missing.
    Partial,
    /// No report at all: counted as wholly lost.
    Undelivered,
}

/// One object's data loss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ObjectLoss {
    /// The object.
    pub id: ObjectId,
    /// Its content type.
    pub kind: ContentType,
    /// Sent as datagram chunks (false when undelivered: unknown).
    pub unreliable: bool,
    /// How it arrived.
    pub arrival: Arrival,
    /// Bytes it has (the page's wire bytes when undelivered).
    pub expected_bytes: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Bytes lost (expected - received).
    pub lost_bytes: u64,
    /// Chunks lost.
    pub chunks_lost: u64,
    /// When it counts as delivered ([`PartialConfig::delivered_ns`]); `None` when undelivered.
    pub delivered_ns: Option<u64>,
    /// The deadline ended it before its last chunk.
    pub cut_by_deadline: bool,
    /// What lost its lost bytes (all 0 when undelivered: unknown).
    pub causes: LossCauses,
}

impl ObjectLoss {
    /// Lost bytes in percent of expected bytes (0 for an empty object).
    pub fn lost_pct(&self) -> f64 {
        pct(self.lost_bytes, self.expected_bytes)
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Data loss summed over a set of objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LossTotals {
    /// Objects.
    pub objects: usize,
    /// Of which complete.
    pub complete: usize,
    /// Of which partial.
    pub partial: usize,
    /// Of which undelivered.
    pub undelivered: usize,
    /// Bytes expected.
    pub expected_bytes: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Bytes lost.
    pub lost_bytes: u64,
    /// Chunks lost.
    pub chunks_lost: u64,
    /// What lost the lost bytes (undelivered objects' bytes are in none of them).
    pub causes: LossCauses,
}

impl LossTotals {
    /// Lost bytes in percent of expected bytes (0 when nothing was expected).
    pub fn lost_pct(&self) -> f64 {
        pct(self.lost_bytes, self.expected_bytes)
    }

    fn add(&mut self, o: &ObjectLoss) {
        self.objects += 1;
        match o.arrival {
            Arrival::Complete => self.complete += 1,
            Arrival::Partial => self.partial += 1,
            Arrival::Undelivered => self.undelivered += 1,
        }
        self.expected_bytes = self.expected_bytes.saturating_add(o.expected_bytes);
        self.received_bytes = self.received_bytes.saturating_add(o.received_bytes);
        self.lost_bytes = self.lost_bytes.saturating_add(o.lost_bytes);
        self.chunks_lost = self.chunks_lost.saturating_add(o.chunks_lost);
        self.causes.add(&o.causes);
    }
}

/// Data loss of a page load: per object, per content type, over the unreliable objects and
/// over the page (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataLoss {
    /// Every object of the page, in id order.
    pub objects: Vec<ObjectLoss>,
    /// Per content type (only types the page has).
    pub by_type: BTreeMap<ContentType, LossTotals>,
    /// Objects reported as sent unreliably.
    pub unreliable: LossTotals,
    /// The whole page.
    pub page: LossTotals,
}

/// Sums the data loss of a page load. Reports for ids the page does not have are ignored.
pub fn data_loss(page: &Page, partials: &PartialDeliveries, cfg: &PartialConfig) -> DataLoss {
    let mut out = DataLoss {
        objects: Vec::new(),
        by_type: BTreeMap::new(),
        unreliable: LossTotals::default(),
        page: LossTotals::default(),
    };
    for o in page.objects() {
        let loss = match partials.get(&o.id) {
            Some(d) => ObjectLoss {
                id: o.id,
                kind: o.kind,
                unreliable: d.unreliable,
                arrival: if d.complete { Arrival::Complete } else { Arrival::Partial },
                expected_bytes: d.expected_bytes,
                received_bytes: d.received(),
                lost_bytes: d.lost_bytes(),
                chunks_lost: d.chunks_lost,
                delivered_ns: Some(cfg.delivered_ns(o.kind, d)),
                cut_by_deadline: cfg.cut_by_deadline(o.kind, d),
                causes: d.causes,
            },
            None => ObjectLoss {
                id: o.id,
                kind: o.kind,
                unreliable: false,
                arrival: Arrival::Undelivered,
                expected_bytes: o.wire_bytes,
                received_bytes: 0,
                lost_bytes: o.wire_bytes,
                chunks_lost: 0,
                delivered_ns: None,
                cut_by_deadline: false,
                causes: LossCauses::default(),
            },
        };
        out.by_type.entry(o.kind).or_default().add(&loss);
        if loss.unreliable {
            out.unreliable.add(&loss);
        }
        out.page.add(&loss);
        out.objects.push(loss);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::object;
    use crate::qoe::{estimate, QoeConfig};

    const MS: u64 = 1_000_000;

    /// Root HTML 10 000 B; a font 50 000 B; an image 20 000 B; a stylesheet 3 000 B.
    fn page() -> Page {
        Page::new(
            "t",
            vec![
                object(0, None, "https://a.example/", ContentType::Html, 10_000),
                object(1, Some(0), "https://a.example/f.woff2", ContentType::Font, 50_000),
                object(2, Some(0), "https://a.example/i.jpg", ContentType::Image, 20_000),
                object(3, Some(0), "https://a.example/s.css", ContentType::Css, 3_000),
            ],
        )
        .unwrap()
    }

    fn reports() -> PartialDeliveries {
        let mut m = PartialDeliveries::new();
        m.insert(ObjectId(0), PartialDelivery::complete(Delivery { request_ns: 0, complete_ns: 100 * MS }, 10_000));
        // The font: 4 chunks lost, 45 000 of 50 000 bytes; last chunk at 450 ms.
        m.insert(
            ObjectId(1),
            PartialDelivery {
                request_ns: 200 * MS,
                last_chunk_ns: 450 * MS,
                expected_bytes: 50_000,
                received_bytes: 45_000,
                chunks_lost: 4,
                complete: false,
                unreliable: true,
                causes: LossCauses::split(5_000, 0, 0, 0),
            },
        );
        // The image, unreliable but complete at 600 ms.
        m.insert(
            ObjectId(2),
            PartialDelivery {
                request_ns: 100 * MS,
                last_chunk_ns: 600 * MS,
                expected_bytes: 20_000,
                received_bytes: 20_000,
                chunks_lost: 0,
                complete: true,
                unreliable: true,
                causes: LossCauses::default(),
            },
        );
        // The stylesheet: no report.
        m
    }

    #[test]
    fn hand_computed_loss() {
        let page = page();
        let loss = data_loss(&page, &reports(), &PartialConfig::default());
        let font = loss.objects[1];
        assert_eq!(
            (font.arrival, font.received_bytes, font.lost_bytes, font.chunks_lost),
            (Arrival::Partial, 45_000, 5_000, 4)
        );
        assert_eq!(font.lost_pct(), 10.0);
        assert_eq!(font.delivered_ns, Some(450 * MS));
        assert_eq!((loss.objects[3].arrival, loss.objects[3].lost_bytes), (Arrival::Undelivered, 3_000));
        // Page: 83 000 expected, 75 000 received, 8 000 lost = 9.6385...%.
        let p = loss.page;
        assert_eq!((p.objects, p.complete, p.partial, p.undelivered), (4, 2, 1, 1));
        assert_eq!((p.expected_bytes, p.received_bytes, p.lost_bytes, p.chunks_lost), (83_000, 75_000, 8_000, 4));
        assert!((p.lost_pct() - 800.0 / 83.0).abs() < 1e-12);
        // Unreliable: the font and the image, 70 000 expected, 5 000 lost = 7.142857...%.
        let u = loss.unreliable;
        assert_eq!((u.objects, u.expected_bytes, u.lost_bytes), (2, 70_000, 5_000));
        assert!((u.lost_pct() - 500.0 / 70.0).abs() < 1e-12);
        assert_eq!(loss.by_type[&ContentType::Css].lost_pct(), 100.0);
        assert_eq!(loss.by_type[&ContentType::Html].lost_pct(), 0.0);
        assert_eq!(loss.by_type.len(), 4);
    }

    #[test]
    fn loss_causes_add_up_to_the_lost_bytes() {
        // A font of 10 000 bytes whose metadata datagram was lost: its 10 000 bytes all
        // arrived and were discarded.
        let c = LossCauses::split(10_000, 10_000, 0, 0);
        assert_eq!((c.network_bytes, c.metadata_bytes, c.late_bytes, c.local_bytes), (0, 10_000, 0, 0));
        // 5 000 lost: 200 never sent, 1 000 without metadata, 500 after the give-up, the
        // network the other 3 300.
        let c = LossCauses::split(5_000, 1_000, 500, 200);
        assert_eq!((c.network_bytes, c.metadata_bytes, c.late_bytes, c.local_bytes), (3_300, 1_000, 500, 200));
        // Claims beyond the lost bytes are capped, in the order local, metadata, late.
        let c = LossCauses::split(5_000, 9_000, 100, 200);
        assert_eq!((c.network_bytes, c.metadata_bytes, c.late_bytes, c.local_bytes), (0, 4_800, 0, 200));
        assert_eq!(c.total(), 5_000);
        let page = page();
        let loss = data_loss(&page, &reports(), &PartialConfig::default());
        assert_eq!(loss.unreliable.causes, LossCauses { network_bytes: 5_000, ..LossCauses::default() });
        assert_eq!(loss.page.causes.total(), 5_000, "the undelivered stylesheet's 3 000 have no cause");
    }

    #[test]
    fn deadlines_end_incomplete_objects_only() {
        let page = page();
        // Fonts wait 100 ms, images 10 ms.
        let cfg = PartialConfig { font_ns: Some(100 * MS), image_ns: Some(10 * MS), ..PartialConfig::default() };
        let d = cfg.deliveries(&page, &reports());
        assert_eq!(d[&ObjectId(1)], Delivery { request_ns: 200 * MS, complete_ns: 300 * MS }); // cut at 200 + 100
        assert_eq!(d[&ObjectId(2)].complete_ns, 600 * MS); // complete: its last chunk
        assert_eq!(d[&ObjectId(0)].complete_ns, 100 * MS);
        assert!(!d.contains_key(&ObjectId(3)));
        let loss = data_loss(&page, &reports(), &cfg);
        assert!(loss.objects[1].cut_by_deadline && !loss.objects[2].cut_by_deadline);
        assert_eq!(loss.objects[1].delivered_ns, Some(300 * MS));
        // A deadline later than the last chunk changes nothing.
        let late = PartialConfig { font_ns: Some(900 * MS), ..PartialConfig::default() };
        assert_eq!(late.deliveries(&page, &reports())[&ObjectId(1)].complete_ns, 450 * MS);
        assert!(!late.cut_by_deadline(ContentType::Font, &reports()[&ObjectId(1)]));
        // Nothing arrived and the end came "before" the request: never before the request.
        let mut r = reports()[&ObjectId(1)];
        r.last_chunk_ns = 0;
        assert_eq!(cfg.delivered_ns(ContentType::Font, &r), 200 * MS);
    }

    #[test]
    fn complete_objects_keep_every_number() {
        let page = crate::builtin::cats_page();
        let d: Deliveries = [130u64, 282, 523, 815, 1327]
            .iter()
            .enumerate()
            .map(|(i, t)| (ObjectId(i as u32), Delivery { request_ns: i as u64 * MS, complete_ns: t * MS }))
            .collect();
        let partials = from_complete(&page, &d);
        let cfg = PartialConfig { font_ns: Some(1), js_ns: Some(1), css_ns: Some(1), ..PartialConfig::default() };
        for c in [PartialConfig::default(), cfg] {
            let back = c.deliveries(&page, &partials);
            assert_eq!(back, d);
            assert_eq!(estimate(&page, &back, &QoeConfig::default()), estimate(&page, &d, &QoeConfig::default()));
            let loss = data_loss(&page, &partials, &c);
            assert_eq!((loss.page.lost_bytes, loss.page.complete, loss.unreliable.objects), (0, 5, 0));
            assert_eq!(loss.page.expected_bytes, page.total_wire_bytes());
        }
    }

    #[test]
    fn config_reads_from_toml_and_rejects_unknown_fields() {
        let c: PartialConfig = toml::from_str("font_ns = 3000000000\n").unwrap();
        assert_eq!(c.deadline_ns(ContentType::Font), Some(3_000_000_000));
        assert_eq!(c.deadline_ns(ContentType::Js), None);
        assert!(toml::from_str::<PartialConfig>("fonts_ns = 1\n").is_err());
    }
}
