#!/usr/bin/env python3
"""Generates ragtime's extra conformance cases by running TensorFlow.

Each case below is a *spec*: its inputs (Python values with a dtype, a ragged rank and inner / dense
shapes), its graph nodes (ragtime's op names and attributes) and, for an error case, the error kind
ragtime must report. The expected values are never written by hand: the generator builds the inputs
as TensorFlow tensors, runs every node eagerly with the TensorFlow function it stands for, and
writes what TensorFlow returned, in the `ragged-conformance/1` format of
`tests/conformance/README.md`. An error case must make TensorFlow raise at its last node (any
exception), and a value case must not raise at all; otherwise the generator stops with an error.

Run with the TensorFlow version named in GENERATED_BY:

    python tools/tf_cases/generate.py            # writes tests/conformance_extra/*.json
    python tools/tf_cases/generate.py --check    # fails if the files on disk differ
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import tensorflow as tf

FORMAT = "ragged-conformance/1"
GENERATED_BY = "tensorflow 2.21.0"
SOURCE = "tools/tf_cases/generate.py"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "tests", "conformance_extra")

ERROR_KINDS = {
    "invalid_row_partition",
    "incompatible_shapes",
    "type_mismatch",
    "invalid_index",
    "index_out_of_range",
    "invalid_value",
    "invalid_argument",
}

DTYPES = {
    "bool": tf.bool,
    "int8": tf.int8,
    "int16": tf.int16,
    "int32": tf.int32,
    "int64": tf.int64,
    "uint8": tf.uint8,
    "uint16": tf.uint16,
    "uint32": tf.uint32,
    "uint64": tf.uint64,
    "float32": tf.float32,
    "float64": tf.float64,
    "string": tf.string,
}

NAN = float("nan")
INF = float("inf")


class SpecError(Exception):
    """A case spec that is malformed, or whose TensorFlow run contradicts it."""


# ------------------------------------------------------------------------------------------------
# Specs: values, nodes, cases.


class Value:
    """A tensor written in a spec: nested Python lists, a dtype, and its layout."""

    def __init__(self, value, dtype, ragged_rank, inner_shape=None, shape=None):
        if dtype not in DTYPES:
            raise SpecError(f"unknown dtype {dtype!r}")
        self.value = value
        self.dtype = dtype
        self.ragged_rank = ragged_rank
        self.inner_shape = list(inner_shape or [])
        self.shape = shape

    def to_tf(self):
        """The TensorFlow tensor (dense or ragged) this spec describes."""
        if self.ragged_rank == 0:
            return dense_tensor(self.value, self.dtype, self.shape)
        rows = self.value
        splits = []
        for _ in range(self.ragged_rank):
            level = [0]
            items = []
            for row in rows:
                if not isinstance(row, list):
                    raise SpecError(f"ragged value {self.value!r} is not nested {self.ragged_rank + 1} deep")
                items.extend(row)
                level.append(len(items))
            splits.append(tf.constant(level, tf.int64))
            rows = items
        flat = dense_tensor(rows, self.dtype, [len(rows)] + self.inner_shape)
        return tf.RaggedTensor.from_nested_row_splits(flat, splits, validate=True)


def as_bytes(value):
    """Strings of a spec (str, or bytes for text that is not UTF-8) as bytes, recursively."""
    if isinstance(value, list):
        return [as_bytes(v) for v in value]
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def dense_tensor(value, dtype, shape):
    if dtype == "string":
        array = np.array(as_bytes(value), dtype=object)
    else:
        array = np.array(value, dtype=DTYPES[dtype].as_numpy_dtype)
    if shape is not None:
        array = array.reshape(shape)
    return tf.constant(array, dtype=DTYPES[dtype])


def R(value, dtype, ragged_rank=1, inner_shape=None):
    """A ragged input: `ragged_rank + 1` list levels, then `inner_shape` uniform levels."""
    return Value(value, dtype, ragged_rank, inner_shape=inner_shape)


def D(value, dtype, shape=None):
    """A dense input; give `shape` when it cannot be read off the lists (empty dims)."""
    return Value(value, dtype, 0, shape=shape)


def C(value):
    """An inline constant input of a node."""
    return {"const": value}


def N(out, op, ins, **attrs):
    """A node: `out` (a name or a list of names), the op, its inputs (names or constants), attrs."""
    return {"out": out, "op": op, "in": list(ins), "attrs": attrs}


def case(name, inputs, nodes, outputs=None, error=None, note=None):
    """A case; `outputs` defaults to every node's outputs; `error` makes it an error case."""
    if error is not None and error not in ERROR_KINDS:
        raise SpecError(f"{name}: unknown error kind {error!r}")
    if outputs is None:
        outputs = [o for n in nodes for o in (n["out"] if isinstance(n["out"], list) else [n["out"]])]
    return {"name": name, "inputs": inputs, "nodes": nodes, "outputs": outputs, "error": error, "note": note}


# ------------------------------------------------------------------------------------------------
# Encoding values the way the shared conformance files do.


def encode_scalar(x):
    if isinstance(x, bytes):
        try:
            return x.decode("utf-8")
        except UnicodeDecodeError:
            return {"hex": x.hex()}
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def encode_nested(x):
    if isinstance(x, list):
        return [encode_nested(v) for v in x]
    return encode_scalar(x)


def encode(t):
    """A TensorFlow value as a VALUE object of the format."""
    if isinstance(t, tf.RaggedTensor):
        out = {"dtype": t.dtype.name, "ragged_rank": t.ragged_rank, "value": encode_nested(t.to_list())}
        inner = t.flat_values.shape.as_list()[1:]
        if inner:
            out["inner_shape"] = inner
        return out
    if isinstance(t, tf.Tensor):
        array = t.numpy()  # a scalar string comes back as bytes, everything else as numpy values
        value = array if isinstance(array, bytes) else array.tolist()
        return {"dtype": t.dtype.name, "ragged_rank": 0, "shape": t.shape.as_list(), "value": encode_nested(value)}
    raise SpecError(f"cannot encode {type(t).__name__}: {t!r}")


def encode_input(spec):
    if isinstance(spec, Value):
        return encode(spec.to_tf())
    raise SpecError(f"an input must be built with R(...) or D(...), got {spec!r}")


# ------------------------------------------------------------------------------------------------
# The TensorFlow function behind every op name (ragtime's attribute names, mapped to TF's).


class Attrs:
    """A node's attributes; every one must be read, so a misspelt attribute is caught."""

    def __init__(self, attrs):
        self.attrs = dict(attrs)
        self.read = set()

    def get(self, name, default=None):
        self.read.add(name)
        return self.attrs.get(name, default)

    def require(self, name):
        if name not in self.attrs:
            raise SpecError(f"attribute {name!r} is required")
        return self.get(name)

    def unread(self):
        return sorted(set(self.attrs) - self.read)


def positional(f):
    """An op without attributes: its inputs are the function's positional arguments."""
    return lambda ins, a: f(*ins)


def reduction(f):
    return lambda ins, a: f(ins[0], axis=a.get("axis"), keepdims=a.get("keepdims", False))


def getitem(ins, a):
    # The key is Python index syntax, so Python evaluates `x[key]`; keys only come from the specs below.
    return eval(f"x[{a.require('key')}]", {"tf": tf, "__builtins__": {}}, {"x": ins[0]})


def from_tensor(ins, a):
    lengths = ins[1] if len(ins) > 1 else None
    return tf.RaggedTensor.from_tensor(
        ins[0], lengths=lengths, padding=a.get("padding"), ragged_rank=a.get("ragged_rank", 1)
    )


def to_tensor(ins, a):
    return ins[0].to_tensor(default_value=a.get("default_value"), shape=a.get("shape"))


def to_sparse(ins, a):
    st = ins[0].to_sparse()
    return (st.indices, st.values, st.dense_shape)


def from_sparse(ins, a):
    return tf.RaggedTensor.from_sparse(tf.SparseTensor(ins[0], ins[1], ins[2]))


def ngrams(ins, a):
    pad = a.get("pad_values")
    if isinstance(pad, list):
        pad = tuple(pad)
    return tf.strings.ngrams(
        ins[0],
        a.require("ngram_width"),
        separator=a.get("separator", " "),
        pad_values=pad,
        padding_width=a.get("padding_width"),
        preserve_short_sequences=a.get("preserve_short_sequences", False),
    )


OPS = {
    "identity": positional(tf.identity),
    "add": positional(tf.math.add),
    "subtract": positional(tf.math.subtract),
    "multiply": positional(tf.math.multiply),
    "divide": positional(tf.math.divide),
    "floordiv": positional(tf.math.floordiv),
    "floormod": positional(tf.math.floormod),
    "pow": positional(tf.math.pow),
    "maximum": positional(tf.math.maximum),
    "minimum": positional(tf.math.minimum),
    "equal": positional(tf.math.equal),
    "not_equal": positional(tf.math.not_equal),
    "less": positional(tf.math.less),
    "less_equal": positional(tf.math.less_equal),
    "greater": positional(tf.math.greater),
    "greater_equal": positional(tf.math.greater_equal),
    "logical_and": positional(tf.math.logical_and),
    "logical_or": positional(tf.math.logical_or),
    "logical_xor": positional(tf.math.logical_xor),
    "logical_not": positional(tf.math.logical_not),
    "bitwise_and": positional(tf.bitwise.bitwise_and),
    "bitwise_or": positional(tf.bitwise.bitwise_or),
    "bitwise_xor": positional(tf.bitwise.bitwise_xor),
    "bitwise_invert": positional(tf.bitwise.invert),
    "negative": positional(tf.math.negative),
    "abs": positional(tf.math.abs),
    "square": positional(tf.math.square),
    "sqrt": positional(tf.math.sqrt),
    "exp": positional(tf.math.exp),
    "log": positional(tf.math.log),
    "sin": positional(tf.math.sin),
    "cos": positional(tf.math.cos),
    "tanh": positional(tf.math.tanh),
    "sigmoid": positional(tf.math.sigmoid),
    "floor": positional(tf.math.floor),
    "ceil": positional(tf.math.ceil),
    "round": positional(tf.math.round),
    "sign": positional(tf.math.sign),
    "cast": lambda ins, a: tf.cast(ins[0], DTYPES[a.require("dtype")]),
    "where": positional(tf.where),
    "reduce_sum": reduction(tf.reduce_sum),
    "reduce_mean": reduction(tf.reduce_mean),
    "reduce_max": reduction(tf.reduce_max),
    "reduce_min": reduction(tf.reduce_min),
    "reduce_prod": reduction(tf.reduce_prod),
    "reduce_all": reduction(tf.reduce_all),
    "reduce_any": reduction(tf.reduce_any),
    "concat": lambda ins, a: tf.concat(ins, axis=a.require("axis")),
    "stack": lambda ins, a: tf.stack(ins, axis=a.get("axis", 0)),
    "tile": lambda ins, a: tf.tile(ins[0], a.require("multiples")),
    "reverse": lambda ins, a: tf.reverse(ins[0], axis=a.require("axis")),
    "getitem": getitem,
    "gather": lambda ins, a: tf.gather(ins[0], ins[1], axis=a.get("axis"), batch_dims=a.get("batch_dims", 0)),
    "embedding_lookup": positional(tf.nn.embedding_lookup),
    "boolean_mask": positional(tf.ragged.boolean_mask),
    "segment_sum": positional(tf.math.segment_sum),
    "segment_mean": positional(tf.math.segment_mean),
    "segment_max": positional(tf.math.segment_max),
    "segment_min": positional(tf.math.segment_min),
    "unsorted_segment_sum": lambda ins, a: tf.math.unsorted_segment_sum(ins[0], ins[1], a.require("num_segments")),
    "fill": positional(tf.fill),
    "from_row_splits": positional(tf.RaggedTensor.from_row_splits),
    "from_row_lengths": positional(tf.RaggedTensor.from_row_lengths),
    "from_value_rowids": lambda ins, a: tf.RaggedTensor.from_value_rowids(ins[0], ins[1], nrows=a.get("nrows")),
    "from_nested_row_splits": lambda ins, a: tf.RaggedTensor.from_nested_row_splits(ins[0], ins[1:]),
    "from_uniform_row_length": lambda ins, a: tf.RaggedTensor.from_uniform_row_length(
        ins[0], a.require("uniform_row_length"), nrows=a.get("nrows")
    ),
    "from_tensor": from_tensor,
    "to_tensor": to_tensor,
    "to_sparse": to_sparse,
    "from_sparse": from_sparse,
    "row_splits": lambda ins, a: ins[0].row_splits,
    "row_lengths": lambda ins, a: ins[0].row_lengths(axis=a.get("axis", 1)),
    "value_rowids": lambda ins, a: ins[0].value_rowids(),
    "nrows": lambda ins, a: ins[0].nrows(),
    "flat_values": lambda ins, a: ins[0].flat_values,
    "bounding_shape": lambda ins, a: ins[0].bounding_shape(axis=a.get("axis")),
    "ragged.range": positional(tf.ragged.range),  # (limits), (starts, limits) or (starts, limits, deltas)
    "strings.split": lambda ins, a: tf.strings.split(ins[0], sep=a.get("sep"), maxsplit=a.get("maxsplit", -1)),
    "strings.substr": lambda ins, a: tf.strings.substr(
        ins[0],
        ins[1] if len(ins) == 3 else a.require("pos"),
        ins[2] if len(ins) == 3 else a.require("len"),
        unit=a.get("unit", "BYTE"),
    ),
    "strings.join": lambda ins, a: tf.strings.join(ins, separator=a.get("separator", "")),
    "strings.reduce_join": lambda ins, a: tf.strings.reduce_join(
        ins[0], axis=a.get("axis"), keepdims=a.get("keepdims", False), separator=a.get("separator", "")
    ),
    "strings.length": lambda ins, a: tf.strings.length(ins[0], unit=a.get("unit", "BYTE")),
    "strings.lower": positional(tf.strings.lower),
    "strings.upper": positional(tf.strings.upper),
    "strings.to_hash_bucket_fast": lambda ins, a: tf.strings.to_hash_bucket_fast(ins[0], a.require("num_buckets")),
    "strings.ngrams": ngrams,
    "bincount": lambda ins, a: tf.math.bincount(
        ins[0],
        weights=ins[1] if len(ins) > 1 else None,
        minlength=a.get("minlength"),
        maxlength=a.get("maxlength"),
        dtype=DTYPES[a.get("dtype", "int32")],
        axis=a.get("axis"),
        binary_output=a.get("binary_output", False),
    ),
}


