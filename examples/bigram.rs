//! The seed's bigram-embedding pipeline: a batch of queries (ragged strings) -> word and bigram hash
//! buckets -> embedding rows -> the mean embedding of each query. Run with `cargo run --release --example bigram`.

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{DenseTensor, Result};

const BUCKETS: i64 = 1024;
const DIM: usize = 4;

fn main() -> Result<()> {
    let g = Graph::new();
    let queries = g.input("queries", TensorType::ragged(DType::String, 1));
    let table = g.input("table", TensorType::dense(DType::F32, &[Some(BUCKETS as usize), Some(DIM)]));

    // Word embeddings.
    let word_buckets = strings::to_hash_bucket_fast(&queries, BUCKETS);
    let word_emb = ops::embedding_lookup(&table, &word_buckets);
    // Bigrams: pad each query with "#" on both sides, then join neighbours.
    let marker_shape = ops::stack(&[&queries.nrows(), &queries.nrows().scalar_like(1)], 0);
    let marker = ops::fill(&marker_shape, &queries.scalar_like("#"));
    let padded = ops::concat(&[&marker, &queries, &marker], 1);
    let bigrams = strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+").named("bigrams");
    let bigram_emb = ops::embedding_lookup(&table, &strings::to_hash_bucket_fast(&bigrams, BUCKETS));
    // Average all embeddings of each query.
    let all = ops::concat(&[&word_emb, &bigram_emb], 1);
    let avg = all.reduce_mean(1).named("avg");

    let f = compile(&[&queries, &table], &[&bigrams, &avg])?;
    println!("{}", f.debugprint());

    // The deterministic table of the conformance case: row r is [4r, 4r+1, 4r+2, 4r+3] / 1000.
    let table_value = DenseTensor::from_vec(
        vec![BUCKETS as usize, DIM],
        (0..BUCKETS as usize * DIM).map(|i| i as f32 / 1000.0).collect(),
    )?;
    let batch = ragged![["Who", "is", "Dan", "Smith"], ["Pause"], ["Will", "it", "rain", "later", "today"]]?;
    let out = f.call(&[batch.clone(), table_value.into()])?;
    println!("queries = {batch}");
    println!("bigrams = {}", out[0]);
    println!("avg     = {}", out[1]);
    Ok(())
}
