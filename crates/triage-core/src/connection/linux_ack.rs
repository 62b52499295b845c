//! When Linux's receiver acknowledges at once rather than every second segment
//! ([`crate::ConnectionConfig::linux_ack`]), as Linux 6.16 and later do it (`net/ipv4/tcp_input.c`):
//!
//! - *Quick ACKs* (`tcp_incr_quickack`, `tcp_in_quickack_mode`): the first data segment, and any
//!   segment that was already received, allow the next min(initial window / 2 segments, 16)
//!   ACKs to go at once; each ACK sent uses one (`tcp_dec_quickack_mode`).
//! - *Window growth* (`tcp_grow_window`): every in-order segment of 128 bytes or more grows the
//!   receive threshold `rcv_ssthresh` by two segments, up to the window clamp, and each growth
//!   allows one quick ACK. The threshold starts at the initial window.
//! - *Receive-buffer autotuning* (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`): once per
//!   receiver RTT, if the application took more bytes than in the previous RTT, the buffer
//!   grows to hold twice that (plus the out-of-order extent when segments arrive out of
//!   order), and the window clamp with it; the threshold can then grow again.
//!
//! Only the acknowledgment timing is modelled: the advertised window stays the receive
//! buffer's free space (`receive_buffer_bytes`), which Linux would cap at `rcv_ssthresh`.
//! Constants are Linux's defaults on this machine's kernel (6.18): `tcp_rmem` = 4096 131072
//! 6291456, so an initial window of 45 segments of 1448 bytes (65,160 bytes) and a window
//! 158/256 of the buffer (`scaling_ratio` as measured from 1448-byte segments: the 80,896-byte
//! window the real receiver's ACKs carry before autotuning first acts). Linux measures the
//! receiver's RTT from timestamp echoes (`tcp_rcv_rtt_measure_ts`), the sender's queue
//! included; here it is the connection's smoothed RTT, for a receiver that sends no data its
//! handshake's. Where a queue makes the RTT several times the handshake's, autotuning here
//! acts on shorter periods, each seeing fewer bytes, and the clamp rises later than Linux's
//! (a loss-free 10 Mbps transfer behind a long queue never raises it).

/// `tcp_rmem[1]`: the receive buffer a connection starts with.
const RCVBUF_INITIAL_BYTES: u64 = 131_072;
/// `tcp_rmem[2]`: the most autotuning gives it.
const RCVBUF_MAX_BYTES: u64 = 6_291_456;
/// `scaling_ratio` (of 256): the share of buffer space a window may offer.
const SCALING_RATIO: u64 = 158;
/// `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;

/// The receiver state of [`crate::ConnectionConfig::linux_ack`].
#[derive(Clone, Debug)]
pub(super) struct LinuxAck {
    mss_bytes: u64,
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// Whether data has arrived yet (`icsk_ack.ato` still 0 before).
    started: bool,
    /// The window's growth threshold (`rcv_ssthresh`).
    rcv_ssthresh_bytes: u64,
    /// `sk_rcvbuf` (the window clamp, `window_clamp`, is its window share).
    rcvbuf_bytes: u64,
    /// Bytes taken in the last measured RTT (`rcvq_space.space`).
    space_bytes: u64,
    /// `rcv_nxt` and the time at the start of the current measurement.
    space_seq: u64,
    space_time_ns: u64,
}

fn win_from_space(space: u64) -> u64 {
    space * SCALING_RATIO / 256
}

fn space_from_win(win: u64) -> u64 {
    win * 256 / SCALING_RATIO
}

/// `tcp_select_initial_window`: half the initial buffer (the default ratio before any
/// segment is measured), in whole segments.
fn initial_window_bytes(mss_bytes: u64) -> u64 {
    RCVBUF_INITIAL_BYTES / 2 / mss_bytes * mss_bytes
}

