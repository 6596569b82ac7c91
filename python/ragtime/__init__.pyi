"""Type hints of the ragtime package. The op functions (one per name of ``OP_NAMES``) are made
at import time from the op registry; they take inputs positionally and attributes as keywords."""

from typing import Any, Callable, Optional, Sequence

from ._ragtime import (
    OP_NAMES as OP_NAMES,
    BuiltCase as BuiltCase,
    Case as Case,
    Function as Function,
    Graph as Graph,
    IncompatibleShapesError as IncompatibleShapesError,
    IndexOutOfRangeError as IndexOutOfRangeError,
    InvalidArgumentError as InvalidArgumentError,
    InvalidGraphError as InvalidGraphError,
    InvalidIndexError as InvalidIndexError,
    InvalidRowPartitionError as InvalidRowPartitionError,
    InvalidValueError as InvalidValueError,
    RaggedTensor as RaggedTensor,
    RagtimeError as RagtimeError,
    TensorType as TensorType,
    TypeMismatchError as TypeMismatchError,
    Var as Var,
    apply as apply,
    compare as compare,
    compile as compile,
    dense as dense,
    grad as grad,
    load as load,
    save as save,
    op_attributes as op_attributes,
    retain_freed_memory as retain_freed_memory,
)

MODES: tuple[str, str, str]

def constant(value: Any, dtype: Optional[str] = None, ragged_rank: Optional[int] = None, inner_shape: Optional[Sequence[int]] = None) -> RaggedTensor: ...
def from_tf(value: Any) -> RaggedTensor: ...
def to_tf(value: RaggedTensor) -> Any: ...
def from_torch(value: Any) -> RaggedTensor: ...
def to_torch(value: RaggedTensor) -> Any: ...
def from_awkward(value: Any) -> RaggedTensor: ...
def to_awkward(value: RaggedTensor) -> Any: ...

class _Namespace:
    def __getattr__(self, name: str) -> Callable[..., Any]: ...

class _Ragged(_Namespace):
    def __call__(self, dtype: str, ragged_rank: int = 1, inner_shape: Optional[Sequence[Optional[int]]] = None) -> TensorType: ...

ragged: _Ragged
strings: _Namespace

def __getattr__(name: str) -> Callable[..., Any]: ...
