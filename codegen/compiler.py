"""The whole pipeline, model file to generated files: import, optimise, fuse, choose kernels,
plan memory, emit."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from codegen import __version__, canaries, progress
from codegen.budget import check_budget, need_of
from codegen.emit.render import io_cname, render
from codegen.emit.weights_blob import blob_file, weights_manifest
from codegen.errors import KilnError
from codegen.frontends import load_model, model_format
from codegen.fusion.patch import patch_first_stage
from codegen.fusion.planner import FusionPlan, plan_fusion
from codegen.ir.graph import Graph
from codegen.kernels.select import planned_calls
from codegen.limits import check_lowered
from codegen.lower import lower_graph
from codegen.lower.band_views import apply_band_views, concat_views
from codegen.lower.context import LowerContext, c_identifier
from codegen.lower.state import detach_state, state_values
from codegen.memory import Alias, Buffer, Plan, alias_bound, fit, plan_memory
from codegen.memory.arena_measure import arena_measure
from codegen.memory.lifetimes import arena_aliases, arena_buffers, io_bytes
from codegen.memory.report import StepInfo, memory_markdown, memory_svg, steps_of
from codegen.ops import bounded
from codegen.options import CompileOptions
from codegen.passes.pipeline import pipeline_for, run_pipeline


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
    fit: "fit.Fit | None" = None  # --ram-limit's search, when the build as asked did not fit
    fit_baseline: "fit.Trial | None" = None  # the build as asked, as the search saw it


def default_name(model: Path) -> str:
    return c_identifier(model.stem).lower()


def compile_graph(g: Graph, options: CompileOptions, *, name: str, model_file: str,
                  model_sha256: str, optimised: Graph | None = None) -> BuildResult:
    """The stages in order: passes (unless `optimised` is their result already), fusion,
    kernels, memory, emit."""
    optimised = optimised if optimised is not None else run_pipeline(g, dump_dir=options.dump_ir,
                                                                      passes=pipeline_for(options.numerics))
    fusion, fused, patched = _fuse(g, optimised, options)
    lowered = _lower(fused, options)
    buffers, aliases, plan, guard = _plan(lowered, options)
    viewed = concat_views(lowered)  # producers writing into their Concat's output: where no larger
    if viewed is not None:
        planned = _plan(viewed, options)
        if planned[2].arena_size <= plan.arena_size:
            lowered, (buffers, aliases, plan, guard) = viewed, planned
    files, manifest = _emit(lowered, buffers, aliases, plan, guard, fusion, patched, options,
                            name=name, model_file=model_file, model_sha256=model_sha256)
    return BuildResult(name, fused, lowered, buffers, plan, files, manifest, aliases, fusion=fusion)


def _fuse(source: Graph, g: Graph, options: CompileOptions):
    """Fusion groups decided by the cost model (codegen/fusion/planner.py); with --patch-stage
    the first CNN stage patch by patch when that pays (the planner then does not propose it)."""
    arena = arena_measure(options.target)  # the planned arena, by which patch candidates are measured
    fusion = plan_fusion(g, options.target, options.optimize, source=source, ram_limit=options.ram_limit,
                         patch=not options.patch_stage, mode=options.fusion, arena=arena)
    if not options.patch_stage:
        return fusion, fusion.graph, None
    fused, patched = patch_first_stage(fusion.graph, arena, options.patch_tiles)
    return fusion, fused, patched


def _lower(g: Graph, options: CompileOptions) -> LowerContext:
    """Every node's kernel calls (the kernel registry's choice) and constants, checked against
    the limits; patch bands become views, not copies. The specs that pack parameters check
    them before packing (codegen/kernels/linear.py)."""
    lowered = apply_band_views(lower_graph(detach_state(g), options.target, options.optimize,
                                           frozenset(options.reference_kernels), options.compact_kernels))
    check_lowered(lowered)
    return lowered


def _plan(lowered: LowerContext, options: CompileOptions):
    """Buffer lifetimes, the in-place reuse the kernels allow, and the arena plan; a debug build
    (--debug-canaries) follows every buffer with a canary and takes no in-place reuse."""
    buffers = arena_buffers(lowered, options.io_in_arena)
    aliases = arena_aliases(lowered, buffers)
    guard = canaries.canary_bytes(options.target.alignment) if options.canaries else 0
    if guard:
        buffers, aliases = canaries.padded(buffers, guard), []
    plan = plan_memory(buffers, options.planner, options.time_limit_s, aliases)  # plan.seconds: never into files
    return buffers, aliases, plan, guard


def _emit(lowered: LowerContext, buffers: list[Buffer], aliases: list[Alias], plan: Plan, guard: int,
          fusion: FusionPlan, patched, options: CompileOptions, *, name: str, model_file: str,
          model_sha256: str) -> tuple[dict[str, str], dict]:
    """The generated files: the C sources, the manifest (with the fusion and patch decisions)
    and the memory report."""
    files = render(lowered, plan, name=name, model_file=model_file, model_sha256=model_sha256,
                   canaries=canaries.canary_plan(buffers, plan, [c.cname for c in lowered.calls], guard)
                   if guard else None, weights=options.weights, arena=options.arena,
                   io_in_arena=options.io_in_arena)
    manifest = _manifest(lowered, plan, buffers, name, model_file, model_sha256)
    manifest["ram"] = ram_entry(lowered, plan, options)
    if options.arena != "static":
        manifest["arena_placement"] = options.arena
    if options.numerics != "tflite":  # whose int8 arithmetic: `kiln verify` compares with that runtime's
        manifest["numerics"] = options.numerics
    manifest["fusion_plan"] = fusion.manifest()
    if options.patch_stage:
        manifest["patch_stage"] = None if patched is None else patched.manifest()
    if options.weights == "blob":
        manifest["weights"] = weights_manifest(files[blob_file(name)], name, need_of(manifest).code_bytes)
    files[f"{name}.manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    temps = [a.temp for a in aliases if a.pair in set(plan.aliases) and a.temp is not None]
    files.update(_memory_report(plan, buffers + temps, name, steps_of(lowered), need_of(manifest).code_bytes,
                                manifest.get("state_bytes", 0)))
    return files, manifest


def ram_entry(lowered: LowerContext, plan: Plan, options: CompileOptions) -> dict:
    """The model's RAM (stack aside): the arena, plus the inputs and outputs when they are the
    caller's buffers. With --io-in-arena, also the figures of the same build with I/O outside
    (planned with the same planner), so that the two ways can be compared."""
    io = io_bytes(lowered)
    entry = {"arena_bytes": plan.arena_size, "io_bytes": io, "io_in_arena": options.io_in_arena,
             "total_bytes": plan.arena_size + (0 if options.io_in_arena else io)}
    if options.io_in_arena:
        buffers = arena_buffers(lowered)
        outside = plan_memory(buffers, options.planner, options.time_limit_s, arena_aliases(lowered, buffers))
        entry["io_outside_arena"] = {"arena_bytes": outside.arena_size, "total_bytes": outside.arena_size + io}
    return entry


def check_arena_options(options: CompileOptions) -> None:
    """Combinations the arena options do not support, as one line before any work."""
    if options.arena not in ("static", "caller"):
        raise KilnError(f"--arena must be 'static' or 'caller', not '{options.arena}'")
    if options.canaries and (options.arena != "static" or options.io_in_arena):
        raise KilnError("--debug-canaries guards the static arena: build it without --arena caller "
                        "and --io-in-arena")


def with_numerics(options: CompileOptions) -> CompileOptions:
    """--numerics onnxruntime: the onnxruntime kernel variant first on the target
    (codegen/kernels/onnxruntime/), so that it computes every int8 request it has a kernel for,
    and no planner fusion: a fused int8 chain (fused_elementwise_s8) would compute TFLite's
    arithmetic."""
    if options.numerics == "tflite":
        return options
    if options.numerics != "onnxruntime":
        raise KilnError(f"--numerics must be 'tflite' or 'onnxruntime', not '{options.numerics}'")
    if options.target.variants[0] in ("onnxruntime", "onnxruntime_dsp"):  # variants chosen by the caller
        return replace(options, fusion="off")
    # on DSP cores, onnxruntime's requantization over the DSP kernels' sums first
    # (codegen/kernels/onnxruntime_dsp/)
    ort = ("onnxruntime_dsp", "onnxruntime") if "cortex_m_dsp" in options.target.variants else ("onnxruntime",)
    return replace(options, target=replace(options.target, variants=ort + options.target.variants), fusion="off")


def compile_model(model: Path, options: CompileOptions, fit_flash: int | None = None) -> BuildResult:
    """`fit_flash`: a flash budget to fall back for (a --board's); --flash-limit is one too."""
    check_arena_options(options)
    if options.numerics == "onnxruntime" and model_format(model) != "onnx":
        raise KilnError("--numerics onnxruntime is onnxruntime's arithmetic for ONNX models; "
                        "a TFLite model runs in TFLite's (the default)", where=str(model))
    options = with_numerics(options)
    with progress.step(f"importing {model.name}"):
        g = load_model(model, options.input_shapes, options.specialized, check=options.check_model)
    data = model.read_bytes()
    name = options.name or default_name(model)
    if not name.isidentifier():
        raise KilnError(f"--name '{name}' is not a C identifier")
    try:
        naming = {"name": name, "model_file": model.name, "model_sha256": hashlib.sha256(data).hexdigest()}
        with progress.step(f"compiling {model.name} (passes, fusion, lowering, arena)"):
            result = compile_graph(g, options, **naming)
        flash = options.flash_limit if options.flash_limit is not None else fit_flash
        if flash is not None and options.optimize == "speed" and need_of(result.manifest).flash_bytes > flash:
            # The speed build's widened weights (int16 fully connected rows, wide convolution
            # weights) buy instructions with flash; where that does not fit, the bytes-only
            # build, before any --ram-limit search (which then searches among bytes-only builds).
            with progress.step(f"rebuilding {model.name} with --optimize size to fit {flash} B of flash"):
                smaller = compile_graph(g, replace(options, optimize="size"), **naming)
            if need_of(smaller.manifest).flash_bytes < need_of(result.manifest).flash_bytes:
                result, options = smaller, replace(options, optimize="size")
        if options.ram_limit is not None and need_of(result.manifest).ram_bytes > options.ram_limit \
                and not options.canaries:
            with progress.step(f"searching for a build of {model.name} within --ram-limit"):
                result = fit_ram(g, options, naming, need_of(result.manifest).ram_bytes)
        check_budget(result.manifest, ram_limit=options.ram_limit, flash_limit=options.flash_limit)
        return result
    except KilnError as err:
        raise err.located(str(model)) from None


def fit_ram(g: Graph, options: CompileOptions, naming: dict, asked: int) -> BuildResult:
    """--ram-limit when the build as asked does not fit: the combinations of in-place or
    scratch-free reference kernels, patch stage and I/O in the arena (codegen/memory/fit.py)
    priced, planned fastest first, the first that fits built. When none fits, one line with the
    least RAM reached and how."""
    optimised = run_pipeline(g, passes=pipeline_for(options.numerics))
    configs, price, plan, refine, bound, price_floor = ram_trials(g, optimised, options)
    found = fit.search(configs, price, plan, options.ram_limit, refine, bound, price_floor)
    if found.chosen is None:
        s = found.smallest
        raise KilnError(f"needs {asked} B of RAM, budget is {options.ram_limit} B (--ram-limit); "
                        f"the least Kiln reaches is {s.ram_bytes} B ({s.config.describe()}), "
                        f"{s.ram_bytes - options.ram_limit} B over")
    c = found.chosen.config
    chosen = replace(options, reference_kernels=c.reference, patch_stage=c.patch_stage, io_in_arena=c.io_in_arena,
                     compact_kernels=c.compact, ram_limit=None)
    result = compile_graph(g, chosen, optimised=optimised, **naming)
    result.fit, result.fit_baseline = found, found.trials[0]
    result.manifest["ram_fit"] = found.manifest()
    result.files[f"{result.name}.manifest.json"] = json.dumps(result.manifest, indent=2, sort_keys=True) + "\n"
    return result


def ram_trials(g: Graph, optimised: Graph, options: CompileOptions):
    """The configurations to try (the build as asked first), how to price one (the cost model),
    how to plan one into a `fit.Trial` (greedy: fast), how to plan one again with the
    build's planner (never worse than greedy), the RAM no plan of one goes below and a cheap
    floor of its price."""
    base = replace(options, ram_limit=None, reference_kernels=(), compact_kernels=False)
    fused: dict[bool, tuple] = {}  # the patch stage searched only when a build with it might be taken

    def fused_of(patch: bool) -> tuple:
        if patch not in fused:
            fused[patch] = _fuse(g, optimised, replace(base, patch_stage=patch))[1:]
        return fused[patch]

    lowered: dict[tuple, LowerContext] = {}

    def lower(patch: bool, reference: tuple[str, ...], compact: bool = False) -> LowerContext:
        if (patch, reference, compact) not in lowered:
            lowered[patch, reference, compact] = _lower(fused_of(patch)[0], replace(base, reference_kernels=reference,
                                                                                 compact_kernels=compact))
        return lowered[patch, reference, compact]

    asked = lower(options.patch_stage, ())
    everything = lower(options.patch_stage, tuple(sorted({fit.request_stem(c) for c in asked.calls})))
    stems = sorted(set(fit.inplace_stems(asked.calls, everything.calls)) |
                   set(fit.scratch_stems(asked.calls, everything.calls)))
    patch = not options.patch_stage  # if the model has a patch stage (`price`)
    compact = fit.scratch_of(lower(options.patch_stage, (), True).calls) != fit.scratch_of(asked.calls)
    configs = [c for c in fit.configs(stems, patch, io=not options.io_fixed, compact=compact)
               if (c.io_in_arena or not options.io_in_arena) and (c.patch_stage or not options.patch_stage)]
    planner = "linear" if options.planner == "linear" else "greedy"

    def trial(c: fit.Config, how: str) -> fit.Trial:
        ctx = lower(c.patch_stage or options.patch_stage, c.reference, c.compact)
        buffers = arena_buffers(ctx, c.io_in_arena)
        plan = plan_memory(buffers, how, options.time_limit_s, arena_aliases(ctx, buffers))
        io = 0 if c.io_in_arena else io_bytes(ctx)
        floor = plan.proven_bound if plan.proven_bound is not None else plan.lower_bound
        return fit.Trial(c, plan.arena_size, plan.arena_size + io, fit.program_cycles(ctx.g, ctx.calls, options.target),
                         plan.status, floor + io)

    prices: dict[tuple, int] = {}

    def price(c: fit.Config) -> int | None:  # compact kernels are priced as the fast paths they replace
        if c.patch_stage and not options.patch_stage and fused_of(True)[1] is None:
            return None
        key = (c.patch_stage or options.patch_stage, c.reference)
        if key not in prices:
            ctx = lower(*key)
            prices[key] = fit.program_cycles(ctx.g, ctx.calls, options.target)
        return prices[key]

    def bound(c: fit.Config) -> int:  # no plan of `c` goes below: what a plan need not be made for
        ctx = lower(c.patch_stage or options.patch_stage, c.reference, c.compact)
        buffers = arena_buffers(ctx, c.io_in_arena)
        return alias_bound(buffers, arena_aliases(ctx, buffers)) + (0 if c.io_in_arena else io_bytes(ctx))

    def price_floor(c: fit.Config) -> int | None:  # the patch stage recomputes its halo: slower than without
        if c.patch_stage and not options.patch_stage and True not in fused:
            return price(replace(c, patch_stage=False)) + 1
        return price(c)

    refine = None if options.planner == planner else (lambda t: trial(t.config, options.planner))
    return configs, price, lambda c: trial(c, planner), refine, bound, price_floor


def _io_entry(ctx: LowerContext, name: str) -> dict:
    v = ctx.g.values[name]
    q = v.quant
    entry = {"name": name, "c_name": io_cname(ctx, name), "dtype": v.dtype, "shape": list(v.shape),
             "scale": None if q is None else (list(q.scale) if q.per_channel else q.s),
             "zero_point": None if q is None else (list(q.zero_point) if q.per_channel else q.zp),
             **bounded.manifest_entry(ctx.g, name)}  # a data-dependent length: its axis and bound
    if v.open_dims:  # left open by the model, compiled at their size in "shape"
        entry["open_dims"] = list(v.open_dims)
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


def _memory_report(plan: Plan, buffers: list[Buffer], name: str, steps: tuple[StepInfo, ...],
                   code_bytes: int, state_bytes: int) -> dict[str, str]:
    """`N.memory.md` (figures and table of buffers) and `N.memory.svg` (the arena over time,
    kernels named, and flash: weights per step and code)."""
    svg = f"{name}.memory.svg"
    return {f"{name}.memory.md": memory_markdown(plan, buffers, name, svg_file=svg, state_bytes=state_bytes),
            svg: memory_svg(plan, buffers, name, steps, code_bytes)}
