"""The reference kernels: portable C99, the definition of each computation.

A reference kernel whose parameter block the op lays out itself (most of them: an op names the
kernels it lowers to in `Op.kernels`) is registered here with `same_params`; the ones with a
typed block and repacked constants have a module of their own beside this one.
"""

from codegen.kernels.spec import REFERENCE, lookup, same_params
from codegen.ops.registry import all_ops


def register_op_kernels() -> None:
    """Called once the typed specs are registered (codegen/kernels/spec.py loads them first)."""
    for op in all_ops().values():
        for kernel in op.kernels:
            if lookup(kernel, REFERENCE) is None:
                same_params(REFERENCE, kernel)
