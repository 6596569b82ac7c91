//! The lane shapes ([`Float`], [`Lanes`]) and the [`Arith`] trait the math algorithms are
//! written against (one IEEE operation or exact bit manipulation per step), with [`Emit`], its
//! backend writing Cranelift IR (`bulk` has the AVX2 one).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// Floating-point precision of a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Float {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

/// The shape a math emitter works on: a float precision, scalar or as a 128-bit vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lanes {
    /// Precision of each lane.
    pub float: Float,
    /// `true` for `f32x4` / `f64x2`, `false` for a scalar `f32` / `f64`.
    pub vector: bool,
}

impl Lanes {
    /// Scalar `f32`.
    pub const F32: Lanes = Lanes { float: Float::F32, vector: false };
    /// Scalar `f64`.
    pub const F64: Lanes = Lanes { float: Float::F64, vector: false };
    /// Vector `f32x4`.
    pub const F32X4: Lanes = Lanes { float: Float::F32, vector: true };
    /// Vector `f64x2`.
    pub const F64X2: Lanes = Lanes { float: Float::F64, vector: true };

    /// The lane shape of a Cranelift float type, or `None` for any other type.
    pub fn of(ty: Type) -> Option<Lanes> {
        match ty {
            types::F32 => Some(Lanes::F32),
            types::F64 => Some(Lanes::F64),
            types::F32X4 => Some(Lanes::F32X4),
            types::F64X2 => Some(Lanes::F64X2),
            _ => None,
        }
    }

    /// The Cranelift float type (`F32`, `F64`, `F32X4` or `F64X2`).
    pub fn ty(self) -> Type {
        match (self.float, self.vector) {
            (Float::F32, false) => types::F32,
            (Float::F64, false) => types::F64,
            (Float::F32, true) => types::F32X4,
            (Float::F64, true) => types::F64X2,
        }
    }

    /// The integer type of the same shape (`I32`, `I64`, `I32X4` or `I64X2`), used for bit tricks.
    pub fn int_ty(self) -> Type {
        match (self.float, self.vector) {
            (Float::F32, false) => types::I32,
            (Float::F64, false) => types::I64,
            (Float::F32, true) => types::I32X4,
            (Float::F64, true) => types::I64X2,
        }
    }

    /// Number of lanes: 4 for `f32x4`, 2 for `f64x2`, 1 for scalars.
    pub fn lane_count(self) -> u32 {
        match (self.float, self.vector) {
            (_, false) => 1,
            (Float::F32, true) => 4,
            (Float::F64, true) => 2,
        }
    }

    /// Size of one lane in bytes.
    pub fn lane_bytes(self) -> u32 {
        match self.float {
            Float::F32 => 4,
            Float::F64 => 8,
        }
    }
}

