"""templates/kernels/neon_dotprod/hybrid_conv2d_f32.c.j2: NEON's hybrid convolution with SDOT
on blocks of eight output channels (codegen/kernels/repack.sdot_gemm_blocks)."""

from __future__ import annotations

from codegen.kernels.neon.hybrid_conv2d_f32 import HybridConv2dF32NeonSpec
from codegen.kernels.spec import kernel_spec


@kernel_spec
class HybridConv2dF32DotprodSpec(HybridConv2dF32NeonSpec):
    variant, sdot = "neon_dotprod", True
