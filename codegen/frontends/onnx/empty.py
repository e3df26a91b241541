"""Tensors with no elements in ONNX models.

A tensor with no elements holds no data, so its value is known at compile time: Kiln binds it
as an empty constant and never computes one at run time (C99 has no zero-length arrays, and a
kernel looping over nothing is code for nothing). Nodes reading only constants then fold (a
Reduce over an empty axis gives its identity); empty graph inputs stay in the C API unread,
empty graph outputs stay in it unwritten (convert._bind_output, limits.check_graph).
"""

from __future__ import annotations

import numpy as np
from onnx import defs, helper, numpy_helper, shape_inference

from codegen import limits
from codegen.errors import KilnError
from codegen.frontends.onnx.context import CONVERTERS, ConvertContext
from codegen.frontends.onnx.reader import OnnxNode
from codegen.ir.types import np_dtype


def infer_outputs(ctx: ConvertContext, node: OnnxNode, types: dict[str, tuple[np.dtype, tuple[int, ...]]],
                  feeds: dict[str, np.ndarray]) -> dict[str, tuple[list[int] | None, np.dtype | None]]:
    """ONNX shape inference of one node: (static dims or None, numpy dtype or None) per output,
    given the inputs' (dtype, shape) and the data of the constant ones (small ones only)."""
    schema = defs.get_schema(node.op_type, ctx.opset, node.domain)
    protos = {k: helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(dt), shape)
              for k, (dt, shape) in types.items()}
    data = {k: numpy_helper.from_array(v, k) for k, v in feeds.items() if v.size <= 4096}
    inferred = shape_inference.infer_node_outputs(schema, node.proto, protos, input_data=data,
                                                  opset_imports=[helper.make_opsetid("", ctx.opset)])
    result = {}
    for out in node.outputs:
        t = inferred.get(out)
        tt = t.tensor_type if t is not None and t.HasField("tensor_type") else None
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim] \
            if tt is not None and tt.HasField("shape") else None
        dtype = None
        if tt is not None and tt.elem_type:
            try:
                dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
            except Exception:  # strings and the like: sized as pointers
                dtype = np.dtype(object)
        result[out] = (None if dims is None or None in dims else dims, dtype)
    return result


def bind_empty_input(ctx: ConvertContext, name: str) -> bool:
    """Bind a graph input with no elements as the empty constant it is (True), else False."""
    v = ctx.b.g.values[name]
    if limits.elements(v.shape) != 0:
        return False
    ctx.bind_const(name, np.zeros(v.shape, np_dtype(v.dtype)))
    return True


def reads_empty(ctx: ConvertContext, node: OnnxNode) -> bool:
    """Whether the node reads a tensor with no elements (then it may give only empty ones)."""
    return any(i and ctx.is_const(i) and not ctx.is_bound(i) and ctx.const(i).size == 0 for i in node.inputs)


def convert_runtime(ctx: ConvertContext, node: OnnxNode) -> None:
    """Run the node's converter; should its results have no elements (a Slice past the end),
    whether the converter refuses them or makes them, they become empty constants instead."""
    mark = ctx.checkpoint()
    try:
        CONVERTERS[node.full_type](ctx, node)
    except KilnError:
        ctx.rollback(mark)
        if not bind_empty_outputs(ctx, node):
            raise
        return
    empty = [o for o in node.outputs if o and ctx.is_bound(o) and limits.elements(ctx.shape(o)) == 0]
    if empty:
        ctx.rollback(mark)
        if not bind_empty_outputs(ctx, node):
            raise node.error(f"output '{empty[0]}' has no elements but other outputs of the node have some; "
                             "Kiln computes no tensor without elements at run time")


def bind_empty_outputs(ctx: ConvertContext, node: OnnxNode) -> bool:
    """Bind every output of `node` as an empty constant if ONNX shape inference says that each
    has no elements (True); change nothing otherwise (False)."""
    types, feeds = {}, {}
    try:
        for i in node.inputs:
            data = ctx.const(i) if i and not ctx.is_bound(i) else None
            if data is not None:
                types[i], feeds[i] = (data.dtype, data.shape), data
            elif i:
                types[i] = (np_dtype(ctx.onnx_dtype(i)), ctx.shape(i))
        inferred = infer_outputs(ctx, node, types, feeds)
    except Exception:
        return False
    results = {}
    for out in filter(None, node.outputs):
        dims, dtype = inferred.get(out, (None, None))
        if dims is None or dtype is None or limits.elements(dims) != 0:
            return False
        results[out] = np.zeros(dims, dtype)
    for out, data in results.items():
        ctx.bind_const(out, data)
    return bool(results)
