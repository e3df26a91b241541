"""HybridConv2D: TFLite's dynamic-range CONV_2D (float activations, int8 weights).

The numpy reference (imported through the TFLite frontend) is compared bit for bit with
LiteRT's builtin kernels (no default delegate: XNNPACK runs hybrid convolutions with its own
asymmetric quantization), then the generated C with the reference, bit for bit as well.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from codegen.compiler import compile_model
from codegen.errors import KilnError
from codegen.frontends.tflite import load_bytes
from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.ops import hybrid_quant as hq
from codegen.ops.registry import get_op
from codegen.options import CompileOptions
from codegen.resources import RUNTIME_C
from codegen.targets import load_target
from codegen.verify.run import run_on_target
from codegen.verify.samples import random_samples
from helpers import build_graph, run_c
from ops.linear_testing import merge  # tests/ops as a namespace package: importable from tests/cortex_a too
from tflite_models import TensorSpec, const, single_op_model

F32 = np.float32
EDGE = np.nextafter(F32(0.5), F32(0))  # 0.49999997: the one value the two roundings disagree on

# (input NHWC, filter OHWI, options, weight scales: one, distinct per channel or equal per channel)
CASES = [
    ((1, 7, 7, 3), (4, 3, 3, 3), dict(padding="SAME"), "tensor"),
    ((2, 9, 8, 3), (5, 3, 3, 3), dict(padding="SAME", stride_h=2, stride_w=2, fused_activation_function="RELU"),
     "tensor"),
    ((1, 9, 9, 2), (4, 3, 2, 2), dict(padding="VALID", dilation_h_factor=2, dilation_w_factor=3), "tensor"),
    ((1, 5, 6, 8), (6, 1, 1, 8), dict(padding="VALID", fused_activation_function="RELU6"), "tensor"),
    ((1, 7, 7, 3), (4, 3, 3, 3), dict(padding="SAME"), "channel"),
    ((2, 8, 7, 4), (6, 3, 3, 4), dict(padding="SAME", stride_h=2, stride_w=1, fused_activation_function="RELU"),
     "channel"),
    ((1, 9, 9, 2), (3, 3, 3, 2), dict(padding="SAME", dilation_h_factor=2, dilation_w_factor=2), "channel"),
    ((1, 6, 5, 5), (3, 2, 2, 5), dict(padding="SAME", fused_activation_function="RELU_N1_TO_1"), "equal"),
    ((1, 49, 10, 1), (8, 10, 4, 1), dict(padding="SAME", stride_h=2, stride_w=2, fused_activation_function="RELU"),
     "tensor"),  # the first layer of MLPerf Tiny KWS: 490 inputs, a tail of 2 after 61 blocks of 8
]


def hybrid_model(x_shape, w_shape, options, scales, seed=0, bias=True) -> bytes:
    """A one-CONV_2D TFLite model: float32 input and output, random int8 weights with the
    given kind of scales, float32 bias."""
    rng = np.random.default_rng(seed)
    out_c = w_shape[0]
    w = rng.integers(-127, 128, size=w_shape).astype(np.int8)
    if scales == "tensor":
        wq = dict(scale=float(rng.uniform(0.002, 0.02)))
    elif scales == "channel":
        wq = dict(scale=list(rng.uniform(0.002, 0.02, out_c)), zero_point=[0] * out_c)
    else:
        wq = dict(scale=[0.0071] * out_c, zero_point=[0] * out_c)
    opts = {"stride_h": 1, "stride_w": 1, **options}
    b = const(rng.standard_normal(out_c).astype(np.float32)) if bias else None
    x = TensorSpec(tuple(x_shape))
    y = TensorSpec(_out_shape(x_shape, w_shape, opts))
    return single_op_model("CONV_2D", [x, const(w, "int8", **wq), b], [y], opts)


def _out_shape(x_shape, w_shape, opts):
    """TFLite's output size for SAME / VALID padding."""
    n, h, w, _ = x_shape
    dims = []
    for size, k, s, d in ((h, w_shape[1], opts["stride_h"], opts.get("dilation_h_factor", 1)),
                          (w, w_shape[2], opts["stride_w"], opts.get("dilation_w_factor", 1))):
        eff = d * (k - 1) + 1
        dims.append(-(-size // s) if opts["padding"] == "SAME" else (size - eff) // s + 1)
    return (n, dims[0], dims[1], w_shape[0])


def litert(model: bytes, x: np.ndarray, reference_kernels: bool = False) -> np.ndarray:
    """LiteRT's builtin kernels (optimized, or reference), without the XNNPACK delegate."""
    kind = (OpResolverType.BUILTIN_REF if reference_kernels
            else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interp = Interpreter(model_content=model, experimental_op_resolver_type=kind, num_threads=1)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return np.array(interp.get_tensor(interp.get_output_details()[0]["index"]))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_reference_is_bit_exact_with_litert(case):
    x_shape, w_shape, options, scales = CASES[case]
    model = hybrid_model(x_shape, w_shape, options, scales, seed=case)
    g = load_bytes(model)
    (node,) = g.nodes
    assert node.op == "HybridConv2D" and g.values[node.inputs[1]].dtype == "int8"
    rng = np.random.default_rng(case)
    for k in range(5):
        x = (rng.standard_normal(x_shape) * (1, 4, 0.01, 100, 1)[k]).astype(np.float32)
        if k == 4:
            x = np.abs(x)  # post-ReLU activations: the asymmetric zero point sits at -128
        got = run_graph(g, {g.inputs[0]: x})[g.outputs[0]]
        want = litert(model, x)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        if scales != "channel":  # per tensor, LiteRT's reference kernels compute the same
            np.testing.assert_array_equal(got, litert(model, x, reference_kernels=True))


@pytest.mark.parametrize("scales", ["tensor", "channel"])
def test_rounding_follows_litert_blocks_of_eight(scales):
    """0.49999997 * 1 rounds to 1 inside LiteRT's vectorized blocks of 8 and to 0 in the
    tail; both are reproduced. The input is built so that its quantization multiplier is 1."""
    model = single_op_model("CONV_2D", [TensorSpec((1, 1, 20, 1)),
                                        const(np.ones((2, 1, 1, 1), np.int8), "int8",
                                              **({"scale": 1.0} if scales == "tensor" else
                                                 {"scale": [1.0, 0.5], "zero_point": [0, 0]})),
                                        const(np.zeros(2, np.float32))],
                            [TensorSpec((1, 1, 20, 2))], {"padding": "VALID", "stride_h": 1, "stride_w": 1})
    g = load_bytes(model)
    if scales == "tensor":
        x = np.zeros(20, np.float32)
        x[0] = 127.0  # range 127: inverse scale 1
    else:
        x = np.zeros(20, np.float32)
        x[0], x[1] = -127.5, 127.5  # range 255: scale 1 (zero point -1)
    x[[1 + (scales != "tensor"), 5, 17]] = [EDGE, -EDGE, EDGE]
    x[18] = F32(2.5)
    x = x.reshape(1, 1, 20, 1)
    got = run_graph(g, {g.inputs[0]: x})[g.outputs[0]]
    np.testing.assert_array_equal(got, litert(model, x))
    codes = got[0, 0, :, 0]
    assert codes[1 + (scales != "tensor")] == 1 and codes[5] == -1  # vector blocks: away from 0
    assert codes[17] == 0 and codes[18] == 3  # tail: std::round


def test_quantizers_match_litert_edge_rules():
    """Direct checks of the emulation: zero input, ranges, zero point nudging."""
    q = hq.quantize_symmetric(np.zeros((3, 3), np.float32))
    assert q.scale == 1 and not q.codes.any()
    q = hq.quantize_asymmetric(np.array([0.0, 1.0, 2.0, 3.0], np.float32))
    assert q.zero_point == -128 and q.codes[0] == -128 and q.codes[-1] == 127
    q = hq.quantize_asymmetric(np.array([-3.0, -1.0, 0.0], np.float32))
    assert q.zero_point == 127 and q.codes[0] == -128
    asym, scales = hq.hybrid_scales((0.5, 0.5, 0.5))
    assert not asym and scales.dtype == np.float32


def _batches(rng) -> list[np.ndarray]:
    """Batches that stress the quantizers: mixed signs, one sign only, tiny and huge ranges,
    sizes around the block of 8, codes landing on .5 and on the 0.49999997 edge."""
    out = [np.zeros(5, np.float32), np.full(9, -2.0, np.float32), np.array([3.0], np.float32)]
    for n in (1, 7, 8, 9, 15, 16, 17, 64, 490):
        for scale in (1e-6, 0.3, 1.0, 7.0, 1e4):
            x = rng.standard_normal(n) * scale
            out += [x, np.abs(x), -np.abs(x), x + 3 * scale]
    ties = np.concatenate([[127.0], np.arange(-126.5, 127, 1.0), [EDGE, -EDGE] * 4])
    out += [ties, ties[:-3], np.concatenate([[255.0], ties[1:]])]
    return [np.asarray(x, np.float32) for x in out]


@pytest.mark.parametrize("scales", ["tensor", "channel"])
def test_quantizers_match_litert_on_stress_batches(scales):
    """The stress batches through a 1x1 convolution with unit weights, whose output is
    (code - zero point) times the input scale: LiteRT and the reference agree bit for bit."""
    wq = {"scale": 1.0} if scales == "tensor" else {"scale": [1.0, 0.5], "zero_point": [0, 0]}
    for x in _batches(np.random.default_rng(4)):
        n = x.size
        model = single_op_model("CONV_2D", [TensorSpec((1, 1, n, 1)),
                                            const(np.ones((2, 1, 1, 1), np.int8), "int8", **wq),
                                            const(np.zeros(2, np.float32))],
                                [TensorSpec((1, 1, n, 2))], {"padding": "VALID", "stride_h": 1, "stride_w": 1})
        g = load_bytes(model)
        x4 = x.reshape(1, 1, n, 1)
        np.testing.assert_array_equal(run_graph(g, {g.inputs[0]: x4})[g.outputs[0]], litert(model, x4))


def test_c_quantizers_equal_the_emulation(tmp_path):
    """runtime_c/kiln_hybrid.h against codegen.ops.hybrid_quant, bit for bit (scale, zero point
    and every code), built with the strict flags and ASan/UBSan."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    exe = tmp_path / "test_kiln_hybrid"
    strict = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wconversion",
              "-Wdouble-promotion", "-Wshadow", "-fsanitize=address,undefined",
              "-fno-sanitize-recover=all", "-O1"]
    driver = Path(__file__).parent / "c" / "test_kiln_hybrid.c"
    subprocess.run(["gcc", *strict, f"-I{RUNTIME_C}", str(driver), "-o", str(exe)], check=True)
    batches = _batches(np.random.default_rng(3))
    lines, expected = [], []
    for x in batches:
        for mode, fn in (("s", hq.quantize_symmetric), ("a", hq.quantize_asymmetric)):
            lines.append(f"{mode} {x.size} " + " ".join(float(v).hex() for v in x))
            q = fn(x)
            expected.append(f"{float(q.scale).hex()} {q.zero_point} " + " ".join(str(int(c)) for c in q.codes))
    proc = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=60, check=True)
    got = [" ".join(line.split()) for line in proc.stdout.splitlines()]
    want = [" ".join(e.split()) for e in expected]
    assert len(got) == len(want)
    bad = [k for k, (a, b) in enumerate(zip(got, want)) if a.split()[1:] != b.split()[1:]
           or float.fromhex(a.split()[0]) != float.fromhex(b.split()[0])]
    assert not bad, f"{len(bad)} of {len(want)} batches differ, first: {lines[bad[0]][:80]}"


def _graph_of_model(case: int):
    x_shape, w_shape, options, scales = CASES[case]
    return load_bytes(hybrid_model(x_shape, w_shape, options, scales, seed=case))


def test_generated_c_equals_reference_bit_for_bit():
    """All cases in one build (ASan/UBSan), including one without bias; inputs include the
    rounding edge value inside a block of 8 and in the tail."""
    graphs = [_graph_of_model(k) for k in range(len(CASES))]
    graphs.append(load_bytes(hybrid_model((1, 5, 5, 3), (2, 3, 3, 3), dict(padding="SAME"), "channel",
                                          seed=99, bias=False)))
    g, ins, outs = merge(graphs)
    rng = np.random.default_rng(5)
    feeds = []
    for scale in (1.0, 50.0):
        feed = {}
        for (name,), graph in zip(ins, graphs):
            x = (rng.standard_normal(g.values[name].shape) * scale).astype(np.float32)
            flat = x.reshape(-1)
            flat[0] = 127.0
            flat[1:] = np.clip(flat[1:], -127, 127)
            flat[3], flat[-1] = EDGE, -EDGE
            feed[name] = x
        feeds.append(feed)
    got = run_c(g, feeds)
    for feed, out in zip(feeds, got):
        want = run_graph(g, feed)
        for name in outs:
            np.testing.assert_array_equal(out[name], want[name], err_msg=name)


def test_weights_stay_int8_and_scratch_is_one_batch():
    g = _graph_of_model(1)  # batch 2, 9x8x3 input
    res = build_graph(g, "hyb")
    c = res.files["hyb.c"]
    assert "kiln_hybrid_conv2d_f32" in c and '#include "kiln_hybrid.h"' in c
    assert "kiln_hybrid.h" in res.files
    weights = res.files["hyb_weights.c"]
    assert "const int8_t" in weights
    # 5x3x3x3 int8 weights, one float scale (per tensor), 5 float biases
    assert res.manifest["weights_bytes"] == 135 + 4 + 20
    assert res.manifest["arena_bytes"] >= 9 * 8 * 3  # the quantized batch lives in the arena


def _bad_graph(w_dtype="int8", w_zp=0, const_w=True, axis=0, b_dtype="float32"):
    b = GraphBuilder("bad")
    x = b.input("x", "float32", (1, 4, 4, 2))
    wq = Quant.of([0.1, 0.2, 0.3], w_zp, axis) if w_dtype == "int8" else None
    w = b.const("w", np.ones((3, 3, 3, 2)), w_dtype, quant=wq) if const_w else \
        b.input("w", w_dtype, (3, 3, 3, 2), wq)
    bias = b.const("b", np.zeros(3), b_dtype)
    return b.output(b.node("HybridConv2D", [x, w, bias])).build()


@pytest.mark.parametrize("kwargs,message", [
    ({"w_dtype": "float32"}, "constant int8 weights"),
    ({"const_w": False}, "computed int8"),
    ({"w_zp": 3}, "zero point 3"),
    ({"axis": 3}, "axis 3"),
    ({"b_dtype": "int32"}, "float32 bias"),
])
def test_check_refuses_what_has_no_kernel(kwargs, message):
    g = _bad_graph(**kwargs)
    with pytest.raises(KilnError, match=message) as err:
        get_op("HybridConv2D").check(g.nodes[0], g)
    assert err.value.node == g.nodes[0].name


def test_check_refuses_a_possible_accumulator_overflow():
    b = GraphBuilder("big")
    x = b.input("x", "float32", (1, 3, 3, 20000))
    w = b.const("w", np.full((1, 3, 3, 20000), -127, np.int8), quant=Quant.of(0.01))
    g = b.output(b.node("HybridConv2D", [x, w])).build()
    with pytest.raises(KilnError, match="overflow"):
        get_op("HybridConv2D").check(g.nodes[0], g)


def test_shape_inference_and_macs():
    b = GraphBuilder("s")
    x = b.input("x", "float32", (1, 8, 8, 3))
    with pytest.raises(KilnError, match="input channels"):
        b.node("HybridConv2D", [x, b.const("w", np.zeros((4, 3, 3, 2), np.int8), quant=Quant.of(0.1))])
    y = b.node("HybridConv2D", [x, b.const("w2", np.zeros((4, 3, 3, 3), np.int8), quant=Quant.of(0.1))],
               strides=(2, 2))
    g = b.output(y).build()
    assert g.values[y].shape == (1, 3, 3, 4) and g.values[y].dtype == "float32"
    assert get_op("HybridConv2D").macs(g.nodes[0], g) == 3 * 3 * 4 * 27


def test_kws_float_model_matches_litert_builtin_kernels(models_dir):
    """MLPerf Tiny KWS (float32, five hybrid CONV_2D): the generated C against LiteRT's builtin
    kernels on 20 standard-normal inputs (the samples of `kiln verify --samples 20 --seed 7`)."""
    path = models_dir / "kws_ref_model_float32.tflite"
    options = CompileOptions(load_target("host"))
    build = compile_model(path, options)
    assert "HybridConv2D" in build.manifest["ops"] and "Conv2D" not in build.manifest["ops"]
    samples = random_samples(build.manifest["inputs"], 20, 7)
    got = run_on_target(build, options, samples)
    (inp,), (out,) = build.manifest["inputs"], build.manifest["outputs"]
    for kind in (OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES, OpResolverType.BUILTIN_REF):
        interp = Interpreter(model_path=str(path), experimental_op_resolver_type=kind, num_threads=1)
        interp.allocate_tensors()
        (din,), (dout,) = interp.get_input_details(), interp.get_output_details()
        for sample, result in zip(samples, got):
            interp.set_tensor(din["index"], sample[inp["name"]].reshape(din["shape"]))
            interp.invoke()
            want = interp.get_tensor(dout["index"]).reshape(-1)
            have = np.asarray(result[out["name"]]).reshape(-1)
            assert np.abs(have - want).max() <= 1e-5 * np.abs(want).max()
