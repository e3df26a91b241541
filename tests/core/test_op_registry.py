"""Every registered operator is complete: reference, kernel templates and specs, support check,
tests. The kernels themselves are walked by tests/core/test_kernel_registry.py (every spec a
template, a matching C struct and a bit-exact test on every variant)."""

from pathlib import Path

import pytest

from codegen.kernels.select import kernel_template
from codegen.kernels.spec import REFERENCE, lookup
from codegen.ops.registry import Op, OpKind, all_ops
from codegen.resources import TEMPLATES

TESTS = Path(__file__).resolve().parent.parent / "ops"


@pytest.mark.parametrize("name", sorted(all_ops()))
def test_op_is_complete(name):
    op = all_ops()[name]
    assert isinstance(op.kind, OpKind)
    assert op.reference.__func__ is not Op.reference.__func__, f"{name} has no numpy reference"
    assert op.infer.__func__ is not Op.infer.__func__, f"{name} has no shape inference"
    assert op.lower.__func__ is not Op.lower.__func__, f"{name} has no lowering"
    assert op.kernels, f"{name} names no kernel template"
    for kernel in op.kernels:
        assert lookup(kernel, REFERENCE) is not None, f"{name}: no reference kernel spec for {kernel}"
        template, _ = kernel_template(kernel, REFERENCE)  # its own, or its family's
        assert (TEMPLATES / template).is_file(), f"{name}: no template {template} for {kernel}"
    module = op.__module__.rsplit(".", 1)[-1]
    assert (TESTS / f"test_{module}.py").is_file(), f"{name}: no tests/ops/test_{module}.py"
