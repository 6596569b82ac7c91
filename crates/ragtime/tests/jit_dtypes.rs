//! The JIT's dtype and op coverage against the interpreter: every op of the elementwise
//! vocabulary on every dtype the interpreter accepts for it, and every cast, on ragged data full
//! of special values (NaN, ±inf, ±0, denormals, integer extremes, empty rows, zero rows);
//! random mixed-dtype graphs (casts, comparisons, `where`, logical and integer ops, row
//! reductions); faults reported as the interpreter reports them. Results must be identical (NaN
//! equal to NaN, `-0.0` different from `0.0`) except for the functions the JIT computes with its
//! polynomial math (`exp`, `log`, `tanh`, `sigmoid`, `sin`, `cos`, `pow` on floats), which must
//! agree within the conformance tolerance.

use proptest::prelude::*;
use ragtime::case::compare;
use ragtime::ir::jit::{lowered_op, JitKernel};
use ragtime::prelude::*;
use ragtime_core::{dispatch_dtype, Element};
use ragtime_ops::elemwise::{Elemwise, ScalarOp, NAMED_SCALAR_OPS};

/// Every dtype a kernel can read or write: all but strings.
fn dtypes() -> impl Iterator<Item = DType> {
    DType::ALL.into_iter().filter(|&d| d != DType::String)
}

const FLOATS: [f64; 24] = [
    0.5,
    -1.25,
    2.5,
    -2.5,
    0.0,
    -0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1.0,
    -1.0,
    3.0,
    1e-3,
    -0.75,
    7.0,
    30.0,
    3e9,
    -3e9,
    1e20,
    255.7,
    -128.4,
    1e-310,
    1e300,
    -40000.5,
];

/// Integer candidates, wrapped into each type (`as`): every type's minimum, maximum, -1, 0 and
/// shift counts around its width.
const INTS: [i64; 26] = [
    0,
    1,
    -1,
    2,
    3,
    7,
    -13,
    8,
    9,
    31,
    33,
    63,
    64,
    127,
    -128,
    255,
    32767,
    -32768,
    65535,
    i32::MAX as i64,
    i32::MIN as i64,
    u32::MAX as i64,
    i64::MAX,
    i64::MIN,
    1 << 20,
    -1000,
];

/// The functions the JIT computes with its polynomial approximations (within tolerance, not
/// bit-identical).
fn approximate(op: ScalarOp, dtype: DType) -> bool {
    dtype.is_float()
        && matches!(
            op,
            ScalarOp::Exp
                | ScalarOp::Log
                | ScalarOp::Tanh
                | ScalarOp::Sigmoid
                | ScalarOp::Sin
                | ScalarOp::Cos
                | ScalarOp::Pow
        )
}

fn value<T: Element>(pick: u8) -> T {
    if T::DTYPE.is_float() {
        T::from_f64(FLOATS[pick as usize % FLOATS.len()])
    } else if T::DTYPE == DType::Bool {
        T::from_i64(i64::from(pick & 1))
    } else {
        T::from_i64(INTS[pick as usize % INTS.len()])
    }
}

/// A ragged rank 1 tensor of `dtype` with these row lengths, values picked by `picks` from
/// `shift` on.
fn column(dtype: DType, lengths: &[usize], picks: &[u8], shift: usize) -> RaggedTensor {
    let total: usize = lengths.iter().sum();
    let pick = |i: usize| picks[(i + shift) % picks.len()];
    let flat = dispatch_dtype!(dtype,
        T => DenseTensor::vector((0..total).map(|i| value::<T>(pick(i))).collect::<Vec<T>>()),
        string => unreachable!("no string columns"));
    let lengths: Vec<i64> = lengths.iter().map(|&l| l as i64).collect();
    RaggedTensor::from_row_lengths(flat, &lengths).expect("valid lengths")
}

