"""Patch-based execution of the first stage (codegen/fusion/patch.py): row arithmetic, exactness
of the patched graph (numpy interpreter and generated C), arena reduction, declining."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import build_graph
from onnx_models import cnn
from tflite_models import ModelWriter, TensorSpec, run_tflm
from tflite_models import const as tflite_const

from codegen.cli import _options, _parser
from codegen.errors import KilnError
from codegen.memory.arena_measure import arena_measure
from codegen.fusion.patch import (PatchCandidate, apply_patch_stage, graph_macs, leading_chain,
                                  patch_candidates, propose_patch_stage)
from codegen.fusion.patch_geometry import RowSpan, RowWindow, band_bounds, chain_rows, input_rows
from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.passes.pipeline import run_pipeline
from codegen.targets import load_target
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples

HOST = load_target("host")
ARENA = arena_measure(HOST)

# (kernel, stride, dilation, pad_top, pad_bottom, in_size, out_size), output rows -> input span
ROWS = [
    ((3, 1, 1, 1, 1, 8, 8), (0, 4), RowSpan(0, 5, 1, 0)),    # top band: one padding row
    ((3, 1, 1, 1, 1, 8, 8), (4, 8), RowSpan(3, 8, 0, 1)),    # bottom band: one padding row
    ((3, 1, 1, 1, 1, 8, 8), (2, 5), RowSpan(1, 6, 0, 0)),    # interior: the halo, no padding
    ((3, 2, 1, 0, 1, 8, 4), (0, 2), RowSpan(0, 5, 0, 0)),    # TFLite SAME, stride 2
    ((3, 2, 1, 0, 1, 8, 4), (2, 4), RowSpan(4, 8, 0, 1)),    # ... its odd pad at the bottom
    ((3, 1, 2, 2, 2, 10, 10), (3, 6), RowSpan(1, 8, 0, 0)),  # dilation 2
    ((3, 1, 2, 2, 2, 10, 10), (0, 1), RowSpan(0, 3, 2, 0)),  # dilation 2 at the border
    ((1, 1, 1, 0, 0, 6, 6), (2, 5), RowSpan(2, 5, 0, 0)),    # 1x1 / elementwise
    ((2, 2, 1, 0, 0, 8, 4), (1, 3), RowSpan(2, 6, 0, 0)),    # 2x2 pool, stride 2
    ((3, 2, 1, 1, 1, 7, 4), (3, 4), RowSpan(5, 7, 0, 1)),    # odd height, symmetric pads
]


@pytest.mark.parametrize("window, out_rows, expected", ROWS)
def test_input_rows(window, out_rows, expected):
    span = input_rows(RowWindow(*window), *out_rows)
    assert span == expected
    w = RowWindow(*window)  # the band op computes exactly the requested rows from the span
    assert (span.rows + span.pad_top + span.pad_bottom - w.span) // w.stride + 1 == out_rows[1] - out_rows[0]


def test_chain_rows_back_through_stride_and_halo():
    conv_s2 = RowWindow(3, 2, 1, 0, 1, 16, 8)   # 16 -> 8 rows
    dw = RowWindow(3, 1, 1, 1, 1, 8, 8)
    assert chain_rows([conv_s2, dw], 4, 8) == [RowSpan(6, 16, 0, 1), RowSpan(3, 8, 0, 1)]
    assert chain_rows([conv_s2, dw], 0, 3) == [RowSpan(0, 9, 0, 0), RowSpan(0, 4, 1, 0)]


@pytest.mark.parametrize("rows, tiles, expected", [
    (10, 3, [(0, 4), (4, 7), (7, 10)]),
    (24, 6, [(k, k + 4) for k in range(0, 24, 4)]),
    (5, 5, [(k, k + 1) for k in range(5)]),
])
def test_band_bounds(rows, tiles, expected):
    assert band_bounds(rows, tiles) == expected


def test_band_bounds_refuses_more_bands_than_rows():
    with pytest.raises(ValueError):
        band_bounds(3, 4)


def _int8_stage_model(h: int = 20, w: int = 12, seed: int = 0):
    """int8: Conv 3x3 stride 2 (TFLite SAME: pad at the bottom) + ReLU -> depthwise 3x3 pad 1 ->
    Conv 1x1 -> MaxPool 2x2 stride 2 -> Conv 1x1 -> Mean; the big tensors come first."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("stage_s8")
    q = Quant.of(0.05, -3)

    def weights(shape, axis):
        return b.const("w", rng.integers(-90, 90, shape).astype(np.int8),
                       quant=Quant.of(rng.uniform(0.004, 0.01, shape[axis]), 0, axis))

    def bias(n, w_name):
        return b.const("b", rng.integers(-500, 500, n).astype(np.int32),
                       quant=Quant.of(0.05 * np.asarray(b.g.values[w_name].quant.scale), 0, 0))

    x = b.input("x", "int8", (1, h, w, 3), q)
    w0 = weights((16, 3, 3, 3), 0)
    y = b.node("Conv2D", [x, w0, bias(16, w0)], strides=(2, 2), pads=(0, 0, 1, 1), activation="relu",
               quant=Quant.of(0.06, -128))
    w1 = weights((1, 3, 3, 16), 3)
    y = b.node("DepthwiseConv2D", [y, w1, bias(16, w1)], pads=(1, 1, 1, 1), quant=Quant.of(0.07, 5))
    w2 = weights((24, 1, 1, 16), 0)
    y = b.node("Conv2D", [y, w2, bias(24, w2)], quant=Quant.of(0.2, 2))
    y = b.node("MaxPool2D", [y], kernel=(2, 2), strides=(2, 2), quant=Quant.of(0.2, 2))
    w3 = weights((8, 1, 1, 24), 0)
    y = b.node("Conv2D", [y, w3, bias(8, w3)], quant=Quant.of(0.3, 0))
    y = b.node("Mean", [y], axes=(1, 2), keepdims=True, quant=Quant.of(0.3, 0))
    return b.output(y).build()


