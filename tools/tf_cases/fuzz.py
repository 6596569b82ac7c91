#!/usr/bin/env python3
"""Differential fuzzing of ragtime against TensorFlow.

Generates random case specs (random ragged and dense inputs of every dtype, ragged rank 0-3, inner
dims, empty rows and zero rows; single ops or short chains over ragtime's op vocabulary with random
attributes), evaluates them with TensorFlow through `generate.py` (its op table, value encoding and
runner), writes them as `ragged-conformance/1` cases, runs the ragtime CLI on them and reports every
disagreement, grouped by op, with a shrunk reproducer each.

A case where TensorFlow raises is written with the sentinel error kind `tf_raised`: TensorFlow's
exceptions do not map onto ragtime's kinds, so such a case only checks that ragtime fails too (any
kind). Disagreements come in four classes:

    value_mismatch    both return values, and they differ
    ragtime_refused   TensorFlow returns a value, ragtime fails
    ragtime_accepted  TensorFlow raises, ragtime returns a value
    panic / crash     ragtime panics, crashes or hangs

Known differences (TensorFlow bugs and quirks, documented ragtime decisions) are dropped before
ragtime runs; see FILTERS.

    python tools/tf_cases/fuzz.py --seed 1 --cases 2000
    python tools/tf_cases/fuzz.py --seed 7 --cases 500 --ops concat,stack --debug
"""

import argparse
import collections
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import generate as gen  # noqa: E402
from generate import C, N, Value  # noqa: E402

TF_RAISED = "tf_raised"
BOOL = "bool"
STRING = "string"
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTS = SIGNED + UNSIGNED
FLOATS = ["float32", "float64"]
NUMERIC = INTS + FLOATS
ALL_DTYPES = list(gen.DTYPES)
INDEX_DTYPES = ["int32", "int64"]

NAN = float("nan")
INF = float("inf")
STRINGS = ["", "a", "b", "ab", "A", "Hello", "hé", "世界", "🙂", " ", "a b", "a,b", ",", "  x  y ", "ÉCOLE",
           "a<>b", "x\ty", b"\xff", b"a\xc3", "a\x00b", "abcdefgh"]


class Skip(Exception):
    """The generator cannot make this op from the given main input; pick another."""


# ------------------------------------------------------------------------------------------------
# Random values. A layout is a list of sizes: an int for a uniform dimension, None for a ragged one
# (ragged dims come right after the outer dim, then uniform inner dims); dense values have no None.


def row_count(rng):
    return 0 if rng.random() < 0.07 else rng.randint(1, 5)


def row_length(rng):
    return 0 if rng.random() < 0.2 else rng.randint(1, 4)


def dim_size(rng):
    return 0 if rng.random() < 0.07 else rng.randint(1, 4)


def scalar(rng, dtype, tame=False):
    """A random element; `tame` keeps to small finite values."""
    if dtype == BOOL:
        return rng.random() < 0.5
    if dtype == STRING:
        return rng.choice(STRINGS)
    r = rng.random()
    if dtype in FLOATS:
        if not tame and r < 0.06:
            return rng.choice([NAN, INF, -INF, -0.0, 1e30, -1e30, 1e-30, 3.5e38])
        if r < 0.5:
            return float(rng.randint(-4, 6))
        if r < 0.75:
            return rng.randint(-20, 20) / 4
        return round(rng.uniform(-10, 10), 3)
    info = np.iinfo(dtype)
    if not tame and r < 0.06:
        return rng.choice([int(info.min), int(info.max), int(info.max) - 1, int(info.min) + 1])
    return rng.randint(max(int(info.min), -5), 9)


def build(rng, sizes, leaf, template=None, keep=0):
    """Nested lists for `sizes`: levels above `keep` copy the list lengths of `template`; below, a
    uniform level has its size and a ragged level random row lengths; leaves come from `leaf()`."""
    rank = len(sizes)

    def rec(level, t):
        if level == rank:
            return leaf()
        if level < keep:
            return [rec(level + 1, c) for c in t]
        n = sizes[level] if sizes[level] is not None else row_length(rng)
        return [rec(level + 1, None) for _ in range(n)]

    return rec(0, template)


def make_value(value, dtype, sizes):
    """The Value of nested lists `value` laid out as `sizes`."""
    ragged_rank = sum(1 for s in sizes[1:] if s is None)
    if ragged_rank == 0:
        return Value(value, dtype, 0, shape=list(sizes))
    return Value(value, dtype, ragged_rank, inner_shape=list(sizes[1 + ragged_rank:]))


def sizes_of(v):
    """The layout of a Value (ragged dims as None)."""
    if v.ragged_rank == 0:
        return list(v.shape) if v.shape is not None else list(np.array(v.value, dtype=object).shape)
    return [len(v.value)] + [None] * v.ragged_rank + list(v.inner_shape)


def rank_of(v):
    return len(sizes_of(v))


def random_layout(rng, ragged=None, min_rank=0):
    if ragged is None:
        ragged = rng.random() < 0.75
    if ragged:
        rr = rng.choice([1, 1, 1, 2, 2, 3])
        inner = rng.choice([[], [], [], [], [1], [2], [3], [2, 2], [0]])
        sizes = [row_count(rng)] + [None] * rr + list(inner)
    else:
        rank = rng.choice([0, 1, 1, 2, 2, 3])
        sizes = [dim_size(rng) for _ in range(rank)]
    while len(sizes) < min_rank:
        sizes.append(dim_size(rng))
    return sizes


def fresh(rng, dtype, sizes=None, tame=False, **layout):
    sizes = sizes if sizes is not None else random_layout(rng, **layout)
    return make_value(build(rng, sizes, lambda: scalar(rng, dtype, tame)), dtype, sizes)


def variant(rng, x, keep, dtype=None, sizes=None, tame=False, leaf=None):
    """A value with x's list structure down to level `keep` and new random content below."""
    dtype = dtype or x.dtype
    sizes = sizes if sizes is not None else sizes_of(x)
    leaf = leaf or (lambda: scalar(rng, dtype, tame))
    return make_value(build(rng, sizes, leaf, template=x.value, keep=keep), dtype, sizes)


def from_tf(t):
    """A TensorFlow result as a Value (to feed it to a later node of a chain, or to a shrunk case)."""
    if isinstance(t, tf.RaggedTensor):
        return Value(t.to_list(), t.dtype.name, t.ragged_rank, inner_shape=t.flat_values.shape.as_list()[1:])
    array = t.numpy()
    value = array if isinstance(array, bytes) else array.tolist()
    return Value(value, t.dtype.name, 0, shape=t.shape.as_list())


def map_leaves(value, depth, f):
    if depth == 0:
        return f(value)
    return [map_leaves(v, depth - 1, f) for v in value]


def leaves(value, depth):
    if depth == 0:
        return [value]
    return [leaf for v in value for leaf in leaves(v, depth - 1)]


# ------------------------------------------------------------------------------------------------
# Op generators. Each takes (builder, main input reference, main input Value) and returns a node;
# with a main input of None it makes its own inputs. A chain feeds one node's TensorFlow result to
# the next generator as its main input.


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.inputs = {}
        self.outs = 0

    def add(self, value, const=False):
        """A graph input (or an inline constant, sometimes, when `const`) holding `value`."""
        if const and self.rng.random() < 0.3:
            return C(value)
        name = f"i{len(self.inputs)}"
        self.inputs[name] = value
        return name

    def out(self):
        self.outs += 1
        return f"y{self.outs}"

    def main(self, x_ref, x, dtypes, **layout):
        """The main input: the given one, or a fresh one of one of `dtypes` (another one, rarely)."""
        if x is not None:
            return x_ref, x
        rng = self.rng
        dtype = rng.choice(dtypes) if rng.random() < 0.93 else rng.choice(ALL_DTYPES)
        x = fresh(rng, dtype, **layout)
        return self.add(x), x


def pick_dtype(rng, x):
    """The dtype of a second operand: x's, or (rarely) another one."""
    return x.dtype if rng.random() < 0.93 else rng.choice(ALL_DTYPES)


def partner(rng, x, dtype):
    """An operand for a binary op with x, usually broadcast-compatible with it."""
    sizes = sizes_of(x)
    rank = len(sizes)
    r = rng.random()
    if r < 0.4:
        return variant(rng, x, rank, dtype)
    if r < 0.55 or rank == 0:
        return Value(scalar(rng, dtype), dtype, 0, shape=[])
    if r < 0.75:
        # A dense operand aligned to x's trailing dims, each 1 or x's size (ragged dims 1, or rarely
        # the length of x's first row, which broadcasts only if every row has it).
        k = rng.randint(1, rank)
        dense = []
        for level in range(rank - k, rank):
            s = sizes[level]
            if s is None:
                s = 1 if rng.random() < 0.85 else len(leaves(x.value, level)[0]) if leaves(x.value, level) else 1
            elif rng.random() < 0.3:
                s = 1
            dense.append(s)
        return fresh(rng, dtype, sizes=dense)
    if r < 0.88 and x.ragged_rank > 0:
        # A ragged operand with x's first ragged levels, then dims of size 1 (or x's uniform size).
        level = rng.randint(1, x.ragged_rank)
        rest = [1 if s is None or rng.random() < 0.5 else s for s in sizes[1 + level:]]
        new_sizes = sizes[:1 + level] + rest
        return make_value(build(rng, new_sizes, lambda: scalar(rng, dtype), template=x.value, keep=1 + level),
                          dtype, new_sizes)
    return fresh(rng, dtype)


