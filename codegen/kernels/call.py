"""What the kernel registry produces for a request: one call of the generated `run` function,
its kernel chosen (codegen/kernels/select.py) and its parameter block laid out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from codegen.ops.request import Arg, KernelRequest, Lowering, ParamValue

__all__ = ["KernelCall", "KernelContext"]


@dataclass
class KernelCall:
    """One call in the generated `run` function."""

    cname: str  # readable C name of this call, e.g. "conv2d_3"
    kernel: str  # kernel name, e.g. "conv2d_s8" (a generated kernel's: its template stem, "__", a digest)
    function: str  # C function the template defines, e.g. "kiln_conv2d_s8"
    params: dict[str, ParamValue]
    args: list[Arg]
    writes: list[str]  # values this call writes (its outputs)
    origin: tuple[str, ...]  # source-model node names, for the comment at the call
    headers: tuple[str, ...] = ()  # headers the kernel needs ("math.h", "kiln_quant.h")
    reads: list[str] = field(default_factory=list)  # values this call reads
    # In-place reuse this call allows (ctx.allow_inplace): (output, input) value pairs whose
    # storage may coincide; the memory planner decides. `inplace_kernel`: the kernel to call
    # instead when a chosen pair needs another algorithm (same params, same args, then a
    # scratch temp of `inplace_temp` bytes); None when the kernel itself is safe in place.
    inplace_ok: list[tuple[str, str]] = field(default_factory=list)
    inplace_kernel: str | None = None
    inplace_temp: int = 0
    # Partial overlap instead of the same address: the input may start this many bytes (or
    # more) above the output, the kernel only overwriting input it has consumed (convolution).
    # It applies to the pair of `inplace_overlap_input`; the call's other pairs (a residual the
    # fused convolution may write over) are at the same address.
    inplace_overlap: int | None = None
    inplace_overlap_input: str | None = None
    # Variables the kernel's template is rendered with, for a kernel generated per call site
    # (a fused chain: kernel "<template stem>__<digest>"); () for the fixed kernels.
    template_vars: tuple = ()
    # The spec that computes it (codegen/kernels/select.py): its variant and template stem,
    # rendered from templates/kernels/<variant>/<template>.c.j2.
    variant: str = "reference"
    template: str = ""


class KernelContext(Lowering, Protocol):
    """What the kernel registry uses of the lowering context (codegen/lower/context.py, which
    builds on this package): beside what an op may use, the calls so far, the choices
    --ram-limit imposes, appending a prepared call, and declaring in-place reuse."""

    calls: list[KernelCall]
    reference_stems: frozenset[str]
    compact_kernels: bool

    def append_call(self, request: KernelRequest, variant: str, params: dict[str, ParamValue],
                    args: Sequence[Arg], headers: Sequence[str]) -> KernelCall: ...
    def allow_inplace(self, call: KernelCall, out: str, inp: str, kernel: str | None = None,
                      temp_bytes: int = 0, overlap: int | None = None) -> None: ...
