//! BBR v1 congestion control: Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016, as implemented by Linux
//! `net/ipv4/tcp_bbr.c` (and ns-3's `TcpBbr`).
//!
//! BBR models the path by two numbers measured from ACKs: the bottleneck bandwidth
//! (BtlBw, a windowed max of delivery-rate samples) and the round-trip propagation time
//! (RTprop, a windowed min of RTT samples). It paces at `pacing_gain × BtlBw` and caps
//! inflight at `cwnd_gain × BtlBw × RTprop`, with the gains set by a four-mode state
//! machine: STARTUP → DRAIN → PROBE_BW ⇄ PROBE_RTT.
//!
//! One file per concept, after s2n-quic's BBR: [`windowed_filter`] (Linux
//! `lib/minmax.c`), `round` (round counting), `bandwidth` and `min_rtt` (the model),
//! `startup`, `drain`, `probe_bw`, `probe_rtt` (the modes), `pacing`, `cwnd` and
//! `recovery` (the outputs), `gain` (exact-ratio gains).
//!
//! Differences from Linux v1: no long-term bandwidth sampling for policers
//! (`bbr_lt_bw_sampling`), no ACK-aggregation cwnd bonus (`bbr_update_ack_aggregation`,
//! a post-2019 addition), no EDT in-flight adjustment (`bbr_packets_in_net_at_edt`), and
//! no rounding of the inflight target to an even packet count. PROBE_RTT's app-limited
//! marking is applied to the rate samples by BBR itself (see `probe_rtt`), since the
//! connection owns the app-limited flag. The window is in bytes, the
//! bandwidth in bits per second, gains exact ratios. ECN is ignored, as in Linux v1.

mod bandwidth;
mod cwnd;
mod drain;
mod gain;
mod min_rtt;
mod pacing;
mod probe_bw;
mod probe_rtt;
mod recovery;
mod round;
mod startup;
mod state;
pub mod windowed_filter;

#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod sim;
#[cfg(test)]
mod tests;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{AckSample, CongestionController, CongestionSignal, HandshakeFeedback};
use bandwidth::BandwidthFilter;
use cwnd::CWND_MIN_TARGET_SEGMENTS;
use min_rtt::MinRttFilter;
use probe_bw::CycleInput;
use probe_rtt::MinRttInput;
use recovery::{CaState, CwndUpdate};
use round::RoundCounter;
use startup::FullPipe;

pub use gain::{Gain, CWND_GAIN, DRAIN_GAIN, HIGH_GAIN, UNIT};
pub use state::Mode;

/// Configuration of a [`Bbr`] controller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BbrConfig {
    /// Sender maximum segment size in bytes (at least 1).
    pub mss_bytes: u64,
    /// Initial window in segments. Windows below BBR's 4-segment minimum
    /// (Linux `bbr_cwnd_min_target`) are raised to it.
    pub initial_window_segments: u64,
    /// Seed of the ChaCha8 generator that picks PROBE_BW's starting phase
    /// (Linux `prandom_u32_max` in `bbr_reset_probe_bw_mode`). Default 0.
    #[serde(default)]
    pub seed: u64,
}

impl BbrConfig {
    /// A configuration for `mss_bytes` segments and an initial window of
    /// `initial_window_segments`, with seed 0.
    pub fn new(mss_bytes: u64, initial_window_segments: u64) -> Self {
        Self { mss_bytes, initial_window_segments, seed: 0 }
    }

