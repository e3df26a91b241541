"""TfIdfVectorizer on integer tokens: random n-gram pools (1- to 3-grams of a small vocabulary)
in every mode, gram range and skip count, against onnxruntime; the generated C against the
numpy reference; string pools refused in one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from op_testing import assert_c_equals_reference

VOCABULARY = 6  # tokens 0..5 in the pool; inputs also hold 6 and 7, in no n-gram


def random_pool(rng, weighted: bool) -> dict:
    """Attributes of a pool with distinct 1-, 2- and 3-grams in shuffled output order; weights
    per coordinate (onnxruntime wants one per n-gram), else two coordinates no n-gram maps to."""
    pool, counts = [], []
    for size, count in ((1, 4), (2, 6), (3, 5)):
        counts.append(len(pool))
        grams = {tuple(int(t) for t in rng.integers(VOCABULARY, size=size)) for _ in range(count)}
        pool.extend(t for gram in sorted(grams) for t in gram)
    ends = [*counts[1:], len(pool)]
    grams = sum((end - start) // size for size, (start, end) in enumerate(zip(counts, ends), start=1))
    attrs = {"pool_int64s": pool, "ngram_counts": counts}
    if weighted:
        attrs["weights"] = np.round(rng.uniform(0.1, 2.0, grams), 3).astype(np.float32).tolist()
    attrs["ngram_indexes"] = rng.permutation(grams + (0 if weighted else 2))[:grams].tolist()
    return attrs


def tfidf_model(shape, dtype, **attrs) -> onnx.ModelProto:
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    elem = TensorProto.INT32 if dtype == np.int32 else TensorProto.INT64
    graph = helper.make_graph([node], "tfidf", [helper.make_tensor_value_info("x", elem, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    return m


CASES = [  # mode, min_gram_length, max_gram_length, max_skip_count
    ("TF", 1, 1, 0), ("TF", 1, 3, 2), ("TF", 2, 2, 0), ("TF", 2, 3, 5), ("IDF", 1, 2, 1),
    ("IDF", 3, 3, 1), ("TFIDF", 1, 3, 3), ("TFIDF", 2, 3, 0),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mode,min_gram,max_gram,skip", CASES)
def test_tfidf_matches_onnxruntime_and_c(seed, mode, min_gram, max_gram, skip, tmp_path):
    rng = np.random.default_rng(seed)
    attrs = random_pool(rng, weighted=seed != 2)  # unweighted: IDF gives 1, TFIDF the count
    shape, dtype = ((3, 12), np.int64) if seed != 1 else ((15,), np.int32)
    m = tfidf_model(shape, dtype, mode=mode, min_gram_length=min_gram, max_gram_length=max_gram,
                    max_skip_count=skip, **attrs)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    x = rng.integers(0, VOCABULARY + 2, shape).astype(dtype)
    want = om.ort_outputs(m, {"x": x})["y"]
    got = run_graph(g, {"x": x})["y"]
    np.testing.assert_array_equal(got, want)  # counts and products of one rounding: exact
    assert_c_equals_reference(g, [{"x": x}], rtol=0.0)


def test_string_pool_refused_in_one_line(tmp_path):
    m = tfidf_model((4,), np.int64, mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                    pool_strings=["a", "b"], ngram_counts=[0], ngram_indexes=[0, 1])
    onnx.save(m, tmp_path / "m.onnx")
    with pytest.raises(KilnError, match="no string tensors"):
        load(tmp_path / "m.onnx", {})
