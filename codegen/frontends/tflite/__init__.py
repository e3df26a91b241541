"""TFLite frontend: a .tflite flatbuffer (subgraph 0) to a verified Kiln graph.

reader.py decodes and checks the file (sparse.py densifies sparse constants), importer.py
orders the operators and drives the conversion, ops.py holds one converter per builtin with
the families ops_control.py (IF, WHILE), ops_elementwise.py, ops_recurrent.py, ops_reduce.py,
ops_shape.py, ops_spatial.py, ops_update.py and ops_state.py (resource variables of streaming models; compose.py: helpers for converters that emit a chain
of Kiln ops). Node names are the names of the
operators' first output tensors (TFLite operators have none of their own).
"""

from __future__ import annotations

import re
from pathlib import Path

from codegen import limits
from codegen.errors import KilnError, UnsupportedOpsError
from codegen.frontends import SourceOp
from codegen.frontends.tflite import (ops, ops_control, ops_elementwise, ops_recurrent,  # noqa: F401 (they register)
                                      ops_reduce, ops_shape, ops_spatial, ops_update)
from codegen.frontends.tflite.ops_state import finish_variables
from codegen.frontends.tflite.converter import CONVERTERS
from codegen.frontends.tflite.importer import Importer, execution_order, op_label
from codegen.frontends.tflite.reader import fold_densify, read_model
from codegen.frontends.tflite.validate import validate
from codegen.ir.graph import Graph
from codegen.ir.verifier import verify_graph
from codegen.ops.registry import get_op

__all__ = ["CONVERTERS", "load", "load_bytes", "scan", "scan_bytes"]


def load(path: Path, input_shapes: dict[str, tuple[int, ...]]) -> Graph:
    """Import `path`; UnsupportedOpsError lists every operator Kiln cannot convert."""
    return load_bytes(_read(path), input_shapes, _graph_name(path))


def scan(path: Path) -> list[SourceOp]:
    """Every operator of subgraph 0, in file order, marked supported or not (with the reason)."""
    return scan_bytes(_read(path), _graph_name(path))


def load_bytes(data: bytes, input_shapes: dict[str, tuple[int, ...]] | None = None,
               name: str = "model") -> Graph:
    model = fold_densify(read_model(data))
    imp = Importer(model, name, input_shapes or {})
    order = execution_order(model, imp.names)
    unsupported = [(op.code, op_label(op, imp.names)) for op in model.operators
                   if op.custom or op.code not in CONVERTERS]
    if unsupported:
        raise UnsupportedOpsError(unsupported)
    validate(model, imp.names)  # types, shapes, quantization each operator accepts (validate.py)
    imp.convert_all(order, CONVERTERS)
    state_outputs = finish_variables(imp)  # a streaming model's variables (ops_state.py)
    g = imp.finish()
    if state_outputs:
        g.outputs.extend(state_outputs)
        verify_graph(g)
    limits.check_graph(g)
    return g


def scan_bytes(data: bytes, name: str = "model") -> list[SourceOp]:
    model = fold_densify(read_model(data))
    imp = Importer(model, name, {}, tolerant=True)
    order = execution_order(model, imp.names)
    imp.convert_all(order, CONVERTERS)
    failed = {f.op.index: f.reason for f in imp.failures}
    result = []
    for op in model.operators:
        label = op_label(op, imp.names)
        reason = failed.get(op.index)
        if reason is None:
            reason = _kernel_problem(imp, op.index)
        result.append(SourceOp(op.code, label, reason is None, reason or ""))
    return result


def _kernel_problem(imp: Importer, index: int) -> str | None:
    """Why a converted operator has no Kiln kernel (the op's own check), or None."""
    for node in imp.nodes_of.get(index, ()):
        try:
            get_op(node.op).check(node, imp.b.g)
        except KilnError as err:
            return err.message
    return None


def _read(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise KilnError(f"cannot read model: {err.strerror}", where=str(path)) from None


def _graph_name(path: Path) -> str:
    return re.sub(r"\W", "_", Path(path).stem) or "model"

