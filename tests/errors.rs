//! Bad input through the public API: every case gets a typed error of the right kind, naming the op,
//! and never a panic or a value. The caller's values are left untouched.

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{DenseTensor, Dim, Error, ErrorKind};

fn int64_vector(v: &[i64]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}

/// Compiles `build(x)` for an input of `x`'s type, calls it on `x`, and returns the error.
fn run_err(x: RaggedTensor, build: impl Fn(&Var) -> Var) -> Error {
    let g = Graph::new();
    let input = g.input("x", TensorType::of(&x));
    let out = build(&input);
    let before = x.clone();
    let result = compile(&[&input], &[&out]).and_then(|f| f.call(std::slice::from_ref(&x)));
    assert!(x.equals(&before), "the input was modified");
    match result {
        Ok(v) => panic!("expected an error, got {}", v[0]),
        Err(e) => e,
    }
}

fn assert_kind(err: &Error, kind: ErrorKind, op: &str) {
    assert_eq!(err.kind(), kind, "wrong kind for: {err}");
    assert!(err.to_string().contains(op), "the message should name `{op}`: {err}");
}

#[test]
fn malformed_partitions() {
    let values: RaggedTensor = DenseTensor::vector(vec![1i32, 2, 3]).into();
    let g = Graph::new();
    let v = g.input("v", TensorType::of(&values));
    let s = g.input("s", TensorType::vector(DType::I64));
    for (build, arg, op) in [
        (ops::from_row_splits as fn(&Var, &Var) -> Var, int64_vector(&[0, 2, 1, 3]), "from_row_splits"),
        (ops::from_row_splits, int64_vector(&[1, 2, 3]), "from_row_splits"),
        (ops::from_row_splits, int64_vector(&[0, 2, 5]), "from_row_splits"),
        (ops::from_row_lengths, int64_vector(&[1, 1]), "from_row_lengths"),
        (ops::from_row_lengths, int64_vector(&[4, -1]), "from_row_lengths"),
        (|v: &Var, s: &Var| ops::from_value_rowids(v, s, None), int64_vector(&[1, 0, 2]), "from_value_rowids"),
    ] {
        let f = compile(&[&v, &s], &[&build(&v, &s)]).unwrap();
        let err = f.call(&[values.clone(), arg.clone()]).unwrap_err();
        assert_kind(&err, ErrorKind::InvalidRowPartition, op);
    }
}

#[test]
fn literals_that_are_not_tensors() {
    assert_kind(&ragged![[1, 2], ["a"]].unwrap_err(), ErrorKind::InvalidValue, "mixed dtypes");
    assert_kind(&ragged![[1, [2]], [3]].unwrap_err(), ErrorKind::InvalidValue, "nesting");
    assert_kind(&ragged![[true], [1]].unwrap_err(), ErrorKind::InvalidValue, "mixed dtypes");
}

#[test]
fn mismatched_structures_and_dtypes() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let z = g.input("z", TensorType::ragged(DType::I32, 1));
    let f = compile(&[&x, &z], &[&(&x * &z)]).unwrap();
    let err = f.call(&[ragged![[1, 2], [3]].unwrap(), ragged![[1], [2, 3]].unwrap()]).unwrap_err();
    assert_kind(&err, ErrorKind::IncompatibleShapes, "multiply");
    assert!(err.to_string().contains("row 0"), "the message names the row: {err}");
    let err = f.call(&[ragged![[1, 2], [3]].unwrap(), ragged![[1, 2], [3], [4]].unwrap()]).unwrap_err();
    assert_kind(&err, ErrorKind::IncompatibleShapes, "multiply");
    let y = g.input("y", TensorType::ragged(DType::F64, 1));
    assert_kind(&compile(&[&x, &y], &[&(&x + &y)]).unwrap_err(), ErrorKind::TypeMismatch, "add");
    let s = g.input("s", TensorType::ragged(DType::String, 1));
    assert_kind(&compile(&[&s], &[&s.tanh()]).unwrap_err(), ErrorKind::TypeMismatch, "tanh");
    assert_kind(&compile(&[&x], &[&x.logical_not()]).unwrap_err(), ErrorKind::TypeMismatch, "logical_not");
}

#[test]
fn integer_division_by_zero_names_the_row() {
    let err = run_err(ragged![[4, 2], [1, 0]].unwrap(), |x| x.floordiv(x));
    assert_kind(&err, ErrorKind::InvalidArgument, "floordiv");
    assert!(err.to_string().contains("row 1"), "{err}");
}