    /// The same configuration with another RNG seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// BBR v1 congestion controller (Linux `struct bbr`). Sans-IO: time only comes in
/// through the calls, randomness only from the seeded generator.
#[derive(Clone, Debug)]
pub struct Bbr {
    /// The configuration, normalized by [`Bbr::new`].
    config: BbrConfig,
    /// Current mode (Linux `mode`).
    mode: Mode,
    /// Picks PROBE_BW's starting phase; seeded from [`BbrConfig::seed`].
    rng: ChaCha8Rng,
    /// Packet-timed round counting.
    round: RoundCounter,
    /// BtlBw: windowed max of delivery rates.
    bw_filter: BandwidthFilter,
    /// RTprop: minimum RTT and when it was refreshed.
    min_rtt: MinRttFilter,
    /// STARTUP's full-pipe estimator.
    full_pipe: FullPipe,
    /// Current PROBE_BW phase (Linux `cycle_idx`).
    cycle_index: usize,
    /// When the current phase started (Linux `cycle_mstamp`).
    cycle_stamp_ns: u64,
    /// When PROBE_RTT may end, once inflight got low (Linux `probe_rtt_done_stamp`).
    probe_rtt_done_ns: Option<u64>,
    /// A round has passed since inflight got low in PROBE_RTT.
    probe_rtt_round_done: bool,
    /// `C.delivered` range whose packets were sent during PROBE_RTT (Linux marks them
    /// app-limited through `tp->app_limited`).
    probe_rtt_app_limited: Option<(u64, u64)>,
    /// Restarting after idle; no PROBE_RTT until data is acknowledged.
    idle_restart: bool,
    /// The congestion window.
    cwnd_bytes: u64,
    /// cwnd saved before recovery or PROBE_RTT (Linux `prior_cwnd`).
    prior_cwnd_bytes: u64,
    /// Reported slow-start threshold, set on entering DRAIN like Linux.
    ssthresh_bytes: u64,
    /// The pacing rate in bits per second (Linux `sk_pacing_rate`).
    pacing_rate_bps: u64,
    /// The pacing rate was initialized from a real RTT (Linux `has_seen_rtt`).
    has_seen_rtt: bool,
    /// The connection's recovery state, from the congestion calls.
    ca_state: CaState,
    /// `ca_state` as of the last ACK (Linux `prev_ca_state`).
    prev_ca_state: CaState,
    /// Packet conservation during recovery's first round (Linux `packet_conservation`).
    packet_conservation: bool,
}

impl Bbr {
    /// A controller in STARTUP with the initial window, pacing at
    /// `HIGH_GAIN × initial window / 1 ms` until an RTT is known (Linux `bbr_init`).
    pub fn new(config: BbrConfig) -> Self {
        let config = BbrConfig {
            mss_bytes: config.mss_bytes.max(1),
            initial_window_segments: config.initial_window_segments.max(CWND_MIN_TARGET_SEGMENTS),
            seed: config.seed,
        };
        let mut bbr = Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            cwnd_bytes: config.mss_bytes * config.initial_window_segments,
            config,
            mode: Mode::Startup,
            round: RoundCounter::default(),
            bw_filter: BandwidthFilter::new(),
            min_rtt: MinRttFilter::default(),
            full_pipe: FullPipe::default(),
            cycle_index: 0,
            cycle_stamp_ns: 0,
            probe_rtt_done_ns: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: None,
            idle_restart: false,
            prior_cwnd_bytes: 0,
            ssthresh_bytes: u64::MAX,
            pacing_rate_bps: 0,
            has_seen_rtt: false,
            ca_state: CaState::Open,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
        };
        bbr.init_pacing_rate_from_rtt(None);
        bbr
    }

