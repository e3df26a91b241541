"""HybridLSTM: the hybrid (dynamic-range) UNIDIRECTIONAL_SEQUENCE_LSTM, float32 activations and
int8 gate matrices, which quantizes x and h at each step as LiteRT's hybrid kernel does: the
generated C against the op's reference (forward and reverse, initial state, sequence lengths,
peepholes, symmetric and asymmetric quantization), and both against LiteRT over consecutive
calls (the state carried over), where the float LSTM on the dequantized weights was 1e-3 to
3e-2 relative away."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tflite_recurrent_models import lstm_model
from tflite_streaming import build_stream, run_kiln_stream, run_litert_stream

from op_testing import assert_c_equals_reference, graph_of_cases

from codegen.frontends.tflite import load_bytes
from codegen.frontends.tflite.hybrid import dequantized_model
from codegen.ir.interpreter import run_graph
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.variants.bounded import verify_bounded

CASES = {
    "batch_major": {},
    "time_major": {"batch": 2, "time_major": True, "seed": 1},
    "asymmetric": {"asymmetric_inputs": True},
    # rows of 20 and 12: LiteRT's quantization loop rounds blocks of 8 otherwise than its tail
    "wide_peephole": {"batch": 3, "features": 20, "hidden": 12, "steps": 6, "seed": 5, "peephole": True},
    "wide_asymmetric_peephole": {"batch": 3, "features": 20, "hidden": 12, "steps": 6, "seed": 7,
                                 "asymmetric_inputs": True, "peephole": True},
}


def _inputs(kw: dict, calls: int, seed: int = 1) -> list[np.ndarray]:
    batch, steps, features = kw.get("batch", 1), kw.get("steps", 5), kw.get("features", 3)
    shape = (steps, batch, features) if kw.get("time_major") else (batch, steps, features)
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(calls)]


def _relative(have: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(have.reshape(want.shape) - want).max() / np.abs(want).max())


@pytest.mark.parametrize("kw", CASES.values(), ids=CASES.keys())
def test_hybrid_lstm_matches_litert_hybrid_kernel_over_consecutive_calls(kw):
    model = lstm_model(int8_weights=True, **kw)
    result = build_stream(model)
    assert "hybrid_lstm_f32" in result.manifest["kernels"]
    inputs = _inputs(kw, 4)
    got = run_kiln_stream(result, inputs)
    want = run_litert_stream(model, inputs)
    for have, expected in zip(got, want):
        assert _relative(have[0], expected[0]) <= 1e-6  # measured at most 3.3e-7
    # the step's quantization matters: LiteRT on the dequantized weights is far away
    dequantized = run_litert_stream(dequantized_model(model), inputs)
    assert max(_relative(have[0], d[0]) for have, d in zip(got, dequantized)) > 1e-4


@pytest.mark.parametrize("kw", [CASES["time_major"], CASES["wide_asymmetric_peephole"]],
                         ids=["symmetric", "asymmetric"])
def test_hybrid_lstm_reference_matches_litert(kw):
    """The op's numpy reference (the interpreter's) computes LiteRT's arithmetic too."""
    model = lstm_model(int8_weights=True, **kw)
    g = load_bytes(model)
    assert "HybridLSTM" in {n.op for n in g.nodes}
    x = _inputs(kw, 1, seed=3)[0]
    feeds = {name: x if k == 0 else np.zeros(g.values[name].shape, np.float32) for k, name in enumerate(g.inputs)}
    y = run_graph(g, feeds)[g.outputs[0]]
    assert _relative(y, run_litert_stream(model, [x])[0][0]) <= 1e-6


