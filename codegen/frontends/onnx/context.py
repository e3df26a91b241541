"""The converter registry and the state every converter works on.

A converter is one small function `(ctx, node) -> None` registered for one or more ONNX op
types with `@converter(...)`. It reads its inputs through the context (Kiln value names,
shapes, constant data), adds Kiln nodes with `ctx.add` and binds the ONNX output names.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import onnx

from codegen import limits
from codegen.errors import KilnError
from codegen.frontends.converters import ConverterTable, op_attrs
from codegen.ir.builder import GraphBuilder, dtype_of
from codegen.ir.types import Quant, Value, compute_dtype, dtype_name
from codegen.frontends.onnx.reader import OnnxNode, tensor_array

Converter = Callable[["ConvertContext", OnnxNode], None]

# Kiln ops whose int8 output is on its input's quantization grid.
QUANT_KEEPING = frozenset({"Reshape", "Transpose", "MaxPool2D"})

# ONNX op type -> converter; filled by the ops_* modules of this package.
CONVERTERS: ConverterTable[Converter] = ConverterTable("ONNX")
converter = CONVERTERS.converts  # @converter("Op", "domain.Op"): the shared idiom (codegen/frontends/converters.py)


def declared_attrs(node: OnnxNode, op: str, names: Mapping[str, str | None] | None = None,
                   convert: Mapping[str, Callable[[Any], Any]] | None = None) -> dict[str, Any]:
    """The attributes the ONNX node sets among those the Kiln op `op` declares (codegen/ops/<op>.py:
    the attribute schema and its defaults, declared once), an ONNX name differing from the op's
    given in `names`; an attribute the node leaves out takes the op's default there."""
    return op_attrs(op, node.attr, names, convert)


