"""int8 BatchMatMul and SVDF layers for the fast kernels' tests (tests/cortex_m/
test_matmul_svdf_fast.py, tests/cortex_a/test_neon_matmul_svdf.py): matmuls of two
activations and of an activation by a constant, odd k and m, n not a multiple of 4, batch
dimensions broadcast either way, 1-D operands; SVDFs of rank 1 and 2, several memory sizes
and batches, with and without bias."""

from __future__ import annotations

import numpy as np

from codegen.ir import Graph, GraphBuilder, Quant

# (a shape, b shape, b constant?, a zero point, b zero point[, output scale])
MATMULS = [
    ((1, 2, 16, 16), (1, 2, 16, 16), False, -3, 5),  # the transformer's attention
    ((3, 7), (7, 5), False, 0, -128),  # odd k, odd m, n = 5
    ((2, 1, 5, 9), (3, 9, 6), False, 127, -7),  # batch broadcast both ways
    ((4, 3, 18), (18, 10), True, -20, 3),  # a constant b shared by every batch
    ((2, 5, 4), (2, 4, 7), True, 9, 0),  # a constant b per batch
    ((13,), (2, 13, 3), False, -1, 1),  # 1-D a
    ((2, 3, 12), (12,), False, 4, -4),  # 1-D b
    ((1, 33, 40), (40, 35), False, -128, 127),  # larger: tails of k and n
    ((2, 3, 4), (4, 6), False, 1, 2, 4e-4),  # an output scale below a's times b's: a left shift
]

# (batch, features, units, rank, memory, bias[, state scale, output scale, state zero point])
SVDFS = [
    (1, 5, 3, 1, 4, True),
    (2, 13, 4, 2, 7, False),
    (3, 32, 8, 1, 10, True),
    (1, 19, 5, 2, 1, True),
    (2, 40, 16, 1, 33, True),
    (1, 24, 6, 1, 5, True, 1e-4, 1e-9),  # scales above 1 at both stages: left shifts
    (2, 21, 5, 2, 6, True, 0.004, 0.05, -9),  # a state zero point (folded into the bias)
]


def matmul_graph(a_shape, b_shape, b_const, a_zp, b_zp, out_scale=None, *, seed) -> Graph:
    rng = np.random.default_rng(seed)
    b = GraphBuilder("mm")
    x = b.input("mm_a", "int8", a_shape, Quant.of(0.05, a_zp))
    bq = Quant.of(0.02, b_zp)
    y = b.const("mm_b", rng.integers(-128, 128, b_shape).astype(np.int8), quant=bq) if b_const else \
        b.input("mm_b", "int8", b_shape, bq)
    k = a_shape[-1]
    scale = out_scale or 0.05 * 0.02 * 60 * k ** 0.5  # about 3 sigma of the sums
    return b.output(b.node("MatMul", [x, y], quant=Quant.of(scale, -10 + seed % 7))).build()


def svdf_graph(batch, features, units, rank, memory, bias, state_scale=0.004, out_scale=0.05, state_zp=0, *,
               seed) -> Graph:
    rng = np.random.default_rng(seed)
    b = GraphBuilder("svdf")
    filters = units * rank
    x = b.input("svdf_x", "int8", (batch, features), Quant.of(0.03, 2 - seed % 5))
    sq = Quant.of(state_scale, state_zp)
    state = b.input("svdf_state", "int16", (batch, filters * memory), sq)
    wf = b.const("svdf_wf", rng.integers(-127, 128, (filters, features)).astype(np.int8), quant=Quant.of(0.01))
    wt = b.const("svdf_wt", rng.integers(-3000, 3001, (filters, memory)).astype(np.int16), quant=Quant.of(2e-4))
    bb = b.const("svdf_bias", rng.integers(-2000, 2001, units).astype(np.int32)) if bias else ""
    y, nxt = b.node("SVDF", [x, wf, wt, bb, state], quant=[Quant.of(out_scale, -3), sq], rank=rank, activation="none")
    return b.output(y, nxt).build()


def matmuls() -> list[Graph]:
    return [matmul_graph(*case, seed=400 + k) for k, case in enumerate(MATMULS)]


def svdfs() -> list[Graph]:
    return [svdf_graph(*case, seed=500 + k) for k, case in enumerate(SVDFS)]
