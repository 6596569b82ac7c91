"""Every TensorFlow-computed case of tests/conformance, tests/vocab2 and tests/grad, loaded with
``rt.load``, built and called through the bindings, and compared with the expected values by the
conformance tolerance (``rt.compare``); expected errors must raise the exception of their kind."""

import pytest

import ragtime as rt
from conftest import CASE_DIRS

ERROR_CLASSES = {
    "invalid_row_partition": rt.InvalidRowPartitionError,
    "incompatible_shapes": rt.IncompatibleShapesError,
    "type_mismatch": rt.TypeMismatchError,
    "invalid_index": rt.InvalidIndexError,
    "index_out_of_range": rt.IndexOutOfRangeError,
    "invalid_value": rt.InvalidValueError,
    "invalid_argument": rt.InvalidArgumentError,
    "invalid_graph": rt.InvalidGraphError,
}


def _cases():
    params = []
    for group, folder in CASE_DIRS.items():
        for path in sorted(folder.glob("*.json")):
            for case in rt.load(str(path)):
                params.append(pytest.param(case, id=f"{group}:{path.stem}:{case.name}"))
    return params


CASES = _cases()


def test_every_folder_has_cases():
    groups = {p.id.split(":")[0] for p in CASES}
    assert groups == set(CASE_DIRS), groups
    assert len(CASES) >= 1000, len(CASES)


def _run(case, mode):
    built = case.build(mode=mode)
    outputs = built.function(*built.inputs)
    return dict(zip(built.output_names, outputs))


@pytest.mark.parametrize("mode", rt.MODES)
@pytest.mark.parametrize("case", CASES)
def test_case_matches_tensorflow(case, mode):
    expected = case.expectation()
    if isinstance(expected, str):
        with pytest.raises(ERROR_CLASSES[expected]) as raised:
            _run(case, mode)
        assert raised.value.kind == expected
        assert isinstance(raised.value, rt.RagtimeError)
        return
    got = _run(case, mode)
    for name, want in (expected or {}).items():
        assert name in got, f"output {name} missing"
        difference = rt.compare(want, got[name])
        assert difference is None, f"{name}: {difference}\n expected {want}\n got      {got[name]}"
