//! A tour of ragtime, following the TensorFlow ragged-tensor guide: building ragged tensors from every
//! encoding, elementwise ops, broadcasting (and its errors), reductions, LoD and jagged views, and
//! `debugprint`. Run with `cargo run --release --example tour`.
//!
//! More: `--example bigram` (strings and embeddings), `--example lod` (PaddlePaddle), `--example jagged` (torch).

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{DenseTensor, Result};

fn section(title: &str) {
    println!("\n=== {title} ===");
}

fn main() -> Result<()> {
    section("1. Ragged tensors from every encoding");
    let digits = ragged![[3, 1, 4, 1], [], [5, 9, 2], [6], []]?;
    let words = ragged![["So", "long"], ["thanks", "for", "all", "the", "fish"]]?;
    println!("literal:              {digits}");
    println!("strings:              {words}");
    let values = DenseTensor::vector(vec![3, 1, 4, 1, 5, 9, 2]);
    println!("from_row_splits:      {}", RaggedTensor::from_row_splits(values.clone(), vec![0, 4, 4, 6, 7])?);
    println!("from_row_lengths:     {}", RaggedTensor::from_row_lengths(values.clone(), &[4, 0, 2, 1])?);
    println!(
        "from_value_rowids:    {}",
        RaggedTensor::from_value_rowids(values.clone(), &[0, 0, 0, 0, 2, 2, 3], Some(5))?
    );
    let flat = DenseTensor::vector((10..20).collect::<Vec<i32>>());
    println!(
        "from_nested_row_splits: {}",
        RaggedTensor::from_nested_row_splits(flat, &[vec![0, 1, 1, 5], vec![0, 3, 3, 5, 9, 10]])?
    );
    let rows = ragged![[10, 11, 12], [13, 14], [15, 16, 17, 18], [19]]?;
    println!("from_uniform_row_length(2): {}", RaggedTensor::from_uniform_row_length(rows, 2)?);
    let padded = DenseTensor::from_vec(vec![3, 4], vec![1, 3, -1, -1, 2, -1, -1, -1, 4, 5, 8, 9])?;
    println!("from_tensor(padding=-1): {}", RaggedTensor::from_tensor(&padded, None, Some(&DenseTensor::scalar(-1)))?);
    let (indices, vals, shape) = digits.to_sparse()?;
    println!("to_sparse -> from_sparse: {}", RaggedTensor::from_sparse(&indices, &vals, &shape)?);
    println!("to_tensor:            {}", RaggedTensor::dense(digits.to_tensor(None, None)?));
    println!(
        "row_splits {:?}, row_lengths {}, bounding_shape {:?}",
        digits.row_splits()?,
        digits.row_lengths(1)?,
        digits.bounding_shape()
    );
    match RaggedTensor::from_row_splits(DenseTensor::vector(vec![1, 2, 3]), vec![0, 2, 1, 3]) {
        Ok(v) => println!("unexpected: {v}"),
        Err(e) => println!("bad splits -> {} error: {e}", e.kind()),
    }
    match ragged![[1, 2], ["three"]] {
        Ok(v) => println!("unexpected: {v}"),
        Err(e) => println!("mixed literal -> {} error: {e}", e.kind()),
    }

    section("2. Elementwise ops, compiled once and called on data");
    let g = Graph::new();
    let x = g.input("digits", TensorType::ragged(DType::I32, 1));
    let plus3 = &x + 3;
    let affine = &x * 2 + 1;
    let squared = x.square();
    let f = compile(&[&x], &[&plus3, &affine, &squared])?;
    let out = f.call(std::slice::from_ref(&digits))?;
    println!("digits + 3      = {}", out[0]);
    println!("digits * 2 + 1  = {}", out[1]);
    println!("square(digits)  = {}", out[2]);
    let xf = g.input("xf", TensorType::ragged(DType::F32, 1));
    let squashed = ops::tanh(&(&xf * 2.0 + 1.0));
    let f = compile(&[&xf], &[&squashed])?;
    println!("tanh(x * 2 + 1) = {}", f.call(&[ragged![[0.5, -1.25], [3.0], [-4.5, 2.0, 0.0]]?])?[0]);

    section("3. Broadcasting");
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1));
    let c = g.input("c", TensorType::dense(DType::I32, &[None, Some(1)]));
    let f = compile(&[&x, &c], &[&(&x + &c)])?;
    let rows = ragged![[10, 87, 12], [19, 53], [12, 32]]?;
    let column: RaggedTensor = DenseTensor::from_vec(vec![3, 1], vec![1000, 2000, 3000])?.into();
    println!("ragged + column per row = {}", f.call(&[rows.clone(), column])?[0]);
    let wrong: RaggedTensor = DenseTensor::from_vec(vec![2, 1], vec![1, 2])?.into();
    match f.call(&[rows, wrong]) {
        Ok(v) => println!("unexpected: {}", v[0]),
        Err(e) => println!("3 rows + 2-row column -> {} error: {e}", e.kind()),
    }
    let z = g.input("z", TensorType::ragged(DType::I32, 1));
    let f = compile(&[&x, &z], &[&(&x + &z)])?;
    match f.call(&[ragged![[1, 2, 3], [4], [5, 6]]?, ragged![[10, 20], [30, 40], [50]]?]) {
        Ok(v) => println!("unexpected: {}", v[0]),
        Err(e) => println!("rows of different lengths -> {} error: {e}", e.kind()),
    }
    let f32x = g.input("f", TensorType::ragged(DType::F32, 1));
    match compile(&[&x, &f32x], &[&(&x + &f32x)]) {
        Ok(_) => println!("unexpected: int32 + float32 compiled"),
        Err(e) => println!("int32 + float32 -> {} error at build time: {e}", e.kind()),
    }

    section("4. Reductions (empty rows follow TensorFlow)");
    let g = Graph::new();
    let x = g.input("digits", TensorType::ragged(DType::I32, 1));
    let outs =
        [x.reduce_sum(1), x.reduce_mean(1), x.reduce_max(1), x.reduce_min(-1), x.reduce_sum(0), x.reduce_prod(None)];
    let f = compile(&[&x], &outs.iter().collect::<Vec<_>>())?;
    let out = f.call(std::slice::from_ref(&digits))?;
    for (name, v) in [
        "reduce_sum(axis=1)",
        "reduce_mean(axis=1)",
        "reduce_max(axis=1)",
        "reduce_min(axis=-1)",
        "reduce_sum(axis=0)",
        "reduce_prod(all)",
    ]
    .iter()
    .zip(&out)
    {
        println!("{name:20} = {v}");
    }

    section("5. Indexing, structure and strings");
    let g = Graph::new();
    let q = g.input("q", TensorType::ragged(DType::String, 1));
    let first2 = q.get(s![.., ..2]);
    let last2 = q.get(s![.., -2..]);
    let row1 = q.get(1);
    let joined = strings::reduce_join(&q, Some(1), " ");
    let pal = ops::concat(&[&q, &ops::reverse(&q, &[1])], 1);
    let f = compile(&[&q], &[&first2, &last2, &row1, &joined, &pal])?;
    let out = f.call(&[ragged![
        ["Who", "is", "George", "Washington"],
        ["What", "is", "the", "weather", "tomorrow"],
        ["Goodnight"]
    ]?])?;
    for (name, v) in ["q[:, :2]", "q[:, -2:]", "q[1]", "reduce_join", "concat(q, reverse(q))"].iter().zip(&out) {
        println!("{name:22} = {v}");
    }

    section("6. LoD (PaddlePaddle) and jagged (torch) views of the same partitions");
    let flat = DenseTensor::from_vec(vec![7, 2], (1..=14).collect::<Vec<i32>>())?;
    let lod = RaggedTensor::from_lod(flat, &[vec![0, 2, 3], vec![0, 2, 4, 7]])?;
    println!("from_lod([[0,2,3],[0,2,4,7]]) = {lod}");
    println!("lod() = {:?}, recursive_sequence_lengths() = {:?}", lod.lod(), lod.recursive_sequence_lengths());
    let values = DenseTensor::from_vec(vec![5, 2], (0..10).map(|v| v as f32).collect::<Vec<_>>())?;
    let nt = RaggedTensor::from_jagged(values, vec![0, 2, 2, 5])?;
    println!("from_jagged(values [5, 2], offsets [0, 2, 2, 5]) = {nt}");
    println!("offsets() = {:?}, values() shape = {:?}", nt.offsets()?, nt.values()?.flat_values().shape());

    section("7. debugprint: the graph before and after compile()");
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let softmax = (&e / e.reduce_sum(keepdims(1))).named("softmax");
    println!("{}", g.debugprint(&[&softmax])?);
    let f = compile(&[&x], &[&softmax])?;
    println!("{}", f.debugprint());
    println!(
        "softmax([[1, 1], [], [5], [0, 1, 2]]) = {}",
        f.call(&[ragged![[1.0, 1.0], [], [5.0], [0.0, 1.0, 2.0]]?])?[0]
    );

    section("More");
    println!("cargo run --release --example bigram   # word + bigram embeddings of ragged string queries");
    println!("cargo run --release --example lod      # PaddlePaddle LoD: two-level sequences, offsets vs lengths");
    println!("cargo run --release --example jagged   # torch jagged values + offsets, reductions over the jagged dim");
    println!("cargo run --release -p ragtime-cli -- conformance tests/conformance   # every TensorFlow case");
    Ok(())
}
