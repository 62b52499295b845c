//! ECN negotiation and feedback: classic ECN (RFC 3168), EECN (Ali, Hong & Kim, "A
//! Multilevel Network-assisted Congestion Feedback Mechanism", §4.1-§4.2, Tables 1 and 2)
//! and VCP (Xia et al., "One more bit is enough", SIGCOMM 2005, §3).
//!
//! Read first: RFC 3168 §5 (IP codepoints), §6.1.1 (negotiation), §6.1.2-§6.1.3 (ECE until
//! CWR, one reduction per window); then EECN Tables 1 and 2.
//!
//! # The two bits, per mode
//!
//! **IP ECN field** (`Packet::ecn`), as the sender sets it:
//!
//! | mode | SYN / SYN-ACK | new data | retransmission | pure ACK |
//! | --- | --- | --- | --- | --- |
//! | classic | Not-ECT (RFC 3168 §6.1.1) | ECT(0) `10` | Not-ECT (§6.1.5) | Not-ECT |
//! | EECN | ECT(1) `01` (EECN §4.2) | ECT(1) `01` | ECT(1) `01` | Not-ECT |
//! | VCP | Not-ECT | low-load `01` | low-load `01` | Not-ECT |
//!
//! How a receiver reads the IP field it got (EECN Table 1; VCP §3.1):
//! classic: `11` (CE) is congestion; EECN: `01` none, `10` CL(1), `11` CL(2) (a CE set by a
//! classic ECN router therefore reads as CL(2), EECN §5); VCP: `01` low-load, `10`
//! high-load, `11` overload.
//!
//! **TCP ECE/CWR flags** (`ECE CWR`, EECN Table 2):
//!
//! | packet | classic | EECN | VCP |
//! | --- | --- | --- | --- |
//! | SYN | `1 1` ECN-setup | `0 1` EECN-capable | `1 1` |
//! | SYN-ACK | `1 0` ECN-setup | echo of the SYN's level: `0 1` none, `1 0` CL(1), `1 1` CL(2) | `1 1` |
//! | first packet after the SYN-ACK (client) | as below | echo of the SYN-ACK's level, same code | as below |
//! | later ACKs (receiver's echo) | `1 ·` ECE while echoing CE | `1 0` CL(1), `1 1` CL(2), `0 ·` none | load echo: `0 1` low, `1 0` high, `1 1` overload |
//! | data (sender's CWR) | `· 1` CWR after a reduction | `0 1` CWR, only on a packet that echoes nothing | unused |
//!
//! A peer that answers a SYN without the expected bits is not capable: the connection
//! falls back to no ECN (Not-ECT everywhere), as EECN §4.2 Scenario 1 describes. An EECN
//! end answers a classic ECN-setup SYN (`1 1`) with classic ECN, so a classic client works
//! with an EECN server.
//!
//! # Receiver echo
//! - classic (RFC 3168 §6.1.3): ECE on every ACK from the first CE until a data packet with
//!   CWR arrives.
//! - EECN (§4.2, §4.4.2): CL(2) is echoed until CWR arrives; CL(1) is echoed on the next 3
//!   ACKs and then stops (no CWR needed). CL(2) wins when both are pending.
//! - VCP (§3.1): each ACK echoes the highest load code of the data packets it acknowledges.
//!
//! # Sender reaction
//! The connection hands the decoded level to the controller as
//! [`CongestionSignal::Ecn`](crate::cc::CongestionSignal::Ecn) at most once per window of
//! data (RFC 3168 §6.1.2: not again until everything sent at the reaction is acknowledged),
//! except that a higher level than the one reacted to (CL(2) after CL(1)) is passed at once,
//! and never during loss recovery. VCP gets every ACK's echo in
//! [`AckSample::ecn_echo`](crate::cc::AckSample::ecn_echo) and times its own decisions.

use serde::{Deserialize, Serialize};

use crate::wire::{Ecn, TcpFlags};

/// Which ECN variant an end asks for (and, after the handshake, what was negotiated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// No ECN: Not-ECT everywhere, no ECE/CWR.
    #[default]
    Off,
    /// RFC 3168 ECN.
    Classic,
    /// EECN: two congestion levels in the IP field and in ECE/CWR.
    Eecn,
    /// VCP's load-factor codes in the IP field, echoed in ECE/CWR.
    Vcp,
}

impl EcnMode {
    /// The codepoint on a new data segment (see the module table).
    pub fn data_codepoint(self, retransmission: bool) -> Ecn {
        match self {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic if retransmission => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::Eecn | EcnMode::Vcp => Ecn::Ect1,
        }
    }

    /// Flags on a SYN (EECN Table 2, RFC 3168 §6.1.1).
    pub fn syn_flags(self) -> u8 {
        match self {
            EcnMode::Off => 0,
            EcnMode::Classic | EcnMode::Vcp => TcpFlags::ECE | TcpFlags::CWR,
            EcnMode::Eecn => TcpFlags::CWR,
        }
    }

    /// The codepoint on a SYN or SYN-ACK (EECN §4.2: ECT(1) so routers can mark it).
    pub fn handshake_codepoint(self) -> Ecn {
        match self {
            EcnMode::Eecn => Ecn::Ect1,
            _ => Ecn::NotEct,
        }
    }

