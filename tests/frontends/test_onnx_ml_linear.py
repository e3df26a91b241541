"""The preprocessing, linear and SVM ops of ai.onnx.ml (ops_ml_linear.py, ops_ml_svm.py), built
as skl2onnx writes them, against onnxruntime: the IR interpreter on several random inputs, the
generated C on the host, and two scikit-learn-style pipelines as Cortex-M4 firmware in QEMU."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_models as om
from codegen.errors import KilnError
from codegen.frontends.onnx import load
from codegen.ir import run_graph
from helpers import run_c

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64
SEEDS = (0, 1, 2)


def ml_graph(nodes, inputs, outputs) -> onnx.ModelProto:
    """A model of `nodes`; inputs and outputs are (name, elem type, shape)."""
    graph = helper.make_graph(nodes, "ml", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    return m


def ml_model(op, inputs, outputs, **attrs) -> onnx.ModelProto:
    """One ai.onnx.ml node reading every input and writing every output."""
    node = helper.make_node(op, [i[0] for i in inputs], [o[0] for o in outputs], domain="ai.onnx.ml", name=op, **attrs)
    return ml_graph([node], inputs, outputs)


def random_feed(m: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feed = {}
    for vi in m.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == INT64:
            feed[vi.name] = rng.integers(-3, 6, shape).astype(np.int64)
        else:
            feed[vi.name] = (rng.standard_normal(shape) * 1.5).astype(np.float32)
    return feed


def assert_close(got: np.ndarray, want: np.ndarray, what: str, rtol: float = 1e-5) -> None:
    """Integers (labels) exact; floats within rtol of the largest magnitude, NaN where ORT has NaN."""
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=what)
    scale = max(float(np.abs(want[~nan]).max(initial=0.0)), 1e-30)
    assert np.abs(got[~nan] - want[~nan]).max(initial=0.0) <= rtol * scale, (what, got, want)


def check(tmp_path, m: onnx.ModelProto, feeds: list[dict[str, np.ndarray]] | None = None, rtol: float = 1e-5) -> None:
    """Kiln's interpreter and the generated C (host, ASan/UBSan) match onnxruntime on every feed."""
    onnx.checker.check_model(m)
    onnx.save(m, tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    feeds = feeds or [random_feed(m, s) for s in SEEDS]
    wants = [om.ort_outputs(m, f) for f in feeds]
    for feed, want in zip(feeds, wants):
        got = run_graph(g, feed)
        for name, value in want.items():
            assert_close(np.asarray(got[name]), value, name, rtol)
    for want, got in zip(wants, run_c(g, feeds)):
        for name, value in want.items():
            assert_close(np.asarray(got[name]), value, f"C {name}", rtol)


# -- preprocessing -------------------------------------------------------------------------

@pytest.mark.parametrize("elem, offset, scale", [(FLOAT, [0.5, -1.0, 2.0, 0.0], [2.0, 0.5, -1.5, 3.0]),
                                                  (FLOAT, [0.25], [4.0]), (INT64, [1.0, 2.0, 3.0, 4.0], [0.5] * 4)])
def test_scaler(tmp_path, elem, offset, scale):
    check(tmp_path, ml_model("Scaler", [("x", elem, [5, 4])], [("y", FLOAT, [5, 4])], offset=offset, scale=scale))


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer_with_a_zero_row(tmp_path, norm):
    m = ml_model("Normalizer", [("x", FLOAT, [4, 5])], [("y", FLOAT, [4, 5])], norm=norm)
    feeds = [random_feed(m, s) for s in SEEDS]
    feeds[0]["x"][2] = 0.0
    feeds[1]["x"][1] = -np.abs(feeds[1]["x"][1])  # MAX of a negative row: division by a negative
    check(tmp_path, m, feeds)


def test_imputer_replaces_nan_per_feature_and_a_value_by_one(tmp_path):
    nan = ml_model("Imputer", [("x", FLOAT, [4, 3])], [("y", FLOAT, [4, 3])], imputed_value_floats=[1.0, -2.0, 3.5],
                   replaced_value_float=float("nan"))
    feed = random_feed(nan, 0)
    feed["x"][[0, 1, 3], [1, 2, 0]] = np.nan
    check(tmp_path, nan, [feed])
    value = ml_model("Imputer", [("x", INT64, [4, 3])], [("y", INT64, [4, 3])], imputed_value_int64s=[7],
                     replaced_value_int64=2)
    check(tmp_path, value)


def test_feature_vectorizer_cuts_and_pads(tmp_path):
    m = ml_model("FeatureVectorizer", [("a", FLOAT, [3, 2]), ("b", FLOAT, [3, 4]), ("c", FLOAT, [3, 1])],
                 [("y", FLOAT, [3, 7])], inputdimensions=[2, 2, 3])
    check(tmp_path, m)


@pytest.mark.parametrize("elem, cats", [(INT64, [0, 2, -1, 5, 3]), (FLOAT, [1, 0, 4, 1])])
def test_one_hot_encoder(tmp_path, elem, cats):
    """Unknown values give zeros; float inputs are truncated; a repeated category marks its last place."""
    check(tmp_path, ml_model("OneHotEncoder", [("x", elem, [3, 2])], [("y", FLOAT, [3, 2, len(cats)])],
                             cats_int64s=cats, zeros=1))


# -- linear models ------------------------------------------------------------------------

def test_linear_regressor(tmp_path):
    rng = np.random.default_rng(3)
    two = ml_model("LinearRegressor", [("x", FLOAT, [6, 4])], [("y", FLOAT, [6, 2])], targets=2,
                   coefficients=rng.standard_normal(8).tolist(), intercepts=[0.5, -1.25])
    check(tmp_path, two)
    one = ml_model("LinearRegressor", [("x", FLOAT, [4])], [("y", FLOAT, [1, 1])], targets=1,
                   coefficients=rng.standard_normal(4).tolist())
    check(tmp_path, one)


def linear_classifier(classes: int, rows: int, transform: str, labels=None, features: int = 4) -> onnx.ModelProto:
    rng = np.random.default_rng(classes * 10 + rows)
    coefficients = rng.standard_normal((rows, features))
    intercepts = rng.standard_normal(rows) * 0.5
    if rows == 2 and classes == 2:  # skl2onnx's binary LogisticRegression: [-w, w], [-b, b]
        coefficients[0], intercepts[0] = -coefficients[1], -intercepts[1]
    attrs = dict(coefficients=coefficients.ravel().tolist(), intercepts=intercepts.tolist(), post_transform=transform,
                 multi_class=int(classes > 2))
    if labels is None:
        labels = [3, 7, 11, 12][:classes]
    if labels:
        attrs["classlabels_ints"] = labels
    width = 2 if rows == 1 and len(labels) == 2 else rows
    return ml_model("LinearClassifier", [("x", FLOAT, [7, features])], [("label", INT64, [7]),
                                                                         ("scores", FLOAT, [7, width])], **attrs)


@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_linear_classifier_three_classes(tmp_path, transform):
    m = linear_classifier(3, 3, transform)
    if transform == "PROBIT":
        # Scores in (0, 1) (small inputs). onnxruntime's ErfInv cancels near p = 0.5 (sqrt(v^2 - v2) - v):
        # one ULP of logf there moves the result by ~3e-5 of the largest score, hence 1e-4.
        check(tmp_path, m, [{"x": (random_feed(m, s)["x"] * 0.05).astype(np.float32)} for s in SEEDS], rtol=1e-4)
    else:
        check(tmp_path, m)


def test_softmax_zero_leaves_zero_scores_out(tmp_path):
    m = ml_model("LinearClassifier", [("x", FLOAT, [3, 3])], [("label", INT64, [3]), ("scores", FLOAT, [3, 3])],
                 coefficients=np.eye(3).ravel().tolist(), intercepts=[0.0, 0.0, 0.0], classlabels_ints=[5, 6, 7],
                 post_transform="SOFTMAX_ZERO")
    check(tmp_path, m, [{"x": np.array([[0.0, 1.0, 2.0], [-1.0, 0.0, 3e-8], [0.5, -0.25, 1.5]], np.float32)}])


@pytest.mark.parametrize("rows, transform, labels", [(2, "LOGISTIC", None), (2, "NONE", None), (1, "NONE", None),
                                                     (1, "LOGISTIC", None), (1, "SOFTMAX", None), (1, "NONE", []),
                                                     (1, "LOGISTIC", []), (1, "PROBIT", [])])
def test_linear_classifier_two_classes(tmp_path, rows, transform, labels):
    """skl2onnx writes two rows; one row follows onnxruntime's binary rule ([1 - s, s] with two
    labels, s alone and labels 0 / 1 without)."""
    m = linear_classifier(2, rows, transform, labels)
    check(tmp_path, m)


# -- SVM ------------------------------------------------------------------------------------

def svm_classifier(kernel: str, counts: list[int], transform: str = "NONE", features: int = 4,
                   params=(0.3, 0.5, 3.0), **extra) -> onnx.ModelProto:
    """An SVC as skl2onnx writes it: support vectors grouped by class, dual coefficients
    [classes - 1, vectors], rho = intercepts (negated, with the coefficients, for two classes)."""
    rng = np.random.default_rng(sum(counts) + len(kernel))
    classes, vectors = len(counts), sum(counts)
    pairs = classes * (classes - 1) // 2
    attrs = dict(kernel_type=kernel, kernel_params=list(params), support_vectors=rng.standard_normal(vectors * features)
                 .astype(np.float32).tolist(), coefficients=rng.uniform(-1, 1, (classes - 1) * vectors).tolist(),
                 rho=rng.uniform(-0.5, 0.5, pairs).tolist(), vectors_per_class=counts, post_transform=transform,
                 classlabels_ints=[4, 1, 9, 2][:classes], **extra)
    width = 2 if classes == 2 else pairs
    return ml_model("SVMClassifier", [("x", FLOAT, [6, features])], [("label", INT64, [6]),
                                                                      ("scores", FLOAT, [6, width])], **attrs)


@pytest.mark.parametrize("kernel, params", [("LINEAR", (0.0, 0.0, 0.0)), ("POLY", (0.3, 0.5, 3.0)),
                                            ("POLY", (0.2, 1.0, 4.0)), ("RBF", (0.25, 0.0, 3.0)),
                                            ("SIGMOID", (0.2, -0.3, 3.0))])
def test_svm_classifier_three_classes(tmp_path, kernel, params):
    check(tmp_path, svm_classifier(kernel, [3, 2, 4], params=params))


@pytest.mark.parametrize("kernel, transform", [("RBF", "NONE"), ("LINEAR", "LOGISTIC"), ("SIGMOID", "SOFTMAX")])
def test_svm_classifier_two_classes(tmp_path, kernel, transform):
    check(tmp_path, svm_classifier(kernel, [3, 4], transform))


def test_svm_classifier_scores_post_transformed(tmp_path):
    check(tmp_path, svm_classifier("RBF", [2, 3, 2, 1], "SOFTMAX"))


def test_rbf_distances_are_one_op_without_a_rows_by_vectors_by_features_temporary(tmp_path):
    onnx.save(svm_classifier("RBF", [3, 2, 4]), tmp_path / "m.onnx")
    g = load(tmp_path / "m.onnx", {})
    assert [n.op for n in g.nodes].count("SquaredDistance") == 1
    assert all(len(v.shape) < 3 for v in g.values.values()), [v.shape for v in g.values.values()]


@pytest.mark.parametrize("classes, coefficients", [(3, None), (2, None), (2, "positive")])
def test_svm_classifier_without_support_vectors(tmp_path, classes, coefficients):
    """liblinear mode: one coefficient row per class plus rho[0]; two classes use onnxruntime's
    thresholds (0.5 with all coefficients >= 0, else 0) before the largest score."""
    rng = np.random.default_rng(classes)
    coef = rng.standard_normal(classes * 3) * 0.4
    if coefficients == "positive":
        coef = np.abs(coef)
    m = ml_model("SVMClassifier", [("x", FLOAT, [8, 3])], [("label", INT64, [8]), ("scores", FLOAT, [8, classes])],
                 kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0], coefficients=coef.tolist(), rho=[0.1],
                 classlabels_ints=list(range(10, 10 + classes)), post_transform="NONE")
    check(tmp_path, m)