/// Equal dtypes, structures and values, bit for bit except that every NaN equals every NaN.
fn identical(want: &RaggedTensor, got: &RaggedTensor) -> Result<(), String> {
    if want.dtype() != got.dtype()
        || !want.same_structure(got)
        || want.flat_values().shape() != got.flat_values().shape()
    {
        return Err(format!("reference {want}, JIT {got}"));
    }
    let differs = dispatch_dtype!(want.dtype(),
        T => {
            let (a, b) = (want.flat_slice::<T>().unwrap_or(&[]), got.flat_slice::<T>().unwrap_or(&[]));
            a.iter().zip(b).position(|(x, y)| {
                if T::DTYPE.is_float() {
                    let (x, y) = (x.to_f64(), y.to_f64());
                    !(x.is_nan() && y.is_nan()) && x.to_bits() != y.to_bits()
                } else {
                    x != y
                }
            })
        },
        string => None);
    match differs {
        Some(i) => Err(format!("flat element {i} differs: reference {want}, JIT {got}")),
        None => Ok(()),
    }
}

/// A bool output holds only valid bytes: cast to uint8, every value is 0 or 1.
fn valid_bools(t: &RaggedTensor) -> Result<(), String> {
    if t.dtype() != DType::Bool {
        return Ok(());
    }
    let bytes = t.cast(DType::U8).map_err(|e| e.to_string())?;
    match bytes.flat_slice::<u8>().unwrap_or(&[]).iter().find(|&&b| b > 1) {
        Some(b) => Err(format!("a bool output holds the byte {b}")),
        None => Ok(()),
    }
}

/// The fused ops left unlowered in a compiled function (named `Composite...` / `Row...`).
fn unlowered(f: &Function) -> Vec<String> {
    let fg = f.fgraph();
    fg.toposort()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|n| fg.node(n).map(|a| a.op.name()))
        .filter(|name| name.starts_with("Composite") || name.starts_with("Row"))
        .collect()
}

/// How strictly [`run_both`] compares.
#[derive(Clone, Copy, PartialEq)]
enum Strictness {
    /// Identical results, the same error message (one fused op: one possible first error).
    Exact,
    /// Within the conformance tolerance, the same error message.
    Tolerance,
    /// Identical results; errors of the same kind (independent fused ops may fail in either
    /// order, each reporting its own first fault).
    ExactResults,
}

/// Compiles `outputs` with the JIT and without it (the same optimized graph on the reference
/// implementation), runs both on `inputs`, and compares. Checks that every fused op was lowered.
fn run_both(g: &Graph, ins: &[&Var], outs: &[&Var], inputs: &[RaggedTensor], how: Strictness) -> Result<(), String> {
    let jit = g.compile_with(ins, outs, CompileOptions::from(Mode::FastRun).threads(2)).map_err(|e| e.to_string())?;
    let reference =
        g.compile_with(ins, outs, CompileOptions::from(Mode::FastRun).excluding("jit")).map_err(|e| e.to_string())?;
    let left = unlowered(&jit);
    if !left.is_empty() {
        return Err(format!("not lowered: {left:?}\n{}", jit.debugprint()));
    }
    match (reference.call(inputs), jit.call(inputs)) {
        (Ok(want), Ok(got)) => {
            for (k, (a, b)) in want.iter().zip(&got).enumerate() {
                let check = if how == Strictness::Tolerance { compare(a, b) } else { identical(a, b) };
                check
                    .and_then(|()| valid_bools(b))
                    .map_err(|why| format!("output {k}: {why}\n{}", jit.debugprint()))?;
            }
            Ok(())
        }
        // The same error, but for the node's name (`JitComposite{..}` for `Composite{..}`).
        (Err(a), Err(b))
            if a.kind() == b.kind() && (how == Strictness::ExactResults || after_node(&a) == after_node(&b)) =>
        {
            Ok(())
        }
        (want, got) => Err(format!("reference {want:?}, JIT {got:?}\n{}", jit.debugprint())),
    }
}

/// An error's text after its `in node NAME: ` prefix.
fn after_node(e: &Error) -> String {
    let text = e.to_string();
    match text.strip_prefix("in node ") {
        Some(rest) => rest.split_once(": ").map_or(text.clone(), |(_, tail)| tail.to_string()),
        None => text,
    }
}

/// Every op and cast with the dtypes of its operands, where the interpreter defines it.
fn cases() -> Vec<(ScalarOp, DType)> {
    let mut ops: Vec<ScalarOp> = NAMED_SCALAR_OPS.to_vec();
    ops.extend(dtypes().map(ScalarOp::Cast));
    let mut cases = Vec::new();
    for op in ops {
        for dtype in dtypes() {
            if lowered_op(op, dtype) {
                cases.push((op, dtype));
            }
        }
    }
    cases
}

