//! Property test: random DAGs of elementwise ops (with per-row and scalar broadcasts) and row
//! reductions over random ragged data of ragged rank 1 to 3, with scalar items or uniform inner
//! dims of 1 to 16 (reductions over the innermost ragged axis; empty rows at every level) compute
//! bit-identical results before and after optimization (merge, folding, canonicalization and
//! fusion), including one reduction asked for with and without `keepdims`.

use std::sync::Arc;

use proptest::prelude::*;
use ragtime_core::{DType, DenseTensor, ExecContext, RaggedTensor, RowPartition, TensorType};
use ragtime_graph::{FunctionGraph, Graph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_opt::{optimize, OptimizeOptions};
use ragtime_runtime::Interpreter;

const BINARY: [ScalarOp; 6] =
    [ScalarOp::Add, ScalarOp::Subtract, ScalarOp::Multiply, ScalarOp::Divide, ScalarOp::Maximum, ScalarOp::Minimum];
const UNARY: [ScalarOp; 6] =
    [ScalarOp::Exp, ScalarOp::Tanh, ScalarOp::Negative, ScalarOp::Square, ScalarOp::Abs, ScalarOp::Sigmoid];
const KINDS: [ReduceKind; 4] = [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean, ReduceKind::Min];
const VALUES: [f32; 10] = [0.5, -1.25, 2.0, 0.0, -0.0, f32::NAN, f32::INFINITY, -3.5, 1e-3, 7.0];

/// One random step: (what, operand picks).
type Step = (u8, u8, u8);

/// The graph over `x`, `z` of ragged rank `rank` (items of `width` values when it is set) and
/// `row`, one item per innermost row.
fn build(steps: &[Step], rank: usize, width: Option<usize>) -> (Graph, Vec<VarId>, Vec<VarId>) {
    let mut g = Graph::new();
    let inner: Vec<Option<usize>> = width.into_iter().map(Some).collect();
    let x = g.input("x", TensorType::ragged(DType::F32, rank).with_inner(&inner)).unwrap();
    let z = g.input("z", TensorType::ragged(DType::F32, rank).with_inner(&inner)).unwrap();
    let row_inner: Vec<Option<usize>> = std::iter::once(Some(1)).chain(inner.iter().copied()).collect();
    let row_type = match rank {
        1 => TensorType::dense(DType::F32, &[&[None][..], &row_inner].concat()),
        _ => TensorType::ragged(DType::F32, rank - 1).with_inner(&row_inner),
    };
    let row = g.input("row", row_type).unwrap();
    let inner = rank as i64;
    let mut ragged = vec![x, z];
    let mut per_row = vec![row];
    let mut outputs = Vec::new();
    // The last keepdims reduction, so a later step can ask for the same one without keepdims
    // (fusion then computes it once and returns it in both shapes).
    let mut last_kept: Option<(ReduceKind, VarId)> = None;
    let ew = |op| -> OpRef { Arc::new(Elemwise::new(op)) };
    for &(what, a, b) in steps {
        let r = |k: u8| ragged[k as usize % ragged.len()];
        match what % 6 {
            0 | 1 => {
                let rhs = match b % 3 {
                    0 => r(b / 3),
                    1 => per_row[(b / 3) as usize % per_row.len()],
                    _ => g.constant(DenseTensor::scalar(VALUES[(b / 3) as usize % VALUES.len()]).into()),
                };
                let (lhs, rhs) = if a % 2 == 0 { (r(a / 2), rhs) } else { (rhs, r(a / 2)) };
                let v = g.apply(ew(BINARY[what as usize % BINARY.len()]), &[lhs, rhs]).unwrap()[0];
                ragged.push(v);
            }
            2 | 3 => {
                let v = g.apply(ew(UNARY[(a as usize + what as usize) % UNARY.len()]), &[r(b)]).unwrap()[0];
                ragged.push(v);
            }
            4 => {
                let kind = KINDS[a as usize % KINDS.len()];
                let v = g.apply(Arc::new(Reduce::new(kind, Some(inner), true)), &[r(b)]).unwrap()[0];
                last_kept = Some((kind, r(b)));
                per_row.push(v);
            }
            _ => {
                let (kind, arg) = match last_kept {
                    Some(same) if a >= 128 => same,
                    _ => (KINDS[a as usize % KINDS.len()], r(b)),
                };
                let v = g.apply(Arc::new(Reduce::new(kind, Some(inner), false)), &[arg]).unwrap()[0];
                outputs.push(v);
            }
        }
    }
    outputs.push(*ragged.last().unwrap());
    if per_row.len() > 1 {
        outputs.push(*per_row.last().unwrap());
    }
    (g, vec![x, z, row], outputs)
}

/// `x`, `z` and `row` for ragged rank `rank` (items of `width` values when it is set): the
/// innermost rows have `lengths`; each outer level groups the rows below it `(i * 5 + level) % 4`
/// at a time (so empty outer rows occur), the last outer row taking what is left.
fn data(lengths: &[usize], picks: &[u8], rank: usize, width: Option<usize>) -> Vec<RaggedTensor> {
    let items: usize = lengths.iter().sum();
    let k = width.unwrap_or(1);
    let total = items * k;
    let lengths: Vec<i64> = lengths.iter().map(|&l| l as i64).collect();
    let mut parts = vec![RowPartition::from_row_lengths(&lengths).unwrap()];
    for level in 1..rank {
        let below = parts[0].nrows() as i64;
        let mut grouped = Vec::new();
        let mut covered = 0;
        while covered < below {
            let len = (((grouped.len() * 5 + level) % 4) as i64).min(below - covered);
            grouped.push(len);
            covered += len;
        }
        parts.insert(0, RowPartition::from_row_lengths(&grouped).unwrap());
    }
    let vals = |offset: usize, n: usize| -> Vec<f32> {
        (0..n).map(|i| VALUES[picks.get(i + offset).copied().unwrap_or(i as u8) as usize % VALUES.len()]).collect()
    };
    let shape = |n: usize, one: bool| -> Vec<usize> {
        let mut s = vec![n];
        s.extend(one.then_some(1));
        s.extend(width);
        s
    };
    let x =
        RaggedTensor::new(DenseTensor::from_vec(shape(items, false), vals(0, total)).unwrap(), parts.clone()).unwrap();
    let z =
        RaggedTensor::new(DenseTensor::from_vec(shape(items, false), vals(3, total)).unwrap(), parts.clone()).unwrap();
    let per_row = DenseTensor::from_vec(shape(lengths.len(), true), vals(7, lengths.len() * k)).unwrap();
    let row = RaggedTensor::new(per_row, parts[..rank - 1].to_vec()).unwrap();
    vec![x, z, row]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn optimized_graphs_compute_what_unoptimized_graphs_compute(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..14),
        lengths in prop::collection::vec(0usize..6, 0..7),
        picks in prop::collection::vec(any::<u8>(), 0..64),
        rank in 1usize..4,
        width in prop_oneof![2 => Just(None), 3 => (1usize..17).prop_map(Some)],
    ) {
        let (g, inputs, outputs) = build(&steps, rank, width);
        let plain = FunctionGraph::new(&g, &inputs, &outputs).unwrap();
        let mut fg = plain.clone();
        optimize(&mut fg, &OptimizeOptions::default()).unwrap();
        prop_assert!(fg.verify().is_empty(), "{:?}", fg.verify());
        let values = data(&lengths, &picks, rank, width);
        let want = Interpreter::new(&plain).unwrap().run(&plain, &ExecContext::default(), &values);
        let got = Interpreter::new(&fg).unwrap().run(&fg, &ExecContext::default(), &values);
        match (want, got) {
            (Ok(w), Ok(o)) => {
                for (a, b) in w.iter().zip(&o) {
                    prop_assert!(a.dtype() == b.dtype() && a.equals(b), "optimized {} differs from unoptimized {}", b, a);
                }
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.kind(), b.kind()),
            (w, o) => prop_assert!(false, "unoptimized gave {:?}, optimized {:?}", w, o),
        }
    }
}
