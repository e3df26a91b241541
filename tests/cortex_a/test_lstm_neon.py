"""The NEON int8 LSTM kernels (lstm_s8 of neon and neon_dotprod: codegen/kernels/lstm_fast.py)
equal the numpy reference, bit-exact with TFLite Micro's integer LSTM, under qemu-aarch64: the
Cortex-M cases (tests/cortex_m/test_lstm_fast.py) with the three multiply modes (SMULL/SMLAL2
pairs, single SMULL when a weight is -128, SDOT on blocks of eight rows on the Cortex-A55);
and the converted Keras LSTM classifier against the TFLite Micro interpreter."""

from __future__ import annotations

import pytest

from codegen.kernels.linear import NEON_MLA, NEON_MLA_PAIRS, NEON_SDOT
from codegen.kernels.select import variant_for_name
from codegen.targets import load_target
from codegen.verify import qemu_user
from codegen.verify.samples import random_samples
from cortex_a_testing import build
from helpers import assert_bit_exact
from ops.lstm_testing import CASES, check_classifier_on, int8_lstm

pytestmark = pytest.mark.usefixtures("cortex_a")


@pytest.mark.parametrize("target,variant", [("cortex-a53", "neon"), ("cortex-a55", "neon_dotprod")])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_neon_lstm_equals_the_reference(target, variant, case):
    seq, batch, inp, hidden, opts = CASES[case]
    g = int8_lstm(seq, batch, inp, hidden, seed=40 + case, **opts)
    t = load_target(target)
    res = build(g, t)
    assert variant_for_name("lstm_s8", t.variants) == variant
    (call,) = [c for c in res.lowered.calls if c.kernel == "lstm_s8"]
    pairs = NEON_MLA if opts.get("w_min") == -128 else NEON_MLA_PAIRS
    assert call.params["mode"] == (NEON_SDOT if variant == "neon_dotprod" else pairs)
    feeds = random_samples(res.manifest["inputs"], 2, seed=case)
    assert_bit_exact(g, feeds, qemu_user.run_generated(res.files, "t", feeds, t))


@pytest.mark.parametrize("target,variant", [("cortex-a53", "neon"), ("cortex-a55", "neon_dotprod")])
def test_converted_lstm_classifier_matches_tflite_micro(target, variant):
    check_classifier_on(target, variant)
