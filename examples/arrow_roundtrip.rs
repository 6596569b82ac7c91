//! Arrow list columns in, a compiled ragtime function, Arrow list columns out.
//!
//! Builds two Arrow columns the way a query engine or a Parquet reader hands them over
//! (`List<Float32>` scores and `List<Utf8>` tokens, with a null row), converts them into ragged
//! tensors with `ragtime_arrow` (the float values are adopted, not copied), runs a compiled
//! softmax and row statistics on them, and converts the results back into Arrow arrays that share
//! ragtime's buffers. Run with `cargo run --release --example arrow_roundtrip`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float32Type;
use arrow_array::{Array, ArrayRef, ListArray, StringArray};
use ragtime::prelude::*;
use ragtime::Result;
use ragtime_arrow::{FromArrow, NullLists};

fn main() -> Result<()> {
    // Scores per user session; session 2 has no scores (a null list).
    let scores: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Float32Type, _, _>([
        Some(vec![Some(1.0), Some(2.0), Some(3.0)]),
        Some(vec![Some(0.5)]),
        None,
        Some(vec![Some(-1.0), Some(1.0)]),
    ]));
    let tokens: ArrayRef = Arc::new(ListArray::new(
        Arc::new(arrow_schema::Field::new_list_field(arrow_schema::DataType::Utf8, true)),
        arrow_buffer::OffsetBuffer::from_lengths([2, 1, 0, 3]),
        Arc::new(StringArray::from(vec!["to", "be", "or", "not", "to", "be"])),
        None,
    ));
    println!("Arrow scores: {}", scores.data_type());

    // Null lists are refused unless a policy says what they mean: here, an empty session.
    let read = FromArrow::new().null_lists(NullLists::AsEmpty);
    let x = read.convert("scores", scores)?;
    let words = read.convert("tokens", tokens)?;
    println!("as ragged tensors: {x}\n                   {words}");

    let g = Graph::new();
    let scores_in = g.input("scores", TensorType::ragged(DType::F32, 1));
    let tokens_in = g.input("tokens", TensorType::ragged(DType::String, 1));
    let probabilities = scores_in.softmax();
    let best = scores_in.reduce_max(1);
    let lengths = tokens_in.row_lengths(1);
    let f = compile(&[&scores_in, &tokens_in], &[&probabilities, &best, &lengths])?;
    let out = f.call(&[x, words])?;

    let probabilities = ragtime_arrow::to_arrow(&out[0])?;
    let best = ragtime_arrow::to_arrow(&out[1])?;
    let lengths = ragtime_arrow::to_arrow(&out[2])?;
    println!("softmax per session ({}):", probabilities.data_type());
    for (i, row) in probabilities.as_list::<i64>().iter().enumerate() {
        let row = row.map(|r| r.as_primitive::<Float32Type>().values().to_vec()).unwrap_or_default();
        println!("  session {i}: {row:?}");
    }
    println!(
        "best score per session ({}): {:?}",
        best.data_type(),
        best.as_primitive::<Float32Type>().values().as_ref()
    );
    println!(
        "tokens per session ({}): {:?}",
        lengths.data_type(),
        lengths.as_primitive::<arrow_array::types::Int64Type>().values().as_ref()
    );

    // And back: the Arrow arrays convert to tensors equal to the results.
    let again = ragtime_arrow::from_arrow("softmax", probabilities)?;
    assert!(again.equals(&out[0]));
    Ok(())
}
