"""Conv2DAdd: an int8 convolution with the residual Add of a ResNet block in its epilogue.

Made by the fusion planner only (codegen/fusion/residual.py), never imported: a Conv2D whose
output is read by one int8 Add alone becomes one node reading the convolution's input and
weights and the Add's other input (the residual). Its arithmetic is the unfused pair's, step
by step: TFLM's ConvPerChannel requantized to the convolution's own output quantization and
activation (attribute `conv_quant`, the vanished intermediate's), then TFLM's AddFunc of that
value and the residual (both rescaled to the common Q20 scale, summed, requantized to the
output, clamped to `add_activation`). `conv_first`: the convolution's value was the Add's
first input (its constants are input1's).

The two halves are described by views (`conv_view`, `add_view`): the Conv2D and Add nodes as
they were, over small graphs holding the values they read, so that the reference and the
kernels' specs reuse the unfused ops' code unchanged.
"""

from __future__ import annotations

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node
from codegen.ir.types import Value
from codegen.ops.add import Add
from codegen.ops.conv2d import Conv2D, ohwi_geometry
from codegen.ops.registry import Op, OpKind, get_op, register
from codegen.ops.request import KernelRequest

CONV_ATTRS = ("strides", "dilations", "pads", "activation")


def conv_view(node: Node, g: Graph) -> tuple[Node, Graph]:
    """The Conv2D as it was, writing the fused node's output with the intermediate's
    quantization: the specs of conv2d_s8 prepare it as they would the unfused convolution."""
    out = g.values[node.outputs[0]]
    ins = [i for i in node.inputs[:3] if i]
    view = Graph(f"{node.name}_conv", values={i: g.values[i] for i in ins})
    view.add_value(Value(out.name, out.dtype, out.shape, node.attrs["conv_quant"]))
    conv = Node("Conv2D", node.name, list(node.inputs[:3]), [out.name],
                {k: node.attrs[k] for k in CONV_ATTRS}, node.origin)
    view.nodes.append(conv)
    return conv, view


def add_view(node: Node, g: Graph) -> tuple[Node, Graph]:
    """The Add as it was: the intermediate (`<output>__conv`) and the residual in their order."""
    out = g.values[node.outputs[0]]
    res = g.values[node.inputs[3]]
    mid = Value(f"{out.name}__conv", out.dtype, out.shape, node.attrs["conv_quant"])
    view = Graph(f"{node.name}_add", values={mid.name: mid, res.name: res, out.name: out})
    pair = [mid.name, res.name] if node.attrs["conv_first"] else [res.name, mid.name]
    add = Node("Add", node.name, pair, [out.name], {"activation": node.attrs["add_activation"]}, node.origin)
    view.nodes.append(add)
    return add, view


@register
class Conv2DAdd(Op):
    name = "Conv2DAdd"
    kind = OpKind.OUT_ELEMWISE_FUSABLE
    attributes = {"strides": (1, 1), "dilations": (1, 1), "pads": (0, 0, 0, 0), "activation": "none",
                  "conv_quant": None, "add_activation": "none", "conv_first": True}
    arity = (4, 4)  # x, weights, bias ('' when absent), residual
    kernels = ("conv2d_add_s8",)
    fuses = ("Conv2D", "Add")  # the ops it stands for (codegen/fusion/residual.py)
    epilogue_view = staticmethod(add_view)  # the step of its epilogue, as the cost model prices it

    @classmethod
    def infer(cls, node, ins):
        x, w, r = ins[0], ins[1], ins[3]
        geom = ohwi_geometry(node, x.shape, w.shape)
        shape = (geom.batches, geom.out_h, geom.out_w, w.shape[0])
        if r is None or tuple(r.shape) != shape:
            raise KilnError(f"Conv2DAdd residual {None if r is None else list(r.shape)} must have the "
                            f"convolution's output shape {list(shape)}", node=node.name)
        return [(x.dtype, shape)]

    @classmethod
    def check(cls, node: Node, g: Graph) -> None:
        if g.values[node.inputs[0]].dtype != "int8" or node.attrs["conv_quant"] is None:
            raise KilnError("Conv2DAdd is int8 only, with the convolution's output quantization",
                            node=node.name)
        conv, cv = conv_view(node, g)
        Conv2D.check(conv, cv)
        add, av = add_view(node, g)
        Add.check(add, av)

    @classmethod
    def macs(cls, node: Node, g: Graph) -> int:
        conv, view = conv_view(node, g)
        return Conv2D.macs(conv, view)

    @classmethod
    def reference(cls, node, args, g):
        conv, cv = conv_view(node, g)
        (mid,) = Conv2D.reference(conv, args[:3], cv)
        add, av = add_view(node, g)
        pair = [mid, args[3]] if node.attrs["conv_first"] else [args[3], mid]
        return get_op("Add").reference(add, pair, av)

    @classmethod
    def lower(cls, node, ctx):
        """One conv2d_add_s8 call: the kernel's spec prepares the convolution through
        `conv_view` and the Add's constants through `add_view` (codegen/kernels/*/conv2d_add_s8.py)."""
        x, wv = ctx.g.values[node.inputs[0]], ctx.g.values[node.inputs[1]]
        fields = {**ohwi_geometry(node, x.shape, wv.shape).params(), "in_c": wv.shape[3], "out_c": wv.shape[0]}
        ctx.request(KernelRequest("conv2d_add_s8", node, fields, headers=("kiln_quant.h",)))
