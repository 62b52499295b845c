//! triage-core: the sans-IO transport core.
//!
//! Nothing in this crate reads a clock, a socket or a global random number generator.
//! Every input takes `now` (integer nanoseconds); outputs are drained with `poll_*` calls.
//! The simulator (triage-sim) and, later, real sockets drive the same code.
//!
//! - [`connection`]: the TCP-mode connection state machine (start here).
//! - [`quic`]: the QUIC-mode connection (streams, DATAGRAM frames, RFC 9002 recovery).
//! - [`Endpoint`]: either mode behind one enum, as the simulator drives it.
//! - [`cc`]: congestion controllers (NewReno, BBR v1, NewReno+ECN, EECN, VCP) behind one trait.
//! - [`ecn`]: ECN negotiation and echo encodings (classic RFC 3168, EECN, VCP).
//! - [`path`]: per-path state and path schedulers (LRF, SA-ECF, PriorityBucket).
//! - [`prefetch`]: cache prefetch hints for the simulator's packet path (change no result).
//! - [`sched`]: send schedulers (FIFO) deciding which message bytes go next.
//! - [`qlog`]: qlog event types for QUIC-mode traces (draft-ietf-quic-qlog, version 0.3).
//! - [`recovery`]: RTT estimation / RTO (RFC 6298) and PRR (RFC 6937).
//! - [`watch`]: byte watermarks on received messages ([`Event::MessageBytes`]).
//! - [`wire`]: the packet representation and header sizes.
#![warn(missing_docs)]

pub mod cc;
pub mod config;
pub mod connection;
pub mod ecn;
mod endpoint;
pub mod intmap;
pub mod path;
pub mod prefetch;
pub mod qlog;
pub mod quic;
pub mod recovery;
pub mod sched;
pub mod watch;
pub mod wire;

pub use config::{ConnectionConfig, LoadShedding, SchedulerKind, TransportMode};
pub use connection::{Connection, ConnectionStats, Event, State};
pub use endpoint::Endpoint;

/// Nanoseconds per millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;
