//! `ragtime run GRAPH --input NAME=FILE.parquet:COLUMN ... --output OUT.parquet`: streams Parquet
//! columns through a graph file's function in batches (`ragtime_arrow::parquet`), with a progress
//! bar on a terminal and a one-line summary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use ragtime::case::{case_name_matches, parse_value, Case, CaseFile};
use ragtime::{CompileOptions, DType};
use ragtime_arrow::parquet::{
    BrotliLevel, Compression, GzipLevel, ParquetInput, ParquetOptions, ParquetRun, ZstdLevel, DEFAULT_BATCH_SIZE,
};
use ragtime_arrow::{FromArrow, NullLists, NullValues};
use serde_json::{json, Value};

/// The Parquet options of `ragtime run`.
#[derive(clap::Args, Debug, Clone)]
pub struct StreamArgs {
    /// Stream the function over Parquet columns instead of the file's own inputs: function input
    /// NAME reads column COLUMN of FILE (repeat for each input). Needs `--output`.
    #[arg(long = "input", value_name = "NAME=FILE.parquet:COLUMN", value_parser = parse_input, requires = "sink")]
    pub inputs: Vec<InputSpec>,
    /// The Parquet file to write, one column per function output (named as the graph file's
    /// outputs). Written beside it first and renamed when complete.
    #[arg(long, value_name = "OUT.parquet", requires = "inputs", group = "sink")]
    pub output: Option<PathBuf>,
    /// Read and convert the inputs' batches only, without running the function or writing
    /// (instead of `--output`): the baseline a streaming run's throughput is measured against.
    #[arg(long, requires = "inputs", group = "sink")]
    pub read_only: bool,
    /// Rows read, computed and written at a time; memory use is proportional to it.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH_SIZE, value_parser = positive)]
    pub batch_size: usize,
    /// What a null list of an input column is: refused (an error naming the column and the row),
    /// or an empty row.
    #[arg(long, value_enum, default_value = "refuse")]
    pub null_lists: NullListsArg,
    /// Read every null value of an input column as VALUE (a number, `true` / `false`, `nan`,
    /// `inf`, or text for string columns), converted to each column's dtype. Without it, null
    /// values are refused.
    #[arg(long, value_name = "VALUE")]
    pub null_values: Option<String>,
    /// The codec of the output file's pages (inputs of every one of these codecs are read).
    #[arg(long, value_enum, default_value = "snappy")]
    pub compression: CompressionArg,
}

/// `--compression`: the output's codec, each at its library's default level.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompressionArg {
    /// No compression.
    Uncompressed,
    /// Snappy (the default; pyarrow's too).
    Snappy,
    /// gzip (deflate), level 6.
    Gzip,
    /// LZ4 without Hadoop framing (`LZ4_RAW`, pyarrow's "lz4").
    Lz4,
    /// Zstandard, level 1 (Polars' default codec).
    Zstd,
    /// Brotli, level 1.
    Brotli,
}

impl CompressionArg {
    /// The Parquet codec.
    pub fn codec(self) -> Compression {
        match self {
            CompressionArg::Uncompressed => Compression::UNCOMPRESSED,
            CompressionArg::Snappy => Compression::SNAPPY,
            CompressionArg::Gzip => Compression::GZIP(GzipLevel::default()),
            CompressionArg::Lz4 => Compression::LZ4_RAW,
            CompressionArg::Zstd => Compression::ZSTD(ZstdLevel::default()),
            CompressionArg::Brotli => Compression::BROTLI(BrotliLevel::default()),
        }
    }
}

/// Parses a count of at least 1 (`--batch-size`, `--threads`).
pub fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a whole number of at least 1, got `{text}`")),
    }
}

/// One `--input NAME=FILE.parquet:COLUMN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    /// The function input.
    pub name: String,
    /// The Parquet file.
    pub path: PathBuf,
    /// The column.
    pub column: String,
}

