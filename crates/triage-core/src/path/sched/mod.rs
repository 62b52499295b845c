//! Path schedulers: which path the next packet takes, or how a message is split over paths.
//!
//! Read first: ../shared/seeds/001 (PriorityBucket, Shi, Zhang, Liu, e-Energy '20) §3-§5,
//! and its reproduction notes REPRODUCTION-pb-partial.md PART A (choices PB-1 to PB-19).
//!
//! A multipath connection owns several paths, each with its own RTT estimator, congestion
//! controller and bandwidth estimate (see [`crate::path`]). Before it sends, it builds one
//! [`PathView`] per path, a copy of what a scheduler may read, and asks its
//! [`PathScheduler`]. Schedulers come in two kinds, and the trait carries both:
//!
//! - **per packet** ([`PathScheduler::choose`], [`PathScheduler::choose_for_stream`]):
//!   the send scheduler fills a packet, the path scheduler names the path it goes on.
//!   Lowest-RTT-First ([`lrf::Lrf`]) and SA-ECF ([`sa_ecf::SaEcf`]) work this way (§5.2).
//! - **per message** ([`PathScheduler::allocate`]): when a message (an HTTP response on its
//!   stream) arrives, the scheduler splits its bytes over the paths once, as sending limits
//!   ([`Allocation::Split`]). PriorityBucket ([`priority_bucket::PriorityBucket`]) works
//!   this way (§3.1: "each arrival of a stream triggers the scheduler") and then hands out
//!   each path's data from its own per-path priority buckets (§3.3, §4.2).
//!
//! A single-path connection uses [`SinglePath`], which always names path 0; the connection's
//! own congestion and pacing checks decide when it sends, exactly as without a path
//! scheduler.
//!
//! Everything here is a pure algorithm: no clock (`now_ns` is a parameter), no randomness,
//! ties broken by the lower [`PathId`]. Times are integer nanoseconds, sizes bytes, rates
//! bits per second (SI: 1 Mbps = 10^6 bit/s).
//!
//! The schedulers, one per file:
//! - [`lrf::Lrf`]: Lowest-RTT-First, the default of multipath QUIC (§5.2, \[6\]).
//! - [`sa_ecf::SaEcf`]: Stream-Aware Earliest Completion First (§5.2, \[10\]).
//! - [`priority_bucket::PriorityBucket`]: Algorithm 1 and the per-path buckets (§3, §4).

pub mod lrf;
pub mod priority_bucket;
pub mod sa_ecf;

pub use lrf::Lrf;
pub use priority_bucket::{fill_gap, FillGapPath, FillGapShare, PathBuckets, PriorityBucket, PriorityBucketConfig};
pub use sa_ecf::{EcfFormula, SaEcf, SaEcfConfig};

use smallvec::SmallVec;

use crate::sched::MessageMeta;

/// Identifier of a path inside one connection (draft-ietf-quic-multipath path ID).
/// Path 0 is the path the connection was opened on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct PathId(pub u32);

/// What a path scheduler may read of one path, copied by the connection before each
/// decision.
///
/// The connection passes only paths that may carry data: validated and not abandoned. A
/// path it considers failed is left out of the slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathView {
    /// Which path.
    pub id: PathId,
    /// Smoothed RTT (RFC 6298 / RFC 9002 EWMA); before the first sample, the path's prior
    /// ("prior knowledge on creating a path", §4.1).
    pub srtt_ns: u64,
    /// RTT variation (RFC 6298 `RTTVAR`, quic-go's mean deviation).
    pub rttvar_ns: u64,
    /// Smallest RTT sample seen; the prior before the first sample.
    pub min_rtt_ns: u64,
    /// Congestion window.
    pub cwnd_bytes: u64,
    /// Bytes sent on this path and neither acknowledged nor declared lost.
    pub bytes_in_flight: u64,
    /// Bandwidth estimate (§4.1: a prior, then a delivery-rate estimate); 0 when unknown.
    pub bandwidth_bps: u64,
    /// Bytes committed to this path and not yet sent that the path scheduler does not track
    /// itself (control frames, data the connection will resend on this path).
    pub queued_bytes: u64,
    /// The connection could send one more full packet on this path now: its congestion
    /// window has room and its pacer allows it (mp-quic's `SendingAllowed()`).
    pub can_send: bool,
    /// The send scheduler has data this path may carry (PriorityBucket: the path's buckets
    /// are not empty; path-blind schedulers: anything queued).
    pub has_data: bool,
}

impl PathView {
    /// Congestion window space left, in bytes.
    pub fn cwnd_room_bytes(&self) -> u64 {
        self.cwnd_bytes.saturating_sub(self.bytes_in_flight)
    }
}

/// What the next packet would carry, for schedulers whose choice depends on the stream
/// (SA-ECF). One open stream of the send scheduler's round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamView {
    /// The message (stream) the packet would carry.
    pub msg_id: u32,
    /// Its bytes not yet sent.
    pub unsent_bytes: u64,
    /// Its weight in the send scheduler (HTTP/2 weight 1..=256: the share of sending
    /// opportunities it gets, §5.2 "proportional to its weight").
    pub weight: u32,
    /// Sum of the weights of all open streams with data to send, its own included.
    pub total_weight: u32,
    /// Sending opportunities (packets) it has left in the send scheduler's current round.
    pub quantum_packets: u32,
    /// Open streams with data to send, this one included.
    pub open_streams: u32,
    /// Unsent bytes of the whole connection, every stream (ECF's `k`).
    pub connection_unsent_bytes: u64,
    /// Payload bytes of one full packet.
    pub max_packet_bytes: u64,
}