def assert_c_equals_unpatched(res, g, count: int = 2) -> None:
    """The patched build's C (ASan/UBSan) gives the unpatched graph's outputs: int8 bit for
    bit, float within 1e-5 relative."""
    samples = random_samples(res.manifest["inputs"], count, 0)
    for sample, out in zip(samples, run_generated(res.files, "t", samples, sanitize=True)):
        for name, ref in run_graph(g, sample).items():
            if ref.dtype == np.int8:
                np.testing.assert_array_equal(out[name], ref, err_msg=name)
            else:
                assert np.abs(out[name] - ref).max() <= 1e-5 * max(float(np.abs(ref).max()), 1e-30), name


def _tflite_stage_model() -> bytes:
    """int8 TFLite: CONV_2D 3x3 SAME + ReLU -> DEPTHWISE_CONV_2D 3x3 SAME dilation 2 -> MAX_POOL_2D
    2x2 stride 2 -> CONV_2D 1x1 stride 2 (the frontend's SAME pads, dilation, stride in the stage)."""
    rng = np.random.default_rng(5)
    w = ModelWriter()

    def i8(shape, scale, zp, name):
        return w.tensor(TensorSpec(shape, "int8", scale=scale, zero_point=zp, name=name))

    def weights(shape, axis, in_scale):
        scales = rng.uniform(0.004, 0.01, shape[axis])
        wt = w.tensor(tflite_const(rng.integers(-100, 100, shape).astype(np.int8), "int8", scale=list(scales),
                                   quantized_dimension=axis))
        return wt, w.tensor(tflite_const(rng.integers(-400, 400, shape[axis]).astype(np.int32), "int32",
                                         scale=list(scales * in_scale)))

    x, c1 = i8((1, 30, 14, 3), 0.05, -3, "x"), i8((1, 30, 14, 16), 0.06, -128, "c1")
    d, p, y = i8((1, 30, 14, 16), 0.07, 4, "d"), i8((1, 15, 7, 16), 0.07, 4, "p"), i8((1, 8, 4, 8), 0.2, 1, "y")
    conv = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1, "dilation_h_factor": 1}
    w.op("CONV_2D", [x, *weights((16, 3, 3, 3), 0, 0.05)], [c1], {**conv, "fused_activation_function": "RELU"})
    w.op("DEPTHWISE_CONV_2D", [c1, *weights((1, 3, 3, 16), 3, 0.06)], [d],
         {**conv, "depth_multiplier": 1, "dilation_w_factor": 2, "dilation_h_factor": 2})
    w.op("MAX_POOL_2D", [d], [p], {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
                                   "filter_height": 2})
    w.op("CONV_2D", [p, *weights((8, 1, 1, 16), 0, 0.07)], [y], {**conv, "stride_w": 2, "stride_h": 2})
    return w.build([x], [y])


