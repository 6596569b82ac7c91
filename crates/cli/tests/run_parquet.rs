//! `ragtime run GRAPH --input NAME=FILE.parquet:COLUMN ... --output OUT.parquet`, run as a user
//! runs it: the output file must hold what the graph file's function gives on the whole columns
//! in one call; errors exit with status 1 and name the file, the column and the rows.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, ListArray, RecordBatch};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use ragtime::case::CaseFile;
use ragtime::{CompileOptions, RaggedTensor};
use ragtime_arrow::{FromArrow, NullLists, NullValues, OffsetWidth, ToArrow};

/// A graph file with a `List<Float32>`, a `List<Utf8>` and a `List<List<Int64>>` input and one
/// output of each kind: per-row values, per-row scalars, strings, nested lists.
const GRAPH: &str = r#"{
 "format": "ragged-conformance/1",
 "group": "stream",
 "cases": [{
  "name": "stream/mixed",
  "inputs": {
   "x": {"dtype": "float32", "ragged_rank": 1, "value": [[1.0, 2.0], []]},
   "t": {"dtype": "string", "ragged_rank": 1, "value": [["a"], []]},
   "n": {"dtype": "int64", "ragged_rank": 2, "value": [[[1], []], []]}
  },
  "nodes": [
   {"op": "multiply", "in": ["x", {"const": {"dtype": "float32", "value": 2.0}}], "out": "x2"},
   {"op": "reduce_sum", "in": ["x2"], "attrs": {"axis": 1}, "out": "row_sum"},
   {"op": "strings.upper", "in": ["t"], "out": "shout"},
   {"op": "strings.length", "in": ["t"], "out": "bytes"},
   {"op": "reduce_sum", "in": ["n"], "attrs": {"axis": 2}, "out": "inner_sums"}
  ],
  "outputs": ["x2", "row_sum", "shout", "bytes", "inner_sums"]
 }]
}"#;

fn ragtime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ragtime"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A deterministic stream of numbers (a linear congruential generator).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// Row lengths 0..=3, empty rows included.
    fn lengths(&mut self, rows: usize) -> Vec<i64> {
        (0..rows).map(|_| (self.next() % 4) as i64).collect()
    }
}

/// Columns `x`, `t`, `n` of `rows` rows.
fn data(rows: usize) -> [(&'static str, RaggedTensor); 3] {
    let mut numbers = Numbers(7);
    let lengths = numbers.lengths(rows);
    let count = lengths.iter().sum::<i64>() as usize;
    let floats: Vec<f32> = (0..count).map(|_| (numbers.next() % 100) as f32 / 8.0).collect();
    let x = RaggedTensor::from_row_lengths(floats, &lengths).unwrap();
    let lengths = numbers.lengths(rows);
    let count = lengths.iter().sum::<i64>() as usize;
    let words: Vec<&str> = (0..count).map(|_| ["ragged", "tensor", "é", ""][(numbers.next() % 4) as usize]).collect();
    let t = RaggedTensor::from_row_lengths(ragtime::DenseTensor::from(words), &lengths).unwrap();
    let outer = numbers.lengths(rows);
    let inner = numbers.lengths(outer.iter().sum::<i64>() as usize);
    let ints: Vec<i64> = (0..inner.iter().sum::<i64>()).map(|i| i * 3 - 7).collect();
    let n = RaggedTensor::from_row_lengths(RaggedTensor::from_row_lengths(ints, &inner).unwrap(), &outer).unwrap();
    [("x", x), ("t", t), ("n", n)]
}

fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>, row_group_rows: usize) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let properties = WriterProperties::builder().set_max_row_group_row_count(Some(row_group_rows)).build();
    let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn to_list(t: &RaggedTensor) -> ArrayRef {
    ToArrow::new().offsets(OffsetWidth::I32).convert(t).unwrap()
}

/// Every column of a Parquet file, read whole.
fn read_parquet(path: &Path) -> Vec<(String, RaggedTensor)> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let batches: Vec<RecordBatch> = builder.with_batch_size(1 << 20).build().unwrap().map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1, "the test files are read in one batch");
    let batch = &batches[0];
    batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| (f.name().clone(), ragtime_arrow::from_arrow(f.name(), c.clone()).unwrap()))
        .collect()
}

