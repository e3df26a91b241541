"""The benchmark's environment: the peer tools' virtual environment, tool versions, the machine.

The peers that need TensorFlow (tf2onnx) or that Kiln does not depend on (emx-onnx-cgen) live
in bench/.venv-peers, created from bench/requirements.txt (versions: constraints.txt) with the
ordinary pip client the first time the benchmark needs it (and again when either changes).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata

from bench.config import BENCH, PEERS_VENV, ROOT

REQUIREMENTS = BENCH / "requirements.txt"
CONSTRAINTS = ROOT / "constraints.txt"  # the exact versions, shared with Kiln's .venv
STAMP = PEERS_VENV / ".bench-requirements.sha256"
PEER_PACKAGES = ("tensorflow-cpu", "tf2onnx", "emx-onnx-cgen", "onnx", "protobuf")
MAIN_PACKAGES = ("numpy", "onnx", "onnxruntime", "tflite-micro", "ai-edge-litert", "ortools")


class EnvError(RuntimeError):
    pass


def peer_bin(name: str) -> str:
    return str(PEERS_VENV / "bin" / name)


def ensure_peer_env(log=print) -> None:
    """Create or update bench/.venv-peers from requirements.txt with the versions of
    constraints.txt (pip, ordinary client)."""
    want = hashlib.sha256(REQUIREMENTS.read_bytes() + CONSTRAINTS.read_bytes()).hexdigest()
    if STAMP.is_file() and STAMP.read_text().strip() == want:
        return
    log(f"bench: installing the peer tools into {PEERS_VENV.relative_to(ROOT)} (bench/requirements.txt)")
    if not (PEERS_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    proc = subprocess.run([peer_bin("python"), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS),
                           "-c", str(CONSTRAINTS)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise EnvError(f"pip install -r bench/requirements.txt failed: {proc.stderr.strip()[-600:]}")
    STAMP.write_text(want + "\n")


def _first_line(cmd: list[str]) -> str:
    if shutil.which(cmd[0]) is None:
        return "not installed"
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "not runnable"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def peer_versions() -> dict[str, str]:
    py = peer_bin("python")
    if not os.path.exists(py):
        return {p: "not installed" for p in PEER_PACKAGES}
    code = ("import json, importlib.metadata as m\n"
            "def v(p):\n"
            "    try: return m.version(p)\n"
            "    except m.PackageNotFoundError: return 'not installed'\n"
            f"print(json.dumps({{p: v(p) for p in {list(PEER_PACKAGES)!r}}}))")
    out = subprocess.run([py, "-c", code], capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return {p: "unknown" for p in PEER_PACKAGES}


def cpu_model() -> str:
    out = _first_line(["sh", "-c", "lscpu | grep 'Model name'"])
    return re.sub(r"^Model name:\s*", "", out) or platform.processor() or "unknown"


def kiln_revision() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=12"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() or "unknown"


def environment() -> dict[str, str]:
    """Versions and machine, as printed in RESULTS.md."""
    from codegen import __version__

    env = {
        "machine": f"{cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "kiln": f"{__version__} (git {kiln_revision()})",
        "gcc": _first_line(["gcc", "--version"]),
        "arm-none-eabi-gcc": _first_line(["arm-none-eabi-gcc", "--version"]),
        "qemu-system-arm": _first_line(["qemu-system-arm", "--version"]),
        "valgrind": _first_line(["valgrind", "--version"]),
    }
    env.update({p: _version(p) for p in MAIN_PACKAGES})
    env.update({f"{p} (bench/.venv-peers)": v for p, v in peer_versions().items()})
    return env
