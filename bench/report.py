"""RESULTS.md: the tables of one benchmark run, the commands and versions behind them.

Every figure is either measured in this run or marked n/a with a lettered note that says why;
the TFLite Micro Cortex-M figures published in ../shared/models/README.md appear only in their
own section, labelled as not measured here.
"""

from __future__ import annotations

from bench import published
from bench.config import HOST_CFLAGS, M4_TARGET, Mode
from bench.record import Record
from bench.suite import ModelResult
from codegen.targets import load_target
from codegen.verify.firmware import SECTION_FLAGS

ORT_NA = "onnxruntime is a desktop runtime with no Cortex-M build; its RAM and flash are not an MCU's"
TFLM_M4_NA = ("TFLite Micro is not built for the Cortex-M here (needs its and CMSIS-NN's sources); "
              "see the reference figures below")


class Notes:
    """Lettered reasons for n/a cells, one list per table."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def na(self, reason: str | None) -> str:
        reason = reason or "not measured"
        if reason not in self.reasons:
            self.reasons.append(reason)
        return f"n/a [{chr(ord('a') + self.reasons.index(reason))}]"

    def lines(self) -> list[str]:
        return [""] + [f"[{chr(ord('a') + k)}] {r}  " for k, r in enumerate(self.reasons)] if self.reasons else []


def n(v) -> str:
    return f"{int(v):,}"


def cell(notes: Notes, rec: Record, key: str, fmt=n) -> str:
    v = rec.get(key)
    return notes.na(rec.reason(key)) if v is None else fmt(v)


def table(head: list[str], rows: list[list[str]], align: str | None = None) -> list[str]:
    align = align or "l" + "r" * (len(head) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    return ["| " + " | ".join(head) + " |", "| " + " | ".join(sep) + " |"] + ["| " + " | ".join(r) + " |" for r in rows]


def ratio(a, b) -> str:
    return f"{a / b:.2f}×" if a and b else "n/a"


# ---- derived figures ------------------------------------------------------------------------

def kiln_total_ram(rec: Record) -> int | None:
    """Arena + the model's other .data/.bss + stack + model I/O buffers (the caller's)."""
    m, arena, stack, io = rec.get("m4_model"), rec.get("arena"), rec.get("m4_stack"), rec.get("io_bytes")
    if None in (m, arena, stack, io):
        return None
    return m.data + m.bss + stack + io


def emx_total_ram(rec: Record) -> int | None:
    """Heap high-water + stack + the model's .data/.bss + model I/O buffers."""
    m, heap, stack, io = rec.get("m4_model"), rec.get("m4_heap"), rec.get("m4_stack"), rec.get("io_bytes")
    if None in (m, heap, stack, io):
        return None
    return heap + stack + m.data + m.bss + io


def tflm_arena(rec: Record) -> int | None:
    a = rec.get("tflm_arena")
    return a["smallest_running"] if a else None


def accuracy_text(acc: dict | None, notes: Notes, reason: str | None) -> str:
    if acc is None:
        return notes.na(reason)
    if acc.get("is_reference"):
        return "(the reference)"
    if acc["dtype"].startswith(("int", "uint")):
        if acc["mismatches"] == 0:
            return "bit-exact"
        return f"max {acc['max_abs']:g} LSB, {acc['mismatches']:,}/{acc['elements']:,} differ"
    verdict = "ok" if acc["ok"] else "**outside 1e-5**"
    return f"max abs {acc['max_abs']:.2g} (rel {acc['max_rel']:.2g}), {verdict}"


# ---- sections ---------------------------------------------------------------------------------

