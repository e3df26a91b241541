"""AssignVariable: store a streaming model's variable for the next call (TFLite ASSIGN_VARIABLE).

Inputs: the new value, then the variable (a graph value carrying a `StateVar`, which the
generated code keeps in its persistent state region). The node has no outputs: it is added by
codegen/lower/state.py after the passes, as the last node, so every read of the variable in
this call comes before it. Lowered as a byte copy into the state region, or as nothing when
the calls computing the value can write it there directly (see `_writes_directly`).
"""

from codegen.errors import KilnError
from codegen.ops.registry import Op, OpKind, register
from codegen.ops.reshape import emit_copy


@register
class AssignVariable(Op):
    name = "AssignVariable"
    kind = OpKind.OPAQUE
    arity = (2, 2)
    kernels = ("copy",)

    @classmethod
    def infer(cls, node, ins):
        value, variable = ins
        if variable.state is None:
            raise KilnError(f"input '{variable.name}' is not a variable", node=node.name)
        if value.dtype != variable.dtype or value.size != variable.size:
            raise KilnError(f"assigns {value.type_str()} to variable '{variable.name}' of "
                            f"{variable.type_str()}", node=node.name)
        return []

    @classmethod
    def reference(cls, node, args, g):
        return []  # the interpreter's caller carries the value to the next call (graph output)

    @classmethod
    def lower(cls, node, ctx):
        value, variable = node.inputs
        if not (_writes_directly(ctx, value, variable) and ctx.alias(value, variable)):
            emit_copy(node, ctx, value, variable)


def _writes_directly(ctx, value: str, variable: str) -> bool:
    """Whether the calls computing `value` may write it into the variable's own storage: every
    call reading the variable (or a view of it) comes before the first of them, and `value`
    neither is a view nor has one (its storage is its own to move)."""
    if value in ctx.aliases or value in ctx.aliases.values() or value in ctx.view_offsets:
        return False
    writers = [k for k, call in enumerate(ctx.calls) if value in call.writes]
    readers = [k for k, call in enumerate(ctx.calls) if any(ctx.root(r) == variable for r in call.reads)]
    return bool(writers) and (not readers or max(readers) < min(writers))
