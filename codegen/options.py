"""One `CompileOptions` object feeds every stage; the CLI is its only parser."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from codegen.targets import Target


@dataclass(frozen=True)
class CompileOptions:
    target: Target
    name: str | None = None  # C prefix of the generated code; default: from the model file name
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # inputs the build is fixed to (`--specialize NAME=v0,...`): constants to the graph, checked at run time
    specialized: dict[str, tuple[float, ...]] = field(default_factory=dict)
    planner: str = "auto"  # arena placement: auto, cpsat, greedy or linear (see codegen.memory.plan_memory)
    time_limit_s: float = 10.0  # budget of the CP-SAT planner; greedy's plan is kept if it runs out
    dump_ir: Path | None = None  # folder for the IR text before/after each optimisation pass
    ram_limit: int | None = None  # bytes of RAM the model may need (arena); see codegen.budget
    flash_limit: int | None = None  # bytes of flash it may need (weights + estimated code)
    canaries: bool = False  # debug build: canary bytes around the arena and every buffer, checked after each call
    patch_stage: bool = False  # run the first CNN stage row band by row band when that lowers the arena
    patch_tiles: int | None = None  # with patch_stage: that many row bands (None: the best count)
    optimize: str = "speed"  # fusion objective: speed, size or ram (codegen/fusion/planner.py)
    fusion: str = "auto"  # "auto": the cost model decides; "off": no planner fusion; "all": every legal one (benchmarks)
    check_model: bool = True  # the full ONNX checker at import (--no-check-model: off)
    weights: str = "const"  # "const": arrays in N_weights.c; "blob": N.weights.bin (codegen.emit.weights_blob)
    arena: str = "static"  # "static": an array in N.c; "caller": the application hands it to N_init
    # kernel stems computed by the reference variant whatever the target has, for their in-place
    # forms (chosen by --ram-limit's search, codegen/memory/fit.py)
    reference_kernels: tuple[str, ...] = ()
    # the target's kernels without the paths that buy speed with extra scratch (the DSP depthwise
    # ring of int16 rows): chosen by --ram-limit's search when that is what makes a build fit
    compact_kernels: bool = False
    # shape variants (codegen/variants/kernels.py): "shared" (one copy of each kernel they use
    # alike), "own" (a copy per variant, which the compiler specialises for each call's constant
    # parameters), "auto" (shared on a bare-metal target, where flash runs out; own elsewhere)
    variant_kernels: str = "auto"
    io_in_arena: bool = False
    # int8 arithmetic: "tflite" (TFLite's fixed-point requantization, bit-exact with TFLite Micro)
    # or "onnxruntime" (onnxruntime's float requantization, bit-exact with its CPU kernels;
    # codegen/kernels/onnxruntime/)
    numerics: str = "tflite"
    io_fixed: bool = False  # --ram-limit may not move the I/O (a --board project's main passes its own buffers)  # inputs and outputs planned inside the arena (N_input_k() / N_output_k())
