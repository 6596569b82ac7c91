//! The minimal JIT harness: a Cranelift `JITModule` built for the host with `opt_level=speed`,
//! and elementwise map kernels (vector main loop + scalar tail) that the tests and the kernel
//! compiler build on. This is the only module of the crate that contains `unsafe`.
#![allow(unsafe_code)]

use std::fmt;
use std::marker::PhantomData;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, UserFuncName, Value};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use crate::perf_map;
use crate::vmath::{self, Float, Lanes, UnaryMath};

/// Errors of the JIT harness.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JitError {
    /// The host is not supported by Cranelift, or a setting was rejected.
    #[error("cannot target the host: {0}")]
    Host(String),
    /// Cranelift rejected or failed to compile a function (a bug in the emitted IR).
    #[error("cranelift failed on kernel `{name}`: {message}")]
    Compile {
        /// The kernel's symbol name.
        name: String,
        /// Cranelift's message.
        message: String,
    },
    /// A kernel was run with the wrong number of inputs.
    #[error("kernel takes {expected} inputs, got {got}")]
    Arity {
        /// Inputs the kernel was compiled for.
        expected: usize,
        /// Inputs passed.
        got: usize,
    },
    /// An input's length differs from the output's.
    #[error("input {index} has {len} elements, the output has {out_len}")]
    Length {
        /// Which input.
        index: usize,
        /// Its length.
        len: usize,
        /// The output's length.
        out_len: usize,
    },
}

/// A float element type a kernel can be compiled for (`f32` or `f64`).
pub trait JitFloat: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The lane precision.
    const FLOAT: Float;
}
impl JitFloat for f32 {
    const FLOAT: Float = Float::F32;
}
impl JitFloat for f64 {
    const FLOAT: Float = Float::F64;
}
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A JIT module for the host CPU (all its SIMD features, `opt_level=speed`).
///
/// Compiled code is never freed (Cranelift's JIT memory outlives the module unless freed
/// explicitly, which this type never does), so kernels are `'static` and can outlive the
/// `Jit` that made them. Kernels are meant to be cached, not compiled per call.
pub struct Jit {
    module: JITModule,
    ctx: Context,
    fctx: FunctionBuilderContext,
    next_id: u32,
}

impl fmt::Debug for Jit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Jit").field("isa", &self.module.isa().name()).field("kernels", &self.next_id).finish()
    }
}

