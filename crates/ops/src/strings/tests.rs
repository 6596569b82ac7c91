//! Unit tests of the string family.

use ragtime_core::limits::Limits;
use ragtime_core::{ragged, ErrorKind, ExecContext, Literal};
use ragtime_core::{DType, DenseTensor, RaggedTensor, StringBuilder, StringTensor, TensorType};
use ragtime_graph::{Attr, Attrs, Op};

use crate::reduce::axes::Axes;
use crate::strings::common::{CharUnit, REDUCE_JOIN, SUBSTR};
use crate::strings::convert::{parse_float, trimmed, write_c_float, Length, Lower, ToNumber, Upper};
use crate::strings::hashing::ToHashBucketFast;
use crate::strings::join::{Join, ReduceJoin};
use crate::strings::lookup;
use crate::strings::ngrams::{HashedNgrams, Ngrams};
use crate::strings::split::Split;
use crate::strings::substr::Substr;
use crate::strings::unicode::{UnicodeEncode, UnicodeErrors};

/// A string tensor of the given ragged rank from a literal (so empty lists stay strings).
pub(crate) fn strings(lit: Literal, ragged_rank: usize) -> RaggedTensor {
    RaggedTensor::from_literal_typed(&lit, Some(DType::String), Some(ragged_rank), None).unwrap()
}

fn lit<T: Into<Literal>>(v: T) -> Literal {
    v.into()
}

/// Runs `op` on `inputs`, checking that `infer` accepts every input type and the output's type.
fn run(op: &dyn Op, inputs: &[RaggedTensor]) -> RaggedTensor {
    run_in(&ExecContext::new(Limits::untrusted()), op, inputs)
}

/// [`run`] under the call context `ctx` (its threads, limits and budget).
fn run_in(ctx: &ExecContext, op: &dyn Op, inputs: &[RaggedTensor]) -> RaggedTensor {
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let inferred = op.output_types(&types).unwrap_or_else(|e| panic!("{}: infer failed: {e}", op.name()));
    let out = op.perform(ctx, inputs).unwrap_or_else(|e| panic!("{}: perform failed: {e}", op.name()));
    assert_eq!(out.len(), 1, "{} gives one output", op.name());
    let got = TensorType::of(&out[0]);
    assert!(inferred[0].accepts(&got), "{}: inferred {} but the value has type {got}", op.name(), inferred[0]);
    out.into_iter().next().unwrap()
}

fn assert_value(got: &RaggedTensor, want: &RaggedTensor) {
    assert!(got.equals(want), "expected {want}, got {got}");
}

fn perform_error(op: &dyn Op, inputs: &[RaggedTensor]) -> ErrorKind {
    match op.perform(&ExecContext::new(Limits::untrusted()), inputs) {
        Ok(v) => panic!("{}: expected an error, got {}", op.name(), v[0]),
        Err(e) => e.kind(),
    }
}

fn sentences() -> RaggedTensor {
    ragged!["What makes you think she is a witch?", "She turned me into a newt.", "A newt?", "Well, I got better."]
        .unwrap()
}

// --- strings.split -------------------------------------------------------------------------

#[test]
fn split_on_space_matches_tensorflow() {
    // conformance: strings/split_space
    let out = run(&Split::new(Some(" ")), &[sentences()]);
    let want = ragged![
        ["What", "makes", "you", "think", "she", "is", "a", "witch?"],
        ["She", "turned", "me", "into", "a", "newt."],
        ["A", "newt?"],
        ["Well,", "I", "got", "better."]
    ]
    .unwrap();
    assert_value(&out, &want);
}

#[test]
fn split_with_separator_keeps_empty_pieces() {
    let out = run(&Split::new(Some("<>")), &[ragged!["1<>2<><>3", "", "<>"].unwrap()]);
    assert_value(&out, &strings(lit(vec![vec!["1", "2", "", "3"], vec![""], vec!["", ""]]), 1));
    let out = run(&Split::new(Some(",")), &[ragged!["a,,b"].unwrap()]);
    assert_value(&out, &ragged![["a", "", "b"]].unwrap());
}

#[test]
fn split_without_separator_uses_whitespace_runs() {
    let input = ragged!["hello world", "  a \t b\n\x0bc  ", "", " \r\n "].unwrap();
    let want = strings(lit(vec![vec!["hello", "world"], vec!["a", "b", "c"], vec![], vec![]]), 1);
    assert_value(&run(&Split::new(None), std::slice::from_ref(&input)), &want);
    // TensorFlow treats an empty separator as no separator.
    assert_value(&run(&Split::new(Some("")), &[input]), &want);
}

#[test]
fn split_maxsplit_keeps_the_rest() {
    let out = run(&Split::new(Some(",")).with_maxsplit(1), &[ragged!["a,b,c", "", "x"].unwrap()]);
    assert_value(&out, &ragged![["a", "b,c"], [""], ["x"]].unwrap());
    // TensorFlow's kernel keeps the remainder once the limit is reached, even an empty one.
    let out = run(&Split::new(None).with_maxsplit(1), &[ragged!["a b  c ", "a"].unwrap()]);
    assert_value(&out, &ragged![["a", "b  c "], ["a", ""]].unwrap());
    let out = run(&Split::new(None).with_maxsplit(0), &[ragged!["a b", ""].unwrap()]);
    assert_value(&out, &ragged![["a b"], [""]].unwrap());
}

