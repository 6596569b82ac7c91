//! The DSL: operators, TensorFlow-named methods, deferred errors, compile() and Function::call.

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{ErrorKind, Mode};

fn digits() -> RaggedTensor {
    ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []].unwrap()
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

#[test]
fn operators_follow_the_seed_walkthrough() {
    // seed_walkthrough/times_two_plus_one and add_scalar, written with operators.
    let g = Graph::new();
    let x = g.input("digits", TensorType::ragged(DType::I32, 1));
    let y = &x * 2 + 1;
    let z = 3 + &x;
    let f = compile(&[&x], &[&y, &z]).unwrap();
    let out = f.call(&[digits()]).unwrap();
    assert_eq!(out[0].to_string(), "<Ragged int32 [[7, 3, 9, 3], [], [11, 19, 5], [13], []]>");
    assert_eq!(out[1].to_string(), "<Ragged int32 [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>");
}

#[test]
fn methods_reductions_and_keepdims() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let mean = x.reduce_mean(1);
    let centered = &x - x.reduce_mean(keepdims(1));
    let f = compile(&[&x], &[&mean, &centered]).unwrap();
    // One kernel computes the mean once and returns it in both shapes.
    golden("mean_in_two_shapes.txt", &f.debugprint());
    let out = f.call(&[ragged![[1.0, 3.0], [], [2.0]].unwrap()]).unwrap();
    assert_eq!(out[0].to_string(), "<Tensor float32 shape=[3] [2.0, NaN, 2.0]>");
    assert_eq!(out[1].to_string(), "<Ragged float32 [[-1.0, 1.0], [], [0.0]]>");

    // Both shapes returned: still one reduction, with two outputs.
    let kept = x.reduce_mean(keepdims(1));
    let f = compile(&[&x], &[&mean, &kept]).unwrap();
    let listing = f.debugprint();
    // The kernel's title lists its reductions; its inner graph shows the two ops it replaced.
    assert!(listing.contains("JitRowKernel{r0 = reduce_mean(i0)}.1 [id A]"), "{listing}");
    assert!(listing.contains("ReduceMean{axis=1, keepdims=true}") && listing.contains("keepdims=false"), "{listing}");
    assert!(!listing.contains("r1"), "the mean is computed once:\n{listing}");
    let out = f.call(&[ragged![[1.0, 3.0], [], [2.0]].unwrap()]).unwrap();
    assert_eq!(out[0].to_string(), "<Tensor float32 shape=[3] [2.0, NaN, 2.0]>");
    assert_eq!(out[1].to_string(), "<Tensor float32 shape=[3, 1] [[2.0], [NaN], [2.0]]>");
}

#[test]
fn comparisons_are_methods_and_bool_operators_are_logical() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let small = x.less(4);
    let odd = x.floormod(2).equal(1);
    let both = &small & &odd;
    let neither = !(&small | &odd);
    let f = compile(&[&x], &[&both, &neither]).unwrap();
    let out = f.call(&[digits()]).unwrap();
    assert_eq!(out[0].to_string(), "<Ragged bool [[true, true, false, true], [], [false, false, false], [false], []]>");
    assert_eq!(
        out[1].to_string(),
        "<Ragged bool [[false, false, true, false], [], [false, false, false], [true], []]>"
    );
}

#[test]
fn type_errors_are_deferred_to_compile() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let f = g.input("f", TensorType::ragged(DType::F32, 1));
    let bad = (&x + &f).tanh() * 2;
    assert_eq!(bad.ty().unwrap_err().kind(), ErrorKind::TypeMismatch);
    let err = compile(&[&x, &f], &[&bad]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    assert!(err.to_string().contains("Elemwise{add}"), "the error names the op: {err}");
    // A scalar that does not fit the variable's dtype is an invalid value.
    let frac = &x + 2.5;
    assert_eq!(frac.ty().unwrap_err().kind(), ErrorKind::InvalidValue);
}

