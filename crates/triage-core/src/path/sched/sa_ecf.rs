//! SA-ECF: Stream-Aware Earliest Completion First (Rabitsch, Hurtig, Brunström, EPIQ '18).
//!
//! What PriorityBucket says of it (§5.2, its only description): "For each packet, SA-ECF
//! first chooses two paths: One path is with the lowest RTT and not necessarily to be an
//! available path, while the other is an available path with the lowest RTT. Then SA-ECF
//! estimates the completion time of the stream to which the packet belongs on two paths,
//! and schedules the packet to the path with the lowest estimated time. The number of
//! opportunities for each stream to send is proportional to its weight." §2 adds that "the
//! estimation uses the remaining bytes instead of the size of the stream".
//!
//! The paper only cites \[10\] for the estimate itself. What we implement, following
//! REPRODUCTION-pb-partial.md A.2.2 and choice PB-10 (the ECF rule of Lim et al., CoNEXT
//! '17, with SA-ECF's per-stream `k`):
//!
//! - `f` = the lowest-smoothed-RTT path whether or not it can send; `s` = the
//!   lowest-smoothed-RTT path other than `f` that can send. If `f` can send, the packet
//!   goes on `f`. If no `s` exists, nothing is sent.
//! - Otherwise, with `k` the bytes to complete, δ = max(RTTVAR_f, RTTVAR_s), β = 1/4 and
//!   the stream's `waiting` flag (ECF Alg. 1):
//!   ```text
//!   n = 1 + k / cwnd_f
//!   if n · rtt_f < (1 + waiting · β) · (rtt_s + δ):
//!       if (k / cwnd_s) · rtt_s ≥ 2 · rtt_f + δ:  waiting = 1; wait for f
//!       else:                                     send on s
//!   else:                                         waiting = 0; send on s
//!   ```
//! - SA-ECF's `k` = min(unsent bytes of the connection, bytes until the stream completes).
//!   Bytes until completion (SA-ECF's `bytesUntilCompletion`), with `len` the stream's
//!   unsent bytes, `L` one packet, `left` = `len − L` (or `len` if it fits in one packet)
//!   and `w / W` the stream's share of sending opportunities (its weight over the sum of
//!   the weights of the open streams): `len` when the stream is the only one open or its
//!   remaining quantum in the current weighted round covers `left`, else
//!   `len + left · (W − w) / w`, the bytes the other streams send while this one finishes.
//!   We assume the dependency tree is one level deep (every stream depends on the root),
//!   as PB-13 assumes for both pages.
//! - "Wait" is per stream: the connection may offer the next stream of its weighted round
//!   and send that one on `s` (the public SA-ECF code iterates the round this way).
//!
//! [`EcfFormula::GoCode`] reproduces the public Go code instead (mp-quic forks,
//! `scheduler.go::selectPathStreamAwareEarliestCompletionFirst`,
//! `stream_scheduler.go::bytesUntilCompletion`), because that is what the PriorityBucket
//! authors' runs used (PB-10): `n · cwnd_f` becomes `min(k, cwnd_f) + cwnd_f`, `k / cwnd_s`
//! becomes `max(k, cwnd_s) / cwnd_s` with a strict `>`, bytes until completion is
//! `(W − w) · left + len / w`, and the quantum test uses 256 packets (the value the code's
//! tree walk leaves for a stream that depends on the root).
//!
//! Left to the connection: mp-quic sends retransmissions on `f` even when its window is
//! full, and counts only non-failed paths (ours leaves failed paths out of the views).

use std::collections::BTreeMap;

use super::{lowest_srtt, PathId, PathScheduler, PathView, StreamView};

/// Which form of the ECF rule (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcfFormula {
    /// The ECF paper's inequalities and SA-ECF's share-weighted bytes until completion.
    #[default]
    Paper,
    /// The public Go code's variant (PB-10).
    GoCode,
}

/// SA-ECF settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SaEcfConfig {
    /// Hysteresis β as a ratio (numerator, denominator); ECF uses 1/4.
    pub beta: (u32, u32),
    /// Paper or Go-code form.
    pub formula: EcfFormula,
}

impl Default for SaEcfConfig {
    fn default() -> Self {
        Self { beta: (1, 4), formula: EcfFormula::Paper }
    }
}

