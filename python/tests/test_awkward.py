"""Awkward arrays in and out through pyarrow: values, and buffer addresses where the paths share
memory. Skipped, with a message, when awkward is not installed."""

import numpy as np
import pytest

import ragtime as rt
from conftest import address, row_sums

ak = pytest.importorskip("awkward", reason="awkward is not installed: its round trips are skipped")


def test_lists_of_numbers_share_buffers_both_ways():
    values = np.arange(6, dtype=np.float32)
    array = ak.unflatten(values, [2, 0, 4])
    t = rt.from_awkward(array)
    assert t.to_list() == array.tolist()
    assert address(t.flat_values) == address(values)
    assert address(t.nested_row_splits[0]) == address(array.layout.offsets.data)
    doubled, sums = row_sums()(x=array)
    assert sums.to_list() == [1.0, 0.0, 14.0]
    back = rt.to_awkward(doubled)
    assert back.tolist() == [[0.0, 2.0], [], [4.0, 6.0, 8.0, 10.0]]
    assert address(back.layout.content.data) == address(doubled.flat_values)
    assert address(back.layout.offsets.data) == address(array.layout.offsets.data)


def test_strings_nested_lists_and_regular_dims():
    words = ak.Array([["a", "bc"], [], ["def"]])
    g = rt.Graph()
    s = g.input("s", rt.ragged("string", 1))
    lengths = rt.compile([s], rt.strings.length(s))(s=words)
    assert lengths.to_list() == [[1, 2], [], [3]]
    assert rt.to_awkward(rt.from_awkward(words)).tolist() == words.tolist()
    assert str(rt.to_awkward(rt.from_awkward(words)).type) == str(words.type)
    nested = ak.Array([[[1, 2], []], [], [[3]]])
    t = rt.from_awkward(nested)
    assert t.ragged_rank == 2 and t.dtype == "int64" and t.to_list() == nested.tolist()
    assert rt.to_awkward(t).tolist() == nested.tolist()
    regular = ak.Array(np.arange(6, dtype=np.float64).reshape(3, 2))
    d = rt.from_awkward(regular)
    assert d.shape == [3, 2] and d.to_list() == regular.tolist()
    assert rt.to_awkward(d).tolist() == regular.tolist()
    assert str(rt.to_awkward(d).type) == "3 * 2 * float64"


def test_missing_values_are_refused():
    with pytest.raises(rt.RagtimeError, match="null"):
        rt.from_awkward(ak.Array([[1.0, None], []]))
