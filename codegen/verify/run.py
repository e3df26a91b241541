"""`kiln verify` and `kiln run`: build for a target, run, compare with the reference runtime."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codegen import progress
from codegen.compiler import BuildResult, compile_model
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.verify import host
from codegen.verify.npy_file import read_npy
from codegen.verify.compare import OutputReport, compare_output, merge_reports
from codegen.verify.reference import default_tolerance_lsb, output_lsbs, reference_name, run_reference
from codegen.verify.metrics import OutputMetrics, output_metrics
from codegen.verify.samples import random_samples
from codegen.verify.user_samples import load_user_samples


def run_on_target(build: BuildResult, options: CompileOptions, samples: list[dict[str, np.ndarray]],
                  *, sanitize: bool = False) -> list[dict[str, np.ndarray]]:
    """Build the generated code for the target and run it on the samples."""
    target = options.target
    if sanitize and target.runner in ("qemu-system", "qemu-user"):
        raise KilnError("--sanitize is available on the host target only")
    if target.runner == "qemu-system":
        from codegen.verify import qemu

        return qemu.run_generated(build.files, build.name, samples, target)
    if target.runner == "qemu-user":
        from codegen.verify import qemu_user

        with progress.step(f"building and running {len(samples)} samples under qemu-aarch64"):
            return qemu_user.run_generated(build.files, build.name, samples, target)
    if target.runner != "host":
        raise KilnError(f"running on target '{target.name}' ({target.runner}) is not available yet")
    with tempfile.TemporaryDirectory(prefix="kiln-run-") as tmp:
        work = Path(tmp)
        with progress.step(f"building for the host ({target.cc})"):
            exe = host.build_host(build.files, build.name, work, cflags=target.cflags, sanitize=sanitize,
                                  cc=target.cc)
        with progress.step(f"running {len(samples)} samples on the host"):
            return host.run_samples(exe, build.manifest, samples, work)


@dataclass(frozen=True)
class VerifyResult:
    reference: str
    samples: int
    outputs: list[OutputReport]
    tolerance_lsb: int = 0
    metrics: tuple[OutputMetrics, ...] = ()  # per output: max abs error, l2 relative error, cosine, top-1

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)


def verify_model(model: Path, options: CompileOptions, *, samples: int = 20, seed: int = 0,
                 sanitize: bool = False, tolerance_lsb: int | None = None,
                 inputs: Path | None = None) -> VerifyResult:
    """Quantized outputs are judged in LSB of their scale (`tolerance_lsb`, default: see
    reference.default_tolerance_lsb), others exactly (integers) or relatively (floats).
    `inputs`: the user's samples (a folder of .npy files or an .npz, codegen/verify/user_samples.py)
    instead of `samples` random ones."""
    build = compile_model(model, options)
    if inputs is not None:
        data = load_user_samples(inputs, build.manifest["inputs"])
    else:
        data = random_samples(build.manifest["inputs"], samples, seed)
    got = run_on_target(build, options, data, sanitize=sanitize)
    return compare_with_reference(model, build.manifest, data, got, tolerance_lsb)


def compare_with_reference(model: Path, manifest: dict, inputs: list[dict[str, np.ndarray]],
                           got: list[dict[str, np.ndarray]], tolerance_lsb: int | None = None) -> VerifyResult:
    """The outputs the generated code gave for `inputs` against the reference runtime's."""
    reference = reference_name(model)
    numerics = manifest.get("numerics", "tflite")  # the build's int8 arithmetic
    with progress.step(f"running the reference ({reference}) on {len(inputs)} samples"):
        ref = run_reference(model, inputs, numerics)
    tolerance = default_tolerance_lsb(reference, numerics) if tolerance_lsb is None else tolerance_lsb
    lsbs = output_lsbs(model, len(manifest["outputs"]))
    reports, metrics = [], []
    for k, io in enumerate(manifest["outputs"]):
        name = io["name"]
        # By position: an output that passes a graph input straight through is renamed in
        # Kiln's graph (one value cannot be both), while the reference keeps the model's name.
        ours, theirs = [g[name] for g in got], [list(r.values())[k] for r in ref]
        per_sample = [compare_output(name, a, b, lsb=lsbs[k], tolerance_lsb=tolerance) for a, b in zip(ours, theirs)]
        reports.append(merge_reports(per_sample))
        metrics.append(output_metrics(io, ours, theirs, reports[-1]))
    return VerifyResult(reference, len(inputs), reports, tolerance, tuple(metrics))


def load_inputs(build: BuildResult, paths: list[Path]) -> dict[str, np.ndarray]:
    inputs = build.manifest["inputs"]
    if len(paths) != len(inputs):
        raise KilnError(f"the model has {len(inputs)} input(s) ({', '.join(i['name'] for i in inputs)}); "
                        f"{len(paths)} --input file(s) given")
    sample = {}
    for io, path in zip(inputs, paths):
        arr = read_npy(path)
        if arr.size != int(np.prod(io["shape"], dtype=np.int64)):
            raise KilnError(f"input '{io['name']}' takes shape {io['shape']}, file has {list(arr.shape)}",
                            where=str(path))
        sample[io["name"]] = arr.reshape(io["shape"])
    return sample


def save_outputs(manifest: dict, outputs: dict[str, np.ndarray], output_dir: Path, read: list[Path]) -> None:
    """`kiln run`: each output as output_dir/<C name>.npy, never over a file the run read."""
    from codegen.lower.context import c_identifier

    output_dir.mkdir(parents=True, exist_ok=True)
    inputs = {p.resolve() for p in read}
    for io in manifest["outputs"]:
        path = output_dir / f"{c_identifier(io['name'])}.npy"
        if path.resolve() in inputs:
            raise KilnError(f"output '{path}' would overwrite an input of this run: give another --output-dir")
        np.save(path, outputs[io["name"]])
        print(f"kiln: {io['name']} -> {path}")
