"""templates/kernels/neon_dotprod/conv2d_s8.c.j2: NEON's convolution with SDOT on blocks of
eight output channels (codegen/kernels/repack.sdot_gemm_blocks)."""

from __future__ import annotations

from codegen.kernels.neon.conv2d_s8 import Conv2dS8NeonSpec
from codegen.kernels.spec import kernel_spec


@kernel_spec
class Conv2dS8DotprodSpec(Conv2dS8NeonSpec):
    variant, sdot = "neon_dotprod", True
