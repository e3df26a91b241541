"""The code paths of a fast Cortex-M kernel that a model renders.

A DSP or Helium kernel's template holds several paths (a 3x3 ring, a k_h x 1 loop, the
general case, ...) between which the C code chooses at run time from its parameter block. A
model renders each kernel once, so every path any of its calls could take is compiled in,
though most models take one or two: KWS's depthwise layers all run the ring, yet the
general, 3x3-per-pixel and 1-D loops were in its firmware too (4.6 KB of the kernel's text).
Each call names the paths its parameters take (`claim_paths`, from the spec's `declare`); the
template renders the union over the model's calls of that kernel (template variable `paths`;
without it, as for a template rendered on its own, every path). A `small` entry (--optimize
size) asks for the shorter form of a path where it has one: one copy of an assembly loop
instead of one with and one without the clamp.
"""

from __future__ import annotations

from typing import Iterable

from codegen.kernels.call import KernelCall, KernelContext


def claim_paths(ctx: KernelContext, call: KernelCall, paths: Iterable[str]) -> None:
    """Add `paths` to what the model's calls of call's kernel render: every such call so far
    gets the union (the emitter renders a kernel from one of its calls)."""
    same = [c for c in ctx.calls if c.kernel == call.kernel and c.variant == call.variant]
    union = set(paths)
    for c in same:
        union |= set(dict(c.template_vars).get("paths", ()))
    for c in same:
        c.template_vars = tuple(sorted({**dict(c.template_vars), "paths": tuple(sorted(union))}.items()))
