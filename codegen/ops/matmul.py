"""MatMul: matrix product with numpy's broadcasting of the batch dimensions (ONNX MatMul).

a[..,M,K] @ b[..,K,N] -> [..,M,N]; a 1-D operand is a single row (a) or column (b) whose
axis is dropped from the result, as numpy.matmul does. float32, and int8 with per-tensor
quantization as TFLM's BatchMatMul computes it (TFLite BATCH_MATMUL of two activations, as in
attention): int32 sums of zero-point-corrected products, one rescale, the output zero point;
int16 as its 16x8-style int16 path (zero points 0, int64 sums, the int64 output stage).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.common import broadcast_plan, broadcast_shape, quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest
from codegen.quant.fixedpoint import clamp, multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_s64
from codegen.quant.params import fully_connected_output_multiplier


def _matrices(node: Node, a_shape, b_shape):
    """(batch shape of a, of b, of the output, M, K, N, output shape) of a matmul."""
    if not a_shape or not b_shape:
        raise KilnError(f"MatMul of a scalar ({list(a_shape)} @ {list(b_shape)})", node=node.name)
    a2 = (1,) + tuple(a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if len(b_shape) == 1 else tuple(b_shape)
    if a2[-1] != b2[-2]:
        raise KilnError(f"MatMul of {list(a_shape)} and {list(b_shape)}: inner dimensions "
                        f"{a2[-1]} and {b2[-2]} differ", node=node.name)
    batch = broadcast_shape(node, a2[:-2], b2[:-2])
    m, k, n = a2[-2], a2[-1], b2[-1]
    out = batch + ((m,) if len(a_shape) > 1 else ()) + ((n,) if len(b_shape) > 1 else ())
    return a2[:-2], b2[:-2], batch, m, k, n, out


@register
class MatMul(Op):
    name = "MatMul"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes: dict = {}
    arity = (2, 2)
    kernels = ("matmul_f32", "matmul_s8", "matmul_s16")

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype:
            raise KilnError(f"MatMul of {a.dtype} and {b.dtype}", node=node.name)
        return [(a.dtype, _matrices(node, a.shape, b.shape)[-1])]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        dtype = require_dtypes(node, g, ("float32", "int8", "int16"))
        if dtype == "int8":
            cls.int8_params(node, g)
        elif dtype == "int16":
            cls.int16_params(node, g)

    @classmethod
    def int8_params(cls, node: Node, g: Graph) -> dict:
        """TFLM BatchMatMulPrepare's constants: offsets and the output multiplier."""
        (a, b), out = node.inputs, node.outputs[0]
        qs = [quant_of(g, name, node) for name in (a, b, out)]
        for name, q in zip((a, b, out), qs):
            if q.per_channel or not -128 <= q.zp <= 127:
                raise KilnError(f"int8 MatMul needs '{name}' quantized per tensor with an int8 zero point",
                                node=node.name)
        multiplier, shift = fully_connected_output_multiplier(qs[0].s, qs[1].s, qs[2].s)
        return {"a_offset": -qs[0].zp, "b_offset": -qs[1].zp, "out_offset": qs[2].zp,
                "multiplier": multiplier, "shift": shift}

    @classmethod
    def int16_params(cls, node: Node, g: Graph) -> dict:
        """TFLM BatchMatMulPrepare's int16 constants: every zero point 0 (TFLM insists), one
        output multiplier; refused where an int64 sum could pass the 2**47 its output stage
        assumes (more than 2**17 products of two int16 values)."""
        (a, b), out = node.inputs, node.outputs[0]
        qs = [quant_of(g, name, node) for name in (a, b, out)]
        for name, q in zip((a, b, out), qs):
            if q.per_channel or q.zp != 0:
                raise KilnError(f"int16 MatMul needs '{name}' quantized per tensor with zero point 0",
                                node=node.name)
        k = _matrices(node, g.values[a].shape, g.values[b].shape)[4]
        if k << 30 >= 1 << 47:
            raise KilnError(f"int16 MatMul: {k} products per sum could pass the 2**47 TFLite Micro's int16 "
                            "output stage assumes; not supported", node=node.name)
        multiplier, shift = fully_connected_output_multiplier(qs[0].s, qs[1].s, qs[2].s)
        return {"multiplier": multiplier, "shift": shift}

    @classmethod
    def macs(cls, node: Node, g: Graph) -> int:
        *_, k, _, _ = _matrices(node, g.values[node.inputs[0]].shape, g.values[node.inputs[1]].shape)
        return g.values[node.outputs[0]].size * k

    @classmethod
    def reference(cls, node, args, g):
        a, b = args
        if a.dtype == np.int8:
            q = cls.int8_params(node, g)
            acc = np.matmul(a.astype(np.int64) + q["a_offset"], b.astype(np.int64) + q["b_offset"])
            out = multiply_by_quantized_multiplier(acc, q["multiplier"], q["shift"]).astype(np.int64)
            return [clamp(out + q["out_offset"], -128, 127).astype(np.int8)]
        if a.dtype == np.int16:  # exact int64 sums (np.matmul of int64 is exact below 2**63)
            q = cls.int16_params(node, g)
            out = multiply_by_quantized_multiplier_s64(np.matmul(a.astype(np.int64), b.astype(np.int64)),
                                                       q["multiplier"], q["shift"])
            return [clamp(out.astype(np.int64), -32768, 32767).astype(np.int16)]
        return [np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)]

    @classmethod
    def lower(cls, node, ctx):
        a, b = node.inputs
        a_batch, b_batch, batch, m, k, n, _ = _matrices(node, ctx.g.values[a].shape,
                                                        ctx.g.values[b].shape)
        dims, (sa, sb) = broadcast_plan(node, batch, a_batch, b_batch)
        params = {"dims": dims, "a_strides": tuple(s * m * k for s in sa),
                  "b_strides": tuple(s * k * n for s in sb), "m": m, "k": k, "n": n}
        if ctx.g.values[a].dtype == "int8":
            ctx.request(KernelRequest("matmul_s8", node, {**params, **cls.int8_params(node, ctx.g)},
                                      headers=("kiln_quant.h",)))
            return
        if ctx.g.values[a].dtype == "int16":
            ctx.request(KernelRequest("matmul_s16", node, {**params, **cls.int16_params(node, ctx.g)}))
            return
        ctx.request(KernelRequest("matmul_f32", node, params))
