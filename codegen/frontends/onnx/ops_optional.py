"""Optional values resolved at import time: Optional, OptionalHasElement, OptionalGetElement.

An optional that holds a tensor (or a sequence) is that value; an empty one (Optional without
input) is bound to a placeholder constant remembered per conversion, so that it passes through
Identity and branches like any value, and whether an optional has an element is a constant.
"""

from __future__ import annotations

import weakref

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter

# Kiln placeholders of the empty optionals of each conversion in progress
_EMPTY: "weakref.WeakKeyDictionary[ConvertContext, set[str]]" = weakref.WeakKeyDictionary()


def is_empty(ctx: ConvertContext, name: str) -> bool:
    """An absent input, or bound to an empty optional's placeholder."""
    return not name or (ctx.is_bound(name) and ctx.kiln(name) in _EMPTY.get(ctx, set()))


@converter("Optional")
def convert_optional(ctx, node):
    if node.input(0):
        ctx.alias(node.outputs[0], node.input(0))
    else:  # a one-byte placeholder constant that no op reads (dead code removes it)
        marker = ctx.new_const(ctx.fresh(f"empty_optional::{node.outputs[0]}"), np.zeros((), np.uint8))
        _EMPTY.setdefault(ctx, set()).add(marker)
        ctx.bind(node.outputs[0], marker)


@converter("OptionalHasElement")
def convert_optional_has_element(ctx, node):
    ctx.bind_const(node.outputs[0], np.array(not is_empty(ctx, node.input(0))))


@converter("OptionalGetElement")
def convert_optional_get_element(ctx, node):
    if is_empty(ctx, node.input(0)):
        raise node.error("the optional is empty (ONNX leaves reading it undefined)")
    ctx.alias(node.outputs[0], node.input(0))
