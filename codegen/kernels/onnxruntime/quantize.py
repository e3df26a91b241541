"""templates/kernels/onnxruntime/quantize_f32.c.j2: onnxruntime's QuantizeLinear (MlasQuantizeLinear:
a float32 division, round half to even), over the reference parameter block."""

from __future__ import annotations

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.quantize import AffineQuant
from codegen.kernels.spec import typed_kernels

typed_kernels(VARIANT, AffineQuant, "quantize_f32", headers=ORT_HEADERS)