def test_tflite_model_patched_is_bit_exact_with_tflm(tmp_path):
    from codegen.frontends import load_model

    path = tmp_path / "stage.tflite"
    path.write_bytes(_tflite_stage_model())
    g = run_pipeline(load_model(path, {}))
    assert [n.op for n in leading_chain(g)] == ["Conv2D", "DepthwiseConv2D", "MaxPool2D", "Conv2D"]
    res = build_graph(_patched(g, 4, 3))
    xs = [np.random.default_rng(k).integers(-128, 128, (1, 30, 14, 3), dtype=np.int8) for k in range(2)]
    got = run_generated(res.files, "t", [{"x": x} for x in xs], sanitize=True)
    for x, out in zip(xs, got):
        np.testing.assert_array_equal(out["y"], run_tflm(path.read_bytes(), x)[0])


def _patched(g, ops: int, tiles: int):
    chain = leading_chain(g)
    return apply_patch_stage(g, PatchCandidate(tuple(n.name for n in chain[:ops]), tiles, 0, 0, 0, ""))


@pytest.mark.parametrize("ops, tiles", [(2, 2), (3, 3), (4, 5), (5, 2), (4, 1)])
def test_patched_graph_is_bit_exact_in_the_interpreter(ops, tiles):
    g = _int8_stage_model()
    p = _patched(g, ops, tiles)
    x = np.random.default_rng(1).integers(-128, 128, (1, 20, 12, 3), dtype=np.int8)
    expected = run_graph(g, {"x": x}, keep_all=True)
    got = run_graph(p, {"x": x}, keep_all=True)
    stage_out = leading_chain(g)[ops - 1].outputs[0]
    np.testing.assert_array_equal(got[stage_out], expected[stage_out])
    np.testing.assert_array_equal(got[g.outputs[0]], expected[g.outputs[0]])
    assert sum(n.op == "Concat" for n in p.nodes) == 1


@pytest.mark.parametrize("canaries", [False, True])
def test_patched_c_is_bit_exact_and_uses_views(canaries):
    g = _int8_stage_model()
    res = build_graph(_patched(g, 4, 3), canaries=canaries)  # canaries: guard bytes after every buffer
    code = res.files["t.c"]
    assert "kiln_index_map(" not in code and "kiln_concat(" not in code  # bands are views
    assert "(in_x_0 + " in code  # the bands read the input in place
    assert_c_equals_unpatched(res, g)


def test_patch_lowers_the_arena_and_the_build_takes_it():
    g = run_pipeline(_int8_stage_model(h=32, w=32))
    best = propose_patch_stage(g, ARENA)
    assert best is not None and best.peak_ram_after < best.peak_ram_before
    assert best.extra_macs > 0 and best.tiles >= 2 and "bands" in best.reason
    plain, patched = build_graph(g), build_graph(g, patch_stage=True)
    assert plain.manifest["arena_bytes"] == best.peak_ram_before
    assert patched.manifest["arena_bytes"] < plain.manifest["arena_bytes"]
    assert patched.manifest["weights_bytes"] == plain.manifest["weights_bytes"]  # bands share constants
    entry = patched.manifest["patch_stage"]
    assert (entry["tiles"], entry["nodes"], entry["extra_macs"]) == (best.tiles, list(best.nodes), best.extra_macs)
    assert "patch_stage" not in plain.manifest


def test_extra_macs_count_the_halo():
    g = _int8_stage_model()
    chain = leading_chain(g)
    cands = {(len(c.nodes), c.tiles): c for c in patch_candidates(g, ARENA, tiles=(2, 5), max_extra_macs=10 ** 9)}
    # Two ops in two bands of the 10x6 depthwise output: the depthwise rows are computed once,
    # but its 3-row window makes band 0 (rows 0..4) read conv rows 0..5 and band 1 (rows 5..9)
    # conv rows 4..9: two conv rows (6 pixels x 16 channels x 27 taps each) computed twice.
    row = 6 * 16 * 27
    assert cands[(2, 2)].extra_macs == 2 * row
    assert cands[(2, 2)].stage_macs == graph_macs(chain[:2], g)
    # Five bands of two rows: each of the four inner borders costs two conv rows.
    assert cands[(2, 5)].extra_macs == 8 * row


