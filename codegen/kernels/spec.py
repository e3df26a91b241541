"""A kernel spec: the Python half of one C kernel, templates/kernels/<variant>/<kernel>.c.j2.

A spec says which requests its kernel can compute (`accepts`), and turns a request into the
kernel's typed parameter block, its arguments and the headers it needs (`prepare`), repacking
constants into the layout its template reads. Specs register themselves with `@kernel_spec`
from modules that mirror the templates: codegen/kernels/<variant>/<kernel>.py.

Families of kernels that take the reference parameter block as the op lays it out (most
reference kernels; variant kernels that only compute faster over the same fields) are
declared with `same_params`: an explicit statement, checked by tests against the template's
struct, instead of a template that receives whatever the reference lowering produced.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

from codegen.ops.request import KernelRequest

if TYPE_CHECKING:
    from codegen.lower.context import LowerContext
    from codegen.lower.kernel import KernelCall

REFERENCE = "reference"


@dataclass(frozen=True)
class Prepared:
    """What `prepare` hands the call: the parameter block (a frozen dataclass instance, or the
    request's own fields for a `same_params` kernel), the arguments and the headers."""

    params: Any
    args: tuple
    headers: tuple[str, ...] = ()

    def param_fields(self) -> dict[str, Any]:
        if is_dataclass(self.params):
            return {f.name: getattr(self.params, f.name) for f in fields(self.params)}
        return dict(self.params)


class KernelSpec:
    """Base of every spec. Subclasses set `kernel`, `variant` and (for a typed block) `Params`."""

    kernel: ClassVar[str]  # template stem: templates/kernels/<variant>/<kernel>.c.j2
    variant: ClassVar[str]  # "reference", "cortex_m_dsp", "mve", "neon", "neon_dotprod"
    # The frozen dataclass of the C struct kiln_<kernel>_params; None: the fields the op gives
    # (a `same_params` kernel), the struct then being the reference kernel's.
    Params: ClassVar[type | None] = None
    headers: ClassVar[tuple[str, ...]] = ()  # runtime headers, beside the request's own

    @classmethod
    def accepts(cls, request: KernelRequest) -> bool:
        """Whether this kernel computes `request` (default: every request for its kernel)."""
        return True

    @classmethod
    def prepare(cls, request: KernelRequest, ctx: "LowerContext") -> Prepared:
        """The parameter block, arguments and headers of the call (`ctx` registers constants)."""
        return Prepared(dict(request.params), tuple(request.args), tuple(request.headers) + cls.headers)

    @classmethod
    def declare(cls, call: "KernelCall", ctx: "LowerContext") -> None:
        """In-place reuse this kernel allows for `call` (default: none); codegen/kernels/inplace.py."""


_SPECS: dict[tuple[str, str], type[KernelSpec]] = {}


def kernel_spec(cls: type[KernelSpec]) -> type[KernelSpec]:
    """Class decorator: register the spec under (kernel, variant), once."""
    key = (cls.kernel, cls.variant)
    if key in _SPECS:
        raise ValueError(f"kernel spec {key} registered twice")
    if cls.Params is not None and not (is_dataclass(cls.Params) and cls.Params.__dataclass_params__.frozen):
        raise TypeError(f"{cls.__name__}.Params must be a frozen dataclass")
    _SPECS[key] = cls
    return cls


class SameParams(KernelSpec):
    """A kernel over the reference kernel's parameter block and arguments, laid out as the
    reference spec (or, without a typed one, the op) lays them out; no in-place reuse unless
    it declares its own."""

    @classmethod
    def prepare(cls, request: KernelRequest, ctx: "LowerContext") -> Prepared:
        reference = _SPECS.get((cls.kernel, REFERENCE))
        if cls.variant == REFERENCE or reference is None or reference.Params is None:
            return super().prepare(request, ctx)
        prepared = reference.prepare(request, ctx)
        return Prepared(prepared.params, prepared.args, tuple(dict.fromkeys(prepared.headers + cls.headers)))


def same_params(variant: str, *kernels: str, headers: tuple[str, ...] = ()) -> None:
    """Register kernels of `variant` that take the reference kernel's parameter block and
    arguments, so that a template is never used without a spec saying so."""
    for name in kernels:
        kernel_spec(type(f"{variant}_{name}", (SameParams,), {
            "kernel": name, "variant": variant, "headers": headers, "__module__": __name__,
            "__doc__": f"{variant}/{name}: the reference parameter block, computed faster."}))


def registered() -> Mapping[tuple[str, str], type[KernelSpec]]:
    """Every spec by (kernel, variant), the spec modules loaded."""
    _load_all()
    return dict(sorted(_SPECS.items()))


def lookup(kernel: str, variant: str) -> type[KernelSpec] | None:
    _load_all()
    return _SPECS.get((kernel, variant))


_LOADED = False


def _load_all() -> None:
    """Import every spec module once: codegen/kernels/<variant>/*.py."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib
    import pkgutil

    import codegen.kernels as pkg

    for variant in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.ispkg):
        sub = importlib.import_module(f"codegen.kernels.{variant}")
        for mod in sorted(m.name for m in pkgutil.iter_modules(sub.__path__)):
            importlib.import_module(f"codegen.kernels.{variant}.{mod}")
    from codegen.ops.registry import all_ops

    for op in all_ops().values():  # the ops' kernels without a typed spec: the op lays out their block
        for kernel in op.kernels:
            if (kernel, REFERENCE) not in _SPECS:
                same_params(REFERENCE, kernel)
    for (kernel, variant), spec in _SPECS.items():  # a variant over the reference block: its type too
        reference = _SPECS.get((kernel, REFERENCE))
        if issubclass(spec, SameParams) and variant != REFERENCE and reference is not None:
            spec.Params = reference.Params
