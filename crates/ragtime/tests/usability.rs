//! The user's view of ragtime (issue 9): data in and out with plain Rust types, typed literals,
//! readable errors, ops as methods, option builders, and the keepdims hint, all through the prelude.

use ragtime::prelude::*;

fn modes() -> [Mode; 3] {
    [Mode::FastRun, Mode::FastCompile, Mode::Debug]
}

#[test]
fn a_batch_of_strings_goes_in_and_comes_out_as_rust_strings() -> ragtime::Result<()> {
    let g = Graph::new();
    let s = g.input("s", TensorType::vector(DType::String));
    let words = s.lower().split(Some(" "));
    let f = compile(&[&s], &[&words])?;
    let batch = vec!["Hello World", "", "ragged TENSORS here"];
    let out = f.call(&[batch.into()])?;
    let nested = out[0].to_nested::<Vec<Vec<String>>>()?;
    assert_eq!(nested, vec![vec!["hello", "world"], vec![""], vec!["ragged", "tensors", "here"]]);
    let rows: Vec<Vec<&str>> = out[0].string_rows()?.map(|r| r.to_strs()).collect::<ragtime::Result<_>>()?;
    assert_eq!(rows[2], ["ragged", "tensors", "here"]);
    Ok(())
}

#[test]
fn typed_literals_and_vectors_feed_inputs_of_their_dtype() -> ragtime::Result<()> {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I64, 1));
    let y = x.reduce_sum(1);
    let f = compile(&[&x], &[&y])?;
    let out = f.call(&[ragged![[1i64 << 40, 2], []]?])?;
    assert_eq!(out[0].to_vec::<i64>()?, [(1i64 << 40) + 2, 0]);
    let out = f.call(&[RaggedTensor::try_from(vec![vec![5i64], vec![1, 2, 3]])?])?;
    assert_eq!(out[0].to_vec::<i64>()?, [5, 6]);
    let e = f.call(&[ragged![[1, 2]]?]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch, "an unsuffixed literal stays int32, as in TensorFlow");
    Ok(())
}

#[test]
fn forgetting_keepdims_is_explained_in_every_mode() -> ragtime::Result<()> {
    let g = Graph::new();
    let d = g.input("d", TensorType::ragged(DType::F32, 1));
    let wrong = &d - d.reduce_mean(1);
    let right = &d - d.reduce_mean(keepdims(1));
    let data = ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]]?;
    for mode in modes() {
        let f = g.compile_with(&[&d], &[&wrong], mode)?;
        let e = f.call(std::slice::from_ref(&data)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
        assert!(e.to_string().contains("did you mean keepdims=true"), "{mode:?}: {e}");
        let f = g.compile_with(&[&d], &[&right], mode)?;
        let out = f.call(std::slice::from_ref(&data))?;
        assert_eq!(out[0].to_nested::<Vec<Vec<f32>>>()?, vec![vec![-0.5, 0.5], vec![0.0], vec![-1.0, 0.0, 1.0]]);
    }
    Ok(())
}

#[test]
fn errors_print_their_message_in_debug_form() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let first = x.get(s![.., 0]);
    let e = compile(&[&x], &[&first]).unwrap_err();
    let debug = format!("{e:?}");
    assert_eq!(debug, e.to_string(), "`main` returning Result prints this");
    assert!(debug.starts_with("in node GetItem{:, 0}: getitem: invalid index"), "{debug}");
    assert!(format!("{e:#?}").contains("AtNode"), "the structured form stays available");
}

#[test]
fn ops_are_methods_of_var_and_options_are_builders() -> ragtime::Result<()> {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let idx = g.input("idx", TensorType::vector(DType::I64));
    let both = x.concat(&[&x], 1);
    let picked = x.gather(&idx);
    let big = x.boolean_mask(&x.greater(2));
    let padded = x.to_tensor_with(ToTensorOptions::new().default_value(-1).shape([None, Some(4)]));
    let every_other = x.get(s![..;2]);
    let f = compile(&[&x, &idx], &[&both, &picked, &big, &padded, &every_other])?;
    let out = f.call(&[ragged![[3, 1, 4], [], [5]]?, vec![2i64, 0].into()])?;
    assert_eq!(out[0].to_nested::<Vec<Vec<i32>>>()?, vec![vec![3, 1, 4, 3, 1, 4], vec![], vec![5, 5]]);
    assert_eq!(out[1].to_nested::<Vec<Vec<i32>>>()?, vec![vec![5], vec![3, 1, 4]]);
    assert_eq!(out[2].to_nested::<Vec<Vec<i32>>>()?, vec![vec![3, 4], vec![], vec![5]]);
    assert_eq!(out[3].to_nested::<Vec<Vec<i32>>>()?, vec![vec![3, 1, 4, -1], vec![-1; 4], vec![5, -1, -1, -1]]);
    assert_eq!(out[4].to_nested::<Vec<Vec<i32>>>()?, vec![vec![3, 1, 4], vec![5]]);
    let s = g.input("s", TensorType::vector(DType::String));
    let joined = s.join(&[&s.upper()], "-").reduce_join(0, ",");
    let f = compile(&[&s], &[&joined])?;
    assert_eq!(f.call(&[vec!["a", "b"].into()])?[0].to_vec::<String>()?, ["a-A,b-B"]);
    Ok(())
}

#[test]
fn tensors_print_readably() -> ragtime::Result<()> {
    let t = ragged![[1.5f64, 2.0], []]?;
    assert_eq!(t.to_string(), "<Ragged float64 [[1.5, 2.0], []]>");
    assert!(format!("{t:?}").contains("row_splits: [[0, 2, 2]]"), "{t:?}");
    let big = RaggedTensor::from((0..10_000).map(|i| i as f32).collect::<Vec<_>>());
    assert!(big.to_string().len() < 100, "{big}");
    Ok(())
}
