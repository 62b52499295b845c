//! Measurement: one recorder for message completions, flow results and time series.

use serde::Serialize;

/// One time-series sample of a connection endpoint.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConnSample {
    /// Sample time.
    pub t_ns: u64,
    /// Congestion window the sender obeys.
    pub cwnd_bytes: u64,
    /// Bytes in flight.
    pub inflight_bytes: u64,
    /// Smoothed RTT (0 before the first sample).
    pub srtt_ns: u64,
    /// Latest RTT sample (0 before the first sample).
    pub rtt_ns: u64,
    /// Pacing rate (0 when not pacing).
    pub pacing_rate_bps: u64,
    /// Payload bytes acknowledged so far by the peer (cumulatively or by SACK).
    pub delivered_bytes: u64,
    /// Controller state ("startup", "slow_start", ...).
    pub cc_state: &'static str,
}

/// One time-series sample of a link's queue.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueSample {
    /// Sample time.
    pub t_ns: u64,
    /// Backlog in packets.
    pub len_packets: u64,
    /// Backlog in bytes.
    pub len_bytes: u64,
    /// Packets dequeued so far (cumulative; with `sojourn_total_ns`, the mean sojourn over
    /// any two samples).
    pub dequeued_packets: u64,
    /// Sum of the sojourn times of the packets dequeued so far.
    pub sojourn_total_ns: u64,
}

/// A message's life: written by one end, completed at the other.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRecord {
    /// Flow index.
    pub flow: u32,
    /// True when the server wrote it (client → server otherwise).
    pub from_server: bool,
    /// Name.
    pub name: String,
    /// Size.
    pub bytes: u64,
    /// Priority.
    pub priority: u8,
    /// When the application wrote it.
    pub written_ns: Option<u64>,
    /// When the receiver's application got its first bytes (in order; a datagram object's
    /// first chunk): the response's first byte.
    pub first_byte_ns: Option<u64>,
    /// When the receiver held all of it in order.
    pub completed_ns: Option<u64>,
    /// The priority the receiver learned from the segments' priority option.
    pub received_priority: Option<u8>,
    /// Bytes the sender discarded or shed, with why and when.
    pub discarded: Option<(triage_core::sched::DiscardReason, u64, u64)>,
}

/// Time series of one connection endpoint.
#[derive(Clone, Debug, Default)]
pub struct ConnSeries {
    /// Flow index.
    pub flow: u32,
    /// True for the server end.
    pub is_server: bool,
    /// Samples.
    pub samples: Vec<ConnSample>,
    /// Data packets this end received.
    pub rx_data_packets: u64,
    /// Sum of their one-way delays (host to host: queueing, serialization, propagation).
    pub rx_delay_total_ns: u64,
}

/// One packet serialized onto a link (the packet trace, when enabled).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PacketRecord {
    /// Time serialization started.
    pub t_ns: u64,
    /// Link index.
    pub link: u32,
    /// Source node and port.
    pub src: (u32, u16),
    /// Destination node and port.
    pub dst: (u32, u16),
    /// TCP flags.
    pub flags: u8,
    /// Sequence number.
    pub seq: u64,
    /// Acknowledgment number.
    pub ack: u64,
    /// Payload bytes.
    pub payload_bytes: u32,
    /// Bytes on the wire.
    pub wire_bytes: u32,
    /// IP ECN codepoint (0..3).
    pub ecn: u8,
    /// IP DSCP.
    pub dscp: u8,
    /// CATS priority option, if present.
    pub priority_option: Option<u8>,
    /// SACK blocks carried.
    pub sack_blocks: u8,
    /// What happened: "tx" (serialized), "drop" (queue full).
    pub event: &'static str,
}

/// Everything measured in a run.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Messages of every flow, in flow order then write order.
    pub messages: Vec<MessageRecord>,
    /// Time series per connection endpoint.
    pub conn_series: Vec<ConnSeries>,
    /// Queue time series per link.
    pub queue_series: Vec<Vec<QueueSample>>,
    /// Controller state changes per connection endpoint: (series index, time, state).
    pub state_changes: Vec<(usize, u64, &'static str)>,
    /// Every packet put on or dropped at a link, when the packet trace is on.
    pub packets: Vec<PacketRecord>,
}

/// Largest estimated size of the time series a run may keep in memory: 1 GiB of samples
/// (a `Vec` may hold up to twice that while it grows). Time series are kept until the end of
/// the run for the report, figures and `--out` CSVs, so their size is known up front from
/// the interval, `stop` and the number of series.
pub const MAX_SERIES_BYTES: u64 = 1 << 30;

/// Bytes of time series a run records at most: one sample per `interval_ns` up to `stop_ns`
/// for each of `conns` connection endpoints and `links` links. 0 when `interval_ns` is 0.
pub fn series_bytes(interval_ns: u64, stop_ns: u64, conns: u64, links: u64) -> u128 {
    if interval_ns == 0 {
        return 0;
    }
    let samples = (stop_ns / interval_ns) as u128 + 1;
    let per_sample = conns as u128 * std::mem::size_of::<ConnSample>() as u128
        + links as u128 * std::mem::size_of::<QueueSample>() as u128;
    samples * per_sample
}

/// Checks [`series_bytes`] against [`MAX_SERIES_BYTES`]. The error says the estimate, the
/// limit and why, and the smallest interval that fits.
pub fn check_series_budget(interval_ns: u64, stop_ns: u64, conns: u64, links: u64) -> Result<(), String> {
    let bytes = series_bytes(interval_ns, stop_ns, conns, links);
    if bytes <= MAX_SERIES_BYTES as u128 {
        return Ok(());
    }
    let per_sample = bytes / ((stop_ns / interval_ns) as u128 + 1);
    // Smallest interval with (stop / interval + 1) * per_sample <= limit.
    let fits = (MAX_SERIES_BYTES as u128 / per_sample.max(1)).saturating_sub(1).max(1);
    let min_interval = (stop_ns as u128).div_ceil(fits).min(u64::MAX as u128) as u64;
    // Rounded up to a whole unit so that it prints as one ("14ms", not "13717421ns").
    let unit = [1_000_000_000, 1_000_000, 1_000, 1].into_iter().find(|&u| min_interval >= u).unwrap_or(1);
    let min_interval = min_interval.div_ceil(unit).saturating_mul(unit);
    Err(format!(
        "{} over {} records {} samples for each of {} series ({} connection ends, {} links), about {} MiB; \
         time series are kept in memory until the run ends, and the limit is {} MiB: expected an interval of \
         at least {}, a shorter `stop`, or \"0ms\" to record none",
        crate::units::Duration(interval_ns),
        crate::units::Duration(stop_ns),
        // u128: a 1 ns interval over a `stop` of 2^64 − 1 ns is 2^64 samples.
        (stop_ns / interval_ns) as u128 + 1,
        conns + links,
        conns,
        links,
        bytes / (1 << 20),
        MAX_SERIES_BYTES >> 20,
        crate::units::Duration(min_interval),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_budget_error_counts_2_pow_64_samples_without_overflow() {
        // Found by the `scenario_build` fuzz target: `interval = "1ns"` with a `stop` of
        // 2^64 − 1 ns overflowed the sample count in the message (a panic with overflow
        // checks, a count of 0 without).
        let e = check_series_budget(1, u64::MAX, 2, 3).unwrap_err();
        assert!(e.contains("18446744073709551616 samples"), "{e}");
        assert!(check_series_budget(10_000_000, 1_000_000_000, 2, 3).is_ok());
    }
}