#[test]
fn split_of_a_scalar_is_a_dense_vector() {
    let scalar = RaggedTensor::from_literal(&lit("hello world")).unwrap();
    let out = run(&Split::new(None), &[scalar]);
    assert_value(&out, &ragged!["hello", "world"].unwrap());
}

#[test]
fn split_adds_a_ragged_dimension_and_reuses_partitions() {
    let x = ragged![["a b", "c"], [], ["d e f"]].unwrap();
    let out = run(&Split::new(Some(" ")), std::slice::from_ref(&x));
    assert_value(&out, &ragged![[["a", "b"], ["c"]], [], [["d", "e", "f"]]].unwrap());
    assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "the outer partition is shared");
}

#[test]
fn split_of_a_matrix_makes_every_inner_dim_ragged() {
    let x = RaggedTensor::from_literal_typed(&lit(vec![vec!["a b", "c"], vec!["", "d"]]), None, Some(0), None).unwrap();
    let out = run(&Split::new(None), &[x]);
    assert_eq!(out.ragged_rank(), 2);
    assert_value(&out, &strings(lit(vec![vec![vec!["a", "b"], vec!["c"]], vec![vec![], vec!["d"]]]), 2));
}

#[test]
fn split_of_no_strings_has_no_rows() {
    let x = strings(lit(Vec::<Literal>::new()), 0);
    let out = run(&Split::new(Some(",")), &[x]);
    assert_eq!((out.nrows(), out.ragged_rank()), (0, 1));
}

#[test]
fn split_refuses_numbers() {
    let err = Split::new(None).infer(&[TensorType::ragged(DType::I32, 1)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    assert_eq!(perform_error(&Split::new(None), &[ragged![[1, 2]].unwrap()]), ErrorKind::TypeMismatch);
}

// --- strings.substr ------------------------------------------------------------------------

fn words() -> RaggedTensor {
    ragged![["So", "long"], ["thanks", "for", "all", "the", "fish"]].unwrap()
}

#[test]
fn substr_matches_tensorflow() {
    // conformance: seed_walkthrough/substr_0_2 and strings/substr_neg
    let x = words();
    let out = run(&Substr::new(0, 2), std::slice::from_ref(&x));
    assert_value(&out, &ragged![["So", "lo"], ["th", "fo", "al", "th", "fi"]].unwrap());
    assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "substr keeps the input's partition");
    let out = run(&Substr::new(1, 3), &[x]);
    assert_value(&out, &ragged![["o", "ong"], ["han", "or", "ll", "he", "ish"]].unwrap());
}

#[test]
fn substr_negative_pos_counts_from_the_end() {
    let x = ragged!["Hello", "World"].unwrap();
    assert_value(&run(&Substr::new(-3, 2), std::slice::from_ref(&x)), &ragged!["ll", "rl"].unwrap());
    assert_value(&run(&Substr::new(-5, 1), std::slice::from_ref(&x)), &ragged!["H", "W"].unwrap());
}

#[test]
fn substr_long_or_negative_len_takes_the_rest() {
    let x = ragged!["Hello", "ab"].unwrap();
    assert_value(&run(&Substr::new(1, 100), std::slice::from_ref(&x)), &ragged!["ello", "b"].unwrap());
    assert_value(&run(&Substr::new(1, -1), std::slice::from_ref(&x)), &ragged!["ello", "b"].unwrap());
    assert_value(&run(&Substr::new(-1, -7), &[x]), &ragged!["o", "b"].unwrap());
}

#[test]
fn substr_pos_at_the_end_gives_empty_strings() {
    let x = ragged![["abc"], [""]].unwrap();
    assert_value(&run(&Substr::new(0, 2), std::slice::from_ref(&x)), &ragged![["ab"], [""]].unwrap());
    let x = ragged!["abc", "xyz"].unwrap();
    assert_value(&run(&Substr::new(3, 2), &[x]), &ragged!["", ""].unwrap());
}

#[test]
fn substr_pos_outside_a_string_is_out_of_range() {
    let x = ragged![["So", "long"], ["thanks", "for"]].unwrap();
    let err = Substr::new(3, 1).perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IndexOutOfRange);
    let msg = err.to_string();
    assert!(msg.contains("strings.substr") && msg.contains("b\"So\"") && msg.contains("[0, 0]"), "{msg}");
    assert_eq!(perform_error(&Substr::new(-3, 1), &[x]), ErrorKind::IndexOutOfRange);
    assert_eq!(perform_error(&Substr::new(1, 1), &[ragged![""].unwrap()]), ErrorKind::IndexOutOfRange);
}