def ram_section(results: list[ModelResult]) -> list[str]:
    notes = Notes()
    rows = []
    for r in results:
        k, t, e = (r.records[x] for x in ("kiln", "tflm", "emx"))
        arena = t.get("tflm_arena")
        kt, et = kiln_total_ram(k), emx_total_ram(e)
        m = k.get("m4_model")
        other = n(m.data + m.bss - k.get("arena")) if m is not None and k.get("arena") is not None \
            else notes.na(k.reason("m4_model"))
        rows.append([r.model.label, cell(notes, k, "arena_lower_bound"), cell(notes, k, "arena"), other,
                     cell(notes, k, "m4_stack"), cell(notes, k, "io_bytes"),
                     f"**{n(kt)}**" if kt is not None else notes.na(k.reason("m4_model") or k.reason("arena")),
                     f"{n(arena['total'])} ({n(arena['head'])} + {n(arena['tail'])})" if arena
                     else notes.na(t.reason("tflm_arena")),
                     f"**{n(arena['smallest_running'])}**" if arena else notes.na(t.reason("tflm_arena")),
                     cell(notes, e, "m4_heap"), cell(notes, e, "m4_stack"),
                     f"**{n(et)}**" if et is not None else notes.na(e.reason("m4_heap")),
                     notes.na(ORT_NA)])
    head = ["model", "Kiln arena lower bound", "Kiln arena", "Kiln other .data/.bss", "Kiln stack", "model I/O",
            "**Kiln total**",
            "TFLM printed arena (head + tail)", "**TFLM smallest arena that runs**", "emx heap peak",
            "emx stack", "**emx total**", "onnxruntime"]
    out = ["## RAM (bytes)", "",
           "Cortex-M4F builds (Kiln's `cortex-m4` target flags) for Kiln and emx-onnx-cgen; the TFLite Micro "
           "interpreter's arena from its Python package. **Kiln total** = the static arena (from the manifest) + "
           "any other .data/.bss of the generated objects (`arm-none-eabi-size`) + the stack high-water mark on "
           "the Cortex-M4F (painted stack, test driver's frame included) + the model's input and output buffers, "
           "which Kiln leaves to the caller. **emx total** = heap high-water mark (newlib malloc on the "
           "Cortex-M4F) + stack + .data/.bss + model I/O; emx-onnx-cgen allocates every intermediate tensor at "
           "the start of the call and frees it at the end (no buffer reuse), and on tf2onnx's QDQ graphs these "
           "include float copies of dequantized weights and activations. **TFLM smallest arena that runs** is "
           "found by bisection on `arena_size` (allocate and invoke); it holds model I/O and the interpreter's "
           "persistent data (the tail), but not the interpreter object, the op resolver or the stack, which are "
           "not measured. The interpreter runs on x86-64 here, so the pointers in its persistent structures are "
           "8 bytes: the tail is larger than on a 32-bit MCU (the published Cortex-M4F `arena_used_bytes` are "
           "in the reference section). The lower bound is Kiln's (`arena_lower_bound_bytes` of the manifest): "
           "the largest sum of simultaneously live arena buffers (intermediate tensors and kernel scratch "
           "buffers; model I/O excluded) that any placement must hold.", ""]
    return out + table(head, rows) + notes.lines() + [""]


def flash_section(results: list[ModelResult]) -> list[str]:
    notes = Notes()
    rows = []
    for r in results:
        k, e = r.records["kiln"], r.records["emx"]

        def parts(rec: Record) -> list[str]:
            m, img = rec.get("m4_model"), rec.get("m4_image")
            if m is None or img is None:
                na = notes.na(rec.reason("m4_model"))
                return [na, na, na]
            return [n(m.text), n(m.rodata + m.data), n(img.flash)]

        rows.append([r.model.label, *parts(k), *parts(e), notes.na(TFLM_M4_NA), notes.na(ORT_NA)])
    head = ["model", "Kiln code", "Kiln constants", "**Kiln firmware**", "emx code", "emx constants",
            "**emx firmware**", "TFLM", "onnxruntime"]
    return (["## Flash (bytes), Cortex-M4F", "",
             "`arm-none-eabi-size` of the generated code's objects (code = .text, constants = .rodata + .data) "
             "and of the linked firmware (text + rodata + data): model, test driver, startup code, and what "
             "newlib (nano) and libm contribute, after `--gc-sections`; the test samples are outside it.", ""]
            + table(head, rows) + notes.lines() + [""])


def m4_speed_section(results: list[ModelResult]) -> list[str]:
    notes = Notes()
    rows = []
    for r in results:
        k, e = r.records["kiln"], r.records["emx"]
        rows.append([r.model.label, cell(notes, k, "m4_instr"), ", ".join(k.get("m4_variants") or []) or "n/a",
                     cell(notes, e, "m4_instr"), ratio(e.get("m4_instr"), k.get("m4_instr")),
                     notes.na(TFLM_M4_NA), notes.na(ORT_NA)])
    head = ["model", "Kiln", "Kiln kernel variants", "emx-onnx-cgen", "emx / Kiln", "TFLM", "onnxruntime"]
    return (["## Speed on the Cortex-M4F: instructions per inference (exact)", "",
             "QEMU `mps2-an386` (Cortex-M4F) with Kiln's instruction-counting plugin; instructions from the call "
             "into the model to its return, one inference on the same random input (seed 0). Kiln: `kiln "
             "profile`, with the kernel template variants its cortex-m4 target chose (`reference` = portable C, "
             "`cortex_m_dsp` = Armv7E-M DSP instructions); emx-onnx-cgen: the same plugin, board, flags and "
             "markers around its call. Counts are "
             "repeatable to the instruction for a given toolchain; QEMU's wall time is not a measure.", ""]
            + table(head, rows) + notes.lines() + [""])