#[test]
fn call_checks_inputs_before_running() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let f = compile(&[&x], &[&x.reduce_sum(1)]).unwrap();
    let wrong_dtype = ragged![[1.0], [2.0]].unwrap();
    let err = f.call(&[wrong_dtype]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    assert!(err.to_string().contains("\"x\""), "the error names the input: {err}");
    let wrong_rank = ragged![[[1]], [[2]]].unwrap();
    assert_eq!(f.call(&[wrong_rank]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    assert_eq!(f.call(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn compile_refuses_a_missing_input() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let y = g.input("y", TensorType::ragged(DType::I32, 1));
    let err = compile(&[&x], &[&(&x + &y)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph);
    assert!(err.to_string().contains("`y`"), "{err}");
}

#[test]
fn runtime_errors_name_the_node() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let z = g.input("z", TensorType::ragged(DType::I32, 1));
    let f = compile(&[&x, &z], &[&(&x + &z)]).unwrap();
    let err = f.call(&[ragged![[1, 2, 3], [4]].unwrap(), ragged![[1], [2, 3, 4]].unwrap()]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IncompatibleShapes);
    assert!(err.to_string().contains("Elemwise{add}"), "{err}");
}

#[test]
fn the_bigram_pipeline_in_the_dsl() {
    let g = Graph::new();
    let q = g.input("queries", TensorType::ragged(DType::String, 1));
    let table = g.input("table", TensorType::dense(DType::F32, &[None, Some(2)]));
    let marker = ops::fill(&ops::stack(&[&q.nrows(), &q.nrows().scalar_like(1)], 0), &q.scalar_like("#"));
    let padded = ops::concat(&[&marker, &q, &marker], 1);
    let bigrams = strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+");
    let ids = strings::to_hash_bucket_fast(&bigrams, 4);
    let emb = ops::gather(&table, &ids).reduce_mean(1);
    let f = compile(&[&q, &table], &[&bigrams, &emb]).unwrap();
    let table_value: RaggedTensor =
        ragtime::DenseTensor::from_vec(vec![4, 2], vec![0.0f32, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]).unwrap().into();
    let out = f.call(&[ragged![["a", "b"], ["c"]].unwrap(), table_value]).unwrap();
    assert_eq!(out[0].to_string(), "<Ragged string [[\"#+a\", \"a+b\", \"b+#\"], [\"#+c\", \"c+#\"]]>");
    assert_eq!(out[1].flat_values().shape(), &[2, 2]);
}

#[test]
fn debugprint_of_a_compiled_function() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let softmax = (&e / e.reduce_sum(keepdims(1))).named("softmax");
    let f = compile(&[&x], &[&softmax]).unwrap();
    golden("softmax_function.txt", &f.debugprint());
    let unfused = g.compile_with(&[&x], &[&softmax], ragtime::Mode::FastCompile).unwrap();
    golden("softmax_function_fast_compile.txt", &unfused.debugprint());
    let value = ragged![[1.0f32, 2.0, 3.0], [], [-1.0]].unwrap();
    let (fused, reference) = (f.call(std::slice::from_ref(&value)).unwrap(), unfused.call(&[value]).unwrap());
    // The JIT's exp is a polynomial: equal within the conformance tolerance, not bit for bit.
    if let Err(why) = ragtime::case::compare(&reference[0], &fused[0]) {
        panic!("the compiled softmax differs from the interpreted one: {why}");
    }
    golden("softmax_graph_types.txt", &g.debugprint(&[&softmax]).unwrap());
    let out = f.call(&[ragged![[1.0, 1.0], [], [5.0]].unwrap()]).unwrap();
    assert_eq!(out[0].to_string(), "<Ragged float32 [[0.5, 0.5], [], [1.0]]>");
}

#[test]
fn debug_mode_verifies_and_runs() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let y = x.get(s![.., -2..]).reduce_sum(-1);
    let f = g.compile_with(&[&x], &[&y], Mode::Debug).unwrap();
    let out = f.call(&[digits()]).unwrap();
    assert_eq!(out[0].to_string(), "<Tensor int32 shape=[5] [5, 0, 11, 6, 0]>");
}

#[test]
fn functions_are_shared_across_threads() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let f = std::sync::Arc::new(compile(&[&x], &[&x.reduce_sum(1)]).unwrap());
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let f = f.clone();
            std::thread::spawn(move || f.call(&[digits()]).unwrap()[0].to_string())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), "<Tensor int32 shape=[5] [9, 0, 16, 6, 0]>");
    }
}

