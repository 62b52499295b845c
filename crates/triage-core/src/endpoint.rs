//! Either framing mode behind one enum, as the simulator (and later real sockets) drive it.
//!
//! The two modes differ in their control loop (what an ACK covers, how data is sent again,
//! which timer recovers the tail), so they are two state machines over shared components
//! (controllers, pacing and delivery-rate state in [`crate::path`], schedulers, ECN), and
//! the driver matches on the mode: no dynamic dispatch in the packet loop.

use crate::config::{ConnectionConfig, TransportMode};
use crate::connection::{Connection, ConnectionStats, Event, State};
use crate::quic::QuicConnection;
use crate::wire::{Addr, Packet};
use std::sync::Arc;

/// A connection in TCP or QUIC mode.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // TCP mode, the common case, stays unboxed in the packet loop.
pub enum Endpoint {
    /// TCP mode.
    Tcp(Connection),
    /// QUIC mode.
    Quic(Box<QuicConnection>),
}

macro_rules! both {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Endpoint::Tcp($c) => $e,
            Endpoint::Quic($c) => $e,
        }
    };
}

impl Endpoint {
    /// Active open in the mode the settings name.
    ///
    /// `cfg` may be an `Arc` shared with other connections (TCP mode keeps the shared copy;
    /// QUIC mode takes one of its own).
    pub fn connect(cfg: impl Into<Arc<ConnectionConfig>>, local: Addr, remote: Addr) -> Self {
        let cfg = cfg.into();
        let seed = cfg.seed;
        Self::connect_seeded(cfg, seed, local, remote)
    }

    /// [`connect`](Self::connect) with the congestion controller's seed given apart from the
    /// settings, so that connections differing only in their seed can share one copy of
    /// them ([`Connection::connect_seeded`]; QUIC mode takes a copy with `seed` in it).
    pub fn connect_seeded(cfg: impl Into<Arc<ConnectionConfig>>, seed: u64, local: Addr, remote: Addr) -> Self {
        let cfg = cfg.into();
        match cfg.mode {
            TransportMode::Tcp => Endpoint::Tcp(Connection::connect_seeded(cfg, seed, local, remote)),
            TransportMode::Quic => {
                Endpoint::Quic(Box::new(QuicConnection::connect(own_seeded(cfg, seed), local, remote)))
            }
        }
    }

    /// [`accept`](Self::accept) with the controller's seed given apart from the settings
    /// (see [`connect_seeded`](Self::connect_seeded)).
    pub fn accept_seeded(
        cfg: impl Into<Arc<ConnectionConfig>>,
        seed: u64,
        now_ns: u64,
        first: &Packet,
    ) -> Option<Self> {
        let cfg = cfg.into();
        match cfg.mode {
            TransportMode::Tcp => Connection::accept_seeded(cfg, seed, now_ns, first).map(Endpoint::Tcp),
            TransportMode::Quic => {
                QuicConnection::accept(own_seeded(cfg, seed), now_ns, first).map(|c| Endpoint::Quic(Box::new(c)))
            }
        }
    }

    /// Passive open from a first packet (a SYN, or a datagram with a client's first Initial).
    pub fn accept(cfg: impl Into<Arc<ConnectionConfig>>, now_ns: u64, first: &Packet) -> Option<Self> {
        let cfg = cfg.into();
        let seed = cfg.seed;
        Self::accept_seeded(cfg, seed, now_ns, first)
    }

    /// The TCP-mode connection, if this is one.
    pub fn tcp(&self) -> Option<&Connection> {
        match self {
            Endpoint::Tcp(c) => Some(c),
            Endpoint::Quic(_) => None,
        }
    }

    /// EECN §4.4.1: the highest congestion level this end's handshake met (TCP mode: the
    /// SYN's or SYN-ACK's, echoed; QUIC mode: its Initial and Handshake packets', from the
    /// peer's ECN counts); 0 without marks or without EECN.
    pub fn handshake_congestion_level(&self) -> u8 {
        both!(self, c => c.handshake_congestion_level())
    }

    /// The QUIC-mode connection, if this is one.
    pub fn quic(&self) -> Option<&QuicConnection> {
        match self {
            Endpoint::Quic(c) => Some(c),
            Endpoint::Tcp(_) => None,
        }
    }

    /// The QUIC-mode connection, mutably.
    pub fn quic_mut(&mut self) -> Option<&mut QuicConnection> {
        match self {
            Endpoint::Quic(c) => Some(c),
            Endpoint::Tcp(_) => None,
        }
    }

