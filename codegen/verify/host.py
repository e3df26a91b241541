"""Build the generated C with the host's gcc and run it on samples (also under sanitizers)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from codegen.emit.render import model_sources, render_harness, write_generated
from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.verify.toolchain import SANITIZE_FLAGS, compile_c

RUN_TIMEOUT_S = 600


def _io(manifest: dict) -> tuple[list[dict], list[dict]]:
    return manifest["inputs"], manifest["outputs"]


def write_with_harness(files: dict[str, str], name: str, work: Path) -> Path:
    """Write the generated files and the test harness (render_harness) into `work`; the
    harness source's path. The host and qemu-aarch64 builds share it."""
    for fname, content in files.items():
        write_generated(work / fname, content)
    harness = work / "harness_main.c"
    harness.write_text(render_harness(files, name))
    return harness


def build_host(files: dict[str, str], name: str, work: Path, *, cflags: tuple[str, ...] = ("-O2",),
               sanitize: bool = False, cc: str = "gcc") -> Path:
    """Write the generated files and a harness into `work`, compile, return the executable."""
    harness = write_with_harness(files, name, work)
    flags = list(cflags) + (list(SANITIZE_FLAGS) if sanitize else [])
    exe = work / f"{name}_host"
    compile_c(cc, [*(work / src for src in model_sources(files, name)), harness], exe, flags, ["-lm"], work)
    return exe


def run_samples(exe: Path, manifest: dict, samples: list[dict[str, np.ndarray]], work: Path,
                launcher: tuple[str, ...] = ()) -> list[dict[str, np.ndarray]]:
    """Run the harness on every sample at once (under `launcher`, e.g. qemu-aarch64, when
    given); outputs by graph output name."""
    inputs, outputs = _io(manifest)
    with open(work / "inputs.bin", "wb") as f:
        for sample in samples:
            for io in inputs:
                arr = np.asarray(sample[io["name"]]).astype(np_dtype(io["dtype"]))
                if arr.size != int(np.prod(io["shape"], dtype=np.int64)):
                    raise KilnError(f"input '{io['name']}' has {arr.size} elements, the model takes "
                                    f"shape {io['shape']}")
                f.write(np.ascontiguousarray(arr).tobytes())
    proc = subprocess.run([*launcher, str(exe), "inputs.bin", "outputs.bin", str(len(samples))], cwd=work,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"generated code failed (exit {proc.returncode}): {proc.stderr[-4000:]}")
    raw = (work / "outputs.bin").read_bytes()
    results, pos = [], 0
    for _ in samples:
        out = {}
        for io in outputs:
            dt = np_dtype(io["dtype"])
            n = int(np.prod(io["shape"], dtype=np.int64))
            out[io["name"]] = np.frombuffer(raw, dt, n, pos).copy()
            pos += n * dt.itemsize
        for io in outputs:  # the actual lengths of the bounded outputs follow them
            shape = list(io["shape"])
            if "length_axis" in io:
                shape[io["length_axis"]] = int(np.frombuffer(raw, np.int32, 1, pos)[0])
                pos += 4
            out[io["name"]] = actual_tensor(out[io["name"]], shape, io)
        results.append(out)
    return results


def actual_tensor(flat: np.ndarray, shape: list[int], io: dict) -> np.ndarray:
    """An output in its actual shape: a bounded one is written compactly at the start of its
    buffer (codegen/ops/bounded.py)."""
    n = int(np.prod(shape, dtype=np.int64))
    if "length_axis" in io and not 0 <= shape[io["length_axis"]] <= io["max_length"]:
        raise RuntimeError(f"generated code reported length {shape} for output '{io['name']}', "
                           f"beyond its bound {io['shape']}")
    return flat[:n].reshape(shape)


def run_generated(files: dict[str, str], name: str, samples: list[dict[str, np.ndarray]], *,
                  sanitize: bool = False, cflags: tuple[str, ...] = ("-O2",)) -> list[dict[str, np.ndarray]]:
    """Compile generated files for the host and run them on `samples` (by graph input name)."""
    manifest = json.loads(files[f"{name}.manifest.json"])
    with tempfile.TemporaryDirectory(prefix="kiln-host-") as tmp:
        work = Path(tmp)
        exe = build_host(files, name, work, cflags=cflags, sanitize=sanitize)
        return run_samples(exe, manifest, samples, work)
