//! Head-of-line blocking: a packet-script test over a two-endpoint harness (fixed one-way
//! delay, one chosen packet dropped). In QUIC mode a loss on one stream does not hold the
//! other streams back; in TCP mode the same loss holds every byte behind it.

use std::collections::BTreeMap;

use triage_core::sched::stream::StreamSchedulerKind;
use triage_core::wire::{Addr, Packet};
use triage_core::{ConnectionConfig, Endpoint, Event, TransportMode};

const OWD_NS: u64 = 10_000_000;
/// Both directions serialize at 10 Mbps.
const NS_PER_BYTE: u64 = 800;

/// Runs a client and a server; the server writes two 6000-byte messages (both fit the initial window) (0 then 1) as soon as
/// it is connected. `drop` says whether the server's n-th data-carrying packet is lost.
/// Returns each message's completion time at the client, the time the retransmission of the
/// lost data arrived, and the message the lost packet carried (its first chunk's).
fn run(cfg: ConnectionConfig, drop_nth: usize) -> (BTreeMap<u32, u64>, u64, u32) {
    let (ca, sa) = (Addr { node: 1, port: 40000 }, Addr { node: 0, port: 80 });
    let mut client = Endpoint::connect(cfg.clone(), ca, sa);
    let mut server: Option<Endpoint> = None;
    // (arrival time, sequence) -> (to server?, packet)
    let mut wire: BTreeMap<(u64, u64), (bool, Packet)> = BTreeMap::new();
    let mut seq = 0u64;
    let mut now = 0u64;
    let mut data_packets = 0usize;
    let mut done = BTreeMap::new();
    let mut lost_payload: Option<Packet> = None;
    let mut rtx_arrival = u64::MAX;
    let mut free = [0u64; 2];
    let mut arrival = |to_server: bool, now: u64, p: &Packet| {
        let f = &mut free[to_server as usize];
        *f = (*f).max(now) + p.wire_bytes() as u64 * NS_PER_BYTE;
        *f + OWD_NS
    };
    for _ in 0..100_000 {
        // Drain both ends.
        while let Some(p) = client.poll_transmit(now) {
            wire.insert((arrival(true, now, &p), seq), (true, p));
            seq += 1;
        }
        if let Some(s) = server.as_mut() {
            while let Some(e) = s.poll_event() {
                if e == Event::Connected {
                    s.write(now, 0, 6_000, Some(1));
                    s.write(now, 1, 6_000, Some(1));
                    s.close();
                }
            }
            while let Some(p) = s.poll_transmit(now) {
                let carries_data = p.payload_bytes > 1000 || p.quic.as_ref().is_some_and(|q| q.payload_bytes > 1000);
                if carries_data {
                    data_packets += 1;
                    if data_packets == drop_nth {
                        lost_payload = Some(p);
                        continue;
                    }
                }
                wire.insert((arrival(false, now, &p), seq), (false, p));
                seq += 1;
            }
        }
        while let Some(e) = client.poll_event() {
            if let Event::MessageComplete { msg_id, .. } = e {
                done.entry(msg_id).or_insert(now);
            }
        }
        if done.len() == 2 {
            break;
        }
        // Next event: a delivery or a timer.
        let timers = [client.poll_timeout(), server.as_ref().and_then(|s| s.poll_timeout())];
        let next_timer = timers.iter().flatten().min().copied();
        let next_wire = wire.keys().next().map(|k| k.0);
        let Some(t) = [next_timer, next_wire].iter().flatten().min().copied() else { break };
        now = t.max(now);
        if next_wire == Some(now) {
            let (_, (to_server, p)) = wire.pop_first().expect("present");
            if to_server {
                match server.as_mut() {
                    Some(s) => s.handle_packet(now, &p),
                    None => server = Endpoint::accept(cfg.clone(), now, &p),
                }
            } else {
                // The first data packet after the loss that starts at the lost bytes is the
                // retransmission (TCP: same sequence number).
                if let (Some(l), true) = (&lost_payload, rtx_arrival == u64::MAX) {
                    let same_tcp = l.quic.is_none() && p.seq == l.seq && p.payload_bytes > 0;
                    let same_quic = l.quic.as_ref().zip(p.quic.as_ref()).is_some_and(|(a, b)| {
                        let chunks = |d: &triage_core::quic::QuicDatagram| {
                            d.packets
                                .iter()
                                .flat_map(|q| q.frames.iter())
                                .filter_map(|f| match f {
                                    triage_core::quic::Frame::Stream { chunk, .. } => {
                                        Some((chunk.msg_id, chunk.msg_offset_bytes))
                                    }
                                    _ => None,
                                })
                                .collect::<Vec<_>>()
                        };
                        let lost = chunks(a);
                        chunks(b).iter().any(|c| lost.contains(c))
                    });
                    if same_tcp || same_quic {
                        rtx_arrival = now;
                    }
                }
                client.handle_packet(now, &p);
            }
        } else {
            client.handle_timeout(now);
            if let Some(s) = server.as_mut() {
                s.handle_timeout(now);
            }
        }
    }
    let lost = lost_payload.expect("a packet was dropped");
    let lost_msg = match &lost.quic {
        Some(q) => q
            .packets
            .iter()
            .flat_map(|x| x.frames.iter())
            .find_map(|f| match f {
                triage_core::quic::Frame::Stream { chunk, .. } => Some(chunk.msg_id),
                _ => None,
            })
            .expect("a stream frame"),
        None => lost.chunks[0].msg_id,
    };
    (done, rtx_arrival, lost_msg)
}

#[test]
fn quic_streams_are_not_held_behind_a_loss_on_another_stream() {
    let mut cfg = ConnectionConfig { mode: TransportMode::Quic, ..Default::default() };
    cfg.quic.scheduler = StreamSchedulerKind::Rr;
    // Round robin: data packets alternate between the two streams.
    let (done, rtx, lost) = run(cfg, 3);
    let other = 1 - lost;
    assert_eq!(done.len(), 2, "both messages complete");
    assert!(rtx < u64::MAX, "the lost data was sent again");
    assert!(
        done[&other] < rtx,
        "message {other} complete at {} ns, before the retransmission at {rtx} ns",
        done[&other]
    );
    assert!(done[&lost] >= rtx, "message {lost} waits for its retransmission");
}

#[test]
fn tcp_holds_every_later_byte_behind_the_same_loss() {
    let cfg = ConnectionConfig { min_rto_ns: 200_000_000, ..Default::default() };
    let (done, rtx, lost) = run(cfg, 3);
    assert_eq!(lost, 0, "the third segment holds message 0's bytes");
    assert_eq!(done.len(), 2, "both messages complete");
    assert!(rtx < u64::MAX, "the lost segment was sent again");
    // Message 1's bytes all follow the hole in the one byte stream.
    assert!(done[&1] >= rtx, "message 1 complete at {} ns, not before the retransmission at {rtx} ns", done[&1]);
}
