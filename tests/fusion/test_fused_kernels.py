"""Every fused kernel equals the unfused sequence: the same model built with the planner off
(one kernel per node) and with its fusions (fusion mode "auto" and "all"), compiled with the
strict C flags and run on the host; int8 bit-exact, float32 within 1e-5 relative."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import fusion_models as fm
from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples

CASES = {
    "float_chains": fm.float_chains,
    "float_elementwise_dag": fm.float_elementwise_dag,
    "inception": fm.inception,
    "inception_mixed": lambda: fm.inception((1, 3, 5), size=8, cin=4),
    "int8_chain": fm.int8_chain,
    "int8_inception": fm.int8_inception,
    "int8_inception_mixed": lambda: fm.int8_inception((1, 3)),
}


def _write(tmp_path: Path, name: str) -> Path:
    model = CASES[name]()
    path = tmp_path / (f"{name}.tflite" if isinstance(model, bytes) else f"{name}.onnx")
    if isinstance(model, bytes):
        path.write_bytes(model)
    else:
        onnx.save(model, path)
    return path


def _run(path: Path, mode: str, samples):
    build = compile_model(path, CompileOptions(load_target("host"), fusion=mode))
    return build, run_generated(build.files, build.name, samples)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_build_equals_unfused(tmp_path, name):
    path = _write(tmp_path, name)
    unfused_build = compile_model(path, CompileOptions(load_target("host"), fusion="off"))
    samples = random_samples(unfused_build.manifest["inputs"], 3, 0)
    unfused = run_generated(unfused_build.files, unfused_build.name, samples)
    fused_any = False
    for mode in ("auto", "all"):
        build, outs = _run(path, mode, samples)
        fused_any |= len(build.manifest["fusion_groups"]) < len(unfused_build.manifest["fusion_groups"])
        for got, want in zip(outs, unfused):
            for k, w in want.items():
                if w.dtype == np.int8:
                    np.testing.assert_array_equal(got[k], w, err_msg=f"{name} ({mode}): int8 not bit-exact")
                else:
                    np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-6, err_msg=f"{name} ({mode})")
    assert fused_any, f"{name}: no fusion happened in any mode"


def test_int8_chain_is_one_kernel_when_forced(tmp_path):
    build = compile_model(_write(tmp_path, "int8_chain"), CompileOptions(load_target("host"), fusion="all"))
    (kernel,) = [k for k in build.manifest["kernels"] if k.startswith("fused_elementwise")]
    assert kernel.startswith("fused_elementwise_s8__")
    assert len(build.manifest["fusion_groups"]) == 1
    c_file = build.files[f"{build.name}.c"]
    for fn in ("kiln_add_s8", "kiln_mul_s8", "kiln_sub_s8", "kiln_lut_s8"):
        assert fn in c_file  # each step calls its unfused kernel's per-element function


def test_fused_int8_chain_on_cortex_m4_matches_host(tmp_path):
    """The generated kernel compiled for the M4 (DSP target flags) gives the same bytes."""
    from codegen.verify.run import run_on_target

    path = _write(tmp_path, "int8_chain")
    host, samples = None, None
    for target in ("host", "cortex-m4"):
        options = CompileOptions(load_target(target), fusion="all")
        build = compile_model(path, options)
        samples = samples or random_samples(build.manifest["inputs"], 2, 1)
        outs = run_on_target(build, options, samples)
        if host is None:
            host = outs
        else:
            for a, b in zip(host, outs):
                for k in a:
                    np.testing.assert_array_equal(a[k], b[k])


def test_identical_chains_share_one_function(tmp_path):
    from onnx import helper

    from onnx_models import ModelBuilder

    b = ModelBuilder("twice", 13)
    x = b.input("x", [1, 64])
    scale = b.input("scale", [1, 64])  # not a constant: fold_affine cannot take it into the weights
    h = x
    for k in range(2):  # the same chain twice, with a FullyConnected between
        h = b.node("Tanh", [b.node("Mul", [h, scale])])
        h = b.node("Gemm", [h, b.weight(f"w{k}", (64, 64), 0.1)], transB=1)  # unique names: a valid model
    b.nodes.append(helper.make_node("Neg", [h], ["y"], name="neg"))
    path = tmp_path / "twice.onnx"
    onnx.save(b.output("y", [1, 64]).model(), path)
    build = compile_model(path, CompileOptions(load_target("host")))
    fused = [g for g in build.manifest["fusion_groups"] if g["kernel"].startswith("fused_elementwise")]
    assert len(fused) == 2 and fused[0]["kernel"] == fused[1]["kernel"]
    assert build.files[f"{build.name}.c"].count(f"static void kiln_{fused[0]['kernel']}(") == 1
