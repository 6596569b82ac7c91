#!/usr/bin/env python3
"""TensorFlow's loss curve for examples/train_text.rs: the same synthetic queries (the same
SplitMix64 stream), the same features (words and `#`-padded bigrams hashed with
`tf.strings.to_hash_bucket_fast`), the same initial parameters and the same SGD steps, so
`tests/train_text.rs` can compare ragtime's loss of each step with TensorFlow's.

Writes tests/train_text/tf_loss_curve.json:
    python3 tools/train_text_tf.py [--out tests/train_text/tf_loss_curve.json]
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

CLASSES = 4
MASK = (1 << 64) - 1

# The run the JSON records (small, so the test is quick).
CONFIG = {"buckets": 4096, "dim": 8, "lr": 8.0}
QUERIES, SEED, BATCH, STEPS = 96, 7, 32, 9


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next_u64() % n


def synthetic(count, seed):
    """examples/train_text.rs's `synthetic`, draw for draw."""
    rng = SplitMix64(seed)
    queries, labels = [], []
    for _ in range(count):
        cls = rng.below(CLASSES)
        length = 3 + rng.below(8)
        forced = rng.below(length)
        words = []
        for i in range(length):
            # Rust's `i == forced || rng.below(10) < 3` draws only when i != forced.
            keyword = i == forced or rng.below(10) < 3
            words.append(f"k{cls}_{rng.below(40)}" if keyword else f"w{rng.below(2000)}")
        queries.append(words)
        labels.append(cls)
    return queries, labels


def initial_parameters(buckets, dim):
    k = np.arange(buckets * dim, dtype=np.int64)
    table = ((((k * 53) % 1000) / 1000.0 - 0.5).astype(np.float32) / np.float32(10)).reshape(buckets, dim)
    k = np.arange(dim * CLASSES, dtype=np.int64)
    weights = ((((k * 29) % 100) / 100.0) - 0.5).astype(np.float32).reshape(dim, CLASSES)
    return table, weights, np.zeros(CLASSES, np.float32)


def features(queries, buckets):
    words = tf.ragged.constant(queries, dtype=tf.string)
    marker = tf.fill([words.nrows(), 1], "#")
    padded = tf.concat([marker, words, marker], axis=1)
    bigrams = tf.strings.join([padded[:, :-1], padded[:, 1:]], separator="+")
    return tf.concat(
        [tf.strings.to_hash_bucket_fast(words, buckets), tf.strings.to_hash_bucket_fast(bigrams, buckets)], axis=1
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "train_text",
                                                      "tf_loss_curve.json"))
    args = parser.parse_args()
    buckets, dim, lr = CONFIG["buckets"], CONFIG["dim"], CONFIG["lr"]
    queries, labels = synthetic(QUERIES, SEED)
    table, weights, bias = initial_parameters(buckets, dim)
    E, W, b = tf.Variable(table), tf.Variable(weights), tf.Variable(bias)
    losses = []
    batches = [(s, min(s + BATCH, QUERIES)) for s in range(0, QUERIES, BATCH)]
    for step in range(STEPS):
        start, end = batches[step % len(batches)]
        ids = features(queries[start:end], buckets)
        onehot = tf.one_hot(labels[start:end], CLASSES)
        with tf.GradientTape() as tape:
            hidden = tf.reduce_mean(tf.gather(E, ids), axis=1)
            logits = hidden @ W + b
            loss = tf.reduce_mean(tf.reduce_logsumexp(logits, axis=1) - tf.reduce_sum(onehot * logits, axis=1))
        dE, dW, db = tape.gradient(loss, [E, W, b])
        E.assign_sub(lr * tf.convert_to_tensor(dE))
        W.assign_sub(lr * dW)
        b.assign_sub(lr * db)
        losses.append(float(loss.numpy()))
    out = {
        "about": "TensorFlow " + tf.__version__ + "'s loss per SGD step of examples/train_text.rs's model "
                 "(tools/train_text_tf.py)",
        "config": CONFIG,
        "queries": QUERIES,
        "seed": SEED,
        "batch": BATCH,
        "steps": STEPS,
        "first_query": queries[0],
        "losses": losses,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}: {losses}")


if __name__ == "__main__":
    main()
