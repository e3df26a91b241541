"""Typed values of the IR: dtype, static shape, optional quantization, optional constant data."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# The dtypes Kiln knows, with the C type that stores one element.
C_TYPES = {
    "float32": "float",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "bool": "uint8_t",
}


def np_dtype(dtype: str) -> np.dtype:
    return np.dtype(np.bool_ if dtype == "bool" else dtype)


@dataclass(frozen=True)
class Quant:
    """Affine quantization: real = scale * (q - zero_point).

    Per-tensor when `scale` has one element; per-channel along `axis` otherwise.
    """

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None = None

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


@dataclass
class Value:
    """A tensor of the graph: an input, an activation, an output or a constant (`data` set)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    quant: Quant | None = None
    data: np.ndarray | None = field(default=None, repr=False)

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
