"""TFLite Micro as the oracle of the linear ops (Conv2D, DepthwiseConv2D, FullyConnected).

Two ways in:
- `model_layers`: every CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED of a real .tflite
  model as a one-node Kiln graph, with the input and output TFLM computed for that layer
  (the interpreter keeps all tensors readable with kPreserveAllTensors); float models
  run in LiteRT's reference kernels instead (experimental_preserve_all_tensors).
- `tflm_run_node`: write a one-node Kiln graph as a one-operator .tflite (tflite-micro's
  model editor) and run it in TFLM, for quantization parameters and shapes of our choosing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

from codegen.ir import Graph, GraphBuilder, Quant
from codegen.ops.conv_geometry import same_pads

OPS = schema.BuiltinOperator
KILN_OP = {OPS.CONV_2D: "Conv2D", OPS.DEPTHWISE_CONV_2D: "DepthwiseConv2D",
           OPS.FULLY_CONNECTED: "FullyConnected"}
TFLITE_OP = {v: k for k, v in KILN_OP.items()}
_ACT = {schema.ActivationFunctionType.NONE: "none", schema.ActivationFunctionType.RELU: "relu",
        schema.ActivationFunctionType.RELU6: "relu6",
        schema.ActivationFunctionType.RELU_N1_TO_1: "relu_n1_to_1"}
_TFL_ACT = {v: k for k, v in _ACT.items()}
_TYPES = {schema.TensorType.INT8: "int8", schema.TensorType.INT32: "int32",
          schema.TensorType.FLOAT32: "float32"}
_TFL_TYPES = {v: k for k, v in _TYPES.items()}


@dataclass
class Layer:
    """One linear layer of a model, as a Kiln graph (input "x"), with TFLM's tensors."""

    name: str
    op: str
    graph: Graph
    x: np.ndarray
    y: np.ndarray


def _quant(t) -> Quant | None:
    q = t.quantization
    if q is None or q.scale is None or len(q.scale) == 0:
        return None
    return Quant.of(np.asarray(q.scale), np.asarray(q.zeroPoint), int(q.quantizedDimension))


def _opcode(m, op) -> int:
    oc = m.operatorCodes[op.opcodeIndex]
    return max(oc.builtinCode, oc.deprecatedBuiltinCode)