#[test]
fn substr_in_utf8_characters() {
    let x = ragged!["héllo", "世界", "🙂"].unwrap();
    let utf8 = |pos, len| Substr::new(pos, len).with_unit(CharUnit::Utf8Char);
    assert_value(&run(&utf8(1, 2), std::slice::from_ref(&x)), &ragged!["él", "界", ""].unwrap());
    assert_value(&run(&utf8(-1, 1), std::slice::from_ref(&x)), &ragged!["o", "界", "🙂"].unwrap());
    assert_value(&run(&utf8(0, 10), std::slice::from_ref(&x)), &ragged!["héllo", "世界", "🙂"].unwrap());
    // TensorFlow's kernel: a negative length is an empty substring for pos >= 0 ...
    assert_value(&run(&utf8(1, -1), std::slice::from_ref(&x)), &ragged!["", "", ""].unwrap());
    // ... and an error for pos < 0; pos beyond the characters is out of range.
    assert_eq!(perform_error(&utf8(-1, -1), std::slice::from_ref(&x)), ErrorKind::IndexOutOfRange);
    assert_eq!(perform_error(&utf8(2, 1), &[x]), ErrorKind::IndexOutOfRange);
}

#[test]
fn substr_refuses_numbers_and_bad_units() {
    let err = Substr::new(0, 1).infer(&[TensorType::vector(DType::F32)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    assert_eq!(CharUnit::parse(SUBSTR, "UTF16").unwrap_err().kind(), ErrorKind::InvalidArgument);
}

// --- strings.join --------------------------------------------------------------------------

#[test]
fn join_pairs_matches_tensorflow() {
    // conformance: strings/join_pairs
    let a = ragged![["a", "b"], ["c"]].unwrap();
    let b = ragged![["x", "y"], ["z"]].unwrap();
    let out = run(&Join::new("+"), &[a.clone(), b]);
    assert_value(&out, &ragged![["a+x", "b+y"], ["c+z"]].unwrap());
    assert!(out.partitions()[0].ptr_eq(&a.partitions()[0]), "the result reuses input 0's partition");
}

#[test]
fn join_broadcasts_scalars() {
    let a = ragged![["a", "b"], [], ["c"]].unwrap();
    let hash = RaggedTensor::from_literal(&lit("#")).unwrap();
    let out = run(&Join::new(""), &[hash.clone(), a, hash]);
    assert_value(&out, &strings(lit(vec![vec!["#a#", "#b#"], vec![], vec!["#c#"]]), 1));
    let out = run(&Join::new(", "), &[ragged!["x", ""].unwrap()]);
    assert_value(&out, &ragged!["x", ""].unwrap());
}

#[test]
fn join_refuses_numbers_and_mismatched_rows() {
    let a = ragged![["a", "b"], ["c"]].unwrap();
    let err = Join::new("").infer(&[TensorType::of(&a), TensorType::ragged(DType::I32, 1)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    assert_eq!(perform_error(&Join::new(""), &[a.clone(), ragged![[1, 2], [3]].unwrap()]), ErrorKind::TypeMismatch);
    let b = ragged![["a"], ["b", "c"]].unwrap();
    assert_eq!(perform_error(&Join::new(""), &[a, b]), ErrorKind::IncompatibleShapes);
    assert_eq!(Join::new("").infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(perform_error(&Join::new(""), &[]), ErrorKind::InvalidArgument);
}

// --- strings.reduce_join -------------------------------------------------------------------

#[test]
fn reduce_join_rows_matches_tensorflow() {
    // conformance: strings/reduce_join_axis1
    let out = run(&ReduceJoin::new(Some(1), " "), &[words()]);
    assert_value(&out, &ragged!["So long", "thanks for all the fish"].unwrap());
    let out = run(&ReduceJoin::new(Some(-1), " "), &[words()]);
    assert_value(&out, &ragged!["So long", "thanks for all the fish"].unwrap());
}

#[test]
fn reduce_join_of_empty_rows_is_empty() {
    let x = strings(lit(vec![vec!["a", "b"], vec![], vec!["c"]]), 1);
    let out = run(&ReduceJoin::new(Some(1), "-"), &[x]);
    assert_value(&out, &ragged!["a-b", "", "c"].unwrap());
}

#[test]
fn reduce_join_everything_or_across_rows() {
    let x = ragged![["a", "b"], [], ["c", "d", "e"]].unwrap();
    let all = run(&ReduceJoin::new(None, ","), std::slice::from_ref(&x));
    assert_value(&all, &RaggedTensor::from_literal(&lit("a,b,c,d,e")).unwrap());
    // Across rows, position by position (as tf.reduce_sum(axis=0) groups them).
    let columns = run(&ReduceJoin::new(Some(0), ""), std::slice::from_ref(&x));
    assert_value(&columns, &ragged!["ac", "bd", "e"].unwrap());
    let dense =
        RaggedTensor::from_literal_typed(&lit(vec![vec!["a", "b"], vec!["c", "d"]]), None, Some(0), None).unwrap();
    let kept = run(&ReduceJoin::new(Some(1), "").with_keepdims(true), &[dense]);
    let want = RaggedTensor::from_literal_typed(&lit(vec![vec!["ab"], vec!["cd"]]), None, Some(0), None).unwrap();
    assert_value(&kept, &want);
}

#[test]
fn reduce_join_refuses_numbers_and_bad_axes() {
    let err = ReduceJoin::new(Some(1), "").infer(&[TensorType::ragged(DType::F64, 1)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    let err = ReduceJoin::new(Some(2), "").infer(&[TensorType::of(&words())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(perform_error(&ReduceJoin::new(Some(-3), ""), &[words()]), ErrorKind::InvalidArgument);
}

fn dense_strings(lit: Literal) -> RaggedTensor {
    strings(lit, 0)
}

#[test]
fn reduce_join_of_a_dense_tensor_runs_the_first_listed_axis_fastest() {
    // TensorFlow's ReduceJoin documentation: [["a", "b"], ["c", "d"]] over [0, 1] is "acbd",
    // over [1, 0] "abcd".
    let x = dense_strings(lit(vec![vec!["a", "b"], vec!["c", "d"]]));
    let scalar = |s: &str| RaggedTensor::from_literal(&lit(s)).unwrap();
    assert_value(&run(&ReduceJoin::with_axes(vec![0, 1], ""), std::slice::from_ref(&x)), &scalar("acbd"));
    assert_value(&run(&ReduceJoin::with_axes(vec![1, 0], ""), std::slice::from_ref(&x)), &scalar("abcd"));
    assert_value(&run(&ReduceJoin::with_axes(vec![-1, -2], "."), std::slice::from_ref(&x)), &scalar("a.b.c.d"));
    let kept = run(&ReduceJoin::with_axes(vec![0, 1], "").with_keepdims(true), std::slice::from_ref(&x));
    assert_value(&kept, &dense_strings(lit(vec![vec!["acbd"]])));
    assert_value(&run(&ReduceJoin::with_axes(Vec::new(), "-"), std::slice::from_ref(&x)), &x);
    // An empty dim leaves every group empty: no separators.
    let empty = RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings::<&str>(&[], vec![2, 0]).unwrap()));
    assert_value(&run(&ReduceJoin::with_axes(vec![0, 1], "-"), &[empty]), &scalar(""));
}

#[test]
fn reduce_join_of_a_ragged_tensor_joins_innermost_first() {
    let x = ragged![["a", "b"], ["c", "d"]].unwrap();
    let scalar = |s: &str| RaggedTensor::from_literal(&lit(s)).unwrap();
    for axes in [vec![0, 1], vec![1, 0], vec![-1, 0]] {
        let out = run(&ReduceJoin::with_axes(axes.clone(), ""), std::slice::from_ref(&x));
        assert_value(&out, &scalar("abcd"));
    }
    // An empty row joins to "", which the join across rows keeps between separators.
    let gaps = strings(lit(vec![vec!["a"], vec![], vec!["b"]]), 1);
    assert_value(&run(&ReduceJoin::with_axes(vec![0, 1], "-"), std::slice::from_ref(&gaps)), &scalar("a--b"));
    assert_value(&run(&ReduceJoin::new(None, "-"), std::slice::from_ref(&gaps)), &scalar("a-b"));
    let no_values = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
    assert_value(&run(&ReduceJoin::with_axes(vec![1, 0], "-"), &[no_values]), &scalar("-"));
    // Rank 3: each row's words, then the row's sentences.
    let doc = strings(lit(vec![vec![vec!["to", "be"], vec!["or"]], vec![vec!["not"]]]), 2);
    let out = run(&ReduceJoin::with_axes(vec![1, 2], " "), std::slice::from_ref(&doc));
    assert_value(&out, &ragged!["to be or", "not"].unwrap());
    let kept = run(&ReduceJoin::with_axes(vec![1, 2], " ").with_keepdims(true), &[doc]);
    assert_value(&kept, &dense_strings(lit(vec![vec![vec!["to be or"]], vec![vec!["not"]]])));
}

#[test]
fn reduce_join_axis_lists_from_attributes() {
    let mut m = std::collections::BTreeMap::new();
    m.insert("axis".to_owned(), Attr::List(vec![Attr::Int(0), Attr::Int(-1)]));
    m.insert("separator".to_owned(), Attr::Str(",".to_owned()));
    let op = lookup(REDUCE_JOIN, &Attrs::new(REDUCE_JOIN, m)).unwrap().unwrap();
    assert_eq!(op.name(), r#"StringsReduceJoin{axis=[0, -1], keepdims=false, separator=","}"#);
    let out = op.perform(&ExecContext::new(Limits::untrusted()), &[words()]).unwrap().remove(0);
    assert_value(&out, &RaggedTensor::from_literal(&lit("So,long,thanks,for,all,the,fish")).unwrap());
    assert_eq!(ReduceJoin::with_axes(vec![1], "").name(), ReduceJoin::new(Some(1), "").name());
    assert_eq!(ReduceJoin::with_axes([0, 2], "").axis(), &Axes::List(vec![0, 2]));
    for axes in [vec![1, 1], vec![0, -2], vec![0, 2]] {
        let op = ReduceJoin::with_axes(axes.clone(), "");
        let err = op.infer(&[TensorType::of(&words())]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "axes {axes:?}");
        assert_eq!(perform_error(&op, &[words()]), ErrorKind::InvalidArgument, "axes {axes:?}");
    }
}

// --- strings.length, lower, upper, to_hash_bucket_fast -------------------------------------

fn unicode() -> RaggedTensor {
    ragged![["héllo", "世界", ""], ["🙂"]].unwrap()
}

#[test]
fn length_counts_bytes_as_int32() {
    // conformance: strings/length_bytes
    let x = unicode();
    let out = run(&Length::new(CharUnit::Byte), std::slice::from_ref(&x));
    assert_value(&out, &ragged![[6, 6, 0], [4]].unwrap());
    assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]));
}

#[test]
fn length_counts_utf8_characters() {
    let out = run(&Length::new(CharUnit::Utf8Char), &[unicode()]);
    assert_value(&out, &ragged![[5, 2, 0], [1]].unwrap());
}

#[test]
fn lower_and_upper_map_ascii_only() {
    let x = ragged![["Hello WORLD", "ÉtÉ 9"], []].unwrap();
    let lower = run(&Lower::new(), std::slice::from_ref(&x));
    assert_value(&lower, &ragged![["hello world", "ÉtÉ 9"], []].unwrap());
    let upper = run(&Upper::new(), std::slice::from_ref(&x));
    assert_value(&upper, &ragged![["HELLO WORLD", "ÉTÉ 9"], []].unwrap());
    assert!(upper.partitions()[0].ptr_eq(&x.partitions()[0]));
    let offsets = |t: &RaggedTensor| t.flat_strings().unwrap().offsets().clone();
    assert!(offsets(&upper).as_ptr() == offsets(&x).as_ptr(), "case mapping shares the offsets");
    assert_value(&x, &ragged![["Hello WORLD", "ÉtÉ 9"], []].unwrap());
}

#[test]
fn hash_buckets_match_tensorflow() {
    // conformance: strings/split_then_hash and strings/hash_unicode
    let words = run(&Split::new(Some(" ")), &[sentences()]);
    let out = run(&ToHashBucketFast::new(1000).unwrap(), &[words]);
    let want = ragged![
        [940i64, 203, 668, 387, 790, 320, 939, 185],
        [315i64, 515, 791, 181, 939, 787],
        [564i64, 205],
        [820i64, 180, 993, 739]
    ]
    .unwrap()
    .cast(DType::I64)
    .unwrap();
    assert_value(&out, &want);
    let out = run(&ToHashBucketFast::new(1048576).unwrap(), &[unicode()]);
    assert_value(&out, &ragged![[480503i64, 698667, 16463], [39156i64]].unwrap().cast(DType::I64).unwrap());
}

#[test]
fn power_of_two_buckets_are_the_remainder() {
    let words: [&[u8]; 6] = [b"", b"#", b"#+Who", b"Dan+Smith", b"a longer string, past sixteen bytes", &[0xff; 70]];
    for n in [1i64, 2, 1024, 1 << 40, (1 << 62) + 1, 1000, i64::MAX] {
        let op = ToHashBucketFast::new(n).unwrap();
        for w in words {
            assert_eq!(op.bucket(w), (farmhash::fingerprint64(w) % n as u64) as i64, "{n} {w:?}");
        }
    }
}

#[test]
fn hash_needs_a_positive_bucket_count() {
    assert_eq!(ToHashBucketFast::new(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(ToHashBucketFast::new(-5).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let one_bucket = run(&ToHashBucketFast::new(1).unwrap(), &[ragged!["a", ""].unwrap()]);
    assert_value(&one_bucket, &RaggedTensor::dense(DenseTensor::vector(vec![0i64, 0])));
}

#[test]
fn elementwise_string_ops_refuse_numbers() {
    let ops: [&dyn Op; 4] =
        [&Length::new(CharUnit::Byte), &Lower::new(), &Upper::new(), &ToHashBucketFast::new(3).unwrap()];
    for op in ops {
        let err = op.infer(&[TensorType::ragged(DType::I64, 1)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TypeMismatch, "{}", op.name());
        assert_eq!(perform_error(op, &[ragged![[1.5]].unwrap()]), ErrorKind::TypeMismatch, "{}", op.name());
        assert_eq!(op.infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument, "{}", op.name());
    }
}

// --- strings.ngrams ------------------------------------------------------------------------

pub(crate) fn tokens() -> RaggedTensor {
    ragged![["aa", "bb", "cc", "dd"], ["ee", "ff"]].unwrap()
}

/// 40,000 rows of 0-6 tokens (empty strings among them, and one of 18 bytes), enough to be
/// split across threads: the column and its row splits.
fn token_rows() -> (StringTensor, Vec<i64>) {
    let words = ["", "a", "bc", "def", "ghij", "é", "klmnopqrstuvwxyz01"];
    let mut builder = StringBuilder::with_capacity(0, 0);
    let mut splits = vec![0i64];
    let mut seed = 7u64;
    for _ in 0..40_000 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = (seed >> 33) % 7;
        for k in 0..len {
            builder.extend(words[((seed >> (k * 3 + 8)) % words.len() as u64) as usize].as_bytes());
            builder.end_string();
        }
        splits.push(splits.last().unwrap() + len as i64);
    }
    let n = builder.len();
    (builder.finish(vec![n]).unwrap(), splits)
}

/// Every width, padding and separator combination of one width.
fn one_width_ngram_ops() -> Vec<(i64, Ngrams)> {
    let mut ops = Vec::new();
    for width in 1..=4 {
        for sep in ["", "<->"] {
            let plain = Ngrams::new(&[width]).unwrap().with_separator(sep);
            ops.push((width, plain.clone()));
            for padding in [None, Some(1), Some(5)] {
                ops.push((width, plain.clone().with_padding("#", "", padding).unwrap()));
                ops.push((width, plain.clone().with_padding("<s>", "</s>", padding).unwrap()));
            }
        }
    }
    ops
}

#[test]
fn one_width_ngrams_filled_in_parallel_match_the_ones_appended_one_by_one() {
    let (col, splits) = token_rows();
    let two_threads = ExecContext::new(Limits::untrusted()).with_threads(2);
    for (width, op) in one_width_ngram_ops() {
        let fast = op.ngrams_of_one_width(&two_threads, &col, &splits, width).unwrap();
        let slow = op.ngrams_one_by_one(&two_threads, &col, &splits).unwrap();
        assert_eq!(fast.1, slow.1, "{}: n-gram counts", op.name());
        assert_eq!(fast.0.offsets(), slow.0.offsets(), "{}: n-gram lengths", op.name());
        assert_eq!(fast.0.bytes(), slow.0.bytes(), "{}: n-gram bytes", op.name());
    }
}

#[test]
fn ngrams_padded_without_tokens_pad_empty_rows_too() {
    let op = Ngrams::new(&[2]).unwrap().with_separator("+").with_padding("<", ">", Some(1)).unwrap();
    let always = op.clone().with_padding_without_tokens();
    let empty = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
    // TensorFlow's rule: no tokens at all, no n-grams; the extension pads every row.
    assert_value(&run(&op, std::slice::from_ref(&empty)), &empty);
    assert_value(&run(&always, std::slice::from_ref(&empty)), &ragged![["<+>"], ["<+>"]].unwrap());
    // Dense rows of no tokens: one n-gram a row, and the inferred type says so.
    let dense = RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings::<&str>(&[], vec![2, 0]).unwrap()));
    let got = run(&always, &[dense]);
    assert_value(
        &got,
        &RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings(&["<+>", "<+>"], vec![2, 1]).unwrap())),
    );
    let tokens = ragged![["a", "b"], []].unwrap();
    assert_value(&run(&always, std::slice::from_ref(&tokens)), &run(&op, &[tokens]));
}

#[test]
fn hashed_ngrams_are_the_buckets_of_the_ngrams() {
    let (col, splits) = token_rows();
    let tokens = RaggedTensor::from_row_splits(DenseTensor::String(col), splits).unwrap();
    let hash = ToHashBucketFast::new(1000).unwrap();
    let two_threads = ExecContext::new(Limits::untrusted()).with_threads(2);
    for (_, op) in one_width_ngram_ops() {
        let fused = HashedNgrams::new(op.clone(), hash.clone()).unwrap();
        let want = run_in(&two_threads, &hash, &[run_in(&two_threads, &op, std::slice::from_ref(&tokens))]);
        assert_value(&run_in(&two_threads, &fused, std::slice::from_ref(&tokens)), &want);
    }
    // Dense tokens run the two ops; no tokens at all give no n-gram even when padded.
    let op = Ngrams::new(&[2]).unwrap().with_padding("#", "#", None).unwrap();
    let fused = HashedNgrams::new(op.clone(), hash.clone()).unwrap();
    let dense = ragged![["a", "b", "c"], ["d", "e", "f"]].unwrap();
    assert_value(&run(&fused, std::slice::from_ref(&dense)), &run(&hash, &[run(&op, &[dense])]));
    let empty = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
    assert_value(&run(&fused, std::slice::from_ref(&empty)), &run(&hash, &[run(&op, &[empty])]));
    assert!(HashedNgrams::new(Ngrams::new(&[1, 2]).unwrap(), hash.clone()).is_none(), "two widths");
    let preserve = Ngrams::new(&[2]).unwrap().with_preserve_short_sequences(true);
    assert!(HashedNgrams::new(preserve, hash).is_none(), "short sequences preserved");
}

#[test]
fn ngrams_unpadded() {
    let op = Ngrams::new(&[3]).unwrap().with_separator("|");
    let out = run(&op, &[tokens()]);
    assert_value(&out, &strings(lit(vec![vec!["aa|bb|cc", "bb|cc|dd"], vec![]]), 1));
    let dense = run(&Ngrams::new(&[2]).unwrap(), &[ragged!["A", "B", "C", "D"].unwrap()]);
    assert_value(&dense, &ragged!["A B", "B C", "C D"].unwrap());
}

#[test]
fn ngrams_of_several_widths_follow_each_other() {
    let op = Ngrams::new(&[1, 2, 3]).unwrap().with_separator("|");
    let out = run(&op, &[tokens()]);
    let want =
        ragged![["aa", "bb", "cc", "dd", "aa|bb", "bb|cc", "cc|dd", "aa|bb|cc", "bb|cc|dd"], ["ee", "ff", "ee|ff"]]
            .unwrap();
    assert_value(&out, &want);
}

#[test]
fn ngrams_padded_to_width_minus_one() {
    let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_padding("LP", "RP", None).unwrap();
    let out = run(&op, &[tokens()]);
    let want = ragged![
        ["LP|LP|aa", "LP|aa|bb", "aa|bb|cc", "bb|cc|dd", "cc|dd|RP", "dd|RP|RP"],
        ["LP|LP|ee", "LP|ee|ff", "ee|ff|RP", "ff|RP|RP"]
    ]
    .unwrap();
    assert_value(&out, &want);
    let op = Ngrams::new(&[2]).unwrap().with_separator("|").with_padding("LP", "RP", None).unwrap();
    let want = ragged![["LP|aa", "aa|bb", "bb|cc", "cc|dd", "dd|RP"], ["LP|ee", "ee|ff", "ff|RP"]].unwrap();
    assert_value(&run(&op, &[tokens()]), &want);
}

#[test]
fn ngrams_with_a_fixed_padding_width() {
    let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_padding("LP", "LP", Some(1)).unwrap();
    let want = ragged![["LP|aa|bb", "aa|bb|cc", "bb|cc|dd", "cc|dd|LP"], ["LP|ee|ff", "ee|ff|LP"]].unwrap();
    assert_value(&run(&op, &[tokens()]), &want);
}

#[test]
fn ngrams_of_an_empty_row_are_only_padding() {
    let x = strings(lit(vec![vec!["a"], vec![]]), 1);
    let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_padding("L", "R", None).unwrap();
    let want = ragged![["L|L|a", "L|a|R", "a|R|R"], ["L|L|R", "L|R|R"]].unwrap();
    assert_value(&run(&op, &[x]), &want);
    // TensorFlow's kernel gives nothing at all when there is no token in the whole input.
    let empty = strings(lit(vec![Vec::<&str>::new(), vec![]]), 1);
    assert_value(&run(&op, std::slice::from_ref(&empty)), &empty);
}

#[test]
fn ngrams_preserve_short_sequences() {
    let x = ragged![["aa", "bb", "cc", "dd"], ["ee"]].unwrap();
    let op = Ngrams::new(&[3]).unwrap().with_separator("|").with_preserve_short_sequences(true);
    let want = ragged![["aa|bb|cc", "bb|cc|dd"], ["ee"]].unwrap();
    assert_value(&run(&op, std::slice::from_ref(&x)), &want);
    let op = op.with_padding("L", "R", Some(1)).unwrap();
    let x = strings(lit(vec![vec!["ee"], vec![]]), 1);
    // One n-gram of the padded short row; an empty row stays empty.
    assert_value(&run(&op, &[x]), &strings(lit(vec![vec!["L|ee|R"], vec![]]), 1));
}

#[test]
fn ngrams_of_dense_tokens_are_dense() {
    let x = RaggedTensor::from_literal_typed(
        &lit(vec![vec!["a", "b", "c", "d"], vec!["e", "f", "g", "h"]]),
        None,
        Some(0),
        None,
    )
    .unwrap();
    let out = run(&Ngrams::new(&[3]).unwrap().with_separator("|"), &[x]);
    let want = RaggedTensor::from_literal_typed(
        &lit(vec![vec!["a|b|c", "b|c|d"], vec!["e|f|g", "f|g|h"]]),
        None,
        Some(0),
        None,
    )
    .unwrap();
    assert_value(&out, &want);
}

#[test]
fn ngrams_keep_outer_partitions() {
    let x = ragged![[["a", "b", "c"]], [], [["d"], ["e", "f"]]].unwrap();
    let out = run(&Ngrams::new(&[2]).unwrap(), std::slice::from_ref(&x));
    assert_value(&out, &strings(lit(vec![vec![vec!["a b", "b c"]], vec![], vec![vec![], vec!["e f"]]]), 2));
    assert!(out.partitions()[0].ptr_eq(&x.partitions()[0]), "the outer partition is shared");
}

#[test]
fn ngrams_refuse_bad_arguments() {
    assert_eq!(Ngrams::new(&[0]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Ngrams::new(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let padded = Ngrams::new(&[2]).unwrap().with_padding("", "", Some(0));
    assert_eq!(padded.unwrap_err().kind(), ErrorKind::InvalidArgument);
    let op = Ngrams::new(&[2]).unwrap();
    assert_eq!(op.infer(&[TensorType::scalar(DType::String)]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    assert_eq!(op.infer(&[TensorType::ragged(DType::I32, 1)]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    let with_inner = TensorType::ragged(DType::String, 1).with_inner(&[Some(2)]);
    assert_eq!(op.infer(&[with_inner]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

// --- lookup --------------------------------------------------------------------------------

pub(crate) fn attrs(op: &str, pairs: &[(&str, Attr)]) -> Attrs {
    Attrs::new(op, pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

#[test]
fn lookup_builds_ops_from_attributes() {
    let op = lookup("strings.split", &attrs("strings.split", &[("sep", Attr::Str(" ".into()))])).unwrap().unwrap();
    assert_eq!(op.name(), "StringsSplit{sep=\" \", maxsplit=-1}");
    let op = lookup("strings.substr", &attrs("strings.substr", &[("pos", Attr::Int(1)), ("len", Attr::Int(3))]));
    assert_eq!(op.unwrap().unwrap().name(), "StringsSubstr{pos=1, len=3, unit=BYTE}");
    let ngrams = attrs(
        "strings.ngrams",
        &[
            ("ngram_width", Attr::List(vec![Attr::Int(2), Attr::Int(3)])),
            ("pad_values", Attr::List(vec![Attr::Str("<s>".into()), Attr::Str("</s>".into())])),
            ("padding_width", Attr::Int(1)),
        ],
    );
    let op = lookup("strings.ngrams", &ngrams).unwrap().unwrap();
    let out = op.perform(&ExecContext::new(Limits::untrusted()), &[ragged![["a", "b"]].unwrap()]).unwrap();
    let want = ragged![["<s> a", "a b", "b </s>", "<s> a b", "a b </s>"]].unwrap();
    assert_value(&out[0], &want);
    assert!(lookup("strings.nope", &attrs("strings.nope", &[])).is_none());
}

#[test]
fn to_number_follows_strtod_and_refuses_the_rest() {
    for (text, want) in
        [("0x1.8p1", 3.0), ("-0X10", -16.0), ("  .5\t", 0.5), ("INFINITY", f64::INFINITY), ("1e400", f64::INFINITY)]
    {
        assert_eq!(trimmed(text.as_bytes()).and_then(parse_float), Some(want), "{text:?}");
    }
    for text in ["", "+-1", "0x", "0xg", "1.5abc", "1 2", "0x1p"] {
        assert_eq!(trimmed(text.as_bytes()).and_then(parse_float), None, "{text:?}");
    }
    let op = ToNumber::new(DType::I32).unwrap();
    let e = op.perform(&ExecContext::new(Limits::untrusted()), &[ragged![["1", "2147483648"]].unwrap()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert!(e.to_string().contains("2147483648") && e.to_string().contains("[0, 1]"), "{e}");
    assert_eq!(ToNumber::new(DType::Bool).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn unicode_encode_errors_and_as_string_floats() {
    let codes =
        RaggedTensor::from_row_splits(DenseTensor::vector(vec![104i32, 0xD800, 105, -1]), vec![0, 2, 4]).unwrap();
    let strict = UnicodeEncode { errors: UnicodeErrors::Strict, ..UnicodeEncode::default() };
    let e = strict.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&codes)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert!(e.to_string().contains("row 0") && e.to_string().contains("55296"), "{e}");
    let ignore = UnicodeEncode { errors: UnicodeErrors::Ignore, ..UnicodeEncode::default() };
    let y = ignore.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&codes)).unwrap().remove(0);
    let texts: Vec<&[u8]> = y.flat_values().as_strings().unwrap().iter().collect();
    assert_eq!(texts, [&b"h"[..], b"i"]);
    let y = UnicodeEncode::default().perform(&ExecContext::new(Limits::untrusted()), &[codes]).unwrap().remove(0);
    assert_eq!(y.flat_values().as_strings().unwrap().get(1), "i\u{FFFD}".as_bytes());
    // C's %f: six decimals, signed zero and NaN keep their sign.
    let mut text = String::new();
    for (v, want) in
        [(-0.0, "-0.000000"), (f64::NAN, "nan"), (-f64::NAN, "-nan"), (1e20f32 as f64, "100000002004087734272.000000")]
    {
        text.clear();
        write_c_float(&mut text, v);
        assert_eq!(text, want);
    }
}

#[test]
fn lookup_refuses_bad_attributes() {
    let unknown = attrs("strings.length", &[("units", Attr::Str("BYTE".into()))]);
    assert_eq!(lookup("strings.length", &unknown).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
    let no_buckets = attrs("strings.to_hash_bucket_fast", &[]);
    assert!(lookup("strings.to_hash_bucket_fast", &no_buckets).unwrap().is_err());
    let width_without_pad = attrs("strings.ngrams", &[("ngram_width", Attr::Int(2)), ("padding_width", Attr::Int(1))]);
    assert_eq!(lookup("strings.ngrams", &width_without_pad).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
}