# ------------------------------------------------------------------------------------------------
# Running a spec through TensorFlow.


def run_node(node, env):
    op = OPS.get(node["op"])
    if op is None:
        raise SpecError(f"unknown op {node['op']!r}")
    ins = []
    for i in node["in"]:
        if isinstance(i, dict):
            ins.append(i["const"].to_tf())
        elif i in env:
            ins.append(env[i])
        else:
            raise SpecError(f"{node['op']}: input {i!r} is not defined before it")
    attrs = Attrs(node["attrs"])
    try:
        result = op(ins, attrs)
    finally:
        # Also when TensorFlow raised: an error case must not pass because an attribute was ignored.
        if attrs.unread():
            raise SpecError(f"{node['op']}: attributes {attrs.unread()} are not mapped to TensorFlow")
    outs = node["out"] if isinstance(node["out"], list) else [node["out"]]
    results = list(result) if isinstance(node["out"], list) else [result]
    if len(outs) != len(results):
        raise SpecError(f"{node['op']}: {len(outs)} output names for {len(results)} outputs")
    for name, value in zip(outs, results):
        env[name] = value


def encode_node(node):
    ins = [{"const": encode_input(i["const"])} if isinstance(i, dict) else i for i in node["in"]]
    out = {"out": node["out"], "op": node["op"], "in": ins}
    if node["attrs"]:
        out["attrs"] = node["attrs"]
    return out


def evaluate(spec):
    """The case as written to the file, with TensorFlow's results."""
    name = spec["name"]
    env = {k: v.to_tf() for k, v in spec["inputs"].items()}
    nodes = spec["nodes"]
    error_note = None
    for k, node in enumerate(nodes):
        try:
            run_node(node, env)
        except SpecError as e:
            raise SpecError(f"{name}: {e}") from e
        except Exception as e:  # TensorFlow raised: only the last node of an error case may.
            if spec["error"] is None:
                raise SpecError(f"{name}: TensorFlow raised at node {k} ({node['op']}): {type(e).__name__}: {e}")
            if k != len(nodes) - 1:
                raise SpecError(f"{name}: TensorFlow raised before the last node, at node {k}: {e}")
            error_note = f"TensorFlow raises {type(e).__name__}"
            break
    else:
        if spec["error"] is not None:
            raise SpecError(f"{name}: expected TensorFlow to raise ({spec['error']}), but it did not")
    out = {"name": name}
    notes = [n for n in (spec["note"], error_note) if n]
    if notes:
        out["note"] = "; ".join(notes)
    out["inputs"] = {k: encode_input(v) for k, v in spec["inputs"].items()}
    out["nodes"] = [encode_node(n) for n in nodes]
    out["outputs"] = spec["outputs"]
    if spec["error"] is not None:
        out["expect_error"] = spec["error"]
    else:
        missing = [o for o in spec["outputs"] if o not in env]
        if missing:
            raise SpecError(f"{name}: outputs {missing} are not defined")
        out["expect"] = {o: encode(env[o]) for o in spec["outputs"]}
    return out


# ------------------------------------------------------------------------------------------------
# The cases, one function per file.


