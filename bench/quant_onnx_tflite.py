"""The TFLite conversions of bench/quant_onnx_models.py's CNN and MLP, for the instruction
counts of bench/QUANT_ONNX.md: the same float weights in a Keras model (NHWC), converted by
TensorFlow's TFLiteConverter to full int8 (float input and output around QUANTIZE /
DEQUANTIZE, as the ONNX models have), calibrated on the same 16 inputs (seed 0).

Two steps, since TensorFlow is not one of Kiln's dependencies:

    .venv/bin/python -m bench.quant_onnx_tflite weights DIR       # the float weights, from the ONNX models
    PYTHON_WITH_TENSORFLOW -m bench.quant_onnx_tflite convert DIR  # DIR/cnn.tflite, DIR/mlp.tflite

then `.venv/bin/python -m bench.quant_onnx --tflite DIR` counts their instructions beside the
ONNX models'. The convert step needs only numpy and tensorflow.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

MODELS = ("cnn", "mlp")


def export_weights(folder: Path) -> None:
    from onnx import numpy_helper

    from bench.quant_onnx_models import MODELS as ONNX_MODELS

    folder.mkdir(parents=True, exist_ok=True)
    for name in MODELS:
        model = ONNX_MODELS[name]()
        np.savez(folder / f"{name}.npz", **{t.name: numpy_helper.to_array(t) for t in model.graph.initializer})


def _cnn(tf, w):
    k = tf.keras.layers
    x = k.Input((16, 16, 3), batch_size=1)
    conv = lambda name, **kw: k.Conv2D(w[f"{name}.w"].shape[0], w[f"{name}.w"].shape[2:], **kw)  # noqa: E731
    c1 = conv("c1", padding="same", activation="relu")
    r1 = c1(x)
    dw = k.DepthwiseConv2D(3, padding="same", activation="relu")
    r2 = dw(r1)
    pw = conv("pw")
    res = k.Add()([pw(r2), r1])
    cat = k.Concatenate(axis=-1)([k.AveragePooling2D(2)(res), k.MaxPooling2D(2)(res)])
    c2 = conv("c2", activation="relu")
    fc = k.Dense(10)
    y = k.Softmax()(fc(k.GlobalAveragePooling2D()(c2(cat))))
    for layer, name in ((c1, "c1"), (pw, "pw"), (c2, "c2")):
        layer.set_weights([w[f"{name}.w"].transpose(2, 3, 1, 0), w[f"{name}.b"]])
    dw.set_weights([w["dw.w"].transpose(2, 3, 0, 1), w["dw.b"]])
    fc.set_weights([w["fc.w"].T, w["fc.b"]])
    return tf.keras.Model(x, y), (1, 3, 16, 16), (0, 2, 3, 1)  # the ONNX input shape (NCHW), to NHWC


def _mlp(tf, w):
    k = tf.keras.layers
    x = k.Input((32,), batch_size=1)
    fc1, fc2, fc3 = k.Dense(64), k.Dense(32), k.Dense(10)
    h2 = fc2(k.LeakyReLU(negative_slope=0.1)(fc1(x)))
    y = fc3(k.Multiply()([k.Activation("sigmoid")(h2), h2]))
    for layer, name in ((fc1, "fc1"), (fc2, "fc2"), (fc3, "fc3")):
        layer.set_weights([w[f"{name}.w"].T, w[f"{name}.b"]])
    return tf.keras.Model(x, y), (1, 32), None


def convert(folder: Path) -> None:
    import tensorflow as tf

    for name, build in (("cnn", _cnn), ("mlp", _mlp)):
        w = dict(np.load(folder / f"{name}.npz"))
        model, onnx_shape, to_nhwc = build(tf, w)
        rng = np.random.default_rng(0)  # bench/quant_onnx_models.quantized's calibration inputs
        feeds = [rng.standard_normal(onnx_shape).astype(np.float32) for _ in range(16)]
        feeds = [f.transpose(to_nhwc) if to_nhwc else f for f in feeds]
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([f] for f in feeds)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        (folder / f"{name}.tflite").write_bytes(conv.convert())


if __name__ == "__main__":
    {"weights": export_weights, "convert": convert}[sys.argv[1]](Path(sys.argv[2]))
