"""A streaming model's variables leave the graph's inputs and outputs before lowering.

While the passes run, each variable is a graph input (its value when a call starts, marked
with a `StateVar`) and, when the call changes it, a graph output (its value for the next
call): the passes then neither fold it nor drop what computes it. The generated code keeps
the variable in a static array of its own, the persistent state region (never part of the
arena, initialised from the model, restored by `N_reset()`): kernels read it in place, the
next value is computed into the arena, and one `AssignVariable` node appended after every
other node copies it into the state region, so every read of this call comes first.
"""

from __future__ import annotations

from codegen.errors import KilnError
from codegen.ir.graph import Graph, Node


def state_values(g: Graph) -> list[str]:
    """The graph's variables (their start values), in graph order."""
    return [name for name, v in g.values.items() if v.state is not None]


def detach_state(g: Graph) -> Graph:
    """The graph the lowering sees: variables are neither inputs nor outputs, and each
    variable whose value changes gets its AssignVariable as a last node."""
    variables = [name for name in g.inputs if g.values[name].state is not None]
    if not variables:
        return g
    nodes, outputs = list(g.nodes), list(g.outputs)
    for name in variables:
        state = g.values[name].state
        if state.output is None:
            continue
        if state.output not in outputs:
            raise KilnError(f"the next value of variable '{state.variable}' is no longer computed "
                            f"(graph output '{state.output}' was lost)", node=name)
        outputs.remove(state.output)
        nodes.append(Node("AssignVariable", f"assign_{name}", [state.output, name], [], {},
                          (state.variable,)))
    return Graph(g.name, dict(g.values), nodes, [i for i in g.inputs if i not in variables], outputs)
