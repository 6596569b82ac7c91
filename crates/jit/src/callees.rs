//! Every address written into machine code: the functions kernels call — [`crate::bulk`]'s AVX2
//! and AVX-512 entries, the platform's `sin` / `cos`, shims into the interpreter's scalar kernels — and the
//! one emitter that writes a call ([`emit_call`]: the address as an `iconst`, then
//! `call_indirect`). A [`Callee`] can only be made here, so no other module puts a function
//! pointer into IR.
//!
//! # Safety contract
//!
//! What each callee may assume, and what the kernels that call it guarantee:
//! - **Lifetime.** Every address is a function item of this binary (`extern "C" fn`, or an
//!   `unsafe extern "C" fn` with `#[target_feature]`): static code, valid for the whole process.
//!   JIT code is never freed either, so no kernel outlives its callees and nothing is unloaded.
//! - **Signature.** `emit_call` declares the callee's C signature from the [`Callee`] itself
//!   (parameter and result types set next to the address, in this module), in the kernel's own
//!   calling convention (the platform's C convention, `kernel.rs`). Float shims take and return
//!   `f32` / `f64`; integer shims take and return `i64`: kernels widen narrow integers first,
//!   since the C ABI leaves the upper bits of narrow arguments unspecified.
//! - **Arguments.** Value callees (`sin`, `cos`, shims) accept every bit pattern (NaN, infinities,
//!   any integer; a faulting integer pair is detected by the kernel's IR before the call and the
//!   result discarded). Bulk callees take pointers and a count `n`: every pointer is either a
//!   scratch buffer in the calling kernel's stack frame (alive for the whole call, sized by the
//!   plan for at least `n` values) or an input buffer at an offset `exec.rs` bounds-checked
//!   before launching the kernel; reads and writes stay within `n` `f32` values of each; an
//!   output may be the input (in place) and is otherwise a different buffer. Alignment: element
//!   alignment (4 bytes) only; the bulk functions use unaligned loads and stores (AVX-512's
//!   tails are masked loads and stores, which touch no lane past `n`).
//!   The bulk row folds (`crate::bulk_folds`) take a block's row offsets instead of `n`: they read
//!   each row's values with masked loads (nothing past the row), write each row's entry of a
//!   value slot in the kernel's frame (sized by the plan for the block's rows), and expand into a
//!   scratch buffer that the plan sizes with `EXPAND_SLACK` values past the block's last one,
//!   which is how far their unmasked stores reach.
//!   The prefetch routine takes the address of a three-word scratch buffer of the calling
//!   kernel's frame; the addresses written there are only prefetched, never dereferenced, so
//!   any values are valid. It restores every register (a naked assembly function), which is
//!   what its `preserve_all` declaration promises the caller's register allocation.
//! - **CPU.** Bulk callees run AVX2 and FMA instructions, or AVX-512 (F, DQ, VL, BW) ones:
//!   [`bulk`] hands each out only when its features are detected at run time
//!   (`crate::bulk::supported`, `crate::bulk::Isa::runs`), and plans for this machine
//!   (`Target::host`) ask for them only then.
//! - **Threads.** No callee keeps state (they are pure functions of their arguments; the
//!   platform's `sin` / `cos` are reentrant), so kernels may call them from any number of
//!   threads at once. No callee panics (a panic in an `extern "C"` function would abort): the
//!   shims turn an op the interpreter does not define into a neutral result instead.
//!
//! Cranelift's own libcalls (`fma`, and `floor` / `ceil` / `nearest` on CPUs without SSE4.1) are
//! not addresses of ours: `cranelift-jit` resolves them by name against the process's C library
//! (`default_libcall_names`, `kernel.rs`).

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, Type, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use ragtime_core::{DType, Element};
use ragtime_ops::elemwise::{Kernels, ScalarOp, NAMED_SCALAR_OPS};

use crate::vmath::{Float, UnaryMath};

/// A function kernels may call: its address and C signature. Made only in this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Callee {
    address: usize,
    params: &'static [Type],
    ret: Option<Type>,
    /// The callee restores every register (no result): called with Cranelift's `preserve_all`
    /// convention, so the caller keeps its values in registers across the call.
    preserves_all: bool,
}

