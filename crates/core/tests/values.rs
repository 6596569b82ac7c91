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

#[test]
fn lod_and_jagged_views_are_the_same_partitions() {
    // PaddlePaddle: lod [[0, 2, 3], [0, 2, 4, 7]] == recursive sequence lengths [[2, 1], [2, 2, 3]].
    let flat = DenseTensor::vector((1..=7).collect::<Vec<i32>>());
    let by_lod = RaggedTensor::from_lod(flat.clone(), &[vec![0, 2, 3], vec![0, 2, 4, 7]]).unwrap();
    let by_len = RaggedTensor::from_recursive_sequence_lengths(flat, &[vec![2, 1], vec![2, 2, 3]]).unwrap();
    assert!(by_lod.equals(&by_len));
    assert_eq!(by_lod.lod(), vec![vec![0, 2, 3], vec![0, 2, 4, 7]]);
    assert_eq!(by_lod.recursive_sequence_lengths(), vec![vec![2, 1], vec![2, 2, 3]]);
    assert_eq!(by_lod.to_string(), "<Ragged int32 [[[1, 2], [3, 4]], [[5, 6, 7]]]>");
    let bad = RaggedTensor::from_lod(DenseTensor::vector(vec![1i32, 2]), &[vec![0, 3]]).unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidRowPartition);
    assert!(bad.to_string().contains("from_lod"), "{bad}");

    // torch jagged: values [sum(len), D] + offsets [B + 1].
    let values = DenseTensor::from_vec(vec![3, 2], vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let nt = RaggedTensor::from_jagged(values, vec![0, 2, 2, 3]).unwrap();
    assert_eq!(nt.offsets().unwrap(), &[0, 2, 2, 3]);
    assert_eq!(nt.values().unwrap().flat_values().shape(), &[3, 2]);
    assert_eq!(nt.shape(), vec![Some(3), None, Some(2)]);
    assert_eq!(nt.bounding_shape(), vec![3, 2, 2]);
}

