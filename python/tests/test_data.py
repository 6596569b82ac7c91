"""Data in and out: numpy flat values and row splits, pyarrow arrays through the Arrow C data
interface, TensorFlow; buffer addresses show which paths share memory."""

import numpy as np
import pyarrow as pa
import pytest

import ragtime as rt
from conftest import address


def test_numpy_in_and_out_share_memory():
    values = np.arange(6, dtype=np.float32)
    splits = np.array([0, 2, 2, 6], dtype=np.int64)
    t = rt.RaggedTensor.from_row_splits(values, splits)
    assert t.to_list() == [[0.0, 1.0], [], [2.0, 3.0, 4.0, 5.0]]
    assert address(t.flat_values) == address(values)
    assert address(t.nested_row_splits[0]) == address(splits)
    # read twice: each view is of ragtime's one buffer
    assert address(t.flat_values) == address(t.flat_values)


def test_nested_splits_and_inner_dims():
    values = np.arange(12, dtype=np.int64).reshape(6, 2)
    outer, inner = np.array([0, 1, 3], dtype=np.int64), np.array([0, 2, 2, 6], dtype=np.int64)
    t = rt.RaggedTensor.from_nested_row_splits(values, [outer, inner])
    assert t.ragged_rank == 2 and t.shape == [2, None, None, 2]
    np.testing.assert_array_equal(t.flat_values, values)
    assert address(t.flat_values) == address(values)
    assert [address(s) for s in t.nested_row_splits] == [address(outer), address(inner)]
    want = [[values[0:2].tolist()], [values[2:2].tolist(), values[2:6].tolist()]]
    assert t.to_list() == want


def test_results_are_numpy_views_of_the_output_buffer():
    g = rt.Graph()
    x = g.input("x", rt.ragged("float64", 1))
    f = rt.compile([x], x * 2.0)
    values = np.linspace(0, 1, 5)
    splits = np.array([0, 3, 5], dtype=np.int64)
    out = f(x=rt.RaggedTensor.from_row_splits(values, splits))
    flat = out.flat_values
    np.testing.assert_allclose(flat, values * 2)
    assert not flat.flags.writeable or flat.base is not None
    assert address(out.flat_values) == address(flat)
    # the output shares the input's row partition
    assert address(out.nested_row_splits[0]) == address(splits)


def test_dense_numpy_inputs_are_shared():
    g = rt.Graph()
    x = g.input("x", rt.dense("float32", [None, 3]))
    f = rt.compile([x], rt.identity(x))
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = f(x=data)
    np.testing.assert_array_equal(out.flat_values, data)
    assert address(out.flat_values) == address(data)


@pytest.mark.parametrize("large", [True, False])
def test_pyarrow_list_arrays_round_trip(large):
    list_type = pa.large_list(pa.float32()) if large else pa.list_(pa.float32())
    column = pa.array([[1.0, 2.0], [], [3.5]], type=list_type)
    t = rt.RaggedTensor.from_arrow(column)
    assert t.to_list() == [[1.0, 2.0], [], [3.5]]
    values_buffer = column.values.buffers()[1]
    assert address(t.flat_values) == values_buffer.address
    if large:
        assert address(t.nested_row_splits[0]) == column.buffers()[1].address
    back = t.to_arrow(large=large)
    assert back.type == list_type
    assert back.equals(column)
    # the PyCapsule protocol: pyarrow reads a RaggedTensor directly, without a copy
    via_capsule = pa.array(t)
    assert via_capsule.values.buffers()[1].address == values_buffer.address


def test_pyarrow_strings_and_calls_on_arrow_inputs():
    words = pa.array([["a", "bc"], [], ["def"]], type=pa.large_list(pa.large_string()))
    g = rt.Graph()
    s = g.input("s", rt.ragged("string", 1))
    f = rt.compile([s], rt.strings.length(s))
    out = f(s=words)
    np.testing.assert_array_equal(out.flat_values, [1, 2, 3])
    t = rt.RaggedTensor.from_arrow(words)
    assert t.to_arrow().equals(words)
    strings = pa.array(["x", "yy"])
    assert rt.RaggedTensor.from_arrow(strings).to_list() == ["x", "yy"]


def test_literals_take_the_input_dtype():
    g = rt.Graph()
    x = g.input("x", rt.ragged("int16", 1))
    f = rt.compile([x], x + 1)
    out = f([[1, 2], [3]])
    assert out.dtype == "int16"
    assert out.flat_values.dtype == np.int16
    np.testing.assert_array_equal(out.flat_values, [2, 3, 4])


def test_tensorflow_round_trip():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed: its round trip is skipped")
    original = tf.ragged.constant([[[1.0, 2.0]], [], [[3.0], [4.0, 5.0]]], dtype=tf.float32)
    t = rt.from_tf(original)
    assert t.ragged_rank == 2
    assert t.to_list() == original.to_list()
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 2))
    f = rt.compile([x], rt.reduce_sum(x, axis=2))
    ours = rt.to_tf(f(x=t))
    theirs = tf.reduce_sum(original, axis=2)
    assert ours.to_list() == theirs.to_list()
    # a call takes the tf.RaggedTensor itself
    assert rt.to_tf(f(x=original)).to_list() == theirs.to_list()
    back = rt.to_tf(t)
    assert back.to_list() == original.to_list()


def test_chunked_arrays_are_accepted_directly():
    list_type = pa.large_list(pa.float32())
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    f = rt.compile([x], rt.reduce_sum(x, axis=1))
    one = pa.chunked_array([pa.array([[1.0, 2.0], [], [3.5]], type=list_type)])
    np.testing.assert_array_equal(f(x=one).flat_values, [3.0, 0.0, 3.5])
    # one chunk: its buffers are shared
    shared = rt.RaggedTensor.from_arrow(one)
    assert address(shared.flat_values) == one.chunk(0).values.buffers()[1].address
    assert address(shared.nested_row_splits[0]) == one.chunk(0).buffers()[1].address
    # several chunks: joined (a copy), with the row splits rebased across chunks
    two = pa.chunked_array([[[1.0, 2.0]], [[], [3.5, 4.0]], []], type=list_type)
    joined = rt.RaggedTensor.from_arrow(two)
    assert joined.to_list() == [[1.0, 2.0], [], [3.5, 4.0]]
    assert joined.nested_row_splits_list() == [[0, 2, 2, 4]]
    np.testing.assert_array_equal(f(two).flat_values, [3.0, 0.0, 7.5])
    assert rt.constant(two).equals(joined)
    assert g.constant(two).dtype == "float32"
    empty = pa.chunked_array([], type=list_type)
    assert rt.RaggedTensor.from_arrow(empty).nrows() == 0
    strings = pa.chunked_array([["a", "bc"], ["def"]])
    assert rt.constant(strings).to_list() == ["a", "bc", "def"]
