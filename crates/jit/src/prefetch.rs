//! Software prefetch: asking for cache lines before a loop reads them. The one routine that
//! issues the prefetch instructions, [`lines`], serves the pooling's runs of `f` (from Rust)
//! and row kernels (from machine code, through [`crate::callees::prefetch_lines`]).
//!
//! A prefetch is a hint: it never faults, whatever the address, and changes nothing the program
//! reads, so addresses past a buffer's end (the last rows' lookahead) are harmless.
//!
//! Kernels call it from inside their row loops, so it is written to clobber no register (not
//! even its arguments): Cranelift then declares the call `preserve_all` and keeps every value of
//! the loop in its register across it. An ordinary C function would clobber the nine
//! caller-saved integer registers and every vector register, and W3's loop spilled its
//! pointers to the stack around the call (measured: the prefetch gained half as much).

// A naked assembly routine and the call into it; the blocks say why they are sound.
#![allow(unsafe_code)]

/// Size of a cache line on the machines this targets.
pub(crate) const LINE: usize = 64;

/// Asks for every cache line whose first byte lies in `[from & !63, to & !63)`, without waiting
/// for them. Consecutive ranges (`a..b`, then `b..c`) ask for each line once.
pub(crate) fn lines(from: usize, to: usize) {
    lines2(from, to, 0);
}

/// Asks for the cache lines holding `values` (every byte of it) without waiting for them: for
/// Rust code outside this crate (which forbids `unsafe`) that reads scattered rows of a large
/// table, e.g. the embedding-bag update of `ragtime::updates`, a few rows ahead of using them.
pub fn slice<T>(values: &[T]) {
    bytes(values.as_ptr().addr(), std::mem::size_of_val(values));
}

/// Asks for the cache lines holding the `len` bytes at address `from` (none when `len` is 0): the
/// [`ragtime_fused::PrefetchBytes`] the JIT gives `GatherReduce`.
pub(crate) fn bytes(from: usize, len: usize) {
    if len > 0 {
        // Up to the line holding the last byte.
        lines(from, from.saturating_add(len - 1).saturating_add(LINE));
    }
}

/// `op` prefetching its table rows, when it is a `GatherReduce` that does not yet.
pub(crate) fn gather_reduce_with_prefetch(op: &ragtime_graph::OpRef) -> Option<ragtime_fused::GatherReduce> {
    let bag = op.as_any().downcast_ref::<ragtime_fused::GatherReduce>().filter(|b| !b.has_prefetch())?;
    Some(bag.with_prefetch(bytes))
}

/// [`lines`] for two streams at once: the lines of `[from, to)` and the same range moved by
/// `delta` bytes (wrapping: a second buffer read at the same elements), in one loop; a `delta`
/// of 0 means one stream.
pub(crate) fn lines2(from: usize, to: usize, delta: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let range = [from, to, delta];
        // SAFETY: `prefetch_range` reads the three words at its argument (`range`, alive for the
        // call) and its own stack slots, writes only those slots, and restores every register it
        // changes (see its comment); it only prefetches.
        unsafe { prefetch_range(range.as_ptr()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (from, to, delta);
}

/// [`lines2`] as machine code kernels call with the `preserve_all` convention: its one argument,
/// in `rdi`, points to `[from, to, delta]`; every register is as it was on return (the flags
/// excepted, which no caller keeps across a call). Prefetches never fault, so any three
/// integers are a valid range.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(crate) unsafe extern "C" fn prefetch_range(range: *const usize) {
    std::arch::naked_asm!(
        "push rsi",
        "push rdx",
        "push rcx",
        "mov rsi, [rdi + 8]",
        "mov rdx, [rdi + 16]",
        "mov rcx, [rdi]",
        "and rcx, -64",
        "and rsi, -64",
        "test rdx, rdx",
        "jz 5f",
        "jmp 3f",
        // Two streams.
        "2:",
        "prefetcht0 [rcx]",
        "prefetcht0 [rcx + rdx]",
        "add rcx, 64",
        "3:",
        "cmp rcx, rsi",
        "jb 2b",
        "jmp 6f",
        // One stream (`delta` 0).
        "4:",
        "prefetcht0 [rcx]",
        "add rcx, 64",
        "5:",
        "cmp rcx, rsi",
        "jb 4b",
        "6:",
        "pop rcx",
        "pop rdx",
        "pop rsi",
        "ret",
    )
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn any_addresses_are_prefetched_without_a_fault() {
        let data = vec![1u8; 10_000];
        let base = data.as_ptr().addr();
        lines(base, base + data.len());
        // Addresses no one owns: the null page, the top of the address space, an empty or
        // reversed range, a second stream anywhere.
        lines(0, 4096);
        lines(usize::MAX - 4096, usize::MAX);
        lines(base + 100, base + 100);
        lines(base + 5000, base);
        lines2(base, base + 5000, 5000);
        lines2(0, 4096, usize::MAX - 8192);
        bytes(0, 4096);
        bytes(usize::MAX - 10, 100);
        bytes(base, 0);
        slice(&data[..0]);
        slice(&data);
        gather_reduce_lines_of(&data);
        assert!(data.iter().all(|&x| x == 1), "a prefetch changes nothing the program reads");
    }

    /// What `GatherReduce` asks for: a row at any offset (not aligned to a line).
    fn gather_reduce_lines_of(data: &[u8]) {
        for at in [0, 1, 63, 64, 100, 4000] {
            bytes(data.as_ptr().addr() + at, 128);
        }
    }

    #[test]
    fn the_routine_restores_every_register_it_uses() {
        // Kernels call it as `preserve_all`: after the call they still read all of these.
        let range = [0x1234_5678usize, 0x1234_9999, 0x40_0000];
        let (rdi, rsi, rdx, rcx): (usize, usize, usize, usize);
        // SAFETY: the routine reads `range` (alive) and prefetches; the asm block may push (no
        // `nostack`), so the stack is aligned and the red zone unused.
        unsafe {
            std::arch::asm!(
                "call {routine}",
                routine = sym prefetch_range,
                inout("rdi") range.as_ptr().addr() => rdi,
                inout("rsi") 11usize => rsi,
                inout("rdx") 22usize => rdx,
                inout("rcx") 33usize => rcx,
                clobber_abi("C"),
            );
        }
        assert_eq!((rdi, rsi, rdx, rcx), (range.as_ptr().addr(), 11, 22, 33), "rdi, rsi, rdx, rcx after the call");
    }
}
