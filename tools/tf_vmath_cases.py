#!/usr/bin/env python3
"""Writes crates/vmath/tests/tf_edges.json: TensorFlow's float32/float64 `tanh`, `exp` and
`sigmoid` where they saturate (tanh reaching +-1) or underflow (results below the smallest
normal float, which TensorFlow's CPU kernels flush to zero), for `crates/vmath/tests/tf_edges.rs`.

Run with TensorFlow installed (2.21 here): python3 tools/tf_vmath_cases.py
Values are stored as bit patterns (hex) so that the test compares exactly.
"""
import json
import os

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(19)


def f32_range(lo, hi):
    """Every float32 in [lo, hi) (lo, hi >= 0)."""
    a = np.float32(lo).view(np.int32)
    b = np.float32(hi).view(np.int32)
    return np.arange(a, b, dtype=np.int32).view(np.float32)


def bits32(a):
    return [format(int(v), "08x") for v in np.asarray(a, np.float32).view(np.uint32)]


def bits64(a):
    return [format(int(v), "016x") for v in np.asarray(a, np.float64).view(np.uint64)]


def run(fn, xs, dtype):
    return fn(tf.constant(xs, dtype)).numpy()


cases = {"tf_version": tf.__version__}

# float32 tanh: every float32 around the point where TF reaches 1.0, plus random samples of
# [0, 12] and their negations.
near = f32_range(7.9070, 7.9078)
sample = rng.uniform(0.0, 12.0, 1000).astype(np.float32)
x = np.concatenate([near, sample, -sample, np.float32([0.0, 8.74, 9.0, 20.0, 1e30, np.inf])])
cases["tanh_f32"] = {"x": bits32(x), "y": bits32(run(tf.tanh, x, tf.float32))}

# float64 tanh: random samples of [0, 25].
x = np.concatenate([rng.uniform(0.0, 25.0, 500), np.float64([8.74, 19.0, 19.1, 20.0])])
cases["tanh_f64"] = {"x": bits64(x), "y": bits64(run(tf.tanh, x, tf.float64))}

# exp and sigmoid across the smallest normal's threshold (float32: ln(2^-126) = -87.336;
# float64: ln(2^-1022) = -708.396) and the underflow to zero.
x = np.concatenate([rng.uniform(-110.0, -80.0, 1000), f32_range(87.30, 87.40)[::97] * -1]).astype(np.float32)
cases["exp_f32"] = {"x": bits32(x), "y": bits32(run(tf.exp, x, tf.float32))}
cases["sigmoid_f32"] = {"x": bits32(x), "y": bits32(run(tf.sigmoid, x, tf.float32))}
x = np.concatenate([rng.uniform(-760.0, -700.0, 1000), np.float64([-708.39, -708.4, -745.1])])
cases["exp_f64"] = {"x": bits64(x), "y": bits64(run(tf.exp, x, tf.float64))}
cases["sigmoid_f64"] = {"x": bits64(x), "y": bits64(run(tf.sigmoid, x, tf.float64))}

out = os.path.join(os.path.dirname(__file__), "..", "crates", "vmath", "tests", "tf_edges.json")
with open(out, "w") as f:
    json.dump(cases, f)
print("wrote", out, {k: len(v["x"]) for k, v in cases.items() if isinstance(v, dict)})
