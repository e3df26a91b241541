"""AArch64 NEON with the dot product extension (SDOT): the GEMM kernels; every other kernel
comes from neon, then reference."""
