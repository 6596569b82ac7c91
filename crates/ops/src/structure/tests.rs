//! Unit tests of the structure ops.

use ragtime_core::limits::Limits;
use ragtime_core::{ragged, ErrorKind, ExecContext};
use ragtime_core::{DType, DenseTensor, Element, Literal, RaggedTensor, Result, StringTensor, TensorType};
use ragtime_graph::Attr;
use ragtime_graph::Op;

use crate::gather::take::raise_ragged_rank;
use crate::structure::concat::{expand_dims, Concat};
use crate::structure::testing::*;

pub(crate) fn axis(a: i64) -> [(&'static str, Attr); 1] {
    [("axis", Attr::Int(a))]
}

fn int64(rt: RaggedTensor) -> RaggedTensor {
    rt.cast(DType::I64).unwrap()
}

pub(crate) fn dense<T: Element>(shape: &[usize], data: Vec<T>) -> RaggedTensor {
    DenseTensor::from_vec(shape.to_vec(), data).unwrap().into()
}

fn string_scalar(s: &str) -> RaggedTensor {
    RaggedTensor::from_literal(&Literal::from(s)).unwrap()
}

#[track_caller]
fn assert_kind(result: Result<impl std::fmt::Debug>, kind: ErrorKind) {
    match result {
        Err(e) => assert_eq!(e.kind(), kind, "wrong error: {e}"),
        Ok(v) => panic!("expected a {kind} error, got {v:?}"),
    }
}

fn words_x() -> RaggedTensor {
    ragged![["John"], ["a", "big", "dog"], ["my", "cat"]].unwrap()
}

fn words_z() -> RaggedTensor {
    ragged![["fell", "asleep"], ["barked"], ["is", "fuzzy"]].unwrap()
}

#[test]
fn concat_axis1_strings() {
    // structure/concat_axis1_strings
    let y = run1("concat", &axis(1), &[words_x(), words_z()]).unwrap();
    let want = ragged![["John", "fell", "asleep"], ["a", "big", "dog", "barked"], ["my", "cat", "is", "fuzzy"]];
    assert_value(&y, &want.unwrap());
    let y = run1("concat", &axis(-1), &[words_x(), words_z()]).unwrap();
    assert_eq!(y.nrows(), 3, "axis -1 of a rank-2 tensor is axis 1");
}

#[test]
fn string_rows_concatenated_in_parallel_match_a_gather_of_runs() {
    // 40,000 rows (enough to split across threads) of 0-4 strings of 0-20 bytes, with
    // one-string markers (a dense [n, 1] column) on both sides, as padded tokens are built.
    let words = ["", "a", "bb", "ccc", "dddddddddddddddddddd", "é"];
    let mut rows = Vec::new();
    let mut seed = 11u64;
    for _ in 0..40_000 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = (seed >> 40) % 5;
        rows.push((0..len).map(|k| words[((seed >> (k * 4 + 8)) % 6) as usize]).collect::<Vec<_>>());
    }
    let tokens = RaggedTensor::from_literal_typed(&Literal::from(rows), Some(DType::String), Some(1), None).unwrap();
    let n = tokens.nrows();
    let marker = |m: &str| {
        let one = DenseTensor::String(StringTensor::from_strings(&[m], vec![]).unwrap());
        RaggedTensor::dense(DenseTensor::full(vec![n, 1], &one).unwrap())
    };
    let inputs = [marker("<s>"), tokens.clone(), marker(""), tokens];
    let two_threads = ExecContext::new(Limits::untrusted()).with_threads(2);
    let got = super::testing::run_in(&two_threads, "concat", &axis(1), &inputs).unwrap().remove(0);
    // The general path: one run per row and operand, gathered.
    let items: Vec<DenseTensor> = inputs
        .iter()
        .map(|t| if t.is_dense() { t.flat_values().reshape(vec![n]).unwrap() } else { t.flat_values().clone() })
        .collect();
    let splits: Vec<Vec<i64>> = inputs
        .iter()
        .map(|t| if t.is_dense() { (0..=n as i64).collect() } else { t.partitions()[0].row_splits().to_vec() })
        .collect();
    let sources: Vec<&DenseTensor> = items.iter().collect();
    let runs = (0..n).flat_map(|r| splits.iter().enumerate().map(move |(i, s)| (i, s[r] as usize..s[r + 1] as usize)));
    let want = DenseTensor::gather_row_runs(&two_threads, "concat", &sources, runs).unwrap();
    let (got_col, want_col) = (got.flat_values().as_strings().unwrap(), want.as_strings().unwrap());
    assert_eq!(got_col.offsets(), want_col.offsets(), "string lengths");
    assert_eq!(got_col.bytes(), want_col.bytes(), "string bytes");
    let lengths: Vec<i64> = (0..n).map(|r| splits.iter().map(|s| s[r + 1] - s[r]).sum()).collect();
    assert_eq!(got.partitions()[0].row_lengths(), lengths, "row lengths");
}

