//! Unit tests of indexing.

use ragtime_core::limits::Limits;
use ragtime_core::{ragged, DType, ErrorKind, ExecContext, Literal};
use ragtime_core::{DenseTensor, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attr, Attrs, Op};

use crate::index::getitem::{GetItem, SliceSpec};
use crate::index::key::{Key, KeyItem};
use crate::index::lookup;
use crate::s;

/// Runs `x[key]` through both `infer` and `perform`, checking that they agree.
fn get(x: &RaggedTensor, key: &str) -> Result<RaggedTensor> {
    let op = GetItem::new(key.parse::<Key>()?);
    let inferred = op.infer(&[TensorType::of(x)]);
    let performed =
        op.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(x)).map(|mut v| v.remove(0));
    match (&inferred, &performed) {
        (Ok(ty), Ok(value)) => assert!(
            ty[0].accepts(&TensorType::of(value)),
            "x[{key}]: infer says {}, perform gave {}",
            ty[0],
            TensorType::of(value)
        ),
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "x[{key}]: infer and perform fail differently"),
        (Err(a), Ok(v)) => panic!("x[{key}]: infer fails ({a}) but perform gives {v}"),
        (Ok(_), Err(_)) => {} // data-dependent failures are perform's alone
    }
    performed
}

fn check(x: &RaggedTensor, key: &str, want: Result<RaggedTensor>) {
    let want = want.expect("expected value is a valid literal");
    let got = get(x, key).unwrap_or_else(|e| panic!("x[{key}] failed: {e}"));
    assert!(got.equals(&want), "x[{key}]: got {got}, want {want}");
}

fn check_err(x: &RaggedTensor, key: &str, kind: ErrorKind) {
    match get(x, key) {
        Ok(v) => panic!("x[{key}]: expected a {kind} error, got {v}"),
        Err(e) => assert_eq!(e.kind(), kind, "x[{key}]: {e}"),
    }
}

pub(crate) fn dense(lit: impl Into<Literal>) -> Result<RaggedTensor> {
    RaggedTensor::from_literal_typed(&lit.into(), None, Some(0), None)
}

/// `n` empty int32 rows.
fn int_rows(n: usize) -> Result<RaggedTensor> {
    RaggedTensor::from_row_splits(DenseTensor::vector::<i32>(vec![]), vec![0; n + 1])
}

pub(crate) fn digits() -> RaggedTensor {
    ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap()
}

fn queries() -> RaggedTensor {
    ragged![["Who", "is", "George", "Washington"], ["What", "is", "the", "weather", "tomorrow"], ["Goodnight"]].unwrap()
}

fn rt3() -> RaggedTensor {
    ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap()
}

#[test]
fn seed_walkthrough_cases() {
    check(&digits(), "0", ragged![3, 1, 4, 1]);
    check(&digits(), ":, :2", ragged![[3, 1], [], [5, 9], [6], []]);
    check(&digits(), ":, -2:", ragged![[4, 1], [], [9, 2], [6], []]);
}

#[test]
fn two_dimensional_ragged_cases() {
    let q = queries();
    check(&q, "1", ragged!["What", "is", "the", "weather", "tomorrow"]);
    check(&q, "1, 2", RaggedTensor::from_literal(&Literal::from("the")));
    check(&q, "1:", ragged![["What", "is", "the", "weather", "tomorrow"], ["Goodnight"]]);
    check(&q, ":, :3", ragged![["Who", "is", "George"], ["What", "is", "the"], ["Goodnight"]]);
    check(&q, ":, -2:", ragged![["George", "Washington"], ["weather", "tomorrow"], ["Goodnight"]]);
    check(&q, "::2", ragged![["Who", "is", "George", "Washington"], ["Goodnight"]]);
    check(&q, "-1", ragged!["Goodnight"]);
    check_err(&q, ":, 1", ErrorKind::InvalidIndex);
    check_err(&q, "7", ErrorKind::IndexOutOfRange);
    check_err(&q, "-4", ErrorKind::IndexOutOfRange);
}

#[test]
fn three_dimensional_ragged_cases() {
    let t = rt3();
    check(&t, "1", ragged![[5], [], [6]]);
    check(&t, "3, 0", ragged![8, 9]);
    check(&t, ":, 1:3", ragged![[[4]], [[], [6]], [], [[10]]]);
    check(&t, ":, -1:", ragged![[[4]], [[6]], [[7]], [[10]]]);
    // After `1`, dim 1 of the row is its outer dim; dim 2 stays ragged.
    check(&t, "1, 2", ragged![6]);
    check_err(&t, "1, :, 0", ErrorKind::InvalidIndex);
    check_err(&t, ":, :, 0", ErrorKind::InvalidIndex);
    // Slicing the innermost ragged dim of every row of every row.
    check(&t, ":, :, :1", ragged![[[1], [4]], [[5], [], [6]], [[7]], [[8], [10]]]);
}

