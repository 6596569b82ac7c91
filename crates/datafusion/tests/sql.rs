//! ragtime UDFs in DataFusion SQL: the example's queries agree with direct calls, and misuse is a
//! typed error at build, planning or execution time, never a panic.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float32Array, Int64Array, ListArray, RecordBatch};
use datafusion::arrow::datatypes::{Float32Type, Int64Type};
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, Function};
use ragtime_arrow::{FromArrow, NullLists};
use ragtime_datafusion::{CallError, RagtimeUdf, UdfError};

#[allow(dead_code)]
#[path = "../examples/datafusion.rs"]
mod example;

#[test]
fn the_sql_example_agrees_with_direct_calls_bit_for_bit() {
    // The example checks each query's column against the same function called directly and
    // fails with the first differing value.
    example::main().unwrap();
}

#[allow(dead_code)]
#[path = "../examples/sql_bench.rs"]
mod sql_bench;

#[test]
fn the_sql_benchmark_checks_every_query_on_small_data() {
    // The benchmark compares each UDF query with DataFusion's own formulation, row by row, before
    // timing either, over Parquet and over a memory table of several batches and partitions.
    tokio::runtime::Runtime::new().unwrap().block_on(sql_bench::run(20_000, 1)).unwrap();
}

fn softmax() -> Arc<Function> {
    let g = Graph::new();
    let scores = g.input("scores", TensorType::ragged(DType::F32, 1));
    Arc::new(compile(&[&scores], &[&scores.softmax()]).unwrap())
}

fn row_mean() -> Arc<Function> {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let z = g.input("z", TensorType::ragged(DType::F32, 1));
    Arc::new(compile(&[&x, &z], &[&(&x * 2.0 + &z).reduce_mean(1)]).unwrap())
}

/// A table `t` with `scores` (List<Float32>, row 1 null when `null_row`), `ids` (List<Int64>)
/// and `n` (Int64).
fn context(null_row: bool) -> SessionContext {
    let scores = ListArray::from_iter_primitive::<Float32Type, _, _>([
        Some(vec![Some(1.0), Some(2.0), Some(3.0)]),
        if null_row { None } else { Some(vec![]) },
        Some(vec![Some(-1.0), Some(5.0)]),
    ]);
    let ids = ListArray::from_iter_primitive::<Int64Type, _, _>([Some(vec![Some(1)]), Some(vec![]), Some(vec![])]);
    let batch = RecordBatch::try_from_iter([
        ("scores", Arc::new(scores) as ArrayRef),
        ("ids", Arc::new(ids) as ArrayRef),
        ("n", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
    ])
    .unwrap();
    let ctx = SessionContext::new();
    ctx.register_batch("t", batch).unwrap();
    ctx
}

fn run(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, DataFusionError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async { ctx.sql(sql).await?.collect().await })
}

#[test]
fn a_row_mean_is_a_primitive_column_and_softmax_a_list_column() {
    let ctx = context(false);
    ctx.register_udf(RagtimeUdf::new("softmax", softmax()).build().unwrap());
    ctx.register_udf(RagtimeUdf::new("row_mean", row_mean()).build().unwrap());
    let batches = run(&ctx, "SELECT row_mean(scores, scores) AS m, softmax(scores) AS p FROM t").unwrap();
    let batch = &batches[0];
    let means = batch.column(0).as_any().downcast_ref::<Float32Array>().expect("a Float32 column");
    // The row mean of 3x, computed as the function computes it (float64 division).
    let want: Vec<f32> = [vec![1.0f32, 2.0, 3.0], vec![], vec![-1.0, 5.0]]
        .iter()
        .map(|row| (f64::from(row.iter().map(|v| v * 3.0).sum::<f32>()) / row.len() as f64) as f32)
        .collect();
    for (k, want) in want.iter().enumerate() {
        let got = means.value(k);
        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "row {k}: {got} vs {want}");
    }
    let p = FromArrow::new().convert("p", batch.column(1).clone()).unwrap();
    let direct = softmax().call(&[ragged![[1.0f32, 2.0, 3.0], [], [-1.0f32, 5.0]].unwrap()]).unwrap();
    assert_eq!(p.to_string(), direct[0].to_string());
}

