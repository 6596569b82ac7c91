//! Bulk math on 256-bit vectors: `vmath`'s algorithms evaluated eight float32 lanes at a time
//! with AVX2 and FMA, in precompiled code that kernels call on a block's scratch buffer; on CPUs
//! with AVX-512 the sixteen-lane variants of `bulk_avx512.rs` are handed out instead.
//!
//! Cranelift's x64 backend has only 128-bit vectors. A multi-pass row kernel that computes an
//! `exp` flat over a block (softmax), or a map kernel that needs `exp`, `tanh` or `sigmoid`,
//! writes the argument into a scratch buffer and calls one of these functions on it instead of
//! running the 128-bit code itself: half the instructions per value. Both run the same algorithm
//! through `vmath::Arith` (one IEEE operation or exact bit operation per step, in the same
//! order), so every lane gets the same bits as the IR path, whichever the CPU (`tests/bulk.rs`
//! checks each function against the JIT's own).

// Calling precompiled AVX2 code through raw pointers; each block says why it is sound.
#![allow(unsafe_code)]

use crate::bulk_abi::{BinaryFn, InPlaceFn};

/// The in-place float32 `op` for this CPU, bit for bit what `vmath` emits, for the functions
/// written against `Arith` (`exp`, `tanh`, `sigmoid`); `None` for the others, or without AVX2 and FMA
/// (kernels then keep the 128-bit IR path). AVX-512's variant where the CPU has it.
pub(crate) fn unary_f32(op: UnaryMath) -> Option<InPlaceFn> {
    unary_f32_on(Isa::host(), op)
}

/// The vector instruction sets the bulk functions come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// 256-bit vectors: AVX2 and FMA.
    Avx2,
    /// 512-bit vectors: AVX-512 F, DQ, VL and BW (and AVX2 and FMA).
    Avx512,
}

impl Isa {
    /// The widest this CPU runs (AVX-512, else AVX2; `supported` says whether AVX2 runs).
    pub fn host() -> Isa {
        if Isa::Avx512.runs() {
            Isa::Avx512
        } else {
            Isa::Avx2
        }
    }

    /// Whether this CPU runs the functions of this instruction set.
    pub fn runs(self) -> bool {
        match self {
            Isa::Avx2 => supported(),
            Isa::Avx512 => avx512::supported(),
        }
    }
}

#[cfg(target_arch = "x86_64")]
use crate::bulk_avx512 as avx512;

/// Without x86-64 there is no AVX-512.
#[cfg(not(target_arch = "x86_64"))]
mod avx512 {
    pub(crate) fn supported() -> bool {
        false
    }
    pub(crate) fn unary_f32(_: crate::vmath::UnaryMath) -> Option<crate::bulk_abi::InPlaceFn> {
        None
    }
    pub(crate) fn exp_sub_f32() -> Option<crate::bulk_abi::BinaryFn> {
        None
    }
    pub(crate) fn div_f32() -> Option<crate::bulk_abi::BinaryFn> {
        None
    }
}

/// The in-place float32 `op` of `isa`'s functions, when this CPU runs them.
fn unary_f32_on(isa: Isa, op: UnaryMath) -> Option<InPlaceFn> {
    match isa {
        Isa::Avx2 => imp::unary_f32(op),
        Isa::Avx512 => avx512::unary_f32(op),
    }
}

use crate::vmath::UnaryMath;

/// True when this CPU runs the bulk functions (AVX2 and FMA, detected at run time).
pub(crate) fn supported() -> bool {
    imp::supported()
}

/// The float32 `exp(a - b)` over buffers for this CPU (the numerically stable exponential of
/// softmax and logsumexp, `exp(x - max)`, without a pass storing the difference), bit for bit
/// `vmath`'s `exp` of the IR subtraction. `None` without AVX2 and FMA.
pub(crate) fn exp_sub_f32() -> Option<BinaryFn> {
    exp_sub_f32_on(Isa::host())
}

/// The float32 `exp(a - b)` of `isa`'s functions, when this CPU runs them.
fn exp_sub_f32_on(isa: Isa) -> Option<BinaryFn> {
    match isa {
        Isa::Avx2 => imp::exp_sub_f32(),
        Isa::Avx512 => avx512::exp_sub_f32(),
    }
}