impl Jit {
    /// Builds a module for the host: ISA flags detected by `cranelift-native`, `opt_level=speed`.
    pub fn new() -> Result<Jit, JitError> {
        let host = |e: &dyn fmt::Display| JitError::Host(e.to_string());
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(|e| host(&e))?;
        // Non-PIC, far libcalls: what cranelift-jit requires on every host.
        flags.set("use_colocated_libcalls", "false").map_err(|e| host(&e))?;
        flags.set("is_pic", "false").map_err(|e| host(&e))?;
        // Row kernels keep scratch buffers on the stack (frames of several pages): inline probes
        // touch each page in order, so a frame never steps over a thread's guard page.
        flags.set("enable_probestack", "true").map_err(|e| host(&e))?;
        flags.set("probestack_strategy", "inline").map_err(|e| host(&e))?;
        let isa = cranelift_native::builder()
            .map_err(|e| host(&e))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| host(&e))?;
        let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let ctx = module.make_context();
        Ok(Jit { module, ctx, fctx: FunctionBuilderContext::new(), next_id: 0 })
    }

    /// The target ISA (for feature queries and the frontend config).
    pub fn isa(&self) -> &dyn TargetIsa {
        self.module.isa()
    }

    /// Compiles `out[i] = body(inputs[0][i], .., inputs[arity-1][i])` over `n` elements.
    ///
    /// `body` is called twice: once with `f32x4`/`f64x2` values for the main loop (unless
    /// `vectorize` is false) and once with scalars for the tail, so it must be generic over the
    /// lane shape, as the [`vmath`] emitters are. It must stay in the current block.
    pub fn compile_map<T: JitFloat>(
        &mut self,
        arity: usize,
        vectorize: bool,
        body: impl Fn(&mut FunctionBuilder, &[Value]) -> Value,
    ) -> Result<MapKernel<T>, JitError> {
        let ptr = self.module.target_config().pointer_type();
        let scalar = Lanes { float: T::FLOAT, vector: false };
        let vector = Lanes { float: T::FLOAT, vector: true };
        let code = self.define("map", 3, false, |b, _| {
            emit_map_loop(b, ptr, arity, vectorize.then_some(vector), scalar, &body);
        })?;
        // SAFETY: `code` is the entry of a function just defined and finalized with three
        // pointer-sized integer parameters and no return value, in the platform's default C
        // calling convention (`define`). Its memory is never freed.
        let f = unsafe { std::mem::transmute::<*const u8, MapFn>(code) };
        Ok(MapKernel { f, arity, _t: PhantomData })
    }

    /// Compiles a fused kernel with the [`FusedFn`] signature; `emit` writes the whole body
    /// (entry block included) given the parameters.
    pub fn compile_fused(
        &mut self,
        emit: impl FnOnce(&mut FunctionBuilder, &FusedParams),
    ) -> Result<FusedKernel, JitError> {
        let ptr = self.module.target_config().pointer_type();
        let code = self.define("fused", 5, true, |b, params| {
            let p = FusedParams {
                ptr,
                inputs: params[0],
                outputs: params[1],
                splits: params[2],
                begin: params[3],
                end: params[4],
            };
            emit(b, &p);
        })?;
        // SAFETY: `code` is the entry of a function just defined and finalized with five
        // pointer-sized integer parameters and a pointer-sized integer result in the default C
        // calling convention, which is `FusedFn`. Its memory is never freed.
        let f = unsafe { std::mem::transmute::<*const u8, FusedFn>(code) };
        Ok(FusedKernel { f })
    }

    /// Defines and finalizes a function of `nparams` pointer-sized parameters (and, with
    /// `returns`, a pointer-sized result); the closure gets the builder positioned in the entry
    /// block and the parameter values, and must end every block it creates. Returns the code
    /// address.
    fn define(
        &mut self,
        kind: &str,
        nparams: usize,
        returns: bool,
        build: impl FnOnce(&mut FunctionBuilder, &[Value]),
    ) -> Result<*const u8, JitError> {
        let name = format!("ragtime_{kind}_{}", self.next_id);
        self.next_id += 1;
        let ptr = self.module.target_config().pointer_type();
        let mut sig = self.module.make_signature();
        sig.params.extend(std::iter::repeat_n(AbiParam::new(ptr), nparams));
        if returns {
            sig.returns.push(AbiParam::new(ptr));
        }
        let compile_err = |e: &dyn fmt::Display| JitError::Compile { name: name.clone(), message: e.to_string() };
        let id = self.module.declare_function(&name, Linkage::Local, &sig).map_err(|e| compile_err(&e))?;
        self.ctx.func.signature = sig;
        self.ctx.func.name = UserFuncName::user(0, id.as_u32());

        let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        build(&mut b, &params);
        b.seal_all_blocks();
        b.finalize(self.module.target_config());

        let disasm = std::env::var_os("RAGTIME_JIT_DISASM").is_some();
        self.ctx.set_disasm(disasm);
        let define = self.module.define_function(id, &mut self.ctx);
        if disasm {
            if let Some(vcode) = self.ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
                eprintln!("; {name}\n{vcode}");
            }
        }
        let code_size = self.ctx.compiled_code().map(|c| c.code_info().total_size);
        if let Some(c) = self.ctx.compiled_code() {
            perf_map::dump_code(&name, c.code_buffer());
        }
        if let Err(e) = define {
            // Show the verifier's findings, not just "Verifier errors".
            let message = match &e {
                cranelift_module::ModuleError::Compilation(cranelift_codegen::CodegenError::Verifier(errs)) => {
                    format!("{errs}\n{}", self.ctx.func.display())
                }
                _ => format!("{e:?}"),
            };
            self.module.clear_context(&mut self.ctx);
            return Err(JitError::Compile { name, message });
        }
        self.module.clear_context(&mut self.ctx);
        self.module.finalize_definitions().map_err(|e| compile_err(&e))?;
        let code = self.module.get_finalized_function(id);
        if let Some(size) = code_size {
            perf_map::record(code, size, &name);
        }
        Ok(code)
    }

    /// Compiles a kernel applying one math function elementwise.
    pub fn compile_unary<T: JitFloat>(&mut self, op: UnaryMath, vectorize: bool) -> Result<MapKernel<T>, JitError> {
        self.compile_map(1, vectorize, |b, v| vmath::emit_unary(b, op, v[0]))
    }

    /// Compiles `out[i] = pow(x[i], y[i])`.
    pub fn compile_pow<T: JitFloat>(&mut self, vectorize: bool) -> Result<MapKernel<T>, JitError> {
        self.compile_map(2, vectorize, |b, v| vmath::emit_pow(b, v[0], v[1]))
    }
}