#[test]
fn stack_axis0_and_axis1_strings() {
    // structure/stack_axis0 and structure/stack_axis1
    let y = run1("stack", &axis(0), &[words_x(), words_z()]).unwrap();
    let want =
        ragged![[["John"], ["a", "big", "dog"], ["my", "cat"]], [["fell", "asleep"], ["barked"], ["is", "fuzzy"]]];
    assert_value(&y, &want.unwrap());
    let y = run1("stack", &axis(1), &[words_x(), words_z()]).unwrap();
    let want =
        ragged![[["John"], ["fell", "asleep"]], [["a", "big", "dog"], ["barked"]], [["my", "cat"], ["is", "fuzzy"]]];
    assert_value(&y, &want.unwrap());
}

#[test]
fn concat_axis0_appends_rows() {
    // seed_walkthrough/concat_axis0
    let digits = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
    let y = run1("concat", &axis(0), &[digits, ragged![[5, 3]].unwrap()]).unwrap();
    assert_value(&y, &ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], [], [5, 3]].unwrap());
}

#[test]
fn palindromes() {
    // structure/palindrome and structure/palindrome_dense
    let x = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
    let r = run1("reverse", &[("axis", Attr::List(vec![Attr::Int(1)]))], std::slice::from_ref(&x)).unwrap();
    let y = run1("concat", &axis(1), &[x, r]).unwrap();
    assert_value(&y, &ragged![[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]].unwrap());
    let x = dense(&[3, 2], vec![1, 2, 3, 4, 5, 6]);
    let r = run1("reverse", &[("axis", Attr::List(vec![Attr::Int(1)]))], std::slice::from_ref(&x)).unwrap();
    let y = run1("concat", &axis(1), &[x, r]).unwrap();
    assert_value(&y, &dense(&[3, 4], vec![1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5]));
}

#[test]
fn bigram_markers() {
    // The first steps of strings/seed_bigram_embedding: nrows -> stack -> fill -> concat(axis 1).
    let queries = ragged![["Who", "is", "Dan", "Smith"], ["Pause"], ["Will", "it", "rain", "later", "today"]].unwrap();
    let n = run1("nrows", &[], std::slice::from_ref(&queries)).unwrap();
    let dims = run1("stack", &axis(0), &[n, DenseTensor::scalar(1i64).into()]).unwrap();
    assert_value(&dims, &i64s(&[3, 1]));
    let marker = run1("fill", &[], &[dims, string_scalar("#")]).unwrap();
    assert_eq!(marker.flat_values().shape(), &[3, 1]);
    let padded = run1("concat", &axis(1), &[marker.clone(), queries, marker]).unwrap();
    let want = ragged![
        ["#", "Who", "is", "Dan", "Smith", "#"],
        ["#", "Pause", "#"],
        ["#", "Will", "it", "rain", "later", "today", "#"]
    ];
    assert_value(&padded, &want.unwrap());
}

#[test]
fn join_types_are_exact() {
    let scalar = TensorType::scalar(DType::I64);
    let t = build("stack", &axis(0)).infer(&[scalar.clone(), scalar]).unwrap();
    assert_eq!(t[0].to_string(), "int64[2]");
    let marker = TensorType::dense(DType::String, &[None, None]);
    let queries = TensorType::ragged(DType::String, 1);
    let t = build("concat", &axis(1)).infer(&[marker.clone(), queries, marker]).unwrap();
    assert_eq!(t[0].to_string(), "string[?, *]");
    let a = TensorType::dense(DType::F32, &[Some(3), Some(4)]);
    let b = TensorType::dense(DType::F32, &[Some(2), Some(4)]);
    assert_eq!(build("concat", &axis(0)).infer(&[a.clone(), b]).unwrap()[0].to_string(), "float32[5, 4]");
    assert_eq!(build("stack", &axis(-1)).infer(&[a.clone(), a.clone()]).unwrap()[0].to_string(), "float32[3, 4, 2]");
    let r = TensorType::ragged(DType::F32, 1).with_inner(&[Some(4)]);
    assert_eq!(build("concat", &axis(1)).infer(&[r.clone(), r.clone()]).unwrap()[0].to_string(), "float32[?, *, 4]");
    let d3 = TensorType::dense(DType::F32, &[Some(2), Some(5), Some(4)]);
    assert_eq!(build("stack", &axis(0)).infer(&[r.clone(), d3]).unwrap()[0].to_string(), "float32[2, *, *, 4]");
    assert_kind(build("stack", &axis(0)).infer(&[r.clone(), a]), ErrorKind::IncompatibleShapes);
    assert_eq!(build("stack", &axis(1)).infer(&[r]).unwrap()[0].to_string(), "float32[?, *, *, 4]");
}

