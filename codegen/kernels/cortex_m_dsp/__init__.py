"""Armv7E-M DSP extension kernels (ACLE __smlad, __sxtb16): runtime_c/kiln_dsp.h."""

from codegen.kernels.linear import DSP_HEADERS
from codegen.kernels.spec import same_params

# Faster kernels over the reference parameter block (their templates read the same struct).
same_params("cortex_m_dsp", "average_pool2d_s8", headers=DSP_HEADERS)
same_params("cortex_m_dsp", "add_bcast_s8", "max_pool2d_s8", "concat", headers=DSP_HEADERS)
same_params("cortex_m_dsp", "index_map", headers=DSP_HEADERS)
same_params("cortex_m_dsp", "resize_bilinear_s8", headers=DSP_HEADERS)
