"""The one place that chooses a kernel: `select` for a request on a target, and, once the
memory plan is known, `planned` for the in-place alternative a call declared.

Variants are tried in the target's order (boards/targets/*.toml, "reference" last); the first
variant with a spec for the request's kernel that accepts it wins. A variant without a spec
for a kernel is skipped: the next one, in the end the reference kernel, computes it. A
template without a spec is never rendered (tests/core/test_kernel_registry.py checks that
every template has one).
"""

from __future__ import annotations

from dataclasses import replace

from codegen.errors import KilnError
from codegen.kernels.call import KernelCall, KernelContext
from codegen.kernels.inplace import allow_elementwise_inplace
from codegen.kernels.spec import REFERENCE, KernelFamily, KernelSpec, lookup
from codegen.ops.request import KernelRequest, ScratchArg



def select(request: KernelRequest, variants: tuple[str, ...],
           reference: frozenset[str] = frozenset()) -> type[KernelSpec]:
    """The spec that computes `request` among the target's kernel `variants`; the kernels
    named in `reference` (stems) by the reference variant only, whose in-place forms need less
    RAM (chosen by --ram-limit, codegen/memory/fit.py)."""
    for variant in (REFERENCE,) if request.stem in reference else variants:
        spec = lookup(request.stem, variant)
        if spec is not None and spec.accepts(request):
            return spec
    raise KilnError(f"no kernel computes {request.stem} (variants tried: {', '.join(variants)})",
                    node=request.node.name)


def template_path(stem: str, variant: str) -> str:
    """The template of a kernel, relative to templates/."""
    return f"kernels/{variant}/{stem}.c.j2"


def lower_request(request: KernelRequest, ctx: KernelContext) -> KernelCall:
    """Append the call that computes `request` on ctx's target: its spec chosen, its parameter
    block and constants prepared, its in-place reuse declared."""
    spec = select(request, ctx.target.variants, ctx.reference_stems)
    if issubclass(spec, KernelFamily):  # a member: its family's template, with its variables
        request = replace(request, template=spec.kernel, template_vars=spec.template_vars(request.kernel))
    prepared = spec.prepare(request, ctx)
    call = ctx.append_call(request, spec.variant, prepared.param_fields(), prepared.args, prepared.headers)
    if request.elementwise:
        allow_elementwise_inplace(ctx, call)
    spec.declare(call, ctx)
    return call


def planned(call: KernelCall, taken: bool) -> KernelCall:
    """The call as emitted: the in-place alternative it declared (`inplace_kernel`, a spec of
    the same variant taking the same parameters, then its temp as a last scratch argument)
    when the memory plan took its pair (`taken`); the call itself otherwise."""
    if call.inplace_kernel is None or not taken:
        return call
    alternative = lookup(call.inplace_kernel, call.variant)
    if alternative is None:
        raise ValueError(f"{call.kernel}: in-place alternative {call.inplace_kernel} has no {call.variant} spec")
    args = list(call.args) + ([ScratchArg(call.inplace_temp)] if call.inplace_temp else [])
    family = issubclass(alternative, KernelFamily)
    return replace(call, kernel=call.inplace_kernel, template=alternative.kernel,
                   template_vars=alternative.template_vars(call.inplace_kernel) if family else (),
                   function=f"kiln_{call.inplace_kernel}", args=args, inplace_ok=list(call.inplace_ok))


def planned_calls(ctx: KernelContext, plan) -> list[KernelCall]:
    """The calls as emitted: a call whose in-place pair the memory plan took runs the in-place
    alternative its kernel declared; every other call is the lowered one."""
    chosen = set(plan.aliases)
    return [planned(call, any((ctx.root(o), ctx.root(i)) in chosen for o, i in call.inplace_ok))
            for call in ctx.calls]


def kernel_template(kernel: str, variant: str) -> tuple[str, tuple]:
    """The template of a fixed kernel (or family member) of `variant` and the variables it is
    rendered with."""
    spec = lookup(kernel, variant)
    if spec is None:
        raise FileNotFoundError(f"no kernel spec for {kernel} in variant {variant}")
    return template_path(spec.kernel, variant), spec.template_vars(kernel) if issubclass(spec, KernelFamily) else ()


def template_for_name(kernel: str, variants: tuple[str, ...]) -> str:
    """The template of the kernel called `kernel` on a target, for code that holds only the
    name a manifest or a weights blob records (not the call): the spec `select` takes for a
    fixed kernel, whose every spec accepts every request of its name. A generated kernel's
    name is its template stem, `__`, an instance digest."""
    stem = kernel.split("__", 1)[0]
    for variant in variants:
        spec = lookup(stem, variant)
        if spec is not None:
            return template_path(spec.kernel, variant)
    raise FileNotFoundError(f"no kernel spec for {kernel} in variants {variants}")


def variant_for_name(kernel: str, variants: tuple[str, ...]) -> str:
    return template_for_name(kernel, variants).split("/")[1]


__all__ = ["REFERENCE", "select", "planned", "planned_calls", "lower_request", "template_path", "kernel_template",
           "template_for_name",
           "variant_for_name"]
