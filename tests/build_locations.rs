//! Every DSL method that builds an op reports a build error at the caller's line, not at a line
//! inside ragtime (`#[track_caller]` down to `Graph::apply`): each call below is ill-typed, and its
//! error must name this file and the line of the call.

use ragtime::prelude::*;

/// Checks that `v` carries an error built at `line` of this file.
fn assert_built_here(what: &str, v: &Var, line: u32) {
    let err = v.check().expect_err(what);
    let text = err.to_string();
    let here = format!("{}:{line}:", file!());
    assert!(text.contains(&here), "{what}: the error should name the caller's location {here}, got: {text}");
}

/// `assert_built_here` for a call written on one line: `at!(expr)`.
macro_rules! at {
    ($what:literal, $e:expr) => {{
        let (v, line) = ($e, line!());
        assert_built_here($what, &v, line);
    }};
}

#[test]
fn every_family_of_dsl_methods_names_the_callers_line() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let s = g.input("s", TensorType::ragged(DType::String, 1));
    let w = g.input("w", TensorType::dense(DType::F32, &[Some(3), Some(1)]));
    let i = g.input("i", TensorType::ragged(DType::I64, 1));
    let v = g.input("v", TensorType::vector(DType::F32));

    // Elementwise, operators and reductions.
    at!("add", &x + &s);
    at!("tanh", s.tanh());
    at!("cast", s.cast(DType::Bool));
    at!("reduce_sum", x.reduce_sum(5));
    at!("reduce_mean", s.reduce_mean(1));
    at!("argmax", x.argmax(4));
    // Rows.
    at!("softmax", s.softmax());
    at!("cumsum", x.cumsum(3));
    at!("top_k", s.top_k(2).0);
    // Structure.
    at!("matmul", x.matmul(&w));
    at!("concat", x.concat(&[&s], 1));
    at!("stack", x.stack(&[&s], 0));
    at!("tile", x.tile(&[1]));
    at!("reverse", x.reverse(&[9]));
    at!("gather", x.gather(&s));
    at!("embedding_lookup", w.embedding_lookup(&s));
    at!("boolean_mask", x.boolean_mask(&x));
    at!("segment_sum", v.segment_sum(&s));
    at!("unsorted_segment_sum", v.unsorted_segment_sum(&x, 3));
    at!("one_hot", s.one_hot(3));
    at!("expand_dims", x.expand_dims(7));
    at!("merge_dims", x.merge_dims(0, 5));
    at!("get", x.get(s![.., 0]));
    at!("row_lengths", v.row_lengths(1));
    at!("to_tensor", s.bounding_shape_axis(9));
    // Strings.
    at!("split", x.split(None));
    at!("substr", x.substr(0, 1));
    at!("join", x.join(&[&s], "+"));
    at!("length", i.length());
    at!("to_hash_bucket_fast", x.to_hash_bucket_fast(8));
    at!("ngrams", x.ngrams(2, " "));
    at!("regex_full_match", s.regex_full_match("("));
    at!("to_number", x.to_number(DType::F32));
}
