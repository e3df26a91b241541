"""Compile-time repacking for the fast kernel variants (codegen/kernels/repack.py), checked on
the host: the DSP requantization records reproduce TFLM's output stage exactly (a numpy
model of kiln_dsp_requant / kiln_dsp_requant_r2, instruction by instruction), and the
weight layouts put every weight where the kernels' SXTB16 / SMLAD lanes expect it. Which
variant runs is the kernel registry's choice (codegen.kernels.select)."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.kernels import repack
from codegen.errors import KilnError
from codegen.ir.graph import Node
from codegen.kernels.select import select, template_for_name
from codegen.ops.request import KernelRequest
from codegen.quant import multiply_by_quantized_multiplier, quantize_multiplier
from codegen.targets import load_target

M32 = (1 << 32) - 1


def _s32(v: np.ndarray) -> np.ndarray:
    return (np.asarray(v, np.int64) & M32).astype(np.uint32).view(np.int32).astype(np.int64)


def dsp_requant(acc: np.ndarray, rec: np.ndarray, zp: int) -> np.ndarray:
    """kiln_dsp_requant, step by step in 64-bit numpy (rec: bias, M, A, p | l << 8 | R << 16)."""
    _, big_m, a, shifts = (int(v) for v in rec)
    p, left, rnd = shifts & 0xFF, (shifts >> 8) & 0xFF, shifts >> 16
    x = (np.asarray(acc, np.int64) << left) & M32  # as uint32
    prod = x.astype(object) * (big_m & M32)  # exact 64-bit product
    hi = np.array([(int(v) >> 32) + ((int(v) & M32) >> 31) for v in prod], np.int64)
    hi = _s32(hi + np.where(x >> 31, a & M32, 0))
    v = np.clip((hi >> p) + rnd, -(1 << 31), (1 << 31) - 1) >> rnd  # QADD, then ASR
    return np.clip(_s32(v + zp), -128, 127)


def dsp_requant_r2(acc: np.ndarray, rec: np.ndarray, zp: int) -> np.ndarray:
    """kiln_dsp_requant_r2: no left shift, `k` = 1 + 2 zp added before SSAT's halving."""
    _, big_m, a, shifts = (int(v) for v in rec)
    p = shifts & 0xFF
    x = np.asarray(acc, np.int64) & M32
    prod = x.astype(object) * (big_m & M32)
    hi = np.array([(int(v) >> 32) + ((int(v) & M32) >> 31) for v in prod], np.int64)
    hi = _s32(hi + np.where(x >> 31, a & M32, 0))
    return np.clip(_s32((hi >> p) + 1 + 2 * zp) >> 1, -128, 127)


def tflm(acc: np.ndarray, m: int, s: int, zp: int) -> np.ndarray:
    y = multiply_by_quantized_multiplier(np.asarray(acc, np.int64), m, s).astype(np.int64)
    return np.clip(_s32(y + zp), -128, 127)


ACCS = np.array(list(range(-700, 700)) + [(1 << 31) - 1, -(1 << 31), (1 << 30) + 7, -(1 << 30) - 9,
                                          (1 << 31) - (1 << 22), -(1 << 31) + (1 << 22)], np.int64)


@pytest.mark.parametrize("shift", [-31, -27, -20, -9, -2, -1, 0, 1, 5])
@pytest.mark.parametrize("multiplier", [1 << 30, (1 << 30) + 1, 1518500250, (1 << 31) - 1, 0])
def test_dsp_requant_records_are_exact(shift, multiplier):
    rng = np.random.default_rng(abs(shift) * 7 + multiplier % 97)
    acc = np.concatenate([ACCS, rng.integers(-(1 << 31), 1 << 31, 3000), rng.integers(-(1 << 20), 1 << 20, 3000)])
    (rec,) = repack.dsp_requant_records(np.array([0]), np.array([multiplier]), np.array([shift]))
    for zp in (-128, -3, 0, 127):
        np.testing.assert_array_equal(dsp_requant(acc, rec, zp), tflm(acc, multiplier, shift, zp))
        if repack.dsp_requant_r2(np.array([multiplier]), np.array([shift])):
            np.testing.assert_array_equal(dsp_requant_r2(acc, rec, zp), tflm(acc, multiplier, shift, zp))


