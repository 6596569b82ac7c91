"""ragtime: a symbolic graph compiler for ragged tensors, from Python.

Build a graph, compile it, call it on data::

    import ragtime as rt
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    y = rt.reduce_mean(rt.tanh(x * 2 + 1), axis=1)
    f = rt.compile([x], y)
    f(x=[[1.0, 2.0], [], [3.0]])

Every op of the vocabulary is ``rt.apply(name, inputs, **attrs)``; each also has a function
named as in TensorFlow (``rt.reduce_sum``, ``rt.strings.split``, ``rt.ragged.range``), listed in
``rt.OP_NAMES``. Values are ``rt.RaggedTensor``: from nested lists, numpy (flat values plus row
splits), Arrow arrays and chunked arrays, TensorFlow, torch and Awkward; to numpy views, pyarrow
arrays, TensorFlow, torch and Awkward. Graph files: ``rt.load`` and ``rt.save``; the command line:
the ``ragtime`` console script (``ragtime.cli``).
"""

from . import _ragtime
from ._ragtime import (
    OP_NAMES,
    BuiltCase,
    Case,
    Function,
    Graph,
    IncompatibleShapesError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    InvalidGraphError,
    InvalidIndexError,
    InvalidRowPartitionError,
    InvalidValueError,
    RaggedTensor,
    RagtimeError,
    TensorType,
    TypeMismatchError,
    Var,
    apply,
    compare,
    compile,
    dense,
    grad,
    load,
    save,
    op_attributes,
    retain_freed_memory,
)
from ._ops import install as _install_ops
from .interop import constant, from_awkward, from_tf, from_torch, to_awkward, to_tf, to_torch

MODES = ("fast_run", "fast_compile", "debug")


class _Namespace:
    """A group of ops named with a prefix (``rt.strings.split`` is the op ``strings.split``)."""

    def __init__(self, name, doc):
        self.__name__ = name
        self.__doc__ = doc

    def __repr__(self):
        return f"<ragtime op namespace {self.__name__!r}>"


class _Ragged(_Namespace):
    """``rt.ragged(dtype, ragged_rank=1, inner_shape=None)`` is a ragged input type; its
    attributes are the ``ragged.*`` ops (``rt.ragged.range``, ``rt.ragged.cross``)."""

    def __call__(self, dtype, ragged_rank=1, inner_shape=None):
        return _ragtime.ragged(dtype, ragged_rank, inner_shape)


ragged = _Ragged("ragged", _Ragged.__doc__)
strings = _Namespace("strings", "String ops, as TensorFlow's tf.strings.")
_install_ops(globals(), {"ragged": ragged, "strings": strings})

__all__ = [name for name in globals() if not name.startswith("_")]
