//! Unit tests of the reduction family.

use ragtime_core::limits::Limits;
use std::collections::BTreeMap;
use std::sync::Arc;

use ragtime_core::{ragged, ErrorKind, ExecContext, Literal};
use ragtime_core::{DType, DenseTensor, Element, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attrs, Op, OpRef};

use crate::reduce::axes::Axes;
use crate::reduce::defs::{Reduce, ReduceKind};
use crate::reduce::fold::{fold, Groups};
use crate::reduce::lookup;
use crate::reduce::plan::{plan_reduction, reduced_type};

fn run(kind: ReduceKind, x: &RaggedTensor, axis: Option<i64>, keepdims: bool) -> Result<RaggedTensor> {
    run_axes(kind, x, axis, keepdims)
}

fn lit(r: Result<RaggedTensor>) -> Literal {
    r.unwrap().to_literal()
}

fn floats() -> RaggedTensor {
    ragged![[1.5, 2.0, -3.0], [], [4.0], [0.5, 0.25]].unwrap()
}

fn ints() -> RaggedTensor {
    ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap()
}

fn rank3() -> RaggedTensor {
    ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap()
}

fn f32s(r: &RaggedTensor) -> Vec<f32> {
    r.flat_slice::<f32>().unwrap().to_vec()
}

fn i32s(r: &RaggedTensor) -> Vec<i32> {
    r.flat_slice::<i32>().unwrap().to_vec()
}

fn f64s(r: &RaggedTensor) -> Vec<f64> {
    r.flat_slice::<f64>().unwrap().to_vec()
}

fn close(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-6 + 1e-5 * w.abs())
}

#[test]
fn float_reductions_match_tensorflow() {
    // reductions.json, float32 cases: (kind, axis None, axis 0, axis 1 = axis -1).
    let cases: [(ReduceKind, f64, Vec<f64>, Vec<f64>); 5] = [
        (ReduceKind::Sum, 5.25, vec![6.0, 2.25, -3.0], vec![0.5, 0.0, 4.0, 0.75]),
        (ReduceKind::Mean, 0.875, vec![2.0, 1.125, -3.0], vec![0.1666666716337204, f64::NAN, 4.0, 0.375]),
        (ReduceKind::Max, 4.0, vec![4.0, 2.0, -3.0], vec![2.0, -3.4028234663852886e+38, 4.0, 0.5]),
        (ReduceKind::Min, -3.0, vec![0.5, 0.25, -3.0], vec![-3.0, 3.4028234663852886e+38, 4.0, 0.25]),
        (ReduceKind::Prod, -4.5, vec![3.0, 0.5, -3.0], vec![-9.0, 1.0, 4.0, 0.125]),
    ];
    let widen = |r: &RaggedTensor| f32s(r).iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
    for (kind, all, axis0, axis1) in cases {
        let y = run(kind, &floats(), None, false).unwrap();
        assert!(y.flat_values().shape().is_empty() && close(&widen(&y), &[all]), "{kind:?} all: {:?}", widen(&y));
        let y = run(kind, &floats(), Some(0), false).unwrap();
        assert!(close(&widen(&y), &axis0), "{kind:?} axis 0: {:?}", widen(&y));
        for axis in [1, -1] {
            let y = run(kind, &floats(), Some(axis), false).unwrap();
            assert!(y.is_dense() && close(&widen(&y), &axis1), "{kind:?} axis {axis}: {:?}", widen(&y));
        }
    }
}

#[test]
fn integer_reductions_match_tensorflow() {
    let cases: [(ReduceKind, i32, Vec<i32>, Vec<i32>); 4] = [
        (ReduceKind::Sum, 31, vec![14, 10, 6, 1], vec![9, 0, 16, 6, 0]),
        (ReduceKind::Max, 9, vec![6, 9, 4, 1], vec![4, i32::MIN, 9, 6, i32::MIN]),
        (ReduceKind::Min, 1, vec![3, 1, 2, 1], vec![1, i32::MAX, 2, 6, i32::MAX]),
        (ReduceKind::Prod, 6480, vec![90, 9, 8, 1], vec![12, 1, 90, 6, 1]),
    ];
    for (kind, all, axis0, axis1) in cases {
        assert_eq!(i32s(&run(kind, &ints(), None, false).unwrap()), vec![all], "{kind:?}");
        assert_eq!(i32s(&run(kind, &ints(), Some(0), false).unwrap()), axis0, "{kind:?}");
        assert_eq!(i32s(&run(kind, &ints(), Some(-1), false).unwrap()), axis1, "{kind:?}");
    }
}

#[test]
fn integer_mean_is_float64() {
    let y = run(ReduceKind::Mean, &ints(), Some(1), false).unwrap();
    assert_eq!(y.dtype(), DType::F64);
    assert!(close(&f64s(&y), &[2.25, f64::NAN, 5.333333333333333, 6.0, f64::NAN]), "{:?}", f64s(&y));
    assert_eq!(f64s(&run(ReduceKind::Mean, &ints(), None, false).unwrap()), vec![3.875]);
    assert!(close(
        &f64s(&run(ReduceKind::Mean, &ints(), Some(0), false).unwrap()),
        &[4.666666666666667, 5.0, 3.0, 1.0]
    ));
}

