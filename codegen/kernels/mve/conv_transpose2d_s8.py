"""templates/kernels/mve/conv_transpose2d_s8.c.j2: TFLite Micro's int8 TRANSPOSE_CONV
(codegen/ops/conv_transpose2d.py) as one small convolution per stride phase, four output
channels per VMLADAVA.S8 block, two pixels of one phase at a time.

The taps that reach output (oy, ox) are those of its phase (py, px) against the strides,
ky = py, py + stride_h, ... (likewise kx), and their input pixels are consecutive: taken in
reverse order they are a stride-1 window of the input, nky x nkx pixels from
((oy + pad_top - py) / stride_h - nky + 1, ...). So each phase is a convolution whose weights
are its taps reversed; a window tap past the image's edge reads the input zero point, which
adds nothing once -input_zp * sum(w) of the phase's weights is folded into its bias (one
output stage table per phase). The NEON kernels (codegen/kernels/neon/conv_transpose2d_s8.py)
use the same phases."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import MVE_HEADERS, ConvShape, OutputStage, output_stage, weights
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.limits import check_shifts
from codegen.ops.request import ConstArray, ScratchArg
from codegen.quant.linear import LinearInt8, fold_input_offset, graph_bias, linear_int8_params


@dataclass(frozen=True)
class ConvTranspose2dS8Mve(ConvShape, OutputStage):
    input_zp: int  # what a window tap past the image's edge reads
    k16: int  # the longest phase's window (taps x in_c) rounded up to a multiple of 16
    rq_words: int  # one phase's output stage table: 4 words per output channel (rounded up to a block)
    phases: ConstArray  # per phase (py, px): its packed weights' offset in bytes, its window length k16
    rq: ConstArray  # per phase, repack.mve_requant's table of its folded bias


def phase_rows(w: np.ndarray, stride_h: int, stride_w: int) -> list[np.ndarray]:
    """[O, KH, KW, I] weights as, per phase (py, px) in row-major order over the strides, the
    [O, taps x I] rows of its taps reversed (ky = py + (nky - 1) * stride_h first, likewise kx),
    the order of the stride-1 input window they meet; [O, 0] for a phase without taps (a
    stride larger than the kernel)."""
    o = w.shape[0]
    return [w[:, py::stride_h, px::stride_w, :][:, ::-1, ::-1, :].reshape(o, -1)
            for py in range(stride_h) for px in range(stride_w)]


def phase_k16(rows: np.ndarray) -> int:
    """A phase's window length rounded up to 16, at least 16 (the GEMM loops run a group or
    more; a phase without taps meets zero weights)."""
    return max(16, repack.round_up(rows.shape[1], 16))


@dataclass(frozen=True)
class PhasedWeights:
    """The phases' packed weights end to end, per phase (offset, k16), and their output stages."""

    p: LinearInt8
    packed: np.ndarray  # int8
    phases: np.ndarray  # int32 [phases * 2]
    rq: np.ndarray  # int32, per phase one repack.mve_requant table
    k16: int
    rq_words: int


def phased_weights(request, ctx, pack, block: int) -> PhasedWeights:
    """Each phase's rows zero-padded to its k16 and packed by `pack` ([O, K] -> int8 bytes),
    its bias folded with -input_zp * sum(w) of its taps, TFLM's requantization constants
    (channels padded to whole blocks of `block`)."""
    node, w = request.node, weights(request, ctx)
    channels = w.shape[0]
    p = linear_int8_params(node, ctx.g, channels)
    check_shifts(request.kernel, "shift", p.shift, ", ".join(node.origin or (node.name,)))
    bias = graph_bias(node, ctx.g, channels)
    shape = request.params
    packed, table, rq = [], [], []
    offset = 0
    for rows in phase_rows(w, shape["stride_h"], shape["stride_w"]):
        k16 = phase_k16(rows)
        part = pack(np.pad(rows, ((0, 0), (0, k16 - rows.shape[1]))))
        table += [offset, k16]
        offset += part.size
        packed.append(part)
        folded = fold_input_offset(node, rows, bias, p.input_zp)
        rq.append(repack.mve_requant(folded, p.multiplier, p.shift, repack.round_up(channels, block)))
    return PhasedWeights(p, np.concatenate(packed), np.asarray(table, np.int32), np.concatenate(rq),
                         max(table[1::2]), rq[0].size)


@kernel_spec
class ConvTranspose2dS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "conv_transpose2d_s8", "mve", ConvTranspose2dS8Mve, MVE_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        pw = phased_weights(request, ctx, repack.mve_gemm_rows, 4)
        params = cls.Params(**request.params, **output_stage(pw.p), input_zp=pw.p.input_zp, k16=pw.k16,
                            rq_words=pw.rq_words, phases=ctx.constant(node, "phases", pw.phases, "int32"),
                            rq=ctx.constant(node, "rq", pw.rq, "int32"))
        args = (ctx.tensor(node.inputs[0]), ctx.constant(node, "w", pw.packed, "int8"),
                ctx.tensor(node.outputs[0]), ScratchArg(2 * pw.k16))
        return Prepared(params, args, cls.headers)