#[test]
fn reductions_over_several_axes() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 2));
    let sum = x.reduce_sum([1, 2]);
    let mean = x.reduce_mean(keepdims([-2, -1]));
    let f = compile(&[&x], &[&sum, &mean]).unwrap();
    let out = f.call(&[ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap()]).unwrap();
    assert_eq!(out[0].to_string(), "<Tensor int32 shape=[4] [10, 11, 7, 27]>");
    // The mean divides by the number of values of each row (10 / 4, 11 / 2, ...), not a mean of means.
    assert_eq!(out[1].to_string(), "<Tensor float64 shape=[4, 1, 1] [[[2.5]], [[5.5]], [[7.0]], [[9.0]]]>");
    let dup = x.reduce_sum([1, -2]);
    assert_eq!(dup.ty().unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn from_tensor_with_a_ragged_rank_and_bounding_shape_of_one_axis() {
    // Laws (the ops themselves are checked against TensorFlow by tests/conformance_extra's
    // forms_more cases): from_tensor with any ragged rank and no padding keeps every item, so
    // to_tensor gives the tensor back; bounding_shape(axis) is that entry of bounding_shape().
    let g = Graph::new();
    let t = g.input("t", TensorType::dense(DType::I32, &[None, None, None]));
    let r2 = ops::from_tensor_ragged_rank(&t, None, 2);
    let trimmed = ops::from_tensor_ragged_rank(&t, Some(Literal::Int(0)), 2);
    let axis2 = trimmed.bounding_shape_axis(2);
    let axis_past = trimmed.bounding_shape_axis(3);
    let all = trimmed.bounding_shape();
    assert_eq!(r2.ty().unwrap().to_string(), "int32[?, *, *]");
    let f = compile(&[&t], &[&r2.to_tensor(), &r2.nrows(), &axis2, &all]).unwrap();
    let value: RaggedTensor =
        DenseTensor::from_vec(vec![2, 2, 3], vec![1, 0, 0, 2, 3, 0, 0, 0, 0, 4, 5, 6]).unwrap().into();
    let out = f.call(std::slice::from_ref(&value)).unwrap();
    assert!(out[0].equals(&value), "to_tensor(from_tensor(t, ragged_rank=2)) = {}, want {value}", out[0]);
    assert_eq!(out[1].to_vec::<i64>().unwrap(), vec![2], "nrows");
    let all: Vec<i64> = out[3].to_vec().unwrap();
    // The last row [4, 5, 6] has no padding, so trimming leaves the bounding shape the tensor's.
    let shape: Vec<i64> = value.flat_values().shape().iter().map(|&d| d as i64).collect();
    assert_eq!(all, shape, "bounding shape of the trimmed rows");
    assert_eq!(out[2].to_vec::<i64>().unwrap(), vec![all[2]], "bounding_shape_axis(2)");
    assert!(axis_past.check().is_err(), "axis 3 of a rank-3 tensor must be a build error");
    let bad = ops::from_tensor_ragged_rank(&t, None, 0);
    assert!(bad.check().is_err(), "ragged_rank 0 must be a build error");
}

/// The gradient of a ragged softmax cross-entropy-like cost, printed before optimization (the
/// backward nodes the VJPs built, as the user's graph holds them) and after (`FastRun`: the same
/// graph merged, rewritten and fused), and its values checked against the unoptimized graph.
#[test]
fn debugprint_of_a_gradient_graph_before_and_after_optimization() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let w = g.input("w", TensorType::scalar(DType::F32));
    let cost = (x.log_softmax() * &w).reduce_sum(None).named("cost");
    let grads = ragtime::grad(&cost, &[&x, &w]).unwrap();
    let (dx, dw) = (grads[0].clone().named("dx"), grads[1].clone().named("dw"));
    golden("grad_graph_types.txt", &g.debugprint(&[&dx, &dw]).unwrap());
    let f = compile(&[&x, &w], &[&dx, &dw]).unwrap();
    golden("grad_function.txt", &f.debugprint());
    let reference = g.compile_with(&[&x, &w], &[&dx, &dw], Mode::FastCompile).unwrap();
    let args = [ragged![[1.0f32, 2.0, 3.0], [], [-1.0]].unwrap(), RaggedTensor::from(DenseTensor::scalar(0.5f32))];
    let (got, want) = (f.call(&args).unwrap(), reference.call(&args).unwrap());
    for (a, b) in want.iter().zip(&got) {
        if let Err(why) = ragtime::case::compare(a, b) {
            panic!("the optimized gradient differs from the unoptimized one: {why}");
        }
    }
    // The gradient is laid out in x's rows.
    assert_eq!(got[0].row_splits().unwrap(), args[0].row_splits().unwrap());
}