/// SA-ECF (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct SaEcf {
    config: SaEcfConfig,
    /// ECF's `waiting` flag, per stream (message ID).
    waiting: BTreeMap<u32, bool>,
}

impl SaEcf {
    /// An SA-ECF scheduler with `config`.
    pub fn new(config: SaEcfConfig) -> Self {
        Self { config, waiting: BTreeMap::new() }
    }

    /// The stream's `waiting` flag (true after it chose to wait for the fastest path).
    pub fn is_waiting(&self, msg_id: u32) -> bool {
        self.waiting.get(&msg_id).copied().unwrap_or(false)
    }

    /// SA-ECF's estimate of the bytes the connection sends until `stream` completes (see
    /// the module documentation).
    pub fn bytes_until_completion(&self, stream: &StreamView) -> u64 {
        let len = stream.unsent_bytes;
        let l = stream.max_packet_bytes.max(1);
        let left = if l < len { len - l } else { len };
        let w = u64::from(stream.weight.max(1));
        let total = u64::from(stream.total_weight).max(w);
        match self.config.formula {
            EcfFormula::Paper => {
                if u64::from(stream.quantum_packets) * l >= left || stream.open_streams <= 1 {
                    len
                } else {
                    let others = (u128::from(left) * u128::from(total - w) / u128::from(w)) as u64;
                    len.saturating_add(others)
                }
            }
            EcfFormula::GoCode => {
                if 256 * l >= left || stream.open_streams <= 1 {
                    len
                } else {
                    ((total - w) * left).saturating_add(len / w)
                }
            }
        }
    }

    /// ECF's test for a packet that `f` cannot take now: `true` = send it on `s`, `false`
    /// = wait for `f`. Updates `waiting` as ECF Alg. 1 does.
    fn send_on_second(&self, f: &PathView, s: &PathView, k: u64, waiting: &mut bool) -> bool {
        let (bn, bd) = (u128::from(self.config.beta.0), u128::from(self.config.beta.1.max(1)));
        let (rtt_f, rtt_s) = (u128::from(f.srtt_ns), u128::from(s.srtt_ns));
        let delta = u128::from(f.rttvar_ns.max(s.rttvar_ns));
        let cwnd_f = u128::from(f.cwnd_bytes.max(1));
        let cwnd_s = u128::from(s.cwnd_bytes.max(1));
        let k = u128::from(k);
        let go = self.config.formula == EcfFormula::GoCode;
        // n · rtt_f < (1 + waiting · β)(rtt_s + δ), times cwnd_f · bd:
        // (cwnd_f + k) · rtt_f · bd < (bd + waiting · bn) · cwnd_f · (rtt_s + δ)
        let x_f = if go { k.min(cwnd_f) } else { k };
        let lhs = (cwnd_f + x_f) * rtt_f * bd;
        let rhs = (bd + if *waiting { bn } else { 0 }) * cwnd_f * (rtt_s + delta);
        if lhs < rhs {
            // (k / cwnd_s) · rtt_s ≥ 2 · rtt_f + δ, times cwnd_s
            let slow = if go {
                k.max(cwnd_s) * rtt_s > cwnd_s * (2 * rtt_f + delta)
            } else {
                k * rtt_s >= cwnd_s * (2 * rtt_f + delta)
            };
            if slow {
                *waiting = true;
                return false;
            }
            true
        } else {
            *waiting = false;
            true
        }
    }

    /// `f` (lowest RTT, can send or not) and `s` (lowest RTT among the others that can send).
    fn candidates(paths: &[PathView]) -> (Option<&PathView>, Option<&PathView>) {
        let f = lowest_srtt(paths, |_| true);
        let s = f.and_then(|f| lowest_srtt(paths, |p| p.can_send && p.id != f.id));
        (f, s)
    }
}