def _growing_model():
    """The stage's output is the largest tensor: patching cannot lower the peak."""
    b = GraphBuilder("grow")
    x = b.input("x", "float32", (1, 8, 8, 4))
    rng = np.random.default_rng(0)
    y = b.node("Conv2D", [x, b.const("w", rng.standard_normal((4, 3, 3, 4)).astype(np.float32))], pads=(1, 1, 1, 1))
    y = b.node("Conv2D", [y, b.const("w", rng.standard_normal((64, 1, 1, 4)).astype(np.float32))])
    y = b.node("Mean", [y], axes=(1, 2), keepdims=True)
    return b.output(y).build()


def test_declines_when_nothing_is_gained():
    g = run_pipeline(_growing_model())
    cands = patch_candidates(g, ARENA)
    assert cands and all(c.peak_ram_after >= c.peak_ram_before for c in cands)
    assert propose_patch_stage(g, ARENA) is None
    declined = build_graph(g, patch_stage=True)
    assert declined.files["t.c"] == build_graph(g).files["t.c"] and declined.manifest["patch_stage"] is None


def test_declines_without_a_spatial_chain():
    b = GraphBuilder("mlp")
    x = b.input("x", "float32", (1, 16))
    y = b.node("FullyConnected", [x, b.const("w", np.ones((4, 16), np.float32))])
    assert propose_patch_stage(b.output(y).build(), ARENA) is None


def test_declines_over_the_recomputation_budget():
    g = run_pipeline(_int8_stage_model(h=32, w=32))
    assert propose_patch_stage(g, ARENA, max_extra_macs=0) is None


def _onnx_cnn(tmp_path):
    """The small ONNX CNN (onnx_models.cnn) imported and optimised: NCHW input, so the graph
    starts with the NCHW->NHWC transpose."""
    import onnx

    from codegen.frontends import load_model

    path = tmp_path / "cnn.onnx"
    onnx.save(cnn(), path)
    return run_pipeline(load_model(path, {}))


def test_float_onnx_model_within_tolerance(tmp_path):
    g = _onnx_cnn(tmp_path)
    p = _patched(g, len(leading_chain(g)), 3)
    x = np.random.default_rng(2).standard_normal((1, 3, 16, 16)).astype(np.float32)
    expected, got = run_graph(g, {g.inputs[0]: x}), run_graph(p, {p.inputs[0]: x})
    for name, ref in expected.items():
        assert np.abs(got[name] - ref).max() <= 1e-5 * max(float(np.abs(ref).max()), 1e-30), name


def test_float_stage_reading_an_arena_tensor_in_c(tmp_path):
    """The ONNX model's stage reads the NCHW->NHWC transpose's output: input bands are views
    into an arena buffer, which must stay live until the last band."""
    g = _onnx_cnn(tmp_path)
    assert g.nodes[0].op == "Transpose" and leading_chain(g)[0].inputs[0] == g.nodes[0].outputs[0]
    res = build_graph(_patched(g, len(leading_chain(g)), 4))
    assert "kiln_index_map(" not in res.files["t.c"]
    assert_c_equals_unpatched(res, g)


def test_stage_ending_at_a_graph_output_writes_the_users_buffer():
    b = GraphBuilder("to_output")
    x = b.input("x", "float32", (1, 12, 5, 2))
    rng = np.random.default_rng(3)
    y = b.node("Conv2D", [x, b.const("w", rng.standard_normal((4, 3, 3, 2)).astype(np.float32))],
               strides=(2, 2), pads=(1, 1, 1, 1), activation="relu")
    y = b.node("MaxPool2D", [y], kernel=(3, 3), pads=(1, 1, 1, 1))
    g = b.output(y).build()
    res = build_graph(_patched(g, 2, 3))
    assert "(out_" in res.files["t.c"] and "kiln_concat(" not in res.files["t.c"]
    assert_c_equals_unpatched(res, g)


def test_cli_option_reaches_the_compile_options():
    args = _parser().parse_args(["build", "m.tflite", "--target", "host", "-o", "out", "--patch-stage"])
    assert _options(args).patch_stage
    assert not _options(_parser().parse_args(["build", "m.tflite", "--target", "host", "-o", "out"])).patch_stage