UNARY_DTYPES = {
    "negative": SIGNED + FLOATS,
    "abs": SIGNED + FLOATS,
    "sign": SIGNED + FLOATS,
    "square": NUMERIC,
    "round": NUMERIC,
    "logical_not": [BOOL],
    "bitwise_invert": INTS,
    "identity": ALL_DTYPES,
    "strings.lower": [STRING],
    "strings.upper": [STRING],
}
BINARY_DTYPES = {
    "add": NUMERIC + [STRING],
    "equal": ALL_DTYPES,
    "not_equal": ALL_DTYPES,
    "logical_and": [BOOL],
    "logical_or": [BOOL],
    "logical_xor": [BOOL],
    "bitwise_and": INTS,
    "bitwise_or": INTS,
    "bitwise_xor": INTS,
}
for _op in ("sqrt", "exp", "log", "sin", "cos", "tanh", "sigmoid", "floor", "ceil"):
    UNARY_DTYPES[_op] = FLOATS
for _op in ("subtract", "multiply", "divide", "floordiv", "floormod", "pow", "maximum", "minimum", "less",
            "less_equal", "greater", "greater_equal"):
    BINARY_DTYPES[_op] = NUMERIC


def g_unary(op):
    def g(b, x_ref, x):
        x_ref, x = b.main(x_ref, x, UNARY_DTYPES[op])
        return N(b.out(), op, [x_ref])
    return g


def g_binary(op):
    def g(b, x_ref, x):
        rng = b.rng
        x_ref, x = b.main(x_ref, x, BINARY_DTYPES[op])
        y = partner(rng, x, pick_dtype(rng, x))
        if op in ("floordiv", "floormod", "pow") and y.dtype in INTS and rng.random() < 0.9:
            # Integer division by zero and negative integer exponents raise: keep them rare, with y
            # as the divisor / exponent.
            top = int(np.iinfo(y.dtype).max)
            y = Value(map_leaves(y.value, rank_of(y), lambda v: min(abs(v), top) or 1), y.dtype, y.ragged_rank,
                      y.inner_shape, y.shape)
            return N(b.out(), op, [x_ref, b.add(y, const=True)])
        ins = [x_ref, b.add(y, const=True)]
        if rng.random() < 0.5:
            ins.reverse()
        return N(b.out(), op, ins)
    return g


def in_range(x, dtype):
    """True if every value of the float tensor x fits the integer dtype (a float cast out of range,
    or of NaN, is undefined in C++, so TensorFlow's result depends on the machine)."""
    info = np.iinfo(dtype)
    for v in leaves(x.value, rank_of(x)):
        if isinstance(v, float) and (math.isnan(v) or not (int(info.min) - 1 < v < int(info.max) + 1)):
            return False
    return True


def g_cast(b, x_ref, x):
    x_ref, x = b.main(x_ref, x, ALL_DTYPES)
    to = b.rng.choice(ALL_DTYPES)
    if x.dtype in FLOATS and to in INTS and not in_range(x, to):
        to = b.rng.choice(FLOATS + [BOOL, STRING])
    return N(b.out(), "cast", [x_ref], dtype=to)


def g_where(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES)
    cond = variant(rng, x, rank_of(x), BOOL) if rng.random() < 0.7 else partner(rng, x, BOOL)
    y = partner(rng, x, pick_dtype(rng, x))
    ins = [x_ref, b.add(y, const=True)]
    if rng.random() < 0.5:
        ins.reverse()
    return N(b.out(), "where", [b.add(cond)] + ins)


def random_axis(rng, rank, allow_none=True, allow_list=True):
    r = rng.random()
    if allow_none and r < 0.15:
        return None
    if rank == 0 or rng.random() < 0.03:
        return rng.randint(-rank - 1, rank)  # may be out of range
    if allow_list and r < 0.35:
        axes = rng.sample(range(rank), rng.randint(1, rank))
        return [a - rank if rng.random() < 0.3 else a for a in axes]
    a = rng.randrange(rank)
    return a - rank if rng.random() < 0.3 else a


def g_reduce(op):
    dtypes = [BOOL] if op in ("reduce_all", "reduce_any") else NUMERIC

    def g(b, x_ref, x):
        x_ref, x = b.main(x_ref, x, dtypes)
        attrs = {}
        axis = random_axis(b.rng, rank_of(x))
        if axis is not None or b.rng.random() < 0.5:
            attrs["axis"] = axis
        if b.rng.random() < 0.4:
            attrs["keepdims"] = b.rng.random() < 0.7
        return N(b.out(), op, [x_ref], **attrs)
    return g


def concat_operand(rng, x, axis, stack):
    """Another operand for concat / stack along `axis` with x: x's structure above the axis, new
    content from the axis down (for concat, a uniform axis may change size)."""
    sizes = sizes_of(x)
    rank = len(sizes)
    if rng.random() < 0.08:
        return fresh(rng, x.dtype)  # probably incompatible
    if stack:
        keep = rank if axis >= rank else axis
        return variant(rng, x, keep)
    keep = axis
    new_sizes = list(sizes)
    if axis < rank and new_sizes[axis] is not None:
        new_sizes[axis] = dim_size(rng) if axis > 0 else row_count(rng)
    if axis == 0 and rng.random() < 0.3 and x.ragged_rank > 0:
        # concat along axis 0 of ragged and dense operands of the same rank.
        dense = [row_count(rng)] + [dim_size(rng) if s is None else s for s in sizes[1:]]
        return fresh(rng, x.dtype, sizes=dense)
    return variant(rng, x, keep, sizes=new_sizes)


def g_concat(op):
    stack = op == "stack"

    def g(b, x_ref, x):
        rng = b.rng
        x_ref, x = b.main(x_ref, x, ALL_DTYPES)
        rank = rank_of(x)
        if rank == 0 and not stack:
            raise Skip
        axis = rng.randint(0, rank if stack else rank - 1)
        others = [concat_operand(rng, x, axis, stack) for _ in range(rng.choice([0, 1, 1, 1, 2]))]
        if rng.random() < 0.05:
            others.append(fresh(rng, rng.choice(ALL_DTYPES)))
        ins = [x_ref] + [b.add(o) for o in others]
        rng.shuffle(ins)
        if rng.random() < 0.3:
            axis -= rank + 1 if stack else rank
        if rng.random() < 0.03:
            axis = rank + 2
        return N(b.out(), op, ins, axis=axis)
    return g


def g_tile(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES)
    rank = rank_of(x)
    n = rank if rng.random() < 0.95 else rng.randint(0, rank + 1)
    multiples = [rng.choice([0, 1, 1, 2, 3]) for _ in range(n)]
    if rng.random() < 0.03 and multiples:
        multiples[rng.randrange(n)] = -1
    return N(b.out(), "tile", [x_ref], multiples=multiples)


def g_reverse(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES)
    rank = rank_of(x)
    if rank == 0:
        axes = [] if rng.random() < 0.8 else [0]
    else:
        axes = rng.sample(range(rank), rng.randint(0, rank))
        axes = [a - rank if rng.random() < 0.3 else a for a in axes]
        if rng.random() < 0.03:
            axes.append(rank)
    return N(b.out(), "reverse", [x_ref], axis=axes)


def slice_text(rng, n):
    def bound():
        return "" if rng.random() < 0.4 else str(rng.randint(-n - 2, n + 2))
    step = rng.choice(["", "", "", "1", "2", "-1", "-1", "-2", "3"] + (["0"] if rng.random() < 0.02 else []))
    text = f"{bound()}:{bound()}"
    return f"{text}:{step}" if step else text


def g_getitem(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES, min_rank=1)
    sizes = sizes_of(x)
    rank = len(sizes)
    items = []
    level = 0
    ellipsis = False
    while level < rank + (1 if rng.random() < 0.05 else 0):
        if rng.random() < 0.25 and items:
            break
        r = rng.random()
        n = sizes[level] if level < rank and sizes[level] is not None else 3
        if r < 0.1 and not ellipsis:
            items.append("...")
            ellipsis = True
            level = max(level + 1, rank - rng.randint(0, max(0, rank - level - 1)))
            continue
        if r < 0.18:
            items.append("tf.newaxis")
            continue
        if r < 0.45 and (level < rank and (sizes[level] is not None or rng.random() < 0.1)):
            items.append(str(rng.randint(-n - 1, n) if rng.random() < 0.1 else rng.randint(-n, max(n - 1, 0))))
        else:
            items.append(slice_text(rng, n))
        level += 1
    key = ", ".join(items) if items else "()"
    return N(b.out(), "getitem", [x_ref], key=key)


