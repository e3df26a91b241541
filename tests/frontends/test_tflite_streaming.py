"""Streaming TFLite models: resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE)
initialised by CALL_ONCE, compiled into a persistent state region, over consecutive calls
against TFLite Micro (int8 bit-exact, float32 too) and LiteRT (float32, within tolerance)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from tflite_case_table import cases_for
from tflite_cases import mismatch, run_case
from tflite_models import ModelWriter, TensorSpec, const
from tflite_streaming import (build_stream, frames, run_kiln_stream, run_litert_stream, run_tflm_stream,
                              streaming_model)

from codegen.budget import check_budget
from codegen.errors import KilnError
from codegen.frontends.tflite import load_bytes
from codegen.verify.toolchain import compile_c

CALLS = 50  # as many consecutive calls as the issue asks of the streaming model


def _assert_same(expected, got, exact: bool) -> None:
    for call, (want, have) in enumerate(zip(expected, got)):
        for k, (a, b) in enumerate(zip(want, have)):
            problem = mismatch(a, b.reshape(a.shape)) if not exact else \
                ("" if np.array_equal(a, b.reshape(a.shape)) else f"{np.count_nonzero(a != b.reshape(a.shape))} differ")
            assert not problem, f"call {call}, output {k}: {problem}"


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("zero_init", [False, True], ids=["model_init", "zero_init"])
def test_consecutive_calls_match_tflite_micro(dtype, zero_init):
    model = streaming_model(dtype, zero_init=zero_init)
    inputs = frames(dtype, CALLS)
    result = build_stream(model)
    _assert_same(run_tflm_stream(model, inputs), run_kiln_stream(result, inputs), exact=True)


def test_conformance_cases_pass():
    """The cases `python -m bench.tflite_conformance` runs for the resource-variable builtins
    (the same streaming models for the four of them)."""
    labels = {b: [c.label for c in cases_for(b, "none")] for b in ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE")}
    assert all(v == [c.label for c in cases_for("CALL_ONCE", "none")] for v in labels.values())
    for case in cases_for("CALL_ONCE", "none"):
        outcome = run_case(case, samples=2)
        assert outcome.status == "pass", f"{case.id}: {outcome.reason}"


def test_float_stream_matches_litert():
    model = streaming_model("float32", seed=3)
    inputs = frames("float32", CALLS, seed=4)
    _assert_same(run_litert_stream(model, inputs), run_kiln_stream(build_stream(model), inputs), exact=False)


def test_state_region_is_beside_the_arena():
    result = build_stream(streaming_model("int8"))
    m = result.manifest
    # frames int8[1,2,8] and the running sum int8[1,4]
    assert m["state_bytes"] == 20
    assert [(s["name"], s["bytes"]) for s in m["state"]] == [("frames", 16), ("score_sum", 4)]
    assert [io["name"] for io in m["inputs"]] == ["frame"]
    assert [io["name"] for io in m["outputs"]] == ["scores", "new_score_sum"]
    # both next values are written straight into their variables: no copy through the arena
    assert m["arena_bytes"] == 24  # the window int8[1,3,8] only
    assert "persistent state (the model's variables, beside the arena): 20 B" in result.files["stream.memory.md"]
    assert "#define STREAM_STATE_SIZE 20u" in result.files["stream.h"]
    with pytest.raises(KilnError, match=r"60 B of RAM \(arena 24 B \+ inputs and outputs 16 B \+ variables 20 B\)"):
        check_budget(m, ram_limit=40)


def test_reset_restores_the_initial_values(tmp_path):
    """N_reset() starts a new stream: the same frames then give the same outputs as after boot."""
    result = build_stream(streaming_model("int8"))
    inputs = frames("int8", 5)
    for fname, content in result.files.items():
        (tmp_path / fname).write_text(content)
    rows = ",\n".join("{" + ", ".join(str(int(v)) for v in x.reshape(-1)) + "}" for x in inputs)
    (tmp_path / "main.c").write_text(_RESET_MAIN.replace("@FRAMES@", rows).replace("@COUNT@", str(len(inputs))))
    exe = tmp_path / "reset_check"
    compile_c("gcc", [tmp_path / "stream.c", tmp_path / "stream_weights.c", tmp_path / "main.c"], exe,
              ["-O2"], [], tmp_path)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


_RESET_MAIN = """#include <stdint.h>
#include "stream.h"

static const int8_t frames[@COUNT@][STREAM_INPUT_0_ELEMENTS] = {
@FRAMES@
};

static int run_all(int8_t scores[@COUNT@][STREAM_OUTPUT_0_ELEMENTS], int8_t sums[@COUNT@][STREAM_OUTPUT_1_ELEMENTS])
{
    int k;
    for (k = 0; k < @COUNT@; ++k) {
        if (stream_run(frames[k], scores[k], sums[k]) != STREAM_OK) {
            return 1;
        }
    }
    return 0;
}

