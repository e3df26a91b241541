"""MatMul by a constant 2-D matrix becomes FullyConnected (keep_dims) with transposed weights.

a[.., K] @ B[K, N] is FullyConnected(a, B^T) keeping a's leading axes: the op that has int8
kernels, a bias input and a fused activation, so that a following Add(bias) or Relu folds
into it (fold_affine, fuse_activation). B often becomes constant only after folding (a
Gemm's transposed or scaled weights).

Needs: a verified graph. Keeps: every output's value, output names. Float32 only.
"""

from __future__ import annotations

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.graph_edit import add_const, clone


def matmul_to_fully_connected(g: Graph) -> Graph:
    g = clone(g)
    changed = False
    for k, node in enumerate(g.nodes):
        if node.op != "MatMul":
            continue
        a, b = (g.values[i] for i in node.inputs)
        if not b.is_const or len(b.shape) != 2 or a.dtype != "float32" or not a.shape:
            continue
        w = add_const(g, f"{node.inputs[1]}_t", np.ascontiguousarray(b.data.T))
        g.nodes[k] = Node("FullyConnected", node.name, [node.inputs[0], w], list(node.outputs),
                          {"activation": "none", "keep_dims": True}, node.origin)
        changed = True
    return eliminate_dead_code(g) if changed else g
