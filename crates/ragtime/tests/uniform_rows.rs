//! Uniform row lengths in types (issue 10, item 3): `Dim::UniformRows` from
//! `from_uniform_row_length` through the ops that keep it, integer indexing into it, broadcasting
//! against dense dims, the input check of `Function::call`, `debugprint`, and graph files.

use ragtime::case::{parse_value, value_to_json, CaseFile};
use ragtime::ops;
use ragtime::prelude::*;
use ragtime::Dim;
use ragtime::{ErrorKind, Mode};

fn modes() -> [Mode; 3] {
    [Mode::FastRun, Mode::FastCompile, Mode::Debug]
}

fn golden(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("RAGTIME_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {}; run with RAGTIME_BLESS=1 to create it", path.display()));
    assert_eq!(text, want, "output differs from {} (RAGTIME_BLESS=1 regenerates it)", path.display());
}

/// `float32[?, (n)]`: rows of `n` floats, typed uniform.
fn uniform_type(n: usize) -> TensorType {
    TensorType::from_dims(DType::F32, vec![Dim::Unknown, Dim::UniformRows(n)]).unwrap()
}

#[test]
fn types_keep_the_row_length_through_the_ops_that_keep_the_partition() -> ragtime::Result<()> {
    let g = Graph::new();
    let v = g.input("v", TensorType::vector(DType::F32));
    let x = ops::from_uniform_row_length(&v, 3);
    assert_eq!(x.ty()?.to_string(), "float32[?, (3)]");
    // Elementwise ops, broadcasting against a scalar or a per-row column, slices, gathers.
    assert_eq!((&x * 2.0 + 1.0).ty()?.to_string(), "float32[?, (3)]");
    assert_eq!((&x - x.reduce_max(keepdims(1))).ty()?.to_string(), "float32[?, (3)]");
    assert_eq!(x.get(s![.., 1..]).ty()?.to_string(), "float32[?, (2)]");
    assert_eq!(x.get(s![1..]).ty()?.to_string(), "float32[?, (3)]");
    assert_eq!(x.get(s![0]).ty()?.to_string(), "float32[3]");
    let i = g.input("i", TensorType::vector(DType::I64));
    assert_eq!(ops::gather(&x, &i).ty()?.to_string(), "float32[?, (3)]");
    // Lost where the result is ragged: against a ragged operand, or after an op that does not
    // promise it.
    let r = g.input("r", TensorType::ragged(DType::F32, 1));
    assert_eq!((&x + &r).ty()?.to_string(), "float32[?, *]");
    assert_eq!(ops::concat(&[&x, &x], 1).ty()?.to_string(), "float32[?, *]");
    // Nested: a uniform partition over ragged rows.
    let words = g.input("words", TensorType::ragged(DType::String, 1));
    let pairs = ops::from_uniform_row_length(&words, 2);
    assert_eq!(pairs.ty()?.to_string(), "string[?, (2), *]");
    assert_eq!(pairs.get(s![.., -1]).ty()?.to_string(), "string[?, *]");
    Ok(())
}

#[test]
fn an_integer_index_into_a_uniform_dim_works_in_every_mode() -> ragtime::Result<()> {
    let g = Graph::new();
    let v = g.input("v", TensorType::vector(DType::F32));
    let x = ops::from_uniform_row_length(&v, 3);
    let first = x.get(s![.., 0]);
    let last = x.get(s![.., -1]);
    let dense = x.to_tensor();
    // Law: on a uniform dim, x[:, i] is the padded dense tensor's [:, i].
    let (dense_first, dense_last) = (dense.get(s![.., 0]), dense.get(s![.., -1]));
    let values = RaggedTensor::from(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    for mode in modes() {
        let f = g.compile_with(&[&v], &[&first, &last, &dense_first, &dense_last], mode)?;
        let out = f.call(std::slice::from_ref(&values))?;
        assert_eq!(out[0].to_vec::<f32>()?, [1.0, 4.0], "{mode:?}");
        assert!(out[0].equals(&out[2]) && out[1].equals(&out[3]), "{mode:?}: {out:?}");
    }
    // Out of range is refused at build time, with the index and the dim named.
    for key in [s![.., 3], s![.., -4]] {
        let e = x.get(key.clone()).check().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IndexOutOfRange, "x[{key}]: {e}");
    }
    // A ragged dim still refuses an integer.
    let r = g.input("r", TensorType::ragged(DType::F32, 1));
    assert_eq!(r.get(s![.., 0]).check().unwrap_err().kind(), ErrorKind::InvalidIndex);
    Ok(())
}

