"""SquaredDistance: the reference equals the Sub -> Mul -> ReduceSum composition it replaces in
the RBF SVMs bit for bit, and the generated C equals the reference bit for bit on the host and
on Cortex-M4 in QEMU (no multiply-add contraction), with inputs where a fused multiply-add would
round differently."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.ir import GraphBuilder, run_graph
from helpers import assert_bit_exact, build_graph, run_c

# (rows, vectors, features): the four-feature loop with and without a tail, and the third the
# real SVC's support-vector table.
SHAPES = [(1, 1, 1), (3, 5, 4), (2, 161, 8), (2, 3, 7)]


def data(seed: int, shape: tuple[int, int]) -> np.ndarray:
    """Values of mixed magnitudes, so that the squares' roundings show in the sums."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * rng.choice([0.01, 1.0, 30.0], shape)).astype(np.float32)


def graph(shapes=SHAPES, constant_v: bool = True):
    """One SquaredDistance per shape: x an input, v a constant (flash) or a second input."""
    b = GraphBuilder("sqd")
    for k, (n, v, f) in enumerate(shapes):
        vectors = b.const(f"v{k}", data(100 + k, (v, f))) if constant_v else b.input(f"v{k}", "float32", (v, f))
        b.output(b.node("SquaredDistance", [b.input(f"x{k}", "float32", (n, f)), vectors]))
    return b.build()


def feeds(g, count: int = 2):
    return [{name: data(seed * 10 + k, g.values[name].shape) for k, name in enumerate(g.inputs)}
            for seed in range(count)]


def fused_multiply_add(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """What a contracted kernel computes: acc = fma(d, d, acc), one rounding per feature."""
    acc = np.zeros((x.shape[0], v.shape[0]), np.float32)
    for f in range(x.shape[1]):
        d = (x[:, f, None] - v[None, :, f]).astype(np.float64)
        acc = (d * d + acc.astype(np.float64)).astype(np.float32)
    return acc


def test_reference_equals_the_composition_it_replaces():
    x_data, v = data(1, (4, 8)), data(2, (37, 8))
    b = GraphBuilder("composed")
    x = b.input("x", "float32", (4, 8))
    diff = b.node("Sub", [b.node("Reshape", [x], shape=(4, 1, 8)), b.const("v", v)])
    composed = b.node("ReduceSum", [b.node("Mul", [diff, diff])], axes=(2,), keepdims=False)
    direct = b.node("SquaredDistance", [x, b.const("v2", v)])
    out = run_graph(b.output(composed).output(direct).build(), {"x": x_data})
    assert out[direct].shape == (4, 37) and out[direct].dtype == np.float32
    np.testing.assert_array_equal(out[direct], out[composed])
    assert not np.array_equal(out[direct], fused_multiply_add(x_data, v)), "the data cannot tell FMA apart"


@pytest.mark.parametrize("constant_v", [True, False])
def test_c_equals_reference_on_the_host(constant_v):
    g = graph(constant_v=constant_v)
    samples = feeds(g)
    assert_bit_exact(g, samples, run_c(g, samples))


@pytest.mark.skipif(not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")),
                    reason="no Arm toolchain or QEMU (Debian gcc-arm-none-eabi, qemu-system-arm)")
def test_c_equals_reference_on_cortex_m4_in_qemu():
    """The M4F has VFMA.F32: the kernel must not use it."""
    from codegen.targets import load_target
    from codegen.verify.qemu import run_generated as run_on_qemu

    g = graph()
    samples = feeds(g)
    x, v = samples[0]["x2"], g.values["v2"].data
    assert not np.array_equal(run_graph(g, samples[0])[g.outputs[2]], fused_multiply_add(x, v))
    assert_bit_exact(g, samples, run_on_qemu(build_graph(g, "t", target="cortex-m4").files, "t", samples,
                                             load_target("cortex-m4")))


@pytest.mark.parametrize("x_shape, v_shape", [((2, 3), (4, 5)), ((2, 3, 1), (4, 3)), ((2, 3), (3,))])
def test_shapes_are_checked(x_shape, v_shape):
    b = GraphBuilder("bad")
    with pytest.raises(KilnError, match=r"SquaredDistance needs x \[N, F\] and v \[V, F\]"):
        b.node("SquaredDistance", [b.input("x", "float32", x_shape), b.input("v", "float32", v_shape)])


def test_integers_are_refused():
    b = GraphBuilder("int")
    b.output(b.node("SquaredDistance", [b.input("x", "int32", (2, 3)), b.input("v", "int32", (4, 3))]))
    with pytest.raises(KilnError, match="SquaredDistance on int32 is not supported"):
        build_graph(b.build(), "t")
