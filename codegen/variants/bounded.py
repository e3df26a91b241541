"""`--max-shape NAME=d0,...`: a model compiled once for the largest extent of one bounded
dimension, run on any extent up to it with one extra argument (`N_run_extent(..., extent)`),
its arena sized for the maximum. Soundness: codegen/variants/bounded_axis.py."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from codegen import __version__, progress
from codegen.budget import check_budget
from codegen.compiler import BuildResult, compile_graph, default_name
from codegen.emit.render import render_template
from codegen.errors import KilnError
from codegen.frontends import load_model
from codegen.ir.types import C_TYPES
from codegen.lower.kernel import ConstArray
from codegen.options import CompileOptions
from codegen.variants.bounded_axis import BoundedAxis, bounded_axes
from codegen.variants.build import LibraryCtx
from codegen.variants.library import Library, Member, check_library_options, render_members
from codegen.variants.spec import declared_inputs
from codegen.variants.tflite_extent import reference_at_extent, tflite_declared_inputs


@dataclass(frozen=True)
class RuntimeArray:
    symbol: str
    length: int
    what: str


@dataclass(frozen=True)
class ExtentIO:
    cname: str
    ctype: str


@dataclass(frozen=True)
class BoundedOutput:
    index: int
    name: str
    axis: int


@dataclass(frozen=True)
class ExtentCtx:
    name: str
    guard: str
    kiln_version: str
    model_file: str
    target: str
    input: str
    input_index: int
    axis: int
    maximum: int
    inputs: tuple[ExtentIO, ...]
    outputs: tuple[ExtentIO, ...]
    bounded_outputs: tuple[BoundedOutput, ...]
    arrays: tuple[RuntimeArray, ...]


@dataclass
class BoundedBuild:
    lib: Library
    bounded: BoundedAxis
    manifest: dict  # the model's manifest, with its bounded dimension

    @property
    def member(self) -> Member:
        return self.lib.members[0]


def bounded_axis_of(model: Path, name: str, shape: tuple[int, ...]) -> int:
    """The axis `--max-shape` bounds: the one dimension the model leaves unknown in that input
    (ONNX: a symbolic or absent dimension; TFLite: -1 in the input's shape signature)."""
    suffix = model.suffix.lower()
    if suffix not in (".onnx", ".tflite"):
        raise KilnError("--max-shape takes an ONNX or TFLite model whose input leaves the bounded dimension unknown")
    declared = declared_inputs(model) if suffix == ".onnx" else tflite_declared_inputs(model)
    if name not in declared:
        raise KilnError(f"--max-shape names '{name}', which is not a model input "
                        f"(inputs: {', '.join(sorted(declared)) or 'none'})")
    dims = declared[name]
    unknown = [k for k, d in enumerate(dims or ()) if d is None]
    if dims is None or len(dims) != len(shape) or len(unknown) != 1:
        raise KilnError(f"--max-shape {name}: the model declares {list(dims) if dims else 'no shape'}; it must have "
                        f"{len(shape)} dimensions, exactly one of them unknown (the bounded one)")
    if any(d is not None and d != s for d, s in zip(dims, shape)):
        raise KilnError(f"--max-shape {name}={','.join(map(str, shape))} differs from the model's {list(dims)}")
    if shape[unknown[0]] < 1:
        raise KilnError(f"--max-shape {name}: the largest extent must be at least 1")
    return unknown[0]


def _runtime_arrays(result: BuildResult, bounded: BoundedAxis, name: str) -> dict[str, RuntimeArray]:
    """The sequence-length constant of every recurrent call (`lens` of the float recurrent
    kernels, `steps` of the integer LSTM), made a RAM array the extent fills."""
    arrays = {}
    written = {o for n in result.graph.nodes if n.name in bounded.recurrent for o in n.outputs}
    for call in result.lowered.calls:
        lens = call.params.get("lens", call.params.get("steps"))
        if isinstance(lens, ConstArray) and written & set(call.writes):
            arrays[lens.name] = RuntimeArray(f"{name}_extent_{lens.name}", int(lens.data.size),
                                             f"sequence length of {call.cname}")
    return arrays


def compile_bounded(model: Path, options: CompileOptions, max_shapes: dict[str, tuple[int, ...]]) -> BoundedBuild:
    check_library_options(options, "bounded dimension")
    if len(max_shapes) != 1:
        raise KilnError("--max-shape bounds one dimension of one input; give it once")
    ((input_name, shape),) = max_shapes.items()
    axis = bounded_axis_of(model, input_name, shape)
    name = options.name or default_name(model)
    if not name.isidentifier():
        raise KilnError(f"--name '{name}' is not a C identifier")
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    opts = replace(options, input_shapes={**options.input_shapes, input_name: shape})
    try:
        with progress.step(f"compiling {model.name} for the largest extent {shape[axis]}"):
            g = load_model(model, opts.input_shapes, opts.specialized, check=opts.check_model)
            result = compile_graph(g, opts, name=name, model_file=model.name, model_sha256=sha)
        bounded = bounded_axes(result.graph, input_name, axis)
    except KilnError as err:
        raise err.located(str(model)) from None
    arrays = _runtime_arrays(result, bounded, name)
    lib = Library(name, name.upper(), [Member(name, result, model.name, sha)], max(result.plan.arena_size, 1),
                  options.target.alignment)
    render_members(lib, options, share=False, runtime={k: a.symbol for k, a in arrays.items()},
                   links=(f"{name}_extent.c",))
    manifest = dict(result.manifest)
    inputs, outputs = manifest["inputs"], manifest["outputs"]
    manifest["bounded_dimension"] = {
        "input": input_name, "axis": axis, "max_extent": shape[axis], "entry": f"{name}_run_extent",
        "outputs": [{"name": o["name"], "axis": bounded.axes[o["name"]]} for o in outputs if o["name"] in bounded.axes],
        "recurrent_nodes": list(bounded.recurrent)}
    ectx = ExtentCtx(name, lib.guard, __version__, model.name, options.target.name, input_name,
                     [io["name"] for io in inputs].index(input_name), axis, shape[axis],
                     tuple(ExtentIO(io["c_name"], C_TYPES[io["dtype"]]) for io in inputs),
                     tuple(ExtentIO(io["c_name"], C_TYPES[io["dtype"]]) for io in outputs),
                     tuple(BoundedOutput(k, o["name"], bounded.axes[o["name"]]) for k, o in enumerate(outputs)
                           if o["name"] in bounded.axes), tuple(arrays.values()))
    sources = (f"{name}.c", f"{name}_weights.c", f"{name}_arena.c", f"{name}_extent.c")
    lctx = LibraryCtx(name=name, guard=lib.guard, kiln_version=__version__, target=options.target.name,
                      model_file=model.name, model_sha256=sha, members=(name,), arena_bytes=lib.arena_bytes,
                      arena_align=lib.arena_align, sources=sources, target_cflags=options.target.cflags,
                      system_headers=tuple(("math.h",) if "<math.h>" in lib.files[f"{name}.c"] else ()),
                      runtime_arrays=ectx.arrays, max_extent=shape[axis])
    manifest["links_with"] = list(sources[2:])
    lib.files.update({
        f"{name}_arena.h": render_template("variants/arena.h.j2", l=lctx),
        f"{name}_arena.c": render_template("variants/arena.c.j2", l=lctx),
        f"{name}_extent.h": render_template("variants/extent.h.j2", e=ectx),
        f"{name}_extent.c": render_template("variants/extent.c.j2", e=ectx),
        "kiln.mk": render_template("kiln.mk.j2", m=lctx),
        "kiln.cmake": render_template("kiln.cmake.j2", m=lctx),
        f"{name}.manifest.json": json.dumps(manifest, indent=2, sort_keys=True) + "\n",
    })
    result.manifest = manifest
    check_budget(manifest, ram_limit=options.ram_limit, flash_limit=options.flash_limit)
    return BoundedBuild(lib, bounded, manifest)


def default_extents(maximum: int) -> tuple[int, ...]:
    """The maximum, the minimum and one between."""
    return tuple(sorted({1, (maximum + 1) // 2, maximum}))


def at_extent(build: BoundedBuild, extent: int) -> BuildResult:
    """The bounded build run at one extent, as a build of its own (a test entry point
    `<N>_at_<extent>_run` calls `<N>_run_extent`; buffers keep their largest shapes)."""
    m = build.member
    name = f"{m.name}_at_{extent}"
    io = lambda e: ExtentIO(e["c_name"], C_TYPES[e["dtype"]])  # noqa: E731
    ctx = {"name": name, "guard": name.upper(), "model": m.name, "extent": extent,
           "inputs": tuple(io(e) for e in build.manifest["inputs"]),
           "outputs": tuple(io(e) for e in build.manifest["outputs"])}
    manifest = dict(build.manifest, name=name, links_with=[f"{m.name}.c", f"{m.name}_weights.c",
                                                           *build.manifest["links_with"]])
    files = dict(build.lib.files)
    files[f"{name}.h"] = render_template("harness/extent_at.h.j2", t=ctx)
    files[f"{name}.c"] = render_template("harness/extent_at.c.j2", t=ctx)
    files[f"{name}.manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return replace(m.result, name=name, files=files, manifest=manifest)


def cut(arrays: dict[str, np.ndarray], axes: dict[str, int], extent: int) -> dict[str, np.ndarray]:
    """The first `extent` positions along the bounded axis of each array that carries it."""
    return {n: (np.take(a, np.arange(extent), axis=axes[n]) if n in axes else a) for n, a in arrays.items()}


def verify_bounded(model: Path, options: CompileOptions, max_shapes: dict, *, extents: tuple[int, ...] = (),
                   samples: int = 3, seed: int = 0, sanitize: bool = False, tolerance_lsb: int | None = None,
                   reference: Callable[[int], Path] | None = None):
    """[(extent, VerifyResult)]: the code compiled once, run at each extent (default: maximum,
    minimum and one between) and compared with the reference runtime run at that extent on
    `reference(extent)` (default: codegen/variants/tflite_extent.py's reference_at_extent)."""
    from codegen.verify.run import compare_with_reference, run_on_target
    from codegen.verify.samples import random_samples

    build = compile_bounded(model, options, max_shapes)
    axes = build.bounded.axes
    results = []
    with tempfile.TemporaryDirectory(prefix="kiln-extent-") as tmp:
        for extent in extents or default_extents(build.bounded.maximum):
            if not 1 <= extent <= build.bounded.maximum:
                raise KilnError(f"extent {extent} is outside 1..{build.bounded.maximum}")
            view = at_extent(build, extent)
            inputs = random_samples(view.manifest["inputs"], samples, seed)
            with progress.step(f"running at extent {extent}"):
                got = run_on_target(view, options, inputs, sanitize=sanitize)
            ref = reference(extent) if reference else reference_at_extent(model, extent, Path(tmp))
            results.append((extent, compare_with_reference(ref, build.manifest, [cut(s, axes, extent) for s in inputs],
                                                           [cut(o, axes, extent) for o in got], tolerance_lsb)))
    return build, results
