"""templates/kernels/onnxruntime_dsp/fully_connected_s8.c.j2: onnxruntime's QGemm / QLinearMatMul
with constant weights on the DSP: four output channels at a time as SMLAD dot products over the
weights packed for cortex_m_dsp/fully_connected_s8 (against the input row widened to int16
once, or read in place where that copy would outgrow the layer's activations), each sum
requantized as MlasRequantizeOutput."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS, OutputStage, RowsShape, weights
from codegen.kernels.onnxruntime import ORT_HEADERS, ort_linear_fields
from codegen.kernels.onnxruntime_dsp import VARIANT
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class FullyConnectedS8OrtDsp(RowsShape, OutputStage):
    k4: int  # in_k rounded up to a multiple of 4
    widen: int  # 1: rows widened to an int16 scratch copy; 0: read in place, no scratch
    scale: ConstArray  # float32 per output channel (out_c rounded up to 4)


@kernel_spec
class FullyConnectedS8OnnxruntimeDsp(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", VARIANT, FullyConnectedS8OrtDsp, DSP_HEADERS + ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        shape = request.params
        k4, o4 = repack.round_up(w.shape[1], 4), repack.round_up(w.shape[0], 4)
        # as cortex_m_dsp/fully_connected_s8: the int16 row only where it is no larger than
        # the layer's input and output together
        widen = int(2 * k4 <= shape["batches"] * (shape["in_k"] + shape["out_c"]))
        fields, bias = ort_linear_fields(request, ctx, w, channels_to=o4)
        packed = ctx.constant(node, "w", repack.dsp_gemm_rows(w, block=4, natural=not widen), "int32")
        params = cls.Params(**shape, output_zp=fields["output_zp"], act_min=fields["act_min"],
                            act_max=fields["act_max"], k4=k4, widen=widen, scale=fields["scale"])
        args = (ctx.tensor(node.inputs[0]), packed, bias, ctx.tensor(node.outputs[0]),
                ScratchArg(2 * k4 if widen else 4))
        return Prepared(params, args, cls.headers)
