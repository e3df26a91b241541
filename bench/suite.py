"""One model through every tool: build, run, count, time, compare. Figures go into Records.

Order per model: Kiln (host driver, callgrind, Cortex-M4F profile), the TFLite Micro
interpreter (allocations, outputs, callgrind), the ONNX conversion, onnxruntime, emx-onnx-cgen
(host driver, callgrind, Cortex-M4F firmware), then the latency comparison of every tool that
produced a callable, in one interleaved loop. Any step may fail; its figures then carry the
reason and the other steps go on.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench import cbuild, latency, pyregion
from bench.config import M4_TARGET, SEED, WORK, Mode, Model
from bench.peers import convert, emx, kiln, ort, tflm
from bench.record import TOOLS, Record, Unavailable, attempt
from codegen.ir.types import np_dtype
from codegen.lower.context import c_identifier
from codegen.targets import load_target
from codegen.targets.boards import load_board
from codegen.verify.compare import compare_output, merge_reports
from codegen.verify.reference import reference_name, run_reference
from codegen.verify.samples import random_samples


@dataclass
class Context:
    """What every model's run shares: built helpers, the peer environment's state, the log."""

    mode: Mode
    plugin: Path | None = None  # QEMU counting plugin
    region_lib: Path | None = None  # callgrind region for Python-driven runtimes
    region_baseline: int = 0  # instructions of an empty callback in that region
    peer_env_error: str | None = None  # why bench/.venv-peers is unusable, if it is
    tf2onnx_version: str = "unknown"
    valgrind_error: str | None = None
    qemu_error: str | None = None
    log: list[str] = field(default_factory=list)


@dataclass
class ModelResult:
    model: Model
    reference: str = "?"
    dtype: str = "?"  # of the input
    kind: str = "?"  # "int8", "float" or "hybrid" (int8 weights, float activations)
    records: dict[str, Record] = field(default_factory=lambda: {t: Record(t) for t in TOOLS})


def model_io(path: Path) -> tuple[dict, dict]:
    """The single input and output of a .tflite model as manifest-like entries."""
    import tflite

    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    if sg.InputsLength() != 1 or sg.OutputsLength() != 1:
        raise RuntimeError("the benchmark handles models with one input and one output")
    names = {getattr(tflite.TensorType, n): n.lower() for n in dir(tflite.TensorType) if n.isupper()}

    def entry(index: int) -> dict:
        t = sg.Tensors(index)
        return {"name": t.Name().decode(), "dtype": names[t.Type()], "shape": [int(d) for d in t.ShapeAsNumpy()]}

    return entry(sg.Inputs(0)), entry(sg.Outputs(0))


def model_kind(path: Path, input_dtype: str) -> str:
    import tflite

    if input_dtype.startswith(("int", "uint")):
        return "int8"
    sg = tflite.Model.GetRootAsModel(path.read_bytes(), 0).Subgraphs(0)
    int8 = any(sg.Tensors(i).Type() == tflite.TensorType.INT8 for i in range(sg.TensorsLength()))
    return "hybrid" if int8 else "float"


def accuracy(got: list[np.ndarray], ref: list[np.ndarray], reference: str) -> dict:
    merged = merge_reports([compare_output("out", np.asarray(g).reshape(-1), np.asarray(r).reshape(-1))
                            for g, r in zip(got, ref)])
    return {"reference": reference, "samples": len(got), "dtype": merged.dtype, "max_abs": merged.max_abs_error,
            "max_rel": merged.max_rel_error, "mismatches": merged.mismatches, "elements": merged.elements,
            "ok": merged.ok}


def _arrays(raw: list[bytes], dtype: str) -> list[np.ndarray]:
    return [np.frombuffer(b, np_dtype(dtype)).copy() for b in raw]


def _c_tool(rec: Record, cm: cbuild.CModel, ctx: Context, samples_b: list[bytes], ref: list[np.ndarray],
            reference: str, out_dtype: str, calls: dict) -> None:
    """Host driver (outputs, stack, heap), callgrind, shared library, Cortex-M4F run of C code."""
    with attempt(rec, "accuracy", "host_stack", "host_heap", "host_instr", log=ctx.log):
        exe = cbuild.build_host_driver(cm)
        outs, stack, heap = cbuild.run_host_driver(exe, samples_b, cm.output_bytes)
        rec.set("accuracy", accuracy(_arrays(outs, out_dtype), ref, reference))
        rec.set("host_stack", stack)
        rec.set("host_heap", heap)
        if ctx.valgrind_error:
            raise Unavailable(ctx.valgrind_error)
        rec.set("host_instr", cbuild.callgrind_driver(exe, samples_b[0]))
    with attempt(rec, "latency", log=ctx.log):
        calls[rec.tool] = latency.ctypes_call(cbuild.build_shared(cm), samples_b[0], cm.output_bytes)


def run_model(model: Model, ctx: Context) -> ModelResult:
    res = ModelResult(model)
    rk, rt, ro, re_ = (res.records[t] for t in ("kiln", "tflm", "ort", "emx"))
    work = WORK / model.stem
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    calls: dict[str, object] = {}

    inp, out = model_io(model.path)
    res.dtype = inp["dtype"]
    res.kind = model_kind(model.path, inp["dtype"])
    samples = random_samples([inp], ctx.mode.samples, SEED)
    arrays = [s[inp["name"]] for s in samples]
    samples_b = [cbuild.as_bytes(a, np_dtype(inp["dtype"])) for a in arrays]
    np.save(work / "sample0.npy", arrays[0])
    res.reference = reference_name(model.path)
    ref = [r[out["name"]] for r in run_reference(model.path, samples)]

    # ---- Kiln
    with attempt(rk, "accuracy", "host_stack", "host_heap", "host_instr", "latency", log=ctx.log):
        cm = kiln.host_model(kiln.compile_for(model.path, "host"), work / "kiln")
        _c_tool(rk, cm, ctx, samples_b, ref, res.reference, out["dtype"], calls)
    with attempt(rk, "arena", "arena_lower_bound", "io_bytes", "m4_instr", "m4_model", "m4_image", "m4_stack",
                 log=ctx.log):
        build = kiln.compile_for(model.path, M4_TARGET)
        m = build.manifest
        rk.set("arena", int(m["arena_bytes"]))
        rk.set("arena_lower_bound", int(m["arena_lower_bound_bytes"]))
        rk.set("io_bytes", sum(kiln.io_bytes(e) for e in m["inputs"] + m["outputs"]))
        if ctx.qemu_error:
            raise Unavailable(ctx.qemu_error)
        prof = kiln.profile_m4(build, samples[0], ctx.plugin)
        rk.set("m4_instr", min(prof.totals))
        rk.set("m4_model", prof.model_sizes)
        rk.set("m4_image", prof.firmware_sizes)
        rk.set("m4_stack", prof.stack_bytes)
        rk.set("m4_heap", 0)
        rk.set("m4_variants", sorted({c.variant for c in prof.calls}))

    # ---- TFLite Micro interpreter (nothing more to try when it cannot allocate the model)
    with attempt(rt, "tflm_arena", "accuracy", "host_instr", "latency", log=ctx.log):
        try:
            rt.set("tflm_arena", tflm.allocations(model.path))
        except RuntimeError as err:
            raise Unavailable(str(err)) from None
    with attempt(rt, "accuracy", log=ctx.log):
        if rt.reason("accuracy"):
            raise Unavailable(rt.reason("accuracy"))
        if res.reference == "tflite-micro":
            rt.set("accuracy", {"is_reference": True})
        else:
            from codegen.verify.reference import run_tflite_micro

            got = [r[out["name"]] for r in run_tflite_micro(model.path, samples)]
            rt.set("accuracy", accuracy(got, ref, res.reference))
    with attempt(rt, "host_instr", log=ctx.log):
        if rt.reason("host_instr"):
            raise Unavailable(rt.reason("host_instr"))
        if ctx.valgrind_error:
            raise Unavailable(ctx.valgrind_error)
        n = pyregion.count(ctx.region_lib, "tflm", model.path, work / "sample0.npy", work)
        rt.set("host_instr", n - ctx.region_baseline)
    with attempt(rt, "latency", log=ctx.log):
        if rt.reason("latency"):
            raise Unavailable(rt.reason("latency"))
        calls["tflm"] = tflm.prepared_invoke(model.path, arrays[0])

    # ---- ONNX conversion, onnxruntime
    onnx_path = None
    with attempt(ro, "accuracy", "host_instr", "latency", log=ctx.log):
        if ctx.peer_env_error:
            raise Unavailable(ctx.peer_env_error)
        onnx_path = convert.convert(model.path, WORK / "onnx" / f"{model.stem}.onnx", ctx.tf2onnx_version)
        ro.set("accuracy", accuracy(ort.outputs(onnx_path, arrays), ref, res.reference))
        calls["ort"] = ort.prepared_run(onnx_path, arrays[0])
        if ctx.valgrind_error:
            raise Unavailable(ctx.valgrind_error)
        ro.set("host_instr", pyregion.count(ctx.region_lib, "ort", onnx_path, work / "sample0.npy", work)
               - ctx.region_baseline)

    # ---- emx-onnx-cgen
    keys = ("accuracy", "host_stack", "host_heap", "host_instr", "latency", "m4_instr", "m4_model", "m4_image",
            "m4_stack", "m4_heap")
    with attempt(re_, *keys, log=ctx.log):
        if onnx_path is None:
            raise Unavailable(ro.reason("accuracy") or "no ONNX version of the model")
        in_b, out_b = kiln.io_bytes(inp), kiln.io_bytes(out)
        cm = emx.generate(onnx_path, c_identifier(f"emx_{model.stem}").lower(), work / "emx", in_b, out_b)
        re_.set("io_bytes", in_b + out_b)
        _c_tool(re_, cm, ctx, samples_b, ref, res.reference, out["dtype"], calls)
        if ctx.qemu_error:
            raise Unavailable(ctx.qemu_error)
        target = load_target(M4_TARGET)
        m4 = cbuild.run_m4(cm, target, load_board(target.board), ctx.plugin, [samples_b[0]])
        re_.set("m4_instr", m4.instructions[0])
        re_.set("m4_model", m4.model_sizes)
        re_.set("m4_image", m4.image_sizes)
        re_.set("m4_stack", m4.stack_bytes)
        re_.set("m4_heap", m4.heap_bytes)
        re_.set("m4_accuracy", accuracy(_arrays(m4.outputs, out["dtype"]), ref[:1], res.reference))

    # ---- latency, every tool in the same loop
    with attempt(rk, "latency", log=ctx.log):
        times = latency.median_times(calls, ctx.mode.latency_budget_s, ctx.mode.latency_rounds)
        for tool, seconds in times.items():
            res.records[tool].set("latency", seconds)
    return res