/// The second operand of an integer op that can fault, made valid: zero divisors become 1 (so
/// `MIN / -1` stays), exponents become `|y| mod 64`.
fn tame(op: ScalarOp, y: RaggedTensor) -> RaggedTensor {
    let flat = dispatch_dtype!(y.dtype(),
        T => {
            let values = y.flat_slice::<T>().unwrap_or(&[]).iter().map(|&v| match op {
                ScalarOp::Pow => T::from_i64(v.to_i64() & 63),
                _ if v == T::from_i64(0) => T::from_i64(1),
                _ => v,
            });
            DenseTensor::vector(values.collect::<Vec<T>>())
        },
        string => y.flat_values().clone());
    y.with_flat_values(flat).expect("same length")
}

/// `op` applied to ragged operands of `dtype` (`where`: a bool condition first), on data with
/// these row lengths; with `valid`, the operands of integer division and power never fault.
fn check_op(
    op: ScalarOp,
    dtype: DType,
    lengths: &[usize],
    picks: &[u8],
    shift: usize,
    valid: bool,
) -> Result<(), String> {
    let g = Graph::new();
    let mut vars = Vec::new();
    let mut inputs = Vec::new();
    for k in 0..op.arity() {
        let d = if op == ScalarOp::Where && k == 0 { DType::Bool } else { dtype };
        vars.push(g.input(&format!("i{k}"), TensorType::ragged(d, 1)));
        let values = column(d, lengths, picks, shift + 7 * k);
        inputs.push(if valid && k == 1 && op.can_fault() && dtype.is_integer() { tame(op, values) } else { values });
    }
    let refs: Vec<&Var> = vars.iter().collect();
    let out = g.apply(Elemwise::new(op), &refs).remove(0);
    let how = if approximate(op, dtype) { Strictness::Tolerance } else { Strictness::Exact };
    run_both(&g, &refs, &[&out], &inputs, how).map_err(|why| format!("{op} on {dtype}: {why}"))
}

