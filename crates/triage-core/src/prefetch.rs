//! Cache prefetch hints for the simulator's packet path.
//!
//! With many flows the state one packet-hop touches is out of the core's caches. A queue
//! asks for the box of the packet it will send next while the current one serializes
//! (`triage_sim`'s backlog): behind a long queue that box has left the cache. Asking a hop
//! ahead for the next link and the receiving connection too (`Link::prefetch`,
//! `Connection::prefetch`, until 2026-11-29) no longer paid once the per-hop state had
//! shrunk: the 512-flow cells ran 4-6% faster at 1 and 10 Gbps without those hints and
//! the same at 100 Mbps (docs/performance-history.md, fifteenth round).
//!
//! A prefetch is a hint: it reads nothing the program sees, never faults (any address,
//! even an unmapped one, is allowed), and changes no result, only when lines arrive. On
//! targets other than x86_64 the functions do nothing.

/// Cache line size assumed for the hints (every x86_64 and most AArch64 cores).
pub const LINE_BYTES: usize = 64;

/// Asks for the cache line holding `p`.
#[inline(always)]
pub fn line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is a hint that reads nothing into the program and cannot
    // fault, whatever the address (Intel SDM, PREFETCHh: "a prefetch ... does not cause
    // an exception"); SSE is part of the x86_64 baseline.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks for the lines of the first `bytes` bytes of `*v` (at most the value's size).
#[inline(always)]
pub fn value<T: ?Sized>(v: &T, bytes: usize) {
    range((v as *const T).cast::<u8>(), bytes.min(std::mem::size_of_val(v)));
}

/// Asks for the lines of the `n` bytes from `p`.
#[inline(always)]
pub fn range(p: *const u8, n: usize) {
    let mut off = 0;
    while off < n {
        line(p.wrapping_add(off));
        off += LINE_BYTES;
    }
    // The last byte's line, when the bytes straddle one more line than n / 64.
    if n > 0 {
        line(p.wrapping_add(n - 1));
    }
}
