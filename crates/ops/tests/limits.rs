//! Regression tests for the resource findings of the reliability issue: every op whose result size
//! comes from data or attributes refuses (with a typed error, quickly, without panicking) what the
//! limits of `ragtime_core::limits` do not allow, and still computes small results.

use ragtime_core::limits::Limits;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ragtime_core::{DenseTensor, ErrorKind, ExecContext, RaggedTensor, Result, RowPartition, StringTensor, TensorType};
use ragtime_graph::{Attr, Attrs};
use ragtime_ops::op_from_name;

/// Builds op `name` from `attrs`, infers its output types and runs it.
fn run(name: &str, attrs: &[(&str, Attr)], inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
    let map: BTreeMap<String, Attr> = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let op = op_from_name(name, &Attrs::new(name, map))?;
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    op.infer(&types)?;
    op.perform(&ExecContext::new(Limits::untrusted()), inputs)
}

/// `run` must return an error of `kind`, quickly, without panicking, leaving the inputs unchanged.
fn refused(kind: ErrorKind, name: &str, attrs: &[(&str, Attr)], inputs: &[RaggedTensor]) {
    let before: Vec<String> = inputs.iter().map(ToString::to_string).collect();
    let start = Instant::now();
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(name, attrs, inputs)))
        .unwrap_or_else(|_| panic!("{name} panicked"));
    assert!(start.elapsed() < Duration::from_secs(5), "{name} took {:?}", start.elapsed());
    let e = got.expect_err(name);
    assert_eq!(e.kind(), kind, "{name}: {e}");
    let after: Vec<String> = inputs.iter().map(ToString::to_string).collect();
    assert_eq!(before, after, "{name} changed its inputs");
}

fn dense<T: ragtime_core::Element>(shape: Vec<usize>, data: Vec<T>) -> RaggedTensor {
    RaggedTensor::dense(DenseTensor::from_vec(shape, data).unwrap())
}

fn strings(items: &[&[u8]], shape: Vec<usize>) -> RaggedTensor {
    RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings(items, shape).unwrap()))
}

fn ints(v: &[i64]) -> Attr {
    Attr::List(v.iter().map(|&i| Attr::Int(i)).collect())
}

#[test]
fn reductions_over_empty_axes_check_the_result_size() {
    for huge in [1usize << 62, 1 << 40] {
        let x = dense::<f32>(vec![0, huge], vec![]);
        refused(ErrorKind::ResourceExhausted, "reduce_sum", &[("axis", Attr::Int(0))], std::slice::from_ref(&x));
        refused(ErrorKind::ResourceExhausted, "reduce_max", &[("axis", ints(&[0]))], &[x]);
        // `[[]]` with inner shape [huge]: one empty ragged row.
        let values = DenseTensor::from_vec(vec![0, huge], Vec::<f32>::new()).unwrap();
        let r = RaggedTensor::new(values, vec![RowPartition::from_row_splits(vec![0, 0]).unwrap()]).unwrap();
        refused(ErrorKind::ResourceExhausted, "reduce_sum", &[("axis", Attr::Int(0))], &[r]);
        let s =
            RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings::<&[u8]>(&[], vec![0, huge]).unwrap()));
        refused(ErrorKind::ResourceExhausted, "strings.reduce_join", &[("axis", Attr::Int(0))], &[s]);
    }
    // Folding the huge dim away is fine: the result is empty.
    let x = dense::<f32>(vec![0, 1 << 40], vec![]);
    let out = run("reduce_sum", &[("axis", Attr::Int(1))], &[x]).unwrap();
    assert_eq!(out[0].flat_values().shape(), &[0]);
}

#[test]
fn ngrams_bound_their_output_before_writing_it() {
    let tokens = strings(&[b"a", b"b"], vec![2]);
    let pad = ("pad_values", Attr::List(vec![Attr::Str("<".into()), Attr::Str(">".into())]));
    for width in [i64::from(i32::MAX), 100_000] {
        refused(
            ErrorKind::ResourceExhausted,
            "strings.ngrams",
            &[("ngram_width", Attr::Int(width)), pad.clone()],
            std::slice::from_ref(&tokens),
        );
    }
    // A row too short for any n-gram, preserved with a long padding, is bounded too: 2 tokens,
    // width 2^31 - 1 and 2^30 - 2 pads each side give no n-gram, so one of 2^31 - 2 items.
    let short = [
        ("ngram_width", Attr::Int(i64::from(i32::MAX))),
        pad.clone(),
        ("padding_width", Attr::Int((1 << 30) - 2)),
        ("preserve_short_sequences", Attr::Bool(true)),
    ];
    refused(ErrorKind::ResourceExhausted, "strings.ngrams", &short, std::slice::from_ref(&tokens));
    let out = run("strings.ngrams", &[("ngram_width", Attr::Int(2)), pad], &[tokens]).unwrap();
    let got: Vec<&[u8]> = out[0].flat_values().as_strings().unwrap().iter().collect();
    assert_eq!(got, [&b"< a"[..], b"a b", b"b >"]);
}

