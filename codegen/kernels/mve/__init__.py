"""Armv8.1-M Helium kernels: runtime_c/kiln_mve.h."""

from codegen.kernels.linear import MVE_HEADERS
from codegen.kernels.spec import same_params

# Faster kernels over the reference parameter block (their templates read the same struct).
same_params("mve", "add_bcast_s8")
same_params("mve", "max_pool2d_s8", headers=MVE_HEADERS)
same_params("mve", "concat", headers=MVE_HEADERS)
