//! ragtime functions called from SQL: writes a small `events.parquet` (list columns of float32
//! scores and of words), registers three compiled ragtime functions as DataFusion UDFs and runs
//!
//! - `SELECT ragtime_softmax(scores) FROM 'events.parquet'`,
//! - `SELECT row_mean_axpy(x, z) ...`, the row mean of `x * 2 + z`,
//! - `SELECT bigram_embedding(words) ...`, the seed's bigram pipeline from its graph file,
//!
//! then checks every result column against the same functions called directly on the whole
//! columns. Run with `cargo run --release -p ragtime-datafusion --example datafusion`.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use datafusion::arrow::compute::concat;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, StringTensor};
use ragtime_arrow::{FromArrow, ToArrow};
use ragtime_datafusion::RagtimeUdf;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Rows of the generated table.
const ROWS: usize = 5_000;

#[tokio::main]
pub async fn main() -> Result<(), BoxError> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("events.parquet");
    let data = Columns::generate(ROWS)?;
    data.write(&path)?;

    // Small batches and two partitions, so every UDF runs on many batches.
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_batch_size(1_000).with_target_partitions(2));
    ctx.register_parquet("events", path.to_str().ok_or("temp path is not UTF-8")?, ParquetReadOptions::default())
        .await?;

    let g = Graph::new();
    let scores = g.input("scores", TensorType::ragged(DType::F32, 1));
    let softmax = Arc::new(compile(&[&scores], &[&scores.softmax()])?);
    ctx.register_udf(RagtimeUdf::new("ragtime_softmax", softmax.clone()).build()?);

    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let z = g.input("z", TensorType::ragged(DType::F32, 1));
    let row_mean = Arc::new(compile(&[&x, &z], &[&(&x * 2.0 + &z).reduce_mean(1)])?);
    ctx.register_udf(RagtimeUdf::new("row_mean_axpy", row_mean.clone()).build()?);

    // The graph file ships the pipeline and its embedding table; `queries` is the SQL argument.
    let graph_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/strings.json");
    let bigram = RagtimeUdf::from_graph_file(
        "bigram_embedding",
        &graph_file,
        Some("seed_bigram_embedding"),
        &["queries"],
        CompileOptions::default(),
    )?;
    ctx.register_udf(bigram.clone().build()?);

    let queries = [
        ("SELECT id, ragtime_softmax(scores) AS p FROM events ORDER BY id", "p"),
        ("SELECT id, row_mean_axpy(x, z) AS m FROM events ORDER BY id", "m"),
        ("SELECT id, bigram_embedding(words) AS e FROM events ORDER BY id", "e"),
    ];
    let mut results = Vec::new();
    for (sql, column) in queries {
        let batches = ctx.sql(sql).await?.collect().await?;
        println!("{sql}\n{}", pretty_format_batches(&first_rows(&batches, 3)?)?);
        results.push(result_column(&batches, column)?);
    }

    // The same functions on the whole columns, without DataFusion, must give the same bits.
    let direct_softmax = softmax.call(std::slice::from_ref(&data.scores))?.swap_remove(0);
    let direct_mean = row_mean.call(&[data.x.clone(), data.z.clone()])?.swap_remove(0);
    let direct_bigram = bigram.call(std::slice::from_ref(&data.words))?;
    for (name, got, want) in [
        ("ragtime_softmax", &results[0], direct_softmax),
        ("row_mean_axpy", &results[1], direct_mean),
        ("bigram_embedding", &results[2], direct_bigram),
    ] {
        let got = FromArrow::new().convert(name, got.clone())?;
        same_bits(name, &got, &want)?;
        println!("{name}: {} rows, identical to the direct call", got.nrows());
    }
    Ok(())
}

/// The generated columns, as ragtime values.
struct Columns {
    ids: Vec<i64>,
    scores: RaggedTensor,
    x: RaggedTensor,
    z: RaggedTensor,
    words: RaggedTensor,
}

