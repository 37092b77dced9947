//! A CPU cache hint shared by the batched hot paths (classifier probes, cache buckets,
//! rule counters, and the benchmark's frames).

/// Hints the CPU to fetch the cache line at `p` into L1 (nothing on other
/// architectures). It is only a hint: nothing is read that the program can see.
#[inline(always)]
pub fn prefetch<P>(p: *const P) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no visible effect, so any address (even a
    // null or dangling one) is fine.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
