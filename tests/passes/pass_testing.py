"""Helpers of the pass tests: structural comparison of graphs, and results before/after a pass.

Two graphs are structurally equal when they have the same inputs, the same nodes in the same
order (op, attributes, output types) wired the same way, the same constants (data equal, to
float32 rounding for floats) and the same outputs. Value and node names do not matter.
"""

from __future__ import annotations

import numpy as np

from codegen.ir import Graph, format_graph, run_graph, verify_graph


def _freeze(value):
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _quant(q):
    if q is None:
        return None
    return (tuple(round(s, 12) for s in q.scale), q.zero_point, q.axis)


def _canonical(g: Graph):
    """(structure, constants): references are input k, constant k (first use), node k output j."""
    refs: dict[str, str] = {}
    consts: list[np.ndarray] = []
    for k, name in enumerate(g.inputs):
        refs[name] = f"in{k}"

    def ref(name: str) -> str:
        if not name:
            return "_"
        if name not in refs:
            v = g.values[name]
            assert v.is_const, f"'{name}' is used before it is defined"
            refs[name] = f"c{len(consts)}:{v.dtype}{list(v.shape)}{_quant(v.quant)}"
            consts.append(v.data)
        return refs[name]

    structure = [("input", g.values[n].dtype, g.values[n].shape, _quant(g.values[n].quant)) for n in g.inputs]
    for k, node in enumerate(g.nodes):
        ins = [ref(i) for i in node.inputs]
        outs = []
        for j, o in enumerate(node.outputs):
            refs[o] = f"n{k}.{j}"
            v = g.values[o]
            outs.append((v.dtype, v.shape, _quant(v.quant)))
        attrs = tuple(sorted((a, _freeze(v)) for a, v in node.attrs.items()))
        structure.append((node.op, attrs, tuple(ins), tuple(outs)))
    structure.append(("outputs", tuple(ref(o) for o in g.outputs)))
    return structure, consts


def assert_same_graph(got: Graph, expected: Graph, rtol: float = 1e-6) -> None:
    """Structural equality (see the module docstring), with readable IR on failure."""
    verify_graph(got)
    s_got, c_got = _canonical(got)
    s_exp, c_exp = _canonical(expected)
    message = f"\n--- got ---\n{format_graph(got)}--- expected ---\n{format_graph(expected)}"
    assert s_got == s_exp, message
    for k, (a, b) in enumerate(zip(c_got, c_exp)):
        if np.issubdtype(b.dtype, np.floating):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * float(np.abs(b).max(initial=0)),
                                       err_msg=f"constant c{k}{message}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"constant c{k}{message}")


def random_feeds(g: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for name in g.inputs:
        v = g.values[name]
        if v.dtype == "int8":
            feeds[name] = rng.integers(-128, 128, v.shape).astype(np.int8)
        else:
            feeds[name] = rng.standard_normal(v.shape).astype(np.float32)
    return feeds


def assert_same_results(before: Graph, after: Graph, seeds=(0, 1), rtol: float = 1e-5) -> None:
    """The interpreter gives the same outputs: int8 bit for bit, float within rtol of the
    output's largest magnitude."""
    assert after.outputs == before.outputs
    for seed in seeds:
        feeds = random_feeds(before, seed)
        exp = run_graph(before, feeds)
        got = run_graph(after, feeds)
        for name, e in exp.items():
            a = got[name]
            assert a.shape == e.shape and a.dtype == e.dtype, name
            if np.issubdtype(e.dtype, np.floating):
                finite = np.isfinite(e)
                np.testing.assert_array_equal(a[~finite], e[~finite], err_msg=name)
                scale = max(float(np.abs(e[finite]).max(initial=0)), 1e-30)
                diff = np.abs(a[finite].astype(np.float64) - e[finite])
                assert float(diff.max(initial=0)) <= rtol * scale, name
            else:
                np.testing.assert_array_equal(a, e, err_msg=name)


def ops(g: Graph) -> list[str]:
    return [n.op for n in g.nodes]
