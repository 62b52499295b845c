//! Byte watermarks ([`Connection::watch_message_bytes`], [`Event::MessageBytes`]) on the TCP
//! byte stream: a message's bytes count once delivered in order, behind every message before
//! it, so a watermark fires at the arrival of the segment that carries its byte, or of the
//! retransmission that fills the hole before it.

use super::*;
use proptest::prelude::*;

const MSS: u64 = 1448;

/// (time, message, bytes) of every `MessageBytes` the client raised, and the times of its
/// `MessageComplete`s by message.
fn watermarks(h: &Harness) -> Vec<(u64, u32, u64)> {
    h.client_events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::MessageBytes { msg_id, bytes } => Some((*t, *msg_id, *bytes)),
            _ => None,
        })
        .collect()
}

/// When the client received the data segment starting at stream byte `offset` (sequence
/// number 1 + offset: the SYN takes 0), the first time.
fn arrival_of(h: &Harness, offset: u64) -> u64 {
    h.client_arrivals.iter().find(|a| a.1 == 1 + offset).expect("segment arrived").0
}

/// Two messages, 10,000 and 6,000 bytes, FIFO on one connection (2 Mbps, 25 ms each way);
/// the client registers `watches` before the first byte comes. `lose_offset`: the first
/// transmission of the data segment starting at that stream byte is dropped.
fn run(watches: &[(u32, u64)], lose_offset: Option<u64>) -> Harness {
    let mut h = Harness::new(ConnectionConfig::default(), 2_000_000, 25 * MS);
    for &(m, b) in watches {
        h.client.watch_message_bytes(m, b);
    }
    if let Some(offset) = lose_offset {
        let mut lost = false;
        h.drop = Box::new(move |_, c2s, p, _| {
            let hit = !c2s && !lost && p.payload_bytes > 0 && p.seq == 1 + offset;
            lost |= hit;
            hit
        });
    }
    let msgs = vec![
        MessageMeta { id: 0, len_bytes: 10_000, priority: 0 },
        MessageMeta { id: 1, len_bytes: 6_000, priority: 0 },
    ];
    h.run(20_000 * MS, serve_page(msgs));
    h
}

#[test]
fn a_watermark_fires_at_the_segment_that_carries_its_byte_with_the_bytes_delivered_so_far() {
    // 1 byte: the first segment (1448). 4000: the third (bytes 2896..4344). 10,000: the
    // message's last byte, in the seventh segment (8688..10136), which also completes it.
    // Message 1 starts at stream byte 10,000: its 1,000th byte is stream byte 10,999, in the
    // eighth segment (10136..11584), which holds 1,584 bytes of it.
    let h = run(&[(0, 1), (1, 1000)], None);
    let mut h2 = run(&[(0, 4000)], None);
    let h3 = run(&[(0, 10_000), (1, 6_001)], None);
    assert_eq!(watermarks(&h), vec![(arrival_of(&h, 0), 0, MSS), (arrival_of(&h, 7 * MSS), 1, 11_584 - 10_000)]);
    assert_eq!(watermarks(&h2), vec![(arrival_of(&h2, 2 * MSS), 0, 3 * MSS)]);
    // At the message's end: the event, then the completion, at the same instant.
    let complete0 = h3.completions()[0];
    assert_eq!(watermarks(&h3), vec![(complete0.0, 0, 10_000)]);
    let order: Vec<&Event> = h3.client_events.iter().map(|e| &e.1).collect();
    let at = order.iter().position(|e| matches!(e, Event::MessageBytes { .. })).unwrap();
    assert!(matches!(order[at + 1], Event::MessageComplete { msg_id: 0, .. }));
    // Beyond the message's length: never (message 1 completes, its watermark is forgotten).
    assert_eq!(h3.completions().len(), 2);
    // Registering after the bytes are in: raised at once, with what has arrived.
    h2.client.watch_message_bytes(7, 0);
    assert_eq!(h2.client.poll_event(), Some(Event::MessageBytes { msg_id: 7, bytes: 0 }));
}

#[test]
fn a_watermark_past_a_hole_waits_for_the_retransmission() {
    // The second segment (bytes 1448..2896) is lost; the third (2896..4344, holding byte
    // 4000) and those after it arrive and are held out of order. The watermark at 4000 fires
    // when the retransmission fills the hole: 4344 bytes are then in order up to it.
    let h = run(&[(0, 4000)], Some(MSS));
    let retransmit_arrival = h.client_arrivals.iter().find(|a| a.1 == 1 + MSS).expect("retransmission").0;
    assert!(retransmit_arrival > arrival_of(&h, 3 * MSS), "the segments beyond the hole came first");
    assert_eq!(watermarks(&h), vec![(retransmit_arrival, 0, 3 * MSS)]);
}

#[test]
fn no_watch_no_event() {
    let h = run(&[], None);
    assert!(watermarks(&h).is_empty());
    assert_eq!(h.completions().len(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any watermark on message 0 within its length fires exactly once, at the arrival of the
    /// segment holding its byte, reporting whole segments (capped at the length); beyond the
    /// length it never fires.
    #[test]
    fn watermarks_report_whole_segments(w in 0u64..=10_500) {
        let h = run(&[(0, w)], None);
        let got = watermarks(&h);
        if w > 10_000 {
            prop_assert!(got.is_empty());
        } else if w == 0 {
            // Reached at registration: raised before any byte arrived.
            prop_assert_eq!(got, vec![(0, 0, 0)]);
        } else {
            let segments = w.div_ceil(MSS);
            let expect = (arrival_of(&h, (segments - 1) * MSS), 0, (segments * MSS).min(10_000));
            prop_assert_eq!(got, vec![expect]);
        }
    }
}