def test_dsp_requant_records_from_real_scales():
    """Multipliers as TFLM derives them from scales, over the shifts real layers have."""
    rng = np.random.default_rng(3)
    for real in np.concatenate([rng.uniform(1e-6, 4.0, 60), [0.5, 0.25, 1.0, 2.0 ** -20]]):
        m, s = quantize_multiplier(float(real))
        (rec,) = repack.dsp_requant_records(np.array([5]), np.array([m]), np.array([s]))
        acc = rng.integers(-(1 << 24), 1 << 24, 2000)
        np.testing.assert_array_equal(dsp_requant(acc, rec, 9), tflm(acc, m, s, 9))


def test_records_hold_the_bias_and_pad_channels_with_zeros():
    rec = repack.dsp_requant_records(np.array([-7, 9000]), np.array([1 << 30, 1 << 30]), np.array([-3, 2]), 4)
    assert rec.shape == (4, repack.RQ_WORDS) and rec.dtype == np.int32
    assert list(rec[:, 0]) == [-7, 9000, 0, 0]
    assert rec[0, 3] == 2 | 0 << 8 | 1 << 16 and rec[1, 3] == 0 | 2 << 8 | 0 << 16  # p | l << 8 | R << 16
    assert not rec[2:].any()
    assert repack.dsp_requant_r2(np.array([5, 5]), np.array([-2, -9]))
    assert not repack.dsp_requant_r2(np.array([5, 5]), np.array([-2, -1]))
    assert repack.dsp_requant_r2(np.array([5, 0]), np.array([-2, 0]))  # multiplier 0: always zp


def _sxtb16(word: int, ror8: bool = False) -> tuple[int, int]:
    b = int(np.uint32(word & M32)).to_bytes(4, "little")
    lanes = (b[1], b[3]) if ror8 else (b[0], b[2])
    return tuple(v - 256 if v > 127 else v for v in lanes)


