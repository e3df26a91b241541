"""Resource variables of streaming models: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE.

TFLite Micro keeps each variable (named by container and shared_name) in a buffer of its own
across Invoke()s; CALL_ONCE runs an initialisation subgraph on the first Invoke() only, which
assigns the initial values. Kiln evaluates that subgraph at compile time and turns the main
subgraph's variable traffic into dataflow, in operator order:

- a READ_VARIABLE before any ASSIGN_VARIABLE of the same variable in a call reads the value the
  variable had when the call began: a graph input carrying a `StateVar` (initial value, and the
  graph output that holds the value for the next call);
- an ASSIGN_VARIABLE makes the assigned value the variable's current one, which later reads see;
- once every operator is converted, `finish_variables` makes each variable's last value a graph
  output. codegen/lower/state.py later keeps both ends in the persistent state region.

A variable never assigned by the initialisation subgraph starts as zero bytes, as TFLite Micro
allocates it.

Variable tensors (is_variable: the state UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF update in place,
which TFLite Micro also keeps from one Invoke() to the next) are variables of the same kind,
read and assigned by their operator's converter (`read_tensor_variable`, `assign_tensor_variable`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.errors import KilnError
from codegen.frontends.tflite.converter import converts
from codegen.frontends.tflite.importer import Importer, OpContext
from codegen.frontends.tflite.reader import ModelInfo, TensorInfo
from codegen.ir.types import StateVar, np_dtype


@dataclass
class Variable:
    """One resource variable while the main subgraph is converted."""

    name: str  # shared_name (or container/shared_name)
    init: np.ndarray | None = None  # assigned by CALL_ONCE's subgraph
    start: str | None = None  # graph input: the value when a call begins (first read)
    current: str | None = None  # Kiln value assigned last in this call (None: not yet)


class Variables:
    """The variables of one import, by (container, shared_name), and the handle tensors."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], Variable] = {}
        self.handles: dict[int, Variable] = {}  # main subgraph's resource tensor -> variable
        self.initialised = False  # CALL_ONCE converted

    def get(self, options: dict) -> Variable:
        key = (str(options.get("Container", "")), str(options.get("SharedName", "")))
        if key not in self.by_key:
            self.by_key[key] = Variable("/".join(k for k in key if k) or "variable")
        return self.by_key[key]

    def of_handle(self, ctx: OpContext) -> Variable:
        index = ctx.op.inputs[0]
        if index not in self.handles:
            raise ctx.error("input 0 is not a resource handle made by VAR_HANDLE")
        return self.handles[index]


def _variables(imp: Importer) -> Variables:
    if imp.variables is None:
        imp.variables = Variables()
    return imp.variables


@converts("VAR_HANDLE", inputs=(0, 0))
def var_handle(ctx: OpContext) -> None:
    variables = _variables(ctx.imp)
    variables.handles[ctx.op.outputs[0]] = variables.get(ctx.options("VarHandleOptions"))


@converts("CALL_ONCE", inputs=(0, 0), outputs=0)
def call_once(ctx: OpContext) -> None:
    variables = _variables(ctx.imp)
    index = int(ctx.options("CallOnceOptions")["InitSubgraphIndex"])
    subgraphs = ctx.imp.model.subgraphs
    if not 0 < index < len(subgraphs):
        raise ctx.error(f"init_subgraph_index {index} is not a subgraph of the model "
                        f"(it has {len(subgraphs)})")
    sub = subgraphs[index]
    if isinstance(sub, KilnError):
        raise ctx.error(f"cannot read its initialisation subgraph {index}: {sub.message}")
    if variables.initialised:
        raise ctx.error("a second CALL_ONCE: Kiln supports one initialisation subgraph")
    if any(v.start is not None or v.current is not None for v in variables.by_key.values()):
        raise ctx.error("runs after a variable was read or assigned: Kiln needs CALL_ONCE first")
    variables.initialised = True
    _evaluate_init(ctx, sub, index, variables)


def _evaluate_init(ctx: OpContext, sub: ModelInfo, index: int, variables: Variables) -> None:
    """The initial values: the subgraph's ASSIGN_VARIABLEs of constants, in order."""
    handles: dict[int, Variable] = {}
    for op in sub.operators:
        if op.code == "VAR_HANDLE":
            handles[op.outputs[0]] = variables.get(op.options)
        elif op.code == "ASSIGN_VARIABLE" and len(op.inputs) == 2 and op.inputs[0] in handles:
            t = sub.tensors[op.inputs[1]]
            if t.data is None or t.sparse:
                raise ctx.error(f"subgraph {index} assigns variable '{handles[op.inputs[0]].name}' a computed "
                                "value; Kiln evaluates only assignments of constants there")
            handles[op.inputs[0]].init = t.data
        else:
            raise ctx.error(f"subgraph {index} runs {op.code}; Kiln evaluates only VAR_HANDLE and "
                            "ASSIGN_VARIABLE of constants in an initialisation subgraph")


