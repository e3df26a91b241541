"""SquaredDistance: |x_n - v_m|^2 for every row x_n of x [N, F] and row v_m of v [V, F] -> [N, V].

The RBF kernel of ai.onnx.ml's SVMs (ops_ml_svm.py). Each distance is summed feature by
feature in float32 (acc = 0; acc += (x[f] - v[f])^2 for f ascending, the product rounded
before the sum), the order in which onnxruntime computes it, so the C kernel, the numpy
reference and onnxruntime agree to the bit. One op instead of Sub -> Mul -> ReduceSum keeps
the [N, V, F] differences out of the arena. v is usually constant (support vectors in flash).
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.request import KernelRequest


@register
class SquaredDistance(Op):
    name = "SquaredDistance"
    kind = OpKind.OPAQUE
    arity = (2, 2)
    kernels = ("squared_distance_f32",)

    @classmethod
    def infer(cls, node, ins):
        x, v = ins
        if len(x.shape) != 2 or len(v.shape) != 2 or x.shape[1] != v.shape[1]:
            raise KilnError(f"SquaredDistance needs x [N, F] and v [V, F] with the same F, got {list(x.shape)} "
                            f"and {list(v.shape)}", node=node.name)
        return [(x.dtype, (x.shape[0], v.shape[0]))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))
        if g.values[node.inputs[1]].dtype != "float32":
            raise KilnError(f"SquaredDistance v is {g.values[node.inputs[1]].dtype}, float32 expected",
                            node=node.name)

    @classmethod
    def macs(cls, node, g):
        return g.values[node.outputs[0]].size * g.values[node.inputs[0]].shape[1]

    @classmethod
    def reference(cls, node, args, g):
        x, v = (np.asarray(a, np.float32) for a in args)
        acc = np.zeros((x.shape[0], v.shape[0]), np.float32)
        with np.errstate(all="ignore"):
            for f in range(x.shape[1]):  # in the kernel's order, every step rounded to float32
                d = x[:, f, None] - v[None, :, f]
                acc = acc + d * d
        return [acc]

    @classmethod
    def lower(cls, node, ctx):
        x, v = (ctx.g.values[name] for name in node.inputs)
        ctx.request(KernelRequest("squared_distance_f32", node,
                                  {"rows": x.shape[0], "vectors": v.shape[0], "features": x.shape[1]},
                                  (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), ctx.tensor(node.outputs[0]))))
