//! Mahimahi link traces: when a variable-rate (cellular) link may deliver a packet.
//!
//! Format (Mahimahi's `mm-link`, Netravali et al., USENIX ATC 2015): one integer millisecond
//! timestamp per line, non-decreasing. Each line is one delivery opportunity for one
//! MTU-sized packet of [`MTU_BYTES`] = 1500 bytes; a timestamp repeated `k` times means `k`
//! opportunities in that millisecond. The trace repeats forever with period equal to its
//! last timestamp: opportunity `i` of loop `n` happens at `n · period + t_i` ms (as in
//! Mahimahi's `LinkQueue`, which adds the last timestamp to its base on every wrap). A trace
//! whose last timestamp is 0 has no period and is rejected, as Mahimahi does.
//!
//! Parsing is strict so that a corrupted trace is noticed: blank lines are allowed only at
//! the end, surrounding spaces and a trailing `\r` are tolerated, and anything else that is
//! not a non-decreasing integer is an error naming the 1-based line and what was expected.
//!
//! [`TraceCursor`] walks the opportunities in time order for a link that consumes them.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes one delivery opportunity can carry (Mahimahi's MTU-sized packet).
pub const MTU_BYTES: u64 = 1500;

const NS_PER_MS: u64 = 1_000_000;

/// Largest accepted timestamp: the largest whole number of milliseconds whose nanosecond
/// value fits in a `u64` (about 584 years).
pub const MAX_TIMESTAMP_MS: u64 = u64::MAX / NS_PER_MS;

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A line is not an integer millisecond timestamp.
    #[error("line {line}: expected an integer millisecond timestamp, got {got:?}")]
    NotANumber {
        /// 1-based line number.
        line: usize,
        /// The offending line (cut if long).
        got: String,
    },
    /// A timestamp is larger than [`MAX_TIMESTAMP_MS`].
    #[error("line {line}: timestamp {got} ms is too large (at most {max} ms)", max = MAX_TIMESTAMP_MS)]
    TooLarge {
        /// 1-based line number.
        line: usize,
        /// The offending text.
        got: String,
    },
    /// A timestamp is smaller than the one before it.
    #[error(
        "line {line}: expected a timestamp of at least {previous_ms} ms \
         (timestamps must not decrease), got {got_ms}"
    )]
    Decreasing {
        /// 1-based line number.
        line: usize,
        /// The timestamp on the line before.
        previous_ms: u64,
        /// The offending timestamp.
        got_ms: u64,
    },
    /// A blank line before the last timestamp.
    #[error(
        "line {line}: expected an integer millisecond timestamp, got a blank line \
         (blank lines are allowed only at the end)"
    )]
    BlankLine {
        /// 1-based line number.
        line: usize,
    },
    /// The trace has no timestamps at all.
    #[error("empty trace: expected one integer millisecond timestamp per line")]
    Empty,
    /// The last timestamp is 0, so the trace has no period to loop with.
    #[error(
        "line {line}: the last timestamp is 0, so the trace lasts no time and cannot loop \
         (expected a last timestamp above 0)"
    )]
    ZeroPeriod {
        /// 1-based line number of the last timestamp.
        line: usize,
    },
    /// The file could not be read.
    #[error("cannot read trace file {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// The file was read but its contents are invalid.
    #[error("trace file {}: {error}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with its contents.
        error: Box<TraceError>,
    },
}

impl TraceError {
    /// The 1-based line number the error is about, if any (looking inside [`InFile`]).
    ///
    /// [`InFile`]: TraceError::InFile
    pub fn line(&self) -> Option<usize> {
        match self {
            TraceError::NotANumber { line, .. }
            | TraceError::TooLarge { line, .. }
            | TraceError::Decreasing { line, .. }
            | TraceError::BlankLine { line }
            | TraceError::ZeroPeriod { line } => Some(*line),
            TraceError::InFile { error, .. } => error.line(),
            TraceError::Empty | TraceError::Io { .. } => None,
        }
    }
}

/// Longest piece of a bad line quoted back in an error message, in characters.
const MAX_QUOTED_CHARS: usize = 64;

fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A parsed Mahimahi trace: delivery opportunities in milliseconds, looping with
/// [`period_ms`](Self::period_ms).
///
/// Cheap to clone (the opportunities are shared).
#[derive(Clone, PartialEq, Eq)]
pub struct MahimahiTrace {
    /// Non-empty, non-decreasing, last element > 0 and ≤ [`MAX_TIMESTAMP_MS`].
    opportunities_ms: Arc<[u64]>,
}