/// The graph file's function called once on the whole inputs (in the function's input order).
fn whole_call(graph: &Path, inputs: &[(&str, RaggedTensor)]) -> Vec<(String, RaggedTensor)> {
    let case = CaseFile::load(graph).unwrap().cases.remove(0);
    let built = case.build_any_rows(CompileOptions::default()).unwrap();
    let ordered: Vec<RaggedTensor> = built
        .function
        .input_names()
        .iter()
        .map(|name| inputs.iter().find(|(n, _)| n == name).unwrap().1.clone())
        .collect();
    built.output_names.into_iter().zip(built.function.call(&ordered).unwrap()).collect()
}

fn assert_same_columns(got: &[(String, RaggedTensor)], want: &[(String, RaggedTensor)]) {
    let names = |c: &[(String, RaggedTensor)]| c.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "one output column per graph output, named after it");
    for ((name, g), (_, w)) in got.iter().zip(want) {
        assert!(g.equals(w), "output {name}: streamed {g:#}, one whole call {w:#}");
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    graph: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let graph = path.join("graph.json");
    std::fs::write(&graph, GRAPH).unwrap();
    Setup { _dir: dir, dir: path, graph }
}

fn run(args: &[&str]) -> Output {
    ragtime().args(args).output().unwrap()
}

#[test]
fn streams_three_kinds_of_list_columns_from_two_files_in_small_batches() {
    let s = setup();
    let [x, t, n] = data(57);
    let (a, b, out) = (s.dir.join("a.parquet"), s.dir.join("b.parquet"), s.dir.join("out.parquet"));
    write_parquet(&a, vec![("scores", to_list(&x.1)), ("tokens", to_list(&t.1))], 10);
    write_parquet(&b, vec![("ids", to_list(&n.1))], 57);
    let input = |name: &str, file: &Path, column: &str| format!("{name}={}:{column}", file.display());
    let output = run(&[
        "run",
        s.graph.to_str().unwrap(),
        "--input",
        &input("x", &a, "scores"),
        "--input",
        &input("t", &a, "tokens"),
        "--input",
        &input("n", &b, "ids"),
        "--output",
        out.to_str().unwrap(),
        "--batch-size",
        "6",
        "--threads",
        "2",
    ]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.is_empty(), "no progress bar when stderr is not a terminal: {stderr:?}");
    assert!(stdout.starts_with("57 rows in 10 batches of up to 6 through stream/mixed in "), "{stdout}");
    assert!(
        stdout.trim_end().ends_with(&format!("s -> {} (x2, row_sum, shout, bytes, inner_sums)", out.display())),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 1, "a one-line summary: {stdout}");
    assert_same_columns(&read_parquet(&out), &whole_call(&s.graph, &[x, t, n]));
}

