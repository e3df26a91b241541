"""Code size of the generated models on the Cortex-M targets, at the default level and with
`--optimize size`: the section "Code size" of bench/CORTEX_M.md (bench/cortex_m.py).

Run alone from the repository root to print the figures:  python -m bench.cortex_m_code

*Code* is what the model adds to the flash beyond its constants: the text and rodata of its
objects (`N.c`, `N_weights.c`, compiled with the target's flags and the strict warnings, each
function and object in its own section as the firmware links them) less the constants the
manifest counts (`weights_bytes`: weights, biases and requantization records, as repacked for
the kernels). What remains is the kernels' and the run function's code and the calls'
parameter blocks. The aim (issue "Half of CMSIS-NN's instructions ..."): at most 8 KB with
`--optimize size` on every MLPerf Tiny model.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from codegen.compiler import compile_model
from codegen.emit.render import model_sources, write_generated
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.firmware import SECTION_FLAGS, elf_sizes, tool
from codegen.verify.toolchain import STRICT_FLAGS

AIM = 8 * 1024
# Measured the same way on commit 3ca1bed, before the kernels rendered only the paths their
# calls take (default level, --optimize size).
BEFORE = {"cortex-m4": {"KWS": (13_344, 13_344), "VWW": (15_384, 15_384), "IC": (9_528, 9_528),
                        "AD": (2_072, 2_072), "streaming wake word": (13_028, 13_032)},
          "cortex-m7": {"KWS": (13_844, 13_844), "VWW": (15_788, 15_788), "IC": (10_004, 10_004),
                        "AD": (2_080, 2_080), "streaming wake word": (13_520, 13_524)},
          "cortex-m55": {"KWS": (7_516, 7_516), "VWW": (9_340, 9_340), "IC": (6_856, 6_856),
                         "AD": (1_152, 1_152), "streaming wake word": (7_168, 7_168)}}


def code_bytes(model: Path, target: str, optimize: str) -> tuple[int, int]:
    """(code, weights) of the model built for `target` with --optimize `optimize`."""
    import subprocess

    t = load_target(target)
    build = compile_model(model, CompileOptions(t, optimize=optimize))
    with tempfile.TemporaryDirectory(prefix="kiln-code-size-") as tmp:
        work = Path(tmp)
        for fname, content in build.files.items():
            write_generated(work / fname, content)
        objs = []
        for src in model_sources(build.files, build.name):
            obj = work / (Path(src).stem + ".o")
            subprocess.run([t.cc, *t.cflags, *SECTION_FLAGS, *STRICT_FLAGS, "-I", str(work), "-c", src, "-o", str(obj)],
                           cwd=work, check=True, capture_output=True)
            objs.append(obj)
        s = elf_sizes(tool(t, "size"), objs, work)
    weights = int(build.manifest["weights_bytes"])
    return s.text + s.rodata - weights, weights


def measure(models: list[tuple[str, Path]], targets: list[str]) -> dict:
    """{target: {model: (code default, code --optimize size, weights default, weights size)}}"""
    out: dict = {}
    for target in targets:
        out[target] = {}
        for name, path in models:
            (fast, w_fast), (small, w_small) = (code_bytes(path, target, o) for o in ("speed", "size"))
            out[target][name] = (fast, small, w_fast, w_small)
    return out


def _kb(n: int) -> str:
    return f"{n:,}"


def section(sizes: dict, size_instructions: dict | None = None) -> list[str]:
    """The "Code size" section; `size_instructions`: {model: (default, --optimize size)} on the M4."""
    lines = ["## Code size", "",
             "Code: the model's objects' text + rodata less its constants (weights, biases, requantization "
             "records: the manifest's `weights_bytes`), so the kernels, the run function and the calls' "
             "parameter blocks, in bytes (`python -m bench.cortex_m_code`). *Before*: commit 3ca1bed, "
             "where each kernel's template rendered every path it has whatever the model's calls take. "
             "Each template now renders the paths its calls take (codegen/kernels/cortex_m_dsp/paths.py); "
             "`--optimize size` also keeps the weights in bytes (not widened to int16), one copy of the "
             "depthwise ring loop (with the clamp), windows copied one tap at a time, and on Helium no "
             "direct pointwise path. Aim: at most 8 KB (8,192 B) with `--optimize size`.", "",
             "| model | target | code, default | code, --optimize size | before (default / size) | "
             "weights default / --optimize size |",
             "|---|---|---:|---:|---:|---:|"]
    for target, models in sizes.items():
        for name, (fast, small, w_fast, w_small) in models.items():
            before = BEFORE.get(target, {}).get(name)
            mark = "" if small <= AIM else " (over)"
            lines.append(f"| {name} | {target} | {_kb(fast)} | {_kb(small)}{mark} | "
                         f"{f'{_kb(before[0])} / {_kb(before[1])}' if before else 'n/a'} | "
                         f"{_kb(w_fast)} / {_kb(w_small)} |")
    if size_instructions:
        lines += ["", "Instructions per inference on the M4, default against `--optimize size`: " +
                  "; ".join(f"{m} {_kb(a)} vs {_kb(b)} ({b / a:.2f}x)" for m, (a, b) in size_instructions.items()) + "."]
    return lines + [""]


def main() -> int:
    from bench.cortex_m import INT8_MODELS, MODELS, TARGETS

    print("\n".join(section(measure([(n, MODELS / f) for n, f in INT8_MODELS], TARGETS))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