#[test]
fn rank3_axes() {
    assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(0), false)), lit(ragged![[21, 11, 3], [14], [6]]));
    assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(1), false)), lit(ragged![[5, 2, 3], [11], [7], [18, 9]]));
    assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(2), false)), lit(ragged![[6, 4], [5, 0, 6], [7], [17, 10]]));
    assert_eq!(lit(run(ReduceKind::Sum, &rank3(), Some(-1), false)), lit(ragged![[6, 4], [5, 0, 6], [7], [17, 10]]));
    assert_eq!(i32s(&run(ReduceKind::Sum, &rank3(), None, false).unwrap()), vec![55]);
}

#[test]
fn bool_reductions() {
    let b = ragged![[true, false], [], [true, true]].unwrap();
    assert_eq!(
        lit(run(ReduceKind::All, &b, Some(1), false)),
        Literal::List(vec![false.into(), true.into(), true.into()])
    );
    assert_eq!(
        lit(run(ReduceKind::Any, &b, Some(1), false)),
        Literal::List(vec![true.into(), false.into(), true.into()])
    );
    assert_eq!(run(ReduceKind::Sum, &b, Some(1), false).unwrap_err().kind(), ErrorKind::TypeMismatch);
    assert_eq!(run(ReduceKind::All, &ints(), Some(1), false).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
pub(crate) fn keepdims() {
    let y = run(ReduceKind::Sum, &floats(), Some(1), true).unwrap();
    assert_eq!(y.flat_values().shape(), &[4, 1]);
    assert_eq!(f32s(&y), vec![0.5, 0.0, 4.0, 0.75]);
    let y = run(ReduceKind::Sum, &floats(), None, true).unwrap();
    assert_eq!(y.flat_values().shape(), &[1, 1]);
    let y = run(ReduceKind::Sum, &ints(), Some(0), true).unwrap();
    assert_eq!(y.flat_values().shape(), &[1, 4]);
    // Ragged rank 2: the kept dim is a uniform partition of length 1.
    let y = run(ReduceKind::Sum, &rank3(), Some(1), true).unwrap();
    assert_eq!(y.ragged_rank(), 2);
    assert_eq!(y.partitions()[0].uniform_row_length(), Some(1));
    assert_eq!(y.to_literal(), lit(ragged![[[5, 2, 3]], [[11]], [[7]], [[18, 9]]]));
    let y = run(ReduceKind::Sum, &rank3(), Some(0), true).unwrap();
    assert_eq!(y.to_literal(), lit(ragged![[[21, 11, 3], [14], [6]]]));
    let y = run(ReduceKind::Sum, &rank3(), Some(2), true).unwrap();
    assert_eq!(y.ragged_rank(), 1);
    assert_eq!(y.flat_values().shape(), &[8, 1]);
}

#[test]
fn uniform_inner_axes() {
    let x = RaggedTensor::from_literal_typed(
        &ragged![[[1, 2], [3, 4], [5, 6]], [], [[7, 8]]].unwrap().to_literal(),
        None,
        Some(1),
        Some(&[2]),
    )
    .unwrap();
    let y = run(ReduceKind::Sum, &x, Some(2), false).unwrap();
    assert!(y.partitions()[0].ptr_eq(&x.partitions()[0]), "kept partitions are shared");
    assert_eq!(y.to_literal(), lit(ragged![[3, 7, 11], [], [15]]));
    let y = run(ReduceKind::Sum, &x, Some(1), false).unwrap();
    assert_eq!(y.flat_values().shape(), &[3, 2]);
    assert_eq!(i32s(&y), vec![9, 12, 0, 0, 7, 8]);
    let y = run(ReduceKind::Max, &x, Some(0), false).unwrap();
    assert_eq!(y.to_literal(), lit(ragged![[7, 8], [3, 4], [5, 6]]));
    let y = run(ReduceKind::Max, &x, Some(-1), true).unwrap();
    assert_eq!(y.flat_values().shape(), &[4, 1]);
}

#[test]
fn dense_inputs_use_uniform_rules() {
    let d = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 0], Vec::<f32>::new()).unwrap());
    let y = run(ReduceKind::Max, &d, Some(1), false).unwrap();
    assert_eq!(f32s(&y), vec![f32::NEG_INFINITY; 2], "a uniform axis starts from -inf");
    let m = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 3], vec![1i64, 2, 3, 4, 5, 6]).unwrap());
    let y = run(ReduceKind::Sum, &m, Some(0), false).unwrap();
    assert_eq!(y.flat_slice::<i64>(), Some(&[5, 7, 9][..]));
    let y = run(ReduceKind::Prod, &m, Some(-1), true).unwrap();
    assert_eq!(y.flat_values().shape(), &[2, 1]);
    assert_eq!(y.flat_slice::<i64>(), Some(&[6, 120][..]));
    let s = RaggedTensor::dense(DenseTensor::scalar(4.0f64));
    assert_eq!(f64s(&run(ReduceKind::Mean, &s, None, false).unwrap()), vec![4.0]);
    assert_eq!(run(ReduceKind::Sum, &s, Some(0), false).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn bad_axes_are_invalid_arguments() {
    for axis in [2, -3] {
        let e = run(ReduceKind::Sum, &ints(), Some(axis), false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("reduce_sum"), "{e}");
    }
}

#[test]
fn empty_inputs() {
    let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
    assert_eq!(i32s(&run(ReduceKind::Sum, &none, Some(1), false).unwrap()), Vec::<i32>::new());
    assert_eq!(i32s(&run(ReduceKind::Sum, &none, Some(0), false).unwrap()), Vec::<i32>::new());
    assert_eq!(i32s(&run(ReduceKind::Max, &none, None, false).unwrap()), vec![i32::MIN]);
    let rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f64>::new()), vec![0, 0, 0]).unwrap();
    assert_eq!(f64s(&run(ReduceKind::Max, &rows, Some(1), false).unwrap()), vec![f64::MIN; 2]);
    assert_eq!(f64s(&run(ReduceKind::Max, &rows, None, false).unwrap()), vec![f64::NEG_INFINITY]);
    assert!(f64s(&run(ReduceKind::Mean, &rows, None, false).unwrap())[0].is_nan());
}