#[test]
fn the_workload_files_run_as_graphs_and_json_gives_the_summary() {
    let s = setup();
    let graph = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/workloads/W4_row_softmax.json");
    let [x, ..] = data(200);
    let (input, out) = (s.dir.join("x.parquet"), s.dir.join("softmax.parquet"));
    write_parquet(&input, vec![("x", to_list(&x.1))], 64);
    let output = run(&[
        "run",
        graph.to_str().unwrap(),
        "--input",
        &format!("x={}:x", input.display()),
        "--output",
        out.to_str().unwrap(),
        "--batch-size",
        "50",
        "--mode",
        "debug",
        "--json",
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["rows"], 200);
    assert_eq!(summary["batches"], 4);
    assert_eq!(summary["outputs"], serde_json::json!(["y"]));
    assert!(summary["seconds"].as_f64().is_some_and(|s| s >= 0.0), "{summary}");
    assert_same_columns(&read_parquet(&out), &whole_call(&graph, &[("x", x.1)]));
}

/// A `List<Float32>` column with a null value in row 1 and a null list at row 3.
fn column_with_nulls() -> ArrayRef {
    let values = Float32Array::from(vec![Some(1.0), Some(2.0), None, Some(4.0), Some(5.0)]);
    let valid = NullBuffer::from(vec![true, true, true, false, true]);
    let field = Arc::new(arrow_schema::Field::new_list_field(arrow_schema::DataType::Float32, true));
    Arc::new(ListArray::new(field, OffsetBuffer::from_lengths([2, 1, 0, 0, 2]), Arc::new(values), Some(valid)))
}

#[test]
fn nulls_are_refused_naming_column_and_row_unless_the_null_options_are_given() {
    let s = setup();
    let graph = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/workloads/W4_row_softmax.json");
    let (input, out) = (s.dir.join("nulls.parquet"), s.dir.join("out.parquet"));
    write_parquet(&input, vec![("x", column_with_nulls())], 100);
    let base = ["run", graph.to_str().unwrap(), "--input", &format!("x={}:x", input.display())];
    let base: Vec<&str> =
        base.iter().copied().chain(["--output", out.to_str().unwrap(), "--batch-size", "2"]).collect();

    let refused = run(&base);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("nulls.parquet: column \"x\", batch 0 (rows 0..2; rows below count from 0)")
            && stderr.contains("null value at row 1"),
        "{stderr}"
    );
    let refused = run(&[&base[..], &["--null-values", "0.5"]].concat());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("batch 1 (rows 2..4; rows below count from 2)") && stderr.contains("null list at row 1"),
        "{stderr}"
    );
    assert!(!out.exists(), "a failed run writes no output");

    let accepted = run(&[&base[..], &["--null-values", "0.5", "--null-lists", "empty"]].concat());
    assert!(accepted.status.success(), "{}", text(&accepted.stderr));
    let read = FromArrow::new()
        .null_lists(NullLists::AsEmpty)
        .null_values(NullValues::Replace(ragtime::DenseTensor::scalar(0.5f32)));
    let whole = read.convert("x", column_with_nulls()).unwrap();
    assert_same_columns(&read_parquet(&out), &whole_call(&graph, &[("x", whole)]));
}

