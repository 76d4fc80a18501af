//! Cache hints shared by the baker's and the runtime's hot loops.

/// Asks the CPU to start loading the cache line holding the byte at `p`:
/// a hint, which reads and writes nothing, whatever the address.
#[inline(always)]
#[allow(
    clippy::not_unsafe_ptr_arg_deref,
    reason = "a prefetch never dereferences its address (see the SAFETY note)"
)]
pub fn prefetch_line(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has
        // (it is in the target's baseline). A prefetch is a hint: it
        // never faults, reads nothing into the program and writes
        // nothing, whatever the address (the callers pass bytes of
        // objects they borrowed)
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch_line`] for the line holding the start of `v`.
#[inline(always)]
pub fn prefetch<T>(v: &T) {
    prefetch_line((v as *const T).cast::<i8>());
}
