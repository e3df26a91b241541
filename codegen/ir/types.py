"""Typed values of the IR: dtype, static shape, optional quantization, optional constant data."""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

# The dtypes Kiln knows, with the C type that stores one element.
C_TYPES = {
    "float32": "float",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "uint16": "uint16_t",
    "int32": "int32_t",
    "uint32": "uint32_t",
    "int64": "int64_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
}

# Storage-only dtypes: model inputs and outputs and Cast ends; Kiln computes them as COMPUTE_DTYPE.
# Narrow floats travel through the C API as their bit patterns (float16 and bfloat16 in a
# uint16_t, float8 and float4 in a uint8_t, one element per byte); sub-byte integers one per byte.
STORAGE_FLOATS = {"float64": "double", "float16": "uint16_t", "bfloat16": "uint16_t",
                  "float8e4m3fn": "uint8_t", "float8e4m3fnuz": "uint8_t", "float8e5m2": "uint8_t",
                  "float8e5m2fnuz": "uint8_t", "float8e8m0": "uint8_t", "float4e2m1": "uint8_t"}
STORAGE_INTS = {"int4": "int8_t", "uint4": "uint8_t", "int2": "int8_t", "uint2": "uint8_t"}
C_TYPES.update(STORAGE_FLOATS)
C_TYPES.update(STORAGE_INTS)
COMPUTE_DTYPE = {**{d: "float32" for d in STORAGE_FLOATS}, "int4": "int8", "uint4": "uint8", "int2": "int8",
                 "uint2": "uint8"}
INTEGER_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
# The suffix of a kernel computing a dtype: add_f32, add_i8, ..., equal_b8 (bool: one byte, 0 or 1).
C_SUFFIX = {"float32": "f32", "int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32",
            "uint32": "u32", "int64": "i64", "uint64": "u64", "bool": "b8"}


def int_bits(dtype: str) -> int:
    """Width in bits of an integer dtype."""
    return int(np.dtype(dtype).itemsize) * 8


def wrap_ctype(dtype: str) -> str:
    """The unsigned C type (at least 32 bits, so no promotion to a signed int) in which
    arithmetic on an integer dtype wraps modulo 2^bits as ONNX defines it."""
    return C_TYPES[f"uint{max(int_bits(dtype), 32)}"]

# numpy types of the dtypes numpy lacks (ml_dtypes, which onnx uses for the same tensors)
_NUMPY_NAMES = {"bool": np.bool_, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
                "float8e4m3fn": ml_dtypes.float8_e4m3fn, "float8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
                "float8e5m2": ml_dtypes.float8_e5m2, "float8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
                "float8e8m0": ml_dtypes.float8_e8m0fnu,
                "float4e2m1": ml_dtypes.float4_e2m1fn, "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4,
                "int2": ml_dtypes.int2, "uint2": ml_dtypes.uint2}


def np_dtype(dtype: str) -> np.dtype:
    return np.dtype(_NUMPY_NAMES.get(dtype, dtype))


def dtype_name(dt: np.dtype) -> str | None:
    """Kiln's name of a numpy dtype (None for one Kiln does not store)."""
    return _NAME_OF_NUMPY.get(np.dtype(dt))


def compute_dtype(dtype: str) -> str:
    """The dtype Kiln's kernels compute a tensor of `dtype` in (itself, or float32 for the
    storage-only floats, int8/uint8 for the sub-byte integers)."""
    return COMPUTE_DTYPE.get(dtype, dtype)


_NAME_OF_NUMPY = {np_dtype(d): d for d in C_TYPES}


@dataclass(frozen=True)
class Quant:
    """Affine quantization: real = scale * (q - zero_point).

    Per-tensor when `scale` has one element; per-channel along `axis` otherwise.
    """

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None = None
    # An ONNX uint8 tensor that Kiln holds as int8 (values and zero point shifted by -128):
    # onnxruntime's numerics compute some ops on the uint8 values (codegen/kernels/onnxruntime/).
    # Not part of equality: the same grid either way.
    unsigned: bool = field(default=False, compare=False)

    @staticmethod
    def of(scale, zero_point=0, axis: int | None = None) -> "Quant":
        scales = tuple(float(s) for s in np.atleast_1d(np.asarray(scale, dtype=np.float64)))
        zps = np.atleast_1d(np.asarray(zero_point, dtype=np.int64))
        if zps.size == 1 and len(scales) > 1:
            zps = np.repeat(zps, len(scales))
        return Quant(scales, tuple(int(z) for z in zps), axis if len(scales) > 1 else None)

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1

    @property
    def s(self) -> float:
        """The per-tensor scale (error to ask on a per-channel quantization)."""
        if self.per_channel:
            raise ValueError("per-channel quantization has no single scale")
        return self.scale[0]

    @property
    def zp(self) -> int:
        return self.zero_point[0]


@dataclass(frozen=True, eq=False)
class StateVar:
    """A resource variable that persists between calls (TFLite VAR_HANDLE)."""

    variable: str  # the model's name for it (TFLite's shared_name)
    init: np.ndarray  # its value before the first call and after N_reset()
    output: str | None  # the graph output holding its value for the next call; None: unchanged


@dataclass
class Value:
    """A tensor of the graph: an input, an activation, an output or a constant (`data` set)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    quant: Quant | None = None
    data: np.ndarray | None = field(default=None, repr=False)
    # A graph input the build is specialised to (`--specialize`): the graph reads this value as
    # a constant, and the generated code refuses any other (codegen.emit.guards).
    specialized: np.ndarray | None = field(default=None, repr=False)
    # A streaming model's variable as it stands when a call starts: a graph input while the
    # passes run, kept in the persistent state region by the generated code (codegen/lower/state.py).
    state: "StateVar | None" = field(default=None, repr=False)
    # A graph input's dimensions that the model leaves without a size and no --input-shape gave
    # (an ONNX dynamic batch): compiled at their size in `shape`, 1; the manifest lists them and
    # `kiln build` says so. (A TFLite input's -1 in its shape signature has the size in its shape.)
    open_dims: tuple[int, ...] = ()

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * np_dtype(self.dtype).itemsize

    @property
    def ctype(self) -> str:
        return C_TYPES[self.dtype]

    def type_str(self) -> str:
        q = ""
        if self.quant is not None:
            if self.quant.per_channel:
                q = f" q[axis={self.quant.axis}, {len(self.quant.scale)} scales]"
            else:
                q = f" q[{self.quant.s:.6g}, {self.quant.zp}]"
        return f"{self.dtype}[{'x'.join(str(d) for d in self.shape)}]{q}"
