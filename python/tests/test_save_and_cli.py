"""``rt.save`` (graph files read back by ``rt.load`` and by the Rust command line) and the
``ragtime`` console script, which runs the Rust command line in process."""

import json
import pathlib
import subprocess
import sys

import pytest

import ragtime as rt
from conftest import REPO


def run_cli(*args):
    """``python -m ragtime ARGS``: the console script's code, in a fresh process."""
    return subprocess.run([sys.executable, "-m", "ragtime", *map(str, args)], capture_output=True, text=True)


def literal(value_json):
    """The nested lists of a graph file's value (NaN is written `"nan"` there)."""
    return json.loads(json.dumps(value_json["value"]).replace('"nan"', "NaN"))


def softmax_graph():
    g = rt.Graph()
    x = g.input("x", rt.ragged("float32", 1))
    scale = g.input("scale", rt.dense("float32", []))
    e = rt.exp(x * scale - rt.reduce_max(x, axis=1, keepdims=True))
    y = (e / rt.reduce_sum(e, axis=1, keepdims=True)).named("softmax")
    return [x, scale], [y, rt.reduce_mean(y, axis=1) + g.constant(1.0, dtype="float32")]


VALUES = {"x": [[1.0, 2.0, 3.0], [], [4.0, -1.0]], "scale": 2.0}


def test_save_then_load_gives_the_same_function(tmp_path):
    inputs, outputs = softmax_graph()
    path = tmp_path / "softmax.json"
    rt.save(path, inputs, outputs, VALUES, name="mine/softmax", note="saved from Python")
    [case] = rt.load(path)
    assert case.name == "mine/softmax" and case.note == "saved from Python"
    assert case.expectation() is None
    built = case.build()
    assert built.output_names[0] == "softmax"
    got = built.function(*built.inputs)
    want = rt.compile(inputs, outputs)(**VALUES)
    assert len(got) == len(want) == 2
    for w, g in zip(want, got):
        assert rt.compare(w, g) is None
    doc = json.loads(path.read_text())
    assert doc["format"] == "ragged-conformance/1" and doc["group"] == "mine"
    assert doc["cases"][0]["inputs"]["x"] == {"dtype": "float32", "ragged_rank": 1, "value": VALUES["x"]}


def test_values_in_order_and_the_rust_command_line_reads_the_file(tmp_path):
    inputs, outputs = softmax_graph()
    path = tmp_path / "softmax.json"
    rt.save(path, inputs, outputs, [VALUES["x"], 3.0])
    done = run_cli("run", "--json", path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = json.loads(path.read_text())["cases"][0]["outputs"]
    want = rt.compile(inputs, outputs)(VALUES["x"], 3.0)
    for name, w in zip(names, want):
        value = report["outputs"][name]
        got = rt.RaggedTensor.from_list(literal(value), dtype=value["dtype"], ragged_rank=value["ragged_rank"])
        assert rt.compare(w, got) is None


def test_multi_output_ops_strings_and_attributes(tmp_path):
    g = rt.Graph()
    s = g.input("s", rt.ragged("string", 1))
    words = rt.strings.split(rt.strings.reduce_join(s, axis=1, separator=" "), sep=" ")
    lengths = rt.strings.length(words)
    values, indices = rt.apply("top_k", [rt.to_tensor(lengths)], k=2)
    upper = rt.strings.upper(words)
    value = {"s": [["ab c", "def"], [], ["g"]]}
    path = tmp_path / "strings.json"
    rt.save(path, [s], [upper, values, indices], value)
    [case] = rt.load(path)
    built = case.build()
    got = built.function(*built.inputs)
    want = rt.compile([s], [upper, values, indices])(**value)
    for w, gv in zip(want, got):
        assert w.equals(gv), (w, gv)


def test_gradients_are_saved_as_grad_nodes(tmp_path):
    g = rt.Graph()
    x = g.input("x", rt.ragged("float64", 1))
    w = g.input("w", rt.dense("float64", []))
    cost = rt.reduce_sum(rt.square(x * w))
    dx, dw = rt.grad(cost, [x, w])
    value = {"x": [[1.0, 2.0], [3.0]], "w": 0.5}
    path = tmp_path / "grad.json"
    rt.save(path, [x, w], [cost, dx, dw], value)
    nodes = json.loads(path.read_text())["cases"][0]["nodes"]
    assert [n["op"] for n in nodes][-1] == "grad" and nodes[-1]["attrs"] == {"wrt": ["x", "w"]}
    [case] = rt.load(path)
    built = case.build()
    for want, got in zip(rt.compile([x, w], [cost, dx, dw])(**value), built.function(*built.inputs)):
        assert rt.compare(want, got) is None


def test_the_bigram_workload_round_trips(tmp_path):
    sys.path.insert(0, str(REPO / "python" / "bench"))
    try:
        import side_by_side
    finally:
        sys.path.pop(0)
    queries, table = side_by_side.bigram_data(50)
    inputs, output = side_by_side.bigram_graph()
    path = tmp_path / "w7.json"
    rt.save(path, inputs, output, [queries, table])
    [case] = rt.load(path)
    built = case.build()
    [got] = built.function(*built.inputs)
    assert rt.compare(rt.compile(inputs, output)(queries, table), got) is None


def test_what_a_graph_file_cannot_say_is_refused(tmp_path):
    inputs, outputs = softmax_graph()
    path = tmp_path / "bad.json"
    with pytest.raises(rt.InvalidGraphError, match="not among the inputs given"):
        rt.save(path, inputs[:1], outputs, [VALUES["x"]])
    with pytest.raises(rt.TypeMismatchError, match="input `x`"):
        rt.save(path, inputs, outputs, {"x": [[[1.0]]], "scale": 2.0})
    with pytest.raises(rt.InvalidValueError, match="no value for input `scale`"):
        rt.save(path, inputs, outputs, {"x": VALUES["x"]})
    with pytest.raises(rt.InvalidValueError, match="1 values given for 2 inputs"):
        rt.save(path, inputs, outputs, [VALUES["x"]])
    with pytest.raises(rt.InvalidGraphError, match="not a graph input"):
        rt.save(path, [outputs[0]], outputs, [VALUES["x"]])
    assert not path.exists()


def test_console_script_runs_the_command_line():
    script = pathlib.Path(sys.executable).with_name("ragtime")
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable} (the package is not installed by pip or maturin)")
    done = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "conformance" in done.stdout and "bench" in done.stdout
    done = subprocess.run([script, "conformance", "--bogus"], capture_output=True, text=True)
    assert done.returncode == 2 and "--bogus" in done.stderr


def test_command_line_in_process_gives_the_exit_status(capfd):
    from ragtime.cli import main

    assert main(["conformance", REPO / "tests" / "conformance" / "strings.json", "--case", "seed_bigram_embedding"]) == 0
    assert "1 passed, 0 failed" in capfd.readouterr().out
    assert main(["run", REPO / "no-such-file.json"]) == 1
    assert main(["no-such-command"]) == 2


def test_bench_runs_from_python():
    done = run_cli("bench", "--only", "W6_small_call", "--runs", "2", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["W6_small_call"]["checked"] is True
