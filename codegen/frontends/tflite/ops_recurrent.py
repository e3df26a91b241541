"""Recurrent builtins: UNIDIRECTIONAL_SEQUENCE_LSTM onto Kiln's LSTM op (float32) or IntegerLSTM
(int8 with int16 cell state, and int16 activations with int64 biases, as TFLite Micro), SVDF onto Kiln's SVDF op (float32, int8 with
int16 state).

TFLite keeps the LSTM's output and cell state in variable tensors (inputs 18 and 19) that the
kernel updates in place, so TFLite Micro carries them from one Invoke() to the next: the
converter reads them as variables and assigns the last step's state back (ops_state.py), and
the generated code keeps them in its persistent state region. SVDF's state (input 4) is kept
the same way.

TFLite's weights are one matrix per gate (input, forget, cell, output); Kiln's LSTM takes
ONNX's layout, the gates stacked in the order input, output, forget, cell, the sequence first;
IntegerLSTM keeps TFLite's order. A hybrid (dynamic-range) LSTM, int8 gate matrices for float
activations, becomes a HybridLSTM (codegen/ops/hybrid_lstm.py), which quantizes x and h at each
step as LiteRT's hybrid kernel does.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.tflite import compose, hybrid
from codegen.frontends.tflite.converter import check_rank, converts
from codegen.frontends.tflite.importer import OpContext
from codegen.frontends.tflite.ops_state import assign_tensor_variable, read_tensor_variable
from codegen.ir.types import Quant

TANH = 4  # tflite.ActivationFunctionType
# TFLite input positions per gate, in Kiln's (ONNX) gate order i, o, f, c.
_INPUT_WEIGHTS, _RECURRENT_WEIGHTS, _BIASES = (1, 4, 2, 3), (5, 8, 6, 7), (12, 15, 13, 14)
_PEEPHOLES = (9, 11, 10)  # cell_to_input, cell_to_output, cell_to_forget (Kiln's pi, po, pf)
_PROJECTION_AND_NORM = (16, 17, 20, 21, 22, 23)


@converts("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs=(1, 24))  # 20..24, most optional: _check_supported
def unidirectional_sequence_lstm(ctx: OpContext) -> None:
    o = ctx.options("UnidirectionalSequenceLSTMOptions")
    x_shape = check_rank(ctx, 0, 3, "the input")
    _check_supported(ctx, o)
    time_major = bool(o["TimeMajor"])
    seq, batch = (x_shape[0], x_shape[1]) if time_major else (x_shape[1], x_shape[0])
    x = ctx.input(0) if time_major else compose.step(ctx, "Transpose", [ctx.input(0)], "time_major",
                                                     quant=ctx.tensor(0).quant, perm=(1, 0, 2))
    if ctx.tensor(0).type_name in ("INT8", "INT16"):
        y, h, c = _integer_lstm(ctx, x, batch, float(o["CellClip"]))
    else:
        y, h, c = _float_lstm(ctx, x, batch)
    hidden = ctx.shape(_INPUT_WEIGHTS[0])[0]
    assign_tensor_variable(ctx, 18, compose.step(ctx, "Reshape", [h], "h", shape=ctx.tensor(18).shape,
                                                 quant=ctx.tensor(18).quant))
    assign_tensor_variable(ctx, 19, compose.step(ctx, "Reshape", [c], "c", shape=ctx.tensor(19).shape,
                                                 quant=ctx.tensor(19).quant))
    steps = (seq, batch, hidden)
    if time_major:
        ctx.emit("Reshape", [y], shape=steps)
        return
    y = compose.step(ctx, "Reshape", [y], "steps", shape=steps, quant=ctx.out_tensor().quant)
    ctx.emit("Transpose", [y], perm=(1, 0, 2))


def _float_lstm(ctx: OpContext, x: str, batch: int) -> tuple[str, str, str]:
    """Kiln's LSTM (ONNX layout: gates i, o, f, c stacked, Wb + Rb biases, peepholes)."""
    hidden = ctx.shape(_INPUT_WEIGHTS[0])[0]
    w = np.concatenate([_float_const(ctx, k, "input weights") for k in _INPUT_WEIGHTS])[None]
    r = np.concatenate([_float_const(ctx, k, "recurrent weights") for k in _RECURRENT_WEIGHTS])[None]
    bias = np.concatenate([_float_const(ctx, k, "gate bias") for k in _BIASES] + [np.zeros(4 * hidden, np.float32)])
    peep = np.concatenate([_float_const(ctx, k, "peephole") if ctx.tensor(k) is not None
                           else np.zeros(hidden, np.float32) for k in _PEEPHOLES])[None]
    state_shape = (1, batch, hidden)
    h0 = compose.step(ctx, "Reshape", [read_tensor_variable(ctx, 18)], "h0", shape=state_shape)
    c0 = compose.step(ctx, "Reshape", [read_tensor_variable(ctx, 19)], "c0", shape=state_shape)
    op, attrs = "LSTM", {}
    if _hybrid_matrices(ctx):  # LiteRT's hybrid kernel: int8 matrices, x and h quantized at each step
        w = np.stack([ctx.tensor(k).data for k in _INPUT_WEIGHTS]).reshape(1, 4 * hidden, -1)
        r = np.stack([ctx.tensor(k).data for k in _RECURRENT_WEIGHTS]).reshape(1, 4 * hidden, hidden)
        op = "HybridLSTM"
        attrs = {"w_scales": tuple(ctx.tensor(k).quant.s for k in _INPUT_WEIGHTS),
                 "r_scales": tuple(ctx.tensor(k).quant.s for k in _RECURRENT_WEIGHTS),
                 "asymmetric": bool(ctx.options("UnidirectionalSequenceLSTMOptions").get("AsymmetricQuantizeInputs"))}
    y, h, c = compose.step(ctx, op, [x, compose.constant(ctx, "w", w), compose.constant(ctx, "r", r),
                                     compose.constant(ctx, "b", bias[None]), h0, c0,
                                     compose.constant(ctx, "peephole", peep)],
                           "cell", hidden_size=hidden, **attrs)
    return y, h, c