impl PathScheduler for SaEcf {
    fn name(&self) -> &'static str {
        "sa_ecf"
    }

    /// A packet of no particular stream: `f` if it can send, else `s` (the ECF rule with
    /// `k = 0` always sends on `s`).
    fn choose(&mut self, _now_ns: u64, paths: &[PathView]) -> Option<PathId> {
        match Self::candidates(paths) {
            (Some(f), _) if f.can_send => Some(f.id),
            (_, s) => s.map(|s| s.id),
        }
    }

    fn per_stream(&self) -> bool {
        true
    }

    fn choose_for_stream(&mut self, _now_ns: u64, stream: &StreamView, paths: &[PathView]) -> Option<PathId> {
        let (f, s) = Self::candidates(paths);
        let f = f?;
        if f.can_send {
            return Some(f.id);
        }
        let s = s?;
        let k = stream.connection_unsent_bytes.min(self.bytes_until_completion(stream));
        let mut waiting = self.is_waiting(stream.msg_id);
        let send = self.send_on_second(f, s, k, &mut waiting);
        self.waiting.insert(stream.msg_id, waiting);
        send.then_some(s.id)
    }

    fn on_message_done(&mut self, msg_id: u32) {
        self.waiting.remove(&msg_id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{blocked, view};
    use super::*;

    /// Table 2 "High" with the fast path's window full: f = 10 Mbps / 10 ms (blocked),
    /// s = 40 Mbps / 50 ms; both windows 14,480 bytes, δ = 1 ms.
    fn high() -> [PathView; 2] {
        let mut f = blocked(view(0, 10, 10));
        let mut s = view(1, 40, 50);
        f.rttvar_ns = 1_000_000;
        s.rttvar_ns = 500_000;
        [f, s]
    }

    /// A stream alone on the connection with `unsent` bytes, `conn` unsent in all.
    fn stream(id: u32, unsent: u64, conn: u64) -> StreamView {
        StreamView {
            msg_id: id,
            unsent_bytes: unsent,
            weight: 256,
            total_weight: 256,
            quantum_packets: 256,
            open_streams: 1,
            connection_unsent_bytes: conn,
            max_packet_bytes: 1000,
        }
    }

    #[test]
    fn the_fastest_path_when_it_can_send() {
        let mut s = SaEcf::default();
        let paths = [view(0, 10, 10), view(1, 40, 50)];
        assert_eq!(s.choose(0, &paths), Some(PathId(0)));
        assert_eq!(s.choose_for_stream(0, &stream(1, 1_000_000, 1_000_000), &paths), Some(PathId(0)));
    }

    #[test]
    fn nothing_when_no_other_path_can_send() {
        let mut s = SaEcf::default();
        let paths = [blocked(view(0, 10, 10)), blocked(view(1, 40, 50))];
        assert_eq!(s.choose(0, &paths), None);
        assert_eq!(s.choose_for_stream(0, &stream(1, 5000, 5000), &paths), None);
        assert_eq!(s.choose(0, &[]), None);
    }

    #[test]
    fn without_a_stream_the_second_path_when_the_first_is_blocked() {
        let mut s = SaEcf::default();
        assert_eq!(s.choose(0, &high()), Some(PathId(1)));
    }

    // Hand computation, all in bytes and ms: rtt_f 10, rtt_s 50, δ 1, cwnd 14,480 both.
    // First test: (14,480 + k) · 10 · 4 < 4 · 14,480 · 51  ⇔  k < 59,368.
    // Second test: k · 50 ≥ 14,480 · 21  ⇔  k ≥ 6,081.6.

    #[test]
    fn waits_for_the_fast_path_when_it_would_finish_first() {
        let mut s = SaEcf::default();
        // k = 10,000: n · rtt_f = 16.9 ms < 51 ms and (k / cwnd_s) · rtt_s = 34.5 ms ≥ 21 ms.
        assert_eq!(s.choose_for_stream(0, &stream(1, 10_000, 10_000), &high()), None);
        assert!(s.is_waiting(1));
    }

    #[test]
    fn a_short_stream_goes_on_the_second_path() {
        let mut s = SaEcf::default();
        // k = 5,000: (k / cwnd_s) · rtt_s = 17.3 ms < 21 ms.
        assert_eq!(s.choose_for_stream(0, &stream(1, 5_000, 5_000), &high()), Some(PathId(1)));
        assert!(!s.is_waiting(1));
    }

    #[test]
    fn a_long_stream_goes_on_the_second_path() {
        let mut s = SaEcf::default();
        // k = 1,000,000: n · rtt_f = 700.6 ms ≥ 51 ms.
        assert_eq!(s.choose_for_stream(0, &stream(1, 1_000_000, 1_000_000), &high()), Some(PathId(1)));
    }

    #[test]
    fn waiting_widens_the_first_test_by_beta() {
        // k = 70,000: (84,480) · 10 · 4 = 3,379,200 against 4 · 14,480 · 51 = 2,953,920
        // (send on s) but 5 · 14,480 · 51 = 3,692,400 once waiting (then k ≥ 6,082: wait).
        let mut s = SaEcf::default();
        assert_eq!(s.choose_for_stream(0, &stream(1, 70_000, 70_000), &high()), Some(PathId(1)));
        s.waiting.insert(1, true);
        assert_eq!(s.choose_for_stream(0, &stream(1, 70_000, 70_000), &high()), None);
        assert!(s.is_waiting(1));
        // Far above the band the flag clears.
        assert_eq!(s.choose_for_stream(0, &stream(1, 1_000_000, 1_000_000), &high()), Some(PathId(1)));
        assert!(!s.is_waiting(1));
    }

    #[test]
    fn stream_aware_k_sends_a_finishing_stream_that_ecf_would_hold() {
        let mut s = SaEcf::default();
        // The connection has 10,000 bytes unsent (plain ECF: wait), but this stream has
        // only 3,000 left: k = 3,000 and it goes on s. The waiting flags are per stream.
        assert_eq!(s.choose_for_stream(0, &stream(1, 10_000, 10_000), &high()), None);
        assert_eq!(s.choose_for_stream(0, &stream(2, 3_000, 10_000), &high()), Some(PathId(1)));
        assert!(s.is_waiting(1) && !s.is_waiting(2));
        s.on_message_done(1);
        assert!(!s.is_waiting(1));
    }

    #[test]
    fn bytes_until_completion_weighs_the_other_streams() {
        let paper = SaEcf::default();
        let go = SaEcf::new(SaEcfConfig { formula: EcfFormula::GoCode, ..Default::default() });
        // 100,000 bytes left, 1,000-byte packets: left = 99,000.
        let mut v = stream(1, 100_000, 1_000_000);
        v.open_streams = 3;
        v.quantum_packets = 1;
        // share 1/4, one packet of quantum left: 100,000 + 99,000 · 3 = 397,000.
        v.weight = 1;
        v.total_weight = 4;
        assert_eq!(paper.bytes_until_completion(&v), 397_000);
        // share 2/4: 100,000 + 99,000 · 2 / 2 = 199,000; Go: 256 packets ≥ left → len.
        v.weight = 2;
        assert_eq!(paper.bytes_until_completion(&v), 199_000);
        assert_eq!(go.bytes_until_completion(&v), 100_000);
        // Past 256 packets the Go form: (4 − 2) · 299,000 + 300,000 / 2 = 748,000.
        v.unsent_bytes = 300_000;
        assert_eq!(go.bytes_until_completion(&v), 748_000);
        assert_eq!(paper.bytes_until_completion(&v), 599_000);
        // Alone, or within its quantum: its own bytes.
        v.open_streams = 1;
        assert_eq!(paper.bytes_until_completion(&v), 300_000);
        v.open_streams = 3;
        v.quantum_packets = 299;
        assert_eq!(paper.bytes_until_completion(&v), 300_000);
    }

    #[test]
    fn go_code_caps_the_first_test_at_one_window() {
        // k = 70,000 and not waiting: the paper form sends on s (above), the Go form
        // counts min(k, cwnd_f) = 14,480: 28,960 · 10 · 4 < 2,953,920, then
        // max(k, cwnd_s) · 50 = 3,500,000 > 14,480 · 21: wait.
        let mut s = SaEcf::new(SaEcfConfig { formula: EcfFormula::GoCode, ..Default::default() });
        assert_eq!(s.choose_for_stream(0, &stream(1, 70_000, 70_000), &high()), None);
        // k = 1,000 (< cwnd_s): the Go form uses cwnd_s: 14,480 · 50 > 14,480 · 21: wait,
        // where the paper form sends (1,000 · 50 < 304,080).
        assert_eq!(s.choose_for_stream(0, &stream(2, 1_000, 1_000), &high()), None);
        let mut p = SaEcf::default();
        assert_eq!(p.choose_for_stream(0, &stream(2, 1_000, 1_000), &high()), Some(PathId(1)));
    }
}
