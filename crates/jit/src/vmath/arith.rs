//! The lane shapes of the JIT's math ([`Lanes`]) and [`Emit`], the `ragtime_vmath::Arith`
//! backend writing Cranelift IR (`bulk` has the AVX2 one).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;
use ragtime_vmath::{Arith, BinaryFn, Float, Widen};

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
    fn with_lanes<'c>(&'c mut self, l: Lanes) -> Emit<'c, 'b> {
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

    fn splat(&mut self, s: Value) -> Value {
        let ty = self.b.func.dfg.value_type(s);
        if !self.l.vector {
            return s;
        }
        let vty = if ty.is_float() { self.l.ty() } else { self.l.int_ty() };
        self.b.ins().splat(vty, s)
    }

    /// Changes `lanes` of a vector `f32x4` / `f64x2` through a byte shuffle (`idx` are byte
    /// indices into the concatenation `a ++ b`).
    fn shuffle_bytes(&mut self, a: Value, b: Value, idx: [u8; 16]) -> Value {
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
        let s = match self.l.float {
            Float::F32 => self.b.ins().f32const(v as f32),
            Float::F64 => self.b.ins().f64const(v),
        };
        self.splat(s)
    }
    fn ic(&mut self, v: i64) -> Value {
        let scalar = self.l.int_ty().lane_type();
        let s = self.b.ins().iconst(scalar, v);
        self.splat(s)
    }
    fn add(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fadd(a, b)
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fsub(a, b)
    }
    fn mul(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fmul(a, b)
    }
    fn div(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fdiv(a, b)
    }
    fn abs(&mut self, a: Value) -> Value {
        self.b.ins().fabs(a)
    }
    fn trunc(&mut self, a: Value) -> Value {
        self.b.ins().trunc(a)
    }
    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.b.ins().fma(a, b, c)
    }
    fn fnma(&mut self, a: Value, b: Value, c: Value) -> Value {
        // x86 lowers this shape to one `vfnmadd`.
        let na = self.b.ins().fneg(a);
        self.b.ins().fma(na, b, c)
    }
    fn neg(&mut self, a: Value) -> Value {
        self.b.ins().fneg(a)
    }
    fn lt(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(FloatCC::LessThan, a, b)
    }
    fn eq(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(FloatCC::Equal, a, b)
    }
    fn ne(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(FloatCC::NotEqual, a, b)
    }
    fn ge_or_nan(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(FloatCC::UnorderedOrGreaterThanOrEqual, a, b)
    }
    fn ordered(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(FloatCC::Ordered, a, b)
    }
    fn sel(&mut self, mask: Value, a: Value, b: Value) -> Value {
        if self.l.vector {
            // bitselect wants the mask in the operands' type; fcmp/icmp masks are all-ones lanes.
            let ty = self.b.func.dfg.value_type(a);
            let m = self.bitcast_to(ty, mask);
            self.b.ins().bitselect(m, a, b)
        } else {
            self.b.ins().select(mask, a, b)
        }
    }
    fn keep(&mut self, mask: Value, a: Value) -> Value {
        if self.l.vector {
            // Vector masks are all-ones lanes: one `and`.
            let ty = self.b.func.dfg.value_type(a);
            let m = self.bitcast_to(ty, mask);
            self.b.ins().band(m, a)
        } else {
            let zero = Arith::c(self, 0.0);
            self.b.ins().select(mask, a, zero)
        }
    }
    fn mask_and(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    fn mask_or(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }
    fn bits(&mut self, x: Value) -> Value {
        let ty = self.l.int_ty();
        self.bitcast_to(ty, x)
    }
    fn float_of(&mut self, i: Value) -> Value {
        let ty = self.l.ty();
        self.bitcast_to(ty, i)
    }
    fn iadd(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().iadd(a, b)
    }
    fn isub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().isub(a, b)
    }
    fn iand(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    fn ior(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }
    fn ixor(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bxor(a, b)
    }
    fn ine(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().icmp(IntCC::NotEqual, a, b)
    }
    fn ilt(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().icmp(IntCC::SignedLessThan, a, b)
    }
    fn ishl(&mut self, a: Value, n: i64) -> Value {
        self.b.ins().ishl_imm_u(a, n)
    }
    fn ushr(&mut self, a: Value, n: i64) -> Value {
        self.b.ins().ushr_imm_u(a, n)
    }
}

/// float32 lanes widen with `fpromote`; a vector `f32x4` as two `f64x2` halves (lanes 0,1 and
/// 2,3), brought back together by shuffles.
impl Widen for Emit<'_, '_> {
    fn widened<F: BinaryFn>(&mut self, x: Value, y: Value, f: &F) -> Value {
        assert_eq!(self.l.float, Float::F32, "widened on float64 lanes");
        if !self.l.vector {
            let xd = self.b.ins().fpromote(types::F64, x);
            let yd = self.b.ins().fpromote(types::F64, y);
            let r = f.apply(&mut self.with_lanes(Lanes::F64), xd, yd);
            return self.b.ins().fdemote(types::F32, r);
        }
        const HIGH_TO_LOW: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
        let xh = self.shuffle_bytes(x, x, HIGH_TO_LOW);
        let yh = self.shuffle_bytes(y, y, HIGH_TO_LOW);
        let mut halves = [x, x];
        for (i, (xs, ys)) in [(x, y), (xh, yh)].into_iter().enumerate() {
            let xd = self.b.ins().fvpromote_low(xs);
            let yd = self.b.ins().fvpromote_low(ys);
            let r = f.apply(&mut self.with_lanes(Lanes::F64X2), xd, yd);
            halves[i] = self.b.ins().fvdemote(r);
        }
        const JOIN: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
        self.shuffle_bytes(halves[0], halves[1], JOIN)
    }
}