def elementwise_more():
    g = "elementwise_more"
    cases = []

    # Wrapping integer arithmetic, per dtype: x op y for the ops every integer dtype has.
    per_dtype = {
        "uint8": ([[250, 3], [], [128, 0]], [[10, 4], [], [128, 255]]),
        "uint16": ([[65530, 3], [], [300, 0]], [[10, 4], [], [300, 65535]]),
        "uint32": ([[4294967290, 3], [], [70000, 0]], [[10, 4], [], [70000, 4294967295]]),
        "uint64": ([[18446744073709551610, 3], [], [5000000000, 0]], [[10, 4], [], [5000000000, 18446744073709551615]]),
        "int8": ([[127, -128], [], [100, -3]], [[1, -1], [], [2, 5]]),
        "int16": ([[32767, -32768], [], [300, -3]], [[1, -1], [], [200, 5]]),
        "int64": ([[9223372036854775807, -9223372036854775808], [], [3037000500, -3]], [[1, -1], [], [3037000500, 5]]),
        "float64": ([[1e308, -0.5], [], [0.1, -3.0]], [[1e308, 0.25], [], [0.2, 5.0]]),
    }
    for group in (("uint8", "uint16", "uint32", "uint64"), ("int8", "int16", "int64", "float64")):
        cases.append(case(
            f"{g}/arith_{'_'.join(group)}",
            {f"{d}_{side}": R(v, d) for d in group for side, v in zip("xy", per_dtype[d])},
            [N(f"{d}_{op}", op, [f"{d}_x", f"{d}_y"]) for d in group
             for op in ("add", "subtract", "multiply", "maximum", "minimum")],
            note="integers wrap around",
        ))

    # True division: small integers give float32, 32/64-bit integers float64.
    dtypes = ("int8", "int16", "uint8", "uint16", "int32", "int64", "uint32", "uint64")
    cases.append(case(
        f"{g}/divide_integers",
        {f"{d}_{side}": R(v, d) for d in dtypes
         for side, v in (("x", [[1, 7], [], [9, 0]]), ("y", [[2, 2], [], [0, 0]]))},
        [N(d, "divide", [f"{d}_x", f"{d}_y"]) for d in dtypes],
        note="integer true division gives float32 for 8 and 16 bits, float64 above; by zero gives inf or nan",
    ))
    cases.append(case(
        f"{g}/divide_float32_by_zero",
        {"x": R([[1.0, -1.0, 0.0], [2.5]], "float32")},
        [N("q", "divide", ["x", C(D(0.0, "float32"))])],
    ))

    # Floor division and modulo round toward negative infinity.
    dtypes = ("int8", "int32", "int64")
    cases.append(case(
        f"{g}/floordiv_floormod_negative_integers",
        {f"{d}_{side}": R(v, d) for d in dtypes
         for side, v in (("x", [[7, -7, 7, -7], [0, -1]]), ("y", [[2, 2, -2, -2], [3, 3]]))},
        [N(f"{d}_{op}", op, [f"{d}_x", f"{d}_y"]) for d in dtypes for op in ("floordiv", "floormod")],
    ))
    cases.append(case(
        f"{g}/floordiv_floormod_negative_float32",
        {"x": R([[7.5, -7.5, 7.5, -7.5], [-0.5, 1.0]], "float32"),
         "y": R([[2.0, 2.0, -2.0, -2.0], [2.0, 0.0]], "float32")},
        [N("q", "floordiv", ["x", "y"]), N("r", "floormod", ["x", "y"])],
        note="float floormod by zero is nan",
    ))
    cases.append(case(
        f"{g}/floordiv_float64_rank2_ragged",
        {"x": R([[[9.0, -9.0], []], [[1.5]]], "float64", 2)},
        [N("q", "floordiv", ["x", C(D(-4.0, "float64"))])],
    ))
    cases.append(case(
        f"{g}/err_floordiv_integer_by_zero",
        {"x": R([[1, 2], [3]], "int32"), "y": R([[1, 0], [1]], "int32")},
        [N("q", "floordiv", ["x", "y"])],
        error="invalid_argument",
    ))

    # pow.
    cases.append(case(
        f"{g}/pow_float32",
        {"x": R([[2.0, -8.0, 0.0], [4.0, -2.0]], "float32"), "y": R([[0.5, 0.5, 0.0], [-1.0, 3.0]], "float32")},
        [N("p", "pow", ["x", "y"])],
        note="a negative base to a fractional power is nan; 0 ** 0 is 1",
    ))
    cases.append(case(
        f"{g}/pow_int64",
        {"x": R([[2, 3], [-2, 0]], "int64"), "y": R([[62, 0], [3, 0]], "int64")},
        [N("p", "pow", ["x", "y"])],
    ))
    cases.append(case(
        f"{g}/err_pow_integer_negative_exponent",
        {"x": R([[2, 3], [4]], "int32"), "y": R([[1, -1], [2]], "int32")},
        [N("p", "pow", ["x", "y"])],
        error="invalid_argument",
    ))

    # NaN handling.
    cases.append(case(
        f"{g}/maximum_minimum_nan",
        {"x": R([[NAN, 1.0], [-0.0, INF]], "float32"), "y": R([[1.0, NAN], [0.0, -INF]], "float32")},
        [N("mx", "maximum", ["x", "y"]), N("mn", "minimum", ["x", "y"])],
        note="maximum and minimum propagate nan",
    ))
    cases.append(case(
        f"{g}/compare_nan",
        {"x": R([[NAN, 1.0], [NAN]], "float32"), "y": R([[NAN, NAN], [2.0]], "float32")},
        [N(op, op, ["x", "y"]) for op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")],
    ))

    # Comparisons of other dtypes.
    cases.append(case(
        f"{g}/compare_other_dtypes",
        {"u8_x": R([[0, 255], [], [7]], "uint8"), "u8_y": R([[1, 254], [], [7]], "uint8"),
         "i64": R([[-9223372036854775808, 0], [9223372036854775807]], "int64"),
         "b_x": R([[True, False], [False]], "bool"), "b_y": R([[True, True], [False]], "bool")},
        [N("u8_less", "less", ["u8_x", "u8_y"]), N("u8_greater_equal", "greater_equal", ["u8_x", "u8_y"]),
         N("u8_equal", "equal", ["u8_x", "u8_y"]),
         N("i64_less", "less", ["i64", C(D(0, "int64"))]), N("i64_ge", "greater_equal", ["i64", C(D(0, "int64"))]),
         N("b_equal", "equal", ["b_x", "b_y"]), N("b_not_equal", "not_equal", ["b_x", "b_y"])],
    ))
    cases.append(case(
        f"{g}/string_equal",
        {"s": R([["a", "", "b"], [], ["a", "A"]], "string"), "u": R([["héllo", ""], ["x"]], "string"),
         "v": R([["héllo", " "], ["X"]], "string")},
        [N("eq_scalar", "equal", ["s", C(D("a", "string"))]), N("ne_empty", "not_equal", ["s", C(D("", "string"))]),
         N("eq_ragged", "equal", ["u", "v"])],
    ))
    cases.append(case(
        f"{g}/add_strings_concatenates",
        {"s": R([["a", ""], ["c"]], "string"), "t": R([["x", "y"], [""]], "string")},
        [N("y_", "add", ["s", "t"])],
        note="tf.add on strings concatenates",
    ))

    # Logical and bitwise ops.
    cases.append(case(
        f"{g}/logical_rank2_ragged",
        {"x": R([[[True, False], []], [[True]]], "bool", 2), "y": R([[[False, False], []], [[True]]], "bool", 2)},
        [N("and_", "logical_and", ["x", "y"]), N("or_", "logical_or", ["x", "y"]),
         N("xor", "logical_xor", ["x", "y"]), N("not_", "logical_not", ["x"])],
    ))
    cases.append(case(
        f"{g}/logical_with_scalar",
        {"x": R([[True, False], [], [False]], "bool")},
        [N("y_", "logical_or", ["x", C(D(True, "bool"))]), N("z", "logical_and", ["x", C(D(True, "bool"))])],
    ))
    for dtypes in ((("uint8", [[5, 255], [0]], [[3, 15], [1]]),
                    ("uint64", [[18446744073709551615, 6], [0]], [[1, 3], [18446744073709551615]]),
                    ("uint16", [[65535, 6], []], [[256, 3], []])),
                   (("int8", [[5, -128], [-1]], [[3, 127], [-1]]),
                    ("int64", [[-1, 12], [9223372036854775807]], [[255, 10], [1]]),
                    ("int16", [[-32768], [7]], [[-1], [-8]]))):
        cases.append(case(
            f"{g}/bitwise_{'_'.join(d for d, _, _ in dtypes)}",
            {f"{d}_{side}": R(v, d) for d, x, y in dtypes for side, v in (("x", x), ("y", y))},
            [N(f"{d}_{name}", op, [f"{d}_x", f"{d}_y"][:arity]) for d, _, _ in dtypes
             for name, op, arity in (("and", "bitwise_and", 2), ("or", "bitwise_or", 2), ("xor", "bitwise_xor", 2),
                                     ("invert", "bitwise_invert", 1))],
        ))

    # Unary math.
    cases.append(case(
        f"{g}/unary_float64",
        {"x": R([[0.0, -1.0, 2.0], [], [-0.5, 100.0]], "float64")},
        [N(op, op, ["x"]) for op in ("negative", "abs", "square", "sqrt", "exp", "log", "sin", "cos", "tanh",
                                      "sigmoid", "floor", "ceil", "sign")],
        note="sqrt and log of negatives are nan; log(0) is -inf",
    ))
    cases.append(case(
        f"{g}/unary_float32_specials",
        {"x": R([[NAN, INF], [-INF, -0.0]], "float32")},
        [N(op, op, ["x"]) for op in ("abs", "sign", "exp", "tanh", "sigmoid", "floor", "round", "negative")],
    ))
    cases.append(case(
        f"{g}/unary_int8_wraps",
        {"x": R([[-128, 127], [], [-3, 0]], "int8")},
        [N(op, op, ["x"]) for op in ("negative", "abs", "square", "sign")],
    ))
    cases.append(case(
        f"{g}/unary_int64",
        {"x": R([[-9223372036854775807, 3037000500], [0, -5]], "int64")},
        [N(op, op, ["x"]) for op in ("negative", "abs", "square", "sign", "round")],
    ))
    halves = [[0.5, 1.5, 2.5, -0.5], [-1.5, -2.5, 3.5, 2.4999], [-0.0, 1e20]]
    cases.append(case(
        f"{g}/round_half_to_even",
        {"f32": R(halves, "float32"), "f64": R(halves, "float64"), "i32": R([[-3, 7], []], "int32")},
        [N("f32_", "round", ["f32"]), N("f64_", "round", ["f64"]), N("i32_", "round", ["i32"])],
    ))

    # Casts.
    # Casts: (case, [(input, value, target dtype), ...]); float -> int stays in range (out of range is
    # undefined in C++ and TensorFlow's results there depend on the machine).
    for label, conversions in (
        ("float_to_int_truncates", [("f32", R([[1.7, -1.7, -0.5], [2.0, 0.0]], "float32"), "int32"),
                                    ("f64", R([[1e15 + 0.5, -2.9], []], "float64"), "int64")]),
        ("to_bool", [("i32", R([[0, 1, -3], [], [2147483647]], "int32"), "bool"),
                     ("f32", R([[0.0, -0.0, 0.5], [NAN, INF]], "float32"), "bool")]),
        ("integers_wrap", [("i32", R([[-1, 256, 300], [255, 0]], "int32"), "uint8"),
                           ("i64", R([[128, -129, 1000], [-128]], "int64"), "int8"),
                           ("u64", R([[18446744073709551615, 9223372036854775808], [1]], "uint64"), "int64"),
                           ("u8", R([[200, 127], [128]], "uint8"), "int8"),
                           ("i8", R([[-1, 5], []], "int8"), "uint32")]),
        ("from_bool", [("b", R([[True, False], [True]], "bool"), "float32"),
                       ("b2", R([[True, False], []], "bool"), "int64")]),
        ("to_float_rounds", [("f64", R([[0.1, 1e-50], [3.4028235677973366e38, 1e39]], "float64"), "float32"),
                             ("i64", R([[16777217, -16777217], [9007199254740993]], "int64"), "float32"),
                             ("u16", R([[65535, 0], []], "uint16"), "float64")]),
        ("same_dtype_rank3", [("i32", R([[[1, 2], []], [[3]]], "int32", 2), "int32")]),
    ):
        cases.append(case(
            f"{g}/cast_{label}",
            {name: value for name, value, _ in conversions},
            [N(f"{name}_to_{dtype}", "cast", [name], dtype=dtype) for name, _, dtype in conversions],
        ))
    cases.append(case(
        f"{g}/err_cast_string_to_int32",
        {"s": R([["1", "2"], ["3"]], "string")},
        [N("y_", "cast", ["s"], dtype="int32")],
        error="type_mismatch",
    ))

    # where, with broadcasting.
    cond = R([[True, False, True], [], [False, True]], "bool")
    x = R([[1, 2, 3], [], [4, 5]], "int32")
    cases.append(case(
        f"{g}/where_scalar_other",
        {"c": cond, "x": x},
        [N("y_", "where", ["c", "x", C(D(0, "int32"))])],
    ))
    cases.append(case(
        f"{g}/where_column_other",
        {"c": cond, "x": x, "col": D([[10], [20], [30]], "int32")},
        [N("y_", "where", ["c", "col", "x"])],
    ))
    cases.append(case(
        f"{g}/where_strings",
        {"c": R([[True, False], [True]], "bool"), "s": R([["a", "b"], ["c"]], "string"),
         "t": R([["x", "y"], ["z"]], "string")},
        [N("y_", "where", ["c", "s", "t"])],
    ))
    cases.append(case(
        f"{g}/where_rank2_ragged_float64",
        {"c": R([[[True], [False, True]], []], "bool", 2), "x": R([[[1.5], [2.5, 3.5]], []], "float64", 2)},
        [N("y_", "where", ["c", "x", C(D(-1.0, "float64"))])],
    ))
    cases.append(case(
        f"{g}/err_where_condition_not_bool",
        {"c": R([[1, 0], [1]], "int32"), "x": R([[1, 2], [3]], "int32")},
        [N("y_", "where", ["c", "x", "x"])],
        error="type_mismatch",
    ))
    cases.append(case(
        f"{g}/err_where_shapes",
        {"c": R([[True, False], [True]], "bool"), "x": R([[1], [2, 3]], "int32")},
        [N("y_", "where", ["c", "x", "x"])],
        error="incompatible_shapes",
    ))

    # Broadcasting of ragged rank 2 and of ragged against dense.
    rt2 = R([[[1, 2], [3]], [], [[4], [], [5, 6]]], "int32", 2)
    cases.append(case(
        f"{g}/broadcast_rank2_ragged_plus_n11",
        {"x": rt2, "c": D([[[100]], [[200]], [[300]]], "int32")},
        [N("y_", "add", ["x", "c"])],
    ))
    cases.append(case(
        f"{g}/broadcast_rank2_ragged_plus_1",
        {"x": rt2, "c": D([7], "int32")},
        [N("y_", "multiply", ["x", "c"])],
    ))
    cases.append(case(
        f"{g}/broadcast_rank2_ragged_plus_111",
        {"x": rt2, "c": D([[[7]]], "int32")},
        [N("y_", "subtract", ["c", "x"])],
    ))
    cases.append(case(
        f"{g}/broadcast_inner_dims_plus_vector",
        {"x": R([[[1, 2, 3]], [], [[4, 5, 6], [7, 8, 9]]], "float32", 1, [3]), "c": D([0.5, 1.0, 2.0], "float32")},
        [N("y_", "multiply", ["x", "c"])],
    ))
    cases.append(case(
        f"{g}/broadcast_inner_dims_plus_column",
        {"x": R([[[1, 2]], [[3, 4], [5, 6]]], "int64", 1, [2]), "c": D([[[10, 20]], [[30, 40]]], "int64")},
        [N("y_", "add", ["x", "c"])],
    ))
    cases.append(case(
        f"{g}/broadcast_uniform_rows_plus_matrix",
        {"x": R([[1, 2, 3], [4, 5, 6]], "int32"), "c": D([[10, 20, 30], [40, 50, 60]], "int32")},
        [N("y_", "add", ["x", "c"])],
        note="a ragged dimension whose rows all have 3 items matches a uniform dimension of size 3",
    ))
    cases.append(case(
        f"{g}/broadcast_zero_rows",
        {"x": R([], "float32"), "c": D(1.0, "float32")},
        [N("y_", "add", ["x", "c"])],
    ))
    cases.append(case(
        f"{g}/broadcast_all_empty_rows",
        {"x": R([[], [], []], "int32"), "c": D([[1], [2], [3]], "int32")},
        [N("y_", "add", ["x", "c"])],
    ))
    cases.append(case(
        f"{g}/err_broadcast_matrix_uneven_rows",
        {"x": R([[1, 2, 3], [4, 5]], "int32"), "c": D([[10, 20, 30], [40, 50, 60]], "int32")},
        [N("y_", "add", ["x", "c"])],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_broadcast_ragged_rows_of_one",
        {"x": R([[1], [2]], "int32"), "y": R([[10, 20], [30]], "int32")},
        [N("y_", "add", ["x", "y"])],
        error="incompatible_shapes",
        note="ragged rows of length 1 do not broadcast against other ragged rows",
    ))
    cases.append(case(
        f"{g}/err_broadcast_n11_wrong_rows",
        {"x": rt2, "c": D([[[1]], [[2]]], "int32")},
        [N("y_", "add", ["x", "c"])],
        error="incompatible_shapes",
    ))

    # Dtype errors.
    for label, x, y, op in (
        ("int32_plus_int64", R([[1], [2]], "int32"), R([[1], [2]], "int64"), "add"),
        ("float32_times_float64", R([[1.0], [2.0]], "float32"), R([[1.0], [2.0]], "float64"), "multiply"),
        ("logical_and_of_ints", R([[1], [0]], "int32"), R([[1], [1]], "int32"), "logical_and"),
        ("bitwise_and_of_floats", R([[1.0], [0.0]], "float32"), R([[1.0], [1.0]], "float32"), "bitwise_and"),
        ("less_of_string_and_int", R([["a"], ["b"]], "string"), R([[1], [2]], "int32"), "less"),
    ):
        cases.append(case(f"{g}/err_{label}", {"x": x, "y": y}, [N("z", op, ["x", "y"])], error="type_mismatch"))
    cases.append(case(
        f"{g}/err_sqrt_of_int32",
        {"x": R([[1, 4], [9]], "int32")},
        [N("z", "sqrt", ["x"])],
        error="type_mismatch",
    ))
    return g, "elementwise ops: every dtype, wrapping, NaN, casts, where, broadcasting, errors", cases


def reductions_more():
    g = "reductions_more"
    cases = []

    # Every reduction over axis 1, with an empty row, per dtype.
    per_dtype = {
        "uint8": [[200, 100], [], [1, 3]],
        "uint16": [[60000, 10000], [], [7]],
        "uint32": [[4294967295, 2], [], [7]],
        "uint64": [[18446744073709551615, 2], [], [7]],
        "int8": [[100, 100], [], [-128, -1]],
        "int16": [[30000, 30000], [], [-5]],
        "int64": [[9223372036854775807, 1], [], [-3, 4]],
        "float64": [[1.5, -2.25], [], [1e300, 1e300]],
    }
    for dtype, x in per_dtype.items():
        nodes = [N(op, f"reduce_{op}", ["x"], axis=1) for op in ("sum", "prod", "max", "min")]
        cases.append(case(f"{g}/axis1_{dtype}", {"x": R(x, dtype)}, nodes,
                          note="empty rows: sum 0, prod 1, max the lowest value, min the highest"))

    for dtype, x in (
        ("uint8", [[1, 2], [], [255, 255]]),
        ("int8", [[-128, -127], [], [3]]),
        ("int16", [[1, 2], [7]]),
        ("uint16", [[65535, 1], [], [7]]),
        ("int64", [[9, 2], [], [-7, -8]]),
        ("uint32", [[1, 2], [4]]),
        ("float64", [[1.5, 2.0], [], [-3.0]]),
    ):
        cases.append(case(
            f"{g}/mean_axis1_{dtype}",
            {"x": R(x, dtype)},
            [N("m", "reduce_mean", ["x"], axis=1), N("all_", "reduce_mean", ["x"])],
        ))
    # Not generated: reduce_mean of a *dense* integer tensor, which TensorFlow's dense kernel keeps in
    # the integer dtype (integer division); ragtime decided (docs/architecture.md) that integer means
    # are floats for dense and ragged inputs alike.

    rt2 = R([[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]], []], "int32", 2)
    def axes_label(axis):
        if axis is None:
            return "all"
        axes = [axis] if isinstance(axis, int) else axis
        return "_".join(str(a).replace("-", "m") for a in axes)

    cases.append(case(
        f"{g}/sum_rank3_axis_lists",
        {"x": rt2},
        [N("axes" + axes_label(a), "reduce_sum", ["x"], axis=a) for a in ([0, 1], [1, 2], [0, 2], [-1, -2], [2, 0])],
    ))
    cases.append(case(
        f"{g}/rank3_axes_1_2",
        {"x": rt2},
        [N("max", "reduce_max", ["x"], axis=[1, 2]), N("mean", "reduce_mean", ["x"], axis=[1, 2]),
         N("mean_all", "reduce_mean", ["x"], axis=[0, 1, 2]), N("prod", "reduce_prod", ["x"], axis=[1, 2])],
        note="the mean divides by the count of all the reduced items",
    ))
    cases.append(case(
        f"{g}/sum_rank3_keepdims",
        {"x": rt2},
        [N("axes" + axes_label(a), "reduce_sum", ["x"], axis=a, keepdims=True) for a in (0, 1, 2, [1, 2], [0, 2])],
    ))
    cases.append(case(
        f"{g}/sum_rank2_keepdims_axis_list",
        {"x": R([[1, 2], [], [3]], "int32")},
        [N("a", "reduce_sum", ["x"], axis=[0, 1], keepdims=True), N("b", "reduce_sum", ["x"], axis=0, keepdims=True)],
    ))

    inner = R([[[1.0, 2.0], [3.0, 4.0]], [], [[5.0, -6.0]]], "float32", 1, [2])
    for axes in ((0, 1, 2), (-1, [1, 2], None)):
        cases.append(case(
            f"{g}/inner_dims_axes_{'_'.join(axes_label(a) for a in axes)}",
            {"x": inner},
            [N(f"{op}_{axes_label(a)}", f"reduce_{op}", ["x"], axis=a) for a in axes for op in ("sum", "max")],
        ))
    inner_rank4 = R([[[[1, 2], [3, 4]], []], [[[5, 6]]], []], "int64", 2, [2])
    cases.append(case(
        f"{g}/rank4_inner_dims",
        {"x": inner_rank4},
        [N("sum" + axes_label(a), "reduce_sum", ["x"], axis=a) for a in (1, 2, 3, [2, 3], [0, 1])]
        + [N("min2", "reduce_min", ["x"], axis=2), N("mean3_keep", "reduce_mean", ["x"], axis=3, keepdims=True)],
    ))
    cases.append(case(
        f"{g}/rank4_ragged",
        {"x": R([[[[1], [2, 3]], []], [[[4, 5, 6]]]], "float32", 3)},
        [N("sum" + axes_label(a), "reduce_sum", ["x"], axis=a) for a in (3, 2, 1, 0, [1, 3])]
        + [N("max3", "reduce_max", ["x"], axis=-1)],
    ))
    cases.append(case(
        f"{g}/inner_dims_mean_keepdims",
        {"x": inner},
        [N("y_", "reduce_mean", ["x"], axis=1, keepdims=True)],
    ))

    cases.append(case(
        f"{g}/dense_axis_list",
        {"x": D([[1, 2, 3], [4, 5, 6]], "int32")},
        [N("s", "reduce_sum", ["x"], axis=[0, 1]), N("k", "reduce_prod", ["x"], axis=[1, 0], keepdims=True),
         N("m", "reduce_max", ["x"], axis=-1)],
    ))
    cases.append(case(
        f"{g}/dense_empty_axis",
        {"x": D([], "float32", [2, 0]), "i": D([], "int32", [2, 0])},
        [N("mx", "reduce_max", ["x"], axis=1), N("mn", "reduce_min", ["x"], axis=1),
         N("p", "reduce_prod", ["x"], axis=1), N("s", "reduce_sum", ["x"], axis=1),
         N("imx", "reduce_max", ["i"], axis=1), N("imn", "reduce_min", ["i"], axis=1)],
        note="over an empty uniform axis max / min give -inf / inf for floats",
    ))
    cases.append(case(
        f"{g}/nan_and_inf",
        {"x": R([[1.0, NAN], [NAN], [2.0, INF], [-INF, INF]], "float32")},
        [N("mx", "reduce_max", ["x"], axis=1), N("mn", "reduce_min", ["x"], axis=1),
         N("s", "reduce_sum", ["x"], axis=1)],
    ))
    cases.append(case(
        f"{g}/all_any_rank3",
        {"x": R([[[True, False], [], [True]], [], [[False]]], "bool", 2)},
        [N("all2", "reduce_all", ["x"], axis=2), N("any2", "reduce_any", ["x"], axis=2),
         N("all12", "reduce_all", ["x"], axis=[1, 2]), N("any12", "reduce_any", ["x"], axis=[1, 2]),
         N("all_", "reduce_all", ["x"]), N("any_", "reduce_any", ["x"])],
    ))
    cases.append(case(
        f"{g}/all_any_axis0",
        {"x": R([[True, False, True], [True], [False, True]], "bool")},
        [N("all0", "reduce_all", ["x"], axis=0), N("any0", "reduce_any", ["x"], axis=0, keepdims=True)],
    ))
    cases.append(case(
        f"{g}/zero_rows",
        {"x": R([], "float32")},
        [N("s1", "reduce_sum", ["x"], axis=1), N("s0", "reduce_sum", ["x"], axis=0),
         N("mx", "reduce_max", ["x"]), N("mean", "reduce_mean", ["x"])],
    ))
    cases.append(case(
        f"{g}/axis0_uneven_rows_float64",
        {"x": R([[1.0, 2.0, 3.0], [], [4.0], [5.0, 6.0]], "float64")},
        [N("mean", "reduce_mean", ["x"], axis=0), N("min", "reduce_min", ["x"], axis=0),
         N("prod", "reduce_prod", ["x"], axis=0)],
    ))

    cases.append(case(
        f"{g}/err_axis_out_of_range",
        {"x": R([[1, 2], [3]], "int32")},
        [N("y_", "reduce_sum", ["x"], axis=2)],
        error="invalid_argument",
    ))
    cases.append(case(
        f"{g}/err_negative_axis_out_of_range",
        {"x": R([[1, 2], [3]], "int32")},
        [N("y_", "reduce_max", ["x"], axis=-3)],
        error="invalid_argument",
    ))
    cases.append(case(
        f"{g}/err_sum_of_strings",
        {"x": R([["a", "b"], ["c"]], "string")},
        [N("y_", "reduce_sum", ["x"], axis=1)],
        error="type_mismatch",
    ))
    cases.append(case(
        f"{g}/err_all_of_ints",
        {"x": D([[1, 0], [1, 1]], "int32")},
        [N("y_", "reduce_all", ["x"], axis=1)],
        error="type_mismatch",
    ))
    return g, "reductions: every dtype, axis lists, keepdims, inner dims, empty and zero rows, errors", cases