/// Writes a call of `callee` with `args` at the builder's position; returns its result, if it
/// has one. The arguments' types must be the callee's parameter types (pointer-sized integers
/// for pointers and counts).
pub(crate) fn emit_call(b: &mut FunctionBuilder, callee: Callee, args: &[Value]) -> Option<Value> {
    let ptr = b.func.signature.params[0].value_type;
    debug_assert_eq!(args.len(), callee.params.len(), "arguments of a callee");
    let conv = if callee.preserves_all { CallConv::PreserveAll } else { b.func.signature.call_conv };
    let mut sig = Signature::new(conv);
    sig.params.extend(callee.params.iter().map(|&ty| AbiParam::new(if ty == POINTER { ptr } else { ty })));
    sig.returns.extend(callee.ret.map(AbiParam::new));
    let sigref = b.import_signature(sig);
    let address = b.ins().iconst(ptr, callee.address as i64);
    let call = b.ins().call_indirect(sigref, address, args);
    b.inst_results(call).first().copied()
}

/// Stands for the pointer type in a [`Callee`]'s parameters (pointers and counts), which
/// `emit_call` replaces by the kernel's pointer type.
const POINTER: Type = types::INVALID;

/// The bulk function replacing `(data, n)` values by `op` of them in place, when this CPU has it
/// (a plan's `BulkCall::InPlace`).
pub(crate) fn bulk_in_place(op: UnaryMath) -> Option<Callee> {
    Some(Callee {
        address: crate::bulk::unary_f32(op)? as usize,
        params: &[POINTER, POINTER],
        ret: None,
        preserves_all: false,
    })
}

/// The bulk `exp(a - b)` of `(a, b, out, n)`, when this CPU has it (a plan's `BulkCall::ExpSub`).
pub(crate) fn bulk_exp_sub() -> Option<Callee> {
    binary(crate::bulk::exp_sub_f32()?)
}

/// The bulk `a / b` of `(a, b, out, n)`, when this CPU has it (a plan's [`crate::plan::BulkDivide`]).
pub(crate) fn bulk_div() -> Option<Callee> {
    binary(crate::bulk::div_f32()?)
}

/// The bulk row fold of `(values, splits, rows, expand, slots) -> flagged`, when this CPU has the
/// bulk functions (a plan's [`crate::plan::FlatBlocks::bulk_folds`]).
pub(crate) fn bulk_row_fold(fold: crate::bulk_folds::RowFold) -> Option<Callee> {
    Some(Callee {
        address: crate::bulk_folds::row_fold_f32(fold)? as usize,
        params: &[POINTER, POINTER, POINTER, POINTER, POINTER],
        ret: Some(types::I32),
        preserves_all: false,
    })
}

/// A bulk `(a, b, out, n)` function as a callee.
fn binary(f: crate::bulk_abi::BinaryFn) -> Option<Callee> {
    Some(Callee { address: f as usize, params: &[POINTER, POINTER, POINTER, POINTER], ret: None, preserves_all: false })
}

