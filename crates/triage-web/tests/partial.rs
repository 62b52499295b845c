//! Properties of the data-loss summary: per-type totals add up to the page's, received + lost
//! = expected at every level, the unreliable totals are part of the page's, and complete
//! objects keep their times under any deadline configuration.

use proptest::prelude::*;
use triage_web::builtin::builtin;
use triage_web::partial::{
    data_loss, Arrival, LossCauses, LossTotals, PartialConfig, PartialDeliveries, PartialDelivery,
};
use triage_web::ObjectId;

const PAGES: [&str; 5] = ["cats", "youtube", "news", "news-v1", "news-v4"];

/// (reported?, expected, received, chunks lost, complete-if-full?, unreliable, request, duration)
type Raw = (bool, u64, u64, u64, bool, bool, u64, u64);

fn raw() -> impl Strategy<Value = Raw> {
    (
        prop::bool::weighted(0.9),
        0u64..3_000_000,
        0u64..3_600_000,
        0u64..3_000,
        any::<bool>(),
        any::<bool>(),
        0u64..10_000_000_000,
        0u64..10_000_000_000,
    )
}

fn config() -> impl Strategy<Value = PartialConfig> {
    let d = || prop::option::of(0u64..5_000_000_000);
    (d(), d(), d(), d(), d(), d(), d(), d()).prop_map(
        |(html_ns, css_ns, js_ns, font_ns, image_ns, media_ns, json_ns, other_ns)| PartialConfig {
            html_ns,
            css_ns,
            js_ns,
            font_ns,
            image_ns,
            media_ns,
            json_ns,
            other_ns,
        },
    )
}

fn check_totals(t: &LossTotals) -> Result<(), TestCaseError> {
    prop_assert_eq!(t.received_bytes + t.lost_bytes, t.expected_bytes);
    prop_assert_eq!(t.complete + t.partial + t.undelivered, t.objects);
    prop_assert!(t.causes.total() <= t.lost_bytes);
    prop_assert!((0.0..=100.0).contains(&t.lost_pct()));
    Ok(())
}

proptest! {
    #[test]
    fn data_loss_adds_up(page_ix in 0usize..PAGES.len(), raws in prop::collection::vec(raw(), 156), cfg in config()) {
        let page = builtin(PAGES[page_ix]).unwrap();
        let mut reports = PartialDeliveries::new();
        for o in page.objects() {
            let (reported, expected, received, lost_chunks, full, unreliable, request_ns, dur) = raws[o.id.index() % raws.len()];
            if !reported {
                continue;
            }
            // Sometimes a complete report: every byte (or more, counted once) arrived.
            let received = if full { expected.max(received) } else { received.min(expected.saturating_sub(1)) };
            let complete = received >= expected;
            // Some of the lost bytes to a lost metadata datagram, to giving up and to the
            // sender's queue; the network the rest.
            let lost = expected.saturating_sub(received);
            let causes = LossCauses::split(lost, lost / 3, lost / 5, lost / 7 + dur % 3);
            reports.insert(o.id, PartialDelivery {
                request_ns,
                last_chunk_ns: request_ns + dur,
                expected_bytes: expected,
                received_bytes: received,
                chunks_lost: if complete { 0 } else { lost_chunks },
                complete,
                unreliable,
                causes,
            });
        }
        let loss = data_loss(&page, &reports, &cfg);
        prop_assert_eq!(loss.objects.len(), page.len());

        // Per object.
        for (o, l) in page.objects().iter().zip(&loss.objects) {
            prop_assert_eq!(l.id, o.id);
            prop_assert_eq!(l.received_bytes + l.lost_bytes, l.expected_bytes);
            if l.arrival != Arrival::Undelivered {
                prop_assert_eq!(l.causes.total(), l.lost_bytes);
            }
            prop_assert!((0.0..=100.0).contains(&l.lost_pct()));
            match reports.get(&o.id) {
                None => {
                    prop_assert_eq!(l.arrival, Arrival::Undelivered);
                    prop_assert_eq!((l.expected_bytes, l.lost_bytes), (o.wire_bytes, o.wire_bytes));
                }
                Some(r) if r.complete => {
                    prop_assert_eq!(l.arrival, Arrival::Complete);
                    prop_assert_eq!(l.lost_bytes, 0);
                    prop_assert_eq!(l.delivered_ns, Some(r.last_chunk_ns));
                }
                Some(r) => {
                    prop_assert_eq!(l.arrival, Arrival::Partial);
                    let t = l.delivered_ns.unwrap();
                    prop_assert!(r.request_ns <= t && t <= r.last_chunk_ns);
                    prop_assert!(l.lost_bytes > 0);
                }
            }
        }

        // Per type: the sums are the page's.
        let mut sum = LossTotals::default();
        for t in loss.by_type.values() {
            check_totals(t)?;
            sum.objects += t.objects;
            sum.complete += t.complete;
            sum.partial += t.partial;
            sum.undelivered += t.undelivered;
            sum.expected_bytes += t.expected_bytes;
            sum.received_bytes += t.received_bytes;
            sum.lost_bytes += t.lost_bytes;
            sum.chunks_lost += t.chunks_lost;
            sum.causes.network_bytes += t.causes.network_bytes;
            sum.causes.metadata_bytes += t.causes.metadata_bytes;
            sum.causes.late_bytes += t.causes.late_bytes;
            sum.causes.local_bytes += t.causes.local_bytes;
        }
        prop_assert_eq!(sum, loss.page);
        check_totals(&loss.page)?;
        check_totals(&loss.unreliable)?;
        prop_assert!(loss.unreliable.expected_bytes <= loss.page.expected_bytes);
        prop_assert!(loss.unreliable.lost_bytes <= loss.page.lost_bytes);
        let unreliable: Vec<ObjectId> = reports.iter().filter(|(_, r)| r.unreliable).map(|(id, _)| *id).collect();
        prop_assert_eq!(loss.unreliable.objects, unreliable.len());

        // The QoE input: one delivery per report, at the object's delivered time.
        let d = cfg.deliveries(&page, &reports);
        prop_assert_eq!(d.keys().copied().collect::<Vec<_>>(), reports.keys().copied().collect::<Vec<_>>());
        for l in &loss.objects {
            prop_assert_eq!(d.get(&l.id).map(|x| x.complete_ns), l.delivered_ns);
        }
    }
}
