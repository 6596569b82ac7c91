//! ragtime UDFs on a Ballista cluster (a scheduler and two executors on localhost, each loading
//! the UDF manifest and compiling its graph files itself) give exactly the single-node DataFusion
//! results, and the UDFs run on the executors.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use datafusion::arrow::compute::concat;
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use ragtime::{CompileOptions, DenseTensor, RaggedTensor, StringTensor};
use ragtime_arrow::{FromArrow, OffsetWidth, ToArrow};

/// Parquet files of the table, so a scan is several tasks.
const FILES: usize = 6;
/// Rows per file.
const ROWS: usize = 2_000;

/// A UDF that counts its calls, to tell which node ran it.
#[derive(Debug)]
struct Counted {
    inner: Arc<dyn ScalarUDFImpl>,
    calls: Arc<AtomicUsize>,
}

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        self.inner.name() == other.inner.name() && Arc::ptr_eq(&self.calls, &other.calls)
    }
}

impl Eq for Counted {}

impl Hash for Counted {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.name().hash(state);
    }
}

impl ScalarUDFImpl for Counted {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn signature(&self) -> &Signature {
        self.inner.signature()
    }
    fn coerce_types(&self, arg_types: &[DataType]) -> DfResult<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }
    fn return_type(&self, arg_types: &[DataType]) -> DfResult<DataType> {
        self.inner.return_type(arg_types)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.invoke_with_args(args)
    }
}

/// The manifest's UDFs as one node loads them (each node compiles the graph files itself),
/// every call counted in `calls`.
fn node_udfs(manifest: &Path, calls: &Arc<AtomicUsize>) -> Vec<ScalarUDF> {
    ragtime_datafusion::load_manifest(manifest, CompileOptions::default())
        .unwrap()
        .into_iter()
        .map(|udf| {
            let inner = udf.build().unwrap().inner().clone();
            ScalarUDF::new_from_impl(Counted { inner, calls: calls.clone() })
        })
        .collect()
}

/// Writes the manifest: W4's softmax, W3's row mean and the seed's bigram pipeline, from the
/// project's graph files.
fn write_manifest(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = dir.join("udfs.json");
    let text = format!(
        r#"{{"format": "ragtime-udfs/1", "udfs": [
            {{"name": "ragtime_softmax", "graph": "{0}/tests/workloads/W4_row_softmax.json", "arguments": ["x"]}},
            {{"name": "row_mean", "graph": "{0}/tests/workloads/W3_row_mean.json", "arguments": ["x", "z"]}},
            {{"name": "bigram_embedding", "graph": "{0}/tests/conformance/strings.json",
              "case": "seed_bigram_embedding", "arguments": ["queries"]}}
        ]}}"#,
        root.display()
    );
    std::fs::write(&manifest, text).unwrap();
    manifest
}

/// Writes `FILES` Parquet files of `ROWS` rows: `id`, ragged float32 `x` and `z` (0 to 20
/// values a row, empty rows included) and ragged string `words`.
fn write_table(dir: &Path) {
    let vocabulary = ["who", "is", "dan", "smith", "pause", "will", "it", "rain", "later", "today"];
    for file in 0..FILES {
        let first = file * ROWS;
        let lengths: Vec<i64> = (first..first + ROWS).map(|i| ((i * 7919) % 21) as i64).collect();
        let values: usize = lengths.iter().sum::<i64>() as usize;
        let x: Vec<f32> = (0..values).map(|k| ((k * 37 + file) % 1000) as f32 / 1000.0 - 0.5).collect();
        let z: Vec<f32> = (0..values).map(|k| ((k * 91 + file) % 1000) as f32 / 500.0 - 1.0).collect();
        let word_lengths: Vec<i64> = (first..first + ROWS).map(|i| (i % 6) as i64).collect();
        let words: Vec<&str> = (0..word_lengths.iter().sum::<i64>() as usize)
            .map(|k| vocabulary[(k * 7 + file) % vocabulary.len()])
            .collect();
        let ragged = |flat: DenseTensor, lengths: &[i64]| RaggedTensor::from_row_lengths(flat, lengths).unwrap();
        // `List` columns, as pyarrow, Spark and DuckDB write them.
        let to_arrow = ToArrow::new().offsets(OffsetWidth::I32);
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from_iter_values(first as i64..(first + ROWS) as i64)) as ArrayRef),
            ("x", to_arrow.convert(&ragged(DenseTensor::vector(x), &lengths)).unwrap()),
            ("z", to_arrow.convert(&ragged(DenseTensor::vector(z), &lengths)).unwrap()),
            (
                "words",
                to_arrow
                    .convert(&ragged(
                        DenseTensor::String(StringTensor::from_strings(&words, vec![words.len()]).unwrap()),
                        &word_lengths,
                    ))
                    .unwrap(),
            ),
        ])
        .unwrap();
        let path = dir.join(format!("part-{file}.parquet"));
        let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }
}

