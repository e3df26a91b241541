"""templates/kernels/onnxruntime/{add,mul}_bcast_s8.c.j2: onnxruntime's QLinearAdd and
QLinearMul over the broadcasting loop of the reference int8 binary kernels (the op's loop
fields), with onnxruntime's constants (codegen/quant/onnxruntime.py) in place of TFLite's."""

from __future__ import annotations

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.quant.onnxruntime import add_constants, mul_constants


class _OrtBinaryS8(KernelSpec):
    constants = staticmethod(add_constants)

    @classmethod
    def accepts(cls, request):
        return request.node.attrs.get("activation", "none") == "none"  # onnxruntime's ops fuse none

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        loops = {k: v for k, v in request.params.items() if k != "q"}  # the op's TFLite constants
        quants = [ctx.g.values[v].quant for v in (*node.inputs, node.outputs[0])]
        q = {f"q.{k}": v for k, v in cls.constants(*quants).items()}
        args = tuple(request.args) or tuple(ctx.tensor(v) for v in (*node.inputs, *node.outputs))
        return Prepared({**loops, **q}, args, ORT_HEADERS)


@kernel_spec
class AddBcastS8Onnxruntime(_OrtBinaryS8):
    kernel, variant = "add_bcast_s8", VARIANT


@kernel_spec
class MulBcastS8Onnxruntime(_OrtBinaryS8):
    kernel, variant = "mul_bcast_s8", VARIANT
    constants = staticmethod(mul_constants)
