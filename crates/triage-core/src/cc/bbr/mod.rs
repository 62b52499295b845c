//! BBR v1 (placeholder until the full implementation lands).
use super::{AckSample, CongestionController};

/// BBR settings.
#[derive(Debug, Clone)]
pub struct BbrConfig {
    /// Segment size.
    pub mss_bytes: u64,
    /// Initial window in segments.
    pub initial_window_segments: u64,
    /// RNG seed.
    pub seed: u64,
}
impl BbrConfig {
    /// Defaults.
    pub fn new(mss_bytes: u64, initial_window_segments: u64) -> Self {
        Self { mss_bytes, initial_window_segments, seed: 0 }
    }
}
/// BBR.
#[derive(Debug)]
pub struct Bbr {
    cwnd: u64,
}
impl Bbr {
    /// New.
    pub fn new(c: BbrConfig) -> Self {
        Self { cwnd: c.mss_bytes * c.initial_window_segments }
    }
}
impl CongestionController for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn on_ack(&mut self, a: &AckSample) {
        self.cwnd += a.newly_acked_bytes;
    }
    fn window_bytes(&self) -> u64 {
        self.cwnd
    }
}
