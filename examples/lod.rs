//! PaddlePaddle LoD tensors in ragtime: a two-level LoD (documents of sentences of words) is a ragged
//! tensor of ragged rank 2; offset-based LoD = nested row splits, length-based LoD = nested row lengths.
//! Run with `cargo run --release --example lod`.

use ragtime::prelude::*;
use ragtime::{DenseTensor, Result};

fn main() -> Result<()> {
    // 2 documents: the first has 2 sentences, the second 1; the sentences have 2, 2 and 3 words;
    // each word is a 2-d feature vector.
    let words = DenseTensor::from_vec(vec![7, 2], (1..=14).map(|v| v as f32).collect())?;
    let by_offsets = RaggedTensor::from_lod(words.clone(), &[vec![0, 2, 3], vec![0, 2, 4, 7]])?;
    let by_lengths = RaggedTensor::from_recursive_sequence_lengths(words, &[vec![2, 1], vec![2, 2, 3]])?;
    println!("from_lod:                         {by_offsets}");
    println!("from_recursive_sequence_lengths:  {by_lengths}");
    println!("same tensor: {}", by_offsets.equals(&by_lengths));
    println!("lod()                        = {:?}", by_offsets.lod());
    println!("recursive_sequence_lengths() = {:?}", by_offsets.recursive_sequence_lengths());

    // Sequence pooling, as Paddle's sequence_pool does per level: average the words of each
    // sentence, then the sentences of each document.
    let g = Graph::new();
    let docs = g.input("docs", TensorType::ragged(DType::F32, 2).with_inner(&[Some(2)]));
    let sentence_mean = docs.reduce_mean(2);
    let doc_mean = sentence_mean.reduce_mean(1);
    let sentence_len = docs.row_lengths(2);
    let f = compile(&[&docs], &[&sentence_mean, &doc_mean, &sentence_len])?;
    let out = f.call(&[by_offsets])?;
    println!("mean over words of each sentence     = {}", out[0]);
    println!("mean over sentences of each document = {}", out[1]);
    println!("words per sentence (row_lengths(2))  = {}", out[2]);

    // A bad LoD is refused with the offending level and row.
    match RaggedTensor::from_lod(DenseTensor::vector(vec![1.0f32, 2.0]), &[vec![0, 1, 3]]) {
        Ok(v) => println!("unexpected: {v}"),
        Err(e) => println!("bad LoD -> {} error: {e}", e.kind()),
    }
    Ok(())
}