def _hybrid_matrices(ctx: OpContext) -> bool:
    """All eight gate matrices are int8 with one scale and zero point 0: LiteRT runs its hybrid
    kernel on them (codegen/ops/hybrid_lstm.py)."""
    tensors = [ctx.tensor(k) for k in _INPUT_WEIGHTS + _RECURRENT_WEIGHTS]
    return all(hybrid.is_hybrid_weight(ctx.imp.model, ctx.op, k) for k in _INPUT_WEIGHTS + _RECURRENT_WEIGHTS) \
        and all(t.type_name == "INT8" and not t.quant.per_channel and t.quant.zp == 0 for t in tensors)


def _integer_lstm(ctx: OpContext, x: str, batch: int, cell_clip: float) -> tuple[str, str, str]:
    """TFLite Micro's integer LSTM (IntegerLSTM: gates i, f, c, o; one scale per gate)."""
    act = ctx.tensor(0).type_name.lower()
    if any(ctx.tensor(k) is not None for k in _PEEPHOLES):
        raise ctx.error(f"peepholes are not supported on {act} (TFLite Micro refuses them too)")
    hidden = ctx.shape(1)[0]
    gates = (1, 2, 3, 4)  # TFLite's input, forget, cell, output
    w = _gate_stack(ctx, gates, "input weights", "int8")
    r = _gate_stack(ctx, tuple(k + 4 for k in gates), "recurrent weights", "int8")
    biases = [ctx.tensor(k) for k in (12, 13, 14, 15)]
    bias_type = "int64" if act == "int16" else "int32"
    if any(t.dtype != bias_type for t in biases):
        raise ctx.error(f"an {act} LSTM needs {bias_type} gate biases, the model has "
                        f"{next(t.dtype for t in biases if t.dtype != bias_type)}")
    bias = compose.constant(ctx, "bias", np.stack([ctx.const(k, "gate bias") for k in (12, 13, 14, 15)]))
    h0 = compose.step(ctx, "Reshape", [read_tensor_variable(ctx, 18)], "h0", shape=(batch, hidden),
                      quant=ctx.tensor(18).quant)
    c0 = compose.step(ctx, "Reshape", [read_tensor_variable(ctx, 19)], "c0", shape=(batch, hidden),
                      quant=ctx.tensor(19).quant)
    return compose.step(ctx, "IntegerLSTM", [x, w, r, bias, h0, c0], "cell", cell_clip=cell_clip,
                        quant=[ctx.out_tensor().quant, ctx.tensor(18).quant, ctx.tensor(19).quant])