def indices(rng, n):
    """An index tensor (int32 / int64; a scalar, a vector, a matrix or ragged) into a dim of size n,
    mostly in range."""
    bad = rng.random() < 0.05

    def leaf():
        if bad and rng.random() < 0.5:
            return rng.choice([-1, n, n + 3])
        return rng.randrange(n) if n > 0 else 0

    sizes = rng.choice([[rng.randint(0, 5)], [rng.randint(0, 5)], [rng.randint(0, 3), rng.randint(0, 3)],
                        [row_count(rng), None], [row_count(rng), None], [row_count(rng), None, None], []])
    return make_value(build(rng, sizes, leaf), rng.choice(INDEX_DTYPES), sizes)


def g_gather(op):
    def g(b, x_ref, x):
        rng = b.rng
        if op == "embedding_lookup" and x is None and rng.random() < 0.9:
            x = fresh(rng, rng.choice(NUMERIC), ragged=False, min_rank=2)
            x_ref = b.add(x)
        x_ref, x = b.main(x_ref, x, ALL_DTYPES, min_rank=1)
        sizes = sizes_of(x)
        if not sizes:
            raise Skip
        return N(b.out(), op, [x_ref, b.add(indices(rng, sizes[0]), const=True)])
    return g


def g_boolean_mask(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES, min_rank=1)
    rank = rank_of(x)
    if rank == 0:
        raise Skip
    k = rng.randint(1, rank)
    sizes = sizes_of(x)[:k]
    if rng.random() < 0.05:
        mask = fresh(rng, BOOL)
    else:
        mask = make_value(build(rng, sizes, lambda: rng.random() < 0.6, template=x.value, keep=k), BOOL, sizes)
    return N(b.out(), "boolean_mask", [x_ref, b.add(mask)])


def sorted_segment_ids(rng, n):
    """n sorted segment ids, rarely with a negative one or out of order."""
    ids = sorted(rng.randint(0, 4) for _ in range(n))
    if rng.random() < 0.05 and ids:
        ids[rng.randrange(len(ids))] = rng.choice([-1, 7])
        if rng.random() < 0.5:
            ids.reverse()
    return ids


def g_segment(op):
    def g(b, x_ref, x):
        rng = b.rng
        x_ref, x = b.main(x_ref, x, NUMERIC, ragged=rng.random() < 0.1, min_rank=1)
        sizes = sizes_of(x)
        if not sizes:
            raise Skip
        n = sizes[0] + (rng.choice([-1, 1]) if rng.random() < 0.04 else 0)
        ids = sorted_segment_ids(rng, max(n, 0))
        return N(b.out(), op, [x_ref, b.add(Value(ids, rng.choice(INDEX_DTYPES), 0, shape=[len(ids)]))])
    return g


def g_unsorted_segment_sum(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, NUMERIC, min_rank=1)
    sizes = sizes_of(x)
    if not sizes:
        raise Skip
    num = rng.randint(0, 5)
    k = 1 if x.ragged_rank == 0 and rng.random() < 0.6 else rng.randint(1, len(sizes))
    ids_sizes = sizes[:k]

    def leaf():
        return rng.randint(-1, num - 1) if num > 0 and rng.random() < 0.97 else rng.randint(-1, num + 1)

    ids = make_value(build(rng, ids_sizes, leaf, template=x.value, keep=k), rng.choice(INDEX_DTYPES), ids_sizes)
    if rng.random() < 0.03:
        num = -1
    return N(b.out(), "unsorted_segment_sum", [x_ref, b.add(ids)], num_segments=num)


