#!/usr/bin/env python3
"""Checks the code-layout rules of issue 19 that a compiler does not: run by `.ci/run`.

Usage: tools/check_layout.py   (from anywhere; it checks the repository it lives in)

1. No import circles between the files of `crates/jit`, `crates/ops`, `crates/runtime` or `crates/fused`
   (`tools/import_cycles.py`).
2. No Rust source file of the repository has 1,000 lines or more (split files by job).
3. No `thread_local!` outside the listed ones, none of which carries a run-time setting (threads,
   budget, limits, pools, the Debug flag and the current node travel in `ExecContext`). A new
   thread-local must be added to `ALLOWED_THREAD_LOCALS` with the reason it is not a setting.

Exits 1 when a rule is broken (each violation printed), 0 otherwise.
"""

import os
import re
import sys

import import_cycles

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 1000
CYCLE_FREE_CRATES = ["crates/jit", "crates/ops", "crates/runtime", "crates/fused"]
SKIP_DIRS = {"target", ".git", "node_modules", ".venv", "venv"}

# file (relative to the repository) -> why its thread-local is not a run-time setting
ALLOWED_THREAD_LOCALS = {
    "crates/jit/src/exec.rs": "each thread's Cranelift module: a compiler's working state",
    "crates/arrow/src/parquet/isolate.rs": "the panic hook's nesting count (the hook only knows the thread)",
    "crates/ops/tests/robustness/harness.rs": "a test harness's bookkeeping, not library code",
    "crates/fused/src/trailing.rs": "the last uniform partition a trailing-axis view built: derived data reused, not a setting",
}


def rust_files():
    for root, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("tgt"))
        for name in sorted(files):
            if name.endswith(".rs"):
                yield os.path.join(root, name)


def main():
    problems = []
    for crate in CYCLE_FREE_CRATES:
        if import_cycles.check(os.path.join(ROOT, crate)):
            problems.append(f"{crate} has import circles (listed above)")
    thread_local = re.compile(r"^\s*thread_local!", re.MULTILINE)
    largest = (0, "")
    for path in rust_files():
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n")
        largest = max(largest, (lines, rel))
        if lines >= MAX_LINES:
            problems.append(f"{rel} has {lines} lines (at most {MAX_LINES - 1}: split it by job)")
        if thread_local.search(text) and rel not in ALLOWED_THREAD_LOCALS:
            problems.append(f"{rel} declares a thread_local! not listed in ALLOWED_THREAD_LOCALS")
    print(f"largest Rust file: {largest[1]} ({largest[0]} lines)")
    for p in problems:
        print("error: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
