"""Render the C sources, header, weights and build glue from the lowered program and plan."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2
import numpy as np

from codegen import __version__
from codegen.emit.context import CallCtx, ConstDecl, IOSpec, KernelSource, ModelCtx, ParamInit, StateDecl
from codegen.emit.literals import c_api_values, c_array_values, c_float, c_int
from codegen.emit.weights_blob import build_blob
from codegen.errors import KilnError
from codegen.ir.types import C_TYPES
from codegen.lower.context import LowerContext, c_identifier
from codegen.lower.kernel import ConstArray, ParamValue, ScratchArg, TensorArg
from codegen.lower.state import state_values
from codegen.kernels.select import planned_calls, template_path
from codegen.memory import Plan
from codegen.memory.lifetimes import scratch_name
from codegen.ops.bounded import LengthArg, bounded_values, length_output
from codegen.resources import RUNTIME_C, TEMPLATES

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES)),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
    auto_reload=False,  # a build renders the templates as they were when it started
)


def _io_specs(ctx: LowerContext, names: list[str], prefix: str, guard: str,
              offsets: dict[str, int] | None = None) -> tuple[IOSpec, ...]:
    """The inputs or outputs for the templates; `offsets`: their places in the arena (--io-in-arena)."""
    specs = []
    bounded = bounded_values(ctx.g)
    for k, name in enumerate(names):
        v = ctx.g.values[name]
        q = v.quant
        specs.append(IOSpec(
            name=name, cname=io_cname(ctx, name), dtype=v.dtype, ctype=C_TYPES[v.dtype],
            shape=v.shape, elements=v.size,
            scale=c_float(q.s) if q is not None and not q.per_channel else None,
            zero_point=q.zp if q is not None and not q.per_channel else None,
            macro=f"{guard}_{prefix}_{k}",
            length_axis=bounded[name][0] if name in bounded else None,
            length_cname=length_cname(ctx, name) if name in bounded else None,
            expected=() if v.specialized is None else tuple(c_api_values(v.specialized, v.dtype)),
            arena_offset=None if offsets is None else _io_offset(offsets, name)))
    return tuple(specs)


def _io_offset(offsets: dict[str, int], name: str) -> int:
    if name not in offsets:
        raise KilnError(f"--io-in-arena: '{name}' is a constant the model returns, not a tensor in the arena; "
                        "build without --io-in-arena")
    return offsets[name]


def _run_params(model: ModelCtx) -> tuple[str, ...]:
    """N_run's parameters: the caller's input and output buffers (none when they are in the
    arena), then the length out-parameters of the bounded outputs."""
    io = () if model.io_in_arena else (
        tuple(f"const {io.ctype} *{io.cname}" for io in model.inputs)
        + tuple(f"{io.ctype} *{io.cname}" for io in model.outputs))
    return io + tuple(f"int32_t *{io.length_cname}" for io in model.bounded)


def length_cname(ctx: LowerContext, name: str) -> str:
    """C name of the out-parameter receiving the actual length of a bounded graph output."""
    return length_param(io_cname(ctx, name))


def length_param(c_name: str) -> str:
    """The length out-parameter of the bounded output whose C parameter is `c_name` (the harness,
    firmware and project mains read the manifest's c_name and name it the same way)."""
    return f"{c_name}_length"


def io_cname(ctx: LowerContext, name: str) -> str:
    """C parameter name of a graph input/output: `in_<name>` / `out_<name>`, unique."""
    kind = "in" if name in ctx.g.inputs else "out"
    return f"{kind}_{c_identifier(name)}"[:48] + (f"_{(ctx.g.inputs + ctx.g.outputs).index(name)}")


@dataclass(frozen=True)
class LibraryLinks:
    """A model compiled into a library with others (shape variants, several models: see
    codegen/variants/): the arena it uses is the library's, declared in `arena_header`, and its
    constants are the library's symbols (`symbols`, by constant name; None: its own N_weights.c).
    `runtime`: constants that are RAM arrays the library sets before each run (a bounded
    dimension's actual extent), declared in `arena_header`, neither in flash nor declared here."""

    arena_symbol: str
    arena_header: str
    symbols: dict[str, str] | None = None
    runtime: dict[str, str] | None = None
    # kernels defined once for the library in the C file behind `kernels_header`, not in this
    # model's .c (codegen/variants/kernels.py)
    shared_kernels: frozenset[str] = frozenset()
    kernels_header: str | None = None


class _Resolver:
    """Turns kernel arguments into C expressions once the memory plan is known."""

    def __init__(self, ctx: LowerContext, plan: Plan, model: str, library: LibraryLinks | None = None):
        self.ctx, self.plan, self.model = ctx, plan, model
        self.arena = library.arena_symbol if library else f"{model}_arena"
        self.symbols = {**(library.symbols or {}), **(library.runtime or {})} if library else {}

    def symbol(self, const: ConstArray) -> str:
        return self.symbols.get(const.name) or f"{self.model}_{const.name}"

    def param(self, value: ParamValue) -> str:
        if isinstance(value, ConstArray):
            return self.symbol(value)
        if isinstance(value, tuple):
            return "{ " + ", ".join(c_int(v) for v in value) + " }"
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, float):
            return c_float(value)
        return c_int(value)

    def arg(self, step: int, k: int, arg) -> str:
        if isinstance(arg, ConstArray):
            return self.symbol(arg)
        if isinstance(arg, ScratchArg):
            return f"(void *)&{self.arena}[{self.plan.offsets[scratch_name(step, k)]}]"
        if isinstance(arg, LengthArg):  # the caller's length pointer, NULL when nobody reads it
            output = length_output(arg.value, self.ctx.g)
            return "NULL" if output is None else length_cname(self.ctx, output)
        assert isinstance(arg, TensorArg)
        root = self.ctx.root(arg.value)
        offset = self.ctx.offset(arg.value)  # a band view: bytes into its root (0 otherwise)
        if self.ctx.is_io(root) or self.ctx.g.values[root].state is not None:
            base = io_cname(self.ctx, root) if self.ctx.is_io(root) else state_symbol(self.model, self.ctx, root)
            if offset:  # the user's buffer and a variable are typed: an offset in elements
                v = self.ctx.g.values[root]
                return f"({base} + {offset * v.size // v.nbytes})"
            return base
        ctype = C_TYPES[self.ctx.g.values[arg.value].dtype]
        return f"({ctype} *)(void *)&{self.arena}[{self.plan.offsets[root] + offset}]"


