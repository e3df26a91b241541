"""Kernels: which C kernel computes a node, with which typed parameter block.

An op's lowering describes what to compute (codegen/ops/request.KernelRequest); `select`
(select.py) is the only thing that chooses the kernel, among the specs of the target's
variants, and `planned` the in-place alternative once the memory plan is known. A spec
(spec.py) lives at codegen/kernels/<variant>/<kernel>.py beside its template
templates/kernels/<variant>/<kernel>.c.j2: its parameter block is a frozen dataclass that
tests/core/test_kernel_registry.py checks against the template's C struct, and its `prepare`
repacks the constants for that template (repack.py, repack_f32.py, linear.py).
"""
