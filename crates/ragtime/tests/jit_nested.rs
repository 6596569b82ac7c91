//! The JIT against the reference interpreter on nested shapes: random fused graphs over ragged
//! rank 2 and 3 tensors (row kernels over the innermost rows, per-row broadcasts of innermost
//! reductions at every level), reductions on every axis, empty rows at every level, all-empty and
//! zero-row inputs, one and several threads.

use proptest::prelude::*;
use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, RowPartition};

const SPECIAL: [f64; 12] =
    [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 1e-3, 7.0, 30.0];

/// One random step: (what, operand picks).
type Step = (u8, u8, u8);

/// A graph of elementwise ops, innermost-row reductions (kept as per-row operands or returned)
/// and reductions over every axis, over `x` and `z` of ragged rank `rank`.
fn build(g: &Graph, dtype: DType, rank: usize, steps: &[Step]) -> (Vec<Var>, Vec<Var>) {
    let x = g.input("x", TensorType::ragged(dtype, rank));
    let z = g.input("z", TensorType::ragged(dtype, rank));
    let inner = rank as i64;
    let mut ragged = vec![x.clone(), z.clone()];
    let mut per_row: Vec<Var> = vec![x.reduce_max(keepdims(inner))];
    let mut outputs = Vec::new();
    for &(what, a, b) in steps {
        let r = |k: u8| ragged[k as usize % ragged.len()].clone();
        let p = |k: u8| per_row[k as usize % per_row.len()].clone();
        let v = match what % 14 {
            0 => r(a) + r(b),
            1 => r(a) - p(b),
            2 => r(a) * r(b),
            3 => r(a) / p(b),
            4 => r(a).maximum(&r(b)),
            5 => r(a) * 2.0 + 1.0,
            6 => r(a).exp(),
            7 => r(a).tanh(),
            8 => r(a).minimum(&p(b)),
            9 => ragtime::ops::softmax(&r(a)),
            10 => {
                per_row.push(match b % 4 {
                    0 => r(a).reduce_sum(keepdims(inner)),
                    1 => r(a).reduce_mean(keepdims(inner)),
                    2 => r(a).reduce_max(keepdims(inner)),
                    _ => r(a).reduce_min(keepdims(inner)),
                });
                continue;
            }
            11 => {
                // Any axis, negative or not: the innermost fuses, the others run as ops.
                let axis = (b as i64 % (rank as i64 + 1)) - if a % 2 == 0 { 0 } else { rank as i64 + 1 };
                outputs.push(match a % 3 {
                    0 => r(b).reduce_sum(axis),
                    1 => r(b).reduce_max(axis),
                    _ => r(b).reduce_mean(axis),
                });
                continue;
            }
            _ => {
                outputs.push(r(a).reduce_sum(inner));
                if b % 2 == 1 {
                    // The same sum in both shapes: one reduction of the kernel, two outputs.
                    outputs.push(r(a).reduce_sum(keepdims(inner)));
                }
                continue;
            }
        };
        ragged.push(v);
    }
    outputs.push(ragged.last().cloned().expect("x"));
    (vec![x, z], outputs)
}

/// Nested partitions of ragged rank `rank`: `nrows` outer rows, each level's row lengths drawn
/// cyclically from `seeds` (zeros make empty rows at that level; all zeros, an all-empty input).
fn partitions(rank: usize, nrows: usize, seeds: &[usize]) -> Vec<RowPartition> {
    let mut count = nrows;
    let mut parts = Vec::with_capacity(rank);
    for level in 0..rank {
        let lengths: Vec<i64> = (0..count).map(|i| seeds[(i * 3 + level * 7) % seeds.len().max(1)] as i64).collect();
        let p = RowPartition::from_row_lengths(&lengths).expect("valid lengths");
        count = p.nvals();
        parts.push(p);
    }
    parts
}

fn data(dtype: DType, parts: &[RowPartition], picks: &[u8], shift: usize) -> RaggedTensor {
    let total = parts.last().map_or(0, |p| p.nvals());
    let values: Vec<f64> = (0..total)
        .map(|i| {
            SPECIAL[picks.get((i + shift) % picks.len().max(1)).copied().unwrap_or(i as u8) as usize % SPECIAL.len()]
        })
        .collect();
    let flat = match dtype {
        DType::F32 => DenseTensor::vector(values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        _ => DenseTensor::vector(values),
    };
    RaggedTensor::new(flat, parts.to_vec()).expect("valid partitions")
}

struct Case<'a> {
    steps: &'a [Step],
    dtype: DType,
    rank: usize,
    nrows: usize,
    seeds: &'a [usize],
    picks: &'a [u8],
    threads: usize,
}

