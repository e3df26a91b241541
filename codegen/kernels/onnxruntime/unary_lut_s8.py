"""templates/kernels/onnxruntime/unary_lut_s8.c.j2 (the reference kernel): an int8 -> int8 table, tabulated as
onnxruntime tabulates it for the requantizing Quantize that QLinearConcat and QLinearWhere
become (QlinearBuildLookupTable: dequantize, then MlasQuantizeLinear); other tables are the
op's own."""

from __future__ import annotations

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.unary_lut_s8 import UnaryLutS8
from codegen.kernels.spec import Prepared, TypedSpec, kernel_spec
from codegen.quant.onnxruntime import lookup_table


@kernel_spec
class UnaryLutS8Onnxruntime(TypedSpec):
    kernel, variant, Params, headers = "unary_lut_s8", VARIANT, UnaryLutS8, ORT_HEADERS

    @classmethod
    def accepts(cls, request):
        return request.node.op == "Quantize"

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        qx, qy = ctx.g.values[node.inputs[0]].quant, ctx.g.values[node.outputs[0]].quant
        table = ctx.constant(node, "ort_lut", lookup_table(qx.s, qx.zp, qy.s, qy.zp), "int8")
        headers = tuple(dict.fromkeys(tuple(request.headers) + cls.headers))  # kiln_lut_s8: kiln_quant.h
        return Prepared(cls.Params(n=request.params["n"], table=table), tuple(request.args), headers)
