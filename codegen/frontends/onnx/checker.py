"""The full ONNX checker (`onnx.checker.check_model(full_check=True)`: the schema of every
node, attribute and tensor, then strict shape inference) as one line per finding.

A model the checker rejects is broken in a way Kiln's converters may not notice (a scale
retyped to uint4 still holding float bytes, `group` on Mul, an initializer with a negative
dimension): compiled, it would return numbers nobody asked for. Users who must compile such a
model anyway (a producer's known quirk) pass `--no-check-model`; Kiln's own checks still apply.
"""

from __future__ import annotations

import re

import onnx

from codegen.errors import KilnError

HINT = "--no-check-model compiles it anyway"
# What the checker and shape inference raise on a bad model (not, e.g., a caller's timeout signal).
_FINDINGS = (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, ValueError, TypeError,
             RuntimeError, KeyError, IndexError)


def checker_finding(model: onnx.ModelProto) -> KilnError | None:
    """The checker's first finding as a KilnError naming it (and its node, when it names one)."""
    try:
        onnx.checker.check_model(_with_io_shapes(model), full_check=True)
    except _FINDINGS as err:
        finding, node = describe(str(err))
        return KilnError(f"the ONNX checker rejects the model: {finding} ({HINT})", node=node)
    return None


def _with_io_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model as Kiln reads it, for the checker: the shapes of graph inputs, outputs and
    value_info filled in where the producer left them out and ONNX's shape inference finds them
    (the checker requires them on the main graph, onnxruntime does not; a value_info entry
    without shape is dropped), and the nodes in execution order (Kiln orders them itself).
    Neither says anything about the model's soundness."""
    graph = model.graph
    infos = list(graph.input) + list(graph.output) + list(graph.value_info)
    lacking = any(vi.type.HasField("tensor_type") and not vi.type.tensor_type.HasField("shape") for vi in infos)
    order = _execution_order(graph)
    if not lacking and order is None:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    if order is not None:
        nodes = [copy.graph.node[k] for k in order]
        sorted_nodes = [onnx.NodeProto() for _ in nodes]
        for dst, src in zip(sorted_nodes, nodes):
            dst.CopyFrom(src)
        del copy.graph.node[:]
        copy.graph.node.extend(sorted_nodes)
    if not lacking:
        return copy
    try:
        inferred = onnx.shape_inference.infer_shapes(copy)
    except _FINDINGS:
        return copy  # the checker below says what is wrong
    known = {vi.name: vi for vi in list(inferred.graph.output) + list(inferred.graph.value_info)}
    for vi in list(copy.graph.input) + list(copy.graph.output):
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and not tt.HasField("shape"):
            found = known.get(vi.name)
            if found is not None and found.type.tensor_type.HasField("shape"):
                tt.shape.CopyFrom(found.type.tensor_type.shape)
    for field in (copy.graph.value_info, copy.graph.output):  # still without shape: out of the checker's copy
        kept = [vi for vi in field if not (vi.type.HasField("tensor_type") and not vi.type.tensor_type.HasField("shape"))]
        del field[:]
        field.extend(kept)
    return copy


def _execution_order(graph: onnx.GraphProto) -> list[int] | None:
    """Node indices in an order where every input is produced first, or None when the file's
    order already is one (or no order is: the checker then names the cycle)."""
    produced = {vi.name for vi in graph.input} | {t.name for t in graph.initializer} | {""}
    producer = {o: k for k, n in enumerate(graph.node) for o in n.output}
    if all(all(i in produced or producer.get(i, -1) < k for i in n.input) for k, n in enumerate(graph.node)):
        return None
    done: list[int] = []
    placed: set[int] = set()
    available = set(produced)
    progress = True
    while progress and len(done) < len(graph.node):
        progress = False
        for k, n in enumerate(graph.node):
            if k not in placed and all(i in available or i not in producer for i in n.input):
                done.append(k)
                placed.add(k)
                available.update(n.output)
                progress = True
    return done if len(done) == len(graph.node) else None


def describe(text: str) -> tuple[str, str | None]:
    """The finding as one line without the checker's context block, and the node it names."""
    node = None
    context = re.search(r"Name:\s*(\S*)\s+OpType:\s*(\S+)", text)
    if context:
        node = context.group(1) or None
        text = text[:text.index("==>")] if "==>" in text else text
    inferred = re.search(r"node name:\s*([^)]*)\)", text)
    if node is None and inferred:
        node = inferred.group(1).strip() or None
    line = " ".join(text.split())
    return (line[:500] + "..." if len(line) > 500 else line) or "no reason given", node
