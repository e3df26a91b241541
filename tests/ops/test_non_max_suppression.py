"""NonMaxSuppression: the generated C (ASan/UBSan) against onnx's reference on random boxes
(flipped corners, centre format, tied scores, several batches and classes, many boxes), score
threshold on and off, the IoU threshold boundary; bounds and errors."""

import json
import shutil

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder
from data_shaped_testing import assert_same, onnx_reference, run_bounded
from helpers import build_graph

# (center_point_box, max_output_boxes_per_class, iou_threshold, score_threshold)
SETTINGS = [(0, 4, 0.5, None), (0, 100, 0.3, 0.25), (1, 3, 0.5, 0.0), (1, 1000, 0.0, None)]


def _boxes(rng, batches: int, count: int) -> np.ndarray:
    """Boxes on a coarse grid (touching and identical boxes), corners in either order."""
    return rng.integers(0, 12, (batches, count, 4)).astype(np.float32) / np.float32(2)


def _expected(boxes, scores, center, limit, iou, score):
    inputs = {"boxes": boxes, "scores": scores, "max": np.array([limit], np.int64),
              "iou": np.array([iou], np.float32), "score": None if score is None else np.array([score], np.float32)}
    return onnx_reference("NonMaxSuppression", inputs, center_point_box=center)[0]


def _graph(batches: int, classes: int, count: int):
    b = GraphBuilder("nms")
    boxes = b.input("boxes", "float32", (batches, count, 4))
    scores = b.input("scores", "float32", (batches, classes, count))
    outs = [b.node("NonMaxSuppression", [boxes, scores], center_point_box=c, max_output_boxes_per_class=m,
                   iou_threshold=i, score_threshold=s) for c, m, i, s in SETTINGS]
    return b.output(*outs).build(), outs


@pytest.mark.parametrize("batches,classes,count", [(2, 3, 12), (1, 2, 300)])
def test_nms_matches_onnx_reference(batches, classes, count):
    g, outs = _graph(batches, classes, count)
    samples = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        scores = rng.integers(0, 5, (batches, classes, count)).astype(np.float32) / np.float32(4)  # ties
        samples.append({"boxes": _boxes(rng, batches, count), "scores": scores})
    samples.append({"boxes": samples[0]["boxes"], "scores": np.zeros((batches, classes, count), np.float32)})
    got = run_bounded(g, samples)
    for sample, out in zip(samples, got):
        for (c, m, i, s), name in zip(SETTINGS, outs):
            want = _expected(sample["boxes"], sample["scores"], c, m, i, s)
            assert_same(out[name], want, f"center={c} max={m} iou={i} score={s}")


def test_nms_iou_exactly_at_the_threshold_keeps_the_box():
    """IoU 1/3 with threshold 1/3 in float32: kept (suppressed only above it)."""
    b = GraphBuilder("nms_edge")
    boxes = b.input("boxes", "float32", (1, 2, 4))
    scores = b.input("scores", "float32", (1, 1, 2))
    iou = float(np.float32(2.0) / np.float32(6.0))
    out = b.node("NonMaxSuppression", [boxes, scores], max_output_boxes_per_class=2, iou_threshold=iou)
    g = b.output(out).build()
    sample = {"boxes": np.array([[[0, 0, 1, 2], [0, 1, 1, 3]]], np.float32),
              "scores": np.array([[[0.9, 0.8]]], np.float32)}
    (got,) = run_bounded(g, [sample])
    want = _expected(sample["boxes"], sample["scores"], 0, 2, iou, None)
    assert_same(got[out], want, "boundary")
    assert got[out].shape == (2, 3)


def test_nms_bound_and_errors():
    g, outs = _graph(2, 3, 12)
    bounds = [o["max_length"] for o in build_graph(g).manifest["outputs"]]
    assert bounds == [2 * 3 * 4, 2 * 3 * 12, 2 * 3 * 3, 2 * 3 * 12]
    b = GraphBuilder("nms_bad")
    boxes = b.input("boxes", "float32", (1, 5, 4))
    with pytest.raises(KilnError, match="always empty"):
        b.node("NonMaxSuppression", [boxes, b.input("scores", "float32", (1, 1, 5))])
    with pytest.raises(KilnError, match=r"boxes \[B, N, 4\] and scores \[B, C, N\]"):
        b.node("NonMaxSuppression", [boxes, b.input("s2", "float32", (1, 1, 4))], max_output_boxes_per_class=1)


@pytest.mark.skipif(not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")),
                    reason="no Arm toolchain or QEMU (Debian gcc-arm-none-eabi, qemu-system-arm)")
def test_bounded_outputs_on_cortex_m4_equal_the_host():
    """The Cortex-M harness passes the length pointers and reads the actual shapes back."""
    from codegen.targets import load_target
    from codegen.verify.qemu import run_generated as run_on_qemu

    b = GraphBuilder("det")
    boxes = b.input("boxes", "float32", (1, 20, 4))
    scores = b.input("scores", "float32", (1, 2, 20))
    sel = b.node("NonMaxSuppression", [boxes, scores], max_output_boxes_per_class=5, iou_threshold=0.4,
                 score_threshold=0.2)
    nz = b.node("NonZero", [scores])
    uq = b.node("Unique", [scores], sorted=True)
    g = b.output(sel, nz, *uq).build()
    rng = np.random.default_rng(7)
    samples = [{"boxes": _boxes(rng, 1, 20), "scores": rng.integers(0, 4, (1, 2, 20)).astype(np.float32) / 4}
               for _ in range(2)]
    host = run_bounded(g, samples)
    res = build_graph(g, "t", target="cortex-m4")
    qemu = run_on_qemu(res.files, "t", samples, load_target("cortex-m4"))
    for h, q in zip(host, qemu):
        for name in g.outputs:
            assert_same(q[name], h[name], name)


@pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc"), reason="no Arm toolchain (Debian gcc-arm-none-eabi)")
def test_board_project_main_passes_the_length_pointers():
    """`kiln build --board`: the example main calls run with the lengths and builds."""
    from codegen.project import board_build
    from codegen.targets import load_target
    from codegen.targets.boards import board_target, load_board

    g, _ = _graph(1, 2, 8)
    board = load_board("mps2-an386")
    target = board_target(load_target(board.target), board)
    files = board_build(build_graph(g, "det", target=target), board, target)
    assert "&out_nonmaxsuppression_2_length" in files["main.c"]
    assert json.loads(files["det.manifest.json"])["firmware"]["measured"]
