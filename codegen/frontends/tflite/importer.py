"""Turn a decoded TFLite subgraph (reader.ModelInfo) into a Kiln graph, op by op.

The driver orders the operators (checking for dangling inputs, double writes and cycles),
binds graph inputs (with user shapes for -1 dimensions), then hands each operator to its
converter in ops.py through an `OpContext`. Every Kiln output is checked against the type
TFLite recorded for the tensor, so a wrong mapping fails at import, naming the operator.

In tolerant mode (`kiln inspect`) an operator that cannot be converted is recorded and its
outputs become placeholders with TFLite's types, so that every later operator is still tried.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from codegen.errors import KilnError
from codegen.frontends.tflite.reader import ModelInfo, OperatorInfo, TensorInfo, empty_options
from codegen.ir.builder import GraphBuilder
from codegen.ir.graph import Graph
from codegen.ir.types import Quant, Value

# TFLite ActivationFunctionType -> Kiln fused activation.
_ACTIVATIONS = {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6"}
_ACTIVATION_NAMES = {4: "TANH", 5: "SIGN_BIT"}


def unique_names(model: ModelInfo) -> list[str]:
    """A distinct, whitespace-free value name for every tensor (TFLite names may repeat or be empty)."""
    taken: set[str] = set()
    names = []
    for t in model.tensors:
        base = re.sub(r"\s+", "_", t.name) or f"tensor_{t.index}"
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        names.append(name)
    return names


def op_label(op: OperatorInfo, names: list[str]) -> str:
    """What a TFLite operator is called in Kiln: the name of its first output tensor."""
    return names[op.outputs[0]] if op.outputs else f"operator_{op.index}"


def execution_order(model: ModelInfo, names: list[str]) -> list[int]:
    """Operator indices in a valid order (file order where possible); KilnError on broken dataflow."""
    tensors = model.tensors
    # graph inputs, constants and variable tensors (state an operator keeps: ops_state.py)
    available = set(model.inputs) | {t.index for t in tensors if t.data is not None or t.variable}
    producer: dict[int, int] = {}
    for op in model.operators:
        for o in op.outputs:
            who = f"{op.code} '{op_label(op, names)}'"
            if o in producer:
                raise KilnError(f"tensor is written by two operators (operator {producer[o]} and "
                                f"operator {op.index}, {op.code})", node=names[o])
            if tensors[o].data is not None:
                raise KilnError(f"{who} writes to a constant tensor", node=names[o])
            if o in model.inputs:
                raise KilnError(f"{who} writes to a graph input", node=names[o])
            producer[o] = op.index
    waiting: list[set[int]] = []
    users: dict[int, list[int]] = {}
    for op in model.operators:
        deps = set()
        for i in op.inputs:
            if i == -1 or i in available:
                continue
            if i not in producer:
                raise KilnError(f"{op.code} reads tensor '{names[i]}', which is neither a graph input, "
                                "a constant nor the output of an operator", node=op_label(op, names))
            deps.add(producer[i])
        waiting.append(deps)
        for d in deps:
            users.setdefault(d, []).append(op.index)
    ready = [k for k, deps in enumerate(waiting) if not deps]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users.get(k, ()):
            waiting[u].discard(k)
            if not waiting[u]:
                heapq.heappush(ready, u)
    if len(order) != len(model.operators):
        stuck = next(op for op in model.operators if waiting[op.index])
        raise KilnError(f"{stuck.code} is part of a cycle: operators read tensors that only later "
                        "operators of the cycle compute", node=op_label(stuck, names))
    for o in model.outputs:
        if o not in available and o not in producer:
            raise KilnError("graph output is never computed", node=names[o])
    return order


@dataclass
class Failure:
    """An operator the tolerant import could not convert, and why."""

    op: OperatorInfo
    reason: str


class Importer:
    """Builds the Kiln graph for one model; see the module docstring."""

    def __init__(self, model: ModelInfo, graph_name: str, input_shapes: dict[str, tuple[int, ...]],
                 tolerant: bool = False):
        self.model = model
        self.names = unique_names(model)
        self.b = GraphBuilder(graph_name)
        self.tolerant = tolerant
        self.defined: dict[int, str] = {}   # tensor index -> Kiln value name
        self.folded: dict[int, str] = {}    # tensor index -> its dequantized float constant
        self.unknown: set[int] = set()      # tolerant mode: outputs of failed ops with no Kiln type
        self.resized = False                # some -1 dimension got a user-given size
        self.failures: list[Failure] = []
        self.nodes_of: dict[int, list] = {}  # operator index -> Kiln nodes it produced
        self.variables = None  # resource variables (ops_state.Variables), from the first VAR_HANDLE
        self._bind_inputs(input_shapes)

    # -- graph inputs -------------------------------------------------------------------------
    def _bind_inputs(self, input_shapes: dict[str, tuple[int, ...]]) -> None:
        by_name = {}
        for i in self.model.inputs:
            by_name[self.model.tensors[i].name] = i
            by_name[self.names[i]] = i
        for key in input_shapes:
            if key not in by_name:
                listing = ", ".join(f"'{self.names[i]}'" for i in self.model.inputs)
                raise KilnError(f"an input shape is given for '{key}', but the model's inputs are {listing}")
        given = {by_name[k]: tuple(int(d) for d in s) for k, s in input_shapes.items()}
        for i in self.model.inputs:
            t = self.model.tensors[i]
            name = self.names[i]
            if i in self.defined:
                continue  # listed twice
            if t.dtype is None:
                raise KilnError(f"graph input of type {t.type_name}, which Kiln does not support", node=name)
            if t.data is not None:
                raise KilnError("graph input has constant data", node=name)
            shape = self._input_shape(t, name, given.get(i))
            self.b.input(name, t.dtype, shape, t.quant)
            self.defined[i] = name

    def _input_shape(self, t: TensorInfo, name: str, given: tuple[int, ...] | None) -> tuple[int, ...]:
        if given is None:
            return t.shape
        if len(given) != len(t.shape):
            raise KilnError(f"input shape {list(given)} has rank {len(given)}, the model's input has "
                            f"shape {list(t.signature or t.shape)}", node=name)
        for axis, (d, want) in enumerate(zip(given, t.shape)):
            if d < 1:
                raise KilnError(f"input shape {list(given)} has a non-positive dimension", node=name)
            if axis not in t.dynamic_dims and d != want:
                raise KilnError(f"dimension {axis} of the input is fixed at {want} by the model, "
                                f"got {d}", node=name)
        if given != t.shape:
            self.resized = True
        return given

    # -- operators ----------------------------------------------------------------------------
    def convert_all(self, order: Sequence[int], converters: dict) -> None:
        for k in order:
            op = self.model.operators[k]
            self.convert(op, converters.get(op.code) if not op.custom else None)

    def convert(self, op: OperatorInfo, conv) -> None:
        ctx = OpContext(self, op)
        if conv is None:
            reason = "custom operator" if op.custom else "no Kiln conversion for this TFLite builtin"
            self._fail(op, reason, ctx)
            return
        if any(i in self.unknown for i in op.inputs):
            self._fail(op, "not checked: an input comes from an unsupported operator", ctx)
            return
        before = len(self.b.g.nodes)
        try:
            conv.check_arity(ctx)
            conv.fn(ctx)
        except KilnError as err:
            if not self.tolerant:
                raise
            del self.b.g.nodes[before:]
            self._fail(op, err.message, ctx)
            return
        self.nodes_of[op.index] = self.b.g.nodes[before:]

    def _fail(self, op: OperatorInfo, reason: str, ctx: "OpContext") -> None:
        if not self.tolerant:
            raise ctx.error(reason)
        self.failures.append(Failure(op, reason))
        for o in op.outputs:
            if o in self.defined:
                continue
            t = self.model.tensors[o]
            if t.dtype is None:
                self.unknown.add(o)
                continue
            name = self.names[o]
            if name in self.b.g.values:  # a partly converted op left its output behind
                del self.b.g.values[name]
            self.b.g.add_value(Value(name, t.dtype, t.shape, t.quant))
            self.defined[o] = name

    def value(self, index: int, node: str) -> str:
        """The Kiln value for tensor `index`, adding constants to the graph when first used."""
        if index in self.defined:
            return self.defined[index]
        t = self.model.tensors[index]
        name = self.names[index]
        if t.data is None:
            raise KilnError(f"tensor '{name}' is used before it is computed", node=node)
        if t.sparse:
            raise KilnError(f"constant '{name}' is sparse, which Kiln does not support", node=node)
        if t.dtype is None:
            raise KilnError(f"constant '{name}' has type {t.type_name}, which Kiln does not support",
                            node=node)
        self.defined[index] = self.b.const(name, t.data, quant=t.quant)
        return self.defined[index]

    def finish(self) -> Graph:
        """Bind the graph outputs. An output the run function would never write (a constant, a
        graph input passed through) becomes a copy, named after it, into the caller's buffer."""
        outs = []
        for o in self.model.outputs:
            name = self.value(o, self.names[o])
            if name in outs:
                continue  # listed twice: one output
            g = self.b.g
            v = g.values[name]
            if v.is_const:  # the constant moves to <name>_data, the copy keeps the output's name
                data = g.fresh_name(f"{name}_data")
                v.name = data
                g.values = {(data if k == name else k): val for k, val in g.values.items()}
                for n in g.nodes:
                    n.inputs = [data if i == name else i for i in n.inputs]
                name = self.b.node("Reshape", [data], name=f"{name}_copy", outputs=[name], quant=v.quant,
                                   origin=(self.names[o],), shape=tuple(v.shape))
            elif name in g.inputs:  # passed through: the output needs a name of its own
                name = self.b.node("Reshape", [name], name=f"{name}_copy", outputs=[g.fresh_name(f"{name}_copy")],
                                   quant=v.quant, origin=(self.names[o],), shape=tuple(v.shape))
            outs.append(name)
        self.b.output(*outs)
        return self.b.build(verify=True)