def _layer_graph(m, sg, op, name: str) -> Graph:
    kiln_op = KILN_OP[_opcode(m, op)]
    b = GraphBuilder(name)
    tx, tw, ty = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]], sg.tensors[op.outputs[0]]
    x = b.input("x", _TYPES[tx.type], tuple(tx.shape), _quant(tx))

    def const(t, cname):
        dtype = _TYPES[t.type]
        arr = np.frombuffer(bytes(m.buffers[t.buffer].data), dtype=dtype).reshape(tuple(t.shape))
        return b.const(cname, arr.copy(), quant=_quant(t))

    ins = [x, const(tw, "w")]
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        ins.append(const(sg.tensors[op.inputs[2]], "b"))
    o = op.builtinOptions
    attrs = {"activation": _ACT[o.fusedActivationFunction]}
    if kiln_op == "FullyConnected":
        attrs["keep_dims"] = bool(o.keepNumDims)
    else:
        strides, dilations = (o.strideH, o.strideW), (o.dilationHFactor, o.dilationWFactor)
        pads = (0, 0, 0, 0)
        if o.padding == schema.Padding.SAME:
            pads = same_pads(tx.shape[1:3], tw.shape[1:3], strides, dilations)
        attrs.update(strides=strides, dilations=dilations, pads=pads)
        if kiln_op == "DepthwiseConv2D":
            attrs["depth_multiplier"] = int(tw.shape[3] // tx.shape[3])
    y = b.node(kiln_op, ins, quant=_quant(ty), **attrs)
    return b.output(y).build()


def model_layers(path: Path, seed: int = 0) -> list[Layer]:
    """The linear layers of a .tflite model with each one's input and output for one random
    model input, as TFLM computes them (int8 models) or LiteRT (float models, which DESIGN.md
    names as their reference). Hybrid layers (float input, int8 weights) are left out."""
    data = Path(path).read_bytes()
    m = schema.ModelT.InitFromPackedBuf(data, 0)
    sg = m.subgraphs[0]
    t_in = sg.tensors[sg.inputs[0]]
    shape = tuple(int(d) for d in t_in.shape)
    rng = np.random.default_rng(seed)
    if _TYPES[t_in.type] == "int8":
        x = rng.integers(-128, 128, size=shape, dtype=np.int8)
        interp = runtime.Interpreter.from_bytes(
            data, arena_size=4 * 1024 * 1024,
            intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
        interp.set_input(x, 0)
        interp.invoke()

        def tensor(i):
            return interp.GetTensor(i, 0)["tensor_data"]
    else:
        from ai_edge_litert.interpreter import Interpreter

        x = rng.standard_normal(shape).astype(np.float32)
        lite = Interpreter(model_content=data, experimental_preserve_all_tensors=True,
                           experimental_op_resolver_type=_litert_reference())
        lite.allocate_tensors()
        lite.set_tensor(sg.inputs[0], x)
        lite.invoke()
        tensor = lite.get_tensor
    layers = []
    for k, op in enumerate(sg.operators):
        if _opcode(m, op) not in KILN_OP:
            continue
        if sg.tensors[op.inputs[0]].type != sg.tensors[op.inputs[1]].type:
            continue  # hybrid: dequantized by the frontend, not a kernel of its own
        name = f"{Path(path).stem}_op{k}"
        g = _layer_graph(m, sg, op, name)
        layers.append(Layer(name, KILN_OP[_opcode(m, op)], g, tensor(op.inputs[0]),
                            tensor(op.outputs[0])))
    return layers


def _litert_reference():
    from ai_edge_litert.interpreter import OpResolverType

    return OpResolverType.BUILTIN_REF


def _tfl_padding(node, x_shape, w_shape):
    pads = tuple(node.attrs["pads"])
    if pads == (0, 0, 0, 0):
        return schema.Padding.VALID
    if pads == same_pads(x_shape[1:3], w_shape[1:3], node.attrs["strides"], node.attrs["dilations"]):
        return schema.Padding.SAME
    raise ValueError(f"pads {pads} are neither SAME nor VALID; TFLite cannot express them")


def _options(node, x_shape, w_shape):
    act = _TFL_ACT[node.attrs["activation"]]
    if node.op == "FullyConnected":
        o = schema.FullyConnectedOptionsT()
        o.fusedActivationFunction = act
        o.keepNumDims = bool(node.attrs["keep_dims"])
        return schema.BuiltinOptions.FullyConnectedOptions, o
    if node.op == "Conv2D":
        o, kind = schema.Conv2DOptionsT(), schema.BuiltinOptions.Conv2DOptions
    else:
        o, kind = schema.DepthwiseConv2DOptionsT(), schema.BuiltinOptions.DepthwiseConv2DOptions
        o.depthMultiplier = int(node.attrs["depth_multiplier"])
    o.padding = _tfl_padding(node, x_shape, w_shape)
    o.strideH, o.strideW = (int(s) for s in node.attrs["strides"])
    o.dilationHFactor, o.dilationWFactor = (int(d) for d in node.attrs["dilations"])
    o.fusedActivationFunction = act
    return kind, o


def tflite_of_node(g: Graph) -> bytes:
    """The graph's single linear node (input graph input, constant weights/bias) as .tflite."""
    (node,) = g.nodes
    model = me.Model()
    sg = model.add_subgraph()

    def tensor(name: str, tname: str):
        v = g.values[name]
        q = None
        if v.quant is not None:
            q = me.Quantization(list(v.quant.scale), list(v.quant.zero_point),
                                v.quant.axis if v.quant.per_channel else None)
        kwargs = {"data": np.ascontiguousarray(v.data)} if v.is_const else {}
        return sg.add_tensor(shape=v.shape, dtype=_TFL_TYPES[v.dtype], quantization=q,
                             name=tname, **kwargs)

    ins = [tensor(name, f"in{k}") for k, name in enumerate(node.inputs) if name]
    out = tensor(node.outputs[0], "out")
    op = sg.add_operator(opcode=TFLITE_OP[node.op], inputs=ins, outputs=[out])
    op._fb.builtinOptionsType, op._fb.builtinOptions = _options(
        node, g.values[node.inputs[0]].shape, g.values[node.inputs[1]].shape)
    sg.inputs = [ins[0]]
    sg.outputs = [out]
    return bytes(model.build())


def tflm_run_node(g: Graph, x: np.ndarray) -> np.ndarray:
    """TFLM's output for the graph's single linear node on input `x`."""
    data = tflite_of_node(g)
    interp = runtime.Interpreter.from_bytes(data, arena_size=256 * 1024 + 16 * len(data))
    interp.set_input(x, 0)
    interp.invoke()
    return interp.get_output(0)



def merge_layers(layers: list[Layer], name: str = "layers"):
    """All layers side by side in one graph (see linear_testing.merge), with the feeds and
    the reference runtime's expected outputs by graph value name."""
    from linear_testing import merge

    g, ins, outs = merge([layer.graph for layer in layers], name)
    feeds = {i[0]: layer.x for i, layer in zip(ins, layers)}
    expected = {o: layer.y.reshape(g.values[o].shape) for o, layer in zip(outs, layers)}
    return g, feeds, expected
