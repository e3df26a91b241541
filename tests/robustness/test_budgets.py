"""RAM and flash budgets: `--ram-limit` / `--flash-limit`, and `codegen.budget` for boards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.budget import CODE_BYTES_PER_CALL, CODE_BYTES_PER_KERNEL, check_budget, need_of, parse_size
from codegen.compiler import compile_model
from codegen.errors import KilnError
from codegen.options import CompileOptions
from codegen.targets import load_target

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "models"
MODEL = GOLDEN / "tiny_int8.tflite"


@pytest.mark.parametrize("text,value", [("65536", 65536), ("64K", 65536), ("64k", 65536), ("64KiB", 65536),
                                        ("64KB", 65536), ("1M", 2 ** 20), ("1.5M", 3 * 2 ** 19),
                                        ("2G", 2 ** 31), ("0", 0), ("12B", 12)])
def test_sizes_take_binary_suffixes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "K", "-1", "1.3", "12X", "1 MB extra", "0x100"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError):
        parse_size(text)


def build(**limits):
    return compile_model(MODEL, CompileOptions(target=load_target("host"), planner="greedy", **limits))


def test_a_model_that_fits_exactly_builds():
    m = build().manifest
    need = need_of(m)
    assert m["arena_bytes"] > 0 and need.ram_bytes == m["arena_bytes"] + m["ram"]["io_bytes"]  # the caller's I/O too
    assert need.flash_bytes == m["weights_bytes"] + CODE_BYTES_PER_KERNEL * len(m["kernels"]) \
        + CODE_BYTES_PER_CALL * len(m["fusion_groups"])
    build(ram_limit=need.ram_bytes, flash_limit=need.flash_bytes)


def test_one_byte_too_little_ram_searches_for_a_build_that_fits():
    """Below the build as asked, --ram-limit takes another way (here: the I/O in the arena,
    free in speed) and records its search; the figures it prints are the build's."""
    need = need_of(build().manifest)
    fitted = build(ram_limit=need.ram_bytes - 1)
    chosen = fitted.manifest["ram_fit"]["chosen"]
    assert chosen["io_in_arena"] and need_of(fitted.manifest).ram_bytes == chosen["ram_bytes"] <= need.ram_bytes - 1
    assert fitted.fit.chosen.cycles == fitted.fit_baseline.cycles  # nothing slower was needed


def test_nothing_fits_names_the_least_ram_reached_and_flash_over_budget_fails():
    need = need_of(build().manifest)
    with pytest.raises(KilnError) as info:
        build(ram_limit=1)
    least = re.search(r"the least Kiln reaches is (\d+) B \((.+)\), (\d+) B over$", str(info.value))
    assert str(info.value).startswith(f"{MODEL}: needs {need.ram_bytes} B of RAM, budget is 1 B (--ram-limit); ")
    assert least and 0 < int(least.group(1)) <= need.ram_bytes and int(least.group(3)) == int(least.group(1)) - 1
    with pytest.raises(KilnError) as info:
        build(flash_limit=need.flash_bytes - 1)
    assert f"needs {need.flash_bytes} B of flash (weights" in str(info.value)
    assert f"budget is {need.flash_bytes - 1} B (--flash-limit): 1 B over" in str(info.value)


def test_the_check_is_reusable_with_a_board_budget():
    manifest = build().manifest
    with pytest.raises(KilnError, match=r"budget is 10 B \(board microbit\)"):
        check_budget(manifest, ram_limit=10, source="board microbit")
    assert check_budget(manifest, ram_limit=2 ** 20, flash_limit=2 ** 20).ram_bytes == manifest["ram"]["total_bytes"]
    with pytest.raises(KilnError, match=rf"needs {manifest['ram']['total_bytes']} B of RAM \(arena "
                                        rf"{manifest['arena_bytes']} B \+ inputs and outputs "):
        check_budget(manifest, ram_limit=10)


def kiln(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ}, timeout=120)


def test_cli_refuses_a_model_over_budget_in_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    for option, limit, what in (("--ram-limit", "40", "B of RAM"), ("--flash-limit", "1K", "B of flash")):
        proc = kiln("build", MODEL, "--target", "host", "-o", out, option, limit)
        assert proc.returncode == 2
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(f"kiln: error: {MODEL}: needs ") and what in line
        assert f"budget is {parse_size(limit)} B ({option})" in line
        assert not out.exists()
    proc = kiln("build", MODEL, "--target", "host", "-o", out, "--ram-limit", "64K", "--flash-limit", "1M")
    assert proc.returncode == 0, proc.stderr
    proc = kiln("verify", MODEL, "--target", "host", "--samples", "1", "--flash-limit", "100")
    assert proc.returncode == 2 and "B of flash" in proc.stderr


def test_cli_refuses_a_malformed_limit(tmp_path):
    proc = kiln("build", MODEL, "--target", "host", "-o", tmp_path / "o", "--ram-limit", "12X")
    assert proc.returncode == 2 and "'12X' is not a size" in proc.stderr and "Traceback" not in proc.stderr



def m4(**kw):
    return compile_model(MODEL, CompileOptions(target=load_target("cortex-m4"), planner="greedy", **kw))


def test_a_flash_limit_below_the_speed_builds_wide_weights_takes_the_bytes_build():
    """The cortex-m4 speed build keeps fully connected weights as int16 in flash; a
    --flash-limit below it but not below the bytes-only build (--optimize size) gets that
    build; one below both still fails, naming the smaller build's need."""
    wide, narrow = need_of(m4().manifest), need_of(m4(optimize="size").manifest)
    assert wide.flash_bytes > narrow.flash_bytes
    fitted = m4(flash_limit=narrow.flash_bytes)
    assert need_of(fitted.manifest).flash_bytes == narrow.flash_bytes
    assert need_of(m4(flash_limit=wide.flash_bytes).manifest).flash_bytes == wide.flash_bytes  # fits as asked
    with pytest.raises(KilnError, match=f"needs {narrow.flash_bytes} B of flash"):
        m4(flash_limit=narrow.flash_bytes - 1)


def test_a_flash_limit_and_a_ram_limit_together_are_both_met():
    """The bytes-only build is taken first, then the --ram-limit search runs among bytes-only
    builds: the result keeps what that search found (here: the I/O in the arena)."""
    narrow = need_of(m4(optimize="size").manifest)
    fitted = m4(flash_limit=narrow.flash_bytes, ram_limit=narrow.ram_bytes - 1)
    need = need_of(fitted.manifest)
    assert need.flash_bytes <= narrow.flash_bytes and need.ram_bytes <= narrow.ram_bytes - 1
    assert fitted.manifest["ram_fit"]["chosen"]["io_in_arena"]
