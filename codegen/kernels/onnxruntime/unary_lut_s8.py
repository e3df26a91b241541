"""templates/kernels/onnxruntime/unary_lut_s8.c.j2 (the reference kernel): an int8 -> int8
table, tabulated as onnxruntime tabulates it (QlinearBuildLookupTable: dequantize, the float
function, MlasQuantizeLinear) for the requantizing Quantize that QLinearConcat and
QLinearWhere become and for QLinearSigmoid / QLinearLeakyRelu (QuantizedActivation, with
MLAS's logistic); other int8 functions have no onnxruntime kernel here."""

from __future__ import annotations

import numpy as np

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.unary_lut_s8 import UnaryLutS8
from codegen.kernels.spec import Prepared, TypedSpec, kernel_spec
from codegen.ops.request import ConstArray
from codegen.quant.onnxruntime import leaky_relu, logistic, lookup_table


def _function(node):
    """The float function onnxruntime tabulates for this node (None: the identity)."""
    if node.op == "Quantize":
        return None
    return logistic if node.attrs["function"] == "sigmoid" else leaky_relu(node.attrs["alpha"])


@kernel_spec
class UnaryLutS8Onnxruntime(TypedSpec):
    kernel, variant, Params, headers = "unary_lut_s8", VARIANT, UnaryLutS8, ORT_HEADERS

    @classmethod
    def accepts(cls, request):
        return request.node.op in ("Quantize", "QuantizedActivation")

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        qx, qy = ctx.g.values[node.inputs[0]].quant, ctx.g.values[node.outputs[0]].quant
        # onnxruntime's table in place of the one the op tabulated (same flash array, same name)
        ops_table = request.params["table"]
        data = lookup_table(qx.s, qx.zp, qy.s, qy.zp, _function(node)).astype(np.int8)
        table = ConstArray(ops_table.name, "int8", data)
        ctx.consts[ctx.consts.index(ops_table)] = table
        headers = tuple(dict.fromkeys(tuple(request.headers) + cls.headers))  # kiln_lut_s8: kiln_quant.h
        return Prepared(cls.Params(n=request.params["n"], table=table), tuple(request.args), headers)
