"""Hostile and malformed models, one per class of issue 9: each ends in one KilnError line
that names the file and the node or tensor, quickly and without allocating what it claims."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from codegen import limits
from codegen.compiler import compile_model
from codegen.errors import KilnError
from codegen.frontends.tflite import load_bytes
from codegen.options import CompileOptions
from codegen.targets import load_target
from tflite_models import TensorSpec, const, single_op_model


PEAK_BYTES = 64 * 2 ** 20  # far below any size these models claim, far above what refusing them takes


def onnx_model(nodes, inits=None, inp=("x", [1, 4]), outputs=("y",), opset=13) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(inp[0], TensorProto.FLOAT, inp[1])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def error_of(model: onnx.ModelProto | bytes, tmp_path: Path, suffix: str = ".onnx") -> str:
    path = tmp_path / f"m{suffix}"
    if isinstance(model, bytes):
        path.write_bytes(model)
    else:
        onnx.save(model, path)
    # "Quickly and without allocating what it claims" as work done, not wall time (which a loaded
    # machine stretches): this process's CPU time, and the largest memory Python allocated
    # (numpy's arrays included), against models claiming gigabytes to terabytes.
    tracemalloc.start()
    cpu = time.process_time()
    try:
        with pytest.raises(KilnError) as info:  # Kiln's own bounds: past the ONNX checker, which refuses most
            compile_model(path, CompileOptions(target=load_target("host"), planner="greedy", check_model=False))
        cpu = time.process_time() - cpu
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cpu < 3.0, f"{cpu:.1f} s of CPU time"
    assert peak < PEAK_BYTES, f"{peak >> 20} MiB allocated"
    text = str(info.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    return text


def fill(shape) -> list:
    return [helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", 1, [1], [1.0])),
            helper.make_node("Add", ["x", "c"], ["y"])], {"s": np.array(shape, np.int64)}


@pytest.mark.parametrize("shape", [[10 ** 6, 10 ** 6], [2 ** 31], [1, 10 ** 12]])
def test_a_folded_node_claiming_a_huge_tensor_fails_before_allocating(shape, tmp_path):
    nodes, inits = fill(shape)
    err = error_of(onnx_model(nodes, inits), tmp_path)
    assert "node 'ConstantOfShape_0'" in err and "more than Kiln supports" in err


def test_folded_constants_are_bounded_by_the_file_size(tmp_path):
    nodes, inits = fill([1, 26_214_400])  # 100 MiB of float from a file of a few hundred bytes
    err = error_of(onnx_model(nodes, inits), tmp_path)
    assert "folding this constant node would compute 104857600 B" in err
    assert limits.fold_budget(10 ** 9) == 8 * 10 ** 9 and limits.fold_budget(10) == limits.MIN_FOLD_BUDGET


@pytest.mark.parametrize("node,inits", [
    (helper.make_node("Expand", ["one", "s"], ["c"]), {"one": np.ones(1, np.float32),
                                                      "s": np.array([10 ** 6, 10 ** 6], np.int64)}),
    (helper.make_node("Tile", ["one", "s"], ["c"]), {"one": np.ones((1, 1), np.float32),
                                                    "s": np.array([10 ** 6, 10 ** 6], np.int64)}),
    (helper.make_node("Range", ["a", "b", "d"], ["c"]), {"a": np.array(0, np.float32), "b": np.array(1e12, np.float32),
                                                         "d": np.array(1, np.float32)}),
])
def test_expand_tile_and_range_are_sized_before_they_run(node, inits, tmp_path):
    err = error_of(onnx_model([node, helper.make_node("Add", ["x", "c"], ["y"])], inits), tmp_path)
    what = "the broadcast" if node.op_type == "Expand" else "the folded result"
    assert f"{node.op_type}: {what} of shape" in err and "more than Kiln supports" in err


def test_a_graph_input_of_absurd_size_is_refused(tmp_path):
    err = error_of(onnx_model([helper.make_node("Relu", ["x"], ["y"])], inp=("x", [1, 10 ** 6, 10 ** 6])), tmp_path)
    assert "node 'x'" in err and "1000000000000 elements" in err


def test_nan_weights_are_refused_naming_the_tensor(tmp_path):
    err = error_of(onnx_model([helper.make_node("Add", ["x", "w"], ["y"])],
                              {"w": np.array([[1, np.nan, 2, 3]], np.float32)}), tmp_path)
    assert err.endswith("node 'w': constant holds NaN (at index [0, 1])")


def test_nan_computed_at_compile_time_names_the_node(tmp_path):
    bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")
    inits = {"s": np.ones(4, np.float32), "b": np.zeros(4, np.float32), "m": np.zeros(4, np.float32),
             "v": np.full(4, -5.0, np.float32)}  # negative variance: sqrt of a negative number
    err = error_of(onnx_model([bn], inits, inp=("x", [1, 4, 2, 2])), tmp_path)
    assert "node 'bn'" in err and "holds NaN" in err


def test_nan_attribute_names_the_node(tmp_path):
    err = error_of(onnx_model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=float("nan"), name="lr")]),
                   tmp_path)
    assert "node 'lr'" in err and "'alpha' is NaN" in err


def test_infinite_quantization_scale_is_refused(tmp_path):
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    err = error_of(onnx_model(nodes, {"s": np.array(np.inf, np.float32), "z": np.array(0, np.int8)}), tmp_path)
    assert "scale inf is not a positive finite number" in err


def test_names_that_are_not_utf8_are_refused(tmp_path):
    model = onnx_model([helper.make_node("Relu", ["x"], ["y"], name="r")])
    data = model.SerializeToString().replace(b"Relu", b"R\xffel", 1)
    err = error_of(data, tmp_path)
    assert "op type" in err and "is not valid UTF-8" in err


def test_duplicate_graph_input_is_refused(tmp_path):
    model = onnx_model([helper.make_node("Relu", ["x"], ["y"])])
    model.graph.input.append(model.graph.input[0])
    assert error_of(model, tmp_path).endswith("node 'x': graph input is listed twice")


def test_a_model_without_outputs_is_refused(tmp_path):
    model = onnx_model([helper.make_node("Relu", ["x"], ["y"])])
    del model.graph.output[:]
    assert "the model has no outputs" in error_of(model, tmp_path)


def test_a_required_input_left_empty_is_refused(tmp_path):
    err = error_of(onnx_model([helper.make_node("Add", ["x", ""], ["y"], name="add")]), tmp_path)
    assert err.endswith("node 'add': a required input is absent (empty input name)")


def test_deeply_nested_subgraphs_are_a_clean_error(tmp_path):
    import mutations
    import random

    data = mutations.onnx_nesting(random.Random(3), onnx_model([helper.make_node("Relu", ["x"], ["y"])])
                                  .SerializeToString())
    error_of(data, tmp_path)


def test_tflite_tensor_with_a_zero_dimension_is_refused():
    model = single_op_model("RELU", [TensorSpec((1, 0, 4), "float32", name="x")], [TensorSpec((1, 0, 4), "float32")])
    with pytest.raises(KilnError, match=r"node 'x': tensor has no elements \(shape \[1, 0, 4\]\)"):
        load_bytes(model)


def test_tflite_nan_constant_is_refused():
    w = const(np.array([[1.0, np.nan]], np.float32))
    model = single_op_model("ADD", [TensorSpec((1, 2), "float32"), w], [TensorSpec((1, 2), "float32")])
    with pytest.raises(KilnError, match=r"constant holds NaN \(at index \[0, 1\]\)"):
        load_bytes(model)


@pytest.mark.parametrize("scale,zp,axis,words", [
    ((0.1,), (200,), None, "zero point 200 is out of range for int8"),
    ((0.1, 0.2), (0, 0), 0, "2 per-channel scales, but dimension 0 of [3, 4] has 3 channels"),
    ((0.1, 0.2, 0.3), (0, 0, 0), 5, "per-channel quantization axis 5 is outside the tensor's rank 2"),
    ((float("nan"),), (0,), None, "scale nan is not a positive finite number"),
])
def test_quantization_checks(scale, zp, axis, words):
    from codegen.ir.types import Quant

    with pytest.raises(KilnError) as info:
        limits.check_quant(Quant(scale, zp, axis), "int8", (3, 4), "t")
    assert words in str(info.value) and "node 't'" in str(info.value)


def test_names_cannot_inject_code_into_the_generated_c(tmp_path):
    """Names reach C comments (the header's I/O list, the comment at each call): a name that
    closes the comment must not turn the rest of it into code."""
    from codegen.verify.host import run_generated

    evil = "x */ int injected; /* y"
    nodes = [helper.make_node("Relu", [evil], ["h */ int h; /*"], name="n */ #error z /*"),
             helper.make_node("Relu", ["h */ int h; /*"], ["y */"], name="m")]
    model = onnx_model(nodes, inp=(evil, [1, 4]), outputs=("y */",))
    path = tmp_path / "evil.onnx"
    onnx.save(model, path)
    build = compile_model(path, CompileOptions(target=load_target("host"), name="evil"))
    for text in (build.files["evil.h"], build.files["evil.c"]):
        code = "".join(part.split("*/", 1)[-1] for part in text.split("/*"))  # text outside comments
        assert "int injected;" not in code and "#error" not in code and "int h;" not in code
    x = np.array([[-1.0, 0.0, 2.0, -3.0]], np.float32)
    (out,) = run_generated(build.files, "evil", [{evil: x}], sanitize=True)
    np.testing.assert_array_equal(out["y */"], np.maximum(x, 0))


def test_control_characters_in_names_are_refused_or_escaped(tmp_path):
    model = onnx_model([helper.make_node("Relu", ["x"], ["y\n#error"])], outputs=("y\n#error",))
    assert "contains control characters" in error_of(model, tmp_path)
    tfl = single_op_model("RELU", [TensorSpec((1, 4), "float32", name="in\n#error")], [TensorSpec((1, 4), "float32")])
    g = load_bytes(tfl)
    assert g.inputs == ["in\\x0a#error"]  # escaped when read
    bad = single_op_model("RELU", [TensorSpec((1, 0), "float32", name="in\x01x")], [TensorSpec((1, 0), "float32")])
    with pytest.raises(KilnError) as info:
        load_bytes(bad)
    assert "\\x01" in str(info.value) and "\x01" not in str(info.value)


def test_special_files_are_refused_without_reading_them(tmp_path):
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)  # reading it would block for ever
    folder = tmp_path / "folder.tflite"
    folder.mkdir()
    for path, words in ((fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file"),
                        (folder, "a folder"), (tmp_path / "missing.onnx", "No such file")):
        proc = subprocess.run([sys.executable, "-m", "codegen", "build", str(path), "--target", "host",
                               "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
        (line,) = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and line.startswith(f"kiln: error: {path}: cannot read model: ") and words in line


def test_odd_but_valid_graph_io_compiles_and_runs(tmp_path):
    """Found by the fuzz campaign: an input no node reads (unused C parameter under -Werror)
    and a TFLite output that is a constant (never written by the run function)."""
    from codegen.verify.host import run_generated
    from tflite_models import ModelWriter

    model = onnx_model([helper.make_node("Relu", ["x"], ["y"])])
    model.graph.input.append(helper.make_tensor_value_info("unused", TensorProto.FLOAT, [1, 4]))
    path = tmp_path / "unused.onnx"
    onnx.save(model, path)
    build = compile_model(path, CompileOptions(target=load_target("host")))
    x = np.array([[-1.0, 2.0, -3.0, 4.0]], np.float32)
    (out,) = run_generated(build.files, build.name, [{"x": x, "unused": x}], sanitize=True)
    np.testing.assert_array_equal(out["y"], np.maximum(x, 0))

    w = ModelWriter()
    xi = w.tensor(TensorSpec((1, 4), "float32", name="x"))
    yi = w.tensor(TensorSpec((1, 4), "float32", name="y"))
    ci = w.tensor(TensorSpec((1, 4), "float32", name="c", data=np.arange(4, dtype=np.float32).reshape(1, 4)))
    w.op("RELU", [xi], [yi])
    path = tmp_path / "constout.tflite"
    path.write_bytes(w.build([xi], [yi, ci]))
    build = compile_model(path, CompileOptions(target=load_target("host")))
    (out,) = run_generated(build.files, build.name, [{"x": x}], sanitize=True)
    np.testing.assert_array_equal(out["c"], np.arange(4, dtype=np.float32).reshape(1, 4))


def test_dilation_that_overflows_int32_indexing_is_refused():
    """Found by the fuzz campaign: dilation 2^31 - 1 made the conv kernel overflow under UBSan."""
    w = const(np.ones((2, 3, 3, 2), np.float32))
    model = single_op_model("CONV_2D", [TensorSpec((1, 8, 8, 2), "float32"), w, None],
                            [TensorSpec((1, 8, 8, 2), "float32", name="conv")],
                            {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_h_factor": 2 ** 31 - 1})
    with pytest.raises(KilnError, match=r"node 'conv': Conv2D: stride 1, dilation 2147483647 .* beyond int32"):
        load_bytes(model)


def test_an_empty_tensor_with_absurd_dimensions_is_refused_before_folding(tmp_path):
    """Found by the fuzz campaign: ConstantOfShape([0, 10^12]) holds nothing, but folding an
    AveragePool over it made ONNX's reference implementation raise MemoryError."""
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", 1, [1], [1.0])),
             helper.make_node("AveragePool", ["c"], ["p"], kernel_shape=[3], auto_pad="SAME_UPPER"),
             helper.make_node("Relu", ["x"], ["y"])]
    err = error_of(onnx_model(nodes, {"s": np.array([0, 10 ** 12], np.int64)}), tmp_path)
    assert "node 'ConstantOfShape_0'" in err and "is empty but its other dimensions span" in err


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_scales_whose_ratio_overflows_fixed_point_are_refused(target, tmp_path):
    """Found by the fuzz campaign: an output scale of 1e-38 asks for a requantization shift of
    ~2^128, which the kernels would apply to int32 values (UBSan: shift exponent too large),
    also in the Cortex-M DSP kernels that pack the shift into their own records."""
    w = const(np.ones((4, 1, 1, 4), np.int8), "int8", scale=[0.5] * 4, zero_point=[0] * 4)
    model = single_op_model("CONV_2D", [TensorSpec((1, 4, 4, 4), "int8", scale=1.0, zero_point=0), w, None],
                            [TensorSpec((1, 4, 4, 4), "int8", scale=1e-38, zero_point=0, name="conv")],
                            {"padding": "VALID", "stride_w": 1, "stride_h": 1})
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    with pytest.raises(KilnError, match=r"node 'conv': .*rescale factor .* beyond"):
        compile_model(path, CompileOptions(target=load_target(target), planner="greedy", check_model=False))
