"""torch nested jagged tensors in and out through DLPack (values plus offsets): values, and buffer
addresses where the paths share memory. Skipped, with a message, when torch is not installed."""

import sys

import numpy as np
import pytest

import ragtime as rt
from conftest import address, row_sums

torch = pytest.importorskip("torch", reason="torch is not installed: its round trips are skipped")


def jagged():
    values = torch.arange(6, dtype=torch.float32)
    offsets = torch.tensor([0, 2, 2, 6])
    return values, offsets, torch.nested.nested_tensor_from_jagged(values, offsets)


def test_jagged_in_shares_values_and_offsets():
    values, offsets, nested = jagged()
    t = rt.from_torch(nested)
    assert t.to_list() == [[0.0, 1.0], [], [2.0, 3.0, 4.0, 5.0]]
    assert address(t.flat_values) == values.data_ptr()
    assert address(t.nested_row_splits[0]) == offsets.data_ptr()


def test_calls_take_torch_and_results_go_back_without_copies():
    values, offsets, nested = jagged()
    doubled, sums = row_sums()(x=nested)
    np.testing.assert_array_equal(sums.flat_values, [1.0, 0.0, 14.0])
    back = rt.to_torch(doubled)
    assert back.is_nested and back.layout == torch.jagged
    assert back.values().data_ptr() == address(doubled.flat_values)
    # the output's row partition is the input's: torch's own offsets buffer came back
    assert back.offsets().data_ptr() == offsets.data_ptr()
    assert [row.tolist() for row in back.unbind()] == [[0.0, 2.0], [], [4.0, 6.0, 8.0, 10.0]]
    dense = rt.to_torch(sums)
    assert not dense.is_nested and dense.data_ptr() == address(sums.flat_values)
    assert dense.tolist() == [1.0, 0.0, 14.0]


def test_inner_dims_dense_tensors_and_requires_grad():
    values = torch.arange(12, dtype=torch.float64).reshape(6, 2).requires_grad_()
    nested = torch.nested.nested_tensor_from_jagged(values, torch.tensor([0, 1, 6]))
    t = rt.from_torch(nested)
    assert t.shape == [2, None, 2] and address(t.flat_values) == values.data_ptr()
    assert t.to_list() == [[[0.0, 1.0]], [[2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]]
    assert rt.to_torch(t).values().data_ptr() == values.data_ptr()
    plain = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    d = rt.from_torch(plain)
    assert d.shape == [2, 3] and d.dtype == "int32" and address(d.flat_values) == plain.data_ptr()


def test_holes_and_the_strided_layout_are_copied_into_jagged_form():
    if "tensorflow" in sys.modules:
        # torch.nested.narrow loads torch._dynamo and triton, whose LLVM aborts the process when
        # TensorFlow's is already loaded ("Option registered more than once"), ragtime or not.
        pytest.skip("TensorFlow is loaded in this process: triton would abort it (run test_torch.py alone)")
    base = torch.arange(12.0).reshape(3, 4)
    narrowed = torch.nested.narrow(base, 1, torch.tensor([0, 1, 0]), torch.tensor([2, 1, 3]), layout=torch.jagged)
    assert narrowed.lengths() is not None
    assert rt.from_torch(narrowed).to_list() == [[0.0, 1.0], [5.0], [8.0, 9.0, 10.0]]
    strided = torch.nested.nested_tensor([torch.ones(2), torch.zeros(1)])
    assert rt.from_torch(strided).to_list() == [[1.0, 1.0], [0.0]]


def test_values_torch_cannot_hold_are_refused():
    deep = rt.constant([[[1.0], []], [[2.0, 3.0]]])
    with pytest.raises(ValueError, match="one ragged dimension"):
        rt.to_torch(deep)
    with pytest.raises(ValueError, match="strings"):
        rt.to_torch(rt.constant([["a"]]))
