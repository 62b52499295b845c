//! The TCP-mode connection: a sans-IO state machine.
//!
//! Read first: RFC 9293 (TCP), RFC 5681 (congestion control, delayed ACK), RFC 2018 and
//! RFC 6675 (SACK and SACK-based loss recovery), RFC 6298 (RTO), RFC 6937 (PRR), RFC 8985
//! §6.2 for lost retransmissions (in [`crate::recovery::rexmit`]),
//! draft-cheng-iccrg-delivery-rate-estimation (rate samples for BBR).
//!
//! # The contract
//! A [`Connection`] never reads a clock or touches a socket. Its methods fall in four groups:
//! - **constructors**: [`Connection::connect`] (active open: queues a SYN) and
//!   [`Connection::accept`] (passive open from a received SYN: queues a SYN-ACK);
//! - **inputs**: [`handle_packet`](Connection::handle_packet) for a received packet and
//!   [`handle_timeout`](Connection::handle_timeout) once the deadline from
//!   [`poll_timeout`](Connection::poll_timeout) has passed;
//! - **application commands**: [`write_message`](Connection::write_message) hands a whole
//!   message (id, length, priority) to the send scheduler; [`close`](Connection::close)
//!   queues a FIN once everything written is sent;
//!   [`watch_message_bytes`](Connection::watch_message_bytes) asks to hear when the first N
//!   bytes of a peer's message have been delivered ([`crate::watch`]);
//! - **outputs**, drained in this order after every input or command:
//!   [`poll_transmit`](Connection::poll_transmit) until it returns `None`, then
//!   [`poll_timeout`](Connection::poll_timeout) for the next deadline, and
//!   [`poll_event`](Connection::poll_event) for application events (connected, message
//!   complete with its priority, peer closed, closed);
//! - **getters** for traces and reports: [`stats`](Connection::stats),
//!   [`cwnd_bytes`](Connection::cwnd_bytes), [`srtt_ns`](Connection::srtt_ns), ...
//!
//! **Time**: `now_ns` never decreases from one call to the next (the caller's clock is
//! monotonic). The connection does not rely on it for safety: every difference between
//! `now` and a recorded time saturates at 0, so a clock that steps back gives short RTT
//! samples, never a panic.
//!
//! **The peer is not trusted**: any packet may arrive (a malformed sequence number, an ACK
//! of data never sent, SACK blocks anywhere, a window of 2^64 − 1). Out-of-order data is
//! held only within the receive window and buffer (the rest is dropped and counted in
//! [`ConnectionStats::out_of_window_segments`]); sequence arithmetic on peer values is
//! checked or saturating. `fuzz/fuzz_targets/connection.rs` feeds arbitrary packet
//! sequences to both modes.
//!
//! # Model
//! Sequence numbers are 64-bit and start at 0 for the SYN on both sides. The payload is not
//! materialized: each segment carries the [`MsgChunk`](crate::sched::MsgChunk)s it holds,
//! which is how the receiver knows when a message is complete. Segments keep their
//! boundaries when retransmitted.
//! One path today; the per-path state (RTT estimator, controller, recovery, pacing) lives
//! together in [`Connection`] fields so that a `Vec` of paths replaces it when multipath
//! arrives.

use std::collections::{hash_map, VecDeque};
use std::sync::Arc;

use crate::cc::{self, AckSample, CongestionSignal, HandshakeFeedback, RateSample};
use crate::config::ConnectionConfig;
use crate::config::SchedulerKind;
use crate::ecn::{self as ecnc, EcnMode};
use crate::intmap::IntMap;
use crate::path::Path;
use crate::recovery::prr::{PrrDecision, ReductionBound};
use crate::recovery::{Prr, RetransmitLoss, RttEstimator};
use crate::sched::{Chunks, Conductor, DiscardReason, Discarded, Fifo, MessageMeta, SendScheduler};
use crate::wire::packet::MAX_SACK_BLOCKS;
use crate::wire::{Addr, Ecn, Packet, SackBlock, TcpFlags};

mod chunked;
mod linux_ack;
mod sack_blocks;
mod sent_chunks;
use chunked::ChunkedMap;
use sack_blocks::SackBlocks;

/// Connection state (RFC 9293 §3.3.2, without the closing states the simulator does not
/// need: a connection is `Closed` once both FINs are acknowledged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for the ACK.
    SynReceived,
    /// Data may flow both ways.
    Established,
    /// Both directions closed.
    Closed,
}

/// Events for the application, drained with [`Connection::poll_event`].
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// The first bytes of a message reached the application (in order; for DATAGRAM chunks,
    /// the first chunk): the response's first byte, as a browser's `responseStart`. Comes
    /// before the message's `MessageComplete`.
    MessageStarted {
        /// Message identifier, as written by the peer.
        msg_id: u32,
    },
    /// The first bytes of a message the application watches
    /// ([`Connection::watch_message_bytes`], [`crate::quic::QuicConnection::watch_message_bytes`])
    /// have been delivered in order: at least the watermark, `bytes` in all so far. Comes
    /// after the message's `MessageStarted` and before its `MessageComplete` (in the same
    /// batch of events when the bytes that reach the watermark also complete it).
    MessageBytes {
        /// Message identifier, as written by the peer.
        msg_id: u32,
        /// Bytes of it delivered in order so far (at least the watermark).
        bytes: u64,
    },
    /// Every byte of a message has been delivered in order to the application.
    MessageComplete {
        /// Message identifier, as written by the peer.
        msg_id: u32,
        /// Message length.
        len_bytes: u64,
        /// Priority read from the segments' priority option (CATS §II-D-2), when the
        /// peer sent one.
        priority: Option<u8>,
    },
    /// A message this end wrote will not be sent in full (Save-Data or load shedding).
    MessageDiscarded {
        /// Message identifier.
        msg_id: u32,
        /// Bytes that will never be sent.
        bytes: u64,
        /// True when part of it was already sent.
        partially_sent: bool,
        /// Why.
        reason: DiscardReason,
    },
    /// QUIC mode: the peer answered our message `msg_id` with DATAGRAM chunks and has now
    /// ended the response on its request stream (HTTP/3 HEADERS and FIN,
    /// [`crate::quic::QuicConfig::response_headers_bytes`]): no more chunks will be sent,
    /// though some may still be on their way. Comes after `MessageComplete` when every chunk
    /// arrived first.
    ResponseEnded {
        /// The message (request) the response answers.
        msg_id: u32,
    },
    /// QUIC mode, multipath: a path this end opened (or the peer opened) passed validation
    /// (RFC 9000 §8.2: its PATH_CHALLENGE was answered) and may carry data.
    PathValidated {
        /// The path.
        path_id: u32,
    },
    /// QUIC mode, multipath: a path was declared failed (probe timeouts in a row, or its
    /// validation never answered); its data goes on the other paths.
    PathFailed {
        /// The path.
        path_id: u32,
    },
    /// The peer's FIN arrived: it will send no more.
    PeerClosed,
    /// Both directions are closed.
    Closed,
}

/// Counters of one connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Packets sent, of any kind.
    pub packets_sent: u64,
    /// Data segments sent for the first time.
    pub data_segments_sent: u64,
    /// Payload bytes sent for the first time.
    pub data_bytes_sent: u64,
    /// Segments retransmitted.
    pub retransmitted_segments: u64,
    /// Payload bytes retransmitted.
    pub retransmitted_bytes: u64,
    /// Pure ACKs sent.
    pub pure_acks_sent: u64,
    /// Retransmission timeouts.
    pub rto_count: u64,
    /// Tail loss probes sent (RFC 8985 §7, with RACK on).
    pub loss_probes: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// Payload bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Payload bytes received that were already held (duplicates).
    pub duplicate_bytes_received: u64,
    /// Packets received.
    pub packets_received: u64,
    /// Bytes discarded by Save-Data before sending.
    pub save_data_discarded_bytes: u64,
    /// Bytes shed under severe congestion.
    pub shed_bytes: u64,
    /// ECN responses handed to the controller, by echoed level 0..3 (classic: 1; EECN:
    /// 1 = CL(1), 2 = CL(2)).
    pub ecn_responses: [u64; 4],
    /// ACKs received that echoed a congestion code, by code 0..3 (VCP: load codes).
    pub ecn_echoes_received: [u64; 4],
    /// Segments received out of order that reached beyond the receive window (or would
    /// have held more than the receive buffer out of order): dropped, not buffered.
    pub out_of_window_segments: u64,
    /// Payload bytes of those segments.
    pub out_of_window_bytes: u64,
    /// Retransmissions found lost before the RTO: a segment sent after one was delivered
    /// (see [`crate::recovery::rexmit`]).
    pub lost_retransmissions: u64,
}

impl ConnectionStats {
    /// Adds `other`'s counters to these (the connections of a page load's pool, reported
    /// as one flow).
    pub fn accumulate(&mut self, other: &ConnectionStats) {
        let ConnectionStats {
            packets_sent,
            data_segments_sent,
            data_bytes_sent,
            retransmitted_segments,
            retransmitted_bytes,
            pure_acks_sent,
            rto_count,
            loss_probes,
            fast_recoveries,
            bytes_delivered,
            duplicate_bytes_received,
            packets_received,
            save_data_discarded_bytes,
            shed_bytes,
            ecn_responses,
            ecn_echoes_received,
            out_of_window_segments,
            out_of_window_bytes,
            lost_retransmissions,
        } = other;
        self.packets_sent += packets_sent;
        self.data_segments_sent += data_segments_sent;
        self.data_bytes_sent += data_bytes_sent;
        self.retransmitted_segments += retransmitted_segments;
        self.retransmitted_bytes += retransmitted_bytes;
        self.pure_acks_sent += pure_acks_sent;
        self.rto_count += rto_count;
        self.loss_probes += loss_probes;
        self.fast_recoveries += fast_recoveries;
        self.bytes_delivered += bytes_delivered;
        self.duplicate_bytes_received += duplicate_bytes_received;
        self.packets_received += packets_received;
        self.save_data_discarded_bytes += save_data_discarded_bytes;
        self.shed_bytes += shed_bytes;
        for i in 0..4 {
            self.ecn_responses[i] += ecn_responses[i];
            self.ecn_echoes_received[i] += ecn_echoes_received[i];
        }
        self.out_of_window_segments += out_of_window_segments;
        self.out_of_window_bytes += out_of_window_bytes;
        self.lost_retransmissions += lost_retransmissions;
    }
}

/// One sent segment in the scoreboard (RFC 6675 §3) with its rate-sampling state
/// (draft-cheng-iccrg-delivery-rate-estimation §3.2).
///
/// One cache line (every ACK that covers a segment reads it, and with many flows each line
/// is a miss): the segment's message pieces, needed only to send it again, are kept apart
/// ([`sent_chunks::SentChunks`]), and its payload length follows from its sequence range.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct SentSeg {
    start: u64,
    end: u64,
    flags: u8,
    sent_ns: u64,
    first_sent_ns: u64,
    delivered_ns: u64,
    delivered_bytes: u64,
    app_limited: bool,
    /// Transmission number of its latest (re)transmission ([`RetransmitLoss`]).
    tx: u64,
    retransmitted: bool,
    sacked: bool,
    lost: bool,
    in_flight: bool,
    /// Sent again by ns-3's NextSeg() rule (3) while in flight ([`Connection`]'s
    /// `ns3_rule3_segment`): the pipe counts it twice, as ns-3's `BytesInFlight` (sent,
    /// less SACKed and lost, plus retransmitted) does, until it is acknowledged.
    resent_in_flight: bool,
}

impl SentSeg {
    /// Payload bytes: the sequence range less SYN and FIN.
    fn payload_bytes(&self) -> u32 {
        let flags = (self.flags & TcpFlags::SYN != 0) as u64 + (self.flags & TcpFlags::FIN != 0) as u64;
        (self.end - self.start - flags) as u32
    }

    /// The bytes it holds in the pipe: its length while in flight, once more while it is
    /// also sent again in flight (ns-3's rule (3), [`Self::resent_in_flight`]).
    #[inline]
    fn pipe_share_bytes(&self) -> u64 {
        (self.end - self.start) * (u64::from(self.in_flight) + u64::from(self.resent_in_flight))
    }
}

/// Loss-recovery state.
#[derive(Clone, Debug)]
enum Recovery {
    Open,
    /// Fast recovery (RFC 6675 §5) until `point` is cumulatively acknowledged.
    Fast {
        point: u64,
        prr: Option<Prr>,
        window_bytes: u64,
    },
    /// After an RTO, until `point` is cumulatively acknowledged.
    Rto {
        point: u64,
    },
}

/// Out-of-order data held by the receiver.
#[derive(Clone, Debug)]
struct OooSeg {
    end: u64,
    chunks: Chunks,
    fin: bool,
    priority: Option<u8>,
}

/// The RTT candidates among the segments one ACK newly acknowledges, cumulatively or
/// selectively: the most recently sent one that was never retransmitted (its send time and
/// RTT), and the latest (re)transmission time among retransmitted ones.
#[derive(Clone, Copy, Debug, Default)]
struct RttPick {
    newest: Option<(u64, u64)>,
    newest_retransmitted_ns: Option<u64>,
}

