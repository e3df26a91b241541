"""Which kernel template a target uses: the first of its variants that has one.

One lookup for the emitter (which renders that template) and for lowering (which must hand
the kernel the weight layout and parameters that template expects), so the two never
disagree. Variants are folders of templates/kernels/ tried in the target's order, with
`reference` last (see boards/README.md).
"""

from __future__ import annotations

from codegen.resources import TEMPLATES


def kernel_template(kernel: str, variants: tuple[str, ...]) -> str:
    """The template path of `kernel` for the most specific variant that has one.

    A generated kernel `<stem>__<digest>` (one per fused chain) renders the template `<stem>`."""
    kernel = kernel.split("__", 1)[0]
    for variant in variants:
        rel = f"kernels/{variant}/{kernel}.c.j2"
        if (TEMPLATES / rel).is_file():
            return rel
    raise FileNotFoundError(f"no template for kernel {kernel} in variants {variants}")


def kernel_variant(kernel: str, variants: tuple[str, ...]) -> str:
    """The variant folder `kernel_template` picks: "reference", "cortex_m_dsp", "mve", ..."""
    return kernel_template(kernel, variants).split("/")[1]