/// How a message's bytes are split over the paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allocation {
    /// No split: each packet's path is chosen when it is sent ([`PathScheduler::choose`]).
    PerPacket,
    /// Bytes per path, the upper sending limit of the message on each path (§3.4.2 "This
    /// number serves as the upper sending limit of each stream on a path"), in the order
    /// the scheduler considered the paths. The bytes add up to the message length.
    Split(SmallVec<[(PathId, u64); 4]>),
}

impl Allocation {
    /// Bytes the message may send on `path` (0 when the path carries none of it or when the
    /// allocation is per packet).
    pub fn bytes_on(&self, path: PathId) -> u64 {
        match self {
            Allocation::PerPacket => 0,
            Allocation::Split(v) => v.iter().filter(|(p, _)| *p == path).map(|(_, b)| b).sum(),
        }
    }
}

/// A path scheduler (see the module documentation).
pub trait PathScheduler: std::fmt::Debug + Send {
    /// Short name for reports (`"single"`, `"lrf"`, `"sa_ecf"`, `"priority_bucket"`).
    fn name(&self) -> &'static str;

    /// The path the next packet goes on, or `None` to send nothing now (every path is
    /// blocked, or the scheduler prefers to wait for a better one).
    fn choose(&mut self, now_ns: u64, paths: &[PathView]) -> Option<PathId>;

    /// As [`PathScheduler::choose`], for a packet that would carry `stream`'s data; `None`
    /// means "not this stream now" and the connection may offer the next stream of its
    /// round. Schedulers that ignore the stream keep this default.
    fn choose_for_stream(&mut self, now_ns: u64, _stream: &StreamView, paths: &[PathView]) -> Option<PathId> {
        self.choose(now_ns, paths)
    }

    /// True when the scheduler decides per stream ([`PathScheduler::choose_for_stream`]): the
    /// connection then offers it the send scheduler's candidate streams in turn.
    fn per_stream(&self) -> bool {
        false
    }

    /// A message arrived: split it over the paths, or leave every packet to
    /// [`PathScheduler::choose`] ([`Allocation::PerPacket`], the default).
    fn allocate(&mut self, _now_ns: u64, _msg: &MessageMeta, _paths: &[PathView]) -> Allocation {
        Allocation::PerPacket
    }

    /// Every byte of message `msg_id` was acknowledged (or the message was given up): the
    /// scheduler may forget it.
    fn on_message_done(&mut self, _msg_id: u32) {}
}

/// The single-path case: always path 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct SinglePath;

impl PathScheduler for SinglePath {
    fn name(&self) -> &'static str {
        "single"
    }

    fn choose(&mut self, _now_ns: u64, _paths: &[PathView]) -> Option<PathId> {
        Some(PathId(0))
    }
}

/// Paths in turn (PriorityBucket §4.2: "The transmission is performed in a round robin
/// fashion with paths"): the next path, in ID order from where the last turn ended, that can
/// send and has data. The data itself comes from the paths' buckets
/// ([`priority_bucket::PriorityBucket`], the connection's send scheduler then).
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobinReady {
    /// The path ID to look at first next time.
    next: u32,
}

impl PathScheduler for RoundRobinReady {
    fn name(&self) -> &'static str {
        "priority_bucket"
    }

    fn choose(&mut self, _now_ns: u64, paths: &[PathView]) -> Option<PathId> {
        let ready = |v: &&PathView| v.can_send && v.has_data;
        let pick = paths
            .iter()
            .filter(ready)
            .filter(|v| v.id.0 >= self.next)
            .min_by_key(|v| v.id)
            .or_else(|| paths.iter().filter(ready).min_by_key(|v| v.id))?;
        self.next = pick.id.0.wrapping_add(1);
        Some(pick.id)
    }
}

/// The path with the lowest smoothed RTT among those that `filter` accepts; ties go to the
/// lower path ID.
pub(crate) fn lowest_srtt(paths: &[PathView], filter: impl Fn(&PathView) -> bool) -> Option<&PathView> {
    paths.iter().filter(|p| filter(p)).min_by_key(|p| (p.srtt_ns, p.id))
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::{PathId, PathView};

    /// A path of `mbps` and `rtt_ms` with a 10-packet window, nothing in flight.
    pub(crate) fn view(id: u32, mbps: u64, rtt_ms: u64) -> PathView {
        PathView {
            id: PathId(id),
            srtt_ns: rtt_ms * 1_000_000,
            rttvar_ns: rtt_ms * 1_000_000 / 2,
            min_rtt_ns: rtt_ms * 1_000_000,
            cwnd_bytes: 14_480,
            bytes_in_flight: 0,
            bandwidth_bps: mbps * 1_000_000,
            queued_bytes: 0,
            can_send: true,
            has_data: true,
        }
    }

    /// The same path with its window full.
    pub(crate) fn blocked(mut v: PathView) -> PathView {
        v.bytes_in_flight = v.cwnd_bytes;
        v.can_send = false;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::view;
    use super::*;

    #[test]
    fn single_path_always_names_path_zero() {
        let mut s = SinglePath;
        assert_eq!(s.choose(0, &[view(0, 10, 10)]), Some(PathId(0)));
        assert_eq!(s.choose(0, &[]), Some(PathId(0)));
        let msg = MessageMeta { id: 1, len_bytes: 5000, priority: 0 };
        assert_eq!(s.allocate(0, &msg, &[view(0, 10, 10)]), Allocation::PerPacket);
    }

    #[test]
    fn allocation_bytes_on_a_path() {
        let a = Allocation::Split(smallvec::smallvec![(PathId(1), 700), (PathId(0), 300)]);
        assert_eq!(a.bytes_on(PathId(0)), 300);
        assert_eq!(a.bytes_on(PathId(2)), 0);
        assert_eq!(Allocation::PerPacket.bytes_on(PathId(0)), 0);
    }
}