#[test]
fn fast_path_agrees_with_the_plan() {
    let ctx = &ExecContext::new(Limits::untrusted());
    for kind in [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean, ReduceKind::Prod] {
        let x = floats();
        let plan = plan_reduction(ctx, "test", &x, &Axes::from(1), false).unwrap();
        let via_plan = fold(ctx, kind, &Groups::Plan(&plan), x.flat_values(), plan.flat_shape.clone()).unwrap();
        let fast =
            Reduce::new(kind, Some(1), false).perform(&ExecContext::new(Limits::untrusted()), &[x]).unwrap().remove(0);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&f32s(&fast)), bits(via_plan.as_slice::<f32>().unwrap()), "{kind:?}");
    }
}

#[test]
fn inner_dims_fast_path_agrees_with_the_plan() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // Ragged rank 1 over [*, 3] items (rows of 2, 0, 3 and 1 items), and over [*, 0] items.
    let splits = vec![0i64, 2, 2, 5, 6];
    let data: Vec<f32> = (0..18).map(|k| (k as f32 * 0.37 - 2.0) / 3.0).collect();
    let wide = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![6, 3], data).unwrap(), splits.clone());
    let ints: Vec<i32> = (0..12).map(|k| k * 7 - 30).collect();
    let deep = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![6, 2, 1], ints).unwrap(), splits.clone());
    let empty = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![6, 0], Vec::<f64>::new()).unwrap(), splits);
    for x in [wide.unwrap(), deep.unwrap(), empty.unwrap()] {
        for kind in [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Mean, ReduceKind::Min, ReduceKind::Prod] {
            for keepdims in [false, true] {
                let plan = plan_reduction(ctx, "test", &x, &Axes::from(1), keepdims).unwrap();
                let via_plan = fold(ctx, kind, &Groups::Plan(&plan), x.flat_values(), plan.flat_shape.clone()).unwrap();
                let via_plan = plan.finish(via_plan).unwrap();
                let fast = Reduce::new(kind, Some(1), keepdims)
                    .perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x))
                    .unwrap()
                    .remove(0);
                assert_eq!(fast.flat_values().shape(), via_plan.flat_values().shape(), "{kind:?}");
                assert_eq!(fast.ragged_rank(), via_plan.ragged_rank());
                let bits = |r: &RaggedTensor| match r.flat_values().dtype() {
                    DType::F32 => r.flat_slice::<f32>().unwrap().iter().map(|f| u64::from(f.to_bits())).collect(),
                    DType::F64 => r.flat_slice::<f64>().unwrap().iter().map(|f| f.to_bits()).collect(),
                    _ => r.flat_slice::<i32>().unwrap().iter().map(|&v| v as u64).collect::<Vec<u64>>(),
                };
                assert_eq!(bits(&fast), bits(&via_plan), "{kind:?} keepdims={keepdims}");
            }
        }
    }
}

#[test]
fn plan_groups_by_position_for_axis_0() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let plan = plan_reduction(ctx, "test", &rank3(), &Axes::from(0), false).unwrap();
    // Result [[21, 11, 3], [14], [6]]: element 0 folds 1, 5, 7, 8 (flat indices 0, 4, 6, 7).
    assert_eq!(plan.stages().len(), 1);
    assert_eq!(plan.stages()[0].group(0), &[0, 4, 6, 7]);
    assert_eq!(plan.stages()[0].group(2), &[2]);
    assert_eq!(plan.partitions.len(), 1);
    assert_eq!(plan.partitions[0].row_splits(), &[0, 3, 4, 5]);
}

#[test]
fn names_and_lookup() {
    assert_eq!(Reduce::new(ReduceKind::Sum, Some(1), false).name(), "ReduceSum{axis=1, keepdims=false}");
    assert_eq!(Reduce::new(ReduceKind::Any, None, true).name(), "ReduceAny{axis=None, keepdims=true}");
    let mut m = BTreeMap::new();
    m.insert("axis".to_string(), ragtime_graph::Attr::Int(-1));
    m.insert("keepdims".to_string(), ragtime_graph::Attr::Bool(true));
    let op = lookup("reduce_max", &Attrs::new("reduce_max", m)).unwrap().unwrap();
    assert_eq!(op.name(), "ReduceMax{axis=-1, keepdims=true}");
    let mut n = BTreeMap::new();
    n.insert("axis".to_string(), ragtime_graph::Attr::Null);
    let op = lookup("reduce_mean", &Attrs::new("reduce_mean", n)).unwrap().unwrap();
    assert_eq!(op.name(), "ReduceMean{axis=None, keepdims=false}");
    let mut bad = BTreeMap::new();
    bad.insert("axes".to_string(), ragtime_graph::Attr::Int(1));
    assert!(lookup("reduce_sum", &Attrs::new("reduce_sum", bad)).unwrap().is_err());
    assert!(lookup("add", &Attrs::default()).is_none());
}

