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
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetch_lines` reads and writes no memory but its own two stack slots, and
    // restores every register it changes (see its comment); it only prefetches.
    unsafe {
        prefetch_lines(from, to)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (from, to);
}

/// [`lines`] as machine code kernels call with the `preserve_all` convention: the arguments in
/// `rdi` and `rsi` (the C convention's first two), and every register as it was on return (the
/// flags excepted, which no caller keeps across a call). Prefetches never fault, so any two
/// integers are valid arguments.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(crate) unsafe extern "C" fn prefetch_lines(from: usize, to: usize) {
    std::arch::naked_asm!(
        "push rdi",
        "push rsi",
        "and rdi, -64",
        "and rsi, -64",
        "jmp 3f",
        "2:",
        "prefetcht0 [rdi]",
        "add rdi, 64",
        "3:",
        "cmp rdi, rsi",
        "jb 2b",
        "pop rsi",
        "pop rdi",
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
        // reversed range.
        lines(0, 4096);
        lines(usize::MAX - 4096, usize::MAX);
        lines(base + 100, base + 100);
        lines(base + 5000, base);
        assert!(data.iter().all(|&x| x == 1), "a prefetch changes nothing the program reads");
    }

    #[test]
    fn the_routine_restores_its_argument_registers() {
        // Kernels call it as `preserve_all`: after the call they still read `rdi` and `rsi`.
        let (from, to): (usize, usize);
        // SAFETY: the routine only prefetches (any addresses) and restores what it changes; the
        // asm block may push (no `nostack`), so the stack is aligned and the red zone unused.
        unsafe {
            std::arch::asm!(
                "call {routine}",
                routine = sym prefetch_lines,
                inout("rdi") 0x1234_5678usize => from,
                inout("rsi") 0x1234_9999usize => to,
                clobber_abi("C"),
            );
        }
        assert_eq!((from, to), (0x1234_5678, 0x1234_9999), "rdi and rsi after the call");
    }
}