#[test]
fn per_row_slices_follow_python_rules() {
    let x = ragged![[1, 2, 3], [], [4, 5]].unwrap();
    check(&x, ":, ::-1", ragged![[3, 2, 1], [], [5, 4]]);
    check(&x, ":, 1:", ragged![[2, 3], [], [5]]);
    check(&x, ":, :-1", ragged![[1, 2], [], [4]]);
    check(&x, ":, -100:100", ragged![[1, 2, 3], [], [4, 5]]);
    check(&x, ":, 5:", int_rows(3));
    check(&x, ":, ::2", ragged![[1, 3], [], [4]]);
    check(&x, ":, :0", int_rows(3));
    check(&x, "::-1, :1", ragged![[4], [], [1]]);
    check(&x, "...", ragged![[1, 2, 3], [], [4, 5]]);
    check(&x, "..., :1", ragged![[1], [], [4]]);
    check(&x, "2, ...", ragged![4, 5]);
    check(&x, "()", ragged![[1, 2, 3], [], [4, 5]]);
}

#[test]
fn slice_positions_match_python() {
    let positions = |start, stop, step, len| -> Vec<usize> { SliceSpec { start, stop, step }.positions(len).collect() };
    // list(range(5))[...] in Python.
    assert_eq!(positions(Some(1), Some(-1), 2, 5), vec![1, 3]);
    assert_eq!(positions(None, None, -2, 5), vec![4, 2, 0]);
    assert_eq!(positions(Some(-100), Some(2), 1, 5), vec![0, 1]);
    assert_eq!(positions(Some(3), Some(1), 1, 5), Vec::<usize>::new());
    assert_eq!(positions(Some(5), Some(1), -1, 5), vec![4, 3, 2]);
    assert_eq!(positions(Some(-1), Some(-6), -1, 5), vec![4, 3, 2, 1, 0]);
    assert_eq!(positions(None, None, i64::MIN, 5), vec![4]);
    assert_eq!(positions(None, None, i64::MAX, 5), vec![0]);
    assert_eq!(positions(None, None, -1, 0), Vec::<usize>::new());
}

#[test]
fn empty_and_zero_row_tensors() {
    let none = RaggedTensor::from_row_splits(DenseTensor::vector::<i32>(vec![]), vec![0]).unwrap();
    assert_eq!(none.nrows(), 0);
    let got = get(&none, ":, :2").unwrap();
    assert_eq!((got.nrows(), got.ragged_rank()), (0, 1));
    check_err(&none, "0", ErrorKind::IndexOutOfRange);
    let empty_rows = ragged![[], []].unwrap();
    check(&empty_rows, "1", RaggedTensor::from_literal_typed(&Literal::List(vec![]), Some(DType::F32), Some(0), None));
    check(&ragged![[""], ["a", ""]].unwrap(), ":, -1:", ragged![[""], [""]]);
}

#[test]
fn dense_tensors_index_like_numpy() {
    let x = dense(vec![vec![1, 2, 3], vec![4, 5, 6]]).unwrap();
    check(&x, "1", ragged![4, 5, 6]);
    check(&x, ":, 1", ragged![2, 5]);
    check(&x, "..., -1", ragged![3, 6]);
    check(&x, "::-1, 0", ragged![4, 1]);
    check(&x, "1, 2", RaggedTensor::from_literal(&Literal::from(6)));
    check(&x, ":, 1:", dense(vec![vec![2, 3], vec![5, 6]]));
    check(&x, "None", dense(vec![vec![vec![1, 2, 3], vec![4, 5, 6]]]));
    check(&x, ":, None", dense(vec![vec![vec![1, 2, 3]], vec![vec![4, 5, 6]]]));
    check(&x, "..., None", dense(vec![vec![vec![1], vec![2], vec![3]], vec![vec![4], vec![5], vec![6]]]));
    check_err(&x, "2", ErrorKind::IndexOutOfRange);
    check_err(&x, ":, -4", ErrorKind::IndexOutOfRange);
    check_err(&x, "0, 0, 0", ErrorKind::InvalidIndex);
    check_err(&x, "..., 0, ...", ErrorKind::InvalidIndex);
    check_err(&x, "::0", ErrorKind::InvalidArgument);
}

