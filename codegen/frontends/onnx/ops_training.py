"""The optimizer update rules of domain ai.onnx.preview.training (Adagrad, Momentum, Adam) as
float32 elementwise Kiln ops, following ONNX's definitions:

    g' = norm_coefficient * x + g                                  (all three)
    Adagrad:  h' = h + g'^2;  x' = x - r / (1 + t * decay) * g' / (sqrt(h') + eps)
    Momentum: v' = alpha * v + (t > 0 ? beta : 1) * g';  x' = x - r * v'
              (nesterov: x' = x - r * (g' + alpha * v'))
    Adam:     v' = alpha * v + (1 - alpha) * g';  h' = beta * h + (1 - beta) * g'^2
              x' = (1 - norm_coefficient_post) * (x - r' * v' / (sqrt(h') + eps)),
              r' = t > 0 ? r * sqrt(1 - beta^t) / (1 - alpha^t) : r

Inputs are R, T, then the tensors to update grouped by kind (all X, then all G, ...); each
group of one tensor of every kind is updated on its own. T (int64) is read as float32.
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.reader import OnnxNode

DOMAIN = "ai.onnx.preview.training"


class _Expr:
    """Elementwise Kiln ops of one node, each named by a running role."""

    def __init__(self, ctx: ConvertContext, node: OnnxNode):
        self.ctx, self.node, self.count = ctx, node, 0

    def op(self, op: str, *args, out: str | None = None) -> str:
        self.count += 1
        return self.ctx.add(self.node, op, [self.value(a) for a in args], out=out, role=f"t{self.count}")

    def value(self, a) -> str:
        if isinstance(a, (int, float)):
            return self.ctx.weight(self.node, f"c{self.count}", np.array(a, np.float32))
        return a

    def mul(self, a, b, out=None):
        return self.op("Mul", a, b, out=out)

    def add(self, a, b, out=None):
        return self.op("Add", a, b, out=out)

    def sub(self, a, b, out=None):
        return self.op("Sub", a, b, out=out)

    def div(self, a, b, out=None):
        return self.op("Div", a, b, out=out)


def _groups(node: OnnxNode, kinds: int) -> list[list[str]]:
    """The per-tensor groups (x, g, ...) of inputs 2.. and the matching outputs."""
    tensors = node.inputs[2:]
    if len(tensors) % kinds or not tensors:
        raise node.error(f"expects R, T and {kinds} inputs per optimized tensor, got {len(node.inputs)} inputs")
    n = len(tensors) // kinds
    return [[tensors[i + k * n] for k in range(kinds)] for i in range(n)]


def _outputs(node: OnnxNode, kinds: int, i: int, n: int) -> list[str]:
    return [node.outputs[i + k * n] if i + k * n < len(node.outputs) else "" for k in range(kinds)]


def _common(ctx: ConvertContext, node: OnnxNode) -> tuple[_Expr, str, str]:
    """The expression builder, R, and T as float32."""
    t = ctx.kiln(node.input(1))
    if ctx.dtype(node.input(1)) != "float32":
        t = ctx.add(node, "Cast", [t], role="t_float", to="float32")
    return _Expr(ctx, node), ctx.kiln(node.input(0)), t


def _regularized(e: _Expr, x: str, g: str) -> str:
    coefficient = float(e.node.attr("norm_coefficient", 0.0))
    return e.add(e.mul(coefficient, x), g) if coefficient else g


@converter(f"{DOMAIN}.Adagrad")
def convert_adagrad(ctx, node):
    e, r, t = _common(ctx, node)
    groups = _groups(node, 3)
    rate = e.div(r, e.add(1.0, e.mul(t, float(node.attr("decay_factor", 0.0)))))
    for i, (x, g, h) in enumerate(groups):
        x_out, h_out = _outputs(node, 2, i, len(groups))
        xv = ctx.kiln(x)
        gr = _regularized(e, xv, ctx.kiln(g))
        h_new = e.add(ctx.kiln(h), e.mul(gr, gr), out=h_out or None)
        scale = e.add(e.op("Sqrt", h_new), float(node.attr("epsilon", 0.0)))
        e.sub(xv, e.div(e.mul(rate, gr), scale), out=x_out or None)


@converter(f"{DOMAIN}.Momentum")
def convert_momentum(ctx, node):
    e, r, t = _common(ctx, node)
    alpha, beta = float(node.attr("alpha")), float(node.attr("beta"))
    mode = node.attr("mode", "standard")
    if mode not in ("standard", "nesterov"):
        raise node.error(f"mode '{mode}' is not standard or nesterov")
    groups = _groups(node, 3)
    first = e.op("Greater", t, 0.0)
    beta_now = e.op("Where", first, beta, 1.0)
    for i, (x, g, v) in enumerate(groups):
        x_out, v_out = _outputs(node, 2, i, len(groups))
        xv = ctx.kiln(x)
        gr = _regularized(e, xv, ctx.kiln(g))
        v_new = e.add(e.mul(alpha, ctx.kiln(v)), e.mul(beta_now, gr), out=v_out or None)
        step = v_new if mode == "standard" else e.add(gr, e.mul(alpha, v_new))
        e.sub(xv, e.mul(r, step), out=x_out or None)


@converter(f"{DOMAIN}.Adam")
def convert_adam(ctx, node):
    e, r, t = _common(ctx, node)
    alpha, beta = float(node.attr("alpha", 0.9)), float(node.attr("beta", 0.999))
    groups = _groups(node, 4)
    first = e.op("Greater", t, 0.0)
    corrected = e.div(e.mul(r, e.op("Sqrt", e.sub(1.0, e.op("Pow", beta, t)))), e.sub(1.0, e.op("Pow", alpha, t)))
    rate = e.op("Where", first, corrected, r)
    post = 1.0 - float(node.attr("norm_coefficient_post", 0.0))
    for i, (x, g, v, h) in enumerate(groups):
        x_out, v_out, h_out = _outputs(node, 3, i, len(groups))
        xv = ctx.kiln(x)
        gr = _regularized(e, xv, ctx.kiln(g))
        v_new = e.add(e.mul(alpha, ctx.kiln(v)), e.mul(1.0 - alpha, gr), out=v_out or None)
        h_new = e.add(e.mul(beta, ctx.kiln(h)), e.mul(1.0 - beta, e.mul(gr, gr)), out=h_out or None)
        scale = e.add(e.op("Sqrt", h_new), float(node.attr("epsilon", 1e-6)))
        x_new = e.sub(xv, e.mul(rate, e.div(v_new, scale)))
        e.mul(post, x_new, out=x_out or None)
