"""Frontends: model files to Kiln IR. The format is told by content, not by file name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codegen.errors import KilnError
from codegen.ir.graph import Graph


@dataclass(frozen=True)
class SourceOp:
    """One operator of the model file, as `kiln inspect` lists it."""

    op_type: str
    node: str
    supported: bool
    reason: str = ""


def model_format(path: Path) -> str:
    try:
        head = path.read_bytes()[:8]
    except OSError as err:
        raise KilnError(f"cannot read model: {err.strerror}", where=str(path)) from None
    if len(head) >= 8 and head[4:8] == b"TFL3":
        return "tflite"
    if path.suffix.lower() == ".tflite":
        raise KilnError("not a TFLite flatbuffer (no TFL3 identifier)", where=str(path))
    return "onnx"


def _frontend(path: Path):
    if model_format(path) == "tflite":
        from codegen.frontends import tflite as fe
    else:
        from codegen.frontends import onnx as fe
    return fe


def load_model(path: Path, input_shapes: dict[str, tuple[int, ...]] | None = None) -> Graph:
    """Import a model file as a verified Kiln graph; every error names the file."""
    try:
        return _frontend(path).load(path, input_shapes or {})
    except KilnError as err:
        raise err.located(str(path)) from None


def scan_model(path: Path) -> list[SourceOp]:
    """The model's operators, each marked supported or not (for `kiln inspect`)."""
    try:
        return _frontend(path).scan(path)
    except KilnError as err:
        raise err.located(str(path)) from None