#[test]
fn sizes_count_string_bytes() {
    let kb = vec![b'x'; 1024];
    let one = strings(&[&kb], vec![1]);
    refused(ErrorKind::ResourceExhausted, "tile", &[("multiples", ints(&[1 << 21]))], std::slice::from_ref(&one));
    let scalar = strings(&[&kb], vec![]);
    refused(ErrorKind::ResourceExhausted, "fill", &[], &[dense(vec![1], vec![1i64 << 21]), scalar.clone()]);
    refused(ErrorKind::ResourceExhausted, "gather", &[], &[one.clone(), dense(vec![1 << 21], vec![0i32; 1 << 21])]);
    let many_empty = strings(&vec![&b""[..]; 1 << 21], vec![1 << 21]);
    refused(ErrorKind::ResourceExhausted, "strings.join", &[], &[scalar, many_empty]);
    // The same ops on small inputs still work.
    let out = run("tile", &[("multiples", ints(&[3]))], &[one]).unwrap();
    assert_eq!(out[0].flat_values().len(), 3);
}

#[test]
fn index_vectors_are_counted_so_results_under_the_element_cap_do_not_abort() {
    // 2^31 int8 elements: under the element cap, but 2 GiB of data and 32 GiB of indices.
    let x = dense(vec![1], vec![1i8]);
    refused(ErrorKind::ResourceExhausted, "tile", &[("multiples", ints(&[1 << 31]))], std::slice::from_ref(&x));
    refused(ErrorKind::ResourceExhausted, "fill", &[], &[dense(vec![1], vec![1i64 << 31]), dense(vec![], vec![1i8])]);
    let range = || dense(vec![1], vec![1i64 << 31]);
    refused(
        ErrorKind::ResourceExhausted,
        "ragged.range",
        &[],
        &[dense(vec![1], vec![0i64]), range(), dense(vec![1], vec![1i64])],
    );
    refused(
        ErrorKind::ResourceExhausted,
        "from_value_rowids",
        &[("nrows", Attr::Int(1 << 31))],
        &[x.clone(), dense(vec![1], vec![0i64])],
    );
    let ragged = RaggedTensor::from_row_splits(DenseTensor::vector(vec![1i8]), vec![0, 1]).unwrap();
    refused(ErrorKind::ResourceExhausted, "to_tensor", &[("shape", ints(&[1 << 16, 1 << 15]))], &[ragged]);
}

#[test]
fn keys_and_axis_lists_are_bounded() {
    let x = dense(vec![2], vec![1.0f32, 2.0]);
    let key = vec!["None"; 10_000].join(", ");
    refused(ErrorKind::InvalidArgument, "getitem", &[("key", Attr::Str(key))], std::slice::from_ref(&x));
    let key = ragtime_ops::index::Key(vec![ragtime_ops::index::KeyItem::NewAxis; 10_000]);
    let op = ragtime_ops::index::GetItem::new(key);
    let e =
        ragtime_graph::Op::perform(&op, &ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let axes: Vec<i64> = vec![0; 50_000];
    refused(ErrorKind::InvalidArgument, "reduce_sum", &[("axis", ints(&axes))], std::slice::from_ref(&x));
    let op = ragtime_ops::reduce::Reduce::with_axes(ragtime_ops::reduce::ReduceKind::Sum, vec![0i64; 50_000], false);
    let start = Instant::now();
    let e = ragtime_graph::Op::perform(&op, &ExecContext::new(Limits::untrusted()), &[x]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
}

#[test]
fn fill_refuses_a_rank_past_the_limit() {
    let dims = dense(vec![300], vec![1i64; 300]);
    refused(ErrorKind::InvalidArgument, "fill", &[], &[dims, dense(vec![], vec![0.0f64])]);
}