/// Parses `NAME=FILE:COLUMN` (the column is after the last `:`, so a file name may contain `:`).
pub fn parse_input(text: &str) -> Result<InputSpec, String> {
    let bad = || format!("expected NAME=FILE.parquet:COLUMN, got `{text}`");
    let (name, rest) = text.split_once('=').ok_or_else(bad)?;
    let (path, column) = rest.rsplit_once(':').ok_or_else(bad)?;
    if name.is_empty() || path.is_empty() || column.is_empty() {
        return Err(bad());
    }
    Ok(InputSpec { name: name.to_string(), path: PathBuf::from(path), column: column.to_string() })
}

/// `--null-lists`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullListsArg {
    /// A null list is an error naming the column and the row (the default).
    Refuse,
    /// A null list is an empty row.
    Empty,
}

/// Runs the selected case of `file` over the Parquet inputs and prints the summary (one line,
/// or one JSON object with `json`). Exit status 1 on any error.
pub fn run(file: &Path, only: Option<&str>, as_json: bool, args: &StreamArgs, options: CompileOptions) -> ExitCode {
    match stream(file, only, as_json, args, options) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            if as_json {
                println!("{}", json!({ "error": message }));
            } else {
                eprintln!("error: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

fn stream(
    file: &Path,
    only: Option<&str>,
    as_json: bool,
    args: &StreamArgs,
    options: CompileOptions,
) -> Result<String, String> {
    let output = match (&args.output, args.read_only) {
        (Some(path), _) => Some(path.as_path()),
        (None, true) => None,
        (None, false) => return Err("--input needs --output OUT.parquet (or --read-only)".to_string()),
    };
    let cases = CaseFile::load(file).map_err(|e| e.to_string())?.cases;
    let case = select(&cases, only, file)?;
    let built = case.build_any_rows(options).map_err(|e| format!("{}: {e}", case.name))?;
    let function = &built.function;
    let mut inputs = Vec::with_capacity(args.inputs.len());
    for spec in &args.inputs {
        let dtype = function
            .input_names()
            .iter()
            .zip(function.input_types())
            .find(|(name, _)| **name == spec.name)
            .map(|(_, ty)| ty.dtype());
        let nulls = null_policy(args, dtype).map_err(|e| format!("--null-values for input \"{}\": {e}", spec.name))?;
        inputs.push(ParquetInput::new(&spec.name, &spec.path, &spec.column).nulls(nulls));
    }
    let parquet_options = ParquetOptions::new()
        .batch_size(args.batch_size)
        .output_names(built.output_names.iter().cloned())
        .compression(args.compression.codec());
    // The command is an application streaming batch after batch: like `ragtime bench`, it opts in
    // to glibc keeping freed memory, so each batch reuses the last one's pages instead of paying
    // page faults for fresh ones (the process keeps its peak, which the batch size bounds).
    ragtime::ir::jit::retain_freed_memory();
    let run = ParquetRun::open(function, &inputs, &parquet_options).map_err(|e| e.to_string())?;
    let bar = (!as_json && std::io::stderr().is_terminal()).then(|| progress_bar(run.total_rows()));
    let progress = |p: ragtime_arrow::parquet::Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.rows);
        }
    };
    let summary = match output {
        Some(output) => run.write_to(output, progress),
        None => run.read_only(progress),
    }
    .map_err(|e| e.to_string());
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let summary = summary?;
    let seconds = summary.elapsed.as_secs_f64();
    let written = output.map_or_else(|| "(read only)".to_string(), |o| o.display().to_string());
    Ok(if as_json {
        json!({
            "case": case.name,
            "rows": summary.rows,
            "batches": summary.batches,
            "seconds": seconds,
            "output": output.map(|o| o.display().to_string()),
            "outputs": summary.outputs,
        })
        .to_string()
    } else {
        format!(
            "{} rows in {} batches of up to {} through {} in {seconds:.3} s -> {} ({})",
            summary.rows,
            summary.batches,
            args.batch_size,
            case.name,
            written,
            summary.outputs.join(", ")
        )
    })
}

