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


def checker_finding(model: onnx.ModelProto) -> KilnError | None:
    """The checker's first finding as a KilnError naming it (and its node, when it names one)."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as err:  # ValidationError, InferenceError, and the C++ side's others
        finding, node = describe(str(err))
        return KilnError(f"the ONNX checker rejects the model: {finding} ({HINT})", node=node)
    return None


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
