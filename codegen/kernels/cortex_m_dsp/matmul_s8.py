"""templates/kernels/cortex_m_dsp/matmul_s8.c.j2: TFLite Micro's int8 BatchMatMul
(codegen/ops/matmul.py) as 2x2 tiles of SMLAD dot products (kiln_dsp_dot_2x2, the
convolution's tile): two columns of b, packed as the convolution packs its weights, against
two rows of a widened to int16.

Both zero points apply per product, so nothing folds into a bias: the rows of a are widened
with their offset added (a - zero point, within [-255, 255]) and summed on the way, and
b's offset comes out of the products as a row term: sum of (a + ao)(b + bo) = sum of
(a + ao) b + bo * (sum of a + ao), the same int32 value. An activation b is packed into
scratch once per batch slice (again only when the slice changes: a broadcast b is packed
once), four rows by four columns per step; a constant b is packed here, at compile time
(repack.dsp_gemm_rows of its columns, no bigger than b).

Scratch: b's packed slice (n rounded up to 2, times k rounded up to 4, bytes) and the two
widened rows (4 * k4 bytes), live during the call only: 320 B for the transformer's 16x16
attention products."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS
from codegen.kernels.reference.matmul_s8 import MatmulS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class MatmulS8Dsp(MatmulS8):
    k4: int  # k rounded up to a multiple of 4 (zero past k)
    n2: int  # n rounded up to a multiple of 2 (a zero column past n)
    b_const: int  # 1: b is the compile-time packed slices (int32 words); 0: an int8 activation
    rq_r2: int  # the output shifts right by 2 or more: kiln_dsp_requant_r2
    rq: ConstArray  # kiln_dsp_requant's record of the one output scale (its bias word 0)


def packed_columns(b: np.ndarray, k: int, n: int) -> np.ndarray:
    """A constant b (slices of [k, n]) as the kernel's slices: per slice the dsp_gemm_rows
    words (blocks of two) of its columns."""
    slices = np.asarray(b, np.int8).reshape(-1, k, n)
    return np.concatenate([repack.dsp_gemm_rows(s.T, block=2) for s in slices])


def requant_record(multiplier: int, shift: int) -> tuple[np.ndarray, bool]:
    """The DSP output stage of one per-tensor scale: its record and whether it may take the
    r2 form."""
    m, s = np.array([multiplier]), np.array([shift])
    return repack.dsp_requant_records(np.zeros(1), m, s).reshape(-1), repack.dsp_requant_r2(m, s)


@kernel_spec
class MatmulS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", "cortex_m_dsp", MatmulS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, fields = request.node, dict(request.params)
        k, n = fields["k"], fields["n"]
        k4, n2 = repack.round_up(k, 4), repack.round_up(n, 2)
        b_value = ctx.g.values[node.inputs[1]]
        record, r2 = requant_record(fields["multiplier"], fields["shift"])
        scratch = 2 * 2 * k4  # the two widened rows of a
        if b_value.is_const:
            b_arg = ctx.constant(node, "cols", packed_columns(b_value.data, k, n), "int32")
            fields["b_strides"] = tuple(s // (k * n) * (n2 * k4 // 4) for s in fields["b_strides"])
        else:
            b_arg = ctx.tensor(node.inputs[1])
            scratch += n2 * k4
        params = MatmulS8Dsp(**fields, k4=k4, n2=n2, b_const=int(b_value.is_const), rq_r2=int(r2),
                             rq=ctx.constant(node, "rq", record, "int32"))
        args = (ctx.tensor(node.inputs[0]), b_arg, ctx.tensor(node.outputs[0]), ScratchArg(scratch))
        return Prepared(params, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))
