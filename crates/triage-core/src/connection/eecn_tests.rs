//! EECN §4.2's three scenarios (Figs. 2-4) as packet scripts, plus classic ECN (RFC 3168)
//! and fallback. Packets are handed between two connections by hand; a "router" marks by
//! rewriting the IP ECN field.

use super::*;
use crate::cc::ControllerKind;

const MS: u64 = 1_000_000;
const A: Addr = Addr { node: 1, port: 40000 };
const B: Addr = Addr { node: 2, port: 80 };

fn cfg(kind: ControllerKind) -> ConnectionConfig {
    ConnectionConfig { controller: kind, delayed_ack_segments: 1, ..Default::default() }
}

fn drain(c: &mut Connection, now: u64) -> Vec<Packet> {
    let mut v = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        v.push(p);
    }
    v
}

fn ece_cwr(p: &Packet) -> (bool, bool) {
    (p.flags.has(TcpFlags::ECE), p.flags.has(TcpFlags::CWR))
}

/// Runs a handshake with the SYN and SYN-ACK marked as given; returns the two ends, the
/// client's first flight (after it writes `client_bytes`) and the time.
fn handshake(
    a_cfg: ConnectionConfig,
    b_cfg: ConnectionConfig,
    syn_mark: Option<Ecn>,
    synack_mark: Option<Ecn>,
    client_bytes: u64,
) -> (Connection, Connection, Vec<Packet>, u64) {
    let mut a = Connection::connect(a_cfg, A, B);
    let mut syn = drain(&mut a, 0).remove(0);
    if let Some(m) = syn_mark {
        syn.ecn = m;
    }
    let mut b = Connection::accept(b_cfg, MS, &syn).expect("a SYN");
    let mut synack = drain(&mut b, MS).remove(0);
    if let Some(m) = synack_mark {
        synack.ecn = m;
    }
    a.handle_packet(2 * MS, &synack);
    if client_bytes > 0 {
        a.write(2 * MS, 0, client_bytes, None);
    }
    let flight = drain(&mut a, 2 * MS);
    (a, b, flight, 2 * MS)
}

fn data_segments(v: &[Packet]) -> usize {
    v.iter().filter(|p| p.payload_bytes > 0).count()
}

#[test]
fn eecn_syn_and_syn_ack_bits_follow_table_2() {
    let mut a = Connection::connect(cfg(ControllerKind::Eecn), A, B);
    let syn = drain(&mut a, 0).remove(0);
    assert_eq!(ece_cwr(&syn), (false, true), "SYN: ECE=0 CWR=1, EECN-capable");
    assert_eq!(syn.ecn, Ecn::Ect1, "SYN carries ECT(1) so routers can mark it (§4.2)");
    for (mark, expect) in [(Ecn::Ect1, (false, true)), (Ecn::Ect0, (true, false)), (Ecn::Ce, (true, true))] {
        let mut s = syn.clone();
        s.ecn = mark;
        let mut b = Connection::accept(cfg(ControllerKind::Eecn), MS, &s).unwrap();
        let synack = drain(&mut b, MS).remove(0);
        assert_eq!(ece_cwr(&synack), expect, "SYN-ACK echoes the SYN's level {mark:?}");
        assert_eq!(synack.ecn, Ecn::Ect1);
    }
}