@pytest.mark.parametrize("kernel, count, one_class", [("RBF", 5, 0), ("POLY", 4, 0), ("LINEAR", 0, 0), ("RBF", 5, 1)])
def test_svm_regressor(tmp_path, kernel, count, one_class):
    rng = np.random.default_rng(count)
    features = 3
    attrs = dict(kernel_type=kernel, kernel_params=[0.4, 0.2, 2.0], n_supports=count, one_class=one_class,
                 coefficients=rng.uniform(-1, 1, count or features).tolist(), rho=[0.3], post_transform="NONE")
    if count:
        attrs["support_vectors"] = rng.standard_normal(count * features).tolist()
    check(tmp_path, ml_model("SVMRegressor", [("x", FLOAT, [5, features])], [("y", FLOAT, [5, 1])], **attrs))


# -- refusals -------------------------------------------------------------------------------

def refusal(tmp_path, m: onnx.ModelProto) -> str:
    onnx.save(m, tmp_path / "m.onnx")
    with pytest.raises(KilnError) as err:
        load(tmp_path / "m.onnx", {})
    message = str(err.value)
    assert "\n" not in message
    return message


def test_string_labels_and_categories_are_refused(tmp_path):
    m = ml_model("LinearClassifier", [("x", FLOAT, [2, 2])], [("label", TensorProto.STRING, [2]),
                                                              ("scores", FLOAT, [2, 2])],
                 coefficients=[1.0, 2.0, -1.0, 0.5], intercepts=[0.0, 0.1], classlabels_strings=["cat", "dog"])
    assert "string class labels" in refusal(tmp_path, m)
    m = ml_model("OneHotEncoder", [("x", INT64, [2])], [("y", FLOAT, [2, 2])], cats_strings=["a", "b"])
    assert "string categories" in refusal(tmp_path, m)