#[test]
fn argument_types_and_counts_are_checked_when_the_query_is_planned() {
    let ctx = context(false);
    ctx.register_udf(RagtimeUdf::new("softmax", softmax()).build().unwrap());
    ctx.register_udf(RagtimeUdf::new("row_mean", row_mean()).build().unwrap());
    let wrong_type = run(&ctx, "SELECT softmax(ids) FROM t").unwrap_err().to_string();
    let expected =
        "softmax: argument 0 (scores) of type List(Int64) reads as int64[?, *], but the input takes float32[?, *]";
    assert!(wrong_type.contains(expected), "{wrong_type}");
    let not_a_list = run(&ctx, "SELECT softmax(n) FROM t").unwrap_err().to_string();
    assert!(not_a_list.contains("softmax: argument 0 (scores) of type Int64"), "{not_a_list}");
    let wrong_count = run(&ctx, "SELECT row_mean(scores) FROM t").unwrap_err().to_string();
    assert!(wrong_count.contains("row_mean: takes 2 argument(s) (x, z), got 1"), "{wrong_count}");
}

#[test]
fn a_null_list_is_an_error_naming_the_udf_and_row_unless_a_policy_is_chosen() {
    let ctx = context(true);
    ctx.register_udf(RagtimeUdf::new("softmax", softmax()).build().unwrap());
    let error = run(&ctx, "SELECT softmax(scores) FROM t").unwrap_err();
    let call = error.find_root().to_string().contains("null list at row 1").then_some(()).and_then(|_| {
        match error.find_root() {
            DataFusionError::External(e) => e.downcast_ref::<CallError>(),
            _ => None,
        }
    });
    let call = call.unwrap_or_else(|| panic!("expected a CallError about row 1, got {error}"));
    assert_eq!(call.udf, "softmax");
    assert_eq!(call.argument.as_deref(), Some("argument 0 (scores)"));

    let ctx = context(true);
    let lenient = RagtimeUdf::new("softmax", softmax()).nulls(FromArrow::new().null_lists(NullLists::AsEmpty));
    ctx.register_udf(lenient.build().unwrap());
    let batches = run(&ctx, "SELECT softmax(scores) AS p FROM t").unwrap();
    let p = FromArrow::new().convert("p", batches[0].column(0).clone()).unwrap();
    assert_eq!(p.partitions()[0].row_lengths(), &[3, 0, 2]);
}

#[test]
fn an_output_without_one_row_per_input_row_is_refused() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    // The flat values: one row per value, not per list.
    let flat = Arc::new(compile(&[&x], &[&x.flat_values()]).unwrap());
    let ctx = context(false);
    ctx.register_udf(RagtimeUdf::new("flat", flat).build().unwrap());
    let error = run(&ctx, "SELECT flat(scores) FROM t").unwrap_err().to_string();
    assert!(error.contains("UDF flat") && error.contains("has 5 row(s)") && error.contains("batch of 3"), "{error}");

    // A scalar output has no column type at all: refused when the UDF is built.
    let count = Arc::new(compile(&[&x], &[&x.nrows()]).unwrap());
    let error = RagtimeUdf::new("count", count).build().unwrap_err();
    assert!(matches!(error, UdfError::Output { .. }), "{error}");
    assert!(error.to_string().contains("a scalar (rank 0) is not a column"), "{error}");
}

#[test]
fn building_names_the_input_or_output_that_is_wrong() {
    let unknown = RagtimeUdf::new("m", row_mean()).arguments(&["x", "y"]).unwrap_err().to_string();
    assert!(unknown.contains("UDF m: input \"y\" is not an input of the function (its inputs: x, z)"), "{unknown}");
    let twice = RagtimeUdf::new("m", row_mean()).arguments(&["x", "x"]).unwrap_err().to_string();
    assert!(twice.contains("input \"x\" is listed twice"), "{twice}");
    let unbound = RagtimeUdf::new("m", row_mean()).arguments(&["x"]).unwrap().build().unwrap_err().to_string();
    assert!(unbound.contains("input \"z\" is neither an argument nor bound to a value"), "{unbound}");
    let output = RagtimeUdf::new("m", row_mean()).output(1).unwrap_err().to_string();
    assert!(output.contains("output 1 does not exist: the function has 1"), "{output}");
    let ints = RaggedTensor::from(DenseTensor::vector(vec![1i32, 2]));
    let wrong = RagtimeUdf::new("m", row_mean()).bind("z", ints).unwrap_err().to_string();
    assert!(wrong.contains("input \"z\" takes float32[?, *], but the bound value is int32[2]"), "{wrong}");
}