def host_speed_section(results: list[ModelResult], mode: Mode) -> list[str]:
    notes = Notes()
    rows = []
    for r in results:
        recs = [r.records[t] for t in ("kiln", "emx", "tflm", "ort")]
        rows.append([r.model.label, *[cell(notes, rec, "host_instr") for rec in recs]])
    out = ["## Speed on the host: instructions per inference (callgrind)", "",
           "x86-64 instructions of one inference after one warm-up inference, counted by `valgrind "
           "--tool=callgrind --collect-atstart=no --instr-atstart=no` with collection switched on around "
           "the call only. Kiln and emx: the benchmark's C driver (`gcc " + " ".join(HOST_CFLAGS) + "`). "
           "TFLM interpreter and onnxruntime: one `invoke()` / `run()` made from Python inside a C callback "
           "region, minus the same region around an empty callback (so a few thousand instructions of "
           "Python binding are included). onnxruntime's kernels use SIMD (as valgrind reports the CPU: "
           "AVX2, no AVX-512) and fuse the QDQ graph into integer kernels; Kiln's host target uses its "
           "portable scalar reference kernels.", ""]
    out += table(["model", "Kiln", "emx-onnx-cgen", "TFLM interpreter", "onnxruntime"], rows) + notes.lines()

    notes = Notes()
    rows = []
    for r in results:
        recs = {t: r.records[t] for t in ("kiln", "emx", "tflm", "ort")}
        base = recs["ort"].get("latency")
        tflm = recs["tflm"].get("latency")
        cells = []
        for t in ("kiln", "emx", "tflm", "ort"):
            v = recs[t].get("latency")
            cells.append(notes.na(recs[t].reason("latency")) if v is None
                         else (f"{v / base:.2f}" if base else notes.na("onnxruntime did not run")))
        kiln = recs["kiln"].get("latency")
        cells.append(f"{kiln / tflm:.2f}" if kiln and tflm else "n/a")
        rows.append([r.model.label, *cells])
    out += ["", "### Host latency relative to onnxruntime (same run)", "",
            f"Median time per inference divided by onnxruntime's (1 intra-op and 1 inter-op thread) on the same "
            f"model in the same process: lower is faster, onnxruntime = 1.00. Every tool is called from the same "
            f"Python timing loop (Kiln and emx through ctypes into a shared library of their C, built with the "
            f"same flags plus `-fPIC`), {mode.latency_rounds} interleaved rounds of about "
            f"{mode.latency_budget_s:g} s per tool. The clock is the calling thread's CPU time "
            f"(`time.thread_time_ns`): every tool computes on that thread, and time spent preempted by other "
            f"processes does not count (the load average during the run is in the table at the end). "
            f"Ratios from one run only: absolute times are not comparable across runs or machines.", ""]
    out += table(["model", "Kiln", "emx-onnx-cgen", "TFLM interpreter", "onnxruntime", "Kiln / TFLM"], rows)
    return out + notes.lines() + [""]


