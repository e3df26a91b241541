"""A kernel spec: the Python half of one C kernel, templates/kernels/<variant>/<kernel>.c.j2.

A spec says which requests its kernel can compute (`accepts`), and turns a request into the
kernel's typed parameter block, its arguments and the headers it needs (`prepare`), repacking
constants into the layout its template reads. Specs register themselves with `@kernel_spec`
from modules that mirror the templates: codegen/kernels/<variant>/<kernel>.py.

Families of kernels that take the reference parameter block as the op lays it out (most
reference kernels; variant kernels that only compute faster over the same fields) are
declared with `same_params`: an explicit statement, checked by tests against the template's
struct, instead of a template that receives whatever the reference lowering produced.

A family (`kernel_family`) is one spec over one template for several kernels that differ only
in their C types or their op's expression (add_i8 ... add_u64, abs_f32 ... tan_f32): each
member keeps its own name (and so its C function), the template renders it from the member's
variables, derived from the C type table of codegen/ir/types.py.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any, ClassVar, Mapping, get_type_hints

from codegen.kernels.call import KernelCall, KernelContext
from codegen.ops.request import ConstArray, KernelRequest, ScratchArg


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
            return c_fields(self.params)
        return dict(self.params)


def c_name(field_name: str) -> str:
    """The C name of a parameter-block field: a field named after a Python keyword carries a
    trailing underscore (`from_`, `in_`) that the C struct does not."""
    return field_name[:-1] if field_name.endswith("_") else field_name


def c_fields(block: Any) -> dict[str, Any]:
    """A parameter block as the designators of its C initializer: a nested block (a struct
    member such as int8 Add's `q`) flattened into `q.left_shift`, ..."""
    out: dict[str, Any] = {}
    for f in fields(block):
        value = getattr(block, f.name)
        if is_dataclass(value) and not isinstance(value, ConstArray):
            out.update({f"{c_name(f.name)}.{key}": v for key, v in c_fields(value).items()})
        else:
            out[c_name(f.name)] = value
    return out


def make_block(params: type, values: Mapping[str, Any]) -> Any:
    """The block `params` from a request's fields: a nested block's field given as a mapping
    is built as its own dataclass (the field's type); a missing or unknown field is an error."""
    nested = {name for name, value in values.items() if isinstance(value, Mapping)}
    if not nested:
        return params(**values)
    hints = get_type_hints(params)
    return params(**{name: make_block(hints[name], value) if name in nested else value
                     for name, value in values.items()})


class KernelSpec:
    """Base of every spec. Subclasses set `kernel`, `variant` and (for a typed block) `Params`."""

    kernel: ClassVar[str]  # template stem: templates/kernels/<variant>/<kernel>.c.j2
    variant: ClassVar[str]  # "reference", "cortex_m_dsp", "mve", "neon", "neon_dotprod"
    # The frozen dataclass of the C struct kiln_<kernel>_params; None: the fields the op gives
    # (a `same_params` kernel), the struct then being the reference kernel's.
    Params: ClassVar[type | None] = None
    headers: ClassVar[tuple[str, ...]] = ()  # runtime headers, beside the request's own
    # A kernel generated per call site: the template variables of one instance, with which the
    # registry's tests render its template (tests/core/test_kernel_registry.py).
    example_vars: ClassVar[tuple[tuple[str, Any], ...]] = ()

    @classmethod
    def accepts(cls, request: KernelRequest) -> bool:
        """Whether this kernel computes `request` (default: every request for its kernel)."""
        return True

    @classmethod
    def prepare(cls, request: KernelRequest, ctx: KernelContext) -> Prepared:
        """The parameter block, arguments and headers of the call (`ctx` registers constants)."""
        return Prepared(dict(request.params), tuple(request.args), tuple(request.headers) + cls.headers)

    @classmethod
    def declare(cls, call: KernelCall, ctx: KernelContext) -> None:
        """In-place reuse this kernel allows for `call` (default: none); codegen/kernels/inplace.py."""


_SPECS: dict[tuple[str, str], type[KernelSpec]] = {}
# (member kernel, variant) -> the family spec that renders it
_MEMBERS: dict[tuple[str, str], type["KernelFamily"]] = {}


def kernel_spec(cls: type[KernelSpec]) -> type[KernelSpec]:
    """Class decorator: register the spec under (kernel, variant), once."""
    key = (cls.kernel, cls.variant)
    if key in _SPECS:
        raise ValueError(f"kernel spec {key} registered twice")
    if cls.Params is not None and not (is_dataclass(cls.Params) and cls.Params.__dataclass_params__.frozen):
        raise TypeError(f"{cls.__name__}.Params must be a frozen dataclass")
    _SPECS[key] = cls
    return cls


def _spec_of(kernel: str, variant: str) -> type[KernelSpec] | None:
    return _SPECS.get((kernel, variant)) or _MEMBERS.get((kernel, variant))


class SameParams(KernelSpec):
    """A kernel over the reference kernel's parameter block and arguments, laid out as the
    reference spec (or, without a typed one, the op) lays them out; no in-place reuse unless
    it declares its own."""

    @classmethod
    def prepare(cls, request: KernelRequest, ctx: KernelContext) -> Prepared:
        reference = _spec_of(cls.kernel, REFERENCE)
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


class TypedSpec(KernelSpec):
    """A kernel whose parameter block is its `Params` built from the request's semantic fields
    (a field missing or unknown is an error, not a zero), and whose arguments are the request's
    own, or else the node's inputs then outputs, then the scratch `scratch_bytes` gives."""

    @classmethod
    def scratch_bytes(cls, request: KernelRequest) -> int:
        return 0

    @classmethod
    def prepare(cls, request: KernelRequest, ctx: KernelContext) -> Prepared:
        node = request.node
        args = tuple(request.args) or tuple(ctx.tensor(v) for v in (*node.inputs, *node.outputs) if v)
        scratch = cls.scratch_bytes(request)
        if scratch:
            args += (ScratchArg(scratch),)
        return Prepared(make_block(cls.Params, request.params), args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))


