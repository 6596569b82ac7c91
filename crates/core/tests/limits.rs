//! Regression tests for the resource limits of `ragtime_core::limits`: claimed ranks, sizes in
//! elements and bytes, partition bounds, checked shape products and bounded printing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ragtime_core::limits::{Limits, MAX_RANK};
use ragtime_core::{
    DType, DenseTensor, Dim, ErrorKind, ExecContext, Literal, RaggedTensor, Result, RowPartition, StringTensor,
    TensorType,
};

/// Runs `f` and checks it returns an error of `kind` quickly and without panicking.
fn refused<T: std::fmt::Debug>(kind: ErrorKind, f: impl FnOnce() -> Result<T>) {
    let start = Instant::now();
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect("must not panic");
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
    let e = got.expect_err("must be refused");
    assert_eq!(e.kind(), kind, "{e}");
}

#[test]
fn an_empty_literal_cannot_claim_a_huge_ragged_rank() {
    let empty = Literal::List(vec![]);
    for rr in [1usize << 63, 1 << 40, 100_000_000, MAX_RANK] {
        refused(ErrorKind::InvalidArgument, || {
            RaggedTensor::from_literal_typed(&empty, Some(DType::I32), Some(rr), None)
        });
    }
    let ok = RaggedTensor::from_literal_typed(&empty, Some(DType::I32), Some(MAX_RANK - 1), None).unwrap();
    assert_eq!(ok.rank(), MAX_RANK, "the limit itself is allowed");
    assert!(ok.to_string().starts_with("<Ragged int32 []"), "printing the deepest tensor works");
    let hint = vec![1usize; MAX_RANK + 1];
    refused(ErrorKind::InvalidArgument, || RaggedTensor::from_literal_typed(&empty, None, Some(1), Some(&hint)));
}

#[test]
fn partitions_cannot_describe_more_values_than_the_limits() {
    refused(ErrorKind::InvalidRowPartition, || RowPartition::from_row_splits(vec![0, i64::MAX]));
    refused(ErrorKind::InvalidRowPartition, || RowPartition::from_row_lengths(&[1 << 40]));
    refused(ErrorKind::InvalidRowPartition, || RowPartition::from_row_lengths(&[i64::MAX, 1]));
    refused(ErrorKind::InvalidRowPartition, || RowPartition::from_uniform_row_length(1 << 20, 1 << 20));
    refused(ErrorKind::InvalidArgument, || RowPartition::from_uniform_row_length(1, 1 << 40));
    refused(ErrorKind::InvalidArgument, || RowPartition::from_value_rowids(&[1 << 40], None));
    let p = RowPartition::from_row_splits(vec![0, 3, 3, 5]).unwrap();
    assert_eq!(p.value_rowids(), &[0, 0, 0, 2, 2], "small partitions are unaffected");
}

#[test]
fn string_shapes_multiply_checked() {
    let bytes: Arc<[u8]> = Arc::from(&b""[..]);
    let offsets: Arc<[i64]> = Arc::from(&[0i64][..]);
    refused(ErrorKind::InvalidValue, || {
        StringTensor::from_parts(bytes.clone(), offsets.clone(), vec![1 << 32, 1 << 32])
    });
    let s = StringTensor::from_strings(&["a", "b"], vec![2]).unwrap();
    refused(ErrorKind::IncompatibleShapes, || s.reshaped(vec![1 << 33, 1 << 31, 4]));
}

#[test]
fn sizes_count_string_bytes_as_well_as_elements() {
    let untrusted = ExecContext::new(Limits::untrusted());
    let kilobyte = DenseTensor::String(StringTensor::from_strings(&[vec![b'x'; 1024]], vec![]).unwrap());
    // 2^21 strings are few elements, but 2 GiB of bytes.
    refused(ErrorKind::ResourceExhausted, || DenseTensor::full_in(&untrusted, vec![1 << 21], &kilobyte));
    let row = DenseTensor::String(StringTensor::from_strings(&[vec![b'x'; 1024]], vec![1]).unwrap());
    let rows = vec![0usize; 1 << 21];
    refused(ErrorKind::ResourceExhausted, || {
        DenseTensor::gather_row_runs(&untrusted, "take_rows", &[&row], rows.iter().map(|&r| (0, r..r + 1)))
    });
    assert_eq!(row.take_rows(&[0, 0]).unwrap().len(), 2, "small repeats are fine");
    // Numeric results are counted in bytes too: 2^28 float64 take 2 GiB.
    refused(ErrorKind::ResourceExhausted, || {
        DenseTensor::full_in(&untrusted, vec![1 << 28], &DenseTensor::scalar(1.0f64))
    });
    const { assert!((1usize << 28) * 8 > Limits::untrusted().buffer_bytes) };
    // Outside a call, sizes are bounded by the machine: 2^50 bytes are more than any has.
    refused(ErrorKind::ResourceExhausted, || DenseTensor::full(vec![1 << 47], &DenseTensor::scalar(1.0f64)));
}

