"""Values from and to other libraries: Python literals, numpy, pyarrow (through the Arrow C data
interface, sharing buffers) and TensorFlow (``tf.RaggedTensor`` through its flat values and
nested row splits)."""

from ._ragtime import RaggedTensor


def constant(value, dtype=None, ragged_rank=None, inner_shape=None):
    """A value from a nested list (``tf.ragged.constant``), an Arrow array or chunked array (its
    chunks joined: shared when there is one, copied otherwise), or a numpy array."""
    if hasattr(value, "combine_chunks"):
        value = value.combine_chunks()
    if hasattr(value, "__arrow_c_array__"):
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
