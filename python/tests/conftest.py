"""Shared fixtures and helpers: the repository's case folders, buffer addresses, a small function."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
CASE_DIRS = {name: REPO / "tests" / name for name in ("conformance", "vocab2", "grad")}


def address(array):
    """The address of a numpy array's first byte: equal addresses mean shared memory."""
    return array.__array_interface__["data"][0]


def row_sums():
    """A compiled function of a float32 ragged rank 1 `x`: `x * 2` and its row sums."""
    import ragtime as rt

    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    return rt.compile([x], [x * 2, rt.reduce_sum(x, axis=1)])
