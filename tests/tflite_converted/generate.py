"""Writes the .tflite models of this folder with Keras and TFLite's own converter, as a user
would: random weights (fixed seeds), int8 full-integer quantization from a representative
dataset unless the name ends in `_float32`.

It needs TensorFlow, which Kiln does not: run it in the benchmark's own virtual environment
(`make tflite-converted` creates it from `tests/tflite_converted/requirements.txt` and runs this
file). The tests read the committed .tflite files and never import TensorFlow.

    python tests/tflite_converted/generate.py [--out DIR] [NAME ...]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Keras 2 (tf-keras): its LSTM is what the converter fuses into UNIDIRECTIONAL_SEQUENCE_LSTM
# (Keras 3's becomes a WHILE loop).
os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

keras = tf.keras
layers = keras.layers
HERE = Path(__file__).resolve().parent
CALIBRATION_SAMPLES = 32


def mobilenet_v3_small() -> keras.Model:
    """MobileNetV3-small's blocks at 64x64 and a narrow width: hard-swish activations, inverted
    residuals with squeeze-excite (global mean, two 1x1 layers, hard sigmoid, multiply)."""
    def hard_swish(x):
        return x * layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)

    def squeeze_excite(x, channels):
        s = layers.GlobalAveragePooling2D(keepdims=True)(x)
        s = layers.Conv2D(max(channels // 4, 8), 1, activation="relu")(s)
        s = layers.Conv2D(channels, 1)(s)
        s = layers.ReLU(6.0)(s + 3.0) * (1.0 / 6.0)
        return layers.Multiply()([x, s])

    def block(x, expand, out, kernel, stride, se, swish):
        act = hard_swish if swish else layers.ReLU()
        y = act(layers.BatchNormalization()(layers.Conv2D(expand, 1, use_bias=False)(x)))
        y = layers.DepthwiseConv2D(kernel, stride, padding="same", use_bias=False)(y)
        y = act(layers.BatchNormalization()(y))
        if se:
            y = squeeze_excite(y, expand)
        y = layers.BatchNormalization()(layers.Conv2D(out, 1, use_bias=False)(y))
        return layers.Add()([x, y]) if stride == 1 and x.shape[-1] == out else y

    inp = keras.Input((64, 64, 3), batch_size=1, name="image")
    x = hard_swish(layers.BatchNormalization()(layers.Conv2D(8, 3, 2, padding="same", use_bias=False)(inp)))
    x = block(x, 8, 8, 3, 2, True, False)
    x = block(x, 32, 12, 3, 2, False, False)
    x = block(x, 40, 12, 3, 1, False, False)
    x = block(x, 48, 16, 5, 2, True, True)
    x = block(x, 64, 16, 5, 1, True, True)
    x = hard_swish(layers.Conv2D(64, 1)(x))
    x = layers.GlobalAveragePooling2D()(x)
    x = hard_swish(layers.Dense(64)(x))
    out = layers.Softmax(name="scores")(layers.Dense(10)(x))
    return keras.Model(inp, out, name="mobilenet_v3_small")


def transformer_encoder() -> keras.Model:
    """Two encoder layers over 16 tokens of width 32: multi-head self-attention (BATCH_MATMUL,
    SOFTMAX), layer normalisation (MEAN, SQUARED_DIFFERENCE, RSQRT), a GELU-free feed-forward
    (ReLU) and a mean over the tokens."""
    tokens, width, heads = 16, 32, 2
    inp = keras.Input((tokens, width), batch_size=1, name="tokens")
    x = inp
    for _ in range(2):
        a = layers.MultiHeadAttention(heads, width // heads)(x, x)
        x = layers.LayerNormalization(epsilon=1e-3)(layers.Add()([x, a]))
        f = layers.Dense(width)(layers.Dense(2 * width, activation="relu")(x))
        x = layers.LayerNormalization(epsilon=1e-3)(layers.Add()([x, f]))
    x = layers.GlobalAveragePooling1D()(x)
    out = layers.Softmax(name="scores")(layers.Dense(4)(x))
    return keras.Model(inp, out, name="transformer_encoder")


def unet() -> keras.Model:
    """A two-level U-Net on 32x32: the decoder upsamples with a transposed convolution
    (TRANSPOSE_CONV), a bilinear and a nearest-neighbour resize, joined to the encoder's maps
    by CONCATENATION."""
    inp = keras.Input((32, 32, 3), batch_size=1, name="image")
    e1 = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    e2 = layers.Conv2D(16, 3, 2, padding="same", activation="relu")(e1)
    e3 = layers.Conv2D(16, 3, 2, padding="same", activation="relu")(e2)
    d2 = layers.Conv2DTranspose(16, 3, 2, padding="same", activation="relu")(e3)
    d2 = layers.Conv2D(16, 3, padding="same", activation="relu")(layers.Concatenate()([d2, e2]))
    up_b = layers.UpSampling2D(interpolation="bilinear")(d2)
    up_n = layers.UpSampling2D(interpolation="nearest")(e2)
    d1 = layers.Conv2D(8, 3, padding="same", activation="relu")(layers.Concatenate()([up_b, up_n, e1]))
    out = layers.Conv2D(2, 1, name="mask")(d1)
    return keras.Model(inp, out, name="unet")


def lstm_classifier() -> keras.Model:
    """An LSTM over 20 steps of 8 features (UNIDIRECTIONAL_SEQUENCE_LSTM) and a softmax head."""
    inp = keras.Input((20, 8), batch_size=1, name="sequence")
    x = layers.LSTM(16)(inp)
    out = layers.Softmax(name="scores")(layers.Dense(4)(x))
    return keras.Model(inp, out, name="lstm_classifier")


def face_detector() -> keras.Model:
    """A small face-detector-style float network as such models are built (BlazeFace, the
    MTCNN stages): PReLU activations with per-channel slopes (PRELU), a feature pyramid whose
    coarse map is upsampled bilinearly (RESIZE_BILINEAR) and added to the fine one, and two
    heads (scores with a sigmoid, box offsets)."""
    inp = keras.Input((48, 48, 3), batch_size=1, name="image")
    x = layers.PReLU(shared_axes=[1, 2])(layers.Conv2D(16, 3, 2, padding="same")(inp))
    fine = layers.PReLU(shared_axes=[1, 2])(layers.Conv2D(24, 3, padding="same")(x))
    coarse = layers.DepthwiseConv2D(3, 2, padding="same")(fine)
    coarse = layers.PReLU(shared_axes=[1, 2])(layers.Conv2D(24, 1)(coarse))
    up = layers.UpSampling2D(interpolation="bilinear")(coarse)
    merged = layers.PReLU()(layers.Add()([fine, up]))
    scores = layers.Conv2D(2, 1, activation="sigmoid", name="scores")(merged)
    boxes = layers.Conv2D(8, 1, name="boxes")(merged)
    return keras.Model(inp, [scores, boxes], name="face_detector")


class StreamingKeywordSpotter(tf.Module):
    """A streaming keyword spotter as the streaming wrappers build one: each call takes one
    feature frame; a resource variable holds the last frames the causal convolution needs (its
    ring of KERNEL-1 frames, shifted each call), a second one the GRU-like recurrent state
    carried between calls. TFLite's converter turns the variables into VAR_HANDLE /
    READ_VARIABLE / ASSIGN_VARIABLE with a CALL_ONCE initialisation subgraph."""

    FEATURES, KERNEL, FILTERS, HIDDEN, CLASSES = 10, 3, 16, 16, 4

    def __init__(self):
        super().__init__()
        f, k, c, h = self.FEATURES, self.KERNEL, self.FILTERS, self.HIDDEN
        self.conv = layers.Conv1D(c, k, activation="relu")
        self.conv.build((1, k, f))
        self.update = layers.Dense(h, activation="sigmoid")
        self.update.build((1, c + h))
        self.candidate = layers.Dense(h, activation="tanh")
        self.candidate.build((1, c + h))
        self.head = layers.Dense(self.CLASSES)
        self.head.build((1, h))
        self.frames = tf.Variable(tf.zeros((1, k - 1, f)), trainable=False, name="frames")
        self.hidden = tf.Variable(tf.zeros((1, h)), trainable=False, name="hidden")

    @tf.function(input_signature=[tf.TensorSpec((1, 1, FEATURES), tf.float32, name="frame")])
    def __call__(self, frame):
        window = tf.concat([self.frames, frame], axis=1)
        self.frames.assign(window[:, 1:, :])
        feat = tf.reshape(self.conv(window), (1, self.FILTERS))
        joined = tf.concat([feat, self.hidden], axis=1)
        z = self.update(joined)
        hidden = z * self.hidden + (1.0 - z) * self.candidate(joined)
        self.hidden.assign(hidden)
        return tf.nn.softmax(self.head(hidden))


MODELS = {
    "mobilenet_v3_small": mobilenet_v3_small,
    "transformer_encoder": transformer_encoder,
    "unet": unet,
    "lstm_classifier": lstm_classifier,
    "streaming_kws": StreamingKeywordSpotter,
    "face_detector": face_detector,
}
# Float32 builds of these (no quantization): LiteRT is their reference.
FLOAT_TOO = ("transformer_encoder", "unet", "face_detector")
# Built as float32 only (face detectors ship float: PRELU and RESIZE_BILINEAR in float).
FLOAT_ONLY = ("face_detector",)


def _randomize(model) -> None:
    """Random but well-scaled weights (fixed seed): Keras's initialisers already are; batch
    normalisation gets non-trivial statistics so that folding it changes the weights."""
    rng = np.random.default_rng(0)
    for layer in getattr(model, "layers", []):
        if isinstance(layer, layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape), rng.normal(0, 0.1, beta.shape),
                               rng.normal(0, 0.1, mean.shape), rng.uniform(0.5, 1.5, var.shape)])


def convert(name: str, quantize: bool) -> bytes:
    tf.random.set_seed(0)
    keras.utils.set_random_seed(0)
    model = MODELS[name]()
    _randomize(model)
    with tempfile.TemporaryDirectory() as saved:
        if isinstance(model, keras.Model):
            specs = [tf.TensorSpec(t.shape, tf.float32) for t in model.inputs]
            converter = tf.lite.TFLiteConverter.from_keras_model(model)
        else:
            # Through a SavedModel: its variables' initial values become the CALL_ONCE subgraph.
            specs = list(model.__call__.input_signature)
            tf.saved_model.save(model, saved, signatures=model.__call__.get_concrete_function())
            converter = tf.lite.TFLiteConverter.from_saved_model(saved)
        return _quantize(converter, specs) if quantize else converter.convert()


def _quantize(converter, specs) -> bytes:
    rng = np.random.default_rng(1)

    def representative():
        for _ in range(CALIBRATION_SAMPLES):
            yield [rng.standard_normal(s.shape).astype(np.float32) for s in specs]

    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return converter.convert()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="models to write (default: all)")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    jobs = [(n, True) for n in MODELS if n not in FLOAT_ONLY] + [(n, False) for n in FLOAT_TOO]
    for name, quantize in jobs:
        file = f"{name}_int8.tflite" if quantize else f"{name}_float32.tflite"
        if args.names and name not in args.names and file.removesuffix(".tflite") not in args.names:
            continue
        data = convert(name, quantize)
        (args.out / file).write_bytes(data)
        print(f"{file}: {len(data):,} bytes")


if __name__ == "__main__":
    main()
