//! Asking the CPU for a cache line before it is read: passes that hop
//! from one heap allocation to the next (a dictionary's terms, the
//! sessions' search documents) otherwise wait on a miss at every hop.

/// Asks for the cache line of `items[i]`. Only a hint: an `i` past the end
/// reads nothing.
#[inline(always)]
pub fn prefetch<T>(items: &[T], i: usize) {
    prefetch_address(items.as_ptr().wrapping_add(i) as usize);
}

/// Asks for the cache line `offset` bytes into `x`.
#[inline(always)]
pub fn prefetch_in<T: ?Sized>(x: &T, offset: usize) {
    prefetch_address((x as *const T).cast::<u8>() as usize + offset);
}

#[inline(always)]
fn prefetch_address(address: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
