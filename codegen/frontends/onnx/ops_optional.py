"""Optional values resolved at import time: Optional, OptionalHasElement, OptionalGetElement.

An optional that holds a tensor is that tensor; an empty one (Optional without input, or an
absent input name) is remembered per conversion, so whether it has an element is a constant.
"""

from __future__ import annotations

import weakref

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter

# ONNX names of the empty optionals of each conversion in progress
_EMPTY: "weakref.WeakKeyDictionary[ConvertContext, set[str]]" = weakref.WeakKeyDictionary()


def is_empty(ctx: ConvertContext, name: str) -> bool:
    return not name or name in _EMPTY.get(ctx, set())


@converter("Optional")
def convert_optional(ctx, node):
    if node.input(0):
        ctx.alias(node.outputs[0], node.input(0))
    else:  # bound to no Kiln value: an op reading it sees an absent input, as ONNX means
        _EMPTY.setdefault(ctx, set()).add(node.outputs[0])
        ctx.bind(node.outputs[0], "")


@converter("OptionalHasElement")
def convert_optional_has_element(ctx, node):
    ctx.bind_const(node.outputs[0], np.array(not is_empty(ctx, node.input(0))))


@converter("OptionalGetElement")
def convert_optional_get_element(ctx, node):
    if is_empty(ctx, node.input(0)):
        raise node.error("the optional is empty (ONNX leaves reading it undefined)")
    ctx.alias(node.outputs[0], node.input(0))