#[test]
fn types() {
    let x = TensorType::ragged(DType::I32, 2).with_inner(&[Some(3)]);
    let t = |axis: Option<i64>, keep| reduced_type("r", &x, &axis.into(), keep).unwrap();
    assert_eq!(t(None, false), TensorType::scalar(DType::I32));
    assert_eq!(t(Some(0), false).to_string(), "int32[?, *, 3]");
    assert_eq!(t(Some(0), true).to_string(), "int32[1, *, *, 3]");
    assert_eq!(t(Some(1), false).to_string(), "int32[?, *, 3]");
    assert_eq!(t(Some(1), true).to_string(), "int32[?, *, *, 3]");
    assert_eq!(t(Some(2), false).to_string(), "int32[?, *, 3]");
    assert_eq!(t(Some(2), true).to_string(), "int32[?, *, 1, 3]");
    assert_eq!(t(Some(3), false).to_string(), "int32[?, *, *]");
    assert_eq!(t(Some(-1), true).to_string(), "int32[?, *, *, 1]");
    assert_eq!(reduced_type("r", &x, &Axes::from(4), false).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let mean = Reduce::new(ReduceKind::Mean, Some(1), false).infer(&[x]).unwrap();
    assert_eq!(mean[0].dtype(), DType::F64);
}

// --- several axes ----------------------------------------------------------------------------

fn run_axes(kind: ReduceKind, x: &RaggedTensor, axes: impl Into<Axes>, keepdims: bool) -> Result<RaggedTensor> {
    let op = Reduce::with_axes(kind, axes, keepdims);
    let inferred = op.output_types(&[TensorType::of(x)])?;
    let out = op.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(x))?.remove(0);
    assert!(
        inferred[0].accepts(&TensorType::of(&out)),
        "{}: infer said {}, perform gave {}",
        op.name(),
        inferred[0],
        TensorType::of(&out)
    );
    Ok(out)
}

pub(crate) fn dense<T: Element>(shape: Vec<usize>, data: Vec<T>) -> RaggedTensor {
    RaggedTensor::dense(DenseTensor::from_vec(shape, data).unwrap())
}

#[test]
fn axes_print_like_tensorflow_arguments() {
    assert_eq!(Reduce::with_axes(ReduceKind::Sum, vec![0, 2], false).name(), "ReduceSum{axis=[0, 2], keepdims=false}");
    assert_eq!(Reduce::with_axes(ReduceKind::Max, [-1, 0], true).name(), "ReduceMax{axis=[-1, 0], keepdims=true}");
    assert_eq!(Reduce::with_axes(ReduceKind::Sum, vec![1], false).name(), "ReduceSum{axis=1, keepdims=false}");
    assert_eq!(Reduce::with_axes(ReduceKind::Sum, Vec::new(), false).name(), "ReduceSum{axis=[], keepdims=false}");
    assert_eq!(Reduce::with_axes(ReduceKind::Sum, Axes::All, false).name(), "ReduceSum{axis=None, keepdims=false}");
    // A list of one axis is the same op as that axis (op identity is the name).
    assert_eq!(Reduce::with_axes(ReduceKind::Sum, vec![1], false), Reduce::new(ReduceKind::Sum, Some(1), false));
    assert_eq!(Axes::from(None), Axes::All);
    assert_eq!(Axes::from(&[2, 0][..]), Axes::List(vec![2, 0]));
    assert_eq!(Axes::from(vec![0, 2]).single(), None);
    assert_eq!(Axes::from(-1).single(), Some(-1));
}

#[test]
fn lookup_accepts_axis_lists() {
    use ragtime_graph::Attr;
    let mut m = BTreeMap::new();
    m.insert("axis".to_string(), Attr::List(vec![Attr::Int(0), Attr::Int(-1)]));
    let op = lookup("reduce_sum", &Attrs::new("reduce_sum", m)).unwrap().unwrap();
    assert_eq!(op.name(), "ReduceSum{axis=[0, -1], keepdims=false}");
    let y = op.perform(&ExecContext::new(Limits::untrusted()), &[rank3()]).unwrap().remove(0);
    assert_eq!(y.to_literal(), lit(ragged![35, 14, 6]));
    let mut one_item = BTreeMap::new();
    one_item.insert("axis".to_string(), Attr::List(vec![Attr::Int(1)]));
    let op = lookup("reduce_min", &Attrs::new("reduce_min", one_item)).unwrap().unwrap();
    assert_eq!(op.name(), "ReduceMin{axis=1, keepdims=false}");
    let mut bad = BTreeMap::new();
    bad.insert("axis".to_string(), Attr::List(vec![Attr::Int(0), Attr::Str("1".into())]));
    let e = lookup("reduce_sum", &Attrs::new("reduce_sum", bad)).unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn several_ragged_axes_reduce_innermost_first() {
    // reductions.json gives axis 1 = [[5, 2, 3], [11], [7], [18, 9]] and axis 2 =
    // [[6, 4], [5, 0, 6], [7], [17, 10]]; TensorFlow then folds the next axis of those.
    assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![1, 2], false)), lit(ragged![10, 11, 7, 27]));
    assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![2, 1], false)), lit(ragged![10, 11, 7, 27]));
    assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![0, 1], false)), lit(ragged![41, 11, 3]));
    assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![0, 2], false)), lit(ragged![35, 14, 6]));
    // Negative axes are resolved before sorting: -1 is axis 2, folded before axis 0.
    assert_eq!(lit(run_axes(ReduceKind::Sum, &rank3(), vec![-1, 0], false)), lit(ragged![35, 14, 6]));
    let all = run_axes(ReduceKind::Sum, &rank3(), vec![0, 1, 2], false).unwrap();
    assert!(all.is_dense() && all.flat_values().shape().is_empty(), "a scalar, got {all}");
    assert_eq!(i32s(&all), vec![55]);
    let max = run_axes(ReduceKind::Max, &rank3(), vec![0, 2], false).unwrap();
    assert_eq!(max.to_literal(), lit(ragged![9, 10, 6]));
}

