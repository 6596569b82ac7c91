"""W1-W4, W7 and W6 of ../shared/BENCHMARKS.md through the Python bindings, next to numpy, and
TensorFlow, Awkward Array and numba when they are installed (each skipped with a message
otherwise), on the same data in the same process. Every result is checked against numpy before
its time is printed; W7 (string hashing, which numpy lacks) against ragtime's reference
interpreter (mode fast_compile) and, when pyfarmhash is installed, against numpy with pyfarmhash.
Usage: python python/bench/side_by_side.py [--rows 1048576] [--repeat 5]"""

import argparse
import time

import numpy as np
import pyarrow as pa

import ragtime as rt

# W7 (docs/benchmarks.md): the vocabulary, the query lengths, the hash buckets (the embedding
# table's rows) and its width, and the seed of the SplitMix64 stream the queries are drawn from.
VOCABULARY, MAX_WORDS, BUCKETS, DIM, SEED = 5000, 12, 1024, 16, 0x5241_4754_494D_4537


def data(nrows):
    lengths = (np.arange(nrows, dtype=np.int64) * 7919) % 21
    splits = np.zeros(nrows + 1, dtype=np.int64)
    np.cumsum(lengths, out=splits[1:])
    k = np.arange(splits[-1], dtype=np.float64)
    x = (((k * 37) % 1000) / 1000 - 0.5).astype(np.float32)
    z = (((k * 91) % 1000) / 500 - 1).astype(np.float32)
    return x, z, splits


def bigram_data(count):
    """W7's queries (a list of lists of words) and embedding table, the bytes `ragtime bench` uses:
    the same SplitMix64 stream, first the vocabulary, then each query's length and words."""
    mask, state = (1 << 64) - 1, SEED

    def below(n):
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return (z ^ (z >> 31)) % n

    vocabulary, seen = [], set()
    while len(vocabulary) < VOCABULARY:
        word = "".join(chr(97 + below(26)) for _ in range(2 + below(9)))
        if word not in seen:
            seen.add(word)
            vocabulary.append(word)
    queries = [[vocabulary[below(VOCABULARY)] for _ in range(1 + below(MAX_WORDS))] for _ in range(count)]
    k = np.arange(BUCKETS * DIM, dtype=np.int64)
    table = (((k * 53) % 1000) / 1000 - 0.5).astype(np.float32).reshape(BUCKETS, DIM)
    return queries, table


def bigram_graph():
    """W7 in the DSL, as `crates/cli/src/bench/workloads.rs` builds it: hash each word into 1024
    buckets, pad each query with `#`, join neighbours with `+` into bigrams, hash those, look all
    buckets up in the table and average per query."""
    g = rt.Graph()
    queries = g.input("queries", rt.ragged("string", 1))
    table = g.input("table", rt.dense("float32", [BUCKETS, DIM]))
    word_emb = rt.gather(table, rt.strings.to_hash_bucket_fast(queries, num_buckets=BUCKETS))
    marker = rt.fill(rt.stack(rt.nrows(queries), 1, axis=0), g.constant("#"))
    padded = rt.concat(marker, queries, marker, axis=1)
    bigrams = rt.strings.join(rt.getitem(padded, key=":, :-1"), rt.getitem(padded, key=":, 1:"), separator="+")
    bigram_emb = rt.gather(table, rt.strings.to_hash_bucket_fast(bigrams, num_buckets=BUCKETS))
    return [queries, table], rt.reduce_mean(rt.concat(word_emb, bigram_emb, axis=1), axis=1)


