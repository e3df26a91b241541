"""templates/kernels/neon_dotprod/fully_connected_s8.c.j2: NEON's fully connected layer with
SDOT on blocks of eight output channels."""

from __future__ import annotations

from codegen.kernels.neon.fully_connected_s8 import FullyConnectedS8NeonSpec
from codegen.kernels.spec import kernel_spec


@kernel_spec
class FullyConnectedS8DotprodSpec(FullyConnectedS8NeonSpec):
    variant, sdot = "neon_dotprod", True
