//! QUIC mode (RFC 9000, 9001, 9002, 9221): the second framing mode of the core.
//!
//! - [`connection`]: the state machine (start here).
//! - [`packet`]: packets and frames as the simulator carries them, with exact sizes.
//! - [`streams`]: which messages ride on which stream, stream credit, in-order delivery.
//! - [`ack`]: the receiver's acknowledgement state and ACK policy (RFC 9000 §13.2).
//! - [`rtt`]: RTT estimation (RFC 9002 §5).
//! - `sent`: the sender's records of packets in flight, a ring buffer by packet number.
//! - [`bandwidth`]: a path's bandwidth estimate (multipath).
//! - [`pacer`]: the reference stack's token-bucket pacer.
//! - [`config`]: settings, with the reference's defaults.

pub mod ack;
pub mod bandwidth;
pub mod config;
pub mod connection;

pub mod pacer;
pub mod packet;
pub mod rtt;
mod sent;
pub mod streams;
#[cfg(test)]
mod tests;
pub mod trace;

pub use config::{DatagramFraming, DatagramOrder, MultipathConfig, PathPrior, PathSchedulerKind, QuicConfig};
pub use connection::{DatagramObject, PathStats, PrioritySignals, QuicConnection, QuicStats, Reliability};
pub use packet::{AckFrame, Frame, QuicDatagram, QuicPacket, SpaceId};
pub use streams::StreamChoice;