def accuracy_section(results: list[ModelResult], mode: Mode) -> list[str]:
    notes = Notes()
    rows = []
    for r in results:
        k, e, t, o = (r.records[x] for x in ("kiln", "emx", "tflm", "ort"))
        rows.append([r.model.label, r.reference,
                     accuracy_text(k.get("accuracy"), notes, k.reason("accuracy")),
                     accuracy_text(e.get("accuracy"), notes, e.reason("accuracy")),
                     accuracy_text(e.get("m4_accuracy"), notes, e.reason("m4_instr")),
                     accuracy_text(o.get("accuracy"), notes, o.reason("accuracy")),
                     accuracy_text(t.get("accuracy"), notes, t.reason("accuracy"))])
    head = ["model", "reference", "Kiln (host)", "emx (host)", "emx (Cortex-M4F, 1 input)", "onnxruntime",
            "TFLM interpreter"]
    return (["## Correctness against the reference runtime", "",
             f"{mode.samples} random inputs per model (seed 0: int8 uniform over all 256 codes, float standard "
             f"normal), the same for every tool. Reference: the TFLite Micro interpreter for int8 models (the "
             f"bit-exact reference of DESIGN.md), LiteRT for float models. int8: bit-exact, or the largest "
             f"difference in output codes (LSB) and how many output elements differ; float: largest absolute "
             f"error and that error relative to the output's largest magnitude (Kiln's 1e-5 tolerance). "
             f"onnxruntime and emx-onnx-cgen run tf2onnx's QDQ conversion of the int8 models, which computes in "
             f"float between QuantizeLinear/DequantizeLinear pairs (softmax included), so they are not "
             f"expected to be bit-exact. The hybrid model (int8 weights, float activations) has LiteRT's hybrid "
             f"kernels as reference, which quantize activations to int8 on the fly; tf2onnx's conversion "
             f"computes in float with dequantized weights instead.", ""]
            + table(head, rows, "ll" + "l" * (len(head) - 2)) + notes.lines() + [""])


def reference_section(results: list[ModelResult]) -> list[str]:
    figs = published.tflm_cortex_m4()
    out = ["## Reference figures (not measured in this run)", "",
           f"TFLite Micro on the Cortex-M4F, from {published.source_note()}. Same board and same kind of "
           f"counting plugin as the Cortex-M4F table above, but another toolchain build and another input, so "
           f"the ratios below compare a measured figure with a published one.", ""]
    if not figs:
        return out + ["(../shared/models/README.md not found: no reference figures.)", ""]
    rows = []
    for r in results:
        f = figs.get(r.model.stem)
        if f is None:
            continue
        k = r.records["kiln"]
        ki, kt = k.get("m4_instr"), kiln_total_ram(k)
        img = k.get("m4_image")
        rows.append([r.model.label, n(f["ref_instr"]), n(f["cmsis_instr"]), n(ki) if ki else "n/a",
                     ratio(ki, f["ref_instr"]), ratio(ki, f["cmsis_instr"]), n(f["arena_used"]),
                     n(kt) if kt else "n/a", n(f["flash_cmsis"]), n(img.flash) if img else "n/a"])
    head = ["model", "TFLM reference kernels (published)", "TFLM CMSIS-NN (published)", "Kiln (measured)",
            "Kiln / TFLM ref.", "Kiln / CMSIS-NN", "TFLM arena_used_bytes (published)", "Kiln total RAM (measured)",
            "TFLM firmware flash, CMSIS-NN (published)", "Kiln firmware flash (measured)"]
    out += table(head, rows)
    out += ["", "Published MLPerf Tiny v1.x latencies on a NUCLEO-L4R5ZI (Cortex-M4F, 120 MHz), ms per inference "
            "KWS / VWW / IC / AD, same README: TFLite Micro reference 181.9 / 600.6 / 704.2 / 10.05; microTVM + "
            "CMSIS-NN 99.8 / 301.2 / 389.6 / 8.6; best published (X-CUBE-AI 9.0) 43.2 / 88.9 / 165.1 / 5.26.", ""]
    return out


def peers_section(results: list[ModelResult], ctx_notes: list[str]) -> list[str]:
    out = ["## Where a peer could not run a model", ""]
    lines = []
    for r in results:
        for tool, rec in r.records.items():
            reasons = {}
            for key, why in rec.why.items():
                reasons.setdefault(why, []).append(key)
            for why, keys in reasons.items():
                lines.append(f"- {r.model.label}, {tool} ({', '.join(sorted(keys))}): {why}")
    standing = [f"- onnxruntime, RAM / flash / Cortex-M: {ORT_NA}.",
                f"- TFLite Micro interpreter, flash / Cortex-M instructions: {TFLM_M4_NA}.",
                "- All tools, Cortex-A instructions (qemu-aarch64, NEON): pending; Kiln has no Cortex-A target "
                "yet. Cortex-M7 / M55 counts: not measured by this benchmark (`kiln profile --target "
                "cortex-m7` gives Kiln's)."]
    return out + standing + ctx_notes + (lines or ["- Every other figure was measured."]) + [""]