#[test]
fn mean_over_several_axes_divides_by_the_total_count() {
    // Row sums 10, 11, 7, 27 over 4, 2, 1, 3 values; a mean of the per-row means would give
    // 3.0 and NaN for the first two rows.
    let y = run_axes(ReduceKind::Mean, &rank3(), vec![1, 2], false).unwrap();
    assert_eq!(y.dtype(), DType::F64);
    assert_eq!(f64s(&y), vec![2.5, 5.5, 7.0, 9.0]);
    assert_eq!(f64s(&run_axes(ReduceKind::Mean, &rank3(), vec![0, 1, 2], false).unwrap()), vec![5.5]);
    // Position-wise over rows then columns: [[5, 2, 3], [11], [7], [18, 9]] has 7 values.
    let y = run_axes(ReduceKind::Mean, &rank3(), vec![0, 1], false).unwrap();
    assert!(close(&f64s(&y), &[41.0 / 7.0, 5.5, 3.0]), "{:?}", f64s(&y));
    let f = run_axes(ReduceKind::Mean, &floats(), vec![0, 1], false).unwrap();
    assert_eq!(f32s(&f), vec![0.875], "the mean of every value (as with axis=None)");
}

#[test]
fn empty_inner_groups_fold_their_identity() {
    let x = RaggedTensor::from_literal_typed(
        &Literal::List(vec![
            Literal::List(vec![Literal::List(vec![1.0f32.into()]), Literal::List(vec![])]),
            Literal::List(vec![Literal::List(vec![])]),
            Literal::List(vec![]),
        ]),
        Some(DType::F32),
        Some(2),
        None,
    )
    .unwrap();
    // Ragged folds start from the finite lowest value, which then folds outwards.
    assert_eq!(f32s(&run_axes(ReduceKind::Max, &x, vec![1, 2], false).unwrap()), vec![1.0, f32::MIN, f32::MIN]);
    assert_eq!(f32s(&run_axes(ReduceKind::Min, &x, vec![1, 2], false).unwrap()), vec![1.0, f32::MAX, f32::MAX]);
    let means = f32s(&run_axes(ReduceKind::Mean, &x, vec![1, 2], false).unwrap());
    assert!(means[0] == 1.0 && means[1].is_nan() && means[2].is_nan(), "{means:?}");
    // Two empty rows: the rows fold to f32::MIN, then the dense axis 0 keeps it.
    let rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0, 0, 0]).unwrap();
    assert_eq!(f32s(&run_axes(ReduceKind::Max, &rows, vec![0, 1], false).unwrap()), vec![f32::MIN]);
    // No rows at all: axis 1 gives an empty dense vector, whose dense fold is -inf.
    let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
    assert_eq!(f32s(&run_axes(ReduceKind::Max, &none, vec![0, 1], false).unwrap()), vec![f32::NEG_INFINITY]);
    assert_eq!(f32s(&run_axes(ReduceKind::Sum, &none, vec![0, 1], false).unwrap()), vec![0.0]);
}

#[test]
fn keepdims_with_several_axes() {
    let y = run_axes(ReduceKind::Sum, &rank3(), vec![1, 2], true).unwrap();
    assert!(y.is_dense(), "{y}");
    assert_eq!(y.flat_values().shape(), &[4, 1, 1]);
    assert_eq!(i32s(&y), vec![10, 11, 7, 27]);
    let y = run_axes(ReduceKind::Sum, &ints(), vec![0, 1], true).unwrap();
    assert_eq!(y.flat_values().shape(), &[1, 1]);
    assert_eq!(i32s(&y), vec![31]);
    // Axis 0 kept as a uniform partition of one row, axis 2 as an inner dim of size 1.
    let y = run_axes(ReduceKind::Sum, &rank3(), vec![0, 2], true).unwrap();
    assert_eq!(y.rank(), 3);
    assert_eq!(y.to_literal(), lit(ragged![[[35], [14], [6]]]));
}

