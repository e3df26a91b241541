"""onnxruntime's float contrib operators (domain com.microsoft) that its transformer optimizer
and graph fusions write into models saved for deployment, and the dynamically quantized
MatMuls of `quantize_dynamic`: each is the ONNX ops it fuses, converted by their own
converters (so a fused model compiles to what the unfused one does).

- FusedConv / FusedGemm: Conv / Gemm, then `activation` (Relu, Tanh, Sigmoid, LeakyRelu,
  Clip, HardSigmoid) with `activation_params`.
- Gelu, FastGelu (tanh approximation, optional bias), BiasGelu (bias, then exact Gelu).
- LayerNormalization and SkipLayerNormalization (input + skip + optional bias, then
  LayerNormalization over the last axis; its fourth output is that sum).
- DynamicQuantizeMatMul (DynamicQuantizeLinear of A, MatMulInteger, times a_scale * b_scale,
  + bias) and MatMulIntegerToFloat (MatMulInteger of quantized inputs, scaled, + bias).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import CONVERTERS, ConvertContext, converter
from codegen.frontends.onnx.ops_integer import EXACT_FLOAT32_SUM
from codegen.frontends.onnx.ops_quant import _centered
from codegen.frontends.onnx.reader import OnnxNode
from codegen.ops.registry import get_op

MS = "com.microsoft."

# activation -> the names of its `activation_params`, in order: the attributes its Kiln op
# declares (codegen/ops/leaky_relu.py, clip.py, hard_sigmoid.py: alpha; min, max; alpha, beta)
_ACTIVATION_PARAMS = {"Relu": (), **{act: tuple(get_op(act).attributes)
                                     for act in ("Tanh", "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid")}}


def _run(ctx: ConvertContext, node: OnnxNode, op: str, inputs: list[str], attrs: dict | None = None,
         out: str | None = None) -> str:
    """Convert `op` (an ai.onnx op) on ONNX tensors `inputs` with its own converter; its output
    is `out` or a fresh ONNX name, returned."""
    out = out or ctx.fresh(f"{node.name}_{op.lower()}")
    CONVERTERS[op](ctx, OnnxNode(op, f"{node.name}_{op.lower()}", inputs, [out], dict(attrs or {})))
    return out


def _activation(ctx: ConvertContext, node: OnnxNode, x: str) -> None:
    act = node.attr("activation", "")
    if isinstance(act, bytes):
        act = act.decode()
    if act not in _ACTIVATION_PARAMS:
        raise node.error(f"activation '{act}' is not supported ({', '.join(_ACTIVATION_PARAMS)})")
    params = [float(p) for p in node.attr("activation_params", [])]
    names = _ACTIVATION_PARAMS[act]
    if len(params) not in (0, len(names)):
        raise node.error(f"activation {act} takes {len(names)} activation_params, got {len(params)}")
    out = node.outputs[0]
    if act == "Clip":
        lo, hi = params or (float("-inf"), float("inf"))
        ctx.add(node, "Clip", [ctx.kiln(x)], out=out, min=lo, max=hi)
        return
    _run(ctx, node, act, [x], dict(zip(names, params)), out=out)


@converter(MS + "FusedConv", MS + "FusedGemm")
def convert_fused_linear(ctx, node):
    base = "Conv" if node.op_type == "FusedConv" else "Gemm"
    if base == "Conv" and node.input(3):
        raise node.error("the Z input (a fused sum) is not supported")
    attrs = {k: v for k, v in node.attrs.items() if not k.startswith("activation")}
    _activation(ctx, node, _run(ctx, node, base, [i for i in node.inputs[:3] if i] if base == "Conv"
                                else list(node.inputs[:3]), attrs))


@converter(MS + "Gelu", MS + "FastGelu", MS + "BiasGelu")
def convert_gelu(ctx, node):
    x = node.input(0)
    if node.input(1):
        x = _run(ctx, node, "Add", [x, node.input(1)])
    approximate = "tanh" if node.op_type == "FastGelu" else "none"
    ctx.add(node, "Gelu", [ctx.kiln(x)], out=node.outputs[0], approximate=approximate)


@converter(MS + "LayerNormalization")
def convert_layer_norm(ctx, node):
    CONVERTERS["LayerNormalization"](ctx, node)


@converter(MS + "SkipLayerNormalization")
def convert_skip_layer_norm(ctx, node):
    """input, skip, gamma, beta, bias -> output, mean, inv_std_var, input_skip_bias_sum."""
    if any(o for o in node.outputs[1:3]):
        raise node.error("the mean and inv_std_var outputs are not supported")
    total = node.outputs[3] if len(node.outputs) > 3 and node.outputs[3] else None
    s = _run(ctx, node, "Add", [node.input(0), node.input(1)], out=None if node.input(4) else total)
    if node.input(4):
        s = _run(ctx, node, "Add", [s, node.input(4)], out=total)
    ins = [s, node.input(2)] + ([node.input(3)] if node.input(3) else [])
    _run(ctx, node, "LayerNormalization", ins, {"axis": -1, "epsilon": float(node.attr("epsilon", 1e-12))},
         out=node.outputs[0])


def _scaled(ctx: ConvertContext, node: OnnxNode, product: str, scales: list[str], bias: str) -> None:
    """node.outputs[0] = product * (a_scale * b_scale) (+ bias), the order onnxruntime scales
    its int32 sums in."""
    scale = _run(ctx, node, "Mul", scales)
    y = _run(ctx, node, "Mul", [product, scale], out=None if bias else node.outputs[0])
    if bias:
        _run(ctx, node, "Add", [y, bias], out=node.outputs[0])


def _centered_product(ctx: ConvertContext, node: OnnxNode, a: str, a_zp: str, b: int, b_zp: int) -> str:
    """(a - a_zp) @ (B - b_zp) in float32 for 8-bit a (zero point computed or constant) and
    constant B: exact while the sums stay below 2^24, which is checked."""
    w = ctx.require_const(node, b, "B")
    if w.ndim != 2 or w.dtype not in (np.int8, np.uint8):
        raise node.error(f"B must be an 8-bit constant matrix, got {w.dtype} {list(w.shape)}")
    w_centered = _centered(ctx, node, b, b_zp, (-1,))
    if w.shape[0] * 255 * float(np.abs(ctx.const(w_centered)).max(initial=0)) >= EXACT_FLOAT32_SUM:
        raise node.error(f"{w.shape[0]} products may sum past 2^24, where Kiln's float32 accumulation of "
                         "integers is no longer exact")
    x = _run(ctx, node, "Cast", [a], {"to": 1})
    quant = ctx.value(a).quant
    if quant is not None:  # a uint8 QuantizeLinear output, held as int8 with its zero point shifted
        x = _run(ctx, node, "Sub", [x, _float_scalar(ctx, node, "a_zero_point", quant.zp)])
    elif a_zp:
        x = _run(ctx, node, "Sub", [x, _run(ctx, node, "Cast", [a_zp], {"to": 1})])
    return _run(ctx, node, "MatMul", [x, w_centered])


def _float_scalar(ctx: ConvertContext, node: OnnxNode, role: str, value: float) -> str:
    name = ctx.fresh(f"{node.name}_{role}")
    ctx.bind_const(name, np.array(value, np.float32))
    return name


@converter(MS + "DynamicQuantizeMatMul")
def convert_dynamic_quantize_matmul(ctx, node):
    """A (float), B (8-bit constant), b_scale, b_zero_point, bias: A quantized to uint8 with its
    own range (DynamicQuantizeLinear), the integer product, scaled."""
    q, a_scale, a_zp = (ctx.fresh(f"{node.name}_a_{r}") for r in ("quantized", "scale", "zero_point"))
    CONVERTERS["DynamicQuantizeLinear"](ctx, OnnxNode("DynamicQuantizeLinear", f"{node.name}_quantize_a",
                                                      [node.input(0)], [q, a_scale, a_zp]))
    product = _centered_product(ctx, node, q, a_zp, 1, 3)
    _scaled(ctx, node, product, [a_scale, node.input(2)], node.input(4))


@converter(MS + "MatMulIntegerToFloat")
def convert_matmul_integer_to_float(ctx, node):
    """A, B (constant), a_scale, b_scale, a_zero_point, b_zero_point, bias."""
    product = _centered_product(ctx, node, node.input(0), node.input(4), 1, 5)
    _scaled(ctx, node, product, [node.input(2), node.input(3)], node.input(6))
