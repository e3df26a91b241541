"""Compile-time layouts of the fast int8 kernels' constants: repacked weights and
precomputed requantization, in the order each kernel variant reads them.

Pure numpy, no graph: the kernel specs (codegen/kernels/<variant>/*.py) call these when the
target's kernel variant is not the reference one. DSP constants are int32 arrays holding
bytes or int16 lanes in little-endian order, so that one aligned load brings what one
instruction unpacks; Helium weights are plain bytes (its vector loads need no alignment).

cortex_m_dsp (Armv7E-M DSP extension):
- GEMM weights (Conv2D, FullyConnected): `dsp_gemm_rows`. The kernel multiplies them with
  int16 input columns by SMLAD, two lanes at a time; SXTB16 unpacks bytes 0 and 2 of a word
  and SXTB16 ROR #8 bytes 1 and 3, so each word holds (w0, w2, w1, w3) of four consecutive
  weights, which unpack into the pairs (w0, w1) and (w2, w3) of the column's natural order.
  Rows come in blocks (pairs for the convolution's 2x2 channels x pixels tile, fours for the
  fully connected 4x1), interleaved word by word.
- Depthwise weights: `dsp_depthwise_taps`, int16 lanes ready for SMLABB/SMLATT.
- Requantization: `dsp_requant_records` (kiln_dsp_requant in runtime_c/kiln_dsp.h), and
  `dsp_requant_r2`, whether a layer can use its shorter form.

mve (Armv8.1-M Helium): `mve_gemm_rows` (blocks of four rows, 16 bytes at a time, for
VMLADAVA.S8), `mve_requant` (per-channel vectors for VQRDMULH / VRSHL) and
`even_odd_order` (the depthwise kernel's channel order within groups of eight). Depthwise
weights stay in their stored [k_h][k_w][channels] order.

neon (AArch64, runtime_c/kiln_neon_s8.h): the SMULL/SMLAL2 GEMM kernels read Helium's
`mve_gemm_rows`, and every NEON kernel Helium's `mve_requant` tables; neon_dotprod's SDOT
kernels read `sdot_gemm_blocks` (eight rows, four bytes of each per group of four k).
"""

from __future__ import annotations

import numpy as np

RQ_WORDS = 4  # per output channel: folded bias, then kiln_dsp_requant's M, A, shifts


def round_up(n: int, multiple: int) -> int:
    return -(-int(n) // multiple) * multiple


def _words(data: np.ndarray) -> np.ndarray:
    """Bytes (int8, last axis a multiple of 4) as little-endian int32 words."""
    raw = np.ascontiguousarray(np.asarray(data, dtype=np.int8))
    return raw.view("<i4").astype(np.int32)


def _pad(a: np.ndarray, axis: int, size: int) -> np.ndarray:
    """`a` zero-padded along `axis` to `size` entries."""
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, size - a.shape[axis])
    return np.pad(a, widths)


# -- cortex_m_dsp ----------------------------------------------------------------------------