/// The case to run: the one `--case` names, or the file's only case.
fn select<'a>(cases: &'a [Case], only: Option<&str>, file: &Path) -> Result<&'a Case, String> {
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let place = file.display().to_string();
    let hint = format!("`ragtime conformance --list {place}` prints them all");
    match only {
        Some(wanted) => cases
            .iter()
            .find(|c| case_name_matches(&c.name, wanted))
            .ok_or_else(|| crate::cases::no_such_case(wanted, &names, &place, &hint)),
        None => match cases {
            [case] => Ok(case),
            _ => Err(format!(
                "{place} has {} cases; choose the one to stream with --case NAME (cases: {})",
                cases.len(),
                names.join(", ")
            )),
        },
    }
}

/// The null policies of an input of `dtype` (`None`: no such input; the run reports that).
fn null_policy(args: &StreamArgs, dtype: Option<DType>) -> ragtime::Result<FromArrow> {
    let mut nulls = FromArrow::new();
    if args.null_lists == NullListsArg::Empty {
        nulls = nulls.null_lists(NullLists::AsEmpty);
    }
    if let (Some(text), Some(dtype)) = (&args.null_values, dtype) {
        nulls = nulls.null_values(NullValues::Replace(scalar_of(text, dtype)?));
    }
    Ok(nulls)
}

/// `text` as one value of `dtype`, read as graph files read values (the one value parser).
fn scalar_of(text: &str, dtype: DType) -> ragtime::Result<ragtime::DenseTensor> {
    let value = match dtype {
        DType::String => Value::String(text.to_string()),
        // Numbers and booleans as JSON; anything else (`nan`, `inf`) as the text the float
        // reader knows, or refused by it with a message naming the value.
        _ => serde_json::from_str::<Value>(text)
            .ok()
            .filter(|v| v.is_number() || v.is_boolean())
            .unwrap_or_else(|| Value::String(text.to_string())),
    };
    let tensor = parse_value(&json!({ "dtype": dtype.to_string(), "value": value }))?;
    Ok(tensor.flat_values().clone())
}

fn progress_bar(total_rows: u64) -> ProgressBar {
    let bar = ProgressBar::new(total_rows);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} rows ({eta} left)")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_specs_split_at_the_first_equals_and_the_last_colon() {
        assert_eq!(
            parse_input("x=data/a:b.parquet:scores"),
            Ok(InputSpec { name: "x".into(), path: "data/a:b.parquet".into(), column: "scores".into() })
        );
        for bad in ["x", "x=file.parquet", "=f:c", "x=:c", "x=f:"] {
            let e = parse_input(bad).unwrap_err();
            assert_eq!(e, format!("expected NAME=FILE.parquet:COLUMN, got `{bad}`"));
        }
    }

    #[test]
    fn null_values_are_read_in_each_column_dtype() {
        let read = |text: &str, dtype: DType| {
            let t = scalar_of(text, dtype).unwrap();
            assert_eq!((t.dtype(), t.shape()), (dtype, &[][..]), "one {dtype} value from {text:?}");
            ragtime::RaggedTensor::from(t).to_string()
        };
        let shown = |t: ragtime::DenseTensor| ragtime::RaggedTensor::from(t).to_string();
        assert_eq!(read("-1", DType::I64), shown(ragtime::DenseTensor::scalar(-1i64)));
        assert_eq!(read("2.5", DType::F32), shown(ragtime::DenseTensor::scalar(2.5f32)));
        assert_eq!(read("nan", DType::F64), shown(ragtime::DenseTensor::scalar(f64::NAN)));
        assert_eq!(read("true", DType::Bool), shown(ragtime::DenseTensor::scalar(true)));
        assert_eq!(read("12", DType::String), ragtime::RaggedTensor::from_nested("12").unwrap().to_string());
        let e = scalar_of("many", DType::I32).unwrap_err();
        assert_eq!(e.kind(), ragtime::ErrorKind::InvalidValue, "{e}");
        let e = scalar_of("1.5", DType::I32).unwrap_err();
        assert_eq!(e.kind(), ragtime::ErrorKind::InvalidValue, "{e}");
    }
}