#[test]
fn join_errors() {
    let x = ragged![[1, 2], [3]].unwrap();
    let f = ragged![[1.5], [2.5]].unwrap();
    assert_kind(run("concat", &axis(1), &[x.clone(), f]), ErrorKind::TypeMismatch);
    let three_rows = ragged![[1], [2], [3]].unwrap();
    assert_kind(run("concat", &axis(1), &[x.clone(), three_rows.clone()]), ErrorKind::IncompatibleShapes);
    assert_kind(run("stack", &axis(1), &[x.clone(), three_rows]), ErrorKind::IncompatibleShapes);
    assert_kind(run("concat", &axis(0), &[x.clone(), i32s(&[1])]), ErrorKind::IncompatibleShapes);
    assert_kind(run("concat", &axis(2), &[x.clone(), x.clone()]), ErrorKind::InvalidArgument);
    assert_kind(run("stack", &axis(-4), &[x.clone(), x.clone()]), ErrorKind::InvalidArgument);
    assert_kind(run("concat", &axis(0), &[]), ErrorKind::InvalidArgument);
    let a = TensorType::dense(DType::I32, &[Some(2), Some(1)]);
    let b = TensorType::dense(DType::I32, &[Some(3), Some(1)]);
    assert_kind(build("concat", &axis(1)).infer(&[a.clone(), b.clone()]), ErrorKind::IncompatibleShapes);
    assert_kind(build("stack", &axis(0)).infer(&[a, b]), ErrorKind::IncompatibleShapes);
    assert_kind(Concat::new(0).perform(&ExecContext::new(Limits::untrusted()), &[]), ErrorKind::InvalidArgument);
}

#[test]
fn concat_inside_rows() {
    // Axis 2 of a ragged rank 2 tensor joins the innermost rows pairwise.
    let a = ragged![[[1], [2, 3]], [[4]]].unwrap();
    let b = ragged![[[5], []], [[6, 7]]].unwrap();
    let y = run1("concat", &axis(2), &[a.clone(), b.clone()]).unwrap();
    assert_value(&y, &ragged![[[1, 5], [2, 3]], [[4, 6, 7]]].unwrap());
    let y = run1("stack", &axis(2), &[a.clone(), b]).unwrap();
    assert_value(&y, &ragged![[[[1], [5]], [[2, 3], []]], [[[4], [6, 7]]]].unwrap());
    let c = ragged![[[5]], [[6], [7]]].unwrap();
    assert_kind(run("concat", &axis(2), &[a, c]), ErrorKind::IncompatibleShapes);
}

#[test]
fn concat_along_a_uniform_inner_axis() {
    let a = RaggedTensor::from_row_lengths(DenseTensor::from_vec(vec![3, 2], vec![1, 2, 3, 4, 5, 6]).unwrap(), &[2, 1])
        .unwrap();
    let b = RaggedTensor::from_row_lengths(DenseTensor::from_vec(vec![3, 1], vec![7, 8, 9]).unwrap(), &[2, 1]).unwrap();
    let y = run1("concat", &axis(2), &[a.clone(), b]).unwrap();
    let want = RaggedTensor::from_row_lengths(
        DenseTensor::from_vec(vec![3, 3], vec![1, 2, 7, 3, 4, 8, 5, 6, 9]).unwrap(),
        &[2, 1],
    );
    assert_value(&y, &want.unwrap());
    let y = run1("stack", &axis(-1), &[a.clone(), a]).unwrap();
    assert_eq!(TensorType::of(&y).to_string(), "int32[2, *, 2, 2]");
}

#[test]
fn mixed_dense_and_ragged_operands() {
    let r = ragged![[1, 2], [3]].unwrap();
    let d = dense(&[2, 2], vec![4, 5, 6, 7]);
    let y = run1("concat", &axis(0), &[r.clone(), d.clone()]).unwrap();
    assert_value(&y, &ragged![[1, 2], [3], [4, 5], [6, 7]].unwrap());
    let y = run1("concat", &axis(1), &[d.clone(), r.clone()]).unwrap();
    assert_value(&y, &ragged![[4, 5, 1, 2], [6, 7, 3]].unwrap());
    let y = run1("stack", &axis(0), &[r, d]).unwrap();
    assert_value(&y, &ragged![[[1, 2], [3]], [[4, 5], [6, 7]]].unwrap());
}

