//! The Parquet fuzz check, shared by the cargo-fuzz target `parquet` (nightly) and the stable test
//! that replays its corpus (`crates/arrow/tests/fuzz_corpus.rs`): any bytes, as a Parquet file,
//! are opened, read batch by batch through a small compiled graph and written out. The run must
//! end with a summary or a typed `ParquetError`, never a panic (every panic is a finding), and a
//! failed run must leave no output file and no partial one behind.

use std::path::PathBuf;

use ragtime::case::CaseFile;
use ragtime::{CompileOptions, Function};
use ragtime_arrow::parquet::{run_parquet, ParquetInput, ParquetOptions};
use ragtime_arrow::{FromArrow, NullLists};

/// A `List<Float32>` column `x` and a `List<Utf8>` column `t` through a reduction, an
/// elementwise op and a string op (the seeds of `fuzz/corpus/parquet` have these two columns).
const GRAPH: &str = r#"{
 "format": "ragged-conformance/1",
 "cases": [{
  "name": "fuzz/parquet",
  "inputs": {
   "x": {"dtype": "float32", "ragged_rank": 1, "value": [[1.0, 2.0], []]},
   "t": {"dtype": "string", "ragged_rank": 1, "value": [["a"], []]}
  },
  "nodes": [
   {"op": "multiply", "in": ["x", {"const": {"dtype": "float32", "value": 2.0}}], "out": "x2"},
   {"op": "reduce_sum", "in": ["x2"], "attrs": {"axis": 1}, "out": "row_sum"},
   {"op": "strings.length", "in": ["t"], "out": "bytes"}
  ],
  "outputs": ["row_sum", "bytes"]
 }]
}"#;

/// The compiled graph and a private directory for the input and output files.
pub struct ParquetCheck {
    function: Function,
    dir: PathBuf,
}

impl ParquetCheck {
    /// Compiles the graph; files go to a directory of this process under the system's temp dir.
    pub fn new() -> ParquetCheck {
        let file = CaseFile::parse(GRAPH).expect("the check's graph parses");
        let built = file.cases[0].build_any_rows(CompileOptions::default()).expect("the check's graph compiles");
        let dir = std::env::temp_dir().join(format!("ragtime-fuzz-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir for the fuzzed files");
        ParquetCheck { function: built.function.with_memory_budget(64 << 20), dir }
    }

    /// Runs `data` as a Parquet file through the graph: a summary or a typed error; panics only
    /// where a finding is (a panic inside the run, or a failed run that left a file behind).
    pub fn run(&self, data: &[u8]) {
        let (input, output) = (self.dir.join("input.parquet"), self.dir.join("output.parquet"));
        let partial = self.dir.join(".output.parquet.partial");
        std::fs::write(&input, data).expect("write the fuzzed file");
        let _ = std::fs::remove_file(&output);
        let nulls = FromArrow::new().null_lists(NullLists::AsEmpty);
        let inputs = [
            ParquetInput::new("x", &input, "x").nulls(nulls.clone()),
            ParquetInput::new("t", &input, "t").nulls(nulls),
        ];
        let options = ParquetOptions::new().batch_size(16);
        match run_parquet(&self.function, &inputs, &output, &options) {
            Ok(summary) => assert!(output.exists(), "a run of {} rows left no output", summary.rows),
            Err(e) => {
                // The message is built (Display must not panic either) and nothing is left behind.
                assert!(!e.to_string().is_empty());
                assert!(!output.exists() && !partial.exists(), "a failed run left a file: {e}");
            }
        }
    }
}

impl Default for ParquetCheck {
    fn default() -> Self {
        Self::new()
    }
}
