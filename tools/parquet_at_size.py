"""Writes a large Parquet file and a row-softmax graph file for measuring `ragtime run --input ...
--output` at size (issue 24): peak RSS and throughput against `--read-only` on the same batches.

    python3 tools/parquet_at_size.py /tmp/big 3e9      # about 3 GB of float32 values
    /usr/bin/time -v ragtime run /tmp/big/softmax.json --input x=/tmp/big/x.parquet:x --read-only
    /usr/bin/time -v ragtime run /tmp/big/softmax.json --input x=/tmp/big/x.parquet:x \
        --output /tmp/big/out.parquet

The column `x` is `large_list<float32>`, rows of 0 to 200 values (100 on average), written in row
groups of 1,048,576 rows, uncompressed (random floats do not compress; the codec is not what is
measured). Values come from numpy's seeded generator, so the file is the same on every run.
"""

import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP = 1 << 20
GRAPH = {
    "format": "ragged-conformance/1",
    "group": "stream",
    "cases": [
        {
            "name": "stream/row_softmax",
            "inputs": {"x": {"dtype": "float32", "ragged_rank": 1, "value": [[1.0, 2.0], []]}},
            "nodes": [
                {"op": "reduce_max", "in": ["x"], "attrs": {"axis": 1, "keepdims": True}, "out": "m"},
                {"op": "subtract", "in": ["x", "m"], "out": "d"},
                {"op": "exp", "in": ["d"], "out": "e"},
                {"op": "reduce_sum", "in": ["e"], "attrs": {"axis": 1, "keepdims": True}, "out": "s"},
                {"op": "divide", "in": ["e", "s"], "out": "y"},
            ],
            "outputs": ["y"],
        }
    ],
}


def main() -> None:
    folder, target = sys.argv[1], float(sys.argv[2])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "softmax.json"), "w") as f:
        json.dump(GRAPH, f)
    rng = np.random.default_rng(24)
    schema = pa.schema([("x", pa.large_list(pa.float32()))])
    written = 0
    with pq.ParquetWriter(os.path.join(folder, "x.parquet"), schema, compression="none") as writer:
        while written < target:
            lengths = rng.integers(0, 201, ROW_GROUP)
            offsets = np.zeros(ROW_GROUP + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            values = rng.standard_normal(int(offsets[-1]), dtype=np.float32)
            column = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(values))
            writer.write_table(pa.table({"x": column}, schema=schema), row_group_size=ROW_GROUP)
            written += values.nbytes
    print(f"{written / 1e9:.2f} GB of float32 values in {folder}/x.parquet")


if __name__ == "__main__":
    main()
