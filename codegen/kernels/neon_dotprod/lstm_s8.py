"""templates/kernels/neon_dotprod/lstm_s8.c.j2: NEON's int8 LSTM with SDOT on blocks of eight
rows of each gate."""

from __future__ import annotations

from codegen.kernels.neon.lstm_s8 import LstmS8NeonSpec
from codegen.kernels.spec import kernel_spec


@kernel_spec
class LstmS8DotprodSpec(LstmS8NeonSpec):
    variant, sdot = "neon_dotprod", True
