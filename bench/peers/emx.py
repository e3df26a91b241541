"""emx-onnx-cgen (PyPI), an ONNX-to-C generator, on tf2onnx's ONNX version of each model.

Run with its defaults except two options: the symbolic batch dimension pinned to 1
(--input-dim) and weights kept in the C file as const arrays (--large-weight-threshold 0:
otherwise they go to a binary file loaded at run time, which an MCU has no file system for).
Its temporaries above 1 KiB come from malloc (its default --large-temp-threshold), the rest
live on the stack: both are measured. The C is compiled with the same code-generation flags as
Kiln's (bench/cbuild.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.cbuild import CModel, render, run
from bench.env import peer_bin

OPTIONS = ("--large-weight-threshold", "0")


def _input_name(onnx_path: Path) -> str:
    import onnx

    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    inputs = [i.name for i in graph.input if i.name not in inits]
    if len(inputs) != 1 or len(graph.output) != 1:
        raise RuntimeError("the benchmark handles models with one input and one output")
    return inputs[0]


def generate(onnx_path: Path, name: str, work: Path, input_bytes: int, output_bytes: int) -> CModel:
    """Generate `work/<name>.c` and the adapter that calls it."""
    work.mkdir(parents=True, exist_ok=True)
    run([peer_bin("emx-onnx-cgen"), "compile", onnx_path, work / f"{name}.c", "--model-name", name,
         "--input-dim", f"{_input_name(onnx_path)}:0=1", *OPTIONS], work)
    text = (work / f"{name}.c").read_text()
    m = re.search(rf"^void {re.escape(name)}\((.*)\)\s*\{{", text, re.M)
    if m is None:
        raise RuntimeError(f"no function 'void {name}(...)' in emx-onnx-cgen's output")
    render("emx_adapter.c.j2", work / "bench_adapter.c", prototype=f"void {name}({m.group(1)})",
           function=name, input_bytes=input_bytes, output_bytes=output_bytes)
    return CModel("emx", work, (f"{name}.c",), "bench_adapter.c", strict=False,
                  input_bytes=input_bytes, output_bytes=output_bytes)