#[test]
fn indexing_errors() {
    let q = ragged![["Who", "is"], ["What"], ["Goodnight"]].unwrap();
    assert_kind(&run_err(q.clone(), |x| x.get(7)), ErrorKind::IndexOutOfRange, "getitem");
    assert_kind(&run_err(q.clone(), |x| x.get(-4)), ErrorKind::IndexOutOfRange, "getitem");
    assert_kind(&run_err(q.clone(), |x| x.get(s![.., 1])), ErrorKind::InvalidIndex, "getitem");
    assert_kind(&run_err(q.clone(), |x| x.getitem(":, ::0")), ErrorKind::InvalidArgument, "getitem");
    assert_kind(&run_err(q, |x| x.getitem("1:2:3:4")), ErrorKind::InvalidArgument, "getitem");
}

#[test]
fn gather_out_of_range_names_the_index() {
    let g = Graph::new();
    let table = g.input("table", TensorType::dense(DType::F32, &[None, Some(2)]));
    let ids = g.input("ids", TensorType::ragged(DType::I64, 1));
    let f = compile(&[&table, &ids], &[&ops::gather(&table, &ids)]).unwrap();
    let t: RaggedTensor = DenseTensor::from_vec(vec![2, 2], vec![0.0f32; 4]).unwrap().into();
    let err = f.call(&[t.clone(), ragged![[0, 1], [5]].unwrap().cast(DType::I64).unwrap()]).unwrap_err();
    assert_kind(&err, ErrorKind::IndexOutOfRange, "gather");
    assert!(err.to_string().contains('5'), "{err}");
    let err = f.call(&[t, ragged![[-1]].unwrap().cast(DType::I64).unwrap()]).unwrap_err();
    assert_kind(&err, ErrorKind::IndexOutOfRange, "gather");
}

#[test]
fn bad_op_arguments() {
    let words = ragged![["a", "b"], ["c"]].unwrap();
    assert_kind(
        &run_err(words.clone(), |x| strings::to_hash_bucket_fast(x, 0)),
        ErrorKind::InvalidArgument,
        "num_buckets",
    );
    assert_kind(
        &run_err(words.clone(), |x| strings::to_hash_bucket_fast(x, -5)),
        ErrorKind::InvalidArgument,
        "num_buckets",
    );
    assert_kind(&run_err(words.clone(), |x| strings::substr(x, 5, 1)), ErrorKind::IndexOutOfRange, "substr");
    assert_kind(&run_err(words.clone(), |x| strings::ngrams(x, 0, " ")), ErrorKind::InvalidArgument, "ngrams");
    assert_kind(&run_err(words, |x| strings::length(&x.reduce_sum(1))), ErrorKind::TypeMismatch, "reduce_sum");
    let digits = ragged![[3, 1, 4], [1]].unwrap();
    assert_kind(&run_err(digits.clone(), |x| ops::tile(x, &[1 << 40, 1 << 40])), ErrorKind::ResourceExhausted, "tile");
    assert_kind(&run_err(digits.clone(), |x| x.reduce_sum(3)), ErrorKind::InvalidArgument, "axis");
    assert_kind(&run_err(digits.clone(), |x| ops::concat(&[x], 5)), ErrorKind::InvalidArgument, "concat");
    assert_kind(&run_err(digits, |x| ops::reverse(x, &[2])), ErrorKind::InvalidArgument, "reverse");
}

#[test]
fn graph_files_report_bad_values_and_unknown_ops() {
    use ragtime::case::{CaseFile, Outcome};
    let file = CaseFile::parse(
        r#"{"format": "ragged-conformance/1", "group": "t", "cases": [
            {"name": "t/mixed", "inputs": {"x": {"dtype": "int32", "ragged_rank": 1, "value": [[1], ["a"]]}},
             "nodes": [], "outputs": ["x"], "expect_error": "invalid_value"},
            {"name": "t/unknown", "inputs": {"x": {"dtype": "int32", "ragged_rank": 1, "value": [[1]]}},
             "nodes": [{"out": "y", "op": "frobnicate", "in": ["x"]}], "outputs": ["y"], "expect_error": "invalid_argument"},
            {"name": "t/undefined", "inputs": {},
             "nodes": [{"out": "y", "op": "identity", "in": ["nope"]}], "outputs": ["y"], "expect_error": "invalid_graph"},
            {"name": "t/typo_attr", "inputs": {"x": {"dtype": "int32", "ragged_rank": 1, "value": [[1]]}},
             "nodes": [{"out": "y", "op": "reduce_sum", "in": ["x"], "attrs": {"axes": 1}}], "outputs": ["y"], "expect_error": "invalid_argument"}
        ]}"#,
    )
    .unwrap();
    for case in &file.cases {
        assert_eq!(case.check(Mode::default()), Outcome::Pass, "{}", case.name);
    }
}

