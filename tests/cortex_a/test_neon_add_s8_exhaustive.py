"""The NEON int8 Add (templates/kernels/neon/add_bcast_s8.c.j2) over every pair of int8
inputs, 256 x 256, for quantizations chosen to reach the edges of its sixteen-lane loop:
either input the one rescaled by exactly 1/2, both of them (equal scales), a large right
shift on the other input, the output's right shift at both ends of the loop's range (16 and
23) and just outside it (the eight-lane loop), zero points at the ends of int8, and clamps
narrower than int8. Run under qemu-aarch64 and compared with the numpy model of TFLM's
AddElementwise, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import GraphBuilder, Quant
from codegen.verify import qemu_user
from codegen.targets import load_target
from cortex_a_testing import build
from helpers import assert_bit_exact
from ops.linear_testing import merge  # tests/ops, a namespace package beside this folder

pytestmark = pytest.mark.usefixtures("cortex_a")

PAIRS = (1, 16, 64, 64)  # 65,536 elements: input a's value is the high byte of the index, b's the low
ROWS, COLUMN = (1, 256, 1, 256), (1, 256, 1, 1)  # the same pairs with b one value per row (stride 0)

# (scale a, zero point a, scale b, zero point b, output scale, output zero point, activation)
CASES = [
    (0.05, -128, 0.1, 4, 0.12, -20, "none"),  # ResNet-8's first Add: input 2 halved, input 1 shifted right 2
    (0.1, 3, 0.037, -11, 0.15, 5, "relu"),  # input 1 halved
    (0.04, 25, 0.04, -90, 0.3, -128, "relu"),  # equal scales: both halved, no right shift
    (0.08, 127, 0.0011, -128, 0.07, 127, "none"),  # input 2 shifted right 6; extreme zero points
    (0.02, -128, 0.09, 127, 0.09 / 6, 0, "relu6"),  # output shift 16 (the narrowing shifts by 0)
    (0.02, 0, 0.09, -3, 0.09 * 24, -128, "none"),  # output shift 23
    (0.02, 7, 0.09, 9, 0.09 / 12, 10, "none"),  # output shift 15: the eight-lane loop
    (0.02, -7, 0.09, 9, 0.09 * 48, -9, "none"),  # output shift 24: the eight-lane loop
]


def seeded_cases(seed: int, count: int) -> list[tuple]:
    """Random quantizations as a converter would give them (scales within 10x of each other)."""
    rng = np.random.default_rng(seed)
    return [(float(rng.uniform(0.01, 0.1)), int(rng.integers(-128, 128)), float(rng.uniform(0.01, 0.1)),
             int(rng.integers(-128, 128)), float(rng.uniform(0.02, 0.25)), int(rng.integers(-128, 128)),
             str(rng.choice(["none", "relu"]))) for _ in range(count)]


def add_graph(sa, za, sb, zb, so, zo, activation, shapes=(PAIRS, PAIRS)):
    b = GraphBuilder("add_pairs")
    y = b.node("Add", [b.input("a", "int8", shapes[0], Quant.of(sa, za)),
                       b.input("b", "int8", shapes[1], Quant.of(sb, zb))],
               activation=activation, quant=Quant.of(so, zo))
    return b.output(y).build()


def every_pair(shape_a, shape_b) -> tuple[np.ndarray, np.ndarray]:
    if shape_b == COLUMN:
        return (np.arange(256 * 256) % 256 - 128).astype(np.int8).reshape(ROWS), \
            (np.arange(256) - 128).astype(np.int8).reshape(COLUMN)
    index = np.arange(256 * 256)
    return ((index >> 8) - 128).astype(np.int8).reshape(PAIRS), ((index & 255) - 128).astype(np.int8).reshape(PAIRS)


@pytest.mark.parametrize("target", ["cortex-a53", "cortex-a76"])
@pytest.mark.parametrize("shapes", [(PAIRS, PAIRS), (ROWS, COLUMN)], ids=["contiguous", "broadcast"])
def test_neon_add_of_every_input_pair_equals_tflm(target, shapes):
    """Both forms of the sixteen-lane loop are reached: TFLM's roundings, and the fast form
    where codegen/kernels/neon/add_bcast_s8.py found it equal to them on every pair."""
    cases = CASES + seeded_cases(9410, 6)
    g, ins, _ = merge([add_graph(*case, shapes=shapes) for case in cases])
    res = build(g, target)
    calls = [c.params for c in res.lowered.calls if c.kernel == "add_bcast_s8"]
    assert {-15, -16, -23, -24} <= {c["q.output_shift"] for c in calls}
    sixteen = [c["fast"] for c in calls if -23 <= c["q.output_shift"] <= -16]
    assert sixteen.count(1) >= 5 and sixteen.count(0) >= 2
    a, b = every_pair(*shapes)
    feed = {name: (a if name.startswith("a") else b) for names in ins for name in names}
    assert_bit_exact(g, [feed], qemu_user.run_generated(res.files, "t", [feed], load_target(target)))


def test_fast_form_is_refused_where_it_differs_from_tflm():
    """The first case's fast form differs from TFLM on some pair with every constant tried:
    the compile-time check is what keeps it out (its call runs TFLM's roundings); the third
    case's passes."""
    from dataclasses import fields

    from codegen.kernels.neon.add_bcast_s8 import every_pair as pairs, fast_candidates, fast_constants, fast_outputs
    from codegen.kernels.reference.families import AddQ
    from codegen.quant import add_int8
    from codegen.quant.params import add_sub_params

    def block(sa, za, sb, zb, so, zo, activation):
        p = add_sub_params("add", sa, za, sb, zb, so, zo, activation)
        return p, AddQ(*(getattr(p, f.name) for f in fields(p)))

    p, q = block(*CASES[0])
    multiplier, output_multiplier, rounds = fast_candidates(q)
    tflm = add_int8(*pairs(), p)
    assert fast_constants(q) is None
    assert not any(np.array_equal(fast_outputs(q, multiplier, output_multiplier, r), tflm) for r in rounds)
    assert fast_constants(block(*CASES[2])[1]) is not None