def test_cli_patch_tiles():
    args = _parser().parse_args(["build", "m.tflite", "--target", "host", "-o", "out", "--patch-tiles", "4"])
    options = _options(args)
    assert options.patch_stage and options.patch_tiles == 4
    with pytest.raises(KilnError, match="--patch-tiles"):
        _options(_parser().parse_args(["build", "m.tflite", "--target", "host", "-o", "o", "--patch-tiles", "1"]))


def test_patch_tiles_fixes_the_band_count():
    g = run_pipeline(_int8_stage_model(h=32, w=32))
    best = propose_patch_stage(g, ARENA, tiles=(2,))
    assert best is not None and best.tiles == 2
    res = build_graph(g, patch_stage=True, patch_tiles=2)
    assert res.manifest["arena_bytes"] <= best.peak_ram_after


@pytest.mark.parametrize("pick, tiles, message", [
    (lambda chain: (chain[0].name, chain[2].name), 2, "previous stage op"),
    (lambda chain: (chain[0].name, "nope"), 2, "unknown nodes"),
    (lambda chain: (chain[-1].name,), 2, "not a row-mapping op"),
    (lambda chain: (chain[0].name, chain[1].name), 11, "11 bands of 10 output rows"),
])
def test_apply_refuses_a_bad_stage(pick, tiles, message):
    g = _int8_stage_model()
    chain = leading_chain(g)
    mean = g.nodes[-1]
    nodes = pick(chain + [mean])
    with pytest.raises(KilnError, match=message):
        apply_patch_stage(g, PatchCandidate(nodes, tiles, 0, 0, 0, ""))


@pytest.mark.slow
@pytest.mark.parametrize("target, tools", [("host", ()), ("cortex-m4", ("arm-none-eabi-gcc", "qemu-system-arm")),
                                           ("cortex-m55", ("arm-none-eabi-gcc", "qemu-system-arm")),
                                           ("cortex-a72", ("aarch64-linux-gnu-gcc", "qemu-aarch64"))])
def test_vww_patched_is_bit_exact_with_tflm_and_needs_less_ram(models_dir, target, tools):
    """VWW's patched first stage on the portable, DSP, Helium and NEON kernels (bands of other
    heights and pads than the layer-by-layer calls), against TFLite Micro."""
    import shutil

    from codegen.compiler import compile_model
    from codegen.options import CompileOptions
    from codegen.verify.run import verify_model

    if any(shutil.which(t) is None for t in tools):
        pytest.skip(f"{' or '.join(tools)} missing")
    model = models_dir / "vww_96_int8.tflite"
    options = CompileOptions(load_target(target), patch_stage=True)
    assert verify_model(model, options, samples=3).ok
    plain = compile_model(model, CompileOptions(load_target(target)))
    assert compile_model(model, options).manifest["arena_bytes"] < 0.6 * plain.manifest["arena_bytes"]


def test_stage_takes_in_the_quantize_of_a_float_input():
    """A float input quantized in the graph: the Quantize joins the stage, so its int8 copy of
    the input is never whole in the arena."""
    b = GraphBuilder("float_in")
    x = b.input("x", "float32", (1, 24, 10, 4))
    q = b.node("Quantize", [x], quant=Quant.of(0.05, 1))
    rng = np.random.default_rng(4)
    w = b.const("w", rng.integers(-90, 90, (4, 3, 3, 4)).astype(np.int8), quant=Quant.of(0.01, 0))
    y = b.node("DepthwiseConv2D", [q, b.const("dw", rng.integers(-90, 90, (1, 3, 3, 4)).astype(np.int8),
                                              quant=Quant.of([0.01] * 4, 0, 3))],
               strides=(2, 2), pads=(0, 0, 1, 1), quant=Quant.of(0.05, 1))
    y = b.node("Conv2D", [y, w], pads=(1, 1, 1, 1), quant=Quant.of(0.1, 0))
    g = b.output(y).build()
    assert [n.op for n in leading_chain(g)] == ["Quantize", "DepthwiseConv2D", "Conv2D"]
    assert_c_equals_unpatched(build_graph(_patched(g, 3, 3)), g)