def g_fill(b, x_ref, x):
    rng = b.rng
    dims = [dim_size(rng) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.03 and dims:
        dims[0] = -1
    dtype = rng.choice(ALL_DTYPES)
    value = Value(scalar(rng, dtype), dtype, 0, shape=[])
    return N(b.out(), "fill", [b.add(Value(dims, rng.choice(INDEX_DTYPES), 0, shape=[len(dims)]), const=True),
                               b.add(value, const=True)])


def random_values(b, n):
    """Values for a partition constructor: n rows, dense (maybe with inner dims) or ragged."""
    rng = b.rng
    dtype = rng.choice(ALL_DTYPES)
    sizes = random_layout(rng, ragged=rng.random() < 0.2, min_rank=1)
    sizes[0] = n
    return fresh(rng, dtype, sizes=sizes)


def corrupt(rng, seq):
    seq = list(seq)
    if seq and rng.random() < 0.5:
        i = rng.randrange(len(seq))
        seq[i] += rng.choice([-2, -1, 1, 2])
    elif seq:
        seq.pop(rng.randrange(len(seq)))
    return seq


def splits_of(lengths):
    splits = [0]
    for n in lengths:
        splits.append(splits[-1] + n)
    return splits


def index_vector(rng, seq):
    return Value(list(seq), rng.choice(INDEX_DTYPES), 0, shape=[len(seq)])


def g_from_partition(op):
    def g(b, x_ref, x):
        rng = b.rng
        lengths = [row_length(rng) for _ in range(row_count(rng))]
        bad = rng.random() < 0.06
        if x is not None:
            # A chained main input becomes the values: partition its rows.
            n = sizes_of(x)[0] if sizes_of(x) else None
            if n is None:
                raise Skip
            lengths = []
            while sum(lengths) < n:
                lengths.append(min(row_length(rng), n - sum(lengths)))
            if rng.random() < 0.3:
                lengths.insert(rng.randint(0, len(lengths)), 0)
            values_ref = x_ref
        else:
            values_ref = b.add(random_values(b, sum(lengths)))
        attrs = {}
        if op == "from_row_splits":
            part = splits_of(lengths)
        elif op == "from_row_lengths":
            part = lengths
        elif op == "from_value_rowids":
            part = [i for i, n in enumerate(lengths) for _ in range(n)]
            if rng.random() < 0.6:
                attrs["nrows"] = len(lengths) + rng.choice([0, 0, 1, 2])
        part = corrupt(rng, part) if bad else part
        return N(b.out(), op, [values_ref, b.add(index_vector(rng, part), const=True)], **attrs)
    return g


def g_from_nested_row_splits(b, x_ref, x):
    rng = b.rng
    levels = rng.randint(1, 3)
    counts = [row_count(rng)]
    all_splits = []
    for _ in range(levels):
        lengths = [row_length(rng) for _ in range(counts[-1])]
        all_splits.append(splits_of(lengths))
        counts.append(sum(lengths))
    if rng.random() < 0.06:
        k = rng.randrange(levels)
        all_splits[k] = corrupt(rng, all_splits[k])
    dtype = rng.choice(INDEX_DTYPES)
    ins = [b.add(random_values(b, counts[-1]))] + [b.add(Value(s, dtype, 0, shape=[len(s)])) for s in all_splits]
    return N(b.out(), "from_nested_row_splits", ins)


def g_from_uniform_row_length(b, x_ref, x):
    rng = b.rng
    length = rng.choice([0, 1, 2, 3])
    nrows = row_count(rng)
    if x is not None:
        n = sizes_of(x)[0] if sizes_of(x) else None
        if n is None:
            raise Skip
        values_ref = x_ref
        if length and n % length:
            length = 1
        nrows = n // length if length else rng.randint(0, 3)
    else:
        values_ref = b.add(random_values(b, nrows * length + (1 if rng.random() < 0.05 else 0)))
    attrs = {"uniform_row_length": length}
    if length == 0 or rng.random() < 0.4:
        attrs["nrows"] = nrows
    return N(b.out(), "from_uniform_row_length", [values_ref], **attrs)


def g_from_tensor(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES, ragged=False, min_rank=2)
    sizes = sizes_of(x)
    if x.ragged_rank or len(sizes) < 2:
        raise Skip
    ins = [x_ref]
    attrs = {}
    r = rng.random()
    if r < 0.35:
        lengths = [rng.randint(0, sizes[1] + (1 if rng.random() < 0.1 else 0)) for _ in range(sizes[0])]
        ins.append(b.add(index_vector(rng, lengths)))
    elif r < 0.7:
        if x.dtype == STRING:
            attrs["padding"] = rng.choice(["", "a"])
        elif x.dtype == BOOL:
            attrs["padding"] = rng.random() < 0.5
        elif x.dtype in FLOATS:
            attrs["padding"] = rng.choice([0.0, 1.0, -0.0])
        else:
            attrs["padding"] = rng.choice([0, 1])
    return N(b.out(), "from_tensor", ins, **attrs)


def g_to_tensor(b, x_ref, x):
    rng = b.rng
    x_ref, x = b.main(x_ref, x, ALL_DTYPES, ragged=True)
    attrs = {}
    if rng.random() < 0.4:
        if x.dtype == STRING:
            # An attribute is JSON text: no bytes that are not UTF-8.
            attrs["default_value"] = rng.choice([t for t in STRINGS if isinstance(t, str)])
        else:
            attrs["default_value"] = scalar(rng, x.dtype, tame=True)
    if rng.random() < 0.4:
        attrs["shape"] = [None if rng.random() < 0.3 else rng.randint(0, 4) for _ in range(rank_of(x))]
    return N(b.out(), "to_tensor", [x_ref], **attrs)


def g_to_sparse(b, x_ref, x):
    x_ref, x = b.main(x_ref, x, ALL_DTYPES, ragged=True)
    return N([b.out(), b.out(), b.out()], "to_sparse", [x_ref])


def g_from_sparse(b, x_ref, x):
    rng = b.rng
    nrows = row_count(rng)
    ncols = rng.randint(0, 4)
    idx = [[r, c] for r in range(nrows) for c in range(rng.randint(0, ncols))]
    if rng.random() < 0.05 and idx:
        idx[rng.randrange(len(idx))][1] += 1
    dtype = rng.choice(ALL_DTYPES)
    vals = [scalar(rng, dtype) for _ in idx]
    shape = [nrows + rng.choice([0, 0, 1]), ncols]
    return N(b.out(), "from_sparse", [b.add(Value(idx, "int64", 0, shape=[len(idx), 2])),
                                      b.add(Value(vals, dtype, 0, shape=[len(vals)])),
                                      b.add(Value(shape, "int64", 0, shape=[2]))])


def g_accessor(op):
    def g(b, x_ref, x):
        rng = b.rng
        x_ref, x = b.main(x_ref, x, ALL_DTYPES, ragged=rng.random() < 0.97)
        attrs = {}
        if op == "row_lengths" and rng.random() < 0.7:
            rank = rank_of(x)
            attrs["axis"] = rng.randint(-rank, rank - 1) if rank else 1
        return N(b.out(), op, [x_ref], **attrs)
    return g


def g_range(b, x_ref, x):
    rng = b.rng
    dtype = rng.choice(["int32", "int64", "int32", "int64", "float32", "float64"])
    n = row_count(rng)

    def vec(lo, hi, nonzero=False):
        def v():
            val = rng.randint(lo, hi)
            if nonzero and val == 0 and rng.random() < 0.95:
                val = 1
            if dtype in FLOATS:
                return val / 2 if rng.random() < 0.3 else float(val)  # halves: exact steps
            return val
        if rng.random() < 0.25:
            return Value(v(), dtype, 0, shape=[])
        return Value([v() for _ in range(n)], dtype, 0, shape=[n])

    args = [vec(-3, 6)]
    if rng.random() < 0.7:
        args.append(vec(-3, 8))
        if rng.random() < 0.7:
            args.append(vec(-3, 3, nonzero=True))
    return N(b.out(), "ragged.range", [b.add(a, const=True) for a in args])


def as_bytes(s):
    return s.encode("utf-8") if isinstance(s, str) else s


def string_input(b, x_ref, x, **layout):
    return b.main(x_ref, x, [STRING], **layout)


def g_split(b, x_ref, x):
    rng = b.rng
    x_ref, x = string_input(b, x_ref, x)
    attrs = {}
    if rng.random() < 0.6:
        attrs["sep"] = rng.choice([",", " ", "<>", "a", "b"])
    if rng.random() < 0.3:
        attrs["maxsplit"] = rng.choice([-1, 0, 1, 2])
    return N(b.out(), "strings.split", [x_ref], **attrs)


def g_substr(b, x_ref, x):
    rng = b.rng
    x_ref, x = string_input(b, x_ref, x)
    attrs = {}
    unit = rng.choice(["BYTE", "UTF8_CHAR"])
    if rng.random() < 0.5:
        attrs["unit"] = unit
    # A position past the end of any string raises: mostly stay within the shortest one.
    texts = [as_bytes(s) for s in leaves(x.value, rank_of(x))] if x.dtype == STRING else []
    if unit == "UTF8_CHAR":
        texts = [t.decode("utf-8", "replace") for t in texts]
    shortest = min((len(t) for t in texts), default=0)
    pos = rng.randint(-shortest, shortest) if rng.random() < 0.85 else rng.randint(-3, 4)
    return N(b.out(), "strings.substr", [x_ref], pos=pos, len=rng.randint(-2, 5), **attrs)


def g_join(b, x_ref, x):
    rng = b.rng
    x_ref, x = string_input(b, x_ref, x)
    others = [variant(rng, x, rank_of(x)) if rng.random() < 0.7 else partner(rng, x, STRING)
              for _ in range(rng.choice([0, 1, 1, 2]))]
    ins = [x_ref] + [b.add(o, const=True) for o in others]
    rng.shuffle(ins)
    attrs = {"separator": rng.choice(["", "-", ", "])} if rng.random() < 0.7 else {}
    return N(b.out(), "strings.join", ins, **attrs)


def g_reduce_join(b, x_ref, x):
    rng = b.rng
    x_ref, x = string_input(b, x_ref, x)
    attrs = {}
    axis = random_axis(rng, rank_of(x))
    if axis is not None or rng.random() < 0.5:
        attrs["axis"] = axis
    if rng.random() < 0.4:
        attrs["keepdims"] = rng.random() < 0.6
    if rng.random() < 0.7:
        attrs["separator"] = rng.choice(["", "-", " "])
    return N(b.out(), "strings.reduce_join", [x_ref], **attrs)


def g_length(b, x_ref, x):
    x_ref, x = string_input(b, x_ref, x)
    attrs = {"unit": b.rng.choice(["BYTE", "UTF8_CHAR"])} if b.rng.random() < 0.6 else {}
    return N(b.out(), "strings.length", [x_ref], **attrs)


def g_hash(b, x_ref, x):
    x_ref, x = string_input(b, x_ref, x)
    num = b.rng.choice([1, 2, 10, 1000, 2 ** 31, 2 ** 62, 0 if b.rng.random() < 0.1 else 7])
    return N(b.out(), "strings.to_hash_bucket_fast", [x_ref], num_buckets=num)


def g_ngrams(b, x_ref, x):
    rng = b.rng
    x_ref, x = string_input(b, x_ref, x, min_rank=1)
    width = rng.randint(1, 4) if rng.random() < 0.8 else sorted(rng.sample(range(1, 5), rng.randint(1, 3)))
    attrs = {"ngram_width": width}
    if rng.random() < 0.4:
        attrs["separator"] = rng.choice(["", "_", " "])
    if rng.random() < 0.4:
        attrs["pad_values"] = rng.choice(["#", ["<s>", "</s>"], ""])
        if rng.random() < 0.5:
            attrs["padding_width"] = rng.choice([-1, 1, 2, 5])
    if rng.random() < 0.3:
        attrs["preserve_short_sequences"] = rng.random() < 0.7
    return N(b.out(), "strings.ngrams", [x_ref], **attrs)


GENERATORS = {}
for _op in UNARY_DTYPES:
    GENERATORS[_op] = g_unary(_op)
for _op in BINARY_DTYPES:
    GENERATORS[_op] = g_binary(_op)
for _op in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all", "reduce_any"):
    GENERATORS[_op] = g_reduce(_op)
for _op in ("segment_sum", "segment_mean", "segment_max", "segment_min"):
    GENERATORS[_op] = g_segment(_op)
for _op in ("from_row_splits", "from_row_lengths", "from_value_rowids"):
    GENERATORS[_op] = g_from_partition(_op)
for _op in ("row_splits", "row_lengths", "value_rowids", "nrows", "flat_values", "bounding_shape"):
    GENERATORS[_op] = g_accessor(_op)
GENERATORS.update({
    "cast": g_cast,
    "where": g_where,
    "concat": g_concat("concat"),
    "stack": g_concat("stack"),
    "tile": g_tile,
    "reverse": g_reverse,
    "getitem": g_getitem,
    "gather": g_gather("gather"),
    "embedding_lookup": g_gather("embedding_lookup"),
    "boolean_mask": g_boolean_mask,
    "unsorted_segment_sum": g_unsorted_segment_sum,
    "fill": g_fill,
    "from_nested_row_splits": g_from_nested_row_splits,
    "from_uniform_row_length": g_from_uniform_row_length,
    "from_tensor": g_from_tensor,
    "to_tensor": g_to_tensor,
    "to_sparse": g_to_sparse,
    "from_sparse": g_from_sparse,
    "ragged.range": g_range,
    "strings.split": g_split,
    "strings.substr": g_substr,
    "strings.join": g_join,
    "strings.reduce_join": g_reduce_join,
    "strings.length": g_length,
    "strings.lower": g_unary("strings.lower"),
    "strings.upper": g_unary("strings.upper"),
    "strings.to_hash_bucket_fast": g_hash,
    "strings.ngrams": g_ngrams,
})
# The dtypes an op takes (for picking the next op of a chain); ops not listed take any.
OP_DTYPES = {**UNARY_DTYPES, **BINARY_DTYPES}
OP_DTYPES.update({op: NUMERIC for op in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                                          "segment_sum", "segment_mean", "segment_max", "segment_min",
                                          "unsorted_segment_sum")})