#[test]
fn a_bound_input_is_given_once_and_the_rest_come_from_sql() {
    // `z` bound to a one-row value broadcast over every row: the row mean of x * 2 + 1.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let z = g.input("z", TensorType::scalar(DType::F32));
    let f = Arc::new(compile(&[&x, &z], &[&(&x * 2.0 + &z).reduce_mean(1)]).unwrap());
    let udf = RagtimeUdf::new("m", f).bind("z", DenseTensor::scalar(1.0f32).into()).unwrap();
    let direct = udf.call(&[ragged![[1.0f32, 2.0, 3.0], [], [-1.0f32, 5.0]].unwrap()]).unwrap();
    let ctx = context(false);
    ctx.register_udf(udf.build().unwrap());
    let batches = run(&ctx, "SELECT m(scores) AS m FROM t").unwrap();
    let got = FromArrow::new().convert("m", batches[0].column(0).clone()).unwrap();
    assert_eq!(got.to_string(), direct.to_string());
}

#[test]
fn a_graph_file_with_several_cases_needs_one_named() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/strings.json");
    let error = RagtimeUdf::from_graph_file("b", &file, None, &["queries"], CompileOptions::default()).unwrap_err();
    assert!(matches!(error, UdfError::Case { .. }) && error.to_string().contains("holds several cases"), "{error}");
    let error = RagtimeUdf::from_graph_file("b", &file, Some("no_such_case"), &["queries"], CompileOptions::default())
        .unwrap_err();
    assert!(error.to_string().contains("no case \"no_such_case\""), "{error}");
    let missing = Path::new("/nonexistent/graph.json");
    let error = RagtimeUdf::from_graph_file("b", missing, None, &[], CompileOptions::default()).unwrap_err();
    assert!(matches!(error, UdfError::GraphFile { .. }), "{error}");
}

#[test]
fn a_manifest_registers_the_udfs_of_its_graph_files() {
    let workloads = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/workloads");
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("udfs.json");
    let text = format!(
        r#"{{"format": "ragtime-udfs/1", "udfs": [
            {{"name": "softmax", "graph": "{0}/W4_row_softmax.json", "arguments": ["x"]}},
            {{"name": "row_mean", "graph": "{0}/W3_row_mean.json", "arguments": ["z", "x"], "output": 0}}
        ]}}"#,
        workloads.display()
    );
    std::fs::write(&manifest, text).unwrap();
    let udfs = ragtime_datafusion::load_manifest(&manifest, CompileOptions::default()).unwrap();
    assert_eq!(udfs.iter().map(|u| u.name()).collect::<Vec<_>>(), ["softmax", "row_mean"]);
    let rows = ragged![[1.0f32, 2.0, 3.0], [], [-1.0f32, 5.0]].unwrap();
    let direct: Vec<String> = udfs
        .iter()
        .map(|u| {
            let args = vec![rows.clone(); if u.name() == "softmax" { 1 } else { 2 }];
            u.call(&args).unwrap().to_string()
        })
        .collect();
    let ctx = context(false);
    for udf in udfs {
        ctx.register_udf(udf.build().unwrap());
    }
    let batches = run(&ctx, "SELECT softmax(scores) AS p, row_mean(scores, scores) AS m FROM t").unwrap();
    for (k, want) in direct.iter().enumerate() {
        let got = FromArrow::new().convert("c", batches[0].column(k).clone()).unwrap();
        assert_eq!(&got.to_string(), want, "column {k}");
    }

    for (text, expected) in [
        (r#"{"format": "ragtime-udfs/2", "udfs": []}"#.to_string(), "format is \"ragtime-udfs/2\""),
        (r#"{"format": "ragtime-udfs/1", "udfs": [], "extra": 1}"#.to_string(), "unknown field `extra`"),
        (
            format!(
                r#"{{"format": "ragtime-udfs/1", "udfs": [
                    {{"name": "s", "graph": "{0}/W4_row_softmax.json", "arguments": ["x"]}},
                    {{"name": "s", "graph": "{0}/W4_row_softmax.json", "arguments": ["x"]}}]}}"#,
                workloads.display()
            ),
            "UDF \"s\" is listed twice",
        ),
    ] {
        std::fs::write(&manifest, text).unwrap();
        let error = ragtime_datafusion::load_manifest(&manifest, CompileOptions::default()).unwrap_err();
        assert!(matches!(error, UdfError::Manifest { .. }) && error.to_string().contains(expected), "{error}");
    }
}