#[test]
fn joins_of_empty_rows_and_zero_rows() {
    let empty_rows = ragged![[], []].unwrap().cast(DType::I32).unwrap();
    let x = ragged![[1], []].unwrap();
    assert_value(&run1("concat", &axis(1), &[empty_rows.clone(), x.clone()]).unwrap(), &x);
    let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
    assert_value(&run1("concat", &axis(0), &[none.clone(), x.clone()]).unwrap(), &x);
    assert_eq!(run1("concat", &axis(1), &[none.clone(), none.clone()]).unwrap().nrows(), 0);
    assert_eq!(run1("stack", &axis(0), &[none.clone(), none]).unwrap().to_string(), "<Ragged int32 [[], []]>");
}

#[test]
fn stack_of_one_operand_expands() {
    let x = ragged![[1, 2], [3]].unwrap();
    assert_value(&run1("stack", &axis(0), std::slice::from_ref(&x)).unwrap(), &ragged![[[1, 2], [3]]].unwrap());
    assert_value(&run1("stack", &axis(1), std::slice::from_ref(&x)).unwrap(), &ragged![[[1, 2]], [[3]]].unwrap());
    let y = run1("stack", &axis(2), std::slice::from_ref(&x)).unwrap();
    assert_eq!(TensorType::of(&y).to_string(), "int32[2, *, 1]");
    assert_value(&run1("concat", &axis(1), std::slice::from_ref(&x)).unwrap(), &x);
}

#[test]
fn expand_dims_inserts_a_dimension_of_one() {
    let x = ragged![[1, 2], [3]].unwrap();
    assert_value(&expand_dims(&x, 0).unwrap(), &ragged![[[1, 2], [3]]].unwrap());
    assert_value(&expand_dims(&x, 1).unwrap(), &ragged![[[1, 2]], [[3]]].unwrap());
    assert_eq!(TensorType::of(&expand_dims(&x, 2).unwrap()).to_string(), "int32[2, *, 1]");
    let s: RaggedTensor = DenseTensor::scalar(5i32).into();
    assert_value(&expand_dims(&s, 0).unwrap(), &i32s(&[5]));
    assert_kind(expand_dims(&x, 3), ErrorKind::InvalidArgument);
    assert_kind(expand_dims(&s, 1), ErrorKind::InvalidArgument);
}