def test_zipmap_is_refused_with_the_export_option(tmp_path):
    classifier = linear_classifier(3, 3, "SOFTMAX")
    node = helper.make_node("ZipMap", ["scores"], ["probabilities"], domain="ai.onnx.ml", name="zipmap",
                            classlabels_int64s=[3, 7, 11])
    classifier.graph.node.append(node)
    out = helper.make_value_info("probabilities", helper.make_sequence_type_proto(
        helper.make_map_type_proto(INT64, helper.make_tensor_type_proto(FLOAT, []))))
    classifier.graph.output[1].CopyFrom(out)
    message = refusal(tmp_path, classifier)
    assert "ZipMap" in message and "'zipmap': False" in message


def test_svm_probabilities_are_refused(tmp_path):
    m = svm_classifier("RBF", [2, 2, 2], prob_a=[-1.0, -1.2, -0.9], prob_b=[0.1, 0.0, -0.1])
    message = refusal(tmp_path, m)
    assert "prob_a" in message and "probability=False" in message


def test_binary_probit_is_refused(tmp_path):
    """onnxruntime writes one of the two score columns and leaves the other as it finds it."""
    assert "PROBIT" in refusal(tmp_path, linear_classifier(2, 1, "PROBIT"))
    assert "PROBIT" in refusal(tmp_path, svm_classifier("LINEAR", [2, 3], "PROBIT"))


