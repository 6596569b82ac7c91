//! torch nested (jagged) tensors in ragtime: `values` of shape `[sum(len), D]` plus `offsets` of shape
//! `[B + 1]` are the flat values and row splits of a ragged tensor. Reductions over the jagged dim are
//! per-row reductions. Run with `cargo run --release --example jagged`.

use ragtime::prelude::*;
use ragtime::{DenseTensor, Result};

fn main() -> Result<()> {
    // A batch of 3 sequences of lengths 2, 0 and 3, each item a 2-d vector.
    let values = DenseTensor::from_vec(vec![5, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])?;
    let nt = RaggedTensor::from_jagged(values, vec![0, 2, 2, 5])?;
    println!("jagged tensor: {nt}");
    println!("offsets() = {:?}", nt.offsets()?);
    println!("values()  = {}", nt.values()?);
    println!("shape     = {:?} (None marks the jagged dim)", nt.shape());

    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1).with_inner(&[Some(2)]));
    let sum = x.reduce_sum(1);
    let mean = x.reduce_mean(1);
    let max = x.reduce_max(1);
    let lengths = x.row_lengths(1);
    let f = compile(&[&x], &[&sum, &mean, &max, &lengths])?;
    let out = f.call(&[nt])?;
    println!("sum over the jagged dim  = {}", out[0]);
    println!("mean over the jagged dim = {}  (an empty sequence gives NaN, as in TensorFlow)", out[1]);
    println!("max over the jagged dim  = {}  (an empty sequence gives the lowest float32)", out[2]);
    println!("lengths                  = {}", out[3]);
    Ok(())
}