def state_symbol(model: str, ctx: LowerContext, name: str) -> str:
    """C name of a variable's array in the persistent state region."""
    return f"{model}_var_{state_values(ctx.g).index(name)}"


def _state_decls(ctx: LowerContext, model: str) -> tuple[StateDecl, ...]:
    decls = []
    for name in state_values(ctx.g):
        v = ctx.g.values[name]
        init = np.asarray(v.state.init).reshape(-1)
        decls.append(StateDecl(state_symbol(model, ctx, name), C_TYPES[v.dtype], max(v.size, 1),
                               v.state.variable.replace("*/", "* /").replace("/*", "/ *"),
                               tuple(c_array_values(init, v.dtype)) if np.any(init) else (),
                               c_array_values(np.zeros(1, init.dtype), v.dtype)[0]))
    return tuple(decls)


def kernel_sources(calls) -> tuple[KernelSource, ...]:
    """The C source of every kernel the calls use, by kernel name, in name order (one per name:
    a generated kernel's name carries the digest of its template variables)."""
    kernel_call = {c.kernel: c for c in calls}  # its template and variables (a generated kernel's)
    return tuple(KernelSource(k, _ENV.get_template(template_path(kernel_call[k].template, kernel_call[k].variant))
                              .render(**dict(kernel_call[k].template_vars)))
                 for k in sorted(kernel_call))


def _runtime_closure(headers: set[str]) -> list[str]:
    """Runtime headers needed, including the ones they include themselves."""
    todo, seen = sorted(headers), set()
    while todo:
        h = todo.pop()
        if h in seen:
            continue
        seen.add(h)
        todo += re.findall(r'#include "([^"]+)"', (RUNTIME_C / h).read_text())
    return sorted(seen)


