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
from codegen.kernels.select import kernel_template
from codegen.kernels.spec import REFERENCE, SameParams, c_name, families, lookup, registered
from codegen.ops.registry import all_ops
from codegen.resources import TEMPLATES

ROOT = TEMPLATES.parent
SPECS = registered()


def _templates() -> set[tuple[str, str]]:
    return {(p.name[:-len(".c.j2")], p.parent.name) for p in (TEMPLATES / "kernels").glob("*/*.c.j2")
            if not p.name.startswith("_")}  # "_name": a macro file the kernels include


def render(kernel: str, variant: str) -> str:
    """The C source of a kernel (a family member: its family's template with its variables; a
    kernel generated per call site: the variables of its spec's example instance)."""
    template, variables = kernel_template(kernel, variant)
    return _ENV.get_template(template).render(**dict(variables or lookup(kernel, variant).example_vars))


def struct_fields(kernel: str, variant: str) -> list[str]:
    """The field names of kiln_<kernel>_params in the rendered template."""
    return c_struct_fields(render(kernel, variant), f"kiln_{kernel}_params", f"{variant}/{kernel}")


def c_struct_fields(text: str, struct: str, where: str) -> list[str]:
    """The field names of the C struct typedef `struct` in `text`."""
    match = re.search(r"typedef struct \{([^{}]*)\}\s*" + struct + r";", text)
    assert match, f"{where}: no {struct} struct"
    body = re.sub(r"/\*.*?\*/", "", match.group(1), flags=re.S)
    declarators = [d for decl in body.split(";") if decl.strip() for d in decl.split(",")]  # int32_t a, b;
    return [re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", d).group(1) for d in declarators]


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


TYPED = sorted(key for key, spec in SPECS.items() if spec.Params is not None and key not in families())
TYPED += sorted((member, variant) for (_, variant), spec in families().items() if spec.Params is not None
                for member in spec.members)  # a typed family: every member's struct


@pytest.mark.parametrize("kernel,variant", TYPED)
def test_typed_parameter_block_matches_the_c_struct(kernel, variant):
    spec = lookup(kernel, variant)
    assert sorted(c_name(f.name) for f in fields(spec.Params)) == sorted(struct_fields(kernel, variant))


def test_nested_quantization_blocks_match_kiln_quant_h():
    """The int8 binary kernels' nested `q` blocks are kiln_quant.h's structs, field for field."""
    from codegen.kernels.reference.families import QUANT_BLOCKS

    header = (ROOT / "runtime_c" / "kiln_quant.h").read_text()
    for struct, block in QUANT_BLOCKS.items():
        assert sorted(f.name for f in fields(block)) == sorted(c_struct_fields(header, struct, "kiln_quant.h"))


SAME = sorted(key for key, spec in SPECS.items()
              if issubclass(spec, SameParams) and key[1] != REFERENCE and spec.Params is None)


@pytest.mark.parametrize("kernel,variant", SAME)
def test_variant_over_the_reference_block_reads_the_same_struct(kernel, variant):
    assert struct_fields(kernel, variant) == struct_fields(kernel, REFERENCE)


@pytest.mark.parametrize("kernel,variant", sorted(key for key in SPECS if key[1] != REFERENCE))
def test_every_variant_kernel_is_run_against_its_reference_kernel(kernel, variant):
    """tests/core/test_variant_kernels.py runs a probe layer of every variant kernel on its
    target beside the same layer on the reference kernel (the probe's lowering must request
    the kernel: that test checks select() chose the variant's)."""
    from test_variant_kernels import OTHER_ARITHMETIC, PROBES, VARIANTS

    assert lookup(kernel, REFERENCE) is not None, f"{variant}/{kernel} has no reference kernel to be tested against"
    if variant in OTHER_ARITHMETIC:  # run against the runtime whose arithmetic it computes
        assert (ROOT / OTHER_ARITHMETIC[variant]).is_file()
        return
    assert variant in VARIANTS
    assert kernel in PROBES, f"{variant}/{kernel}: no probe layer in tests/core/test_variant_kernels.py"


FAMILIES = families()
MEMBERS = sorted((member, variant) for (_, variant), spec in FAMILIES.items() for member in spec.members)
OP_KERNELS = {kernel for op in all_ops().values() for kernel in op.kernels}


def test_families_cover_the_per_dtype_kernels():
    """The families render the kernels that were one stub template per dtype (209 of them)."""
    assert len(MEMBERS) >= 200
    assert {family for family, _ in FAMILIES} >= {"unary_f32", "broadcast2", "int_div", "int_mod", "bitwise"}


@pytest.mark.parametrize("kernel,variant", MEMBERS)
def test_every_family_member_renders_its_own_kernel(kernel, variant):
    text = render(kernel, variant)
    assert re.search(r"static void kiln_" + kernel + r"\(const kiln_" + kernel + r"_params \*p", text), kernel
    assert struct_fields(kernel, variant)
    assert kernel in OP_KERNELS, f"family member {kernel} is no op's kernel"
