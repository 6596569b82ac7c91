//! Allocator tuning for processes that call compiled functions in a loop: glibc returns every
//! block over 32 MB to the kernel when it is freed, so each call's large outputs and
//! intermediates are fresh pages the kernel must fault in and zero (tens of milliseconds per
//! call on the benchmark workloads). [`retain_freed_memory`] asks glibc to keep freed memory
//! for reuse instead. It changes process-wide behaviour, so the library never calls it on its
//! own: applications (and `ragtime bench`) opt in. [`release_freed_memory`] gives that memory back
//! when a process moves on to a different working set (the bench, between workloads).
#![allow(unsafe_code)]

/// Makes glibc's `malloc` serve every block from its heap (no `mmap` per large block) and never
/// trim freed memory back to the kernel, so memory freed by one call is reused by the next
/// without page faults. The process keeps its peak memory. Returns whether the setting was
/// applied (only on glibc targets).
pub fn retain_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's `mallopt` parameters (malloc.h).
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_MAX: i32 = -4;
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: `mallopt` is glibc's documented, thread-safe tuning call; these parameters
        // only change when the allocator maps and trims memory, never the validity of blocks
        // already handed out.
        let (a, b) = unsafe { (mallopt(M_MMAP_MAX, 0), mallopt(M_TRIM_THRESHOLD, i32::MAX)) };
        a == 1 && b == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Gives back the memory kept for reuse: drops the recycled buffers (`ragtime_core::pool`) and
/// asks glibc to return its free memory to the kernel (`malloc_trim`), so a process that opted in
/// to [`retain_freed_memory`] and moves on to a different working set does not keep the old one's
/// high-water mark. The next calls fault their pages in again. Returns whether glibc gave memory
/// back (always `false` off glibc, where only the pool is emptied).
pub fn release_freed_memory() -> bool {
    ragtime_core::pool::release();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: `malloc_trim` is glibc's documented, thread-safe call; it only returns free
        // memory (whole free pages and the heap's top) to the kernel, never a block in use.
        unsafe { malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
