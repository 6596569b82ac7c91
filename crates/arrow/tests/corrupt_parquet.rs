//! Corrupt Parquet files (mutants of small pyarrow-written files, `tests/data/corrupt`) give a
//! typed `ParquetError::Corrupt` naming the file (and the row group and column when data was
//! being read), whose source is an `invalid_value` error, never a panic; and a run that fails
//! part-way leaves neither its output nor its hidden partial file behind. Each file is one place
//! where the upstream Parquet or Arrow IPC reader panicked (issue 26) or trusted a bad value.

use std::path::Path;

use ragtime::case::CaseFile;
use ragtime::{CompileOptions, ErrorKind};
use ragtime_arrow::{run_parquet, ParquetError, ParquetInput, ParquetOptions};

/// A `List<Float32>` input `x` and a `List<Utf8>` input `t`, the columns of every file.
const GRAPH: &str = r#"{"format": "ragged-conformance/1", "cases": [{"name": "corrupt/read",
 "inputs": {"x": {"dtype": "float32", "ragged_rank": 1, "value": [[1.0], []]},
            "t": {"dtype": "string", "ragged_rank": 1, "value": [["a"], []]}},
 "nodes": [{"op": "reduce_sum", "in": ["x"], "attrs": {"axis": 1}, "out": "s"},
           {"op": "strings.length", "in": ["t"], "out": "n"}],
 "outputs": ["s", "n"]}]}"#;

/// Each file, and what its error says: where it was found and the reader's own words.
const CASES: [(&str, &str); 15] = [
    // The Arrow schema in the footer (`ARROW:schema`), decoded by arrow-ipc while opening.
    ("type_none", "corrupt file: parquet: invalid value: the reader failed on its footer: not implemented: Type NONE not supported"),
    ("type_unknown", "corrupt file: parquet: invalid value: the reader failed on its footer: not implemented: Type <UNKNOWN 55> not supported"),
    ("float_precision", "corrupt file: parquet: invalid value: the reader failed on its footer: FloatingPoint type with precision of <UNKNOWN -7167> not supported"),
    ("int_bit_width", "the reader failed on its footer: Int type with bit width of 268435520 and signed of true not supported"),
    ("interval_unit", "the reader failed on its footer: Interval type with unit of <UNKNOWN 64> unsupported"),
    ("dictionary_index_bitwidth", "the reader failed on its footer: Unexpected bitwidth and signed"),
    ("list_children", "the reader failed on its footer: expect a list to have one child"),
    ("map_children", "the reader failed on its footer: expect a map to have one child"),
    ("unwrap_none", "the reader failed on its footer: called `Option::unwrap()` on a `None` value"),
    // Footer values ragtime checks before the reader trusts them (it asserted on the first).
    ("negative_chunk_start", "corrupt file, row group 2, column \"t\": parquet: invalid value: its footer puts the column chunk of leaf 1 (\"t.list.element\") at byte -512, 85 bytes long, outside the file of 1713 bytes"),
    ("negative_row_count", "corrupt file, row group 2: parquet: invalid value: its footer gives a negative row count (-2496)"),
    // Page headers and page data, decoded while batches are read.
    ("dict_decoder_unset", "corrupt file, row group 2, column \"x\": parquet: invalid value: the reader failed on batch 5 (from row 50): Decoder for dict should have been set"),
    ("bit_width_assertion", "row group 2, column \"t\": parquet: invalid value: the reader failed on batch 5 (from row 50): assertion failed: num_bits <="),
    ("divide_by_zero", "row groups 0 to 1, column \"t\": parquet: invalid value: the reader failed on batch 2 (from row 20): attempt to divide by zero"),
    ("multiply_overflow", "row group 0, column \"x\": parquet: invalid value: the reader failed on batch 0 (from row 0): attempt to multiply with overflow"),
];

#[test]
fn every_corrupt_file_gives_a_typed_error_naming_the_file_and_leaves_nothing_behind() {
    let built = CaseFile::parse(GRAPH).unwrap().cases[0].build_any_rows(CompileOptions::default()).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corrupt");
    let out_dir = tempfile::tempdir().unwrap();
    let output = out_dir.path().join("out.parquet");
    for (name, expected) in CASES {
        // One file reaches arithmetic that only debug builds check (overflow checks); a release
        // build goes on with the wrapped value until the reader refuses the page itself: the
        // same kind of error, in the reader's other words.
        let expected = match name {
            "multiply_overflow" if !cfg!(debug_assertions) => "the reader refused batch 0 (from row 0): Parquet",
            _ => expected,
        };
        let file = data.join(format!("{name}.parquet"));
        let inputs = [ParquetInput::new("x", &file, "x"), ParquetInput::new("t", &file, "t")];
        let options = ParquetOptions::new().batch_size(10);
        let e = run_parquet(&built.function, &inputs, &output, &options).expect_err(name);
        let ParquetError::Corrupt { path, source, .. } = &e else { panic!("{name}: not a Corrupt error: {e:?}") };
        assert_eq!((path, source.kind()), (&file, ErrorKind::InvalidValue), "{name}: {e}");
        let message = e.to_string();
        assert!(message.starts_with(&format!("{}: corrupt file", file.display())), "{name}: {message}");
        assert!(message.contains(expected), "{name}: {message}");
        let left: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().map(|f| f.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{name}: the failed run left {left:?}");
    }
}
