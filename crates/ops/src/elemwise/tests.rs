//! Unit tests of the elementwise family.

use ragtime_core::limits::Limits;
use std::collections::BTreeMap;

use ragtime_core::{ragged, ErrorKind, ExecContext, Literal, RowPartition};
use ragtime_core::{DType, DenseTensor, Element, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attrs, Op};

use crate::elemwise::defs::Elemwise;
use crate::elemwise::lookup;
use crate::elemwise::op::AddN;
use crate::elemwise::scalar_op::{Accepts, ScalarOp, NAMED_SCALAR_OPS};

fn run(op: ScalarOp, inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
    let e = Elemwise::new(op);
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let inferred = e.infer(&types)?;
    let out = e.perform(&ExecContext::new(Limits::untrusted()), inputs)?.remove(0);
    assert!(
        inferred[0].accepts(&TensorType::of(&out)),
        "infer said {}, perform gave {}",
        inferred[0],
        TensorType::of(&out)
    );
    Ok(out)
}

fn lit(r: Result<RaggedTensor>) -> Literal {
    r.unwrap().to_literal()
}

fn dense(r: Result<RaggedTensor>) -> RaggedTensor {
    RaggedTensor::from_literal_typed(&r.unwrap().to_literal(), None, Some(0), None).unwrap()
}

pub(crate) fn scalar<T: Element>(v: T) -> RaggedTensor {
    RaggedTensor::dense(DenseTensor::scalar(v))
}

fn as_dtype(r: Result<RaggedTensor>, dtype: DType) -> RaggedTensor {
    let rt = r.unwrap();
    RaggedTensor::from_literal_typed(&rt.to_literal(), Some(dtype), Some(rt.ragged_rank()), None).unwrap()
}

pub(crate) fn x() -> RaggedTensor {
    ragged![[1, 2], [3], [4, 5, 6]].unwrap()
}

fn z() -> RaggedTensor {
    ragged![[1, 1], [2], [3, 3, 3]].unwrap()
}

#[test]
fn binary_ops_match_tensorflow() {
    // broadcasting.json binary_* cases.
    let cases: [(ScalarOp, Result<RaggedTensor>); 10] = [
        (ScalarOp::Add, ragged![[2, 3], [5], [7, 8, 9]]),
        (ScalarOp::Subtract, ragged![[0, 1], [1], [1, 2, 3]]),
        (ScalarOp::Multiply, ragged![[1, 2], [6], [12, 15, 18]]),
        (ScalarOp::FloorDiv, ragged![[1, 2], [1], [1, 1, 2]]),
        (ScalarOp::FloorMod, ragged![[0, 0], [1], [1, 2, 0]]),
        (ScalarOp::Pow, ragged![[1, 2], [9], [64, 125, 216]]),
        (ScalarOp::Maximum, ragged![[1, 2], [3], [4, 5, 6]]),
        (ScalarOp::BitwiseAnd, ragged![[1, 0], [2], [0, 1, 2]]),
        (ScalarOp::BitwiseOr, ragged![[1, 3], [3], [7, 7, 7]]),
        (ScalarOp::BitwiseXor, ragged![[0, 3], [1], [7, 6, 5]]),
    ];
    for (op, want) in cases {
        assert_eq!(lit(run(op, &[x(), z()])), lit(want), "{op}");
    }
    assert_eq!(lit(run(ScalarOp::Minimum, &[x(), z()])), lit(Ok(z())));
}

#[test]
fn comparisons_give_bool() {
    let cases: [(ScalarOp, Result<RaggedTensor>); 6] = [
        (ScalarOp::Equal, ragged![[true, false], [false], [false, false, false]]),
        (ScalarOp::NotEqual, ragged![[false, true], [true], [true, true, true]]),
        (ScalarOp::Less, ragged![[false, false], [false], [false, false, false]]),
        (ScalarOp::LessEqual, ragged![[true, false], [false], [false, false, false]]),
        (ScalarOp::Greater, ragged![[false, true], [true], [true, true, true]]),
        (ScalarOp::GreaterEqual, ragged![[true, true], [true], [true, true, true]]),
    ];
    for (op, want) in cases {
        assert_eq!(lit(run(op, &[x(), z()])), lit(want), "{op}");
    }
}