/// The machine-level signature of fused kernels: `(inputs, outputs, splits, begin, end) ->
/// status`, where `inputs` / `outputs` point to arrays of buffer pointers (so the operand count
/// is unbounded), `splits` to the row offsets (or null for flat kernels), and `begin..end` is the
/// range of elements (flat kernels) or rows (row kernels) to compute. The status is 0 when every
/// element of the range was computed, 1 when an op faulted (an integer division by zero, a
/// negative integer exponent) and the kernel stopped.
pub type FusedFn = unsafe extern "C" fn(*const *const u8, *const *mut u8, *const i64, usize, usize) -> usize;

/// The parameters of a fused kernel being emitted.
#[derive(Debug, Clone, Copy)]
pub struct FusedParams {
    /// The pointer type.
    pub ptr: types::Type,
    /// Pointer to the array of input buffer pointers.
    pub inputs: Value,
    /// Pointer to the array of output buffer pointers.
    pub outputs: Value,
    /// Pointer to the row offsets.
    pub splits: Value,
    /// First element or row.
    pub begin: Value,
    /// One past the last element or row.
    pub end: Value,
}

/// A compiled fused kernel (machine code that is never freed, so the handle is `'static`).
#[derive(Clone, Copy)]
pub struct FusedKernel {
    f: FusedFn,
}

impl fmt::Debug for FusedKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FusedKernel").field("code", &(self.f as *const u8)).finish()
    }
}

impl FusedKernel {
    /// The address of the machine code (two handles are the same kernel when it is equal).
    pub fn address(&self) -> usize {
        self.f as usize
    }

    /// Calls the kernel; returns `false` when an op faulted (the outputs of the range are then
    /// incomplete).
    ///
    /// # Safety
    /// The caller guarantees what the kernel was compiled to assume: `inputs` and `outputs` hold
    /// one valid pointer per operand, each buffer has the element type the kernel reads or
    /// writes and is long enough for every index in `begin..end` (elements), or, for row
    /// kernels, for every element `splits[r]..splits[r + 1]` and every row `r` of `begin..end`;
    /// `splits` is non-decreasing with at least `end + 1` entries; the output ranges written by
    /// concurrent calls do not overlap.
    pub unsafe fn call(
        &self,
        inputs: &[*const u8],
        outputs: &[*mut u8],
        splits: *const i64,
        begin: usize,
        end: usize,
    ) -> bool {
        // SAFETY: forwarded to the caller's contract above.
        unsafe { (self.f)(inputs.as_ptr(), outputs.as_ptr(), splits, begin, end) == 0 }
    }
}

/// The machine-level signature of map kernels: `(inputs: *const *const T, out: *mut T, n)`.
type MapFn = unsafe extern "C" fn(*const *const u8, *mut u8, usize);

/// A compiled elementwise kernel over `T` with a fixed number of inputs.
pub struct MapKernel<T> {
    f: MapFn,
    arity: usize,
    _t: PhantomData<fn(T) -> T>,
}

impl<T> Clone for MapKernel<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for MapKernel<T> {}

impl<T> fmt::Debug for MapKernel<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapKernel").field("code", &(self.f as *const u8)).field("arity", &self.arity).finish()
    }
}

impl<T: JitFloat> MapKernel<T> {
    /// Number of inputs.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// Runs the kernel: `out[i] = f(inputs[0][i], ..)`. Every input must be as long as `out`;
    /// inputs and output are distinct borrows, so they cannot alias.
    pub fn run(&self, inputs: &[&[T]], out: &mut [T]) -> Result<(), JitError> {
        if inputs.len() != self.arity {
            return Err(JitError::Arity { expected: self.arity, got: inputs.len() });
        }
        for (index, x) in inputs.iter().enumerate() {
            if x.len() != out.len() {
                return Err(JitError::Length { index, len: x.len(), out_len: out.len() });
            }
        }
        let ptrs: Vec<*const u8> = inputs.iter().map(|x| x.as_ptr().cast::<u8>()).collect();
        // SAFETY: the kernel was compiled for `self.arity` inputs of element type `T` (the
        // type parameter is fixed at compile time), reads `out.len()` elements from each input
        // pointer and writes `out.len()` elements to `out`, all checked above to be in bounds;
        // it uses unaligned, non-trapping accesses, so element alignment (guaranteed by the
        // slices) suffices. `ptrs` outlives the call.
        unsafe { (self.f)(ptrs.as_ptr(), out.as_mut_ptr().cast::<u8>(), out.len()) };
        Ok(())
    }
}