/// Fig. 2 (Scenario 1): the receiver A opens; no handshake marks, so B's initial window is
/// 10; B's 8th segment meets CL(2); A echoes CL(2) until B's CWR; B reduces once.
#[test]
fn scenario_1_receiver_opens_cl2_on_data() {
    let (mut a, mut b, flight, t) = handshake(cfg(ControllerKind::Eecn), cfg(ControllerKind::Eecn), None, None, 0);
    assert_eq!(flight.len(), 1, "A's handshake ACK");
    assert_eq!(ece_cwr(&flight[0]), (false, true), "ACK: `0 1`, the SYN-ACK met no congestion");
    b.handle_packet(t + MS, &flight[0]);
    assert_eq!(b.state(), State::Established);
    assert_eq!(b.handshake_congestion_level(), 0);
    b.write(t + MS, 0, 100_000, None);
    let mut data = drain(&mut b, t + MS);
    assert_eq!(data_segments(&data), 10, "initial window 10 without marks (§4.4.1)");
    assert!(data.iter().all(|p| p.ecn == Ecn::Ect1 && !p.flags.has(TcpFlags::CWR)));
    data[7].ecn = Ecn::Ce; // CL(2) at a router
    let cwnd_before = b.cwnd_bytes();
    let mut acks = Vec::new();
    for (i, p) in data.iter().enumerate() {
        a.handle_packet(t + 2 * MS + i as u64, p);
        acks.extend(drain(&mut a, t + 2 * MS + i as u64));
    }
    assert_eq!(acks.len(), 10);
    for (i, ack) in acks.iter().enumerate() {
        assert_eq!(
            ece_cwr(ack),
            if i >= 7 { (true, true) } else { (false, false) },
            "ACK {i}: CL(2) echoed from the marked segment on"
        );
    }
    let mut out = Vec::new();
    for (i, ack) in acks.iter().enumerate() {
        b.handle_packet(t + 3 * MS + i as u64, ack);
        out.extend(drain(&mut b, t + 3 * MS + i as u64));
    }
    assert_eq!(b.stats().ecn_responses[2], 1, "one reduction per window for CL(2)");
    assert!(b.cwnd_bytes() <= cwnd_before / 4, "Algorithm 1: cwnd/d or cwnd/(d/2)");
    // Keep the exchange going until B's CWR reaches A; A echoes CL(2) until then, not after.
    let mut now = t + 4 * MS;
    let mut cwr_seen = 0;
    for _ in 0..6 {
        let mut acks = Vec::new();
        for p in &out {
            if p.flags.has(TcpFlags::CWR) {
                assert!(!p.flags.has(TcpFlags::ECE), "CWR alone on data (Table 2)");
                cwr_seen += 1;
            }
            a.handle_packet(now, p);
            let got = drain(&mut a, now);
            for ack in &got {
                assert_eq!(ack.flags.has(TcpFlags::ECE), cwr_seen == 0, "echo until CWR, none after");
            }
            acks.extend(got);
        }
        now += MS;
        out.clear();
        for ack in &acks {
            b.handle_packet(now, ack);
            out.extend(drain(&mut b, now));
        }
        now += MS;
    }
    assert_eq!(cwr_seen, 1, "CWR once");
    assert_eq!(b.stats().ecn_responses[2], 1);
}

/// Fig. 3 (Scenario 2): the sender B opens; its SYN meets CL(1); the SYN-ACK echoes it
/// (`1 0`) and B starts with 5 segments.
#[test]
fn scenario_2_sender_opens_syn_cl1_initial_window_5() {
    let (a, _b, flight, _) =
        handshake(cfg(ControllerKind::Eecn), cfg(ControllerKind::Eecn), Some(Ecn::Ect0), None, 100_000);
    assert_eq!(a.ecn_mode(), EcnMode::Eecn);
    assert_eq!(a.handshake_congestion_level(), 1);
    assert_eq!(data_segments(&flight), 5, "initial window 5 after CL(1)");
    assert_eq!(ece_cwr(&flight[0]), (false, true), "the first packet echoes the SYN-ACK's level: none");
}

/// Fig. 4 (Scenario 3): both ends send; the SYN meets CL(1) and the SYN-ACK CL(2): the
/// opener starts with 5 segments, echoes CL(2) on its ACK, and the other end starts with 1.
#[test]
fn scenario_3_both_marked_bidirectional() {
    let (a, mut b, flight, t) =
        handshake(cfg(ControllerKind::Eecn), cfg(ControllerKind::Eecn), Some(Ecn::Ect0), Some(Ecn::Ce), 100_000);
    assert_eq!(a.handshake_congestion_level(), 1);
    assert_eq!(data_segments(&flight), 5);
    assert_eq!(ece_cwr(&flight[0]), (true, true), "A echoes the SYN-ACK's CL(2)");
    b.handle_packet(t + MS, &flight[0]);
    assert_eq!(b.handshake_congestion_level(), 2);
    b.write(t + MS, 0, 100_000, None);
    let out = drain(&mut b, t + MS);
    assert_eq!(data_segments(&out), 1, "initial window 1 after CL(2)");
    assert_eq!(b.stats().ecn_responses, [0; 4], "a handshake echo sets the window, it is no data-phase response");
}