#[test]
fn uniform_inner_dims_of_ragged_tensors() {
    let lit = Literal::from(vec![vec![vec![1, 2], vec![3, 4]], vec![vec![5, 6]]]);
    let x = RaggedTensor::from_literal_typed(&lit, None, Some(1), Some(&[2])).unwrap();
    check(&x, ":, :, 0", ragged![[1, 3], [5]]);
    check(&x, "0, :, 1", ragged![2, 4]);
    check(&x, "0, 1", ragged![3, 4]);
    check_err(&x, ":, :, 2", ErrorKind::IndexOutOfRange);
    let last = get(&x, ":, -1:").unwrap();
    assert_eq!(last.to_literal(), Literal::from(vec![vec![vec![3, 4]], vec![vec![5, 6]]]));
}

#[test]
fn new_axis_on_ragged_tensors() {
    // Dimensions added by `None` are ragged when a ragged dimension follows (TensorFlow).
    check(&digits(), "None", ragged![[[3, 1, 4, 1], [], [5, 9, 2], [6], []]]);
    check(&digits(), ":, None", ragged![[[3, 1, 4, 1]], [[]], [[5, 9, 2]], [[6]], [[]]]);
    check(&digits(), "0, None", dense(vec![vec![3, 1, 4, 1]]));
    let wrapped = get(&digits(), ":, None, :2").unwrap();
    assert_eq!(wrapped.to_literal(), ragged![[[3, 1]], [[]], [[5, 9]], [[6]], [[]]].unwrap().to_literal());
}

#[test]
fn keys_parse_and_print() {
    for text in ["1, 2", ":, -2:", "::2", "1:", "-1", ":, 1:3", "..., None", "1:5:-2", ":", "()"] {
        let key: Key = text.parse().unwrap();
        assert_eq!(key.to_string(), text);
    }
    assert_eq!(" : , -2 : ".parse::<Key>().unwrap(), s![.., -2..]);
    assert_eq!("1,".parse::<Key>().unwrap(), s![1]);
    assert_eq!("+3".parse::<Key>().unwrap(), s![3]);
    assert_eq!("tf.newaxis".parse::<Key>().unwrap(), Key(vec![KeyItem::NewAxis]));
    for bad in ["", "1,,2", "a", "1:2:3:4", "1.5", "--1", "99999999999999999999", ", 1"] {
        let err = bad.parse::<Key>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{bad:?}");
        assert!(err.to_string().contains("getitem"), "{err}");
    }
}

#[test]
fn rust_ranges_build_keys() {
    assert_eq!(s![1, 2].to_string(), "1, 2");
    assert_eq!(s![1..].to_string(), "1:");
    assert_eq!(s![..3, 1..3].to_string(), ":3, 1:3");
    assert_eq!(s![1i64..=2, ..=-1].to_string(), "1:3, :");
    assert_eq!(s![KeyItem::Ellipsis, KeyItem::slice(None, None, Some(2))].to_string(), "..., ::2");
    assert_eq!(s![].to_string(), "()");
    assert_eq!(GetItem::new(s![.., -2..]).name(), "GetItem{:, -2:}");
    assert_eq!(GetItem::new(-1).name(), "GetItem{-1}");
}

#[test]
fn registry_builds_getitem() {
    let mut map = std::collections::BTreeMap::new();
    map.insert("key".to_string(), Attr::Str(":, :2".into()));
    let op = lookup("getitem", &Attrs::new("getitem", map.clone())).unwrap().unwrap();
    assert_eq!(op.name(), "GetItem{:, :2}");
    map.insert("axis".to_string(), Attr::Int(0));
    let err = lookup("getitem", &Attrs::new("getitem", map)).unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(lookup("gather", &Attrs::default()).is_none());
}

#[test]
fn inputs_are_left_untouched() {
    let x = digits();
    let before = x.to_literal();
    get(&x, ":, ::-1").unwrap();
    assert_eq!(x.to_literal(), before);
}