OP_DTYPES.update({op: [BOOL] for op in ("reduce_all", "reduce_any")})
OP_DTYPES.update({op: [STRING] for op in GENERATORS if op.startswith("strings.")})
# Ops that make their own inputs and cannot take a chained one.
SOURCES = {"fill", "from_nested_row_splits", "from_sparse", "ragged.range"}
assert set(GENERATORS) == set(gen.OPS), sorted(set(GENERATORS) ^ set(gen.OPS))


# ------------------------------------------------------------------------------------------------
# Known differences, dropped before ragtime runs. Each is (name, why, predicate); the predicate sees
# one node: its op, attrs, TensorFlow input values, TensorFlow's result (or the exception), and for
# each input whether it is inexact (computed, directly or not, by a node of INEXACT).

ACCESSORS = {"row_splits", "row_lengths", "value_rowids", "nrows", "flat_values", "bounding_shape"}
INT32_PARTITION_MESSAGES = ("must have same dtype", "row_splits dtype", "mismatched row partition dtypes")


def is_ragged(t):
    return isinstance(t, tf.RaggedTensor)


def raised(result, *fragments):
    return isinstance(result, Exception) and any(f in str(result) for f in fragments)


def has_int32_partition(t):
    return is_ragged(t) and t.row_splits.dtype == tf.int32


def has_empty_item(t):
    """True if t's items (flat values below the first dim) have a dimension of size 0."""
    values = t.flat_values if is_ragged(t) else t
    return 0 in values.shape.as_list()[1:]


def int_zeros_like(t):
    if is_ragged(t):
        return t.with_flat_values(tf.zeros(tf.shape(t.flat_values), tf.int32))
    return tf.zeros(tf.shape(t), tf.int32)


LAST_PARTITION_BUG = "Last row partition does not match flat_values"


def broadcast_verdict(ins):
    """How TensorFlow's general ragged broadcasting (tf.add, dtype-blind: int32 zeros of each operand's
    shape) treats the tensors: "ok", "refused", or "tf_bug" (its internal error on some dense + ragged
    pairs, a wrong row count or a malformed result: see the filters of those)."""
    try:
        total = int_zeros_like(ins[0])
        for t in ins[1:]:
            pair = [total, int_zeros_like(t)]
            total = pair[0] + pair[1]
            if wrong_row_count(pair, total) or malformed(total):
                return "tf_bug"
    except Exception as e:
        return "tf_bug" if LAST_PARTITION_BUG in str(e) else "refused"
    return "ok"


def rank(t):
    return t.shape.rank


def wrong_row_count(ins, result):
    """TensorFlow bug: broadcasting a ragged operand against one of a lower rank sometimes gives the wrong
    number of rows (R([], rr=1) + D([], shape=[0]) is [[]]; R([[], []]) > D([[]], shape=[1, 0]) is [[]]).
    The right count: the operands of the result's rank agree on their outer dim, or have 1."""
    if not is_ragged(result):
        return False
    outer = {int(t.shape[0]) for t in ins if rank(t) == rank(result)} - {1}
    want = outer.pop() if len(outer) == 1 else 1 if not outer else None
    return want is not None and int(result.nrows()) != want


def malformed(result):
    """True if TensorFlow returned a ragged tensor whose partitions do not fit together."""
    results = result if isinstance(result, tuple) else (result,)
    for r in results:
        if not is_ragged(r):
            continue
        splits = [s.numpy().tolist() for s in r.nested_row_splits]
        sizes = [len(s) - 1 for s in splits[1:]] + [r.flat_values.shape[0]]
        if any(not s or s[0] != 0 or s[-1] != n for s, n in zip(splits, sizes)):
            return True
    return False


def may_join_empty_strings(t):
    """True if reducing the ragged string tensor t may join empty strings: it has some, or an empty row
    (at any level) or an empty item, whose reduction gives one."""
    if bool(tf.reduce_any(tf.equal(t.flat_values, ""))) or has_empty_item(t):
        return True
    return any(bool(tf.reduce_any(tf.equal(splits[1:] - splits[:-1], 0))) for splits in t.nested_row_splits)


def has_zero_step(key):
    return any(item.count(":") == 2 and item.split(":")[2].strip() == "0" for item in key.split(","))


def has_level_without_rows(t):
    """True if a ragged dim of t has no rows to partition (its row splits are [0])."""
    return is_ragged(t) and any(int(s.shape[0]) == 1 for s in t.nested_row_splits)


def has_uniform_partition(t):
    """True if a ragged dim of t is stored by TensorFlow as uniform (uniform_row_length)."""
    while is_ragged(t):
        if t.uniform_row_length is not None:
            return True
        t = t.values
    return False


def has_nan(t):
    values = t.flat_values if is_ragged(t) else t
    return bool(tf.reduce_any(tf.math.is_nan(values)))


def axis_out_of_range(axis, rank):
    return isinstance(axis, int) and not -rank <= axis < rank


# Ops whose float results may differ from TensorFlow's within the tolerance, and ops that pass such
# values on unchanged (others may amplify the difference).
INEXACT = {"divide", "pow", "sqrt", "exp", "log", "sin", "cos", "tanh", "sigmoid", "reduce_mean", "segment_mean"}
VALUE_MOVING = {"identity", "getitem", "gather", "embedding_lookup", "boolean_mask", "concat", "stack", "tile",
                "reverse", "to_tensor", "from_tensor", "to_sparse", "from_sparse", "from_row_splits",
                "from_row_lengths", "from_value_rowids", "from_nested_row_splits", "from_uniform_row_length",
                "row_splits", "row_lengths", "value_rowids", "nrows", "flat_values", "bounding_shape", "negative",
                "abs", "where", "maximum", "minimum", "reduce_max", "reduce_min", "segment_max", "segment_min"}
ELEMENTWISE = set(UNARY_DTYPES) | set(BINARY_DTYPES) | {"where"}
REDUCTIONS = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all", "reduce_any",
              "strings.reduce_join"}


