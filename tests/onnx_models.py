"""Small ONNX models built with onnx.helper, shared by the frontend, compiler and CLI tests.

Every builder returns an `onnx.ModelProto` with seeded random weights. `ort_outputs` runs a
model in onnxruntime, `random_feeds` makes inputs for it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# IR version for each opset range (onnxruntime refuses a too-new IR with an old opset).
_IR_FOR_OPSET = [(7, 3), (8, 3), (9, 4), (10, 5), (11, 6), (12, 7), (13, 7), (15, 8), (19, 9), (21, 10)]


def ir_version_for(opset: int) -> int:
    return max(ir for op, ir in _IR_FOR_OPSET if op <= opset)


class ModelBuilder:
    """Collects nodes, initializers and I/O; node names follow the op type unless given."""

    def __init__(self, name: str, opset: int = 13, seed: int = 0):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._count: dict[str, int] = {}

    def input(self, name: str, shape: Sequence[Any] | None, elem: int = TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def init(self, name: str, data) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(data), name))
        return name

    def weight(self, name: str, shape: Sequence[int], scale: float = 0.5) -> str:
        return self.init(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def positive(self, name: str, shape: Sequence[int]) -> str:
        return self.init(name, self.rng.uniform(0.5, 1.5, shape).astype(np.float32))

    def ints(self, name: str, values: Sequence[int]) -> str:
        return self.init(name, np.array(values, np.int64))

    def scalar(self, name: str, value: float) -> str:
        return self.init(name, np.array(value, np.float32))

    def node(self, op: str, inputs: Sequence[str], name: str | None = None, n_out: int = 1,
             domain: str | None = None, **attrs) -> Any:
        k = self._count.get(op, 0)
        self._count[op] = k + 1
        name = name if name is not None else f"{op.lower()}{k}"
        outs = [f"{name}_out{i}" if n_out > 1 else f"{name}_out" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=name, domain=domain, **attrs))
        return outs[0] if n_out == 1 else outs

    def output(self, name: str, shape: Sequence[Any] | None = None) -> "ModelBuilder":
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return self

    def model(self, inits_as_inputs: bool | None = None) -> onnx.ModelProto:
        """The model; initializers are listed as graph inputs when asked, and always before
        IR version 4 (which required it)."""
        inputs = list(self.inputs)
        if inits_as_inputs or (inits_as_inputs is None and ir_version_for(self.opset) < 4):  # how exporters wrote models before IR version 4
            inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in self.inits]
        graph = helper.make_graph(self.nodes, self.name, inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = ir_version_for(self.opset)
        return m


# -- models --------------------------------------------------------------------------------

def mlp(opset: int = 13, batch: Any = 1) -> onnx.ModelProto:
    """Gemm + Relu + Gemm (alpha, beta) + Softmax."""
    b = ModelBuilder("mlp", opset)
    x = b.input("x", [batch, 16])
    h = b.node("Gemm", [x, b.weight("fc1.weight", (32, 16)), b.weight("fc1.bias", (32,))], name="fc1", transB=1)
    h = b.node("Relu", [h], name="relu1")
    h = b.node("Gemm", [h, b.weight("fc2.weight", (32, 10)), b.weight("fc2.bias", (10,))], name="fc2",
               alpha=0.5, beta=2.0)
    b.nodes.append(helper.make_node("Softmax", [h], ["probs"], name="softmax", axis=1 if opset < 13 else -1))
    return b.output("probs", [batch, 10]).model()


def cnn(opset: int = 13) -> onnx.ModelProto:
    """Conv + BatchNormalization + Relu + MaxPool + Conv(SAME_UPPER) + GlobalAveragePool + Flatten + Gemm."""
    b = ModelBuilder("cnn", opset)
    x = b.input("image", [1, 3, 16, 16])
    h = b.node("Conv", [x, b.weight("conv1.w", (8, 3, 3, 3)), b.weight("conv1.b", (8,))], name="conv1",
               pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    h = b.node("BatchNormalization", [h, b.positive("bn.scale", (8,)), b.weight("bn.bias", (8,)),
                                      b.weight("bn.mean", (8,)), b.positive("bn.var", (8,))], name="bn1",
               epsilon=1e-3)
    h = b.node("Relu", [h], name="relu1")
    h = b.node("MaxPool", [h], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    h = b.node("Conv", [h, b.weight("conv2.w", (16, 8, 3, 3), 0.2)], name="conv2", strides=[2, 2],
               auto_pad="SAME_UPPER")
    h = b.node("Relu", [h], name="relu2")
    h = b.node("GlobalAveragePool", [h], name="gap")
    h = b.node("Flatten", [h], name="flatten")
    b.nodes.append(helper.make_node("Gemm", [h, b.weight("fc.w", (10, 16)), b.weight("fc.b", (10,))],
                                    ["logits"], name="fc", transB=1))
    return b.output("logits", [1, 10]).model()


def residual_depthwise(opset: int = 13) -> onnx.ModelProto:
    """1x1 Conv + Relu + depthwise Conv (group = C) + Add(skip) + Clip(0, 6) as inputs."""
    b = ModelBuilder("residual", opset)
    x = b.input("x", [1, 8, 8, 8])
    h = b.node("Conv", [x, b.weight("pw.w", (8, 8, 1, 1)), b.weight("pw.b", (8,))], name="pointwise")
    h = b.node("Relu", [h])
    h = b.node("Conv", [h, b.weight("dw.w", (8, 1, 3, 3)), b.weight("dw.b", (8,))], name="depthwise",
               group=8, pads=[1, 1, 1, 1])
    h = b.node("Add", [h, x], name="skip")
    b.nodes.append(helper.make_node("Clip", [h, b.scalar("lo", 0.0), b.scalar("hi", 6.0)], ["y"], name="relu6"))
    return b.output("y", [1, 8, 8, 8]).model()


def depthwise_multiplier() -> onnx.ModelProto:
    """Depthwise Conv with channel multiplier 2, stride 2, SAME_LOWER padding, no bias."""
    b = ModelBuilder("dwmult", 13)
    x = b.input("x", [1, 4, 8, 8])
    b.nodes.append(helper.make_node("Conv", [x, b.weight("w", (8, 1, 3, 3))], ["y"], name="dw", group=4,
                                    strides=[2, 2], auto_pad="SAME_LOWER"))
    return b.output("y", [1, 8, 4, 4]).model()


def concat_branches() -> onnx.ModelProto:
    """Two Conv branches joined by Concat(axis=-3), then a 1x1 Conv."""
    b = ModelBuilder("branches", 13)
    x = b.input("x", [1, 4, 8, 8])
    a = b.node("Conv", [x, b.weight("a.w", (6, 4, 3, 3)), b.weight("a.b", (6,))], name="branch_a", pads=[1, 1, 1, 1])
    a = b.node("Relu", [a])
    c = b.node("Conv", [x, b.weight("c.w", (5, 4, 1, 1)), b.weight("c.b", (5,))], name="branch_b")
    h = b.node("Concat", [a, c], name="join", axis=-3)
    b.nodes.append(helper.make_node("Conv", [h, b.weight("m.w", (3, 11, 1, 1))], ["y"], name="merge"))
    return b.output("y", [1, 3, 8, 8]).model()


def shape_mix(opset: int = 13) -> onnx.ModelProto:
    """Transpose, Reshape (0 and -1), Unsqueeze, Squeeze, Flatten with elementwise ops between."""
    b = ModelBuilder("shapes", opset)
    x = b.input("x", [1, 3, 4, 5])
    h = b.node("Transpose", [x], perm=[0, 2, 3, 1])                      # [1,4,5,3]
    h = b.node("Reshape", [h, b.ints("shape1", [0, -1, 3])])             # [1,20,3]
    if opset < 13:
        h = b.node("Unsqueeze", [h], axes=[0, 4])                        # [1,1,20,3,1]
        h = b.node("Squeeze", [h], axes=[0, 4])                          # [1,20,3]
    else:
        h = b.node("Unsqueeze", [h, b.ints("uaxes", [0, -1])])
        h = b.node("Squeeze", [h, b.ints("saxes", [0, 4])])
    h = b.node("Mul", [h, b.weight("gain", (3,))])
    h = b.node("Sub", [h, b.scalar("offset", 0.25)])
    s = b.node("Sigmoid", [h])
    t = b.node("Tanh", [h])
    h = b.node("Add", [s, t])
    h = b.node("Transpose", [h])                                         # default perm: [3,20,1]
    b.nodes.append(helper.make_node("Flatten", [h], ["y"], name="flat", axis=0))
    return b.output("y", [1, 60]).model()


def old_opset(opset: int) -> onnx.ModelProto:
    """Opset 7/9/11 forms: Clip/Pad attributes (or inputs at 11), Squeeze/Unsqueeze axes
    attributes, Softmax(axis=1) over all of C, H, W, initializers also listed as inputs."""
    b = ModelBuilder(f"old{opset}", opset)
    x = b.input("x", [1, 3, 6, 6])
    h = b.node("Conv", [x, b.weight("w", (4, 3, 3, 3)), b.weight("bias", (4,))], pads=[1, 1, 1, 1])
    bn_attrs = {"spatial": 1} if opset < 9 else {}
    h = b.node("BatchNormalization", [h, b.positive("s", (4,)), b.weight("o", (4,)), b.weight("m", (4,)),
                                      b.positive("v", (4,))], **bn_attrs)
    if opset < 11:
        h = b.node("Clip", [h], min=-0.5, max=1.5)
        h = b.node("Pad", [h], pads=[0, 0, 1, 0, 0, 0, 0, 1], value=-0.25)
    else:
        h = b.node("Clip", [h, b.scalar("lo", -0.5), ""])
        h = b.node("Pad", [h, b.ints("pads", [0, 0, 1, 0, 0, 0, 0, 1]), b.scalar("pv", -0.25)])
    h = b.node("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2])            # [1,4,3,3]
    h = b.node("Unsqueeze", [h], axes=[0])                                     # [1,1,4,3,3]
    h = b.node("Squeeze", [h], axes=[1])                                       # [1,4,3,3]
    b.nodes.append(helper.make_node("Softmax", [h], ["y"], name="softmax"))    # axis=1 default
    return b.output("y", [1, 4, 3, 3]).model(inits_as_inputs=opset < 11)


def pools_and_1d() -> onnx.ModelProto:
    """1-D Conv and pools, AveragePool with padding (excluded), harmless ceil_mode, GlobalMaxPool."""
    b = ModelBuilder("pools", 13)
    x = b.input("x", [1, 3, 10, 10])
    h = b.node("AveragePool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    h = b.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)  # 10 -> 5 either way
    g = b.node("GlobalMaxPool", [h])                                           # [1,3,1,1]
    h = b.node("Add", [h, g])
    h = b.node("Reshape", [h, b.ints("to1d", [1, 3, 25])])
    h = b.node("Conv", [h, b.weight("w1d", (4, 3, 3)), b.weight("b1d", (4,))], pads=[2, 0], dilations=[2])
    h = b.node("MaxPool", [h], kernel_shape=[2], strides=[2])                  # [1,4,11]
    h = b.node("AveragePool", [h], kernel_shape=[3], auto_pad="SAME_UPPER")    # [1,4,11]
    b.nodes.append(helper.make_node("GlobalAveragePool", [h], ["y"], name="gap1d"))
    return b.output("y", [1, 4, 1]).model()


def matmuls() -> onnx.ModelProto:
    """MatMul by a constant (3-D input), MatMul of two activations, Gemm with transA, a computed B
    and a full [M, N] C, Div by a constant."""
    b = ModelBuilder("matmuls", 13)
    x = b.input("x", [2, 3, 8])
    h = b.node("MatMul", [x, b.weight("w", (8, 6))], name="proj")                # [2,3,6]
    k = b.node("Transpose", [h], perm=[0, 2, 1])                               # [2,6,3]
    att = b.node("MatMul", [h, k], name="scores")                              # [2,3,3]
    att = b.node("Div", [att, b.scalar("temp", 4.0)])
    att = b.node("Reshape", [att, b.ints("s2", [6, 3])])                       # [6,3]
    y = b.node("Gemm", [att, b.weight("g.w", (6, 5)), b.weight("g.c", (3, 5))], transA=1, beta=0.5)  # [3,5]
    v = b.node("MatMul", [x, b.weight("w2", (8, 5))], name="value")           # [2,3,5]
    sq = b.node("Reshape", [v, b.ints("s3", [6, 5])])
    z = b.node("Gemm", [y, sq, b.weight("g2.c", (3, 1))], name="dyn_gemm", transB=1, alpha=0.7)  # B computed
    b.nodes.append(helper.make_node("Identity", [z], ["y"], name="ident"))
    return b.output("y", [3, 6]).model()


def torch_flatten() -> onnx.ModelProto:
    """x.view(x.size(0), -1) as PyTorch exports it: Shape, Gather, Unsqueeze, Concat, Reshape;
    Constant nodes of each kind, and Dropout."""
    b = ModelBuilder("torchflat", 13)
    x = b.input("x", [1, 2, 3, 4])
    shape = b.node("Shape", [x])
    idx = b.node("Constant", [], value=numpy_helper.from_array(np.array(0, np.int64)))
    n = b.node("Gather", [shape, idx], axis=0)
    n = b.node("Unsqueeze", [n, b.ints("ax0", [0])])
    minus1 = b.node("Constant", [], value_ints=[-1])
    new_shape = b.node("Concat", [n, minus1], axis=0)
    h = b.node("Reshape", [x, new_shape])                                      # [1,24]
    h = b.node("Dropout", [h])
    scale = b.node("Constant", [], value_float=1.5)
    h = b.node("Mul", [h, scale])
    bias = b.node("Constant", [], value_floats=[0.5] * 24)
    b.nodes.append(helper.make_node("Add", [h, bias], ["y"], name="add_bias"))
    return b.output("y", [1, 24]).model()


def qdq(opset: int = 13) -> onnx.ModelProto:
    """QuantizeLinear/DequantizeLinear (per-tensor int8) around a Relu, and int8 constant
    weights dequantized at import time."""
    b = ModelBuilder("qdq", opset)
    x = b.input("x", [1, 8])
    s, zp = b.scalar("x_scale", 0.05), b.init("x_zp", np.array(3, np.int8))
    q = b.node("QuantizeLinear", [x, s, zp])
    d = b.node("DequantizeLinear", [q, s, zp])
    w = b.init("w_q", b.rng.integers(-127, 128, (4, 8)).astype(np.int8))
    wd = b.node("DequantizeLinear", [w, b.scalar("w_scale", 0.01), b.init("w_zp", np.array(0, np.int8))])
    b.nodes.append(helper.make_node("Gemm", [d, wd], ["y"], name="fc", transB=1))
    return b.output("y", [1, 4]).model()


def dynamic_seq() -> onnx.ModelProto:
    """Dynamic batch and sequence length: needs --input-shape for the sequence."""
    b = ModelBuilder("seq", 13)
    x = b.input("tokens", ["batch", "seq", 8])
    h = b.node("MatMul", [x, b.weight("w", (8, 4))])
    b.nodes.append(helper.make_node("Relu", [h], ["y"], name="relu"))
    return b.output("y", ["batch", "seq", 4]).model()


def unsupported() -> onnx.ModelProto:
    """Several operators Kiln has no mapping for, among supported ones."""
    b = ModelBuilder("unsupported", 14)
    x = b.input("x", [1, 4])
    h = b.node("Bernoulli", [x], name="coin")
    h = b.node("Relu", [h])
    h = b.node("RandomUniformLike", [h], name="")  # unnamed: Kiln calls it RandomUniformLike_2
    h = b.node("Frob", [h], name="frob", domain="com.acme")
    b.nodes.append(helper.make_node("Multinomial", [h], ["y"], name="draw"))
    return b.output("y", [1, 4]).model()


# Every model that onnxruntime can run and Kiln should import, with its input shapes.
RUNNABLE = {
    "mlp": mlp,
    "cnn": cnn,
    "residual_depthwise": residual_depthwise,
    "depthwise_multiplier": depthwise_multiplier,
    "concat_branches": concat_branches,
    "shape_mix": shape_mix,
    "shape_mix_opset11": lambda: shape_mix(11),
    "old_opset7": lambda: old_opset(7),
    "old_opset9": lambda: old_opset(9),
    "old_opset11": lambda: old_opset(11),
    "mlp_opset7": lambda: mlp(7),
    "cnn_opset9": lambda: cnn(9),
    "cnn_opset21": lambda: cnn(21),
    "pools_and_1d": pools_and_1d,
    "matmuls": matmuls,
    "torch_flatten": torch_flatten,
    "qdq": qdq,
}


# -- running -------------------------------------------------------------------------------

def input_shapes_of(model: onnx.ModelProto, overrides: dict[str, tuple[int, ...]] | None = None,
                    ) -> dict[str, tuple[int, ...]]:
    """Static input shapes: dynamic dims become 1 unless given in `overrides`."""
    inits = {t.name for t in model.graph.initializer}
    shapes = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim]
        shapes[vi.name] = tuple((overrides or {}).get(vi.name, dims))
    return shapes


def random_feeds(model: onnx.ModelProto, seed: int = 0, overrides=None) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in input_shapes_of(model, overrides).items()}


def ort_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3  # no warnings about initializers listed as inputs
    # The model's own arithmetic, not onnxruntime's fused integer kernels: onnxruntime 1.32's
    # extended level turns QDQ around Gemm into a u8s8 kernel whose int16 pair sums saturate
    # on x86 without VNNI (the qdq model gives -1.352 where the graph computes -2.671); as codegen/verify/reference.py.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def max_rel_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """Largest absolute difference relative to the largest magnitude of `expected`."""
    scale = max(float(np.abs(expected).max()), 1e-30)
    return float(np.abs(np.asarray(actual, np.float64) - expected).max()) / scale
