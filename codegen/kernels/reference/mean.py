"""templates/kernels/reference/mean_{f32,quantized}.c.j2: the mean over the reduced axes, walked as
kept and reduced loops (codegen/ops/mean.py reduce_plan); int8 and int16 (mean_s8, mean_s16 of the
mean_quantized family) with TFLM's folded multiplier."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, kernel_family, typed_kernels


@dataclass(frozen=True)
class ReduceLoops:
    kept_dims: tuple[int, ...]  # kept loops (outermost first), merged, padded with 1
    kept_strides: tuple[int, ...]  # their input element strides
    red_dims: tuple[int, ...]  # reduced loops, likewise
    red_strides: tuple[int, ...]


@dataclass(frozen=True)
class MeanF32(ReduceLoops):
    count: float  # elements per output


@dataclass(frozen=True)
class MeanS8(ReduceLoops):
    zp_times_count: int  # input zero point * elements per output (mod 2^32)
    multiplier: int  # s_in / s_out / count as TFLM's QuantizedMeanOrSum folds it
    shift: int
    output_zero_point: int


typed_kernels(REFERENCE, MeanF32, "mean_f32")
kernel_family("mean_quantized", {f"mean_{sfx}": {"function": f"mean_{sfx}", "ctype": ctype, "sfx": sfx}
                                  for sfx, ctype in (("s8", "int8_t"), ("s16", "int16_t"))}, params=MeanS8)
