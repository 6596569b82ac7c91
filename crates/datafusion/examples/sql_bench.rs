//! W2, W3 and W4 of `docs/benchmarks.md` as SQL queries in DataFusion: ragtime UDFs next to
//! DataFusion's own array functions (`array_add`, `array_scale`, `array_avg`, `array_max`,
//! `array_transform` with lambdas), over a Parquet file and over the same data in memory, in the
//! same run, plus the cost of the Arrow conversions alone. Results are checked before timing.
//!
//! `cargo run --release -p ragtime-datafusion --example sql_bench [-- ROWS RUNS]` (default 2^20
//! rows, 5 timed runs after a warm-up; the best run is reported).

use std::fs::File;
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::Float32Type;
use datafusion::datasource::MemTable;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use ragtime::prelude::*;
use ragtime::{DenseTensor, Function};
use ragtime_arrow::{FromArrow, OffsetWidth, ToArrow};
use ragtime_datafusion::RagtimeUdf;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Rows per record batch of the in-memory table: DataFusion's default batch size, which its
/// Parquet reader uses too.
const MEMORY_BATCH_ROWS: usize = 8_192;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let rows: usize = args.next().map_or(Ok(1 << 20), |a| a.parse())?;
    let runs: usize = args.next().map_or(Ok(5), |a| a.parse())?;
    run(rows, runs).await
}

/// Checks, then times, every query on `rows` rows, the best of `runs` runs; prints the tables.
pub async fn run(rows: usize, runs: usize) -> Result<(), BoxError> {
    let batch = table(0..rows)?;
    let values = batch.column(1).as_list::<i32>().values().len();

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("events.parquet");
    let mut writer = ArrowWriter::try_new(File::create(&path)?, batch.schema(), None)?;
    writer.write(&batch)?;
    writer.close()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{rows} rows, {values} float32 values, {threads} threads, best of {runs} runs\n");

    // DataFusion's lambdas (`v -> ...`, for `array_transform`) parse in the DuckDB dialect; the
    // default dialect reads `->` as a JSON operator.
    let ctx = SessionContext::new_with_config(SessionConfig::new().set_str("datafusion.sql_parser.dialect", "DuckDB"));
    ctx.register_parquet("parquet", path.to_str().ok_or("temp path is not UTF-8")?, ParquetReadOptions::default())
        .await?;
    // Each batch its own compact arrays, as a table built in memory holds them (DataFusion's array
    // arithmetic on slices of one big batch went over the whole values buffer for every slice).
    let chunks: Vec<RecordBatch> = (0..rows)
        .step_by(MEMORY_BATCH_ROWS)
        .map(|r| table(r..rows.min(r + MEMORY_BATCH_ROWS)))
        .collect::<Result<_, _>>()?;
    let partitions: Vec<Vec<RecordBatch>> =
        (0..threads).map(|p| chunks.iter().skip(p).step_by(threads).cloned().collect()).collect();
    ctx.register_table("memory", Arc::new(MemTable::try_new(batch.schema(), partitions)?))?;

    let (axpy, row_mean, softmax) = functions()?;
    ctx.register_udf(RagtimeUdf::new("axpy", axpy.clone()).build()?);
    ctx.register_udf(RagtimeUdf::new("row_mean", row_mean.clone()).build()?);
    ctx.register_udf(RagtimeUdf::new("softmax", softmax.clone()).build()?);

    // (name, UDF call, DataFusion's expression, the table it reads: `{table}` or a subquery).
    // Every query reads `id`, so the checks can compare rows in order.
    let workloads = [
        ("W2 x*2 + z", "axpy(x, z)", "array_add(array_scale(x, 2.0), z)", "{table}"),
        ("W3 row mean of x*2 + z", "row_mean(x, z)", "array_avg(array_add(array_scale(x, 2.0), z))", "{table}"),
        (
            "W4 row softmax",
            "softmax(x)",
            // exp(v - max) per value with the row's max, then each divided by the row's sum.
            "array_transform(e, v -> v / s)",
            "(SELECT id, e, array_sum(e) AS s FROM (SELECT id, array_transform(x, v -> exp(v - m)) AS e \
             FROM (SELECT id, x, array_max(x) AS m FROM {table})))",
        ),
    ];
    println!("| workload | table | ragtime UDF | DataFusion array functions | ratio |");
    println!("| --- | --- | --- | --- | --- |");
    for table in ["parquet", "memory"] {
        let scan = time(runs, || collect(&ctx, format!("SELECT x, z FROM {table}"))).await?;
        println!("| scan only (`SELECT x, z`) | {table} | {} | | |", ms(scan));
        for (name, udf, native, from) in workloads {
            let from = from.replace("{table}", table);
            let udf_sql = format!("SELECT {udf} AS r FROM {table}");
            let native_sql = format!("SELECT {native} AS r FROM {from}");
            // A table of several partitions gives its batches in any order: the checks sort.
            let sorted = |sql: &str| format!("{sql} ORDER BY id");
            check(&ctx, &sorted(&udf_sql), &sorted(&native_sql), rows).await?;
            let ours = time(runs, || collect(&ctx, udf_sql.clone())).await?;
            let theirs = time(runs, || collect(&ctx, native_sql.clone())).await?;
            println!(
                "| {name} | {table} | {} | {} | {:.3}x |",
                ms(ours),
                ms(theirs),
                ours.as_secs_f64() / theirs.as_secs_f64()
            );
        }
    }

    // The conversions alone, on the whole column: Arrow → ragtime for x, ragtime → Arrow for
    // W4's output, next to the function call between them.
    let column: ArrayRef = batch.column(1).clone();
    let read = time(runs, || async { FromArrow::new().convert("x", column.clone()).map(drop) }).await?;
    let input = FromArrow::new().convert("x", column.clone())?;
    let call = time(runs, || async { softmax.call(std::slice::from_ref(&input)).map(drop) }).await?;
    let output = softmax.call(std::slice::from_ref(&input))?.swap_remove(0);
    let write = time(runs, || async { ToArrow::new().convert(&output).map(drop) }).await?;
    let write_i32 =
        time(runs, || async { ToArrow::new().offsets(OffsetWidth::I32).convert(&output).map(drop) }).await?;
    println!(
        "\nW4 on the whole column: List → ragtime {}, softmax call {}, ragtime → LargeList {}, ragtime → List {}",
        ms(read),
        ms(call),
        ms(write),
        ms(write_i32)
    );
    Ok(())
}