#[test]
fn every_op_on_every_dtype_the_interpreter_accepts_is_lowered_and_agrees() {
    let cases = cases();
    // The whole vocabulary on every dtype: 69 named ops and 11 casts, over 11 dtypes.
    assert!(cases.len() > 300, "{} cases", cases.len());
    // Every value of every table, with zero divisors, empty rows and a row longer than a vector.
    let picks: Vec<u8> = (0..=255).collect();
    let lengths = [3, 0, 17, 1, 0, 40, 5];
    let mut failures = Vec::new();
    for &(op, dtype) in &cases {
        for (shift, valid) in [(0, false), (11, false), (0, true), (11, true)] {
            if let Err(why) = check_op(op, dtype, &lengths, &picks, shift, valid) {
                failures.push(why);
            }
        }
        if let Err(why) = check_op(op, dtype, &[], &picks, 0, false) {
            failures.push(format!("zero rows: {why}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_data_for_each_op_and_dtype_agrees(
        which in any::<prop::sample::Index>(),
        lengths in prop::collection::vec(0usize..19, 0..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        shift in 0usize..64,
        valid in any::<bool>(),
    ) {
        let cases = cases();
        let (op, dtype) = cases[which.index(cases.len())];
        let result = check_op(op, dtype, &lengths, &picks, shift, valid);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

/// One random step of a mixed-dtype graph: (what, operand picks, dtype pick).
type Step = (u8, u8, u8, u8);

/// The dtypes mixed graphs draw from.
const MIXED: [DType; 6] = [DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::Bool];

/// A random graph mixing dtypes over six ragged inputs of one structure (one per dtype of
/// [`MIXED`]): casts, comparisons, `where`, logical, arithmetic, integer division and shifts,
/// exactly computed float functions, and row reductions whose results broadcast back.
fn mixed_graph(g: &Graph, steps: &[Step]) -> (Vec<Var>, Vec<Var>) {
    let inputs: Vec<Var> =
        MIXED.iter().enumerate().map(|(k, &d)| g.input(&format!("x{k}"), TensorType::ragged(d, 1))).collect();
    // Values by dtype (index into MIXED).
    let mut pools: Vec<Vec<Var>> = inputs.iter().map(|v| vec![v.clone()]).collect();
    let mut outputs = Vec::new();
    let bool_pool = 5;
    for &(what, a, b, d) in steps {
        let pick = |pools: &[Vec<Var>], p: usize, k: u8| pools[p][k as usize % pools[p].len()].clone();
        let p = d as usize % MIXED.len();
        let dtype = MIXED[p];
        let (x, y) = (pick(&pools, p, a), pick(&pools, p, b));
        let (result, into) = match what % 10 {
            0 => {
                let to = (b as usize / 3) % MIXED.len();
                (x.cast(MIXED[to]), to)
            }
            1 => {
                let op = [ScalarOp::Less, ScalarOp::Equal, ScalarOp::GreaterEqual, ScalarOp::NotEqual][b as usize % 4];
                let op = if dtype == DType::Bool { [ScalarOp::Equal, ScalarOp::NotEqual][b as usize % 2] } else { op };
                (g.apply(Elemwise::new(op), &[&x, &y]).remove(0), bool_pool)
            }
            2 => {
                let c = pick(&pools, bool_pool, a ^ b);
                (g.apply(Elemwise::new(ScalarOp::Where), &[&c, &x, &y]).remove(0), p)
            }
            3 => {
                let (c, e) = (pick(&pools, bool_pool, a), pick(&pools, bool_pool, b));
                let op = [ScalarOp::LogicalAnd, ScalarOp::LogicalOr, ScalarOp::LogicalXor][a as usize % 3];
                let r = g.apply(Elemwise::new(op), &[&c, &e]).remove(0);
                (if b % 2 == 0 { g.apply(Elemwise::new(ScalarOp::LogicalNot), &[&r]).remove(0) } else { r }, bool_pool)
            }
            _ if dtype == DType::Bool => (x.cast(DType::I32), 2),
            4 => {
                let op = [ScalarOp::Add, ScalarOp::Subtract, ScalarOp::Multiply, ScalarOp::Maximum, ScalarOp::Minimum]
                    [a as usize % 5];
                (g.apply(Elemwise::new(op), &[&x, &y]).remove(0), p)
            }
            5 if dtype.is_float() => {
                let op =
                    [ScalarOp::Floor, ScalarOp::Sign, ScalarOp::Expm1, ScalarOp::Erf, ScalarOp::Atan, ScalarOp::Abs]
                        [a as usize % 6];
                (g.apply(Elemwise::new(op), &[&x]).remove(0), p)
            }
            5 | 6 if !dtype.is_float() => {
                let op = [
                    ScalarOp::FloorDiv,
                    ScalarOp::FloorMod,
                    ScalarOp::BitwiseLeftShift,
                    ScalarOp::BitwiseRightShift,
                    ScalarOp::BitwiseXor,
                ][a as usize % 5];
                (g.apply(Elemwise::new(op), &[&x, &y]).remove(0), p)
            }
            6 => (g.apply(Elemwise::new(ScalarOp::FloorMod), &[&x, &y]).remove(0), p),
            7 => {
                let q = g.apply(Elemwise::new(ScalarOp::Divide), &[&x, &y]).remove(0);
                let to = if dtype == DType::U8 || dtype == DType::F32 { 0 } else { 1 };
                (q, to)
            }
            8 => {
                // A row reduction broadcast back: exact ones only (integer folds wrap and are
                // associative; max / min are exact on floats too).
                let r = match (a % 4, dtype.is_float()) {
                    (0, false) => x.reduce_sum(keepdims(1)),
                    (1, false) => x.reduce_prod(keepdims(1)),
                    (0 | 2, _) => x.reduce_max(keepdims(1)),
                    _ => x.reduce_min(keepdims(1)),
                };
                (g.apply(Elemwise::new(ScalarOp::Subtract), &[&y, &r]).remove(0), p)
            }
            _ => {
                outputs.push(x);
                continue;
            }
        };
        pools[into].push(result);
    }
    for pool in &pools {
        if pool.len() > 1 {
            outputs.push(pool.last().cloned().expect("non-empty"));
        }
    }
    if outputs.is_empty() {
        outputs.push(inputs[0].clone());
    }
    (inputs, outputs)
}

fn check_mixed(steps: &[Step], lengths: &[usize], picks: &[u8]) -> Result<(), String> {
    let g = Graph::new();
    let (inputs, outputs) = mixed_graph(&g, steps);
    let ins: Vec<&Var> = inputs.iter().collect();
    let outs: Vec<&Var> = outputs.iter().collect();
    let values: Vec<RaggedTensor> = MIXED.iter().enumerate().map(|(k, &d)| column(d, lengths, picks, 5 * k)).collect();
    run_both(&g, &ins, &outs, &values, Strictness::ExactResults)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn mixed_dtype_graphs_are_lowered_and_agree_exactly(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 1..12),
        lengths in prop::collection::vec(0usize..19, 0..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let result = check_mixed(&steps, &lengths, &picks);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

#[test]
fn mixed_dtype_composites_become_one_jit_kernel() {
    // `where(y > 0, y, 0.0)` of `y = cast(n, float32) * x`: one composite mixing int32, float32
    // and bool, compiled to one kernel.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let n = g.input("n", TensorType::ragged(DType::I32, 1));
    let y = n.cast(DType::F32) * &x;
    let zero = y.scalar_like(0.0);
    let positive = g.apply(Elemwise::new(ScalarOp::Greater), &[&y, &zero]).remove(0);
    let scaled = g.apply(Elemwise::new(ScalarOp::Where), &[&positive, &y, &zero]).remove(0);
    let f = g.compile_with(&[&x, &n], &[&scaled], Mode::FastRun).unwrap();
    assert_eq!(f.jit_kernels(), 1, "{}", f.debugprint());
    let fg = f.fgraph();
    let kernels = fg
        .toposort()
        .unwrap()
        .into_iter()
        .filter(|&node| fg.node(node).is_some_and(|a| a.op.as_any().is::<JitKernel>()))
        .count();
    assert_eq!(kernels, 1, "{}", f.debugprint());
    let xv = ragged![[1.5, -2.0, f32::NAN], [], [0.25, -0.0]].unwrap();
    let nv = ragged![[2, 3, 4], [], [-8, 5]].unwrap();
    let got = f.call(&[xv.clone(), nv.clone()]).unwrap().remove(0);
    let reference = g.compile_with(&[&x, &n], &[&scaled], Mode::FastCompile).unwrap();
    let want = reference.call(&[xv, nv]).unwrap().remove(0);
    identical(&want, &got).unwrap();
}

#[test]
fn integer_division_by_zero_in_a_kernel_names_the_op_and_the_row() {
    for dtype in [DType::I8, DType::I32, DType::U64] {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(dtype, 1));
        let y = g.input("y", TensorType::ragged(dtype, 1));
        let q = g.apply(Elemwise::new(ScalarOp::FloorMod), &[&(&x + &y), &y]).remove(0);
        let f = g.compile_with(&[&x, &y], &[&q], Mode::FastRun).unwrap();
        assert_eq!(f.jit_kernels(), 1, "{}", f.debugprint());
        let xv = ragged![[7, 9], [4], [5, 6, 7]].unwrap().cast(dtype).unwrap();
        let yv = ragged![[2, 3], [1], [1, 0, 1]].unwrap().cast(dtype).unwrap();
        let e = f.call(&[xv.clone(), yv.clone()]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let text = e.to_string();
        assert!(text.contains("floormod") && text.contains("row 2"), "{dtype}: {text}");
        let interpreter = g.compile_with(&[&x, &y], &[&q], Mode::FastCompile).unwrap();
        let want = interpreter.call(&[xv, yv]).unwrap_err();
        assert_eq!(want.kind(), e.kind());
    }
}

#[test]
fn comparisons_and_where_in_one_dtype_graphs_run_in_vector_kernels() {
    // With p = x * y, m = minimum(p, z): `where((p > z & !(p == x)) ^ (m < y), p, m)` — one
    // composite (every op reads an earlier one) whose bools stay inside, so the kernel runs
    // vectors (bools as lane masks) and a scalar tail, both exactly the reference.
    for dtype in [DType::F32, DType::F64, DType::I32, DType::I64] {
        let g = Graph::new();
        let [x, y, z] = ["x", "y", "z"].map(|n| g.input(n, TensorType::ragged(dtype, 1)));
        let op = |op: ScalarOp, args: &[&Var]| g.apply(Elemwise::new(op), args).remove(0);
        let p = op(ScalarOp::Multiply, &[&x, &y]);
        let greater = op(ScalarOp::Greater, &[&p, &z]);
        let equal = op(ScalarOp::Equal, &[&p, &x]);
        let not_equal = op(ScalarOp::LogicalNot, &[&equal]);
        let both = op(ScalarOp::LogicalAnd, &[&greater, &not_equal]);
        let m = op(ScalarOp::Minimum, &[&p, &z]);
        let less = op(ScalarOp::Less, &[&m, &y]);
        let cond = op(ScalarOp::LogicalXor, &[&both, &less]);
        let out = op(ScalarOp::Where, &[&cond, &p, &m]);
        let f = g.compile_with(&[&x, &y, &z], &[&out], Mode::FastRun).unwrap();
        let fg = f.fgraph();
        let vectorized: Vec<bool> = fg
            .toposort()
            .unwrap()
            .into_iter()
            .filter_map(|n| fg.node(n)?.op.as_any().downcast_ref::<JitKernel>().map(|k| k.spec().simd().is_some()))
            .collect();
        assert_eq!(vectorized, [true], "{dtype}: {}", f.debugprint());
        let picks: Vec<u8> = (0..=255).collect();
        let lengths = [13, 0, 29, 3, 64, 1];
        for shift in [0, 3, 17] {
            let inputs: Vec<RaggedTensor> = (0..3).map(|k| column(dtype, &lengths, &picks, shift + 5 * k)).collect();
            run_both(&g, &[&x, &y, &z], &[&out], &inputs, Strictness::Exact).unwrap();
        }
    }
}

#[test]
fn a_row_kernel_keeps_an_expensive_reduction_argument_only_in_an_output_of_its_dtype() {
    // e = expm1(x) is reduced and read by a uint8 output: the row kernel must not keep the
    // float64 values of e in the uint8 output's buffer (it would overflow it) — it recomputes.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F64, 1));
    let e = g.apply(Elemwise::new(ScalarOp::Expm1), &[&x]).remove(0);
    let centered = &e - e.reduce_max(keepdims(1));
    let out = centered.cast(DType::U8);
    let lengths: Vec<usize> = (0..64).map(|i| (i * 37) % 50).collect();
    let picks: Vec<u8> = (0..=255).collect();
    let input = column(DType::F64, &lengths, &picks, 0);
    run_both(&g, &[&x], &[&out], &[input], Strictness::Exact).unwrap();
}

/// Fused `sin` / `cos` kernels take the platform's value only in the lanes beyond the
/// polynomial's range, so every element's bits depend on its own argument alone and equal
/// `ragtime_vmath`'s plain functions (what the interpreter is to call), big and small
/// arguments mixed in one vector included.
#[test]
fn fused_trig_equals_plain_per_element() {
    let xs: Vec<f64> = (0..4099)
        .map(|i| if i % 3 == 0 { 3.0e9 + f64::from(i) * 1.0e7 } else { f64::from(i) * 0.37 - 700.0 })
        .collect();
    for op in [ScalarOp::Sin, ScalarOp::Cos] {
        for dtype in [DType::F32, DType::F64] {
            let g = Graph::new();
            let x = g.input("x", TensorType::dense(dtype, &[None]));
            let y = g.apply(Elemwise::new(op), &[&x]).remove(0);
            let f = g.compile_with(&[&x], &[&y], Mode::FastRun).unwrap();
            assert_eq!(f.jit_kernels(), 1, "{}", f.debugprint());
            let (input, want): (DenseTensor, Vec<u64>) = match dtype {
                DType::F32 => {
                    let v: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
                    let plain = if op == ScalarOp::Sin { ragtime_vmath::sin_f32 } else { ragtime_vmath::cos_f32 };
                    let want = v.iter().map(|&x| u64::from(plain(x).to_bits())).collect();
                    (DenseTensor::vector(v), want)
                }
                _ => {
                    let plain = if op == ScalarOp::Sin { ragtime_vmath::sin_f64 } else { ragtime_vmath::cos_f64 };
                    let want = xs.iter().map(|&x| plain(x).to_bits()).collect();
                    (DenseTensor::vector(xs.clone()), want)
                }
            };
            let got = f.call(&[RaggedTensor::dense(input)]).unwrap().remove(0);
            let got: Vec<u64> = match dtype {
                DType::F32 => got.flat_slice::<f32>().unwrap().iter().map(|v| u64::from(v.to_bits())).collect(),
                _ => got.flat_slice::<f64>().unwrap().iter().map(|v| v.to_bits()).collect(),
            };
            let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            assert_eq!(bad, 0, "{op:?} {dtype:?}: {bad} elements differ from the plain function");
        }
    }
}
