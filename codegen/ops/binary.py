"""Elementwise binary ops with numpy broadcasting (Add, Sub, Mul): the shared part.

float32: one loop over up to four coalesced dimensions with per-input strides.
Plain integers (no quantization parameters): wrapping arithmetic, one kernel per dtype.
int8 and int16 with quantization: TFLite's fixed-point arithmetic (codegen.quant), inputs and output per-tensor quantized;
the same broadcasting loop calls the per-element function of runtime_c/kiln_quant.h with the
constants TFLM's Prepare would compute. TFLM's broadcasting kernels apply the same function to
every element, so walking the broadcast differently does not change a single bit.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ops.request import KernelRequest, Lowering
from codegen.ir.types import INTEGER_DTYPES
from codegen.ops.broadcast_binary import SUFFIX
from codegen.ops.common import (apply_float_activation, broadcast_plan, broadcast_shape,
                                check_activation, float_activation, quant_of, require_dtypes)
from codegen.ops.registry import Op, OpKind

# The quantized types with TFLite's fixed-point Add / Sub / Mul, and their zero-point ranges.
QUANTIZED_RANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


class BinaryOp(Op):
    kind = OpKind.BROADCAST
    attributes = {"activation": "none"}
    arity = (2, 2)
    numpy_fn: ClassVar = None
    # "add" -> kernels add_f32 / add_bcast_s8 (not add_s8: kiln_quant.h already defines
    # kiln_add_s8, the per-element function the int8 kernel calls)
    kernel_stem: ClassVar[str]

    @classmethod
    def infer(cls, node, ins):
        a, b = ins
        if a.dtype != b.dtype:
            raise KilnError(f"{node.op} of {a.dtype} and {b.dtype}", node=node.name)
        return [(a.dtype, broadcast_shape(node, a.shape, b.shape))]

    @classmethod
    def is_quantized(cls, node: Node, g: Graph) -> bool:
        """int8 or int16 with quantization parameters (TFLite's arithmetic), not a plain integer tensor."""
        return g.values[node.inputs[0]].dtype in QUANTIZED_RANGE and any(
            g.values[n].quant is not None for n in (*node.inputs, node.outputs[0]))

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        require_dtypes(node, g, ("float32", *INTEGER_DTYPES))
        act = check_activation(node)
        if cls.is_quantized(node, g):
            cls.check_int8(node, g)
        elif g.values[node.inputs[0]].dtype != "float32" and act != "none":
            raise KilnError(f"integer {node.op} has no fused activation ('{act}')", node=node.name)

    @classmethod
    def check_int8(cls, node: Node, g: Graph) -> None:
        """Every tensor per-tensor quantized with a zero point of its type (0 for an int16 Mul or
        SquaredDifference, as TFLM's Prepare requires); TFLM accepts the scales."""
        dtype = g.values[node.inputs[0]].dtype
        zero_only = dtype == "int16" and cls.kernel_stem in ("mul", "squared_difference")
        lo, hi = (0, 0) if zero_only else QUANTIZED_RANGE[dtype]
        for name in (*node.inputs, node.outputs[0]):
            q = quant_of(g, name, node)
            if q.per_channel:
                raise KilnError(f"{dtype} {node.op} needs per-tensor quantization of '{name}'",
                                node=node.name)
            if not lo <= q.zp <= hi:
                raise KilnError(f"zero point {q.zp} of '{name}' is outside [{lo}, {hi}], what {dtype} "
                                f"{node.op} accepts", node=node.name)
        cls.int8_params(node, g)

    # -- int8: the per-op parts --------------------------------------------------------------
    @classmethod
    def quant_params(cls, node: Node, scales: list[float], zps: list[int], dtype: str = "int8") -> Any:
        """codegen.quant's constants (AddSubParams / MulParams) for (a, b, out) quantization of
        stored type `dtype` (int8, or int16 where the op has a 16-bit kernel)."""
        raise NotImplementedError

    @classmethod
    def int8_fn(cls, a: np.ndarray, b: np.ndarray, params: Any) -> np.ndarray:
        """codegen.quant's bit-exact numpy kernel (add_int8 / sub_int8 / mul_int8)."""
        raise NotImplementedError

    @classmethod
    def c_params(cls, params: Any) -> dict[str, int]:
        """The fields of the kernel's `q` struct (kiln_add_params / kiln_mul_params) by name."""
        raise NotImplementedError

    # -- int8: shared ------------------------------------------------------------------------
    @classmethod
    def int8_params(cls, node: Node, g: Graph) -> Any:
        qs = [quant_of(g, name, node) for name in (*node.inputs, node.outputs[0])]
        try:
            return cls.quant_params(node, [q.s for q in qs], [q.zp for q in qs], g.values[node.outputs[0]].dtype)
        except KilnError as err:
            err.node = err.node or node.name
            raise

    @classmethod
    def reference(cls, node, args, g):
        a, b = args
        if cls.is_quantized(node, g):
            return [cls.reference_int8(node, a, b, g)]
        if a.dtype != np.float32:  # plain integers wrap around
            with np.errstate(all="ignore"):
                out = cls.numpy_fn(a, b).astype(a.dtype)
            return [np.array(np.broadcast_to(out, g.values[node.outputs[0]].shape))]
        return [apply_float_activation(cls.numpy_fn(a, b).astype(np.float32), node)]

    @classmethod
    def reference_int8(cls, node: Node, a: np.ndarray, b: np.ndarray, g: Graph) -> np.ndarray:
        out = cls.int8_fn(a, b, cls.int8_params(node, g))
        return np.broadcast_to(out, g.values[node.outputs[0]].shape).astype(a.dtype)

    @classmethod
    def loop_params(cls, node: Node, ctx: Lowering) -> dict:
        g = ctx.g
        out = g.values[node.outputs[0]]
        dims, (sa, sb) = broadcast_plan(node, out.shape, g.values[node.inputs[0]].shape,
                                        g.values[node.inputs[1]].shape)
        return {"dims": dims, "a_strides": sa, "b_strides": sb}

    @classmethod
    def lower(cls, node, ctx):
        a, b = node.inputs
        dtype = ctx.g.values[a].dtype
        if dtype == "float32":
            lo, hi = float_activation(node)
            params = {**cls.loop_params(node, ctx), "act_min": lo, "act_max": hi}
            ctx.request(KernelRequest(f"{cls.kernel_stem}_f32", node, params, elementwise=True))
        elif cls.is_quantized(node, ctx.g):
            cls.lower_int8(node, ctx)
        else:  # the wrapping integer kernels (the broadcast2 family)
            ctx.request(KernelRequest(f"{cls.kernel_stem}_{SUFFIX[dtype]}", node, cls.loop_params(node, ctx),
                                      elementwise=True))

    @classmethod
    def lower_int8(cls, node: Node, ctx: Lowering) -> None:
        """One `<stem>_bcast_s8` (or `_s16`) call; the constants fill its nested `q` struct."""
        params = {**cls.loop_params(node, ctx), "q": cls.c_params(cls.int8_params(node, ctx.g))}
        suffix = "s16" if ctx.g.values[node.inputs[0]].dtype == "int16" else "s8"
        ctx.request(KernelRequest(f"{cls.kernel_stem}_bcast_{suffix}", node, params, headers=("kiln_quant.h",),
                                  elementwise=True))


def add_sub_c_params(p) -> dict[str, int]:
    """codegen.quant.AddSubParams as the fields of kiln_quant.h's kiln_add_params."""
    return {"left_shift": p.left_shift,
            "input1_offset": p.input1_offset, "input1_multiplier": p.input1_multiplier,
            "input1_shift": p.input1_shift,
            "input2_offset": p.input2_offset, "input2_multiplier": p.input2_multiplier,
            "input2_shift": p.input2_shift,
            "output_offset": p.output_offset, "output_multiplier": p.output_multiplier,
            "output_shift": p.output_shift,
            "act_min": p.activation_min, "act_max": p.activation_max}