fn check(case: &Case) -> std::result::Result<(), String> {
    let g = Graph::new();
    let (inputs, outputs) = build(&g, case.dtype, case.rank, case.steps);
    let ins: Vec<&Var> = inputs.iter().collect();
    let outs: Vec<&Var> = outputs.iter().collect();
    let options = CompileOptions::from(Mode::FastRun).threads(case.threads);
    let jit = g.compile_with(&ins, &outs, options).map_err(|e| e.to_string())?;
    let reference = g.compile_with(&ins, &outs, Mode::FastCompile).map_err(|e| e.to_string())?;
    let parts = partitions(case.rank, case.nrows, case.seeds);
    let x = data(case.dtype, &parts, case.picks, 0);
    let z = data(case.dtype, &parts, case.picks, 5);
    let want = reference.call(&[x.clone(), z.clone()]);
    let got = jit.call(&[x, z]);
    match (want, got) {
        (Ok(w), Ok(o)) => {
            for (k, (a, b)) in w.iter().zip(&o).enumerate() {
                if let Err(why) = compare(a, b) {
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
    fn nested_jit_kernels_agree_with_the_interpreter(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..10),
        rank in 2usize..4,
        nrows in 0usize..7,
        seeds in prop::collection::vec(prop_oneof![3 => 0usize..6, 1 => Just(0usize)], 1..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        f64s in any::<bool>(),
        threads in 1usize..4,
    ) {
        let dtype = if f64s { DType::F64 } else { DType::F32 };
        let case = Case { steps: &steps, dtype, rank, nrows, seeds: &seeds, picks: &picks, threads };
        let result = check(&case);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

/// Softmax and row means over axis 2 of ragged rank 2 become one JIT row kernel each, whose
/// reductions keep the outer partition (the same `Arc`).
#[test]
fn innermost_reductions_of_rank_2_are_single_row_kernels() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 2));
    let softmax = ragtime::ops::softmax(&(&x * 2.0));
    let mean = (&x * 2.0 + 1.0).reduce_mean(2);
    for out in [&softmax, &mean] {
        let f = g.compile(&[&x], &[out]).unwrap();
        let printed = f.debugprint();
        assert_eq!(f.rewrite_report().nodes_after, 1, "{printed}");
        assert!(printed.contains("JitRow"), "{printed}");
    }
    let parts = partitions(2, 5, &[3, 0, 2, 4, 1]);
    let value = data(DType::F32, &parts, &[1, 2, 3, 4, 7], 0);
    let f = g.compile(&[&x], &[&mean]).unwrap();
    let out = f.call(std::slice::from_ref(&value)).unwrap();
    assert!(out[0].partitions()[0].ptr_eq(&value.partitions()[0]));
    let reference = g.compile_with(&[&x], &[&mean], Mode::FastCompile).unwrap();
    compare(&reference.call(&[value]).unwrap()[0], &out[0]).unwrap();
}

/// Long inner rows and many threads: the split across threads by innermost rows gives the
/// one-thread results.
#[test]
fn long_nested_rows_split_across_threads_agree_with_one_thread() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 3));
    let e = (&x - x.reduce_max(keepdims(3))).exp();
    let out = &e / e.reduce_sum(keepdims(3));
    let parts = partitions(3, 3_000, &[4, 0, 7, 19, 1, 0, 33]);
    let value = data(DType::F32, &parts, &(0..61).collect::<Vec<u8>>(), 0);
    let one = g.compile_with(&[&x], &[&out], CompileOptions::from(Mode::FastRun).threads(1)).unwrap();
    let four = g.compile_with(&[&x], &[&out], CompileOptions::from(Mode::FastRun).threads(4)).unwrap();
    let reference = g.compile_with(&[&x], &[&out], Mode::FastCompile).unwrap();
    let a = one.call(std::slice::from_ref(&value)).unwrap();
    let b = four.call(std::slice::from_ref(&value)).unwrap();
    assert!(a[0].equals(&b[0]));
    compare(&reference.call(&[value]).unwrap()[0], &a[0]).unwrap();
}
