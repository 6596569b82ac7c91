//! The signatures of the precompiled bulk helpers ([`crate::bulk`] for AVX2,
//! [`crate::bulk_avx512`], [`crate::bulk_folds`]), the layouts they share with the kernels, and
//! the entries both instruction sets define, in one module all import, so that none imports
//! another (nor the planner).

/// `fn(data, n)`: replaces `data[..n]` by a function of each value. Kernels reach these entries
/// only through [`crate::callees`], whose contract says what they are called with.
pub(crate) type InPlaceFn = unsafe extern "C" fn(*mut f32, usize);

/// `fn(a, b, out, n)`: `out[i] = f(a[i], b[i])` for `i < n` (`exp(a - b)`, `a / b`); `out` may be
/// `a` or `b`.
pub(crate) type BinaryFn = unsafe extern "C" fn(*const f32, *const f32, *mut f32, usize);

/// `fn(values, splits, rows, expand, slots) -> flagged`: a bulk row fold ([`crate::bulk_folds`]).
/// Folds rows `0..rows`, row `r` being `values[splits[r]..splits[r + 1]]` (`values` is indexed by
/// the offsets themselves). Writes row `r`'s result, unless `slots` is null, at
/// `slots + r * ROW_VALUE_BYTES` (the `f32` at 0, four copies at 16) and, unless `expand` is null,
/// over `expand[splits[r]..splits[r + 1]]`, writing up to [`EXPAND_SLACK`] values past each row's
/// start (later rows overwrite them, and the buffer holds that many past `splits[rows]`). Returns
/// nonzero when a maximum's block needs the exact fold.
pub(crate) type RowFoldFn = unsafe extern "C" fn(*const f32, *const i64, usize, *mut f32, *mut u8) -> u32;

/// Bytes per row of a block's per-row value slot: the scalar at 0, the vector at 16.
pub(crate) const ROW_VALUE_BYTES: i64 = 32;

/// Values a bulk row fold's expansion may write past the start of a row (two vectors of
/// sixteen): the room an expansion buffer keeps past a block's last value.
pub(crate) const EXPAND_SLACK: i64 = 32;

/// Defines an instruction set's bulk entries inside its module: `unary_f32`, `exp_sub_f32`, `div_f32` and the
/// `extern "C"` entries they hand out, each compiled with `$features` and looping with `$map`
/// (`unsafe fn $map<const N>(ins: [*const f32; N], out: *mut f32, n, f)`, which inlines `f`, an
/// `Arith` computation, into the entry). The module also defines `supported()`, true when the CPU
/// has `$features`. One list of entries, so the instruction sets cannot drift apart.
macro_rules! bulk_entries {
    ($features:literal, $map:ident) => {
        /// The in-place float32 `op` on this instruction set, for the functions written against
        /// `Arith` (`exp`, `tanh`, `sigmoid`); `None` for the others or when the CPU lacks it.
        pub(crate) fn unary_f32(op: UnaryMath) -> Option<InPlaceFn> {
            let f: InPlaceFn = match op {
                UnaryMath::Exp => exp_f32_entry,
                UnaryMath::Tanh => tanh_f32_entry,
                UnaryMath::Sigmoid => sigmoid_f32_entry,
                _ => return None,
            };
            supported().then_some(f)
        }

        /// `exp(a - b)` over buffers on this instruction set; `None` when the CPU lacks it.
        pub(crate) fn exp_sub_f32() -> Option<BinaryFn> {
            supported().then_some(exp_sub_f32_entry as BinaryFn)
        }

        /// `a / b` over buffers on this instruction set; `None` when the CPU lacks it.
        pub(crate) fn div_f32() -> Option<BinaryFn> {
            supported().then_some(div_f32_entry as BinaryFn)
        }

        /// # Safety
        /// The CPU has the features `supported` detects, and `data` is valid for `n` reads and
        /// writes of `f32`.
        #[target_feature(enable = $features)]
        unsafe extern "C" fn exp_f32_entry(data: *mut f32, n: usize) {
            // SAFETY: this function's own contract; the output is the input, read before written.
            unsafe { $map([data.cast_const()], data, n, |m, [x]| explog::exp(m, x, None)) }
        }

        /// # Safety
        /// As `exp_f32_entry`.
        #[target_feature(enable = $features)]
        unsafe extern "C" fn tanh_f32_entry(data: *mut f32, n: usize) {
            // SAFETY: this function's own contract; the output is the input, read before written.
            unsafe { $map([data.cast_const()], data, n, |m, [x]| hyper::tanh_f32(m, x)) }
        }

        /// # Safety
        /// As `exp_f32_entry`.
        #[target_feature(enable = $features)]
        unsafe extern "C" fn sigmoid_f32_entry(data: *mut f32, n: usize) {
            // SAFETY: this function's own contract; the output is the input, read before written.
            unsafe { $map([data.cast_const()], data, n, |m, [x]| hyper::sigmoid(m, x)) }
        }

        /// # Safety
        /// The CPU has the features `supported` detects; `a` and `b` are valid for `n` reads and
        /// `out` for `n` writes of `f32`.
        #[target_feature(enable = $features)]
        unsafe extern "C" fn exp_sub_f32_entry(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
            // SAFETY: this function's own contract.
            unsafe {
                $map([a, b], out, n, |m, [a, b]| {
                    let x = m.sub(a, b);
                    explog::exp(m, x, None)
                })
            }
        }

        /// # Safety
        /// As `exp_sub_f32_entry`; `out` may be `a` or `b` (each vector is read before written).
        #[target_feature(enable = $features)]
        unsafe extern "C" fn div_f32_entry(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
            // SAFETY: this function's own contract.
            unsafe { $map([a, b], out, n, |m, [a, b]| m.div(a, b)) }
        }
    };
}
pub(crate) use bulk_entries;
