"""templates/kernels/neon/lstm_s8.c.j2 (and neon_dotprod's): TFLite Micro's int8 LSTM with each
gate's sums by the GEMM kernels' register tile (kiln_neon_tile: SMULL/SMLAL2 on blocks of four
rows; SDOT on blocks of eight) against the step's x and h; their rescaling to int16, the sigmoid
/ tanh table and the cell update four lanes at a time, the reference kernel's integer steps lane
by lane (codegen/kernels/lstm_fast.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import NEON_HEADERS, NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT
from codegen.kernels.lstm_fast import LstmS8Fast, lstm_prepared
from codegen.kernels.spec import KernelSpec, kernel_spec


@dataclass(frozen=True)
class LstmS8Neon(LstmS8Fast):
    mode: int  # KILN_NEON_MLA_PAIRS, KILN_NEON_MLA or KILN_NEON_SDOT (runtime_c/kiln_neon_s8.h)


@kernel_spec
class LstmS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "lstm_s8", "neon", LstmS8Neon, NEON_HEADERS
    sdot = False

    @classmethod
    def prepare(cls, request, ctx):
        if cls.sdot:
            mode, pack, block = NEON_SDOT, repack.sdot_gemm_blocks, 8
        else:  # products summed in int16 pairs unless a weight is -128 (as the GEMM kernels)
            weights = (request.params["w"].data, request.params["r"].data)
            mode = NEON_MLA if any((np.asarray(a) == -128).any() for a in weights) else NEON_MLA_PAIRS
            pack, block = repack.mve_gemm_rows, 4
        # scratch: zero-padded copies of x_t and h (whole vectors), then the gates (int16), whose
        # last block of rows may store up to seven lanes past them
        return lstm_prepared(cls, request, ctx, pack, "int8", k_multiple=16, row_block=block,
                             scratch_bytes=lambda hidden, in_pad, hid_pad: in_pad + hid_pad + 8 * hidden + 16,
                             mode=mode)
