"""Inputs and outputs inside the arena (--io-in-arena) and the arena handed in by the caller
(--arena caller): lifetimes, plans, the generated API, bit-exact runs on the host."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from codegen.errors import KilnError
from codegen.memory.lifetimes import arena_buffers, io_bytes
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples
from codegen.verify.toolchain import STRICT_FLAGS
from helpers import build_graph
from inplace_nets import mobilenet_style


@pytest.fixture(scope="module")
def graph():
    return mobilenet_style("int8", hw=16)


@pytest.fixture(scope="module")
def plain(graph):
    return build_graph(graph)


def test_inputs_live_from_before_the_first_call_outputs_until_after_the_last(graph):
    res = build_graph(graph, io_in_arena=True)
    by = {b.name: b for b in arena_buffers(res.lowered, io_in_arena=True)}
    calls = len(res.lowered.calls)
    (x,), (y,) = graph.inputs, graph.outputs
    assert by[x].first == -1 and by[x].last == 0  # read by the stem conv only
    assert by[y].last == calls and by[y].first == calls - 1
    assert x not in {b.name for b in arena_buffers(res.lowered)}  # the caller's by default


def test_the_input_bytes_are_reused_and_ram_is_counted_both_ways(graph, plain):
    res = build_graph(graph, io_in_arena=True)
    plan, ram = res.plan, res.manifest["ram"]
    (x,) = graph.inputs
    x_size = next(b.size for b in res.buffers if b.name == x)
    start, end = plan.offsets[x], plan.offsets[x] + x_size
    later = [b for b in res.buffers if b.first > 0 and plan.offsets[b.name] < end
             and start < plan.offsets[b.name] + b.size]
    assert later, "no buffer reuses the input's bytes after its last reader"
    assert ram == {"arena_bytes": plan.arena_size, "io_bytes": io_bytes(res.lowered), "io_in_arena": True,
                   "total_bytes": plan.arena_size,
                   "io_outside_arena": {"arena_bytes": plain.plan.arena_size,
                                        "total_bytes": plain.manifest["ram"]["total_bytes"]}}
    assert ram["total_bytes"] < ram["io_outside_arena"]["total_bytes"]


@pytest.mark.parametrize("opts", [{"io_in_arena": True}, {"arena": "caller"},
                                  {"arena": "caller", "io_in_arena": True}],
                         ids=["io-in-arena", "caller", "caller+io"])
def test_bit_exact_with_the_default_build_under_sanitizers(graph, plain, opts):
    res = build_graph(graph, **opts)
    samples = random_samples(plain.manifest["inputs"], 3, seed=5)
    want = run_generated(plain.files, "t", samples, sanitize=True)
    got = run_generated(res.files, "t", samples, sanitize=True)
    for a, b in zip(got, want):
        for name in b:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    header = res.files["t.h"]
    assert ("int t_run(\n    void\n);" in header) == ("io_in_arena" in opts)
    assert ("int t_init(uint8_t *arena, size_t size);" in header) == ("arena" in opts)
    assert ("int8_t *t_input_0(void);" in header) == ("io_in_arena" in opts)


INIT_TEST = r"""
#include <stdint.h>
#include <stdio.h>
#include "t.h"
static uint8_t arena[T_ARENA_SIZE + T_ARENA_ALIGN] __attribute__((aligned(T_ARENA_ALIGN)));
int main(void)
{
    int8_t *in;
    int k;
    if (t_run() != T_ERR_NO_ARENA || t_input_0() != NULL) return 1;
    if (t_init(NULL, sizeof(arena)) != T_ERR_NO_ARENA) return 2;
    if (t_init(arena, T_ARENA_SIZE - 1u) != T_ERR_ARENA_SIZE) return 3;
    if (t_init(arena + 1, T_ARENA_SIZE) != T_ERR_ARENA_ALIGN) return 4;
    if (t_run() != T_ERR_NO_ARENA) return 5; /* refused arenas are not taken */
    if (t_init(arena, T_ARENA_SIZE) != T_OK) return 6;
    in = t_input_0();
    if ((uint8_t *)in < arena || (uint8_t *)in + T_INPUT_0_ELEMENTS > arena + T_ARENA_SIZE) return 7;
    for (k = 0; k < (int)T_INPUT_0_ELEMENTS; ++k) in[k] = (int8_t)(k % 7);
    if (t_run() != T_OK) return 8;
    for (k = 0; k < (int)T_OUTPUT_0_ELEMENTS; ++k) printf("%d\n", t_output_0()[k]);
    return 0;
}
"""


def test_caller_arena_checks_size_alignment_and_presence(graph, tmp_path):
    """N_init refuses NULL, a short arena and a misaligned one with their codes and keeps the
    arena it had; N_run and N_input_k refuse to run without one."""
    res = build_graph(graph, arena="caller", io_in_arena=True)
    for fname, content in res.files.items():
        if isinstance(content, str):
            (tmp_path / fname).write_text(content)
    (tmp_path / "main.c").write_text(INIT_TEST)
    exe = tmp_path / "init_test"
    subprocess.run(["gcc", *STRICT_FLAGS, "-O1", "-I", str(tmp_path), str(tmp_path / "main.c"),
                    str(tmp_path / "t.c"), str(tmp_path / "t_weights.c"), "-lm", "-o", str(exe)], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.returncode
    shape = res.manifest["inputs"][0]["shape"]
    x = (np.arange(np.prod(shape)) % 7).astype(np.int8).reshape(shape)
    expected = run_generated(res.files, "t", [{graph.inputs[0]: x}])[0][graph.outputs[0]]
    assert [int(v) for v in proc.stdout.split()] == expected.reshape(-1).tolist()


def test_unsupported_combinations_are_one_line(graph):
    from codegen.compiler import check_arena_options
    from codegen.options import CompileOptions
    from codegen.targets import load_target

    for opts in ({"arena": "caller"}, {"io_in_arena": True}):
        with pytest.raises(KilnError, match="--debug-canaries guards the static arena"):
            check_arena_options(CompileOptions(load_target("host"), canaries=True, **opts))
    with pytest.raises(KilnError, match="--arena must be"):
        check_arena_options(CompileOptions(load_target("host"), arena="heap"))


def test_static_arena_section_and_alignment_macros(graph, tmp_path):
    """KILN_ARENA_SECTION puts the arena in the named section, KILN_ARENA_ALIGN aligns it
    further; an alignment below the plan's, or not a power of two, stops the build."""
    res = build_graph(graph)
    (tmp_path / "t.c").write_text(res.files["t.c"])
    (tmp_path / "t.h").write_text(res.files["t.h"])
    for h in res.files:
        if h.endswith(".h"):
            (tmp_path / h).write_text(res.files[h])

    def cc(*defines: str) -> subprocess.CompletedProcess:
        return subprocess.run(["gcc", *STRICT_FLAGS, "-c", "-I", str(tmp_path), *defines, str(tmp_path / "t.c"),
                               "-o", str(tmp_path / "t.o")], capture_output=True, text=True)

    assert cc('-DKILN_ARENA_SECTION=".kiln_sram2"', "-DKILN_ARENA_ALIGN=64").returncode == 0
    objdump = subprocess.run(["objdump", "-t", str(tmp_path / "t.o")], capture_output=True, text=True).stdout
    (line,) = [ln for ln in objdump.splitlines() if ln.endswith(" t_arena_storage")]
    assert ".kiln_sram2" in line
    sections = subprocess.run(["objdump", "-h", str(tmp_path / "t.o")], capture_output=True, text=True).stdout
    (sec,) = [ln for ln in sections.splitlines() if ".kiln_sram2" in ln]
    assert sec.split()[-1] == "2**6"  # 64-byte aligned
    for bad in ("-DKILN_ARENA_ALIGN=8", "-DKILN_ARENA_ALIGN=48"):
        proc = cc(bad)
        assert proc.returncode != 0 and "KILN_ARENA_ALIGN must be a power of two" in proc.stderr
    assert "KILN_ARENA_SECTION" in res.files["t.h"] and "KILN_ARENA_ALIGN" in res.files["t.h"]