def test_hybrid_lstm_on_cortex_m4_matches_litert():
    """newlib's expf / tanhf and soft double (the asymmetric parameters) on a Cortex-M4F."""
    kw = CASES["wide_asymmetric_peephole"]
    model = lstm_model(int8_weights=True, **kw)
    inputs = _inputs(kw, 2)
    got = run_kiln_stream(build_stream(model, "cortex-m4"), inputs, "cortex-m4")
    for have, expected in zip(got, run_litert_stream(model, inputs)):
        assert _relative(have[0], expected[0]) <= 1e-6


def test_hybrid_lstm_with_an_open_time_axis_verified_at_several_lengths(tmp_path):
    """--max-shape: the HybridLSTM runs the steps the extent sets (its `lens`), checked
    against LiteRT on the model written at each length."""
    def written(steps: int, open_steps: bool = False) -> Path:
        path = tmp_path / f"hybrid_{steps}{'_open' if open_steps else ''}.tflite"
        path.write_bytes(lstm_model(steps=steps, int8_weights=True, open_steps=open_steps, features=4, hidden=8,
                                    asymmetric_inputs=True))
        return path
    build, results = verify_bounded(written(16, True), CompileOptions(load_target("host")), {"x": (1, 16, 4)},
                                    samples=3, reference=written)
    assert [e for e, _ in results] == [1, 8, 16] and all(r.ok for _, r in results)
    assert max(o.max_abs_error for _, r in results for o in r.outputs) <= 1e-6
    assert "hybrid_lstm_f32" in build.manifest["kernels"]


def test_lstm_with_float_matrices_stays_the_float_lstm():
    assert "lstm_f32" in build_stream(lstm_model(seed=2)).manifest["kernels"]


def test_hybrid_lstm_c_equals_reference():
    seq, batch, inp, hidden = 5, 3, 11, 9
    rng = np.random.default_rng(21)
    variants = [("forward", False, False, (), False), ("reverse", True, True, (), True),
                ("forward", True, True, (2, 5, 4), True), ("forward", True, False, (5, 1, 3), False)]
    cases, feeds = [], {}
    for k, (direction, init, peephole, lens, asymmetric) in enumerate(variants):
        w = rng.integers(-127, 128, (1, 4 * hidden, inp), dtype=np.int8)
        r = rng.integers(-127, 128, (1, 4 * hidden, hidden), dtype=np.int8)
        b = (rng.standard_normal((1, 8 * hidden)) * 0.4).astype(np.float32)
        p = (rng.standard_normal((1, 3 * hidden)) * 0.4).astype(np.float32) if peephole else None
        scales = tuple(float(v) for v in rng.uniform(0.002, 0.01, 8))
        feeds[f"c{k}_x"] = (rng.standard_normal((seq, batch, inp)) + 0.3).astype(np.float32)
        if init:
            feeds[f"c{k}_h0"] = rng.standard_normal((1, batch, hidden)).astype(np.float32)
            feeds[f"c{k}_c0"] = rng.standard_normal((1, batch, hidden)).astype(np.float32)

        def case(bld, pre, k=k, w=w, r=r, b=b, p=p, init=init, direction=direction, lens=lens, scales=scales,
                 asymmetric=asymmetric):
            state = (1, batch, hidden)
            ins = [bld.input(f"{pre}x", "float32", (seq, batch, inp)), bld.const(f"{pre}w", w),
                   bld.const(f"{pre}r", r), bld.const(f"{pre}b", b),
                   bld.input(f"{pre}h0", "float32", state) if init else "",
                   bld.input(f"{pre}c0", "float32", state) if init else "",
                   bld.const(f"{pre}p", p) if p is not None else ""]
            while ins[-1] == "":
                ins.pop()
            outs = bld.node("HybridLSTM", ins, hidden_size=hidden, direction=direction, seq_lens=lens,
                            w_scales=scales[:4], r_scales=scales[4:], asymmetric=asymmetric)
            return outs[k % len(outs)]  # Y, Y_h and Y_c in turn
        cases.append(case)
    assert_c_equals_reference(graph_of_cases("hybrid_lstm", cases), [feeds], rtol=1e-6)
