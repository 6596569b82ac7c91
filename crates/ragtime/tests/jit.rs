//! The JIT against the reference interpreter: random fused graphs on random ragged data (NaN,
//! ±inf, ±0, empty rows, zero rows, one long row), float32 and float64, one and several threads;
//! output buffers recycled between calls; the kernel cache shared by functions. The random graphs
//! must give the interpreter's bits unless they sum over rows (see `reassociates`).

use proptest::prelude::*;
use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor};

const SPECIAL: [f64; 12] =
    [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 1e-3, 7.0, 30.0];

/// `SPECIAL` with every value a short binary fraction, for graphs that sum over rows: sums of
/// these are exact in any order, so a sum that cancels (`0.5 + 1e-3 - 1.25 - 1.25 + 2 + 1e-3`)
/// cannot turn the last-bit difference of a reassociated sum into a large relative one.
const DYADIC: [f64; 12] =
    [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 0.001953125, 7.0, 30.0];

/// One random step: (what, operand picks).
type Step = (u8, u8, u8);

/// Builds a graph of elementwise ops and row reductions over x, z (ragged) and a per-row value.
fn build(g: &Graph, dtype: DType, steps: &[Step]) -> (Vec<Var>, Vec<Var>) {
    let x = g.input("x", TensorType::ragged(dtype, 1));
    let z = g.input("z", TensorType::ragged(dtype, 1));
    let mut ragged = vec![x.clone(), z.clone()];
    let mut per_row: Vec<Var> = vec![x.reduce_max(keepdims(1))];
    let mut outputs = Vec::new();
    for &(what, a, b) in steps {
        let r = |k: u8| ragged[k as usize % ragged.len()].clone();
        let p = |k: u8| per_row[k as usize % per_row.len()].clone();
        let input = |k: u8| ragged[k as usize % 2].clone();
        let v = match what % 27 {
            0 => r(a) + r(b),
            1 => r(a) - p(b),
            2 => r(a) * r(b),
            3 => r(a) / p(b),
            4 => r(a).maximum(&r(b)),
            5 => r(a) * 2.0 + 1.0,
            6 => r(a).exp(),
            7 => r(a).tanh(),
            8 => r(a).sigmoid(),
            9 => r(a).abs().sqrt(),
            12 => r(a).minimum(&p(b)),
            // Ill-conditioned (sin of a large value, log near 1: `log(sigmoid(x))` for large x)
            // and discontinuous (floor, round) functions read only the inputs: applied to a
            // computed value, a last-bit difference of the JIT's polynomial math could
            // legitimately change their result by more than the tolerance.
            13 => input(a).log(),
            14 => input(a).sin(),
            15 => input(a).cos(),
            16 => r(a).abs().pow(&r(b)),
            17 => input(a).floor() + input(b).ceil(),
            18 => input(a).round(),
            19 => input(a).floordiv(&input(b)),
            20 => -r(a).square(),
            22 => r(a).reciprocal() + r(b).abs().rsqrt(),
            23 => r(a).softsign() * r(b).squared_difference(&p(a)),
            24 => input(a).rint(),
            21 => {
                per_row.push(r(a).reduce_prod(keepdims(1)));
                continue;
            }
            // Maps of per-row values (a layer norm's `rsqrt(variance)`): computed once per row
            // inside the row kernel when only its elements read them.
            25 => {
                per_row.push((p(a) * p(b)).abs().sqrt() + 1.0);
                continue;
            }
            26 => {
                per_row.push(p(a).tanh() - p(b));
                continue;
            }
            10 => {
                per_row.push(match b % 4 {
                    0 => r(a).reduce_sum(keepdims(1)),
                    1 => r(a).reduce_mean(keepdims(1)),
                    2 => r(a).reduce_max(keepdims(1)),
                    _ => r(a).reduce_min(keepdims(1)),
                });
                continue;
            }
            _ => {
                outputs.push(r(a).reduce_sum(1));
                if b % 2 == 1 {
                    // The same sum in both shapes: one reduction of the kernel, two outputs.
                    outputs.push(r(a).reduce_sum(keepdims(1)));
                }
                continue;
            }
        };
        ragged.push(v);
    }
    outputs.push(ragged.last().cloned().expect("x"));
    (vec![x, z], outputs)
}

fn data(dtype: DType, lengths: &[usize], picks: &[u8], shift: usize) -> RaggedTensor {
    data_from(&SPECIAL, dtype, lengths, picks, shift)
}