class OpContext:
    """What a converter sees of one TFLite operator, and how it adds Kiln nodes."""

    def __init__(self, imp: Importer, op: OperatorInfo):
        self.imp = imp
        self.op = op
        self.code = op.code
        self.name = op_label(op, imp.names)

    # -- reading the operator -----------------------------------------------------------------
    def error(self, message: str) -> KilnError:
        return KilnError(f"{self.code}: {message}", node=self.name)

    def tensor(self, k: int) -> TensorInfo | None:
        """Input k's TFLite tensor, None when absent (-1 or past the end)."""
        if k >= len(self.op.inputs) or self.op.inputs[k] == -1:
            return None
        return self.imp.model.tensors[self.op.inputs[k]]

    def out_tensor(self, k: int = 0) -> TensorInfo:
        return self.imp.model.tensors[self.op.outputs[k]]

    def input(self, k: int) -> str:
        """Kiln value name of input k ('' when the optional input is absent)."""
        if self.tensor(k) is None:
            return ""
        return self.imp.value(self.op.inputs[k], self.name)

    def shape(self, k: int) -> tuple[int, ...]:
        """Input k's shape: Kiln's for computed values (they follow resized graph inputs), the
        file's for constants (without adding them to the graph)."""
        index = self.op.inputs[k]
        if index in self.imp.defined:
            return self.imp.b.g.values[self.imp.defined[index]].shape
        t = self.imp.model.tensors[index]
        return t.shape if t.data is not None else self.imp.b.g.values[self.input(k)].shape

    def const(self, k: int, what: str) -> np.ndarray:
        t = self.tensor(k)
        if t is None or t.data is None:
            raise self.error(f"input {k} ({what}) must be a constant")
        return t.data

    def options(self, expected: str) -> dict[str, Any]:
        """The builtin options, checked to be of type `expected`; schema defaults when absent."""
        if self.op.options_type == "NONE":
            return empty_options(expected)
        if self.op.options_type != expected:
            raise self.error(f"has builtin options of type {self.op.options_type}, expected {expected}")
        return {**empty_options(expected), **self.op.options}

    def activation(self, opts: dict[str, Any]) -> str:
        code = opts.get("FusedActivationFunction", 0)
        if code not in _ACTIVATIONS:
            raise self.error(f"fused activation {_ACTIVATION_NAMES.get(code, code)} is not supported "
                             "(only NONE, RELU, RELU6, RELU_N1_TO_1)")
        return _ACTIVATIONS[code]

    def static_out_shape(self, k: int = 0) -> tuple[int, ...]:
        """Output k's shape from the file, with -1 dimensions solved from the input size when
        the graph inputs were resized (used by Reshape-like ops, whose shape is not inferred)."""
        t = self.out_tensor(k)
        if not self.imp.resized or not t.dynamic_dims:
            return t.shape
        x = self.imp.b.g.values[self.input(0)]
        known = int(np.prod([d for i, d in enumerate(t.shape) if i not in t.dynamic_dims], dtype=np.int64))
        if len(t.dynamic_dims) != 1 or known == 0 or x.size % known:
            return t.shape
        shape = list(t.shape)
        shape[t.dynamic_dims[0]] = x.size // known
        return tuple(shape)

    # -- writing Kiln nodes -------------------------------------------------------------------
    def emit(self, kiln_op: str, inputs: Sequence[str], **attrs: Any) -> None:
        """Add the Kiln node standing for this operator; its outputs are the operator's outputs."""
        outs = [self.imp.names[o] for o in self.op.outputs]
        quants = [self.imp.model.tensors[o].quant for o in self.op.outputs]
        result = self.imp.b.node(kiln_op, list(inputs), name=self.name, outputs=outs, quant=quants,
                                 origin=(self.name,), **attrs)
        got = [result] if isinstance(result, str) else list(result)
        for o, name in zip(self.op.outputs, got):
            self._check_output(o, name, kiln_op)
            self.imp.defined[o] = name

    def emit_constant(self, data: np.ndarray, quant: Quant | None = None) -> None:
        """Define output 0 as a constant (an operator folded at import)."""
        o = self.op.outputs[0]
        self.imp.defined[o] = self.imp.b.const(self.imp.names[o], data, quant=quant)
        self._check_output(o, self.imp.defined[o], "folded constant")

    def _check_output(self, index: int, name: str, what: str) -> None:
        t = self.imp.model.tensors[index]
        v = self.imp.b.g.values[name]
        if name != self.imp.names[index]:
            raise self.error(f"output tensor '{self.imp.names[index]}' is defined twice")
        want = list(t.shape)
        got = list(v.shape)
        if self.imp.resized:  # -1 dimensions may differ from the file's placeholder 1
            want = [g if i in t.dynamic_dims else w for i, (w, g) in enumerate(zip(want, got))] \
                if len(want) == len(got) else want
        if v.dtype != t.dtype or got != want:
            raise self.error(f"Kiln's {what} gives {v.dtype}{got} for '{name}', but the model says "
                             f"{t.type_name.lower()}{list(t.signature or t.shape)}")
