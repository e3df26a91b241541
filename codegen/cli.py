"""The `kiln` command: build, run, verify, profile, analyze, inspect.

Errors in the user's input are one line on stderr and exit status 2; a verification
mismatch exits 1; a crash inside Kiln is one line too (use --debug for the traceback).
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from pathlib import Path

from codegen import __version__, progress
from codegen.errors import KilnError, VerificationError, os_error
from codegen.targets import OPT_LEVELS, available_targets, load_target, with_kernels, with_opt_level
from codegen.targets.boards import available_boards


def _input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    name, sep, dims = text.rpartition("=")
    try:
        shape = tuple(int(d) for d in dims.split(","))
    except ValueError:
        shape = ()
    if not sep or not name or not shape or any(d < 0 for d in shape):  # a 0: a tensor with no elements
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=d0,d1,... with dimensions of at least 0")
    return name, shape


def _specialize(text: str) -> tuple[str, tuple[float, ...]]:
    name, sep, values = text.rpartition("=")
    try:
        parsed = tuple(int(v) if v.strip().lstrip("+-").isdigit() else float(v) for v in values.split(","))
    except ValueError:
        parsed = ()
    if not sep or not name or not parsed:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=v0,v1,... with numbers")
    return name, parsed


def _size(text: str) -> int:
    from codegen.budget import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_compile_options(p: argparse.ArgumentParser, target_required: bool = True) -> None:
    p.add_argument("model", type=Path, help="model file (.onnx or .tflite)")
    p.add_argument("--target", required=target_required,
                   help=f"target to compile for ({', '.join(available_targets())})"
                        + ("" if target_required else "; required unless --board names one"))
    p.add_argument("--name", help="C prefix of the generated code (default: from the model file name)")
    p.add_argument("--input-shape", action="append", type=_input_shape, default=[], metavar="NAME=d0,d1,...",
                   help="fix the shape of an input with unknown dimensions (repeatable)")
    p.add_argument("--specialize", action="append", type=_specialize, default=[], metavar="NAME=v0,v1,...",
                   help="compile for one value of an input that sizes tensors (a Range bound, a window "
                        "length, a loop count); the code returns an error for any other value (repeatable)")
    p.add_argument("--planner", choices=["auto", "cpsat", "greedy", "linear"], default="auto",
                   help="arena placement: auto = greedy, then CP-SAT if greedy is above the lower bound "
                        "(default: auto)")
    p.add_argument("--time-limit", type=float, default=10.0, metavar="S",
                   help="seconds the CP-SAT planner may take; the best plan found by then is used (default 10)")
    p.add_argument("--ram-limit", type=_size, metavar="BYTES",
                   help="fail unless the activation arena fits in BYTES (suffixes K, M, G: 64K)")
    p.add_argument("--flash-limit", type=_size, metavar="BYTES",
                   help="fail unless weights plus estimated code fit in BYTES (suffixes K, M, G: 1M)")
    p.add_argument("--numerics", choices=["tflite", "onnxruntime"], default="tflite",
                   help="int8 arithmetic: tflite = TFLite's fixed-point requantization (bit-exact with TFLite "
                        "Micro, the fastest on DSP cores); onnxruntime = onnxruntime's float requantization, "
                        "bit-exact with its CPU kernels for quantized ONNX models (default tflite)")
    p.add_argument("--optimize", choices=["speed", "size", "ram"], default="speed",
                   help="what the fusion planner minimises: estimated cycles, flash or arena (default speed)")
    p.add_argument("--patch-stage", action="store_true",
                   help="run the first layers of a CNN row band by row band (patch-based, as MCUNetV2) when "
                        "that lowers the arena; the halo rows are computed again (see codegen/fusion/patch.py)")
    p.add_argument("--patch-tiles", type=int, metavar="N",
                   help="with --patch-stage: split the stage into N row bands (default: the count that needs "
                        "the least RAM within the recomputation budget)")
    p.add_argument("--debug-canaries", action="store_true",
                   help="debug build: canary bytes around the arena and after every buffer, checked after "
                        "each kernel call; <name>_run returns <NAME>_ERR_CANARY if one changed")
    p.add_argument("--weights", choices=["const", "blob"], default="const",
                   help="const: weights as const arrays in <name>_weights.c (default); blob: in the separate "
                        "binary <name>.weights.bin, checked and loaded at run time by <name>_load_weights (OTA)")
    p.add_argument("--arena", choices=["static", "caller"], default="static",
                   help="static: the arena is an array in <name>.c (its section and alignment: the "
                        "KILN_ARENA_SECTION / KILN_ARENA_ALIGN macros, see <name>.h; default); caller: the "
                        "application provides it with <name>_init(arena, size), size and alignment checked")
    p.add_argument("--io-in-arena", action="store_true",
                   help="plan the inputs and outputs inside the arena (TFLite Micro's way): <name>_input_k() / "
                        "<name>_output_k() point at them, <name>_run() takes no buffers, and an input's bytes "
                        "are reused once it is read")
    p.add_argument("--kernels", metavar="V1,V2,...",
                   help="use only these kernel variants of the target (reference is always kept), e.g. "
                        "'reference' for the portable C kernels or 'neon' for NEON without dot product")
    p.add_argument("--quiet", action="store_true",
                   help="no progress line for the long steps (shown only when stderr is a terminal)")
    p.add_argument("--no-check-model", action="store_true",
                   help="compile an ONNX model that the full ONNX checker rejects (by default its findings "
                        "stop the build); Kiln's own checks still apply")
    p.add_argument("--variant", action="append", default=[], metavar="'NAME=d0,d1,...;NAME2=...'",
                   help="compile one more shape variant into one library (repeatable): items as --input-shape, "
                        "or --specialize for an input given as many values as it holds; one arena, shared "
                        "weights and a dispatcher (see codegen/variants/)")
    p.add_argument("--variant-kernels", choices=["auto", "shared", "own"], default="auto",
                   help="with --variant: a kernel the variants use alike is one function they all call (shared: "
                        "less flash) or a copy per variant that the compiler specialises for each call (own: "
                        "faster); auto: shared on Cortex-M (bare-metal) targets, own on the others")
    p.add_argument("--max-shape", action="append", type=_input_shape, default=[], metavar="NAME=d0,d1,...",
                   help="compile once for the largest extent of the one dimension the model leaves unknown in "
                        "that input, and take the actual extent at run time (<name>_run_extent); refused where "
                        "a smaller extent would change what is computed (see codegen/variants/bounded_axis.py)")
    p.add_argument("--opt-level", choices=list(OPT_LEVELS), metavar="{O2,Os,O3,...}",
                   help="compiler optimisation level of every build of the generated code (generated build "
                        "files, firmware of verify / run / profile) instead of the target's (-O2 on Cortex-M)")


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line with where to look, not argparse's usage block."""

    def error(self, message: str):
        self.exit(2, f"kiln: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="kiln", description="Compile ONNX / TFLite models to C99 for microcontrollers.")
    ap.add_argument("--version", action="version", version=f"kiln {__version__}")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("build", help="compile a model into C sources", description="Compile a model into C sources.")
    _add_compile_options(p, target_required=False)
    p.add_argument("more_models", type=Path, nargs="*", metavar="MODEL2",
                   help="more models for the same firmware: one shared arena (the largest need), one header "
                        "and one weights file per model")
    p.add_argument("-o", "--output", type=Path, required=True, help="output folder (replaced as a whole)")
    p.add_argument("--board", help="write a project for this board: startup code, linker script, main, Makefile "
                                   "(make, make run, make flash, make size); --target defaults to the board's "
                                   f"({', '.join(available_boards())})")
    p.add_argument("--console", choices=("uart", "semihosting"),
                   help="with --board: the project's console (its Makefile's default CONSOLE): the board's UART "
                        "(the default on real boards) or semihosting (the default on QEMU's boards)")
    p.add_argument("--sign-key", type=Path, metavar="KEY",
                   help="with --weights blob: sign the blob with this Ed25519 private key (a file of 32 "
                        "random bytes, or 64 hex digits); code built with KILN_BLOB_REQUIRE_SIGNATURE "
                        "refuses blobs not signed by its public key")
    p.add_argument("--dump-ir", type=Path, metavar="DIR",
                   help="write the IR before and after each optimisation pass into DIR (numbered files)")
    p.add_argument("--explain-fusion", action="store_true",
                   help="print each fusion candidate: the decision, the estimated cost with and without "
                        "fusion, and the reason")

    p = sub.add_parser("run", help="build, run on inputs, write outputs as .npy",
                       description="Build, run on the target (host or emulator) and write outputs as .npy files.")
    _add_compile_options(p)
    p.add_argument("--input", type=Path, action="append", required=True, metavar="X.npy",
                   help="input array, one per model input in order (repeatable)")
    p.add_argument("--output-dir", type=Path, required=True, help="folder for the output .npy files")

    p = sub.add_parser("verify", help="compare generated code with the reference runtime",
                       description="Compare generated code with the reference runtime on random inputs; "
                                   "exit 1 on mismatch.")
    _add_compile_options(p)
    p.add_argument("more_models", type=Path, nargs="*", metavar="MODEL2",
                   help="more models: all built as one library and run in one image from one shared arena")
    p.add_argument("--samples", type=int, default=20, help="number of random inputs (default 20)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--sanitize", action="store_true", help="build with AddressSanitizer and UBSan")
    p.add_argument("--tolerance-lsb", type=int, default=None, metavar="N",
                   help="quantized outputs may differ by N steps of their output scale (default 0 against "
                        "TFLite Micro, whose numerics Kiln follows exactly; 1 against onnxruntime)")
    p.add_argument("--inputs", type=Path, metavar="DIR_OR_NPZ",
                   help="verify on your own samples instead of random ones: a folder of <input>.npy files or an "
                        ".npz with one array per input (one sample, or N stacked on a leading axis; float data "
                        "for a quantized input is quantized with its scale)")

    p = sub.add_parser("profile", help="exact instructions per kernel and in total on an emulated target",
                       description="Build firmware for the target's emulated board (Cortex-A: a static "
                                   "AArch64 executable for qemu-aarch64), run it in QEMU under an "
                                   "instruction-counting plugin, and print the instructions of each kernel call "
                                   "and of the whole inference, with flash and RAM.")
    _add_compile_options(p)
    p.add_argument("--samples", type=int, default=1, help="number of random inputs to run (default 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--write-manifest", type=Path, metavar="DIR",
                   help="with --variant or --max-shape: write the counts into the manifest of the library "
                        "`kiln build` wrote to DIR with the same options (each variant's `instructions`, or "
                        "`instructions_by_extent`)")

    p = sub.add_parser("analyze", help="per layer: op, kernel and variant, MACs, weights, activations, cost",
                       description="Compile the model for the target and print one row per kernel call: the ops, "
                                   "the kernel and variant chosen, MACs, weights bytes (flash), activation bytes in "
                                   "and out, scratch, the cost model's estimate and, with --profile, the "
                                   "instructions counted in QEMU; totals at the end.")
    _add_compile_options(p)
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format (default table)")
    p.add_argument("--profile", action="store_true",
                   help="also count each call's instructions on the target's emulated board (as kiln profile)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the --profile input (default 0)")

    p = sub.add_parser("inspect", help="list ops, support, MACs, parameters, arena bound",
                       description="List the model's operators and whether Kiln supports them, "
                                   "MACs, parameter bytes and the activation lower bound.")
    p.add_argument("model", type=Path, help="model file (.onnx or .tflite)")
    p.add_argument("--input-shape", action="append", type=_input_shape, default=[], metavar="NAME=d0,d1,...")
    p.add_argument("--specialize", action="append", type=_specialize, default=[], metavar="NAME=v0,v1,...")
    return ap


def _patch_tiles(tiles: int | None) -> int | None:
    if tiles is not None and tiles < 2:
        raise KilnError(f"--patch-tiles must be 2 or more row bands, not {tiles}")
    return tiles


def _check_sign_key(args) -> None:
    if getattr(args, "sign_key", None) is not None and args.weights != "blob":
        raise KilnError("--sign-key signs a weights blob: add --weights blob")


def _options(args):
    from codegen.options import CompileOptions

    _check_sign_key(args)
    if not 0 < args.time_limit < float("inf"):
        raise KilnError(f"--time-limit must be a positive number of seconds, not {args.time_limit:g}")
    target = load_target(args.target)
    if args.opt_level:
        target = with_opt_level(target, args.opt_level)
    if args.kernels:
        target = with_kernels(target, tuple(k.strip() for k in args.kernels.split(",") if k.strip()))
    return CompileOptions(target=target, name=args.name,
                          input_shapes=dict(args.input_shape), specialized=dict(args.specialize),
                          planner=args.planner,
                          time_limit_s=args.time_limit, dump_ir=getattr(args, "dump_ir", None),
                          ram_limit=args.ram_limit, flash_limit=args.flash_limit, canaries=args.debug_canaries,
                          weights=args.weights, patch_stage=args.patch_stage or bool(args.patch_tiles),
                          patch_tiles=_patch_tiles(args.patch_tiles), optimize=args.optimize,
                          check_model=not args.no_check_model, arena=args.arena, io_in_arena=args.io_in_arena,
                          variant_kernels=args.variant_kernels, numerics=args.numerics)


def _cmd_build(args) -> int:
    from codegen.compiler import compile_model
    from codegen.emit.output_folder import check_output_folder, output_lock, write_output

    if args.target is None and not args.board:
        raise KilnError("--target is required (or --board, whose target is the default)")
    if args.variant or args.more_models or args.max_shape:
        return _build_library(args)
    if args.board:
        return _build_board_project(args)
    if args.console:
        raise KilnError("--console needs --board (the console of a board project)")
    inputs = _build_inputs(args)
    with output_lock(args.output):  # a second build into this folder fails at once
        check_output_folder(args.output, inputs)  # before the work: a folder Kiln must not replace
        result = _signed(compile_model(args.model, _options(args)), args)
        _notes(write_output(result.files, args.output, inputs))
    m = result.manifest
    state = f"state {m['state_bytes']} B, " if m.get("state_bytes") else ""  # a streaming model's variables
    print(f"kiln: wrote {len(result.files)} files to {args.output}: {arena_summary(result)}, "
          f"{state}weights {m['weights_bytes']} B, {len(m['fusion_groups'])} kernel calls")
    _print_fit(result)
    _note_open_dims(m)
    p = result.plan
    if "patch_stage" in m:  # --patch-stage: what was patched, or that nothing paid
        ps = m["patch_stage"]
        print(f"kiln: patch stage: {ps['reason']}" if ps else "kiln: patch stage: declined, no patched stage "
              "lowers the arena within the recomputation budget")
    if "weights" in m:  # --weights blob
        w = m["weights"]
        print(f"kiln: weights blob {w['blob_file']}: {w['blob_bytes']} B, crc32 {w['crc32']}, "
              f"model id {w['model_id'][:16]}..., {'signed' if w['signed'] else 'unsigned'}")
    if not p.reproducible:
        print("kiln: warning: --time-limit stopped the CP-SAT search on the wall clock; "
              "the plan is valid but may differ between builds (raise --time-limit)", file=sys.stderr)
    if args.explain_fusion:
        from codegen.fusion.explain import format_plan

        print(format_plan(result.fusion), end="")
    return 0


def _print_fit(result) -> None:
    """What --ram-limit took when the build as asked did not fit."""
    if result.fit is not None:
        from codegen.memory.fit import format_fit

        print(f"kiln: --ram-limit: {format_fit(result.fit, result.fit_baseline)}", flush=True)


def arena_summary(result) -> str:
    """The arena beside both bounds (without and with the in-place reuse the kernels allow: the
    arena is never below the second), and the RAM with the inputs and outputs."""
    m, p = result.manifest, result.plan
    ram = m["ram"]
    io = ("inputs and outputs inside it" if ram["io_in_arena"] else
          f"RAM {ram['total_bytes']} B with the inputs and outputs ({ram['io_bytes']} B)")
    proof = ("proven optimal" if p.status == "OPTIMAL" else
             f"feasible, no arena below {m['arena_proven_bound_bytes']} B exists")
    return (f"arena {m['arena_bytes']} B (lower bounds {m['arena_lower_bound_bytes']} B without in-place reuse, "
            f"{m['arena_inplace_bound_bytes']} B with it; {p.planner}, {proof}, {p.seconds:.2f} s), {io}")


def _build_inputs(args) -> tuple[Path, ...]:
    """What the build reads or writes besides its output folder, which must stay out of it."""
    return (args.model, *getattr(args, "more_models", ())) + ((args.dump_ir,) if args.dump_ir else ())


def _build_library(args) -> int:
    """Shape variants of one model, or several models: one library (codegen/variants/)."""
    from codegen.emit.output_folder import check_output_folder, output_lock, write_output
    from codegen.variants.commands import build_library, build_summary

    for flag, given in (("--board", args.board), ("--sign-key", args.sign_key), ("--dump-ir", args.dump_ir)):
        if given:
            raise KilnError(f"{flag} builds one model; not with --variant, --max-shape or several models")
    inputs = _build_inputs(args)
    with output_lock(args.output):
        check_output_folder(args.output, inputs)
        lib = build_library(args, _options(args))
        _notes(write_output(lib.files, args.output, inputs))
    print(f"kiln: wrote {len(lib.files)} files to {args.output}")
    print(build_summary(lib))
    return 0


def _signed(result, args):
    """--sign-key: the blob signed and the code made to require signatures (codegen/emit/blob_sign.py)."""
    if args.sign_key is None:
        return result
    from codegen.emit.blob_sign import read_sign_key, sign_build

    result.files = sign_build(result.files, result.manifest, result.name, read_sign_key(args.sign_key))
    return result


def _note_open_dims(manifest: dict) -> None:
    """Say which inputs' open dimensions (a dynamic batch) were compiled at a fixed size."""
    for io in manifest["inputs"]:
        axes = io.get("open_dims")
        if axes:
            shape = ",".join(f"d{a}" if a in axes else str(d) for a, d in enumerate(io["shape"]))
            print(f"kiln: note: input '{io['name']}': dimension {', '.join(map(str, axes))} is open in the model, "
                  f"compiled as {', '.join(str(io['shape'][a]) for a in axes)}; "
                  f"--input-shape {io['name']}={shape} for another size", file=sys.stderr)


def _notes(notes: list[str]) -> None:
    for note in notes:
        print(f"kiln: warning: {_one_line(note)}", file=sys.stderr)


def _build_board_project(args) -> int:
    from dataclasses import replace

    from codegen.compiler import compile_model
    from codegen.emit.output_folder import check_output_folder, output_lock, write_output
    from codegen.project import board_build, check_board_target
    from codegen.targets.boards import board_target, load_board

    from codegen.board_console import check_console

    board = load_board(args.board)
    args.target = args.target or board.target
    console = check_console(board, args.console) if board.system == "bare-metal" else None
    inputs = _build_inputs(args)
    with output_lock(args.output):
        check_output_folder(args.output, inputs)
        options = _options(args)
        check_board_target(board, options.target)  # before compiling: one line, nothing written
        if options.arena != "static" or options.io_in_arena:
            raise KilnError("a --board project's main passes its own input and output buffers to the static "
                            "arena's <name>_run: build it without --arena caller and --io-in-arena")
        options = replace(options, target=board_target(options.target, board), io_fixed=True)
        result = _signed(compile_model(args.model, options, fit_flash=board.flash_budget), args)
        files = board_build(result, board, options.target, console)
        _notes(write_output(files, args.output, inputs))
    fw = result.manifest["firmware"]
    sizes = (f"firmware flash {fw['flash_bytes']} B of {fw['flash_budget_bytes']}, RAM {fw['ram_bytes']} B "
             f"of {fw['ram_budget_bytes']} ({fw['opt_level']})" if fw["measured"] else
             f"firmware not measured ({fw['not_measured_because']})")
    print(f"kiln: wrote a project for board {board.name} ({options.target.name}) to {args.output}: "
          f"arena {result.manifest['arena_bytes']} B, weights {result.manifest['weights_bytes']} B; {sizes}")
    _note_open_dims(result.manifest)
    return 0


def _cmd_run(args) -> int:
    from codegen.compiler import compile_model
    from codegen.verify.run import load_inputs, run_on_target, save_outputs

    options = _options(args)
    if args.variant or args.max_shape:
        from codegen.variants.commands import cmd_run

        return cmd_run(args, options)
    build = compile_model(args.model, options)
    sample = load_inputs(build, args.input)
    (outputs,) = run_on_target(build, options, [sample])
    save_outputs(build.manifest, outputs, args.output_dir, [args.model, *args.input])
    return 0


def _cmd_verify(args) -> int:
    from codegen.verify.reference import reference_name
    from codegen.verify.compare import format_lsb_counts
    from codegen.verify.metrics import format_metrics_table
    from codegen.verify.run import verify_model

    if args.samples < 1:
        raise KilnError("--samples must be at least 1")
    if args.tolerance_lsb is not None and args.tolerance_lsb < 0:
        raise KilnError("--tolerance-lsb must be at least 0")
    source = f"samples from {args.inputs}" if args.inputs else f"{args.samples} random samples"
    print(f"kiln verify: {args.model.name} on {args.target} against {reference_name(args.model)}, {source}",
          flush=True)  # first: the steps after it take a while
    if args.variant or args.more_models or args.max_shape:
        from codegen.variants.commands import cmd_verify

        return cmd_verify(args, _options(args))
    res = verify_model(args.model, _options(args), samples=args.samples, seed=args.seed, sanitize=args.sanitize,
                       tolerance_lsb=args.tolerance_lsb, inputs=args.inputs)
    for o in res.outputs:
        exact = o.dtype.startswith("int") or o.dtype.startswith("uint")
        err = f"max abs error {o.max_abs_error:g}" + ("" if exact else f", relative {o.max_rel_error:.3g}")
        if o.lsb is not None:
            err = (f"max {o.max_lsb} LSB (step {o.lsb:g}, tolerance {o.tolerance_lsb}): {format_lsb_counts(o)}; "
                   + err)
        print(f"  {o.name}: {o.dtype}, {err}, {o.mismatches} of {o.elements} elements out of tolerance"
              f" -> {'ok' if o.ok else 'MISMATCH'}")
    print(f"kiln verify: {res.samples} samples, per output over all of them:")
    print(format_metrics_table(list(res.metrics)), end="")
    if not res.ok:
        raise VerificationError(f"{args.model}: outputs differ from {res.reference}")
    print("kiln verify: ok")
    return 0


def _cmd_profile(args) -> int:
    from codegen.compiler import compile_model
    from codegen.verify.profile import format_profile, profile_model

    if args.samples < 1:
        raise KilnError("--samples must be at least 1")
    if args.variant or args.max_shape:
        from codegen.variants.commands import cmd_profile

        return cmd_profile(args, _options(args))
    if args.write_manifest:
        raise KilnError("--write-manifest updates a library's manifest: give --variant or --max-shape")
    options = _options(args)
    build = compile_model(args.model, options)
    _print_fit(build)
    prof = profile_model(args.model, options, samples=args.samples, seed=args.seed, build=build)
    print(format_profile(prof, args.model.name), end="")
    return 0


def _cmd_analyze(args) -> int:
    from codegen.analyze import analyze_model, format_analysis

    analysis = analyze_model(args.model, _options(args), profile=args.profile, seed=args.seed)
    print(format_analysis(analysis, args.format), end="")
    return 0


def _cmd_inspect(args) -> int:
    from codegen.inspect import inspect_model

    report, ok = inspect_model(args.model, dict(args.input_shape), dict(args.specialize))
    print(report, end="")
    return 0


COMMANDS = {"build": _cmd_build, "run": _cmd_run, "verify": _cmd_verify, "profile": _cmd_profile,
            "inspect": _cmd_inspect, "analyze": _cmd_analyze}


def _one_line(text: str) -> str:
    """An error as exactly one line: control characters (from names in the model) escaped."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    progress.configure(quiet=getattr(args, "quiet", False))
    try:
        with warnings.catch_warnings():
            if not args.debug:  # stderr carries one line per error; numpy's RuntimeWarnings are noise
                warnings.simplefilter("ignore")
            return COMMANDS[args.command](args)
    except KilnError as err:
        print(f"kiln: error: {_one_line(str(err))}", file=sys.stderr)
        return err.exit_code
    except VerificationError as err:
        print(f"kiln: error: {_one_line(str(err))}", file=sys.stderr)
        return err.exit_code
    except OSError as err:  # permissions, a full disk, a name too long, read-only media: the environment
        where = None if err.filename is not None else getattr(args, "output", None) or args.model
        print(f"kiln: error: {_one_line(str(os_error(err, where)))}", file=sys.stderr)
        return KilnError.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # a bug in Kiln: one line unless --debug
        if args.debug:
            raise
        print(f"kiln: internal error: {type(err).__name__}: {_one_line(str(err).splitlines()[0]) if str(err) else ''} "
              f"(rerun with --debug for details)", file=sys.stderr)
        return 70
