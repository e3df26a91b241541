"""Hybrid ("dynamic-range quantized") TFLite models: int8 weights feeding float operators.

Kiln computes these operators in float with the weights dequantized at import, but for the
convolution and the fully connected layer of one weight scale (HybridConv2D) and the LSTM's
gate matrices (HybridLSTM), which quantize their inputs on the fly and multiply in int8 as
LiteRT does. LiteRT's on-the-fly quantization moves results by ~1e-3 relative from the float
computation. `dequantized_model` writes the float
model that the dequantized operators compute, so that a reference runtime can be compared with
them at float tolerance.
"""

from __future__ import annotations

import flatbuffers
import numpy as np

from codegen.frontends.tflite.reader import ModelInfo, OperatorInfo, TensorInfo, read_model

# Operators whose input 1 may hold hybrid weights.
HYBRID_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL"})
# UNIDIRECTIONAL_SEQUENCE_LSTM's inputs that may: the input and recurrent weights (1-8), the
# peepholes (9-11) and the projection (16).
HYBRID_LSTM_INPUTS = frozenset(range(1, 12)) | {16}


def _weight_inputs(op: OperatorInfo) -> frozenset[int]:
    if op.code == "UNIDIRECTIONAL_SEQUENCE_LSTM":
        return HYBRID_LSTM_INPUTS
    return frozenset({1}) if op.code in HYBRID_OPS else frozenset()


def is_hybrid_weight(model: ModelInfo, op: OperatorInfo, k: int) -> bool:
    """Input k of `op` is a quantized constant that a float operator reads."""
    if k not in _weight_inputs(op) or len(op.inputs) <= k or op.inputs[0] == -1 or op.inputs[k] == -1:
        return False
    x, w = model.tensors[op.inputs[0]], model.tensors[op.inputs[k]]
    return x.type_name == "FLOAT32" and w.data is not None and w.type_name != "FLOAT32" and w.quant is not None


def dequantize(t: TensorInfo) -> np.ndarray:
    """scale * (q - zero_point) per tensor or per channel, rounded once to float32 (as TFLite's
    reference DEQUANTIZE does with its double scale)."""
    shape = [1] * t.data.ndim
    if t.quant.per_channel:
        shape[t.quant.axis] = -1
    scale = np.asarray(t.quant.scale, np.float64).reshape(shape)
    zp = np.asarray(t.quant.zero_point, np.float64).reshape(shape)
    return ((t.data.astype(np.float64) - zp) * scale).astype(np.float32)


def dequantized_model(data: bytes) -> bytes:
    """`data` with every hybrid weight replaced by its float32 values (unchanged if none).

    Uses TFLite Micro's object-API schema (a test/verification dependency) to rewrite the file.
    """
    info = read_model(data)
    weights = sorted({i for op in info.operators for k, i in enumerate(op.inputs) if is_hybrid_weight(info, op, k)})
    if not weights:
        return data
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    tensors = model.subgraphs[0].tensors
    for i in weights:
        buf = schema.BufferT()
        buf.data = np.frombuffer(dequantize(info.tensors[i]).astype("<f4").tobytes(), np.uint8)
        model.buffers.append(buf)
        tensors[i].buffer = len(model.buffers) - 1
        tensors[i].type = schema.TensorType.FLOAT32
        tensors[i].quantization = None
    builder = flatbuffers.Builder(2 * len(data) + 1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())
