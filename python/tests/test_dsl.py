"""The DSL from Python: graphs, operators, named ops, compile modes, calls, errors, debugprint.
Expected values are computed independently with numpy / plain Python loops."""

import math

import numpy as np
import pytest

import ragtime as rt


def rows(t):
    """A ragged rank-1 value as a list of numpy rows (through the zero-copy views)."""
    flat, (splits,) = t.flat_values, t.nested_row_splits
    return [flat[a:b] for a, b in zip(splits[:-1], splits[1:])]


DATA = [[1.0, 2.0, 3.0], [], [4.0, -5.0]]


@pytest.mark.parametrize("mode", rt.MODES)
def test_issue_example_in_every_mode(mode):
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    y = rt.reduce_mean(rt.tanh(x * 2 + 1), axis=1)
    f = rt.compile([x], y, mode=mode)
    assert f.mode == mode
    out = f(x=DATA)
    assert isinstance(out, rt.RaggedTensor)
    assert out.dtype == "float32" and out.shape == [3]
    want = [np.mean(np.tanh(np.float32(r) * 2 + 1)) if r else 0.0 for r in DATA]
    # TensorFlow's reduce_mean of an empty row is NaN (0/0)
    got = out.flat_values
    for w, g_, r in zip(want, got, DATA):
        if r:
            assert abs(w - g_) <= 1e-6 + 1e-5 * abs(w)
        else:
            assert math.isnan(g_)


def test_operators_match_numpy():
    g = rt.Graph()
    a = g.input("a", rt.ragged("float64", 1))
    b = g.input("b", rt.ragged("float64", 1))
    outs = [a + b, a - b, a * b, a / b, -a, 2 - a, 3 * a, a**2, 1 / b]
    f = rt.compile([a, b], outs)
    av = [[1.0, 2.0], [3.0], []]
    bv = [[4.0, 0.5], [-2.0], []]
    results = f(av, bv)
    assert len(results) == len(outs)
    fa, fb = np.concatenate([np.array(r) for r in av]), np.concatenate([np.array(r) for r in bv])
    expect = [fa + fb, fa - fb, fa * fb, fa / fb, -fa, 2 - fa, 3 * fa, fa**2, 1 / fb]
    for got, want in zip(results, expect):
        np.testing.assert_allclose(got.flat_values, want, rtol=1e-12)
        assert list(got.nested_row_splits[0]) == [0, 2, 3, 3]


def test_comparisons_as_functions_and_operators():
    g = rt.Graph()
    x = g.input("x", rt.ragged("int32", 1))
    f = rt.compile([x], [rt.less(x, 2), x >= 2, rt.equal(x, 3), rt.logical_not(x > 1)])
    lt, ge, eq, nle = f([[1, 2, 3], [0]])
    values = np.array([1, 2, 3, 0])
    np.testing.assert_array_equal(lt.flat_values, values < 2)
    np.testing.assert_array_equal(ge.flat_values, values >= 2)
    np.testing.assert_array_equal(eq.flat_values, values == 3)
    np.testing.assert_array_equal(nle.flat_values, ~(values > 1))
    assert (x == x) is True and (x != x) is False
    assert len({x, x}) == 1


def test_every_op_has_a_function():
    assert len(rt.OP_NAMES) >= 150
    for op in rt.OP_NAMES:
        if "." in op:
            prefix, short = op.split(".", 1)
            assert callable(getattr(getattr(rt, prefix), short)), op
        else:
            assert callable(getattr(rt, op)), op


def test_named_ops_and_generic_apply_agree():
    g = rt.Graph()
    s = g.input("s", rt.dense("string", [None]))
    words = rt.strings.split(s, sep=" ")
    counts = rt.apply("row_lengths", [words])[0]
    f = rt.compile([s], [words, counts])
    text = ["a bb c", "", "dd"]
    w, c = f(s=text)
    # with an explicit separator, TensorFlow splits as Python's str.split does ("" -> [""])
    assert w.to_list() == [t.split(" ") for t in text]
    np.testing.assert_array_equal(c.flat_values, [len(t.split(" ")) for t in text])


def test_softmax_matches_numpy():
    g = rt.Graph()
    x = g.input("x", rt.ragged("float64", 1))
    f = rt.compile([x], rt.softmax(x))
    out = f([[1.0, 2.0, 3.0], [0.5]])
    for row, want_in in zip(rows(out), [[1.0, 2.0, 3.0], [0.5]]):
        e = np.exp(np.array(want_in) - max(want_in))
        np.testing.assert_allclose(row, e / e.sum(), rtol=1e-12)


def test_debugprint_and_repr():
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    y = rt.reduce_sum(x * 2, axis=1).named("total")
    text = g.debugprint([y])
    assert "total" in text and "x" in text
    f = rt.compile([x], y)
    printed = f.debugprint()
    assert "x" in printed and printed.count("\n") >= 1, printed
    value = rt.constant([[1, 2], [3]], dtype="int32")
    assert repr(value) == "<Ragged int32 [[1, 2], [3]]>"
    assert "float32" in repr(x)


def test_errors_raise_the_class_of_their_kind():
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    words = g.input("words", rt.ragged("string", 1))
    with pytest.raises(rt.TypeMismatchError) as raised:
        x + words
    assert raised.value.kind == "type_mismatch"
    assert "add" in str(raised.value)
    with pytest.raises(rt.InvalidRowPartitionError):
        rt.RaggedTensor.from_row_splits(np.array([1.0, 2.0]), np.array([0, 3]))
    with pytest.raises(rt.InvalidArgumentError):
        rt.apply("no_such_op", [x])
    i = g.input("i", rt.dense("int64", [None]))
    f = rt.compile([x, i], rt.gather(x, i))
    with pytest.raises(rt.IndexOutOfRangeError) as raised:
        f(x=[[1.0], [2.0]], i=np.array([5], dtype=np.int64))
    assert "5" in str(raised.value)
    assert issubclass(rt.IndexOutOfRangeError, rt.RagtimeError)
    with pytest.raises(TypeError):
        f(x=[[1.0]], nope=[1])


def test_grad_matches_finite_differences():
    g = rt.Graph()
    x = g.input("x", rt.ragged("float64", 1))
    cost = rt.reduce_sum(rt.reduce_sum(rt.tanh(x) * x, axis=1), axis=0)
    (dx,) = rt.grad(cost, [x])
    f = rt.compile([x], [cost, dx])
    data = [[0.3, -1.2], [0.7]]
    value, gradient = f(data)
    flat = np.array([0.3, -1.2, 0.7])
    h = 1e-6
    fd = [((np.tanh(flat + h * e) * (flat + h * e)).sum() - (np.tanh(flat - h * e) * (flat - h * e)).sum()) / (2 * h)
          for e in np.eye(3)]
    np.testing.assert_allclose(gradient.flat_values, fd, rtol=1e-6)