#[test]
fn accessors_of_a_rank3_ragged_tensor() {
    let rt = ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap();
    assert_eq!(rt.ragged_rank(), 2);
    assert_eq!(rt.nrows(), 4);
    assert_eq!(rt.row_lengths(1).unwrap().to_string(), "<Tensor int64 shape=[4] [2, 3, 1, 2]>");
    assert_eq!(rt.row_lengths(2).unwrap().to_string(), "<Ragged int64 [[3, 1], [1, 0, 1], [1], [2, 1]]>");
    assert_eq!(rt.bounding_shape(), vec![4, 3, 3]);
    assert_eq!(rt.value_rowids().unwrap(), &[0, 0, 1, 1, 1, 2, 3, 3]);
    assert_eq!(rt.row_lengths(3).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn uniform_row_length_and_value_rowids() {
    let rt = ragged![[10, 11, 12], [13, 14], [15, 16, 17, 18], [19]].unwrap();
    let u = RaggedTensor::from_uniform_row_length(rt, 2).unwrap();
    assert_eq!(u.to_string(), "<Ragged int32 [[[10, 11, 12], [13, 14]], [[15, 16, 17, 18], [19]]]>");
    assert_eq!(u.shape(), vec![Some(2), Some(2), None]);
    let odd = RaggedTensor::from_uniform_row_length(DenseTensor::vector(vec![1i32, 2, 3]), 2).unwrap_err();
    assert_eq!(odd.kind(), ErrorKind::InvalidRowPartition);
}

#[test]
fn types_check_values() {
    use ragtime_core::TensorType;
    let rt = ragged![[1.0, 2.0], [3.0]].unwrap();
    let ty = TensorType::ragged(DType::F32, 1);
    assert_eq!(ty.to_string(), "float32[?, *]");
    assert!(ty.check(&rt, "x").is_ok());
    assert_eq!(TensorType::ragged(DType::F64, 1).check(&rt, "x").unwrap_err().kind(), ErrorKind::TypeMismatch);
    assert_eq!(TensorType::ragged(DType::F32, 2).check(&rt, "x").unwrap_err().kind(), ErrorKind::TypeMismatch);
    let fixed = TensorType::dense(DType::F32, &[Some(3)]);
    let v: RaggedTensor = DenseTensor::vector(vec![1.0f32, 2.0]).into();
    assert_eq!(fixed.check(&v, "x").unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    assert_eq!(TensorType::of(&rt).to_string(), "float32[2, *]");
}

#[test]
fn strings_are_bytes_plus_offsets() {
    let rt = ragged![["héllo", ""], ["世界"]].unwrap();
    let col = rt.flat_strings().unwrap();
    assert_eq!(col.offsets().as_ref(), &[0, 6, 6, 12]);
    assert_eq!(col.get(2), "世界".as_bytes());
    let taken = rt.flat_values().take_rows(&[2, 0]).unwrap();
    assert_eq!(taken.as_strings().unwrap().iter().collect::<Vec<_>>(), vec!["世界".as_bytes(), "héllo".as_bytes()]);
}

#[test]
fn cast_follows_c_rules() {
    let v: RaggedTensor = DenseTensor::vector(vec![-1.7f32, 2.5, 300.0]).into();
    let i = v.cast(DType::I32).unwrap();
    assert_eq!(i.flat_slice::<i32>().unwrap(), &[-1, 2, 300]);
    let u8s = i.cast(DType::U8).unwrap();
    assert_eq!(u8s.flat_slice::<u8>().unwrap(), &[255, 2, 44]);
    assert_eq!(v.cast(DType::String).unwrap_err().kind(), ErrorKind::TypeMismatch);
}

#[test]
fn huge_row_counts_are_refused_before_allocating() {
    let v = DenseTensor::vector(vec![1i32]);
    let err = RaggedTensor::from_value_rowids(v.clone(), &[1 << 50], None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let err = RaggedTensor::from_value_rowids(v, &[0], Some(1 << 40)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let err = ragtime_core::RowPartition::from_uniform_row_length(1 << 40, 1 << 40).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}

#[test]
fn hand_built_types_are_validated() {
    use ragtime_core::{Dim, TensorType};
    let broken = TensorType::new(DType::I32, 2, vec![Dim::Unknown, Dim::Ragged]);
    assert_eq!(broken.unwrap_err().kind(), ErrorKind::InvalidValue);
    let t = TensorType::new(DType::I32, 1, vec![Dim::Unknown, Dim::Ragged, Dim::Known(2)]).unwrap();
    assert_eq!(TensorType::from_dims(DType::I32, t.dims().to_vec()).unwrap(), t);
}

#[test]
fn admits_agrees_with_accepts_of_the_values_type() {
    use ragtime_core::{DType, Dim, TensorType};
    let values: Vec<RaggedTensor> = vec![
        ragtime_core::ragged![[1.0f32, 2.0], [], [3.0]].unwrap(),
        ragtime_core::ragged![[[1i32, 2], [3, 4]], [[5, 6]]].unwrap(),
        ragtime_core::DenseTensor::from_vec(vec![2, 3], vec![0i64; 6]).unwrap().into(),
        ragtime_core::DenseTensor::scalar(1.5f64).into(),
        ragtime_core::ragged![["a"], ["b", "c"]].unwrap(),
    ];
    let dims = [Dim::Known(2), Dim::Known(3), Dim::Unknown, Dim::Ragged, Dim::Known(1)];
    let mut checked = 0;
    for v in &values {
        let exact = TensorType::of(v);
        let mut types = vec![exact.clone()];
        // Every valid variation of one dim, of the dtype and of the ragged rank.
        for i in 0..exact.rank() {
            types.extend(dims.iter().filter_map(|&d| exact.clone().with_dim(i, d).ok()));
        }
        types.push(exact.clone().with_dtype(DType::U8));
        if exact.rank() > 0 {
            let mut deeper = exact.dims().to_vec();
            deeper.insert(1, Dim::Ragged);
            types.push(TensorType::from_dims(exact.dtype(), deeper).unwrap());
        }
        for t in types {
            assert_eq!(t.admits(v), t.accepts(&TensorType::of(v)), "{t} and the value {v}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} types were compared");
}
