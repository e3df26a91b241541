"""The kernel registry is complete and agrees with the templates (codegen/kernels/).

Every template of templates/kernels/<variant>/ has a spec (so a template is never rendered
with parameters nobody declared for it) and every spec a template; a typed spec's parameter
block names exactly the fields of its template's C struct; a variant kernel over the
reference block reads the same struct as the reference kernel; and every variant kernel is
run bit-exact against the reference by its variant's tests.
"""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from codegen.emit.render import _ENV
from codegen.kernels.select import template_path
from codegen.kernels.spec import REFERENCE, SameParams, registered
from codegen.resources import TEMPLATES

ROOT = TEMPLATES.parent
# The tests that run each variant's kernels against the numpy reference (int8 bit for bit).
VARIANT_TESTS = {
    "cortex_m_dsp": ["tests/cortex_m/test_dsp_kernels.py"],
    "mve": ["tests/cortex_m/test_dsp_kernels.py"],
    "neon": ["tests/cortex_a/test_neon_s8.py", "tests/cortex_a/test_neon_f32.py"],
    "neon_dotprod": ["tests/cortex_a/test_neon_s8.py"],
}
SPECS = registered()


def _templates() -> set[tuple[str, str]]:
    return {(p.name[:-len(".c.j2")], p.parent.name) for p in (TEMPLATES / "kernels").glob("*/*.c.j2")
            if not p.name.startswith("_")}  # "_name": a macro file the kernels include


def struct_fields(kernel: str, variant: str) -> list[str]:
    """The field names of kiln_<kernel>_params in the rendered template."""
    text = _ENV.get_template(template_path(kernel, variant)).render()
    match = re.search(r"typedef struct \{(.*?)\}\s*kiln_" + kernel + r"_params;", text, re.S)
    assert match, f"{variant}/{kernel}: no kiln_{kernel}_params struct"
    body = re.sub(r"/\*.*?\*/", "", match.group(1), flags=re.S)
    return [re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl).group(1)
            for decl in body.split(";") if decl.strip()]


def test_every_template_has_a_spec_and_every_spec_a_template():
    specs = set(SPECS)
    assert sorted(_templates() - specs) == [], "templates without a kernel spec"
    assert sorted(specs - _templates()) == [], "kernel specs without a template"


def test_a_template_without_a_spec_is_never_selected():
    """select() reads the registry, not the template folders: a variant template nobody
    declared falls back to the next variant (tested on the registry's own lookup)."""
    from codegen.ir.graph import Node
    from codegen.kernels.select import select
    from codegen.ops.request import KernelRequest

    request = KernelRequest("softmax_s8", Node("Softmax", "n", [], []), {})
    assert ("softmax_s8", "neon") not in SPECS
    assert select(request, ("neon", REFERENCE)).variant == REFERENCE


TYPED = sorted(key for key, spec in SPECS.items() if spec.Params is not None)


@pytest.mark.parametrize("kernel,variant", TYPED)
def test_typed_parameter_block_matches_the_c_struct(kernel, variant):
    spec = SPECS[(kernel, variant)]
    assert sorted(f.name for f in fields(spec.Params)) == sorted(struct_fields(kernel, variant))


SAME = sorted(key for key, spec in SPECS.items()
              if issubclass(spec, SameParams) and key[1] != REFERENCE and spec.Params is None)


@pytest.mark.parametrize("kernel,variant", SAME)
def test_variant_over_the_reference_block_reads_the_same_struct(kernel, variant):
    assert struct_fields(kernel, variant) == struct_fields(kernel, REFERENCE)


@pytest.mark.parametrize("kernel,variant", sorted(key for key in SPECS if key[1] != REFERENCE))
def test_every_variant_kernel_has_a_bit_exact_test(kernel, variant):
    assert (kernel, REFERENCE) in SPECS, f"{variant}/{kernel} has no reference kernel to be tested against"
    tests = VARIANT_TESTS.get(variant)
    assert tests, f"variant {variant} has no bit-exact test module listed here"
    assert any(kernel in (ROOT / t).read_text() for t in tests), f"{variant}/{kernel}: not in {tests}"
