"""Shared fixtures: the repository's case folders."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
CASE_DIRS = {name: REPO / "tests" / name for name in ("conformance", "vocab2", "grad")}
