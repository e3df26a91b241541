"""The tools the benchmark runs, one module each: Kiln, the TFLite Micro interpreter,
onnxruntime (on tf2onnx's ONNX conversion) and emx-onnx-cgen."""
