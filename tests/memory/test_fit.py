"""--ram-limit's search (codegen/memory/fit.py): the configurations tried, the choice, the
refinement with a better planner, and the search on a depthwise net built for Cortex-M4."""

from __future__ import annotations

import pytest

from codegen.budget import need_of
from codegen.compiler import fit_ram
from codegen.errors import KilnError
from codegen.memory.fit import (Config, Trial, choose, configs, format_fit, inplace_stems, request_stem,
                                scratch_of)
from codegen.options import CompileOptions
from codegen.targets import load_target
from helpers import build_graph
from inplace_nets import mobilenet_style


def test_configs_cover_every_subset_patch_and_io():
    got = configs(["b", "a"], patch=True)
    assert len(got) == 4 * 2 * 2 and len(set(got)) == len(got)
    assert got[0] == Config()  # the build as asked first
    assert Config(("a", "b"), True, True) in got
    many = configs([f"k{i}" for i in range(6)], patch=False)
    assert len(many) == (1 + 6 + 1) * 2  # past MAX_FREE_STEMS: none, each alone, all
    compact = configs(["a"], patch=False, compact=True)
    assert len(compact) == 2 * 2 * 2 and Config((), False, True, True) in compact and compact[0] == Config()


def _t(ram, cycles, ref=(), io=False, status="OPTIMAL", floor=None):
    return Trial(Config(tuple(ref), False, io), ram, ram, cycles, status, floor)


def test_choose_takes_the_fastest_that_fits_then_the_fewest_changes():
    trials = [_t(900, 100), _t(700, 100, io=True), _t(600, 300, ref=("dw",)), _t(500, 400, ("dw", "c"), True)]
    assert choose(trials, 1000).chosen == trials[0]
    assert choose(trials, 800).chosen == trials[1]
    assert choose(trials, 650).chosen == trials[2]
    fit = choose(trials, 100)
    assert fit.chosen is None and fit.smallest == trials[3]
    assert format_fit(fit, trials[0]) == ("nothing fits 100 B: the least RAM Kiln reaches is 500 B (reference "
                                          "kernels for dw, c, inputs and outputs in the arena)")
    assert format_fit(choose(trials, 650), trials[0]).endswith("estimated +200.0% cycles")


def test_a_faster_trial_is_refined_before_a_slower_one_is_taken():
    fast = _t(800, 100, status="FEASIBLE", floor=600)
    slow = _t(650, 500, ref=("dw",))
    refined = []

    def refine(t):
        refined.append(t)
        return Trial(t.config, 640, 640, t.cycles, "OPTIMAL", 640)

    fit = choose([fast, slow], 700, refine)
    assert refined == [fast] and fit.chosen.ram_bytes == 640 and fit.chosen.cycles == 100
    # a floor above the limit: not worth a slower planner
    refined.clear()
    assert choose([_t(800, 100, status="FEASIBLE", floor=720), slow], 700, refine).chosen == slow and not refined


def test_only_stems_whose_reference_variant_reuses_differently_are_candidates():
    g = mobilenet_style("int8", hw=16)
    fast = build_graph(g, target="cortex-m4").lowered.calls
    every = {request_stem(c) for c in fast}
    ref = build_graph(g, target="cortex-m4", reference_kernels=tuple(every)).lowered.calls
    stems = inplace_stems(fast, ref)
    assert "depthwise_conv2d_s8" in stems and set(stems) <= every
    assert all(c.variant == "reference" for c in ref)


@pytest.fixture(scope="module")
def net():
    g = mobilenet_style("int8", hw=16)
    return g, need_of(build_graph(g, target="cortex-m4").manifest).ram_bytes


def _fit(g, limit):
    options = CompileOptions(load_target("cortex-m4"), ram_limit=limit)
    return fit_ram(g, options, {"name": "t", "model_file": "t.test", "model_sha256": "0" * 64}, 0)


def test_io_in_the_arena_is_taken_first_when_it_is_enough(net):
    g, asked = net
    res = _fit(g, asked - 1)
    chosen = res.fit.chosen
    assert chosen.config == Config((), False, True) and chosen.cycles == res.fit_baseline.cycles
    assert res.manifest["ram"]["io_in_arena"] and need_of(res.manifest).ram_bytes <= asked - 1
    assert "int8_t *t_input_0(void);" in res.files["t.h"]
    assert res.manifest["ram_fit"]["chosen"]["io_in_arena"]


def test_compact_fast_kernels_drop_the_depthwise_ring():
    # The DSP depthwise ring (int16 rows) takes twice the padded-rows path's scratch; compact
    # kernels keep the target's variant with the smaller scratch, bit-exact either way
    # (tests/cortex_m/test_dsp_kernels.py runs both paths).
    g = mobilenet_style("int8", hw=16)
    fast = build_graph(g, target="cortex-m4").lowered.calls
    compact = build_graph(g, target="cortex-m4", compact_kernels=True).lowered.calls
    dw = [k for k, c in enumerate(fast) if c.kernel == "depthwise_conv2d_s8"]
    assert dw and all(compact[k].variant == fast[k].variant == "cortex_m_dsp" for k in dw)
    assert any(fast[k].params["ring"] == 1 for k in dw) and all(compact[k].params["ring"] == 0 for k in dw)
    assert scratch_of(compact) != scratch_of(fast)


def test_compact_kernels_when_io_is_not_enough(net):
    g, asked = net
    io_only = _fit(g, asked - 1).manifest["ram"]["total_bytes"]
    res = _fit(g, io_only - 1)
    chosen = res.fit.chosen.config
    assert chosen.compact and not chosen.reference and need_of(res.manifest).ram_bytes <= io_only - 1
    assert res.manifest["ram_fit"]["chosen"]["compact_kernels"]


def test_in_place_reference_kernels_when_compact_is_not_enough(net):
    g, asked = net
    io_only = _fit(g, asked - 1).manifest["ram"]["total_bytes"]
    limit = _fit(g, io_only - 1).manifest["ram"]["total_bytes"] - 1
    res = _fit(g, limit)
    while not res.fit.chosen.config.reference:  # compact kernels with and without the I/O inside
        assert res.fit.chosen.config.compact
        limit = res.manifest["ram"]["total_bytes"] - 1
        res = _fit(g, limit)
    chosen = res.fit.chosen.config
    assert "depthwise_conv2d_s8" in chosen.reference
    assert need_of(res.manifest).ram_bytes <= limit
    assert "depthwise_conv2d_inplace_s8" in res.manifest["kernels"]
    assert res.fit.chosen.cycles > res.fit_baseline.cycles  # the cost model prices the reference kernel


def test_nothing_fits_names_the_least_ram(net):
    g, _ = net
    with pytest.raises(KilnError, match=r"the least Kiln reaches is \d+ B \(reference kernels for "):
        _fit(g, 1000)
