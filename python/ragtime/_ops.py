"""One Python function per op of the vocabulary (``rt.OP_NAMES``), built from the op registry:
``rt.tanh(x)``, ``rt.reduce_mean(x, axis=1)``, ``rt.strings.split(s, sep=" ")``."""

from ._ragtime import OP_NAMES, apply, op_attributes

# Names whose Python spelling differs from the graph-file name: Python keywords and builtins
# kept usable, and TensorFlow's own spellings.
_PYTHON_NAMES = {"abs": "abs", "round": "round", "where": "where", "cast": "cast"}


def _make(op):
    def function(*inputs, graph=None, **attrs):
        outputs = apply(op, inputs, graph=graph, **attrs)
        return outputs[0] if len(outputs) == 1 else outputs

    short = op.rsplit(".", 1)[-1]
    function.__name__ = short
    function.__qualname__ = short
    try:
        known = ", ".join(op_attributes(op)) or "none"
    except Exception:  # an op that accepts any attribute declares none
        known = "any"
    function.__doc__ = (
        f"The op `{op}` applied to the positional inputs (variables or constants); attributes "
        f"as keywords ({known}). One output gives a Var, several a list. See docs/ops.md."
    )
    return function


def install(module_globals, namespaces):
    """Defines every op's function in the module (prefixed ones in their namespace)."""
    for op in OP_NAMES:
        function = _make(op)
        if "." in op:
            prefix, short = op.split(".", 1)
            setattr(namespaces[prefix], short, function)
        else:
            module_globals[_PYTHON_NAMES.get(op, op)] = function
