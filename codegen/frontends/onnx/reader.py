"""Reading an ONNX model file: the protobuf, its external data, its opset and its nodes.

Everything that can go wrong with the file itself (not a protobuf, truncated, missing external
data, an opset Kiln does not know, dangling or cyclic node inputs) becomes one KilnError line
here, so that the converters only ever see a well-formed, topologically ordered graph.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import external_data_helper, helper, numpy_helper

from codegen.errors import KilnError
from codegen.frontends.onnx.checker import checker_finding
from codegen.frontends.onnx.external_data import load_external_data

MIN_OPSET = 7  # Kiln maps the semantics of ai.onnx opsets 7 and later (tested up to 21)
DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass
class OnnxNode:
    """One ONNX node with its attributes decoded to Python values; '' marks an absent input."""

    op_type: str
    name: str  # node.name, or <op_type>_<index> when the model leaves it empty
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    domain: str = ""
    proto: onnx.NodeProto | None = None

    @property
    def full_type(self) -> str:
        """The op type as users know it: custom domains prefixed (com.microsoft.FusedConv)."""
        return self.op_type if self.domain in DEFAULT_DOMAINS else f"{self.domain}.{self.op_type}"

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def input(self, i: int) -> str:
        """The i-th input name, '' when absent (optional inputs may be missing or empty)."""
        return self.inputs[i] if i < len(self.inputs) else ""

    def error(self, message: str) -> KilnError:
        return KilnError(f"{self.op_type}: {message}", node=self.name)


@dataclass
class OnnxModel:
    """What the converters need from the file: opset, initializers, real inputs, sorted nodes."""

    name: str
    opset: int
    initializers: dict[str, onnx.TensorProto]
    inputs: list[onnx.ValueInfoProto]  # graph inputs that are not initializers
    outputs: list[onnx.ValueInfoProto]
    nodes: list[OnnxNode]  # in a valid execution order
    source_bytes: int = 0  # size of the serialised model (bounds what import may compute)
    checker_finding: KilnError | None = None  # the full ONNX checker's, when asked for (checker.py)


def read_proto(path: Path, check: bool = False) -> tuple[onnx.ModelProto, KilnError | None]:
    """The model protobuf with its external data loaded from the model's folder, and with
    `check` the full ONNX checker's finding (see checker.py), raised by the caller once Kiln's
    own listing of unsupported operators had its say."""
    try:
        model = onnx.load(str(path), load_external_data=False)
    except OSError as err:
        raise KilnError(f"cannot read model: {err.strerror or err}") from None
    except Exception as err:  # DecodeError, RuntimeError from the C++ parser, ...
        raise KilnError(f"not a valid ONNX model (protobuf does not parse: {_short(err)})") from None
    if not model.HasField("graph") or model.ir_version <= 0:
        raise KilnError("not a valid ONNX model (no graph or IR version)")
    load_external_data(model, path.resolve().parent)  # sizes checked before anything is read
    return model, checker_finding(model) if check else None


def _short(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def opset_of(model: onnx.ModelProto) -> int:
    """The ai.onnx opset the model is read as (7 and later). A model using only other
    domains (ai.onnx.ml, ai.onnx.preview.training) versions its ops by those domains, so the
    ai.onnx semantics Kiln assumes for its helper ops are those of MIN_OPSET."""
    versions = [op.version for op in model.opset_import if op.domain in DEFAULT_DOMAINS]
    if not versions:
        return MIN_OPSET
    version = max(versions)
    if version < MIN_OPSET:
        _check_unchanged_since(model.graph, version)
        return MIN_OPSET  # every op of the model reads the same at MIN_OPSET
    return version


def _check_unchanged_since(graph: onnx.GraphProto, version: int) -> None:
    """A model written for an opset before MIN_OPSET compiles when none of its ops changed
    between that opset and MIN_OPSET (Not, Relu, Sigmoid...): Kiln maps their semantics as of
    MIN_OPSET. Ops that did change (Add's `broadcast` attribute, BatchNormalization's
    `spatial`...) are all named in one error."""
    changed = set()
    for node in _all_nodes(graph):
        if node.domain not in DEFAULT_DOMAINS:
            continue
        try:
            old = onnx.defs.get_schema(node.op_type, version, node.domain).since_version
            now = onnx.defs.get_schema(node.op_type, MIN_OPSET, node.domain).since_version
        except onnx.defs.SchemaError:
            old, now = None, MIN_OPSET
        if old != now:
            changed.add(node.op_type)
    if changed:
        raise KilnError(f"ONNX opset {version} is not supported for {', '.join(sorted(changed))} "
                        f"(their definitions changed by opset {MIN_OPSET}, the first Kiln reads)")


def _all_nodes(graph: onnx.GraphProto):
    """The graph's nodes and those of every subgraph (If/Loop/Scan bodies)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(sub)


def read_model(path: Path, check: bool = False) -> OnnxModel:
    proto, finding = read_proto(path, check)
    model = parse_model(proto, default_name=path.stem)
    model.checker_finding = finding
    return model