/// Rows `rows` of docs/benchmarks.md's data (row `i` holds `(i * 7919) % 21` values, `x` and `z`
/// are functions of the flat index over the whole table) as a batch of `id` and `List<Float32>`
/// columns `x` and `z` (as pyarrow, Spark and DuckDB write them).
fn table(rows: std::ops::Range<usize>) -> Result<RecordBatch, BoxError> {
    let length = |i: usize| (i * 7919) % 21;
    let first: usize = (0..rows.start).map(length).sum();
    let lengths: Vec<i64> = rows.clone().map(|i| length(i) as i64).collect();
    let flat = first..first + lengths.iter().sum::<i64>() as usize;
    let x: Vec<f32> = flat.clone().map(|k| (((k * 37) % 1000) as f64 / 1000.0 - 0.5) as f32).collect();
    let z: Vec<f32> = flat.map(|k| (((k * 91) % 1000) as f64 / 500.0 - 1.0) as f32).collect();
    let x = RaggedTensor::from_row_lengths(DenseTensor::vector(x), &lengths)?;
    let z = RaggedTensor::from_row_lengths(DenseTensor::vector(z), &lengths)?;
    let to_list = ToArrow::new().offsets(OffsetWidth::I32);
    let id: ArrayRef = Arc::new(Int64Array::from_iter_values(rows.start as i64..rows.end as i64));
    let batch = RecordBatch::try_from_iter([("id", id), ("x", to_list.convert(&x)?), ("z", to_list.convert(&z)?)])?;
    Ok(batch)
}

