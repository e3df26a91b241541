"""TFLite -> ONNX with tf2onnx, in the benchmark's peer environment (bench/.venv-peers).

int8 models become QDQ graphs (QuantizeLinear / DequantizeLinear around float Conv, MatMul,
Softmax), float models plain float graphs; the batch dimension stays symbolic (onnxruntime
takes batch 1, emx-onnx-cgen pins it with --input-dim). Conversions are cached in the work
folder, keyed by the model's hash and the tf2onnx version.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from bench.cbuild import run
from bench.config import ONNX_OPSET
from bench.env import peer_bin


def convert(tflite: Path, out: Path, tf2onnx_version: str) -> Path:
    key = f"{hashlib.sha256(tflite.read_bytes()).hexdigest()} tf2onnx {tf2onnx_version} opset {ONNX_OPSET}"
    stamp = out.with_suffix(".key")
    if out.is_file() and stamp.is_file() and stamp.read_text() == key:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    quiet = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    run([peer_bin("python"), "-m", "tf2onnx.convert", "--tflite", tflite, "--output", out,
         "--opset", str(ONNX_OPSET)], out.parent, env=quiet)
    stamp.write_text(key)
    return out

