//! Loss recovery building blocks: the RFC 6298 RTT estimator and RTO, RFC 6937 PRR, and
//! lost-retransmission detection in transmission order (RFC 8985's ordering).

pub mod prr;
pub mod rexmit;
pub mod rtt;

pub use prr::Prr;
pub use rexmit::RetransmitLoss;
pub use rtt::RttEstimator;