def typed_kernels(variant: str, params: type, *kernels: str, headers: tuple[str, ...] = ()) -> None:
    """Register kernels of `variant` whose parameter block is `params` (TypedSpec)."""
    for name in kernels:
        kernel_spec(type(f"{variant}_{name}", (TypedSpec,), {
            "kernel": name, "variant": variant, "Params": params, "headers": headers, "__module__": __name__,
            "__doc__": f"{variant}/{name}: the block {params.__name__} from the request's fields."}))


class KernelFamily(TypedSpec):
    """One template rendering several kernels (its members), each from its own variables; the
    parameter block is the family's typed `Params` (one layout, each member's struct named
    after it) or, without one, the op's fields."""

    members: ClassVar[Mapping[str, Mapping[str, Any]]] = {}  # kernel name -> template variables

    @classmethod
    def prepare(cls, request: KernelRequest, ctx: KernelContext) -> Prepared:
        if cls.Params is None:  # the op's fields and arguments
            return super(TypedSpec, cls).prepare(request, ctx)
        return super().prepare(request, ctx)

    @classmethod
    def template_vars(cls, kernel: str) -> tuple[tuple[str, Any], ...]:
        return tuple(sorted(cls.members[kernel].items()))


def kernel_family(template: str, members: Mapping[str, Mapping[str, Any]], variant: str = REFERENCE,
                  doc: str = "", params: type | None = None,
                  base: type[KernelFamily] | None = None) -> type[KernelFamily]:
    """Register the family of kernels `members` (name -> template variables) rendered by
    templates/kernels/<variant>/<template>.c.j2; `params`: their typed parameter block (one
    layout, each member's struct named after it), None for the op's fields; `base`: a
    KernelFamily subclass whose `prepare` completes the block per member."""
    spec = kernel_spec(type(f"{variant}_{template}", (base or KernelFamily,), {
        "kernel": template, "variant": variant, "members": dict(members), "Params": params, "__module__": __name__,
        "__doc__": doc or f"{variant}/{template}: {len(members)} kernels from one template."}))
    for name in members:
        if _spec_of(name, variant) is not None:
            raise ValueError(f"kernel {name} ({variant}) registered twice")
        _MEMBERS[(name, variant)] = spec
    return spec


def families() -> Mapping[tuple[str, str], type[KernelFamily]]:
    """Every family spec by (template, variant), the spec modules loaded."""
    _load_all()
    return {key: spec for key, spec in sorted(_SPECS.items()) if issubclass(spec, KernelFamily)}


def registered() -> Mapping[tuple[str, str], type[KernelSpec]]:
    """Every spec by (kernel, variant), the spec modules loaded."""
    _load_all()
    return dict(sorted(_SPECS.items()))


def lookup(kernel: str, variant: str) -> type[KernelSpec] | None:
    _load_all()
    return _spec_of(kernel, variant)


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
            if _spec_of(kernel, REFERENCE) is None:
                same_params(REFERENCE, kernel)
    for (kernel, variant), spec in _SPECS.items():  # a variant over the reference block: its type too
        reference = _spec_of(kernel, REFERENCE)
        if issubclass(spec, SameParams) and variant != REFERENCE and reference is not None:
            spec.Params = reference.Params
