//! The pacer of QUIC mode: a token bucket as quinn runs it (the reference stack), or the
//! controller's own pacing rate when it has one (BBR).
//!
//! RFC 9002 §7.7 asks senders to pace; it leaves the method open. The reference's pacer
//! refills at 1.25 * cwnd / smoothed_rtt and holds a burst of cwnd * 2 ms / smoothed_rtt,
//! clamped to 10..=256 datagrams; a sender that runs out waits until the bucket holds a
//! whole burst (or the packet, if larger) again.

/// Token-bucket pacer (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    capacity_bytes: u64,
    tokens_bytes: u64,
    last_window_bytes: u64,
    last_mtu_bytes: u64,
    prev_ns: u64,
}

/// Burst interval of the bucket (2 ms).
const BURST_INTERVAL_NS: u64 = 2_000_000;
/// Fewest and most datagrams in one burst.
const MIN_BURST: u64 = 10;
const MAX_BURST: u64 = 256;

fn optimal_capacity(srtt_ns: u64, window_bytes: u64, mtu_bytes: u64) -> u64 {
    let rtt = srtt_ns.max(1);
    let cap = (window_bytes as u128 * BURST_INTERVAL_NS as u128 / rtt as u128) as u64;
    cap.clamp(MIN_BURST * mtu_bytes, MAX_BURST * mtu_bytes)
}

impl Pacer {
    /// A full bucket for the initial window.
    pub fn new(srtt_ns: u64, window_bytes: u64, mtu_bytes: u64, now_ns: u64) -> Self {
        let cap = optimal_capacity(srtt_ns, window_bytes, mtu_bytes);
        Self {
            capacity_bytes: cap,
            tokens_bytes: cap,
            last_window_bytes: window_bytes,
            last_mtu_bytes: mtu_bytes,
            prev_ns: now_ns,
        }
    }

    /// When a packet of `bytes` may leave: `None` for now, or the time to wait for.
    pub fn delay(&mut self, srtt_ns: u64, bytes: u64, mtu_bytes: u64, window_bytes: u64, now_ns: u64) -> Option<u64> {
        if window_bytes != self.last_window_bytes || mtu_bytes != self.last_mtu_bytes {
            self.capacity_bytes = optimal_capacity(srtt_ns, window_bytes, mtu_bytes);
            self.tokens_bytes = self.tokens_bytes.min(self.capacity_bytes);
            self.last_window_bytes = window_bytes;
            self.last_mtu_bytes = mtu_bytes;
        }
        if self.tokens_bytes >= bytes || window_bytes == 0 || srtt_ns == 0 {
            return None;
        }
        // Refill at 5/4 * window per smoothed RTT.
        let elapsed = now_ns.saturating_sub(self.prev_ns);
        let new_tokens = (window_bytes as u128 * 5 * elapsed as u128 / (4 * srtt_ns as u128)) as u64;
        self.tokens_bytes = self.tokens_bytes.saturating_add(new_tokens).min(self.capacity_bytes);
        self.prev_ns = now_ns;
        if self.tokens_bytes >= bytes {
            return None;
        }
        let missing = bytes.max(self.capacity_bytes) - self.tokens_bytes;
        let unscaled = (srtt_ns as u128 * missing as u128 / window_bytes as u128) as u64;
        Some(self.prev_ns + unscaled * 4 / 5)
    }

    /// A packet of `bytes` left.
    pub fn on_sent(&mut self, bytes: u64) {
        self.tokens_bytes = self.tokens_bytes.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_wait_for_a_full_bucket() {
        let ms = 1_000_000;
        // 50 ms RTT, 14520-byte window, 1452-byte datagrams: capacity clamps to 10 datagrams.
        let mut p = Pacer::new(50 * ms, 14_520, 1452, 0);
        for _ in 0..10 {
            assert_eq!(p.delay(50 * ms, 1452, 1452, 14_520, 0), None);
            p.on_sent(1452);
        }
        // Empty: wait until 14520 bytes are back at 5/4 * 14520 per 50 ms: 40 ms.
        assert_eq!(p.delay(50 * ms, 1452, 1452, 14_520, 0), Some(40 * ms));
        // 4 ms later 1815 bytes are back: one packet goes.
        assert_eq!(p.delay(50 * ms, 1452, 1452, 14_520, 4 * ms), None);
    }
}