def render(ctx: LowerContext, plan: Plan, *, name: str, model_file: str, model_sha256: str,
           canaries=None, weights: str = "const", arena: str = "static",
           io_in_arena: bool = False, library: LibraryLinks | None = None) -> dict[str, str | bytes]:
    """All generated files, by file name (`canaries`: a codegen.canaries.CanaryPlan for debug builds;
    `weights`: "const" arrays in N_weights.c, or "blob": the binary N.weights.bin, see weights_blob;
    `arena`: "static" (an array in N.c) or "caller" (handed to N_init); `io_in_arena`: inputs and
    outputs at their planned offsets, reached through N_input_k() / N_output_k();
    `library`: the arena and constants of a library this model is part of, see LibraryLinks)."""
    guard = c_identifier(name).upper()
    res = _Resolver(ctx, plan, name, library)
    calls = planned_calls(ctx, plan)
    headers = {h for call in calls for h in call.headers}
    local = {h for h in headers if (RUNTIME_C / h).is_file()} | ({"kiln_canary.h"} if canaries else set())
    if weights not in ("const", "blob"):
        raise ValueError(f"weights must be 'const' or 'blob', not {weights!r}")
    blob_ctx, blob = build_blob(ctx, calls, name, res.symbol) if weights == "blob" else (None, None)
    local |= {"kiln_blob.h"} if blob_ctx else set()
    arena_header = {library.arena_header} if library else set()  # rendered by the library, not a runtime file
    shared = library.shared_kernels if library else frozenset()
    if shared:
        arena_header.add(library.kernels_header)
    runtime = (library.runtime or {}) if library else {}
    model = ModelCtx(
        name=name, guard=guard, kiln_version=__version__, model_file=model_file,
        model_sha256=model_sha256, target=ctx.target.name,
        arena_size=max(plan.arena_size, 1), uses_arena=plan.arena_size > 0 and library is None,
        arena_align=ctx.target.alignment,
        inputs=_io_specs(ctx, ctx.g.inputs, "INPUT", guard, plan.offsets if io_in_arena else None),
        outputs=_io_specs(ctx, ctx.g.outputs, "OUTPUT", guard, plan.offsets if io_in_arena else None),
        system_headers=tuple(sorted(headers - local)),
        local_headers=tuple(sorted(local | arena_header)),
        kernels=tuple(k for k in kernel_sources(calls) if k.kernel not in shared),
        consts=tuple(ConstDecl(res.symbol(c), C_TYPES[c.dtype], max(c.data.size, 1),
                               tuple(c_array_values(c.data, c.dtype)) or ("0",))
                     for c in ctx.consts if c.name not in runtime),
        calls=tuple(CallCtx(
            cname=call.cname, function=call.function, params_type=f"{call.function}_params",
            params=tuple(ParamInit(k, res.param(v)) for k, v in sorted(call.params.items())),
            args=tuple(res.arg(step, k, a) for k, a in enumerate(call.args)),
            origin=", ".join(call.origin).replace("*/", "* /").replace("/*", "/ *"),
            bound_at_load=blob_ctx is not None and any(isinstance(v, ConstArray) for v in call.params.values()))
            for step, call in enumerate(calls)),
        weights_bytes=sum(c.nbytes for c in ctx.consts),
        canaries=canaries,
        sources=(f"{name}.c",) if blob_ctx else (f"{name}.c", f"{name}_weights.c"),
        target_cflags=ctx.target.cflags,
        blob=blob_ctx,
        caller_arena=arena == "caller",
        io_in_arena=io_in_arena,
    )
    model = replace(model, bounded=tuple(io for io in model.outputs if io.length_axis is not None),
                    state=_state_decls(ctx, name),
                    state_bytes=sum(ctx.g.values[n].nbytes for n in state_values(ctx.g)))
    model = replace(model, run_params=_run_params(model))
    # parameters no call touches: inputs the model does not read, outputs with no elements
    model = replace(model, unused_inputs=tuple(io.cname for io in model.inputs + model.outputs
                                               if not io.expected and all(io.cname not in c.args and f"({io.cname} + " not in
                                                      "".join(c.args) for c in model.calls)))
    files = {
        f"{name}.h": _ENV.get_template("model.h.j2").render(m=model),
        f"{name}.c": _ENV.get_template("model.c.j2").render(m=model),
        f"{name}_weights.c": _ENV.get_template("weights.c.j2").render(m=model),
        "kiln.mk": _ENV.get_template("kiln.mk.j2").render(m=model),
        "kiln.cmake": _ENV.get_template("kiln.cmake.j2").render(m=model),
    }
    if blob_ctx is not None:  # no constant arrays in C: the binary blob instead
        del files[f"{name}_weights.c"]
        files[blob_ctx.file] = blob
    if library is not None and library.symbols is not None:  # the library's weights file defines them
        del files[f"{name}_weights.c"]
    for h in _runtime_closure(local):
        files[h] = (RUNTIME_C / h).read_text()
    return files


def write_files(files: dict[str, str | bytes], out_dir: Path) -> None:
    for fname, content in sorted(files.items()):
        write_generated(out_dir / fname, content)


