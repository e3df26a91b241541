"""Recurrent and control-flow TFLite models written as the converter writes them (no TensorFlow):
UNIDIRECTIONAL_SEQUENCE_LSTM with its state in variable tensors, SVDF, IF and WHILE."""

from __future__ import annotations

import numpy as np
from tflite_models import ModelWriter, TensorSpec, const


def lstm_model(batch: int = 1, steps: int = 5, features: int = 3, hidden: int = 4, *, time_major: bool = False,
               peephole: bool = False, seed: int = 0, dtype: str = "float32", open_steps: bool = False,
               hidden_scale: float | None = None, cell_clip: float = 0.0, bias_type: str | None = None,
               int8_weights: bool = False, asymmetric_inputs: bool = False) -> bytes:
    """One UNIDIRECTIONAL_SEQUENCE_LSTM (24 inputs, absent ones -1) over [batch, steps, features]
    (or [steps, batch, features] `time_major`), random weights; the output and cell state are
    variable tensors (inputs 18, 19), carried from one call to the next. int8 as the converter
    quantizes it: one scale per weight matrix, int32 biases at input x weight scale, int16 cell
    state at a power-of-two scale; int16 activations (the 16x8 LSTM) likewise with int64 biases.
    `hidden_scale`: the hidden state's (and output's) scale, else the input's; `cell_clip`: the
    option, in real units; `bias_type`: another type for the quantized gate biases; `int8_weights`:
    a float32 model's weight matrices int8 with one scale each (a hybrid, dynamic-range LSTM), which
    LiteRT runs quantizing x and h with a zero point with `asymmetric_inputs`. `open_steps`: the
    steps axis of the input and output left open (-1 in their shape signature), as the converter
    writes a model with a `None` time axis; the weights do not depend on `steps`."""
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    act = {"int8": dict(scale=0.02, zero_point=-1), "int16": dict(scale=0.001, zero_point=0)}.get(dtype, {})
    hid = {**act, "scale": hidden_scale} if hidden_scale else act

    def matrix(shape, in_scale):
        values = rng.standard_normal(shape) * 0.5
        if dtype == "float32" and not int8_weights:
            return w.tensor(const(values.astype(np.float32)))
        scale = float(np.abs(values).max()) / 127
        return w.tensor(const(np.clip(np.round(values / scale), -127, 127), "int8", scale=scale))

    def bias(scale):
        values = rng.standard_normal(hidden)
        if dtype == "float32":
            return w.tensor(const(values.astype(np.float32)))
        stored = bias_type or ("int64" if dtype == "int16" else "int32")
        return w.tensor(const(np.round(values / scale), stored, scale=scale))

    x_shape = (steps, batch, features) if time_major else (batch, steps, features)
    t_axis = 0 if time_major else 1
    open_sig = (lambda shape: tuple(-1 if k == t_axis else d for k, d in enumerate(shape))) if open_steps \
        else (lambda shape: None)
    x = w.tensor(TensorSpec(x_shape, dtype, name="x", shape_signature=open_sig(x_shape), **act))
    ins: list[int | None] = [x]
    in_w = [matrix((hidden, features), act.get("scale")) for _ in range(4)]  # input to input, forget, cell, output
    ins += in_w
    ins += [matrix((hidden, hidden), hid.get("scale")) for _ in range(4)]  # recurrent to input, forget, cell, output
    ins += [(matrix((hidden,), None) if int8_weights else w.tensor(const((rng.standard_normal(hidden) * 0.5)
                                                                         .astype(np.float32)))) if peephole else None
            for _ in range(3)]  # cell to input, forget, output (int8 too in a hybrid LSTM, as LiteRT requires)
    ins += [bias(act.get("scale", 1) * (w.tensors[k].scale or 1)) for k in in_w]  # gate biases
    ins += [None, None]  # projection
    cell = {} if dtype == "float32" else dict(scale=2 ** -11, zero_point=0)
    ins += [w.tensor(TensorSpec((batch, hidden), dtype, name="output_state", is_variable=True, **hid)),
            w.tensor(TensorSpec((batch, hidden), "float32" if dtype == "float32" else "int16", name="cell_state",
                                is_variable=True, **cell))]
    ins += [None] * 4  # layer normalisation
    y = w.tensor(TensorSpec(x_shape[:2] + (hidden,), dtype, name="out0",
                            shape_signature=open_sig(x_shape[:2] + (hidden,)), **hid))
    w.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], {"fused_activation_function": "TANH", "time_major": time_major,
                                                    "cell_clip": cell_clip,
                                                    "asymmetric_quantize_inputs": asymmetric_inputs})
    return w.build([x], [y])


