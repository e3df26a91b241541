"""Generated code built into firmware and run in qemu-system-arm equals the host build bit for
bit; the firmware's exit status reaches QEMU's exit code; `kiln verify` / `kiln run` work on a
Cortex-M target like on the host."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from codegen.cli import main
from codegen.targets import load_target
from codegen.verify import host, qemu
from codegen.verify.firmware import build_firmware
from codegen.verify.samples import random_samples
from cortex_m_testing import ALL_TARGETS, MAIN_TARGETS, build, float_graph, int8_graph
from helpers import check_kiln_verify_and_run, check_mlperf_model

pytestmark = pytest.mark.usefixtures("cortex_m")


@pytest.mark.parametrize("graph", [float_graph, int8_graph], ids=["float32", "int8"])
@pytest.mark.parametrize("target", ALL_TARGETS)
def test_small_graph_equals_host_bit_for_bit(graph, target):
    g = graph()
    ref_build = build(g, "host")
    samples = random_samples(ref_build.manifest["inputs"], 4, seed=11)
    want = host.run_generated(ref_build.files, "t", samples)
    res = build(g, target)
    got = qemu.run_generated(res.files, "t", samples, load_target(target))
    assert len(got) == len(want)
    for g_out, w_out in zip(got, want):
        for name, w in w_out.items():
            assert g_out[name].dtype == w.dtype and g_out[name].shape == w.shape
            np.testing.assert_array_equal(g_out[name].view(np.uint8), w.view(np.uint8), err_msg=name)


def _firmware(tmp_path, edit=None):
    res = build(int8_graph(), "cortex-m4")
    files = dict(res.files)
    if edit is not None:
        files["t.c"] = edit(files["t.c"])
    samples = random_samples(res.manifest["inputs"], 2, seed=3)
    return build_firmware(files, "t", load_target("cortex-m4"), samples, tmp_path)


@pytest.mark.parametrize("edit,status", [
    (None, 0),
    (lambda c: c.replace("return T_OK;", "return 5;"), 3),  # the model reports an error
    (lambda c: c.replace("return T_OK;", "__builtin_trap();\n    return T_OK;"), 4),  # a fault
], ids=["ok", "model-error", "fault"])
def test_exit_status_reaches_qemu_exit_code(tmp_path, edit, status):
    fw = _firmware(tmp_path, edit)
    proc = subprocess.run(qemu.qemu_command(fw.board, fw.elf), cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == status, proc.stderr
    if status == 0:
        assert (tmp_path / "outputs.bin").stat().st_size == 2 * 128
    else:
        with pytest.raises(qemu.FirmwareError, match=f"exit status {status}"):
            qemu.run_firmware(fw, tmp_path, timeout=60)


def test_fault_message_names_the_exception(tmp_path):
    fw = _firmware(tmp_path, lambda c: c.replace("return T_OK;", "__builtin_trap();\n    return T_OK;"))
    with pytest.raises(qemu.FirmwareError, match="unexpected exception 3"):  # HardFault
        qemu.run_firmware(fw, tmp_path, timeout=60)


def test_stack_high_water_is_reported(tmp_path):
    fw = _firmware(tmp_path)
    run = qemu.run_firmware(fw, tmp_path, timeout=60)
    assert run.stack_bytes is not None and 0 < run.stack_bytes < fw.board.stack_bytes
    assert fw.model_sizes.rodata > 0 and fw.model_sizes.bss > 0
    assert fw.firmware_sizes.flash >= fw.model_sizes.flash


def test_samples_stay_out_of_the_model_budget(tmp_path):
    fw = _firmware(tmp_path)
    nm = subprocess.run(["arm-none-eabi-nm", str(fw.elf)], capture_output=True, text=True).stdout
    addr = int(next(line.split()[0] for line in nm.splitlines() if line.endswith(" kiln_samples")), 16)
    assert fw.board.ext is not None and fw.board.ext.origin <= addr < fw.board.ext.origin + fw.board.ext.length


def test_kiln_verify_and_run_on_cortex_m4(models_dir, tmp_path, capsys):
    check_kiln_verify_and_run(models_dir, tmp_path, capsys, "cortex-m4", 3)


def test_sanitize_is_refused_on_cortex_m(models_dir, capsys):
    assert main(["verify", str(models_dir / "ad01_int8.tflite"), "--target", "cortex-m4", "--sanitize"]) == 2
    assert "host target only" in capsys.readouterr().err


MLPERF = ["kws_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
          "str_ww_ref_model.tflite", "vww_96_float.tflite", "pretrainedResnet.tflite", "ad01_fp32.tflite"]


@pytest.mark.slow
@pytest.mark.parametrize("target", MAIN_TARGETS)
@pytest.mark.parametrize("model", MLPERF)
def test_mlperf_model_on_cortex_m(models_dir, model, target):
    check_mlperf_model(models_dir, model, target)


def test_samples_beyond_the_sample_memory_run_in_several_images(monkeypatch):
    import dataclasses

    g = int8_graph()
    ref = build(g, "host")
    samples = random_samples(ref.manifest["inputs"], 5, seed=2)
    res = build(g, "cortex-m4")
    board = qemu.board_of(load_target("cortex-m4"))
    per = qemu.harness_context(res.manifest, board, 1).sample_bytes
    small = dataclasses.replace(board, ext=dataclasses.replace(board.ext, length=2 * per))
    monkeypatch.setattr(qemu, "board_of", lambda target: small)
    assert qemu.samples_per_firmware(res.manifest, small, 5) == 2  # three images: 2 + 2 + 1
    got = qemu.run_generated(res.files, "t", samples, load_target("cortex-m4"))
    want = host.run_generated(ref.files, "t", samples)
    assert len(got) == 5
    for g_out, w_out in zip(got, want):
        np.testing.assert_array_equal(g_out[g.outputs[0]], w_out[g.outputs[0]])


def test_a_model_too_big_for_the_board_is_one_clear_error():
    from codegen.errors import KilnError
    from codegen.ir import GraphBuilder

    b = GraphBuilder("big")
    x = b.input("x", "float32", (1, 4096))
    y = b.node("Add", [x, x])
    g = b.output(b.node("Add", [y, y])).build()  # a 16 KiB intermediate: the micro:bit has 16 KiB of RAM
    res = build(g, "cortex-m0plus")
    with pytest.raises(KilnError, match="does not fit board 'microbit': RAM by"):
        qemu.run_generated(res.files, "t", random_samples(res.manifest["inputs"], 1, 0), load_target("cortex-m0plus"))
