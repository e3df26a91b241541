"""templates/kernels/reference/non_max_suppression_f32.c.j2: ONNX NonMaxSuppression
(codegen/ops/non_max_suppression.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, typed_kernels


@dataclass(frozen=True)
class NonMaxSuppressionF32:
    batches: int
    classes: int
    boxes: int  # per batch
    per_class: int  # at most this many boxes kept per batch and class
    center_point_box: bool  # [x, y, w, h] (else corners)
    iou_threshold: float  # suppressed when the IoU with a kept box is above it
    use_score_threshold: bool
    score_threshold: float  # candidates score above it (when use_score_threshold)


typed_kernels(REFERENCE, NonMaxSuppressionF32, "non_max_suppression_f32")
