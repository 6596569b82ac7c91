"""Values from and to other libraries: Python literals, numpy, pyarrow (through the Arrow C data
interface, sharing buffers), TensorFlow (``tf.RaggedTensor`` through its flat values and nested row
splits), torch (nested jagged tensors: values plus offsets through DLPack) and Awkward Array
(through pyarrow, which shares Awkward's buffers). docs/python.md lists which paths copy."""

from ._ragtime import RaggedTensor


def constant(value, dtype=None, ragged_rank=None, inner_shape=None):
    """A value from a nested list (``tf.ragged.constant``), an Arrow array or chunked array (its
    chunks joined: shared when there is one, copied otherwise), or a numpy array."""
    if hasattr(value, "__arrow_c_array__") or hasattr(value, "__arrow_c_stream__"):
        return RaggedTensor.from_arrow(value)
    if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray" and dtype is None:
        return RaggedTensor.from_nested_row_splits(value, [])
    return RaggedTensor.from_list(value, dtype, ragged_rank, inner_shape)


def from_tf(value):
    """A value from a ``tf.RaggedTensor`` or ``tf.Tensor`` (its numpy buffers: TensorFlow's CPU
    tensors hand numpy a view, and ragtime shares numpy's memory)."""
    import tensorflow as tf

    if isinstance(value, tf.RaggedTensor):
        splits = [s.numpy() for s in value.nested_row_splits]
        return RaggedTensor.from_nested_row_splits(value.flat_values.numpy(), splits)
    return RaggedTensor.from_nested_row_splits(value.numpy(), [])


def to_tf(value):
    """A ``tf.RaggedTensor`` (or ``tf.Tensor`` when dense) of a ragtime value (TensorFlow copies
    numpy arrays into its own tensors)."""
    import tensorflow as tf

    flat = value.flat_values
    if flat.dtype == object:
        flat = flat.astype(bytes)
    splits = value.nested_row_splits
    if not splits:
        return tf.constant(flat)
    return tf.RaggedTensor.from_nested_row_splits(flat, splits, validate=True)


def from_torch(value):
    """A value from a torch tensor: a nested tensor of the jagged layout (``torch.jagged``) gives a
    ragged rank 1 value of its ``values()`` and ``offsets()``, a plain tensor a dense value. CPU
    buffers are shared through DLPack (numpy's ``from_dlpack``, then as numpy); a tensor on another
    device is first copied to the CPU, a nested tensor with holes (``lengths()``) or of the strided
    layout is first made contiguous and jagged (a copy). ``requires_grad`` is dropped (``detach``)."""
    import numpy as np
    import torch

    value = value.detach()
    if value.device.type != "cpu":
        value = value.cpu()
    if not value.is_nested:
        return RaggedTensor.from_nested_row_splits(np.from_dlpack(value), [])
    if value.layout != torch.jagged:
        value = torch.nested.nested_tensor(list(value.unbind()), layout=torch.jagged)
    if value._ragged_idx != 1:
        raise ValueError(f"from_torch: the ragged dimension is {value._ragged_idx}; ragtime's ragged dimensions follow the rows (1)")
    if value.lengths() is not None:
        value = value.contiguous()
    values, offsets = value.values(), value.offsets()
    return RaggedTensor.from_row_splits(np.from_dlpack(values), np.from_dlpack(offsets))


def to_torch(value):
    """A torch tensor of a ragtime value: a nested tensor of the jagged layout for ragged rank 1
    (values plus offsets), a plain tensor for a dense value. Numbers and row splits are shared
    through DLPack (torch has no read-only tensors: do not write to the result, it is ragtime's
    memory, possibly shared with other values); booleans are copied (as ``flat_values``). Strings
    and ragged rank 2 or more have no torch form (``ValueError``)."""
    import torch

    if value.dtype == "string":
        raise ValueError("to_torch: torch tensors do not hold strings")
    if value.ragged_rank > 1:
        raise ValueError(
            f"to_torch: a nested tensor has one ragged dimension, this value has {value.ragged_rank} "
            "(take its flat values and nested_row_splits instead)"
        )
    values = torch.from_dlpack(value.flat_values)
    if value.ragged_rank == 0:
        return values
    offsets = torch.from_dlpack(value.nested_row_splits[0])
    return torch.nested.nested_tensor_from_jagged(values, offsets)


def from_awkward(value):
    """A value from an Awkward array of lists (any depth), regular dimensions and numbers, booleans
    or strings, through ``ak.to_arrow``, which hands pyarrow Awkward's buffers (shared, as from
    pyarrow). Missing values (option types with ``None``) are refused."""
    import awkward as ak

    array = ak.to_arrow(value, extensionarray=False, list_to32=False, string_to32=False)
    return RaggedTensor.from_arrow(array)


def to_awkward(value):
    """An Awkward array of a ragtime value, through pyarrow (``ak.from_arrow`` keeps pyarrow's
    buffers, which are ragtime's: numbers, row splits and strings shared, booleans copied)."""
    import awkward as ak

    layout = ak.from_arrow(value.to_arrow(large=True), generate_bitmasks=False, highlevel=False)
    return ak.Array(_without_unmasked(ak, layout))


def _without_unmasked(ak, layout):
    """``layout`` without its ``UnmaskedArray`` nodes: Awkward reads Arrow's nullable list items as
    option types even with no validity bitmap, and a ragtime value has no missing values."""
    contents = ak.contents
    if isinstance(layout, contents.UnmaskedArray):
        return _without_unmasked(ak, layout.content)
    if isinstance(layout, contents.ListOffsetArray):
        inner = _without_unmasked(ak, layout.content)
        return contents.ListOffsetArray(layout.offsets, inner, parameters=layout.parameters)
    if isinstance(layout, contents.RegularArray):
        inner = _without_unmasked(ak, layout.content)
        return contents.RegularArray(inner, layout.size, zeros_length=layout.length, parameters=layout.parameters)
    return layout
