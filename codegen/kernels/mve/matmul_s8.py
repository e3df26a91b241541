"""templates/kernels/mve/matmul_s8.c.j2: TFLite Micro's int8 BatchMatMul (codegen/ops/
matmul.py) by VMLADAVA.S8 over the int8 operands as they are, one row of a against four
columns of b, the output stage four lanes at a time (kiln_mve_mbqm).

As the SDOT kernel (codegen/kernels/neon_dotprod/matmul_s8.py): the zero points come out of
the products as a row term bo * (sum of a) and a column term ao * (sum of b) + k ao bo, the
same int32 value. A slice of b is its columns, k contiguous and zero-padded to a multiple of
16, n padded to a multiple of 4 with zero columns, then the column terms as int32: built in
scratch by scatter stores once per activation slice (its only scratch), or at compile time
for a constant b. The rows of a are read in place, the last partial vector predicated. The
scatter's offsets are 16-bit: b's columns must lie fewer than 65536 bytes apart (k < 9360),
else the next variant computes the layer."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.linear import MVE_HEADERS
from codegen.kernels.neon_dotprod.matmul_s8 import packed_operands
from codegen.kernels.reference.matmul_s8 import MatmulS8
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray, ScratchArg


@dataclass(frozen=True)
class MatmulS8Mve(MatmulS8):
    k16: int  # k rounded up to a multiple of 16 (zero bytes past k)
    n4: int  # n rounded up to a multiple of 4 (zero columns past n)
    b_const: int  # 1: b is the compile-time slices (columns then column terms); 0: an int8 activation
    rq: ConstArray  # repack.mve_requant's table of the one output scale in all four lanes


@kernel_spec
class MatmulS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "matmul_s8", "mve", MatmulS8Mve, MVE_HEADERS

    @classmethod
    def accepts(cls, request):
        return 7 * repack.round_up(request.params["k"], 16) < 1 << 16

    @classmethod
    def prepare(cls, request, ctx):
        node, fields = request.node, dict(request.params)
        b_arg, b_const, k16, n4, slice_bytes, rq = packed_operands(request, ctx, fields)
        params = MatmulS8Mve(**fields, k16=k16, n4=n4, b_const=int(b_const), rq=rq)
        args = (ctx.tensor(node.inputs[0]), b_arg, ctx.tensor(node.outputs[0]), ScratchArg(4 if b_const else slice_bytes))
        return Prepared(params, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))