impl LinuxAck {
    pub(super) fn new(mss_bytes: u32) -> Self {
        let mss_bytes = u64::from(mss_bytes).max(1);
        LinuxAck {
            mss_bytes,
            quick: 0,
            started: false,
            rcv_ssthresh_bytes: initial_window_bytes(mss_bytes).min(win_from_space(RCVBUF_INITIAL_BYTES)),
            rcvbuf_bytes: RCVBUF_INITIAL_BYTES,
            // tcp_init_buffer_space: the first measurement counts ten segments.
            space_bytes: 10 * mss_bytes,
            space_seq: 0,
            space_time_ns: 0,
        }
    }

    /// `window_clamp`: the buffer's window share (autotuning moves the two together).
    fn window_clamp_bytes(&self) -> u64 {
        win_from_space(self.rcvbuf_bytes)
    }

    /// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`.
    fn incr_quick(&mut self) {
        let q = u32::try_from(initial_window_bytes(self.mss_bytes) / (2 * self.mss_bytes))
            .unwrap_or(u32::MAX)
            .clamp(2, MAX_QUICKACKS);
        self.quick = self.quick.max(q);
    }

    /// `tcp_rcvbuf_grow`: the buffer holds twice the last RTT's bytes, plus `ooo_extent`.
    fn rcvbuf_grow(&mut self, ooo_extent_bytes: u64) {
        let rcvwin = 2 * self.space_bytes + ooo_extent_bytes;
        let rcvbuf = space_from_win(rcvwin).min(RCVBUF_MAX_BYTES);
        self.rcvbuf_bytes = self.rcvbuf_bytes.max(rcvbuf);
    }

    /// A segment that was received before (`tcp_data_queue`'s retransmission case:
    /// `tcp_enter_quickack_mode`).
    pub(super) fn on_duplicate(&mut self) {
        self.incr_quick();
    }

    /// A segment held out of order, reaching `ooo_extent_bytes` beyond `rcv_nxt`
    /// (`tcp_data_queue_ofo` calls `tcp_rcvbuf_grow`).
    pub(super) fn on_out_of_order(&mut self, ooo_extent_bytes: u64) {
        self.rcvbuf_grow(ooo_extent_bytes);
    }

    /// An in-order segment of `payload_bytes` taken by the application, `rcv_nxt` now past
    /// it, `rtt_ns` the receiver's RTT (0: none yet). True when it is to be acknowledged at
    /// once.
    pub(super) fn on_in_order(&mut self, now_ns: u64, rcv_nxt: u64, payload_bytes: u32, rtt_ns: u64) -> bool {
        if !self.started {
            // tcp_event_data_recv, the first data.
            self.started = true;
            self.incr_quick();
            self.space_seq = rcv_nxt;
            self.space_time_ns = now_ns;
        }
        // tcp_rcv_space_adjust, once per RTT (the application reads as data arrive).
        if rtt_ns > 0 && now_ns.saturating_sub(self.space_time_ns) >= rtt_ns {
            let copied = rcv_nxt.saturating_sub(self.space_seq);
            if copied > self.space_bytes {
                self.space_bytes = copied;
                self.rcvbuf_grow(0);
            }
            self.space_seq = rcv_nxt;
            self.space_time_ns = now_ns;
        }
        // tcp_grow_window (a 1448-byte segment's buffer costs at most its window share, so
        // the increment is two segments).
        if payload_bytes >= 128 {
            // (Linux bounds it by the free buffer space too, all of it here: the application
            // reads as data arrive.)
            let room = self.window_clamp_bytes().saturating_sub(self.rcv_ssthresh_bytes);
            if room > 0 {
                let incr = (2 * self.mss_bytes).max(2 * u64::from(payload_bytes));
                self.rcv_ssthresh_bytes += room.min(incr);
                self.quick |= 1;
            }
        }
        self.quick > 0
    }

