"""BitwiseAnd: the reference against onnxruntime on every integer dtype, the generated C against
the reference (one kernel per element width serves both signednesses)."""

import pytest

from bitwise_testing import check_binary_c, check_binary_onnxruntime
from codegen.ops.bitwise import INTEGERS


@pytest.mark.parametrize("dtype", INTEGERS)
def test_reference_matches_onnxruntime(dtype):
    check_binary_onnxruntime("BitwiseAnd", dtype)


def test_c_matches_reference():
    check_binary_c("BitwiseAnd")
