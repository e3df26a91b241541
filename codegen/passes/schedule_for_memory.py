"""Memory-aware scheduling: the execution order of a branching graph that needs the least RAM
(a pass, Graph -> Graph: the same nodes, reordered; it reads only the graph, so the passes
import nothing from memory/).

A graph with branches (residual, inception-style, several inputs) has many valid orders, and
the largest total of live activations differs between them: running one branch to its end
before starting the next can free its big intermediates early. The arena can never be below
that peak, so the order is chosen before lowering and planning.

Memory model (graph level, before lowering): an activation is every value that is neither a
constant (flash) nor a graph input or output (the caller's buffers), as in the arena. It is
live from the step that produces it to the last step that reads it; while a node runs, its
inputs and outputs are live together. Views (Reshape) are counted as copies, and kernel
scratch is unknown here: the figure is the peak the scheduler minimises, the arena's own
lower bound comes later from the lowered program.

Exact for small branching graphs: a dynamic programme over the sets of executed nodes
(downsets of the DAG). The peak on the way to a set depends on the path, but the live bytes
*at* a set do not, so for each set only the least peak to reach it is kept (a bottleneck
shortest path), level by level. The number of sets grows with the product of branch lengths;
past `MAX_STATES` the greedy heuristic is used instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.ir.graph import Graph
from codegen.ir.types import np_dtype

MAX_STATES = 200_000


@dataclass(frozen=True)
class _Problem:
    """Nodes as indices: predecessor masks, bytes each node adds, what each step frees."""

    preds: tuple[int, ...]  # bit mask of the nodes that must run before node i
    out_bytes: tuple[int, ...]  # arena bytes of node i's outputs
    frees: tuple[tuple[tuple[int, int], ...], ...]  # node i: (mask of a value's consumers, bytes)
    dead_bytes: tuple[int, ...]  # bytes of node i's outputs that nobody reads (freed at once)


def activation_bytes(g: Graph) -> dict[str, int]:
    """Bytes of every value that would live in the arena (not constant, not graph I/O)."""
    io = set(g.inputs) | set(g.outputs)
    out = {}
    for n in g.nodes:
        for name in n.outputs:
            v = g.values[name]
            if name not in io and not v.is_const:
                out[name] = v.size * np_dtype(v.dtype).itemsize
    return out


def _problem(g: Graph) -> _Problem:
    sizes = activation_bytes(g)
    index = {id(n): i for i, n in enumerate(g.nodes)}
    producer = {o: index[id(n)] for n in g.nodes for o in n.outputs}
    consumers: dict[str, int] = {}
    preds = []
    for i, n in enumerate(g.nodes):
        mask = 0
        for name in dict.fromkeys(x for x in n.inputs if x):
            if name in producer:
                mask |= 1 << producer[name]
            consumers[name] = consumers.get(name, 0) | (1 << i)
        preds.append(mask)
    frees, dead = [], []
    for n in g.nodes:
        ins = dict.fromkeys(x for x in n.inputs if x in sizes)
        frees.append(tuple((consumers[x], sizes[x]) for x in ins))
        dead.append(sum(sizes[o] for o in n.outputs if o in sizes and o not in consumers))
    return _Problem(tuple(preds), tuple(sum(sizes.get(o, 0) for o in n.outputs) for n in g.nodes),
                    tuple(frees), tuple(dead))


def _step(p: _Problem, done: int, live: int, i: int) -> tuple[int, int]:
    """Run node i after the set `done` holding `live` bytes: (peak during i, live bytes after)."""
    peak = live + p.out_bytes[i]
    after = done | (1 << i)
    freed = sum(size for users, size in p.frees[i] if users & ~after == 0)
    return peak, peak - freed - p.dead_bytes[i]


def order_peak(g: Graph, order: list[int] | None = None) -> int:
    """Peak live activation bytes when the nodes run in `order` (default: the file order)."""
    p = _problem(g)
    done = live = best = 0
    for i in order if order is not None else range(len(g.nodes)):
        peak, live = _step(p, done, live, i)
        best, done = max(best, peak), done | (1 << i)
    return best


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _exact(p: _Problem, max_states: int) -> list[int] | None:
    """The order of least peak, or None when the sets of executed nodes exceed `max_states`."""
    n = len(p.preds)
    succs = [0] * n
    for i, mask in enumerate(p.preds):
        for j in _bits(mask):
            succs[j] |= 1 << i
    roots = sum(1 << i for i in range(n) if not p.preds[i])
    # state -> (least peak to reach it, live bytes at it, ready nodes); parents for the way back.
    level: dict[int, tuple[int, int, int]] = {0: (0, 0, roots)}
    parent: dict[int, tuple[int, int]] = {}
    states = 1
    for _ in range(n):
        nxt: dict[int, tuple[int, int, int]] = {}
        for done, (peak_so_far, live, ready) in level.items():
            for i in _bits(ready):
                peak, after_live = _step(p, done, live, i)
                cand = max(peak_so_far, peak)
                state = done | (1 << i)
                old = nxt.get(state)
                if old is None or cand < old[0]:
                    if old is None:
                        new_ready = ready & ~(1 << i)
                        for j in _bits(succs[i]):
                            if p.preds[j] & ~state == 0:
                                new_ready |= 1 << j
                    else:
                        new_ready = old[2]  # the same set: the same ready nodes
                    nxt[state] = (cand, after_live, new_ready)
                    parent[state] = (done, i)
            if states + len(nxt) > max_states:
                return None
        states += len(nxt)
        level = nxt
    order, state = [], (1 << n) - 1
    while state:
        state, i = parent[state]
        order.append(i)
    return order[::-1]


def _greedy(p: _Problem) -> list[int]:
    """Large graphs: run next the ready node that leaves the fewest live bytes (then the one
    whose own step peaks lowest, then file order)."""
    n = len(p.preds)
    done = live = 0
    order = []
    for _ in range(n):
        best = None
        for i in range(n):
            if done & (1 << i) or p.preds[i] & ~done:
                continue
            peak, after = _step(p, done, live, i)
            key = (after, peak, i)
            if best is None or key < best[0]:
                best = (key, i)
        _, i = best
        live = best[0][0]
        done |= 1 << i
        order.append(i)
    return order


def memory_order(g: Graph, max_states: int = MAX_STATES) -> tuple[list[int], str]:
    """The node order of least peak: ("exact" when proven, "greedy" past the state bound)."""
    p = _problem(g)
    exact = _exact(p, max_states)
    return (exact, "exact") if exact is not None else (_greedy(p), "greedy")


def schedule_for_memory(g: Graph) -> Graph:
    """Reorder the nodes to lower the peak of live activation bytes; change nothing else.

    Needs: a verified graph (nodes in a valid order). Keeps: values, inputs, outputs, node
    objects, and the file order whenever it is already as good (so that builds of chain
    models and golden outputs do not move). The new order is a topological order, so the
    graph's results are unchanged.
    """
    if len(g.nodes) < 3:
        return g
    order, _how = memory_order(g)
    if order_peak(g, order) >= order_peak(g):
        return g
    return Graph(g.name, dict(g.values), [g.nodes[i] for i in order], list(g.inputs), list(g.outputs))
