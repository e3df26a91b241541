"""TFLite Micro's 16-bit sigmoid and tanh (int16 LOGISTIC and TANH, and the gates of its integer
LSTM): a table of sigmoid at steps of 1/24 in 0.16 fixed point, interpolated linearly.

SIGMOID_TABLE_UINT16 was measured, not copied: TFLite Micro's int16 TANH and LOGISTIC were run
on all 65536 inputs (scale 2^-12 in, 2^-15 out) and each entry solved from their outputs, one
solution per entry (tests/ops/test_lstm_s8.py checks these functions against TFLite Micro on
every input again). No closed formula gives it: it is not round(65536 * sigmoid(i / 24)).
"""

from __future__ import annotations

import numpy as np

SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
], dtype=np.uint16)


def sigmoid_int16(x, multiplier: int = 3, right_shift: int = 0) -> np.ndarray:
    """TFLM reference_integer_ops::Logistic(int16) with the input rescaled by
    (x * multiplier + round) >> right_shift; output scale 2^-15."""
    v = _rescale(x, multiplier, right_shift)
    result = _interpolate(np.abs(v), 9, 0x7FFF << 10)
    result = np.where(v >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
    return (result >> 10).astype(np.int16)


def tanh_int16(x, multiplier: int = 3, right_shift: int = 0) -> np.ndarray:
    """TFLM reference_integer_ops::Tanh(int16), input rescaled as in `sigmoid_int16`."""
    v = _rescale(x, multiplier, right_shift)
    result = _interpolate(np.abs(v), 8, 0xFFFF << 8)
    result = np.where(v >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return (result >> 8).astype(np.int16)


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLM CheckedLog2 in float32: (whether x is a power of two within 1e-3 of its log2,
    log2(x) rounded half away from zero)."""
    v = np.float32(np.log(np.float32(x))) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    rounded = np.float32(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)))
    return bool(abs(np.float32(v - rounded)) < np.float32(1e-3)), int(rounded)


def int16_input_rescale(input_scale: float, pot_left_shifts: tuple[int, ...]) -> tuple[int, int]:
    """(multiplier, right_shift) that bring an int16 LOGISTIC / TANH input to the table's
    1/(3*4096) scale, as TFLM's Prepare and kernel compute them: a power-of-two scale whose
    left shift 12 + log2(scale) is one of `pot_left_shifts` (LOGISTIC 0; TANH 0, 1) takes
    3 << shift exactly; any other scale a 15-bit multiplier of s * 4096 * 3 and a right shift."""
    pot, log2 = checked_log2(input_scale)
    left_shift = 12 + log2
    if pot and left_shift in pot_left_shifts:
        return 3 << left_shift, 0
    m, shift = float(np.float32(input_scale)) * 4096.0 * 3.0, 0
    while m <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        m *= 2.0
    return int(m), shift


def _interpolate(a: np.ndarray, frac_bits: int, saturated: int) -> np.ndarray:
    """The table entry of |input| >> frac_bits and the next, weighted by the fraction below."""
    uh = a >> frac_bits
    table = SIGMOID_TABLE_UINT16.astype(np.int64)
    idx = np.minimum(uh, 254)
    interp = (table[idx] << frac_bits) + (a & ((1 << frac_bits) - 1)) * (table[idx + 1] - table[idx])
    return np.where(uh >= 255, saturated, interp)


def _rescale(x, multiplier: int, right_shift: int) -> np.ndarray:
    rounding = (1 << (right_shift - 1)) if right_shift > 0 else 0
    return (np.asarray(x, np.int64) * multiplier + rounding) >> right_shift