impl RttPick {
    /// `now` never decreases and no segment is sent in the future, but a sample saturates
    /// at 0 rather than trust that.
    fn add(&mut self, now_ns: u64, sent_ns: u64, retransmitted: bool) {
        if retransmitted {
            self.newest_retransmitted_ns = Some(self.newest_retransmitted_ns.map_or(sent_ns, |t| t.max(sent_ns)));
        } else if self.newest.is_none_or(|(t, _)| sent_ns >= t) {
            self.newest = Some((sent_ns, now_ns.saturating_sub(sent_ns)));
        }
    }

    /// Karn's rule (RFC 6298 §3), as Linux applies it in `tcp_clean_rtx_queue`: when the
    /// cumulative part covers retransmitted data (`FLAG_RETRANS_DATA_ACKED`) it gives no
    /// sample, not even of newer segments it also covers: those may have been sent before
    /// an RTO and never retransmitted, and sampling them would measure the whole backoff.
    /// The SACK part then gives its newest segment's sample, as Linux's `sack_rtt_us`,
    /// except when a retransmission this ACK also acknowledges was sent after that segment
    /// (a stricter rule than Linux's): the ACK answers that retransmission, and the block
    /// is an old one the receiver repeats (RFC 2018 §4) that the sender had not seen,
    /// because the ACKs that carried it were lost. Of two valid samples, the newer
    /// segment's is taken (Linux's `ca_rtt_us`).
    fn sample(cum: &RttPick, sack: &RttPick) -> Option<u64> {
        let cum_valid = if cum.newest_retransmitted_ns.is_some() { None } else { cum.newest };
        let retx = cum.newest_retransmitted_ns.max(sack.newest_retransmitted_ns);
        let sack_valid = sack.newest.filter(|(sent, _)| retx.is_none_or(|r| r < *sent));
        match (cum_valid, sack_valid) {
            (Some(a), Some(b)) => Some(if b.0 >= a.0 { b.1 } else { a.1 }),
            (a, b) => a.or(b).map(|x| x.1),
        }
    }
}

/// A TCP-mode connection (see the module documentation for the contract).
#[derive(Debug)]
pub struct Connection {
    /// Settings, shared by every connection opened with the same ones (the simulator opens
    /// a flow's connections, and those of flows alike, from one copy): 664 bytes that each
    /// connection held before, which made its state a third larger and took eight lines of
    /// its own to fetch on every packet with many flows, where one copy stays in the cache.
    /// Changed only through [`Arc::make_mut`] (a connection whose settings change gets a
    /// copy of its own).
    cfg: Arc<ConnectionConfig>,
    local: Addr,
    remote: Addr,
    state: State,
    events: VecDeque<Event>,
    stats: ConnectionStats,

    // ---- send side ----
    syn_pending: bool,
    snd_una: u64,
    snd_nxt: u64,
    segs: VecDeque<SentSeg>,
    /// The message pieces of the segments in `segs` (to send them again).
    sent_chunks: sent_chunks::SentChunks,
    sacked_segs: usize,
    /// Start of the highest segment SACKed (while `sacked_segs > 0`, it is in `segs`).
    high_sacked_start: u64,
    /// What the previous ACK's SACK blocks covered: every sent segment wholly inside one
    /// of its ranges is SACKed (or since acknowledged), so the next ACK, which repeats most
    /// of those blocks, walks only what is new in each (see [`SackSeen`]).
    sack_seen: SackSeen,
    /// Sent segments looked at by the SACK walk and IsLost() (tests bound the work an ACK
    /// does with it).
    #[cfg(test)]
    scoreboard_steps: u64,
    /// Tests only: walk the scoreboard the long way (every segment of every SACK block,
    /// IsLost()'s floor at the highest segment found lost), to show the short way changes
    /// nothing.
    #[cfg(test)]
    naive_scoreboard: bool,
    /// IsLost() has judged every segment starting below this: each was marked lost when
    /// it qualified, and one that qualified cannot qualify again (it is lost, SACKed or
    /// retransmitted), so `detect_losses` walks only what lies above.
    loss_floor: u64,
    lost_pending: usize,
    /// No segment starting below this is lost and waiting to be sent again (a lower bound:
    /// the search for the next retransmission starts here instead of at `snd_una`).
    lost_from: u64,
    rexmit: RetransmitLoss,
    scheduler: Box<dyn SendScheduler>,
    fin_requested: bool,
    fin_sent: bool,
    fin_acked: bool,
    peer_window_bytes: u64,
    /// With a send buffer ([`ConnectionConfig::send_buffer_bytes`]) and `ns3_compat`: the
    /// end of what ns-3's application has written into it (new data goes up to here).
    /// Without `ns3_compat` the application keeps the buffer full and the end is
    /// `snd_una + send_buffer`, not kept.
    app_tail: u64,
    /// Where ns-3's NextSeg() rule (3) looks from (`ns3_compat`): no segment below it can
    /// be chosen by it.
    ns3_rule3_from: u64,
    recovery: Recovery,
    rto_deadline_ns: Option<u64>,
    /// RACK (RFC 8985 §6.2, with [`ConnectionConfig::rack`]): the send time of the most
    /// recently sent segment known delivered (0: none yet), that segment's RTT, and when
    /// the earliest segment sent before it is due to be judged lost.
    /// `ConnectionConfig::rack`, kept here: the hot path tests it without reaching into the
    /// shared settings.
    rack_on: bool,
    rack_xmit_ns: u64,
    rack_end_seq: u64,
    rack_rtt_ns: u64,
    rack_deadline_ns: Option<u64>,
    /// Every transmission with RACK on, in send order: (send time, start, end, transmission
    /// number). RACK judges from the front and drops what was acknowledged, SACKed, marked
    /// lost or sent again since, so each entry is looked at a bounded number of times (the
    /// time-sorted list of Linux's RACK) instead of the window at every ACK.
    rack_sent: VecDeque<(u64, u64, u64, u64)>,
    /// TLP (RFC 8985 §7, with [`ConnectionConfig::rack`]): when the probe timeout fires, a
    /// probe waiting to go, and the `snd_nxt` after the last probe until it is acknowledged.
    tlp_deadline_ns: Option<u64>,
    /// The earlier of the reordering and probe timers (one deadline for `poll_timeout`).
    rack_timer_ns: Option<u64>,
    tlp_pending: bool,
    tlp_high_seq: Option<u64>,
    /// The last probe resent a segment (rather than sending new data).
    tlp_retrans: bool,
    prr_log: Vec<(PrrDecision, u64)>,
    /// Fates of recent data packets (true = lost), for load shedding.
    fates: VecDeque<bool>,
    fates_lost: u32,
    consecutive_rtos: u32,
    last_shed_ns: Option<u64>,

    // ---- the path (one in TCP mode; see crate::path) ----
    path: Path,

    // ---- receive side ----
    rcv_nxt: u64,
    /// Out-of-order segments held, by start (RFC 9293 §3.10.7.4: segments beyond RCV.NXT
    /// are held for later processing): one list while a few are held, a list of lists when
    /// thousands are, and no allocation once the most it has held is reached (see
    /// [`ChunkedMap`]).
    ooo: ChunkedMap<OooSeg>,
    ooo_bytes: u64,
    /// Right edge of the window last advertised (RCV.NXT + RCV.WND); never moves left.
    rcv_adv_edge: u64,
    ooo_arrivals: u64,
    /// The blocks `ooo` forms, for the SACK option (most recent first).
    sack_blocks: SackBlocks,
    segs_since_ack: u32,
    /// Linux's receiver ACK policy ([`ConnectionConfig::linux_ack`]).
    linux_ack: Option<Box<linux_ack::LinuxAck>>,
    ack_now: bool,
    delack_deadline_ns: Option<u64>,
    msg_progress: IntMap<u32, (u64, Option<u8>)>,
    /// Byte watermarks the application registered on the peer's messages
    /// ([`Connection::watch_message_bytes`]).
    watches: crate::watch::Watches,
    peer_fin: bool,

    // ---- ECN (see crate::ecn for the encodings) ----
    /// The ECN variant in use: what this end asks for until the handshake settles it.
    ecn: EcnMode,
    /// Level the peer's SYN arrived with, echoed on our SYN-ACK (EECN §4.2).
    ecn_syn_level: u8,
    /// Level the SYN-ACK arrived with, echoed on the client's next packet (EECN §4.2).
    ecn_handshake_echo: Option<u8>,
    /// Level our own SYN or SYN-ACK experienced, as the peer echoed it (EECN §4.4.1).
    ecn_handshake_level: u8,
    /// Receiver: echo CE (classic) / CL(2) (EECN) until the peer's CWR.
    ecn_echo_until_cwr: bool,
    /// Receiver: CL(1) echoes left (EECN §4.4.2: the next 3 ACKs).
    ecn_cl1_left: u32,
    /// Receiver: highest VCP load code since the last ACK.
    ecn_vcp_load: u8,
    /// Sender: set CWR on the next new data segment (RFC 3168 §6.1.2).
    ecn_cwr_pending: bool,
    /// Sender: no new reaction until `snd_una` reaches this (once per window).
    ecn_guard_seq: u64,
    /// Sender: the level of the last reaction (a higher one passes the guard).
    ecn_guard_level: u8,
}

