"""`kiln build --board`: the project builds with its own Makefile, `make run` prints the model's
result in QEMU, `make -n flash` runs each board's flasher, `make size` matches the manifest, and a
firmware over the board's budget fails before anything is written."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from codegen.cli import main as kiln
from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.project import missing_toolchain, project_files
from codegen.targets import load_target
from codegen.targets.boards import available_boards, board_target, load_board
from codegen.verify.reference import run_reference

TINY = Path(__file__).resolve().parent.parent / "golden" / "models" / "tiny_int8.tflite"
STRICT = "-std=c99 -pedantic -Wall -Wextra -Werror -Wconversion -Wdouble-promotion -Wshadow"
# What `make -n flash` must run on each board (USER=kiln), written out rather than read from the board files.
FLASH_COMMANDS = {
    "microbit": "cp build/tiny_int8.hex /media/kiln/MICROBIT/ && sync",
    "mps2-an385": "cp build/tiny_int8.elf /media/kiln/V2M-MPS2/SOFTWARE/KILN.AXF && sync",
    "mps2-an386": "cp build/tiny_int8.elf /media/kiln/V2M-MPS2/SOFTWARE/KILN.AXF && sync",
    "mps2-an500": "cp build/tiny_int8.elf /media/kiln/V2M-MPS2/SOFTWARE/KILN.AXF && sync",
    "mps2-an505": "cp build/tiny_int8.elf /media/kiln/V2M-MPS2/SOFTWARE/KILN.AXF && sync",
    "mps3-an547": "cp build/tiny_int8.elf /media/kiln/V2M-MPS3/SOFTWARE/KILN.AXF && sync",
    "nucleo-l4r5zi": 'openocd -f interface/stlink.cfg -f target/stm32l4x.cfg -c "program build/tiny_int8.elf '
                     'verify reset exit"',
    "stm32f746g-disco": 'openocd -f board/stm32f7discovery.cfg -c "program build/tiny_int8.elf verify reset exit"',
    "nrf52840-dk": "pyocd flash --target nrf52840 build/tiny_int8.hex",
    "netduinoplus2": "dfu-util -a 0 -s 0x08000000:leave -D build/tiny_int8.bin",
    "lm3s6965evb": 'openocd -f board/ek-lm3s6965.cfg -c "program build/tiny_int8.elf verify reset exit"',
    "rpi-pico": "picotool load -x build/tiny_int8.elf",
    "rpi4": "scp build/tiny_int8 pi@raspberrypi.local:./",
}


def make(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-C", str(project), *args], capture_output=True, text=True,
                          env={**os.environ, "USER": "kiln"}, stdin=subprocess.DEVNULL)


def needs_toolchain(board: str) -> None:
    reason = missing_toolchain(load_target(load_board(board).target))
    if reason:
        pytest.skip(reason)


def needs_mps2_an386_in_qemu() -> None:
    """`make run` on the mps2-an386 board: its toolchain and qemu-system-arm."""
    needs_toolchain("mps2-an386")
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm not found")


def build_project(tmp_path: Path, board: str, *extra: str) -> tuple[Path, dict]:
    out = tmp_path / board
    assert kiln(["build", str(TINY), "--board", board, "-o", str(out), *extra]) == 0
    return out, json.loads((out / "tiny_int8.manifest.json").read_text())


@functools.lru_cache(maxsize=None)
def _model_build(board: str):
    b = load_board(board)
    return compile_model(TINY, CompileOptions(board_target(load_target(b.target), b)))


def test_every_board_has_an_expected_flash_command():
    assert set(FLASH_COMMANDS) == set(available_boards())


@pytest.mark.skipif(shutil.which("make") is None, reason="make not found")
@pytest.mark.parametrize("board", sorted(FLASH_COMMANDS))
def test_make_n_flash_prints_the_boards_flasher(board, tmp_path):
    build = _model_build(board)
    for name, text in {**build.files, **project_files(build, load_board(board), build.lowered.target)}.items():
        (tmp_path / name).write_text(text)
    proc = make(tmp_path, "-n", "flash")
    assert proc.returncode == 0, proc.stderr
    assert FLASH_COMMANDS[board] in proc.stdout.splitlines()


@pytest.mark.parametrize("board", ["nucleo-l4r5zi", "rpi4"])
def test_project_builds_with_its_makefile_and_size_matches_the_manifest(board, tmp_path):
    needs_toolchain(board)
    out, manifest = build_project(tmp_path, board)
    fw = manifest["firmware"]
    assert fw["measured"] and fw["board"] == board and fw["opt_level"] == ("-O3" if board == "rpi4" else "-O2")
    assert fw["flash_bytes"] == fw["text"] + fw["rodata"] + fw["data"]
    assert fw["ram_bytes"] == fw["data"] + fw["bss"] + fw["stack"]
    assert 0 < fw["model"]["rodata"] + fw["model"]["text"] <= fw["flash_bytes"] <= fw["flash_budget_bytes"]
    assert fw["flash_budget_bytes"] == load_board(board).flash_budget
    proc = make(out, "-s", "size")
    assert proc.returncode == 0, proc.stderr
    assert (f"kiln-size text={fw['text']} rodata={fw['rodata']} data={fw['data']} bss={fw['bss']} "
            f"stack={fw['stack']}") in proc.stdout
    assert f"of {fw['flash_budget_bytes']:>10} B" in proc.stdout
    assert (out / "build" / ("tiny_int8" if board == "rpi4" else "tiny_int8.elf")).is_file()


def test_make_run_on_mps2_an386_prints_the_reference_result_and_checks_the_input_size(tmp_path):
    needs_mps2_an386_in_qemu()
    out, manifest = build_project(tmp_path, "mps2-an386")
    (spec,) = manifest["inputs"]
    x = np.random.default_rng(3).integers(-128, 128, spec["shape"], dtype=np.int8)
    (tmp_path / "input.bin").write_bytes(x.tobytes())
    proc = make(out, "-s", "run", f"INPUT={tmp_path / 'input.bin'}", f"CFLAGS={STRICT}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = re.search(r"tiny_int8: output 0 largest at (\d+), value (-?\d+)", proc.stdout + proc.stderr)
    assert m is not None, proc.stdout + proc.stderr
    (ref,) = run_reference(TINY, [{spec["name"]: x}])
    expected = np.asarray(list(ref.values())[0]).ravel()
    assert (int(m.group(1)), int(m.group(2))) == (int(np.argmax(expected)), int(expected.max()))
    # an input file of the wrong size is refused by the firmware, with both sizes
    (tmp_path / "short.bin").write_bytes(b"\x01\x02\x03")
    proc = make(out, "-s", "run", f"INPUT={tmp_path / 'short.bin'}")
    assert proc.returncode != 0 and "input file: 3 bytes, the model takes 72" in proc.stdout + proc.stderr


def _big_arena_onnx(path: Path) -> Path:
    """Two live 16 KiB float tensors: an arena of 32 KiB, twice the micro:bit's RAM."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4096])
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Exp", ["a"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_over_budget_build_fails_with_need_and_budget_and_writes_nothing(tmp_path, capsys):
    model = _big_arena_onnx(tmp_path / "big.onnx")
    out = tmp_path / "out"
    assert kiln(["build", str(model), "--board", "microbit", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"needs \d+ B of RAM.*budget is 16384 B: \d+ B over", err), err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["big.onnx"]


def test_opt_level_changes_the_build_files_and_the_code_size(tmp_path):
    needs_toolchain("mps2-an386")
    _, o2 = build_project(tmp_path / "o2", "mps2-an386")
    out, os_ = build_project(tmp_path / "os", "mps2-an386", "--opt-level", "Os")
    assert "OPT ?= -Os" in (out / "Makefile").read_text()
    assert re.search(r"TARGET_CFLAGS := .*-mcpu=cortex-m4 .*-Os\n", (out / "kiln.mk").read_text())
    assert os_["firmware"]["opt_level"] == "-Os"
    assert os_["firmware"]["model"]["text"] < o2["firmware"]["model"]["text"]


def test_board_and_target_must_agree(tmp_path, capsys):
    assert kiln(["build", str(TINY), "--board", "rpi4", "--target", "cortex-m4", "-o", str(tmp_path / "o")]) == 2
    assert "target 'cortex-m4' does not run on board 'rpi4'" in capsys.readouterr().err
    # Armv7E-M code on an Armv6-M core: refused before anything is compiled or written
    assert kiln(["build", str(TINY), "--board", "rpi-pico", "--target", "cortex-m4", "-o", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "target 'cortex-m4' does not run on board 'rpi-pico'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "p").exists()
    assert kiln(["build", str(TINY), "-o", str(tmp_path / "o")]) == 2
    assert "--target is required (or --board" in capsys.readouterr().err


def test_kiln_cmake_adds_the_model_to_a_cmake_project(tmp_path):
    out = tmp_path / "gen"
    assert kiln(["build", str(TINY), "--target", "host", "-o", str(out)]) == 0
    text = (out / "kiln.cmake").read_text()
    assert "add_library(kiln_tiny_int8 STATIC" in text and '"${KILN_TINY_INT8_DIR}/tiny_int8_weights.c"' in text
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found: content checked only")
    app = tmp_path / "app"
    app.mkdir()
    (app / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.13)\nproject(app C)\n"
                                        f"include({out}/kiln.cmake)\nadd_executable(app main.c)\n"
                                        "target_link_libraries(app PRIVATE kiln_tiny_int8)\n")
    (app / "main.c").write_text(
        '#include "tiny_int8.h"\nstatic int8_t x[TINY_INT8_INPUT_0_ELEMENTS];\n'
        "static int8_t y[TINY_INT8_OUTPUT_0_ELEMENTS];\nint main(void) { return tiny_int8_run(x, y); }\n")
    for cmd in (["cmake", "-S", str(app), "-B", str(app / "b")], ["cmake", "--build", str(app / "b")],
                [str(app / "b" / "app")]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_rp2040_places_a_given_boot2_before_the_vector_table(tmp_path):
    needs_toolchain("rpi-pico")
    out, _ = build_project(tmp_path, "rpi-pico")
    # A stand-in of the right size and section: Kiln provides no boot2 (see boards/rpi-pico.toml).
    (tmp_path / "boot2.S").write_text('    .section .boot2, "ax"\n    .space 256, 0\n')
    without = make(out, "-s")
    assert without.returncode != 0 and "no BOOT2 given: make BOOT2=path/to/bs2_default_padded_checksummed.S" in without.stderr
    assert make(out, "-s", f"BOOT2={tmp_path / 'boot2.S'}").returncode == 0
    headers = subprocess.run(["arm-none-eabi-objdump", "-h", str(out / "build" / "tiny_int8.elf")],
                             capture_output=True, text=True).stdout
    assert re.search(r"\.boot2\s+00000100\s+10000000", headers)
    assert re.search(r"\.vectors\s+\w+\s+10000100", headers)


def test_without_the_toolchain_the_models_own_figures_are_checked_and_recorded(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("codegen.project.missing_toolchain", lambda target: "'arm-none-eabi-gcc' not found")
    out, manifest = build_project(tmp_path, "nucleo-l4r5zi")
    fw = manifest["firmware"]
    assert fw["measured"] is False and "'arm-none-eabi-gcc' not found" in fw["not_measured_because"]
    # the main's input and output buffers count with the arena (--ram-limit's RAM, codegen/budget.py)
    assert fw["ram_bytes"] == manifest["ram"]["total_bytes"] + load_board("nucleo-l4r5zi").stack_bytes
    assert fw["flash_bytes"] > manifest["weights_bytes"] and (out / "Makefile").is_file()
    model = _big_arena_onnx(tmp_path / "big.onnx")
    assert kiln(["build", str(model), "--board", "microbit", "-o", str(tmp_path / "big")]) == 2
    err = capsys.readouterr().err
    assert re.search(r"needs \d+ B of RAM \(arena \d+ B \+ inputs and outputs \d+ B\), budget is 14336 B "
                     r"\(board microbit\)", err), err
    assert not (tmp_path / "big").exists()


def test_a_weights_blob_project_loads_the_blob_and_counts_it_apart(tmp_path):
    needs_mps2_an386_in_qemu()
    out, manifest = build_project(tmp_path, "mps2-an386", "--weights", "blob")
    fw = manifest["firmware"]
    assert fw["blob_linked_bytes"] == manifest["weights"]["blob_bytes"] > 0
    assert fw["flash_bytes"] == fw["code_image_bytes"] + fw["blob_linked_bytes"]
    const_out, _ = build_project(tmp_path / "const", "mps2-an386")
    runs = [make(project, "-s", "run", f"CFLAGS={STRICT}") for project in (out, const_out)]
    assert all(r.returncode == 0 for r in runs), [r.stdout + r.stderr for r in runs]
    printed = [re.search(r"tiny_int8: output 0 .*", r.stdout + r.stderr).group(0) for r in runs]
    assert printed[0] == printed[1]


def test_a_project_with_an_empty_input_and_output_runs(tmp_path):
    """An input and an output with no elements: no zero-length arrays in main.c, the input file
    holds the other input's bytes only, and the empty output is reported as such."""
    needs_mps2_an386_in_qemu()
    nodes = [helper.make_node("Concat", ["x", "e"], ["y"], axis=0),
             helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["z"])]
    inits = [onnx.numpy_helper.from_array(np.array([v], np.int64), k) for k, v in (("starts", 5), ("ends", 9), ("axes", 0))]
    graph = helper.make_graph(nodes, "empty", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                                helper.make_tensor_value_info("e", TensorProto.FLOAT, [0, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [0, 3])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "empty_io.onnx")
    out = tmp_path / "project"
    assert kiln(["build", str(tmp_path / "empty_io.onnx"), "--board", "mps2-an386", "-o", str(out)]) == 0
    np.arange(6, dtype=np.float32)[::-1].tofile(tmp_path / "x.bin")
    proc = make(out, "run", f"INPUT={tmp_path / 'x.bin'}")
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout + proc.stderr  # the semihosting console may land on either
    assert "empty_io: output 0 largest at 0" in printed and "empty_io: output 1 has no elements" in printed