#[test]
fn a_uniform_dim_broadcasts_against_a_dense_dim_of_its_size() -> ragtime::Result<()> {
    let g = Graph::new();
    let x = g.input("x", uniform_type(3));
    let m = g.input("m", TensorType::dense(DType::F32, &[None, Some(3)]));
    let sum = &x + &m;
    assert_eq!(sum.ty()?.to_string(), "float32[?, (3)]");
    let wrong = g.input("w", TensorType::dense(DType::F32, &[None, Some(4)]));
    assert_eq!((&x + &wrong).check().unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    let rows = ragged![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]?.with_uniform_rows(0, 3)?;
    let matrix = RaggedTensor::from_literal_typed(
        &ragged![[10.0f32, 20.0, 30.0], [40.0, 50.0, 60.0]]?.to_literal(),
        Some(DType::F32),
        Some(0),
        None,
    )?;
    for mode in modes() {
        let f = g.compile_with(&[&x, &m], &[&sum], mode)?;
        let out = f.call(&[rows.clone(), matrix.clone()])?;
        assert_eq!(out[0].to_nested::<Vec<Vec<f32>>>()?, vec![vec![11.0, 22.0, 33.0], vec![44.0, 55.0, 66.0]]);
        assert_eq!(TensorType::of(&out[0]).to_string(), "float32[2, (3)]", "{mode:?}");
    }
    Ok(())
}

#[test]
fn call_refuses_a_partition_that_is_not_uniform_for_a_uniform_input() -> ragtime::Result<()> {
    let g = Graph::new();
    let x = g.input("x", uniform_type(2));
    let y = x.get(s![.., 1]);
    for mode in modes() {
        let f = g.compile_with(&[&x], &[&y], mode)?;
        // Rows of equal length are not enough: the partition must be built uniform.
        let e = f.call(&[ragged![[1.0f32, 2.0], [3.0, 4.0]]?]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes, "{mode:?}: {e}");
        assert!(e.to_string().contains("float32[?, (2)]") && e.to_string().contains("x"), "{mode:?}: {e}");
        // Another row length is refused too.
        let three = ragged![[1.0f32, 2.0, 3.0]]?.with_uniform_rows(0, 3)?;
        assert_eq!(f.call(&[three]).unwrap_err().kind(), ErrorKind::IncompatibleShapes, "{mode:?}");
        let ok = ragged![[1.0f32, 2.0], [3.0, 4.0]]?.with_uniform_rows(0, 2)?;
        assert_eq!(f.call(&[ok])?[0].to_vec::<f32>()?, [2.0, 4.0], "{mode:?}");
    }
    // Marking rows of different lengths uniform is an invalid partition, naming the row.
    let e = ragged![[1.0f32, 2.0], [3.0]]?.with_uniform_rows(0, 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    assert!(e.to_string().contains("row 1"), "{e}");
    Ok(())
}

#[test]
fn debugprint_shows_uniform_dims() -> ragtime::Result<()> {
    let g = Graph::new();
    let v = g.input("v", TensorType::vector(DType::F32));
    let x = ops::from_uniform_row_length(&v, 3);
    let y = ((&x * 2.0).get(s![.., -1]) + x.get(s![.., 0])).named("ends");
    golden("uniform_rows_graph_types.txt", &g.debugprint(&[&y])?);
    let f = g.compile_with(&[&v], &[&y], Mode::FastCompile)?;
    golden("uniform_rows_function_types.txt", &f.debugprint_types());
    Ok(())
}

#[test]
fn graph_files_carry_uniform_row_lengths() -> ragtime::Result<()> {
    let text = r#"{
      "format": "ragged-conformance/1",
      "group": "uniform",
      "cases": [{
        "name": "uniform/index_inner",
        "inputs": {"x": {"dtype": "int32", "ragged_rank": 2, "uniform_row_lengths": [2, null],
                         "value": [[[1], [2, 3]], [[], [4]], [[5, 6], [7]]]}},
        "nodes": [{"out": "y", "op": "getitem", "in": ["x"], "attrs": {"key": ":, 1"}},
                  {"out": "z", "op": "multiply", "in": ["x", {"const": {"dtype": "int32", "value": 10}}]}],
        "outputs": ["y", "z"]
      }]
    }"#;
    let file = CaseFile::parse(text)?;
    let case = &file.cases[0];
    for mode in modes() {
        let built = case.build(mode)?;
        assert_eq!(built.function.input_types()[0].to_string(), "int32[3, (2), *]");
        let out = built.function.call(&built.inputs)?;
        assert_eq!(out[0].to_string(), "<Ragged int32 [[2, 3], [4], [7]]>", "{mode:?}");
        // Round trip: the output keeps its uniform partition through the file format.
        let json = value_to_json(&out[1]);
        assert_eq!(json["uniform_row_lengths"], serde_json::json!([2, null]), "{json}");
        let back = parse_value(&json)?;
        assert!(back.equals(&out[1]));
        assert_eq!(TensorType::of(&back), TensorType::of(&out[1]));
        assert_eq!(TensorType::of(&back).to_string(), "int32[3, (2), *]");
    }
    // A value without the field loads as before (ragged); a wrong field is refused.
    let plain = parse_value(&serde_json::json!({"dtype": "int32", "ragged_rank": 1, "value": [[1, 2], [3, 4]]}))?;
    assert_eq!(TensorType::of(&plain).to_string(), "int32[2, *]");
    assert!(value_to_json(&plain).get("uniform_row_lengths").is_none());
    for (bad, kind) in [
        (serde_json::json!([3]), ErrorKind::InvalidRowPartition),
        (serde_json::json!([2, 2]), ErrorKind::InvalidValue),
        (serde_json::json!(["2"]), ErrorKind::InvalidValue),
    ] {
        let doc = serde_json::json!({"dtype": "int32", "ragged_rank": 1, "uniform_row_lengths": bad,
                                     "value": [[1, 2], [3, 4]]});
        assert_eq!(parse_value(&doc).unwrap_err().kind(), kind, "{bad}");
    }
    Ok(())
}