#[test]
fn ranks_are_limited_everywhere() {
    let values = DenseTensor::from_vec(vec![0; 2], Vec::<i32>::new()).unwrap();
    let parts: Vec<RowPartition> = (0..MAX_RANK).map(|_| RowPartition::from_row_splits(vec![0]).unwrap()).collect();
    refused(ErrorKind::InvalidArgument, || RaggedTensor::new(values.clone(), parts));
    refused(ErrorKind::InvalidArgument, || TensorType::new(DType::F32, 0, vec![Dim::Known(1); MAX_RANK + 1]));
    refused(ErrorKind::InvalidArgument, || TensorType::from_dims(DType::F32, vec![Dim::Unknown; MAX_RANK + 1]));
    let at_limit = TensorType::dense(DType::F32, &[Some(1); MAX_RANK]);
    refused(ErrorKind::InvalidArgument, || at_limit.clone().with_inner_dims(&[Dim::Unknown]));
    // The infallible constructors cannot refuse; the type is refused where it enters a graph.
    refused(ErrorKind::InvalidArgument, || TensorType::ragged(DType::F32, MAX_RANK).validate());
    assert!(at_limit.validate().is_ok());
}

#[test]
fn types_whose_dims_do_not_fit_their_ragged_rank_cannot_be_built() {
    // More ragged dims claimed than there are dims (inner_dims used to index past the end).
    refused(ErrorKind::InvalidValue, || TensorType::new(DType::F32, 5, vec![Dim::Unknown]));
    // A ragged outer dim, a ragged dim after a uniform inner dim, a dense type with a ragged dim.
    refused(ErrorKind::InvalidValue, || TensorType::from_dims(DType::F32, vec![Dim::Ragged, Dim::Ragged]));
    refused(ErrorKind::InvalidValue, || {
        TensorType::from_dims(DType::F32, vec![Dim::Unknown, Dim::Known(2), Dim::Ragged])
    });
    refused(ErrorKind::InvalidValue, || TensorType::new(DType::F32, 0, vec![Dim::Unknown, Dim::Ragged]));
    // Builders keep the invariant.
    let t = TensorType::ragged(DType::F32, 1);
    refused(ErrorKind::InvalidValue, || t.clone().with_inner_dims(&[Dim::Ragged]));
    refused(ErrorKind::InvalidValue, || t.clone().with_dim(0, Dim::Ragged));
    refused(ErrorKind::InvalidValue, || t.clone().with_dim(1, Dim::Known(3)));
    refused(ErrorKind::InvalidValue, || t.clone().with_dim(2, Dim::Known(3)));
    let built = t.with_dim(0, Dim::Known(4)).unwrap().with_inner_dims(&[Dim::Known(2)]).unwrap();
    assert_eq!(built.to_string(), "float32[4, *, 2]");
    assert_eq!((built.ragged_rank(), built.inner_dims()), (1, &[Dim::Known(2)][..]));
}

#[test]
fn printing_is_bounded_and_iterative() {
    // 2^40 empty rows: printing elides after a bounded number of items instead of building
    // an index per row.
    let t = RaggedTensor::dense(DenseTensor::full(vec![1 << 40, 0], &DenseTensor::scalar(1u8)).unwrap());
    let start = Instant::now();
    let text = t.to_string();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(text.ends_with("[], [], ..., [], [], []]>"), "{}", &text[text.len() - 20..]);
    assert!(text.len() < 1_000_000);
    let d = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 0, 3], Vec::<f32>::new()).unwrap());
    assert_eq!(d.to_string(), "<Tensor float32 shape=[2, 0, 3] [[], []]>");
}
