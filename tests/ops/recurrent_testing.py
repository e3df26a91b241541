"""Shared checks of the recurrent ops (LSTM, GRU, RNN): the reference against onnxruntime for
each direction, with and without bias, initial state and sequence lengths (the cases compare
Y, Y_h and Y_c in turn), then the generated C of every case (one build) against the
reference."""

from __future__ import annotations

import numpy as np

from codegen.ir import run_graph
from float_binary_testing import ort_node
from op_testing import assert_c_equals_reference, graph_of_cases

SEQ, BATCH, INPUT, HIDDEN = 4, 3, 5, 6


def variants(op: str):
    """(direction, with bias, with initial state, seq_lens, extra attributes)."""
    out = [("forward", False, False, (), {}), ("reverse", True, True, (), {}),
           ("bidirectional", True, True, (4, 2, 3), {}), ("forward", True, False, (1, 4, 2), {})]
    if op == "GRU":
        out.append(("bidirectional", True, True, (), {"linear_before_reset": True}))
    if op == "LSTM":
        out.append(("forward", True, True, (3, 4, 1), {"peepholes": True}))
    return out


def check_recurrent(op: str, gates: int, states: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    cases, feeds, onnx_runs = [], {}, []
    for k, (direction, bias, init, lens, extra) in enumerate(variants(op)):
        dirs = 2 if direction == "bidirectional" else 1
        w = (rng.standard_normal((dirs, gates * HIDDEN, INPUT)) * 0.4).astype(np.float32)
        r = (rng.standard_normal((dirs, gates * HIDDEN, HIDDEN)) * 0.4).astype(np.float32)
        b = (rng.standard_normal((dirs, 2 * gates * HIDDEN)) * 0.4).astype(np.float32) if bias else None
        h0 = rng.standard_normal((dirs, BATCH, HIDDEN)).astype(np.float32) if init else None
        c0 = rng.standard_normal((dirs, BATCH, HIDDEN)).astype(np.float32) if init and states == 2 else None
        p = (rng.standard_normal((dirs, 3 * HIDDEN)) * 0.4).astype(np.float32) if extra.get("peepholes") else None
        x = rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
        attrs = {k2: v for k2, v in extra.items() if k2 != "peepholes"}

        def case(bld, pre, k=k, w=w, r=r, b=b, h0=h0, c0=c0, p=p, direction=direction, lens=lens, attrs=attrs):
            ins = [bld.input(f"{pre}x", "float32", (SEQ, BATCH, INPUT)), bld.const(f"{pre}w", w), bld.const(f"{pre}r", r),
                   bld.const(f"{pre}b", b) if b is not None else "",
                   bld.input(f"{pre}h0", "float32", h0.shape) if h0 is not None else ""]
            if states == 2:
                ins += [bld.input(f"{pre}c0", "float32", c0.shape) if c0 is not None else "",
                        bld.const(f"{pre}p", p) if p is not None else ""]
            while ins[-1] == "":
                ins.pop()
            outs = bld.node(op, ins, hidden_size=HIDDEN, direction=direction, seq_lens=lens, **attrs)
            return outs[k % len(outs)]  # Y, Y_h (and Y_c) in turn
        cases.append(case)
        feeds[f"c{k}_x"] = x
        if h0 is not None:
            feeds[f"c{k}_h0"] = h0
        if c0 is not None:
            feeds[f"c{k}_c0"] = c0
        inputs = {"x": x, "w": w, "r": r, "b": b,
                  "lens": np.array(lens, np.int32) if lens else None, "h0": h0}
        if states == 2:
            inputs.update(c0=c0, p=p)
        while inputs[list(inputs)[-1]] is None:
            inputs.pop(list(inputs)[-1])
        onnx_attrs = {"hidden_size": HIDDEN, "direction": direction,
                      **{k2: int(v) for k2, v in attrs.items()}}
        onnx_runs.append((inputs, onnx_attrs))
    g = graph_of_cases(op.lower(), cases)
    got = run_graph(g, feeds)
    for k, (inputs, attrs) in enumerate(onnx_runs):
        wants = ort_node(op, inputs, attrs, opset=14, n_out=1 + states)
        want = wants[k % len(wants)]
        np.testing.assert_allclose(got[g.outputs[k]], want, rtol=0, atol=1e-5 * float(np.abs(want).max()),
                                   err_msg=str(variants(op)[k]))
    assert_c_equals_reference(g, [feeds])
