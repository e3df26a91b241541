"""NonMaxSuppression: greedy selection of boxes by score, per batch and class (ONNX
NonMaxSuppression), for the tails of object detectors.

boxes [B, N, 4] (corners [y1, x1, y2, x2] in either order, or `center_point_box`: [x, y, w,
h]), scores [B, C, N]. For each batch and class, the boxes scoring above `score_threshold`
(None: every box) are visited by descending score, ties by lower index, and kept unless their
IoU with a box already kept for that class exceeds `iou_threshold`, up to
`max_output_boxes_per_class` (a compile-time constant). The output, int64 [rows, 3] of
(batch, class, box), has a data-dependent number of rows bounded by
B * C * min(max_output_boxes_per_class, N) (codegen/ops/bounded.py). IoU is computed in
float32 in the order of onnx's reference implementation, so decisions at the threshold match.
"""

from __future__ import annotations

import numpy as np

from codegen.errors import KilnError
from codegen.ops.request import KernelRequest, ScratchArg
from codegen.ops.bounded import LengthArg, check_graph_outputs_only
from codegen.ops.common import require_dtypes
from codegen.ops.registry import Op, OpKind, register


def _per_class(node, boxes: int) -> int:
    return min(max(int(node.attrs["max_output_boxes_per_class"]), 0), boxes)


@register
class NonMaxSuppression(Op):
    name = "NonMaxSuppression"
    kind = OpKind.OPAQUE
    attributes = {"center_point_box": 0, "max_output_boxes_per_class": 0, "iou_threshold": 0.0,
                  "score_threshold": None}
    arity = (2, 2)
    kernels = ("non_max_suppression_f32",)

    @classmethod
    def bounded_outputs(cls, node, g):
        return {0: 0}

    @classmethod
    def infer(cls, node, ins):
        boxes, scores = ins
        if len(boxes.shape) != 3 or boxes.shape[2] != 4 or len(scores.shape) != 3 \
                or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
            raise KilnError(f"NonMaxSuppression takes boxes [B, N, 4] and scores [B, C, N], not "
                            f"{list(boxes.shape)} and {list(scores.shape)}", node=node.name)
        if node.attrs["center_point_box"] not in (0, 1):
            raise KilnError(f"center_point_box must be 0 or 1, not {node.attrs['center_point_box']}",
                            node=node.name)
        rows = boxes.shape[0] * scores.shape[1] * _per_class(node, boxes.shape[1])
        if rows == 0:
            raise KilnError("NonMaxSuppression selects no box (max_output_boxes_per_class is 0 or there "
                            "are no boxes): its output is always empty", node=node.name)
        return [("int64", (rows, 3))]

    @classmethod
    def check(cls, node, g):
        require_dtypes(node, g, ("float32",))
        if g.values[node.inputs[1]].dtype != "float32":
            raise KilnError("NonMaxSuppression scores must be float32", node=node.name)

    @classmethod
    def reference(cls, node, args, g):
        boxes, scores = (np.asarray(a, np.float32) for a in args)
        limit, threshold = _per_class(node, boxes.shape[1]), node.attrs["score_threshold"]
        rows = []
        for b in range(boxes.shape[0]):
            for c in range(scores.shape[1]):
                s = scores[b, c]
                candidates = [i for i in range(s.size) if threshold is None or s[i] > np.float32(threshold)]
                kept: list[int] = []
                for i in sorted(candidates, key=lambda i: (-s[i], i)):
                    if len(kept) == limit:
                        break
                    if not any(_suppresses(boxes[b, i], boxes[b, k], node) for k in kept):
                        kept.append(i)
                        rows.append((b, c, i))
        return [np.array(rows, np.int64).reshape(-1, 3)]

    @classmethod
    def lower(cls, node, ctx):
        check_graph_outputs_only(node, ctx.g)
        boxes, scores = node.inputs
        batches, count, _ = ctx.g.values[boxes].shape
        threshold = node.attrs["score_threshold"]
        params = {"batches": batches, "classes": ctx.g.values[scores].shape[1], "boxes": count,
                  "per_class": _per_class(node, count), "center_point_box": bool(node.attrs["center_point_box"]),
                  "iou_threshold": float(np.float32(node.attrs["iou_threshold"])),
                  "use_score_threshold": threshold is not None,
                  "score_threshold": 0.0 if threshold is None else float(np.float32(threshold))}
        out = node.outputs[0]
        ctx.request(KernelRequest("non_max_suppression_f32", node, params,
                                  (ctx.tensor(boxes), ctx.tensor(scores), ctx.tensor(out), LengthArg(out),
                                   ScratchArg(4 * (2 * count + params["per_class"])))))


def _extent(box: np.ndarray, center: bool) -> tuple[np.float32, ...]:
    """(x_min, x_max, y_min, y_max) in float32, as onnx's reference computes them."""
    if center:
        half_w, half_h = box[2] / np.float32(2), box[3] / np.float32(2)
        return box[0] - half_w, box[0] + half_w, box[1] - half_h, box[1] + half_h
    x0, x1 = (box[3], box[1]) if box[1] >= box[3] else (box[1], box[3])
    y0, y1 = (box[2], box[0]) if box[0] >= box[2] else (box[0], box[2])
    return x0, x1, y0, y1


def _suppresses(box: np.ndarray, kept: np.ndarray, node) -> bool:
    """Whether `box` overlaps `kept` by more than the IoU threshold."""
    center = bool(node.attrs["center_point_box"])
    ax0, ax1, ay0, ay1 = _extent(box, center)
    bx0, bx1, by0, by1 = _extent(kept, center)
    ix0, ix1, iy0, iy1 = max(ax0, bx0), min(ax1, bx1), max(ay0, by0), min(ay1, by1)
    if ix1 <= ix0 or iy1 <= iy0:
        return False
    inter = (ix1 - ix0) * (iy1 - iy0)
    area_a, area_b = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
    union = area_a + area_b - inter
    if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return bool(inter / union > np.float32(node.attrs["iou_threshold"]))
