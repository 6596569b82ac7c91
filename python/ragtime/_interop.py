"""numpy <-> Arrow conversions the extension module calls: numpy buffers reach Arrow (and so
ragtime) without copies, and Arrow arrays exported by ragtime come back as numpy views."""

import numpy as np
import pyarrow as pa


def numpy_to_arrow(array):
    """A pyarrow array viewing a numpy array's memory (a copy only when it is not C-contiguous
    or holds objects/strings): a 1-D array is a primitive Arrow array, each further dimension a
    ``FixedSizeList`` (ragtime reads those as uniform inner dimensions)."""
    array = np.ascontiguousarray(array)
    if array.ndim == 0:
        array = array.reshape(1)
        return pa.array(array)
    flat = pa.array(array.reshape(-1))
    for size in reversed(array.shape[1:]):
        flat = pa.FixedSizeListArray.from_arrays(flat, size)
    return flat


def arrow_to_numpy(array, shape):
    """A numpy array of ``shape`` from the Arrow array ragtime exported: numbers are views of
    ragtime's buffer; booleans (bit-packed in Arrow) and strings are copied."""
    while pa.types.is_fixed_size_list(array.type):
        array = array.flatten()
    if pa.types.is_boolean(array.type):
        out = array.to_numpy(zero_copy_only=False)
    elif pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        out = np.array(array.to_pylist(), dtype=object)
    elif pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type):
        out = np.array(array.to_pylist(), dtype=object)
    else:
        out = array.to_numpy(zero_copy_only=True)
    return out.reshape(shape)


def join_chunks(stream):
    """One pyarrow array of a ``ChunkedArray`` (or any ``__arrow_c_stream__`` exporter): its only
    chunk as it is (buffers shared), several chunks joined into new buffers (a copy: a ragtime
    value holds its flat values and each row-splits vector in one contiguous buffer)."""
    chunked = stream if isinstance(stream, pa.ChunkedArray) else pa.chunked_array(stream)
    if chunked.num_chunks == 1:
        return chunked.chunk(0)
    return chunked.combine_chunks()
