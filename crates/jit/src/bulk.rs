//! Bulk math on 256-bit vectors: `vmath`'s algorithms evaluated eight float32 lanes at a time
//! with AVX2 and FMA, in precompiled code that kernels call on a block's scratch buffer.
//!
//! Cranelift's x64 backend has only 128-bit vectors. A multi-pass row kernel that computes an
//! `exp` flat over a block (softmax) writes the argument into a scratch buffer and calls
//! `exp_f32`'s function on it instead of running the 128-bit `exp` itself: half the
//! instructions per value. Both run the same algorithm through `vmath::Arith` (one IEEE operation or
//! exact bit operation per step, in the same order), so every lane gets the same bits as the
//! IR path, whichever the CPU (`tests/bulk.rs` checks it against the JIT's own `exp`).

// Calling precompiled AVX2 code through raw pointers; each block says why it is sound.
#![allow(unsafe_code)]

/// The in-place float32 `exp` for this CPU: `f(data, n)` replaces `data[..n]` by `exp` of each
/// value, bit for bit what `vmath` emits. `None` without AVX2 and FMA (kernels then keep the
/// 128-bit IR path).
pub(crate) fn exp_f32() -> Option<unsafe extern "C" fn(*mut f32, usize)> {
    imp::exp_f32()
}

/// `exp` of every value of `data`, in place, on the bulk path; `false` (and `data` unchanged)
/// when this CPU has no such path. The results are those of the JIT's float32 `exp`.
pub fn exp_f32_in_place(data: &mut [f32]) -> bool {
    match exp_f32() {
        Some(f) => {
            // SAFETY: `f` comes from `exp_f32`, which hands it out only on CPUs with AVX2 and
            // FMA; `data` is valid for `len` reads and writes.
            unsafe { f(data.as_mut_ptr(), data.len()) };
            true
        }
        None => false,
    }
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps,
        _mm256_fmadd_ps, _mm256_fnmadd_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_or_ps, _mm256_set1_epi32,
        _mm256_set1_ps, _mm256_sll_epi32, _mm256_srl_epi32, _mm256_storeu_ps, _mm256_sub_epi32, _mm256_sub_ps,
        _mm_cvtsi32_si128, _CMP_LT_OQ,
    };

    use crate::vmath::{explog, Arith, Float};

    pub(super) fn exp_f32() -> Option<unsafe extern "C" fn(*mut f32, usize)> {
        let supported = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        supported.then_some(exp_f32_entry as unsafe extern "C" fn(*mut f32, usize))
    }

    /// The `extern "C"` entry kernels call.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA, and `data` is valid for `n` reads and writes of `f32`.
    unsafe extern "C" fn exp_f32_entry(data: *mut f32, n: usize) {
        // SAFETY: this function's own contract.
        unsafe { exp_f32_avx2(data, n) }
    }

    /// # Safety
    /// As [`exp_f32_entry`].
    #[target_feature(enable = "avx2,fma")]
    unsafe fn exp_f32_avx2(data: *mut f32, n: usize) {
        // SAFETY: the caller guarantees AVX2 and FMA.
        let mut m = unsafe { Avx2F32::new() };
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: `i + 8 <= n`, so the eight values are in `data[..n]`.
            unsafe {
                let x = _mm256_loadu_ps(data.add(i));
                _mm256_storeu_ps(data.add(i), explog::exp(&mut m, x, None));
            }
            i += 8;
        }
        if i < n {
            // The last few values go through a padded copy, so nothing past `n` is read.
            let rest = n - i;
            let mut lanes = [0f32; 8];
            // SAFETY: `data[i..n]` is in bounds and `lanes` holds 8 >= `rest` values.
            unsafe {
                std::ptr::copy_nonoverlapping(data.add(i), lanes.as_mut_ptr(), rest);
                let y = explog::exp(&mut m, _mm256_loadu_ps(lanes.as_ptr()), None);
                _mm256_storeu_ps(lanes.as_mut_ptr(), y);
                std::ptr::copy_nonoverlapping(lanes.as_ptr(), data.add(i), rest);
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

    // SAFETY (every block below): an `Avx2F32` exists only where `Avx2F32::new`'s contract
    // holds, so the AVX2 / FMA instructions are available.
    impl Arith for Avx2F32 {
        type V = __m256;
        #[inline(always)]
        fn float(&self) -> Float {
            Float::F32
        }
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m256 {
            unsafe { _mm256_set1_ps(v as f32) }
        }
        #[inline(always)]
        fn ic(&mut self, v: i64) -> __m256 {
            unsafe { _mm256_castsi256_ps(_mm256_set1_epi32(v as i32)) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn fnma(&mut self, a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fnmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn lt(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
        }
        #[inline(always)]
        fn sel(&mut self, mask: __m256, a: __m256, b: __m256) -> __m256 {
            // Masks are whole lanes, so blending by the sign bit is selecting by the mask.
            unsafe { _mm256_blendv_ps(b, a, mask) }
        }
        #[inline(always)]
        fn mask_or(&mut self, a: __m256, b: __m256) -> __m256 {
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
            unsafe { _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b))) }
        }
        #[inline(always)]
        fn ishl(&mut self, a: __m256, n: i64) -> __m256 {
            unsafe { _mm256_castsi256_ps(_mm256_sll_epi32(_mm256_castps_si256(a), _mm_cvtsi32_si128(n as i32))) }
        }
        #[inline(always)]
        fn ushr(&mut self, a: __m256, n: i64) -> __m256 {
            unsafe { _mm256_castsi256_ps(_mm256_srl_epi32(_mm256_castps_si256(a), _mm_cvtsi32_si128(n as i32))) }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) fn exp_f32() -> Option<unsafe extern "C" fn(*mut f32, usize)> {
        None
    }
}
