"""The template of a kernel known only by the name a manifest or a weights blob records
(codegen/emit/weights_blob.py, codegen/verify/profile.py): the kernel registry's answer,
codegen.kernels.select.template_for_name. Calls carry their own (KernelCall.variant, .template).
"""

from __future__ import annotations

from codegen.kernels.select import template_for_name as kernel_template
from codegen.kernels.select import variant_for_name as kernel_variant

__all__ = ["kernel_template", "kernel_variant"]
