"""templates/kernels/onnxruntime/matmul_s8.c.j2: onnxruntime's QLinearMatMul of two activations
(attention's Q K^T and weights x V, which its graph optimizer makes of a QDQ MatMul): the exact
int32 sum of zero-point-corrected products, requantized as MlasRequantizeOutput with the
float32 scale (a_scale * b_scale) / y_scale."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.matmul_f32 import MatmulF32
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.quant.onnxruntime import output_scales


@dataclass(frozen=True)
class MatmulS8Ort(MatmulF32):
    a_offset: int  # -zero point of a (Kiln's int8: uint8 shifted, which leaves a - zp unchanged)
    b_offset: int  # -zero point of b
    output_zp: int
    scale: float  # (a_scale * b_scale) / y_scale in float32


@kernel_spec
class MatmulS8Onnxruntime(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", VARIANT, MatmulS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        qa, qb, qy = (ctx.g.values[v].quant for v in (*node.inputs, node.outputs[0]))
        shape = {f: request.params[f] for f in MatmulF32.__dataclass_fields__}
        params = cls.Params(**shape, a_offset=request.params["a_offset"], b_offset=request.params["b_offset"],
                            output_zp=qy.zp, scale=float(output_scales(qa.s, qb.s, qy.s)[0]))
        args = tuple(ctx.tensor(v) for v in (*node.inputs, node.outputs[0]))
        return Prepared(params, args, cls.headers)
