//! 64-bit sizes end to end, at sizes that need many gigabytes: a row softmax over more than 2^31
//! float32 values read from and written to Arrow `LargeList`, and a string column of more than
//! 4 GiB round-tripping through `LargeUtf8`. Both are `#[ignore]`d (CI need not hold 20 GB) and
//! skip with a message when the machine has too little memory available:
//! `cargo test --release -p ragtime-arrow --test large_values -- --ignored --nocapture`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float32Type;
use arrow_array::{Array, ArrayRef, LargeListArray, PrimitiveArray};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::Field;
use ragtime::prelude::*;
use ragtime_arrow::{from_arrow, to_arrow, OffsetWidth, Strings, ToArrow};
use ragtime_core::{ErrorKind, StringTensor};

/// `MemAvailable` of `/proc/meminfo` in bytes (0 where it cannot be read).
fn available_memory() -> usize {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let line = text.lines().find(|l| l.starts_with("MemAvailable:")).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse::<usize>().ok()).map_or(0, |kib| kib * 1024)
}

/// Whether `bytes` (plus 1 GiB to spare) are available; says why the test is skipped otherwise.
fn have_memory(test: &str, bytes: usize) -> bool {
    let available = available_memory();
    let enough = available >= bytes + (1 << 30);
    if !enough {
        eprintln!("{test}: skipped, it needs {} GiB and {} GiB are available", bytes >> 30, available >> 30);
    }
    enough
}

/// A deterministic value in [-4, 4): a multiplicative hash of the index.
fn value(i: usize) -> f32 {
    ((i as u64).wrapping_mul(2_654_435_761) % 8192) as f32 / 1024.0 - 4.0
}

/// The softmax of one row by a plain f64 loop (the independent check).
fn softmax_row(row: &[f32]) -> Vec<f64> {
    let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
    let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

#[test]
#[ignore = "needs ~19 GB of memory: run with --ignored --release"]
fn row_softmax_over_more_than_2_pow_31_float32_values() {
    const ROW: usize = 1 << 12;
    // 2^31 + 2^20 values: the flat index, the offsets and the kernels' loop counters all pass
    // i32::MAX and u32::MAX is not reached (the width that matters is past i32).
    let values = (1usize << 31) + (1 << 20);
    let rows = values / ROW;
    let needed = values * 4 * 2 + rows * 8 * 4;
    if !have_memory("row_softmax_over_more_than_2_pow_31_float32_values", needed) {
        return;
    }
    // The input as an Arrow `LargeList<Float32>` column, as a Parquet reader would give it.
    let data: Vec<f32> = (0..values).map(value).collect();
    let offsets: Vec<i64> = (0..=rows).map(|r| (r * ROW) as i64).collect();
    let leaf: ArrayRef = Arc::new(PrimitiveArray::<Float32Type>::new(ScalarBuffer::from(data), None));
    let field = Arc::new(Field::new_list_field(arrow_schema::DataType::Float32, true));
    let column = LargeListArray::new(field, OffsetBuffer::new(ScalarBuffer::from(offsets)), leaf, None);
    let x = from_arrow("x", Arc::new(column.clone())).unwrap();
    assert_eq!(x.flat_values().len(), values);
    assert!(x.flat_values().len() > i32::MAX as usize);

    let g = Graph::new();
    let xv = g.input("x", TensorType::ragged(DType::F32, 1));
    let e = (&xv - xv.reduce_max(keepdims(1))).exp();
    let softmax = &e / e.reduce_sum(keepdims(1));
    let f = compile(&[&xv], &[&softmax]).unwrap();
    let out = f.call(&[x]).unwrap().remove(0);
    drop(f);

    // Back to Arrow (shared, not copied) and checked there: every row sums to 1, and rows at the
    // start, across 2^31 and at the end equal the plain loop's.
    let arrow_out = to_arrow(&out).unwrap();
    drop(out);
    let list = arrow_out.as_list::<i64>();
    assert_eq!(list.len(), rows);
    let got = list.values().as_primitive::<Float32Type>().values();
    assert_eq!(got.len(), values);
    let input = column.values().as_primitive::<Float32Type>().values();
    for r in 0..rows {
        let sum: f64 = got[r * ROW..(r + 1) * ROW].iter().map(|&v| f64::from(v)).sum();
        assert!((sum - 1.0).abs() < 1e-3, "row {r} sums to {sum}");
    }
    let across = (1usize << 31) / ROW;
    for r in [0, 1, across - 1, across, across + 1, rows - 1] {
        let want = softmax_row(&input[r * ROW..(r + 1) * ROW]);
        for (j, (&g, w)) in got[r * ROW..(r + 1) * ROW].iter().zip(want).enumerate() {
            assert!((f64::from(g) - w).abs() <= 1e-6 + 1e-5 * w, "row {r} item {j}: {g} against {w}");
        }
    }
}

#[test]
#[ignore = "needs ~10 GB of memory: run with --ignored --release"]
fn string_column_over_4_gib_round_trips_through_large_utf8() {
    const LEN: usize = 1000;
    // 4.4 million strings of 1,000 bytes: 4.4 GB, past u32::MAX bytes.
    let count = (1usize << 32) / LEN + (1 << 16);
    let total = count * LEN;
    if !have_memory("string_column_over_4_gib_round_trips_through_large_utf8", total + count * 8 * 2) {
        return;
    }
    // String i is LEN copies of one lowercase letter chosen by i, with its number at the front.
    let mut bytes = Vec::with_capacity(total);
    for i in 0..count {
        let start = bytes.len();
        bytes.extend_from_slice(i.to_string().as_bytes());
        bytes.resize(start + LEN, b'a' + (i % 26) as u8);
    }
    let offsets: Vec<i64> = (0..=count).map(|i| (i * LEN) as i64).collect();
    let column = StringTensor::from_parts(bytes, offsets, vec![count]).unwrap();
    let x = RaggedTensor::dense(DenseTensor::String(column));
    assert!(x.flat_strings().unwrap().byte_len() > u32::MAX as usize);

    // i32 offsets cannot say where these strings end: a typed error, not a wrapped offset.
    let narrow = ToArrow::new().offsets(OffsetWidth::I32).strings(Strings::Utf8).convert(&x).unwrap_err();
    assert_eq!(narrow.kind(), ErrorKind::InvalidArgument, "{narrow}");

    let arrow = ToArrow::new().offsets(OffsetWidth::I64).strings(Strings::Utf8).convert(&x).unwrap();
    assert_eq!(arrow.data_type(), &arrow_schema::DataType::LargeUtf8);
    let strings = arrow.as_string::<i64>();
    assert_eq!(strings.len(), count);
    assert_eq!(*strings.value_offsets().last().unwrap() as usize, total);
    let back = from_arrow("s", arrow.clone()).unwrap();
    assert!(back.equals(&x), "the column changed on its way through LargeUtf8");
    let back = back.flat_strings().unwrap();
    let want = |i: usize| {
        let mut s = i.to_string().into_bytes();
        s.resize(LEN, b'a' + (i % 26) as u8);
        s
    };
    let past_4_gib = (1usize << 32) / LEN + 1;
    for i in [0, 1, past_4_gib - 1, past_4_gib, count - 1] {
        assert_eq!(back.get(i), &want(i)[..], "string {i}");
        assert_eq!(strings.value(i).as_bytes(), &want(i)[..], "Arrow string {i}");
    }
}
