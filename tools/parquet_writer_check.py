"""Checks that two `ragtime` binaries write the same Parquet output, as pyarrow reads it (issue 24:
the direct writer of list-of-float columns against the `ArrowWriter` path it replaced).

    python3 tools/parquet_writer_check.py OLD_BINARY NEW_BINARY [--dir /tmp/writer-check]

For float32 and float64, ragged rank 1 and 2, it writes input files with pyarrow (`list` and
`large_list`, empty rows, a batch of empty rows only, a 0-row file), runs `ragtime run GRAPH --input
x=IN:x --output OUT --batch-size 1000` with each binary on a graph squaring `x`, and compares the
two outputs: `pq.read_table` equal, `ParquetFile.metadata` (row groups, column chunks' encodings,
codec, statistics, sizes) and `schema_arrow` equal, and the bytes. Exits non-zero on a difference.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def graph(dtype: str, ragged_rank: int) -> dict:
    value = [[1.0, 2.0], []] if ragged_rank == 1 else [[[1.0], []], []]
    return {
        "format": "ragged-conformance/1",
        "group": "check",
        "cases": [
            {
                "name": "check/square",
                "inputs": {"x": {"dtype": dtype, "ragged_rank": ragged_rank, "value": value}},
                "nodes": [{"op": "multiply", "in": ["x", "x"], "out": "y"}],
                "outputs": ["y"],
            }
        ],
    }


def column(rng, rows: int, dtype, ragged_rank: int, large: bool, max_len: int):
    """A column of `rows` ragged rows (a fifth empty), values of `dtype`."""
    lengths = rng.integers(0, max_len + 1, rows) * (rng.integers(0, 5, rows) != 0)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    if ragged_rank == 1:
        values = pa.array(rng.standard_normal(offsets[-1]).astype(dtype))
    else:
        values = column(rng, int(offsets[-1]), dtype, 1, large, 4)
    kind = pa.LargeListArray if large else pa.ListArray
    return kind.from_arrays(pa.array(offsets, pa.int64() if large else pa.int32()), values)


def metadata(path: str) -> dict:
    """What a reader sees of a file besides its values."""
    f = pq.ParquetFile(path)
    groups = [f.metadata.row_group(g).to_dict() for g in range(f.metadata.num_row_groups)]
    return {"schema": f.schema_arrow, "file": f.metadata.to_dict() | {"row_groups": groups}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--dir", default="/tmp/ragtime-writer-check")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(24)
    failures = 0
    cases = [
        (dtype, rank, large, rows, max_len)
        for dtype in ("float32", "float64")
        for rank in (1, 2)
        for large in (False, True)
        for rows, max_len in ((3500, 30), (1200, 0), (0, 5))
    ]
    for dtype, rank, large, rows, max_len in cases:
        name = f"{dtype}_rank{rank}_{'large' if large else 'list'}_{rows}rows_max{max_len}"
        source = os.path.join(args.dir, f"{name}.parquet")
        graph_path = os.path.join(args.dir, f"{dtype}_rank{rank}.json")
        with open(graph_path, "w") as f:
            json.dump(graph(dtype, rank), f)
        pq.write_table(pa.table({"x": column(rng, rows, np.dtype(dtype), rank, large, max_len)}), source)
        outputs = []
        for label, binary in (("old", args.old), ("new", args.new)):
            out = os.path.join(args.dir, f"{name}.{label}.out.parquet")
            command = [binary, "run", graph_path, "--input", f"x={source}:x", "--output", out, "--batch-size", "1000"]
            subprocess.run(command, check=True, capture_output=True)
            outputs.append(out)
        old, new = outputs
        checks = {
            "read_table": pq.read_table(old).equals(pq.read_table(new)),
            "metadata": metadata(old) == metadata(new),
            "bytes": open(old, "rb").read() == open(new, "rb").read(),
        }
        rows_out = pq.ParquetFile(new).metadata.num_rows
        groups = pq.ParquetFile(new).metadata.num_row_groups
        status = "ok" if all(checks.values()) else "DIFFERENT " + ", ".join(k for k, v in checks.items() if not v)
        failures += not all(checks.values())
        print(f"{name:40} {rows_out:5} rows {groups} row groups: {status}")
    print(f"{len(cases) - failures} of {len(cases)} outputs the same")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
