"""--ram-limit trading a fast kernel's scratch for the scratch-free reference kernel
(codegen/memory/fit.py scratch_stems): the int8 transformer encoder on Cortex-M4, whose DSP
matmul packs its rows into a scratch the reference matmul does without."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from codegen.budget import need_of
from codegen.compiler import fit_ram
from codegen.frontends import load_model
from codegen.memory.fit import Config, Trial, request_stem, scratch_of, scratch_stems, search
from codegen.options import CompileOptions
from codegen.targets import load_target
from codegen.verify.samples import random_samples
from helpers import assert_bit_exact, build_graph

MODEL = Path(__file__).parent.parent / "tflite_converted" / "transformer_encoder_int8.tflite"


@pytest.fixture(scope="module")
def encoder():
    return load_model(MODEL)


def test_stems_whose_fast_kernel_takes_scratch_the_reference_does_not(encoder):
    fast = build_graph(encoder, target="cortex-m4").lowered.calls
    every = tuple(sorted({request_stem(c) for c in fast}))
    ref = build_graph(encoder, target="cortex-m4", reference_kernels=every).lowered.calls
    stems = scratch_stems(fast, ref)
    assert "matmul_s8" in stems and "fully_connected_s8" in stems
    # softmax takes the same scratch in either variant: nothing to gain
    assert "softmax_strided_s8" not in stems and "transpose" not in stems
    matmuls = [k for k, c in enumerate(fast) if c.kernel == "matmul_s8"]
    assert all(sum(scratch_of([fast[k]])[0]) > 0 == sum(scratch_of([ref[k]])[0]) for k in matmuls)


def _fit(g, limit):
    options = CompileOptions(load_target("cortex-m4"), ram_limit=limit)
    return fit_ram(g, options, {"name": "t", "model_file": "t.test", "model_sha256": "0" * 64}, 0)


@pytest.fixture(scope="module")
def squeezed(encoder):
    """The encoder built within one byte less than the fast kernels need with the I/O inside the
    arena (free in speed): only the reference matmul's freed scratch gets it there."""
    fast = need_of(build_graph(encoder, target="cortex-m4", io_in_arena=True).manifest).ram_bytes
    small = need_of(build_graph(encoder, target="cortex-m4", io_in_arena=True,
                                reference_kernels=("matmul_s8",)).manifest).ram_bytes
    assert small < fast
    return _fit(encoder, fast - 1), fast - 1


def test_the_reference_matmul_is_taken_when_its_scratch_is_what_does_not_fit(squeezed):
    res, limit = squeezed
    chosen = res.fit.chosen.config
    assert chosen.reference == ("matmul_s8",) and chosen.io_in_arena
    assert need_of(res.manifest).ram_bytes <= limit
    assert res.manifest["ram_fit"]["chosen"]["reference_kernels"] == ["matmul_s8"]
    calls = res.lowered.calls
    assert all(c.variant == "reference" for c in calls if c.kernel == "matmul_s8")
    assert any(c.variant == "cortex_m_dsp" for c in calls if c.kernel == "fully_connected_s8")
    assert res.fit.chosen.cycles > res.fit_baseline.cycles  # priced by the cost model


def test_the_search_plans_only_up_to_the_first_fit(squeezed):
    res, _ = squeezed
    planned = {t.config for t in res.fit.trials}
    assert Config() in planned and res.fit.chosen.config in planned
    # slower configurations than the one taken (both reference kernels) were never planned
    assert Config(("fully_connected_s8", "matmul_s8"), False, True) not in planned


def test_search_plans_every_configuration_only_when_nothing_fits():
    configs = [Config(), Config((), False, True), Config(("a",)), Config(("a",), False, True)]
    price = {(): 100, ("a",): 300}
    ram = {Config(): 900, Config((), False, True): 700, Config(("a",)): 600, Config(("a",), False, True): 500}
    planned = []

    def plan(c):
        planned.append(c)
        return Trial(c, ram[c], ram[c], price[c.reference])

    assert search(configs, lambda c: price[c.reference], plan, 800).chosen.config == configs[1]
    assert planned == configs[:2]
    planned.clear()
    fit = search(configs, lambda c: price[c.reference], plan, 400)
    assert fit.chosen is None and set(planned) == set(configs) and len(planned) == 4 and fit.smallest.ram_bytes == 500
    # with a bound: what cannot fit is not planned, and when nothing fits, only what could be the least
    bound = {c: ram[c] - 50 for c in configs}
    planned.clear()
    assert search(configs, lambda c: price[c.reference], plan, 800, bound=bound.__getitem__).chosen.config == configs[1]
    assert planned == configs[:2]
    planned.clear()
    fit = search(configs, lambda c: price[c.reference], plan, 400, bound=bound.__getitem__)
    assert fit.chosen is None and fit.smallest.ram_bytes == 500
    assert planned == [configs[0], configs[3]]  # the baseline, then the least bound; the rest bound above 500 B


@pytest.mark.skipif(not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")),
                    reason="no Arm toolchain or QEMU (Debian gcc-arm-none-eabi, qemu-system-arm)")
def test_the_build_within_the_limit_is_bit_exact_on_cortex_m4(encoder, squeezed):
    from codegen.verify.qemu import run_generated as run_on_qemu

    res, _ = squeezed
    samples = random_samples(res.manifest["inputs"], 2, seed=22)
    got = run_on_qemu(res.files, "t", samples, load_target("cortex-m4"))
    want = run_on_qemu(build_graph(encoder, target="cortex-m4").files, "t", samples, load_target("cortex-m4"))
    for g_out, w_out in zip(got, want):
        assert g_out.keys() == w_out.keys()
        for name in w_out:
            np.testing.assert_array_equal(g_out[name], w_out[name], err_msg=name)
    assert_bit_exact(encoder, samples, got)


def test_a_configuration_is_priced_only_when_it_could_come_next():
    base, io, patched = Config(), Config((), False, True), Config((), True, False)
    ram = {base: 900, io: 700, patched: 600}
    priced = []

    def price(c):
        priced.append(c)
        return None if c == patched and missing else {base: 100, io: 100, patched: 120}[c]

    def plan(c):
        return Trial(c, ram[c], ram[c], 120 if c.patch_stage else 100)

    floor = {base: 100, io: 100, patched: 101}.__getitem__
    missing = False
    assert search([base, io, patched], price, plan, 800, price_floor=floor).chosen.config == io
    assert patched not in priced  # the patch stage beyond the fit: never searched
    assert search([base, io, patched], price, plan, 650, price_floor=floor).chosen.config == patched
    missing = True  # a model without a patch stage: the configuration is dropped
    fit = search([base, io, patched], price, plan, 650, price_floor=floor)
    assert fit.chosen is None and {t.config for t in fit.trials} == {base, io}
