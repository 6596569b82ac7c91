//! Property tests: RaggedTensor → Arrow → RaggedTensor is exact (every dtype, ragged rank 0-3,
//! inner dims, uniform partitions, empty rows, zero rows, every offset width and string type),
//! and Arrow → ragtime → Arrow gives back an equal array, sliced arrays included.

use arrow_array::{Array, ArrayRef};
use proptest::prelude::*;
use ragtime_arrow::{from_arrow, FromArrow, OffsetWidth, Strings, ToArrow};
use ragtime_core::{
    dispatch_dtype, DType, DenseTensor, Dim, Element, RaggedTensor, RowPartition, StringTensor, TensorType,
};

/// The shape of a random tensor: row lengths per ragged level, inner dims, an outer uniform level.
#[derive(Debug, Clone)]
struct Spec {
    dtype: DType,
    nrows: usize,
    ragged_rank: usize,
    lengths: Vec<usize>,
    inner: Vec<usize>,
    uniform_outer: bool,
    seeds: Vec<u64>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..DType::ALL.len(),
        0usize..5,
        0usize..=3,
        prop::collection::vec(0usize..4, 1..24),
        prop::collection::vec(0usize..3, 0..=2),
        any::<bool>(),
        prop::collection::vec(any::<u64>(), 1..32),
    )
        .prop_map(|(d, nrows, ragged_rank, lengths, inner, uniform_outer, seeds)| Spec {
            dtype: DType::ALL[d],
            nrows,
            ragged_rank,
            lengths,
            inner,
            uniform_outer,
            seeds,
        })
}

/// A value of `T` from a seed, covering each type's whole range (NaNs and infinities included).
fn element<T: Element>(seed: u64) -> T {
    match T::DTYPE {
        DType::F32 => T::from_f64(f32::from_bits(seed as u32) as f64),
        DType::F64 => T::from_f64(f64::from_bits(seed)),
        _ => T::from_i64(seed as i64),
    }
}

/// A string from a seed: sometimes invalid UTF-8 when `binary`, else ASCII and multi-byte text.
fn string(seed: u64, binary: bool) -> Vec<u8> {
    let len = (seed % 7) as usize;
    if binary {
        seed.to_le_bytes()[..len].to_vec()
    } else {
        let mut s = format!("{:x}", seed >> 40);
        s.truncate(len);
        if seed.is_multiple_of(3) {
            s.push('é');
        }
        s.into_bytes()
    }
}

fn build(spec: &Spec, binary: bool) -> RaggedTensor {
    let mut lengths = spec.lengths.iter().cycle();
    let mut partitions = Vec::new();
    let mut rows = if spec.uniform_outer && spec.ragged_rank > 0 { spec.nrows * 2 } else { spec.nrows };
    if spec.uniform_outer && spec.ragged_rank > 0 {
        partitions.push(RowPartition::from_uniform_row_length(2, spec.nrows).unwrap());
    }
    for _ in 0..spec.ragged_rank {
        let row_lengths: Vec<i64> = (0..rows).map(|_| *lengths.next().unwrap() as i64).collect();
        let p = RowPartition::from_row_lengths(&row_lengths).unwrap();
        rows = p.nvals();
        partitions.push(p);
    }
    let mut shape = vec![rows];
    shape.extend_from_slice(&spec.inner);
    let count: usize = shape.iter().product();
    let mut seeds = spec.seeds.iter().cycle().enumerate().map(|(i, s)| s.wrapping_mul(i as u64 + 1));
    let flat = dispatch_dtype!(spec.dtype,
    T => DenseTensor::from_vec(shape, (0..count).map(|_| element::<T>(seeds.next().unwrap())).collect::<Vec<T>>()).unwrap(),
    string => {
        let strings: Vec<Vec<u8>> = (0..count).map(|_| string(seeds.next().unwrap(), binary)).collect();
        DenseTensor::String(StringTensor::from_strings(&strings, shape).unwrap())
    });
    RaggedTensor::new(flat, partitions).unwrap()
}

