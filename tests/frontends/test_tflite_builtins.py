"""Every (builtin, type) pair TFLite Micro supports: single-operator models compiled for the host,
run, and compared with TFLite Micro (bit-exact) or LiteRT (float32, 1e-5) — the cases of
`python -m bench.tflite_conformance` (tests/tflite_case_table.py, tests/tflite_cases.py).

The default run puts the first case of every converted pair side by side in one model per
type (one compile and one reference run each) and checks every refused pair's refusal; each
case alone, edge cases included, is the slow sweep. A pair either passes or is refused with
one clear line naming the node: REFUSED lists the refused pairs, so that a pair changing
status is a deliberate edit here.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.tflite_builtins import NEEDS_KERNEL, NONE, pairs
from codegen.errors import KilnError
from codegen.frontends.tflite import CONVERTERS, load_bytes
from tflite_case_table import cases_for
from tflite_cases import run_case, run_together

# builtin -> the types Kiln refuses (a reason per pair in bench/TFLITE_CONFORMANCE.md).
REFUSED = {
    "GREATER": "int16",
}


# Builtins whose cases keep state between calls (tflite_streaming.StreamCase): run alone, in
# tests/frontends/test_tflite_streaming.py and test_tflite_recurrent.py.
STATEFUL = ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF")


def _refused(op: str, dtype: str) -> bool:
    return dtype in REFUSED.get(op, "").split()


def _pairs_by_dtype(per_model: int = 6) -> dict[str, list]:
    """The first case of every pair Kiln converts, by type, a few per model (side by side,
    independent operators multiply the orders the memory scheduler weighs)."""
    by_type: dict[str, list] = {}
    for op, dtype in pairs():
        if op not in NEEDS_KERNEL and not _refused(op, dtype) and dtype != NONE and op not in STATEFUL:
            by_type.setdefault(dtype, []).append(cases_for(op, dtype)[0])
    return {f"{dtype}-{k // per_model}": cases[k:k + per_model]
            for dtype, cases in by_type.items() for k in range(0, len(cases), per_model)}


GROUPS = _pairs_by_dtype()


# int8-0 holds ArgMax and ArgMin side by side (int64 arena outputs, each read by a Cast): GCC
# 12.2 -O2 cloned their kernel for the constant arena addresses and deleted both calls (zeros
# out) until the run function took the arena's address from a volatile pointer (model.c.j2).
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_pairs_side_by_side_match_reference(group):
    """A few pairs' cases as one model: one compile and one reference run for all of them."""
    results = run_together(GROUPS[group])
    assert {k: v for k, v in results.items() if v} == {}


def _refused_cases():
    for op, dtype in pairs():
        if _refused(op, dtype):
            yield pytest.param(cases_for(op, dtype)[0], id=f"{op.lower()}-{dtype}")


@pytest.mark.parametrize("case", list(_refused_cases()))
def test_refused_pairs_fail_with_one_line_naming_the_node(case):
    outcome = run_case(case)
    assert outcome.status == "refused" and "\n" not in outcome.reason, outcome.reason
    assert outcome.reason.startswith("node 'out0': ")


def _all_cases():
    for op, dtype in pairs():
        if op not in NEEDS_KERNEL:
            for case in cases_for(op, dtype):
                yield pytest.param(case, id=case.id)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(_all_cases()))
def test_every_case_alone_matches_reference_or_is_refused(case):
    outcome = run_case(case)
    assert outcome.status == ("refused" if _refused(case.builtin, case.dtype) else "pass"), outcome.reason


def test_every_pair_has_a_converter_and_a_case_or_needs_a_kernel():
    for op, dtype in pairs():
        if op in NEEDS_KERNEL:
            assert op not in CONVERTERS, op
        else:
            assert op in CONVERTERS and cases_for(op, dtype), (op, dtype)


@pytest.mark.parametrize("builtin", sorted(NEEDS_KERNEL))
def test_builtins_that_need_a_kernel_fail_with_one_line(builtin):
    case = next(c for op, t in pairs() if op == "CONCATENATION" and t == "float32" for c in cases_for(op, t))
    model = replace(case, builtin=builtin, options={"_table": None}).model()
    with pytest.raises(KilnError) as info:
        load_bytes(model)
    assert f"{builtin} (node 'out0')" in str(info.value) and "\n" not in str(info.value)


def test_strided_slice_is_one_slice_and_a_reshape():
    case = next(c for c in cases_for("STRIDED_SLICE", "float32") if c.label == "ellipsis_new_axis")
    g = load_bytes(case.model())
    assert [n.op for n in g.nodes] == ["Slice", "Reshape"]
    assert g.nodes[0].attrs == {"starts": (0, 0, 1), "ends": (3, 5, 3), "steps": (1, 1, 1)}
    assert g.values[g.outputs[0]].shape == (3, 5, 1, 2)


def test_resize_nearest_follows_tflite_index_arithmetic():
    from codegen.frontends.tflite.ops_spatial import nearest_indices

    assert nearest_indices(3, 7, False, False).tolist() == [0, 0, 0, 1, 1, 2, 2]
    assert nearest_indices(3, 7, True, False).tolist() == [0, 0, 1, 1, 1, 2, 2]  # round half away from zero
    assert nearest_indices(3, 7, False, True).tolist() == [0, 0, 1, 1, 1, 2, 2]
    assert nearest_indices(4, 2, False, True).tolist() == [1, 3]


def test_transpose_conv_crops_tflite_padding():
    case = cases_for("TRANSPOSE_CONV", "float32")[1]  # VALID, stride 2, output 9x7 from 4x3
    (node,) = load_bytes(case.model()).nodes
    assert node.op == "ConvTranspose2D" and node.attrs["strides"] == (2, 2)
    assert node.attrs["pads"] == (0, 0, 0, 0)
    (node,) = load_bytes(cases_for("TRANSPOSE_CONV", "float32")[0].model()).nodes
    assert node.attrs["pads"] == (0, 0, 1, 1)  # SAME 8x6 from 4x3 with 3x3: one row/column cut behind