@pytest.mark.parametrize("block", [2, 4])
@pytest.mark.parametrize("o,k", [(4, 8), (3, 10), (5, 1), (2, 27)])
def test_gemm_rows_unpack_into_natural_pairs(o, k, block):
    rows = np.random.default_rng(o * k).integers(-128, 128, (o, k)).astype(np.int8)
    words = repack.dsp_gemm_rows(rows, block)
    k4, o_pad = repack.round_up(k, 4), repack.round_up(o, block)
    assert words.dtype == np.int32 and words.size == o_pad * k4 // 4
    padded = np.zeros((o_pad, k4), np.int64)
    padded[:o, :k] = rows
    it = iter(words)
    for first in range(0, o_pad, block):
        for g in range(k4 // 4):
            for r in range(first, first + block):  # the block's rows alternate word by word
                word = int(next(it))
                # SXTB16 gives (w0, w1), SXTB16 ROR #8 gives (w2, w3): the column's natural order
                assert _sxtb16(word) + _sxtb16(word, True) == tuple(padded[r, 4 * g:4 * g + 4])


def _lanes(word: int) -> tuple[int, int]:
    v = int(np.uint32(word & M32))
    return tuple(h - 65536 if h > 32767 else h for h in (v & 0xFFFF, v >> 16))


@pytest.mark.parametrize("o,k", [(4, 8), (3, 10), (5, 1), (2, 27)])
def test_gemm_pairs_wide_are_int16_lanes_in_natural_order(o, k):
    """kiln_dsp_dot_2x2_wide: per pair of rows and group of four k, row 0's words
    (w0, w1), (w2, w3), then row 1's, the lanes SMLAD meets with the int16 column's."""
    rows = np.random.default_rng(o * k + 1).integers(-128, 128, (o, k)).astype(np.int8)
    words = repack.dsp_gemm_pairs_wide(rows)
    k4, o_pad = repack.round_up(k, 4), repack.round_up(o, 2)
    assert words.dtype == np.int32 and words.size == o_pad * k4 // 2
    padded = np.zeros((o_pad, k4), np.int64)
    padded[:o, :k] = rows
    it = iter(words)
    for first in range(0, o_pad, 2):
        for g in range(k4 // 4):
            for r in (first, first + 1):
                assert _lanes(int(next(it))) + _lanes(int(next(it))) == tuple(padded[r, 4 * g:4 * g + 4])


@pytest.mark.parametrize("o,k", [(4, 8), (6, 61), (3, 130)])
def test_gemm_rows_natural_meet_int8_input_split_by_sxtb16(o, k):
    """kiln_dsp_dot_4x1_s8: SXTB16 splits an input word into (x0, x2) and (x1, x3); the
    natural-order weight word splits the same way, so the two SMLADs sum w . x."""
    rng = np.random.default_rng(o + k)
    rows = rng.integers(-128, 128, (o, k)).astype(np.int8)
    x = np.zeros(repack.round_up(k, 4), np.int64)
    x[:k] = rng.integers(-128, 128, k)
    words = repack.dsp_gemm_rows(rows, 4, natural=True).reshape(-1, repack.round_up(k, 4) // 4, 4)
    xw = repack._words(x.astype(np.int8))  # the input as the kernel loads it
    for r in range(o):
        acc = 0
        for g, xg in enumerate(xw):
            w = int(words[r // 4, g, r % 4])
            acc += sum(a * b for a, b in zip(_sxtb16(w), _sxtb16(int(xg))))
            acc += sum(a * b for a, b in zip(_sxtb16(w, True), _sxtb16(int(xg), True)))
        assert acc == int(rows[r].astype(np.int64) @ x[:k])


def test_depthwise_taps_are_lanes_of_two_words_per_tap():
    taps = np.random.default_rng(1).integers(-128, 128, (9, 6)).astype(np.int8)
    words = repack.dsp_depthwise_taps(taps)
    assert words.size == 2 * 9 * 2  # channels padded to 8: two groups, two words per tap
    lanes = words.view("<i2").reshape(2, 9, 4)  # [group][tap][(c0, c2, c1, c3)]
    full = np.zeros((9, 8), np.int64)
    full[:, :6] = taps
    for g in range(2):
        np.testing.assert_array_equal(lanes[g][:, [0, 2, 1, 3]], full[:, 4 * g:4 * g + 4])


def test_mve_layouts():
    rows = np.arange(-30, 30, dtype=np.int8).reshape(3, 20)
    raw = repack.mve_gemm_rows(rows)
    assert raw.dtype == np.int8
    assert raw.size == 4 * 32  # rows to 4, K to 32
    blocks = raw.reshape(2, 4, 16)  # [group of 16][row][byte]
    padded = np.zeros((4, 32), np.int8)
    padded[:3, :20] = rows
    for g in range(2):
        np.testing.assert_array_equal(blocks[g], padded[:, 16 * g:16 * g + 16])
    table = repack.mve_requant(np.array([1, 2, 3]), np.array([10, 20, 30]), np.array([-4, 0, 2]), 4)
    assert list(table) == [1, 2, 3, 0, 10, 20, 30, 0, 0, 0, 2, 0, -4, 0, 0, 0]


def test_select_takes_the_first_variant_with_a_spec():
    m4, host, m55 = load_target("cortex-m4"), load_target("host"), load_target("cortex-m55")

    def variant(kernel, target):
        return select(KernelRequest(kernel, Node("Op", "n", [], []), {}), target.variants).variant

    assert variant("conv2d_s8", m4) == "cortex_m_dsp"
    assert variant("conv2d_s8", host) == "reference"
    assert variant("softmax_s8", m4) == "reference"  # no DSP spec: the reference kernel computes it
    assert variant("depthwise_conv2d_s8", m55) in ("mve", "cortex_m_dsp")
    assert template_for_name("depthwise_conv2d_s8", m55.variants) == "kernels/mve/depthwise_conv2d_s8.c.j2"
    with pytest.raises(KilnError):
        select(KernelRequest("no_such_kernel", Node("Op", "n", [], []), {}), m4.variants)
    with pytest.raises(FileNotFoundError):
        template_for_name("no_such_kernel", m4.variants)
