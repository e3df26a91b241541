"""The installable package: the sdist and the wheel built from it carry everything Kiln reads at
run time, and a wheel installed into a new virtual environment outside the source tree builds,
verifies and profiles a model for cortex-m4 from a third folder.

Offline and quick: the build runs without isolation (setuptools of the test environment), and
the new environment reaches the dependencies already installed here through a .pth file
instead of downloading them again; the wheel itself is installed with --no-deps.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from importlib.resources import files
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "README.md", "codegen", "templates", "runtime_c", "boards")
DATA_FOLDERS = ("templates", "runtime_c", "boards")


def run(cmd: list, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


def build_backend(step: str, source: Path, out: Path) -> Path:
    """Run setuptools' PEP 517 hook `step` in `source`; the path of the file it wrote to `out`."""
    code = f"from setuptools import build_meta; print(build_meta.{step}({str(out)!r}))"
    name = run([sys.executable, "-c", code], cwd=source).stdout.strip().splitlines()[-1]
    return out / name


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel): the sdist from a copy of the checkout, the wheel from the unpacked sdist."""
    base = tmp_path_factory.mktemp("package")
    copy = base / "checkout"
    copy.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, copy / name)
    dist = base / "dist"
    sdist = build_backend("build_sdist", copy, dist)
    with tarfile.open(sdist) as tar:
        tar.extractall(base / "unpacked", filter="data")
    (unpacked,) = (base / "unpacked").iterdir()
    return sdist, build_backend("build_wheel", unpacked, dist)


def test_the_wheel_carries_every_data_file(packages):
    _, wheel = packages
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"codegen/{path.relative_to(ROOT).as_posix()}"
                for top in DATA_FOLDERS for path in (ROOT / top).rglob("*") if path.is_file()}
    expected |= {"codegen/fusion/kernel_costs.toml", "codegen/verify/plugin/insn_count.c"}
    assert expected <= names, sorted(expected - names)[:10]
    assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", "bench/", "examples/"))]


def tiny_onnx(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_installed_wheel_builds_verifies_and_profiles_from_another_folder(packages, tmp_path):
    if shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None:
        pytest.skip("the Arm toolchain or qemu-system-arm is missing (`make setup` installs them)")
    _, wheel = packages
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel],
        cwd=tmp_path)
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=tmp_path).stdout.strip())
    # The dependencies installed here, after the new environment's own packages on sys.path.
    (site / "kiln-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path / "work"
    work.mkdir()
    where = run([python, "-c", "import codegen.resources as r; print(r.TEMPLATES); print(r.BOARDS); "
                                "print(r.install_command('verify'))"], cwd=work)
    templates, boards, advice = where.stdout.splitlines()
    assert Path(templates).is_relative_to(site) and Path(boards).is_relative_to(site), where.stdout
    assert advice == f"{python} -m pip install 'kiln-mcu[verify]'"

    kiln = venv / "bin" / "kiln"
    sine = work / "sine_float.tflite"  # TFLite Micro's trained hello-world model (a float TFLite build)
    shutil.copy(files("tflite_micro") / "python" / "tflite_micro" / "sine_float.tflite", sine)
    model = tiny_onnx(work / "tiny.onnx")  # an ONNX build reads the fusion cost tables
    for path in (sine, model):
        built = run([kiln, "build", path.name, "--target", "cortex-m4", "-o", f"gen_{path.stem}"], cwd=work)
        assert "wrote" in built.stdout, built.stdout
        verified = run([kiln, "verify", path.name, "--target", "cortex-m4", "--samples", "3"], cwd=work)
        assert "kiln verify: ok" in verified.stdout, verified.stdout
    profiled = run([kiln, "profile", sine.name, "--target", "cortex-m4"], cwd=work)
    assert "total (call to return of the model)" in profiled.stdout, profiled.stdout
    project = run([kiln, "build", sine.name, "--board", "mps2-an386", "-o", "fw"], cwd=work)
    assert (work / "fw" / "Makefile").is_file(), project.stdout


def test_advice_from_a_checkout_names_its_editable_install():
    from codegen.resources import INSTALLED_WHEEL, install_command

    assert not INSTALLED_WHEEL
    assert install_command("verify") == f"{sys.executable} -m pip install -e '{ROOT}[verify]'"