def _gate_stack(ctx: OpContext, inputs: tuple[int, ...], what: str, dtype: str) -> str:
    """The four gates' matrices as one [4, rows, cols] constant, one scale per gate."""
    tensors = [ctx.tensor(k) for k in inputs]
    if any(t.dtype != dtype or t.data is None or t.quant is None or t.quant.per_channel for t in tensors):
        raise ctx.error(f"{what} must be {dtype} constants with one scale each")
    scales = [t.quant.s for t in tensors]
    return compose.constant(ctx, what.replace(" ", "_"), np.stack([t.data for t in tensors]),
                            quant=Quant.of(scales, 0, 0))


def _check_supported(ctx: OpContext, o: dict) -> None:
    if len(ctx.op.inputs) < 20:
        raise ctx.error(f"takes 20..24 inputs, the model gives {len(ctx.op.inputs)}")
    missing = [k for k in (0, 2, 3, 4, 6, 7, 8, 13, 14, 15, 18, 19) if ctx.tensor(k) is None]
    if missing:
        raise ctx.error(f"required input {missing[0]} is absent")
    dtype = ctx.tensor(0).type_name
    if dtype not in ("FLOAT32", "INT8", "INT16"):
        raise ctx.error(f"{dtype.lower()} is not supported (Kiln converts float32, int8 and int16)")
    if dtype != "FLOAT32" and ctx.tensor(19).type_name != "INT16":
        raise ctx.error(f"an {dtype.lower()} LSTM needs an int16 cell state, the model has "
                        f"{ctx.tensor(19).type_name.lower()}")
    if o["FusedActivationFunction"] != TANH:
        raise ctx.error(f"fused activation {o['FusedActivationFunction']} is not supported (TANH only)")
    if o["ProjClip"] or (o["CellClip"] and dtype == "FLOAT32"):
        raise ctx.error("cell_clip / proj_clip are not supported")
    if ctx.tensor(_INPUT_WEIGHTS[0]) is None or ctx.tensor(_RECURRENT_WEIGHTS[0]) is None:
        raise ctx.error("CIFG (no input gate) is not supported")
    present = [k for k in _PROJECTION_AND_NORM if ctx.tensor(k) is not None]
    if present:
        raise ctx.error(f"projection and layer normalisation (inputs {present}) are not supported")


def _float_const(ctx: OpContext, k: int, what: str) -> np.ndarray:
    """A float constant; a hybrid model's int8 weights dequantized: the gate matrices where they
    do not make a HybridLSTM; a hybrid peephole as LiteRT recovers it, float32(q) x scale in
    float32 (its zero point 0)."""
    if hybrid.is_hybrid_weight(ctx.imp.model, ctx.op, k):
        t = ctx.tensor(k)
        if k in _PEEPHOLES and not t.quant.per_channel and t.quant.zp == 0:
            return t.data.astype(np.float32) * np.float32(t.quant.s)
        return hybrid.dequantize(t)
    data = ctx.const(k, what)
    if data.dtype != np.float32:
        raise ctx.error(f"{what} (input {k}) are {data.dtype}, not float32 nor quantized int8 weights")
    return data


@converts("SVDF", inputs=(1, 5))  # input 3 (bias) is optional
def svdf(ctx: OpContext) -> None:
    o = ctx.options("SVDFOptions")
    missing = [k for k in (0, 1, 2, 4) if ctx.tensor(k) is None]
    if len(ctx.op.inputs) != 5 or missing:
        raise ctx.error("takes 5 inputs (input, weights_feature, weights_time, bias or -1, state)")
    state = read_tensor_variable(ctx, 4)
    # TFLite Micro's integer kernel applies no activation: neither does Kiln's
    activation = ctx.activation(o) if ctx.tensor(0).type_name == "FLOAT32" else "none"
    out = ctx.op.outputs[0]
    y, nxt = ctx.imp.b.node("SVDF", [ctx.input(k) for k in range(4)] + [state], name=ctx.name,
                            outputs=[ctx.imp.names[out], f"{ctx.name}_state"],
                            quant=[ctx.out_tensor().quant, ctx.tensor(4).quant], origin=(ctx.name,),
                            rank=int(o["Rank"]), activation=activation)
    ctx.imp.defined[out] = y
    assign_tensor_variable(ctx, 4, nxt)
