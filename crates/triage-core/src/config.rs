//! Connection settings.

use crate::cc::ControllerKind;

/// Settings of one TCP-mode connection. Defaults follow Linux where RFCs leave a choice,
/// except the minimum RTO and delayed-ACK timeout, which follow RFC 6298 §2.4 (1 s) and
/// ns-3 (200 ms); scenarios set them explicitly.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectionConfig {
    /// Maximum segment size (payload bytes per segment).
    pub mss_bytes: u32,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub initial_window_segments: u32,
    /// Congestion controller.
    pub controller: ControllerKind,
    /// Acknowledge every this many received segments (RFC 5681 §4.2: 2).
    pub delayed_ack_segments: u32,
    /// Delayed-ACK timer, in nanoseconds (RFC 5681: under 500 ms).
    pub delayed_ack_timeout_ns: u64,
    /// RTO before any RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto_ns: u64,
    /// Floor of the RTO (RFC 6298 §2.4: 1 s; Linux: 200 ms).
    pub min_rto_ns: u64,
    /// Ceiling of the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto_ns: u64,
    /// Receive buffer: the largest window this end advertises.
    pub receive_buffer_bytes: u64,
    /// Duplicate threshold for SACK-based loss detection (RFC 6675: 3).
    pub dup_thresh: u32,
    /// Seed for controllers that randomize (BBR's gain-cycle start).
    pub seed: u64,
    /// Keep a log of every PRR decision (for tests and traces).
    pub trace_prr: bool,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            mss_bytes: 1448,
            initial_window_segments: 10,
            controller: ControllerKind::NewReno,
            delayed_ack_segments: 2,
            delayed_ack_timeout_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            min_rto_ns: 1_000_000_000,
            max_rto_ns: 60_000_000_000,
            receive_buffer_bytes: 1 << 20,
            dup_thresh: 3,
            seed: 0,
            trace_prr: false,
        }
    }
}