def svdf_model(dtype: str = "float32", batch: int = 1, features: int = 6, units: int = 3, rank: int = 2,
               memory: int = 4, *, bias: bool = True, activation: str = "NONE", seed: int = 0) -> bytes:
    """One SVDF over [batch, features] with random weights; its state [batch, units * rank *
    memory] is a variable tensor (input 4). int8 as the converter quantizes it: int8 input and
    feature weights, int16 time weights and state, int32 bias at state scale x time scale."""
    rng = np.random.default_rng(seed)
    filters = units * rank
    w = ModelWriter()
    if dtype == "float32":
        x = TensorSpec((batch, features), name="x")
        wf = const((rng.standard_normal((filters, features)) * 0.5).astype(np.float32))
        wt = const((rng.standard_normal((filters, memory)) * 0.5).astype(np.float32))
        b = const(rng.standard_normal(units).astype(np.float32))
        state = TensorSpec((batch, filters * memory), name="state", is_variable=True)
        out = TensorSpec((batch, units), name="out0")
    else:
        state_scale, time_scale = 0.004, 2e-4
        x = TensorSpec((batch, features), "int8", scale=0.03, zero_point=2, name="x")
        wf = const(rng.integers(-127, 128, (filters, features)), "int8", scale=0.01)
        wt = const(rng.integers(-3000, 3001, (filters, memory)), "int16", scale=time_scale)
        b = const(rng.integers(-2000, 2001, units), "int32", scale=state_scale * time_scale)
        state = TensorSpec((batch, filters * memory), "int16", scale=state_scale, zero_point=0, name="state",
                           is_variable=True)
        out = TensorSpec((batch, units), "int8", scale=0.05, zero_point=-3, name="out0")
    ins = [w.tensor(x), w.tensor(wf), w.tensor(wt), w.tensor(b) if bias else None, w.tensor(state)]
    y = w.tensor(out)
    w.op("SVDF", ins, [y], {"rank": rank, "fused_activation_function": activation})
    return w.build([ins[0]], [y])


def if_model(dtype: str = "float32") -> bytes:
    """y = IF(cond, x): x + x in the then branch, x * x in the else branch."""
    q = {} if dtype == "float32" else dict(scale=0.05, zero_point=-3)

    def branch(op: str) -> tuple[ModelWriter, list[int], list[int]]:
        b = ModelWriter()
        x = b.tensor(TensorSpec((2, 3), dtype, name="x", **q))
        y = b.tensor(TensorSpec((2, 3), dtype, name="y", **q))
        b.op(op, [x, x], [y])
        return b, [x], [y]

    w = ModelWriter()
    cond = w.tensor(TensorSpec((1,), "bool", name="cond"))
    x = w.tensor(TensorSpec((2, 3), dtype, name="x", **q))
    y = w.tensor(TensorSpec((2, 3), dtype, name="out0", **q))
    w.op("IF", [cond, x], [y], {"then_subgraph_index": 1, "else_subgraph_index": 2})
    return w.build([cond, x], [y], subgraphs=[branch("ADD"), branch("MUL")])


def while_model(trips: int = 3, counter_input: bool = False) -> bytes:
    """(i, y) = WHILE(i < trips) { i + 1, y * 1.5 + y } from (0, x): a trip count known at compile
    time (unless `counter_input`: the counter starts at a graph input)."""
    def graph(body: bool) -> tuple[ModelWriter, list[int], list[int]]:
        b = ModelWriter()
        i = b.tensor(TensorSpec((), "int32", name="i"))
        y = b.tensor(TensorSpec((3,), name="y"))
        if not body:
            c = b.tensor(TensorSpec((), "bool", name="c"))
            b.op("LESS", [i, b.tensor(const(np.array(trips, np.int32)))], [c])
            return b, [i, y], [c]
        i2, s, y2 = b.tensor(TensorSpec((), "int32", name="i2")), b.tensor(TensorSpec((3,), name="s")), \
            b.tensor(TensorSpec((3,), name="y2"))
        b.op("ADD", [i, b.tensor(const(np.array(1, np.int32)))], [i2])
        b.op("MUL", [y, b.tensor(const(np.full(3, 1.5, np.float32)))], [s])
        b.op("ADD", [s, y], [y2])
        return b, [i, y], [i2, y2]

    w = ModelWriter()
    x = w.tensor(TensorSpec((3,), name="x"))
    i0 = w.tensor(TensorSpec((), "int32", name="i0") if counter_input else const(np.array(0, np.int32)))
    i_out, y_out = w.tensor(TensorSpec((), "int32", name="trips")), w.tensor(TensorSpec((3,), name="out0"))
    w.op("WHILE", [i0, x], [i_out, y_out], {"cond_subgraph_index": 1, "body_subgraph_index": 2})
    return w.build([x, i0] if counter_input else [x], [i_out, y_out], subgraphs=[graph(False), graph(True)])
