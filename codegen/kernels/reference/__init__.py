"""The reference kernels: portable C99, the definition of each computation.

The kernels whose parameter block the op lays out itself (most of them: an op names the kernels
it lowers to in `Op.kernels`) are registered from the op registry by codegen/kernels/spec.py;
the ones with a typed block and repacked constants have a module of their own beside this one.
"""
