"""AArch64 NEON kernels: runtime_c/kiln_neon_s8.h for int8; float32 micro-kernels in the
templates (templates/kernels/neon/_gemm_f32.c.j2, _binary_f32, _pool2d_f32)."""

from codegen.kernels.spec import same_params

# Faster kernels over the reference parameter block (their templates read the same struct).
same_params("neon", "add_f32", "sub_f32", "mul_f32", "average_pool2d_f32", "average_pool2d_s8",
            "max_pool2d_f32", "softmax_f32")
same_params("neon", "matmul_f32")  # templates/kernels/neon/matmul_f32.c.j2: FMLA tiles of 4 rows x 8 columns
