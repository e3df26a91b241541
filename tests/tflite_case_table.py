"""The single-operator cases of each TFLite builtin, by type: `cases_for(builtin, dtype)`.

Shapes are small and odd-sized; attributes cover the edge cases TFLite defines (masks,
negative axes, align_corners / half_pixel_centers, SAME padding with odd totals, broadcast).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tflite_cases import QUANT, Case, i32, t
from tflite_models import const

RNG = np.random.default_rng(2024)
S = (2, 3, 4)

Builder = Callable[[str], list]
BUILDERS: dict[str, Builder] = {}


def builds(*codes: str):
    def register(fn: Builder) -> Builder:
        for code in codes:
            BUILDERS[code] = lambda dtype, fn=fn, code=code: fn(code, dtype)
        return fn
    return register


def cases_for(builtin: str, dtype: str) -> list[Case]:
    builder = BUILDERS.get(builtin)
    return builder(dtype) if builder else []


def _weights(shape, dtype):
    if dtype == "float32":
        return RNG.standard_normal(shape).astype(np.float32)
    return RNG.integers(-127, 128, shape).astype(dtype)


# -- elementwise ------------------------------------------------------------------------------------

_DOMAIN = {"LOG": "positive", "SQRT": "positive", "RSQRT": "positive"}
# Output quantization TFLite Micro requires for its fixed-output-range int8/int16 kernels.
_OUT_QUANT = {("LOGISTIC", "int8"): (1 / 256, -128), ("TANH", "int8"): (1 / 128, 0),
              ("SOFTMAX", "int8"): (1 / 256, -128), ("LOG_SOFTMAX", "int8"): (16 / 256, 127),
              ("LOGISTIC", "int16"): (1 / 32768, 0), ("TANH", "int16"): (1 / 32768, 0),
              ("SOFTMAX", "int16"): (1 / 32768, 0)}


@builds("ABS", "CEIL", "COS", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "SIN", "SQRT", "RSQRT", "SQUARE",
        "HARD_SWISH", "ELU", "LOGISTIC", "TANH", "RELU", "RELU6", "LOGICAL_NOT", "L2_NORMALIZATION",
        "LOG_SOFTMAX", "SOFTMAX", "LEAKY_RELU")
def unary(code, dtype):
    opts = {"LEAKY_RELU": {"alpha": 0.2}, "SOFTMAX": {"beta": 1.0}}.get(code, {})
    q = _OUT_QUANT.get((code, dtype))
    out = t(S, dtype, scale=q[0], zero_point=q[1]) if q else t(S, dtype)
    cases = [Case(code, dtype, "basic", [t(S, dtype)], [out], opts, domain=_DOMAIN.get(code, "any"))]
    if code in ("ABS", "LEAKY_RELU", "ELU") and dtype == "int8":  # every stored value, rescaled (lut.py)
        every = np.arange(-128, 128, dtype=np.int8)
        cases.append(Case(code, dtype, "all_values_rescaled", [t((256,), dtype)],
                          [t((256,), dtype, scale=0.03, zero_point=5)], {"LEAKY_RELU": {"alpha": 0.3}}.get(code, {}),
                          feeds=[every]))
    if code == "SOFTMAX" and dtype == "int16":  # long rows, a small input scale, beta != 1
        cases.append(Case(code, dtype, "rows37_beta0.7", [t((4, 37), dtype, scale=0.0003)],
                          [t((4, 37), dtype, scale=q[0], zero_point=0)], {"beta": 0.7}))
    if code in ("ABS", "LEAKY_RELU") and dtype == "int16":  # a rescaled output (zero points stay 0)
        cases.append(Case(code, dtype, "rescaled", [t(S, dtype)], [t(S, dtype, scale=0.0013)], opts))
    if code in ("LOGISTIC", "TANH") and dtype == "int16":  # TFLM's power-of-two input paths and a general scale
        for label, scale in (("pot_scale_shift0", 2.0 ** -12), ("pot_scale_shift1", 2.0 ** -11), ("scale_0.0003", 0.0003)):
            cases.append(Case(code, dtype, label, [t(S, dtype, scale=scale)], [out]))
    if code == "ROUND" and dtype == "float32":  # halves round to even
        x = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997]], np.float32)
        cases.append(Case(code, dtype, "halves", [t(x.shape)], [t(x.shape)], feeds=[x]))
    return cases


def _pair_shapes(code):
    return [t(S), t((1, 3, 4))] if code != "PRELU" else [t(S), t((4,))]


@builds("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "FLOOR_DIV", "FLOOR_MOD",
        "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "LOGICAL_AND", "LOGICAL_OR")
def binary(code, dtype):
    bool_out = code in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")
    b_shape = (1, 3, 4)
    b = t(b_shape, dtype)
    out = t(S, "bool") if bool_out else t(S, dtype)
    domain = "nonzero" if code in ("DIV", "FLOOR_DIV", "FLOOR_MOD") else "any"
    cases = [Case(code, dtype, "broadcast", [t(S, dtype), b], [out], domain=domain)]
    if code in ("ADD", "MUL", "DIV") and dtype == "float32":
        cases.append(Case(code, dtype, "relu6", [t(S, dtype), t(S, dtype)], [t(S, dtype)],
                          {"fused_activation_function": "RELU6"}, domain=domain))
    if code in ("ADD", "SUB", "MUL") and dtype == "int16":  # other scales, a fused clamp, same shapes
        scales = (0.003, 0.0005, 0.004) if code != "MUL" else (0.004, 0.002, 0.5)
        cases.append(Case(code, dtype, "scales_relu_no_broadcast", [t(S, dtype, scale=scales[0]), t(S, dtype, scale=scales[1])],
                          [t(S, dtype, scale=scales[2])], {"fused_activation_function": "RELU"}))
    return cases


@builds("PRELU")
def prelu(code, dtype):
    """alpha a constant per channel (TFLM reads it as int8 for int16 inputs too); quantized edge
    cases: a scalar alpha, alphas at the int8 extremes, an output coarser than the input."""
    if dtype == "float32":
        alpha = const(_weights((4,), dtype) * 0.25, dtype)
        return [Case(code, dtype, "broadcast", [t(S, dtype), alpha], [t(S, dtype)])]
    cases = [Case(code, dtype, "broadcast", [t(S, dtype), const(_weights((4,), "int8"), "int8", scale=0.05, zero_point=-3)],
                  [t(S, dtype)])]
    out_zp = -5 if dtype == "int8" else 0
    extremes = const(np.array([-128, 127, 0, -1], np.int8), "int8", scale=0.004, zero_point=7)
    cases.append(Case(code, dtype, "extreme_alphas_rescaled", [t(S, dtype), extremes],
                      [t(S, dtype, scale=QUANT[dtype]["scale"] * 1.7, zero_point=out_zp)]))
    scalar = const(np.array([[[-90]]], np.int8), "int8", scale=0.01, zero_point=0)
    cases.append(Case(code, dtype, "scalar_alpha", [t(S, dtype), scalar], [t(S, dtype)]))
    return cases


@builds("ADD_N")
def add_n(code, dtype):
    cases = [Case(code, dtype, "three", [t(S, dtype)] * 3, [t(S, dtype)])]
    if dtype == "int8":  # TFLM starts its sum at -zp: a nonzero input zero point and a coarser output show it
        x = t(S, dtype, scale=0.02, zero_point=37)
        cases.append(Case(code, dtype, "five_zp37_rescaled", [x] * 5, [t(S, dtype, scale=0.09, zero_point=-11)]))
        cases.append(Case(code, dtype, "two_saturating", [t(S, dtype, scale=0.05, zero_point=-100)] * 2,
                          [t(S, dtype, scale=0.03, zero_point=0)]))
    return cases


@builds("SELECT_V2")
def select_v2(code, dtype):
    return [Case(code, dtype, "broadcast", [t((1, 3, 4), "bool"), t(S, dtype), t((1, 1, 4), dtype)], [t(S, dtype)])]


@builds("CAST")
def cast(code, dtype):
    targets = {"float32": ["int32", "bool"], "int32": ["float32", "int8"], "bool": ["float32", "int32"],
               "int8": ["int32"], "int16": ["int32"]}[dtype]
    src = dict(scale=None) if dtype in ("int8", "int16") else {}
    return [Case(code, dtype, f"to_{to}", [t(S, dtype, **src)], [t(S, to, scale=None)],
                 {"in_data_type": dtype.upper(), "out_data_type": to.upper()}) for to in targets]


# -- reductions ---------------------------------------------------------------------------------------

@builds("SUM", "REDUCE_MAX", "REDUCE_MIN", "MEAN", "REDUCE_ALL")
def reduce_(code, dtype):
    cases = [Case(code, dtype, "axes_keep", [t(S, dtype), i32([-1, 0])], [t((1, 3, 1), dtype)], {"keep_dims": True}),
             Case(code, dtype, "axis1", [t(S, dtype), i32([1])], [t((2, 4), dtype)], {"keep_dims": False})]
    if code == "SUM" and dtype in ("int8", "int16"):  # an output scale the sums fit in
        cases.append(Case(code, dtype, "hw_rescaled", [t((1, 5, 6, 3), dtype), i32([1, 2])],
                          [t((1, 3), dtype, scale=0.5 if dtype == "int8" else 0.05, zero_point=0)], {"keep_dims": False}))
    if code == "MEAN" and dtype == "int16":  # a rescaled output over the spatial axes
        cases.append(Case(code, dtype, "hw_rescaled", [t((1, 5, 6, 3), dtype), i32([1, 2])],
                          [t((1, 3), dtype, scale=0.0007)], {"keep_dims": False}))
    return cases


@builds("ARG_MAX", "ARG_MIN")
def arg_(code, dtype):
    x = np.zeros((2, 5), np.float32 if dtype == "float32" else dtype)
    x[:, 1] = x[:, 3] = 1  # ties: the first index wins
    cases = [Case(code, dtype, "axis-1_int32", [t(S, dtype), i32([-1])], [t((2, 3), "int32", scale=None)],
                  {"output_type": "INT32"}),
             Case(code, dtype, "ties", [t((2, 5), dtype), i32([1])], [t((2,), "int32", scale=None)],
                  {"output_type": "INT32"}, feeds=[x])]
    if dtype == "float32":  # TFLite Micro's int8 kernel writes int32 only
        cases.append(Case(code, dtype, "axis0_int64", [t(S, dtype), i32([0])], [t((3, 4), "int64", scale=None)],
                          {"output_type": "INT64"}))
    return cases


@builds("CUMSUM")
def cumsum(code, dtype):
    return [Case(code, dtype, f"ex{int(ex)}_rev{int(rev)}", [t(S, dtype), i32(1)], [t(S, dtype)],
                 {"exclusive": ex, "reverse": rev}) for ex, rev in ((False, False), (True, True))]


# -- data movement ------------------------------------------------------------------------------------

@builds("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def reshape(code, dtype):
    if code == "RESHAPE":
        return [Case(code, dtype, "flatten", [t(S, dtype), i32([6, 4])], [t((6, 4), dtype)], {"new_shape": [6, 4]})]
    if code == "SQUEEZE":
        return [Case(code, dtype, "dims", [t((1, 3, 1, 4), dtype)], [t((3, 4), dtype)], {"squeeze_dims": [0, 2]})]
    return [Case(code, dtype, "axis-1", [t(S, dtype), i32([-1])], [t((2, 3, 4, 1), dtype)])]


@builds("TRANSPOSE")
def transpose(code, dtype):
    return [Case(code, dtype, "perm", [t(S, dtype), i32([2, 0, 1])], [t((4, 2, 3), dtype)])]


@builds("CONCATENATION")
def concatenation(code, dtype):
    return [Case(code, dtype, "axis-1", [t(S, dtype), t((2, 3, 2), dtype)], [t((2, 3, 6), dtype)], {"axis": -1})]


@builds("PACK")
def pack(code, dtype):
    return [Case(code, dtype, "axis1", [t((3, 4), dtype)] * 3, [t((3, 3, 4), dtype)], {"values_count": 3, "axis": 1}),
            Case(code, dtype, "axis-1", [t((3, 4), dtype)] * 2, [t((3, 4, 2), dtype)], {"values_count": 2, "axis": -1})]


@builds("UNPACK")
def unpack(code, dtype):
    return [Case(code, dtype, "axis1", [t(S, dtype)], [t((2, 4), dtype)] * 3, {"num": 3, "axis": 1})]


@builds("SPLIT")
def split(code, dtype):
    return [Case(code, dtype, "axis-1", [i32(-1), t(S, dtype)], [t((2, 3, 2), dtype)] * 2, {"num_splits": 2})]


@builds("SPLIT_V")
def split_v(code, dtype):
    return [Case(code, dtype, "rest", [t((2, 6, 3), dtype), i32([1, -1, 2]), i32(1)],
                 [t((2, 1, 3), dtype), t((2, 3, 3), dtype), t((2, 2, 3), dtype)], {"num_splits": 3})]


@builds("SLICE")
def slice_(code, dtype):
    return [Case(code, dtype, "size-1", [t(S, dtype), i32([1, 0, 1]), i32([1, -1, 2])], [t((1, 3, 2), dtype)])]


@builds("STRIDED_SLICE")
def strided_slice(code, dtype):
    x = t((3, 5, 4), dtype)
    cases = [
        Case(code, dtype, "masks_neg_stride", [x, i32([0, 4, 1]), i32([2, 0, 3]), i32([1, -2, 1])],
             [t((3, 2, 2), dtype)], {"begin_mask": 1, "end_mask": 1}),
        Case(code, dtype, "shrink", [x, i32([1, 0, -1]), i32([2, 5, 0]), i32([1, 2, 1])], [t((3,), dtype)],
             {"shrink_axis_mask": 5}),
    ]
    if dtype == "float32":  # TFLite Micro ignores these; LiteRT's semantics
        cases += [
            Case(code, dtype, "ellipsis_new_axis", [x, i32([0, 0, 1]), i32([0, 0, 3]), i32([1, 1, 1])],
                 [t((3, 5, 1, 2), dtype)], {"ellipsis_mask": 1, "new_axis_mask": 2}),
            Case(code, dtype, "offset", [x, i32([1, 1, 0]), i32([2, 3, 4]), i32([1, 1, 2])], [t((2, 3, 2), dtype)],
                 {"offset": True}),
        ]
    return cases


@builds("GATHER")
def gather(code, dtype):
    return [Case(code, dtype, "axis1", [t(S, dtype), i32([[2, 0], [1, 1]])], [t((2, 2, 2, 4), dtype)], {"axis": 1}),
            Case(code, dtype, "axis-1_runtime_idx", [t(S, dtype), t((3,), "int32", scale=None)], [t((2, 3, 3), dtype)],
                 {"axis": -1}, feeds=[np.zeros(S, dtype if dtype != "float32" else np.float32) + 1,
                                      np.array([3, 0, 2], np.int32)])]


@builds("GATHER_ND")
def gather_nd(code, dtype):
    return [Case(code, dtype, "depth2", [t(S, dtype), i32([[1, 2], [0, 0], [1, 0]])], [t((3, 4), dtype)])]


@builds("EMBEDDING_LOOKUP")
def embedding_lookup(code, dtype):
    if dtype == "int8":
        rows = const(_weights((5, 3), "int8"), "int8", scale=0.1, zero_point=0)
        return [Case(code, dtype, "hybrid", [t((4,), "int32", scale=None), rows], [t((4, 3))],
                     feeds=[np.array([4, 0, 2, 4], np.int32)])]
    return [Case(code, dtype, "rows", [t((4,), "int32", scale=None), const(_weights((5, 3), dtype))], [t((4, 3))],
                 feeds=[np.array([4, 0, 2, 4], np.int32)])]


@builds("BROADCAST_TO")
def broadcast_to(code, dtype):
    return [Case(code, dtype, "grow", [t((3, 1), dtype), i32([2, 3, 4])], [t(S, dtype)])]


@builds("BROADCAST_ARGS")
def broadcast_args(code, dtype):
    return [Case(code, dtype, "runtime", [t((3,), dtype, scale=None), t((2,), dtype, scale=None)],
                 [t((3,), dtype, scale=None)], feeds=[np.array([2, 1, 4], dtype), np.array([3, 1], dtype)])]


@builds("FILL")
def fill(code, dtype):
    value = const(np.array(3, np.float32 if dtype == "float32" else dtype), dtype, **QUANT.get(dtype, {}))
    return [Case(code, dtype, "const_value", [i32([2, 3]), value], [t((2, 3), dtype)]),
            Case(code, dtype, "runtime_value", [i32([2, 3]), t((), dtype)], [t((2, 3), dtype)])]


@builds("ZEROS_LIKE")
def zeros_like(code, dtype):
    return [Case(code, dtype, "basic", [t(S, dtype)], [t(S, dtype)])]


@builds("SHAPE")
def shape_(code, dtype):
    return [Case(code, dtype, "of_float", [t(S)], [t((3,), dtype, scale=None)], {"out_type": dtype.upper()})]


@builds("REVERSE_V2")
def reverse_v2(code, dtype):
    return [Case(code, dtype, "two_axes", [t(S, dtype), i32([1, 2])], [t(S, dtype)]),
            Case(code, dtype, "last", [t(S, dtype), i32([-1])], [t(S, dtype)])]


@builds("PAD", "PADV2")
def pad(code, dtype):
    ins = [t(S, dtype), i32([[0, 1], [2, 0], [1, 1]])]
    if code == "PADV2":
        ins.append(const(np.array([3], np.float32 if dtype == "float32" else dtype), dtype,
                         **({} if dtype in ("float32", "int32") else dict(scale=0.05, zero_point=-3))))
    return [Case(code, dtype, "mixed", ins, [t((3, 5, 6), dtype)])]


@builds("MIRROR_PAD")
def mirror_pad(code, dtype):
    pads = i32([[1, 1], [2, 0], [0, 3]])
    return [Case(code, dtype, mode.lower(), [t((3, 4, 4), dtype), pads], [t((5, 6, 7), dtype)], {"mode": m})
            for mode, m in (("REFLECT", 0), ("SYMMETRIC", 1))]


# -- spatial -----------------------------------------------------------------------------------------

@builds("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def depth_space(code, dtype):
    if code == "DEPTH_TO_SPACE":
        return [Case(code, dtype, "b2", [t((1, 2, 3, 8), dtype)], [t((1, 4, 6, 2), dtype)], {"block_size": 2})]
    return [Case(code, dtype, "b2", [t((1, 4, 6, 2), dtype)], [t((1, 2, 3, 8), dtype)], {"block_size": 2})]


@builds("BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND")
def batch_space(code, dtype):
    if dtype == "int8" and code == "SPACE_TO_BATCH_ND":  # padded int8 is refused (ops_spatial)
        return [Case(code, dtype, "no_pads", [t((1, 4, 6, 2), dtype), i32([2, 2]), i32([[0, 0], [0, 0]])],
                     [t((4, 2, 3, 2), dtype)])]
    if code == "BATCH_TO_SPACE_ND":
        return [Case(code, dtype, "crops", [t((4, 2, 3, 2), dtype), i32([2, 2]), i32([[0, 1], [1, 0]])],
                     [t((1, 3, 5, 2), dtype)])]
    return [Case(code, dtype, "pads", [t((1, 3, 5, 2), dtype), i32([2, 2]), i32([[0, 1], [1, 0]])],
                 [t((4, 2, 3, 2), dtype)])]


@builds("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def resize(code, dtype):
    cases = []
    for label, align, half, size in (("asymmetric", False, False, (7, 5)), ("align_corners", True, False, (7, 5)),
                                     ("half_pixel", False, True, (7, 5)), ("shrink_half_pixel", False, True, (2, 3))):
        cases.append(Case(code, dtype, label, [t((1, 3, 4, 2), dtype), i32(list(size))], [t((1, *size, 2), dtype)],
                          {"align_corners": align, "half_pixel_centers": half}))
    return cases


def _conv_opts(padding="SAME", stride=1, act="NONE"):
    return {"padding": padding, "stride_w": stride, "stride_h": stride, "fused_activation_function": act}


def _bias(n, dtype, wscale=0.01):
    if dtype == "float32":
        return const(RNG.standard_normal(n).astype(np.float32))
    bias_type = "int64" if dtype == "int16" else "int32"
    return const(RNG.integers(-300, 300, n).astype(bias_type), bias_type, scale=0.05 * wscale)


def _filter(shape, dtype):
    return const(_weights(shape, "float32" if dtype == "float32" else "int8"),
                 "float32" if dtype == "float32" else "int8", **({} if dtype == "float32" else dict(scale=0.01)))


@builds("TRANSPOSE_CONV")
def transpose_conv(code, dtype):
    w = _filter((3, 3, 3, 2), dtype)
    return [Case(code, dtype, "same_s2", [i32([1, 8, 6, 3]), w, t((1, 4, 3, 2), dtype), _bias(3, dtype)],
                 [t((1, 8, 6, 3), dtype, scale=0.1) if dtype != "float32" else t((1, 8, 6, 3))], _conv_opts("SAME", 2)),
            Case(code, dtype, "valid_s2_odd", [i32([1, 9, 7, 3]), w, t((1, 4, 3, 2), dtype), None],
                 [t((1, 9, 7, 3), dtype, scale=0.1) if dtype != "float32" else t((1, 9, 7, 3))],
                 _conv_opts("VALID", 2))] + (_transpose_conv_16x8(code) if dtype == "int16" else [])


def _transpose_conv_16x8(code):
    """16x8: per-channel weight scales, stride 1 and unequal strides, a fused RELU, two batches."""
    per_channel = const(_weights((4, 2, 3, 3), "int8"), "int8", scale=list(RNG.uniform(0.002, 0.02, 4)))
    x, y = t((2, 3, 4, 3), "int16", scale=0.004), t((2, 3, 4, 4), "int16", scale=0.02)
    unequal = {**_conv_opts("VALID", 1, "RELU"), "stride_h": 3, "stride_w": 2}
    return [Case(code, "int16", "same_s1_per_channel", [i32([2, 3, 4, 4]), per_channel, x, _bias(4, "int16")], [y],
                 _conv_opts("SAME", 1)),
            Case(code, "int16", "valid_s3x2_relu", [i32([2, 8, 9, 4]), per_channel, x, _bias(4, "int16")],
                 [t((2, 8, 9, 4), "int16", scale=0.01)], unequal)]


@builds("CONV_2D", "DEPTHWISE_CONV_2D")
def conv(code, dtype):
    w = _filter((3, 3, 3, 2) if code == "CONV_2D" else (1, 3, 3, 4), dtype)
    c = 3 if code == "CONV_2D" else 4
    opts = {**_conv_opts("SAME", 2, "RELU"), "dilation_w_factor": 1, "dilation_h_factor": 1}
    if code == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = 2
    out = t((1, 3, 4, c), dtype, scale=0.1) if dtype != "float32" else t((1, 3, 4, c))
    cases = [Case(code, dtype, "same_s2_relu", [t((1, 5, 7, 2), dtype), w, _bias(c, dtype)], [out], opts)]
    if dtype == "int16":  # 16x8: per-channel weights, dilation, no bias
        cases.append(_conv_16x8_valid(code, c))
    return cases


def _conv_16x8_valid(code, c):
    """VALID dilated 16x8 convolution with per-channel weight scales; CONV_2D without a
    bias (TFLite Micro's int16 DEPTHWISE_CONV_2D crashes without one)."""
    shape = (c, 3, 3, 2) if code == "CONV_2D" else (1, 3, 3, c)
    axis = 0 if code == "CONV_2D" else 3
    w = const(_weights(shape, "int8"), "int8", scale=list(RNG.uniform(0.002, 0.02, c)), quantized_dimension=axis)
    opts = {**_conv_opts("VALID", 1), "dilation_w_factor": 2, "dilation_h_factor": 1}
    if code == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = 2
    bias = None if code == "CONV_2D" else _bias(c, "int16", 0.01)
    return Case(code, "int16", "valid_dilated_per_channel" + ("_nobias" if bias is None else ""),
                [t((1, 5, 7, 2), "int16", scale=0.004), w, bias], [t((1, 3, 3, c), "int16", scale=0.05)], opts)


@builds("FULLY_CONNECTED")
def fully_connected(code, dtype):
    out = t((2, 3), dtype, scale=0.1) if dtype != "float32" else t((2, 3))
    cases = [Case(code, dtype, "bias", [t((2, 5), dtype), _filter((3, 5), dtype), _bias(3, dtype)], [out])]
    if dtype == "int16":  # per-channel weights, no bias, fused RELU, rows kept as [2, 3, K]
        w = const(_weights((4, 6), "int8"), "int8", scale=list(RNG.uniform(0.002, 0.02, 4)))
        cases.append(Case(code, dtype, "per_channel_nobias_keep_dims", [t((2, 3, 6), dtype), w, None],
                          [t((2, 3, 4), dtype, scale=0.01)], {"fused_activation_function": "RELU", "keep_num_dims": True}))
    return cases


@builds("BATCH_MATMUL")
def batch_matmul(code, dtype):
    def out(shape, scale):  # an output scale for the sums of products of full-range inputs
        return t(shape) if dtype == "float32" else t(shape, dtype, scale=scale * (2.5 if dtype == "int8" else 1))

    return [Case(code, dtype, "broadcast", [t((2, 3, 4), dtype), t((1, 4, 5), dtype)], [out((2, 3, 5), 0.25)]),
            # adjoint operands, rank-4 batch broadcast both ways, a longer sum
            Case(code, dtype, "adj_x_adj_y", [t((2, 4, 3), dtype), t((2, 5, 4), dtype)], [out((2, 3, 5), 0.25)],
                 {"adj_x": True, "adj_y": True}),
            Case(code, dtype, "rank4_broadcast_adj_y", [t((2, 1, 3, 7), dtype), t((1, 3, 2, 7), dtype)],
                 [out((2, 3, 3, 2), 0.3)], {"adj_y": True}),
            Case(code, dtype, "k40", [t((3, 40), dtype, scale=0.003) if dtype == "int16" else t((3, 40), dtype),
                                      t((40, 2), dtype)], [out((3, 2), 1.0)])]


@builds("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D")
def pool(code, dtype):
    opts = {"padding": "SAME", "stride_w": 2, "stride_h": 2, "filter_width": 3, "filter_height": 3}
    cases = [Case(code, dtype, "same_3x3_s2", [t((1, 5, 7, 2), dtype)], [t((1, 3, 4, 2), dtype)], opts)]
    if dtype == "int16" and code != "L2_POOL_2D":  # the fused clamp in int16 units (6 / 0.002)
        relu6 = {**opts, "padding": "VALID", "filter_width": 2, "filter_height": 2, "fused_activation_function": "RELU6"}
        cases.append(Case(code, dtype, "valid_2x2_s2_relu6", [t((1, 5, 7, 2), dtype)], [t((1, 2, 3, 2), dtype)], relu6))
    return cases


@builds("QUANTIZE")
def quantize(code, dtype):
    out = "int16" if dtype == "int8" else "int8"
    out_spec = t(S, out, scale=0.03, zero_point=0 if out == "int16" else 5)
    cases = [Case(code, dtype, f"to_{out}", [t(S, dtype)], [out_spec])]
    # The other integer pairs TFLite Micro requantizes (output quantization: scale, zero point).
    more = {"int8": {"uint8": (0.05, 125), "int32": (0.001, 7)},
            "int16": {"int16": (0.0007, 0), "int32": (0.0003, -2), "int8": (0.5, -4)}}.get(dtype, {})
    for to, (scale, zp) in more.items():
        cases.append(Case(code, dtype, f"to_{to}_rescaled", [t(S, dtype)], [t(S, to, scale=scale, zero_point=zp)]))
    return cases


@builds("DEQUANTIZE")
def dequantize(code, dtype):
    return [Case(code, dtype, "to_float", [t(S, dtype)], [t(S)])]


@builds("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")
def resource_variables(code, dtype):
    from tflite_streaming import StreamCase, streaming_model  # a stream of calls, with its own runner

    return [StreamCase(code, dtype, "int8_stream", [], [], make=lambda: streaming_model("int8")),
            StreamCase(code, dtype, "float32_stream_zero_init", [], [],
                       make=lambda: streaming_model("float32", zero_init=True))]


@builds("UNIDIRECTIONAL_SEQUENCE_LSTM")
def unidirectional_sequence_lstm(code, dtype):
    from tflite_recurrent_models import lstm_model
    from tflite_streaming import StreamCase

    reference = "litert" if dtype == "float32" else "tflm"  # int8: TFLite Micro's integer LSTM, bit for bit
    return [StreamCase(code, dtype, "batch_major", [], [], make=lambda: lstm_model(dtype=dtype), reference=reference),
            StreamCase(code, dtype, "time_major_batch2", [], [], reference=reference,
                       make=lambda: lstm_model(dtype=dtype, batch=2, time_major=True, seed=1))] + \
        ([StreamCase(code, dtype, "full_range_hidden_clip_steps9", [], [], make=lambda: lstm_model(
            dtype=dtype, batch=2, steps=9, hidden=6, hidden_scale=2 ** -15 if dtype == "int16" else 2 ** -7,
            cell_clip=0.5, seed=2))]
         if dtype != "float32" else [])  # hidden state over its type's whole range, a cell clip, 9 steps


@builds("SVDF")
def svdf(code, dtype):
    from tflite_recurrent_models import svdf_model
    from tflite_streaming import StreamCase

    return [StreamCase(code, dtype, "rank2", [], [], make=lambda: svdf_model(dtype)),
            StreamCase(code, dtype, "batch2_rank1", [], [], make=lambda: svdf_model(dtype, batch=2, rank=1, units=4,
                                                                                     seed=1))]


@builds("DYNAMIC_UPDATE_SLICE")
def dynamic_update_slice(code, dtype):
    """Start indices as a graph input (random, so mostly clamped at an edge) and as a constant."""
    operand, update = t((4, 5, 3), dtype), t((2, 3, 3), dtype)
    runtime = Case(code, dtype, "runtime_starts", [operand, update, t((3,), "int32")], [t((4, 5, 3), dtype)])
    fixed = Case(code, dtype, "const_starts_int64", [operand, update, const(np.array([1, 2, 0], np.int64))],
                 [t((4, 5, 3), dtype)])
    inner = [np.arange(6).astype(dtype), np.array([-7, 9]).astype(dtype), np.array([3], np.int32)]
    interior = Case(code, dtype, "interior_start", [t((6,), dtype), t((2,), dtype), t((1,), "int32")],
                    [t((6,), dtype)], feeds=inner)
    return [runtime, fixed, interior]


@builds("IF", "WHILE")
def control_flow(code, dtype):
    """Subgraphs inlined: IF on a run-time condition (float32 and int8 branches), WHILE unrolled."""
    from tflite_recurrent_models import if_model, while_model
    from tflite_streaming import StreamCase

    if code == "IF":
        return [StreamCase(code, dtype, "float32_branches", [], [], make=lambda: if_model("float32")),
                StreamCase(code, dtype, "int8_branches", [], [], make=lambda: if_model("int8"))]
    return [StreamCase(code, dtype, "three_trips", [], [], make=lambda: while_model(3)),
            StreamCase(code, dtype, "no_trip", [], [], make=lambda: while_model(0))]
