"""Measures `ragtime run --input ... --output OUT.parquet` against `--read-only` on the same file
(issue 24: a full run within 80% of the read-only throughput), in pairs run back to back.

    python3 tools/parquet_at_size.py /tmp/big 3e9      # the input, once
    python3 tools/parquet_throughput.py target/release/ragtime /tmp/big/softmax.json \
        x=/tmp/big/x.parquet:x /tmp/big/out.parquet --pairs 5

Each pair is one read-only run and one full run, in alternating order (read-only first in even
pairs, full first in odd ones) so a drift of the machine's load does not always favour one side.
Before every run the page cache is put in the same state for both: dirty pages are written back
(`sync`, so the previous full run's output is not flushed during the next run), the previous
output is deleted, and every input file is read through once (`cat` to /dev/null; dropping the
caches needs a writable /proc/sys/vm/drop_caches, which a shared machine should not do), so both
runs read their input from memory. The full run's own output writes count: it syncs its file
before it exits, as `ragtime run` always does.

Per run it prints wall, user and system time and peak RSS (from `wait4`); per pair the throughput
ratio (read-only wall / full wall); at the end the medians and the load average before and after.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def warm(paths: list[str]) -> None:
    """Writes back dirty pages and reads every input once, so it is in the page cache."""
    os.sync()
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass


def run(command: list[str]) -> dict:
    """Runs `command` and returns its wall, user and system seconds and peak RSS in MB."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    out, err = process.communicate()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed:\n{out.decode()}{err.decode()}")
    return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def line(kind: str, r: dict) -> str:
    return f"{kind:9} wall {r['wall']:6.2f} s  user {r['user']:6.2f} s  sys {r['sys']:5.2f} s  peak RSS {r['rss_mb']:5.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the ragtime binary")
    parser.add_argument("graph", help="the graph file (one function)")
    parser.add_argument("inputs", nargs="+", help="NAME=FILE.parquet:COL, then the output path last")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--extra", default="", help="more arguments for both runs (space separated)")
    args = parser.parse_args()
    *inputs, output = args.inputs
    if not inputs:
        parser.error("give at least one NAME=FILE.parquet:COL and the output path")
    files = sorted({spec.split("=", 1)[1].rsplit(":", 1)[0] for spec in inputs})
    base = [args.binary, "run", args.graph] + [a for spec in inputs for a in ("--input", spec)] + args.extra.split()
    commands = {"read-only": base + ["--read-only"], "full": base + ["--output", output]}
    print(f"load average before: {os.getloadavg()}")
    ratios, results = [], {"read-only": [], "full": []}
    for pair in range(args.pairs):
        order = ["read-only", "full"] if pair % 2 == 0 else ["full", "read-only"]
        this = {}
        for kind in order:
            if os.path.exists(output):
                os.remove(output)
            warm(files)
            this[kind] = run(commands[kind])
            results[kind].append(this[kind])
        ratio = this["read-only"]["wall"] / this["full"]["wall"]
        ratios.append(ratio)
        print(f"pair {pair}: " + "; ".join(line(k, this[k]) for k in order) + f"  -> ratio {ratio:.0%}", flush=True)
    for kind, rs in results.items():
        medians = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print("median " + line(kind, medians) + f" (max RSS {max(r['rss_mb'] for r in rs):.0f} MB)")
    print(f"median ratio {statistics.median(ratios):.0%} (pairs: {', '.join(f'{r:.0%}' for r in ratios)})")
    print(f"load average after: {os.getloadavg()}")
    if os.path.exists(output):
        os.remove(output)


if __name__ == "__main__":
    main()