# -- pipelines on Cortex-M4 ---------------------------------------------------------------

def pipeline(classifier: onnx.ModelProto, features: int) -> onnx.ModelProto:
    """StandardScaler (Scaler) in front of `classifier`, read from a [1, features] float input."""
    rng = np.random.default_rng(11)
    scaler = helper.make_node("Scaler", ["input"], ["variable"], domain="ai.onnx.ml", name="Scaler",
                              offset=rng.standard_normal(features).tolist(),
                              scale=rng.uniform(0.5, 2.0, features).tolist())
    node = classifier.graph.node[0]
    node.input[0] = "variable"
    return ml_graph([scaler, node], [("input", FLOAT, [1, features])],
                    [("label", INT64, [1]), ("scores", FLOAT, [1, classifier.graph.output[1].type.tensor_type.shape
                                                               .dim[1].dim_value])])


@pytest.mark.parametrize("kind", ["logistic_regression", "svc_rbf"])
def test_pipeline_on_cortex_m4_in_qemu(tmp_path, capsys, kind):
    from codegen.cli import main

    if kind == "logistic_regression":
        m = pipeline(linear_classifier(3, 3, "SOFTMAX", features=6), 6)
    else:
        m = pipeline(svm_classifier("RBF", [4, 3, 5], features=6, params=(0.2, 0.0, 3.0)), 6)
    onnx.save(m, tmp_path / "m.onnx")
    assert main(["verify", str(tmp_path / "m.onnx"), "--target", "cortex-m4", "--samples", "3"]) == 0
    out = capsys.readouterr().out
    assert "label: int64, max abs error 0," in out and "kiln verify: ok" in out