/// The result column `name` of a query, its batches concatenated.
async fn column(ctx: &SessionContext, sql: &str, name: &str) -> ArrayRef {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column_by_name(name).unwrap().as_ref()).collect();
    concat(&parts).unwrap()
}

/// The same rows and the same float32 bits (NaN included: an empty row's mean).
fn assert_same_bits(query: &str, cluster: &ArrayRef, single: &ArrayRef) {
    let (c, s) = (
        FromArrow::new().convert("c", cluster.clone()).unwrap(),
        FromArrow::new().convert("s", single.clone()).unwrap(),
    );
    let splits = |t: &RaggedTensor| t.partitions().iter().map(|p| p.row_splits().to_vec()).collect::<Vec<_>>();
    assert_eq!(splits(&c), splits(&s), "{query}: rows differ");
    let bits =
        |t: &RaggedTensor| t.flat_values().as_slice::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let (cb, sb) = (bits(&c), bits(&s));
    assert_eq!(cb.len(), sb.len(), "{query}: value counts differ");
    if let Some(k) = (0..cb.len()).find(|&k| cb[k] != sb[k]) {
        panic!("{query}: value {k} is {} on the cluster, {} on one node", f32::from_bits(cb[k]), f32::from_bits(sb[k]));
    }
}

#[test]
fn queries_on_a_scheduler_and_two_executors_match_single_node_datafusion() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_manifest(dir.path());
    let table = dir.path().join("events");
    std::fs::create_dir(&table).unwrap();
    write_table(&table);
    let table = table.to_str().unwrap().to_string();

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    runtime.block_on(async {
        // Every node loads the manifest itself; counters tell who ran the UDFs.
        let counters: Vec<Arc<AtomicUsize>> = (0..4).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let scheduler = ragtime_ballista::start_scheduler(&node_udfs(&manifest, &counters[0])).await.unwrap();
        for calls in &counters[1..=2] {
            ragtime_ballista::start_executor(scheduler, &node_udfs(&manifest, calls), 1).await.unwrap();
        }
        let cluster = ragtime_ballista::connect(scheduler, &node_udfs(&manifest, &counters[3])).await.unwrap();
        cluster.register_parquet("events", &table, ParquetReadOptions::default()).await.unwrap();

        let single = SessionContext::new();
        for udf in ragtime_datafusion::load_manifest(&manifest, CompileOptions::default()).unwrap() {
            single.register_udf(udf.build().unwrap());
        }
        single.register_parquet("events", &table, ParquetReadOptions::default()).await.unwrap();

        for sql in [
            "SELECT id, ragtime_softmax(x) AS r FROM events ORDER BY id",
            "SELECT id, row_mean(x, z) AS r FROM events ORDER BY id",
            "SELECT id, bigram_embedding(words) AS r FROM events ORDER BY id",
        ] {
            let on_cluster = column(&cluster, sql, "r").await;
            assert_eq!(on_cluster.len(), FILES * ROWS, "{sql}");
            let on_one_node = column(&single, sql, "r").await;
            assert_same_bits(sql, &on_cluster, &on_one_node);
        }
        let calls: Vec<usize> = counters.iter().map(|c| c.load(Ordering::SeqCst)).collect();
        // The scheduler and the client only plan; the executors run every batch (each file is one
        // batch per query), and both get tasks.
        eprintln!("UDF calls on scheduler, executors, client: {calls:?}");
        assert_eq!((calls[0], calls[3]), (0, 0), "UDF calls on scheduler, executors, client: {calls:?}");
        assert!(calls[1] > 0 && calls[2] > 0, "UDF calls on scheduler, executors, client: {calls:?}");
        assert_eq!(calls[1] + calls[2], 3 * FILES, "UDF calls on scheduler, executors, client: {calls:?}");
    });
    runtime.shutdown_background();
}
