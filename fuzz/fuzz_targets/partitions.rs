//! Partition constructors on arbitrary splits, lengths and row ids: a valid ragged tensor or a
//! typed error, never a panic; a tensor that was built round-trips through its row splits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtime::{DenseTensor, RaggedTensor};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let nvalues = (data[0] as usize) % 64;
    let ints: Vec<i64> = data[2..]
        .chunks(2)
        .map(|c| i64::from(c[0] as i8) * if c.len() > 1 { i64::from(c[1] % 4) } else { 1 })
        .collect();
    let values = DenseTensor::vector((0..nvalues as i32).collect::<Vec<_>>());
    let built = match data[1] % 3 {
        0 => RaggedTensor::from_row_splits(values, ints.clone()),
        1 => RaggedTensor::from_row_lengths(values, &ints),
        _ => RaggedTensor::from_value_rowids(values, &ints, None),
    };
    if let Ok(t) = built {
        let splits = t.row_splits().expect("ragged").to_vec();
        assert_eq!(*splits.last().unwrap(), nvalues as i64);
        let again = RaggedTensor::from_row_splits(t.flat_values().clone(), splits).expect("its own splits are valid");
        assert!(again.equals(&t));
    }
});