/// The number of entries of a sequence sorted by strictly increasing `start(i)` (`n` of
/// them) whose start is below `x`: `partition_point(|s| s.start < x)`, found by
/// interpolation. The send queue's segments are mostly `step` (one MSS) apart, so entry
/// `(x - start(0)) / step` is where the answer lies or next to it; a few entries are
/// compared around it, and a binary search finishes only if that guess was far off (short
/// segments, a gap). A binary search from the middle reads about log2(n) segments, each
/// on its own cache line, one after the other; with many flows those are out of the cache
/// (perf put about 4% of a 512-flow run's samples on those probes; no wall-clock gain was
/// shown: docs/performance-history.md, "An eighth round"). Same answer as `partition_point`
/// for every input (property test).
#[inline]
fn partition_by_start(n: usize, start: impl Fn(usize) -> u64, x: u64, step: u64) -> usize {
    const NEAR: usize = 4;
    if n == 0 || x <= start(0) {
        return 0;
    }
    let guess = usize::try_from((x - start(0)) / step.max(1)).unwrap_or(usize::MAX).min(n);
    // The answer lies in lo..=hi: start(lo - 1) < x (lo >= 1, as start(0) < x), and
    // start(hi) >= x or hi = n.
    let (mut lo, mut hi) = (1, n);
    if guess < n && start(guess) < x {
        // The answer is above the guess: walk up a few entries.
        lo = guess + 1;
        for _ in 0..NEAR {
            if lo >= n || start(lo) >= x {
                return lo;
            }
            lo += 1;
        }
    } else {
        // start(guess) >= x (or guess = n): the answer is at or below it; walk down.
        hi = guess;
        for _ in 0..NEAR {
            if hi <= 1 || start(hi - 1) < x {
                return hi;
            }
            hi -= 1;
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if start(mid) < x {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Sequence ranges whose sent segments are all SACKed (or since acknowledged): what the
/// previous ACK's SACK blocks covered, clipped to what was sent then, in ascending order
/// with a gap between any two. The gap makes them safe to skip: a segment wholly inside
/// their union is then wholly inside one of them, a block that SACKed it. Ranges that
/// overlap or touch are therefore not merged (a segment spanning two blocks was SACKed by
/// neither); the longest is kept and the others forgotten, which costs only a longer walk.
/// At most one range per block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SackSeen {
    ranges: [(u64, u64); MAX_SACK_BLOCKS],
    len: u8,
}

impl SackSeen {
    /// Adds `[start, end)` (an empty range is ignored).
    fn add(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let (mut kept, mut k) = ([(0u64, 0u64); MAX_SACK_BLOCKS], 0);
        let mut longest = (start, end);
        for &(a, b) in &self.ranges[..self.len as usize] {
            if b < start || a > end {
                kept[k] = (a, b);
                k += 1;
            } else if b - a > longest.1 - longest.0 {
                longest = (a, b);
            }
        }
        if k == MAX_SACK_BLOCKS {
            return; // full: forgotten (not reached, one range is added per block)
        }
        let at = kept[..k].partition_point(|r| r.0 < longest.0);
        kept.copy_within(at..k, at + 1);
        kept[at] = longest;
        self.ranges = kept;
        self.len = (k + 1) as u8;
    }

    /// The parts of `[start, end)` outside every range, in ascending order.
    fn uncovered(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64)> {
        let (ranges, n) = (self.ranges, self.len as usize);
        let (mut at, mut i) = (start, 0);
        std::iter::from_fn(move || {
            while at < end {
                if i == n || ranges[i].0 >= end {
                    let part = (at, end);
                    at = end;
                    return Some(part);
                }
                let (a, b) = ranges[i];
                i += 1;
                if b <= at {
                    continue;
                }
                if a > at {
                    let part = (at, a);
                    at = b;
                    return Some(part);
                }
                at = b;
            }
            None
        })
    }
}

impl Connection {
    fn new(cfg: Arc<ConnectionConfig>, seed: u64, local: Addr, remote: Addr, state: State) -> Self {
        let mut controller = cc::build_seeded(&cfg, seed);
        controller.on_handshake_feedback(HandshakeFeedback::default());
        let mut rtt = RttEstimator::new(cfg.initial_rto_ns, cfg.min_rto_ns, cfg.max_rto_ns);
        if cfg.linux_rto {
            rtt = rtt.linux();
        }
        let scheduler: Box<dyn SendScheduler> = match &cfg.scheduler {
            SchedulerKind::Fifo => Box::new(Fifo::new()),
            SchedulerKind::Cats(c) => Box::new(Conductor::new(c.clone())),
            SchedulerKind::Priority => Box::new(crate::sched::prio::StrictPriority::new()),
        };
        Self {
            local,
            remote,
            state,
            events: VecDeque::new(),
            stats: ConnectionStats::default(),
            syn_pending: true,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            sent_chunks: sent_chunks::SentChunks::default(),
            sacked_segs: 0,
            high_sacked_start: 0,
            sack_seen: SackSeen::default(),
            #[cfg(test)]
            scoreboard_steps: 0,
            #[cfg(test)]
            naive_scoreboard: false,
            loss_floor: 0,
            lost_pending: 0,
            lost_from: u64::MAX,
            rexmit: RetransmitLoss::new(cfg.dup_thresh),
            scheduler,
            fin_requested: false,
            fin_sent: false,
            fin_acked: false,
            peer_window_bytes: cfg.receive_buffer_bytes,
            app_tail: 0,
            ns3_rule3_from: 0,
            recovery: Recovery::Open,
            rto_deadline_ns: None,
            rack_on: cfg.rack,
            rack_xmit_ns: 0,
            rack_end_seq: 0,
            rack_rtt_ns: 0,
            rack_deadline_ns: None,
            rack_sent: VecDeque::new(),
            tlp_deadline_ns: None,
            rack_timer_ns: None,
            tlp_pending: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            prr_log: Vec::new(),
            fates: VecDeque::new(),
            fates_lost: 0,
            consecutive_rtos: 0,
            last_shed_ns: None,
            path: Path::new(controller, rtt),
            rcv_nxt: 0,
            ooo: ChunkedMap::default(),
            ooo_bytes: 0,
            rcv_adv_edge: 0,
            ooo_arrivals: 0,
            sack_blocks: SackBlocks::default(),
            segs_since_ack: 0,
            linux_ack: cfg.linux_ack.then(|| Box::new(linux_ack::LinuxAck::new(cfg.mss_bytes))),
            ack_now: false,
            delack_deadline_ns: None,
            msg_progress: IntMap::default(),
            watches: Default::default(),
            peer_fin: false,
            ecn: cfg.ecn_mode(),
            ecn_syn_level: 0,
            ecn_handshake_echo: None,
            ecn_handshake_level: 0,
            ecn_echo_until_cwr: false,
            ecn_cl1_left: 0,
            ecn_vcp_load: 0,
            ecn_cwr_pending: false,
            ecn_guard_seq: 0,
            ecn_guard_level: 0,
            cfg,
        }
    }

    /// Active open: the returned connection's first transmit is a SYN.
    pub fn connect(cfg: impl Into<Arc<ConnectionConfig>>, local: Addr, remote: Addr) -> Self {
        let cfg = cfg.into();
        let seed = cfg.seed;
        Self::connect_seeded(cfg, seed, local, remote)
    }

    /// [`connect`](Self::connect) with `seed` for the congestion controller's random
    /// stream instead of the settings' own `seed`: settings shared by connections that
    /// differ only in their seed (the simulator gives every flow its own) stay one copy.
    /// [`config`](Self::config)`().seed` is then the shared copy's, not this connection's.
    pub fn connect_seeded(cfg: impl Into<Arc<ConnectionConfig>>, seed: u64, local: Addr, remote: Addr) -> Self {
        Self::new(cfg.into(), seed, local, remote, State::SynSent)
    }

    /// Passive open from a received SYN: the first transmit is the SYN-ACK.
    /// Returns `None` when `syn` is not a SYN.
    /// (`_now_ns` is part of the sans-IO contract: every input takes the time; a new
    /// connection needs none of it yet.)
    pub fn accept(cfg: impl Into<Arc<ConnectionConfig>>, now_ns: u64, syn: &Packet) -> Option<Self> {
        let cfg = cfg.into();
        let seed = cfg.seed;
        Self::accept_seeded(cfg, seed, now_ns, syn)
    }

    /// [`accept`](Self::accept) with the controller's seed given apart from the settings
    /// (see [`connect_seeded`](Self::connect_seeded)).
    pub fn accept_seeded(cfg: impl Into<Arc<ConnectionConfig>>, seed: u64, _now_ns: u64, syn: &Packet) -> Option<Self> {
        if !syn.flags.has(TcpFlags::SYN) || syn.flags.has(TcpFlags::ACK) {
            return None;
        }
        let rcv_nxt = syn.seq.checked_add(1)?;
        let mut c = Self::new(cfg.into(), seed, syn.dst, syn.src, State::SynReceived);
        c.rcv_nxt = rcv_nxt;
        c.peer_window_bytes = syn.window_bytes;
        c.stats.packets_received += 1;
        c.ecn = c.cfg.ecn_mode().accept(syn.flags);
        c.ecn_syn_level = ecnc::eecn_level_of(syn.ecn);
        Some(c)
    }

    /// Replace the send scheduler (the one `scheduler` in the config names by default).
    /// Call before writing messages.
    pub fn set_scheduler(&mut self, scheduler: Box<dyn SendScheduler>) {
        self.scheduler = scheduler;
    }

    // ------------------------------------------------------------------ getters

    /// Connection state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Local endpoint.
    pub fn local(&self) -> Addr {
        self.local
    }
    /// Remote endpoint.
    pub fn remote(&self) -> Addr {
        self.remote
    }
    /// Settings.
    pub fn config(&self) -> &ConnectionConfig {
        &self.cfg
    }
    /// Counters.
    pub fn stats(&self) -> &ConnectionStats {
        &self.stats
    }
    /// The congestion window the sender obeys now (PRR's during fast recovery).
    pub fn cwnd_bytes(&self) -> u64 {
        match &self.recovery {
            Recovery::Fast { prr: Some(_), window_bytes, .. } => *window_bytes,
            _ => self.path.cc.window_bytes(),
        }
    }
    /// Slow-start threshold reported by the controller.
    pub fn ssthresh_bytes(&self) -> u64 {
        self.path.cc.ssthresh_bytes()
    }
    /// Pacing rate, when the controller paces.
    pub fn pacing_rate_bps(&self) -> Option<u64> {
        self.path.cc.pacing_rate_bps()
    }
    /// Controller name and state, for traces.
    pub fn cc_state(&self) -> (&'static str, &'static str) {
        (self.path.cc.name(), self.path.cc.state())
    }
    /// Smoothed RTT.
    pub fn srtt_ns(&self) -> Option<u64> {
        self.path.rtt.srtt_ns()
    }
    /// Latest RTT sample.
    pub fn latest_rtt_ns(&self) -> Option<u64> {
        self.path.rtt.latest_rtt_ns()
    }
    /// Bytes in flight (RFC 6675 `pipe`).
    pub fn bytes_in_flight(&self) -> u64 {
        self.path.pipe_bytes
    }
    /// Bytes delivered to the peer so far (cumulatively or selectively acknowledged).
    pub fn delivered_bytes(&self) -> u64 {
        self.path.delivered_bytes
    }
    /// Every written byte (and the FIN, if closing) has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.segs.is_empty() && self.scheduler.queued_bytes() == 0 && !self.syn_pending
    }
    /// Every PRR decision with the bytes sent in response, when `trace_prr` is on.
    pub fn prr_log(&self) -> &[(PrrDecision, u64)] {
        &self.prr_log
    }
    /// The ECN variant in use (after the handshake: what was negotiated).
    pub fn ecn_mode(&self) -> EcnMode {
        self.ecn
    }
    /// The congestion level the handshake reported for this end's SYN or SYN-ACK (EECN
    /// §4.4.1; 0 without EECN).
    pub fn handshake_congestion_level(&self) -> u8 {
        self.ecn_handshake_level
    }
    /// True while in fast recovery or RTO recovery.
    pub fn in_recovery(&self) -> bool {
        !matches!(self.recovery, Recovery::Open)
    }

    // ------------------------------------------------------------------ commands

    /// Hand a whole message to the send scheduler (CATS §II-D-1: a per-message priority).
    /// Under Save-Data, a message less important than the threshold is discarded at once
    /// and reported as [`Event::MessageDiscarded`].
    pub fn write_message(&mut self, now_ns: u64, msg: MessageMeta) {
        if msg.len_bytes == 0 || self.fin_requested {
            return;
        }
        if self.cfg.save_data_threshold.is_some_and(|t| msg.priority > t) {
            self.report_discard(Discarded {
                msg_id: msg.id,
                bytes: msg.len_bytes,
                partially_sent: false,
                reason: DiscardReason::SaveData,
            });
            return;
        }
        self.scheduler.enqueue(now_ns, msg);
    }

    /// Write a message with the connection's default priority (CATS §II-D-1: a per-socket
    /// default) unless `priority` is given.
    pub fn write(&mut self, now_ns: u64, id: u32, len_bytes: u64, priority: Option<u8>) {
        let priority = priority.unwrap_or(self.cfg.default_priority);
        self.write_message(now_ns, MessageMeta { id, len_bytes, priority });
    }

    /// Asks for [`Event::MessageBytes`] once the first `bytes` bytes of the peer's message
    /// `msg_id` have been delivered in order (behind everything before them on the byte
    /// stream). One watermark per message: registering again replaces it; it fires once. If
    /// that many bytes have arrived already, the event is raised at once. A watermark beyond
    /// the message's length never fires (its `MessageComplete` says it all), nor does one on
    /// a message that completed before the call. See [`crate::watch`].
    pub fn watch_message_bytes(&mut self, msg_id: u32, bytes: u64) {
        let delivered = self.msg_progress.get(&msg_id).map_or(0, |g| g.0);
        if let Some(delivered) = self.watches.register(msg_id, bytes, delivered) {
            self.events.push_back(Event::MessageBytes { msg_id, bytes: delivered });
        }
    }

    /// Set the per-socket default priority.
    pub fn set_default_priority(&mut self, priority: u8) {
        Arc::make_mut(&mut self.cfg).default_priority = priority;
    }

    /// Turn Save-Data on (or change its threshold): queued messages less important than
    /// `threshold` leave the scheduler and are reported (CATS §II-D-3).
    pub fn set_save_data(&mut self, threshold: Option<u8>) {
        Arc::make_mut(&mut self.cfg).save_data_threshold = threshold;
        if let Some(t) = threshold {
            for d in self.scheduler.discard_below(t) {
                self.report_discard(d);
            }
        }
    }

    fn report_discard(&mut self, d: Discarded) {
        match d.reason {
            DiscardReason::SaveData => self.stats.save_data_discarded_bytes += d.bytes,
            DiscardReason::LoadShed => self.stats.shed_bytes += d.bytes,
        }
        self.events.push_back(Event::MessageDiscarded {
            msg_id: d.msg_id,
            bytes: d.bytes,
            partially_sent: d.partially_sent,
            reason: d.reason,
        });
    }

    /// Close the sending direction once everything written has been sent.
    pub fn close(&mut self) {
        self.fin_requested = true;
    }

    // ------------------------------------------------------------------ outputs

    /// The next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest deadline at which [`handle_timeout`](Self::handle_timeout) must run.
    pub fn poll_timeout(&self) -> Option<u64> {
        let mut t = self.rto_deadline_ns;
        let mut take = |d: Option<u64>| {
            if let Some(d) = d {
                t = Some(t.map_or(d, |x: u64| x.min(d)));
            }
        };
        take(self.delack_deadline_ns);
        if self.rack_on {
            take(self.rack_timer_ns);
        }
        if self.path.pacing_blocked {
            take(Some(self.path.next_send_ns));
        }
        t
    }

    /// The next packet to send now, or `None`.
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<Packet> {
        let mut p = Packet::default();
        self.poll_transmit_into(now_ns, &mut p).then_some(p)
    }

    /// [`poll_transmit`](Self::poll_transmit) into a packet the caller owns: when there is
    /// a packet to send, every field of `out` is overwritten with it and the result is
    /// `true`; otherwise `out` is left as it was. A driver that recycles its packet buffers
    /// (the simulator) builds each packet in place instead of moving a ~200-byte value
    /// through the call and into its buffer.
    pub fn poll_transmit_into(&mut self, now_ns: u64, out: &mut Packet) -> bool {
        self.path.pacing_blocked = false;
        if self.syn_pending {
            self.send_syn(now_ns, out);
            return true;
        }
        if self.state != State::Closed && self.send_data(now_ns, out) {
            return true;
        }
        if self.ack_now && self.state != State::SynSent {
            self.stats.pure_acks_sent += 1;
            self.make_packet(out, TcpFlags::ACK, self.snd_nxt, 0, Chunks::new());
            self.on_ack_sent();
            self.stats.packets_sent += 1;
            return true;
        }
        false
    }

    // ------------------------------------------------------------------ inputs

    /// Handle expired timers (delayed ACK, retransmission, pacing).
    pub fn handle_timeout(&mut self, now_ns: u64) {
        if self.delack_deadline_ns.is_some_and(|d| d <= now_ns) {
            self.delack_deadline_ns = None;
            self.ack_now = true;
        }
        if self.rack_on && self.rack_timer_ns.is_some_and(|d| d <= now_ns) {
            self.on_rack_timers(now_ns);
        }
        if self.rto_deadline_ns.is_some_and(|d| d <= now_ns) {
            self.on_rto(now_ns);
        }
    }

    /// Index of the first sent segment whose start is at or above `x`
    /// (`segs.partition_point(|s| s.start < x)`, by [`partition_by_start`]).
    #[inline]
    fn seg_at_or_above(&self, x: u64) -> usize {
        partition_by_start(self.segs.len(), |i| self.segs[i].start, x, self.cfg.mss_bytes as u64)
    }

    /// Handle a received packet addressed to this connection.
    pub fn handle_packet(&mut self, now_ns: u64, pkt: &Packet) {
        if self.state == State::Closed {
            // TIME-WAIT's duty (RFC 9293 §3.10.7.4): if our last ACK was lost the peer
            // retransmits its FIN (or data); acknowledge it again so the peer can close.
            if pkt.payload_bytes > 0 || pkt.flags.has(TcpFlags::FIN) {
                self.stats.packets_received += 1;
                self.ack_now = true;
            }
            return;
        }
        self.stats.packets_received += 1;
        let flags = pkt.flags;
        if flags.has(TcpFlags::SYN) {
            match self.state {
                State::SynSent if flags.has(TcpFlags::ACK) && pkt.ack == 1 && pkt.seq < u64::MAX => {
                    self.rcv_nxt = pkt.seq + 1;
                    // EECN §4.2 / RFC 3168 §6.1.1: the SYN-ACK settles the ECN variant.
                    let (mode, level) = self.cfg.ecn_mode().on_syn_ack(flags);
                    self.ecn = mode;
                    self.ecn_handshake_level = level;
                    if mode == EcnMode::Eecn {
                        self.ecn_handshake_echo = Some(ecnc::eecn_level_of(pkt.ecn));
                    }
                }
                State::SynReceived if !flags.has(TcpFlags::ACK) => {
                    // A retransmitted SYN: our SYN-ACK was lost. Send it again now, not a
                    // bare ACK the client could not use (RFC 9293 §3.10.7.4).
                    self.resend_syn_ack();
                    return;
                }
                State::SynSent => return,
                _ => {
                    // A duplicate SYN-ACK: our ACK of it was lost; answer at once.
                    self.ack_now = true;
                    return;
                }
            }
        } else if self.state == State::SynSent {
            // RFC 9293 §3.10.7.3: in SYN-SENT, a segment without SYN is dropped.
            return;
        }
        self.peer_window_bytes = pkt.window_bytes;
        if flags.has(TcpFlags::ACK) {
            self.process_ack(now_ns, pkt);
        }
        if self.state == State::SynSent && self.snd_una >= 1 {
            self.state = State::Established;
            self.events.push_back(Event::Connected);
            self.ack_now = true;
            self.feed_handshake_rtt();
        } else if self.state == State::SynReceived && self.snd_una >= 1 {
            if self.ecn == EcnMode::Eecn {
                // EECN §4.2: the handshake's last ACK echoes the level the SYN-ACK met.
                self.ecn_handshake_level = ecnc::eecn_level_from_flags(flags, true);
            }
            self.state = State::Established;
            self.events.push_back(Event::Connected);
            self.feed_handshake_rtt();
            if self.linux_ack.is_none() {
                // ns-3 3.37 (`TcpSocketBase::ProcessSynRcvd` sets its delayed-ACK count to
                // the maximum): the first data segment after the handshake is acknowledged
                // at once, every second one after that.
                self.segs_since_ack = self.cfg.delayed_ack_segments.saturating_sub(1);
            }
        }
        if self.state != State::SynSent && (pkt.payload_bytes > 0 || flags.has(TcpFlags::FIN)) {
            if pkt.payload_bytes > 0 {
                self.on_data_ecn(pkt);
            }
            self.process_data(now_ns, pkt);
        }
        self.check_closed();
    }

    // ------------------------------------------------------------------ internals: sending

    /// The receive window to advertise: the buffer's free space (out-of-order data holds
    /// some of it; the application reads in-order data at once), but the right edge never
    /// moves left (RFC 9293 §3.8.6, SHLD-14: a receiver should not shrink the window; Linux's
    /// `tcp_select_window` keeps the offered edge as well). A shrinking edge would stop new
    /// data during a long recovery, and with it the SACKs of data sent after a lost
    /// retransmission that reveal the loss. Data up to that edge always fits: the edge never
    /// passes `rcv_nxt + receive_buffer`, which is what `process_data` accepts.
    fn advertised_window(&mut self) -> u64 {
        // ns-3 3.37 (`TcpRxBuffer::MaxRxSequence`) offers its whole buffer past RCV.NXT
        // whatever it holds out of order.
        let held_bytes = if self.cfg.ns3_compat { 0 } else { self.ooo_bytes };
        let free_edge = self.rcv_nxt.saturating_add(self.cfg.receive_buffer_bytes.saturating_sub(held_bytes));
        self.rcv_adv_edge = self.rcv_adv_edge.max(free_edge);
        self.rcv_adv_edge - self.rcv_nxt
    }

    /// Writes a segment into `p`, every field (a recycled packet keeps nothing of its
    /// previous contents).
    fn make_packet(&mut self, p: &mut Packet, flags: u8, seq: u64, payload: u32, chunks: Chunks) {
        p.window_bytes = self.advertised_window();
        p.src = self.local;
        p.dst = self.remote;
        p.ecn = Ecn::NotEct;
        p.dscp = 0;
        p.flags = TcpFlags(flags);
        p.seq = seq;
        p.ack = self.rcv_nxt;
        p.sack = [SackBlock::default(); MAX_SACK_BLOCKS];
        p.sack_len = 0;
        p.priority_option = None;
        p.payload_bytes = payload;
        p.chunks = chunks;
        p.quic = None;
        p.syn_without_mss = self.cfg.ns3_compat;
        if flags & TcpFlags::ACK != 0 {
            let n = self.fill_sack(&mut p.sack);
            p.sack_len = n as u8;
        }
        self.apply_ecn(p);
    }

    /// Sets the IP codepoint and the ECE/CWR bits of an outgoing packet (the tables in
    /// [`crate::ecn`]).
    /// ECN fields of an outgoing packet. `p.seq < snd_nxt` on a data packet means a
    /// retransmission: RFC 3168 §6.1.5 keeps it Not-ECT and CWR goes on new data only.
    fn apply_ecn(&mut self, p: &mut Packet) {
        let f = p.flags.0;
        if f & TcpFlags::SYN != 0 {
            if f & TcpFlags::ACK == 0 {
                let mode = self.cfg.ecn_mode();
                p.flags.0 |= mode.syn_flags();
                p.ecn = mode.handshake_codepoint();
            } else {
                p.flags.0 |= match self.ecn {
                    EcnMode::Off => 0,
                    EcnMode::Classic => TcpFlags::ECE,
                    EcnMode::Eecn => ecnc::eecn_echo_flags(self.ecn_syn_level, true),
                    EcnMode::Vcp => TcpFlags::ECE | TcpFlags::CWR,
                };
                p.ecn = self.ecn.handshake_codepoint();
            }
            return;
        }
        let echo = match self.ecn {
            EcnMode::Off => 0,
            EcnMode::Classic => {
                if self.ecn_echo_until_cwr {
                    TcpFlags::ECE
                } else {
                    0
                }
            }
            EcnMode::Eecn => {
                if let Some(level) = self.ecn_handshake_echo.take() {
                    ecnc::eecn_echo_flags(level, true)
                } else if self.ecn_echo_until_cwr {
                    ecnc::eecn_echo_flags(2, false)
                } else if self.ecn_cl1_left > 0 {
                    self.ecn_cl1_left -= 1;
                    ecnc::eecn_echo_flags(1, false)
                } else {
                    0
                }
            }
            EcnMode::Vcp => ecnc::vcp_echo_flags(std::mem::take(&mut self.ecn_vcp_load)),
        };
        p.flags.0 |= echo;
        if p.payload_bytes > 0 {
            let retransmission = p.seq < self.snd_nxt;
            if self.ecn_cwr_pending && !retransmission {
                let can = match self.ecn {
                    EcnMode::Classic => true,
                    // EECN Table 2: `0 1` on a data packet is CWR only when it echoes nothing.
                    EcnMode::Eecn => echo == 0,
                    _ => false,
                };
                if can {
                    p.flags.0 |= TcpFlags::CWR;
                    self.ecn_cwr_pending = false;
                }
            }
            p.ecn = self.ecn.data_codepoint(retransmission);
        }
    }

    /// Receiver side of ECN for an arriving data segment (RFC 3168 §6.1.3; EECN §4.2,
    /// §4.4.2; VCP §3.1). A new congestion indication is acknowledged at once.
    fn on_data_ecn(&mut self, pkt: &Packet) {
        let f = pkt.flags;
        match self.ecn {
            EcnMode::Off => {}
            EcnMode::Classic => {
                if f.has(TcpFlags::CWR) {
                    self.ecn_echo_until_cwr = false;
                }
                if pkt.ecn == Ecn::Ce {
                    self.ack_now |= !self.ecn_echo_until_cwr;
                    self.ecn_echo_until_cwr = true;
                }
            }
            EcnMode::Eecn => {
                if f.has(TcpFlags::CWR) && !f.has(TcpFlags::ECE) {
                    self.ecn_echo_until_cwr = false;
                }
                match ecnc::eecn_level_of(pkt.ecn) {
                    2 => {
                        self.ack_now |= !self.ecn_echo_until_cwr;
                        self.ecn_echo_until_cwr = true;
                    }
                    1 => {
                        self.ack_now |= self.ecn_cl1_left == 0 && !self.ecn_echo_until_cwr;
                        self.ecn_cl1_left = self.cfg.eecn.cl1_echo_acks;
                    }
                    _ => {}
                }
            }
            EcnMode::Vcp => self.ecn_vcp_load = self.ecn_vcp_load.max(ecnc::vcp_load_of(pkt.ecn)),
        }
    }

    /// The congestion code an ACK echoes (see [`AckSample::ecn_echo`]).
    fn decode_echo(&self, pkt: &Packet) -> u8 {
        if pkt.flags.has(TcpFlags::SYN) || self.state == State::SynReceived {
            return 0; // handshake echoes set the initial window instead (EECN §4.4.1)
        }
        match self.ecn {
            EcnMode::Off => 0,
            EcnMode::Classic => pkt.flags.has(TcpFlags::ECE) as u8,
            EcnMode::Eecn => ecnc::eecn_level_from_flags(pkt.flags, false),
            EcnMode::Vcp => ecnc::vcp_load_from_flags(pkt.flags),
        }
    }

    fn on_ack_sent(&mut self) {
        if let Some(l) = self.linux_ack.as_mut() {
            if self.ack_now || self.segs_since_ack > 0 {
                l.on_ack_sent();
            }
        }
        self.ack_now = false;
        self.segs_since_ack = 0;
        self.delack_deadline_ns = None;
    }

    fn send_syn(&mut self, now_ns: u64, p: &mut Packet) {
        self.syn_pending = false;
        let flags = if self.state == State::SynReceived { TcpFlags::SYN | TcpFlags::ACK } else { TcpFlags::SYN };
        self.make_packet(p, flags, 0, 0, Chunks::new());
        self.snd_nxt = 1;
        self.segs.push_back(SentSeg {
            start: 0,
            end: 1,
            flags,
            sent_ns: now_ns,
            first_sent_ns: now_ns,
            delivered_ns: now_ns,
            delivered_bytes: 0,
            app_limited: false,
            tx: self.rexmit.on_transmit(),
            retransmitted: false,
            sacked: false,
            lost: false,
            in_flight: true,
            resent_in_flight: false,
        });
        self.path.pipe_bytes += 1;
        self.arm_rto(now_ns);
        if flags & TcpFlags::ACK != 0 {
            self.on_ack_sent();
        }
        self.stats.packets_sent += 1;
    }

    fn send_window_bytes(&self) -> u64 {
        self.cwnd_bytes()
    }

    /// RFC 6675 §5 NextSeg(): lost segments first (lowest sequence first), then new data,
    /// within the congestion window (PRR's during fast recovery), the peer's receive window
    /// and the pacing schedule.
    /// Writes the segment into `out` and returns `true` when there is one to send.
    fn send_data(&mut self, now_ns: u64, out: &mut Packet) -> bool {
        let window = self.send_window_bytes();
        let mss = self.cfg.mss_bytes as u64;
        let pacing = self.path.cc.pacing_rate_bps();
        let paced_out = pacing.is_some() && now_ns < self.path.next_send_ns;

        // RFC 8985 §7.3: a loss probe goes whatever the window.
        let probe = self.tlp_pending;
        if self.lost_pending > 0 {
            let from = self.seg_at_or_above(self.lost_from);
            let idx = self.segs.range(from..).position(|s| s.lost && !s.in_flight && !s.sacked).map(|i| from + i);
            if let Some(i) = idx {
                self.lost_from = self.segs[i].start;
                if !self.may_resend(i, window, probe, paced_out) {
                    return false;
                }
                self.retransmit(now_ns, i, out);
                return true;
            }
            self.lost_pending = 0;
        }
        if self.state != State::Established {
            return false;
        }

        // New data or FIN.
        let rwnd_room = self.snd_una.saturating_add(self.peer_window_bytes).saturating_sub(self.snd_nxt);
        let mut queued = self.scheduler.queued_bytes();
        let want_fin = queued == 0 && self.fin_requested && !self.fin_sent;
        if queued > 0 && self.cfg.send_buffer_bytes.is_some() {
            // Only what the application has written into the send buffer can go.
            queued = queued.min(self.send_buffer_room(window));
        }
        if queued == 0 && !want_fin {
            if self.cfg.ns3_compat && matches!(self.recovery, Recovery::Fast { .. }) {
                if let Some(i) = self.ns3_rule3_segment() {
                    if !self.may_resend(i, window, false, paced_out) {
                        return false;
                    }
                    self.resend_in_flight(now_ns, i, out);
                    return true;
                }
            }
            // Nothing to send: application-limited (draft §3.4).
            if self.path.pipe_bytes < window {
                self.path.app_limited_until = (self.path.delivered_bytes + self.path.pipe_bytes).max(1);
            }
            return false;
        }
        let mss = mss.saturating_sub(self.option_overhead()).max(1);
        let seg_len = if want_fin { 1 } else { mss.min(queued) };
        if !probe && self.path.pipe_bytes > 0 && self.path.pipe_bytes + seg_len > window {
            return false;
        }
        if !want_fin && rwnd_room == 0 {
            return false;
        }
        // RFC 1122 §4.2.3.4, the sender's silly-window avoidance: while data is in flight
        // (its ACK will open the window), wait until the peer's window holds a whole
        // segment instead of sending the sliver that fits, as ns-3 (TcpSocketBase::
        // SendPendingData) and Linux (tcp_snd_wnd_test) do. A 2 MiB window is not a
        // multiple of 1,448 bytes: without this a window-limited sender puts a 448-byte
        // segment at its edge, which the others' traffic can drop and then its
        // retransmission, costing an RTO that ns-3 does not take. With nothing in flight
        // the sliver goes (no ACK would come to open the window).
        if !want_fin && !probe && rwnd_room < seg_len && self.snd_nxt > self.snd_una {
            return false;
        }
        if paced_out {
            self.path.pacing_blocked = true;
            return false;
        }
        let (flags, payload, chunks) = if want_fin {
            self.fin_sent = true;
            (TcpFlags::FIN | TcpFlags::ACK, 0u32, Chunks::new())
        } else {
            // `queued` is within the send buffer's unsent bytes when there is one.
            let max = mss.min(rwnd_room).min(queued) as u32;
            let chunks = self.scheduler.next_segment(now_ns, max);
            let payload: u32 = chunks.iter().map(|c| c.len_bytes()).sum();
            if payload == 0 {
                return false;
            }
            (TcpFlags::ACK | TcpFlags::PSH, payload, chunks)
        };
        let start = self.snd_nxt;
        let end = start + payload as u64 + (flags & TcpFlags::FIN != 0) as u64;
        self.sent_chunks.record(start, &chunks);
        self.make_data_packet(out, flags, start, payload, chunks);
        if self.path.pipe_bytes == 0 {
            // draft §3.2: restart the sampling interval after idle.
            self.path.first_sent_ns = now_ns;
            self.path.delivered_ns = now_ns;
        }
        let tx = self.rexmit.on_transmit();
        self.segs.push_back(SentSeg {
            start,
            end,
            flags,
            sent_ns: now_ns,
            first_sent_ns: self.path.first_sent_ns,
            delivered_ns: self.path.delivered_ns,
            delivered_bytes: self.path.delivered_bytes,
            app_limited: self.path.app_limited_until != 0,
            tx,
            retransmitted: false,
            sacked: false,
            lost: false,
            in_flight: true,
            resent_in_flight: false,
        });
        if self.rack_on {
            self.rack_sent.push_back((now_ns, start, end, tx));
        }
        self.snd_nxt = end;
        self.path.pipe_bytes += end - start;
        self.stats.data_segments_sent += (payload > 0) as u64;
        self.stats.data_bytes_sent += payload as u64;
        self.after_send(now_ns, payload, end - start);
        true
    }

    /// Whether sent segment `i` may go again now (NextSeg()'s rules (1) and (3)): with
    /// `ns3_compat` ns-3's application is first told the buffer has room, as its
    /// `SendPendingData` does once NextSeg() has found a segment; then the window (which a
    /// loss probe passes) and the pacer.
    fn may_resend(&mut self, i: usize, window: u64, probe: bool, paced_out: bool) -> bool {
        if self.cfg.ns3_compat {
            self.ns3_refill_before_send(self.segs[i].start, window);
        }
        let len = self.segs[i].end - self.segs[i].start;
        if !probe && self.path.pipe_bytes > 0 && self.path.pipe_bytes + len > window {
            return false;
        }
        if paced_out {
            self.path.pacing_blocked = true;
            return false;
        }
        true
    }

    /// ns-3 3.37's NextSeg() rule (3), which it applies in fast recovery with SACK when
    /// neither a lost segment (rule 1) nor unsent data (rule 2) is there: the first segment
    /// neither SACKed, lost nor sent again, whether or not SACKed data lies above it (RFC
    /// 6675's rule (3) asks for that). Linux has no such rule.
    fn ns3_rule3_segment(&mut self) -> Option<usize> {
        let from = self.seg_at_or_above(self.ns3_rule3_from);
        let i = self
            .segs
            .range(from..)
            .position(|s| !s.sacked && !s.lost && !s.retransmitted && s.in_flight && s.flags & TcpFlags::SYN == 0)
            .map(|i| from + i)?;
        // Every segment below it is SACKed, lost or sent again, and stays so.
        self.ns3_rule3_from = self.segs[i].start;
        Some(i)
    }

    /// Sends segment `i` again while it is still in flight (ns-3's rule (3)): it stays in
    /// flight and the pipe counts it twice ([`SentSeg::resent_in_flight`]).
    fn resend_in_flight(&mut self, now_ns: u64, i: usize, pkt: &mut Packet) {
        let seg = &mut self.segs[i];
        seg.retransmitted = true;
        seg.resent_in_flight = true;
        seg.sent_ns = now_ns;
        self.send_copy(now_ns, i, pkt);
    }

    /// Writes sent segment `i` into `pkt` again, with the pieces it first carried, and
    /// counts it: the pipe, the retransmission counters, what every send updates. What
    /// both kinds of resend share (`retransmit`, `resend_in_flight`).
    fn send_copy(&mut self, now_ns: u64, i: usize, pkt: &mut Packet) {
        let seg = &self.segs[i];
        let (start, len, flags, payload) = (seg.start, seg.end - seg.start, seg.flags, seg.payload_bytes());
        let chunks = self.sent_chunks.chunks_of(start, payload);
        self.path.pipe_bytes += len;
        self.stats.retransmitted_segments += 1;
        self.stats.retransmitted_bytes += payload as u64;
        let flags = if flags & TcpFlags::SYN != 0 { flags } else { flags | TcpFlags::ACK };
        self.make_data_packet(pkt, flags, start, payload, chunks);
        if payload > 0 {
            pkt.ecn = self.ecn.data_codepoint(true); // RFC 3168 §6.1.5
        }
        self.after_send(now_ns, payload, len);
    }

    /// With a send buffer: the bytes written into it and not yet sent, after the
    /// application has written what it would before this segment.
    fn send_buffer_room(&mut self, window: u64) -> u64 {
        let Some(buffer) = self.cfg.send_buffer_bytes else { return u64::MAX };
        if !self.cfg.ns3_compat {
            // The application keeps the buffer full: it ends at SND.UNA + the buffer.
            return self.snd_una.saturating_add(buffer).saturating_sub(self.snd_nxt);
        }
        if self.app_tail < self.snd_una {
            // The first data: BulkSendApplication fills the buffer once the connection is up.
            self.app_tail = self.snd_una;
            self.refill_send_buffer();
        } else if self.app_tail > self.snd_nxt {
            // ns-3's NextSeg() rule (2) found unsent data: SendPendingData may ask for more.
            self.ns3_refill_before_send(self.snd_nxt, window);
        }
        self.app_tail.saturating_sub(self.snd_nxt)
    }

    /// ns-3 3.37's `BulkSendApplication` (with `SendSize` one MSS): when told the buffer
    /// has room, it writes whole segments while one fits (`TcpTxBuffer::Add` refuses the
    /// one that does not).
    fn refill_send_buffer(&mut self) {
        if let Some(buffer) = self.cfg.send_buffer_bytes {
            let write = self.cfg.mss_bytes as u64;
            let held = self.app_tail.saturating_sub(self.snd_una);
            self.app_tail = self.app_tail.max(self.snd_una) + buffer.saturating_sub(held) / write * write;
        }
    }

    /// ns-3 3.37's `SendPendingData`: with a segment to send starting at `from`, it tells
    /// the application the buffer has room (`NotifySend`) when the buffer holds less from
    /// `from` on than the window would let go (`availableData < availableWindow`, the
    /// window being the smaller of the peer's and the congestion window, less the pipe).
    fn ns3_refill_before_send(&mut self, from: u64, window: u64) {
        if self.cfg.send_buffer_bytes.is_none() {
            return;
        }
        let available_window = window.min(self.peer_window_bytes).saturating_sub(self.path.pipe_bytes);
        if available_window > 0 && self.app_tail.saturating_sub(from) < available_window {
            self.refill_send_buffer();
        }
    }

    fn retransmit(&mut self, now_ns: u64, i: usize, pkt: &mut Packet) {
        if self.path.pipe_bytes == 0 {
            self.path.first_sent_ns = now_ns;
            self.path.delivered_ns = now_ns;
        }
        let (first_sent, delivered_ns, delivered, app_limited) = (
            self.path.first_sent_ns,
            self.path.delivered_ns,
            self.path.delivered_bytes,
            self.path.app_limited_until != 0,
        );
        let tx = self.rexmit.on_retransmit(self.segs[i].start);
        let seg = &mut self.segs[i];
        seg.lost = false;
        seg.in_flight = true;
        seg.retransmitted = true;
        seg.tx = tx;
        seg.sent_ns = now_ns;
        seg.first_sent_ns = first_sent;
        seg.delivered_ns = delivered_ns;
        seg.delivered_bytes = delivered;
        seg.app_limited = app_limited;
        let (start, len) = (seg.start, seg.end - seg.start);
        if self.rack_on {
            self.rack_sent.push_back((now_ns, start, start + len, tx));
        }
        self.lost_pending -= 1;
        self.send_copy(now_ns, i, pkt);
        if i == 0 && self.cfg.linux_rto {
            self.arm_rto(now_ns);
        }
    }

    /// Header bytes the priority option adds (3, padded to 4).
    fn option_overhead(&self) -> u64 {
        if self.cfg.priority_option {
            4
        } else {
            0
        }
    }

    /// A segment carrying payload: the priority option and DSCP follow its first chunk's
    /// priority (CATS §II-D-2).
    fn make_data_packet(&mut self, p: &mut Packet, flags: u8, seq: u64, payload: u32, chunks: Chunks) {
        let priority = chunks.first().map(|c| c.priority());
        self.make_packet(p, flags, seq, payload, chunks);
        if let Some(prio) = priority {
            if self.cfg.priority_option {
                p.priority_option = Some(prio);
            }
            if let Some(map) = &self.cfg.dscp_by_priority {
                p.dscp = map[(prio as usize).min(map.len() - 1)];
            }
        }
    }

    fn after_send(&mut self, now_ns: u64, payload_bytes: u32, seq_len: u64) {
        self.stats.packets_sent += 1;
        self.on_ack_sent();
        if let Recovery::Fast { prr: Some(prr), .. } = &mut self.recovery {
            prr.on_sent(seq_len);
            if let Some(last) = self.prr_log.last_mut() {
                last.1 += seq_len;
            }
        }
        self.path.cc.on_packet_sent(
            now_ns,
            payload_bytes as u64,
            self.path.pipe_bytes,
            self.path.app_limited_until != 0,
        );
        // Pacing spaces payload bytes, as Linux's internal pacing and ns-3 do: controllers
        // estimate bandwidth from delivered payload.
        if let Some(rate) = self.path.cc.pacing_rate_bps() {
            if rate > 0 {
                let gap = (payload_bytes as u128 * 8 * 1_000_000_000 / rate as u128) as u64;
                self.path.next_send_ns = self.path.next_send_ns.max(now_ns) + gap;
            }
        }
        if self.tlp_pending {
            // RFC 8985 §7.3: the probe is out; the RTO runs from it.
            self.tlp_pending = false;
            self.tlp_high_seq = Some(self.snd_nxt);
            self.stats.loss_probes += 1;
            self.arm_rto(now_ns);
        } else if self.rto_deadline_ns.is_none() {
            self.arm_rto(now_ns);
        }
        if self.rack_on {
            self.arm_tlp(now_ns);
        }
    }

    /// Marks the SYN-ACK lost so that the next `poll_transmit` sends it again.
    fn resend_syn_ack(&mut self) {
        if self.segs.front().is_some_and(|s| s.flags & TcpFlags::SYN != 0 && s.in_flight && !s.lost) {
            self.mark_resend(0);
        }
    }

    /// Takes sent segment `i` out of flight and queues it to be sent again (it goes at the
    /// next `poll_transmit`, lost segments first).
    fn mark_resend(&mut self, i: usize) {
        let seg = &mut self.segs[i];
        debug_assert!(seg.in_flight, "only a segment in flight is taken out of it");
        self.path.pipe_bytes -= seg.pipe_share_bytes();
        seg.in_flight = false;
        seg.resent_in_flight = false;
        seg.lost = true;
        self.lost_pending += 1;
        self.lost_from = self.lost_from.min(seg.start);
    }

    fn arm_rto(&mut self, now_ns: u64) {
        self.rto_deadline_ns = Some(now_ns.saturating_add(self.path.rtt.rto_ns()));
    }

    // ------------------------------------------------------------------ internals: ACKs

    fn feed_handshake_rtt(&mut self) {
        self.path.cc.on_handshake_feedback(HandshakeFeedback {
            congestion_level: self.ecn_handshake_level,
            rtt_ns: self.path.rtt.latest_rtt_ns(),
        });
    }

    fn deliver_seg(&mut self, now_ns: u64, idx: usize, rs: &mut Option<RateSample>, pick: &mut RttPick) {
        let seg = &self.segs[idx];
        self.path.pipe_bytes -= seg.pipe_share_bytes();
        if seg.lost && !seg.in_flight && !seg.sacked {
            self.lost_pending -= 1;
        }
        pick.add(now_ns, seg.sent_ns, seg.retransmitted);
        // RFC 8985 §6.2 step 2 (Linux's tcp_rack_advance): a retransmitted segment
        // acknowledged sooner than the minimum RTT after its retransmission was delivered by
        // an earlier copy, so it says nothing about what was sent after the retransmission.
        let attributable =
            !seg.retransmitted || self.path.rtt.min_rtt_ns().is_some_and(|m| now_ns.saturating_sub(seg.sent_ns) >= m);
        if attributable {
            self.rexmit.on_delivered(seg.tx);
            // RFC 8985 §6.2 step 2: the most recently sent segment delivered (segments sent
            // at the same instant ordered by sequence, as RACK's RACK_sent_after), and its RTT.
            if self.rack_on && (seg.sent_ns, seg.end) > (self.rack_xmit_ns, self.rack_end_seq) {
                self.rack_xmit_ns = seg.sent_ns;
                self.rack_end_seq = seg.end;
                self.rack_rtt_ns = now_ns.saturating_sub(seg.sent_ns);
            }
        }
        let payload_bytes = seg.payload_bytes();
        if payload_bytes == 0 {
            return;
        }
        let delivered_intact = !seg.lost;
        self.path.delivered_bytes += payload_bytes as u64;
        self.path.delivered_ns = now_ns;
        let take = rs.is_none_or(|r| seg.delivered_bytes >= r.prior_delivered_bytes);
        if take {
            let send_elapsed = seg.sent_ns.saturating_sub(seg.first_sent_ns);
            let ack_elapsed = now_ns.saturating_sub(seg.delivered_ns);
            *rs = Some(RateSample {
                prior_delivered_bytes: seg.delivered_bytes,
                delivered_bytes: 0,
                interval_ns: send_elapsed.max(ack_elapsed),
                is_app_limited: seg.app_limited,
                rtt_ns: if seg.retransmitted { None } else { Some(now_ns.saturating_sub(seg.sent_ns)) },
            });
            self.path.first_sent_ns = seg.sent_ns;
        }
        if delivered_intact && self.cfg.load_shedding.is_some() {
            self.record_fate(false);
        }
    }

    /// RFC 6675 §4 Update() for an ACK's SACK blocks: marks every sent segment wholly
    /// inside one SACKed (delivering it to the rate and RTT samples) and returns the bytes
    /// newly SACKed.
    #[inline]
    fn tag_sacked(
        &mut self,
        now_ns: u64,
        blocks: &[SackBlock],
        rs: &mut Option<RateSample>,
        pick: &mut RttPick,
    ) -> u64 {
        // An ACK without blocks leaves the cache below as it is: what it says stays true
        // (a segment stays SACKed, and none is sent inside a range clipped to `snd_nxt`).
        if blocks.is_empty() {
            return 0;
        }
        self.tag_sack_blocks(now_ns, blocks, rs, pick)
    }

    /// [`Self::tag_sacked`] for an ACK with blocks. Out of line, as are
    /// [`Self::find_losses`] and the receiver's [`Self::hold_out_of_order`]: it runs only
    /// while the peer reports holes, and inlined into the receive path it spread the
    /// in-order path's code over more instruction-cache lines.
    #[inline(never)]
    fn tag_sack_blocks(
        &mut self,
        now_ns: u64,
        blocks: &[SackBlock],
        rs: &mut Option<RateSample>,
        pick: &mut RttPick,
    ) -> u64 {
        // Block by block, and in sequence order inside one. A receiver repeats its blocks
        // in ACK after ACK (RFC 2018 §4), and one block may span thousands of segments
        // after a loss in a large window, so only what the previous ACK's blocks did not
        // cover is walked (Linux keeps the same cache, `recv_sack_cache` in
        // tcp_sacktag_write_queue): an ACK costs the segments it newly SACKs, not every
        // segment its blocks span.
        let mut acked_bytes = 0;
        #[cfg(not(test))]
        let seen = self.sack_seen;
        #[cfg(test)]
        let seen = if self.naive_scoreboard { SackSeen::default() } else { self.sack_seen };
        let mut now_seen = SackSeen::default();
        for b in blocks {
            if b.end <= self.snd_una || b.start >= self.snd_nxt {
                continue;
            }
            // Clipped to what is sent: a segment sent later may lie beyond that.
            now_seen.add(b.start, b.end.min(self.snd_nxt));
            for (u, v) in seen.uncovered(b.start, b.end) {
                // From the segment holding `u` (when it starts inside the block), else the
                // first starting above `u`, to the last starting below `v`.
                let mut i = self.seg_at_or_above(u);
                if i > 0 && self.segs[i - 1].end > u && self.segs[i - 1].start >= b.start {
                    i -= 1;
                }
                while i < self.segs.len() && self.segs[i].start < v && self.segs[i].end <= b.end {
                    #[cfg(test)]
                    {
                        self.scoreboard_steps += 1;
                    }
                    if !self.segs[i].sacked {
                        acked_bytes += self.segs[i].end - self.segs[i].start;
                        self.deliver_seg(now_ns, i, rs, pick);
                        let s = &mut self.segs[i];
                        s.sacked = true;
                        s.in_flight = false;
                        s.resent_in_flight = false;
                        s.lost = false;
                        self.high_sacked_start = self.high_sacked_start.max(s.start);
                        self.sacked_segs += 1;
                    }
                    i += 1;
                }
            }
        }
        self.sack_seen = now_seen;
        acked_bytes
    }

    fn process_ack(&mut self, now_ns: u64, pkt: &Packet) {
        let prior_in_flight = self.path.pipe_bytes;
        let prior_delivered = self.path.delivered_bytes;
        let was_in_recovery = self.in_recovery();
        let echo = self.decode_echo(pkt);
        if echo > 0 {
            self.stats.ecn_echoes_received[echo.min(3) as usize] += 1;
        }
        let mut rs: Option<RateSample> = None;
        // RTT candidates of the cumulatively and of the selectively acknowledged segments
        // (see `RttPick::sample` for Karn's rule).
        let mut cum_pick = RttPick::default();
        let mut sack_pick = RttPick::default();
        let mut acked_bytes = 0u64;

        // Cumulative acknowledgment.
        let ack = pkt.ack.min(self.snd_nxt);
        let advanced = ack > self.snd_una;
        if advanced {
            while let Some(front) = self.segs.front() {
                if front.end > ack {
                    break;
                }
                if !front.sacked {
                    acked_bytes += front.end - front.start;
                    self.deliver_seg(now_ns, 0, &mut rs, &mut cum_pick);
                } else {
                    self.sacked_segs -= 1;
                }
                let seg = self.segs.pop_front().expect("front exists");
                if seg.flags & TcpFlags::FIN != 0 {
                    self.fin_acked = true;
                }
            }
            self.snd_una = ack;
            // A segment is sent again whole, from its start: keep the pieces of the first one
            // still held even when an ACK covers part of it (a peer may acknowledge any byte).
            self.sent_chunks.acknowledged(self.segs.front().map_or(ack, |s| s.start));
            self.consecutive_rtos = 0;
        }

        // Selective acknowledgments (RFC 2018, RFC 6675 §4 "Update()").
        let sacked_bytes = self.tag_sacked(now_ns, pkt.sack_blocks(), &mut rs, &mut sack_pick);
        acked_bytes += sacked_bytes;

        let ambiguous = cum_pick.newest_retransmitted_ns.is_some() || sack_pick.newest_retransmitted_ns.is_some();
        let rtt_sample = RttPick::sample(&cum_pick, &sack_pick);
        if let Some(rtt) = rtt_sample {
            self.path.rtt.on_sample_at(rtt, self.snd_una, self.snd_nxt);
            // RFC 6298 §5.7 / Linux: only a valid sample collapses the backoff.
            self.path.rtt.reset_backoff();
        }
        if ambiguous {
            // Linux's rate sample carries the ACK's RTT (rs->rtt_us = ca_rtt_us), so that
            // BBR's min-RTT filter sees no ambiguous sample either.
            if let Some(r) = rs.as_mut() {
                r.rtt_ns = rtt_sample;
            }
        }

        // Exit recovery once everything outstanding at its start is acknowledged; then losses
        // this ACK reveals start a new episode (RFC 6675 §5), rather than going unanswered.
        let exit = match self.recovery {
            Recovery::Fast { point, .. } | Recovery::Rto { point } => self.snd_una >= point,
            Recovery::Open => false,
        };
        if exit {
            self.recovery = Recovery::Open;
            self.path.cc.on_recovery_exit(now_ns);
        }
        let mut newly_lost = self.detect_losses();
        if self.rack_on {
            newly_lost += self.rack_detect(now_ns);
        }
        if newly_lost > 0 && matches!(self.recovery, Recovery::Open) {
            let basis = self.ssthresh_basis(prior_in_flight);
            self.enter_fast_recovery(now_ns, basis);
        }

        // Rate sample (draft §3.3).
        if self.path.app_limited_until != 0 && self.path.delivered_bytes > self.path.app_limited_until {
            self.path.app_limited_until = 0;
        }
        if let Some(r) = rs.as_mut() {
            r.delivered_bytes = self.path.delivered_bytes - r.prior_delivered_bytes;
            // Linux tcp_rate_gen(): an interval shorter than min RTT is not trustworthy.
            if self.path.rtt.min_rtt_ns().is_some_and(|m| r.interval_ns < m) {
                r.interval_ns = 0;
            }
        }

        if acked_bytes > 0 || newly_lost > 0 {
            let sample = AckSample {
                now_ns,
                newly_acked_bytes: self.path.delivered_bytes - prior_delivered,
                newly_lost_bytes: newly_lost,
                delivered_total_bytes: self.path.delivered_bytes,
                prior_in_flight_bytes: prior_in_flight,
                bytes_in_flight: self.path.pipe_bytes,
                rtt_ns: rtt_sample,
                min_rtt_ns: self.path.rtt.min_rtt_ns(),
                srtt_ns: self.path.rtt.srtt_ns(),
                rate: rs,
                in_recovery: was_in_recovery || self.in_recovery(),
                app_limited: self.path.app_limited_until != 0,
                ecn_echo: echo,
                sack_only: !advanced,
                newly_sacked: sacked_bytes > 0,
                pre_recovery_bytes: 0,
                handshake_only: false,
            };
            self.path.cc.on_ack(&sample);
        }

        // RFC 3168 §6.1.2 / EECN Algorithm 1: react to an echoed mark once per window of
        // data (a higher EECN level passes at once), never during loss recovery.
        if echo > 0 && matches!(self.ecn, EcnMode::Classic | EcnMode::Eecn) && matches!(self.recovery, Recovery::Open) {
            // Fresh once data sent after the last reaction is acknowledged (Linux leaves its
            // CWR state at the same point).
            let fresh = self.snd_una > self.ecn_guard_seq;
            if fresh || echo > self.ecn_guard_level {
                self.path.cc.on_congestion(now_ns, CongestionSignal::Ecn { level: echo }, prior_in_flight);
                self.stats.ecn_responses[echo.min(3) as usize] += 1;
                self.ecn_guard_seq = self.snd_nxt;
                self.ecn_guard_level = echo;
                self.ecn_cwr_pending = true;
            }
        }

        // PRR (RFC 6937) on every ACK during fast recovery.
        let pipe = self.path.pipe_bytes;
        let ssthresh = self.path.cc.ssthresh_bytes();
        let delivered = acked_bytes;
        if let Recovery::Fast { prr: Some(prr), window_bytes, .. } = &mut self.recovery {
            let bound = if self.cfg.ns3_compat {
                ReductionBound::Ns3 { retransmit_acked: cum_pick.newest_retransmitted_ns.is_some() }
            } else {
                ReductionBound::Ssrb
            };
            let d = prr.on_ack_bounded(delivered, pipe, ssthresh, bound);
            *window_bytes = pipe + d.sndcnt_bytes;
            if self.cfg.trace_prr {
                self.prr_log.push((d, 0));
            }
        }

        // ns-3 3.37 tells the application the send buffer has room (`NewAck`) on an ACK
        // that moves SND.UNA, unless it is a duplicate ACK (it newly SACKs, RFC 6675 §2)
        // that leaves the sender outside recovery (`CA_DISORDER`).
        if advanced
            && self.cfg.ns3_compat
            && self.cfg.send_buffer_bytes.is_some()
            && (sacked_bytes == 0 || was_in_recovery || self.in_recovery())
        {
            self.refill_send_buffer();
        }

        self.maybe_shed(now_ns);

        // RFC 6298 §5.2/5.3: stop the timer when nothing is outstanding, restart it when
        // new data is acknowledged.
        if self.segs.is_empty() {
            self.rto_deadline_ns = None;
        } else if advanced {
            self.arm_rto(now_ns);
        }
        if self.rack_on {
            self.after_ack_tlp(now_ns);
        }
    }

    /// RFC 8985 §7.4 and §7.2 after an ACK (RACK on): an answered probe, and the next one.
    #[inline(never)]
    fn after_ack_tlp(&mut self, now_ns: u64) {
        if self.tlp_high_seq.is_some_and(|h| self.snd_una >= h) {
            // RFC 8985 §7.4 (Linux's `tcp_process_tlp_ack`): a resent probe acknowledged
            // repaired a loss (no D-SACK is modelled to say the first copy arrived): the
            // window is reduced at once, as for ECN, without a recovery episode.
            self.tlp_high_seq = None;
            if std::mem::take(&mut self.tlp_retrans) && matches!(self.recovery, Recovery::Open) {
                // Linux's ssthresh here is the controller's from the window (reno: cwnd / 2);
                // the flight is the probe alone.
                let window = self.path.cc.window_bytes();
                self.path.cc.on_congestion(now_ns, CongestionSignal::Loss, window);
                self.path.cc.on_recovery_exit(now_ns);
            }
        }
        self.arm_tlp(now_ns);
    }

    /// RFC 6675 §4 IsLost(): a segment is lost once more than (DupThresh − 1)·SMSS bytes
    /// above it have been selectively acknowledged. IsLost() cannot judge a retransmission
    /// (everything above it was SACKed before it was resent); RFC 6675 leaves it to the RTO,
    /// Linux's RACK does not: a retransmission is lost once a segment sent DupThresh
    /// transmissions after it has been delivered ([`crate::recovery::rexmit`]).
    /// Returns the bytes newly marked lost.
    #[inline]
    fn detect_losses(&mut self) -> u64 {
        // With nothing SACKed and no retransmission watched there is nothing to find (and
        // accounting nothing lost changes nothing).
        if self.sacked_segs == 0 && !self.rexmit.watching() {
            return 0;
        }
        self.find_losses()
    }

    /// [`Self::detect_losses`] when something may be lost. Out of line (see
    /// [`Self::tag_sack_blocks`]).
    #[inline(never)]
    fn find_losses(&mut self) -> u64 {
        let threshold = (self.cfg.dup_thresh.saturating_sub(1) as u64) * self.cfg.mss_bytes as u64;
        let mut sacked_above = 0u64;
        // Both passes below mark segments lost the same way; the pipe and the resend queue
        // are updated once, after them.
        let (mut newly_lost, mut lost_count, mut lowest_lost) = (0u64, 0u32, u64::MAX);
        let mut mark_lost = |seg: &mut SentSeg| {
            seg.lost = true;
            seg.in_flight = false;
            newly_lost += seg.end - seg.start;
            lost_count += 1;
            lowest_lost = lowest_lost.min(seg.start);
        };
        if self.sacked_segs > 0 {
            // Nothing above the highest SACKed segment has SACKed bytes above it, and
            // nothing below `loss_floor` can newly qualify: walk down from the one to the
            // other. Below the SACKed segment where the SACKed bytes above pass the
            // threshold, every segment is judged in this walk (each one not SACKed
            // qualifies), so the floor rises to that segment's end: the SACKed run above a
            // hole is walked once, not at every ACK until the hole is repaired (a walk per
            // ACK as long as the window, after one loss in a large one).
            let top = self.seg_at_or_above(self.high_sacked_start.saturating_add(1));
            let mut floor = self.loss_floor;
            #[cfg(test)]
            let mut steps = 0;
            for seg in self.segs.range_mut(..top).rev() {
                if seg.start < self.loss_floor {
                    break;
                }
                #[cfg(test)]
                {
                    steps += 1;
                }
                if seg.sacked {
                    let below_threshold = sacked_above <= threshold;
                    sacked_above += seg.end - seg.start;
                    #[cfg(test)]
                    let below_threshold = below_threshold && !self.naive_scoreboard;
                    if below_threshold && sacked_above > threshold {
                        floor = floor.max(seg.end);
                    }
                    continue;
                }
                #[cfg(test)]
                if self.naive_scoreboard && sacked_above > threshold {
                    floor = floor.max(seg.end);
                }
                if sacked_above > threshold && !seg.lost && !seg.retransmitted && seg.in_flight {
                    mark_lost(seg);
                }
            }
            self.loss_floor = floor;
            #[cfg(test)]
            {
                self.scoreboard_steps += steps;
            }
        }
        // Retransmissions, which IsLost() never finds lost again, in transmission order.
        while let Some((tx, start)) = self.rexmit.next_lost() {
            if self.cfg.ns3_compat {
                continue; // ns-3 3.37 leaves a lost retransmission to the RTO
            }
            let i = self.seg_at_or_above(start);
            let Some(seg) = self.segs.get_mut(i) else { continue };
            if seg.start != start || seg.tx != tx || !seg.in_flight || seg.sacked {
                continue; // acknowledged or sent again since
            }
            mark_lost(seg);
            self.stats.lost_retransmissions += 1;
        }
        self.account_lost(newly_lost, lost_count as usize, lowest_lost);
        newly_lost
    }

    /// Segments just marked lost (`newly_lost` bytes in `lost_count` segments, the lowest
    /// starting at `lowest_lost`) leave the pipe and join the resend queue; load shedding
    /// counts their fates.
    #[inline(always)]
    fn account_lost(&mut self, newly_lost: u64, lost_count: usize, lowest_lost: u64) {
        self.path.pipe_bytes -= newly_lost;
        self.lost_pending += lost_count;
        self.lost_from = self.lost_from.min(lowest_lost);
        if self.cfg.load_shedding.is_some() {
            for _ in 0..lost_count {
                self.record_fate(true);
            }
        }
    }

    /// RFC 8985 §6.2 steps 4-5 (Linux's `tcp_rack_detect_loss`): with RACK on, every
    /// segment in flight that was sent no later than the most recently sent segment known
    /// delivered, and whose send time plus RACK's RTT plus the reordering window has passed,
    /// is lost; the earliest of the others arms the reordering timer. The window is a
    /// quarter of the minimum RTT, or zero in recovery and once DupThresh segments are
    /// SACKed (Linux's `tcp_rack_reo_wnd` on a path where no reordering was seen).
    /// Returns the bytes newly marked lost.
    #[inline(never)]
    fn rack_detect(&mut self, now_ns: u64) -> u64 {
        self.rack_deadline_ns = None;
        if self.rack_xmit_ns == 0 {
            self.sync_rack_timer();
            return 0;
        }
        let reo_wnd = if self.in_recovery() || self.sacked_segs >= self.cfg.dup_thresh as usize {
            0
        } else {
            self.path.rtt.min_rtt_ns().unwrap_or(0) / 4
        };
        let (xmit, end, rtt) = (self.rack_xmit_ns, self.rack_end_seq, self.rack_rtt_ns);
        let (mut newly_lost, mut lost_count, mut lowest_lost) = (0u64, 0usize, u64::MAX);
        let mut deadline: Option<u64> = None;
        // In send order: what is due is a prefix (every entry has the same RTT and window
        // added), the first one not due sets the timer, and the first one sent after the
        // segment RACK holds ends the search.
        while let Some(&(sent, start, seg_end, tx)) = self.rack_sent.front() {
            let i = self.seg_at_or_above(start);
            let Some(seg) =
                self.segs.get_mut(i).filter(|s| s.start == start && s.tx == tx && s.in_flight && !s.sacked && !s.lost)
            else {
                self.rack_sent.pop_front(); // acknowledged, SACKed, lost or sent again since
                continue;
            };
            if (sent, seg_end) > (xmit, end) {
                break;
            }
            let due = sent.saturating_add(rtt).saturating_add(reo_wnd);
            if now_ns < due {
                deadline = Some(due);
                break;
            }
            seg.lost = true;
            seg.in_flight = false;
            newly_lost += seg.end - seg.start;
            lost_count += 1;
            lowest_lost = lowest_lost.min(seg.start);
            self.rack_sent.pop_front();
        }
        self.rack_deadline_ns = deadline;
        self.sync_rack_timer();
        self.account_lost(newly_lost, lost_count, lowest_lost);
        newly_lost
    }

    /// The reordering timer, the probe timer or both expired.
    #[inline(never)]
    fn on_rack_timers(&mut self, now_ns: u64) {
        if self.rack_deadline_ns.is_some_and(|d| d <= now_ns) {
            self.on_rack_timeout(now_ns);
        }
        if self.tlp_deadline_ns.is_some_and(|d| d <= now_ns) {
            self.on_tlp_timeout(now_ns);
        }
        self.sync_rack_timer();
    }

    fn sync_rack_timer(&mut self) {
        self.rack_timer_ns = match (self.rack_deadline_ns, self.tlp_deadline_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// RFC 8985 §6.3: the reordering timer expired: judge again; a loss found outside
    /// recovery starts it, and its retransmission goes at once (Linux sends at least one
    /// segment when PRR has sent nothing yet).
    fn on_rack_timeout(&mut self, now_ns: u64) {
        let prior_in_flight = self.path.pipe_bytes;
        let newly_lost = self.rack_detect(now_ns);
        if newly_lost == 0 {
            return;
        }
        if matches!(self.recovery, Recovery::Open) {
            let basis = self.ssthresh_basis(prior_in_flight);
            self.enter_fast_recovery(now_ns, basis);
        }
        let pipe = self.path.pipe_bytes;
        let mss = self.cfg.mss_bytes as u64;
        if let Recovery::Fast { prr: Some(prr), window_bytes, .. } = &mut self.recovery {
            if prr.prr_out_bytes() == 0 {
                *window_bytes = (*window_bytes).max(pipe + mss);
            }
        }
    }

    /// RFC 8985 §7.2 (Linux's `tcp_schedule_loss_probe`): with RACK on, data outstanding,
    /// no recovery and no probe unanswered, a probe is due two smoothed RTTs on (at least
    /// 1.5 SRTT plus the worst-case delayed ACK, 200 ms, with one segment in flight), and
    /// no later than the RTO would fire: as in Linux, the probe then goes in its place and
    /// the window is kept.
    #[inline(never)]
    fn arm_tlp(&mut self, now_ns: u64) {
        self.tlp_deadline_ns = None;
        self.arm_tlp_deadline(now_ns);
        self.sync_rack_timer();
    }

    fn arm_tlp_deadline(&mut self, now_ns: u64) {
        if self.tlp_pending
            || self.tlp_high_seq.is_some()
            || !matches!(self.recovery, Recovery::Open)
            || self.path.pipe_bytes == 0
        {
            return;
        }
        let Some(srtt) = self.path.rtt.srtt_ns() else { return };
        let mut pto = 2 * srtt;
        if self.path.pipe_bytes <= self.cfg.mss_bytes as u64 {
            pto = pto.max(srtt + srtt / 2 + 200_000_000);
        }
        let at = now_ns.saturating_add(pto);
        self.tlp_deadline_ns = Some(self.rto_deadline_ns.map_or(at, |r| at.min(r)));
    }

    /// RFC 8985 §7.3: the probe timeout fired: send one segment whatever the window, new
    /// data if there is any, else the highest segment again.
    fn on_tlp_timeout(&mut self, now_ns: u64) {
        self.tlp_deadline_ns = None;
        if !matches!(self.recovery, Recovery::Open) || self.segs.is_empty() {
            return;
        }
        self.tlp_pending = true;
        // The RTO runs again from the probe (sent at the next `poll_transmit`, now).
        self.arm_rto(now_ns);
        self.tlp_retrans = self.scheduler.queued_bytes() == 0;
        if self.tlp_retrans {
            if let Some(i) = self.segs.iter().rposition(|s| s.in_flight && !s.sacked && !s.lost) {
                self.mark_resend(i);
            }
        }
    }

    /// The flight a loss-triggered recovery halves for ssthresh: the pipe before the ACK
    /// (or timer) that revealed the loss, which for a window-limited sender is Linux's
    /// window (`tcp_reno_ssthresh` halves cwnd); with `ns3_compat`, the pipe after it, its
    /// SACK blocks counted and its losses marked (ns-3 3.37 passes `BytesInFlight ()` to
    /// `GetSsThresh` on entering recovery).
    fn ssthresh_basis(&self, prior_in_flight: u64) -> u64 {
        if self.cfg.ns3_compat {
            self.path.pipe_bytes
        } else {
            prior_in_flight
        }
    }

    fn enter_fast_recovery(&mut self, now_ns: u64, flight_bytes: u64) {
        self.stats.fast_recoveries += 1;
        self.path.cc.on_congestion(now_ns, CongestionSignal::Loss, flight_bytes);
        let prr = if self.path.cc.uses_prr() {
            Some(Prr::start(self.snd_nxt - self.snd_una, self.cfg.mss_bytes as u64))
        } else {
            None
        };
        self.recovery = Recovery::Fast { point: self.snd_nxt, prr, window_bytes: 0 };
    }

    /// RFC 6298 §5.4-5.6 and RFC 5681 §3.1: on a timeout, back off, mark everything
    /// unacknowledged as lost and let the controller collapse its window.
    fn on_rto(&mut self, now_ns: u64) {
        if self.segs.is_empty() {
            self.rto_deadline_ns = None;
            return;
        }
        self.stats.rto_count += 1;
        self.consecutive_rtos += 1;
        self.path.rtt.back_off();
        let flight = self.path.pipe_bytes;
        self.path.cc.on_congestion(now_ns, CongestionSignal::Timeout, flight);
        for seg in self.segs.iter_mut() {
            if seg.sacked {
                continue;
            }
            self.path.pipe_bytes -= seg.pipe_share_bytes();
            seg.in_flight = false;
            seg.resent_in_flight = false;
            if !seg.lost {
                seg.lost = true;
                self.lost_pending += 1;
                self.lost_from = self.lost_from.min(seg.start);
            }
        }
        self.rexmit.on_rto();
        self.recovery = Recovery::Rto { point: self.snd_nxt };
        self.path.next_send_ns = now_ns;
        self.arm_rto(now_ns);
        self.maybe_shed(now_ns);
    }

    fn record_fate(&mut self, lost: bool) {
        let Some(ls) = &self.cfg.load_shedding else { return };
        self.fates.push_back(lost);
        self.fates_lost += lost as u32;
        while self.fates.len() > ls.loss_window_packets.max(1) as usize {
            if self.fates.pop_front() == Some(true) {
                self.fates_lost -= 1;
            }
        }
    }

    /// CATS §II-D-3: shed one message when congestion is severe and persistent (see
    /// [`LoadShedding`](crate::config::LoadShedding) for the definition), at most once per
    /// smoothed RTT.
    fn maybe_shed(&mut self, now_ns: u64) {
        let Some(ls) = &self.cfg.load_shedding else { return };
        let by_rto = ls.consecutive_rtos > 0 && self.consecutive_rtos >= ls.consecutive_rtos;
        let full = self.fates.len() >= ls.loss_window_packets.max(1) as usize;
        let by_loss = full && (self.fates_lost as u64) * 1000 >= ls.loss_rate_permille as u64 * self.fates.len() as u64;
        if !(by_rto || by_loss) {
            return;
        }
        let gap = self.path.rtt.srtt_ns().unwrap_or(self.cfg.initial_rto_ns);
        if self.last_shed_ns.is_some_and(|t| now_ns < t.saturating_add(gap)) {
            return;
        }
        let min_priority = ls.min_priority;
        if let Some(d) = self.scheduler.shed_one(min_priority) {
            self.last_shed_ns = Some(now_ns);
            self.report_discard(d);
        }
    }

    // ------------------------------------------------------------------ internals: receiving

    fn process_data(&mut self, now_ns: u64, pkt: &Packet) {
        let start = pkt.seq;
        let fin = pkt.flags.has(TcpFlags::FIN);
        // Sequence numbers start at 0 and never wrap (see wire::Packet); one that would
        // overflow is not from a real peer.
        let Some(end) = start.checked_add(pkt.payload_bytes as u64 + fin as u64) else {
            self.stats.out_of_window_segments += 1;
            self.stats.out_of_window_bytes += pkt.payload_bytes as u64;
            return;
        };
        if end <= self.rcv_nxt {
            self.stats.duplicate_bytes_received += pkt.payload_bytes as u64;
            self.ack_now = true;
            if let Some(l) = self.linux_ack.as_mut() {
                l.on_duplicate();
            }
            return;
        }
        if start > self.rcv_nxt {
            self.hold_out_of_order(pkt, start, end, fin);
            return;
        }
        let filled_hole = !self.ooo.is_empty();
        self.deliver_in_order(start, end, &pkt.chunks, fin, pkt.priority_option);
        if filled_hole {
            self.deliver_held();
            self.sack_blocks.advance(self.rcv_nxt);
        }
        // CATS §II-D-2 receiver policy: no delayed ACK for priority-0 segments.
        let urgent = self.cfg.ack_priority0_immediately && pkt.priority_option == Some(0);
        // Linux's receiver counts every in-order segment (`tcp_event_data_recv`), also one
        // acknowledged at once for another reason.
        let linux_now = match self.linux_ack.as_mut() {
            Some(l) => l.on_in_order(now_ns, self.rcv_nxt, pkt.payload_bytes, self.path.rtt.srtt_ns().unwrap_or(0)),
            None => false,
        };
        if filled_hole || fin || urgent || linux_now {
            self.ack_now = true;
            return;
        }
        self.segs_since_ack += 1;
        if self.segs_since_ack >= self.cfg.delayed_ack_segments {
            self.ack_now = true;
        } else if self.delack_deadline_ns.is_none() {
            self.delack_deadline_ns = Some(now_ns.saturating_add(self.cfg.delayed_ack_timeout_ns));
        }
    }

    /// An out-of-order segment `[start, end)`: held and acknowledged at once (RFC 5681
    /// §4.2), or dropped and counted when it lies beyond the window or the buffer. Out of
    /// line (as is [`Self::deliver_held`]): it runs only while a hole is open, and inlined
    /// into the receive path it spread the in-order path's code over more instruction-cache
    /// lines (docs/performance-history.md, "A step that paid").
    #[inline(never)]
    fn hold_out_of_order(&mut self, pkt: &Packet, start: u64, end: u64, fin: bool) {
        // Held if it lies within the window (RFC 9293 §3.10.7.4: RCV.NXT =< SEG.SEQ+SEG.LEN-1
        // < RCV.NXT+RCV.WND) and the buffer has room. A sender that respects our window
        // never goes beyond; anything else is dropped and counted, so that what a peer
        // sends cannot grow the buffer past `receive_buffer_bytes`.
        let buffer = self.cfg.receive_buffer_bytes;
        let beyond_window = end - fin as u64 > self.rcv_nxt.saturating_add(buffer);
        let over_buffer = self.ooo_bytes + (end - start) > buffer + fin as u64;
        let held_end = self.ooo.get(start).map(|seg| seg.end);
        let held = held_end.is_some();
        if (beyond_window || over_buffer) && !held {
            self.stats.out_of_window_segments += 1;
            self.stats.out_of_window_bytes += pkt.payload_bytes as u64;
            self.ack_now = true;
            return;
        }
        self.ooo_arrivals += 1;
        let arrival = self.ooo_arrivals;
        if let Some(held_end) = held_end {
            // The copy held keeps its extent; its block becomes the most recent.
            self.sack_blocks.insert(start, held_end, arrival);
            self.stats.duplicate_bytes_received += pkt.payload_bytes as u64;
        } else {
            let seg = OooSeg { end, chunks: pkt.chunks.clone(), fin, priority: pkt.priority_option };
            self.ooo.insert(start, seg);
            self.ooo_bytes += end - start;
            self.sack_blocks.insert(start, end, arrival);
        }
        self.ack_now = true;
        if let Some(l) = self.linux_ack.as_mut() {
            let last_end = self.ooo.iter_rev().next().map_or(end, |(_, seg)| seg.end);
            l.on_out_of_order(last_end.max(end) - self.rcv_nxt);
        }
    }

    /// After an in-order segment while segments are held: hands on every held segment the
    /// cumulative point now reaches (RFC 9293 §3.10.7.4), counting what it already covers
    /// as duplicate.
    #[inline(never)]
    fn deliver_held(&mut self) {
        while let Some((s, seg)) = self.ooo.pop_first_at_or_below(self.rcv_nxt) {
            self.ooo_bytes -= seg.end - s;
            if seg.end > self.rcv_nxt {
                self.deliver_in_order(s, seg.end, &seg.chunks, seg.fin, seg.priority);
            } else {
                self.stats.duplicate_bytes_received += seg.end - s;
            }
        }
    }

    /// Hands the bytes of `[start, end)` past `rcv_nxt` to the application, completing
    /// messages whose last byte arrives.
    fn deliver_in_order(&mut self, start: u64, end: u64, chunks: &Chunks, fin: bool, priority: Option<u8>) {
        let skip = self.rcv_nxt - start;
        let mut pos = 0u64;
        for (k, c) in chunks.iter().enumerate() {
            let c_start = pos;
            let c_end = pos + c.len_bytes() as u64;
            pos = c_end;
            if c_end <= skip {
                continue;
            }
            let new = c_end - c_start.max(skip);
            // One lookup per chunk (the map is keyed by small integers: Fx, not SipHash).
            let got = match self.msg_progress.entry(c.msg_id) {
                hash_map::Entry::Occupied(o) => o.into_mut(),
                hash_map::Entry::Vacant(v) => {
                    self.events.push_back(Event::MessageStarted { msg_id: c.msg_id });
                    v.insert((0, None))
                }
            };
            got.0 = got.0.saturating_add(new);
            // The option labels the segment with its first chunk's priority; a message that
            // starts later in the segment learns its own from a segment it leads.
            if got.1.is_none() && k == 0 {
                got.1 = priority;
            }
            let (delivered, seen) = *got;
            if !self.watches.is_empty() {
                if let Some(bytes) = self.watches.reached(c.msg_id, delivered) {
                    self.events.push_back(Event::MessageBytes { msg_id: c.msg_id, bytes });
                }
            }
            if delivered >= c.msg_len_bytes {
                if !self.watches.is_empty() {
                    self.watches.forget(c.msg_id);
                }
                self.msg_progress.remove(&c.msg_id);
                self.events.push_back(Event::MessageComplete {
                    msg_id: c.msg_id,
                    len_bytes: c.msg_len_bytes,
                    priority: seen,
                });
            }
        }
        let payload_end = end - fin as u64;
        self.stats.bytes_delivered += payload_end.saturating_sub(self.rcv_nxt);
        self.stats.duplicate_bytes_received += skip.min(payload_end - start);
        self.rcv_nxt = end;
        if fin && !self.peer_fin {
            self.peer_fin = true;
            self.events.push_back(Event::PeerClosed);
        }
    }

    /// RFC 2018 §4: the first block holds the most recently received segment, and the others
    /// follow by how recently they changed, so that with more holes than blocks each block is
    /// reported in several ACKs, newest first ([`SackBlocks`], kept up to date as data
    /// arrives: no walk over the out-of-order data per ACK).
    fn fill_sack(&self, out: &mut [SackBlock; MAX_SACK_BLOCKS]) -> usize {
        self.sack_blocks.fill(out)
    }

    fn check_closed(&mut self) {
        if self.state == State::Established && self.fin_acked && self.peer_fin {
            self.state = State::Closed;
            self.rto_deadline_ns = None;
            self.events.push_back(Event::Closed);
        }
    }
}

#[cfg(test)]
mod eecn_tests;
#[cfg(test)]
mod tests;
