"""CumSum: every axis, exclusive and reverse against onnxruntime, the generated C against the reference."""

from cumulative_testing import check_cumulative


def test_cumsum_matches_and_c():
    check_cumulative("CumSum")


def test_cumsum_of_integers_wraps_in_c():
    """int8 and uint64 running sums wrap modulo 2^bits, as numpy's (and ONNX's) integers do."""
    import numpy as np

    from codegen.ir import GraphBuilder, run_graph
    from op_testing import assert_c_equals_reference

    b = GraphBuilder("cumsum_int")
    x8 = np.int8([100, 100, -128, 5])
    x64 = np.array([2**63, 2**63, 7, 1], np.uint64)
    outs = [b.node("CumSum", [b.input(n, str(x.dtype), x.shape)], axis=0, exclusive=e, reverse=r)
            for n, x, e, r in (("a", x8, False, False), ("b", x64, True, True))]
    g = b.output(*outs).build()
    feed = {"a": x8, "b": x64}
    got = run_graph(g, feed)
    np.testing.assert_array_equal(got[outs[0]], np.cumsum(x8, dtype=np.int8))
    np.testing.assert_array_equal(got[outs[1]], np.array([2**63 + 8, 8, 1, 0], np.uint64))
    assert_c_equals_reference(g, [feed])