#[test]
fn dense_inputs_fold_listed_axes_at_once() {
    let m = dense(vec![2, 3], vec![1i64, 2, 3, 4, 5, 6]);
    for axes in [vec![0, 1], vec![1, 0], vec![-1, -2]] {
        let y = run_axes(ReduceKind::Sum, &m, axes.clone(), false).unwrap();
        assert_eq!(y.flat_slice::<i64>(), Some(&[21][..]), "axes {axes:?}");
    }
    let y = run_axes(ReduceKind::Sum, &m, vec![-1, 0], true).unwrap();
    assert_eq!(y.flat_values().shape(), &[1, 1]);
    assert_eq!(f64s(&run_axes(ReduceKind::Mean, &m, vec![0, 1], false).unwrap()), vec![3.5]);
    let cube = dense(vec![2, 2, 2], (0..8).collect::<Vec<i32>>());
    let y = run_axes(ReduceKind::Sum, &cube, vec![2, 0], false).unwrap();
    assert_eq!(i32s(&y), vec![10, 18]);
    let y = run_axes(ReduceKind::Sum, &cube, vec![0, 2], true).unwrap();
    assert_eq!(y.flat_values().shape(), &[1, 2, 1]);
    let empty = dense(vec![2, 0, 3], Vec::<f64>::new());
    let y = run_axes(ReduceKind::Max, &empty, vec![0, 1], false).unwrap();
    assert_eq!(f64s(&y), vec![f64::NEG_INFINITY; 3], "a dense fold starts from -inf");
}

#[test]
fn an_empty_axis_list_folds_nothing() {
    let y = run_axes(ReduceKind::Sum, &ints(), Vec::new(), false).unwrap();
    assert!(y.equals(&ints()), "{y}");
    let y = run_axes(ReduceKind::Max, &rank3(), Vec::new(), true).unwrap();
    assert!(y.equals(&rank3()), "{y}");
    let y = run_axes(ReduceKind::Mean, &ints(), Vec::new(), false).unwrap();
    assert!(y.equals(&ints().cast(DType::F64).unwrap()), "{y}");
    let m = dense(vec![2, 2], vec![1.5f32, 2.0, 3.0, 4.0]);
    assert!(run_axes(ReduceKind::Prod, &m, Vec::new(), false).unwrap().equals(&m));
}

#[test]
fn repeated_or_out_of_range_axes_are_invalid_arguments() {
    for axes in [vec![1, 1], vec![1, -1], vec![0, 2], vec![-3, 0]] {
        let op = Reduce::with_axes(ReduceKind::Sum, axes.clone(), false);
        let e = op.infer(&[TensorType::of(&ints())]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "infer, axes {axes:?}: {e}");
        assert!(e.to_string().contains("reduce_sum"), "{e}");
        let e = op.perform(&ExecContext::new(Limits::untrusted()), &[ints()]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "perform, axes {axes:?}: {e}");
    }
    let e = Reduce::with_axes(ReduceKind::Sum, vec![2, -1], false)
        .perform(&ExecContext::new(Limits::untrusted()), &[rank3()])
        .unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
}