@converts("READ_VARIABLE")
def read_variable(ctx: OpContext) -> None:
    var = _variables(ctx.imp).of_handle(ctx)
    t = ctx.out_tensor()
    if t.dtype is None:
        raise ctx.error(f"reads variable '{var.name}' as {t.type_name}, which Kiln does not support")
    if var.current is None and var.start is None:
        name = ctx.imp.names[ctx.op.outputs[0]]
        var.init = _initial(ctx, var, t)
        var.start = ctx.imp.b.input(name, t.dtype, t.shape, t.quant)
        ctx.imp.defined[ctx.op.outputs[0]] = var.start
        return
    _check_type(ctx, var, var.current or var.start, t.dtype, t.shape)
    # the stored bytes, under the quantization this operator gives them
    ctx.emit("Reshape", [var.current or var.start], shape=t.shape)


@converts("ASSIGN_VARIABLE", inputs=(2, 2), outputs=0)
def assign_variable(ctx: OpContext) -> None:
    var = _variables(ctx.imp).of_handle(ctx)
    t = ctx.tensor(1)
    if t.dtype is None:
        raise ctx.error(f"assigns variable '{var.name}' a {t.type_name} value, which Kiln does not support")
    value = ctx.input(1)
    known = var.current or var.start
    if known is not None:
        _check_type(ctx, var, known, t.dtype, ctx.shape(1))
    elif var.init is not None and (np_dtype(t.dtype) != var.init.dtype
                                   or var.init.size != int(np.prod(ctx.shape(1), dtype=np.int64))):
        raise ctx.error(f"assigns {t.type_name.lower()}{list(ctx.shape(1))} to variable '{var.name}', "
                        f"initialised as {var.init.dtype}{list(var.init.shape)}")
    var.current = value


def read_tensor_variable(ctx: OpContext, k: int) -> str:
    """Input k, a variable tensor: its value as the operator finds it in this call. It starts
    as TFLite Micro's ResetVariableTensors leaves it: the zero point for int8, else zeros."""
    t = ctx.tensor(k)
    if t is None or not t.variable or t.data is not None or t.dtype is None:
        raise ctx.error(f"input {k} must be a variable tensor (is_variable, no data) of a Kiln type")
    var = _tensor_variable(ctx, k)
    if var.current is not None:
        return var.current
    if var.start is None:
        fill = t.quant.zp if t.dtype == "int8" and t.quant is not None else 0
        var.init = np.full(t.shape, fill, np_dtype(t.dtype))
        var.start = ctx.imp.b.input(ctx.imp.names[t.index], t.dtype, t.shape, t.quant)
    return var.start


def assign_tensor_variable(ctx: OpContext, k: int, value: str) -> None:
    """The operator leaves `value` in its variable tensor k (read first: read_tensor_variable)."""
    _tensor_variable(ctx, k).current = value


def _tensor_variable(ctx: OpContext, k: int) -> Variable:
    variables = _variables(ctx.imp)
    key = ("tensor", str(ctx.op.inputs[k]))
    if key not in variables.by_key:
        variables.by_key[key] = Variable(ctx.imp.names[ctx.op.inputs[k]])
    return variables.by_key[key]


def _initial(ctx: OpContext, var: Variable, t: TensorInfo) -> np.ndarray:
    if var.init is None:  # never assigned before: TFLite Micro's zero-filled buffer
        return np.zeros(t.shape, np_dtype(t.dtype))
    if var.init.dtype != np_dtype(t.dtype) or var.init.size != int(np.prod(t.shape, dtype=np.int64)):
        raise ctx.error(f"reads variable '{var.name}' as {t.type_name.lower()}{list(t.shape)}, but "
                        f"CALL_ONCE initialises it as {var.init.dtype}{list(var.init.shape)}")
    return var.init.reshape(t.shape)


def _check_type(ctx: OpContext, var: Variable, known: str, dtype: str, shape: tuple[int, ...]) -> None:
    v = ctx.imp.b.g.values[known]
    if v.dtype != dtype or v.size != int(np.prod(shape, dtype=np.int64)):
        raise ctx.error(f"uses variable '{var.name}' as {dtype}{list(shape)}, elsewhere it is "
                        f"{v.dtype}{list(v.shape)}")


def finish_variables(imp: Importer) -> list[str]:
    """Mark each variable's start input with its StateVar; the graph outputs holding the values
    for the next call (to append to the graph's outputs). An output that is a constant, a graph
    input or output or another variable's is copied first, so that each has storage of its own."""
    if imp.variables is None:
        return []
    g = imp.b.g
    model_outputs = {imp.defined.get(o) for o in imp.model.outputs}
    outputs: list[str] = []
    for var in imp.variables.by_key.values():
        if var.start is None:  # assigned before any read: nothing persists
            continue
        nxt = var.current if var.current != var.start else None
        if nxt is not None:
            v = g.values[nxt]
            if v.is_const or nxt in g.inputs or nxt in model_outputs or nxt in outputs:
                nxt = imp.b.node("Reshape", [nxt], name=f"{var.start}_next", quant=v.quant,
                                 origin=(var.name,), shape=v.shape)
            outputs.append(nxt)
        g.values[var.start].state = StateVar(var.name, var.init, nxt)
    return outputs