int main(void)
{
    static int8_t s0[@COUNT@][STREAM_OUTPUT_0_ELEMENTS], t0[@COUNT@][STREAM_OUTPUT_1_ELEMENTS];
    static int8_t s1[@COUNT@][STREAM_OUTPUT_0_ELEMENTS], t1[@COUNT@][STREAM_OUTPUT_1_ELEMENTS];
    uint32_t i, differ = 0u;
    if (run_all(s0, t0) || run_all(s1, t1)) {
        return 2;
    }
    for (i = 0u; i < sizeof t0; ++i) { /* without a reset the state carries over: sums differ */
        differ += ((int8_t *)t0)[i] != ((int8_t *)t1)[i];
    }
    if (differ == 0u) {
        return 5;
    }
    stream_reset();
    if (run_all(s1, t1)) {
        return 2;
    }
    for (i = 0u; i < sizeof s0; ++i) {
        if (((int8_t *)s0)[i] != ((int8_t *)s1)[i]) {
            return 3;
        }
    }
    for (i = 0u; i < sizeof t0; ++i) {
        if (((int8_t *)t0)[i] != ((int8_t *)t1)[i]) {
            return 4;
        }
    }
    return 0;
}
"""


def test_cortex_m4_stream_bit_exact():
    model = streaming_model("int8", seed=5)
    inputs = frames("int8", 8, seed=6)
    result = build_stream(model, target="cortex-m4")
    _assert_same(run_tflm_stream(model, inputs), run_kiln_stream(result, inputs, target="cortex-m4"), exact=True)


# -- variable traffic inside one call, and what Kiln refuses ---------------------------------------------

def _var_model(main_ops, init_value=None, extra_init_ops=()):
    """A float32[4] variable 'v' (initialised to `init_value` unless None) and input x;
    `main_ops(w, x, handle)` adds the main subgraph's operators and returns its outputs."""
    init = ModelWriter()
    h = init.tensor(TensorSpec((), "resource", name="h0"))
    init.op("VAR_HANDLE", [], [h], {"shared_name": "v"})
    if init_value is not None:
        init.op("ASSIGN_VARIABLE", [h, init.tensor(const(np.asarray(init_value, np.float32)))], [])
    for op in extra_init_ops:
        op(init, h)
    w = ModelWriter()
    x = w.tensor(TensorSpec((4,), "float32", name="x"))
    w.op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    handle = w.tensor(TensorSpec((), "resource", name="h"))
    w.op("VAR_HANDLE", [], [handle], {"shared_name": "v"})
    outs = main_ops(w, x, handle)
    return w.build([x], outs, subgraphs=[(init, [], [])])


def _read(w, handle, name):
    t = w.tensor(TensorSpec((4,), "float32", name=name))
    w.op("READ_VARIABLE", [handle], [t])
    return t


def _add(w, a, b, name):
    t = w.tensor(TensorSpec((4,), "float32", name=name))
    w.op("ADD", [a, b], [t])
    return t


def test_read_after_assign_sees_the_new_value():
    """v += x; y = v (read again after the assign) + v (read before): TFLite Micro's order."""
    def main(w, x, h):
        before = _read(w, h, "before")
        nxt = _add(w, before, x, "next")
        w.op("ASSIGN_VARIABLE", [h, nxt], [])
        after = _read(w, h, "after")
        return [_add(w, after, before, "y")]

    model = _var_model(main, init_value=[1, 2, 3, 4])
    inputs = [np.full(4, k, np.float32) for k in range(1, 5)]
    _assert_same(run_tflm_stream(model, inputs), run_kiln_stream(build_stream(model), inputs), exact=True)


def test_uninitialised_variable_starts_at_zero():
    def main(w, x, h):
        nxt = _add(w, _read(w, h, "v"), x, "y")
        w.op("ASSIGN_VARIABLE", [h, nxt], [])
        return [nxt]

    model = _var_model(main)
    inputs = [np.full(4, k, np.float32) for k in range(3)]
    _assert_same(run_tflm_stream(model, inputs), run_kiln_stream(build_stream(model), inputs), exact=True)


def test_computed_initial_value_is_refused_in_one_line():
    def computed(init, h):
        a = init.tensor(const(np.ones(4, np.float32)))
        s = init.tensor(TensorSpec((4,), "float32", name="sum"))
        init.op("ADD", [a, a], [s])
        init.op("ASSIGN_VARIABLE", [h, s], [])

    model = _var_model(lambda w, x, h: [_add(w, _read(w, h, "v"), x, "y")], extra_init_ops=[computed])
    with pytest.raises(KilnError) as err:
        load_bytes(model)
    assert "CALL_ONCE: subgraph 1 runs ADD" in str(err.value)
    assert "\n" not in str(err.value)


def test_variable_used_with_another_type_is_refused():
    def main(w, x, h):
        t = w.tensor(TensorSpec((2,), "float32", name="short"))
        w.op("READ_VARIABLE", [h], [t])
        return [_add(w, _read(w, h, "v"), x, "y")]

    with pytest.raises(KilnError, match="READ_VARIABLE: reads variable 'v' as float32\\[2\\], but CALL_ONCE "
                                        "initialises it as float32\\[4\\]"):
        load_bytes(_var_model(main, init_value=[1, 2, 3, 4]))


def test_manifest_lists_no_variable_for_a_stateless_model():
    from tflite_models import single_op_model

    model = single_op_model("RELU", [TensorSpec((4,))], [TensorSpec((4,))])
    result = build_stream(model)
    assert "state_bytes" not in result.manifest and "state" not in result.manifest
    assert "_reset" not in result.files["stream.h"]
    json.dumps(result.manifest)


def test_kiln_verify_carries_the_state_like_tflite_micro(tmp_path):
    """`kiln verify` runs the samples one after the other on both sides, the state carried."""
    from codegen.options import CompileOptions
    from codegen.targets import load_target
    from codegen.verify.run import verify_model

    path = tmp_path / "stream.tflite"
    path.write_bytes(streaming_model("int8", seed=9))
    report = verify_model(path, CompileOptions(load_target("host"), planner="greedy"), samples=6)
    assert report.ok, report