fn data_from(pool: &[f64], dtype: DType, lengths: &[usize], picks: &[u8], shift: usize) -> RaggedTensor {
    let total: usize = lengths.iter().sum();
    let values: Vec<f64> = (0..total)
        .map(|i| pool[picks.get((i + shift) % picks.len().max(1)).copied().unwrap_or(i as u8) as usize % pool.len()])
        .collect();
    let flat = match dtype {
        DType::F32 => DenseTensor::vector(values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        _ => DenseTensor::vector(values),
    };
    let lengths: Vec<i64> = lengths.iter().map(|&l| l as i64).collect();
    RaggedTensor::from_row_lengths(flat, &lengths).expect("valid lengths")
}

fn check(
    steps: &[Step],
    dtype: DType,
    lengths: &[usize],
    picks: &[u8],
    threads: usize,
) -> std::result::Result<(), String> {
    let g = Graph::new();
    let (inputs, outputs) = build(&g, dtype, steps);
    let ins: Vec<&Var> = inputs.iter().collect();
    let outs: Vec<&Var> = outputs.iter().collect();
    let jit =
        g.compile_with(&ins, &outs, CompileOptions::from(Mode::FastRun).threads(threads)).map_err(|e| e.to_string())?;
    let reference = g.compile_with(&ins, &outs, Mode::FastCompile).map_err(|e| e.to_string())?;
    let exact = !reassociates(steps);
    let pool: &[f64] = if exact { &SPECIAL } else { &DYADIC };
    let x = data_from(pool, dtype, lengths, picks, 0);
    let z = x
        .with_flat_values(data_from(pool, dtype, lengths, picks, 5).flat_values().clone())
        .map_err(|e| e.to_string())?;
    let want = reference.call(&[x.clone(), z.clone()]);
    let got = jit.call(&[x, z]);
    agree(want, got, exact, &jit)
}

/// True when the graph has a sum, mean or product over rows: the only place FastRun's kernels
/// may differ from the interpreter (their vector folds add lanes separately, then combine them).
/// Everything else must give the interpreter's bits: the math functions of both modes come from
/// `ragtime-vmath`, and max / min folds are exact.
fn reassociates(steps: &[Step]) -> bool {
    steps.iter().any(|&(what, _, b)| match what % 27 {
        10 => b % 4 < 2,
        11 | 21 => true,
        _ => false,
    })
}

/// Equal bits, value by value (any NaN for a NaN): `-0.0` and `0.0` differ.
fn same_bits(a: &RaggedTensor, b: &RaggedTensor) -> bool {
    let bits = |t: &RaggedTensor| -> Option<Vec<u64>> {
        match t.dtype() {
            DType::F32 => Some(
                t.flat_slice::<f32>()?
                    .iter()
                    .map(|v| if v.is_nan() { u64::MAX } else { u64::from(v.to_bits()) })
                    .collect(),
            ),
            DType::F64 => {
                Some(t.flat_slice::<f64>()?.iter().map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() }).collect())
            }
            _ => None,
        }
    };
    a.equals(b) && bits(a) == bits(b)
}

/// The JIT's results against the interpreter's: the same bits (`exact`) or within the conformance
/// tolerance, or errors of the same kind.
fn agree(
    want: ragtime::Result<Vec<RaggedTensor>>,
    got: ragtime::Result<Vec<RaggedTensor>>,
    exact: bool,
    jit: &Function,
) -> std::result::Result<(), String> {
    match (want, got) {
        (Ok(w), Ok(o)) => {
            for (k, (a, b)) in w.iter().zip(&o).enumerate() {
                let differs = if exact {
                    (!same_bits(a, b)).then(|| format!("JIT {b}, reference {a} (bits differ)"))
                } else {
                    compare(a, b).err()
                };
                if let Some(why) = differs {
                    return Err(format!("output {k}: {why}\n{}", jit.debugprint()));
                }
            }
            Ok(())
        }
        (Err(a), Err(b)) if a.kind() == b.kind() => Ok(()),
        (w, o) => Err(format!("interpreter {w:?}, JIT {o:?}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn jit_kernels_agree_with_the_interpreter(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..10),
        lengths in prop::collection::vec(0usize..19, 0..9),
        long in prop::option::of((0usize..9, 1_025usize..1_200)),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        f64s in any::<bool>(),
    ) {
        let dtype = if f64s { DType::F64 } else { DType::F32 };
        // A row of more than 1,024 values makes its block of multi-pass row kernels go row by
        // row instead of flat (see `emit_rows`): both paths in one call. Only for graphs that
        // keep the interpreter's bits: the interpreter sums up to 1,024 values in order and the
        // JIT in vector lanes, and over a thousand non-dyadic terms (the log or exp of an input)
        // the two orders legitimately differ by about n roundings, more than the tolerance.
        // `long_row_sums_stay_within_the_summation_error_bound` holds both to that bound.
        let mut lengths = lengths;
        if let Some((at, len)) = long.filter(|_| !reassociates(&steps)) {
            lengths.insert(at.min(lengths.len()), len);
        }
        prop_assert!(check(&steps, dtype, &lengths, &picks, 1).is_ok(), "{}", check(&steps, dtype, &lengths, &picks, 1).unwrap_err());
    }
}

#[test]
fn long_row_sums_stay_within_the_summation_error_bound() {
    // Rows of 1,000 to 5,000 values (over `FOLD_BLOCK`, so the interpreter folds halves and the
    // JIT goes row by row) of non-dyadic terms: each mode's sum, mean and softmax denominator must
    // be within the bound of recursive summation, n·u·Σ|t|, of the float64 sum of the same
    // float32 terms, whatever order each mode adds them in.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let terms = [x.log(), x.exp(), x.tanh() * 3.0];
    let outputs: Vec<Var> = terms.iter().flat_map(|t| [t.reduce_sum(1), t.reduce_mean(1)]).collect();
    let outs: Vec<&Var> = outputs.iter().collect();
    let lengths: Vec<usize> = vec![1_000, 1_025, 2_048, 4_999, 3, 0];
    let values: Vec<f32> =
        (0..lengths.iter().sum::<usize>()).map(|i| 0.25 + ((i * 7919) % 1000) as f32 / 250.0).collect();
    let row_lengths: Vec<i64> = lengths.iter().map(|&l| l as i64).collect();
    let v = RaggedTensor::from_row_lengths(DenseTensor::vector(values.clone()), &row_lengths).unwrap();
    let term_fns: [fn(f32) -> f32; 3] = [f32::ln, f32::exp, |v| v.tanh() * 3.0];
    for mode in [CompileOptions::from(Mode::FastRun), CompileOptions::from(Mode::FastCompile)] {
        let f = g.compile_with(&[&x], &outs, mode).unwrap();
        let got = f.call(std::slice::from_ref(&v)).unwrap();
        for (k, term) in term_fns.iter().enumerate() {
            let (sums, means) = (got[2 * k].flat_slice::<f32>().unwrap(), got[2 * k + 1].flat_slice::<f32>().unwrap());
            let mut start = 0;
            for (r, &n) in lengths.iter().enumerate() {
                // The terms as each mode computes them (vmath's functions round like libm's to within
                // a few ulps): their error is the tolerance's part, the order's is the bound's.
                let row: Vec<f64> = values[start..start + n].iter().map(|&v| f64::from(term(v))).collect();
                start += n;
                let exact: f64 = row.iter().sum();
                let bound = (n as f64 + 4.0) * f64::from(f32::EPSILON) * row.iter().map(|t| t.abs()).sum::<f64>();
                let sum = f64::from(sums[r]);
                assert!(
                    (sum - exact).abs() <= bound,
                    "{:?}: term {k}, row {r} of {n} values: sum {sum}, exact {exact}, bound {bound}\n{}",
                    f.mode(),
                    f.debugprint()
                );
                if n > 0 {
                    let mean = f64::from(means[r]);
                    assert!(
                        (mean - exact / n as f64).abs() <= bound / n as f64 + f64::from(f32::EPSILON) * mean.abs(),
                        "{:?}: term {k}, row {r} of {n} values: mean {mean}, exact {}",
                        f.mode(),
                        exact / n as f64
                    );
                }
            }
        }
    }
}

#[test]
fn the_workloads_are_compiled_to_jit_kernels() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let y = &e / e.reduce_sum(keepdims(1));
    let f = compile(&[&x], &[&y]).unwrap();
    assert_eq!(f.jit_kernels(), 1, "{}", f.debugprint());
    assert!(f.debugprint().starts_with("JitRowKernel{"), "{}", f.debugprint());
}

#[test]
fn a_ragged_softmax_is_one_jit_row_kernel_within_tolerance_of_the_op() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let y = x.softmax();
    let f = compile(&[&x], &[&y]).unwrap();
    assert_eq!(f.jit_kernels(), 1, "{}", f.debugprint());
    assert!(f.debugprint().starts_with("JitRowKernel{"), "{}", f.debugprint());
    let reference = g.compile_with(&[&x], &[&y], Mode::FastCompile).unwrap();
    let lengths: Vec<usize> = (0..2_000).map(|i| (i * 7919) % 21).collect();
    let picks: Vec<u8> = (0..64).map(|i| (i * 11) as u8).collect();
    let v = data(DType::F32, &lengths, &picks, 0);
    agree(reference.call(std::slice::from_ref(&v)), f.call(&[v]), false, &f).unwrap();
}

