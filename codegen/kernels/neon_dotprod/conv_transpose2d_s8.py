"""templates/kernels/neon_dotprod/conv_transpose2d_s8.c.j2: NEON's per-phase TRANSPOSE_CONV
with SDOT on blocks of eight output channels."""

from __future__ import annotations

from codegen.kernels.neon.conv_transpose2d_s8 import ConvTranspose2dS8NeonSpec
from codegen.kernels.spec import kernel_spec


@kernel_spec
class ConvTranspose2dS8DotprodSpec(ConvTranspose2dS8NeonSpec):
    variant, sdot = "neon_dotprod", True
