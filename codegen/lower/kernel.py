"""What lowering produces: kernel calls with their parameters, and the constant arrays they read.

The vocabulary is defined where it is made: arguments beside the op's kernel request
(codegen/ops/request.py), the call by the kernel registry (codegen/kernels/call.py)."""

from __future__ import annotations

from codegen.kernels.call import KernelCall
from codegen.ops.request import Arg, ConstArray, ParamValue, ScratchArg, TensorArg

__all__ = ["Arg", "ConstArray", "KernelCall", "ParamValue", "ScratchArg", "TensorArg"]
