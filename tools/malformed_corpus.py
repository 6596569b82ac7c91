#!/usr/bin/env python3
"""Writes tests/malformed/*.json: malformed and extreme graph files, one category of the
reliability issue (8) each. Every file must make `ragtime run` fail with a typed error (exit 1),
quickly, without a panic or an abort; `tests/malformed.rs` and `crates/cli/tests/malformed.rs`
check that. Run from the repository root: python3 tools/malformed_corpus.py"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "malformed")
F = "ragged-conformance/1"


def v(dtype, value, rr=0, shape=None, inner=None):
    d = {"dtype": dtype, "ragged_rank": rr, "value": value}
    if shape is not None:
        d["shape"] = shape
    if inner is not None:
        d["inner_shape"] = inner
    return d


def node(op, ins, out, attrs=None):
    n = {"op": op, "in": ins, "out": out}
    if attrs is not None:
        n["attrs"] = attrs
    return n


def write(fname, raw):
    with open(os.path.join(OUT, fname + ".json"), "w") as f:
        f.write(raw)
        f.write("\n")


def one(fname, inputs, nodes, outputs, note):
    c = {"name": fname + "/" + fname, "note": note, "inputs": inputs, "nodes": nodes, "outputs": outputs}
    write(fname, json.dumps({"format": F, "group": fname, "cases": [c]}))


def base(**kw):
    c = {"name": "g/a", "inputs": {"x": v("int32", [[1]], 1)}, "nodes": [node("identity", ["x"], "y")], "outputs": ["y"]}
    c.update(kw)
    return json.dumps({"format": F, "group": "g", "cases": [c]})


def raw_value(value_text, rr="0"):
    return '{"format":"%s","group":"g","cases":[{"name":"g/a","inputs":{"x":{"dtype":"int32","ragged_rank":%s,"value":%s}},"nodes":[],"outputs":["x"]}]}' % (F, rr, value_text)


os.makedirs(OUT, exist_ok=True)
ident = [node("identity", ["x"], "y")]

# 1. Claimed ragged ranks and ranks past TensorFlow's limit of 254.
for fname, rr in [("rank_claim_2p63", 2**63), ("rank_claim_2p40", 2**40), ("rank_claim_255", 255), ("rank_claim_u64_max", 2**64 - 1)]:
    one(fname, {"x": v("int32", [], rr)}, ident, ["y"], "an empty list claiming ragged rank %d" % rr)
write("rank_claim_1e8", raw_value("[]", "1e8"))
write("rank_claim_negative", raw_value("[]", "-1"))
write("rank_claim_string", raw_value("[]", '"2"'))
write("rank_claim_fraction", raw_value("[]", "1.5"))
write("rank_claim_2p70", raw_value("[]", "1180591620717411303424"))
one("shape_hint_rank_300", {"x": v("int32", [], 1, inner=[1] * 300)}, ident, ["y"], "an inner shape of rank 300")
write("json_nesting_10000", raw_value("[" * 10000 + "1" + "]" * 10000))

# 2. Reductions over zero-length axes.
for fname, big in [("reduce_empty_axis_2p62", 2**62), ("reduce_empty_axis_2p40", 2**40)]:
    one(fname, {"x": v("float32", [], 0, shape=[0, big])}, [node("reduce_sum", ["x"], "y", {"axis": 0})], ["y"], "dense [0, big] summed over axis 0")
one("reduce_ragged_empty_inner_2p62", {"x": v("float32", [[]], 1, inner=[2**62])}, [node("reduce_sum", ["x"], "y", {"axis": 0})], ["y"], "[[]] with inner_shape [2^62] summed over axis 0")
one("reduce_join_empty_axis", {"x": v("string", [], 0, shape=[0, 2**62])}, [node("strings.reduce_join", ["x"], "y", {"axis": 0})], ["y"], "reduce_join of a [0, 2^62] string tensor")

# 3. strings.ngrams widths.
pad = {"pad_values": ["<", ">"]}
tokens = {"x": v("string", ["a", "b"], 0, shape=[2])}
one("ngrams_width_int32_max", tokens, [node("strings.ngrams", ["x"], "y", dict(ngram_width=2147483647, **pad))], ["y"], "quadratic padded output")
one("ngrams_width_1e5", tokens, [node("strings.ngrams", ["x"], "y", dict(ngram_width=100000, **pad))], ["y"], "width 1e5")
one("ngrams_width_zero", tokens, [node("strings.ngrams", ["x"], "y", {"ngram_width": 0})], ["y"], "width 0")
one("ngrams_width_2p40", tokens, [node("strings.ngrams", ["x"], "y", {"ngram_width": 2**40})], ["y"], "a width past int32")
one("ngrams_preserve_long_padding", tokens, [node("strings.ngrams", ["x"], "y", dict(ngram_width=2147483647, padding_width=2**30 - 2, preserve_short_sequences=True, **pad))], ["y"], "one preserved n-gram of 2^31 items")

# 4. Sizes count string bytes.
kb = "x" * 1024
one("tile_string_bytes", {"x": v("string", [kb], 0, shape=[1])}, [node("tile", ["x"], "y", {"multiples": [2**21]})], ["y"], "2 GB of bytes from a 1 KB string")
one("fill_string_bytes", {"d": v("int64", [2**21], 0, shape=[1]), "s": v("string", kb, 0, shape=[])}, [node("fill", ["d", "s"], "y")], ["y"], "fill a 1 KB string 2^21 times")
one("gather_string_bytes", {"p": v("string", [kb], 0, shape=[1]), "i": v("int32", [0] * 64, 0, shape=[64])}, [node("tile", ["i"], "j", {"multiples": [2**15]}), node("gather", ["p", "j"], "y")], ["y"], "gather one 1 KB string 2^21 times")
one("join_broadcast_bytes", {"s": v("string", kb, 0, shape=[]), "e": v("string", [""], 0, shape=[1])}, [node("tile", ["e"], "f", {"multiples": [2**21]}), node("strings.join", ["s", "f"], "y")], ["y"], "a broadcast 1 KB string joined 2^21 times")

# 5. Index vectors under the element cap; sizes from data and attributes.
one("tile_int8_2p31", {"x": v("int8", [1], 0, shape=[1])}, [node("tile", ["x"], "y", {"multiples": [2**31]})], ["y"], "int8 tile to 2^31")
one("tile_huge_product", {"x": v("int8", [[1]], 0, shape=[1, 1])}, [node("tile", ["x"], "y", {"multiples": [2**33, 2**33]})], ["y"], "tile multiples overflow")
one("fill_int8_2p31", {"d": v("int64", [2**31], 0, shape=[1]), "s": v("int8", 1, 0, shape=[])}, [node("fill", ["d", "s"], "y")], ["y"], "fill int8 2^31")
one("fill_dims_overflow", {"d": v("int64", [2**40, 2**40], 0, shape=[2]), "s": v("float32", 1.0, 0, shape=[])}, [node("fill", ["d", "s"], "y")], ["y"], "fill dims multiply past u64")
one("fill_rank_300", {"d": v("int64", [1] * 300, 0, shape=[300]), "s": v("float32", 1.0, 0, shape=[])}, [node("fill", ["d", "s"], "y")], ["y"], "fill to rank 300")
one("range_2p31", {"a": v("int64", [0], 0, shape=[1]), "b": v("int64", [2**31], 0, shape=[1]), "c": v("int64", [1], 0, shape=[1])}, [node("ragged.range", ["a", "b", "c"], "y")], ["y"], "ragged.range of 2^31 values")
one("range_float_huge", {"a": v("float64", [0.0], 0, shape=[1]), "b": v("float64", [1e300], 0, shape=[1]), "c": v("float64", [1e-300], 0, shape=[1])}, [node("ragged.range", ["a", "b", "c"], "y")], ["y"], "a float range past every limit")
one("to_tensor_huge_shape", {"x": v("int8", [[1], []], 1)}, [node("to_tensor", ["x"], "y", {"shape": [2**16, 2**15]})], ["y"], "to_tensor to 2^31 int8")
one("from_value_rowids_nrows", {"x": v("int8", [1], 0, shape=[1]), "r": v("int64", [0], 0, shape=[1])}, [node("from_value_rowids", ["x", "r"], "y", {"nrows": 2**31})], ["y"], "2^31 empty rows")
one("from_value_rowids_huge_id", {"x": v("int8", [1], 0, shape=[1]), "r": v("int64", [2**62], 0, shape=[1])}, [node("from_value_rowids", ["x", "r"], "y")], ["y"], "a row id of 2^62")
one("from_sparse_huge_shape", {"i": v("int64", [[0, 0]], 0, shape=[1, 2]), "x": v("float32", [1.0], 0, shape=[1]), "s": v("int64", [2**31, 2**31], 0, shape=[2])}, [node("from_sparse", ["i", "x", "s"], "y")], ["y"], "from_sparse with a huge dense shape")
one("from_row_splits_huge", {"x": v("int8", [1], 0, shape=[1]), "s": v("int64", [0, 2**63 - 1], 0, shape=[2])}, [node("from_row_splits", ["x", "s"], "y")], ["y"], "splits [0, i64::MAX]")
one("from_row_lengths_huge", {"x": v("int8", [1], 0, shape=[1]), "s": v("int64", [2**40], 0, shape=[1])}, [node("from_row_lengths", ["x", "s"], "y")], ["y"], "a row of 2^40 values")
one("broadcast_outer_product", {"d1": v("int64", [65536, 1], 0, shape=[2]), "d2": v("int64", [1, 65536], 0, shape=[2]), "s": v("float32", 1.0, 0, shape=[])}, [node("fill", ["d1", "s"], "a"), node("fill", ["d2", "s"], "b"), node("add", ["a", "b"], "y")], ["y"], "[65536, 1] + [1, 65536] = 2^32 values")
one("string_shape_overflow", {"x": v("string", [], 0, shape=[2**32, 2**32])}, ident, ["y"], "[2^32, 2^32] strings with none given")
one("dense_shape_overflow", {"x": v("float32", [], 0, shape=[2**62, 2**62])}, ident, ["y"], "[2^62, 2^62] with no values")
one("shape_past_u64", {"x": v("float32", [], 0, shape=[2**64])}, ident, ["y"], "a dim past u64")

# 6. Recursion and quadratic work.
one("getitem_many_none", {"x": v("float32", [1.0], 0, shape=[1])}, [node("getitem", ["x"], "y", {"key": ", ".join(["None"] * 10000)})], ["y"], "a key of 10,000 None")
one("reduce_many_axes", {"x": v("float32", [1.0], 0, shape=[1])}, [node("reduce_sum", ["x"], "y", {"axis": [0] * 50000})], ["y"], "50,000 listed axes")

# 9. Lax parsing.
write("format_number", base().replace('"format": "%s"' % F, '"format": 7'))
write("format_unknown", base().replace(F, "ragged-conformance/9"))
write("unknown_top_field", base()[:-1] + ', "extra": 1}')
write("unknown_case_field", base(typo_expect={}))
write("unknown_node_field", base(nodes=[{"op": "identity", "in": ["x"], "out": "y", "atrs": {}}]))
write("unknown_value_field", base(inputs={"x": {"dtype": "int32", "ragged_rank": 1, "value": [[1]], "ragged": 1}}))
write("cases_not_list", '{"format":"%s","group":"g","cases":{"a":1}}' % F)
write("cases_missing", '{"format":"%s","group":"g"}' % F)
write("case_not_object", '{"format":"%s","group":"g","cases":[7]}' % F)
write("nodes_object", base(nodes={"op": "identity"}))
write("node_not_object", base(nodes=["identity"]))
write("outputs_string", base(outputs="y"))
write("outputs_numbers", base(outputs=[1]))
write("attrs_list", base(nodes=[{"op": "identity", "in": ["x"], "out": "y", "attrs": [1]}]))
write("in_number", base(nodes=[{"op": "identity", "in": [3], "out": "y"}]))
write("out_number", base(nodes=[{"op": "identity", "in": ["x"], "out": 5}]))
write("out_missing", base(nodes=[{"op": "identity", "in": ["x"]}]))
write("op_missing", base(nodes=[{"in": ["x"], "out": "y"}]))
write("op_unknown", base(nodes=[{"op": "frobnicate", "in": ["x"], "out": "y"}]))
write("const_extra_field", base(nodes=[{"op": "add", "in": ["x", {"const": v("int32", 1), "also": 1}], "out": "y"}]))
write("hex_plus_signs", base(inputs={"x": {"dtype": "string", "ragged_rank": 0, "shape": [1], "value": [{"hex": "+1+2"}]}}))
write("hex_not_string", base(inputs={"x": {"dtype": "string", "ragged_rank": 0, "shape": [1], "value": [{"hex": 12}]}}))
write("hex_for_ints", base(inputs={"x": {"dtype": "int32", "ragged_rank": 0, "shape": [1], "value": [{"hex": "01"}]}}))
write("dtype_unknown", base(inputs={"x": v("int128", [1], 0, shape=[1])}))
write("dtype_number", base(inputs={"x": {"dtype": 32, "ragged_rank": 0, "value": [1]}}))
write("shape_negative", base(inputs={"x": {"dtype": "int32", "ragged_rank": 0, "shape": [-1], "value": [1]}}))
write("shape_for_ragged", base(inputs={"x": {"dtype": "int32", "ragged_rank": 1, "shape": [1, 1], "value": [[1]]}}))
write("duplicate_input_key", base().replace('"inputs": {"x":', '"inputs": {"x": {"dtype": "int32", "ragged_rank": 0, "value": [1], "shape": [1]}, "x":'))
write("duplicate_case_field", base().replace('"name": "g/a",', '"name": "g/a", "name": "g/b",'))
write("node_shadows_input", base(nodes=[node("identity", ["x"], "x")], outputs=["x"]))
write("node_outputs_repeat", base(nodes=[node("identity", ["x"], "y"), node("negative", ["x"], "y")]))
write("outputs_listed_twice", base(outputs=["y", "y"]))
write("expect_and_error", base(expect={}, expect_error="invalid_value"))
write("output_undefined", base(outputs=["nope"]))
write("input_undefined", base(nodes=[node("identity", ["nope"], "y")]))
write("not_json", '{"format": "ragged-conformance/1", "cases": [')
write("empty_file", "")
write("top_level_array", "[1, 2, 3]")
write("splits_past_values", base(inputs={"x": v("int8", [1], 0, shape=[1]), "s": v("int64", [0, 5], 0, shape=[2])}, nodes=[node("from_row_splits", ["x", "s"], "y")]))
write("gather_out_of_range", base(inputs={"x": v("int32", [[1]], 1), "i": v("int64", [2**62], 0, shape=[1])}, nodes=[node("gather", ["x", "i"], "y")]))
write("gather_negative", base(inputs={"x": v("int32", [[1]], 1), "i": v("int64", [-(2**63)], 0, shape=[1])}, nodes=[node("gather", ["x", "i"], "y")]))
write("hash_bucket_zero", base(inputs={"x": v("string", ["a"], 0, shape=[1])}, nodes=[node("strings.to_hash_bucket_fast", ["x"], "y", {"num_buckets": 0})]))
write("segment_ids_huge", base(inputs={"x": v("float32", [1.0], 0, shape=[1]), "i": v("int64", [2**40], 0, shape=[1])}, nodes=[node("unsorted_segment_sum", ["x", "i"], "y", {"num_segments": 2**40})]))
