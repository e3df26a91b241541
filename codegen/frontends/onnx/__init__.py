"""ONNX frontend: an .onnx file (float32, opset 7 and later) to a Kiln graph.

ONNX is NCHW; Kiln's spatial ops are NHWC, so each Conv/pool is wrapped in Transpose nodes
that a later pass cancels. One converter function per ONNX op type lives in the ops_*
modules, registered in `context.CONVERTERS`; `reader` turns the file into ordered nodes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from codegen.frontends import SourceOp
from codegen.frontends.onnx import converters  # noqa: F401  (registers every converter first)
from codegen.frontends.onnx.convert import build_graph, classify
from codegen.frontends.onnx.reader import read_model
from codegen.ir.graph import Graph


def load(path: Path, input_shapes: dict[str, tuple[int, ...]],
         specialized: dict[str, tuple[float, ...]] | None = None) -> Graph:
    """Import an ONNX model with static shapes (dynamic dims from `input_shapes`, batch 1;
    `specialized`: inputs fixed to values, see convert.specialize_input)."""
    specialized = {k: np.asarray(v) for k, v in (specialized or {}).items()}
    return build_graph(read_model(Path(path)), dict(input_shapes or {}), specialized)


def scan(path: Path, specialized: tuple[str, ...] = ()) -> list[SourceOp]:
    """Every node of the model with whether Kiln supports it; unsupported ops do not raise."""
    return classify(read_model(Path(path)), set(specialized), bodies=True)


__all__ = ["load", "scan"]