#[test]
fn bad_columns_and_row_counts_fail_with_the_file_named() {
    let s = setup();
    let [x, t, n] = data(12);
    let (a, b, out) = (s.dir.join("a.parquet"), s.dir.join("b.parquet"), s.dir.join("out.parquet"));
    write_parquet(&a, vec![("x", to_list(&x.1)), ("t", to_list(&t.1)), ("n", to_list(&n.1))], 5);
    let [_, _, n_short] = data(11);
    write_parquet(&b, vec![("n", to_list(&n_short.1))], 5);
    let graph = s.graph.to_str().unwrap();
    let spec = |name: &str, file: &Path, column: &str| format!("{name}={}:{column}", file.display());
    let attempt = |n_spec: String| {
        let output = run(&[
            "run",
            graph,
            "--input",
            &spec("x", &a, "x"),
            "--input",
            &spec("t", &a, "t"),
            "--input",
            &n_spec,
            "--output",
            out.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
        text(&output.stderr)
    };
    let missing = attempt(spec("n", &a, "ids"));
    assert!(missing.contains("a.parquet: no column \"ids\" (input \"n\"); the file's columns: x, t, n"), "{missing}");
    let wrong = attempt(spec("n", &a, "x"));
    assert!(
        wrong.contains("column \"x\" of Arrow type") && wrong.contains("but input \"n\" takes int64[?, *, *]"),
        "{wrong}"
    );
    let short = attempt(spec("n", &b, "n"));
    assert!(
        short.contains("the inputs do not have the same rows: from row 0,")
            && short.contains("a.parquet, column \"x\" has 12")
            && short.contains("b.parquet, column \"n\" has 11"),
        "{short}"
    );
    assert!(!out.exists());
}

#[test]
fn usage_errors_exit_with_status_2_or_name_the_problem() {
    let s = setup();
    let graph = s.graph.to_str().unwrap();
    let bad_spec = run(&["run", graph, "--input", "x=file.parquet", "--output", "o.parquet"]);
    assert_eq!(bad_spec.status.code(), Some(2));
    assert!(text(&bad_spec.stderr).contains("expected NAME=FILE.parquet:COLUMN, got `x=file.parquet`"));
    let no_output = run(&["run", graph, "--input", "x=f.parquet:x"]);
    assert_eq!(no_output.status.code(), Some(2), "--input needs --output");
    let zero = run(&["run", graph, "--input", "x=f.parquet:x", "--output", "o.parquet", "--batch-size", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    let wrong_case = run(&["run", graph, "--case", "nope", "--input", "x=f.parquet:x", "--output", "o.parquet"]);
    assert_eq!(wrong_case.status.code(), Some(1));
    assert!(text(&wrong_case.stderr).contains("no case named \"nope\""), "{}", text(&wrong_case.stderr));
}

/// Corrupt Parquet files (the regression files of `ragtime-arrow`, each one place where the
/// upstream readers panicked or trusted a bad value) exit with status 1 and a typed message
/// naming the file, never 101 (a panic), and leave no output behind.
#[test]
fn corrupt_files_exit_with_status_1_and_a_typed_message() {
    const XT_GRAPH: &str = r#"{"format": "ragged-conformance/1", "cases": [{"name": "corrupt/read",
     "inputs": {"x": {"dtype": "float32", "ragged_rank": 1, "value": [[1.0], []]},
                "t": {"dtype": "string", "ragged_rank": 1, "value": [["a"], []]}},
     "nodes": [{"op": "reduce_sum", "in": ["x"], "attrs": {"axis": 1}, "out": "s"},
               {"op": "strings.length", "in": ["t"], "out": "n"}],
     "outputs": ["s", "n"]}]}"#;
    let s = setup();
    let graph = s.dir.join("xt.json");
    std::fs::write(&graph, XT_GRAPH).unwrap();
    let out = s.dir.join("out.parquet");
    let corrupt = Path::new(env!("CARGO_MANIFEST_DIR")).join("../arrow/tests/data/corrupt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corrupt).unwrap().map(|f| f.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for file in &files {
        let f = file.to_str().unwrap();
        let (x, t) = (format!("x={f}:x"), format!("t={f}:t"));
        for batch_size in ["10", "65536"] {
            let args =
                ["run", graph.to_str().unwrap(), "--input", &x, "--input", &t, "--output", out.to_str().unwrap()];
            let result = run(&[&args[..], &["--batch-size", batch_size]].concat());
            let stderr = text(&result.stderr);
            assert_eq!(result.status.code(), Some(1), "{f}: {stderr}");
            assert!(stderr.starts_with(&format!("error: {f}: corrupt file")), "{f}: {stderr}");
            assert!(stderr.contains("invalid value") && !stderr.contains("panicked"), "{f}: {stderr}");
            assert!(!out.exists() && !s.dir.join(".out.parquet.partial").exists(), "{f}: a file was left behind");
        }
    }
}

/// `--compression` picks the output's codec (Snappy by default; `crates/arrow/tests/parquet_formats.rs`
/// reads inputs of every codec).
#[test]
fn compression_chooses_the_output_codec() {
    let s = setup();
    let [x, t, n] = data(40);
    let graph = s.graph.to_str().unwrap();
    let input = s.dir.join("in.parquet");
    write_parquet(&input, vec![("x", to_list(&x.1)), ("t", to_list(&t.1)), ("n", to_list(&n.1))], 16);
    let want = whole_call(&s.graph, &[x, t, n]);
    let specs = ["x", "t", "n"].map(|c| format!("{c}={}:{c}", input.display()));
    for (flag, codec) in [
        (None, "SNAPPY"),
        (Some("zstd"), "ZSTD"),
        (Some("gzip"), "GZIP"),
        (Some("lz4"), "LZ4_RAW"),
        (Some("brotli"), "BROTLI"),
    ] {
        let out = s.dir.join(format!("out-{codec}.parquet"));
        let mut args = vec!["run", graph, "--input", &specs[0], "--input", &specs[1], "--input", &specs[2]];
        args.extend(["--output", out.to_str().unwrap()]);
        if let Some(flag) = flag {
            args.extend(["--compression", flag]);
        }
        let result = run(&args);
        assert!(result.status.success(), "{codec}: {}", text(&result.stderr));
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&out).unwrap()).unwrap();
        let written = format!("{:?}", builder.metadata().row_group(0).column(0).compression());
        assert!(written.starts_with(codec), "{codec}: written as {written}");
        assert_same_columns(&read_parquet(&out), &want);
    }
    let bad = run(&["run", graph, "--input", "x=f.parquet:x", "--output", "o.parquet", "--compression", "lzo"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}
