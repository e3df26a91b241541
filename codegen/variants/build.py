"""`kiln build MODEL --variant ...` and `kiln build A B ...`: the members compiled one by one by
the ordinary pipeline, then put together as one library (codegen/variants/library.py) with
its arena, shared weights, dispatcher, build glue and manifest."""

from __future__ import annotations

import hashlib
import re
import json
from dataclasses import dataclass, replace
from pathlib import Path

from codegen import __version__, progress
from codegen.budget import check_budget
from codegen.compiler import compile_graph, compile_model, default_name
from codegen.errors import KilnError
from codegen.frontends import load_model
from codegen.ir.types import C_TYPES
from codegen.lower.context import c_identifier
from codegen.emit.render import render_template
from codegen.options import CompileOptions
from codegen.variants.kernels import kernel_code
from codegen.variants.library import Library, Member, check_library_options, render_members
from codegen.variants.spec import VariantSpec


@dataclass(frozen=True)
class DispatchIO:
    ctype: str
    macro: str  # the variant header's prefix: N_V0_INPUT_1
    dims: tuple[int, ...]
    rank: int
    elements: int
    expected: bool  # a specialised input: compared by value (macro _VALUE)


@dataclass(frozen=True)
class VariantCtx:
    name: str
    description: str
    arena_bytes: int
    inputs: tuple[DispatchIO, ...]
    outputs: tuple[DispatchIO, ...]


@dataclass(frozen=True)
class LibraryCtx:
    """What the library's templates (arena, dispatcher, weights, kiln.mk / kiln.cmake) substitute."""

    name: str
    guard: str
    kiln_version: str
    target: str
    model_file: str
    model_sha256: str
    members: tuple[str, ...]
    arena_bytes: int
    arena_align: int
    sources: tuple[str, ...]
    target_cflags: tuple[str, ...]
    system_headers: tuple[str, ...]
    consts: tuple = ()
    weights_bytes: int = 0
    variants: tuple[VariantCtx, ...] = ()
    input_count: int = 0
    output_count: int = 0
    blob: None = None  # kiln.mk's weights-blob line: libraries hold const weights
    runtime_arrays: tuple = ()  # a bounded dimension: codegen/variants/bounded.py's RuntimeArray
    max_extent: int = 0


def compile_variants(model: Path, options: CompileOptions, specs: list[VariantSpec]) -> Library:
    """One library with every variant of `model`: files, manifest and each variant's build."""
    check_library_options(options, "variants")
    name = options.name or default_name(model)
    if not name.isidentifier():
        raise KilnError(f"--name '{name}' is not a C identifier")
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    members = []
    for spec in specs:
        opts = replace(options, input_shapes={**options.input_shapes, **dict(spec.input_shapes)},
                       specialized={**options.specialized, **dict(spec.specialized)})
        try:
            with progress.step(f"compiling {model.name} variant {spec.label} ({spec.describe()})"):
                g = load_model(model, opts.input_shapes, opts.specialized, check=opts.check_model)
                result = compile_graph(g, opts, name=f"{name}_{spec.label}", model_file=model.name,
                                       model_sha256=sha)
        except KilnError as err:
            err.message = f"variant {spec.label} ({spec.describe()}): {err.message}"
            raise err.located(str(model)) from None
        members.append(Member(f"{name}_{spec.label}", result, model.name, sha, spec.describe()))
    _check_same_interface(members, model)
    lib = _library(name, members, options)
    render_members(lib, options, share=True)
    ctx = _library_ctx(lib, options, model.name, sha)
    lib.files.update({
        f"{name}_weights.c": render_template("weights.c.j2", m=ctx),
        f"{name}.h": render_template("variants/dispatch.h.j2", l=ctx),
        f"{name}.c": render_template("variants/dispatch.c.j2", l=ctx),
    })
    _finish(lib, ctx, _variants_manifest(lib, ctx, options), options)
    return lib


