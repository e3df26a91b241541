"""The converter-built streaming keyword spotter on the Cortex-M boards, against TFLite Micro +
CMSIS-NN: the section "Streaming keyword spotter" of bench/CORTEX_M.md (bench/cortex_m.py).

The model is tests/tflite_converted/streaming_kws_int8.tflite (tests/tflite_converted/
generate.py): one feature frame per call, two resource variables (VAR_HANDLE / READ_VARIABLE /
ASSIGN_VARIABLE, initialised by a CALL_ONCE subgraph) carry the frames and the recurrent state
between calls. Both sides are counted on the second call after boot, the steady state (TFLite
Micro runs the CALL_ONCE subgraph in its first Invoke(); Kiln evaluates it at compile time).
RAM: Kiln's arena plus its state region (the variables, which the planner never reuses);
TFLite Micro's smallest arena that runs (the variables' buffers are allocated in it) plus the
arena of the allocator that holds its MicroResourceVariables.
"""

from __future__ import annotations

from pathlib import Path

from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.profile import profile_model

ROOT = Path(__file__).resolve().parent.parent
NAME = "streaming keyword spotter (converted)"
MODEL = ROOT / "tests" / "tflite_converted" / "streaming_kws_int8.tflite"
CALLS = 2  # counted: the second


def measure(targets: list[str], plugin: Path) -> dict[str, tuple[int, int, int]]:
    """{target: (Kiln's instructions of the second call, arena bytes, state bytes)}."""
    out = {}
    for target in targets:
        options = CompileOptions(load_target(target))
        build = compile_model(MODEL, options)
        p = profile_model(MODEL, options, samples=CALLS, seed=0, plugin=plugin, build=build)
        out[target] = (p.totals[CALLS - 1], int(build.manifest["arena_bytes"]), int(build.manifest["state_bytes"]))
        print(f"{NAME:20s} {target:11s} fast {out[target][0]:>12,}  arena {out[target][1]:,} "
              f"state {out[target][2]:,}", flush=True)
    return out


def section(kiln: dict[str, tuple[int, int, int]], peers: dict, same_run: set[str] | None = None) -> list[str]:
    """`same_run`: the targets whose peer firmware ran in this run; others' figures get \u2021."""
    lines = ["## Streaming keyword spotter (converted, resource variables)", "",
             "tests/tflite_converted/streaming_kws_int8.tflite, built by TensorFlow's converter from a "
             "tf.Module with two variables (the last frames of a causal convolution, a GRU-like state): "
             "VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE with a CALL_ONCE initialisation. Instructions of "
             "the second call after boot (TFLite Micro's first Invoke() also runs the CALL_ONCE subgraph; "
             "Kiln evaluates it at compile time). RAM: Kiln's arena + its state region; TFLite Micro's "
             "smallest arena that runs (the variables' buffers are allocated in it) + the arena of the "
             "allocator holding its MicroResourceVariables. Aim (cortex-m4): Kiln's state + arena below "
             "TFLite Micro's arena + variable arena, and at most half its instructions.", "",
             "| target | Kiln instructions per call | TFLM + CMSIS-NN instructions per call | Kiln / TFLM | "
             "Kiln arena + state | TFLM arena + variable arena | Kiln / TFLM RAM |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for target, (insns, arena, state) in kiln.items():
        p = peers.get(target, {}).get(NAME)
        kiln_ram = f"{arena:,} + {state:,} = {arena + state:,}"
        if p is None:
            lines.append(f"| {target} | {insns:,} | n/a (not measured) | | {kiln_ram} | n/a | |")
            continue
        mark = "\u2021" if same_run is not None and target not in same_run else ""
        variables = p.get("variable_arena", 0)
        p_ram = p["arena"] + variables
        lines.append(f"| {target} | {insns:,} | {p['instructions']:,}{mark} | {insns / p['instructions']:.2f}x | "
                     f"{kiln_ram} | {p['arena']:,} + {variables:,} = {p_ram:,}{mark} | {(arena + state) / p_ram:.2f}x |")
    return lines + [""]
