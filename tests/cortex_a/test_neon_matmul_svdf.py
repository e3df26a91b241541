"""The NEON int8 BatchMatMul and SVDF kernels (templates/kernels/neon/matmul_s8.c.j2,
svdf_s8.c.j2) equal the numpy reference, bit-exact with TFLite Micro, under qemu-aarch64, on
the graphs of the Cortex-M tests (tests/cortex_m/test_matmul_svdf_fast.py: odd k and m, n not
a multiple of 4, broadcast batches, constant and activation b, 1-D operands; SVDFs of rank 1
and 2, several memories and batches)."""

from __future__ import annotations

import pytest

from codegen.kernels.select import variant_for_name as kernel_variant
from codegen.targets import load_target
from codegen.verify import qemu_user
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from helpers import assert_bit_exact
from ops.linear_testing import merge
from ops.matmul_svdf_cases import matmuls, svdfs

pytestmark = pytest.mark.usefixtures("cortex_a")


@pytest.mark.parametrize("target,kernel,variant", [("cortex-a53", "matmul_s8", "neon"),
                                                   ("cortex-a55", "matmul_s8", "neon_dotprod"),
                                                   ("cortex-a53", "svdf_s8", "neon"),
                                                   ("cortex-a55", "svdf_s8", "neon")])
def test_neon_matmul_and_svdf_equal_the_reference(target, kernel, variant):
    g, _, _ = merge(matmuls() if kernel == "matmul_s8" else svdfs())
    t = load_target(target)
    res = build(g, t)
    assert kernel in res.manifest["kernels"] and kernel_variant(kernel, t.variants) == variant
    feeds = random_samples(res.manifest["inputs"], 3, seed=5)
    assert_bit_exact(g, feeds, qemu_user.run_generated(res.files, "t", feeds, t))


@pytest.mark.parametrize("target", ["cortex-a53", "cortex-a55"])
def test_each_layer_alone_compiles_with_the_strict_flags(target, tmp_path):
    """Built alone, a layer's parameters are constants the compiler propagates into the
    kernel (its loops' bounds known): still no warning under the strict flags."""
    import subprocess

    from codegen.verify.toolchain import STRICT_FLAGS

    t = load_target(target)
    for k, g in enumerate(matmuls() + svdfs() + float_matmuls()):
        for fname, text in build(g, t).files.items():
            (tmp_path / fname).write_text(text)
        proc = subprocess.run([t.cc, *t.cflags, *STRICT_FLAGS, "-c", "t.c", "-o", "t.o"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, f"layer {k}: {proc.stderr[-2000:]}"


def test_debug_build_at_o0_equals_the_reference():
    from codegen.targets import with_opt_level

    g, _, _ = merge(matmuls() + svdfs())
    t = with_opt_level(load_target("cortex-a53"), "O0")
    res = build(g, t)
    feeds = random_samples(res.manifest["inputs"], 2, seed=6)
    assert_bit_exact(g, feeds, qemu_user.run_generated(res.files, "t", feeds, t))


# (a shape, b shape): float32 MatMuls of two activations through every tile of the NEON kernel
FLOAT_MATMULS = [
    ((8, 16), (16, 16)),  # 4x8 tiles only
    ((2, 7, 13), (13, 21)),  # a 4-row block and 3 single rows; 8 + 8 + 4 columns and one scalar; odd k
    ((2, 1, 5, 3), (3, 3, 6)),  # broadcast both ways; k below 4
    ((9,), (2, 9, 5)),  # 1-D a: a single row
    ((3, 6, 4), (4,)),  # 1-D b: a single scalar column
]


def float_matmuls():
    from codegen.ir import GraphBuilder

    graphs = []
    for a_shape, b_shape in FLOAT_MATMULS:
        b = GraphBuilder("mf")
        graphs.append(b.output(b.node("MatMul", [b.input("mf_a", "float32", a_shape),
                                                 b.input("mf_b", "float32", b_shape)])).build())
    return graphs


def test_neon_float_matmul_matches_the_reference():
    from codegen.ir import run_graph
    from codegen.verify.compare import compare_output

    g, _, outs = merge(float_matmuls())
    t = load_target("cortex-a53")
    res = build(g, t)
    assert kernel_variant("matmul_f32", t.variants) == "neon"
    feeds = random_samples(res.manifest["inputs"], 2, seed=8)
    for feed, got in zip(feeds, qemu_user.run_generated(res.files, "t", feeds, t)):
        want = run_graph(g, feed)
        for name in outs:
            report = compare_output(name, got[name], want[name])
            assert report.ok, (name, report)