#[test]
fn vocabulary_part_2_failure_modes() {
    // An empty row has no extreme: argmax names the row.
    let err = run_err(ragged![[1.0, 2.0], [], [3.0]].unwrap(), |x| x.argmax(1));
    assert_kind(&err, ErrorKind::InvalidValue, "argmax");
    assert!(err.to_string().contains("row 1"), "the message should name the row: {err}");
    // Axes argmax does not define on ragged tensors, and dtypes the statistics refuse.
    assert_kind(&run_err(ragged![[[1]], [[2]]].unwrap(), |x| x.argmin(1)), ErrorKind::InvalidArgument, "argmin");
    assert_kind(
        &run_err(ragged![[1, 2]].unwrap(), |x| x.reduce_logsumexp(1)),
        ErrorKind::TypeMismatch,
        "reduce_logsumexp",
    );
    assert_kind(
        &run_err(ragged![[true]].unwrap(), |x| x.reduce_variance(1)),
        ErrorKind::TypeMismatch,
        "reduce_variance",
    );
    assert_kind(
        &run_err(ragged![["a"]].unwrap(), |x| x.reduce_euclidean_norm(None::<i64>)),
        ErrorKind::TypeMismatch,
        "reduce_euclidean_norm",
    );
    // Segment ids past num_segments name the id; sqrt_n of integers is refused.
    let g = Graph::new();
    let data = g.input("data", TensorType::ragged(DType::F32, 1));
    let ids = g.input("ids", TensorType::vector(DType::I32));
    let f = compile(&[&data, &ids], &[&data.unsorted_segment_max(&ids, 2)]).unwrap();
    let err = f.call(&[ragged![[1.0], [2.0]].unwrap(), DenseTensor::vector(vec![0i32, 2]).into()]).unwrap_err();
    assert_kind(&err, ErrorKind::IndexOutOfRange, "unsorted_segment_max");
    let ints = g.input("ints", TensorType::ragged(DType::I32, 1));
    assert_kind(
        &ints.unsorted_segment_sqrt_n(&ids, 2).ty().unwrap_err(),
        ErrorKind::TypeMismatch,
        "unsorted_segment_sqrt_n",
    );
    // matmul: the rows of w must match the last dim of x; one dtype.
    let x = g.input("x", TensorType::ragged(DType::F32, 1).with_inner(&[Some(3)]));
    let w = g.input("w", TensorType::dense(DType::F32, &[Some(2), Some(2)]));
    assert_kind(&x.matmul(&w).ty().unwrap_err(), ErrorKind::IncompatibleShapes, "matmul");
    let w64 = g.input("w64", TensorType::dense(DType::F64, &[Some(3), Some(2)]));
    assert_kind(&x.matmul(&w64).ty().unwrap_err(), ErrorKind::TypeMismatch, "matmul");
    // one_hot of float indices; ones of strings; merge_dims with the axes swapped.
    assert_kind(&x.one_hot(3).ty().unwrap_err(), ErrorKind::TypeMismatch, "one_hot");
    let s = g.input("s", TensorType::ragged(DType::String, 1));
    assert_kind(&s.ones_like().ty().unwrap_err(), ErrorKind::TypeMismatch, "ones_like");
    assert_kind(&x.merge_dims(2, 1).ty().unwrap_err(), ErrorKind::InvalidArgument, "merge_dims");
    // Row bounds that do not describe the values, and negative segment ids.
    let values: RaggedTensor = DenseTensor::vector(vec![1i32, 2, 3]).into();
    let v = g.input("v", TensorType::of(&values));
    let b = g.input("b", TensorType::vector(DType::I64));
    for (build, bounds, op) in [
        (ops::from_row_starts as fn(&Var, &Var) -> Var, int64_vector(&[1, 2]), "from_row_starts"),
        (ops::from_row_starts, int64_vector(&[0, 2, 1]), "from_row_starts"),
        (ops::from_row_starts, int64_vector(&[0, 4]), "from_row_starts"),
        (ops::from_row_limits, int64_vector(&[1, 2]), "from_row_limits"),
        (ops::from_row_limits, int64_vector(&[-1, 3]), "from_row_limits"),
    ] {
        let f = compile(&[&v, &b], &[&build(&v, &b)]).unwrap();
        assert_kind(&f.call(&[values.clone(), bounds]).unwrap_err(), ErrorKind::InvalidRowPartition, op);
    }
    // gather with batch dims: an index past its row names the row, rows must pair up.
    let params = g.input("params", TensorType::ragged(DType::I32, 1));
    let idx = g.input("idx", TensorType::ragged(DType::I64, 1));
    let f = compile(&[&params, &idx], &[&ops::gather_with(&params, &idx, 1, 1)]).unwrap();
    let err = f.call(&[ragged![[1, 2], [3]].unwrap(), ragged![[0i64], [1i64]].unwrap()]).unwrap_err();
    assert_kind(&err, ErrorKind::IndexOutOfRange, "gather");
    assert!(err.to_string().contains("row 1"), "the message should name the row: {err}");
    let err = f.call(&[ragged![[1, 2], [3]].unwrap(), ragged![[0i64]].unwrap()]).unwrap_err();
    assert_kind(&err, ErrorKind::IncompatibleShapes, "gather");
    assert_kind(&ops::gather_with(&params, &idx, 0, 1).ty().unwrap_err(), ErrorKind::InvalidArgument, "gather");
    let err = run_err(int64_vector(&[0, -1]), ops::segment_ids_to_row_splits);
    assert_kind(&err, ErrorKind::InvalidRowPartition, "ragged.segment_ids_to_row_splits");
}