impl fmt::Debug for MahimahiTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MahimahiTrace")
            .field("opportunities", &self.opportunities_ms.len())
            .field("period_ms", &self.period_ms())
            .field("mean_rate_bps", &self.mean_rate_bps())
            .finish()
    }
}

impl MahimahiTrace {
    /// Parses a trace from its text; see the [module docs](self) for the format.
    ///
    /// # Errors
    ///
    /// A line that is not a non-negative integer, a timestamp above [`MAX_TIMESTAMP_MS`] or
    /// below the previous one, a blank line before the last timestamp, a trace without
    /// timestamps, or a last timestamp of 0. Errors carry the 1-based line
    /// ([`TraceError::line`]).
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut opportunities = Vec::new();
        let mut first_blank: Option<usize> = None;
        let mut last_line = 0;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.trim();
            if content.is_empty() {
                first_blank.get_or_insert(line);
                continue;
            }
            if let Some(blank) = first_blank {
                return Err(TraceError::BlankLine { line: blank });
            }
            if !content.bytes().all(|b| b.is_ascii_digit()) {
                return Err(TraceError::NotANumber { line, got: quote(raw) });
            }
            let ts: u64 = match content.parse() {
                Ok(ts) if ts <= MAX_TIMESTAMP_MS => ts,
                _ => return Err(TraceError::TooLarge { line, got: quote(content) }),
            };
            if let Some(&previous_ms) = opportunities.last() {
                if ts < previous_ms {
                    return Err(TraceError::Decreasing { line, previous_ms, got_ms: ts });
                }
            }
            opportunities.push(ts);
            last_line = line;
        }
        match opportunities.last() {
            None => Err(TraceError::Empty),
            Some(0) => Err(TraceError::ZeroPeriod { line: last_line }),
            Some(_) => Ok(MahimahiTrace { opportunities_ms: opportunities.into() }),
        }
    }

    /// Reads and parses a trace file.
    ///
    /// # Errors
    ///
    /// [`TraceError::Io`] if the file cannot be read as UTF-8 text, [`TraceError::InFile`]
    /// wrapping a [`parse`](Self::parse) error otherwise; both name the file.
    pub fn from_file(path: &Path) -> Result<Self, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|error| TraceError::Io { path: path.to_owned(), error })?;
        Self::parse(&text).map_err(|error| TraceError::InFile { path: path.to_owned(), error: Box::new(error) })
    }

    /// The delivery opportunities of one loop, in milliseconds, non-decreasing.
    pub fn opportunities_ms(&self) -> &[u64] {
        &self.opportunities_ms
    }

    /// The loop period in milliseconds: the last timestamp (always > 0).
    pub fn period_ms(&self) -> u64 {
        self.opportunities_ms.last().copied().unwrap_or(1)
    }

    /// The mean capacity over one loop in bits per second, rounded down:
    /// opportunities × 1500 bytes × 8 / period.
    pub fn mean_rate_bps(&self) -> u64 {
        let bits = self.opportunities_ms.len() as u128 * u128::from(MTU_BYTES) * 8;
        let rate = bits * 1000 / u128::from(self.period_ms());
        u64::try_from(rate).unwrap_or(u64::MAX)
    }

    /// A cursor over this trace's opportunities, starting at time 0.
    pub fn cursor(&self) -> TraceCursor {
        TraceCursor::new(self.clone())
    }
}

/// Consumes a trace's delivery opportunities in time order, looping forever.
///
/// Each call to [`next_opportunity_ns`](Self::next_opportunity_ns) returns the earliest
/// opportunity not yet consumed that is at or after the given time, and consumes it;
/// opportunities that pass unused before that time are skipped (wasted, as in Mahimahi when
/// the queue is empty). Cost: O(1) when the answer is the next opportunity, O(log n) for a
/// jump within one loop, and O(log n) for a jump over any number of loops.
#[derive(Clone, Debug)]
pub struct TraceCursor {
    opportunities_ms: Arc<[u64]>,
    /// Index of the next unconsumed opportunity in the current loop.
    index: usize,
    /// Start of the current loop in ms: loop number × period.
    base_ms: u64,
}