def dsp_requant_records(folded_bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
                        channels_to: int | None = None) -> np.ndarray:
    """[channels, 4] int32 per output channel: the folded bias, then kiln_dsp_requant's
    M, A and the shift word p | l << 8 | R << 16 (runtime_c/kiln_dsp.h).

    With x = acc << l, M = 2m (uint32) and x read as unsigned, the high word of x * M + 2^31
    is TFLM's doubling high multiply of x and m once A = -M is added for x < 0; with a right
    shift r > 0, A = -(M + 1) also moves the ties of negative values away from zero, and the
    rounding shift by r is a shift by p = r - 1, plus R = 1, halved. Exact for every int32
    accumulator (tests/core/test_repack.py checks it against codegen.quant). Channels past the
    real ones (up to `channels_to`) are zero: kernels compute and drop them.
    """
    m = np.asarray(multiplier, np.int64)
    s = _dead_as_r2(m, shift)
    right = np.maximum(-s, 0)
    big_m = 2 * m
    rounding = np.minimum(right, 1)
    shifts = np.maximum(right - 1, 0) | (np.maximum(s, 0) << 8) | (rounding << 16)
    rec = np.stack([np.asarray(folded_bias, np.int64), big_m, -(big_m + rounding), shifts], axis=1)
    rec = (rec & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    if channels_to is not None:
        rec = _pad(rec, 0, channels_to)
    return rec


def _dead_as_r2(multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """The shifts, with -2 for channels whose multiplier is 0 (TFLM's (0, 0) for a zero or
    vanishing scale): any shift gives them the output zero point, and this one keeps the
    layer on the kernels' faster path."""
    return np.where(np.asarray(multiplier) == 0, -2, np.asarray(shift, np.int64))


def dsp_requant_r2(multiplier: np.ndarray, shift: np.ndarray) -> bool:
    """Whether every channel shifts right by 2 or more (channels of multiplier 0 count as
    such), so the kernels may use kiln_dsp_requant_r2 (no left shift, no saturating step)."""
    return bool(np.all(_dead_as_r2(multiplier, shift) <= -2))


def dsp_gemm_rows(rows: np.ndarray, block: int = 2, natural: bool = False) -> np.ndarray:
    """[O, K] int8 weights as the words of the DSP GEMM kernels.

    K is zero-padded to a multiple of 4 and O to a multiple of `block` (2 for the
    convolution's 2x2 tile, 4 for the fully connected 4x1). For each block of rows and each
    group g of four weights: the word of each row of the block in turn, with the bytes
    (w[4g], w[4g+2], w[4g+1], w[4g+3]) against an int16 column, or, `natural`, in their own
    order against int8 input that SXTB16 splits the same way (kiln_dsp_dot_4x1_s8).
    """
    o, k = rows.shape
    padded = _pad(_pad(np.asarray(rows, np.int8), 1, round_up(k, 4)), 0, round_up(o, block))
    groups = padded.reshape(padded.shape[0], -1, 4)[:, :, [0, 1, 2, 3] if natural else [0, 2, 1, 3]]
    words = _words(groups.reshape(padded.shape[0], -1))  # [O', K4/4]
    return words.reshape(-1, block, words.shape[1]).transpose(0, 2, 1).reshape(-1)


def dsp_gemm_pairs_wide(rows: np.ndarray) -> np.ndarray:
    """[O, K] int8 weights as the int16-lane words of the DSP convolution's wide 2x2 tile
    (kiln_dsp_dot_2x2_wide): K zero-padded to a multiple of 4 and O to a multiple of 2; for each
    pair of rows and each group g of four weights, row 0's words (w[4g], w[4g+1]) and
    (w[4g+2], w[4g+3]), then row 1's, low lane first, so that SMLAD meets the int16 column in
    its natural order without unpacking. Twice the bytes of `dsp_gemm_rows`: the kernel saves
    the four SXTB16 and two loads of every group."""
    o, k = rows.shape
    padded = _pad(_pad(np.asarray(rows, np.int16), 1, round_up(k, 4)), 0, round_up(o, 2))
    groups = padded.reshape(-1, 2, padded.shape[1] // 4, 4).transpose(0, 2, 1, 3)  # [O/2, G, row, 4]
    return np.ascontiguousarray(groups).astype("<i2").view("<i4").astype(np.int32).reshape(-1)


def dsp_depthwise_taps(w_taps: np.ndarray) -> np.ndarray:
    """[T, OC] int8 depthwise weights (taps in (ky, kx) order) as int16-lane words.

    OC is zero-padded to a multiple of 4. For each group of four channels (c0..c3) and each
    tap: the word (w[c0], w[c2]) then the word (w[c1], w[c3]), int16 lanes low first: the
    pairs SXTB16 and SXTB16 ROR #8 make of four input bytes, so SMLABB / SMLATT multiply
    lane by lane.
    """
    t, oc = w_taps.shape
    w = _pad(np.asarray(w_taps, np.int16), 1, round_up(oc, 4)).reshape(t, -1, 4)  # [T, G, 4]
    lanes = w[:, :, [0, 2, 1, 3]].transpose(1, 0, 2)  # [G, T, (c0, c2, c1, c3)]
    return np.ascontiguousarray(lanes).astype("<i2").view("<i4").astype(np.int32).reshape(-1)


# -- mve -------------------------------------------------------------------------------------

def mve_gemm_rows(rows: np.ndarray) -> np.ndarray:
    """[O, K] int8 weights for the Helium GEMM kernels, as bytes: K zero-padded to a multiple
    of 16 (whole VLDRB.S8 vectors, which need no alignment) and O to a multiple of 4; for each
    block of four rows and each group of 16 weights, the 16 bytes of each of the four rows in
    turn, so that one pointer walks the four rows multiplied with the same input vector."""
    o, k = rows.shape
    padded = _pad(_pad(np.asarray(rows, np.int8), 1, round_up(k, 16)), 0, round_up(o, 4))
    blocks = padded.reshape(-1, 4, padded.shape[1] // 16, 16).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks).reshape(-1)


def mve_requant(folded_bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
                channels_to: int) -> np.ndarray:
    """Per group of four output channels: bias[4], multiplier[4], left shift[4] and minus
    the right shift[4] (VSHL / VRSHL take signed shift vectors), zero-padded channels."""
    s = np.asarray(shift, np.int64)
    cols = [np.asarray(folded_bias, np.int64), np.asarray(multiplier, np.int64),
            np.maximum(s, 0), np.minimum(s, 0)]
    table = _pad(np.stack(cols, axis=1), 0, channels_to)  # [C, 4]
    table = table.reshape(-1, 4, 4).transpose(0, 2, 1)  # [groups, field, lane]
    return table.astype(np.int32).reshape(-1)


def mve_requant_fields(table: np.ndarray, channels: int) -> np.ndarray:
    """mve_requant's table back as [channel, field] (bias, multiplier, left shift, minus the
    right shift) for its first `channels` channels."""
    return np.asarray(table).reshape(-1, 4, 4).transpose(0, 2, 1).reshape(-1, 4)[:channels]


def even_odd_order(channels: int) -> np.ndarray:
    """Channel order of the Helium depthwise kernel's groups of eight: the even channels of
    each group, then its odd ones (VMULLB / VMULLT's lanes)."""
    base = np.arange(0, channels, 8)[:, None]
    return (base + np.array([0, 2, 4, 6, 1, 3, 5, 7])).reshape(-1)


# -- neon_dotprod ----------------------------------------------------------------------------

def sdot_gemm_blocks(rows: np.ndarray, k_multiple: int = 16) -> np.ndarray:
    """[O, K] int8 weights for the SDOT GEMM kernels (runtime_c/kiln_neon_s8.h), as bytes: K
    zero-padded to a multiple of `k_multiple` (16: whole column vectors; the convolution's
    8-row tile in runtime_c/kiln_neon_sdot.h takes 4, one SDOT quad) and O to a multiple of 8;
    for each block of eight rows and each group of four k, the four bytes of each row in turn,
    so that one 16-byte load brings four rows' quads for SDOT (by element) against one lane of
    a column."""
    o, k = rows.shape
    padded = _pad(_pad(np.asarray(rows, np.int8), 1, round_up(k, k_multiple)), 0, round_up(o, 8))
    blocks = padded.reshape(-1, 8, padded.shape[1] // 4, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks).reshape(-1)


def sdot_slide_order(packed: np.ndarray, k_h: int, k_w: int, in_c: int) -> np.ndarray:
    """sdot_gemm_blocks' bytes of a k_h x k_w window of in_c (a multiple of 16) channels, each
    block of eight rows' 16-k groups reordered from (kernel row, kernel column, channel group)
    to (kernel row, channel group, kernel column): the order in which runtime_c/kiln_neon_sdot.h's
    kiln_neon_sdot8_slide3 takes them, one channel group of the row's pixels loaded at a time."""
    groups = packed.reshape(-1, k_h, k_w, in_c // 16, 128).transpose(0, 1, 3, 2, 4)
    return np.ascontiguousarray(groups).reshape(-1)