FILTERS = [
    ("malformed_tensorflow_result",
     "TensorFlow bug: it returned a ragged tensor whose nested row splits do not fit together (seen when "
     "broadcasting a ragged operand with no rows: splits [0], [0, 2], [0])",
     lambda op, a, ins, r, inexact: malformed(r)),
    ("dense_reduce_mean_of_integers",
     "documented decision (docs/architecture.md): integer reduce_mean gives a float for dense inputs too, "
     "where TensorFlow's dense kernel keeps the integer dtype",
     lambda op, a, ins, r, inexact: op == "reduce_mean" and not is_ragged(ins[0]) and ins[0].dtype.is_integer),
    ("ragged_method_of_dense_tensor",
     "the accessors, to_tensor and to_sparse are methods of tf.RaggedTensor, so TensorFlow has no such "
     "call for a dense tensor (AttributeError); ragtime treats a dense tensor as ragged rank 0",
     lambda op, a, ins, r, inexact: (op in ACCESSORS or op in ("to_tensor", "to_sparse"))
     and not is_ragged(ins[0]) and isinstance(r, AttributeError)),
    ("embedding_lookup_of_ragged_params",
     "tf.nn.embedding_lookup takes its params as a list of shards (it calls len()), so it cannot take a "
     "RaggedTensor (or, with ragged ids, returns a result of the wrong rank); ragtime gathers the rows of "
     "ragged params as gather does",
     lambda op, a, ins, r, inexact: op == "embedding_lookup" and is_ragged(ins[0])),
    ("sorted_segment_of_ragged_data",
     "TensorFlow's sorted segment_* ops have no ragged dispatch (tools/tf_cases/README.md); ragtime "
     "reduces ragged rows position by position, as unsorted_segment_sum does",
     lambda op, a, ins, r, inexact: op.startswith("segment_") and is_ragged(ins[0]) and isinstance(r, Exception)),
    ("broadcast_refused_where_rows_do_not_exist",
     "TensorFlow quirk: its ragged broadcasting refuses operands where one has no rows at all at some level "
     "(a ragged dim whose splits are [0], e.g. a ragged tensor with no rows), comparing sizes below rows "
     "that do not exist ('Unable to broadcast', 'RowPartitions ... do not align'); ragtime accepts and gives "
     "the empty result",
     lambda op, a, ins, r, inexact: op in ELEMENTWISE
     and raised(r, "Unable to broadcast", "Condition x == y did not hold", "do not align")
     and any(has_level_without_rows(t) for t in ins)),
    ("arithmetic_on_inexact_input",
     "float results of transcendental ops and divisions may differ from TensorFlow's in the last bits, "
     "within the tolerance (TensorFlow's float32 tanh is 1.0 at 8.014, ragtime's 0.9999998), and further "
     "arithmetic can amplify that past it (floor, comparisons, cos of a large argument, cancellation), so "
     "only ops that move values are checked after them",
     lambda op, a, ins, r, inexact: op not in VALUE_MOVING and any(inexact)),
    ("ragged_reduce_all_any_of_non_bool",
     "TensorFlow's ragged reduce_all / reduce_any cast their input to bool (its dense kernels refuse a "
     "non-bool input); ragtime refuses non-bool inputs either way, so the dtype rule does not depend on "
     "raggedness",
     lambda op, a, ins, r, inexact: op in ("reduce_all", "reduce_any") and ins[0].dtype != tf.bool
     and not isinstance(r, Exception)),
    ("int32_row_partitions",
     "ragtime's row splits are always int64 (docs/architecture.md, Decisions): a TensorFlow ragged tensor built from "
     "int32 splits keeps int32 partitions, so its accessors give int32 and it refuses to mix with int64 "
     "partitions, which ragtime cannot reproduce",
     lambda op, a, ins, r, inexact: (op in ACCESSORS and has_int32_partition(ins[0]))
     or raised(r, *INT32_PARTITION_MESSAGES)),
    ("where_scalar_with_empty_items",
     "TensorFlow bug: ragged tf.where broadcasting a scalar against items with a dimension of size 0 raises "
     "an internal Reshape error (tf.add of the same operands works)",
     lambda op, a, ins, r, inexact: op == "where" and raised(r, "Input to reshape is a tensor with")
     and any(has_empty_item(t) for t in ins)),
    ("where_broadcasting_narrower_than_add",
     "TensorFlow's ragged tf.where fails (Reshape errors, 'Unable to broadcast') on operands that its general "
     "ragged broadcasting (tf.add) handles; ragtime's where broadcasts as add does",
     lambda op, a, ins, r, inexact: op == "where" and isinstance(r, Exception) and broadcast_verdict(ins) != "refused"),
    ("strings_join_broadcasting",
     "documented decision (docs/architecture.md): strings.join uses the general ragged broadcasting, so it "
     "accepts operand shapes TensorFlow's strings.join refuses",
     lambda op, a, ins, r, inexact: op == "strings.join" and isinstance(r, Exception)
     and all(t.dtype == tf.string for t in ins) and broadcast_verdict(ins) != "refused"),
    ("broadcast_wrong_row_count",
     "TensorFlow bug: broadcasting a ragged operand against one of a lower rank with empty dims sometimes "
     "gives the wrong number of rows (R([], rr=1) + D([], shape=[0]) is [[]], not [])",
     lambda op, a, ins, r, inexact: op in ELEMENTWISE and wrong_row_count(ins, r)),
    ("dense_ragged_broadcast_last_partition",
     "TensorFlow bug (tools/tf_cases/README.md): some dense + ragged broadcasts raise an internal 'Last row "
     "partition does not match flat_values' error",
     lambda op, a, ins, r, inexact: op in ELEMENTWISE and raised(r, LAST_PARTITION_BUG)),
    ("reduce_keepdims_all_axes_rank",
     "TensorFlow bug: a ragged reduction over all axes (axis=None) with keepdims=True and uniform inner dims "
     "gives a result of a higher rank than its input",
     lambda op, a, ins, r, inexact: op in REDUCTIONS and a.get("keepdims")
     and isinstance(r, (tf.Tensor, tf.RaggedTensor))
     and rank(r) != rank(ins[0])),
    ("ragged_unsorted_segment_sum_negative_ids",
     "TensorFlow quirk: its ragged unsorted_segment_sum gathers row lengths by segment id, so a negative id "
     "(dropped by the dense kernel, as documented) raises; ragtime drops it for ragged data too",
     lambda op, a, ins, r, inexact: op == "unsorted_segment_sum" and is_ragged(ins[0]) and raised(r, "GatherV2")),
    ("ngrams_of_items",
     "TensorFlow's ngrams kernel cannot take ragged tokens with uniform inner dims (it raises 'Last split value "
     "must be data size' and only passes when there are no tokens); ragtime refuses them",
     lambda op, a, ins, r, inexact: op == "strings.ngrams" and is_ragged(ins[0]) and rank(ins[0].flat_values) > 1),
    ("concat_of_one_input_unchecked_axis",
     "TensorFlow quirk: tf.concat of a single input returns it without checking the axis",
     lambda op, a, ins, r, inexact: op == "concat" and len(ins) == 1
     and axis_out_of_range(a.get("axis"), rank(ins[0]))),
    ("gather_of_empty_items_unchecked_indices",
     "TensorFlow quirk: GatherV2 does not check the indices when every gathered item is empty (params with a "
     "dimension of size 0 after the first)",
     lambda op, a, ins, r, inexact: op in ("gather", "embedding_lookup") and not isinstance(r, Exception)
     and has_empty_item(ins[0])),
    ("getitem_newaxis_then_index",
     "TensorFlow bug (tools/tf_cases/README.md): x[tf.newaxis, 0, ...] on a ragged tensor raises AttributeError",
     lambda op, a, ins, r, inexact: op == "getitem" and is_ragged(ins[0]) and isinstance(r, AttributeError)
     and a.get("key", "").replace(" ", "").startswith(("tf.newaxis,", "None,"))),
    ("ragged_reduce_join_drops_leading_empty_strings",
     "TensorFlow bug: its ragged strings.reduce_join (UnsortedSegmentJoin) adds no separator after a row's "
     "leading empty strings (['', 'b'] joined by ' ' is 'b', but ' b' for a dense input), also when they "
     "come from reducing an empty row first; ragtime joins ragged rows as dense ones",
     lambda op, a, ins, r, inexact: op == "strings.reduce_join" and is_ragged(ins[0]) and a.get("separator")
     and not isinstance(r, Exception) and may_join_empty_strings(ins[0])),
    ("segment_max_min_of_nan",
     "TensorFlow quirk: its segment max / min kernels (behind sorted segment_max / segment_min and ragged "
     "reduce_max / reduce_min) keep a NaN only if no number follows it in the segment ([nan, 1] gives 1, "
     "[1, nan] gives nan); ragtime propagates NaN, as TensorFlow's dense reductions and maximum do",
     lambda op, a, ins, r, inexact: (op in ("segment_max", "segment_min")
                            or (op in ("reduce_max", "reduce_min") and is_ragged(ins[0])))
     and ins[0].dtype.is_floating and not isinstance(r, Exception) and has_nan(ins[0])),
    ("getitem_zero_step_unchecked_without_values",
     "TensorFlow quirk: a zero slice step in an inner dimension is only refused when there are values to "
     "slice",
     lambda op, a, ins, r, inexact: op == "getitem" and not isinstance(r, Exception)
     and has_zero_step(a.get("key", ""))),
    ("reverse_unchecked_axes",
     "TensorFlow quirk: tf.reverse of a scalar, or of a dense tensor without elements, returns it without "
     "checking the axes",
     lambda op, a, ins, r, inexact: op == "reverse" and not is_ragged(ins[0])
     and (rank(ins[0]) == 0 or tf.size(ins[0]) == 0) and not isinstance(r, Exception)),
    ("getitem_index_into_uniform_partition",
     "documented decision (docs/architecture.md): ragtime refuses a scalar index into a ragged dimension even "
     "when its partition is uniform (here one TensorFlow made with uniform_row_length, e.g. by tf.newaxis), "
     "which TensorFlow accepts",
     lambda op, a, ins, r, inexact: op == "getitem" and not isinstance(r, Exception) and has_uniform_partition(ins[0])
     and any(item.strip().lstrip("-").isdigit() for item in a.get("key", "").split(",")[1:])),
    ("unsorted_segment_sum_of_no_data_unchecked_ids",
     "TensorFlow quirk: unsorted_segment_sum does not check the segment ids when the data has no elements",
     lambda op, a, ins, r, inexact: op == "unsorted_segment_sum" and not isinstance(r, Exception)
     and tf.size(ins[0].flat_values if is_ragged(ins[0]) else ins[0]) == 0),
    ("ngrams_of_empty_dense_input",
     "TensorFlow quirk: ngrams of a dense input converts its ragged result back with to_tensor, so with no "
     "tokens at all the last dim is 1 or 0 rather than the number of ngrams per row",
     lambda op, a, ins, r, inexact: op == "strings.ngrams" and not is_ragged(ins[0]) and tf.size(ins[0]) == 0),
    ("to_tensor_of_empty_uniform_partition",
     "TensorFlow bug: to_tensor of a ragged tensor with no rows whose partition TensorFlow stores as uniform "
     "(from_tensor without lengths) raises 'Tensor's shape (0, 0) is not compatible with supplied shape'",
     lambda op, a, ins, r, inexact: op == "to_tensor" and raised(r, "is not compatible with supplied shape")
     and has_uniform_partition(ins[0])),
    ("missing_kernels_for_unsigned",
     "TensorFlow has no kernel for some dtypes (Pow has none for unsigned integers; Tile none for uint16, "
     "raising UnimplementedError); ragtime computes them",
     lambda op, a, ins, r, inexact: (op == "pow" and raised(r, "Value for attr 'T' of uint"))
     or (op == "tile" and raised(r, "The input data type is not supported"))),
]


