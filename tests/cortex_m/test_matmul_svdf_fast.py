"""The fast int8 BatchMatMul and SVDF kernels (cortex_m_dsp on the M4, mve on the M55) equal
the numpy reference, bit-exact with TFLite Micro's BATCH_MATMUL and integer SVDF, in QEMU:
matmuls of two activations and of an activation by a constant, odd k, n not a multiple of 4,
odd m, batches, batch dimensions broadcast either way, a 1-D operand; SVDFs of rank 1 and 2,
several memory sizes and batches, with and without bias. The same graphs run on Cortex-A
(neon): tests/cortex_a/test_neon_matmul_svdf.py."""

from __future__ import annotations

import pytest

from ops.matmul_svdf_cases import matmuls, svdfs
from test_dsp_kernels import check_target

pytestmark = pytest.mark.usefixtures("cortex_m")


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_fast_matmul_equals_the_reference(target, variant):
    check_target(matmuls(), target, variant, {"matmul_s8"})


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_fast_svdf_equals_the_reference(target, variant):
    check_target(svdfs(), target, variant, {"svdf_s8"})


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_each_layer_alone_compiles_with_the_strict_flags(target, tmp_path):
    """Built alone, a layer's parameters are constants the compiler propagates into the
    kernel (its loops' bounds known): still no warning under the strict flags."""
    import subprocess

    from codegen.targets import load_target
    from codegen.verify.toolchain import STRICT_FLAGS
    from helpers import build_graph

    flags = load_target(target).cflags
    for k, g in enumerate(matmuls() + svdfs()):
        for fname, text in build_graph(g, "t", target=target).files.items():
            (tmp_path / fname).write_text(text)
        proc = subprocess.run(["arm-none-eabi-gcc", *flags, *STRICT_FLAGS, "-c", "t.c", "-o", "t.o"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, f"layer {k}: {proc.stderr[-2000:]}"


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_debug_builds_at_o0_equal_the_reference(target, variant):
    check_target(matmuls() + svdfs(), target, variant, {"matmul_s8", "svdf_s8"}, opt_level="O0")


def test_constants_are_repacked_not_duplicated():
    """A constant b becomes the DSP kernel's packed columns (int32 words, no bigger than b
    padded), not the int8 tensor as well; the SVDF's feature weights and bias are replaced by
    their packed and folded forms under the same names, nothing left unread in flash."""
    from codegen.targets import load_target
    from cortex_m_testing import build
    from ops.matmul_svdf_cases import matmul_graph, svdf_graph

    mm = build(matmul_graph((4, 3, 18), (18, 10), True, -20, 3, seed=1), load_target("cortex-m4"))
    assert sorted((c.name.split("_")[0], c.dtype, c.data.size) for c in mm.lowered.consts) == [
        ("cols", "int32", 10 * 20 // 4), ("rq", "int32", 4)]
    ref = build(svdf_graph(2, 13, 4, 2, 7, True, seed=2), "cortex-m0plus").lowered.consts
    dsp = build(svdf_graph(2, 13, 4, 2, 7, True, seed=2), load_target("cortex-m4")).lowered.consts
    assert [c.name for c in dsp] == [c.name for c in ref]
    assert {c.name: c.dtype for c in dsp} == {c.name: "int32" if c.dtype == "int8" else c.dtype for c in ref}


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_streaming_svdf_matches_tflite_micro_over_consecutive_calls(target):
    """The SVDF's state kept beside the arena between calls (the kernel moves it in place)
    against TFLite Micro's interpreter, call after call."""
    from tflite_case_table import cases_for
    from tflite_cases import run_case

    for case in cases_for("SVDF", "int8"):
        outcome = run_case(case, samples=2, target=target)
        assert outcome.status == "pass", f"{case.id}: {outcome.reason}"