impl TraceCursor {
    /// A cursor at time 0, before the first opportunity of `trace` (clone the trace to
    /// keep it: cloning is cheap, the opportunities are shared).
    pub fn new(trace: MahimahiTrace) -> Self {
        TraceCursor { opportunities_ms: trace.opportunities_ms, index: 0, base_ms: 0 }
    }

    fn period_ms(&self) -> u64 {
        self.opportunities_ms.last().copied().unwrap_or(1)
    }

    /// Returns the earliest unconsumed delivery opportunity at or after `not_before_ns`, in
    /// nanoseconds, and consumes it (and every unconsumed one before it).
    ///
    /// Times past `u64::MAX` nanoseconds (about 584 years) saturate to `u64::MAX`.
    pub fn next_opportunity_ns(&mut self, not_before_ns: u64) -> u64 {
        let ops = &self.opportunities_ms;
        let period = self.period_ms();
        // An opportunity at t ms qualifies iff t · 10^6 ≥ not_before_ns.
        let min_ms = not_before_ns.div_ceil(NS_PER_MS);
        let next_ms = self.base_ms.saturating_add(ops[self.index]);
        if next_ms < min_ms {
            // Skip ahead. `rel` is the target relative to the current loop's start; the
            // current loop's last opportunity is at base + period.
            let rel = min_ms - self.base_ms;
            if rel <= period {
                // Within this loop: binary search the rest of it.
                self.index += ops[self.index..].partition_point(|&t| t < rel);
            } else {
                // Skip whole loops: loop k (relative) holds a match iff k·period + period ≥
                // rel, so the first such is k = ceil(rel / period) − 1 ≥ 1.
                let loops = rel.div_ceil(period) - 1;
                self.base_ms = self.base_ms.saturating_add(loops.saturating_mul(period));
                let rel = rel.saturating_sub(loops.saturating_mul(period));
                self.index = ops.partition_point(|&t| t < rel);
            }
            // `rel` ≤ the last element (= period), so the search found an index in range;
            // stay total anyway.
            if self.index >= ops.len() {
                self.index = ops.len() - 1;
            }
        }
        let at_ms = self.base_ms.saturating_add(ops[self.index]);
        self.index += 1;
        if self.index == ops.len() {
            self.index = 0;
            self.base_ms = self.base_ms.saturating_add(period);
        }
        at_ms.saturating_mul(NS_PER_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;

    fn trace(text: &str) -> MahimahiTrace {
        MahimahiTrace::parse(text).unwrap()
    }

    /// The simple, obviously correct cursor: scan every opportunity in order.
    struct NaiveCursor {
        ops: Vec<u64>,
        consumed: u64,
    }

    impl NaiveCursor {
        fn next(&mut self, not_before_ns: u64) -> u64 {
            let period = *self.ops.last().unwrap();
            let n = self.ops.len() as u64;
            loop {
                let k = self.consumed;
                self.consumed += 1;
                let at = ((k / n) * period + self.ops[(k % n) as usize]) * MS;
                if at >= not_before_ns {
                    return at;
                }
            }
        }
    }

    #[test]
    fn parses_a_small_trace() {
        let t = trace("1\n1\n3\n5\n");
        assert_eq!(t.opportunities_ms(), &[1, 1, 3, 5]);
        assert_eq!(t.period_ms(), 5);
        // 4 packets · 12000 bits per 5 ms = 9.6 Mbps.
        assert_eq!(t.mean_rate_bps(), 9_600_000);
    }

    #[test]
    fn tolerates_trailing_blank_lines_spaces_and_crlf() {
        assert_eq!(trace("1\r\n2\r\n\r\n").opportunities_ms(), &[1, 2]);
        assert_eq!(trace(" 1 \n2").opportunities_ms(), &[1, 2]);
        assert_eq!(trace("0\n2\n\n\n  \n").opportunities_ms(), &[0, 2]);
    }

    #[test]
    fn cursor_walks_in_order_and_loops() {
        let t = trace("1\n1\n3\n5\n");
        let mut c = t.cursor();
        let got: Vec<u64> = (0..10).map(|_| c.next_opportunity_ns(0)).collect();
        let want_ms = [1, 1, 3, 5, 6, 6, 8, 10, 11, 11];
        assert_eq!(got, want_ms.iter().map(|ms| ms * MS).collect::<Vec<_>>());
    }

    #[test]
    fn cursor_with_zero_first_timestamp_repeats_the_boundary_like_mahimahi() {
        // Loop n holds n·4 + {0, 2, 4}: the boundary instant gets two opportunities.
        let mut c = trace("0\n2\n4\n").cursor();
        let got: Vec<u64> = (0..7).map(|_| c.next_opportunity_ns(0) / MS).collect();
        assert_eq!(got, [0, 2, 4, 4, 6, 8, 8]);
    }

    #[test]
    fn cursor_repeated_timestamps_are_several_opportunities() {
        let mut c = trace("2\n2\n2\n10\n").cursor();
        assert_eq!(c.next_opportunity_ns(0), 2 * MS);
        assert_eq!(c.next_opportunity_ns(2 * MS), 2 * MS);
        assert_eq!(c.next_opportunity_ns(2 * MS), 2 * MS);
        assert_eq!(c.next_opportunity_ns(2 * MS), 10 * MS);
    }

    #[test]
    fn cursor_consumes_and_skips_past_opportunities() {
        let mut c = trace("1\n2\n3\n4\n").cursor();
        // Opportunities at 1 and 2 ms pass unused.
        assert_eq!(c.next_opportunity_ns(2 * MS + 1), 3 * MS);
        // 3 ms is consumed: the same request now gets 4 ms.
        assert_eq!(c.next_opportunity_ns(2 * MS + 1), 4 * MS);
        // Exactly on an opportunity counts as "at or after".
        assert_eq!(c.next_opportunity_ns(6 * MS), 6 * MS);
        // A sub-millisecond time rounds up to the next opportunity.
        assert_eq!(c.next_opportunity_ns(6 * MS + 1), 7 * MS);
        assert_eq!(c.next_opportunity_ns(0), 8 * MS);
    }

    #[test]
    fn cursor_jumps_over_many_loops() {
        let mut c = trace("1\n3\n10\n").cursor();
        // Loop 1000 starts at 10000 ms: opportunities 10001, 10003, 10010.
        assert_eq!(c.next_opportunity_ns(10_002 * MS), 10_003 * MS);
        assert_eq!(c.next_opportunity_ns(0), 10_010 * MS);
        assert_eq!(c.next_opportunity_ns(0), 10_011 * MS);
        // The target is exactly the end of a loop whose next loop starts later.
        let mut c = trace("5\n10\n").cursor();
        assert_eq!(c.next_opportunity_ns(30 * MS), 30 * MS);
        assert_eq!(c.next_opportunity_ns(30 * MS), 35 * MS);
    }

    #[test]
    fn cursor_saturates_instead_of_overflowing() {
        let mut c = trace("1\n7\n").cursor();
        assert_eq!(c.next_opportunity_ns(u64::MAX), u64::MAX);
        assert_eq!(c.next_opportunity_ns(u64::MAX), u64::MAX);
        let mut c = trace(&format!("{MAX_TIMESTAMP_MS}\n")).cursor();
        assert_eq!(c.next_opportunity_ns(0), MAX_TIMESTAMP_MS * MS);
        assert_eq!(c.next_opportunity_ns(0), u64::MAX);
    }

    #[test]
    fn cursor_matches_the_naive_scan() {
        // A deterministic pseudo-random walk of request times over a few traces.
        for text in ["1\n1\n3\n5\n", "0\n0\n2\n4\n4\n", "7\n", "0\n1\n", "3\n3\n3\n9\n20\n"] {
            let t = trace(text);
            let mut fast = t.cursor();
            let mut naive = NaiveCursor { ops: t.opportunities_ms().to_vec(), consumed: 0 };
            let mut now = 0u64;
            let mut x = 0x2545_f491_4f6c_dd1du64;
            for _ in 0..5000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                now += match x % 4 {
                    0 => 0,
                    1 => x % MS,
                    2 => x % (10 * MS),
                    _ => x % (100 * MS),
                };
                let a = fast.next_opportunity_ns(now);
                let b = naive.next(now);
                assert_eq!(a, b, "trace {text:?}, now {now}");
                assert!(a >= now);
                now = now.max(a);
            }
        }
    }

    fn parse_err(text: &str) -> TraceError {
        MahimahiTrace::parse(text).unwrap_err()
    }

    #[test]
    fn non_number_is_an_error_with_its_line() {
        let err = parse_err("1\n2\nabc\n4\n");
        assert_eq!(err.line(), Some(3));
        assert!(matches!(err, TraceError::NotANumber { .. }));
        let msg = err.to_string();
        assert!(msg.contains("line 3") && msg.contains("\"abc\"") && msg.contains("integer"), "{msg}");
        for bad in ["-1\n", "1.5\n", "1 2\n", "0x10\n", "+3\n", "١\n"] {
            assert_eq!(parse_err(bad).line(), Some(1), "{bad:?}");
        }
    }

    #[test]
    fn decreasing_is_an_error_with_its_line() {
        let err = parse_err("1\n5\n5\n4\n9\n");
        assert_eq!(err.line(), Some(4));
        let msg = err.to_string();
        assert!(msg.contains("line 4") && msg.contains("at least 5") && msg.contains("got 4"), "{msg}");
    }

    #[test]
    fn empty_traces_are_errors() {
        for text in ["", "\n", "\n\n  \n"] {
            let err = parse_err(text);
            assert!(matches!(err, TraceError::Empty), "{text:?}: {err:?}");
            assert!(err.to_string().contains("empty"), "{err}");
        }
    }

    #[test]
    fn zero_period_is_an_error() {
        let err = parse_err("0\n0\n0\n");
        assert!(matches!(err, TraceError::ZeroPeriod { line: 3 }), "{err:?}");
    }

    #[test]
    fn blank_line_in_the_middle_is_an_error() {
        let err = parse_err("1\n\n2\n");
        assert!(matches!(err, TraceError::BlankLine { line: 2 }), "{err:?}");
    }

    #[test]
    fn too_large_timestamps_are_errors() {
        let err = parse_err(&format!("1\n{}\n", MAX_TIMESTAMP_MS + 1));
        assert!(matches!(err, TraceError::TooLarge { line: 2, .. }), "{err:?}");
        let err = parse_err("1\n99999999999999999999999999\n");
        assert!(matches!(err, TraceError::TooLarge { line: 2, .. }), "{err:?}");
    }

    #[test]
    fn from_file_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("triage-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.trace");
        std::fs::write(&path, "1\nx\n").unwrap();
        let err = MahimahiTrace::from_file(&path).unwrap_err();
        assert_eq!(err.line(), Some(2));
        let msg = err.to_string();
        assert!(msg.contains("bad.trace") && msg.contains("line 2"), "{msg}");

        let missing = dir.join("missing.trace");
        let msg = MahimahiTrace::from_file(&missing).unwrap_err().to_string();
        assert!(msg.contains("missing.trace"), "{msg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn shared_traces_dir() -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/traces");
        assert!(
            dir.is_dir(),
            "the shared data folder is missing: expected Mahimahi traces in {} \
             (shared/ must sit beside the project checkout)",
            dir.display()
        );
        dir
    }