    /// An ACK went out while one was due (`tcp_dec_quickack_mode`).
    pub(super) fn on_ack_sent(&mut self) {
        self.quick = self.quick.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// Feeds `n` in-order full segments from `seq` at `gap_ns` apart; returns which were
    /// acknowledged at once (an ACK sent for each of those).
    fn feed(l: &mut LinuxAck, seq: &mut u64, t: &mut u64, n: usize, gap_ns: u64, rtt_ns: u64) -> Vec<bool> {
        (0..n)
            .map(|_| {
                *seq += MSS as u64;
                *t += gap_ns;
                let now = l.on_in_order(*t, *seq, MSS, rtt_ns);
                if now {
                    l.on_ack_sent();
                }
                now
            })
            .collect()
    }

    #[test]
    fn the_first_segments_and_the_window_growth_are_acknowledged_at_once() {
        let mut l = LinuxAck::new(MSS);
        assert_eq!((l.rcv_ssthresh_bytes, l.window_clamp_bytes()), (65_160, 80_896));
        let (mut seq, mut t) = (1, 0);
        // No RTT yet, so no autotuning. 16 quick ACKs (65,160 / 2,896 = 22, capped at 16),
        // and the threshold grows 65,160 -> 80,896 in six steps (five of 2,896, one of
        // 1,256), each `quick |= 1`: on an even count (16, 14, ...) that is one ACK more,
        // as in the kernel, where `quick` is a counter and the growth sets its low bit.
        let quick = feed(&mut l, &mut seq, &mut t, 30, 1_000_000, 0);
        assert_eq!(quick.iter().filter(|&&q| q).count(), 22);
        assert!(quick[..22].iter().all(|&q| q) && quick[22..].iter().all(|&q| !q));
        assert_eq!(l.rcv_ssthresh_bytes, 80_896);
    }

    #[test]
    fn autotuning_raises_the_clamp_to_twice_an_rtts_bytes_and_the_window_grows_again() {
        let mut l = LinuxAck::new(MSS);
        let (mut seq, mut t) = (1, 0);
        // The first measurement opens at the first segment (1 ms).
        feed(&mut l, &mut seq, &mut t, 30, 1_000_000, 0);
        // A 40 ms RTT from now on: the segment at 41 ms (index 10) closes the measurement,
        // 40 segments since the one at 1 ms: 57,920 bytes > the 14,480 counted at the start.
        let quick = feed(&mut l, &mut seq, &mut t, 40, 1_000_000, 40_000_000);
        assert_eq!(l.space_bytes, 40 * MSS as u64);
        // Twice that as window: space_from_win(115,840) = 187,690 bytes of buffer, whose
        // window is 115,839; the threshold grows from 80,896 to it in 13 steps, a quick ACK each.
        assert_eq!((l.rcvbuf_bytes, l.window_clamp_bytes()), (187_690, 115_839));
        let expect: Vec<bool> = (0..40).map(|i| (10..23).contains(&i)).collect();
        assert_eq!(quick, expect);
        // The next measurement (81 ms) finds as many bytes as the last: nothing grows.
        let quick = feed(&mut l, &mut seq, &mut t, 20, 1_000_000, 40_000_000);
        assert!(quick.iter().all(|&q| !q));
        assert_eq!(l.window_clamp_bytes(), 115_839);
    }

    #[test]
    fn a_duplicate_segment_restores_the_quick_acks() {
        let mut l = LinuxAck::new(MSS);
        let (mut seq, mut t) = (1, 0);
        feed(&mut l, &mut seq, &mut t, 30, 1_000_000, 0);
        l.on_duplicate();
        let quick = feed(&mut l, &mut seq, &mut t, 20, 1_000_000, 0);
        assert_eq!(quick.iter().filter(|&&q| q).count(), 16, "the window is at its clamp: no growth");
    }

    #[test]
    fn out_of_order_data_grows_the_buffer_by_its_extent() {
        let mut l = LinuxAck::new(MSS);
        // space 14,480: 2 x 14,480 + 200,000 = 228,960 bytes of window.
        l.on_out_of_order(200_000);
        assert_eq!(l.window_clamp_bytes(), win_from_space(space_from_win(228_960)));
        l.on_out_of_order(100);
        assert_eq!(l.window_clamp_bytes(), win_from_space(space_from_win(228_960)), "never shrinks");
    }
}