def parse_model(model: onnx.ModelProto, default_name: str = "model") -> OnnxModel:
    graph = model.graph
    opset = opset_of(model)
    if graph.sparse_initializer:
        raise KilnError(f"sparse initializers are not supported "
                        f"('{_name_text(graph.sparse_initializer[0].values.name)}')")
    _check_names(graph)
    inits = {t.name: t for t in graph.initializer}
    inputs = [_tensor_of_optional(vi) for vi in graph.input if vi.name not in inits]
    seen_inputs: set[str] = set()
    for vi in inputs:
        if vi.name in seen_inputs:
            raise KilnError("graph input is listed twice", node=vi.name)
        seen_inputs.add(vi.name)
    nodes = [_node(n, i) for i, n in enumerate(graph.node)]
    _unique_node_names(nodes)
    known = set(inits) | {vi.name for vi in inputs}
    nodes = topological_order(nodes, known)
    produced = known | {o for n in nodes for o in n.outputs if o}
    for vi in graph.output:
        if vi.name not in produced:
            raise KilnError("graph output is computed by no node", node=vi.name)
    return OnnxModel(graph.name or default_name, opset, inits, inputs, list(graph.output), nodes,
                     model.ByteSize())


def _tensor_of_optional(vi: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    """An `optional(tensor)` graph input as its tensor: a caller of the compiled model always
    passes the tensor (Kiln's C API has no absent input), so OptionalHasElement folds to true."""
    if not (vi.type.HasField("optional_type") and vi.type.optional_type.elem_type.HasField("tensor_type")):
        return vi
    tensor = onnx.ValueInfoProto()
    tensor.CopyFrom(vi)
    tensor.type.CopyFrom(vi.type.optional_type.elem_type)
    return tensor


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # newlines and the like: names end up in one-line messages


def _name_text(name: str | bytes) -> str:
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else name


def _check_names(graph: onnx.GraphProto) -> None:
    """Every name is text (protobuf hands back bytes for a string field that is not UTF-8)
    without control characters (names appear in one-line error messages and C comments)."""
    def check(name, what: str, node: str | None = None) -> None:
        if isinstance(name, bytes):
            raise KilnError(f"{what} {_name_text(name)!r} is not valid UTF-8 text", node=node)
        if _CONTROL.search(name):
            raise KilnError(f"{what} {name!r} contains control characters", node=node and _CONTROL.sub("?", node))

    for t in graph.initializer:
        check(t.name, "initializer name")
    for vi in list(graph.input) + list(graph.output):
        check(vi.name, "graph input/output name")
    for i, n in enumerate(graph.node):
        check(n.name, "node name")
        label = n.name if isinstance(n.name, str) and n.name and not _CONTROL.search(n.name) else f"node {i}"
        for what, field in (("op type", [n.op_type]), ("domain", [n.domain]), ("input name", n.input),
                            ("output name", n.output), ("attribute name", [a.name for a in n.attribute])):
            for name in field:
                check(name, what, label)


def _node(proto: onnx.NodeProto, index: int) -> OnnxNode:
    name = proto.name or f"{proto.op_type}_{index}"
    attrs = {}
    for a in proto.attribute:
        try:
            value = helper.get_attribute_value(a)
        except Exception as err:
            raise KilnError(f"attribute '{a.name}' cannot be read: {_short(err)}", node=name) from None
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="replace")
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [v.decode("utf-8", errors="replace") for v in value]
        attrs[a.name] = value
    return OnnxNode(proto.op_type, name, list(proto.input), list(proto.output), attrs,
                    proto.domain, proto)


def _unique_node_names(nodes: list[OnnxNode]) -> None:
    """Kiln names nodes after the model; a name used twice gets a suffix to stay traceable."""
    seen: dict[str, int] = {}
    for n in nodes:
        k = seen.get(n.name, 0)
        seen[n.name] = k + 1
        if k:
            n.name = f"{n.name}_{k}"


def topological_order(nodes: list[OnnxNode], known: set[str]) -> list[OnnxNode]:
    """The nodes in an execution order, as close to the file's order as possible.

    Refuses tensors produced twice, inputs that nothing defines and cycles.
    """
    producer: dict[str, int] = {}
    for i, n in enumerate(nodes):
        for out in n.outputs:
            if not out:
                continue
            if out in known or out in producer:
                raise KilnError(f"tensor '{out}' is defined more than once", node=n.name)
            producer[out] = i
    waiting = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for name in dict.fromkeys(x for x in n.inputs if x):
            if name in producer:
                waiting[i] += 1
                users[producer[name]].append(i)
            elif name not in known:
                raise KilnError(f"{n.op_type}: input '{name}' is not a graph input, an initializer "
                                f"or the output of any node", node=n.name)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(nodes[i])
        for j in users[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    if len(order) != len(nodes):
        stuck = next(n for i, n in enumerate(nodes) if waiting[i] > 0)
        raise KilnError(f"{stuck.op_type}: the graph has a cycle through this node", node=stuck.name)
    return order


def tensor_array(t: onnx.TensorProto, where: str) -> np.ndarray:
    """An initializer or Constant tensor as a numpy array (KilnError when it cannot be read)."""
    if t.data_location == onnx.TensorProto.EXTERNAL and not t.raw_data:
        raise KilnError("external tensor data was not loaded", node=where)
    try:
        return np.asarray(numpy_helper.to_array(t))
    except Exception as err:
        raise KilnError(f"tensor '{t.name or where}' cannot be read: {_short(err)}", node=where) from None


ELEM_TYPE_NAMES = {v: k.lower() for k, v in onnx.TensorProto.DataType.items()}
