"""The fast int8 BatchMatMul and SVDF kernels (cortex_m_dsp on the M4, mve on the M55) equal
the numpy reference, bit-exact with TFLite Micro's BATCH_MATMUL and integer SVDF, in QEMU:
matmuls of two activations and of an activation by a constant, odd k, n not a multiple of 4,
odd m, batches, batch dimensions broadcast either way, a 1-D operand; SVDFs of rank 1 and 2,
several memory sizes and batches, with and without bias. The same graphs run on Cortex-A
(neon): tests/cortex_a/test_neon_matmul_svdf.py."""

from __future__ import annotations

import pytest

from ops.matmul_svdf_cases import matmuls, svdfs
from test_dsp_kernels import check_target

pytestmark = pytest.mark.usefixtures("cortex_m")


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_fast_matmul_equals_the_reference(target, variant):
    check_target(matmuls(), target, variant, {"matmul_s8"})


@pytest.mark.parametrize("target,variant", [("cortex-m4", "cortex_m_dsp"), ("cortex-m55", "mve")])
def test_fast_svdf_equals_the_reference(target, variant):
    check_target(svdfs(), target, variant, {"svdf_s8"})
