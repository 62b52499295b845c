//! Loss recovery building blocks: the RFC 6298 RTT estimator and RTO, and RFC 6937 PRR.

pub mod prr;
pub mod rtt;

pub use prr::Prr;
pub use rtt::RttEstimator;
