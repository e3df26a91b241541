"""TfIdfVectorizer: counts of the pool's n-grams in each row of integer tokens, optionally
weighted (ONNX TfIdfVectorizer with pool_int64s); int32 / int64 x[C] or x[N, C] -> float32
[size] or [N, size].

The frontend builds ONNX's n-gram trie at compile time and hands it over flattened in
breadth-first order: node 0 is the root, node k + 1 holds key `keys[k]`, the children of node
i are nodes child_begin[i] + 1 .. child_begin[i + 1] (keys ascending), `slots[i]` is the output
coordinate of the n-gram ending at node i (-1: only a prefix). As ONNX's reference, every
skip distance 1 .. max_skip + 1 walks the trie from every start position, counting each
n-gram of min_gram..max_gram tokens it meets (unigrams at the first distance only); "IDF"
then turns counts into weights[i] (0 stays 0), "TFIDF" multiplies them by weights[i] (per
output coordinate: the frontend moves ONNX's per-n-gram weights to their coordinates). The
output shape is static: `size` coordinates per row.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.broadcast_binary import SUFFIX, kernel_names
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest

MODES = ("TF", "IDF", "TFIDF")  # index = the kernel's switch value


@register
class TfIdfVectorizer(Op):
    name = "TfIdfVectorizer"
    kind = OpKind.OPAQUE
    attributes = {"mode": "TF", "min_gram": 1, "max_gram": 1, "max_skip": 0, "size": 1,
                  "child_begin": (0, 0), "keys": (), "slots": (-1,), "weights": ()}
    arity = (1, 1)
    kernels = kernel_names("tfidf_vectorizer", ("int32", "int64"))

    @classmethod
    def infer(cls, node, ins):
        (x,) = ins
        a = node.attrs
        nodes = len(a["slots"])
        if len(x.shape) > 2:
            raise KilnError(f"TfIdfVectorizer input must be [C] or [N, C], got {list(x.shape)}", node=node.name)
        if a["mode"] not in MODES:
            raise KilnError(f"TfIdfVectorizer mode '{a['mode']}' is not one of {', '.join(MODES)}", node=node.name)
        if len(a["child_begin"]) != nodes + 1 or len(a["keys"]) != nodes - 1 or \
                any(not -1 <= s < int(a["size"]) for s in a["slots"]) or len(a["weights"]) not in (0, int(a["size"])):
            raise KilnError("TfIdfVectorizer n-gram tables are inconsistent", node=node.name)
        if not 1 <= int(a["min_gram"]) <= int(a["max_gram"]) or int(a["max_skip"]) < 0:
            raise KilnError("TfIdfVectorizer needs 1 <= min_gram_length <= max_gram_length, max_skip_count >= 0",
                            node=node.name)
        return [("float32", _output_shape(x.shape, int(a["size"])))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("int32", "int64"))

    @classmethod
    def reference(cls, node, args, g):
        (x,) = args
        a = node.attrs
        size = int(a["size"])
        rows = x.reshape(-1, x.shape[-1] if x.ndim else 1)
        out = np.zeros((rows.shape[0], size), np.float32)
        for row, y in zip(rows, out):
            for at in _matches(a, [int(v) for v in row]):
                y[at] += np.float32(1)
        weights = np.asarray(a["weights"] or (1.0,) * size, np.float32)
        if a["mode"] == "IDF":
            out = np.where(out > 0, weights, np.float32(0)).astype(np.float32)
        elif a["mode"] == "TFIDF":
            out = (out * weights).astype(np.float32)
        return [out.reshape(_output_shape(x.shape, size))]

    @classmethod
    def lower(cls, node, ctx):
        a = node.attrs
        x = ctx.g.values[node.inputs[0]]
        size = int(a["size"])
        params = {"rows": int(np.prod(x.shape[:-1])) if x.shape else 1, "width": x.shape[-1] if x.shape else 1,
                  "size": size, "mode": MODES.index(a["mode"]),
                  "min_gram": int(a["min_gram"]), "max_gram": int(a["max_gram"]), "max_skip": int(a["max_skip"]),
                  "child_begin": ctx.constant(node, "child_begin", a["child_begin"], "int32"),
                  "keys": ctx.constant(node, "keys", a["keys"] or (0,), "int64"),
                  "slots": ctx.constant(node, "slots", a["slots"], "int32"),
                  "weights": ctx.constant(node, "weights", a["weights"] or (1.0,) * size, "float32")}
        ctx.request(KernelRequest(f"tfidf_vectorizer_{SUFFIX[x.dtype]}", node, params,
                                  (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0]))))


def _output_shape(in_shape: tuple[int, ...], size: int) -> tuple[int, ...]:
    """A row of `size` per input row (a 0-D or 1-D input is one row)."""
    return (*in_shape[:-1], size) if in_shape else (size,)


def _child(a, at: int, key: int) -> int:
    """The trie node under `at` holding `key`, -1 if none."""
    for k in range(a["child_begin"][at], a["child_begin"][at + 1]):
        if a["keys"][k] == key:
            return k + 1
    return -1


def _matches(a, row: list[int]):
    """The output coordinate of every counted n-gram of one row, in the kernel's order."""
    shortest = int(a["min_gram"])
    for distance in range(1, int(a["max_skip"]) + 2):
        for start in range(len(row)):
            if start + distance * (shortest - 1) >= len(row):
                break
            at, length = 0, 1
            for item in range(start, len(row), distance):
                if length > int(a["max_gram"]):
                    break
                at = _child(a, at, row[item])
                if at < 0:
                    break
                if length >= shortest and a["slots"][at] >= 0:
                    yield a["slots"][at]
                length += 1
        if shortest == 1:  # unigrams do not depend on the distance: counted once
            shortest = 2
            if shortest > int(a["max_gram"]):
                break