    /// The configuration in force (MSS at least 1, initial window at least 4).
    pub fn config(&self) -> &BbrConfig {
        &self.config
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The BtlBw estimate in bits per second, 0 before any sample.
    pub fn btl_bw_bps(&self) -> u64 {
        self.max_bw_bps()
    }

    /// The RTprop estimate in nanoseconds, `None` before any RTT sample.
    pub fn min_rtt_ns(&self) -> Option<u64> {
        self.min_rtt.get()
    }

    /// The pacing gain of the current mode (and PROBE_BW phase).
    pub fn pacing_gain(&self) -> Gain {
        self.gains().0
    }

    /// The cwnd gain of the current mode.
    pub fn cwnd_gain(&self) -> Gain {
        self.gains().1
    }

    /// The PROBE_BW phase, 0..8 (0 is the 5/4 phase, 1 the 3/4 phase), while in PROBE_BW.
    pub fn cycle_index(&self) -> Option<usize> {
        (self.mode == Mode::ProbeBw).then_some(self.cycle_index)
    }

    /// Packet-timed rounds counted so far.
    pub fn round_count(&self) -> u64 {
        self.round.count()
    }

    /// True once STARTUP has found the pipe full (it stays true).
    pub fn is_full_pipe(&self) -> bool {
        self.full_pipe.is_reached()
    }

    /// The cwnd target `cwnd_gain × BDP + quantization budget` for the current model
    /// (Linux `bbr_inflight(sk, bw, cwnd_gain)`).
    pub fn target_window_bytes(&self) -> u64 {
        self.inflight_target(self.max_bw_bps(), self.cwnd_gain())
    }

    /// BtlBw in bits per second (Linux `bbr_max_bw`).
    fn max_bw_bps(&self) -> u64 {
        self.bw_filter.max_bps()
    }

    /// The initial window in bytes (stands in for Linux `TCP_INIT_CWND`).
    fn initial_window_bytes(&self) -> u64 {
        self.config.mss_bytes * self.config.initial_window_segments
    }

    /// `(pacing_gain, cwnd_gain)` now (Linux `bbr_update_gains`).
    fn gains(&self) -> (Gain, Gain) {
        self.mode.gains(self.cycle_pacing_gain())
    }

    /// Round counting and the bandwidth filter (Linux `bbr_update_bw`). Returns the
    /// sample's app-limited flag.
    fn update_bw(&mut self, ack: &AckSample) -> bool {
        self.round.begin_ack();
        let Some(rate) = ack.rate else { return false };
        let is_app_limited = rate.is_app_limited || self.is_probe_rtt_app_limited(rate.prior_delivered_bytes);
        let Some(bw_bps) = rate.delivery_rate_bps() else { return is_app_limited };
        if self.round.on_rate_sample(rate.prior_delivered_bytes, ack.delivered_total_bytes) {
            self.packet_conservation = false;
        }
        self.bw_filter.update(self.round.count(), bw_bps, is_app_limited);
        is_app_limited
    }
}

impl CongestionController for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn state(&self) -> &'static str {
        self.mode.name()
    }

    /// Restart from idle (Linux `bbr_cwnd_event(CA_EVENT_TX_START)`): the first packet
    /// sent with nothing in flight while app-limited. PROBE_BW paces at BtlBw rather
    /// than probing; PROBE_RTT may end if its time is up.
    fn on_packet_sent(&mut self, now_ns: u64, bytes: u64, bytes_in_flight: u64, app_limited: bool) {
        if !app_limited || bytes_in_flight > bytes {
            return;
        }
        self.idle_restart = true;
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.max_bw_bps(), UNIT, None),
            Mode::ProbeRtt => self.check_probe_rtt_done(now_ns),
            Mode::Startup | Mode::Drain => {}
        }
    }

    /// Linux `bbr_main`: update the model (`bbr_update_model`), then the pacing rate and
    /// cwnd. An ACK outside recovery while BBR still thinks it is recovering ends the
    /// recovery, in case the connection did not call `on_recovery_exit`.
    fn on_ack(&mut self, ack: &AckSample) {
        if self.ca_state != CaState::Open && !ack.in_recovery {
            self.exit_recovery();
        }
        let is_app_limited = self.update_bw(ack);
        self.update_cycle_phase(CycleInput {
            now_ns: ack.now_ns,
            prior_in_flight_bytes: ack.prior_in_flight_bytes,
            had_losses: ack.newly_lost_bytes > 0,
        });
        self.full_pipe.on_ack(self.max_bw_bps(), self.round.is_round_start(), is_app_limited);
        self.check_drain(ack.now_ns, ack.bytes_in_flight);
        self.update_min_rtt(MinRttInput {
            now_ns: ack.now_ns,
            rtt_ns: ack.rtt_ns.or(ack.rate.and_then(|r| r.rtt_ns)),
            bytes_in_flight: ack.bytes_in_flight,
            delivered_total_bytes: ack.delivered_total_bytes,
            delivered_data: ack.newly_acked_bytes > 0,
        });
        let bw = self.max_bw_bps();
        let (pacing_gain, cwnd_gain) = self.gains();
        self.set_pacing_rate(bw, pacing_gain, ack.srtt_ns.or(ack.min_rtt_ns));
        let update = CwndUpdate {
            acked_bytes: ack.newly_acked_bytes,
            lost_bytes: ack.newly_lost_bytes,
            bytes_in_flight: ack.bytes_in_flight,
            delivered_total_bytes: ack.delivered_total_bytes,
        };
        self.set_cwnd(update, bw, cwnd_gain);
    }

    /// Loss starts fast recovery, a timeout drops cwnd to one MSS; BBR v1 does not
    /// react to ECN.
    fn on_congestion(&mut self, _now_ns: u64, signal: CongestionSignal, _bytes_in_flight: u64) {
        match signal {
            CongestionSignal::Loss => self.on_loss_signal(),
            CongestionSignal::Timeout | CongestionSignal::PersistentCongestion => self.on_timeout(),
            CongestionSignal::Ecn { .. } => {}
        }
    }

    fn on_recovery_exit(&mut self, _now_ns: u64) {
        self.exit_recovery();
    }

    /// The handshake RTT initializes the pacing rate, as Linux's `bbr_init` does from
    /// the SYN's RTT sample in `srtt`.
    fn on_handshake_feedback(&mut self, feedback: HandshakeFeedback) {
        if !self.has_seen_rtt && feedback.rtt_ns.is_some() {
            self.init_pacing_rate_from_rtt(feedback.rtt_ns);
        }
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd_bytes
    }

    fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh_bytes
    }

    fn pacing_rate_bps(&self) -> Option<u64> {
        Some(self.pacing_rate_bps)
    }

    fn uses_prr(&self) -> bool {
        false
    }
}
