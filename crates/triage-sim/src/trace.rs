//! stub (replaced by the full module)
#![allow(missing_docs)]
#[derive(Debug, Clone)]
pub struct MahimahiTrace { ms: Vec<u64> }
#[derive(Debug, thiserror::Error)]
#[error("trace error")]
pub struct TraceError;
impl MahimahiTrace {
    pub fn from_file(p: &std::path::Path) -> Result<Self, TraceError> { let t = std::fs::read_to_string(p).map_err(|_| TraceError)?; Ok(Self { ms: t.lines().filter_map(|l| l.trim().parse().ok()).collect() }) }
}
#[derive(Debug)]
pub struct TraceCursor { trace: MahimahiTrace, i: usize, base: u64 }
impl TraceCursor {
    pub fn new(trace: MahimahiTrace) -> Self { Self { trace, i: 0, base: 0 } }
    pub fn next_opportunity_ns(&mut self, not_before_ns: u64) -> u64 { loop { if self.i >= self.trace.ms.len() { self.i = 0; self.base += *self.trace.ms.last().unwrap(); } let t = (self.base + self.trace.ms[self.i]) * 1_000_000; self.i += 1; if t >= not_before_ns { return t; } } }
}
