//! The signatures of the precompiled bulk helpers ([`crate::bulk`] for AVX2, [`crate::bulk_avx512`]),
//! in one module both import, so that neither imports the other for them.

/// `fn(data, n)`: replaces `data[..n]` by a function of each value. Kernels reach these entries
/// only through [`crate::callees`], whose contract says what they are called with.
pub(crate) type InPlaceFn = unsafe extern "C" fn(*mut f32, usize);

/// `fn(a, b, out, n)`: `out[i] = exp(a[i] - b[i])` for `i < n`.
pub(crate) type ExpSubFn = unsafe extern "C" fn(*const f32, *const f32, *mut f32, usize);