/// The keepdims slip on square data (`x - x.reduce_mean(1)`, every row of `nrows` values) and a
/// rank-1 dense operand against a ragged last dimension are refused in every mode, as TensorFlow
/// 2.21 refuses them, while a dense `[nrows, k]` operand against rows of `k` values still works.
#[test]
fn a_dense_vector_against_a_ragged_last_dimension_is_refused_in_every_mode() {
    let square = ragged![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]].unwrap();
    for mode in [Mode::FastRun, Mode::FastCompile, Mode::Debug] {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let slip = &x - &x.reduce_mean(1);
        let f = g.compile_with(&[&x], &[&slip], mode).unwrap();
        let err = f.call(std::slice::from_ref(&square)).unwrap_err();
        assert_kind(&err, ErrorKind::IncompatibleShapes, "subtract");
        assert!(err.to_string().contains("keepdims"), "{mode:?}: the message should suggest keepdims: {err}");

        let v = g.input("v", TensorType::vector(DType::F32));
        let f = g.compile_with(&[&x, &v], &[&(&x - &v)], mode).unwrap();
        let rows = ragged![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]].unwrap();
        let err = f.call(&[rows.clone(), DenseTensor::vector(vec![1.0f32, 2.0, 3.0]).into()]).unwrap_err();
        assert_kind(&err, ErrorKind::IncompatibleShapes, "subtract");

        let t = g.input("t", TensorType::new(DType::F32, 0, vec![Dim::Unknown, Dim::Unknown]).unwrap());
        let f = g.compile_with(&[&x, &t], &[&(&x - &t)], mode).unwrap();
        let table = DenseTensor::from_vec(vec![2, 3], vec![1.0f32, 1.0, 1.0, 2.0, 2.0, 2.0]).unwrap();
        let out = f.call(&[rows.clone(), table.into()]).unwrap();
        let expected = ragged![[0.0f32, 1.0, 2.0], [2.0, 3.0, 4.0]].unwrap();
        assert!(out[0].equals(&expected), "{mode:?}: rows minus their own table row, got {}", out[0]);
    }
}

#[test]
fn two_inputs_with_one_name_are_refused_when_the_second_is_declared() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let again = g.input("x", TensorType::ragged(DType::I64, 1));
    let err = again.check().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph, "{err}");
    assert!(err.to_string().contains("input `x` is declared twice"), "the message should name the input: {err}");
    let err = compile(&[&x, &again], &[&x]).unwrap_err();
    assert!(err.to_string().contains("declared twice"), "compile reports it too: {err}");
    // Another graph may reuse the name.
    assert!(Graph::new().input("x", TensorType::ragged(DType::F32, 1)).check().is_ok());
}

#[test]
fn an_empty_row_of_a_nested_tensor_is_named_at_every_level() {
    // users -> sessions -> values; user 1's session 2 (flattened row 3) is empty.
    let x = ragged![[[1.0f32, 2.0]], [[3.0], [4.0], []], [[5.0]]].unwrap();
    let err = run_err(x, |x| x.argmax(2));
    assert_kind(&err, ErrorKind::InvalidValue, "argmax");
    assert!(err.to_string().contains("row [1, 2] is empty"), "the row should be named per level: {err}");
}

#[test]
fn an_elementwise_error_in_a_nested_tensor_names_the_row_at_every_level() {
    // users -> sessions -> values; the zero divisor is in user 1's session 1 (flat element 3).
    let x = ragged![[[4, 2]], [[9], [6], []]].unwrap();
    let d = ragged![[[2, 1]], [[3], [0], []]].unwrap();
    for mode in [Mode::FastRun, Mode::FastCompile, Mode::Debug] {
        let g = Graph::new();
        let xv = g.input("x", TensorType::of(&x));
        let dv = g.input("d", TensorType::of(&d));
        let f = g.compile_with(&[&xv, &dv], &[&xv.floordiv(&dv)], mode).unwrap();
        let err = f.call(&[x.clone(), d.clone()]).unwrap_err();
        assert_kind(&err, ErrorKind::InvalidArgument, "floordiv");
        assert!(err.to_string().contains("row [1, 1] (flat element 3)"), "{mode:?}: {err}");
    }
}
