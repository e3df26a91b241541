"""What an op's lowering asks for: a kernel request, which says what to compute, not how.

The op names the computation by its reference kernel (`conv2d_s8`: the stem of
templates/kernels/reference/conv2d_s8.c.j2, which defines what the computation is) and gives
its semantic fields (geometry, dtypes, attributes) and, for the kernels whose arguments are
the graph's tensors as they are, those arguments. Which kernel variant runs it, how its
constants are repacked and what its typed parameter block holds is decided by the kernel
registry (codegen/kernels/: `select` and each spec's `prepare`), never by the op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from codegen.ir.graph import Node


@dataclass(frozen=True, eq=False)
class KernelRequest:
    kernel: str  # the computation, named as its reference kernel: "conv2d_s8", "softmax_f32"
    node: Node
    params: Mapping[str, Any]  # semantic fields: geometry, attributes, precomputed constants
    args: tuple = ()  # kernel arguments (graph tensors, constants, scratch), when the op gives them
    headers: tuple[str, ...] = ()  # runtime headers the computation needs ("math.h", "kiln_quant.h")
    part: str | None = None  # names the call when a node needs several
    # A kernel generated per call site (a fused chain, a specialised tree walk): `kernel` is the
    # instance's name ("fused_elementwise_f32_3f1a..."), `template` the template stem it renders
    # with `template_vars`; None for a fixed kernel, whose template is `kernel`.
    template: str | None = None
    template_vars: tuple = field(default=())
    # out[i] computed from element i of each same-shaped input only: the kernel may write its
    # output over such an input (codegen/kernels/inplace.py declares it for the planner)
    elementwise: bool = False

    @property
    def stem(self) -> str:
        """The template stem (and registry key) of the computation."""
        return self.template or self.kernel