def compile_models(models: list[Path], options: CompileOptions) -> Library:
    """Several models in one firmware: each compiled as usual (own header and weights file),
    all running from one arena as large as the largest need."""
    check_library_options(options, "models")
    names = [default_name(m) for m in models]
    lib_name = options.name or "shared"
    if not lib_name.isidentifier():
        raise KilnError(f"--name '{lib_name}' is not a C identifier")
    clash = sorted({n for n in names if names.count(n) > 1 or n == lib_name})
    if clash:
        raise KilnError(f"two models or the library would share the C name '{clash[0]}': rename a model file "
                        "(the names come from the file names; --name names the library)")
    members = []
    for model, name in zip(models, names):
        result = compile_model(model, replace(options, name=name))
        members.append(Member(name, result, model.name, result.manifest["model_sha256"]))
    lib = _library(lib_name, members, options)
    render_members(lib, options, share=False)
    ctx = _library_ctx(lib, options, ", ".join(m.name for m in models), "")
    manifest = _common_manifest(lib, ctx)
    manifest["models"] = [{"name": m.name, "model_file": m.model_file, "entry": f"{m.name}_run",
                           "manifest": f"{m.name}.manifest.json", "arena_bytes": m.result.manifest["arena_bytes"],
                           "weights_bytes": m.result.manifest["weights_bytes"]} for m in members]
    manifest["weights_bytes"] = sum(m.result.manifest["weights_bytes"] for m in members)
    _finish(lib, ctx, manifest, options)
    return lib


def _library(name: str, members: list[Member], options: CompileOptions) -> Library:
    return Library(name, c_identifier(name).upper(), members,
                   max(max(m.result.plan.arena_size for m in members), 1), options.target.alignment)


def _check_same_interface(members: list[Member], model: Path) -> None:
    """The dispatcher passes buffers by position: every variant keeps the inputs and outputs
    (count and element types); outputs of data-dependent length are not dispatched."""
    def interface(m: Member):
        return [(io["name"], io["dtype"]) for io in m.result.manifest["inputs"]], \
               [io["dtype"] for io in m.result.manifest["outputs"]]

    first = interface(members[0])
    for m in members[1:]:
        if interface(m) != first:
            raise KilnError(f"variant {m.name} has other inputs or outputs than {members[0].name}; variants "
                            "must differ only in shapes and values", where=str(model))
    for m in members:
        if any("length_axis" in io for io in m.result.manifest["outputs"]):
            raise KilnError("outputs of data-dependent length are not supported with --variant", where=str(model))


def _dispatch_io(member: Member, io: dict, k: int, kind: str) -> DispatchIO:
    shape = tuple(int(d) for d in io["shape"])
    elements = 1
    for d in shape:
        elements *= d
    return DispatchIO(C_TYPES[io["dtype"]], f"{c_identifier(member.name).upper()}_{kind}_{k}", shape, len(shape),
                      elements, io.get("specialized") is not None)


def _library_ctx(lib: Library, options: CompileOptions, model_file: str, sha: str) -> LibraryCtx:
    own = sorted(f for f in lib.files if f.endswith(".c"))
    extra = ([f"{lib.name}.c"] if lib.shared else []) + ([f"{lib.name}_weights.c"] if lib.shared else [])
    headers = sorted({h for m in lib.members for h in re.findall(r"#include <([^>]+)>", lib.files[f"{m.name}.c"])})
    variants = tuple(VariantCtx(
        m.name, m.description, m.result.plan.arena_size,
        tuple(_dispatch_io(m, io, k, "INPUT") for k, io in enumerate(m.result.manifest["inputs"])),
        tuple(_dispatch_io(m, io, k, "OUTPUT") for k, io in enumerate(m.result.manifest["outputs"])))
        for m in lib.members) if lib.shared else ()
    return LibraryCtx(
        name=lib.name, guard=lib.guard, kiln_version=__version__, target=options.target.name,
        model_file=model_file, model_sha256=sha, members=tuple(m.name for m in lib.members),
        arena_bytes=lib.arena_bytes, arena_align=lib.arena_align,
        sources=tuple(sorted(set(own + extra + [f"{lib.name}_arena.c"]))),
        target_cflags=options.target.cflags, system_headers=tuple(headers),
        consts=tuple(lib.shared.decls) if lib.shared else (),
        weights_bytes=sum(lib.shared.nbytes.values()) if lib.shared else 0, variants=variants,
        input_count=len(variants[0].inputs) if variants else 0,
        output_count=len(variants[0].outputs) if variants else 0)