def _from_tensor_item_padding(ins, a):
    """generate.py's from_tensor, with ragtime's scalar `padding` filled to the shape of one item,
    as TensorFlow wants it for a tensor of rank 3 or more (ragtime compares every element of an item
    with the scalar; the graph format's `padding` attribute is a scalar)."""
    padding = a.get("padding")
    if padding is not None and ins[0].shape.rank is not None and ins[0].shape.rank > 2:
        a.attrs["padding"] = tf.fill(tf.shape(ins[0])[2:], tf.constant(padding, ins[0].dtype))
    return FROM_TENSOR(ins, a)


FROM_TENSOR = gen.OPS["from_tensor"]
gen.OPS["from_tensor"] = _from_tensor_item_padding


def known_difference(op, attrs, ins, result, inexact):
    for name, _why, predicate in FILTERS:
        if predicate(op, attrs, ins, result, inexact):
            return name
    return None


# ------------------------------------------------------------------------------------------------
# Cases: generation, TensorFlow evaluation, encoding.


def tensorflow_exception(e):
    """The exception TensorFlow raised behind `e`, or None if `e` is the spec's fault. (run_node also
    complains about unread attributes when TensorFlow raised before reading them, as `x.to_tensor(...)`
    of a dense x does: then TensorFlow's exception is the context.)"""
    if isinstance(e, gen.SpecError):
        context = e.__context__
        return context if context is not None and not isinstance(context, gen.SpecError) else None
    return e


class Case:
    """A spec (inputs, nodes) with TensorFlow's outcome."""

    def __init__(self, name, inputs, nodes):
        self.name = name
        self.inputs = inputs
        self.nodes = nodes
        self.env = None
        self.error = None  # TensorFlow's exception at the last node, as text
        self.filtered = None  # the name of the filter that dropped the case

    @property
    def outputs(self):
        return [o for n in self.nodes for o in (n["out"] if isinstance(n["out"], list) else [n["out"]])]

    def evaluate(self):
        """Runs the nodes in TensorFlow; returns False if an earlier node raised (not a valid chain)."""
        self.env = {k: v.to_tf() for k, v in self.inputs.items()}
        inexact = set()
        for k, node in enumerate(self.nodes):
            ins = [i["const"].to_tf() if isinstance(i, dict) else self.env[i] for i in node["in"]]
            inexact_ins = [isinstance(i, str) and i in inexact for i in node["in"]]
            if node["op"] in INEXACT or any(inexact_ins):
                inexact.update(node["out"] if isinstance(node["out"], list) else [node["out"]])
            try:
                gen.run_node(node, self.env)
                outs = node["out"] if isinstance(node["out"], list) else [node["out"]]
                result = tuple(self.env[o] for o in outs) if isinstance(node["out"], list) else self.env[outs[0]]
            except Exception as e:
                result = tensorflow_exception(e)
                if result is None:
                    raise
                if k != len(self.nodes) - 1:
                    return False
                text = str(result).strip()
                self.error = f"{type(result).__name__}: {text.splitlines()[0][:300] if text else ''}"
            self.filtered = known_difference(node["op"], node["attrs"], ins, result, inexact_ins)
            if self.filtered:
                return True
        return True

    def to_json(self):
        out = {"name": self.name}
        if self.error:
            out["note"] = f"TensorFlow raises {self.error}"
        out["inputs"] = {k: gen.encode_input(v) for k, v in self.inputs.items()}
        out["nodes"] = [gen.encode_node(n) for n in self.nodes]
        out["outputs"] = self.outputs
        if self.error:
            out["expect_error"] = TF_RAISED
        else:
            out["expect"] = {o: gen.encode(self.env[o]) for o in self.outputs}
        return out


def generate_case(rng, name, ops, max_chain):
    """A random case whose first node is one of `ops`; later nodes (a chain) too."""
    for _ in range(100):
        b = Builder(rng)
        op = rng.choice(ops)
        try:
            node = GENERATORS[op](b, None, None)
        except Skip:
            continue
        c = Case(name, b.inputs, [node])
        if not c.evaluate():
            continue
        length = 1
        while (length < max_chain and c.error is None and not c.filtered and not isinstance(node["out"], list)
               and rng.random() < 0.3):
            prev = c.env[node["out"]]
            if not isinstance(prev, (tf.Tensor, tf.RaggedTensor)) or prev.dtype.name not in gen.DTYPES:
                break
            x = from_tf(prev)
            chainable = [o for o in ops if o not in SOURCES]
            if not chainable:
                break
            # Mostly an op that takes x's dtype (else the chain would mostly end in a dtype error).
            fitting = [o for o in chainable if x.dtype in OP_DTYPES.get(o, ALL_DTYPES)]
            nxt = rng.choice(fitting if fitting and rng.random() < 0.9 else chainable)
            try:
                new = GENERATORS[nxt](b, node["out"], x)
            except Skip:
                break
            trial = Case(name, dict(b.inputs), c.nodes + [new])
            if not trial.evaluate():
                break
            c, node = trial, new
            length += 1
        return c
    raise RuntimeError(f"cannot generate a case from {ops}")


# ------------------------------------------------------------------------------------------------
# Running ragtime.


def ragtime_binary():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(gen.REPO, "target"))
    return os.path.join(target, "release", "ragtime")


def build_ragtime():
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "ragtime-cli"], cwd=gen.REPO, check=True)