#[test]
fn long_rows_and_many_threads_agree_with_one_thread() {
    // One long row, many short and empty rows: over the per-thread threshold, so the work is
    // split across threads by value count.
    let mut lengths = vec![100_000usize];
    lengths.extend((0..60_000).map(|i| (i * 7919) % 21));
    let picks: Vec<u8> = (0..=255).collect();
    for steps in [vec![(1u8, 0u8, 0u8), (6, 2, 0), (10, 3, 0), (3, 3, 1)], vec![(7, 0, 0), (0, 2, 1), (11, 3, 0)]] {
        for threads in [1, 2, 4] {
            check(&steps, DType::F32, &lengths, &picks, threads).unwrap();
        }
    }
}

#[test]
fn zero_rows_and_all_empty_rows() {
    for lengths in [vec![], vec![0, 0, 0]] {
        check(&[(10, 0, 0), (3, 0, 1), (11, 2, 0)], DType::F32, &lengths, &[1, 2, 3], 2).unwrap();
    }
}

#[test]
fn recycled_buffers_are_never_ones_the_caller_still_holds() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let y = &x * 2.0 + 1.0;
    let f = compile(&[&x], &[&y]).unwrap();
    let reference = g.compile_with(&[&x], &[&y], Mode::FastCompile).unwrap();
    let expected = |v: &RaggedTensor| reference.call(std::slice::from_ref(v)).unwrap().remove(0);
    let one = ragged![[1.0, 2.0], [3.0]].unwrap();
    let two = ragged![[10.0, 20.0], [30.0]].unwrap();
    let first = f.call(std::slice::from_ref(&one)).unwrap();
    let kept = first[0].clone(); // shares the buffer: recycling must not take it
    f.recycle(first);
    let second = f.call(std::slice::from_ref(&two)).unwrap();
    assert!(kept.equals(&expected(&one)), "a held result must not be overwritten: {kept}");
    assert!(second[0].equals(&expected(&two)), "{}", second[0]);
    // A result nobody else holds is reused, and the values stay right.
    f.recycle(second);
    let third = f.call(std::slice::from_ref(&one)).unwrap();
    assert!(third[0].equals(&expected(&one)), "{}", third[0]);
}

#[test]
fn functions_share_compiled_kernels() {
    let build = || {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F64, 1));
        let y = (&x * 3.0).tanh() - &x;
        compile(&[&x], &[&y]).unwrap()
    };
    let (first, second) = (build(), build());
    let kernel = |f: &Function| {
        let fg = f.fgraph();
        fg.toposort()
            .unwrap()
            .into_iter()
            .find_map(|n| {
                fg.node(n)
                    .unwrap()
                    .op
                    .as_any()
                    .downcast_ref::<ragtime::ir::jit::JitKernel>()
                    .map(|k| k.kernel().address())
            })
            .expect("a JIT kernel")
    };
    assert_eq!(kernel(&first), kernel(&second), "the second function reuses the cached kernel");
    let v: RaggedTensor = RaggedTensor::from_row_lengths(DenseTensor::vector(vec![0.5f64, -1.0]), &[2, 0]).unwrap();
    assert!(first.call(std::slice::from_ref(&v)).unwrap()[0].equals(&second.call(&[v]).unwrap()[0]));
}