/// Exact equality: structure (uniform partitions included), shape, and values bit for bit.
fn assert_exact(want: &RaggedTensor, got: &RaggedTensor) {
    assert!(want.equals(got), "round trip changed the tensor:\n want {want:?}\n got  {got:?}");
    assert_eq!(want.flat_values().shape(), got.flat_values().shape());
    let uniform = |t: &RaggedTensor| t.partitions().iter().map(RowPartition::uniform_row_length).collect::<Vec<_>>();
    assert_eq!(uniform(want), uniform(got), "uniform partitions must stay uniform");
    match want.dtype() {
        DType::F32 => {
            let bits =
                |t: &RaggedTensor| t.flat_slice::<f32>().unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(want), bits(got), "float32 values must keep their bits");
        }
        DType::F64 => {
            let bits =
                |t: &RaggedTensor| t.flat_slice::<f64>().unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(want), bits(got), "float64 values must keep their bits");
        }
        _ => {}
    }
}

fn options() -> Vec<ToArrow> {
    let mut all = Vec::new();
    for width in [OffsetWidth::I64, OffsetWidth::I32] {
        for strings in [Strings::Utf8, Strings::Binary] {
            for nullable in [true, false] {
                all.push(ToArrow::new().offsets(width).strings(strings).nullable_items(nullable));
            }
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn ragtime_arrow_ragtime_is_exact(spec in spec()) {
        for binary in [false, true] {
            let t = build(&spec, binary);
            for options in options() {
                let array = match options.convert(&t) {
                    Ok(array) => array,
                    // Invalid UTF-8 refused for Utf8: the only refusal a valid tensor may get.
                    Err(e) => {
                        prop_assert!(binary && spec.dtype == DType::String, "unexpected refusal: {e}");
                        prop_assert!(e.to_string().contains("not valid UTF-8"), "{e}");
                        continue;
                    }
                };
                prop_assert_eq!(array.len(), t.nrows());
                let levels = t.levels();
                prop_assert_eq!(&options.data_type(t.dtype(), &levels[1..]).unwrap(), array.data_type());
                // The static type gives the same Arrow type, and reading that type back gives the
                // static type with the rows unknown.
                let ty = TensorType::of(&t);
                prop_assert_eq!(&options.column_type(&ty).unwrap(), array.data_type());
                let read = FromArrow::new().column_type("c", array.data_type()).unwrap();
                prop_assert_eq!(read, ty.with_dim(0, Dim::Unknown).unwrap());
                let back = from_arrow("c", array.clone()).unwrap();
                assert_exact(&t, &back);
                // Arrow → ragtime → Arrow is the identity, and so is it on any slice of the rows.
                prop_assert_eq!(&options.convert(&back).unwrap().to_data(), &array.to_data());
                if t.nrows() >= 2 {
                    let sliced: ArrayRef = array.slice(1, t.nrows() - 2);
                    let back = from_arrow("c", sliced.clone()).unwrap();
                    prop_assert_eq!(back.nrows(), t.nrows() - 2);
                    prop_assert_eq!(&options.convert(&back).unwrap().to_data(), &sliced.to_data());
                }
            }
        }
    }
}

#[test]
fn zero_rows_and_empty_rows_round_trip_at_every_ragged_rank() {
    for dtype in DType::ALL {
        for ragged_rank in 0..=3 {
            for (nrows, lengths) in [(0, vec![0]), (3, vec![0]), (3, vec![0, 2, 0])] {
                let spec = Spec {
                    dtype,
                    nrows,
                    ragged_rank,
                    lengths,
                    inner: vec![],
                    uniform_outer: false,
                    seeds: vec![7, 11],
                };
                let t = build(&spec, false);
                let back = from_arrow("c", ragtime_arrow::to_arrow(&t).unwrap()).unwrap();
                assert_exact(&t, &back);
                assert_eq!(ragtime_arrow::to_arrow(&t).unwrap().len(), nrows, "one slot per row");
            }
        }
    }
}
