"""Bounded fuzzing: malformed and hostile variants of the test models must fail cleanly.

A fixed plan of a few hundred cases, every mutation class of tests/robustness/mutations.py
for both formats, each case compiled in-process (`kiln inspect`'s analysis, then
`compile_model`) under a SIGALRM time bound. Every case must end in success or in a
one-line KilnError that names the file — never another exception, never a hang. A handful
of cases also go through the real `kiln` command: exit status 2, one line on stderr, no
traceback, no output folder. The longer campaign is bench/fuzz_campaign.py (bench/FUZZ.md).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from functools import lru_cache

import pytest

import mutations as mut

CASES = 1200
CHUNKS = 12
TIME_BOUND_S = 5.0
# MLPerf Tiny models cheap enough to compile hundreds of times (the float ad01 / vww models
# take ~0.5 s per compile and are left to the campaign).
SUITE_MLPERF = ("kws_ref_model", "kws_ref_model_float32", "pretrainedResnet_quant", "str_ww_ref_model",
                "ad01_int8", "vww_96_int8")


@lru_cache(maxsize=1)
def seeds() -> dict[str, list[mut.Seed]]:
    return {"onnx": mut.onnx_seeds(), "tflite": mut.tflite_seeds(only=SUITE_MLPERF)}


@lru_cache(maxsize=1)
def plan() -> list[tuple[int, str, str]]:
    """(case number, format, mutation class): the classes of both formats in turn."""
    pairs = [(fmt, cls) for fmt in ("onnx", "tflite") for cls in mut.classes_for(fmt)]
    return [(k, *pairs[k % len(pairs)]) for k in range(CASES)]


def make_case(k: int, fmt: str, cls: str) -> tuple[mut.Seed, bytes]:
    rng = random.Random(k)
    seed = rng.choice(seeds()[fmt])
    return seed, mut.mutate(seed, cls, rng, steps=rng.choice([1, 1, 2, 3]))


def test_every_mutation_class_is_planned_often():
    counts = Counter((fmt, cls) for _, fmt, cls in plan())
    assert set(counts) == {(f, c) for f in ("onnx", "tflite") for c in mut.classes_for(f)}
    assert min(counts.values()) >= 10


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_mutated_models_end_in_success_or_a_clean_error(chunk, tmp_path):
    outcomes: Counter = Counter()
    findings = []
    for k, fmt, cls in plan()[chunk::CHUNKS]:
        seed, data = make_case(k, fmt, cls)
        path = tmp_path / f"case{k}{seed.suffix}"
        path.write_bytes(data)
        o = mut.run_case(path, seed.input_shapes, time_bound=TIME_BOUND_S, inspect=k % 4 == 0)
        outcomes[o.kind] += 1
        if not o.clean:
            findings.append(f"case {k} ({seed.name}, {cls}): {o.kind} after {o.seconds:.1f} s\n{o.message}")
    assert not findings, f"{len(findings)} unclean outcomes:\n" + "\n".join(findings)
    assert outcomes["kiln_error"] > outcomes["ok"]  # the mutations do damage


def _kiln(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=60)


# One case per kind of damage, through the real command.
CLI_CASES = [("onnx", "truncate"), ("onnx", "onnx_cycle"), ("onnx", "onnx_absurd_shape"), ("onnx", "onnx_nesting"),
             ("tflite", "int_subst"), ("tflite", "tfl_quant"), ("tflite", "tfl_operator_io")]


@pytest.mark.parametrize("fmt,cls", CLI_CASES)
def test_cli_reports_malformed_models_in_one_line_with_status_2(fmt, cls, tmp_path):
    for k in range(1000, 1200):  # the first variant of this class that Kiln refuses
        seed, data = make_case(k, fmt, cls)
        path = tmp_path / f"bad{seed.suffix}"
        path.write_bytes(data)
        if mut.run_case(path, seed.input_shapes).kind == "kiln_error":
            break
    else:
        pytest.fail(f"no refused {cls} variant found")
    shapes = [f"--input-shape={n}={','.join(map(str, s))}" for n, s in seed.input_shapes.items()]
    out = tmp_path / "out"
    proc = _kiln("build", path, "--target", "host", "-o", out, *shapes)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith(f"kiln: error: {path}"), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    proc = _kiln("inspect", path)
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr
    assert proc.returncode == 0 or len(proc.stderr.strip().splitlines()) == 1