def bigram_workloads(queries, table):
    """W7 per system, keyed by system name: each entry makes (or raises ImportError) the function
    timed. numpy needs pyfarmhash for FarmHash Fingerprint64 (TensorFlow's string hash) and makes
    the bigrams in a Python loop. Also the reference output: ragtime's interpreter."""
    words = [w for q in queries for w in q]
    splits = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum([len(q) for q in queries], out=splits[1:])
    column = pa.LargeListArray.from_arrays(pa.array(splits), pa.array(words, pa.large_string()))
    inputs, output = bigram_graph()
    fast, interpreted = rt.compile(inputs, output), rt.compile(inputs, output, mode="fast_compile")
    systems = {"ragtime (Python)": lambda: lambda: fast(column, table).flat_values}

    def numpy_w7():
        import farmhash

        def buckets(strings):
            return np.fromiter((farmhash.fingerprint64(s) % BUCKETS for s in strings), np.int64, len(strings))

        def run():
            bigrams = [a + "+" + b for q in queries for a, b in zip(["#"] + q, q + ["#"])]
            word_sums = np.add.reduceat(table[buckets(words)], splits[:-1])
            bigram_sums = np.add.reduceat(table[buckets(bigrams)], splits[:-1] + np.arange(len(queries)))
            return (word_sums + bigram_sums) / (2 * np.diff(splits) + 1).astype(np.float32)[:, None]

        return run

    systems["numpy"] = numpy_w7

    def tensorflow_w7():
        import tensorflow as tf

        q = tf.RaggedTensor.from_row_splits(tf.constant(words), splits)
        t = tf.constant(table)

        def run():
            word_emb = tf.gather(t, tf.strings.to_hash_bucket_fast(q, BUCKETS))
            marker = tf.fill(tf.stack([q.nrows(), 1]), "#")
            padded = tf.concat([marker, q, marker], axis=1)
            bigrams = tf.strings.join([padded[:, :-1], padded[:, 1:]], separator="+")
            bigram_emb = tf.gather(t, tf.strings.to_hash_bucket_fast(bigrams, BUCKETS))
            return tf.reduce_mean(tf.concat([word_emb, bigram_emb], axis=1), axis=1).numpy()

        return run

    systems["TensorFlow"] = tensorflow_w7
    return systems, interpreted(column, table).flat_values


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def numpy_workloads(x, z, splits):
    starts, nonempty = splits[:-1], np.diff(splits) > 0

    def row_reduce(ufunc, v, empty):
        out = np.full(len(starts), empty, dtype=v.dtype)
        out[nonempty] = ufunc.reduceat(v, starts[nonempty])
        return out

    def w3():
        s = row_reduce(np.add, x * 2 + z, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (s / np.diff(splits)).astype(np.float32)

    def w4():
        lengths = np.diff(splits)
        m = np.repeat(row_reduce(np.maximum, x, -np.inf), lengths)
        e = np.exp(x - m)
        return e / np.repeat(row_reduce(np.add, e, 0), lengths)

    return {
        "W1": lambda: np.tanh(x * 2 + 1) * z - x,
        "W2": lambda: x * 2 + z,
        "W3": w3,
        "W4": w4,
    }


def ragtime_workloads(x, z, splits):
    g = rt.Graph()
    xv = g.input("x", rt.ragged("float32", 1))
    zv = g.input("z", rt.ragged("float32", 1))
    e = rt.exp(xv - rt.reduce_max(xv, axis=1, keepdims=True))
    graphs = {
        "W1": rt.tanh(xv * 2 + 1) * zv - xv,
        "W2": xv * 2 + zv,
        "W3": rt.reduce_mean(xv * 2 + zv, axis=1),
        "W4": e / rt.reduce_sum(e, axis=1, keepdims=True),
    }
    xt = rt.RaggedTensor.from_row_splits(x, splits)
    zt = rt.RaggedTensor.from_row_splits(z, splits)
    functions = {name: rt.compile([xv, zv], out) for name, out in graphs.items()}
    return {name: (lambda f=f: f(xt, zt).flat_values) for name, f in functions.items()}, functions


def tensorflow_workloads(x, z, splits):
    import tensorflow as tf

    xt = tf.RaggedTensor.from_row_splits(x, splits)
    zt = tf.RaggedTensor.from_row_splits(z, splits)

    def w4():
        e = tf.exp(xt - tf.reduce_max(xt, axis=1, keepdims=True))
        return (e / tf.reduce_sum(e, axis=1, keepdims=True)).flat_values.numpy()

    return {
        "W1": lambda: (tf.tanh(xt * 2 + 1) * zt - xt).flat_values.numpy(),
        "W2": lambda: (xt * 2 + zt).flat_values.numpy(),
        "W3": lambda: tf.reduce_mean(xt * 2 + zt, axis=1).numpy(),
        "W4": w4,
    }


def awkward_workloads(x, z, splits):
    import awkward as ak

    xa = ak.unflatten(x, np.diff(splits))
    za = ak.unflatten(z, np.diff(splits))

    def w4():
        e = np.exp(xa - ak.max(xa, axis=1, keepdims=True))
        return ak.to_numpy(ak.flatten(e / ak.sum(e, axis=1, keepdims=True)))

    return {
        "W1": lambda: ak.to_numpy(ak.flatten(np.tanh(xa * 2 + 1) * za - xa)),
        "W2": lambda: ak.to_numpy(ak.flatten(xa * 2 + za)),
        "W3": lambda: ak.to_numpy(ak.fill_none(ak.mean(xa * 2 + za, axis=1), np.nan)).astype(np.float32),
        "W4": w4,
    }


def numba_workloads(x, z, splits):
    import numba

    @numba.njit(parallel=True, fastmath=False)
    def w3(x, z, splits):
        out = np.empty(len(splits) - 1, dtype=np.float32)
        for i in numba.prange(len(splits) - 1):
            s = np.float32(0)
            for k in range(splits[i], splits[i + 1]):
                s += x[k] * 2 + z[k]
            n = splits[i + 1] - splits[i]
            out[i] = s / n if n else np.nan
        return out

    @numba.njit(parallel=True)
    def w1(x, z):
        out = np.empty_like(x)
        for k in numba.prange(len(x)):
            out[k] = np.tanh(x[k] * 2 + 1) * z[k] - x[k]
        return out

    return {"W1": lambda: w1(x, z), "W2": lambda: x * 2 + z, "W3": lambda: w3(x, z, splits)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--release-freed-memory", action="store_true",
                        help="leave glibc's default (large freed blocks go back to the kernel)")
    args = parser.parse_args()
    # As `ragtime bench` does: freed memory stays in the process for every system alike, so large
    # outputs reuse pages instead of faulting in fresh ones on each call.
    kept = False if args.release_freed_memory else rt.retain_freed_memory()
    x, z, splits = data(args.rows)
    # W7's queries scale with the rows as `ragtime bench --rows` scales them (100,000 at 2^20).
    queries, table = bigram_data(max(1, 100_000 * args.rows // (1 << 20)))
    w7_systems, w7_expected = bigram_workloads(queries, table)
    reference = numpy_workloads(x, z, splits)
    ours, functions = ragtime_workloads(x, z, splits)
    systems = {"ragtime (Python)": lambda: ours, "numpy": lambda: reference}
    optional = {"TensorFlow": tensorflow_workloads, "Awkward": awkward_workloads, "numba": numba_workloads}
    for name, make in optional.items():
        systems[name] = lambda make=make: make(x, z, splits)
    expected = {w: fn() for w, fn in reference.items()}
    expected["W7"] = w7_expected
    nwords = sum(len(q) for q in queries)
    print(f"{args.rows} rows, {len(x)} values; W7: {len(queries)} queries, {nwords} words; best of {args.repeat}; seconds; "
          f"freed memory {'kept for reuse' if kept else 'returned to the kernel'}")
    print(f"{'system':<18}" + "".join(f"{w:>12}" for w in expected))
    for system, make in systems.items():
        try:
            workloads = make()
        except ImportError as e:
            print(f"{system:<18}  skipped: {e}")
            continue
        cells = []
        missing = None
        if system in w7_systems:
            try:
                workloads = {**workloads, "W7": w7_systems[system]()}
            except ImportError as e:
                missing = f"W7 skipped: {e}"
        for w, want in expected.items():
            if w not in workloads:
                cells.append(f"{'-':>12}")
                continue
            seconds, got = best(workloads[w], args.repeat)
            np.testing.assert_allclose(np.asarray(got, dtype=np.float32), want, rtol=2e-5, atol=2e-6)
            cells.append(f"{seconds:>12.5f}")
        print(f"{system:<18}" + "".join(cells) + (f"  ({missing})" if missing else ""))
    small = rt.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []], dtype="float32")
    n = 20_000
    rust = min(functions["W3"].time_calls(small, small, repeat=n) for _ in range(3))
    python = min(best(lambda: [functions["W3"](small, small) for _ in range(n)], 1)[0] / n for _ in range(3))
    print(f"W6 small call: from Rust {rust * 1e6:.2f} us, from Python {python * 1e6:.2f} us, "
          f"overhead {(python - rust) * 1e6:.2f} us per call")


if __name__ == "__main__":
    main()