/// The plans of the workloads' kernels as the optimizer builds them are the ones
/// `crates/jit/tests/plans` holds (written there from hand-built specs), for a CPU with the bulk
/// functions; each kernel's own plan is the plan of its spec for this machine.
#[test]
fn the_workloads_kernels_have_the_golden_plans() {
    use ragtime::ir::jit::{JitKernel, KernelPlan, Target};
    let ragged = |g: &Graph, name: &str| g.input(name, TensorType::ragged(DType::F32, 1));
    let w1 = {
        let g = Graph::new();
        let (x, z) = (ragged(&g, "x"), ragged(&g, "z"));
        let y = (&x * 2.0 + 1.0).tanh() * &z - &x;
        compile(&[&x, &z], &[&y]).unwrap()
    };
    let w4 = {
        let g = Graph::new();
        let x = ragged(&g, "x");
        let e = (&x - x.reduce_max(keepdims(1))).exp();
        let y = &e / e.reduce_sum(keepdims(1));
        compile(&[&x], &[&y]).unwrap()
    };
    let golden = [
        (w1, include_str!("../../jit/tests/plans/w1_elementwise.txt")),
        (w4, include_str!("../../jit/tests/plans/w4_row_softmax.txt")),
    ];
    for (f, want) in golden {
        let fg = f.fgraph();
        let kernels: Vec<&JitKernel> = fg
            .toposort()
            .unwrap()
            .into_iter()
            .filter_map(|n| fg.node(n).unwrap().op.as_any().downcast_ref::<JitKernel>())
            .collect();
        assert_eq!(kernels.len(), 1, "one fused kernel");
        let spec = kernels[0].spec();
        assert_eq!(KernelPlan::new(spec, Target::with_bulk(true)).to_string(), want);
        assert_eq!(kernels[0].plan(), &KernelPlan::new(spec, Target::host()));
    }
}

#[test]
fn pow_over_a_grid_of_special_and_huge_values_matches_the_reference() {
    // Found by the property test: pow(0.5, 1e300) gave inf (the rounding error of the huge
    // product y * ln x leaked past exp's clamp).
    let special =
        [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 1e-3, 7.0, 30.0, 1e300, 1e-300];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &a in &special {
        for &b in &special {
            xs.push(a);
            ys.push(b);
        }
    }
    for dtype in [DType::F32, DType::F64] {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(dtype, 1));
        let y = g.input("y", TensorType::ragged(dtype, 1));
        let out = x.abs().pow(&y) + x.pow(&y);
        let jit = compile(&[&x, &y], &[&out]).unwrap();
        let reference = g.compile_with(&[&x, &y], &[&out], Mode::FastCompile).unwrap();
        let tensor = |v: &[f64]| {
            let flat = match dtype {
                DType::F32 => DenseTensor::vector(v.iter().map(|&a| a as f32).collect::<Vec<_>>()),
                _ => DenseTensor::vector(v.to_vec()),
            };
            RaggedTensor::from_row_lengths(flat, &[v.len() as i64]).unwrap()
        };
        let xv = tensor(&xs);
        let yv = xv.with_flat_values(tensor(&ys).flat_values().clone()).unwrap();
        let (got, want) = (jit.call(&[xv.clone(), yv.clone()]).unwrap(), reference.call(&[xv, yv]).unwrap());
        if let Err(why) = compare(&want[0], &got[0]) {
            panic!("{dtype}: {why}");
        }
    }
}

const INTS: [i64; 10] = [0, 1, -1, 7, -13, 1 << 20, i64::MAX, i64::MIN, i32::MAX as i64, i32::MIN as i64];

