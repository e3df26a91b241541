"""The progress line of the long steps: on a terminal only, one line rewritten in place and
erased at the end; nothing on a pipe or with --quiet; the CP-SAT search shows its best arena and
its bound without changing the plan it finds."""

from __future__ import annotations

import io
import subprocess
import sys

import onnx
import pytest
from onnx import TensorProto, helper

from codegen import progress
from codegen.memory import Buffer, plan_memory


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal():
    screen = FakeTerminal()
    progress.configure(quiet=False, stream=screen)
    yield screen
    progress.configure(quiet=True)


def test_a_step_is_one_line_rewritten_in_place_and_erased(terminal):
    with progress.step("importing big.onnx"):
        progress.update("3 of 9")
        with progress.step("inner"):
            pass
    text = terminal.getvalue()
    assert "\n" not in text
    assert "\rkiln: importing big.onnx (0 s)\x1b[K" in text and "kiln: importing big.onnx: 3 of 9 (0 s)" in text
    assert "kiln: inner (0 s)" in text
    assert text.endswith("\r\x1b[K\r")  # erased: what is printed next starts on a clean line


def test_nothing_on_a_pipe_or_when_quiet():
    for quiet, stream in ((False, io.StringIO()), (True, FakeTerminal())):
        progress.configure(quiet=quiet, stream=stream)
        with progress.step("building"):
            progress.update("detail")
        assert stream.getvalue() == "" and not progress.enabled()


def test_the_cli_prints_no_progress_when_stderr_is_not_a_terminal(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), model)
    proc = subprocess.run([sys.executable, "-m", "codegen", "build", str(model), "--target", "host",
                           "-o", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "" and "\r" not in proc.stdout, proc.stdout + proc.stderr


def test_cpsat_shows_its_best_arena_and_bound_and_finds_the_same_plan(terminal):
    bufs = [Buffer("b0", 64, 3, 4), Buffer("b1", 112, 2, 2), Buffer("b2", 80, 1, 3), Buffer("b3", 64, 3, 4)]
    shown = plan_memory(bufs, "cpsat", time_limit=5.0)
    text = terminal.getvalue()
    assert "kiln: placing the arena (CP-SAT, at most 5 s): best " in text and ", bound " in text
    progress.configure(quiet=True)
    assert plan_memory(bufs, "cpsat", time_limit=5.0).offsets == shown.offsets
