"""The `kiln` subcommands on a library: `build` with --variant or several models, and `verify`,
`run`, `profile` with --variant (every variant checked or measured, as it links in the library)."""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codegen import progress
from codegen.compiler import BuildResult
from codegen.errors import KilnError, VerificationError
from codegen.options import CompileOptions
from codegen.variants.bounded import at_extent, compile_bounded, cut, default_extents, verify_bounded
from codegen.variants.build import compile_models, compile_variants
from codegen.variants.library import Library, member_view
from codegen.variants.spec import parse_variants
from codegen.variants.tflite_extent import reference_for_shapes


def build_library(args, options: CompileOptions) -> Library:
    """The library `kiln build` writes: variants of one model, or several models."""
    models = [args.model, *getattr(args, "more_models", [])]
    _one_kind(args, len(models))
    if len(models) > 1:
        return compile_models(models, options)
    if args.max_shape:
        return compile_bounded(args.model, options, dict(args.max_shape)).lib
    return compile_variants(args.model, options, parse_variants(args.variant, args.model))


def _one_kind(args, models: int) -> None:
    """--variant, --max-shape and several models are three kinds of library: one at a time."""
    kinds = [k for k, given in (("--variant", args.variant), ("--max-shape", args.max_shape),
                                ("several models", models > 1)) if given]
    if len(kinds) > 1:
        raise KilnError(f"{kinds[0]} and {kinds[1]} do not combine: build one kind of library at a time")


def build_summary(lib: Library) -> str:
    """One line per member and one for the library (what `kiln build` prints)."""
    lines = []
    bounded = json.loads(lib.files[f"{lib.name}.manifest.json"]).get("bounded_dimension")
    if bounded:
        return (f"kiln: {lib.name}_run_extent: input '{bounded['input']}' axis {bounded['axis']} of extent 1 to "
                f"{bounded['max_extent']}, arena {lib.arena_bytes} B (sized for the largest)")
    for m in lib.members:
        mf = m.result.manifest
        what = f" ({m.description})" if m.description else ""
        lines.append(f"kiln:   {m.name}_run{what}: arena {mf['arena_bytes']} B, weights {mf['weights_bytes']} B, "
                     f"{len(mf['fusion_groups'])} kernel calls")
    separate = sum(m.result.manifest["arena_bytes"] for m in lib.members)
    weights = sum(m.result.manifest["weights_bytes"] for m in lib.members)
    own = sum(lib.shared.nbytes.values()) if lib.shared else weights
    lines.append(f"kiln: one arena of {lib.arena_bytes} B for {len(lib.members)} "
                 f"{'variants' if lib.shared else 'models'} (separate builds: {separate} B); weights {own} B "
                 f"(separate builds: {weights} B)")
    return "\n".join(lines)


@dataclass(frozen=True)
class MemberCheck:
    name: str
    description: str
    result: object  # codegen.verify.run.VerifyResult


def verify_library(model: Path, options: CompileOptions, variants: list[str], *, samples: int, seed: int,
                   sanitize: bool = False, tolerance_lsb: int | None = None) -> list[MemberCheck]:
    """Every variant built into one library, run on the target as it links there (shared arena
    and weights) and compared with the reference runtime."""
    from codegen.verify.run import compare_with_reference, run_on_target
    from codegen.verify.samples import random_samples

    specs = parse_variants(variants, model)
    lib = compile_variants(model, options, specs)
    checks = []
    with tempfile.TemporaryDirectory(prefix="kiln-variant-") as tmp:
        for m, spec in zip(lib.members, specs):
            view = member_view(lib, m)
            inputs = random_samples(view.manifest["inputs"], samples, seed)
            with progress.step(f"variant {m.name}: running {samples} samples"):
                got = run_on_target(view, options, inputs, sanitize=sanitize)
            reference = reference_for_shapes(model, dict(spec.input_shapes), Path(tmp))
            checks.append(MemberCheck(m.name, m.description,
                                      compare_with_reference(reference, view.manifest, inputs, got, tolerance_lsb)))
    return checks


