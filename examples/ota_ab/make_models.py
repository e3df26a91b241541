"""Two releases of the same small classifier (8 features -> 16 -> 4 classes, float32): the
same graph, different trained weights, written as OUT/model_v1.onnx and OUT/model_v2.onnx.
Built by Kiln with --weights blob they share one model id, so the code image built from v1
accepts the v2 blob as a weights-only update. OUT/model_other.onnx (8 -> 12 -> 4) is another
model: the same code refuses its blob."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def classifier(seed: int, hidden: int = 16) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)

    def weight(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.normal(0.0, 0.5, shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 4])],
        [weight("w1", (hidden, 8)), weight("b1", (hidden,)), weight("w2", (4, hidden)), weight("b2", (4,))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for version, seed in (("v1", 1), ("v2", 2)):
        onnx.save(classifier(seed), out / f"model_{version}.onnx")
    onnx.save(classifier(3, hidden=12), out / "model_other.onnx")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "build"))