    /// Handles a received packet.
    pub fn handle_packet(&mut self, now_ns: u64, pkt: &Packet) {
        both!(self, c => c.handle_packet(now_ns, pkt))
    }
    /// Handles an expired deadline.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        both!(self, c => c.handle_timeout(now_ns))
    }
    /// The next packet to send.
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<Packet> {
        both!(self, c => c.poll_transmit(now_ns))
    }
    /// The next packet to send, written into `out` (every field) when there is one
    /// ([`Connection::poll_transmit_into`], [`QuicConnection::poll_transmit_into`]): `true`
    /// then. In QUIC mode the datagram box `out` holds carries the next datagram, and stays
    /// in `out` when nothing is sent.
    pub fn poll_transmit_into(&mut self, now_ns: u64, out: &mut Packet) -> bool {
        both!(self, c => c.poll_transmit_into(now_ns, out))
    }
    /// The next deadline.
    pub fn poll_timeout(&self) -> Option<u64> {
        both!(self, c => c.poll_timeout())
    }
    /// The next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        both!(self, c => c.poll_event())
    }
    /// Writes a message (reliable, default signals in QUIC mode).
    pub fn write(&mut self, now_ns: u64, id: u32, len_bytes: u64, priority: Option<u8>) {
        both!(self, c => c.write(now_ns, id, len_bytes, priority))
    }
    /// Asks for [`Event::MessageBytes`] once the first `bytes` bytes of the peer's message
    /// `msg_id` are delivered in order ([`Connection::watch_message_bytes`],
    /// [`QuicConnection::watch_message_bytes`]).
    pub fn watch_message_bytes(&mut self, msg_id: u32, bytes: u64) {
        both!(self, c => c.watch_message_bytes(msg_id, bytes))
    }
    /// This end writes no more.
    pub fn close(&mut self) {
        both!(self, c => c.close())
    }
    /// State.
    pub fn state(&self) -> State {
        both!(self, c => c.state())
    }
    /// Local endpoint.
    pub fn local(&self) -> Addr {
        both!(self, c => c.local())
    }
    /// Remote endpoint.
    pub fn remote(&self) -> Addr {
        both!(self, c => c.remote())
    }
    /// Counters.
    pub fn stats(&self) -> &ConnectionStats {
        both!(self, c => c.stats())
    }
    /// Congestion window.
    pub fn cwnd_bytes(&self) -> u64 {
        both!(self, c => c.cwnd_bytes())
    }
    /// Bytes in flight.
    pub fn bytes_in_flight(&self) -> u64 {
        both!(self, c => c.bytes_in_flight())
    }
    /// Smoothed RTT.
    pub fn srtt_ns(&self) -> Option<u64> {
        both!(self, c => c.srtt_ns())
    }
    /// Latest RTT sample.
    pub fn latest_rtt_ns(&self) -> Option<u64> {
        both!(self, c => c.latest_rtt_ns())
    }
    /// Pacing rate.
    pub fn pacing_rate_bps(&self) -> Option<u64> {
        both!(self, c => c.pacing_rate_bps())
    }
    /// Delivered bytes.
    pub fn delivered_bytes(&self) -> u64 {
        both!(self, c => c.delivered_bytes())
    }
    /// Controller name and state.
    pub fn cc_state(&self) -> (&'static str, &'static str) {
        both!(self, c => c.cc_state())
    }
    /// QUIC mode, client: open another path ([`QuicConnection::add_path`]); `None` in TCP
    /// mode (one path) or when the connection refuses it.
    pub fn add_path(&mut self, local: Addr, remote: Addr) -> Option<crate::path::sched::PathId> {
        match self {
            Endpoint::Tcp(_) => None,
            Endpoint::Quic(c) => c.add_path(local, remote),
        }
    }
    /// Per-path counters (QUIC mode; empty in TCP mode).
    pub fn path_stats(&self) -> Vec<crate::quic::PathStats> {
        match self {
            Endpoint::Tcp(_) => Vec::new(),
            Endpoint::Quic(c) => c.path_stats(),
        }
    }
}

/// A QUIC-mode connection's own copy of its settings, with `seed` in it (the settings are
/// moved out when no other connection holds them).
fn own_seeded(cfg: Arc<ConnectionConfig>, seed: u64) -> ConnectionConfig {
    let mut cfg = Arc::unwrap_or_clone(cfg);
    cfg.seed = seed;
    cfg
}