#[test]
fn types_with_several_axes() {
    let x = TensorType::ragged(DType::I32, 2).with_inner(&[Some(3)]);
    let t = |axes: Vec<i64>, keep| reduced_type("r", &x, &Axes::from(axes), keep).unwrap().to_string();
    assert_eq!(t(vec![1, 2], false), "int32[?, 3]");
    assert_eq!(t(vec![1, 2], true), "int32[?, 1, 1, 3]");
    assert_eq!(t(vec![0, 3], false), "int32[?, *]");
    assert_eq!(t(vec![-1, -2], false), "int32[?, *]");
    assert_eq!(t(vec![0, 1, 2, 3], false), "int32[]");
    assert_eq!(t(vec![], true), "int32[?, *, *, 3]");
    let d = TensorType::dense(DType::F32, &[Some(2), None, Some(4)]);
    let t = |axes: Vec<i64>, keep| reduced_type("r", &d, &Axes::from(axes), keep).unwrap().to_string();
    assert_eq!(t(vec![2, 0], false), "float32[?]");
    assert_eq!(t(vec![0, 2], true), "float32[1, ?, 1]");
    let e = reduced_type("r", &x, &Axes::from(vec![3, -1]), false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

/// SplitMix64: a small deterministic generator for the property tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random tensor of `dtype` with `ragged_rank` ragged dims (short and empty rows) and
/// `inner` uniform dims.
fn random_ragged(rng: &mut Rng, dtype: DType, ragged_rank: usize, inner: &[usize]) -> RaggedTensor {
    let mut n = rng.below(4);
    let mut nested = Vec::new();
    for _ in 0..ragged_rank {
        let mut splits = vec![0i64];
        for _ in 0..n {
            splits.push(splits[splits.len() - 1] + rng.below(4) as i64);
        }
        n = splits[splits.len() - 1] as usize;
        nested.push(splits);
    }
    let shape: Vec<usize> = std::iter::once(n).chain(inner.iter().copied()).collect();
    let len = shape.iter().product();
    let values = match dtype {
        DType::I32 => DenseTensor::from_vec(shape, (0..len).map(|_| rng.below(19) as i32 - 9).collect()),
        DType::F64 => {
            DenseTensor::from_vec(shape, (0..len).map(|_| (rng.below(33) as f64 - 16.0) * 0.37).collect::<Vec<_>>())
        }
        DType::Bool => DenseTensor::from_vec(shape, (0..len).map(|_| rng.below(3) > 0).collect()),
        DType::String => {
            let words = ["", "a", "bc", "d"];
            let strings: Vec<&str> = (0..len).map(|_| words[rng.below(words.len())]).collect();
            ragtime_core::StringTensor::from_strings(&strings, shape).map(DenseTensor::String)
        }
        other => panic!("no generator for {other}"),
    }
    .unwrap();
    RaggedTensor::from_nested_row_splits(values, &nested).unwrap()
}

/// Reduces `x` along each of `axes` in turn (already resolved and sorted innermost first).
fn one_axis_at_a_time(op: impl Fn(i64) -> OpRef, x: &RaggedTensor, axes: &[usize]) -> RaggedTensor {
    axes.iter()
        .fold(x.clone(), |y, &a| op(a as i64).perform(&ExecContext::new(Limits::untrusted()), &[y]).unwrap().remove(0))
}

#[test]
fn several_axes_equal_one_axis_at_a_time() {
    let mut rng = Rng(0x5EED);
    for case in 0..600 {
        let ragged_rank = 1 + rng.below(3);
        let inner: Vec<usize> = (0..rng.below(3)).map(|_| rng.below(3)).collect();
        let rank = 1 + ragged_rank + inner.len();
        // Two or more distinct axes, in random order, some written negative.
        let mut axes: Vec<usize> = (0..rank).collect();
        for i in (1..axes.len()).rev() {
            axes.swap(i, rng.below(i + 1));
        }
        axes.truncate(2 + rng.below(rank - 1));
        let listed: Vec<i64> =
            axes.iter().map(|&a| if rng.below(2) == 0 { a as i64 } else { a as i64 - rank as i64 }).collect();
        let keepdims = rng.below(2) == 0;
        let mut order = axes.clone();
        order.sort_unstable_by(|a, b| b.cmp(a));

        let kind =
            [ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Max, ReduceKind::Min, ReduceKind::Mean][rng.below(5)];
        let dtype = if rng.below(2) == 0 { DType::I32 } else { DType::F64 };
        let (kind, dtype) = match rng.below(6) {
            0 => ([ReduceKind::All, ReduceKind::Any][rng.below(2)], DType::Bool),
            _ => (kind, dtype),
        };
        let x = random_ragged(&mut rng, dtype, ragged_rank, &inner);
        let what = format!("case {case}: {kind:?} over {listed:?} keepdims={keepdims} of {x}");
        let got = run_axes(kind, &x, listed.clone(), keepdims).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want = if kind == ReduceKind::Mean {
            // TensorFlow's reduce_mean: the sum over the axes divided by the count of values.
            let sum = |t: &RaggedTensor| {
                one_axis_at_a_time(|a| Arc::new(Reduce::new(ReduceKind::Sum, Some(a), keepdims)), t, &order)
            };
            let total = sum(&x).cast(DType::F64).unwrap();
            let ones = x
                .with_flat_values(
                    DenseTensor::full(x.flat_values().shape().to_vec(), &DenseTensor::scalar(1.0f64)).unwrap(),
                )
                .unwrap();
            let count = sum(&ones);
            let quotient: Vec<f64> = f64s(&total).iter().zip(f64s(&count)).map(|(s, n)| s / n).collect();
            total
                .with_flat_values(DenseTensor::from_vec(total.flat_values().shape().to_vec(), quotient).unwrap())
                .unwrap()
        } else {
            one_axis_at_a_time(|a| Arc::new(Reduce::new(kind, Some(a), keepdims)), &x, &order)
        };
        assert!(got.equals(&want), "{what}: expected {want}, got {got}");

        let strings = random_ragged(&mut rng, DType::String, ragged_rank, &inner);
        let join = crate::strings::join::ReduceJoin::with_axes(listed.clone(), "/").with_keepdims(keepdims);
        let got =
            join.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&strings)).unwrap().remove(0);
        let inferred = join.infer(&[TensorType::of(&strings)]).unwrap();
        assert!(inferred[0].accepts(&TensorType::of(&got)), "{}: infer said {}", join.name(), inferred[0]);
        let want = one_axis_at_a_time(
            |a| Arc::new(crate::strings::join::ReduceJoin::new(Some(a), "/").with_keepdims(keepdims)),
            &strings,
            &order,
        );
        assert!(got.equals(&want), "case {case}: join over {listed:?} of {strings}: expected {want}, got {got}");
    }
}

#[test]
fn long_float_sums_fold_pairwise_and_short_ones_in_order() {
    use crate::reduce::plan::{fold_group, FOLD_BLOCK};
    // In order, a float32 running sum of ones stops growing at 2^24 (each further 1 rounds
    // away); pairwise, no half of the fold ever gets there.
    let big = 20_000_000usize;
    let stuck = (0..big).fold(0f32, |acc, _| acc + 1.0);
    assert_eq!(stuck, 16_777_216.0, "in order, a float32 sum of ones stops at 2^24");
    assert_eq!(fold_group(big, &|_| 1f32, 0.0, &|a, b| a + b), big as f32, "pairwise halves stay exact");
    // Up to the block, the bits of an in-order fold.
    let values: Vec<f32> = (0..FOLD_BLOCK).map(|k| ((k * 7919) % 1000) as f32 * 1.37e-3 - 0.5).collect();
    let want = values.iter().fold(0f32, |acc, &v| acc + v);
    assert_eq!(fold_group(values.len(), &|k| values[k], 0.0, &|a, b| a + b).to_bits(), want.to_bits());
    // Any length folds every member once: an integer sum is exact whatever the order.
    for len in [0, 1, FOLD_BLOCK - 1, FOLD_BLOCK + 1, 2 * FOLD_BLOCK + 3, 10 * FOLD_BLOCK + 17] {
        let got = fold_group(len, &|k| k as i64, 0, &|a, b| a + b);
        assert_eq!(got, (0..len as i64).sum::<i64>(), "length {len}");
    }
    // Through the op: a ragged row of 20 million ones sums to 20 million.
    let x =
        RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![big], vec![1f32; big]).unwrap(), vec![0, big as i64])
            .unwrap();
    let sum = run(ReduceKind::Sum, &x, Some(1), false).unwrap();
    assert_eq!(sum.flat_slice::<f32>().unwrap(), &[big as f32]);
}

