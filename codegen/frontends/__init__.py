"""Frontends: model files to Kiln IR. The format is told by content, not by file name."""

from __future__ import annotations

import os
import stat
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


MAX_MODEL_FILE_BYTES = 4 * 2 ** 30  # weights are capped at 2 GiB (codegen.limits); twice that is absurd


def model_format(path: Path) -> str:
    """"onnx" or "tflite", from the first bytes of a regular file of sane size.

    Anything else (a folder, a FIFO or device that would block or never end) is refused before
    a byte is read."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise KilnError(f"cannot read model: {kind}", where=str(path))
        if st.st_size > MAX_MODEL_FILE_BYTES:
            raise KilnError(f"the model file has {st.st_size} bytes, more than Kiln reads "
                            f"({MAX_MODEL_FILE_BYTES})", where=str(path))
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as err:
        raise KilnError(f"cannot read model: {err.strerror or err}", where=str(path)) from None
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


def load_model(path: Path, input_shapes: dict[str, tuple[int, ...]] | None = None,
               specialized: dict[str, tuple[float, ...]] | None = None, check: bool = True) -> Graph:
    """Import a model file as a verified Kiln graph; every error names the file. `specialized`:
    inputs the build is fixed to (ONNX only; TFLite models take no shape-giving inputs);
    `check`: the full ONNX checker (TFLite models are always verified, see tflite/validate.py)."""
    try:
        fmt = model_format(path)
        if specialized and fmt == "tflite":
            raise KilnError("--specialize applies to ONNX models (a TFLite model's shapes are static)")
        if fmt == "onnx":
            return _frontend(path).load(path, input_shapes or {}, specialized, check=check)
        return _frontend(path).load(path, input_shapes or {})
    except KilnError as err:
        raise err.located(str(path)) from None


def scan_model(path: Path, specialized: tuple[str, ...] = ()) -> list[SourceOp]:
    """The model's operators, each marked supported or not (for `kiln inspect`); `specialized`:
    inputs given values with --specialize (ONNX)."""
    try:
        if specialized:
            return _frontend(path).scan(path, specialized)
        return _frontend(path).scan(path)
    except KilnError as err:
        raise err.located(str(path)) from None