    /// What a server configured with `self` negotiates from a received SYN's flags.
    pub fn accept(self, syn_flags: TcpFlags) -> EcnMode {
        let ece = syn_flags.has(TcpFlags::ECE);
        let cwr = syn_flags.has(TcpFlags::CWR);
        match (self, ece, cwr) {
            (EcnMode::Off, _, _) => EcnMode::Off,
            // RFC 3168 ECN-setup SYN: a classic or EECN server answers with classic ECN.
            (EcnMode::Classic | EcnMode::Eecn, true, true) => EcnMode::Classic,
            (EcnMode::Eecn, false, true) => EcnMode::Eecn,
            (EcnMode::Vcp, true, true) => EcnMode::Vcp,
            _ => EcnMode::Off,
        }
    }

    /// What a client configured with `self` concludes from the SYN-ACK's flags: the
    /// negotiated mode and, for EECN, the level the SYN experienced (EECN §4.2).
    pub fn on_syn_ack(self, flags: TcpFlags) -> (EcnMode, u8) {
        let ece = flags.has(TcpFlags::ECE);
        let cwr = flags.has(TcpFlags::CWR);
        match (self, ece, cwr) {
            (EcnMode::Classic, true, false) => (EcnMode::Classic, 0),
            (EcnMode::Eecn, _, _) if ece || cwr => (EcnMode::Eecn, eecn_level_from_flags(flags, true)),
            (EcnMode::Vcp, true, true) => (EcnMode::Vcp, 0),
            _ => (EcnMode::Off, 0),
        }
    }
}

/// EECN Table 1: the congestion level an IP codepoint carries (0 none, 1 CL(1), 2 CL(2)).
pub fn eecn_level_of(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct | Ecn::Ect1 => 0,
        Ecn::Ect0 => 1,
        Ecn::Ce => 2,
    }
}

/// EECN Table 1: the IP codepoint for a level (1 → `10`, 2 → `11`).
pub fn eecn_codepoint(level: u8) -> Ecn {
    match level {
        0 => Ecn::Ect1,
        1 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// EECN Table 2: the ECE/CWR bits that echo `level`. In the handshake (`handshake` true)
/// level 0 is `0 1` (EECN-capable, no mark); afterwards level 0 echoes nothing.
pub fn eecn_echo_flags(level: u8, handshake: bool) -> u8 {
    match level {
        0 if handshake => TcpFlags::CWR,
        0 => 0,
        1 => TcpFlags::ECE,
        _ => TcpFlags::ECE | TcpFlags::CWR,
    }
}

/// EECN Table 2, read back: `1 0` is CL(1), `1 1` is CL(2); without ECE there is no echo
/// (in the handshake `0 1` means "capable, no congestion").
pub fn eecn_level_from_flags(flags: TcpFlags, _handshake: bool) -> u8 {
    match (flags.has(TcpFlags::ECE), flags.has(TcpFlags::CWR)) {
        (true, true) => 2,
        (true, false) => 1,
        _ => 0,
    }
}

/// VCP §3.1: the load code of an IP codepoint (1 low, 2 high, 3 overload; 0 not VCP).
pub fn vcp_load_of(ecn: Ecn) -> u8 {
    ecn as u8
}

/// VCP load code as ECE/CWR bits (the same two-bit value, ECE high).
pub fn vcp_echo_flags(load: u8) -> u8 {
    (if load & 0b10 != 0 { TcpFlags::ECE } else { 0 }) | (if load & 0b01 != 0 { TcpFlags::CWR } else { 0 })
}

/// VCP load code read back from ECE/CWR.
pub fn vcp_load_from_flags(flags: TcpFlags) -> u8 {
    ((flags.has(TcpFlags::ECE) as u8) << 1) | flags.has(TcpFlags::CWR) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_round_trip() {
        for level in 0..=2u8 {
            assert_eq!(eecn_level_of(eecn_codepoint(level)), level);
            assert_eq!(eecn_level_from_flags(TcpFlags(eecn_echo_flags(level, true)), true), level);
        }
        for load in 0..=3u8 {
            assert_eq!(vcp_load_from_flags(TcpFlags(vcp_echo_flags(load))), load);
        }
        assert_eq!(eecn_level_of(Ecn::Ce), 2, "a classic router's CE reads as CL(2) (EECN §5)");
    }

    #[test]
    fn negotiation_and_fallback() {
        let syn = TcpFlags(TcpFlags::SYN | EcnMode::Eecn.syn_flags());
        assert_eq!(EcnMode::Eecn.accept(syn), EcnMode::Eecn);
        assert_eq!(EcnMode::Classic.accept(syn), EcnMode::Off, "a classic server does not read CWR alone as ECN-setup");
        assert_eq!(EcnMode::Off.accept(syn), EcnMode::Off);
        let classic_syn = TcpFlags(TcpFlags::SYN | EcnMode::Classic.syn_flags());
        assert_eq!(EcnMode::Eecn.accept(classic_syn), EcnMode::Classic);
        // A plain SYN-ACK: the EECN client falls back.
        assert_eq!(EcnMode::Eecn.on_syn_ack(TcpFlags(TcpFlags::SYN | TcpFlags::ACK)), (EcnMode::Off, 0));
        assert_eq!(
            EcnMode::Eecn.on_syn_ack(TcpFlags(TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE)),
            (EcnMode::Eecn, 1)
        );
    }
}