def method_section(env: dict[str, str], mode: Mode, minutes: float) -> list[str]:
    m4 = load_target(M4_TARGET)
    m4_flags = " ".join([*m4.cflags, "-std=c99", *SECTION_FLAGS])
    out = ["## How this was produced", "",
           "```sh",
           "make setup                   # Kiln's .venv (pip install -e '.[test]'); valgrind, qemu-system-arm,",
           "                             # gcc-arm-none-eabi from Debian",
           "python -m bench              # all models of bench/models.toml",
           "python -m bench --quick      # the int8 models, fewer inputs, shorter timing",
           "python -m bench --models 'KWS int8,AD int8'   # a subset (labels or file stems)",
           "```", "",
           f"This file: `python -m bench{' --quick' if mode.name == 'quick' else ''}` ({mode.name} run, about "
           f"{max(1, round(minutes))} min). The first run creates `bench/.venv-peers` from "
           "`bench/requirements.txt` (TensorFlow for tf2onnx, tf2onnx, emx-onnx-cgen); builds go to "
           "`bench/.work/`.", "",
           "What each tool runs:", "",
           "- Kiln: `compile_model` for targets `host` and `cortex-m4` (as `kiln build`), the Cortex-M4F figures "
           "from `kiln profile`'s firmware and plugin (codegen/verify/profile.py).",
           "- ONNX versions: `bench/.venv-peers/bin/python -m tf2onnx.convert --tflite MODEL.tflite --output "
           "MODEL.onnx --opset 17` (int8 models become QDQ graphs).",
           "- emx-onnx-cgen: `emx-onnx-cgen compile MODEL.onnx NAME.c --model-name NAME --input-dim INPUT:0=1 "
           "--large-weight-threshold 0` (weights as const arrays in the C file instead of a file read at run "
           "time; otherwise its defaults, so temporaries above 1 KiB are malloc'd).",
           "- onnxruntime: `InferenceSession` with the CPU provider, `intra_op_num_threads = inter_op_num_threads "
           "= 1`, sequential execution, default graph optimisations.",
           "- TFLite Micro: `tflite_micro.python.tflite_micro.runtime.Interpreter.from_file` (reference "
           "kernels), `print_allocations()` for the arena; `arena_size` bisection for the smallest arena that "
           "allocates and invokes.", "",
           "Compilation, identical code-generation flags for Kiln and emx-onnx-cgen (Kiln's files also with "
           "DESIGN.md's `-Werror` warning set):", "",
           f"- host: `gcc {' '.join(HOST_CFLAGS)}` (driver bench/harness/host_main.c; latency library adds "
           f"`-fPIC -shared`)",
           f"- Cortex-M4F: `arm-none-eabi-gcc {m4_flags}`, linked with `{' '.join(m4.ldflags)} -nostartfiles "
           f"-Wl,--gc-sections -lm` against the board's startup code and linker script (boards/cortex_m/); "
           f"run as `qemu-system-arm -M mps2-an386 -cpu cortex-m4 -semihosting-config enable=on,target=native "
           f"-kernel firmware.elf -plugin insn_count.so,out=marks.txt`", "",
           "Machine and versions:", ""]
    out += table(["", "version"], [[k, v.replace("|", "/")] for k, v in env.items()], "ll")
    return out + [""]


def render(results: list[ModelResult], env: dict[str, str], mode: Mode, minutes: float, headline: list[str],
           ctx_notes: list[str]) -> str:
    lines = ["# Kiln benchmarks: the MLPerf Tiny models next to the peers", "",
             "Written by `python -m bench`; every figure below except the section marked *not measured in this "
             "run* comes from that one run on the machine described at the end. Tools: **Kiln**; the **TFLite "
             "Micro interpreter** (Python package `tflite-micro`, reference kernels); **onnxruntime** (one "
             "thread) and **emx-onnx-cgen** (an ONNX-to-C generator from PyPI), both on tf2onnx's ONNX "
             "conversion of each model. Plots: [ram.svg](ram.svg), [instructions_m4.svg](instructions_m4.svg), "
             "[instructions_host.svg](instructions_host.svg).", "",
             "## Headline", ""] + headline + [""]
    for section in (ram_section(results), flash_section(results), m4_speed_section(results),
                    host_speed_section(results, mode), accuracy_section(results, mode),
                    reference_section(results), peers_section(results, ctx_notes),
                    method_section(env, mode, minutes)):
        lines += section
    return "\n".join(lines).rstrip() + "\n"