#[test]
fn cl1_is_echoed_on_three_acks_without_cwr() {
    let (mut a, mut b, flight, t) = handshake(cfg(ControllerKind::Eecn), cfg(ControllerKind::Eecn), None, None, 0);
    b.handle_packet(t + MS, &flight[0]);
    b.write(t + MS, 0, 100_000, None);
    let mut data = drain(&mut b, t + MS);
    data[0].ecn = Ecn::Ect0; // CL(1)
    let mut acks = Vec::new();
    for p in &data {
        a.handle_packet(t + 2 * MS, p);
        acks.extend(drain(&mut a, t + 2 * MS));
    }
    let echoed: Vec<bool> = acks.iter().map(|p| p.flags.has(TcpFlags::ECE)).collect();
    assert_eq!(&echoed[..5], &[true, true, true, false, false]);
    assert!(acks.iter().all(|p| !p.flags.has(TcpFlags::CWR)), "CL(1) echo is `1 0`");
}

#[test]
fn eecn_sender_falls_back_with_a_plain_receiver() {
    for other in [ControllerKind::NewReno, ControllerKind::NewRenoEcn] {
        let (a, b, flight, _) = handshake(cfg(ControllerKind::Eecn), cfg(other.clone()), None, None, 100_000);
        assert_eq!(a.ecn_mode(), EcnMode::Off, "peer {other:?} is not EECN-capable");
        assert_eq!(b.ecn_mode(), EcnMode::Off);
        assert_eq!(data_segments(&flight), 10);
        assert!(flight
            .iter()
            .all(|p| p.ecn == Ecn::NotEct && !p.flags.has(TcpFlags::ECE) && !p.flags.has(TcpFlags::CWR)));
    }
}

#[test]
fn classic_client_with_eecn_server_negotiates_classic() {
    let (a, b, flight, _) = handshake(cfg(ControllerKind::NewRenoEcn), cfg(ControllerKind::Eecn), None, None, 10_000);
    assert_eq!(a.ecn_mode(), EcnMode::Classic);
    assert_eq!(b.ecn_mode(), EcnMode::Classic);
    assert!(flight.iter().filter(|p| p.payload_bytes > 0).all(|p| p.ecn == Ecn::Ect0), "RFC 3168: ECT(0) on data");
}

#[test]
fn classic_ecn_echo_until_cwr_and_one_reduction_per_window() {
    let (mut a, mut b, flight, t) =
        handshake(cfg(ControllerKind::NewRenoEcn), cfg(ControllerKind::NewRenoEcn), None, None, 0);
    let syn_flags = TcpFlags(TcpFlags::SYN | EcnMode::Classic.syn_flags());
    assert_eq!(ece_cwr(&Packet { flags: syn_flags, ..Default::default() }), (true, true));
    b.handle_packet(t + MS, &flight[0]);
    b.write(t + MS, 0, 100_000, None);
    let mut data = drain(&mut b, t + MS);
    assert!(data.iter().all(|p| p.ecn == Ecn::Ect0));
    data[2].ecn = Ecn::Ce;
    data[5].ecn = Ecn::Ce;
    let mut acks = Vec::new();
    for p in &data {
        a.handle_packet(t + 2 * MS, p);
        acks.extend(drain(&mut a, t + 2 * MS));
    }
    assert!(acks[2..].iter().all(|p| p.flags.has(TcpFlags::ECE)) && !acks[1].flags.has(TcpFlags::ECE));
    let before = b.cwnd_bytes();
    for ack in &acks {
        b.handle_packet(t + 3 * MS, ack);
    }
    assert_eq!(b.stats().ecn_responses[1], 1, "RFC 3168 §6.1.2: once per window");
    assert!(b.cwnd_bytes() < before);
    let out = drain(&mut b, t + 3 * MS);
    assert!(out[0].flags.has(TcpFlags::CWR) && out.iter().skip(1).all(|p| !p.flags.has(TcpFlags::CWR)));
}
