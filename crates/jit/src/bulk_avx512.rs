//! Bulk math on 512-bit vectors: `vmath`'s algorithms evaluated sixteen float32 lanes at a time
//! with AVX-512 (F, DQ, VL, BW) and FMA: the variant of [`crate::bulk`]'s AVX2 functions that
//! `bulk` hands out on CPUs with AVX-512.
//!
//! Every step is the same IEEE operation (or the same exact bit operation) as the AVX2 and IR
//! paths, in the same order, so every lane gets the same bits (`tests/bulk.rs`). The tail of a
//! buffer is one masked load and store instead of padded copies.

// AVX-512 intrinsics on raw pointers; each block says why it is sound.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
pub(crate) use imp::*;

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::{
        __m512, __mmask16, _mm512_add_epi32, _mm512_add_ps, _mm512_and_ps, _mm512_andnot_ps, _mm512_castps_si512,
        _mm512_castsi512_ps, _mm512_cmp_ps_mask, _mm512_cmplt_epi32_mask, _mm512_cmpneq_epi32_mask, _mm512_div_ps,
        _mm512_fmadd_ps, _mm512_fnmadd_ps, _mm512_loadu_ps, _mm512_mask_blend_ps, _mm512_mask_storeu_ps,
        _mm512_maskz_loadu_ps, _mm512_maskz_mov_ps, _mm512_max_ps, _mm512_min_ps, _mm512_movepi32_mask,
        _mm512_movm_epi32, _mm512_mul_ps, _mm512_or_ps, _mm512_roundscale_ps, _mm512_scalef_ps, _mm512_set1_epi32,
        _mm512_set1_ps, _mm512_sll_epi32, _mm512_srl_epi32, _mm512_storeu_ps, _mm512_sub_epi32, _mm512_sub_ps,
        _mm512_xor_ps, _mm_cvtsi32_si128, _CMP_EQ_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ, _CMP_NLT_UQ, _CMP_ORD_Q,
        _MM_FROUND_NO_EXC, _MM_FROUND_TO_ZERO,
    };

    use crate::bulk_abi::{BinaryFn, InPlaceFn};
    use crate::vmath::UnaryMath;
    use ragtime_vmath::{explog, hyper, Arith, Float};

    /// True when this CPU runs the AVX-512 functions (the features every `#[target_feature]`
    /// below enables, detected at run time).
    pub(crate) fn supported() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
    }

    crate::bulk_abi::bulk_entries!("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma", map_avx512);

    /// The mask of the first `min(n, 16)` lanes.
    #[inline(always)]
    fn first_lanes(n: usize) -> __mmask16 {
        if n >= 16 {
            0xffff
        } else {
            ((1u32 << n) - 1) as __mmask16
        }
    }

    /// `out[i] = f(ins[0][i], ...)` for `i < n`, sixteen values at a time, the last few by
    /// masked loads and stores (which touch nothing past `n`). An output may be one of the inputs
    /// (each vector is read before it is written). Inlined into the `#[target_feature]` entries.
    ///
    /// # Safety
    /// The CPU has the features of [`supported`]; each input is valid for `n` reads and `out`
    /// for `n` writes.
    #[inline(always)]
    unsafe fn map_avx512<const N: usize>(
        ins: [*const f32; N],
        out: *mut f32,
        n: usize,
        f: impl Fn(&mut Avx512F32, [__m512; N]) -> __m512,
    ) {
        // SAFETY: the caller guarantees the features.
        let mut m = unsafe { Avx512F32::new() };
        let mut i = 0;
        // Whole vectors, then the tail by masked loads and stores.
        while i + 16 <= n {
            // SAFETY: `[i, i + 16)` is in bounds of every buffer.
            unsafe {
                let x = ins.map(|p| _mm512_loadu_ps(p.add(i)));
                _mm512_storeu_ps(out.add(i), f(&mut m, x));
            }
            i += 16;
        }
        if i < n {
            let k = first_lanes(n - i);
            // SAFETY: the masked lanes are those of `[i, n)`, in bounds of every buffer; masked-off
            // lanes are neither read nor written.
            unsafe {
                let x = ins.map(|p| _mm512_maskz_loadu_ps(k, p.add(i)));
                _mm512_mask_storeu_ps(out.add(i), k, f(&mut m, x));
            }
        }
    }

    /// [`Arith`] on sixteen float32 lanes of a `__m512`; integers are the same bits
    /// reinterpreted, and masks are whole lanes of ones or zeros (as in the AVX2 and IR paths),
    /// moved to and from mask registers where an instruction needs one.
    #[derive(Clone, Copy)]
    struct Avx512F32 {
        _private: (),
    }

    impl Avx512F32 {
        /// # Safety
        /// The CPU has the features of [`supported`]: every method runs those instructions.
        #[inline(always)]
        unsafe fn new() -> Self {
            Avx512F32 { _private: () }
        }
    }

    /// A mask register as whole lanes.
    #[inline(always)]
    fn lanes_of(k: __mmask16) -> __m512 {
        // SAFETY: only reached through `Avx512F32`'s methods, whose existence proves AVX-512 DQ.
        unsafe { _mm512_castsi512_ps(_mm512_movm_epi32(k)) }
    }

    /// Whole lanes as a mask register (each lane's sign bit).
    #[inline(always)]
    fn mask_of(v: __m512) -> __mmask16 {
        // SAFETY: as `lanes_of`.
        unsafe { _mm512_movepi32_mask(_mm512_castps_si512(v)) }
    }

    /// Integer lanes of `f` applied to `a` and `b` reinterpreted.
    macro_rules! int_op {
        ($f:ident, $a:expr, $b:expr) => {
            _mm512_castsi512_ps($f(_mm512_castps_si512($a), _mm512_castps_si512($b)))
        };
    }

    // Every block below: an `Avx512F32` exists only where `Avx512F32::new`'s contract holds, so
    // the AVX-512 and FMA instructions are available.
    impl Arith for Avx512F32 {
        type V = __m512;
        #[inline(always)]
        fn float(&self) -> Float {
            Float::F32
        }
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m512 {
            // SAFETY: `self` exists, so AVX-512 is available (`Avx512F32::new`).
            unsafe { _mm512_set1_ps(v as f32) }
        }
        #[inline(always)]
        fn ic(&mut self, v: i64) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_castsi512_ps(_mm512_set1_epi32(v as i32)) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        fn div(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_div_ps(a, b) }
        }
        #[inline(always)]
        fn abs(&mut self, a: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_andnot_ps(_mm512_set1_ps(-0.0), a) }
        }
        #[inline(always)]
        fn trunc(&mut self, a: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m512, b: __m512, c: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn fnma(&mut self, a: __m512, b: __m512, c: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_fnmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn neg(&mut self, a: __m512) -> __m512 {
            // The sign bit flipped, NaNs included, as Cranelift's `fneg`.
            // SAFETY: as above.
            unsafe { _mm512_xor_ps(a, _mm512_set1_ps(-0.0)) }
        }
        #[inline(always)]
        fn lt(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) })
        }
        #[inline(always)]
        fn eq(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b) })
        }
        #[inline(always)]
        fn ne(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(a, b) })
        }
        #[inline(always)]
        fn ge_or_nan(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmp_ps_mask::<_CMP_NLT_UQ>(a, b) })
        }
        #[inline(always)]
        fn ordered(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmp_ps_mask::<_CMP_ORD_Q>(a, b) })
        }
        #[inline(always)]
        fn sel(&mut self, mask: __m512, a: __m512, b: __m512) -> __m512 {
            // `blend(k, b, a)` takes `a` where `k` is set.
            // SAFETY: as above.
            unsafe { _mm512_mask_blend_ps(mask_of(mask), b, a) }
        }
        #[inline(always)]
        fn keep(&mut self, mask: __m512, a: __m512) -> __m512 {
            // Masks are whole lanes: one `and`.
            // SAFETY: as above.
            unsafe { _mm512_and_ps(mask, a) }
        }
        #[inline(always)]
        fn keep_unless_below(&mut self, y: __m512, c: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_maskz_mov_ps(_mm512_cmp_ps_mask::<_CMP_NLT_UQ>(y, c), y) }
        }
        #[inline(always)]
        fn mul_pow2(&mut self, p: __m512, n: __m512, _t: __m512) -> __m512 {
            // `vscalefps`: `p * 2^floor(n)` rounded once, as the default's exact first product
            // and rounded second one (`tests/bulk.rs` compares every lane with the JIT's `exp`).
            // SAFETY: as above.
            unsafe { _mm512_scalef_ps(p, n) }
        }
        #[inline(always)]
        fn min_pick(&mut self, a: __m512, b: __m512) -> __m512 {
            // `vminps` is `a < b ? a : b`, the trait's definition.
            // SAFETY: as above.
            unsafe { _mm512_min_ps(a, b) }
        }
        #[inline(always)]
        fn max_pick(&mut self, a: __m512, b: __m512) -> __m512 {
            // `vmaxps` is `a > b ? a : b`, the trait's definition.
            // SAFETY: as above.
            unsafe { _mm512_max_ps(a, b) }
        }
        #[inline(always)]
        fn mask_and(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_and_ps(a, b) }
        }
        #[inline(always)]
        fn mask_or(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_or_ps(a, b) }
        }
        #[inline(always)]
        fn bits(&mut self, x: __m512) -> __m512 {
            x
        }
        #[inline(always)]
        fn float_of(&mut self, i: __m512) -> __m512 {
            i
        }
        #[inline(always)]
        fn iadd(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { int_op!(_mm512_add_epi32, a, b) }
        }
        #[inline(always)]
        fn isub(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { int_op!(_mm512_sub_epi32, a, b) }
        }
        #[inline(always)]
        fn iand(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_and_ps(a, b) }
        }
        #[inline(always)]
        fn ior(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_or_ps(a, b) }
        }
        #[inline(always)]
        fn ixor(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_xor_ps(a, b) }
        }
        #[inline(always)]
        fn ine(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmpneq_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b)) })
        }
        #[inline(always)]
        fn ilt(&mut self, a: __m512, b: __m512) -> __m512 {
            // SAFETY: as above.
            lanes_of(unsafe { _mm512_cmplt_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b)) })
        }
        #[inline(always)]
        fn ishl(&mut self, a: __m512, n: i64) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_castsi512_ps(_mm512_sll_epi32(_mm512_castps_si512(a), _mm_cvtsi32_si128(n as i32))) }
        }
        #[inline(always)]
        fn ushr(&mut self, a: __m512, n: i64) -> __m512 {
            // SAFETY: as above.
            unsafe { _mm512_castsi512_ps(_mm512_srl_epi32(_mm512_castps_si512(a), _mm_cvtsi32_si128(n as i32))) }
        }
    }
}