def _common_manifest(lib: Library, ctx: LibraryCtx) -> dict:
    ms = [m.result.manifest for m in lib.members]
    return {
        "name": lib.name, "library": True, "kiln_version": __version__, "target": ctx.target,
        "arena_bytes": lib.arena_bytes,
        "arena_lower_bound_bytes": max(m["arena_lower_bound_bytes"] for m in ms),
        "planner_status": sorted({m["planner_status"] for m in ms}),
        "arena_separate_builds_bytes": sum(m["arena_bytes"] for m in ms),
        "ops": sorted({op for m in ms for op in m["ops"]}),
        "kernels": sorted({k for m in ms for k in m["kernels"]}),
        "fusion_groups": [dict(g, member=m["name"]) for m in ms for g in m["fusion_groups"]],
        "sources": list(ctx.sources),
    }


def _variants_manifest(lib: Library, ctx: LibraryCtx, options: CompileOptions) -> dict:
    shared = lib.shared
    manifest = _common_manifest(lib, ctx)
    manifest.update(model_file=ctx.model_file, model_sha256=ctx.model_sha256, weights_bytes=ctx.weights_bytes,
                    weights_separate_builds_bytes=sum(m.result.manifest["weights_bytes"] for m in lib.members),
                    weights_shared_bytes=sum(b for s, b in shared.nbytes.items() if shared.users[s] > 1))
    kernels = lib.kernels
    manifest["kernels_shared"] = [k.kernel for k in kernels.shared]
    manifest["kernels_shared_in"] = f"{lib.name}_kernels.c" if kernels.shared else None
    one_copy, why = kernel_code(options)
    manifest["variant_kernels"] = {"shared": one_copy, "why": why}
    manifest["variants"] = []
    for m in lib.members:
        used = set(shared.symbols[m.name].values())
        manifest["variants"].append({
            "name": m.name, "entry": f"{m.name}_run", "shapes": m.description,
            "manifest": f"{m.name}.manifest.json", "arena_bytes": m.result.plan.arena_size,
            "weights_bytes": sum(shared.nbytes[s] for s in used),
            "weights_shared_bytes": sum(shared.nbytes[s] for s in used if shared.users[s] > 1),
            "weights_own_bytes": sum(shared.nbytes[s] for s in used if shared.users[s] == 1),
            "kernels_shared": kernels.shared_by(m.name),
            "kernels_own": [{"kernel": k, "why": why} for k, why in sorted(kernels.own[m.name].items())],
            "inputs": m.result.manifest["inputs"], "outputs": m.result.manifest["outputs"]})
    return manifest


def _finish(lib: Library, ctx: LibraryCtx, manifest: dict, options: CompileOptions) -> None:
    """The arena files, build glue and library manifest; the budget checked on the library."""
    lib.files.update({
        f"{lib.name}_arena.h": render_template("variants/arena.h.j2", l=ctx),
        f"{lib.name}_arena.c": render_template("variants/arena.c.j2", l=ctx),
        "kiln.mk": render_template("kiln.mk.j2", m=ctx),
        "kiln.cmake": render_template("kiln.cmake.j2", m=ctx),
        f"{lib.name}.manifest.json": json.dumps(manifest, indent=2, sort_keys=True) + "\n",
    })
    check_budget(manifest, ram_limit=options.ram_limit, flash_limit=options.flash_limit)