/// Integer graphs: wrapping arithmetic, extremes and bitwise ops must match the reference
/// exactly.
fn check_ints(steps: &[Step], dtype: DType, lengths: &[usize], picks: &[u8]) -> std::result::Result<(), String> {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(dtype, 1));
    let z = g.input("z", TensorType::ragged(dtype, 1));
    let mut ragged = vec![x.clone(), z.clone()];
    let mut per_row: Vec<Var> = vec![x.reduce_min(keepdims(1))];
    let mut outputs = Vec::new();
    for &(what, a, b) in steps {
        let r = |k: u8| ragged[k as usize % ragged.len()].clone();
        let p = |k: u8| per_row[k as usize % per_row.len()].clone();
        let v = match what % 13 {
            0 => r(a) + r(b),
            1 => r(a) - p(b),
            2 => r(a) * r(b),
            3 => r(a).maximum(&p(b)),
            4 => r(a).minimum(&r(b)),
            5 => -r(a),
            6 => r(a).abs(),
            7 => r(a).square(),
            8 => r(a).bitwise_and(&r(b)) ^ r(b),
            9 => !(r(a) | r(b)) + r(a).squared_difference(&r(b)),
            10 => r(a).round() * 3,
            11 => {
                per_row.push(match b % 4 {
                    0 => r(a).reduce_sum(keepdims(1)),
                    1 => r(a).reduce_prod(keepdims(1)),
                    2 => r(a).reduce_max(keepdims(1)),
                    _ => r(a).reduce_min(keepdims(1)),
                });
                continue;
            }
            _ => {
                outputs.push(r(a).reduce_sum(1));
                if b % 2 == 1 {
                    // The same sum in both shapes: one reduction of the kernel, two outputs.
                    outputs.push(r(a).reduce_sum(keepdims(1)));
                }
                continue;
            }
        };
        ragged.push(v);
    }
    outputs.push(ragged.last().cloned().expect("x"));
    let outs: Vec<&Var> = outputs.iter().collect();
    let jit = compile(&[&x, &z], &outs).map_err(|e| e.to_string())?;
    // Every fused op of an int32 / int64 graph is lowered.
    let fg = jit.fgraph();
    for node in fg.toposort().map_err(|e| e.to_string())? {
        let name = fg.node(node).map(|a| a.op.name()).unwrap_or_default();
        if name.starts_with("Composite") || name.starts_with("Row") {
            return Err(format!("{name} was not lowered:\n{}", jit.debugprint()));
        }
    }
    let reference = g.compile_with(&[&x, &z], &outs, Mode::FastCompile).map_err(|e| e.to_string())?;
    let column = |shift: usize| -> RaggedTensor {
        let total: usize = lengths.iter().sum();
        let v: Vec<i64> = (0..total).map(|i| INTS[picks[(i + shift) % picks.len()] as usize % INTS.len()]).collect();
        let flat = match dtype {
            DType::I32 => DenseTensor::vector(v.iter().map(|&a| a as i32).collect::<Vec<_>>()),
            _ => DenseTensor::vector(v),
        };
        RaggedTensor::from_row_lengths(flat, &lengths.iter().map(|&l| l as i64).collect::<Vec<_>>()).expect("lengths")
    };
    let xv = column(0);
    let zv = xv.with_flat_values(column(3).flat_values().clone()).map_err(|e| e.to_string())?;
    let (want, got) = (reference.call(&[xv.clone(), zv.clone()]), jit.call(&[xv, zv]));
    agree(want, got, true, &jit)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn integer_jit_kernels_match_the_interpreter_exactly(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..10),
        lengths in prop::collection::vec(0usize..19, 0..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        wide in any::<bool>(),
    ) {
        let dtype = if wide { DType::I64 } else { DType::I32 };
        let result = check_ints(&steps, dtype, &lengths, &picks);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

#[test]
fn concurrent_calls_give_the_sequential_results() {
    // One compiled function (JIT kernels on 2 threads, shared kernel cache and buffer pool) called
    // from several threads at once, each recycling its results: every call must equal the
    // sequential answer for its own input.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let y = &e / e.reduce_sum(keepdims(1));
    let f = std::sync::Arc::new(
        g.compile_with(&[&x], &[&y, &x.reduce_mean(1)], CompileOptions::from(Mode::FastRun).threads(2)).unwrap(),
    );
    let inputs: Vec<RaggedTensor> = (0..4)
        .map(|t| {
            let lengths: Vec<usize> = (0..30_000).map(|i| (i * 7919 + t * 13) % 21).collect();
            let picks: Vec<u8> = (0..64).map(|i| (i * 7 + t) as u8).collect();
            data(DType::F32, &lengths, &picks, t)
        })
        .collect();
    let sequential: Vec<Vec<RaggedTensor>> = inputs.iter().map(|v| f.call(std::slice::from_ref(v)).unwrap()).collect();
    std::thread::scope(|s| {
        for (input, want) in inputs.iter().zip(&sequential) {
            let f = f.clone();
            s.spawn(move || {
                for _ in 0..10 {
                    let got = f.call(std::slice::from_ref(input)).unwrap();
                    for (a, b) in want.iter().zip(&got) {
                        assert!(a.equals(b), "a concurrent call differs from the sequential one");
                    }
                    f.recycle(got);
                }
            });
        }
    });
}

#[test]
fn hashing_joins_and_embedding_bags_split_across_threads_give_the_one_thread_bits() {
    // Enough rows and words that `parallel` splits the hashing, the string join and the fused
    // `GatherReduce` (at least 2^14 items per thread).
    let g = Graph::new();
    let words = g.input("words", TensorType::ragged(DType::String, 1));
    let table = g.input("table", TensorType::dense(DType::F32, &[Some(64), Some(4)]));
    let ids = words.to_hash_bucket_fast(64);
    let bag = table.embedding_lookup(&ids).reduce_mean(1);
    let joined = words.join(&[&words], "+");
    let rows: Vec<Vec<String>> =
        (0..50_000).map(|r| (0..(r * 7919) % 5).map(|k| format!("w{}", (r * 31 + k * 17) % 997)).collect()).collect();
    let words_v = RaggedTensor::from_nested(rows).unwrap();
    let table_v: RaggedTensor =
        DenseTensor::from_vec(vec![64, 4], (0..256).map(|k| (k as f32 * 0.37).sin()).collect::<Vec<f32>>())
            .unwrap()
            .into();
    let inputs = [words_v, table_v];
    let run = |threads: usize| {
        let f = g
            .compile_with(
                &[&words, &table],
                &[&ids, &bag, &joined],
                CompileOptions::from(Mode::FastRun).threads(threads),
            )
            .unwrap();
        assert!(f.debugprint().contains("GatherReduce"), "{}", f.debugprint());
        f.call(&inputs).unwrap()
    };
    let (one, two) = (run(1), run(2));
    for (k, (a, b)) in one.iter().zip(&two).enumerate() {
        assert!(a.equals(b), "output {k}: 2 threads gave {b}, 1 thread {a}");
    }
    let plain =
        g.compile_with(&[&words, &table], &[&ids, &bag, &joined], Mode::FastCompile).unwrap().call(&inputs).unwrap();
    for (k, (a, b)) in plain.iter().zip(&two).enumerate() {
        assert!(a.equals(b), "output {k}: the fused graph gave {b}, the unfused one {a}");
    }
}

#[test]
fn multi_pass_row_kernels_match_the_interpreter_for_every_row_count_and_thread_split() {
    // Kernels with several passes per row take the rows in blocks (see `emit_rows`): row
    // counts around the block size, and a range split across two threads at a row that is not
    // a block boundary, must all give the interpreter's results. Two reductions (the second
    // reads the first) and an element output that reads both.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let centered = &x - x.reduce_mean(keepdims(1));
    let spread = centered.square().reduce_sum(keepdims(1));
    let y = &centered / (spread + 1.0);
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let softmax = &e / e.reduce_sum(keepdims(1));
    let picks: Vec<u8> = (0..64).map(|i| (i * 11 + 3) as u8).collect();
    for threads in [1, 2] {
        let jit = g.compile_with(&[&x], &[&y, &softmax], CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
        assert!(jit.jit_kernels() >= 1, "expected JIT row kernels:\n{}", jit.debugprint());
        let reference = g.compile_with(&[&x], &[&y, &softmax], Mode::FastCompile).unwrap();
        let mut row_counts: Vec<usize> = (0..=19).collect();
        row_counts.push(100_003);
        for nrows in row_counts {
            let lengths: Vec<usize> = (0..nrows).map(|i| (i * 7919 + nrows) % 23).collect();
            let v = data(DType::F32, &lengths, &picks, nrows);
            if let Err(why) = agree(reference.call(std::slice::from_ref(&v)), jit.call(&[v]), false, &jit) {
                panic!("{nrows} rows on {threads} thread(s): {why}");
            }
        }
    }
}

#[test]
fn flat_and_row_by_row_blocks_give_every_row_the_same_bits() {
    // A block of rows (up to 32, or 8 when 32 hold too many values) holding at most 1,024
    // values runs its expensive passes flat over the block's values, with per-row values
    // expanded; a longer block goes row by row (see `emit_rows`). Row `i` must get the same bits either way: once in a tensor where long rows
    // make some blocks long, once in the same tensor without the long rows. Softmax (an
    // expensive reduction argument read again by the output), a row map reading a per-row
    // operand computed by another kernel, and a centered output (cheap arguments, expensive
    // output), in float32 and float64.
    for dtype in [DType::F32, DType::F64] {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(dtype, 1));
        let e = (&x - x.reduce_max(keepdims(1))).exp();
        let softmax = &e / e.reduce_sum(keepdims(1));
        let scale = x.reduce_prod(keepdims(1)).abs() + 1.0;
        let scaled = (&x / &scale).tanh() / (&x - x.reduce_min(keepdims(1)) + 0.5).reduce_sum(keepdims(1));
        let centered = &x - x.reduce_mean(keepdims(1));
        let normalized = &centered / (centered.square().reduce_sum(keepdims(1)) + 1.0).sqrt();
        let outputs = [&softmax, &scaled, &normalized];
        let rows: Vec<Vec<f64>> = (0..600usize)
            .map(|i| {
                // Long rows make blocks go row by row; medium ones make a block of up to 32
                // rows too big to be flat while its first 8 rows are not.
                let len = if i % 41 == 7 {
                    1_500 + i
                } else if i % 13 == 5 {
                    60 + i % 70
                } else {
                    (i * 7919) % 23
                };
                (0..len).map(|k| ((i * 31 + k * 17) % 1000) as f64 / 100.0 - 5.0).collect()
            })
            .collect();
        let tensor = |rows: &[&Vec<f64>]| {
            let lengths: Vec<i64> = rows.iter().map(|r| r.len() as i64).collect();
            let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
            let values = match dtype {
                DType::F32 => DenseTensor::vector(flat.iter().map(|&v| v as f32).collect::<Vec<_>>()),
                _ => DenseTensor::vector(flat),
            };
            RaggedTensor::from_row_lengths(values, &lengths).expect("valid lengths")
        };
        let all: Vec<&Vec<f64>> = rows.iter().collect();
        let short: Vec<&Vec<f64>> = rows.iter().filter(|r| r.len() < 1_000).collect();
        for threads in [1, 2] {
            let jit = g.compile_with(&[&x], &outputs, CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
            // One row kernel for all three (their reductions of `x` share the passes; the per-row
            // maps `|prod| + 1` and `sqrt(sum + 1)` are members computed once per row).
            assert!(jit.jit_kernels() >= 1, "expected JIT row kernels:\n{}", jit.debugprint());
            assert!(
                !jit.debugprint().contains("JitComposite"),
                "per-row maps stay in the kernel:\n{}",
                jit.debugprint()
            );
            let reference = g.compile_with(&[&x], &outputs, Mode::FastCompile).unwrap();
            let (with_long, without_long) = (tensor(&all), tensor(&short));
            let got_long = jit.call(std::slice::from_ref(&with_long)).unwrap();
            let got_short = jit.call(std::slice::from_ref(&without_long)).unwrap();
            if let Err(why) = agree(reference.call(&[with_long]), Ok(got_long.clone()), false, &jit) {
                panic!("{dtype} on {threads} thread(s), with long rows: {why}");
            }
            for (k, (a, b)) in got_long.iter().zip(&got_short).enumerate() {
                let (splits_a, splits_b) = (a.row_splits().unwrap(), b.row_splits().unwrap());
                let bits = |t: &RaggedTensor, range: std::ops::Range<usize>| -> Vec<u64> {
                    match dtype {
                        DType::F32 => {
                            t.flat_slice::<f32>().unwrap()[range].iter().map(|v| u64::from(v.to_bits())).collect()
                        }
                        _ => t.flat_slice::<f64>().unwrap()[range].iter().map(|v| v.to_bits()).collect(),
                    }
                };
                let short_rows = rows.iter().enumerate().filter(|(_, r)| r.len() < 1_000).map(|(i, _)| i);
                for (j, i) in short_rows.enumerate() {
                    let in_long = bits(a, splits_a[i] as usize..splits_a[i + 1] as usize);
                    let in_short = bits(b, splits_b[j] as usize..splits_b[j + 1] as usize);
                    assert_eq!(in_long, in_short, "{dtype}, {threads} thread(s), output {k}, row {i}: bits differ between a long block and a flat one");
                }
            }
        }
    }
}

/// `reduce_variance`, `reduce_std`, `reduce_logsumexp` along the ragged axis of `x`.
fn row_statistics(x: &Var, keepdims_too: bool) -> Vec<Var> {
    let mut out = vec![x.reduce_variance(1), x.reduce_std(-1), x.reduce_logsumexp(1)];
    if keepdims_too {
        out.extend([x.reduce_variance(keepdims(1)), x.reduce_std(keepdims(1)), x.reduce_logsumexp(keepdims(-1))]);
    }
    out
}

#[test]
fn row_statistics_run_as_jit_row_kernels() {
    for (name, pick) in [("reduce_variance", 0), ("reduce_std", 1), ("reduce_logsumexp", 2)] {
        for dtype in [DType::F32, DType::F64] {
            let g = Graph::new();
            let x = g.input("x", TensorType::ragged(dtype, 1));
            let y = row_statistics(&x, false).remove(pick);
            let f = compile(&[&x], &[&y]).unwrap();
            let printed = f.debugprint();
            // Each fused op heads one section under `Inner graphs:`.
            let inner = printed.split("Inner graphs:").nth(1).unwrap_or_default();
            // The statistic op is gone; its passes over each row are one JIT row kernel, with a
            // small per-row composite after it (std's sqrt, logsumexp's log + max).
            assert!(!printed.contains("ReduceVariance") && !printed.contains("ReduceStd"), "{name}: {printed}");
            assert!(!printed.contains("ReduceLogSumExp"), "{name}: {printed}");
            assert_eq!(inner.matches("\nJitRowKernel{").count(), 1, "{name} {dtype}: {printed}");
            // Row fusion does not absorb maps of reduction results yet: std's sqrt and
            // logsumexp's `log(s) + m` / `where(is_finite(m), .., m)` are O(rows) composites.
            let want_kernels = match name {
                "reduce_variance" => 1,
                "reduce_std" => 2,
                _ => 3,
            };
            assert_eq!(f.jit_kernels(), want_kernels, "{name} {dtype}: {printed}");
        }
    }
    // All three (and the keepdims forms) of one input share one row kernel.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let outs = row_statistics(&x, true);
    let f = compile(&[&x], &outs.iter().collect::<Vec<_>>()).unwrap();
    let printed = f.debugprint();
    let inner = printed.split("Inner graphs:").nth(1).unwrap_or_default();
    assert_eq!(inner.matches("\nJitRowKernel{").count(), 1, "{printed}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The expanded statistics against the ops themselves (`FastCompile` keeps them), within the
    /// conformance tolerance: random rows (empty, single values, NaN, ±inf, spread values).
    #[test]
    fn expanded_row_statistics_agree_with_the_ops(
        lengths in prop::collection::vec(0usize..19, 0..12),
        values in prop::collection::vec(prop_oneof![
            3 => -100.0f64..100.0,
            1 => prop::sample::select(SPECIAL.to_vec()),
        ], 0..250),
        f64s in any::<bool>(),
    ) {
        let dtype = if f64s { DType::F64 } else { DType::F32 };
        let total: usize = lengths.iter().sum();
        let flat: Vec<f64> = (0..total).map(|i| values.get(i).copied().unwrap_or(i as f64 * 0.37)).collect();
        let flat = match dtype {
            DType::F32 => DenseTensor::vector(flat.iter().map(|&v| v as f32).collect::<Vec<_>>()),
            _ => DenseTensor::vector(flat),
        };
        let row_lengths: Vec<i64> = lengths.iter().map(|&l| l as i64).collect();
        let v = RaggedTensor::from_row_lengths(flat, &row_lengths).unwrap();
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(dtype, 1));
        let outs = row_statistics(&x, true);
        let outs: Vec<&Var> = outs.iter().collect();
        let jit = g.compile_with(&[&x], &outs, Mode::FastRun).unwrap();
        let reference = g.compile_with(&[&x], &outs, Mode::FastCompile).unwrap();
        prop_assert!(!reference.debugprint().contains("JitRowKernel"));
        let result = agree(reference.call(std::slice::from_ref(&v)), jit.call(&[v]), false, &jit);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

/// The float32 row mean divides in float64 (`RowSum::mean`), and so does the JIT (`emit_mean`):
/// every row gets the quotient's bits, subnormal results and ties included (a multiplication
/// by a rounded reciprocal would not: -1.660719e-38 / 98 rounds the other way), at every length.
#[test]
fn float32_row_means_round_as_the_float64_division_bit_for_bit() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&x], &[&x.reduce_mean(1)]).unwrap();
    assert_eq!(f.jit_kernels(), 1, "{}", f.debugprint());
    // Row sums: special values, boundaries of the normal range, the subnormal tie
    // -1.660719e-38 / 98 (where `s * RN(1/n)` rounds the other way), and pseudo-random bit
    // patterns over all finite floats.
    let mut sums = vec![
        1.0f32,
        -3.0,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE * 1.5,
        1.0e-45,
        -1.660719e-38,
        0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    while sums.len() < 120 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let s = f32::from_bits(state as u32);
        if s.is_finite() {
            sums.push(s);
        }
    }
    let lengths: Vec<usize> = (0..=1100).chain([4095, 65_537]).collect();
    let (mut values, mut row_lengths, mut expected) = (Vec::new(), Vec::new(), Vec::new());
    for &n in &lengths {
        for &s in &sums {
            values.push(s);
            values.extend(std::iter::repeat_n(0.0f32, n.saturating_sub(1)));
            let n = if n == 0 {
                values.pop();
                0
            } else {
                n
            };
            row_lengths.push(n as i64);
            // The row sums from 0.0: s itself, except that -0.0 would become 0.0.
            let sum = if n == 0 { 0.0 } else { 0.0f32 + s };
            expected.push((f64::from(sum) / n as f64) as f32);
        }
    }
    let input = RaggedTensor::from_row_lengths(DenseTensor::vector(values), &row_lengths).unwrap();
    let out = f.call(&[input]).unwrap();
    let means: Vec<f32> = out[0].to_vec().unwrap();
    assert_eq!(means.len(), expected.len());
    for (row, (got, want)) in means.iter().zip(&expected).enumerate() {
        let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
        assert!(
            same,
            "row {row} (length {}): mean {got:e} ({:#010x}), expected {want:e} ({:#010x})",
            row_lengths[row],
            got.to_bits(),
            want.to_bits()
        );
    }
}

#[test]
fn row_max_and_min_keep_the_sign_of_zero_and_every_nan() {
    // Vector max / min folds first drop NaNs and fold ±0 in any order, then refold exactly the
    // rows that held a NaN or came out zero (`fold_dropping_nans` in the JIT). Every position of
    // a NaN or of the odd zero, in rows long enough for each loop of the fold (two-vector loop,
    // one-vector loop, scalar tail), must give the interpreter's bits (any NaN for a NaN).
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for len in (1..=21).chain([37]) {
        for at in 0..len {
            let with = |fill: f64, odd: f64| (0..len).map(|k| if k == at { odd } else { fill }).collect::<Vec<_>>();
            rows.push(with(-0.0, 0.0));
            rows.push(with(0.0, -0.0));
            rows.push(with(1.5 - at as f64, f64::NAN));
            rows.push(with(f64::NEG_INFINITY, -0.0));
            rows.push((0..len).map(|k| if k == at { f64::INFINITY } else { k as f64 - 3.0 }).collect());
        }
        rows.push(vec![f64::NEG_INFINITY; len]);
        rows.push(vec![-0.0; len]);
    }
    rows.push(Vec::new());
    for dtype in [DType::F32, DType::F64] {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(dtype, 1));
        let (max, min) = (x.reduce_max(1), x.reduce_min(1));
        let centered = &x - x.reduce_max(keepdims(1));
        let scaled = &x * x.reduce_min(keepdims(1));
        // With an `exp`, blocks of short rows run flat (see `emit_rows`).
        let exp = centered.exp() * x.reduce_min(keepdims(1));
        let lengths: Vec<i64> = rows.iter().map(|r| r.len() as i64).collect();
        let flat: Vec<f64> = rows.iter().flatten().copied().collect();
        let values = match dtype {
            DType::F32 => DenseTensor::vector(flat.iter().map(|&v| v as f32).collect::<Vec<_>>()),
            _ => DenseTensor::vector(flat),
        };
        let input = RaggedTensor::from_row_lengths(values, &lengths).unwrap();
        // One reduction alone, several per row, and flat blocks.
        for outputs in [vec![&max], vec![&min], vec![&max, &min, &centered, &scaled], vec![&exp]] {
            let jit = g.compile_with(&[&x], &outputs, Mode::FastRun).unwrap();
            assert_eq!(jit.jit_kernels(), 1, "expected a JIT kernel:\n{}", jit.debugprint());
            let want =
                g.compile_with(&[&x], &outputs, Mode::FastCompile).unwrap().call(std::slice::from_ref(&input)).unwrap();
            let got = jit.call(std::slice::from_ref(&input)).unwrap();
            for (k, (w, o)) in want.iter().zip(&got).enumerate() {
                let (w, o): (Vec<f64>, Vec<f64>) = match dtype {
                    DType::F32 => (
                        w.flat_slice::<f32>().unwrap().iter().map(|&v| f64::from(v)).collect(),
                        o.flat_slice::<f32>().unwrap().iter().map(|&v| f64::from(v)).collect(),
                    ),
                    _ => (w.flat_slice::<f64>().unwrap().to_vec(), o.flat_slice::<f64>().unwrap().to_vec()),
                };
                for (i, (a, b)) in w.iter().zip(&o).enumerate() {
                    assert!(
                        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                        "{dtype}, output {k} of {}, value {i}: interpreter {a:?}, JIT {b:?}",
                        outputs.len()
                    );
                }
            }
        }
    }
}