/// Float statistics over many groups split across the call's threads: the same bits as on one
/// thread, and the logsumexp equal to a plain loop's.
#[test]
fn statistics_on_threads_match_one_thread() {
    use crate::reduce::defs::{Statistic, StatisticKind};
    let rows = 3 * ragtime_runtime::parallel::MIN_ITEMS_PER_THREAD + 11;
    let values: Vec<f32> = (0..rows * 4).map(|k| ((k * 53) % 1000) as f32 / 100.0 - 5.0).collect();
    let x = RaggedTensor::dense(DenseTensor::from_vec(vec![rows, 4], values.clone()).unwrap());
    for kind in StatisticKind::ALL {
        let on = |threads: usize| {
            let ctx = ExecContext::new(Limits::untrusted()).with_threads(threads);
            Statistic::new(kind, 1, false).perform(&ctx, std::slice::from_ref(&x)).unwrap().remove(0)
        };
        let (one, two) = (on(1), on(2));
        assert_eq!(one.flat_slice::<f32>(), two.flat_slice::<f32>(), "{kind:?}");
        if kind == StatisticKind::LogSumExp {
            let want: Vec<f32> = values
                .chunks_exact(4)
                .map(|g| {
                    let m = g.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
                    (g.iter().map(|&v| (f64::from(v) - m).exp()).sum::<f64>().ln() + m) as f32
                })
                .collect();
            assert_eq!(two.flat_slice::<f32>(), Some(&want[..]));
        }
    }
}

#[test]
fn long_rows_of_vector_items_fold_pairwise_like_the_plan() {
    use crate::reduce::plan::FOLD_BLOCK;
    let ctx = ExecContext::new(Limits::untrusted());
    // A row of 20 million two-wide items (1, 2): in order the columns would stop at 2^24 and
    // 2^25; folded pairwise, both stay exact.
    let big = 20_000_000usize;
    let values: Vec<f32> = (0..big).flat_map(|_| [1f32, 2.0]).collect();
    let x = RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![big, 2], values).unwrap(), vec![0, 0, big as i64])
        .unwrap();
    let sum = run(ReduceKind::Sum, &x, Some(1), false).unwrap();
    assert_eq!(sum.flat_slice::<f32>().unwrap(), &[0.0, 0.0, big as f32, 2.0 * big as f32]);
    let mean = run(ReduceKind::Mean, &x, Some(1), false).unwrap();
    assert_eq!(&mean.flat_slice::<f32>().unwrap()[2..], &[1.0, 2.0]);

    // The rows' fast paths (`row_sums`, the generic one) give the plan's bits (each column folded
    // by `fold_group`) at every length, and an in-order fold's up to the block.
    let inner = 3;
    let lengths = [0, 1, FOLD_BLOCK - 1, FOLD_BLOCK, FOLD_BLOCK + 1, 3 * FOLD_BLOCK + 5, 9 * FOLD_BLOCK + 700];
    let mut splits = vec![0i64];
    for len in lengths {
        splits.push(splits[splits.len() - 1] + len as i64);
    }
    let n = *splits.last().unwrap() as usize;
    // Near 1 on both sides, so the products stay finite and every fold rounds.
    let values: Vec<f32> = (0..n * inner).map(|k| 1.0 + (((k * 7919) % 1000) as f32 - 499.5) * 1.37e-5).collect();
    let x =
        RaggedTensor::from_row_splits(DenseTensor::from_vec(vec![n, inner], values.clone()).unwrap(), splits.clone())
            .unwrap();
    let plan = plan_reduction(&ctx, "reduce_sum", &x, &Axes::from(Some(1)), false).unwrap();
    for kind in [ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Prod, ReduceKind::Max] {
        let got = run(kind, &x, Some(1), false).unwrap();
        let want = fold(&ctx, kind, &Groups::Plan(&plan), x.flat_values(), plan.flat_shape.clone()).unwrap();
        let bits = |t: &[f32]| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(got.flat_slice::<f32>().unwrap()), bits(want.as_slice::<f32>().unwrap()), "{kind:?}");
        if kind == ReduceKind::Sum {
            for (r, w) in splits.windows(2).enumerate().filter(|(_, w)| w[1] - w[0] <= FOLD_BLOCK as i64) {
                for s in 0..inner {
                    let in_order = (w[0] as usize..w[1] as usize).fold(0f32, |acc, k| acc + values[k * inner + s]);
                    let got = got.flat_slice::<f32>().unwrap()[r * inner + s];
                    assert_eq!(got.to_bits(), in_order.to_bits(), "row {r}, column {s}");
                }
            }
        }
    }
}
