"""The Python examples of README.md and docs/python.md run as written."""

import re

import pytest

from conftest import REPO

DOCS = [REPO / "README.md", REPO / "docs" / "python.md"]


def _blocks():
    for path in DOCS:
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S)):
            yield pytest.param(block, id=f"{path.name}:{i}")


BLOCKS = list(_blocks())


def test_the_docs_have_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS)
def test_example_runs(block, capsys):
    namespace = {}
    exec(compile(block, "<doc example>", "exec"), namespace)
    out = namespace["out"]
    assert out.shape == [3] and out.flat_values.dtype.name == "float32"
