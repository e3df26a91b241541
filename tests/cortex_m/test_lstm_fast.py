"""The fast int8 LSTM kernels (lstm_s8 of cortex_m_dsp and mve: codegen/kernels/lstm_fast.py)
equal the numpy reference, bit-exact with TFLite Micro's integer LSTM, in QEMU on the M4, the
M33 (Armv8-M Mainline) and the M55 (Helium), also built at -O0 (the DSP kernel's assembly loops
give way to intrinsics): hidden sizes that are not multiples of 4, odd input sizes, one and
several batch entries and time steps, one weight scale or one per gate, a cell clip, weights of
-128, gates past the sigmoid / tanh tables' ends (tests/ops/lstm_testing.CASES); an open time
axis; and the converted Keras LSTM classifier against the TFLite Micro interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.kernels.select import variant_for_name
from codegen.options import CompileOptions
from codegen.targets import load_target, with_opt_level
from codegen.verify import qemu
from codegen.verify.samples import random_samples
from cortex_m_testing import build
from helpers import assert_bit_exact
from ops.lstm_testing import CASES, check_classifier_on, int8_lstm

pytestmark = pytest.mark.usefixtures("cortex_m")


@pytest.mark.parametrize("target,variant,opt_level", [("cortex-m4", "cortex_m_dsp", None),
                                                      ("cortex-m4", "cortex_m_dsp", "O0"),
                                                      ("cortex-m33", "cortex_m_dsp", None),
                                                      ("cortex-m55", "mve", None), ("cortex-m55", "mve", "O0")])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_fast_lstm_equals_the_reference(target, variant, opt_level, case):
    seq, batch, inp, hidden, opts = CASES[case]
    g = int8_lstm(seq, batch, inp, hidden, seed=40 + case, **opts)
    t = load_target(target) if opt_level is None else with_opt_level(load_target(target), opt_level)
    res = build(g, t)
    assert variant_for_name("lstm_s8", t.variants) == variant
    assert "lstm_s8" in res.manifest["kernels"]
    feeds = random_samples(res.manifest["inputs"], 2, seed=case)
    assert_bit_exact(g, feeds, qemu.run_generated(res.files, "t", feeds, t))


def test_fast_lstm_carries_only_its_packed_weights():
    """The DSP build's flash holds the packed w and r, the folded starting sums and the
    records, not the reference's int8 weights and bias."""
    res = build(int8_lstm(2, 1, 5, 7, seed=1), load_target("cortex-m4"))
    names = sorted(c.name.split("_")[0] for c in res.lowered.consts)
    assert names == ["bias", "r", "rbias", "rq", "sigmoid", "steps", "w"]
    w = next(c for c in res.lowered.consts if c.name.startswith("w_"))
    assert w.dtype == "int32" and w.data.size == 4 * 8 * 8 // 4  # 4 gates, rows 8, k 8, 4 bytes a word


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_converted_lstm_classifier_matches_tflite_micro(target, variant):
    check_classifier_on(target, variant)


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_fast_lstm_on_an_open_time_axis_runs_the_steps_it_is_given(tmp_path, target):
    """--max-shape: the steps the kernel runs are a RAM array the extent sets (the variants
    read `steps` as the reference does); bit-exact with TFLite Micro running a model of that
    length, at the shortest, a middle and the longest extent."""
    from tflite_recurrent_models import lstm_model

    from codegen.variants.bounded import verify_bounded

    def written(steps: int, open_steps: bool = False) -> Path:
        path = tmp_path / f"lstm_{steps}{'_open' if open_steps else ''}.tflite"
        path.write_bytes(lstm_model(steps=steps, dtype="int8", open_steps=open_steps, features=5, hidden=6))
        return path

    build, results = verify_bounded(written(12, open_steps=True), CompileOptions(load_target(target)),
                                    {"x": (1, 12, 5)}, samples=2, reference=written)
    assert "lstm_s8" in build.manifest["kernels"]
    assert [e for e, _ in results] == [1, 6, 12]
    assert all(r.ok and all(o.max_abs_error == 0 for o in r.outputs) for _, r in results)
