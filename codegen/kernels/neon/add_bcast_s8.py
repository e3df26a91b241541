"""templates/kernels/neon/add_bcast_s8.c.j2: the reference block of the int8 Add, plus the
constants of its fast sixteen-lane loop when that loop equals TFLM's Add on every pair of
int8 inputs, which is checked here, at compile time, over all 256 x 256 pairs.

TFLM rounds four times: the smaller-scale input after its doubling high multiply and again by
its right shift, the sum likewise by the output's multiply and shift, the two shifts with the
-1 of RoundingDivideByPOT on negative values. The fast loop rounds the smaller-scale input once
(as x << 24 by one TBL, its right shift and those 4 bits folded into its multiplier), adds the input offsets as one constant after the
output multiply (beside the output's rounding and zero point), folds the output shift beyond
16 into its multiplier (ADDHN then does the 16) and drops both -1 steps: 30 instructions per
sixteen lanes instead of 50. It differs from TFLM only where a value falls within about 2^-17
of an output rounding boundary, so it is taken only when no pair of inputs does (about 93% of
random quantizations); otherwise the loop with TFLM's roundings runs.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from codegen.kernels.reference.families import AddQ, BinaryS8
from codegen.kernels.spec import REFERENCE, KernelSpec, Prepared, kernel_spec, lookup
from codegen.quant import add_int8
from codegen.quant.params import AddSubParams

HALF = (1 << 30, 0)  # TFLM's rescale of the larger-scale input: exactly 1/2


@dataclass(frozen=True)
class AddBcastS8Neon(BinaryS8):
    fast: int  # 1: the sixteen-lane loop rounds once (the constants below); 0: TFLM's roundings
    fast_multiplier: int  # the smaller-scale input's multiplier for x << 24, its right shift folded in
    fast_output_multiplier: int  # the output's multiplier, its right shift beyond 16 folded in
    fast_round: int  # added before the output's shift of 16: its rounding, zero point and the input offsets


def sixteen_lanes(q: AddQ) -> bool:
    """Whether the kernel's sixteen-lane loop computes this Add (kiln_add_bcast_s8_row16_fits)."""
    halves = HALF in ((q.input1_multiplier, q.input1_shift), (q.input2_multiplier, q.input2_shift))
    return (q.left_shift == 20 and halves and q.input1_shift <= 0 and q.input2_shift <= 0
            and -23 <= q.output_shift <= -16 and abs(q.input1_offset) <= 256 and abs(q.input2_offset) <= 256
            and -128 <= q.output_offset <= 128)


def every_pair() -> tuple[np.ndarray, np.ndarray]:
    index = np.arange(256 * 256, dtype=np.int64)
    return (index >> 8) - 128, (index & 255) - 128


def rounding_doubling_high_mul(a: np.ndarray, b: int) -> np.ndarray:
    """VQRDMULH on int32 lanes that cannot saturate (b > 0)."""
    return (a * b + (1 << 30)) >> 31


def rounded_shift(multiplier: int, shift: int) -> int:
    """A multiplier with a right shift folded in, rounded to nearest."""
    return (multiplier + (1 << shift >> 1)) >> shift


def fast_outputs(q: AddQ, multiplier: int, output_multiplier: int, round_: int) -> np.ndarray | None:
    """The fast loop's int8 outputs over every_pair(), lane for lane as the NEON code computes
    them (None where an intermediate would leave its register's range): the smaller-scale
    input x << 24 (TBL) by VQRDMULH, the halved one as x << 19, their sum by VQRDMULH, ADDHN with
    `round_` (a shift of 16), saturation to int8 and the clamp."""
    x1, x2 = every_pair()
    halved_1 = (q.input1_multiplier, q.input1_shift) == HALF
    halved, other = (x1, x2) if halved_1 else (x2, x1)
    total = rounding_doubling_high_mul(other << 24, multiplier) + (halved << 19)
    raised = rounding_doubling_high_mul(total, output_multiplier) + round_
    if np.abs(raised).max() >= 1 << 31:
        return None
    return np.clip(np.clip(raised >> 16, -128, 127), q.act_min, q.act_max)


def fast_candidates(q: AddQ) -> tuple[int, int, tuple[int, ...]]:
    """The fast loop's multipliers and the round constants to try: the output's rounding and
    zero point plus the two input offsets carried through both multipliers, rounded to
    nearest, then one either side."""
    halved_1 = (q.input1_multiplier, q.input1_shift) == HALF
    m, shift = (q.input2_multiplier, q.input2_shift) if halved_1 else (q.input1_multiplier, q.input1_shift)
    offset_h, offset_o = (q.input1_offset, q.input2_offset) if halved_1 else (q.input2_offset, q.input1_offset)
    multiplier = rounded_shift(m, 4 - shift)  # x << 24 instead of TFLM's x << 20
    output_multiplier = rounded_shift(q.output_multiplier, -q.output_shift - 16)
    offsets = (offset_o * multiplier / 2 ** 7 + offset_h * 2 ** 19) * output_multiplier / 2 ** 31
    base = ((2 * q.output_offset + 1) << 15) + int(np.floor(offsets + 0.5))
    return multiplier, output_multiplier, (base, base - 1, base + 1)


def fast_constants(q: AddQ) -> tuple[int, int, int] | None:
    """(fast_multiplier, fast_output_multiplier, fast_round) with which the fast loop equals
    TFLM's Add on every pair of inputs, or None."""
    if not sixteen_lanes(q):
        return None
    multiplier, output_multiplier, rounds = fast_candidates(q)
    x1, x2 = every_pair()
    tflm = add_int8(x1, x2, AddSubParams(*(getattr(q, f.name) for f in fields(q))))  # AddQ: its fields renamed
    for round_ in rounds:
        out = fast_outputs(q, multiplier, output_multiplier, round_)
        if out is not None and np.array_equal(out, tflm):
            return multiplier, output_multiplier, round_
    return None


@kernel_spec
class AddBcastS8NeonSpec(KernelSpec):
    kernel, variant, Params = "add_bcast_s8", "neon", AddBcastS8Neon

    @classmethod
    def prepare(cls, request, ctx):
        prepared = lookup(cls.kernel, REFERENCE).prepare(request, ctx)
        block = prepared.params
        fast = fast_constants(block.q) if isinstance(block.q, AddQ) else None
        multiplier, output_multiplier, round_ = fast or (0, 0, 0)
        params = AddBcastS8Neon(**{f.name: getattr(block, f.name) for f in fields(block)}, fast=int(fast is not None),
                                fast_multiplier=multiplier, fast_output_multiplier=output_multiplier,
                                fast_round=round_)
        return Prepared(params, prepared.args, prepared.headers)