def structure_more():
    g = "structure_more"
    cases = []
    a2 = R([[[1, 2], [3]], [], [[4], [5, 6, 7]]], "int32", 2)
    b2 = R([[[8]], [[9, 10], []], [[11, 12], [13]]], "int32", 2)
    c2 = R([[[20], [21, 22]], [], [[], [23]]], "int32", 2)

    # concat.
    cases.append(case(
        f"{g}/concat_rank3_outer_axes",
        {"a": a2, "b": b2},
        [N(f"axis{str(axis).replace('-', 'm')}", "concat", ["a", "b"], axis=axis) for axis in (0, 1, -2)],
    ))
    cases.append(case(
        f"{g}/concat_rank3_innermost_axis",
        {"a": a2, "c": c2},
        [N(f"axis{str(axis).replace('-', 'm')}", "concat", ["a", "c"], axis=axis) for axis in (2, -1)],
        note="concatenating innermost ragged rows needs the same number of rows",
    ))
    cases.append(case(
        f"{g}/concat_three_inputs_axis1",
        {"a": R([[1], [], [2, 3]], "int64"), "b": R([[], [], [4]], "int64"), "c": R([[5, 6], [7], []], "int64")},
        [N("y_", "concat", ["a", "b", "c"], axis=1)],
    ))
    cases.append(case(
        f"{g}/concat_dense_and_ragged_axis0",
        {"d": D([[1, 2], [3, 4]], "int32"), "r": R([[5], [], [6, 7, 8]], "int32")},
        [N("y_", "concat", ["d", "r"], axis=0)],
    ))
    cases.append(case(
        f"{g}/concat_dense_and_ragged_axis1",
        {"d": D([[1], [2], [3]], "float32"), "r": R([[5.5], [], [6.5, 7.5]], "float32")},
        [N("y_", "concat", ["r", "d"], axis=1)],
    ))
    inner_a = R([[[1, 2], [3, 4]], [[5, 6]]], "int32", 1, [2])
    inner_b = R([[[7, 8]], []], "int32", 1, [2])
    cases.append(case(f"{g}/concat_inner_dims_axis1", {"a": inner_a, "b": inner_b},
                      [N("y_", "concat", ["a", "b"], axis=1)]))
    cases.append(case(
        f"{g}/concat_inner_dims_axis2",
        {"a": inner_a, "b": R([[[9], [10]], [[11]]], "int32", 1, [1])},
        [N("y_", "concat", ["a", "b"], axis=2)],
    ))
    cases.append(case(
        f"{g}/concat_bool_axis0",
        {"a": R([[True], []], "bool"), "b": R([[False, True]], "bool")},
        [N("y_", "concat", ["a", "b"], axis=0)],
    ))
    cases.append(case(
        f"{g}/concat_zero_rows",
        {"a": R([], "uint8"), "b": R([[1, 2], []], "uint8")},
        [N("y0", "concat", ["a", "b"], axis=0), N("y1", "concat", ["a", "a"], axis=1)],
    ))
    cases.append(case(
        f"{g}/err_concat_dtype_mismatch",
        {"a": R([[1], [2]], "int32"), "b": R([[1.0], [2.0]], "float32")},
        [N("y_", "concat", ["a", "b"], axis=0)],
        error="type_mismatch",
    ))
    cases.append(case(
        f"{g}/err_concat_axis1_row_count",
        {"a": R([[1], [2]], "int32"), "b": R([[3], [4], [5]], "int32")},
        [N("y_", "concat", ["a", "b"], axis=1)],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_concat_inner_dims_differ",
        {"a": inner_a, "b": R([[[1, 2, 3]]], "int32", 1, [3])},
        [N("y_", "concat", ["a", "b"], axis=0)],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_concat_rank_differs",
        {"a": a2, "b": R([[1], [2], [3]], "int32")},
        [N("y_", "concat", ["a", "b"], axis=0)],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_concat_axis_out_of_range",
        {"a": R([[1], [2]], "int32")},
        [N("y_", "concat", ["a", "a"], axis=3)],
        error="invalid_argument",
    ))

    # stack.
    cases.append(case(
        f"{g}/stack_rank3_outer_axes",
        {"a": a2, "c": c2},
        [N(f"axis{axis}", "stack", ["a", "c"], axis=axis) for axis in (0, 1, 2)],
    ))
    same_as_a2 = R([[[10, 20], [30]], [], [[40], [50, 60, 70]]], "int32", 2)
    cases.append(case(
        f"{g}/stack_rank3_innermost_axis",
        {"a": a2, "d": same_as_a2},
        [N(f"axis{str(axis).replace('-', 'm')}", "stack", ["a", "d"], axis=axis) for axis in (3, -1)],
        note="stacking on a new innermost axis needs the same ragged structure",
    ))
    cases.append(case(
        f"{g}/stack_rank2_axis2",
        {"a": R([[1, 2], [3]], "int32"), "b": R([[4, 5], [6]], "int32")},
        [N("y_", "stack", ["a", "b"], axis=2)],
        note="stacking on a new innermost axis needs the same row lengths",
    ))
    cases.append(case(
        f"{g}/stack_dense_axis1",
        {"a": D([[1, 2], [3, 4]], "float64"), "b": D([[5, 6], [7, 8]], "float64")},
        [N("y_", "stack", ["a", "b"], axis=1)],
    ))
    cases.append(case(
        f"{g}/stack_dense_and_ragged",
        {"d": D([[1, 2], [3, 4]], "int32"), "r": R([[5], [6, 7, 8]], "int32")},
        [N("y0", "stack", ["d", "r"], axis=0), N("y1", "stack", ["r", "d"], axis=1)],
    ))
    cases.append(case(
        f"{g}/stack_three_bool",
        {"a": R([[True], []], "bool"), "b": R([[False, False], [True]], "bool"), "c": R([[], []], "bool")},
        [N("y_", "stack", ["a", "b", "c"], axis=1)],
    ))
    cases.append(case(
        f"{g}/err_stack_axis2_row_lengths_differ",
        {"a": R([[1, 2], [3]], "int32"), "b": R([[4], [6]], "int32")},
        [N("y_", "stack", ["a", "b"], axis=2)],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_stack_dtype_mismatch",
        {"a": R([[1], [2]], "int32"), "b": R([[1], [2]], "int64")},
        [N("y_", "stack", ["a", "b"], axis=0)],
        error="type_mismatch",
    ))
    cases.append(case(
        f"{g}/stack_one_input_inner_axes",
        {"x": R([[[[1, 2], [3, 4]]], [], [[[5, 6], [7, 8]], [[9, 10], [11, 12]]]], "int32", 1, [2, 2])},
        [N(f"axis{str(axis).replace('-', 'm')}", "stack", ["x"], axis=axis) for axis in (1, 2, -3, 3, 4)],
        note="one input stacks as several do: an axis among the inner dims makes them ragged up to it",
    ))

    # tile.
    cases.append(case(
        f"{g}/tile_rank3",
        {"x": a2},
        [N("m" + "_".join(map(str, m)), "tile", ["x"], multiples=m) for m in ([1, 2, 1], [2, 1, 2], [1, 1, 3])],
    ))
    cases.append(case(
        f"{g}/tile_rank3_zero_multiples",
        {"x": a2},
        [N("m" + "_".join(map(str, m)), "tile", ["x"], multiples=m) for m in ([0, 1, 1], [2, 0, 1], [1, 1, 0])],
    ))
    cases.append(case(f"{g}/tile_inner_dims", {"x": inner_a}, [N("y_", "tile", ["x"], multiples=[2, 2, 3])]))
    cases.append(case(
        f"{g}/tile_rank2_zero_columns_strings",
        {"x": R([["a", "b"], [], ["c"]], "string")},
        [N("y0", "tile", ["x"], multiples=[1, 0]), N("y2", "tile", ["x"], multiples=[1, 2])],
    ))
    cases.append(case(
        f"{g}/tile_dense",
        {"x": D([[1, 2], [3, 4]], "uint8")},
        [N("y_", "tile", ["x"], multiples=[2, 3])],
    ))
    cases.append(case(
        f"{g}/err_tile_negative_multiple",
        {"x": R([[1, 2], [3]], "int32")},
        [N("y_", "tile", ["x"], multiples=[1, -1])],
        error="invalid_argument",
    ))
    cases.append(case(
        f"{g}/err_tile_multiples_length",
        {"x": R([[1, 2], [3]], "int32")},
        [N("y_", "tile", ["x"], multiples=[1, 2, 3])],
        error="invalid_argument",
    ))

    # reverse.
    cases.append(case(
        f"{g}/reverse_rank3_one_axis",
        {"x": a2},
        [N(f"axis{str(a).replace('-', 'm')}", "reverse", ["x"], axis=[a]) for a in (0, 1, 2, -1)],
    ))
    cases.append(case(
        f"{g}/reverse_rank3_axis_lists",
        {"x": a2},
        [N("axes" + "_".join(map(str, axes)), "reverse", ["x"], axis=axes) for axes in ([1, 2], [0, 1, 2], [2, 0])],
    ))
    cases.append(case(f"{g}/reverse_inner_dims", {"x": inner_a},
                      [N("y2", "reverse", ["x"], axis=[2]), N("y12", "reverse", ["x"], axis=[1, 2])]))
    cases.append(case(
        f"{g}/reverse_dense",
        {"x": D([[1, 2, 3], [4, 5, 6]], "float32")},
        [N("y_", "reverse", ["x"], axis=[0, 1])],
    ))
    cases.append(case(
        f"{g}/reverse_empty_rows_strings",
        {"x": R([["a", "b"], [], ["c"]], "string")},
        [N("y0", "reverse", ["x"], axis=[0]), N("y1", "reverse", ["x"], axis=[-1])],
    ))

    # fill.
    cases.append(case(
        f"{g}/fill",
        {"dims": D([2, 3], "int64")},
        [N("f", "fill", ["dims", C(D(1.5, "float32"))]), N("s", "fill", ["dims", C(D("ab", "string"))]),
         N("b", "fill", ["dims", C(D(True, "bool"))])],
    ))
    cases.append(case(
        f"{g}/fill_empty_and_scalar",
        {"empty": D([0, 3], "int32"), "scalar": D([], "int32", [0])},
        [N("e", "fill", ["empty", C(D(7, "int32"))]), N("s", "fill", ["scalar", C(D(-1, "int64"))]),
         N("u", "fill", ["empty", C(D(255, "uint8"))])],
    ))
    cases.append(case(
        f"{g}/err_fill_negative_dim",
        {"dims": D([-1, 2], "int64")},
        [N("f", "fill", ["dims", C(D(1, "int32"))])],
        error="invalid_argument",
    ))

    # ragged.range.
    cases.append(case(
        f"{g}/range_float32_negative_deltas",
        {"s": D([0.0, 1.5, 3.0, 0.0], "float32"), "l": D([1.0, 0.0, 3.0, -1.0], "float32"),
         "d": D([0.25, -0.5, 1.0, -0.3], "float32")},
        [N("y_", "ragged.range", ["s", "l", "d"])],
    ))
    cases.append(case(
        f"{g}/range_float64_and_int64_negative_deltas",
        {"fs": D([0.5, -1.0], "float64"), "fl": D([2.0, 1.0], "float64"), "fd": D([0.5, 0.7], "float64"),
         "is": D([10, 0, 5], "int64"), "il": D([0, 5, 5], "int64"), "id": D([-3, -1, -1], "int64")},
        [N("f64", "ragged.range", ["fs", "fl", "fd"]), N("i64", "ragged.range", ["is", "il", "id"])],
    ))
    cases.append(case(
        f"{g}/range_scalar_broadcast",
        {"s": D(0, "int32"), "l": D([3, 1, 0, -2], "int32"), "d": D(2, "int32")},
        [N("y_", "ragged.range", ["s", "l", "d"])],
    ))
    cases.append(case(
        f"{g}/range_starts_limits_and_zero_rows",
        {"s": D([2, 5, -3], "int32"), "l": D([6, 5, 0], "int32"), "none": D([], "int64", [0])},
        [N("starts_limits", "ragged.range", ["s", "l"]), N("zero_rows", "ragged.range", ["none"])],
    ))
    cases.append(case(
        f"{g}/err_range_zero_delta",
        {"s": D([0, 1], "int32"), "l": D([3, 3], "int32"), "d": D([1, 0], "int32")},
        [N("y_", "ragged.range", ["s", "l", "d"])],
        error="invalid_argument",
    ))

    # to_tensor.
    x = R([[1, 2, 3], [4], [], [5, 6]], "int32")
    cases.append(case(
        f"{g}/to_tensor_shapes",
        {"x": x},
        [N("truncated", "to_tensor", ["x"], shape=[2, 2]),
         N("padded", "to_tensor", ["x"], shape=[6, 5], default_value=9),
         N("unknown_rows", "to_tensor", ["x"], shape=[None, 1]),
         N("unknown_columns", "to_tensor", ["x"], shape=[3, None], default_value=-1)],
    ))
    cases.append(case(
        f"{g}/to_tensor_rank3",
        {"x": a2},
        [N("plain", "to_tensor", ["x"]), N("truncated", "to_tensor", ["x"], shape=[2, 1, 2]),
         N("padded", "to_tensor", ["x"], shape=[4, None, 4], default_value=-1)],
    ))
    cases.append(case(
        f"{g}/to_tensor_inner_dims",
        {"x": inner_a},
        [N("plain", "to_tensor", ["x"], default_value=-1), N("shaped", "to_tensor", ["x"], shape=[3, 1, 2])],
    ))
    cases.append(case(f"{g}/to_tensor_zero_rows", {"x": R([], "float64")}, [N("y_", "to_tensor", ["x"])]))
    cases.append(case(
        f"{g}/err_to_tensor_shape_inner_dim_differs",
        {"x": R([[[1, 2]], [], [[3, 4], [5, 6]]], "int32", 1, [2])},
        [N("y_", "to_tensor", ["x"], shape=[3, 2, 3])],
        error="incompatible_shapes",
        note="a target shape may truncate or pad the outer and ragged dims, not the uniform inner ones",
    ))
    cases.append(case(
        f"{g}/to_tensor_defaults_of_other_dtypes",
        {"b": R([[False], [], [False, False]], "bool"), "s": R([["a"], ["b", "c"]], "string"),
         "f": R([[1.5], []], "float64")},
        [N("b_", "to_tensor", ["b"], default_value=True), N("s_", "to_tensor", ["s"], default_value="?", shape=[2, 3]),
         N("f_", "to_tensor", ["f"], default_value=-0.5)],
    ))

    # from_tensor.
    t3 = D([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]], [[13, 14], [15, 16], [17, 18]]], "int32")
    cases.append(case(
        f"{g}/from_tensor_rank3_lengths",
        {"t": t3, "l": D([2, 0, 3], "int64")},
        [N("y_", "from_tensor", ["t", "l"])],
    ))
    cases.append(case(f"{g}/from_tensor_rank3_plain", {"t": t3}, [N("y_", "from_tensor", ["t"])]))
    cases.append(case(
        f"{g}/from_tensor_lengths_int32",
        {"t": D([[1.5, 2.5], [3.5, 4.5]], "float32"), "l": D([1, 2], "int32")},
        [N("y_", "from_tensor", ["t", "l"])],
    ))
    cases.append(case(
        f"{g}/from_tensor_padding",
        {"s": D([["a", "", "b", ""], ["", "", "", ""], ["c", "d", "", ""]], "string"),
         "f": D([[1.0, 0.0], [0.0, 0.0]], "float64"), "z": D([], "int32", [0, 3])},
        [N("strings", "from_tensor", ["s"], padding=""), N("floats", "from_tensor", ["f"], padding=0.0),
         N("zero_rows", "from_tensor", ["z"], padding=0)],
        note="only trailing padding is dropped",
    ))
    cases.append(case(
        f"{g}/from_tensor_lengths_past_the_columns",
        {"t": D([[1, 2], [3, 4]], "int32"), "l": D([3, 1], "int64")},
        [N("y_", "from_tensor", ["t", "l"])],
        note="TensorFlow caps a length at the number of columns",
    ))

    # to_sparse / from_sparse.
    cases.append(case(f"{g}/to_sparse_rank3", {"x": a2}, [N(["i", "v", "d"], "to_sparse", ["x"])]))
    cases.append(case(f"{g}/to_sparse_inner_dims", {"x": inner_a}, [N(["i", "v", "d"], "to_sparse", ["x"])]))
    cases.append(case(
        f"{g}/to_sparse_empty_and_zero_rows",
        {"x": R([[], [1.5], []], "float32"), "z": R([], "int64")},
        [N(["xi", "xv", "xd"], "to_sparse", ["x"]), N(["zi", "zv", "zd"], "to_sparse", ["z"])],
    ))
    cases.append(case(
        f"{g}/from_sparse_trailing_empty_rows",
        {"i": D([[1, 0], [1, 1], [2, 0]], "int64"), "v": D([1.5, 2.5, 3.5], "float32"), "d": D([5, 4], "int64")},
        [N("y_", "from_sparse", ["i", "v", "d"])],
    ))
    cases.append(case(
        f"{g}/from_sparse_no_values",
        {"i": D([], "int64", [0, 2]), "v": D([], "int32", [0]), "d": D([3, 2], "int64")},
        [N("y_", "from_sparse", ["i", "v", "d"])],
    ))
    cases.append(case(
        f"{g}/roundtrip_sparse",
        {"x": R([[1, 2], [], [3]], "int32")},
        [N(["i", "v", "d"], "to_sparse", ["x"]), N("y_", "from_sparse", ["i", "v", "d"])],
    ))
    cases.append(case(
        f"{g}/err_from_sparse_unsorted_columns",
        {"i": D([[0, 1], [0, 0]], "int64"), "v": D([1, 2], "int32"), "d": D([1, 2], "int64")},
        [N("y_", "from_sparse", ["i", "v", "d"])],
        error="invalid_row_partition",
        note="the column indices of a row must be 0, 1, 2, ... in order (not right-ragged: no partition)",
    ))
    return g, "concat, stack, tile, reverse, fill, ragged.range, to/from tensor and sparse", cases


