"""FusedElementwise: a chain of elementwise / broadcast ops run as one pass over the data.

The fusion planner (codegen/fusion/chain.py builds the node) replaces a chain
x -> op1 -> op2 -> ... -> y, each op's running value feeding the next and other operands read
with broadcasting, by one node whose `body` holds the original nodes. Its kernel keeps the
running value in a register: one load of each operand and one store per element, instead of
a store and a reload per step and one call per op.

int8 steps run the very per-element functions the unfused kernels call (kiln_add_s8,
kiln_sub_s8, kiln_mul_s8 with TFLM's constants; a 256-entry table for unary ops), each
step's requantization kept, so the chain is bit-exact with the unfused sequence. float32
steps expand the same macro of templates/kernels/reference/_elementwise_exprs.c.j2 as the
unfused kernels, in the same order: every float32 elementwise op with an expression can fuse,
and the fusion planner alone decides which do.

Kernel per chain: `fused_elementwise_<f32|s8>__<digest>`, rendered from the template of the
stem before `__` with the chain's steps; equal chains share one function.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import C_TYPES
from codegen.ops.binary import BinaryOp
from codegen.ops.broadcast_binary import BroadcastBinaryOp
from codegen.ops.common import broadcast_plan, float_activation
from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.registry import Op, OpKind, get_op, register
from codegen.ops.request import KernelRequest
from codegen.ops.unary import UnaryOp
from codegen.quant import unary_lut_int8

# int8 binary per-element functions and their constants' C type, by BinaryOp.kernel_stem.
INT8_BINARY = {"add": "kiln_add_params", "sub": "kiln_add_params", "mul": "kiln_mul_params",
               "squared_difference": "kiln_add_params", "div": "kiln_mul_params"}


@dataclass(frozen=True, eq=False)
class ChainBody:
    """The fused nodes and the values they read and write (a small graph of its own)."""

    graph: Graph

    def __repr__(self) -> str:  # printed in IR dumps and errors
        return "[" + " -> ".join(n.op for n in self.graph.nodes) + "]"


def step_fn(node: Node, dtype: str) -> str | None:
    """The fused template's name for this node's computation, None when it cannot fuse."""
    op = get_op(node.op)
    if issubclass(op, BinaryOp):
        return op.kernel_stem if dtype in ("float32", "int8") else None
    if dtype == "int8" and issubclass(op, UnaryOp):
        return "lut"
    if dtype != "float32":
        return None
    if issubclass(op, UnaryOp):
        return op.float_kernel
    if issubclass(op, FloatUnaryOp):
        return op.kernel(node)
    if issubclass(op, BroadcastBinaryOp) and op.float_expr(node) is not None:
        return op.kernel(node, dtype)
    return None


def step_expr(node: Node, fn: str) -> str:
    """The macro of _elementwise_exprs.c.j2 a float32 step expands ("" for Clip: its bounds
    are the step's clamps)."""
    op = get_op(node.op)
    if issubclass(op, BinaryOp):
        return fn
    if issubclass(op, BroadcastBinaryOp):
        return op.float_expr(node)
    return "" if fn == "clip_f32" else fn.removesuffix("_f32")


def chain_input(node: Node, g: Graph) -> str:
    """The input a chain starting at `node` runs over: a computed one of the output's shape
    (not a broadcast constant), the first input otherwise."""
    out = g.values[node.outputs[0]]
    full = [i for i in node.inputs if i and g.values[i].shape == out.shape]
    return next((i for i in full if not g.values[i].is_const), full[0] if full else node.inputs[0])


def running_inputs(nodes: list[Node], g: Graph) -> list[str]:
    """The input of each node that carries the chain's running value."""
    out = [chain_input(nodes[0], g)]
    for prev, n in zip(nodes, nodes[1:]):
        out.append(prev.outputs[0] if prev.outputs[0] in n.inputs else "")
    return out


@register
class FusedElementwise(Op):
    name = "FusedElementwise"
    kind = OpKind.ELEMENTWISE
    attributes = {"body": None}
    arity = (1, 64)
    kernels = ("fused_elementwise_f32", "fused_elementwise_s8")

    @classmethod
    def infer(cls, node, ins):
        body: Graph = node.attrs["body"].graph
        out = body.values[body.outputs[0]]
        return [(out.dtype, out.shape)]

    @classmethod
    def reference(cls, node, args, g):
        body: Graph = node.attrs["body"].graph
        env = {v.name: v.data for v in body.values.values() if v.is_const}
        env.update(zip(node.inputs, args))
        for n in body.nodes:
            (env[n.outputs[0]],) = get_op(n.op).reference(n, [env[i] if i else None for i in n.inputs], body)
        return [env[body.outputs[0]]]

    @classmethod
    def lower(cls, node, ctx):
        body: Graph = node.attrs["body"].graph
        out = node.outputs[0]
        dtype = body.values[node.inputs[0]].dtype
        running = running_inputs(body.nodes, body)
        shapes = [body.values[node.inputs[0]].shape] + [body.values[i].shape for i in node.inputs[1:]]
        dims, strides = broadcast_plan(node, body.values[out].shape, *shapes)
        params: dict = {"dims": dims, "x_strides": strides[0]}
        steps, operand_k = [], 0
        for k, (n, run) in enumerate(zip(body.nodes, running)):
            fn = step_fn(n, dtype)
            if fn is None:
                raise KilnError(f"{n.op} cannot run inside a fused {dtype} elementwise kernel", node=n.name)
            step = {"k": k, "fn": fn, "operand": -1, "value_left": True, "qtype": ""}
            if len(n.inputs) > 1:
                operand_k += 1
                step.update(operand=operand_k, value_left=n.inputs[0] == run)
                params[f"o{operand_k}_strides"] = strides[operand_k]
            fields, clamps = _step_params(n, body, fn, dtype, k, ctx)
            params.update(fields)
            step.update(clamp_lo=clamps[0], clamp_hi=clamps[1])
            if dtype == "int8" and fn in INT8_BINARY:
                step["qtype"] = INT8_BINARY[fn]
            steps.append(step)
        stem = "fused_elementwise_f32" if dtype == "float32" else "fused_elementwise_s8"
        shape = {"ctype": C_TYPES[dtype], "operands": operand_k, "steps": tuple(tuple(sorted(s.items())) for s in steps)}
        digest = hashlib.sha256(repr(shape).encode()).hexdigest()[:10]
        for n, step in zip(body.nodes, steps):  # derived from `fn` (in the digest): the expression to expand
            float_step = dtype == "float32"
            step.update(expr=step_expr(n, step["fn"]) if float_step else "",
                        params=float_step and issubclass(get_op(n.op), FloatUnaryOp) and get_op(n.op).has_params())
        kernel = f"{stem}__{digest}"
        ctx.request(KernelRequest(kernel, node, params, (*(ctx.tensor(i) for i in node.inputs), ctx.tensor(out)),
                                  ("math.h",) if dtype == "float32" else ("kiln_quant.h",), template=stem,
                                  template_vars=(("name", kernel), ("ctype", C_TYPES[dtype]), ("operands", operand_k),
                                                 ("steps", tuple(steps))), elementwise=True))


def _step_params(n: Node, body: Graph, fn: str, dtype: str, k: int, ctx) -> tuple[dict, tuple[bool, bool]]:
    """The params-struct fields of step k (clamp bounds, TFLM constants or a table) and
    whether the step clamps below / above (a float bound of +-inf clamps nothing: no test)."""
    op = get_op(n.op)
    if dtype == "int8":
        if fn == "lut":
            return {f"s{k}_table": ctx.constant(n, f"lut{k}", unary_lut_int8(op.int8_fn(n, body)), "int8")}, (False, False)
        return {f"s{k}_q.{key}": v for key, v in op.c_params(op.int8_params(n, body)).items()}, (False, False)
    if issubclass(op, FloatUnaryOp) and op.has_params():
        alpha, beta = op.c_params(n)
        return {f"s{k}_alpha": float(alpha), f"s{k}_beta": float(beta)}, (False, False)
    if fn == "clip_f32":
        lo, hi = op.bounds(n)
    elif issubclass(op, BinaryOp):
        lo, hi = float_activation(n)
    else:
        return {}, (False, False)
    fields = {}
    if lo != -np.inf:
        fields[f"s{k}_min"] = float(lo)
    if hi != np.inf:
        fields[f"s{k}_max"] = float(hi)
    return fields, (lo != -np.inf, hi != np.inf)