def model_sources(files: dict[str, str | bytes], name: str) -> list[str]:
    """The generated .c files to compile: N.c, and N_weights.c unless the weights are a blob,
    and the library files a variant or a model built with others links with (its manifest's
    `links_with`: the shared arena and weights, codegen/variants/)."""
    import json

    manifest = files.get(f"{name}.manifest.json")
    links = json.loads(manifest).get("links_with", []) if isinstance(manifest, str) else []
    return [src for src in (f"{name}.c", f"{name}_weights.c") if src in files] + list(links)


def write_generated(path: Path, content: str | bytes) -> None:
    """One generated file: text, or binary (the weights blob of --weights blob)."""
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def render_harness(files: dict[str, str], name: str) -> str:
    """The host test harness `main` for generated files (not part of the product output)."""
    import json

    manifest = json.loads(files[f"{name}.manifest.json"])

    def spec(io: dict, prefix: str, k: int) -> IOSpec:
        return IOSpec(name=io["name"], cname=io["c_name"], dtype=io["dtype"], ctype=C_TYPES[io["dtype"]],
                      shape=tuple(io["shape"]), elements=int(np.prod(io["shape"], dtype=np.int64)),
                      scale=None, zero_point=None, macro=f"{prefix}_{k}", length_axis=io.get("length_axis"),
                      length_cname=length_param(io["c_name"]) if "length_axis" in io else None)

    class _M:
        pass

    m = _M()
    m.name = name
    m.guard = c_identifier(name).upper()
    layout = harness_layout(manifest)
    m.io_in_arena, m.caller_arena = layout.io_in_arena, layout.caller_arena
    m.inputs = tuple(harness_io(spec(io, "IN", k), name, "input", k, layout.io_in_arena)
                     for k, io in enumerate(manifest["inputs"]))
    m.outputs = tuple(harness_io(spec(io, "OUT", k), name, "output", k, layout.io_in_arena)
                      for k, io in enumerate(manifest["outputs"]))
    m.bounded = tuple(io for io in m.outputs if io.length_axis is not None)
    m.run_args = run_args(m.inputs, m.outputs, layout.io_in_arena)
    blob = manifest.get("weights", {})  # --weights blob: the harness loads the blob file first
    m.blob_file, m.blob_bytes = blob.get("blob_file"), blob.get("blob_bytes")
    return _ENV.get_template("harness/host_main.c.j2").render(m=m)


def render_template(path: str, **context) -> str:
    """One template of templates/ rendered with Kiln's Jinja settings (for the emitters of
    other packages, such as codegen/variants/)."""
    return _ENV.get_template(path).render(**context)


@dataclass(frozen=True)
class HarnessLayout:
    """Where a build's arena and I/O live, from its manifest: what a harness calling it must do."""

    caller_arena: bool  # --arena caller: the harness provides the arena through N_init
    io_in_arena: bool  # --io-in-arena: inputs written and outputs read through N_input_k() / N_output_k()


def harness_layout(manifest: dict) -> HarnessLayout:
    return HarnessLayout(manifest.get("arena_placement", "static") == "caller",
                         bool(manifest.get("ram", {}).get("io_in_arena", False)))


@dataclass(frozen=True)
class HostHarnessIO:
    """One input or output as a harness reaches it: `buffer`, a C expression of its bytes (its
    own array, or the model's N_input_k() / N_output_k()), and `nbytes`, their count."""

    spec: IOSpec
    buffer: str
    nbytes: str

    def __getattr__(self, attr):  # the IOSpec's fields (cname, ctype, elements, ...)
        return getattr(self.spec, attr)


def harness_io(spec: IOSpec, name: str, kind: str, k: int, io_in_arena: bool) -> HostHarnessIO:
    if not io_in_arena:
        return HostHarnessIO(spec, spec.cname, f"sizeof({spec.cname})")
    buffer = f"{name}_{kind}_{k}()" if kind == "output" else f"(void *){name}_{kind}_{k}()"
    return HostHarnessIO(spec, buffer, f"sizeof({spec.ctype}) * {spec.elements}u")


def run_args(inputs, outputs, io_in_arena: bool) -> tuple[str, ...]:
    """The arguments a harness passes to N_run: its buffers, unless they are in the arena, then
    the addresses of the bounded outputs' lengths."""
    io = () if io_in_arena else tuple(io.cname for io in inputs + outputs)
    return io + tuple(f"&{io.length_cname}" for io in outputs if io.length_cname)