def getitems(name, x, keys):
    """One case applying several keys to the input `x`; each output is named after its key's label."""
    return case(name, {"x": x}, [N(label, "getitem", ["x"], key=key) for label, key in keys])


def indexing_more():
    g = "indexing_more"
    cases = []
    rt = R([[1, 2, 3, 4], [5], [], [6, 7, 8]], "int32")
    for label, keys in (
        ("rows_steps", [("reversed", "::-1"), ("step_m2", "::-2"), ("from_3_to_0", "3:0:-1"), ("step3", "::3"),
                        ("from_1_to_m1", "1:-1")]),
        ("rows_clamped", [("wide", "-10:10"), ("past_the_end", "5:"), ("empty_range", "2:1")]),
        ("inner_steps", [("reversed", ":, ::-1"), ("step2", ":, ::2"), ("from_1_step2", ":, 1::2"),
                         ("backwards_from_2", ":, 2::-1")]),
        ("inner_bounds", [("drop_last", ":, :-1"), ("m3_to_m1", ":, -3:-1"), ("past_the_end", ":, 10:")]),
        ("rows_and_inner", [("tails", "1:, 1:"), ("both_reversed", "::-1, ::-1")]),
        ("newaxis", [("first", "tf.newaxis"), ("second", ":, tf.newaxis"), ("last", ":, :, tf.newaxis")]),
        ("ellipsis", [("only", "..."), ("then_slice", "..., 1:"), ("row_then_ellipsis", "3, ...")]),
        ("element_and_empty_key", [("element", "3, -1"), ("empty_key", "()")]),
    ):
        cases.append(getitems(f"{g}/rank2_{label}", rt, keys))

    inner = R([[[1, 2, 3], [4, 5, 6]], [], [[7, 8, 9]]], "float32", 1, [3])
    for label, keys in (
        ("uniform", [("index", ":, :, 1"), ("reversed", ":, :, ::-1"), ("slice", ":, 1:, :2")]),
        ("ellipsis", [("index", "..., 0"), ("reversed", "..., ::-2"), ("row_and_index", "0, ..., 2")]),
        ("scalars", [("scalar", "0, 1, 2"), ("row_and_index", "2, :, 0"), ("newaxis", ":, :, tf.newaxis, 1")]),
    ):
        cases.append(getitems(f"{g}/inner_dims_{label}", inner, keys))

    rt2 = R([[[1, 2, 3], [4]], [[5], [], [6, 7]], [[8]], []], "int64", 2)
    for label, keys in (
        ("reversing", [("row_inner", "1, :, ::-1"), ("subrows", ":, ::-1"), ("innermost", "..., ::-1")]),
        ("prefixes", [("innermost", ":, :, :1"), ("ellipsis", "..., :1"), ("rows_and_subrows", "::2, 1:")]),
        ("elements", [("last_of_last", "-2, -1"), ("scalar", "1, 2, 1"), ("newaxis", ":, tf.newaxis")]),
    ):
        cases.append(getitems(f"{g}/rank3_{label}", rt2, keys))

    rt2_inner = R([[[[1, 2], [3, 4]], []], [[[5, 6]]]], "int32", 2, [2])
    cases.append(getitems(f"{g}/rank4_inner_dims", rt2_inner, [
        ("uniform_index", "..., 1"), ("subrows_reversed", ":, ::-1"), ("row_inner_reversed", "0, :, ::-1"),
        ("scalar", "0, 0, 1, 0"), ("innermost_prefix", ":, :, :1, ::-1"),
    ]))
    rt3 = R([[[[1], [2, 3]], []], [[[4, 5, 6]]]], "int32", 3)
    cases.append(getitems(f"{g}/rank4_ragged", rt3, [
        ("row", "0"), ("row_row", "0, 0"), ("innermost_reversed", "..., ::-1"), ("level2_prefix", ":, :, :1"),
    ]))

    dense = D([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], "uint8")
    cases.append(getitems(f"{g}/dense_slices", dense, [
        ("reversed", "::-1"), ("rows_columns_step", "1:, ::-2"), ("newaxis_middle", ":, tf.newaxis, 1:3"),
    ]))
    cases.append(getitems(f"{g}/dense_indices", dense, [
        ("ellipsis_column", "..., 1"), ("newaxis_ellipsis", "tf.newaxis, ..., 2"), ("last_row", "-1"),
        ("element", "2, -1"),
    ]))

    cases.append(case(
        f"{g}/strings_inner_reversed",
        {"x": R([["a", "b", "c"], [], ["d"]], "string")},
        [N("y_", "getitem", ["x"], key=":, ::-1")],
    ))
    cases.append(case(
        f"{g}/zero_rows_slice",
        {"x": R([], "bool")},
        [N("y_", "getitem", ["x"], key=":, 1:")],
    ))

    cases.append(case(
        f"{g}/err_scalar_into_inner_ragged_dim",
        {"x": rt2},
        [N("y_", "getitem", ["x"], key=":, :, 0")],
        error="invalid_index",
    ))
    cases.append(case(
        f"{g}/err_element_out_of_range",
        {"x": rt},
        [N("y_", "getitem", ["x"], key="0, 5")],
        error="index_out_of_range",
    ))
    cases.append(case(
        f"{g}/err_element_of_empty_row",
        {"x": rt},
        [N("y_", "getitem", ["x"], key="2, 0")],
        error="index_out_of_range",
    ))
    cases.append(case(
        f"{g}/err_negative_row_out_of_range",
        {"x": rt},
        [N("y_", "getitem", ["x"], key="-5")],
        error="index_out_of_range",
    ))
    cases.append(case(
        f"{g}/err_uniform_index_out_of_range",
        {"x": inner},
        [N("y_", "getitem", ["x"], key=":, :, 3")],
        error="index_out_of_range",
    ))
    cases.append(case(
        f"{g}/err_dense_index_out_of_range",
        {"x": dense},
        [N("y_", "getitem", ["x"], key="1, 4")],
        error="index_out_of_range",
    ))
    cases.append(case(
        f"{g}/err_zero_step",
        {"x": rt},
        [N("y_", "getitem", ["x"], key="::0")],
        error="invalid_argument",
    ))
    cases.append(case(
        f"{g}/err_too_many_indices",
        {"x": rt},
        [N("y_", "getitem", ["x"], key="0, 0, 0")],
        error="invalid_index",
    ))
    return g, "getitem: steps, negative steps, ellipsis, newaxis on ragged, uniform and dense dims", cases