#[test]
fn string_equality() {
    let a = ragged![["a", "b"], [""]].unwrap();
    let b = ragged![["a", "c"], [""]].unwrap();
    assert_eq!(lit(run(ScalarOp::Equal, &[a.clone(), b.clone()])), lit(ragged![[true, false], [true]]));
    assert_eq!(lit(run(ScalarOp::NotEqual, &[a.clone(), b.clone()])), lit(ragged![[false, true], [false]]));
    // `tf.add` concatenates strings.
    assert_eq!(lit(run(ScalarOp::Add, &[a.clone(), b.clone()])), lit(ragged![["aa", "bc"], [""]]));
    assert_eq!(run(ScalarOp::Subtract, &[a.clone(), a.clone()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    assert_eq!(run(ScalarOp::Less, &[a.clone(), a]).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
fn divide_is_true_division() {
    let y = run(ScalarOp::Divide, &[x(), z()]).unwrap();
    assert_eq!(y.dtype(), DType::F64);
    let want = ragged![[1.0, 2.0], [1.5], [1.3333333333333333, 1.6666666666666667, 2.0]].unwrap();
    let got = y.flat_slice::<f64>().unwrap();
    let want32 = want.flat_slice::<f32>().unwrap();
    for (g, w) in got.iter().zip(want32) {
        assert!((g - f64::from(*w)).abs() < 1e-6, "{g} vs {w}");
    }
    assert_eq!(got[2], 1.5);
    assert_eq!(got[3], 4.0 / 3.0);
    let small = as_dtype(ragged![[1, 2]], DType::I16);
    assert_eq!(run(ScalarOp::Divide, &[small.clone(), small]).unwrap().dtype(), DType::F32);
    let by_zero = run(ScalarOp::Divide, &[x(), scalar(0i32)]).unwrap();
    assert!(by_zero.flat_slice::<f64>().unwrap().iter().all(|v| v.is_infinite()));
}

#[test]
fn logical_ops() {
    let a = ragged![[true, false], [true], [false, false, true]].unwrap();
    let b = ragged![[true, true], [false], [false, true, true]].unwrap();
    assert_eq!(
        lit(run(ScalarOp::LogicalAnd, &[a.clone(), b.clone()])),
        lit(ragged![[true, false], [false], [false, false, true]])
    );
    assert_eq!(
        lit(run(ScalarOp::LogicalOr, &[a.clone(), b.clone()])),
        lit(ragged![[true, true], [true], [false, true, true]])
    );
    assert_eq!(
        lit(run(ScalarOp::LogicalXor, &[a.clone(), b])),
        lit(ragged![[false, true], [true], [false, true, false]])
    );
    assert_eq!(lit(run(ScalarOp::LogicalNot, &[a])), lit(ragged![[false, true], [false], [true, true, false]]));
    assert_eq!(run(ScalarOp::LogicalAnd, &[x(), z()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
fn unary_float_ops() {
    // broadcasting.json unary_* cases (float32 inputs).
    let v = || ragged![[0.5, -1.25], [3.0], [-4.5, 2.0, 0.0]];
    let cases: [(ScalarOp, Result<RaggedTensor>); 8] = [
        (ScalarOp::Negative, ragged![[-0.5, 1.25], [-3.0], [4.5, -2.0, -0.0]]),
        (ScalarOp::Abs, ragged![[0.5, 1.25], [3.0], [4.5, 2.0, 0.0]]),
        (ScalarOp::Square, ragged![[0.25, 1.5625], [9.0], [20.25, 4.0, 0.0]]),
        (ScalarOp::Floor, ragged![[0.0, -2.0], [3.0], [-5.0, 2.0, 0.0]]),
        (ScalarOp::Ceil, ragged![[1.0, -1.0], [3.0], [-4.0, 2.0, 0.0]]),
        (ScalarOp::Round, ragged![[0.0, -1.0], [3.0], [-4.0, 2.0, 0.0]]),
        (ScalarOp::Sign, ragged![[1.0, -1.0], [1.0], [-1.0, 1.0, 0.0]]),
        (
            ScalarOp::Exp,
            ragged![
                [1.6487212181091309, 0.2865048050880432],
                [20.08553695678711],
                [0.011108996346592903, 7.389056205749512, 1.0]
            ],
        ),
    ];
    for (op, want) in cases {
        let got = run(op, &[v().unwrap()]).unwrap();
        let (g, w) = (got.flat_slice::<f32>().unwrap(), want.as_ref().unwrap().flat_slice::<f32>().unwrap());
        assert!(g.iter().zip(w).all(|(a, b)| (a - b).abs() <= 1e-6 + 1e-5 * b.abs()), "{op}: got {g:?}, want {w:?}");
    }
    let sig = run(ScalarOp::Sigmoid, &[v().unwrap()]).unwrap();
    let want =
        [0.622459352016449f64, 0.22270014882087708, 0.9525741338729858, 0.010986942797899246, 0.8807970881462097, 0.5];
    assert!(sig
        .flat_slice::<f32>()
        .unwrap()
        .iter()
        .zip(want)
        .all(|(&a, b)| (f64::from(a) - b).abs() <= 1e-6 + 1e-5 * b.abs()));
    let sq = run(ScalarOp::Sqrt, &[as_dtype(ragged![[9.0, 0.25], []], DType::F64)]).unwrap();
    assert_eq!(sq.flat_slice::<f64>(), Some(&[3.0, 0.5][..]));
    assert_eq!(run(ScalarOp::Sqrt, &[x()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
fn round_is_half_to_even_and_sign_keeps_nan() {
    let v = RaggedTensor::dense(DenseTensor::vector(vec![0.5f64, 1.5, 2.5, -0.5, -1.5, f64::NAN]));
    let r = run(ScalarOp::Round, std::slice::from_ref(&v)).unwrap();
    let r = r.flat_slice::<f64>().unwrap();
    assert_eq!(&r[..5], &[0.0, 2.0, 2.0, -0.0, -2.0]);
    assert!(r[5].is_nan());
    assert!(run(ScalarOp::Sign, &[v]).unwrap().flat_slice::<f64>().unwrap()[5].is_nan());
}

#[test]
fn integer_unary_ops() {
    assert_eq!(lit(run(ScalarOp::BitwiseInvert, &[x()])), lit(ragged![[-2, -3], [-4], [-5, -6, -7]]));
    assert_eq!(lit(run(ScalarOp::Square, &[x()])), lit(ragged![[1, 4], [9], [16, 25, 36]]));
    let m = RaggedTensor::dense(DenseTensor::vector(vec![i32::MIN, -3, 0]));
    let got = run(ScalarOp::Abs, std::slice::from_ref(&m)).unwrap();
    assert_eq!(got.flat_slice::<i32>(), Some(&[i32::MIN, 3, 0][..]), "abs wraps like TensorFlow");
    assert_eq!(
        run(ScalarOp::Negative, std::slice::from_ref(&m)).unwrap().flat_slice::<i32>(),
        Some(&[i32::MIN, 3, 0][..])
    );
    assert_eq!(run(ScalarOp::Sign, &[m]).unwrap().flat_slice::<i32>(), Some(&[-1, -1, 0][..]));
    let u = as_dtype(ragged![[1, 2]], DType::U8);
    assert_eq!(run(ScalarOp::Negative, &[u]).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
fn integer_arithmetic_wraps() {
    let big = RaggedTensor::dense(DenseTensor::vector(vec![i32::MAX, i32::MIN]));
    assert_eq!(
        run(ScalarOp::Add, &[big.clone(), scalar(1i32)]).unwrap().flat_slice::<i32>(),
        Some(&[i32::MIN, i32::MIN + 1][..])
    );
    assert_eq!(run(ScalarOp::Multiply, &[big, scalar(2i32)]).unwrap().flat_slice::<i32>(), Some(&[-2, 0][..]));
    let u = RaggedTensor::dense(DenseTensor::vector(vec![0u8, 200]));
    assert_eq!(run(ScalarOp::Subtract, &[u, scalar(1u8)]).unwrap().flat_slice::<u8>(), Some(&[255, 199][..]));
}

#[test]
fn floor_division_follows_the_divisor_sign() {
    let a = RaggedTensor::dense(DenseTensor::vector(vec![7i64, -7, 7, -7]));
    let b = RaggedTensor::dense(DenseTensor::vector(vec![2i64, 2, -2, -2]));
    assert_eq!(
        run(ScalarOp::FloorDiv, &[a.clone(), b.clone()]).unwrap().flat_slice::<i64>(),
        Some(&[3, -4, -4, 3][..])
    );
    assert_eq!(run(ScalarOp::FloorMod, &[a, b]).unwrap().flat_slice::<i64>(), Some(&[1, 1, -1, -1][..]));
    let fa = RaggedTensor::dense(DenseTensor::vector(vec![7.5f64, -7.5]));
    let fb = RaggedTensor::dense(DenseTensor::vector(vec![-2.0f64, 2.0]));
    assert_eq!(run(ScalarOp::FloorMod, &[fa.clone(), fb.clone()]).unwrap().flat_slice::<f64>(), Some(&[-0.5, 0.5][..]));
    assert_eq!(run(ScalarOp::FloorDiv, &[fa, fb]).unwrap().flat_slice::<f64>(), Some(&[-4.0, -4.0][..]));
}

#[test]
fn integer_division_by_zero_names_the_row() {
    let d = ragged![[1, 1], [1], [1, 1, 0]].unwrap();
    for op in [ScalarOp::FloorDiv, ScalarOp::FloorMod] {
        let e = run(op, &[x(), d.clone()]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(op.name()) && e.to_string().contains("row 2"), "{e}");
    }
    let v = ragged![[4, 5], [6]].unwrap();
    let zero = dense(ragged![[1], [0]]);
    let e = run(ScalarOp::FloorDiv, &[v, zero]).unwrap_err();
    assert!(e.to_string().contains("row 1"), "{e}");
}

#[test]
fn integer_pow() {
    let e = run(ScalarOp::Pow, &[x(), scalar(-1i32)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("pow"), "{e}");
    assert_eq!(lit(run(ScalarOp::Pow, &[x(), scalar(0i32)])), lit(ragged![[1, 1], [1], [1, 1, 1]]));
    let two = RaggedTensor::dense(DenseTensor::vector(vec![2i64]));
    assert_eq!(run(ScalarOp::Pow, &[two, scalar(62i64)]).unwrap().flat_slice::<i64>(), Some(&[1i64 << 62][..]));
}

#[test]
fn maximum_propagates_nan() {
    let a = RaggedTensor::dense(DenseTensor::vector(vec![f32::NAN, 1.0]));
    let b = RaggedTensor::dense(DenseTensor::vector(vec![1.0f32, f32::NAN]));
    for op in [ScalarOp::Maximum, ScalarOp::Minimum] {
        let got = run(op, &[a.clone(), b.clone()]).unwrap();
        assert!(got.flat_slice::<f32>().unwrap().iter().all(|v| v.is_nan()), "{op}");
    }
}

#[test]
fn dtype_mismatch_is_refused_at_build_time() {
    let f = ragged![[1.0, 2.0], [3.0]].unwrap();
    let i = ragged![[1, 2], [3]].unwrap();
    let e = Elemwise::new(ScalarOp::Add).infer(&[TensorType::of(&i), TensorType::of(&f)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    assert!(e.to_string().contains("input 1 is float32"), "{e}");
    assert_eq!(
        Elemwise::new(ScalarOp::Add).perform(&ExecContext::new(Limits::untrusted()), &[i, f]).unwrap_err().kind(),
        ErrorKind::TypeMismatch
    );
    let arity = Elemwise::new(ScalarOp::Add).infer(&[TensorType::scalar(DType::I32)]).unwrap_err();
    assert_eq!(arity.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn broadcasting_cases() {
    // broadcasting.json: ragged + scalar, + column, rank-3 + [[10]], rank-4 + vector.
    assert_eq!(lit(run(ScalarOp::Add, &[ragged![[1, 2], [3]].unwrap(), scalar(3i32)])), lit(ragged![[4, 5], [6]]));
    let x = ragged![[10, 87, 12], [19, 53], [12, 32]].unwrap();
    let c = dense(ragged![[1000], [2000], [3000]]);
    assert_eq!(lit(run(ScalarOp::Add, &[x, c])), lit(ragged![[1010, 1087, 1012], [2019, 2053], [3012, 3032]]));
    let r4 = RaggedTensor::from_literal_typed(
        &ragged![[[[1], [2]], [], [[3]], [[4]]], [[[5], [6]], [[7]]]].unwrap().to_literal(),
        None,
        Some(2),
        Some(&[1]),
    )
    .unwrap();
    let v = RaggedTensor::dense(DenseTensor::vector(vec![10i32, 20, 30]));
    let got = run(ScalarOp::Add, &[r4, v]).unwrap();
    assert_eq!(got.ragged_rank(), 2);
    assert_eq!(got.flat_values().shape(), &[7, 3]);
    assert_eq!(&got.flat_slice::<i32>().unwrap()[..6], &[11, 21, 31, 12, 22, 32]);
    let bad = ragged![[10, 20], [30, 40], [50]].unwrap();
    let e = run(ScalarOp::Add, &[ragged![[1, 2, 3], [4], [5, 6]].unwrap(), bad]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn same_structure_keeps_the_partition() {
    let a = x();
    let b = a.with_flat_values(DenseTensor::vector(vec![1, 1, 1, 1, 1, 1])).unwrap();
    let y = run(ScalarOp::Add, &[a.clone(), b]).unwrap();
    assert!(y.partitions()[0].ptr_eq(&a.partitions()[0]));
    let n = run(ScalarOp::Negative, std::slice::from_ref(&a)).unwrap();
    assert!(n.partitions()[0].ptr_eq(&a.partitions()[0]));
}

#[test]
fn where_selects() {
    let c = ragged![[true, false], [true], [false, false, true]].unwrap();
    assert_eq!(lit(run(ScalarOp::Where, &[c.clone(), x(), z()])), lit(ragged![[1, 1], [3], [3, 3, 6]]));
    let s = ragged![["a", "b"], ["c"], ["d", "e", "f"]].unwrap();
    let t = RaggedTensor::dense(DenseTensor::String(ragtime_core::StringTensor::from_strings(&["-"], vec![]).unwrap()));
    assert_eq!(lit(run(ScalarOp::Where, &[c.clone(), s, t])), lit(ragged![["a", "-"], ["c"], ["-", "-", "f"]]));
    assert_eq!(run(ScalarOp::Where, &[x(), x(), z()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    let f = ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]].unwrap();
    assert_eq!(run(ScalarOp::Where, &[c, x(), f]).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
pub(crate) fn cast() {
    let y = run(ScalarOp::Cast(DType::F32), &[x()]).unwrap();
    assert_eq!(lit(Ok(y)), lit(ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]]));
    let s = ragged![["a"], []].unwrap();
    assert_eq!(lit(run(ScalarOp::Cast(DType::String), std::slice::from_ref(&s))), lit(Ok(s.clone())));
    assert_eq!(run(ScalarOp::Cast(DType::I32), &[s]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    assert_eq!(Elemwise::new(ScalarOp::Cast(DType::F32)).name(), "Elemwise{cast<float32>}");
}

#[test]
fn empty_and_zero_row_inputs() {
    let empty = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
    let y = run(ScalarOp::Exp, std::slice::from_ref(&empty)).unwrap();
    assert_eq!(y.nrows(), 0);
    let y = run(ScalarOp::Add, &[empty, scalar(1.0f32)]).unwrap();
    assert_eq!(y.flat_values().len(), 0);
    let rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0, 0, 0]).unwrap();
    assert_eq!(lit(run(ScalarOp::FloorDiv, &[rows, scalar(0i32)])), lit(ragged![[], []]));
}

#[test]
fn lookup_builds_ops_by_graph_name() {
    let attrs = |op: &str, map: BTreeMap<String, ragtime_graph::Attr>| Attrs::new(op, map);
    let add = lookup("add", &attrs("add", BTreeMap::new())).unwrap().unwrap();
    assert_eq!(add.name(), "Elemwise{add}");
    let mut m = BTreeMap::new();
    m.insert("dtype".to_string(), ragtime_graph::Attr::Str("float64".into()));
    assert_eq!(lookup("cast", &attrs("cast", m)).unwrap().unwrap().name(), "Elemwise{cast<float64>}");
    let mut bad = BTreeMap::new();
    bad.insert("axis".to_string(), ragtime_graph::Attr::Int(1));
    assert_eq!(lookup("add", &attrs("add", bad)).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(lookup("concat", &attrs("concat", BTreeMap::new())).is_none());
    for op in NAMED_SCALAR_OPS {
        assert_eq!(ScalarOp::from_name(op.name()), Some(op));
    }
}

#[test]
fn uniform_partitions_survive() {
    let p = RowPartition::from_uniform_row_length(2, 2).unwrap();
    let x = RaggedTensor::new(DenseTensor::vector(vec![1i32, 2, 3, 4]), vec![p.clone()]).unwrap();
    let y = run(ScalarOp::Multiply, &[x, scalar(2i32)]).unwrap();
    assert!(y.partitions()[0].ptr_eq(&p));
    assert_eq!(y.flat_slice::<i32>(), Some(&[2, 4, 6, 8][..]));
}

#[test]
fn truncating_division_rounds_toward_zero_and_names_the_row_of_a_zero_divisor() {
    let a = RaggedTensor::dense(DenseTensor::vector(vec![7i64, -7, 7, -7]));
    let b = RaggedTensor::dense(DenseTensor::vector(vec![2i64, 2, -2, -2]));
    let q = run(ScalarOp::TruncateDiv, &[a.clone(), b.clone()]).unwrap();
    assert_eq!(q.flat_slice::<i64>(), Some(&[3, -3, -3, 3][..]));
    let r = run(ScalarOp::TruncateMod, &[a, b]).unwrap();
    assert_eq!(r.flat_slice::<i64>(), Some(&[1, -1, 1, -1][..]));
    let d = ragged![[1, 1], [1], [1, 0, 1]].unwrap();
    for op in [ScalarOp::TruncateDiv, ScalarOp::TruncateMod] {
        let e = run(op, &[x(), d.clone()]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(op.name()) && e.to_string().contains("row 2"), "{e}");
        assert!(Elemwise::new(op).properties().can_fail);
    }
    // truncatemod has no 8/16-bit or unsigned kernel in TensorFlow; truncatediv has.
    let small = as_dtype(ragged![[7, -7]], DType::I8);
    assert_eq!(
        run(ScalarOp::TruncateMod, &[small.clone(), small.clone()]).unwrap_err().kind(),
        ErrorKind::TypeMismatch
    );
    assert_eq!(run(ScalarOp::TruncateDiv, &[small.clone(), small]).unwrap().flat_slice::<i8>(), Some(&[1, 1][..]));
}

#[test]
fn shift_counts_are_clamped() {
    let v = RaggedTensor::dense(DenseTensor::vector(vec![1u8, 255, 3]));
    let s = RaggedTensor::dense(DenseTensor::vector(vec![9u8, 1, 0]));
    let l = run(ScalarOp::BitwiseLeftShift, &[v.clone(), s.clone()]).unwrap();
    assert_eq!(l.flat_slice::<u8>(), Some(&[128, 254, 3][..]));
    let r = run(ScalarOp::BitwiseRightShift, &[v, s]).unwrap();
    assert_eq!(r.flat_slice::<u8>(), Some(&[0, 127, 3][..]), "unsigned right shifts are logical");
    let n = RaggedTensor::dense(DenseTensor::vector(vec![-8i64, -8, 5]));
    let c = RaggedTensor::dense(DenseTensor::vector(vec![1i64, 1000, -3]));
    let r = run(ScalarOp::BitwiseRightShift, &[n, c]).unwrap();
    assert_eq!(r.flat_slice::<i64>(), Some(&[-4, -1, 5][..]), "signed right shifts are arithmetic");
    let f = ragged![[1.0], []].unwrap();
    assert_eq!(run(ScalarOp::BitwiseLeftShift, &[f.clone(), f]).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
fn predicates_give_bool_and_refuse_integers() {
    let v = RaggedTensor::dense(DenseTensor::vector(vec![f32::NAN, f32::INFINITY, -1.0, f32::NEG_INFINITY]));
    let want: [(ScalarOp, [bool; 4]); 3] = [
        (ScalarOp::IsNan, [true, false, false, false]),
        (ScalarOp::IsInf, [false, true, false, true]),
        (ScalarOp::IsFinite, [false, false, true, false]),
    ];
    for (op, w) in want {
        let got = run(op, std::slice::from_ref(&v)).unwrap();
        assert_eq!(got.dtype(), DType::Bool);
        assert_eq!(got.flat_slice::<bool>(), Some(&w[..]), "{op}");
        assert_eq!(run(op, &[x()]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    }
}

#[test]
fn float_only_math_refuses_integers_and_keeps_empty_rows() {
    let empty = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f64>::new()), vec![0, 0, 0]).unwrap();
    let no_rows = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<f32>::new()), vec![0]).unwrap();
    for op in NAMED_SCALAR_OPS.into_iter().filter(|op| op.arity() == 1 && op.accepts() == Accepts::Float) {
        assert_eq!(run(op, &[x()]).unwrap_err().kind(), ErrorKind::TypeMismatch, "{op}");
        assert_eq!(run(op, std::slice::from_ref(&empty)).unwrap().nrows(), 2, "{op}");
        assert_eq!(run(op, std::slice::from_ref(&no_rows)).unwrap().nrows(), 0, "{op}");
    }
}

#[test]
fn divide_no_nan_of_integers_is_a_float_division_with_zero_for_zero_divisors() {
    let a = as_dtype(ragged![[3, 4], [5]], DType::I16);
    let b = as_dtype(ragged![[2, 0], [0]], DType::I16);
    let q = run(ScalarOp::DivideNoNan, &[a, b]).unwrap();
    assert_eq!(q.dtype(), DType::F32);
    assert_eq!(q.flat_slice::<f32>(), Some(&[1.5, 0.0, 0.0][..]));
    let q = run(ScalarOp::DivideNoNan, &[x(), scalar(0i32)]).unwrap();
    assert_eq!(q.dtype(), DType::F64);
    assert!(q.flat_slice::<f64>().unwrap().iter().all(|v| *v == 0.0));
}

#[test]
fn softplus_follows_tensorflow_thresholds() {
    let v = RaggedTensor::dense(DenseTensor::vector(vec![100.0f64, -100.0, 0.0, f64::NAN]));
    let got = run(ScalarOp::Softplus, std::slice::from_ref(&v)).unwrap();
    let g = got.flat_slice::<f64>().unwrap();
    assert_eq!(g[0], 100.0);
    assert_eq!(g[1], (-100.0f64).exp());
    assert_eq!(g[2], 2.0f64.ln());
    assert!(g[3].is_nan());
    let ls = run(ScalarOp::LogSigmoid, &[v]).unwrap();
    assert_eq!(ls.flat_slice::<f64>().unwrap()[1], -100.0);
}

#[test]
fn add_n_adds_without_broadcasting() {
    let add_n = AddN::new();
    let types = |v: &[RaggedTensor]| v.iter().map(TensorType::of).collect::<Vec<_>>();
    let three = [x(), z(), x()];
    assert_eq!(add_n.infer(&types(&three)).unwrap()[0], TensorType::of(&x()));
    let got = add_n.perform(&ExecContext::new(Limits::untrusted()), &three).unwrap().remove(0);
    assert_eq!(got.to_literal(), ragged![[3, 5], [8], [11, 13, 15]].unwrap().to_literal());
    assert!(got.partitions()[0].ptr_eq(&x().partitions()[0]) || got.same_structure(&x()));
    assert_eq!(
        add_n.perform(&ExecContext::new(Limits::untrusted()), &[x()]).unwrap()[0].to_literal(),
        x().to_literal()
    );
    let other = ragged![[1, 2, 3], [4], [5, 6]].unwrap();
    let e = add_n.perform(&ExecContext::new(Limits::untrusted()), &[x(), other]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    assert!(e.to_string().contains("add_n") && e.to_string().contains("input 1"), "{e}");
    let e = add_n.infer(&types(&[x(), scalar(1i32)])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    let f = ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]].unwrap();
    assert_eq!(add_n.infer(&types(&[x(), f])).unwrap_err().kind(), ErrorKind::TypeMismatch);
    assert_eq!(add_n.infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let s = ragged![["a"]].unwrap();
    assert_eq!(add_n.infer(&types(&[s.clone(), s])).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

/// Large binary calls split across the call's threads: the same values as on one thread, and a
/// fault reports the first faulting element whatever thread meets it.
#[test]
fn binary_kernels_on_threads_match_one_thread_and_report_the_first_fault() {
    let n = 4 * ragtime_runtime::parallel::MIN_ITEMS_PER_THREAD + 3;
    let shape = vec![n / 4, 4];
    let xs: Vec<f32> = (0..(n / 4) * 4).map(|k| ((k * 37) % 1000) as f32 / 7.0 - 50.0).collect();
    let bias = RaggedTensor::dense(DenseTensor::from_vec(vec![4], vec![0.5f32, -1.0, 2.0, 3.5]).unwrap());
    let x = RaggedTensor::dense(DenseTensor::from_vec(shape.clone(), xs).unwrap());
    let on = |threads: usize, op: ScalarOp, inputs: &[RaggedTensor]| {
        let ctx = ExecContext::new(Limits::untrusted()).with_threads(threads);
        Elemwise::new(op).perform(&ctx, inputs).map(|mut v| v.remove(0))
    };
    for op in [ScalarOp::Add, ScalarOp::Multiply, ScalarOp::Subtract, ScalarOp::Divide] {
        let one = on(1, op, &[x.clone(), bias.clone()]).unwrap();
        let two = on(2, op, &[x.clone(), bias.clone()]).unwrap();
        assert_eq!(one.flat_slice::<f32>(), two.flat_slice::<f32>(), "{op:?}");
        // Independently: a plain loop over the broadcast.
        let want: Vec<f32> = x
            .flat_slice::<f32>()
            .unwrap()
            .chunks_exact(4)
            .flat_map(|row| {
                row.iter().zip([0.5f32, -1.0, 2.0, 3.5]).map(|(&a, b)| match op {
                    ScalarOp::Add => a + b,
                    ScalarOp::Multiply => a * b,
                    ScalarOp::Subtract => a - b,
                    _ => a / b,
                })
            })
            .collect();
        assert_eq!(two.flat_slice::<f32>(), Some(&want[..]), "{op:?}");
    }
    // Integer division by zero at two elements, one in each thread's half: the first is named.
    let mut divisors = vec![3i64; n];
    divisors[n - 5] = 0;
    divisors[n / 3] = 0;
    let numerators = RaggedTensor::dense(DenseTensor::from_vec(vec![n], (0..n as i64).collect()).unwrap());
    let divisors = RaggedTensor::dense(DenseTensor::from_vec(vec![n], divisors).unwrap());
    for threads in [1, 2] {
        let e = on(threads, ScalarOp::FloorDiv, &[numerators.clone(), divisors.clone()]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let first = format!("{}", n / 3);
        assert!(e.to_string().contains(&first), "{threads} threads: {e}");
    }
}
