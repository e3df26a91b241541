"""Build one-operator .tflite models and run them in the TFLite Micro interpreter.

Lets the tests compare the numpy emulation with TFLM for arbitrary quantization parameters,
without a converter: the flatbuffer is written with tflite-micro's own model editor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

OPS = schema.BuiltinOperator
_DTYPES = {"int8": schema.TensorType.INT8, "int16": schema.TensorType.INT16,
           "float32": schema.TensorType.FLOAT32}
_ACT = {"none": schema.ActivationFunctionType.NONE, "relu": schema.ActivationFunctionType.RELU,
        "relu6": schema.ActivationFunctionType.RELU6,
        "relu_n1_to_1": schema.ActivationFunctionType.RELU_N1_TO_1}


@dataclass(frozen=True)
class T:
    """A tensor of the one-op model: shape, dtype name, and (scale, zero point) or None."""

    shape: tuple
    dtype: str = "int8"
    scale: float | None = None
    zero_point: int = 0


def _options(opcode, activation: str, beta: float, pool: tuple | None):
    """The builtin options table an op needs, or (None, None).

    `pool` is (filter_h, filter_w, stride_h, stride_w, padding 'SAME' or 'VALID')."""
    if opcode in (OPS.AVERAGE_POOL_2D, OPS.MAX_POOL_2D):
        fh, fw, sh, sw, pad = pool
        o = schema.Pool2DOptionsT()
        o.filterHeight, o.filterWidth, o.strideH, o.strideW = fh, fw, sh, sw
        o.padding = getattr(schema.Padding, pad)
        o.fusedActivationFunction = _ACT[activation]
        return schema.BuiltinOptions.Pool2DOptions, o
    if opcode == OPS.ADD:
        o = schema.AddOptionsT(); o.fusedActivationFunction = _ACT[activation]
        return schema.BuiltinOptions.AddOptions, o
    if opcode == OPS.SUB:
        o = schema.SubOptionsT(); o.fusedActivationFunction = _ACT[activation]
        return schema.BuiltinOptions.SubOptions, o
    if opcode == OPS.MUL:
        o = schema.MulOptionsT(); o.fusedActivationFunction = _ACT[activation]
        return schema.BuiltinOptions.MulOptions, o
    if opcode == OPS.SOFTMAX:
        o = schema.SoftmaxOptionsT(); o.beta = beta
        return schema.BuiltinOptions.SoftmaxOptions, o
    return None, None


def build(opcode, inputs: list[T], output: T, activation: str = "none", beta: float = 1.0,
          pool: tuple | None = None) -> bytes:
    """Serialise a model with a single operator `opcode` from `inputs` to `output`."""
    model = me.Model()
    sg = model.add_subgraph()

    def tensor(spec: T, name: str):
        q = None if spec.scale is None else me.Quantization(float(spec.scale), int(spec.zero_point))
        return sg.add_tensor(shape=spec.shape, dtype=_DTYPES[spec.dtype], quantization=q, name=name)

    ins = [tensor(s, f"in{i}") for i, s in enumerate(inputs)]
    out = tensor(output, "out")
    op = sg.add_operator(opcode=opcode, inputs=ins, outputs=[out])
    opt_type, opts = _options(opcode, activation, beta, pool)
    if opts is not None:
        op._fb.builtinOptionsType = opt_type
        op._fb.builtinOptions = opts
    sg.inputs = ins
    sg.outputs = [out]
    return bytes(model.build())


def run(model: bytes, *arrays: np.ndarray) -> np.ndarray:
    """Invoke the model once in TFLM on `arrays` and return its output."""
    arena = 64 * 1024 + 8 * sum(a.nbytes for a in arrays)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena)
    for i, a in enumerate(arrays):
        interp.set_input(a, i)
    interp.invoke()
    return interp.get_output(0)
