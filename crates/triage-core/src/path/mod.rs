//! Per-path state of a connection.
//!
//! Everything that belongs to one network path lives here, apart from the connection's
//! stream and message state: the RTT estimator and retransmission timeout (RFC 6298), the
//! congestion controller, the pacing schedule, the bytes in flight (RFC 6675 `pipe`) and the
//! delivery-rate sampling state (draft-cheng-iccrg-delivery-rate-estimation §3). A TCP-mode
//! connection has exactly one. Multipath (PriorityBucket) turns the connection's single
//! `path` into a list, tags each sent segment with its path, and asks a path scheduler which
//! path the next segment takes; nothing in this struct changes for that.
//!
//! [`sched`] holds the path schedulers (the `PathScheduler` plug-in point).

pub mod sched;

use crate::cc::CongestionController;
use crate::recovery::RttEstimator;

/// One path's transmission state (see the module documentation).
#[derive(Debug)]
pub(crate) struct Path {
    /// The congestion controller of this path.
    pub(crate) cc: Box<dyn CongestionController>,
    /// RTT estimator and RTO.
    pub(crate) rtt: RttEstimator,
    /// Earliest time the pacer lets the next data segment go.
    pub(crate) next_send_ns: u64,
    /// True when the last `poll_transmit` held data back for pacing.
    pub(crate) pacing_blocked: bool,
    /// Bytes in flight on this path (RFC 6675 `pipe`).
    pub(crate) pipe_bytes: u64,
    /// `C.delivered`: payload bytes delivered so far.
    pub(crate) delivered_bytes: u64,
    /// `C.delivered_time`.
    pub(crate) delivered_ns: u64,
    /// `C.first_sent_time`.
    pub(crate) first_sent_ns: u64,
    /// `C.app_limited`: 0, or the delivered count at which the app-limited phase ends.
    pub(crate) app_limited_until: u64,
}

impl Path {
    /// A fresh path with its controller and RTT estimator.
    pub(crate) fn new(cc: Box<dyn CongestionController>, rtt: RttEstimator) -> Self {
        Self {
            cc,
            rtt,
            next_send_ns: 0,
            pacing_blocked: false,
            pipe_bytes: 0,
            delivered_bytes: 0,
            delivered_ns: 0,
            first_sent_ns: 0,
            app_limited_until: 0,
        }
    }
}
