"""templates/kernels/reference/label_encoder.c.j2: ONNX LabelEncoder over numbers
(codegen/ops/label_encoder.py), one kernel per (key, value) C type pair."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.types import C_TYPES
from codegen.kernels.spec import kernel_family
from codegen.ops.label_encoder import DTYPES, kernel_name
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class LabelEncoder:
    n: int  # elements
    count: int  # keys
    keys: ConstArray  # ascending, unique, no NaN
    values: ConstArray  # one per key, then the default, then the value of a NaN input


kernel_family("label_encoder", {kernel_name(k, v): {"name": kernel_name(k, v), "K": C_TYPES[k], "V": C_TYPES[v],
                                                    "float_keys": k == "float32"}
                                for k in DTYPES for v in DTYPES}, params=LabelEncoder)
