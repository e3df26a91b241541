"""templates/kernels/mve/lstm_s8.c.j2: TFLite Micro's int8 LSTM with each gate's sums four rows
at a time by VMLADAVA.S8 (kiln_mve_dot_4x1) against the step's x and h; their rescaling to
int16, the sigmoid / tanh table (read by gathers) and the cell update four lanes at a time, the
reference kernel's integer steps lane by lane (codegen/kernels/lstm_fast.py)."""

from __future__ import annotations

from codegen.kernels import repack
from codegen.kernels.linear import MVE_HEADERS
from codegen.kernels.lstm_fast import LstmS8Fast, lstm_prepared
from codegen.kernels.spec import KernelSpec, kernel_spec


@kernel_spec
class LstmS8MveSpec(KernelSpec):
    kernel, variant, Params, headers = "lstm_s8", "mve", LstmS8Fast, MVE_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        # scratch: the gates (int16), then zero-padded copies of x_t and h (whole vectors)
        return lstm_prepared(cls, request, ctx, repack.mve_gemm_rows, "int8", k_multiple=16, row_block=4,
                             scratch_bytes=lambda hidden, in_pad, hid_pad: 8 * hidden + in_pad + hid_pad)