/// Vectors per main-loop iteration.
const UNROLL: i64 = 2;

/// Emits the map loop into an empty function with signature `(ptr, ptr, ptr)`.
fn emit_map_loop(
    b: &mut FunctionBuilder,
    ptr: types::Type,
    arity: usize,
    vector: Option<Lanes>,
    scalar: Lanes,
    body: &dyn Fn(&mut FunctionBuilder, &[Value]) -> Value,
) {
    // Unaligned, non-trapping: slices are only element-aligned, and bounds are checked by
    // `MapKernel::run` before the call.
    let mem = MemFlagsData::new().with_notrap();
    let entry = b.current_block().expect("define positions the builder in the entry block");
    let params = b.block_params(entry).to_vec();
    let (ins, out, n) = (params[0], params[1], params[2]);
    let pw = i64::from(ptr.bytes());
    let srcs: Vec<Value> = (0..arity).map(|k| b.ins().load(ptr, mem, ins, (k as i64 * pw) as i32)).collect();
    let esize = i64::from(scalar.lane_bytes());

    let tail_head = b.create_block();
    b.append_block_param(tail_head, ptr);
    let zero = b.ins().iconst(ptr, 0);

    if let Some(vl) = vector {
        let lanes = i64::from(vl.lane_count());
        // Two independent vectors per iteration: the math emitters are long dependency chains
        // (pow: a few hundred cycles), and a second chain in the same iteration lets the
        // out-of-order core overlap them. The scalar tail takes the last < 2·lanes elements.
        let step = UNROLL * lanes;
        let nvec = b.ins().band_imm_s(n, !(step - 1));
        let head = b.create_block();
        let vbody = b.create_block();
        b.append_block_param(head, ptr);
        b.ins().jump(head, &[zero.into()]);

        b.switch_to_block(head);
        let i = b.block_params(head)[0];
        let more = b.ins().icmp(IntCC::UnsignedLessThan, i, nvec);
        b.ins().brif(more, vbody, &[], tail_head, &[i.into()]);

        b.switch_to_block(vbody);
        b.seal_block(vbody);
        let off = b.ins().imul_imm_s(i, esize);
        let vbytes = (lanes * esize) as i32;
        let ys: Vec<Value> = (0..UNROLL as i32)
            .map(|u| {
                let xs: Vec<Value> = srcs
                    .iter()
                    .map(|&p| {
                        let a = b.ins().iadd(p, off);
                        b.ins().load(vl.ty(), mem, a, u * vbytes)
                    })
                    .collect();
                body(b, &xs)
            })
            .collect();
        let a = b.ins().iadd(out, off);
        for (u, y) in ys.into_iter().enumerate() {
            b.ins().store(mem, y, a, u as i32 * vbytes);
        }
        let next = b.ins().iadd_imm_s(i, step);
        b.ins().jump(head, &[next.into()]);
        b.seal_block(head);
    } else {
        b.ins().jump(tail_head, &[zero.into()]);
    }

    let sbody = b.create_block();
    let exit = b.create_block();
    b.switch_to_block(tail_head);
    let i = b.block_params(tail_head)[0];
    let more = b.ins().icmp(IntCC::UnsignedLessThan, i, n);
    b.ins().brif(more, sbody, &[], exit, &[]);

    b.switch_to_block(sbody);
    b.seal_block(sbody);
    let off = b.ins().imul_imm_s(i, esize);
    let xs: Vec<Value> = srcs
        .iter()
        .map(|&p| {
            let a = b.ins().iadd(p, off);
            b.ins().load(scalar.ty(), mem, a, 0)
        })
        .collect();
    let y = body(b, &xs);
    let a = b.ins().iadd(out, off);
    b.ins().store(mem, y, a, 0);
    let next = b.ins().iadd_imm_s(i, 1);
    b.ins().jump(tail_head, &[next.into()]);
    b.seal_block(tail_head);

    b.switch_to_block(exit);
    b.seal_block(exit);
    b.ins().return_(&[]);
}