/// The prefetch routine row kernels call ahead of the rows they read (a plan's
/// [`crate::plan::Prefetch`]): its argument points to `[from, to, delta]` (addresses as
/// integers), the lines of `[from & !63, to & !63)` and of the same range moved by `delta`
/// bytes; it clobbers no register, so the call is `preserve_all` (see `crate::prefetch`).
/// x86-64 only.
pub(crate) fn prefetch_range() -> Option<Callee> {
    #[cfg(target_arch = "x86_64")]
    return Some(Callee {
        address: crate::prefetch::prefetch_range as unsafe extern "C" fn(*const usize) as usize,
        params: &[POINTER],
        ret: None,
        preserves_all: true,
    });
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// The platform's `sin` / `cos`, called by kernels for arguments beyond the polynomial's range.
extern "C" fn libm_sinf(x: f32) -> f32 {
    x.sin()
}
extern "C" fn libm_cosf(x: f32) -> f32 {
    x.cos()
}
extern "C" fn libm_sin(x: f64) -> f64 {
    x.sin()
}
extern "C" fn libm_cos(x: f64) -> f64 {
    x.cos()
}

/// The platform's scalar `sin` (`op` [`UnaryMath::Sin`]) or `cos` (any other) of `float`.
pub(crate) fn libm_trig(float: Float, op: UnaryMath) -> Callee {
    let (address, ty) = match (float, op) {
        (Float::F32, UnaryMath::Sin) => (libm_sinf as extern "C" fn(f32) -> f32 as usize, &[types::F32]),
        (Float::F32, _) => (libm_cosf as extern "C" fn(f32) -> f32 as usize, &[types::F32]),
        (Float::F64, UnaryMath::Sin) => (libm_sin as extern "C" fn(f64) -> f64 as usize, &[types::F64]),
        (Float::F64, _) => (libm_cos as extern "C" fn(f64) -> f64 as usize, &[types::F64]),
    };
    Callee { address, params: ty, ret: Some(ty[0]), preserves_all: false }
}

/// Index of an op in [`NAMED_SCALAR_OPS`], evaluated at compile time: the const argument that
/// tells a shim which kernel to call.
macro_rules! op_index {
    ($op:ident) => {{
        const INDEX: usize = {
            let mut i = 0;
            while !matches!(NAMED_SCALAR_OPS[i], ScalarOp::$op) {
                i += 1;
            }
            i
        };
        INDEX
    }};
}

/// The interpreter's unary kernel `NAMED_SCALAR_OPS[OP]` on `T`, callable from machine code.
/// Only instantiated for ops defined on `T` (the fallback is never taken).
extern "C" fn unary_shim<T: Kernels, const OP: usize>(x: T) -> T {
    T::unary(NAMED_SCALAR_OPS[OP]).map_or(x, |k| k(x))
}

/// The interpreter's binary kernel `NAMED_SCALAR_OPS[OP]` on float `T` (float kernels never
/// fault).
extern "C" fn binary_shim<T: Kernels, const OP: usize>(x: T, y: T) -> T {
    T::binary(NAMED_SCALAR_OPS[OP]).map_or(x, |k| k(x, y).unwrap_or(x))
}

/// The interpreter's binary kernel `NAMED_SCALAR_OPS[OP]` on integer `T`, with the operands
/// and result passed as `i64` (the C ABI leaves the upper bits of narrow integer arguments
/// unspecified; `from_i64` / `to_i64` convert losslessly for every integer width). A faulting
/// operand pair is detected by the kernel's IR before the call; its result is not used.
extern "C" fn int_binary_shim<T: Kernels, const OP: usize>(x: i64, y: i64) -> i64 {
    let (a, c) = (T::from_i64(x), T::from_i64(y));
    T::binary(NAMED_SCALAR_OPS[OP]).map_or(0, |k| k(a, c).map_or(0, Element::to_i64))
}

/// Parameter lists of the shims.
const F32_1: &[Type] = &[types::F32];
const F32_2: &[Type] = &[types::F32, types::F32];
const F64_1: &[Type] = &[types::F64];
const F64_2: &[Type] = &[types::F64, types::F64];
const I64_2: &[Type] = &[types::I64, types::I64];

/// The shim computing the float op `op` on `dtype` (float32 or float64), if it is one called
/// out of line (the rare functions and the float remainders).
pub(crate) fn float_shim(op: ScalarOp, dtype: DType) -> Option<Callee> {
    if dtype == DType::F32 {
        float_shim_of::<f32>(op, F32_1, F32_2, types::F32)
    } else {
        float_shim_of::<f64>(op, F64_1, F64_2, types::F64)
    }
}

fn float_shim_of<T: Kernels>(
    op: ScalarOp,
    unary_params: &'static [Type],
    binary_params: &'static [Type],
    ret: Type,
) -> Option<Callee> {
    let unary = |address: usize| Some(Callee { address, params: unary_params, ret: Some(ret), preserves_all: false });
    let binary = |address: usize| Some(Callee { address, params: binary_params, ret: Some(ret), preserves_all: false });
    macro_rules! unary {
        ($($name:ident)*) => {
            match op {
                $(ScalarOp::$name => return unary(unary_shim::<T, { op_index!($name) }> as extern "C" fn(T) -> T as usize),)*
                _ => {}
            }
        };
    }
    macro_rules! binary {
        ($($name:ident)*) => {
            match op {
                $(ScalarOp::$name => return binary(binary_shim::<T, { op_index!($name) }> as extern "C" fn(T, T) -> T as usize),)*
                _ => {}
            }
        };
    }
    unary!(Acos Acosh Asin Asinh Atan Atanh Cosh Sinh Tan Erf Erfc Expm1 Log1p LogSigmoid Softplus);
    binary!(FloorMod TruncateMod Atan2 Xlogy);
    None
}

/// The integer `pow` shim of `dtype`: `(i64, i64) -> i64`, the operands widened from `dtype`.
pub(crate) fn int_pow_shim(dtype: DType) -> Callee {
    type Shim = extern "C" fn(i64, i64) -> i64;
    const POW: usize = op_index!(Pow);
    let address = match dtype {
        DType::I8 => int_binary_shim::<i8, POW> as Shim as usize,
        DType::I16 => int_binary_shim::<i16, POW> as Shim as usize,
        DType::I32 => int_binary_shim::<i32, POW> as Shim as usize,
        DType::U8 => int_binary_shim::<u8, POW> as Shim as usize,
        DType::U16 => int_binary_shim::<u16, POW> as Shim as usize,
        DType::U32 => int_binary_shim::<u32, POW> as Shim as usize,
        DType::U64 => int_binary_shim::<u64, POW> as Shim as usize,
        _ => int_binary_shim::<i64, POW> as Shim as usize,
    };
    Callee { address, params: I64_2, ret: Some(types::I64), preserves_all: false }
}