def run_ragtime(docs, debug, timeout=120):
    """Runs the CLI on the cases; returns {name: failure text} for the cases that did not pass, or
    None if the process crashed or hung (then nothing about the batch is known)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump({"format": gen.FORMAT, "group": "fuzz", "generated_by": gen.GENERATED_BY,
                   "source": "tools/tf_cases/fuzz.py", "cases": docs}, f, ensure_ascii=False)
        path = f.name
    try:
        args = [ragtime_binary(), "conformance", path] + (["--debug"] if debug else [])
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
    finally:
        os.unlink(path)
    lines = p.stdout.splitlines()
    if not lines or " passed, " not in lines[-1]:
        return None
    failures = {}
    current = None
    for line in lines[:-1]:
        if line.startswith("FAIL "):
            current = line[5:]
            failures[current] = []
        elif current is not None:
            failures[current].append(line[2:] if line.startswith("  ") else line)
    return {k: "\n".join(v) for k, v in failures.items()}


def classify(case, text):
    """The class of a failure (None if ragtime agrees that the case fails)."""
    if text is None:
        return None
    if text.strip() == "panicked":
        return "panic"
    if case.error:
        if "got values" in text:
            return "ragtime_accepted"
        return None  # both fail: TensorFlow's kinds cannot be compared
    if text.startswith("unexpected "):
        return "ragtime_refused"
    return "value_mismatch"


def check(cases, debug):
    """{case name: (class, failure text)} for the cases ragtime disagrees on (bisecting crashes)."""
    if not cases:
        return {}
    docs = [c.to_json() for c in cases]
    failures = run_ragtime(docs, debug)
    if failures is None:
        if len(cases) == 1:
            return {cases[0].name: ("crash", "the ragtime process crashed or hung")}
        half = len(cases) // 2
        return {**check(cases[:half], debug), **check(cases[half:], debug)}
    out = {}
    for c in cases:
        cls = classify(c, failures.get(c.name))
        if cls:
            out[c.name] = (cls, failures[c.name])
    return out


# ------------------------------------------------------------------------------------------------
# Shrinking: smaller cases that fail the same way.


def value_paths(v):
    """Paths of the list positions that can be removed from a value (rows of the outer and ragged
    dims; for a dense value, outer rows only)."""
    depth = v.ragged_rank + 1 if v.ragged_rank else (1 if v.shape else 0)
    paths = []

    def rec(node, path, level):
        if level == depth or not isinstance(node, list):
            return
        for i, child in enumerate(node):
            paths.append(path + [i])
            rec(child, path + [i], level + 1)

    rec(v.value, [], 0)
    return paths


def without(v, path):
    def rec(node, path):
        if len(path) == 1:
            return node[:path[0]] + node[path[0] + 1:]
        return [rec(c, path[1:]) if i == path[0] else c for i, c in enumerate(node)]

    value = rec(v.value, path)
    if v.ragged_rank:
        return Value(value, v.dtype, v.ragged_rank, inner_shape=v.inner_shape)
    shape = list(v.shape)
    shape[0] -= 1
    return Value(value, v.dtype, 0, shape=shape)


def simpler_leaves(v):
    """The value with every leaf replaced by a plain one (0, false, "a"), if it has any leaf."""
    plain = {BOOL: False, STRING: "a"}.get(v.dtype, 0.0 if v.dtype in FLOATS else 0)
    depth = rank_of(v)
    if not leaves(v.value, depth) or all(leaf == plain for leaf in leaves(v.value, depth)):
        return None
    out = Value(map_leaves(v.value, depth, lambda _: plain), v.dtype, v.ragged_rank, v.inner_shape, v.shape)
    return out


def candidates(rng, c):
    """Smaller variants of a case, most promising first."""
    out = []
    if len(c.nodes) > 1:
        # The chain without its last node, and the last node alone on its TensorFlow input.
        out.append(Case(c.name, c.inputs, c.nodes[:-1]))
        last = c.nodes[-1]
        prev_out = c.nodes[-2]["out"]
        if isinstance(prev_out, str) and c.env is not None and prev_out in c.env:
            inputs = {k: v for k, v in c.inputs.items() if k in last["in"]}
            inputs[prev_out] = from_tf(c.env[prev_out])
            out.append(Case(c.name, inputs, [last]))
    for k, node in enumerate(c.nodes):
        if node["op"] in VARIADIC and len(node["in"]) > 1:
            for i in range(len(node["in"])):
                smaller = dict(node, **{"in": node["in"][:i] + node["in"][i + 1:]})
                out.append(Case(c.name, c.inputs, c.nodes[:k] + [smaller] + c.nodes[k + 1:]))
    for name, v in c.inputs.items():
        paths = value_paths(v)
        # Big pieces first: outer rows, then deeper ones, a bounded random sample.
        paths.sort(key=len)
        shallow = [p for p in paths if len(p) == 1]
        deep = [p for p in paths if len(p) > 1]
        for p in shallow + rng.sample(deep, min(len(deep), 12)):
            out.append(Case(c.name, {**c.inputs, name: without(v, p)}, c.nodes))
        simple = simpler_leaves(v)
        if simple is not None:
            out.append(Case(c.name, {**c.inputs, name: simple}, c.nodes))
    return out


VARIADIC = {"concat", "stack", "strings.join"}


def without_unused_inputs(c):
    used = {i for n in c.nodes for i in n["in"] if isinstance(i, str)}
    c.inputs = {k: v for k, v in c.inputs.items() if k in used}
    return c


def size(c):
    return len(json.dumps(c.to_json()))


def shrink(rng, c, cls, debug, rounds=40):
    """Greedily shrinks a failing case while it still fails with class `cls`."""
    name = c.name
    for _ in range(rounds):
        trials = []
        for k, t in enumerate(candidates(rng, c)):
            t.name = f"{c.name}/s{k}"
            without_unused_inputs(t)
            try:
                if t.evaluate() and not t.filtered:
                    trials.append(t)
            except gen.SpecError:
                continue
        results = check(trials, debug)
        better = [t for t in trials if results.get(t.name, (None,))[0] == cls and size(t) < size(c)]
        if not better:
            return c
        c = min(better, key=size)
        c.name = name
    return c


# ------------------------------------------------------------------------------------------------
# Reporting.


def py_scalar(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "NAN"
        if math.isinf(x):
            return "INF" if x > 0 else "-INF"
    return repr(x)


def py_nested(x):
    if isinstance(x, list):
        return "[" + ", ".join(py_nested(v) for v in x) + "]"
    return py_scalar(x)


def py_value(v):
    """The Value as generate.py source: R(...) or D(...)."""
    if v.ragged_rank:
        inner = f", {v.inner_shape}" if v.inner_shape else ""
        return f'R({py_nested(v.value)}, "{v.dtype}", {v.ragged_rank}{inner})'
    shape = f", {list(v.shape)}" if v.shape is not None and (0 in v.shape) else ""
    return f'D({py_nested(v.value)}, "{v.dtype}"{shape})'


def py_node(n):
    ins = ", ".join(f"C({py_value(i['const'])})" if isinstance(i, dict) else repr(i) for i in n["in"])
    attrs = "".join(f", {k}={py_nested(v) if not isinstance(v, str) else repr(v)}" for k, v in n["attrs"].items())
    return f"N({n['out']!r}, {n['op']!r}, [{ins}]{attrs})"


def py_case(c):
    inputs = ", ".join(f"{k!r}: {py_value(v)}" for k, v in c.inputs.items())
    nodes = ", ".join(py_node(n) for n in c.nodes)
    return f"case(NAME, {{{inputs}}}, [{nodes}])"


def describe(c, text):
    lines = [f"    spec: {py_case(c)}"]
    if c.error:
        lines.append(f"    TensorFlow: raises {c.error}")
    else:
        for o in c.outputs:
            lines.append(f"    TensorFlow {o} = {json.dumps(gen.encode(c.env[o]), ensure_ascii=False)}")
    lines.append("    ragtime: " + text.replace("\n", "\n             "))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--ops", default="", help="comma-separated op names (default: every op)")
    parser.add_argument("--chain", type=int, default=3, help="longest chain of nodes (default 3)")
    parser.add_argument("--debug", action="store_true", help="run ragtime in Mode::Debug")
    parser.add_argument("--batch", type=int, default=200, help="cases per ragtime run")
    parser.add_argument("--examples", type=int, default=2, help="shrunk reproducers per group")
    parser.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    parser.add_argument("--save", help="also write the failing cases (unshrunk) to this JSON file")
    args = parser.parse_args()
    if f"tensorflow {tf.__version__}" != gen.GENERATED_BY:
        sys.exit(f"TensorFlow {tf.__version__} is installed, generate.py is pinned to {gen.GENERATED_BY}")
    ops = [o for o in args.ops.split(",") if o] or sorted(GENERATORS)
    unknown = [o for o in ops if o not in GENERATORS]
    if unknown:
        sys.exit(f"unknown ops: {', '.join(unknown)}")
    if not args.no_build:
        build_ragtime()

    rng = random.Random(args.seed)
    started = time.time()
    per_op = collections.Counter()
    filtered = collections.Counter()
    tf_errors = collections.Counter()
    failures = []  # (case, class, text)
    batch = []

    def flush():
        results = check(batch, args.debug)
        for c in batch:
            if c.name in results:
                failures.append((c, *results[c.name]))
        batch.clear()

    for i in range(args.cases):
        c = generate_case(rng, f"fuzz/{args.seed}/{i}", ops, args.chain)
        if c.filtered:
            filtered[c.filtered] += 1
            continue
        for n in c.nodes:
            per_op[n["op"]] += 1
        if c.error:
            tf_errors[c.nodes[-1]["op"]] += 1
        batch.append(c)
        if len(batch) >= args.batch:
            flush()
    flush()

    checked = args.cases - sum(filtered.values())
    print(f"seed {args.seed}: {args.cases} cases in {time.time() - started:.0f}s; {checked} checked "
          f"({sum(per_op.values())} nodes; {sum(tf_errors.values())} where TensorFlow raises); "
          f"{len(failures)} disagreements")
    if filtered:
        print("filtered (known differences): " + ", ".join(f"{k} {n}" for k, n in sorted(filtered.items())))
    if args.save:
        with open(args.save, "w", encoding="utf-8") as f:
            json.dump({"format": gen.FORMAT, "group": "fuzz", "generated_by": gen.GENERATED_BY,
                       "source": "tools/tf_cases/fuzz.py", "cases": [c.to_json() for c, _, _ in failures]},
                      f, ensure_ascii=False, indent=1)

    # Group by the ops of the chain and the class; shrink the smallest cases of each group, then
    # regroup by the op of the shrunk case's last node.
    groups = collections.defaultdict(list)
    for c, cls, text in failures:
        groups[(tuple(n["op"] for n in c.nodes), cls)].append((c, text))
    shrunk = collections.defaultdict(list)
    for (chain, cls), items in sorted(groups.items()):
        items.sort(key=lambda it: size(it[0]))
        for c, _ in items[:args.examples]:
            s = shrink(rng, c, cls, args.debug)
            text = check([s], args.debug).get(s.name, (cls, "?"))[1]
            shrunk[(s.nodes[-1]["op"], cls)].append((s, text, chain, len(items)))
    for (op, cls), items in sorted(shrunk.items()):
        total = sum({chain: n for _, _, chain, n in items}.values())
        chains = sorted({" > ".join(chain) for _, _, chain, _ in items})
        print(f"\n== {op}: {cls} ({total} failing cases; chains: {'; '.join(chains)})")
        seen = set()
        for s, text, _, _ in sorted(items, key=lambda it: size(it[0])):
            key = py_case(s)
            if key not in seen:
                seen.add(key)
                print(describe(s, text))
    print("\nchecked nodes per op (and cases ending in a TensorFlow error there): "
          + ", ".join(f"{k} {n}" + (f" ({tf_errors[k]})" if tf_errors[k] else "") for k, n in sorted(per_op.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
