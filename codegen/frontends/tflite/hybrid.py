"""Hybrid ("dynamic-range quantized") TFLite models: int8 weights feeding float operators.

Kiln computes these operators in float with the weights dequantized at import. LiteRT does
something else: it quantizes the activations on the fly and multiplies in int8, which moves
results by ~1e-3 relative. `dequantized_model` writes the float model Kiln actually compiles,
so that a reference runtime can be compared with Kiln at float tolerance.
"""

from __future__ import annotations

import flatbuffers
import numpy as np

from codegen.frontends.tflite.reader import ModelInfo, OperatorInfo, TensorInfo, read_model

# Operators whose input 1 may hold hybrid weights.
HYBRID_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL"})


def is_hybrid_weight(model: ModelInfo, op: OperatorInfo, k: int) -> bool:
    """Input k of `op` is a quantized constant that a float operator reads."""
    if op.code not in HYBRID_OPS or k != 1 or len(op.inputs) < 2 or -1 in op.inputs[:2]:
        return False
    x, w = model.tensors[op.inputs[0]], model.tensors[op.inputs[1]]
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
    weights = sorted({op.inputs[1] for op in info.operators if is_hybrid_weight(info, op, 1)})
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
