"""templates/kernels/mve/matmul_s8.c.j2: TFLite Micro's int8 BatchMatMul (codegen/ops/
matmul.py) by VMLADAVA.S16 over int16 operands, one row of a against four columns of b, the
output stage four lanes at a time (kiln_mve_requant).

As the DSP and NEON kernels: both operands widened to int16 with their offsets added (no
bias to fold them into); the row of a into scratch, the columns of b (k contiguous, n padded
to a multiple of 4 with zero columns) into scratch once per batch slice by scatter stores, or
at compile time for a constant b; k zero-padded to a multiple of 8, one int16x8 vector.
The scatter's offsets are 16-bit: b's columns must be fewer than 65536 lanes apart (k < 9360),
else the next variant computes the layer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.matmul_s8 import widened_columns
from codegen.kernels.linear import MVE_HEADERS
from codegen.kernels.reference.matmul_s8 import MatmulS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class MatmulS8Mve(MatmulS8):
    k8: int  # k rounded up to a multiple of 8 (zero lanes past k)
    n4: int  # n rounded up to a multiple of 4 (zero columns past n)
    b_const: int  # 1: b is the compile-time columns (int16 [n4][k8] per slice); 0: an int8 activation
    rq: ConstArray  # repack.mve_requant's table of the one output scale in all four lanes


@kernel_spec
class MatmulS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", "mve", MatmulS8Mve, MVE_HEADERS

    @classmethod
    def accepts(cls, request):
        return 7 * repack.round_up(request.params["k"], 8) < 1 << 16

    @classmethod
    def prepare(cls, request, ctx):
        node, fields = request.node, dict(request.params)
        k, n = fields["k"], fields["n"]
        k8, n4 = repack.round_up(k, 8), repack.round_up(n, 4)
        b_value = ctx.g.values[node.inputs[1]]
        scratch = 2 * k8  # the widened row of a
        if b_value.is_const:
            cols = widened_columns(b_value.data, k, n, fields["b_offset"], k8, n4)
            b_arg = ctx.constant(node, "cols", cols, "int16")
            fields["b_strides"] = tuple(s // (k * n) * n4 * k8 for s in fields["b_strides"])
        else:
            b_arg = ctx.tensor(node.inputs[1])
            scratch += 2 * n4 * k8
        table = repack.mve_requant(np.zeros(4), np.full(4, fields["multiplier"]), np.full(4, fields["shift"]), 4)
        params = MatmulS8Mve(**fields, k8=k8, n4=n4, b_const=int(b_value.is_const),
                             rq=ctx.constant(node, "rq", table, "int32"))
        args = (ctx.tensor(node.inputs[0]), b_arg, ctx.tensor(node.outputs[0]), ScratchArg(scratch))
        return Prepared(params, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))