def cmd_verify(args, options: CompileOptions) -> int:
    """`kiln verify MODEL --variant ...` or `kiln verify A B ...` (the models in one image)."""
    _one_kind(args, 1 + len(args.more_models))
    if args.max_shape:
        _, results = verify_bounded(args.model, options, dict(args.max_shape), samples=args.samples, seed=args.seed,
                                    sanitize=args.sanitize, tolerance_lsb=args.tolerance_lsb)
        checks = [MemberCheck(f"extent {extent}", "compiled once for the largest", res) for extent, res in results]
    elif args.more_models:
        from codegen.variants.chain import verify_models

        _, results = verify_models([args.model, *args.more_models], options, samples=args.samples, seed=args.seed,
                                   sanitize=args.sanitize, tolerance_lsb=args.tolerance_lsb)
        checks = [MemberCheck(name, "in one image, one arena", res) for name, res in results]
    else:
        checks = verify_library(args.model, options, args.variant, samples=args.samples, seed=args.seed,
                                sanitize=args.sanitize, tolerance_lsb=args.tolerance_lsb)
    for c in checks:
        for o in c.result.outputs:
            lsb = f"max {o.max_lsb} LSB, " if o.lsb is not None else ""
            print(f"  {c.name} ({c.description}): {o.name}: {o.dtype}, {lsb}max abs error {o.max_abs_error:g}, "
                  f"relative {o.max_rel_error:.3g}, {o.mismatches} of {o.elements} elements out of tolerance"
                  f" -> {'ok' if o.ok else 'MISMATCH'}")
    bad = [c.name for c in checks if not c.result.ok]
    if bad:
        raise VerificationError(f"{args.model}: {', '.join(bad)} differ(s) from the reference runtime")
    print(f"kiln verify: ok ({len(checks)} {'models' if args.more_models else 'extents' if args.max_shape else 'variants'})")
    return 0


def _matches(io: dict, arr: np.ndarray) -> bool:
    value = io.get("specialized")
    return tuple(arr.shape) == tuple(io["shape"]) and (
        value is None or np.array_equal(arr.reshape(-1).astype(np.float64), np.asarray(value, np.float64)))


def select_member(lib: Library, arrays: list[np.ndarray]) -> BuildResult:
    """The variant built for these inputs (shapes and specialised values), as the dispatcher
    selects; an error naming the variants when none was."""
    for m in lib.members:
        ios = m.result.manifest["inputs"]
        if len(ios) == len(arrays) and all(_matches(io, a) for io, a in zip(ios, arrays)):
            return member_view(lib, m)
    built = "; ".join(f"{m.name}: {m.description}" for m in lib.members)
    raise KilnError(f"no variant was built for inputs of shape {', '.join(str(list(a.shape)) for a in arrays)} "
                    f"(variants: {built})")


def cmd_run(args, options: CompileOptions) -> int:
    from codegen.verify.npy_file import read_npy
    from codegen.verify.run import load_inputs, run_on_target, save_outputs

    _one_kind(args, 1)
    if args.max_shape:
        view, sample, axes, extent = _at_extent_of_inputs(args, options)
        (outputs,) = [cut(o, axes, extent) for o in run_on_target(view, options, [sample])]
    else:
        lib = compile_variants(args.model, options, parse_variants(args.variant, args.model))
        view = select_member(lib, [read_npy(p) for p in args.input])
        (outputs,) = run_on_target(view, options, [load_inputs(view, args.input)])
    print(f"kiln: ran {view.name}")
    save_outputs(view.manifest, outputs, args.output_dir, [args.model, *args.input])
    return 0


