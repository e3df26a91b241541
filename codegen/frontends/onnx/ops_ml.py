"""The ops of domain ai.onnx.ml: Binarizer, ArrayFeatureExtractor, the tree ensembles (flattened
by ml_trees.py into Kiln's TreeEnsemble) and LabelEncoder; also TfIdfVectorizer (domain ai.onnx,
its pool made a trie by ngram_trie.py)."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from codegen.frontends.onnx import ml_trees, ngram_trie
from codegen.frontends.onnx.context import converter, declared_attrs
from codegen.frontends.onnx.ml_trees import floats, ints
from codegen.ops.registry import get_op

DOMAIN = "ai.onnx.ml"


@converter(f"{DOMAIN}.Binarizer")
def convert_binarizer(ctx, node):
    """1 where x > threshold, else 0 (x's dtype)."""
    x = node.input(0)
    dtype = np.dtype("float32" if ctx.dtype(x) == "float32" else ctx.dtype(x))
    above = ctx.add(node, "Greater", [ctx.kiln(x), ctx.weight(node, "threshold",
                                                                np.array(node.attr("threshold", 0.0), dtype))],
                    role="above")
    ctx.add(node, "Where", [above, ctx.weight(node, "one", np.array(1, dtype)),
                            ctx.weight(node, "zero", np.array(0, dtype))], out=node.outputs[0])


@converter(f"{DOMAIN}.ArrayFeatureExtractor")
def convert_array_feature_extractor(ctx, node):
    """The elements of the last axis at the given indices (a 1-D input gives [1, count])."""
    x, indices = node.input(0), node.input(1)
    data = ctx.kiln(x)
    if len(ctx.shape(x)) == 1:
        data = ctx.add(node, "Reshape", [data], role="as_row", shape=(1, ctx.shape(x)[0]))
    flat = ctx.kiln(indices)
    if len(ctx.shape(indices)) != 1:
        flat = ctx.add(node, "Reshape", [flat], role="flat_indices", shape=(int(np.prod(ctx.shape(indices))),))
    rank = len(ctx.b.g.values[data].shape)
    ctx.add(node, "Gather", [data, flat], out=node.outputs[0], axis=rank - 1)


def _tree_scores(ctx, node, attrs, out=None) -> str:
    """The Kiln TreeEnsemble node for the flattened tables `attrs` on the node's input rows
    (computed in float32; a 1-D input is one row)."""
    x = ctx.kiln(node.input(0))
    if ctx.dtype(node.input(0)) != "float32":
        x = ctx.add(node, "Cast", [x], role="as_float", to="float32")
    if len(ctx.shape(node.input(0))) == 1:
        x = ctx.add(node, "Reshape", [x], role="as_row", shape=(1, ctx.shape(node.input(0))[0]))
    return ctx.add(node, "TreeEnsemble", [x], out=out, **attrs)


def _post_transform(ctx, node, scores: str, transform: str, out: str | None) -> str:
    """The scores after ONNX's post_transform (NONE, SOFTMAX over the targets, LOGISTIC)."""
    if transform == "NONE":
        return ctx.add(node, "Reshape", [scores], out=out, role="scores",
                       shape=ctx.b.g.values[scores].shape) if out else scores
    if transform == "SOFTMAX":
        return ctx.add(node, "Softmax", [scores], out=out, role="softmax", axis=-1)
    if transform == "LOGISTIC":
        return ctx.add(node, "Sigmoid", [scores], out=out, role="logistic")
    raise node.error(f"post_transform {transform} is not supported (NONE, SOFTMAX, LOGISTIC are)")


def _transformed_scores(ctx, node, attrs, transform: str) -> None:
    """The node's output: the ensemble's scores, post-transformed."""
    if transform == "NONE":
        _tree_scores(ctx, node, attrs, out=node.outputs[0])
    else:
        _post_transform(ctx, node, _tree_scores(ctx, node, attrs), transform, node.outputs[0])


@converter(f"{DOMAIN}.TreeEnsemble")
def convert_tree_ensemble(ctx, node):
    """ai.onnx.ml 5: rows [N, F] -> scores [N, n_targets]."""
    transform = node.attr("post_transform", 0)
    if not 0 <= transform < len(ml_trees.POST_TRANSFORM_V5):
        raise node.error(f"post_transform {transform} is not one of 0..4")
    _transformed_scores(ctx, node, ml_trees.tree_ensemble_v5(node), ml_trees.POST_TRANSFORM_V5[transform])


@converter(f"{DOMAIN}.TreeEnsembleRegressor")
def convert_tree_ensemble_regressor(ctx, node):
    """ai.onnx.ml 1 / 3: rows [N, F] -> scores [N, n_targets] (+ base_values, post_transform)."""
    attrs = ml_trees.tree_ensemble_v1(node, "target", int(node.attr("n_targets", 1)))
    _transformed_scores(ctx, node, attrs, node.attr("post_transform", "NONE"))


@converter(f"{DOMAIN}.TreeEnsembleClassifier")
def convert_tree_ensemble_classifier(ctx, node):
    """ai.onnx.ml 1 / 3: rows [N, F] -> labels [N] (int64) and class scores [N, classes].

    As onnxruntime: base_values go to every class, voted for or not; the label is the class of
    the largest score (the first of equal ones). Two classes with votes for class 0 only (the
    binary boosted trees of skl2onnx and onnxmltools) follow onnxruntime's binary rules
    (`_binary_classifier`); other two-class encodings are refused."""
    if node.attr("classlabels_strings") is not None:
        raise node.error("string class labels are not supported (Kiln has no string tensors)")
    labels = ints(node, "classlabels_int64s")
    class_ids = set(ints(node, "class_ids"))
    if any(not 0 <= c < len(labels) for c in class_ids):
        raise node.error(f"class_ids outside 0..{len(labels) - 1}")
    if len(labels) == 2 and class_ids == {0}:
        return _binary_classifier(ctx, node, labels)
    if len(labels) < 3:
        raise node.error(f"{len(labels)} classes voted for as {sorted(class_ids)}: only three classes or more, "
                         "or two with votes for class 0 only, are supported")
    attrs = ml_trees.tree_ensemble_v1(node, "class", len(labels))
    raw = _with_base(ctx, node, attrs)
    if len(node.outputs) > 1 and node.outputs[1]:
        _post_transform(ctx, node, raw, node.attr("post_transform", "NONE"), node.outputs[1])
    best = ctx.add(node, "ArgMax", [raw], role="best", axis=1, keepdims=False, select_last_index=False)
    ctx.add(node, "Gather", [ctx.weight(node, "labels", np.asarray(labels, np.int64)), best],
            out=node.outputs[0], axis=0)


def _with_base(ctx, node, attrs) -> str:
    """The classifier's summed votes plus base_values (added to every class, as onnxruntime does)."""
    base = attrs.pop("base_values")
    raw = _tree_scores(ctx, node, attrs)
    if base:
        raw = ctx.add(node, "Add", [raw, ctx.weight(node, "base", np.asarray(base, np.float32))], role="base")
    return raw


def _binary_classifier(ctx, node, labels: list[int]) -> None:
    """One score s per row (votes for class 0, plus a single base value). onnxruntime's rules:
    with no negative vote weight, s is a probability (label 1 when s > 0.5; scores [1 - p, p]),
    else a margin (label 1 when s > 0; scores [-p, p]); p is s, or sigmoid(s) for LOGISTIC (then
    the margin's first score is sigmoid(-s)); SOFTMAX leaves s as it is."""
    transform = node.attr("post_transform", "NONE")
    if transform not in ("NONE", "LOGISTIC", "SOFTMAX") or len(floats(node, "base_values") or ()) > 1:
        raise node.error(f"binary classifier with post_transform {transform} and "
                         f"{len(floats(node, 'base_values') or ())} base values is not supported")
    positive = all(w >= 0 for w in floats(node, "class_weights") or ())
    s = _with_base(ctx, node, ml_trees.tree_ensemble_v1(node, "class", 1))
    above = ctx.add(node, "Greater", [s, ctx.weight(node, "threshold", np.float32(0.5 if positive else 0.0))],
                    role="above")
    label = ctx.add(node, "Where", [above, ctx.weight(node, "label1", np.int64(labels[1])),
                                    ctx.weight(node, "label0", np.int64(labels[0]))], role="label")
    ctx.add(node, "Reshape", [label], out=node.outputs[0], role="labels", shape=(ctx.b.g.values[s].shape[0],))
    if len(node.outputs) < 2 or not node.outputs[1]:
        return
    p = ctx.add(node, "Sigmoid", [s], role="p") if transform == "LOGISTIC" else s
    if positive:
        other = ctx.add(node, "Sub", [ctx.weight(node, "one", np.float32(1.0)), p], role="other")
    elif transform == "LOGISTIC":
        other = ctx.add(node, "Sigmoid", [ctx.add(node, "Neg", [s], role="minus")], role="other")
    else:
        other = ctx.add(node, "Neg", [p], role="other")
    ctx.add(node, "Concat", [other, p], out=node.outputs[1], axis=1)


# ONNX's names of the TfIdfVectorizer attributes Kiln's op declares (its defaults are the op's);
# the pool, counts and weights become the op's trie and weight tables below.
_TFIDF_NAMES = {"min_gram": "min_gram_length", "max_gram": "max_gram_length", "max_skip": "max_skip_count",
                "child_begin": None, "keys": None, "slots": None, "weights": None, "size": None}
_TFIDF_INTS = {"min_gram": int, "max_gram": int, "max_skip": int}


@converter("TfIdfVectorizer")
def convert_tfidf_vectorizer(ctx, node):
    """Integer tokens [C] or [N, C] -> n-gram counts or weights [(N,) max(ngram_indexes) + 1]."""
    if node.attr("pool_strings") is not None:
        raise node.error("pool_strings is not supported (Kiln has no string tensors; pool_int64s is)")
    indexes = ints(node, "ngram_indexes")
    attrs = declared_attrs(node, "TfIdfVectorizer", names=_TFIDF_NAMES, convert=_TFIDF_INTS)
    defaults = get_op("TfIdfVectorizer").attributes
    min_gram, max_gram = (attrs.get(k, defaults[k]) for k in ("min_gram", "max_gram"))
    trie = ngram_trie.pool_trie(ints(node, "pool_int64s"), ints(node, "ngram_counts"), indexes, min_gram, max_gram,
                                node.error)
    size = max(indexes, default=-1) + 1
    weights = node.attr("weights") or []
    if weights and len(weights) != len(indexes):
        raise node.error(f"weights holds {len(weights)} values for {len(indexes)} n-grams")
    if weights:  # weights[j] belongs to n-gram j (as in the spec and onnxruntime): moved to its coordinate
        weights = np.ones(size, np.float32)
        weights[indexes] = node.attr("weights")
    ctx.add(node, "TfIdfVectorizer", [ctx.kiln(node.input(0))], out=node.outputs[0],
            **{**attrs, "min_gram": min_gram, "max_gram": max_gram, "size": size,
               "weights": tuple(float(np.float32(w)) for w in weights), **trie})


_LABEL_TYPES = ("float32", "int64", "int32", "int16")


def _label_table(node, side: str) -> tuple[np.ndarray | None, str]:
    """The keys or values (`side`) of a LabelEncoder and their dtype; None when absent."""
    if node.attr(f"{side}_strings") is not None or (side == "keys" and node.attr("classes_strings") is not None):
        raise node.error("string tensors are not supported (Kiln has no strings)")
    if node.attr(f"{side}_tensor") is not None:
        data = numpy_helper.to_array(node.attr(f"{side}_tensor")).reshape(-1)
        if data.dtype.kind not in "fi" or str(data.dtype) not in (*_LABEL_TYPES, "float64"):
            raise node.error(f"{side}_tensor of {data.dtype} is not supported (string tensors neither)")
        return data, str(data.dtype)
    if node.attr(f"{side}_floats") is not None:
        return np.asarray(node.attr(f"{side}_floats"), np.float32), "float32"
    if node.attr(f"{side}_int64s") is not None:
        return np.asarray(node.attr(f"{side}_int64s"), np.int64), "int64"
    return None, ""


@converter(f"{DOMAIN}.LabelEncoder")
def convert_label_encoder(ctx, node):
    """Numeric keys -> numeric values, a default for the others (ai.onnx.ml 2 and 4)."""
    keys, key_type = _label_table(node, "keys")
    values, value_type = _label_table(node, "values")
    if keys is None or values is None or len(keys) != len(values):
        raise node.error("needs keys_* and values_* of the same length")
    x = node.input(0)
    if key_type == "float64" or ctx.onnx_dtype(x) not in _LABEL_TYPES:  # float64: exact matches need float64
        raise node.error(f"{ctx.onnx_dtype(x)} input with {key_type} keys is not supported "
                         f"(supported: {', '.join(_LABEL_TYPES)})")
    if (key_type == "float32") != (ctx.dtype(x) == "float32"):
        raise node.error(f"{key_type} keys for an input of {ctx.dtype(x)}")
    to = "float32" if value_type == "float64" else value_type
    default_tensor = node.attr("default_tensor")
    if default_tensor is not None:
        default = numpy_helper.to_array(default_tensor).reshape(-1)[0]
    elif to == "float32":
        default = node.attr("default_float", -0.0)
    else:
        default = node.attr("default_int64", -1)
    mapping, nan_value = {}, None
    info = np.iinfo(ctx.dtype(x)) if ctx.dtype(x) != "float32" else None
    for k, v in zip(keys.tolist(), values.astype(to).tolist()):
        if k != k:
            nan_value = v  # any NaN input, whatever its bits
        elif info is None or info.min <= k <= info.max:  # a key the input cannot hold never matches
            mapping[k] = v  # a repeated key: the last one counts
    ctx.add(node, "LabelEncoder", [ctx.kiln(x)], out=node.outputs[0], keys=tuple(sorted(mapping)),
            values=tuple(mapping[k] for k in sorted(mapping)), default=np.asarray(default).astype(to).item(),
            nan_key=nan_value is not None, nan_value=nan_value if nan_value is not None else 0, to=to)
