//! The bad-input matrix: public constructors, ops (through `compile` and `Function::call`) and
//! `Function::call` itself, each given malformed input. Every row must return an error of its
//! kind (a panic is caught only to be reported as a failure of the row), and leave the caller's
//! inputs unchanged.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{DenseTensor, Dim, ErrorKind, Literal, Result, RowPartition, StringTensor};

type Run = Box<dyn Fn(&[RaggedTensor]) -> Result<Vec<RaggedTensor>>>;

struct Row {
    name: &'static str,
    kind: ErrorKind,
    inputs: Vec<RaggedTensor>,
    run: Run,
}

fn row(name: &'static str, kind: ErrorKind, inputs: Vec<RaggedTensor>, run: Run) -> Row {
    Row { name, kind, inputs, run }
}

/// Builds a graph over inputs of the values' exact types with `build`, compiles and calls it.
fn op(build: impl Fn(&[Var]) -> Var + 'static) -> Run {
    Box::new(move |inputs| {
        let g = Graph::new();
        let vars: Vec<Var> =
            inputs.iter().enumerate().map(|(i, x)| g.input(&format!("x{i}"), TensorType::of(x))).collect();
        let out = build(&vars);
        let refs: Vec<&Var> = vars.iter().collect();
        g.compile(&refs, &[&out])?.call(inputs)
    })
}

/// Compiles `x -> identity(x)` for an input of type `ty`, then calls it with the row's inputs.
fn call_typed(ty: TensorType) -> Run {
    Box::new(move |inputs| {
        let g = Graph::new();
        let x = g.input("x", ty.clone());
        let y = ops::identity(&x);
        g.compile(&[&x], &[&y])?.call(inputs)
    })
}

/// A constructor fed from the row's inputs (int64 vectors), giving the built tensor.
fn ctor(f: impl Fn(&[RaggedTensor]) -> Result<RaggedTensor> + 'static) -> Run {
    Box::new(move |inputs| f(inputs).map(|t| vec![t]))
}

fn i64s(t: &RaggedTensor) -> Vec<i64> {
    t.flat_values().as_slice::<i64>().unwrap().to_vec()
}

fn v64(v: &[i64]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}
fn v32(v: &[i32]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}
fn f32s(v: &[f32]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}
fn words(v: &[&str]) -> RaggedTensor {
    RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings(v, vec![v.len()]).unwrap()))
}
fn rt() -> RaggedTensor {
    ragged![[1, 2], [], [3]].unwrap()
}