#[test]
fn infer_rejects_statically() {
    let op = GetItem::new(s![.., 1]);
    let err = op.infer(&[TensorType::ragged(DType::F32, 1)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidIndex);
    assert_eq!(op.infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let ty = GetItem::new(s![.., ..2]).infer(&[TensorType::ragged(DType::F32, 2).with_inner(&[Some(3)])]).unwrap();
    assert_eq!(ty[0].to_string(), "float32[?, *, *, 3]");
    let ty = GetItem::new(s![0]).infer(&[TensorType::ragged(DType::F32, 2)]).unwrap();
    assert_eq!(ty[0].to_string(), "float32[?, *]");
    let ty = GetItem::new(s![1..3, .., 0]).infer(&[TensorType::dense(DType::I64, &[Some(5), None, Some(2)])]).unwrap();
    assert_eq!(ty[0].to_string(), "int64[2, ?]");
    let err = GetItem::new(s![5]).infer(&[TensorType::dense(DType::I64, &[Some(5)])]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IndexOutOfRange);
}

/// `rows` of `values` grouped `length` to a row with a uniform partition.
fn uniform(values: Result<RaggedTensor>, length: usize) -> RaggedTensor {
    RaggedTensor::from_uniform_row_length(values.unwrap(), length).unwrap()
}

#[test]
fn an_integer_indexes_a_uniform_partition_like_a_dense_dim() {
    // Law: with a uniform partition, x[:, i] is the dense tensor's [:, i] (TensorFlow takes
    // `values[i::n]`), for every i in -n..n.
    let x = uniform(dense(vec![1, 2, 3, 4, 5, 6]), 3);
    let d = dense(vec![vec![1, 2, 3], vec![4, 5, 6]]).unwrap();
    assert_eq!(TensorType::of(&x).to_string(), "int32[2, (3)]");
    for i in -3..3 {
        let key = format!(":, {i}");
        let got = get(&x, &key).unwrap();
        assert!(got.equals(&get(&d, &key).unwrap()), "x[{key}] = {got}");
        let ty = GetItem::new(key.parse::<Key>().unwrap()).infer(&[TensorType::of(&x)]).unwrap();
        assert_eq!(ty[0].to_string(), "int32[2]", "x[{key}]");
    }
    // Out of range is known from the type, before any data.
    for key in [":, 3", ":, -4", "..., 3"] {
        check_err(&x, key, ErrorKind::IndexOutOfRange);
        let e = GetItem::new(key.parse::<Key>().unwrap()).infer(&[TensorType::of(&x)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IndexOutOfRange, "x[{key}]: {e}");
    }
    // The same rows without the uniform partition stay ragged, as in TensorFlow.
    check_err(&ragged![[1, 2, 3], [4, 5, 6]].unwrap(), ":, 1", ErrorKind::InvalidIndex);
}

#[test]
fn an_integer_on_a_uniform_partition_over_ragged_rows() {
    // Law: row r of x[:, i] is x[r, i].
    let x = uniform(ragged![[1], [2, 3], [], [4], [5, 6], [7]], 2);
    assert_eq!(TensorType::of(&x).to_string(), "int32[3, (2), *]");
    for key in [":, 1", ":, -2", ":, 0, :1", ":, 1, ::-1"] {
        let got = get(&x, key).unwrap();
        let rest = key.strip_prefix(":, ").unwrap();
        let rows: Vec<Literal> = (0..3).map(|r| get(&x, &format!("{r}, {rest}")).unwrap().to_literal()).collect();
        assert_eq!(got.to_literal(), Literal::List(rows), "x[{key}]");
        assert_eq!(TensorType::of(&got).ragged_rank(), 1, "x[{key}] keeps the inner ragged dim");
    }
    check_err(&x, ":, 2", ErrorKind::IndexOutOfRange);
    // An integer on the ragged dim after it is still refused.
    check_err(&x, ":, :, 0", ErrorKind::InvalidIndex);
}

#[test]
fn slices_and_new_axes_keep_partitions_uniform() {
    let x = uniform(dense(vec![1, 2, 3, 4, 5, 6]), 3);
    let cases = [
        (":, 1:", "int32[2, (2)]"),
        (":, ::-1", "int32[2, (3)]"),
        (":, 5:", "int32[2, (0)]"),
        ("1:", "int32[1, (3)]"),
        ("0", "int32[3]"),
        (":, None", "int32[2, (1), (3)]"),
    ];
    for (key, want) in cases {
        let op = GetItem::new(key.parse::<Key>().unwrap());
        assert_eq!(op.infer(&[TensorType::of(&x)]).unwrap()[0].to_string(), want, "x[{key}]");
        // `get` checks that the value's partitions are typed as inferred.
        let got = get(&x, key).unwrap();
        assert_eq!(TensorType::of(&got).to_string(), want, "x[{key}] = {got}");
    }
}