    #[test]
    fn real_traces_parse_and_match_the_readme_rates() {
        let dir = shared_traces_dir();
        // Mean downlink rates from shared/data/README.md.
        for (name, readme_mbps) in
            [("TMobile-LTE-short.down", 16.7), ("Verizon-LTE-short.down", 5.0), ("ATT-LTE-driving-2016.down", 4.6)]
        {
            let t = MahimahiTrace::from_file(&dir.join(name)).unwrap();
            let mbps = t.mean_rate_bps() as f64 / 1e6;
            assert!((mbps - readme_mbps).abs() / readme_mbps <= 0.03, "{name}: {mbps} Mbps, README says {readme_mbps}");
        }
        for name in ["TMobile-LTE-short.up", "Verizon-LTE-short.up", "ATT-LTE-driving-2016.up"] {
            let t = MahimahiTrace::from_file(&dir.join(name)).unwrap();
            assert!(t.mean_rate_bps() > 0, "{name}");
        }
    }

    #[test]
    fn real_trace_cursor_delivers_the_mean_rate() {
        let dir = shared_traces_dir();
        let t = MahimahiTrace::from_file(&dir.join("Verizon-LTE-short.down")).unwrap();
        let mut c = t.cursor();
        // Take every opportunity for two full loops: exactly 2n of them, ending at 2·period.
        let n = t.opportunities_ms().len();
        let mut last = 0;
        for _ in 0..2 * n {
            let at = c.next_opportunity_ns(last);
            assert!(at >= last);
            last = at;
        }
        assert_eq!(last, 2 * t.period_ms() * MS);
    }
}
