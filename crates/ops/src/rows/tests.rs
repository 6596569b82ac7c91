//! Unit tests of the row ops.

use ragtime_core::limits::Limits;
use std::collections::BTreeMap;

use ragtime_core::{ragged, ErrorKind, ExecContext, Literal};
use ragtime_core::{DType, DenseTensor, RaggedTensor, Result, TensorType};
use ragtime_graph::Attr;
use ragtime_graph::{Attrs, Op};

use crate::rows::defs::Cumulative;
use crate::rows::defs::Softmax;
use crate::rows::sort::{Argsort, Sort, TopK};

fn run(op: &dyn Op, x: RaggedTensor) -> Result<Vec<RaggedTensor>> {
    let inferred = op.infer(&[TensorType::of(&x)])?;
    let out = op.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x))?;
    for (t, v) in inferred.iter().zip(&out) {
        assert!(t.accepts(&TensorType::of(v)), "infer said {t}, perform gave {}", TensorType::of(v));
    }
    Ok(out)
}

fn lit(v: &RaggedTensor) -> Literal {
    v.to_literal()
}

pub(crate) fn attrs(op: &str, pairs: &[(&str, Attr)]) -> Attrs {
    Attrs::new(op, pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>())
}

#[test]
fn softmax_keeps_empty_rows_and_refuses_other_axes_and_integers() {
    let x = ragged![[0.0, 0.0], [], [5.0]].unwrap();
    let y = run(&Softmax::new(false), x.clone()).unwrap().remove(0);
    assert_eq!(lit(&y), lit(&ragged![[0.5, 0.5], [], [1.0]].unwrap()));
    assert!(y.partitions()[0].ptr_eq(&x.partitions()[0]));
    let l = run(&Softmax::new(true), x).unwrap().remove(0);
    assert_eq!(l.flat_slice::<f32>(), Some(&[-(2.0f32.ln()), -(2.0f32.ln()), 0.0][..]));
    let e = Softmax::from_attrs(false, &attrs("softmax", &[("axis", Attr::Int(0))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = run(&Softmax::new(true), ragged![[1, 2]].unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    assert!(e.to_string().contains("log_softmax"), "{e}");
    let zero = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
    assert_eq!(run(&Softmax::new(false), zero).unwrap()[0].nrows(), 0);
    let scalar = RaggedTensor::dense(DenseTensor::scalar(1.0f32));
    assert_eq!(run(&Softmax::new(false), scalar).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn cumulative_ops_refuse_outer_ragged_axes() {
    let x = ragged![[[1, 2], [3]], [[4]]].unwrap();
    let e = run(&Cumulative::new(false, 1, false, false), x.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("cumsum") && e.to_string().contains("axis 1"), "{e}");
    let y = run(&Cumulative::new(true, -1, true, true), x).unwrap().remove(0);
    assert_eq!(lit(&y), lit(&ragged![[[2, 1], [1]], [[1]]].unwrap()));
    let e = run(&Cumulative::new(false, 3, false, false), ragged![[1, 2]].unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(Cumulative::from_attrs(false, &attrs("cumsum", &[])).is_err(), "axis is required");
    let s = ragged![["a"]].unwrap();
    assert_eq!(run(&Cumulative::new(false, 1, false, false), s).unwrap_err().kind(), ErrorKind::TypeMismatch);
    let dense = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap());
    let y = run(&Cumulative::new(false, 0, false, false), dense).unwrap().remove(0);
    assert_eq!(y.flat_slice::<i32>(), Some(&[1, 2, 4, 6][..]));
}

#[test]
fn sorting_is_stable_and_total_with_nan() {
    let x = ragged![[2.0f32, f32::NAN, -1.0, 2.0], [], [0.0]].unwrap();
    let y = run(&Sort::new(false), x.clone()).unwrap().remove(0);
    let v = y.flat_slice::<f32>().unwrap();
    assert_eq!(&v[..3], &[-1.0, 2.0, 2.0]);
    assert!(v[3].is_nan());
    let i = run(&Argsort::new(true, false), x).unwrap().remove(0);
    assert_eq!(i.dtype(), DType::I32);
    assert_eq!(i.flat_slice::<i32>(), Some(&[1, 0, 3, 2, 0][..]));
    assert_eq!(run(&Sort::new(false), ragged![[true]].unwrap()).unwrap_err().kind(), ErrorKind::TypeMismatch);
    let e = Sort::from_attrs(&attrs("sort", &[("direction", Attr::Str("UP".into()))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn top_k_shortens_rows_and_checks_k_against_uniform_dims() {
    let x = ragged![[[3, 1, 3], []], [[5]]].unwrap();
    let out = run(&TopK::new(2), x).unwrap();
    assert_eq!(lit(&out[0]), lit(&ragged![[[3, 3], []], [[5]]].unwrap()));
    assert_eq!(lit(&out[1]), lit(&ragged![[[0, 2], []], [[0]]].unwrap()));
    let dense = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 2], vec![1.0f64, 2.0, 4.0, 3.0]).unwrap());
    let out = run(&TopK::new(1), dense.clone()).unwrap();
    assert_eq!(out[0].flat_values().shape(), &[2, 1]);
    assert_eq!(out[1].flat_slice::<i32>(), Some(&[1, 0][..]));
    assert_eq!(run(&TopK::new(3), dense).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let e = TopK::from_attrs(&attrs("top_k", &[("k", Attr::Int(-1))])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let zero = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i64>::new()), vec![0]).unwrap();
    let out = run(&TopK::new(2), zero).unwrap();
    assert_eq!(out[0].nrows(), 0);
    assert_eq!(out[1].nrows(), 0);
}