def gather_segments():
    g = "gather_segments"
    cases = []
    params = R([[1, 2], [], [3, 4, 5], [6]], "int32")

    # gather.
    cases.append(case(
        f"{g}/gather_rows",
        {"p": params, "i64": D([2, 0, 2, 1], "int64"), "i32": D([3, 1], "int32"), "none": D([], "int64", [0])},
        [N("repeated", "gather", ["p", "i64"]), N("int32", "gather", ["p", "i32"]),
         N("empty", "gather", ["p", "none"])],
    ))
    cases.append(case(
        f"{g}/gather_rank3_params",
        {"p": R([[[1], [2, 3]], [], [[4, 5, 6]]], "float32", 2), "i": D([2, 2, 0], "int64")},
        [N("y_", "gather", ["p", "i"])],
    ))
    cases.append(case(f"{g}/gather_matrix_indices", {"p": params, "i": D([[0, 1], [2, 0], [3, 3]], "int64")},
                      [N("y_", "gather", ["p", "i"])]))
    cases.append(case(f"{g}/gather_ragged_indices", {"p": params, "i": R([[0, 3], [], [2]], "int64")},
                      [N("y_", "gather", ["p", "i"])]))
    cases.append(case(
        f"{g}/gather_ragged_indices_dense_params",
        {"p": D([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float64"), "i": R([[2], [0, 1, 2]], "int32")},
        [N("y_", "gather", ["p", "i"])],
    ))
    cases.append(case(
        f"{g}/gather_dense",
        {"p": D([[1, 2], [3, 4], [5, 6]], "uint8"), "i": D([[2, 2], [1, 0]], "int64")},
        [N("y_", "gather", ["p", "i"])],
    ))
    cases.append(case(
        f"{g}/gather_inner_dims",
        {"p": R([[[1, 2], [3, 4]], [], [[5, 6]]], "int32", 1, [2]), "i": D([2, 1, 0], "int64")},
        [N("y_", "gather", ["p", "i"])],
    ))
    cases.append(case(
        f"{g}/gather_strings",
        {"p": R([["a", "b"], ["c"], []], "string"), "i": D([1, 2, 0, 1], "int32")},
        [N("y_", "gather", ["p", "i"])],
    ))
    cases.append(case(f"{g}/err_gather_index_out_of_range", {"p": params, "i": D([1, 4], "int64")},
                      [N("y_", "gather", ["p", "i"])], error="index_out_of_range"))
    cases.append(case(f"{g}/err_gather_negative_index", {"p": params, "i": D([-1], "int64")},
                      [N("y_", "gather", ["p", "i"])], error="index_out_of_range"))
    cases.append(case(f"{g}/err_gather_ragged_index_out_of_range", {"p": params, "i": R([[0], [7]], "int32")},
                      [N("y_", "gather", ["p", "i"])], error="index_out_of_range"))
    cases.append(case(f"{g}/err_gather_float_indices", {"p": params, "i": D([1.0], "float32")},
                      [N("y_", "gather", ["p", "i"])], error="type_mismatch"))

    # embedding_lookup.
    table = D([[0.0, 0.5], [1.0, 1.5], [2.0, 2.5], [3.0, 3.5], [4.0, 4.5]], "float32")
    cases.append(case(f"{g}/embedding_ragged_ids", {"t": table, "ids": R([[4, 0], [], [2, 2, 1]], "int64")},
                      [N("y_", "embedding_lookup", ["t", "ids"])]))
    cases.append(case(
        f"{g}/embedding_rank3_ids",
        {"t": table, "ids": R([[[1], [2, 3]], [[]], []], "int32", 2)},
        [N("y_", "embedding_lookup", ["t", "ids"])],
    ))
    cases.append(case(f"{g}/embedding_dense_ids", {"t": table, "ids": D([[0, 4], [3, 3]], "int64")},
                      [N("y_", "embedding_lookup", ["t", "ids"])]))
    cases.append(case(f"{g}/err_embedding_id_out_of_range", {"t": table, "ids": R([[1], [5]], "int64")},
                      [N("y_", "embedding_lookup", ["t", "ids"])], error="index_out_of_range"))

    # boolean_mask.
    cases.append(case(
        f"{g}/mask_dense_vector",
        {"x": D([1, 2, 3, 4, 5], "int32"), "m": D([True, False, True, True, False], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_dense_rows",
        {"x": D([[1, 2], [3, 4], [5, 6]], "float32"), "m": D([False, True, True], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_dense_matrix_gives_ragged",
        {"x": D([[1, 2, 3], [4, 5, 6]], "int64"), "m": D([[True, False, True], [False, False, False]], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_ragged_same_structure",
        {"x": R([[1, 2, 3], [], [4, 5]], "int32"), "m": R([[True, False, True], [], [False, True]], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_ragged_rows",
        {"x": R([[1, 2, 3], [], [4, 5]], "int32"), "m": D([True, True, False], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    rt2 = R([[[1, 2], [3]], [[4], [], [5, 6]]], "int32", 2)
    cases.append(case(
        f"{g}/mask_rank3_by_rank2",
        {"x": rt2, "m": R([[False, True], [True, False, True]], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_rank3_by_rank3",
        {"x": rt2, "m": R([[[True, False], [True]], [[False], [], [True, True]]], "bool", 2)},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_inner_dims",
        {"x": R([[[1, 2], [3, 4]], [[5, 6]]], "int32", 1, [2]), "m": R([[False, True], [True]], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/mask_strings_all_false",
        {"x": R([["a", "b"], ["c"]], "string"), "m": R([[False, False], [False]], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
    ))
    cases.append(case(
        f"{g}/err_mask_ragged_lengths_differ",
        {"x": R([[1, 2], [3]], "int32"), "m": R([[True], [False, True]], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_mask_dense_length_differs",
        {"x": D([1, 2, 3], "int32"), "m": D([True, False], "bool")},
        [N("y_", "boolean_mask", ["x", "m"])],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_mask_not_bool",
        {"x": R([[1, 2], [3]], "int32"), "m": R([[1, 0], [1]], "int32")},
        [N("y_", "boolean_mask", ["x", "m"])],
        error="type_mismatch",
    ))

    # Sorted segment reductions (dense data: TensorFlow has no ragged kernel for them).
    data = D([5, 1, 7, -2, 3, 4], "int32")
    ids = D([0, 0, 1, 3, 3, 3], "int64")
    cases.append(case(
        f"{g}/segments_int32_with_gap",
        {"x": data, "ids": ids},
        [N(op, f"segment_{op}", ["x", "ids"]) for op in ("sum", "mean", "max", "min")],
        note="a segment without rows gives 0; the integer mean truncates",
    ))
    cases.append(case(
        f"{g}/segments_float32_matrix",
        {"x": D([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0]], "float32"), "ids": D([0, 0, 2], "int32")},
        [N(op, f"segment_{op}", ["x", "ids"]) for op in ("sum", "mean", "max", "min")],
    ))
    cases.append(case(
        f"{g}/segments_float64_nan",
        {"x": D([1.0, NAN, 2.0, -1.0], "float64"), "ids": D([0, 0, 1, 1], "int64")},
        [N(op, f"segment_{op}", ["x", "ids"]) for op in ("sum", "max", "min")],
    ))
    cases.append(case(
        f"{g}/segments_int64_start_late",
        {"x": D([10, 20, 30], "int64"), "ids": D([2, 2, 4], "int32")},
        [N("s", "segment_sum", ["x", "ids"]), N("m", "segment_mean", ["x", "ids"])],
    ))
    cases.append(case(
        f"{g}/segments_empty",
        {"x": D([], "float32", [0, 2]), "ids": D([], "int64", [0])},
        [N("s", "segment_sum", ["x", "ids"]), N("m", "segment_max", ["x", "ids"])],
    ))
    cases.append(case(f"{g}/err_segment_ids_unsorted", {"x": data, "ids": D([0, 1, 0, 2, 2, 2], "int64")},
                      [N("s", "segment_sum", ["x", "ids"])], error="invalid_argument"))
    cases.append(case(f"{g}/err_segment_ids_negative", {"x": D([1, 2], "int32"), "ids": D([-1, 0], "int64")},
                      [N("s", "segment_max", ["x", "ids"])], error="invalid_argument"))
    cases.append(case(f"{g}/err_segment_ids_length", {"x": data, "ids": D([0, 0, 1], "int64")},
                      [N("s", "segment_mean", ["x", "ids"])], error="incompatible_shapes"))
    cases.append(case(f"{g}/err_segment_sum_of_strings", {"x": D(["a", "b"], "string"), "ids": D([0, 0], "int64")},
                      [N("s", "segment_sum", ["x", "ids"])], error="type_mismatch"))

    # unsorted_segment_sum.
    cases.append(case(
        f"{g}/unsorted_sum_extra_segments",
        {"x": D([1, 2, 3, 4], "int32"), "ids": D([3, 0, 3, 1], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=6)],
    ))
    cases.append(case(
        f"{g}/unsorted_sum_negative_ids_dropped",
        {"x": D([1.5, 2.5, 3.5], "float32"), "ids": D([1, -1, 0], "int32")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=2)],
    ))
    cases.append(case(
        f"{g}/unsorted_sum_matrix",
        {"x": D([[1, 2], [3, 4], [5, 6]], "int64"), "ids": D([1, 1, 0], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=3)],
    ))
    cases.append(case(
        f"{g}/unsorted_sum_matrix_ids",
        {"x": D([[1, 2], [3, 4]], "float64"), "ids": D([[0, 2], [2, 2]], "int32")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=3)],
    ))
    cases.append(case(
        f"{g}/unsorted_sum_ragged_data",
        {"x": R([[1, 2, 3], [4], [5, 6], []], "int32"), "ids": D([1, 1, 0, 1], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=3)],
        note="ragged rows are summed position by position",
    ))
    cases.append(case(
        f"{g}/unsorted_sum_ragged_ids",
        {"x": R([[1, 2, 3], [4], [5, 6]], "int32"), "ids": R([[0, 1, 0], [2], [2, 0]], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=4)],
    ))
    cases.append(case(
        f"{g}/unsorted_sum_zero_segments",
        {"x": D([], "int32", [0]), "ids": D([], "int64", [0])},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=0)],
    ))
    cases.append(case(
        f"{g}/err_unsorted_sum_id_too_big",
        {"x": D([1, 2, 3], "int32"), "ids": D([0, 3, 1], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=3)],
        error="index_out_of_range",
    ))
    cases.append(case(
        f"{g}/err_unsorted_sum_negative_num_segments",
        {"x": D([1, 2], "int32"), "ids": D([0, 1], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=-1)],
        error="invalid_argument",
    ))
    cases.append(case(
        f"{g}/err_unsorted_sum_ids_shape",
        {"x": D([1, 2, 3], "int32"), "ids": D([0, 1], "int64")},
        [N("s", "unsorted_segment_sum", ["x", "ids"], num_segments=2)],
        error="incompatible_shapes",
    ))
    return g, "gather, embedding_lookup, boolean_mask, segment reductions", cases


def strings_more():
    g = "strings_more"
    cases = []
    words = R([["Hello", "WORLD"], [], ["MiXeD 123!", ""]], "string")
    cases.append(case(f"{g}/lower_upper_ascii", {"s": words},
                      [N("lo", "strings.lower", ["s"]), N("up", "strings.upper", ["s"])]))
    cases.append(case(
        f"{g}/lower_upper_leave_non_ascii",
        {"s": R([["ÉCOLE", "Straße"], ["ΑΒΓ αβγ", "ǅ"]], "string")},
        [N("lo", "strings.lower", ["s"]), N("up", "strings.upper", ["s"])],
        note="without an encoding only ASCII letters change case",
    ))
    cases.append(case(
        f"{g}/lower_upper_rank3_dense_invalid_utf8",
        {"s": R([[["Ab"], []], [["cD", "E"]]], "string", 2), "d": D([["xY", "Z"]], "string"),
         "b": R([[b"A\xff", b"\xc3z"]], "string")},
        [N("lo", "strings.lower", ["s"]), N("up", "strings.upper", ["d"]), N("bytes", "strings.lower", ["b"])],
    ))

    # ngrams.
    tokens = R([["a", "b", "c", "d"], ["e", "f"], ["g"], []], "string")
    for label, variants in (
        ("widths", [("w2", dict(ngram_width=2)), ("w1_3", dict(ngram_width=[1, 3])),
                    ("w3_2", dict(ngram_width=[3, 2])),
                    ("w3_preserve_short", dict(ngram_width=3, preserve_short_sequences=True))]),
        ("padding", [("w2_pad", dict(ngram_width=2, pad_values="#")),
                     ("w3_pad_pair_1", dict(ngram_width=3, pad_values=["<s>", "</s>"], padding_width=1)),
                     ("w2_padding_capped", dict(ngram_width=2, pad_values="#", padding_width=5)),
                     ("w1_pad", dict(ngram_width=1, pad_values="#"))]),
        ("separator_and_short_rows", [
            ("w3_separator", dict(ngram_width=3, separator="_", pad_values="#")),
            ("w5_pad_preserve", dict(ngram_width=5, pad_values="#", padding_width=1, preserve_short_sequences=True)),
            ("w4_preserve_no_pad", dict(ngram_width=4, separator="", preserve_short_sequences=True))]),
    ):
        cases.append(case(f"{g}/ngrams_{label}", {"t": tokens},
                          [N(out, "strings.ngrams", ["t"], **attrs) for out, attrs in variants]))
    cases.append(case(
        f"{g}/ngrams_dense_tokens",
        {"t": D([["a", "b", "c"], ["d", "e", "f"]], "string")},
        [N("y_", "strings.ngrams", ["t"], ngram_width=2, separator="+")],
    ))
    cases.append(case(
        f"{g}/ngrams_rank3_tokens",
        {"t": R([[["a", "b", "c"], []], [["d", "e"]]], "string", 2)},
        [N("y_", "strings.ngrams", ["t"], ngram_width=2)],
    ))
    cases.append(case(
        f"{g}/ngrams_no_tokens_padded",
        {"t": R([[], []], "string")},
        [N("y_", "strings.ngrams", ["t"], ngram_width=2, pad_values="#")],
    ))
    cases.append(case(f"{g}/err_ngrams_width_zero", {"t": tokens},
                      [N("y_", "strings.ngrams", ["t"], ngram_width=0)], error="invalid_argument"))
    cases.append(case(f"{g}/err_ngrams_padding_width_zero", {"t": tokens},
                      [N("y_", "strings.ngrams", ["t"], ngram_width=2, pad_values="#", padding_width=0)],
                      error="invalid_argument"))

    # split.
    cases.append(case(
        f"{g}/split_whitespace",
        {"s": D(["  a  b\tc\n ", "", "one", " \x0b x \r\f", "   "], "string")},
        [N("y_", "strings.split", ["s"])],
        note="without a separator, runs of whitespace split and empty pieces are dropped",
    ))
    cases.append(case(
        f"{g}/split_ragged_input",
        {"s": R([["a,b", ""], [], ["c,,d"]], "string")},
        [N("y_", "strings.split", ["s"], sep=",")],
    ))
    cases.append(case(
        f"{g}/split_ragged_input_whitespace",
        {"s": R([["a b", " "], [], ["c  d e"]], "string")},
        [N("y_", "strings.split", ["s"])],
    ))
    cases.append(case(
        f"{g}/split_separator_edges",
        {"s": D(["a,,b", "", ",", "a,", ",a"], "string")},
        [N("y_", "strings.split", ["s"], sep=",")],
        note="with a separator every occurrence splits and an empty string gives one empty piece",
    ))
    cases.append(case(
        f"{g}/split_multichar_separator",
        {"s": D(["a<>b<><>c", "<>", "a<b>"], "string")},
        [N("y_", "strings.split", ["s"], sep="<>")],
    ))
    cases.append(case(
        f"{g}/split_maxsplit",
        {"s": D(["a b c d", "  x  y  z ", "one"], "string")},
        [N("sep1", "strings.split", ["s"], sep=" ", maxsplit=1), N("ws2", "strings.split", ["s"], maxsplit=2),
         N("sep0", "strings.split", ["s"], sep=" ", maxsplit=0)],
    ))
    cases.append(case(
        f"{g}/split_scalar",
        {"s": D("a b  c", "string")},
        [N("y_", "strings.split", ["s"])],
    ))
    cases.append(case(
        f"{g}/split_dense_matrix",
        {"s": D([["a b", ""], ["c", "d e f"]], "string")},
        [N("y_", "strings.split", ["s"], sep=" ")],
    ))
    cases.append(case(
        f"{g}/split_non_ascii",
        {"s": D(["héllo wörld", "世界 🙂"], "string")},
        [N("y_", "strings.split", ["s"])],
    ))
    cases.append(case(f"{g}/err_split_of_ints", {"s": D([1, 2], "int32")},
                      [N("y_", "strings.split", ["s"])], error="type_mismatch"))

    # length.
    unicode = R([["héllo", "世界", ""], ["🙂x"], []], "string")
    cases.append(case(f"{g}/length_utf8_chars", {"s": unicode},
                      [N("chars", "strings.length", ["s"], unit="UTF8_CHAR"), N("bytes", "strings.length", ["s"])]))
    cases.append(case(
        f"{g}/length_invalid_utf8",
        {"s": D([b"\xff\xfe", b"a\xc3", b"\xe4\xb8"], "string")},
        [N("chars", "strings.length", ["s"], unit="UTF8_CHAR"), N("bytes", "strings.length", ["s"], unit="BYTE")],
    ))
    cases.append(case(
        f"{g}/length_rank3",
        {"s": R([[["ab", ""], []], [["abc"]]], "string", 2)},
        [N("y_", "strings.length", ["s"])],
    ))
    cases.append(case(f"{g}/err_length_of_ints", {"s": R([[1], [2]], "int32")},
                      [N("y_", "strings.length", ["s"])], error="type_mismatch"))
    cases.append(case(f"{g}/err_lower_of_floats", {"s": R([[1.0], [2.0]], "float32")},
                      [N("y_", "strings.lower", ["s"])], error="type_mismatch"))

    # substr.
    cases.append(case(
        f"{g}/substr_utf8_chars",
        {"s": R([["héllo", "世界!"], ["🙂🙂ab"]], "string")},
        [N("from_1", "strings.substr", ["s"], pos=1, len=2, unit="UTF8_CHAR"),
         N("neg_pos", "strings.substr", ["s"], pos=-2, len=1, unit="UTF8_CHAR"),
         N("len_past_end", "strings.substr", ["s"], pos=1, len=10, unit="UTF8_CHAR")],
    ))
    cases.append(case(
        f"{g}/substr_bytes_bounds",
        {"s": R([["hello", "abc"], [], ["xyz"]], "string")},
        [N(out, "strings.substr", ["s"], pos=pos, len=length) for out, pos, length in (
            ("neg_pos", -3, 2), ("len_past_end", 2, 100), ("pos_at_end", 3, 1), ("negative_len", 1, -1),
            ("zero_len", 0, 0))],
    ))
    cases.append(case(f"{g}/substr_dense", {"s": D([["abcdef", "gh"]], "string")},
                      [N("y_", "strings.substr", ["s"], pos=1, len=3)]))
    cases.append(case(f"{g}/substr_bytes_splits_characters", {"s": D(["héllo"], "string")},
                      [N("y_", "strings.substr", ["s"], pos=1, len=1)],
                      note="in bytes a substring may cut a character: the result is not UTF-8"))
    cases.append(case(f"{g}/err_substr_pos_out_of_range", {"s": R([["hello", "abc"], []], "string")},
                      [N("y_", "strings.substr", ["s"], pos=4, len=1)], error="index_out_of_range"))
    cases.append(case(f"{g}/err_substr_negative_pos_out_of_range", {"s": R([["hello"], ["ab"]], "string")},
                      [N("y_", "strings.substr", ["s"], pos=-3, len=1)], error="index_out_of_range"))
    cases.append(case(f"{g}/err_substr_utf8_pos_out_of_range", {"s": R([["héllo"], ["世界"]], "string")},
                      [N("y_", "strings.substr", ["s"], pos=3, len=1, unit="UTF8_CHAR")],
                      error="index_out_of_range"))

    # join.
    cases.append(case(
        f"{g}/join_three",
        {"a": R([["a", "b"], []], "string"), "b": R([["c", ""], []], "string"), "c": R([["d", "e"], []], "string")},
        [N("y_", "strings.join", ["a", "b", "c"], separator="-")],
    ))
    cases.append(case(
        f"{g}/join_with_scalar",
        {"a": R([["a", "b"], ["c"]], "string")},
        [N("y_", "strings.join", ["a", C(D("!", "string"))], separator="")],
    ))
    cases.append(case(
        f"{g}/join_dense",
        {"a": D([["a", "b"], ["c", "d"]], "string"), "b": D([["1", "2"], ["3", "4"]], "string")},
        [N("y_", "strings.join", ["a", "b"], separator=", ")],
    ))
    cases.append(case(
        f"{g}/join_rank3",
        {"a": R([[["a"], []], [["b", "c"]]], "string", 2), "b": R([[["x"], []], [["y", "z"]]], "string", 2)},
        [N("y_", "strings.join", ["a", "b"])],
    ))
    cases.append(case(
        f"{g}/err_join_structures_differ",
        {"a": R([["a", "b"], ["c"]], "string"), "b": R([["a"], ["b", "c"]], "string")},
        [N("y_", "strings.join", ["a", "b"])],
        error="incompatible_shapes",
    ))
    cases.append(case(
        f"{g}/err_join_of_ints",
        {"a": R([["a"], ["c"]], "string"), "b": R([[1], [2]], "int32")},
        [N("y_", "strings.join", ["a", "b"])],
        error="type_mismatch",
    ))

    # reduce_join.
    rows = R([["a", "b", "c"], [], ["d"], ["e", "f"]], "string")
    cases.append(case(
        f"{g}/reduce_join_rank2",
        {"s": rows},
        [N(out, "strings.reduce_join", ["s"], **attrs) for out, attrs in (
            ("axis0", dict(axis=0, separator="-")),
            ("axis_m1", dict(axis=-1, separator="-")),
            ("axis_all", dict(separator="/")),
            ("axis_list", dict(axis=[0, 1], separator="/")),
            ("axis1_keepdims", dict(axis=1, keepdims=True, separator="+")),
        )],
    ))
    cases.append(case(
        f"{g}/reduce_join_rank3",
        {"s": R([[["a", "b"], [], ["c"]], [], [["d"]]], "string", 2)},
        [N(f"axis{label}", "strings.reduce_join", ["s"], axis=axis, separator=",")
         for label, axis in (("2", 2), ("1", 1), ("1_2", [1, 2]), ("0", 0), ("0_1_2", [0, 1, 2]))],
    ))
    cases.append(case(
        f"{g}/reduce_join_dense_axes",
        {"s": D([["a", "b"], ["c", "d"]], "string")},
        [N("a01", "strings.reduce_join", ["s"], axis=[0, 1]), N("a10", "strings.reduce_join", ["s"], axis=[1, 0]),
         N("a0", "strings.reduce_join", ["s"], axis=0, separator=" ")],
    ))

    # to_hash_bucket_fast.
    cases.append(case(
        f"{g}/hash_bucket_sizes",
        {"s": R([["", "a", "ragged"], [], ["héllo"]], "string")},
        [N("one", "strings.to_hash_bucket_fast", ["s"], num_buckets=1),
         N("big", "strings.to_hash_bucket_fast", ["s"], num_buckets=4611686018427387904),
         N("ten", "strings.to_hash_bucket_fast", ["s"], num_buckets=10)],
    ))
    cases.append(case(
        f"{g}/hash_dense_invalid_utf8",
        {"s": D([[b"\xff", b"\x00"], [b"abc", b"\xc3\xa9"]], "string")},
        [N("y_", "strings.to_hash_bucket_fast", ["s"], num_buckets=1000003)],
    ))
    cases.append(case(f"{g}/err_hash_zero_buckets", {"s": R([["a"], []], "string")},
                      [N("y_", "strings.to_hash_bucket_fast", ["s"], num_buckets=0)], error="invalid_argument"))
    return g, "string ops: lower/upper, ngrams, split, length, substr, join, reduce_join, hashing", cases


def partitions_more():
    g = "partitions_more"
    cases = []
    cases.append(case(
        f"{g}/from_row_splits_int32",
        {"v": D([1, 2, 3], "float32"), "s": D([0, 0, 2, 3], "int32")},
        [N("y_", "from_row_splits", ["v", "s"])],
    ))
    cases.append(case(
        f"{g}/from_row_splits_ragged_values",
        {"v": R([[1, 2], [], [3]], "int32"), "s": D([0, 2, 2, 3], "int64")},
        [N("y_", "from_row_splits", ["v", "s"])],
    ))
    cases.append(case(
        f"{g}/from_row_splits_inner_dims",
        {"v": D([[1, 2], [3, 4], [5, 6], [7, 8]], "int64"), "s": D([0, 3, 4], "int64")},
        [N("y_", "from_row_splits", ["v", "s"])],
    ))
    cases.append(case(
        f"{g}/from_row_splits_zero_and_empty_rows",
        {"v": D([], "string", [0]), "s0": D([0], "int64"), "s3": D([0, 0, 0], "int64")},
        [N("zero_rows", "from_row_splits", ["v", "s0"]), N("empty_rows", "from_row_splits", ["v", "s3"])],
    ))
    cases.append(case(
        f"{g}/err_from_row_splits_no_splits",
        {"v": D([], "int32", [0]), "s": D([], "int64", [0])},
        [N("y_", "from_row_splits", ["v", "s"])],
        error="invalid_row_partition",
    ))
    cases.append(case(
        f"{g}/err_from_row_splits_too_few_values",
        {"v": D([1, 2], "int32"), "s": D([0, 3], "int64")},
        [N("y_", "from_row_splits", ["v", "s"])],
        error="invalid_row_partition",
    ))

    cases.append(case(
        f"{g}/from_row_lengths_int32_empty_rows",
        {"v": D([[1, 2], [3, 4], [5, 6]], "int32"), "l": D([0, 0, 3, 0], "int32")},
        [N("y_", "from_row_lengths", ["v", "l"])],
    ))
    cases.append(case(
        f"{g}/from_row_lengths_ragged_values",
        {"v": R([["a"], [], ["b", "c"]], "string"), "l": D([1, 2], "int64")},
        [N("y_", "from_row_lengths", ["v", "l"])],
    ))
    cases.append(case(
        f"{g}/err_from_row_lengths_negative",
        {"v": D([1, 2, 3], "int32"), "l": D([3, -1, 1], "int64")},
        [N("y_", "from_row_lengths", ["v", "l"])],
        error="invalid_row_partition",
    ))

    vals = D([1, 2, 3, 4], "int32")
    cases.append(case(
        f"{g}/from_value_rowids_leading_and_trailing_empty",
        {"v": vals, "r": D([2, 2, 3, 3], "int64")},
        [N("y_", "from_value_rowids", ["v", "r"], nrows=6)],
    ))
    cases.append(case(
        f"{g}/from_value_rowids_int32_and_no_values",
        {"v": vals, "r": D([0, 1, 1, 3], "int32"), "none": D([], "float64", [0]), "no_ids": D([], "int64", [0])},
        [N("int32", "from_value_rowids", ["v", "r"]), N("no_values", "from_value_rowids", ["none", "no_ids"], nrows=3)],
    ))
    cases.append(case(
        f"{g}/err_from_value_rowids_nrows_too_small",
        {"v": vals, "r": D([0, 1, 1, 3], "int64")},
        [N("y_", "from_value_rowids", ["v", "r"], nrows=3)],
        error="invalid_row_partition",
    ))
    cases.append(case(
        f"{g}/err_from_value_rowids_negative",
        {"v": vals, "r": D([-1, 0, 0, 1], "int64")},
        [N("y_", "from_value_rowids", ["v", "r"])],
        error="invalid_row_partition",
    ))

    cases.append(case(
        f"{g}/from_nested_row_splits_rank4",
        {"v": D([1, 2, 3, 4, 5], "int32"), "s0": D([0, 2, 3], "int64"), "s1": D([0, 1, 1, 3], "int64"),
         "s2": D([0, 2, 2, 5], "int64")},
        [N("y_", "from_nested_row_splits", ["v", "s0", "s1", "s2"])],
    ))
    cases.append(case(
        f"{g}/from_nested_row_splits_inner_dims",
        {"v": D([[1, 2], [3, 4], [5, 6]], "float32"), "s0": D([0, 1, 2], "int64"), "s1": D([0, 2, 3], "int64")},
        [N("y_", "from_nested_row_splits", ["v", "s0", "s1"])],
    ))
    cases.append(case(
        f"{g}/err_from_nested_row_splits_inconsistent",
        {"v": D([1, 2, 3], "int32"), "s0": D([0, 1, 3], "int64"), "s1": D([0, 1, 3], "int64")},
        [N("y_", "from_nested_row_splits", ["v", "s0", "s1"])],
        error="invalid_row_partition",
    ))

    cases.append(case(
        f"{g}/from_uniform_row_length_dense",
        {"v": D([1, 2, 3, 4, 5, 6], "int32")},
        [N("y_", "from_uniform_row_length", ["v"], uniform_row_length=3)],
    ))
    cases.append(case(
        f"{g}/from_uniform_row_length_inner_dims",
        {"v": D([[1, 2], [3, 4], [5, 6], [7, 8]], "int64")},
        [N("y_", "from_uniform_row_length", ["v"], uniform_row_length=2)],
    ))
    cases.append(case(
        f"{g}/from_uniform_row_length_zero_with_nrows",
        {"v": D([], "int32", [0])},
        [N("y_", "from_uniform_row_length", ["v"], uniform_row_length=0, nrows=3)],
    ))
    cases.append(case(
        f"{g}/err_from_uniform_row_length_not_dividing",
        {"v": D([1, 2, 3, 4, 5, 6, 7], "int32")},
        [N("y_", "from_uniform_row_length", ["v"], uniform_row_length=3)],
        error="invalid_row_partition",
    ))

    rt2 = R([[[1, 2], [], [3]], [], [[4, 5, 6]]], "int32", 2)
    cases.append(case(
        f"{g}/accessors_rank3",
        {"x": rt2},
        [N("sp", "row_splits", ["x"]), N("l1", "row_lengths", ["x"]), N("l2", "row_lengths", ["x"], axis=2),
         N("lm1", "row_lengths", ["x"], axis=-1), N("ids", "value_rowids", ["x"]), N("n", "nrows", ["x"]),
         N("fv", "flat_values", ["x"]), N("bs", "bounding_shape", ["x"])],
    ))
    cases.append(case(
        f"{g}/accessors_inner_dims",
        {"x": R([[[1.0, 2.0]], [], [[3.0, 4.0], [5.0, 6.0]]], "float64", 1, [2])},
        [N("sp", "row_splits", ["x"]), N("l", "row_lengths", ["x"]), N("ids", "value_rowids", ["x"]),
         N("fv", "flat_values", ["x"]), N("bs", "bounding_shape", ["x"])],
    ))
    cases.append(case(
        f"{g}/accessors_zero_rows",
        {"x": R([], "string")},
        [N("sp", "row_splits", ["x"]), N("l", "row_lengths", ["x"]), N("n", "nrows", ["x"]),
         N("fv", "flat_values", ["x"]), N("bs", "bounding_shape", ["x"])],
    ))
    cases.append(case(
        f"{g}/row_lengths_axis0",
        {"x": R([[1, 2], [3], []], "int32")},
        [N("y_", "row_lengths", ["x"], axis=0)],
        note="row_lengths(axis=0) is the number of rows",
    ))
    cases.append(case(
        f"{g}/accessors_of_uniform_partition",
        {"v": D([1, 2, 3, 4, 5, 6], "int32")},
        [N("x", "from_uniform_row_length", ["v"], uniform_row_length=2), N("sp", "row_splits", ["x"]),
         N("l", "row_lengths", ["x"]), N("bs", "bounding_shape", ["x"])],
        outputs=["sp", "l", "bs"],
    ))
    cases.append(case(
        f"{g}/identity",
        {"s": R([[["a"], []], [["b", "c"]]], "string", 2), "u": D([[18446744073709551615, 0]], "uint64")},
        [N("s_", "identity", ["s"]), N("u_", "identity", ["u"])],
    ))
    return g, "row partition constructors and accessors", cases



def forms_more():
    """The attribute forms and error kinds of issue 10 ("Why"): a non-scalar `to_tensor` default,
    `from_tensor` with a vector padding and with `ragged_rank`, `gather` with `axis` / `batch_dims`,
    `strings.substr` with tensor `pos` / `len`, `bounding_shape` with `axis`, and the partitions
    TensorFlow refuses (negative uniform row length or nrows, sparse indices that are not
    right-ragged, a scalar padding of a rank-3 tensor)."""
    g = "forms_more"
    cases = []
    cases.append(case(
        f"{g}/to_tensor_vector_default",
        {"x": R([[[1, 2], [3, 4]], [], [[5, 6]]], "int32", 1, [2])},
        [N("y_", "to_tensor", ["x"], default_value=[9, 8]),
         N("shaped", "to_tensor", ["x"], default_value=[7, -7], shape=[3, 3, 2])],
    ))
    cases.append(case(
        f"{g}/from_tensor_vector_padding",
        {"t": D([[[1, 2], [0, 0]], [[3, 4], [5, 6]], [[0, 0], [0, 0]]], "int64")},
        [N("y_", "from_tensor", ["t"], padding=[0, 0])],
    ))
    cases.append(case(
        f"{g}/from_tensor_ragged_rank_2",
        {"t": D([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]], "float32")},
        [N("y_", "from_tensor", ["t"], ragged_rank=2)],
    ))
    cases.append(case(
        f"{g}/from_tensor_ragged_rank_2_padding",
        {"t": D([[[1, 0, 0], [2, 3, 0]], [[0, 0, 0], [4, 5, 6]]], "int32")},
        [N("y_", "from_tensor", ["t"], ragged_rank=2, padding=0)],
    ))
    cases.append(case(
        f"{g}/gather_axis_1_dense",
        {"p": D([[1, 2, 3], [4, 5, 6]], "int32"), "i": D([2, 0, 2], "int64")},
        [N("y_", "gather", ["p", "i"], axis=1)],
    ))
    cases.append(case(
        f"{g}/gather_batch_dims_1",
        {"p": D([[1, 2, 3], [4, 5, 6]], "float32"), "i": D([[2, 0], [1, 1]], "int32")},
        [N("y_", "gather", ["p", "i"], axis=1, batch_dims=1)],
    ))
    cases.append(case(
        f"{g}/gather_ragged_batch_dims_1",
        {"p": R([[1, 2, 3], [4], [5, 6]], "int32"), "i": R([[2, 0], [0, 0, 0], []], "int64")},
        [N("y_", "gather", ["p", "i"], batch_dims=1)],
    ))
    cases.append(case(
        f"{g}/substr_tensor_pos_len_dense",
        {"s": D(["abcdef", "xyz"], "string"), "pos": D([-3, 1], "int64"), "len": D([2, 1], "int64")},
        [N("y_", "strings.substr", ["s", "pos", "len"])],
    ))
    cases.append(case(
        f"{g}/bounding_shape_axis",
        {"x": R([[[1], [2, 3]], [], [[4, 5, 6]]], "int32", 2)},
        [N("all_", "bounding_shape", ["x"]), N("a0", "bounding_shape", ["x"], axis=0),
         N("a1", "bounding_shape", ["x"], axis=1), N("a2", "bounding_shape", ["x"], axis=2)],
    ))
    cases.append(case(
        f"{g}/err_from_uniform_row_length_negative",
        {"v": D([1, 2, 3, 4], "int32")},
        [N("y_", "from_uniform_row_length", ["v"], uniform_row_length=-2)],
        error="invalid_row_partition",
    ))
    cases.append(case(
        f"{g}/err_from_uniform_row_length_negative_nrows",
        {"v": D([], "int32", [0])},
        [N("y_", "from_uniform_row_length", ["v"], uniform_row_length=0, nrows=-1)],
        error="invalid_row_partition",
    ))
    cases.append(case(
        f"{g}/err_from_value_rowids_negative_nrows",
        {"v": D([1, 2], "int32"), "r": D([0, 0], "int64")},
        [N("y_", "from_value_rowids", ["v", "r"], nrows=-1)],
        error="invalid_row_partition",
    ))
    cases.append(case(
        f"{g}/err_from_sparse_not_right_ragged",
        {"i": D([[0, 1], [1, 0]], "int64"), "v": D([1, 2], "int32"), "s": D([2, 2], "int64")},
        [N("y_", "from_sparse", ["i", "v", "s"])],
        error="invalid_row_partition",
    ))
    cases.append(case(
        f"{g}/err_from_tensor_scalar_padding_rank3",
        {"t": D([[[1, 0], [0, 0]], [[3, 4], [0, 0]]], "int32")},
        [N("y_", "from_tensor", ["t"], padding=0)],
        error="incompatible_shapes",
    ))
    return g, "attribute forms and error kinds of issue 10", cases

def usability_more():
    g = "usability_more"
    cases = []
    ids = R([[1, 3, 1], [], [0, 5], [2, 2, 2, 2]], "int64")
    cases.append(case(f"{g}/bincount_all_values", {"x": ids}, [N("y", "bincount", ["x"])]))
    cases.append(case(f"{g}/bincount_per_row", {"x": ids}, [N("y", "bincount", ["x"], axis=-1)]))
    cases.append(case(f"{g}/bincount_per_row_int32_axis0", {"x": R([[4, 0], [1]], "int32")},
                      [N("y", "bincount", ["x"], axis=0), N("z", "bincount", ["x"], axis=-1, dtype="int64")],
                      outputs=["y", "z"]))
    cases.append(case(f"{g}/bincount_minlength", {"x": ids}, [N("y", "bincount", ["x"], axis=-1, minlength=8)]))
    cases.append(case(f"{g}/bincount_maxlength_drops_larger_values", {"x": ids},
                      [N("y", "bincount", ["x"], axis=-1, minlength=8, maxlength=3)]))
    cases.append(case(f"{g}/bincount_weights",
                      {"x": ids, "w": R([[0.5, 1.5, 2.0], [], [1.0, 3.0], [0.25, 0.5, 1.0, 2.0]], "float32")},
                      [N("y", "bincount", ["x", "w"], axis=-1), N("z", "bincount", ["x", "w"])], outputs=["y", "z"]))
    cases.append(case(f"{g}/bincount_binary_output_float64", {"x": ids},
                      [N("y", "bincount", ["x"], axis=-1, binary_output=True, dtype="float64")]))
    cases.append(case(f"{g}/bincount_no_values", {"x": R([[], []], "int32")},
                      [N("y", "bincount", ["x"], axis=-1), N("z", "bincount", ["x"], minlength=2)], outputs=["y", "z"]))
    cases.append(case(f"{g}/bincount_dense_matrix", {"x": D([[1, 1, 0], [3, 2, 3]], "int32")},
                      [N("y", "bincount", ["x"], axis=-1)]))
    cases.append(case(f"{g}/err_bincount_negative_value", {"x": R([[1, -3], [2]], "int32")},
                      [N("y_", "bincount", ["x"], axis=-1)], error="invalid_argument"))
    cases.append(case(f"{g}/err_bincount_weights_and_binary_output",
                      {"x": ids, "w": R([[0.5, 1.5, 2.0], [], [1.0, 3.0], [0.25, 0.5, 1.0, 2.0]], "float32")},
                      [N("y_", "bincount", ["x", "w"], axis=-1, binary_output=True)], error="invalid_argument"))
    cases.append(case(f"{g}/err_bincount_axis_1", {"x": ids}, [N("y_", "bincount", ["x"], axis=1)],
                      error="invalid_argument"))

    # A dense operand whose first dimension lines up with a ragged last dimension: TensorFlow 2.21
    # refuses it whatever the row lengths; size 1 and a dense [nrows, k] operand broadcast.
    square = R([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], "float32")
    cases.append(case(f"{g}/err_keepdims_slip_on_square_rows", {"x": square},
                      [N("m", "reduce_mean", ["x"], axis=1), N("y_", "subtract", ["x", "m"])],
                      error="incompatible_shapes", note="x - reduce_mean(x, 1) without keepdims, every row of nrows values"))
    cases.append(case(f"{g}/err_dense_vector_against_ragged_rows_of_its_length",
                      {"x": R([[1, 2, 3], [4, 5, 6]], "int32"), "v": D([1, 2, 3], "int32")},
                      [N("y_", "subtract", ["x", "v"])], error="incompatible_shapes"))
    cases.append(case(f"{g}/err_dense_vector_against_ragged_rank_2",
                      {"x": R([[[1, 2], [3, 4]], [[5, 6]]], "int32", ragged_rank=2), "v": D([1, 2], "int32")},
                      [N("y_", "add", ["x", "v"])], error="incompatible_shapes"))
    cases.append(case(f"{g}/err_dense_single_row_against_ragged_rows",
                      {"x": R([[1, 2, 3], [4, 5, 6]], "int32"), "t": D([[1, 1, 1]], "int32")},
                      [N("y_", "add", ["x", "t"])], error="incompatible_shapes"))
    cases.append(case(f"{g}/err_dense_broadcast_inside_ragged_rank_2",
                      {"x": R([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "int32", ragged_rank=2),
                       "t": D([[[1, 1]], [[2, 2]]], "int32")},
                      [N("y_", "add", ["x", "t"])], error="incompatible_shapes"))
    cases.append(case(f"{g}/vector_against_one_ragged_row_of_its_length",
                      {"x": R([[1, 2, 3]], "int32"), "v": D([1, 1, 1], "int32")}, [N("y", "add", ["x", "v"])]))
    cases.append(case(f"{g}/dense_cube_against_ragged_rank_2",
                      {"x": R([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "int32", ragged_rank=2),
                       "t": D([[[1, 1], [2, 2]], [[1, 1], [2, 2]]], "int32")},
                      [N("y", "add", ["x", "t"])]))
    cases.append(case(f"{g}/size_one_vector_against_ragged_rows",
                      {"x": square, "v": D([10.0], "float32")}, [N("y", "add", ["x", "v"])]))
    cases.append(case(f"{g}/dense_matrix_against_ragged_rows_of_its_width",
                      {"x": R([[1, 2, 3], [4, 5, 6]], "int32"), "t": D([[1, 1, 1], [2, 2, 2]], "int32")},
                      [N("y", "subtract", ["x", "t"])]))
    cases.append(case(f"{g}/keepdims_mean_on_square_rows", {"x": square},
                      [N("m", "reduce_mean", ["x"], axis=1, keepdims=True), N("y", "subtract", ["x", "m"])]))
    return g, "bincount and the dense-against-ragged broadcasting rule of issue 23", cases


GROUPS = [elementwise_more, reductions_more, structure_more, indexing_more, gather_segments, strings_more,
          partitions_more, forms_more, usability_more]


def build_files():
    files = {}
    seen = set()
    for group in GROUPS:
        name, description, specs = group()
        cases = []
        for spec in specs:
            if spec["name"] in seen:
                raise SpecError(f"duplicate case name {spec['name']}")
            seen.add(spec["name"])
            cases.append(evaluate(spec))
        files[f"{name}.json"] = {
            "format": FORMAT,
            "group": name,
            "generated_by": GENERATED_BY,
            "source": SOURCE,
            "description": f"{description}, evaluated by TensorFlow",
            "cases": cases,
        }
    return files


def render(doc):
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=OUT_DIR, help="output folder (default: tests/conformance_extra)")
    parser.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = parser.parse_args()
    version = f"tensorflow {tf.__version__}"
    if version != GENERATED_BY:
        sys.exit(f"this generator is pinned to {GENERATED_BY}, but {version} is installed")
    try:
        files = build_files()
    except SpecError as e:
        sys.exit(f"error: {e}")
    stale = []
    os.makedirs(args.out, exist_ok=True)
    for name, doc in files.items():
        path = os.path.join(args.out, name)
        text = render(doc)
        if args.check:
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    stale.append(name)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        print(f"{name}: {len(doc['cases'])} cases", file=sys.stderr)
    if stale:
        sys.exit(f"out of date: {', '.join(stale)} (rerun {SOURCE})")


if __name__ == "__main__":
    main()