class ConvertContext:
    """Maps ONNX tensor names to Kiln values and constant data while a graph is built.

    Constants (initializers, Constant nodes, folded results) stay numpy arrays until a Kiln
    node reads them, so shape tensors and the like never become graph constants.
    """

    def __init__(self, builder: GraphBuilder, opset: int, initializers: dict[str, onnx.TensorProto],
                 reserved: set[str]):
        self.b = builder
        self.opset = opset
        self._init_protos = dict(initializers)
        self._consts: dict[str, np.ndarray] = {}
        self._kiln: dict[str, str] = {}  # ONNX tensor name -> Kiln value name
        self._reserved = reserved  # every ONNX tensor name: generated names avoid them
        self.fold_left = limits.MIN_FOLD_BUDGET  # bytes that constant folding may still compute
        # ONNX tensor -> its ONNX dtype where Kiln holds it in another (compute_dtype) one
        self.onnx_types: dict[str, str] = {}
        self.graph_outputs: set[str] = set()  # ONNX names of the graph outputs

    # -- reading tensors -----------------------------------------------------------------
    def known(self, name: str) -> bool:
        return name in self._kiln or self.is_const(name)

    def is_bound(self, name: str) -> bool:
        """Whether the ONNX tensor already has a Kiln value."""
        return name in self._kiln

    def is_const(self, name: str) -> bool:
        return name in self._consts or name in self._init_protos

    def const(self, name: str) -> np.ndarray | None:
        """The data of a constant tensor, None for a computed one (or an absent input '')."""
        if not name:
            return None
        if name not in self._consts and name in self._init_protos:
            self._consts[name] = tensor_array(self._init_protos.pop(name), name)
        return self._consts.get(name)

    def computed_const(self, name: str) -> np.ndarray | None:
        """const(name) in the dtype Kiln computes it in (float16 weights as float32, ...)."""
        data = self.const(name)
        return None if data is None else as_computed(data)

    def require_const(self, node: OnnxNode, index: int, what: str) -> np.ndarray:
        data = self.const(node.input(index))
        if data is None:
            raise node.error(f"{what} (input {index}, '{node.input(index)}') must be a constant")
        return data

    def value(self, name: str) -> Value:
        """The Kiln view of an ONNX tensor (constants in their compute dtype, see as_computed)."""
        data = self.const(name)
        if data is not None and name not in self._kiln:
            data = as_computed(data)
            return Value(name, _dtype_name(data), tuple(data.shape), None, data)
        return self.b.g.values[self.kiln(name)]

    def onnx_dtype(self, name: str) -> str:
        """The dtype the ONNX model gives a tensor (float16 where Kiln computes float32, ...)."""
        data = self.const(name)
        if name in self.onnx_types or data is None:
            return self.onnx_types.get(name) or self.dtype(name)
        return dtype_name(data.dtype) or str(data.dtype)

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.value(name).shape)

    def dtype(self, name: str) -> str:
        return self.value(name).dtype

    def kiln(self, name: str) -> str:
        """The Kiln value holding an ONNX tensor; constants become graph constants on first use."""
        if name in self._kiln:
            return self._kiln[name]
        if not name:
            raise KilnError("a required input is absent (empty input name)")
        data = self.const(name)
        if data is None:
            raise KilnError(f"tensor '{name}' has no value yet (internal ordering error)")
        try:
            kname = self.new_const(self.fresh(name) if name in self.b.g.values else name, data)
        except ValueError:
            raise KilnError(f"constant of dtype {data.dtype} is not supported", node=name) from None
        self._kiln[name] = kname
        return kname

    # -- undoing a converter -------------------------------------------------------------
    def checkpoint(self) -> tuple[int, int]:
        """The graph's extent now, to undo what a converter adds (see rollback)."""
        return len(self.b.g.nodes), len(self.b.g.values)

    def rollback(self, mark: tuple[int, int]) -> None:
        """Drop the nodes and values added since `checkpoint` (converters only append: values
        are a dict in insertion order) and the ONNX names bound to them."""
        g = self.b.g
        del g.nodes[mark[0]:]
        for name in list(g.values)[mark[1]:]:
            del g.values[name]
        self._kiln = {k: v for k, v in self._kiln.items() if v in g.values}

    # -- defining tensors ----------------------------------------------------------------
    def bind(self, onnx_name: str, kiln_name: str) -> None:
        """Let an ONNX tensor name a Kiln value that already exists."""
        if onnx_name:
            self._kiln[onnx_name] = kiln_name

    def alias(self, onnx_out: str, onnx_in: str) -> None:
        """Let an ONNX output stand for an ONNX input unchanged (Identity, Dropout)."""
        data = self.const(onnx_in)
        if data is not None and onnx_in not in self._kiln:
            self.bind_const(onnx_out, data)
        elif onnx_out:
            self._kiln[onnx_out] = self.kiln(onnx_in)

    def rename(self, old: str, new: str) -> None:
        """Rename a computed Kiln value everywhere (graph outputs keep their ONNX names)."""
        g = self.b.g
        value = g.values.pop(old)
        value.name = new
        g.values[new] = value
        for n in g.nodes:
            n.inputs = [new if i == old else i for i in n.inputs]
            n.outputs = [new if o == old else o for o in n.outputs]
        self._kiln = {k: (new if v == old else v) for k, v in self._kiln.items()}

    def bind_const(self, onnx_name: str, data: np.ndarray) -> None:
        if onnx_name:
            self._consts[onnx_name] = np.asarray(data)

    def fresh(self, base: str) -> str:
        """A new name for a value or node, clashing with no ONNX tensor name."""
        taken = self.b.g.values
        names = {n.name for n in self.b.g.nodes}
        cand, i = base, 0
        while cand in taken or cand in self._reserved or cand in names:
            i += 1
            cand = f"{base}_{i}"
        return cand

    def weight(self, node: OnnxNode, role: str, data: np.ndarray) -> str:
        """A Kiln constant derived at import time (transposed weights, folded bias, ...)."""
        return self.new_const(self.fresh(f"{node.name}_{role}"), data)

    def new_const(self, name: str, data: np.ndarray) -> str:
        """A Kiln graph constant named `name` (or a variant of it); returns its name."""
        data = as_computed(np.asarray(data))
        name = self.b.const(name, data)
        value = self.b.g.values[name]
        if np.ndim(data) == 0 and value.shape != ():  # keep scalars rank 0 (ascontiguousarray makes them 1-D)
            value.shape, value.data = (), value.data.reshape(())
        return name

    def add(self, node: OnnxNode, op: str, inputs: Sequence[str], *, out: str | None = None,
            role: str = "", quant: Quant | None = None, **attrs: Any) -> str:
        """Append one Kiln node standing for (part of) `node`; returns its output value name.

        `inputs` are Kiln value names (use ctx.kiln(onnx_name)); `out` is the ONNX output it
        defines, if any; `role` tells apart the several Kiln nodes of one ONNX node.
        """
        name = f"{node.name}_{role}" if role else node.name
        out_name = out if out and out not in self.b.g.values else self.fresh(name if role else f"{name}_out")
        result = self.b.node(op, list(inputs), name=name, outputs=[out_name], quant=quant,
                             origin=(node.name,), **attrs)
        if quant is None and op in QUANT_KEEPING and inputs:
            # an ai.onnx op moving the bytes of a QOperator model's quantized tensor (MaxPool,
            # Flatten on uint8): its output is on the same grid
            x, y = self.b.g.values[inputs[0]], self.b.g.values[result]
            if y.dtype == "int8" and x.dtype == "int8" and x.quant is not None and not x.quant.per_channel:
                y.quant = x.quant
        if out:
            self._kiln[out] = result
        return result


def as_computed(data: np.ndarray) -> np.ndarray:
    """Constant data of a storage-only dtype (float16, float64, int4, ...) converted to the dtype
    Kiln computes it in (float32, int8, ...), as a Cast would."""
    from codegen.ops.cast import cast_array

    dtype = dtype_name(data.dtype)
    if dtype is None or compute_dtype(dtype) == dtype:
        return data
    return cast_array(data, compute_dtype(dtype))


def _dtype_name(data: np.ndarray) -> str:
    try:
        return dtype_of(data)
    except ValueError:
        return str(data.dtype)