#[test]
fn tile_repeats_rows_and_items() {
    // structure/tile_2_1, structure/tile_2_3, seed_walkthrough/tile_1_2
    let x = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
    let tile = |m: Vec<i64>, x: &RaggedTensor| {
        run1("tile", &[("multiples", Attr::List(m.into_iter().map(Attr::Int).collect()))], std::slice::from_ref(x))
    };
    assert_value(&tile(vec![2, 1], &x).unwrap(), &ragged![[1, 2], [3], [4, 5, 6], [1, 2], [3], [4, 5, 6]].unwrap());
    let want = ragged![
        [1, 2, 1, 2, 1, 2],
        [3, 3, 3],
        [4, 5, 6, 4, 5, 6, 4, 5, 6],
        [1, 2, 1, 2, 1, 2],
        [3, 3, 3],
        [4, 5, 6, 4, 5, 6, 4, 5, 6]
    ];
    assert_value(&tile(vec![2, 3], &x).unwrap(), &want.unwrap());
    let digits = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
    let want = ragged![[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []];
    assert_value(&tile(vec![1, 2], &digits).unwrap(), &want.unwrap());
    assert_value(&tile(vec![1, 0], &x).unwrap(), &ragged![[], [], []].unwrap().cast(DType::I32).unwrap());
    assert_eq!(tile(vec![0, 5], &x).unwrap().nrows(), 0);
    let d = dense(&[2, 2], vec![1, 2, 3, 4]);
    assert_value(&tile(vec![1, 2], &d).unwrap(), &dense(&[2, 4], vec![1, 2, 1, 2, 3, 4, 3, 4]));
    assert_value(&tile(vec![2, 1], &d).unwrap(), &dense(&[4, 2], vec![1, 2, 3, 4, 1, 2, 3, 4]));
    let r2 = ragged![[[1, 2], [3]], [[4]]].unwrap();
    let want = ragged![[[1, 2, 1, 2], [3, 3], [1, 2, 1, 2], [3, 3]], [[4, 4], [4, 4]]];
    assert_value(&tile(vec![1, 2, 2], &r2).unwrap(), &want.unwrap());
}

#[test]
fn tile_refuses_bad_and_huge_multiples() {
    let x = ragged![[1, 2], [3]].unwrap();
    let multiples = |m: Vec<i64>| [("multiples", Attr::List(m.into_iter().map(Attr::Int).collect()))];
    assert_kind(run("tile", &multiples(vec![2]), std::slice::from_ref(&x)), ErrorKind::InvalidArgument);
    assert_kind(
        run("tile", &multiples(vec![1 << 40, 1 << 40]), std::slice::from_ref(&x)),
        ErrorKind::ResourceExhausted,
    );
    assert_kind(run("tile", &multiples(vec![1, 1 << 62]), std::slice::from_ref(&x)), ErrorKind::ResourceExhausted);
    let d = dense(&[2, 2], vec![1, 2, 3, 4]);
    assert_kind(run("tile", &multiples(vec![1 << 33, 1 << 33]), &[d]), ErrorKind::ResourceExhausted);
    let e = crate::registry::op_from_name("tile", &attrs("tile", &multiples(vec![1, -1]))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(build("tile", &multiples(vec![2, 1])).name(), "Tile{multiples=[2, 1]}");
}

#[test]
fn tiling_empty_rows_by_a_huge_multiple_is_instant() {
    let multiples = |m: Vec<i64>| [("multiples", Attr::List(m.into_iter().map(Attr::Int).collect()))];
    let started = std::time::Instant::now();
    let ragged_empty =
        RaggedTensor::from_literal_typed(&Literal::List(vec![Literal::List(vec![])]), Some(DType::I32), Some(1), None)
            .unwrap();
    let out = run1("tile", &multiples(vec![1, 1 << 40]), std::slice::from_ref(&ragged_empty)).unwrap();
    assert_value(&out, &ragged_empty);
    let dense_empty = dense(&[1, 0], Vec::<i32>::new());
    let out = run1("tile", &multiples(vec![1, 1 << 40]), std::slice::from_ref(&dense_empty)).unwrap();
    assert_eq!(out.flat_values().shape(), &[1, 0]);
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "took {:?}", started.elapsed());
}

#[test]
fn reverse_any_axes() {
    let axes = |a: Vec<i64>| [("axis", Attr::List(a.into_iter().map(Attr::Int).collect()))];
    let x = ragged![[[1, 2], [3]], [], [[4, 5, 6]]].unwrap();
    assert_value(
        &run1("reverse", &axes(vec![0]), std::slice::from_ref(&x)).unwrap(),
        &ragged![[[4, 5, 6]], [], [[1, 2], [3]]].unwrap(),
    );
    assert_value(
        &run1("reverse", &axes(vec![1]), std::slice::from_ref(&x)).unwrap(),
        &ragged![[[3], [1, 2]], [], [[4, 5, 6]]].unwrap(),
    );
    assert_value(
        &run1("reverse", &axes(vec![-1, 0]), std::slice::from_ref(&x)).unwrap(),
        &ragged![[[6, 5, 4]], [], [[2, 1], [3]]].unwrap(),
    );
    assert_value(
        &run1("reverse", &axes(vec![2, 2]), std::slice::from_ref(&x)).unwrap(),
        &ragged![[[2, 1], [3]], [], [[6, 5, 4]]].unwrap(),
    );
    assert_value(&run1("reverse", &axes(vec![]), std::slice::from_ref(&x)).unwrap(), &x);
    let d = dense(&[2, 3], vec![1, 2, 3, 4, 5, 6]);
    assert_value(
        &run1("reverse", &axes(vec![0, 1]), std::slice::from_ref(&d)).unwrap(),
        &dense(&[2, 3], vec![6, 5, 4, 3, 2, 1]),
    );
    assert_kind(run("reverse", &axes(vec![1, -1]), std::slice::from_ref(&d)), ErrorKind::InvalidArgument);
    assert_kind(run("reverse", &axes(vec![2]), &[d]), ErrorKind::InvalidArgument);
    let s = ragged![["a", "b"], ["c"]].unwrap();
    assert_value(&run1("reverse", &axes(vec![1]), &[s]).unwrap(), &ragged![["b", "a"], ["c"]].unwrap());
}

#[test]
fn fill_builds_dense_tensors() {
    let y = run1("fill", &[], &[i32s(&[2, 3]), DenseTensor::scalar(7i32).into()]).unwrap();
    assert_value(&y, &dense(&[2, 3], vec![7; 6]));
    let y = run1("fill", &[], &[i64s(&[0, 4]), DenseTensor::scalar(1.5f64).into()]).unwrap();
    assert_eq!(y.flat_values().shape(), &[0, 4]);
    assert_kind(run("fill", &[], &[i64s(&[2, -1]), DenseTensor::scalar(7i32).into()]), ErrorKind::InvalidArgument);
    assert_kind(
        run("fill", &[], &[i64s(&[1 << 40, 1 << 40]), DenseTensor::scalar(7i32).into()]),
        ErrorKind::ResourceExhausted,
    );
    assert_kind(run("fill", &[], &[i64s(&[2]), i32s(&[1, 2])]), ErrorKind::IncompatibleShapes);
    let floats: RaggedTensor = DenseTensor::vector(vec![2.0f32]).into();
    assert_kind(run("fill", &[], &[floats, DenseTensor::scalar(7i32).into()]), ErrorKind::TypeMismatch);
    let t = build("fill", &[]).infer(&[TensorType::dense(DType::I64, &[Some(2)]), TensorType::scalar(DType::String)]);
    assert_eq!(t.unwrap()[0].to_string(), "string[?, ?]");
    let t = build("fill", &[]).infer(&[TensorType::vector(DType::I64), TensorType::scalar(DType::String)]);
    assert_kind(t, ErrorKind::InvalidArgument);
}

#[test]
fn ragged_range_like_tensorflow() {
    // structure/ragged_range and structure/ragged_range_starts_deltas
    let y = run1("ragged.range", &[], &[i64s(&[7, 0, 1, 3])]).unwrap();
    assert_value(&y, &int64(ragged![[0, 1, 2, 3, 4, 5, 6], [], [0], [0, 1, 2]].unwrap()));
    let y = run1("ragged.range", &[], &[i32s(&[0, 5, 8]), i32s(&[3, 3, 3]), i32s(&[1, -1, -2])]).unwrap();
    assert_value(&y, &ragged![[0, 1, 2], [5, 4], [8, 6, 4]].unwrap());
}

#[test]
fn ragged_range_broadcasts_and_promotes() {
    let y = run1("ragged.range", &[], &[DenseTensor::scalar(2i32).into(), i64s(&[4, 1, 5])]).unwrap();
    assert_value(&y, &int64(ragged![[2, 3], [], [2, 3, 4]].unwrap()));
    let y = run1("ragged.range", &[], &[DenseTensor::scalar(3i32).into()]).unwrap();
    assert_value(&y, &ragged![[0, 1, 2]].unwrap());
    let starts: RaggedTensor = DenseTensor::vector(vec![0.0f32, 1.0]).into();
    let y =
        run1("ragged.range", &[], &[starts, DenseTensor::scalar(1.0f32).into(), DenseTensor::scalar(0.25f32).into()]);
    assert_value(&y.unwrap(), &ragged![[0.0, 0.25, 0.5, 0.75], []].unwrap());
    let y = run1("ragged.range", &[], &[i32s(&[i32::MAX - 1]), i32s(&[i32::MAX])]).unwrap();
    assert_value(&y, &ragged![[i32::MAX - 1]].unwrap());
    let t = build("ragged.range", &[]).infer(&[TensorType::scalar(DType::I32), TensorType::vector(DType::F64)]);
    assert_eq!(t.unwrap()[0].to_string(), "float64[?, *]");
}

#[test]
fn ragged_range_errors() {
    assert_kind(run("ragged.range", &[], &[i32s(&[0]), i32s(&[3]), i32s(&[0])]), ErrorKind::InvalidArgument);
    assert_kind(run("ragged.range", &[], &[i32s(&[0, 1]), i32s(&[3, 4, 5])]), ErrorKind::IncompatibleShapes);
    assert_kind(run("ragged.range", &[], &[dense(&[1, 1], vec![3i32])]), ErrorKind::IncompatibleShapes);
    assert_kind(run("ragged.range", &[], &[DenseTensor::vector(vec![3u8]).into()]), ErrorKind::TypeMismatch);
    assert_kind(
        run("ragged.range", &[], &[i64s(&[i64::MAX]), i64s(&[i64::MIN]), i64s(&[-1])]),
        ErrorKind::ResourceExhausted,
    );
    let nan: RaggedTensor = DenseTensor::scalar(f64::NAN).into();
    assert_kind(run("ragged.range", &[], &[nan]), ErrorKind::InvalidArgument);
    assert_kind(run("ragged.range", &[], &[]), ErrorKind::InvalidArgument);
}

#[test]
fn to_tensor_op() {
    // structure/to_tensor_default_shape and structure/to_tensor_plain
    let s = ragged![["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]].unwrap();
    let shape = Attr::List(vec![Attr::Null, Attr::Int(10)]);
    let y = run1("to_tensor", &[("default_value", Attr::Str(String::new())), ("shape", shape)], &[s]).unwrap();
    assert_eq!(y.flat_values().shape(), &[3, 10]);
    let strings = y.flat_strings().unwrap();
    assert_eq!((strings.get(10), strings.get(13), strings.get(14)), (&b"Welcome"[..], &b"fair"[..], &b""[..]));
    let x = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap();
    let y = run1("to_tensor", &[], std::slice::from_ref(&x)).unwrap();
    let want = dense(&[5, 4], vec![3, 1, 4, 1, 0, 0, 0, 0, 5, 9, 2, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
    assert_value(&y, &want);
    let op = build(
        "to_tensor",
        &[("default_value", Attr::Int(-1)), ("shape", Attr::List(vec![Attr::Int(2), Attr::Int(-1)]))],
    );
    assert_eq!(op.name(), "ToTensor{default_value=-1, shape=[2, ?]}");
    assert_eq!(op.infer(&[TensorType::of(&x)]).unwrap()[0].to_string(), "int32[2, ?]");
    assert_value(
        &op.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x)).unwrap()[0],
        &dense(&[2, 4], vec![3, 1, 4, 1, -1, -1, -1, -1]),
    );
    assert_kind(
        run("to_tensor", &[("default_value", Attr::Str("x".into()))], std::slice::from_ref(&x)),
        ErrorKind::TypeMismatch,
    );
    assert_kind(
        run("to_tensor", &[("default_value", Attr::Float(0.5))], std::slice::from_ref(&x)),
        ErrorKind::TypeMismatch,
    );
    assert_kind(run("to_tensor", &[("shape", Attr::List(vec![Attr::Int(3)]))], &[x]), ErrorKind::IncompatibleShapes);
}

#[test]
fn from_tensor_op() {
    // structure/from_tensor_padding and structure/from_tensor_lengths
    let t = dense(&[3, 4], vec![1, 3, -1, -1, 2, -1, -1, -1, 4, 5, 8, 9]);
    let y = run1("from_tensor", &[("padding", Attr::Int(-1))], &[t]).unwrap();
    assert_value(&y, &ragged![[1, 3], [2], [4, 5, 8, 9]].unwrap());
    let t = dense(&[3, 4], vec![1, 3, 0, 0, 2, 0, 0, 0, 4, 5, 8, 9]);
    let y = run1("from_tensor", &[], &[t.clone(), i64s(&[2, 1, 4])]).unwrap();
    assert_value(&y, &ragged![[1, 3], [2], [4, 5, 8, 9]].unwrap());
    let y = run1("from_tensor", &[], std::slice::from_ref(&t)).unwrap();
    // Without lengths or padding TensorFlow builds the rows with `from_uniform_row_length`.
    assert_eq!(TensorType::of(&y).to_string(), "int32[3, (4)]");
    assert_kind(
        run("from_tensor", &[("padding", Attr::Int(0))], &[t.clone(), i64s(&[1, 1, 1])]),
        ErrorKind::InvalidArgument,
    );
    assert_kind(run("from_tensor", &[], &[t.clone(), i64s(&[1, 1])]), ErrorKind::IncompatibleShapes);
    assert_kind(run("from_tensor", &[("padding", Attr::Str("".into()))], &[t]), ErrorKind::TypeMismatch);
    assert_kind(run("from_tensor", &[], &[i32s(&[1, 2])]), ErrorKind::IncompatibleShapes);
    assert_kind(run("from_tensor", &[], &[ragged![[1], [2]].unwrap()]), ErrorKind::IncompatibleShapes);
}

#[test]
fn sparse_round_trip() {
    // structure/to_sparse and structure/from_sparse
    let s = ragged![["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]].unwrap();
    let out = run("to_sparse", &[], std::slice::from_ref(&s)).unwrap();
    assert_value(&out[0], &dense(&[7, 2], vec![0i64, 0, 1, 0, 1, 1, 1, 2, 1, 3, 2, 0, 2, 1]));
    assert_eq!(out[1].flat_values().shape(), &[7]);
    assert_value(&out[2], &i64s(&[3, 4]));
    let back = run1("from_sparse", &[], &[out[0].clone(), out[1].clone(), i64s(&[3, 4])]).unwrap();
    assert_value(&back, &s);
    let indices = dense(&[3, 2], vec![0i64, 0, 2, 0, 2, 1]);
    let values = RaggedTensor::from_literal(&Literal::from(vec!["a", "b", "c"])).unwrap();
    let y = run1("from_sparse", &[], &[indices.clone(), values.clone(), i64s(&[3, 3])]).unwrap();
    assert_value(&y, &ragged![["a"], [], ["b", "c"]].unwrap());
    assert_kind(run("from_sparse", &[], &[indices, values, i64s(&[3, 3, 3])]), ErrorKind::IncompatibleShapes);
    let t = build("to_sparse", &[]).infer(&[TensorType::ragged(DType::F32, 2)]).unwrap();
    let shown: Vec<String> = t.iter().map(|t| t.to_string()).collect();
    assert_eq!(shown, ["int64[?, 3]", "float32[?]", "int64[3]"]);
}

#[test]
fn empty_tensors_with_huge_dims_are_refused_not_allocated() {
    // 2^40 rows of nothing: no data, but per-row bookkeeping would need terabytes.
    let x: RaggedTensor = DenseTensor::from_vec(vec![1 << 40, 0], Vec::<i32>::new()).unwrap().into();
    let r = ragged![[1]].unwrap();
    assert_kind(
        run("reverse", &[("axis", Attr::List(vec![Attr::Int(0)]))], std::slice::from_ref(&x)),
        ErrorKind::ResourceExhausted,
    );
    let multiples = [("multiples", Attr::List(vec![Attr::Int(1), Attr::Int(1)]))];
    assert_kind(run("tile", &multiples, std::slice::from_ref(&x)), ErrorKind::ResourceExhausted);
    assert_kind(run("concat", &axis(0), &[x.clone(), r]), ErrorKind::ResourceExhausted);
    assert_kind(run("to_tensor", &[], std::slice::from_ref(&x)), ErrorKind::ResourceExhausted);
    assert_kind(run("to_sparse", &[], std::slice::from_ref(&x)), ErrorKind::ResourceExhausted);
    assert_kind(run("from_tensor", &[], std::slice::from_ref(&x)), ErrorKind::ResourceExhausted);
    assert_kind(run("row_lengths", &[], std::slice::from_ref(&x)), ErrorKind::ResourceExhausted);
}

/// `t` (dense, rank >= 2) as a ragged tensor of ragged rank `ragged_rank` with uniform rows.
fn as_ragged(t: &RaggedTensor, ragged_rank: usize) -> RaggedTensor {
    let ctx = &ExecContext::new(Limits::untrusted());
    raise_ragged_rank(ctx, "test", t, ragged_rank).unwrap()
}

/// Asserts that ragged `got` densifies to dense `want` (padded to `want`'s shape, since a
/// ragged tensor without rows has no bounding size in its ragged dims).
#[track_caller]
fn assert_densifies_to(got: &RaggedTensor, want: &RaggedTensor) {
    let shape: Vec<Option<usize>> = want.flat_values().shape().iter().map(|&d| Some(d)).collect();
    assert_value(&got.to_tensor(None, Some(&shape)).unwrap().into(), want);
}

#[test]
fn ragged_paths_agree_with_dense_paths() {
    let a = dense(&[2, 3, 2], (0..12).collect::<Vec<i32>>());
    let b = dense(&[2, 3, 2], (100..112).collect::<Vec<i32>>());
    for op in ["concat", "stack"] {
        let out_rank = 3 + usize::from(op == "stack");
        for ax in -(out_rank as i64)..out_rank as i64 {
            let want = run1(op, &axis(ax), &[a.clone(), b.clone()]).unwrap();
            for (ra, rb) in [(1, 0), (0, 2), (1, 1), (2, 2), (2, 1)] {
                let (x, y) = (as_ragged(&a, ra), as_ragged(&b, rb));
                assert_densifies_to(&run1(op, &axis(ax), &[x, y]).unwrap(), &want);
            }
        }
    }
    for multiples in [[1, 1, 1], [2, 1, 3], [1, 3, 1], [0, 2, 2], [3, 2, 0]] {
        let attr = [("multiples", Attr::List(multiples.iter().map(|&m| Attr::Int(m)).collect()))];
        let want = run1("tile", &attr, std::slice::from_ref(&a)).unwrap();
        for rr in 1..=2 {
            assert_densifies_to(&run1("tile", &attr, &[as_ragged(&a, rr)]).unwrap(), &want);
        }
    }
    for axes in [vec![0], vec![1], vec![2], vec![0, 2], vec![-1, -2, -3]] {
        let attr = [("axis", Attr::List(axes.iter().map(|&m| Attr::Int(m)).collect()))];
        let want = run1("reverse", &attr, std::slice::from_ref(&a)).unwrap();
        for rr in 1..=2 {
            assert_densifies_to(&run1("reverse", &attr, &[as_ragged(&a, rr)]).unwrap(), &want);
        }
    }
}

#[test]
fn scalars_pass_through_tile_and_reverse() {
    let s: RaggedTensor = DenseTensor::scalar(5i32).into();
    assert_value(&run1("tile", &[("multiples", Attr::List(vec![]))], std::slice::from_ref(&s)).unwrap(), &s);
    assert_value(&run1("reverse", &[("axis", Attr::List(vec![]))], std::slice::from_ref(&s)).unwrap(), &s);
}