/// The float32 `a / b` over buffers for this CPU: the same IEEE division as the IR's, on 256- or
/// 512-bit vectors (Zen 4 divides 8 floats in the time of 4 with 128-bit ones). `None` without
/// AVX2 and FMA.
pub(crate) fn div_f32() -> Option<BinaryFn> {
    div_f32_on(Isa::host())
}

/// The float32 `a / b` of `isa`'s functions, when this CPU runs them.
fn div_f32_on(isa: Isa) -> Option<BinaryFn> {
    match isa {
        Isa::Avx2 => imp::div_f32(),
        Isa::Avx512 => avx512::div_f32(),
    }
}

/// `out[i] = a[i] / b[i]` on the bulk path with `isa`'s function; `false` (and `out` unchanged)
/// when this CPU does not run it.
///
/// # Panics
/// If the three slices differ in length.
pub fn div_f32_into_on(isa: Isa, a: &[f32], b: &[f32], out: &mut [f32]) -> bool {
    binary_into("div_f32_into", div_f32_on(isa), a, b, out)
}

/// `f(a, b, out, n)` over slices of one length (`name` says which in the panic); `false` (and `out`
/// unchanged) without `f`.
fn binary_into(name: &str, f: Option<BinaryFn>, a: &[f32], b: &[f32], out: &mut [f32]) -> bool {
    assert!(a.len() == out.len() && b.len() == out.len(), "{name}: slices of different lengths");
    match f {
        Some(f) => {
            // SAFETY: every `BinaryFn` this module hands out comes from an `_on(isa)` lookup that
            // gives it only on CPUs with its instruction set; the slices hold `out.len()` values
            // each.
            unsafe { f(a.as_ptr(), b.as_ptr(), out.as_mut_ptr(), out.len()) };
            true
        }
        None => false,
    }
}

/// `exp` of every value of `data`, in place, on the bulk path; `false` (and `data` unchanged)
/// when this CPU has no such path. The results are those of the JIT's float32 `exp`.
pub fn exp_f32_in_place(data: &mut [f32]) -> bool {
    unary_f32_in_place(UnaryMath::Exp, data)
}

/// `op` of every value of `data`, in place, on the bulk path; `false` (and `data` unchanged)
/// when this CPU or `op` has no such path. The results are those of the JIT's float32 `op`.
pub fn unary_f32_in_place(op: UnaryMath, data: &mut [f32]) -> bool {
    unary_f32_in_place_on(Isa::host(), op, data)
}

/// As [`unary_f32_in_place`], with `isa`'s function (`false` when this CPU does not run it):
/// tests compare every instruction set's results.
pub fn unary_f32_in_place_on(isa: Isa, op: UnaryMath, data: &mut [f32]) -> bool {
    match unary_f32_on(isa, op) {
        Some(f) => {
            // SAFETY: `f` comes from `unary_f32_on`, which hands it out only on CPUs with its
            // instruction set; `data` is valid for `len` reads and writes.
            unsafe { f(data.as_mut_ptr(), data.len()) };
            true
        }
        None => false,
    }
}

/// `out[i] = exp(a[i] - b[i])` on the bulk path; `false` (and `out` unchanged) when this CPU has
/// no such path. The results are those of the JIT's float32 `exp` of the difference.
///
/// # Panics
/// If the three slices differ in length.
pub fn exp_sub_f32_into(a: &[f32], b: &[f32], out: &mut [f32]) -> bool {
    exp_sub_f32_into_on(Isa::host(), a, b, out)
}

