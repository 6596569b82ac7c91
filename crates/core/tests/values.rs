//! Values: literals, partitions, display, encodings.

use ragtime_core::{ragged, DType, DenseTensor, ErrorKind, RaggedTensor};

#[test]
fn literal_roundtrip_and_display() {
    let rt = ragged![[3, 1, 4, 1], [], [5, 9, 2]].unwrap();
    assert_eq!(rt.dtype(), DType::I32);
    assert_eq!(rt.ragged_rank(), 1);
    assert_eq!(rt.row_splits().unwrap(), &[0, 4, 4, 7]);
    assert_eq!(rt.to_string(), "<Ragged int32 [[3, 1, 4, 1], [], [5, 9, 2]]>");
    assert!(RaggedTensor::from_literal(&rt.to_literal()).unwrap().equals(&rt));
    let s = ragged![["a", "bc"], ["d"]].unwrap();
    assert_eq!(s.to_string(), "<Ragged string [[\"a\", \"bc\"], [\"d\"]]>");
    let f = ragged![[1.5, -2.0], []].unwrap();
    assert_eq!(f.to_string(), "<Ragged float32 [[1.5, -2.0], []]>");
    let d = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4]).unwrap());
    assert_eq!(d.to_string(), "<Tensor int64 shape=[2, 2] [[1, 2], [3, 4]]>");
    let r3 = ragged![[[1, 2], [3]], [[4]]].unwrap();
    assert_eq!(r3.ragged_rank(), 2);
    assert_eq!(r3.to_string(), "<Ragged int32 [[[1, 2], [3]], [[4]]]>");
}

#[test]
fn literal_errors() {
    assert_eq!(ragged![[1, 2], ["a"]].unwrap_err().kind(), ErrorKind::InvalidValue);
    assert_eq!(ragged![[1, [2]], [3]].unwrap_err().kind(), ErrorKind::InvalidValue);
}

#[test]
fn partition_validation() {
    let v = DenseTensor::vector(vec![1i32, 2, 3]);
    let err = |r: ragtime_core::Result<RaggedTensor>| r.unwrap_err().kind();
    assert_eq!(err(RaggedTensor::from_row_splits(v.clone(), vec![0, 2, 1, 3])), ErrorKind::InvalidRowPartition);
    assert_eq!(err(RaggedTensor::from_row_splits(v.clone(), vec![1, 2, 3])), ErrorKind::InvalidRowPartition);
    assert_eq!(err(RaggedTensor::from_row_splits(v.clone(), vec![0, 2, 5])), ErrorKind::InvalidRowPartition);
    assert_eq!(err(RaggedTensor::from_row_lengths(v.clone(), &[1, 1])), ErrorKind::InvalidRowPartition);
    assert_eq!(err(RaggedTensor::from_row_lengths(v.clone(), &[4, -1])), ErrorKind::InvalidRowPartition);
    assert_eq!(err(RaggedTensor::from_value_rowids(v.clone(), &[1, 0, 2], None)), ErrorKind::InvalidRowPartition);
    let ok = RaggedTensor::from_value_rowids(v, &[0, 0, 2], Some(4)).unwrap();
    assert_eq!(ok.row_splits().unwrap(), &[0, 2, 2, 3, 3]);
}