/// The operations the math algorithms are written in, so that one algorithm serves every
/// backend: [`Emit`] writes Cranelift IR for it, and `bulk` evaluates it on 256-bit AVX2
/// vectors in precompiled code. Each operation is one IEEE operation (or exact bit
/// manipulation) per lane, so every backend gives every lane the same bits.
///
/// Values are untyped as in Cranelift: a float, integer or mask of the backend's lane shape.
/// Masks are all-ones / all-zeros lanes.
///
/// The default methods are `#[inline(always)]`, like the backends' methods, so that `bulk`'s
/// target-feature loops get the whole algorithm inlined with its intrinsics.
pub(crate) trait Arith {
    /// A value of the backend's lane shape.
    type V: Copy;
    /// Precision of each lane.
    fn float(&self) -> Float;
    /// A float constant in every lane.
    fn c(&mut self, v: f64) -> Self::V;
    /// An integer constant in every lane of the integer shape.
    fn ic(&mut self, v: i64) -> Self::V;
    fn add(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn mul(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn div(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `|a|`: the sign bit cleared (NaNs included).
    fn abs(&mut self, a: Self::V) -> Self::V;
    /// `a * b + c` with one rounding.
    fn fma(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `c - a * b` with one rounding. One operation, not `fma(-a, b, c)`, because a NaN `a`
    /// must come out with its own sign, as x86's `vfnmadd` gives it.
    fn fnma(&mut self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    fn neg(&mut self, a: Self::V) -> Self::V;
    /// `a < b` (ordered: false when either is NaN), as a mask.
    fn lt(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Neither `a` nor `b` is NaN, as a mask.
    fn ordered(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// `mask ? a : b` lane by lane.
    fn sel(&mut self, mask: Self::V, a: Self::V, b: Self::V) -> Self::V;
    fn mask_or(&mut self, a: Self::V, b: Self::V) -> Self::V;
    /// Reinterprets a float as the integer of the same shape.
    fn bits(&mut self, x: Self::V) -> Self::V;
    /// Reinterprets an integer as the float of the same shape.
    fn float_of(&mut self, i: Self::V) -> Self::V;
    fn isub(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn ishl(&mut self, a: Self::V, n: i64) -> Self::V;
    fn ushr(&mut self, a: Self::V, n: i64) -> Self::V;

    /// `a < b ? a : b` (so `b` when either is NaN): x86's `minps` operand order.
    #[inline(always)]
    fn min_pick(&mut self, a: Self::V, b: Self::V) -> Self::V {
        let m = self.lt(a, b);
        self.sel(m, a, b)
    }
    /// `b < a ? a : b` (so `b` when either is NaN): x86's `maxps` operand order.
    #[inline(always)]
    fn max_pick(&mut self, a: Self::V, b: Self::V) -> Self::V {
        let m = self.lt(b, a);
        self.sel(m, a, b)
    }
    /// A float constant given by its bit pattern (exact published constants).
    #[inline(always)]
    fn cbits(&mut self, bits: u64) -> Self::V {
        match self.float() {
            Float::F32 => self.c(f64::from(f32::from_bits(bits as u32))),
            Float::F64 => self.c(f64::from_bits(bits)),
        }
    }
    /// Horner evaluation `((c0 x + c1) x + c2) ...`, highest degree first, with fused steps.
    #[inline(always)]
    fn horner(&mut self, x: Self::V, coeffs: &[f64]) -> Self::V {
        let mut acc = self.c(coeffs[0]);
        for &k in &coeffs[1..] {
            let kc = self.c(k);
            acc = self.fma(acc, x, kc);
        }
        acc
    }
    /// Bits of the mantissa field (23 or 52).
    #[inline(always)]
    fn mant_bits(&self) -> i64 {
        match self.float() {
            Float::F32 => 23,
            Float::F64 => 52,
        }
    }
    /// Exponent bias (127 or 1023).
    #[inline(always)]
    fn bias(&self) -> i64 {
        match self.float() {
            Float::F32 => 127,
            Float::F64 => 1023,
        }
    }
    /// `1.5 * 2^mant_bits`: adding it rounds a float of magnitude < 2^(mant_bits-1) to an integer
    /// held in the low mantissa bits, which is how these emitters round and convert without
    /// `fcvt` (Cranelift has no i64x2 conversions on baseline x86).
    #[inline(always)]
    fn magic(&self) -> f64 {
        1.5 * 2f64.powi(self.mant_bits() as i32)
    }
    /// Bit pattern of [`Arith::magic`].
    #[inline(always)]
    fn magic_bits(&self) -> i64 {
        match self.float() {
            Float::F32 => i64::from((1.5f32 * 8_388_608.0).to_bits()),
            Float::F64 => (1.5f64 * 4_503_599_627_370_496.0).to_bits() as i64,
        }
    }
}

/// A lane-shape-aware wrapper over the builder: each helper emits one operation for scalar and
/// vector lanes alike (splatting constants, using `bitselect` where scalars use `select`).
///
/// Masks (results of comparisons) are `I8` for scalars and the integer vector type for vectors,
/// which is what `fcmp` / `icmp` produce.
pub(crate) struct Emit<'a, 'b> {
    pub(crate) b: &'a mut FunctionBuilder<'b>,
    pub(crate) l: Lanes,
}

impl<'a, 'b> Emit<'a, 'b> {
    pub(super) fn for_value(b: &'a mut FunctionBuilder<'b>, x: Value) -> Self {
        let ty = b.func.dfg.value_type(x);
        let l = Lanes::of(ty).unwrap_or_else(|| panic!("vmath: unsupported type {ty}"));
        Emit { b, l }
    }

    /// The same builder, working on another lane shape (pow of f32 computes in f64).
    pub(crate) fn with_lanes<'c>(&'c mut self, l: Lanes) -> Emit<'c, 'b> {
        Emit { b: self.b, l }
    }

    fn vflags() -> MemFlagsData {
        // Vector bitcasts must name a lane order; every lane here keeps its position.
        MemFlagsData::new().with_endianness(Endianness::Little)
    }

    fn bitcast_to(&mut self, ty: Type, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == ty {
            return v;
        }
        let flags = if ty.is_vector() { Self::vflags() } else { MemFlagsData::new() };
        self.b.ins().bitcast(ty, flags, v)
    }

    /// A float constant in every lane.
    pub(crate) fn c(&mut self, v: f64) -> Value {
        let s = match self.l.float {
            Float::F32 => self.b.ins().f32const(v as f32),
            Float::F64 => self.b.ins().f64const(v),
        };
        self.splat(s)
    }

    /// An integer constant in every lane of the integer shape.
    pub(crate) fn ic(&mut self, v: i64) -> Value {
        let scalar = self.l.int_ty().lane_type();
        let s = self.b.ins().iconst(scalar, v);
        self.splat(s)
    }

    fn splat(&mut self, s: Value) -> Value {
        let ty = self.b.func.dfg.value_type(s);
        if !self.l.vector {
            return s;
        }
        let vty = if ty.is_float() { self.l.ty() } else { self.l.int_ty() };
        self.b.ins().splat(vty, s)
    }

    pub(crate) fn add(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fadd(a, b)
    }
    pub(crate) fn sub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fsub(a, b)
    }
    pub(crate) fn mul(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fmul(a, b)
    }
    pub(crate) fn div(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fdiv(a, b)
    }
    /// `a * b + c` with one rounding.
    pub(crate) fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.b.ins().fma(a, b, c)
    }
    pub(crate) fn neg(&mut self, a: Value) -> Value {
        self.b.ins().fneg(a)
    }
    pub(crate) fn abs(&mut self, a: Value) -> Value {
        self.b.ins().fabs(a)
    }
    pub(crate) fn trunc(&mut self, a: Value) -> Value {
        self.b.ins().trunc(a)
    }

    /// Float comparison mask.
    pub(crate) fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(cc, a, b)
    }
    /// Integer comparison mask.
    pub(crate) fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.b.ins().icmp(cc, a, b)
    }
    pub(crate) fn mask_and(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    pub(crate) fn mask_or(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }

    /// `mask ? a : b` lane by lane (`a`, `b` float or integer of this shape).
    pub(crate) fn sel(&mut self, mask: Value, a: Value, b: Value) -> Value {
        if self.l.vector {
            // bitselect wants the mask in the operands' type; fcmp/icmp masks are all-ones lanes.
            let ty = self.b.func.dfg.value_type(a);
            let m = self.bitcast_to(ty, mask);
            self.b.ins().bitselect(m, a, b)
        } else {
            self.b.ins().select(mask, a, b)
        }
    }

    /// Reinterprets a float as the integer of the same shape.
    pub(crate) fn bits(&mut self, x: Value) -> Value {
        let ty = self.l.int_ty();
        self.bitcast_to(ty, x)
    }
    /// Reinterprets an integer as the float of the same shape.
    pub(crate) fn float_of(&mut self, i: Value) -> Value {
        let ty = self.l.ty();
        self.bitcast_to(ty, i)
    }
    pub(crate) fn iadd(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().iadd(a, b)
    }
    pub(crate) fn isub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().isub(a, b)
    }
    pub(crate) fn iand(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    pub(crate) fn ior(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }
    pub(crate) fn ixor(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bxor(a, b)
    }
    pub(crate) fn ishl(&mut self, a: Value, n: i64) -> Value {
        self.b.ins().ishl_imm_u(a, n)
    }
    pub(crate) fn ushr(&mut self, a: Value, n: i64) -> Value {
        self.b.ins().ushr_imm_u(a, n)
    }

    /// The sign bit of a lane, as an integer constant.
    pub(crate) fn sign_mask(&mut self) -> Value {
        match self.l.float {
            Float::F32 => self.ic(i64::from(i32::MIN)),
            Float::F64 => self.ic(i64::MIN),
        }
    }
    /// Converts a small integer (|i| < 2^(mant_bits-1)) to float, exactly.
    pub(crate) fn int_to_float(&mut self, i: Value) -> Value {
        let mb = self.magic_bits();
        let mb = self.ic(mb);
        let t = self.iadd(i, mb);
        let t = self.float_of(t);
        let magic = self.magic();
        let magic = self.c(magic);
        self.sub(t, magic)
    }

    /// Changes `lanes` of a vector `f32x4` / `f64x2` through a byte shuffle (`idx` are byte
    /// indices into the concatenation `a ++ b`).
    pub(crate) fn shuffle_bytes(&mut self, a: Value, b: Value, idx: [u8; 16]) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let ab = self.bitcast_to(types::I8X16, a);
        let bb = self.bitcast_to(types::I8X16, b);
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(idx.to_vec()));
        let r = self.b.ins().shuffle(ab, bb, imm);
        self.bitcast_to(ty, r)
    }
}

/// IR backend: each operation is one Cranelift instruction (or a splat constant).
impl Arith for Emit<'_, '_> {
    type V = Value;
    fn float(&self) -> Float {
        self.l.float
    }
    fn c(&mut self, v: f64) -> Value {
        Emit::c(self, v)
    }
    fn ic(&mut self, v: i64) -> Value {
        Emit::ic(self, v)
    }
    fn add(&mut self, a: Value, b: Value) -> Value {
        Emit::add(self, a, b)
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        Emit::sub(self, a, b)
    }
    fn mul(&mut self, a: Value, b: Value) -> Value {
        Emit::mul(self, a, b)
    }
    fn div(&mut self, a: Value, b: Value) -> Value {
        Emit::div(self, a, b)
    }
    fn abs(&mut self, a: Value) -> Value {
        Emit::abs(self, a)
    }
    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        Emit::fma(self, a, b, c)
    }
    fn fnma(&mut self, a: Value, b: Value, c: Value) -> Value {
        // x86 lowers this shape to one `vfnmadd`.
        let na = Emit::neg(self, a);
        Emit::fma(self, na, b, c)
    }
    fn neg(&mut self, a: Value) -> Value {
        Emit::neg(self, a)
    }
    fn lt(&mut self, a: Value, b: Value) -> Value {
        Emit::fcmp(self, FloatCC::LessThan, a, b)
    }
    fn ordered(&mut self, a: Value, b: Value) -> Value {
        Emit::fcmp(self, FloatCC::Ordered, a, b)
    }
    fn sel(&mut self, mask: Value, a: Value, b: Value) -> Value {
        Emit::sel(self, mask, a, b)
    }
    fn mask_or(&mut self, a: Value, b: Value) -> Value {
        Emit::mask_or(self, a, b)
    }
    fn bits(&mut self, x: Value) -> Value {
        Emit::bits(self, x)
    }
    fn float_of(&mut self, i: Value) -> Value {
        Emit::float_of(self, i)
    }
    fn isub(&mut self, a: Value, b: Value) -> Value {
        Emit::isub(self, a, b)
    }
    fn ishl(&mut self, a: Value, n: i64) -> Value {
        Emit::ishl(self, a, n)
    }
    fn ushr(&mut self, a: Value, n: i64) -> Value {
        Emit::ushr(self, a, n)
    }
}