#[test]
fn chunked_map_kernels_give_every_value_the_bits_of_its_functions() {
    // A map kernel whose outputs need `tanh`, `exp` or `sigmoid` runs in chunks of 256 values,
    // each such node computed by one bulk (AVX2) call (see `emit_flat` in the JIT). Whatever the
    // chunk and thread boundaries, every value must have the bits of the JIT's own functions
    // applied in the graph's order.
    let n = 200_003;
    let pick = |i: usize, salt: usize| match (i * 7 + salt) % 97 {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => -0.0,
        _ => ((i * 37 + salt * 11) % 1000) as f32 / 100.0 - 5.0,
    };
    let x: Vec<f32> = (0..n).map(|i| pick(i, 0)).collect();
    let z: Vec<f32> = (0..n).map(|i| pick(i, 5)).collect();
    let mut jit = ragtime_jit::Jit::new().unwrap();
    let apply = |jit: &mut ragtime_jit::Jit, op, v: &[f32]| {
        let f = jit.compile_unary::<f32>(op, true).unwrap();
        let mut out = vec![0f32; v.len()];
        f.run(&[v], &mut out).unwrap();
        out
    };
    let inner: Vec<f32> = x.iter().map(|&v| v * 2.0 + 1.0).collect();
    let t = apply(&mut jit, ragtime_jit::UnaryMath::Tanh, &inner);
    let want_w1: Vec<f32> = (0..n).map(|i| t[i] * z[i] - x[i]).collect();
    let difference: Vec<f32> = x.iter().zip(&z).map(|(a, b)| a - b).collect();
    let want_exp = apply(&mut jit, ragtime_jit::UnaryMath::Exp, &difference);
    let s = apply(&mut jit, ragtime_jit::UnaryMath::Sigmoid, &z);
    let want_silu: Vec<f32> = (0..n).map(|i| s[i] * z[i]).collect();

    let g = Graph::new();
    let xv = g.input("x", TensorType::ragged(DType::F32, 1));
    let zv = g.input("z", TensorType::ragged(DType::F32, 1));
    let w1 = (&xv * 2.0 + 1.0).tanh() * &zv - &xv;
    let e = (&xv - &zv).exp();
    let silu = zv.sigmoid() * &zv;
    let lengths: Vec<i64> = (0..n / 7).map(|_| 7).chain([(n % 7) as i64]).collect();
    let ragged = |v: &[f32]| RaggedTensor::from_row_lengths(DenseTensor::vector(v.to_vec()), &lengths).unwrap();
    for threads in [1, 2, 3] {
        let f = g
            .compile_with(&[&xv, &zv], &[&w1, &e, &silu], CompileOptions::from(Mode::FastRun).threads(threads))
            .unwrap();
        assert!(f.jit_kernels() >= 1, "expected JIT kernels:\n{}", f.debugprint());
        let got = f.call(&[ragged(&x), ragged(&z)]).unwrap();
        for (k, want) in [&want_w1, &want_exp, &want_silu].into_iter().enumerate() {
            let got = got[k].flat_slice::<f32>().unwrap();
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{threads} thread(s), output {k}, value {i} (x = {}, z = {}): JIT kernel {g:e}, its functions {w:e}",
                    x[i],
                    z[i]
                );
            }
        }
    }
}