/// As [`exp_sub_f32_into`], with `isa`'s function (`false` when this CPU does not run it).
///
/// # Panics
/// If the three slices differ in length.
pub fn exp_sub_f32_into_on(isa: Isa, a: &[f32], b: &[f32], out: &mut [f32]) -> bool {
    binary_into("exp_sub_f32_into", exp_sub_f32_on(isa), a, b, out)
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::{
        __m256, _mm256_add_epi32, _mm256_add_ps, _mm256_and_ps, _mm256_andnot_ps, _mm256_blendv_ps,
        _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_div_ps,
        _mm256_fmadd_ps, _mm256_fnmadd_ps, _mm256_loadu_ps, _mm256_max_ps, _mm256_min_ps, _mm256_mul_ps, _mm256_or_ps,
        _mm256_round_ps, _mm256_set1_epi32, _mm256_set1_ps, _mm256_sll_epi32, _mm256_srl_epi32, _mm256_storeu_ps,
        _mm256_sub_epi32, _mm256_sub_ps, _mm256_xor_ps, _mm256_xor_si256, _mm_cvtsi32_si128, _CMP_EQ_OQ, _CMP_LT_OQ,
        _CMP_NEQ_UQ, _CMP_NLT_UQ, _CMP_ORD_Q, _MM_FROUND_NO_EXC, _MM_FROUND_TO_ZERO,
    };

    use crate::bulk_abi::{BinaryFn, InPlaceFn};
    use crate::vmath::UnaryMath;
    use ragtime_vmath::{explog, hyper, Arith, Float};

    pub(super) fn supported() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }

    crate::bulk_abi::bulk_entries!("avx2,fma", map_avx2);

    /// `out[i] = f(ins[0][i], ...)` for `i < n`, eight values at a time; the last few values go
    /// through padded copies, so nothing past `n` is read or written. An output may be one of
    /// the inputs (each vector is read before it is written).
    ///
    /// Inlined into the `#[target_feature]` entries (which define the closures), so the whole
    /// loop, closure and `vmath` algorithm included, is compiled with AVX2 and FMA.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; each input is valid for `n` reads and `out` for `n` writes.
    #[inline(always)]
    unsafe fn map_avx2<const N: usize>(
        ins: [*const f32; N],
        out: *mut f32,
        n: usize,
        f: impl Fn(&mut Avx2F32, [__m256; N]) -> __m256,
    ) {
        // SAFETY: the caller guarantees AVX2 and FMA.
        let mut m = unsafe { Avx2F32::new() };
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: `i + 8 <= n`, so the eight values are in bounds of every buffer.
            unsafe {
                let x = ins.map(|p| _mm256_loadu_ps(p.add(i)));
                _mm256_storeu_ps(out.add(i), f(&mut m, x));
            }
            i += 8;
        }
        if i < n {
            let rest = n - i;
            let mut lanes = [[0f32; 8]; N];
            // SAFETY: `[i, n)` is in bounds of every buffer and `rest` < 8.
            unsafe {
                for (lane, p) in lanes.iter_mut().zip(ins) {
                    std::ptr::copy_nonoverlapping(p.add(i), lane.as_mut_ptr(), rest);
                }
                let x = lanes.map(|lane| _mm256_loadu_ps(lane.as_ptr()));
                let mut y = [0f32; 8];
                _mm256_storeu_ps(y.as_mut_ptr(), f(&mut m, x));
                std::ptr::copy_nonoverlapping(y.as_ptr(), out.add(i), rest);
            }
        }
    }

    /// [`Arith`] on eight float32 lanes of a `__m256`; integers and masks are the same bits
    /// reinterpreted, as Cranelift's bitcasts are.
    #[derive(Clone, Copy)]
    struct Avx2F32 {
        _private: (),
    }

    impl Avx2F32 {
        /// # Safety
        /// The CPU has AVX2 and FMA: every method runs those instructions.
        unsafe fn new() -> Self {
            Avx2F32 { _private: () }
        }
    }

    // Every block below: an `Avx2F32` exists only where `Avx2F32::new`'s contract holds, so the
    // AVX2 / FMA instructions are available.
    impl Arith for Avx2F32 {
        type V = __m256;
        #[inline(always)]
        fn float(&self) -> Float {
            Float::F32
        }
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_set1_ps(v as f32) }
        }
        #[inline(always)]
        fn ic(&mut self, v: i64) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_castsi256_ps(_mm256_set1_epi32(v as i32)) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn div(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_div_ps(a, b) }
        }
        #[inline(always)]
        fn abs(&mut self, a: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), a) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m256, b: __m256, c: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn fnma(&mut self, a: __m256, b: __m256, c: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_fnmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn neg(&mut self, a: __m256) -> __m256 {
            // The sign bit flipped, NaNs included, as Cranelift's `fneg`.
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_xor_ps(a, _mm256_set1_ps(-0.0)) }
        }
        #[inline(always)]
        fn lt(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
        }
        #[inline(always)]
        fn ordered(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_cmp_ps::<_CMP_ORD_Q>(a, b) }
        }
        #[inline(always)]
        fn sel(&mut self, mask: __m256, a: __m256, b: __m256) -> __m256 {
            // Masks are whole lanes, so blending by the sign bit is selecting by the mask.
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_blendv_ps(b, a, mask) }
        }
        #[inline(always)]
        fn min_pick(&mut self, a: __m256, b: __m256) -> __m256 {
            // `minps` is `a < b ? a : b`, the trait's definition.
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_min_ps(a, b) }
        }
        #[inline(always)]
        fn max_pick(&mut self, a: __m256, b: __m256) -> __m256 {
            // `maxps` is `a > b ? a : b`, the trait's definition.
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_max_ps(a, b) }
        }
        #[inline(always)]
        fn keep(&mut self, mask: __m256, a: __m256) -> __m256 {
            // Masks are whole lanes: one `and`.
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_and_ps(mask, a) }
        }
        #[inline(always)]
        fn mask_or(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_or_ps(a, b) }
        }
        #[inline(always)]
        fn bits(&mut self, x: __m256) -> __m256 {
            x
        }
        #[inline(always)]
        fn float_of(&mut self, i: __m256) -> __m256 {
            i
        }
        #[inline(always)]
        fn isub(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b))) }
        }
        #[inline(always)]
        fn trunc(&mut self, a: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_round_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a) }
        }
        #[inline(always)]
        fn eq(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b) }
        }
        #[inline(always)]
        fn ne(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_cmp_ps::<_CMP_NEQ_UQ>(a, b) }
        }
        #[inline(always)]
        fn ge_or_nan(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_cmp_ps::<_CMP_NLT_UQ>(a, b) }
        }
        #[inline(always)]
        fn mask_and(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_and_ps(a, b) }
        }
        #[inline(always)]
        fn iadd(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b))) }
        }
        #[inline(always)]
        fn iand(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_and_ps(a, b) }
        }
        #[inline(always)]
        fn ior(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_or_ps(a, b) }
        }
        #[inline(always)]
        fn ixor(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_xor_ps(a, b) }
        }
        #[inline(always)]
        fn ine(&mut self, a: __m256, b: __m256) -> __m256 {
            // AVX2 has only equality: its complement.
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe {
                let eq = _mm256_cmpeq_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b));
                _mm256_castsi256_ps(_mm256_xor_si256(eq, _mm256_set1_epi32(-1)))
            }
        }
        #[inline(always)]
        fn ilt(&mut self, a: __m256, b: __m256) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_castps_si256(b), _mm256_castps_si256(a))) }
        }
        #[inline(always)]
        fn ishl(&mut self, a: __m256, n: i64) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_castsi256_ps(_mm256_sll_epi32(_mm256_castps_si256(a), _mm_cvtsi32_si128(n as i32))) }
        }
        #[inline(always)]
        fn ushr(&mut self, a: __m256, n: i64) -> __m256 {
            // SAFETY: `self` exists, so AVX2 and FMA are available (`Avx2F32::new`).
            unsafe { _mm256_castsi256_ps(_mm256_srl_epi32(_mm256_castps_si256(a), _mm_cvtsi32_si128(n as i32))) }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) fn supported() -> bool {
        false
    }
    pub(super) fn unary_f32(_: crate::vmath::UnaryMath) -> Option<crate::bulk_abi::InPlaceFn> {
        None
    }
    pub(super) fn exp_sub_f32() -> Option<crate::bulk_abi::BinaryFn> {
        None
    }
    pub(super) fn div_f32() -> Option<crate::bulk_abi::BinaryFn> {
        None
    }
}
