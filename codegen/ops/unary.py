"""Elementwise unary ops (Clip, Sigmoid, Tanh, and the int8 side of Quantize; IsNaN and IsInf):
the shared part.

float32 runs a per-op kernel (`<op>_f32`) over the flat tensor. int8 -> int8 ops are pure
functions of the input byte, so they are tabulated at compile time from their bit-exact
numpy emulation (TFLM's arithmetic) and run as one table look-up per element: the shared
`unary_lut_s8` kernel (kiln_lut_s8 of kiln_quant.h per element), 256 bytes of flash per node.
"""

from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ops.common import quant_of, require_dtypes
from codegen.ops.registry import Op, OpKind
from codegen.quant import unary_lut_int8

Int8Fn = Callable[[np.ndarray], np.ndarray]


def per_tensor_quants(node: Node, g: Graph):
    """(input quant, output quant) of an int8 -> int8 node, refusing per-channel ones."""
    qi, qo = quant_of(g, node.inputs[0], node), quant_of(g, node.outputs[0], node)
    if qi.per_channel or qo.per_channel:
        raise KilnError(f"int8 {node.op} needs per-tensor quantization", node=node.name)
    return qi, qo


def lower_lut(node: Node, ctx: Lowering, fn: Int8Fn) -> None:
    """Emit `out[i] = table[(uint8_t)in[i]]` with the table of `fn` over all 256 inputs."""
    x, out = node.inputs[0], node.outputs[0]
    table = ctx.constant(node, "lut", unary_lut_int8(fn), "int8")
    ctx.request(KernelRequest("unary_lut_s8", node, {"n": ctx.g.values[x].size, "table": table},
                              (ctx.tensor(x), ctx.tensor(out)), ("kiln_quant.h",), elementwise=True))


class UnaryOp(Op):
    """Same shape and dtype in and out; float32 kernel `float_kernel`, int8 by table."""

    kind = OpKind.ELEMENTWISE
    arity = (1, 1)
    float_kernel: ClassVar[str]
    float_headers: ClassVar[tuple[str, ...]] = ()
    int16_kernel: ClassVar[str] = ""  # an int16 -> int16 kernel of TFLM's arithmetic, if any

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        return [(x.dtype, x.shape)]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        dtype = require_dtypes(node, g, ("float32", "int8") + (("int16",) if cls.int16_kernel else ()))
        if dtype == "int8":
            cls.int8_fn(node, g)  # raises when TFLM has no kernel for these quantizations
        elif dtype == "int16":
            cls.int16_lowering(node, g)

    @classmethod
    def int16_lowering(cls, node: Node, g: Graph) -> tuple[Int8Fn, dict]:
        """The exact int16 -> int16 function of this node and the fields of `int16_kernel`'s
        block apart from `n` (constants as numpy arrays, registered at lowering)."""
        raise NotImplementedError

    @classmethod
    def int8_fn(cls, node: Node, g: Graph) -> Int8Fn:
        """The exact int8 -> int8 function of this node (TFLM's arithmetic)."""
        raise NotImplementedError

    @classmethod
    def reference_float(cls, node: Node, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def float_params(cls, node: Node) -> dict:
        return {}

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        if x.dtype == np.int8:
            return [np.asarray(cls.int8_fn(node, g)(x)).astype(np.int8)]
        if x.dtype == np.int16:
            return [np.asarray(cls.int16_lowering(node, g)[0](x)).astype(np.int16)]
        return [np.asarray(cls.reference_float(node, x)).astype(np.float32)]

    @classmethod
    def lower(cls, node, ctx: Lowering):
        x, out = node.inputs[0], node.outputs[0]
        if ctx.g.values[x].dtype == "int8":
            lower_lut(node, ctx, cls.int8_fn(node, ctx.g))
            return
        if ctx.g.values[x].dtype == "int16":
            fields = {k: ctx.constant(node, k, v, "uint16") if isinstance(v, np.ndarray) else v
                      for k, v in cls.int16_lowering(node, ctx.g)[1].items()}
            ctx.request(KernelRequest(cls.int16_kernel, node, {"n": ctx.g.values[x].size, **fields},
                                      (ctx.tensor(x), ctx.tensor(out)), ("kiln_fixedpoint.h",)))
            return
        params = {"n": ctx.g.values[x].size, **cls.float_params(node)}
        ctx.request(KernelRequest(cls.float_kernel, node, params, (ctx.tensor(x), ctx.tensor(out)),
                                  tuple(cls.float_headers), elementwise=True))


class FloatPredicateOp(Op):
    """A float32 -> bool test of each element (IsNaN, IsInf). Both kernels come from one
    template (the float_test family, templates/kernels/reference/float_test.c.j2) whose parameters carry IsInf's
    two sign switches; IsNaN passes them set and its test ignores them."""

    kind = OpKind.ELEMENTWISE
    arity = (1, 1)

    @classmethod
    def detected_signs(cls, node: Node) -> tuple[bool, bool]:
        """(negative, positive): the kernel's sign switches."""
        return True, True

    @classmethod
    def infer(cls, node, ins):
        return [("bool", ins[0].shape)]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))

    @classmethod
    def lower(cls, node, ctx):
        x, out = node.inputs[0], node.outputs[0]
        negative, positive = cls.detected_signs(node)
        (kernel,) = cls.kernels
        ctx.request(KernelRequest(kernel, node, {"n": ctx.g.values[x].size, "negative": negative, "positive": positive},
                                  (ctx.tensor(x), ctx.tensor(out))))