/// W2's, W3's and W4's compiled functions.
fn functions() -> ragtime::Result<(Arc<Function>, Arc<Function>, Arc<Function>)> {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let z = g.input("z", TensorType::ragged(DType::F32, 1));
    let axpy = compile(&[&x, &z], &[&(&x * 2.0 + &z)])?;
    let row_mean = compile(&[&x, &z], &[&(&x * 2.0 + &z).reduce_mean(1)])?;
    let softmax = compile(&[&x], &[&x.softmax()])?;
    Ok((Arc::new(axpy), Arc::new(row_mean), Arc::new(softmax)))
}

/// Runs a query to the end and drops its result.
async fn collect(ctx: &SessionContext, sql: String) -> Result<(), BoxError> {
    ctx.sql(&sql).await?.collect().await?;
    Ok(())
}

/// The best of `runs` timed runs after one warm-up run.
async fn time<F, Fut, T, E>(runs: usize, mut run: F) -> Result<Duration, BoxError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    run().await.map_err(Into::into)?;
    let mut best = Duration::MAX;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        run().await.map_err(Into::into)?;
        best = best.min(start.elapsed());
    }
    Ok(best)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Both queries give `rows` rows whose values agree within 1e-5 (relative to 1 + |value|):
/// the two sides round differently (DataFusion's `array_avg` sums in float64; ragtime's JIT
/// may reassociate sums), and `array_avg` of an empty row is NULL where ragtime gives NaN.
async fn check(ctx: &SessionContext, ours: &str, theirs: &str, rows: usize) -> Result<(), BoxError> {
    let values = |sql: String| async move {
        let batches = ctx.sql(&sql).await?.collect().await?;
        let mut out: Vec<Option<f64>> = Vec::new();
        for b in &batches {
            let c = b.column(0);
            match c.data_type() {
                dt if dt.is_nested() => {
                    let lists = c.as_any();
                    let flat: Vec<f64> =
                        if let Some(l) = lists.downcast_ref::<datafusion::arrow::array::LargeListArray>() {
                            numbers(l.values())
                        } else if let Some(l) = lists.downcast_ref::<datafusion::arrow::array::ListArray>() {
                            numbers(l.values())
                        } else {
                            return Err::<_, BoxError>(format!("{sql}: unexpected column type {dt}").into());
                        };
                    out.extend(flat.into_iter().map(Some));
                }
                _ => out.extend((0..c.len()).map(|i| (!c.is_null(i)).then(|| numbers(c)[i]))),
            }
        }
        Ok((batches.iter().map(|b| b.num_rows()).sum::<usize>(), out))
    };
    let (our_rows, a) = values(ours.to_string()).await?;
    let (their_rows, b) = values(theirs.to_string()).await?;
    if our_rows != rows || their_rows != rows || a.len() != b.len() {
        return Err(
            format!("{ours} vs {theirs}: {our_rows} / {their_rows} rows, {} / {} values", a.len(), b.len()).into()
        );
    }
    for (k, (u, v)) in a.iter().zip(&b).enumerate() {
        let agree = match (u, v) {
            (Some(u), Some(v)) => (u - v).abs() <= 1e-5 * (1.0 + v.abs()),
            (Some(u), None) => u.is_nan(),
            _ => false,
        };
        if !agree {
            return Err(format!("{ours} vs {theirs}: value {k} is {u:?} vs {v:?}").into());
        }
    }
    Ok(())
}

/// A float32 or float64 array's values as f64.
fn numbers(array: &dyn Array) -> Vec<f64> {
    if let Some(a) = array.as_primitive_opt::<Float32Type>() {
        a.values().iter().map(|&v| f64::from(v)).collect()
    } else {
        array.as_primitive::<datafusion::arrow::datatypes::Float64Type>().values().to_vec()
    }
}