impl Columns {
    /// `rows` rows of 0 to 20 scores (`x` and `z` share those lengths) and 0 to 7 words, from a
    /// fixed SplitMix64 stream.
    fn generate(rows: usize) -> Result<Columns, BoxError> {
        let mut state = 0x5eed_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut v = state;
            v = (v ^ (v >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            v = (v ^ (v >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            v ^ (v >> 31)
        };
        let unit = |v: u64| (v >> 40) as f32 / (1u64 << 24) as f32;
        let vocabulary = ["who", "is", "dan", "smith", "pause", "will", "it", "rain", "later", "today", "ragged"];
        let (mut lengths, mut word_lengths) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        let (mut scores, mut x, mut z, mut words) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rows {
            let n = (next() % 21) as i64;
            lengths.push(n);
            for _ in 0..n {
                scores.push(unit(next()) * 8.0 - 4.0);
                x.push(unit(next()) - 0.5);
                z.push(unit(next()) * 2.0 - 1.0);
            }
            let w = (next() % 8) as i64;
            word_lengths.push(w);
            for _ in 0..w {
                words.push(vocabulary[(next() % vocabulary.len() as u64) as usize]);
            }
        }
        Ok(Columns {
            ids: (0..rows as i64).collect(),
            scores: RaggedTensor::from_row_lengths(DenseTensor::vector(scores), &lengths)?,
            x: RaggedTensor::from_row_lengths(DenseTensor::vector(x), &lengths)?,
            z: RaggedTensor::from_row_lengths(DenseTensor::vector(z), &lengths)?,
            words: RaggedTensor::from_row_lengths(
                DenseTensor::String(StringTensor::from_strings(&words, vec![words.len()])?),
                &word_lengths,
            )?,
        })
    }

    /// Writes the columns as one Parquet file of `List` columns (`id` first).
    fn write(&self, path: &Path) -> Result<(), BoxError> {
        let to_arrow = ToArrow::new();
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(self.ids.clone())) as ArrayRef),
            ("scores", to_arrow.convert(&self.scores)?),
            ("x", to_arrow.convert(&self.x)?),
            ("z", to_arrow.convert(&self.z)?),
            ("words", to_arrow.convert(&self.words)?),
        ])?;
        let mut writer = ArrowWriter::try_new(File::create(path)?, batch.schema(), None)?;
        writer.write(&batch)?;
        writer.close()?;
        Ok(())
    }
}

/// The first `n` rows of a query's result, for printing.
fn first_rows(batches: &[RecordBatch], n: usize) -> Result<Vec<RecordBatch>, BoxError> {
    Ok(batches.iter().find(|b| b.num_rows() > 0).map(|b| vec![b.slice(0, n.min(b.num_rows()))]).unwrap_or_default())
}

/// One column of a query's result, its batches concatenated.
fn result_column(batches: &[RecordBatch], name: &str) -> Result<ArrayRef, BoxError> {
    let parts: Vec<&dyn Array> =
        batches.iter().map(|b| b.column_by_name(name).map(|c| c.as_ref())).collect::<Option<_>>().ok_or("no column")?;
    Ok(concat(&parts)?)
}

/// Checks that two float32 results have the same partitions and the same value bits (NaN
/// included: an empty row's mean is NaN on both sides).
fn same_bits(name: &str, got: &RaggedTensor, want: &RaggedTensor) -> Result<(), BoxError> {
    let splits = |t: &RaggedTensor| t.partitions().iter().map(|p| p.row_splits().to_vec()).collect::<Vec<_>>();
    if splits(got) != splits(want) || got.flat_values().shape() != want.flat_values().shape() {
        return Err(format!("{name}: the query's rows differ from the direct call's").into());
    }
    let bits = |t: &RaggedTensor| -> Result<Vec<u32>, BoxError> {
        let values = t.flat_values().as_slice::<f32>().ok_or("not float32")?;
        Ok(values.iter().map(|v| v.to_bits()).collect())
    };
    let (g, w) = (bits(got)?, bits(want)?);
    if let Some(k) = (0..g.len()).find(|&k| g[k] != w[k]) {
        return Err(format!(
            "{name}: flat value {k} is {:e} from SQL but {:e} from the direct call",
            f32::from_bits(g[k]),
            f32::from_bits(w[k])
        )
        .into());
    }
    Ok(())
}
