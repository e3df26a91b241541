"""Kiln: an ahead-of-time compiler from ONNX / TFLite models to dependency-free C99."""

__version__ = "0.1.0"
