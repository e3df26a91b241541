"""templates/kernels/neon/hybrid_conv2d_f32.c.j2 (and neon_dotprod's): TFLite's hybrid
convolution on the NEON int8 GEMM (runtime_c/kiln_neon_hybrid.h): the input quantized on the
fly as LiteRT does, the weights packed like conv2d_s8's, and per output channel the sum of
its weights (the zero-point correction), its weight scale and its bias."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT, ConvShape, FloatClamp, weights
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg
from codegen.ops.hybrid_conv2d import weight_scales


@dataclass(frozen=True)
class HybridConv2dF32Neon(ConvShape, FloatClamp):
    asymmetric: bool
    k16: int  # window length rounded up to a multiple of 16
    mode: int  # NEON_MLA_PAIRS, NEON_MLA or NEON_SDOT (runtime_c/kiln_neon_s8.h)
    w_sum: ConstArray  # int32 per output channel, zero-padded to the block
    ep: ConstArray  # float32 per group of 4 channels: 4 weight scales, 4 biases


def epilogue_table(scales: np.ndarray, bias: np.ndarray, channels_to: int) -> np.ndarray:
    """Per group of four channels the four weight scales, then the four biases (zeros past the
    last channel). A per-tensor scale is repeated: the kernel multiplies the same floats."""
    out_c = bias.shape[0]
    table = np.zeros((2, channels_to), np.float32)
    table[0, :out_c] = np.broadcast_to(np.asarray(scales, np.float32), (out_c,))
    table[1, :out_c] = bias
    return np.ascontiguousarray(table.reshape(2, -1, 4).transpose(1, 0, 2)).reshape(-1)


@kernel_spec
class HybridConv2dF32NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "hybrid_conv2d_f32", "neon", HybridConv2dF32Neon, ("kiln_neon_hybrid.h",)
    sdot = False

    @classmethod
    def prepare(cls, request, ctx):
        node, shape, g = request.node, request.params, ctx.g
        w = weights(request, ctx)
        rows = w.reshape(w.shape[0], -1)
        if cls.sdot:
            mode, block, packed = NEON_SDOT, 8, repack.sdot_gemm_blocks(rows)
        else:
            mode = NEON_MLA if (rows == -128).any() else NEON_MLA_PAIRS
            block, packed = 4, repack.mve_gemm_rows(rows)
        channels_to = repack.round_up(rows.shape[0], block)
        w_sum = np.zeros(channels_to, np.int32)
        w_sum[:rows.shape[0]] = rows.astype(np.int64).sum(axis=1)
        _, scales = weight_scales(node, g)
        bias = (np.asarray(g.values[node.inputs[2]].data, np.float32).reshape(-1) if len(node.inputs) > 2
                and node.inputs[2] else np.zeros(rows.shape[0], np.float32))
        k16 = repack.round_up(rows.shape[1], 16)
        codes = repack.round_up(shape["in_h"] * shape["in_w"] * shape["in_c"], 16)
        params = cls.Params(**{k: shape[k] for k in ConvShape.__dataclass_fields__}, act_min=shape["act_min"],
                            act_max=shape["act_max"], asymmetric=bool(shape["asymmetric"]), k16=k16, mode=mode,
                            w_sum=ctx.constant(node, "w_sum", w_sum, "int32"),
                            ep=ctx.constant(node, "ep", epilogue_table(scales, bias, channels_to), "float32"))
        args = (ctx.tensor(node.inputs[0]), ctx.constant(node, "w", packed, "int8"), ctx.tensor(node.outputs[0]),
                ScratchArg(codes + 4 * k16))
        return Prepared(params, args, tuple(request.headers) + cls.headers)