fn matrix() -> Vec<Row> {
    use ErrorKind::*;
    vec![
        // Partitions: every rule broken, through the public constructors.
        row(
            "splits not from 0",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[1, 2, 3])],
            ctor(|i| RaggedTensor::from_row_splits(i[0].flat_values().clone(), i64s(&i[1]))),
        ),
        row(
            "splits decreasing",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[0, 2, 1, 3])],
            ctor(|i| RaggedTensor::from_row_splits(i[0].flat_values().clone(), i64s(&i[1]))),
        ),
        row(
            "splits empty",
            InvalidRowPartition,
            vec![v32(&[]), v64(&[])],
            ctor(|i| RaggedTensor::from_row_splits(i[0].flat_values().clone(), i64s(&i[1]))),
        ),
        row(
            "flat values longer than the last split",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[0, 2])],
            ctor(|i| RaggedTensor::from_row_splits(i[0].flat_values().clone(), i64s(&i[1]))),
        ),
        row(
            "flat values shorter than the last split",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[0, 2, 5])],
            ctor(|i| RaggedTensor::from_row_splits(i[0].flat_values().clone(), i64s(&i[1]))),
        ),
        row(
            "splits up to i64::MAX",
            InvalidRowPartition,
            vec![v64(&[0, i64::MAX])],
            ctor(|i| {
                RowPartition::from_row_splits(i64s(&i[0]))
                    .map(|p| RaggedTensor::dense(DenseTensor::vector(p.row_splits().to_vec())))
            }),
        ),
        row(
            "negative row length",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[2, -1, 2])],
            ctor(|i| RaggedTensor::from_row_lengths(i[0].flat_values().clone(), &i64s(&i[1]))),
        ),
        row(
            "row lengths past the values",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[2, 2])],
            ctor(|i| RaggedTensor::from_row_lengths(i[0].flat_values().clone(), &i64s(&i[1]))),
        ),
        row(
            "row length of 2^40",
            InvalidRowPartition,
            vec![v64(&[1 << 40])],
            ctor(|i| {
                RowPartition::from_row_lengths(&i64s(&i[0]))
                    .map(|p| RaggedTensor::dense(DenseTensor::vector(p.row_lengths().to_vec())))
            }),
        ),
        row(
            "row lengths overflowing i64",
            InvalidRowPartition,
            vec![v64(&[i64::MAX, i64::MAX])],
            ctor(|i| {
                RowPartition::from_row_lengths(&i64s(&i[0]))
                    .map(|p| RaggedTensor::dense(DenseTensor::vector(p.row_lengths().to_vec())))
            }),
        ),
        row(
            "row ids unsorted",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[0, 2, 1])],
            ctor(|i| RaggedTensor::from_value_rowids(i[0].flat_values().clone(), &i64s(&i[1]), None)),
        ),
        row(
            "row ids negative",
            InvalidRowPartition,
            vec![v32(&[1]), v64(&[-1])],
            ctor(|i| RaggedTensor::from_value_rowids(i[0].flat_values().clone(), &i64s(&i[1]), None)),
        ),
        row(
            "row ids fewer than values",
            InvalidRowPartition,
            vec![v32(&[1, 2]), v64(&[0])],
            ctor(|i| RaggedTensor::from_value_rowids(i[0].flat_values().clone(), &i64s(&i[1]), None)),
        ),
        row(
            "nrows below a row id",
            InvalidRowPartition,
            vec![v32(&[1]), v64(&[3])],
            ctor(|i| RaggedTensor::from_value_rowids(i[0].flat_values().clone(), &i64s(&i[1]), Some(2))),
        ),
        row(
            "row id of 2^40",
            InvalidArgument,
            vec![v32(&[1]), v64(&[1 << 40])],
            ctor(|i| RaggedTensor::from_value_rowids(i[0].flat_values().clone(), &i64s(&i[1]), None)),
        ),
        row(
            "uniform rows not dividing",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3])],
            ctor(|i| RaggedTensor::from_uniform_row_length(i[0].flat_values().clone(), 2)),
        ),
        row(
            "nested splits not chaining",
            InvalidRowPartition,
            vec![v32(&[1, 2, 3]), v64(&[0, 1, 3]), v64(&[0, 3])],
            ctor(|i| RaggedTensor::from_nested_row_splits(i[0].flat_values().clone(), &[i64s(&i[1]), i64s(&i[2])])),
        ),
        row(
            "ragged values of rank 0",
            InvalidRowPartition,
            vec![RaggedTensor::dense(DenseTensor::scalar(1i32))],
            ctor(|i| RaggedTensor::from_row_splits(i[0].flat_values().clone(), vec![0, 1])),
        ),
        // Values and types.
        row(
            "string offsets miscounted",
            InvalidValue,
            vec![],
            ctor(|_| {
                StringTensor::from_parts(Arc::from(&b"ab"[..]), Arc::from(&[0i64, 1][..]), vec![2])
                    .map(|s| DenseTensor::String(s).into())
            }),
        ),
        row(
            "string shape overflowing",
            InvalidValue,
            vec![],
            ctor(|_| {
                StringTensor::from_parts(Arc::from(&b""[..]), Arc::from(&[0i64][..]), vec![1 << 32, 1 << 32])
                    .map(|s| DenseTensor::String(s).into())
            }),
        ),
        row(
            "string offsets past the bytes",
            InvalidValue,
            vec![],
            ctor(|_| {
                StringTensor::from_parts(Arc::from(&b"ab"[..]), Arc::from(&[0i64, 9][..]), vec![1])
                    .map(|s| DenseTensor::String(s).into())
            }),
        ),
        row(
            "dense data not fitting its shape",
            IncompatibleShapes,
            vec![],
            ctor(|_| DenseTensor::from_vec(vec![2, 2], vec![1i32, 2, 3]).map(Into::into)),
        ),
        row("literal of mixed dtypes", InvalidValue, vec![], ctor(|_| ragged![[1], ["a"]])),
        row(
            "literal of mixed depths",
            InvalidValue,
            vec![],
            ctor(|_| RaggedTensor::from_literal(&Literal::List(vec![Literal::Int(1), Literal::List(vec![])]))),
        ),
        row(
            "literal claiming ragged rank 2^40",
            InvalidArgument,
            vec![],
            ctor(|_| RaggedTensor::from_literal_typed(&Literal::List(vec![]), Some(DType::I32), Some(1 << 40), None)),
        ),
        row(
            "literal of a wrong dtype",
            InvalidValue,
            vec![],
            ctor(|_| {
                RaggedTensor::from_literal_typed(
                    &Literal::List(vec![Literal::Float(1.5)]),
                    Some(DType::I32),
                    None,
                    None,
                )
            }),
        ),
        row(
            "type with ragged dims out of place",
            InvalidValue,
            vec![],
            ctor(|_| TensorType::new(DType::F32, 1, vec![Dim::Ragged, Dim::Known(2)]).map(|_| rt())),
        ),
        row(
            "fill of 2^80 elements",
            ResourceExhausted,
            vec![],
            ctor(|_| DenseTensor::full(vec![1 << 40, 1 << 40], &DenseTensor::scalar(1u8)).map(Into::into)),
        ),
        // Ops.
        row("add of int32 and float32", TypeMismatch, vec![v32(&[1]), f32s(&[1.0])], op(|v| &v[0] + &v[1])),
        row(
            "add of disagreeing rows",
            IncompatibleShapes,
            vec![rt(), ragged![[1], [2, 3], []].unwrap()],
            op(|v| &v[0] + &v[1]),
        ),
        row(
            "add of disagreeing dense dims",
            IncompatibleShapes,
            vec![v32(&[1, 2]), v32(&[1, 2, 3])],
            op(|v| &v[0] + &v[1]),
        ),
        row("gather id past the rows", IndexOutOfRange, vec![rt(), v64(&[3])], op(|v| ops::gather(&v[0], &v[1]))),
        row("gather id of 2^62", IndexOutOfRange, vec![rt(), v64(&[1 << 62])], op(|v| ops::gather(&v[0], &v[1]))),
        row("gather float ids", TypeMismatch, vec![rt(), f32s(&[0.0])], op(|v| ops::gather(&v[0], &v[1]))),
        row("getitem past the rows", IndexOutOfRange, vec![rt()], op(|v| v[0].get(7))),
        row("getitem negative past the rows", IndexOutOfRange, vec![rt()], op(|v| v[0].get(-4))),
        row("getitem scalar into a ragged dim", InvalidIndex, vec![rt()], op(|v| v[0].get(s![.., 0]))),
        row(
            "getitem key of 10,000 None",
            InvalidArgument,
            vec![rt()],
            op(|v| v[0].getitem(&vec!["None"; 10_000].join(", "))),
        ),
        row("reduce over axis 5", InvalidArgument, vec![rt()], op(|v| v[0].reduce_sum(5))),
        row("reduce of strings", TypeMismatch, vec![words(&["a"])], op(|v| v[0].reduce_sum(0))),
        row(
            "reduce over an empty axis of 2^62",
            ResourceExhausted,
            vec![RaggedTensor::dense(DenseTensor::from_vec(vec![0, 1 << 62], Vec::<f32>::new()).unwrap())],
            op(|v| v[0].reduce_sum(0)),
        ),
        row("zero hash buckets", InvalidArgument, vec![words(&["a"])], op(|v| strings::to_hash_bucket_fast(&v[0], 0))),
        row(
            "negative hash buckets",
            InvalidArgument,
            vec![words(&["a"])],
            op(|v| strings::to_hash_bucket_fast(&v[0], -3)),
        ),
        row("ngrams of width 0", InvalidArgument, vec![words(&["a", "b"])], op(|v| strings::ngrams(&v[0], 0, " "))),
        row("string length of numbers", TypeMismatch, vec![v32(&[1])], op(|v| strings::length(&v[0]))),
        row(
            "segment id past num_segments",
            IndexOutOfRange,
            vec![f32s(&[1.0, 2.0]), v64(&[0, 5])],
            op(|v| ops::unsorted_segment_sum(&v[0], &v[1], 2)),
        ),
        row(
            "segment ids unsorted",
            InvalidArgument,
            vec![f32s(&[1.0, 2.0]), v64(&[1, 0])],
            op(|v| ops::segment_sum(&v[0], &v[1])),
        ),
        row(
            "negative segment id",
            InvalidArgument,
            vec![f32s(&[1.0]), v64(&[-1])],
            op(|v| ops::segment_sum(&v[0], &v[1])),
        ),
        row("tile past the limits", ResourceExhausted, vec![v32(&[1])], op(|v| ops::tile(&v[0], &[1 << 31]))),
        row(
            "fill with a negative dim",
            InvalidArgument,
            vec![v64(&[-2]), RaggedTensor::dense(DenseTensor::scalar(1.0f32))],
            op(|v| ops::fill(&v[0], &v[1])),
        ),
        row(
            "fill past the limits",
            ResourceExhausted,
            vec![v64(&[1 << 31]), RaggedTensor::dense(DenseTensor::scalar(1i8))],
            op(|v| ops::fill(&v[0], &v[1])),
        ),
        row(
            "range with delta 0",
            InvalidArgument,
            vec![v64(&[0]), v64(&[3]), v64(&[0])],
            op(|v| ops::range_between(&v[0], &v[1], Some(&v[2]))),
        ),
        row("range past the limits", ResourceExhausted, vec![v64(&[1 << 40])], op(|v| ops::range(&v[0]))),
        row(
            "from_row_splits op with splits past the values",
            InvalidRowPartition,
            vec![v32(&[1, 2]), v64(&[0, 5])],
            op(|v| ops::from_row_splits(&v[0], &v[1])),
        ),
        row(
            "from_value_rowids op with 2^31 rows",
            ResourceExhausted,
            vec![v32(&[1]), v64(&[0])],
            op(|v| ops::from_value_rowids(&v[0], &v[1], Some(1 << 31))),
        ),
        row(
            "concat of int32 and float32",
            TypeMismatch,
            vec![v32(&[1]), f32s(&[1.0])],
            op(|v| ops::concat(&[&v[0], &v[1]], 0)),
        ),
        row(
            "boolean_mask of another shape",
            IncompatibleShapes,
            vec![v32(&[1, 2]), RaggedTensor::dense(DenseTensor::vector(vec![true, false, true]))],
            op(|v| ops::boolean_mask(&v[0], &v[1])),
        ),
        row(
            "from_sparse index past the shape",
            IndexOutOfRange,
            vec![
                RaggedTensor::dense(DenseTensor::from_vec(vec![1, 2], vec![5i64, 0]).unwrap()),
                f32s(&[1.0]),
                v64(&[2, 2]),
            ],
            op(|v| ops::from_sparse(&v[0], &v[1], &v[2])),
        ),
        // Function::call with the wrong inputs.
        row(
            "call with a wrong dtype",
            TypeMismatch,
            vec![ragged![[1.0f32], []].unwrap()],
            call_typed(TensorType::ragged(DType::I32, 1)),
        ),
        row(
            "call with a wrong ragged rank",
            TypeMismatch,
            vec![ragged![[[1]], []].unwrap()],
            call_typed(TensorType::ragged(DType::I32, 1)),
        ),
        row(
            "call with a dense value for a ragged input",
            TypeMismatch,
            vec![v32(&[1])],
            call_typed(TensorType::ragged(DType::I32, 1)),
        ),
        row(
            "call with a wrong known dim",
            IncompatibleShapes,
            vec![v32(&[1, 2])],
            call_typed(TensorType::dense(DType::I32, &[Some(3)])),
        ),
        row("call with a missing input", InvalidArgument, vec![], call_typed(TensorType::ragged(DType::I32, 1))),
        row(
            "call with an extra input",
            InvalidArgument,
            vec![rt(), rt()],
            call_typed(TensorType::ragged(DType::I32, 1)),
        ),
    ]
}

#[test]
fn every_bad_input_gets_its_error_kind_without_panicking_and_inputs_stay_unchanged() {
    let rows = matrix();
    assert!(rows.len() >= 60, "{} rows", rows.len());
    let mut problems = Vec::new();
    for r in &rows {
        let before: Vec<RaggedTensor> = r.inputs.to_vec();
        let got = catch_unwind(AssertUnwindSafe(|| (r.run)(&r.inputs)));
        match got {
            Err(_) => problems.push(format!("{}: panicked", r.name)),
            Ok(Ok(v)) => problems.push(format!("{}: accepted, gave {} values", r.name, v.len())),
            Ok(Err(e)) if e.kind() != r.kind => {
                problems.push(format!("{}: expected {}, got {} ({e})", r.name, r.kind, e.kind()))
            }
            Ok(Err(_)) => {}
        }
        for (k, (a, b)) in before.iter().zip(&r.inputs).enumerate() {
            if !a.equals(b) {
                problems.push(format!("{}: input {k} changed", r.name));
            }
        }
    }
    assert!(problems.is_empty(), "{} of {} rows failed:\n{}", problems.len(), rows.len(), problems.join("\n"));
}
