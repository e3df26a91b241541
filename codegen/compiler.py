"""The whole pipeline, model file to generated files: import, optimise, fuse, choose kernels,
plan memory, emit."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from codegen import __version__, canaries, progress
from codegen.budget import check_budget, need_of
from codegen.emit.render import io_cname, render
from codegen.emit.weights_blob import blob_file, weights_manifest
from codegen.errors import KilnError
from codegen.frontends import load_model
from codegen.fusion.patch import patch_first_stage
from codegen.fusion.patch_views import apply_band_views
from codegen.fusion.planner import FusionPlan, plan_fusion
from codegen.ir.graph import Graph
from codegen.kernels.select import planned_calls
from codegen.limits import check_lowered
from codegen.lower import lower_graph
from codegen.lower.context import LowerContext, c_identifier
from codegen.lower.state import detach_state, state_values
from codegen.memory import Alias, Buffer, Plan, plan_memory
from codegen.memory.lifetimes import arena_aliases, arena_buffers
from codegen.memory.report import memory_markdown, memory_svg
from codegen.ops import bounded
from codegen.options import CompileOptions
from codegen.passes.pipeline import run_pipeline


@dataclass
class BuildResult:
    name: str
    graph: Graph
    lowered: LowerContext
    buffers: list[Buffer]
    plan: Plan
    files: dict[str, str]
    manifest: dict
    aliases: list[Alias] = field(default_factory=list)  # in-place reuse declared (plan.aliases: taken)
    fusion: FusionPlan | None = None  # the fusion planner's decisions (kiln build --explain-fusion)


def default_name(model: Path) -> str:
    return c_identifier(model.stem).lower()


def compile_graph(g: Graph, options: CompileOptions, *, name: str, model_file: str,
                  model_sha256: str) -> BuildResult:
    """The stages in order: passes, fusion, kernels, memory, emit."""
    optimised = run_pipeline(g, dump_dir=options.dump_ir)
    fusion, fused, patched = _fuse(g, optimised, options)
    lowered = _lower(fused, options)
    buffers, aliases, plan, guard = _plan(lowered, options)
    files = render(lowered, plan, name=name, model_file=model_file, model_sha256=model_sha256,
                   canaries=canaries.canary_plan(buffers, plan, [c.cname for c in lowered.calls], guard)
                   if guard else None, weights=options.weights)
    manifest = _manifest(lowered, plan, buffers, name, model_file, model_sha256)
    manifest["fusion_plan"] = fusion.manifest()
    if options.patch_stage:
        manifest["patch_stage"] = None if patched is None else patched.manifest()
    if options.weights == "blob":
        manifest["weights"] = weights_manifest(files[blob_file(name)], name, need_of(manifest).code_bytes)
    files[f"{name}.manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    temps = [a.temp for a in aliases if a.pair in set(plan.aliases) and a.temp is not None]
    files.update(_memory_report(plan, buffers + temps, name, manifest.get("state_bytes", 0)))
    return BuildResult(name, fused, lowered, buffers, plan, files, manifest, aliases, fusion=fusion)


def _fuse(source: Graph, g: Graph, options: CompileOptions):
    """Fusion groups decided by the cost model (codegen/fusion/planner.py); with --patch-stage
    the first CNN stage patch by patch when that pays (the planner then does not propose it)."""
    fusion = plan_fusion(g, options.target, options.optimize, source=source, ram_limit=options.ram_limit,
                         patch=not options.patch_stage, mode=options.fusion)
    if not options.patch_stage:
        return fusion, fusion.graph, None
    fused, patched = patch_first_stage(fusion.graph, options.target, options.patch_tiles)
    return fusion, fused, patched


def _lower(g: Graph, options: CompileOptions) -> LowerContext:
    """Every node's kernel calls (the kernel registry's choice) and constants, checked against
    the limits; patch bands become views, not copies. The specs that pack parameters check
    them before packing (codegen/kernels/linear.py)."""
    lowered = apply_band_views(lower_graph(detach_state(g), options.target, options.optimize))
    check_lowered(lowered)
    return lowered


def _plan(lowered: LowerContext, options: CompileOptions):
    """Buffer lifetimes, the in-place reuse the kernels allow, and the arena plan; a debug build
    (--debug-canaries) follows every buffer with a canary and takes no in-place reuse."""
    buffers = arena_buffers(lowered)
    aliases = arena_aliases(lowered, buffers)
    guard = canaries.canary_bytes(options.target.alignment) if options.canaries else 0
    if guard:
        buffers, aliases = canaries.padded(buffers, guard), []
    plan = plan_memory(buffers, options.planner, options.time_limit_s, aliases)  # plan.seconds: never into files
    return buffers, aliases, plan, guard


def compile_model(model: Path, options: CompileOptions) -> BuildResult:
    with progress.step(f"importing {model.name}"):
        g = load_model(model, options.input_shapes, options.specialized, check=options.check_model)
    data = model.read_bytes()
    name = options.name or default_name(model)
    if not name.isidentifier():
        raise KilnError(f"--name '{name}' is not a C identifier")
    try:
        with progress.step(f"compiling {model.name} (passes, fusion, lowering, arena)"):
            result = compile_graph(g, options, name=name, model_file=model.name,
                                   model_sha256=hashlib.sha256(data).hexdigest())
        check_budget(result.manifest, ram_limit=options.ram_limit, flash_limit=options.flash_limit)
        return result
    except KilnError as err:
        raise err.located(str(model)) from None


def _io_entry(ctx: LowerContext, name: str) -> dict:
    v = ctx.g.values[name]
    q = v.quant
    entry = {"name": name, "c_name": io_cname(ctx, name), "dtype": v.dtype, "shape": list(v.shape),
             "scale": None if q is None else (list(q.scale) if q.per_channel else q.s),
             "zero_point": None if q is None else (list(q.zero_point) if q.per_channel else q.zp),
             **bounded.manifest_entry(ctx.g, name)}  # a data-dependent length: its axis and bound
    if v.specialized is not None:  # the only value the code accepts (--specialize)
        entry["specialized"] = v.specialized.astype(np.float64 if v.specialized.dtype.kind == "f" else
                                                    np.int64).reshape(-1).tolist()
    return entry


def _manifest(ctx: LowerContext, plan: Plan, buffers: list[Buffer], name: str, model_file: str,
              sha: str) -> dict:
    calls = planned_calls(ctx, plan)
    return {
        "name": name,
        "model_file": model_file,
        "model_sha256": sha,
        "kiln_version": __version__,
        "target": ctx.target.name,
        "arena_bytes": plan.arena_size,
        "arena_lower_bound_bytes": plan.lower_bound,
        "arena_inplace_bound_bytes": plan.alias_bound if plan.alias_bound is not None else plan.lower_bound,
        "inplace": [{"output": o, "input": i} for o, i in plan.aliases],
        "arena_sum_of_buffers_bytes": sum(b.size for b in buffers),
        "planner": plan.planner,
        "planner_status": plan.status,
        "arena_proven_bound_bytes": plan.proven_bound if plan.proven_bound is not None else plan.lower_bound,
        "weights_bytes": sum(c.nbytes for c in ctx.consts),
        "ops": sorted({n.op for n in ctx.g.nodes}),
        "kernels": sorted({c.kernel for c in calls}),
        "fusion_groups": [{"kernel": c.kernel, "call": c.cname, "nodes": list(c.origin)} for c in calls],
        "inputs": [_io_entry(ctx, n) for n in ctx.g.inputs],
        "outputs": [_io_entry(ctx, n) for n in ctx.g.outputs],
        **_state_entries(ctx),
    }


def _state_entries(ctx: LowerContext) -> dict:
    """A streaming model's variables: RAM beside the arena, kept between calls (N_reset());
    nothing for a model without state."""
    values = [ctx.g.values[n] for n in state_values(ctx.g)]
    if not values:
        return {}
    return {"state_bytes": sum(v.nbytes for v in values),
            "state": [{"name": v.state.variable, "value": v.name, "dtype": v.dtype, "shape": list(v.shape),
                       "bytes": v.nbytes} for v in values]}


def _memory_report(plan: Plan, buffers: list[Buffer], name: str, state_bytes: int) -> dict[str, str]:
    """`N.memory.md` (figures and table of buffers) and `N.memory.svg` (the arena over time)."""
    svg = f"{name}.memory.svg"
    return {f"{name}.memory.md": memory_markdown(plan, buffers, name, svg_file=svg, state_bytes=state_bytes),
            svg: memory_svg(plan, buffers, name)}
