"""templates/kernels/cortex_m_dsp/lstm_s8.c.j2: TFLite Micro's int8 LSTM with each gate's sums
four rows at a time by SMLAD (kiln_dsp_dot_4x1), against the step's x and h widened to int16
once, and every rescaling (the gates' and the cell update's) by kiln_dsp_requant's exact
rewriting of TFLM's multiplication (records); the rest as the reference kernel
(codegen/kernels/lstm_fast.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS
from codegen.kernels.lstm_fast import LstmS8Fast, lstm_prepared
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class LstmS8Dsp(LstmS8Fast):
    rq: ConstArray  # kiln_dsp_requant records: per gate its x and h sums', then the cell update's


CELL_ROLES = ("forget", "update", "hidden")  # records 8, 9, 10: the cell update's rescalings


def records(params) -> np.ndarray:
    """[11][4] int32 records (repack.dsp_requant_records, bias word 0): per gate those of its x
    and its h fully connected layer's multiplier and shift, then those of CELL_ROLES."""
    mult = np.stack([params["input_multiplier"], params["recurrent_multiplier"]], axis=1).reshape(-1)
    shift = np.stack([params["input_shift"], params["recurrent_shift"]], axis=1).reshape(-1)
    mult = np.concatenate([mult, [params[f"{role}_multiplier"] for role in CELL_ROLES]])
    shift = np.concatenate([shift, [params[f"{role}_shift"] for role in CELL_ROLES]])
    return repack.dsp_requant_records(np.zeros(11, np.int64), mult, shift)


@kernel_spec
class LstmS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "lstm_s8", "cortex_m_dsp", LstmS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        # scratch: the gates (int16), then the x and h columns widened to int16
        return lstm_prepared(cls, request, ctx, partial(repack.dsp_gemm_rows, block=4), "int32", k_multiple=4,
                             row_block=4,
                             scratch_bytes=lambda hidden, in_pad, hid_pad: 8 * hidden + 2 * (in_pad + hid_pad),
                             rq=ctx.constant(request.node, "rq", records(request.params), "int32"))
