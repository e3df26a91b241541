"""Bit-exact numpy emulation of TFLite Micro's int8 quantized arithmetic.

The compiler uses it to precompute kernel constants (multipliers, shifts, clamp bounds,
lookup tables) exactly as TFLM's Prepare would, and the tests use it as the oracle for the C
helpers in `runtime_c/kiln_quant.h`.

- `fixedpoint`: integer primitives (rounding doubling high multiply, rounding shifts,
  multiply-by-quantized-multiplier, ...).
- `gemmlowp_math`: gemmlowp's fixed-point exp, reciprocal, logistic, tanh.
- `params`: Prepare-time constants (QuantizeMultiplier, activation ranges, Add/Sub/Mul, ...).
- `elementwise`: Add, Sub, Mul, Quantize, Requantize, Dequantize kernels.
- `activations`: Softmax, Logistic, Tanh and the 256-entry LUT helper.
"""

from .activations import (
    SoftmaxParams,
    UnaryActivationParams,
    check_softmax_output,
    logistic_int8,
    logistic_tanh_params,
    softmax_int8,
    softmax_params,
    tanh_int8,
    unary_lut_int8,
)
from .elementwise import (
    add_int8,
    dequantize_int8,
    mul_int8,
    quantize_float_to_int8,
    requantize_int8,
    sub_int8,
)
from .fixedpoint import (
    multiply_by_quantized_multiplier,
    rounding_average,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)
from .params import (
    AddSubParams,
    MulParams,
    add_sub_params,
    conv_output_multipliers,
    fully_connected_output_multiplier,
    mul_params,
    quantize_multiplier,
    quantize_multiplier_array,
    quantized_activation_range,
    requantize_params,
)

__all__ = [
    "AddSubParams", "MulParams", "SoftmaxParams", "UnaryActivationParams",
    "add_int8", "add_sub_params", "check_softmax_output", "conv_output_multipliers",
    "dequantize_int8", "fully_connected_output_multiplier", "logistic_int8",
    "logistic_tanh_params", "mul_int8", "mul_params", "multiply_by_quantized_multiplier",
    "quantize_float_to_int8", "quantize_multiplier", "quantize_multiplier_array",
    "quantized_activation_range", "requantize_int8", "requantize_params", "rounding_average",
    "rounding_divide_by_pot", "saturating_rounding_doubling_high_mul", "softmax_int8",
    "softmax_params", "sub_int8", "tanh_int8", "unary_lut_int8",
]