def _at_extent_of_inputs(args, options: CompileOptions):
    """`kiln run --max-shape`: the extent is the input file's along the bounded axis; the input is
    padded with zeros to the largest shape (the code reads only its first positions)."""
    from codegen.verify.npy_file import read_npy

    build = compile_bounded(args.model, options, dict(args.max_shape))
    b, ios = build.bounded, build.manifest["inputs"]
    if len(args.input) != len(ios):
        raise KilnError(f"the model has {len(ios)} input(s); {len(args.input)} --input file(s) given")
    sample, extent = {}, None
    for io, path in zip(ios, args.input):
        arr, shape = read_npy(path), list(io["shape"])
        if io["name"] == b.input:
            extent = arr.shape[b.axis] if arr.ndim == len(shape) else 0
            shape[b.axis] = extent
            if list(arr.shape) != shape or not 1 <= extent <= b.maximum:
                raise KilnError(f"input '{io['name']}' takes shape {io['shape']} with axis {b.axis} from 1 to "
                                f"{b.maximum}; the file has {list(arr.shape)}", where=str(path))
            pad = [(0, b.maximum - extent if k == b.axis else 0) for k in range(arr.ndim)]
            arr = np.pad(arr, pad)
        sample[io["name"]] = arr.reshape(io["shape"])
    return at_extent(build, extent), sample, b.axes, extent


def profile_library(model: Path, options: CompileOptions, variants: list[str], *, samples: int = 1,
                    seed: int = 0, max_shapes: dict | None = None,
                    extents: tuple[int, ...] = ()) -> list[tuple[str, str, object]]:
    """Each variant's `Profile` (codegen/verify/profile.py), measured as it links in the library;
    with `max_shapes`, the bounded build's at each extent (default: maximum, minimum, one between)."""
    from codegen.verify.profile import build_plugin, profile_generated, profile_generated_user
    from codegen.verify.samples import random_samples

    if options.target.runner not in ("qemu-system", "qemu-user"):
        raise KilnError(f"kiln profile counts instructions on an emulated board; target '{options.target.name}' "
                        f"has none (use a cortex-m or cortex-a target)")
    profile = profile_generated_user if options.target.runner == "qemu-user" else profile_generated
    result = []
    if max_shapes:
        build = compile_bounded(model, options, max_shapes)
        views = [(f"extent {e}", "compiled once for the largest", at_extent(build, e))
                 for e in extents or default_extents(build.bounded.maximum)]
    else:
        lib = compile_variants(model, options, parse_variants(variants, model))
        views = [(m.name, m.description, member_view(lib, m)) for m in lib.members]
    with tempfile.TemporaryDirectory(prefix="kiln-plugin-") as tmp:
        plugin = build_plugin(Path(tmp))
        for name, description, view in views:
            inputs = random_samples(view.manifest["inputs"], samples, seed)
            with progress.step(f"{name}: counting instructions in QEMU"):
                result.append((name, description, profile(view.files, view.name, view.manifest, options.target,
                                                          inputs, plugin=plugin)))
    return result


def cmd_profile(args, options: CompileOptions) -> int:
    from codegen.verify.profile import format_profile

    _one_kind(args, 1)
    if args.write_manifest:  # the manifest to update, checked before the long measurement
        from codegen.compiler import default_name
        from codegen.variants.kernels import kernel_code
        from codegen.variants.measured import library_manifest

        library_manifest(args.write_manifest, options.name or default_name(args.model), args.model,
                         options.target.name, None if args.max_shape else kernel_code(options)[0])
    profiles = profile_library(args.model, options, args.variant, samples=args.samples, seed=args.seed,
                               max_shapes=dict(args.max_shape))
    for name, description, prof in profiles:
        print(format_profile(prof, f"{args.model.name} {name} ({description})"), end="")
    print("kiln profile: instructions from the call into the model to its return")
    for name, description, prof in profiles:
        print(f"  {name:<16} {description:<40} {min(prof.totals):>14,}")
    if args.write_manifest:
        from codegen.variants.kernels import kernel_code
        from codegen.variants.measured import write_instructions

        path = write_instructions(args.write_manifest, options.name or default_name(args.model), args.model,
                                  options.target.name, profiles[0][2].board,
                                  [(n, d, min(p.totals)) for n, d, p in profiles], bounded=bool(args.max_shape),
                                  shared_kernels=kernel_code(options)[0])
        print(f"kiln profile: instructions written into {path}")
    sys.stdout.flush()
    return 0
