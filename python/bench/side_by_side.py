"""W1-W4 and W6 of ../shared/BENCHMARKS.md through the Python bindings, next to numpy, and
TensorFlow, Awkward Array and numba when they are installed (each skipped with a message
otherwise), on the same data in the same process. Every result is checked against numpy before
its time is printed. Usage: python python/bench/side_by_side.py [--rows 1048576] [--repeat 5]"""

import argparse
import time

import numpy as np

import ragtime as rt


def data(nrows):
    lengths = (np.arange(nrows, dtype=np.int64) * 7919) % 21
    splits = np.zeros(nrows + 1, dtype=np.int64)
    np.cumsum(lengths, out=splits[1:])
    k = np.arange(splits[-1], dtype=np.float64)
    x = (((k * 37) % 1000) / 1000 - 0.5).astype(np.float32)
    z = (((k * 91) % 1000) / 500 - 1).astype(np.float32)
    return x, z, splits


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
    args = parser.parse_args()
    x, z, splits = data(args.rows)
    reference = numpy_workloads(x, z, splits)
    ours, functions = ragtime_workloads(x, z, splits)
    systems = {"ragtime (Python)": lambda: ours, "numpy": lambda: reference}
    optional = {"TensorFlow": tensorflow_workloads, "Awkward": awkward_workloads, "numba": numba_workloads}
    for name, make in optional.items():
        systems[name] = lambda make=make: make(x, z, splits)
    expected = {w: fn() for w, fn in reference.items()}
    print(f"{args.rows} rows, {len(x)} values; best of {args.repeat}; seconds")
    print(f"{'system':<18}" + "".join(f"{w:>12}" for w in expected))
    for system, make in systems.items():
        try:
            workloads = make()
        except ImportError as e:
            print(f"{system:<18}  skipped: {e}")
            continue
        cells = []
        for w, want in expected.items():
            if w not in workloads:
                cells.append(f"{'-':>12}")
                continue
            seconds, got = best(workloads[w], args.repeat)
            np.testing.assert_allclose(np.asarray(got, dtype=np.float32), want, rtol=2e-5, atol=2e-6)
            cells.append(f"{seconds:>12.5f}")
        print(f"{system:<18}" + "".join(cells))
    small = rt.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []], dtype="float32")
    n = 20_000
    rust = min(functions["W3"].time_calls(small, small, repeat=n) for _ in range(3))
    python = min(best(lambda: [functions["W3"](small, small) for _ in range(n)], 1)[0] / n for _ in range(3))
    print(f"W6 small call: from Rust {rust * 1e6:.2f} us, from Python {python * 1e6:.2f} us, "
          f"overhead {(python - rust) * 1e6:.2f} us per call")


if __name__ == "__main__":
    main()
