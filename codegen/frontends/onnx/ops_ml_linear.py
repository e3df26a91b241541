"""The preprocessing and linear models of ai.onnx.ml that skl2onnx exports (Scaler, Normalizer,
Imputer, FeatureVectorizer, OneHotEncoder, LinearRegressor, LinearClassifier), decomposed into
Kiln ops (FullyConnected, Add, Where, Softmax, ArgMax, Gather ...) so the target's kernels
serve them; ZipMap is refused (a C API cannot return a sequence of maps). The semantics are
onnxruntime's (its ml provider), including its binary-classifier and post_transform rules.
SVMClassifier and SVMRegressor are in ops_ml_svm.py."""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ml_trees import floats, ints
from codegen.frontends.onnx.reader import OnnxNode

DOMAIN = "ai.onnx.ml"
TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")


def const(ctx: ConvertContext, node: OnnxNode, role: str, data, dtype=np.float32) -> str:
    return ctx.weight(node, role, np.asarray(data, dtype))


def as_float(ctx: ConvertContext, node: OnnxNode, name: str) -> str:
    """The ONNX tensor as float32 (int32/int64 inputs cast, as onnxruntime does)."""
    if ctx.dtype(name) == "float32":
        return ctx.kiln(name)
    if ctx.dtype(name) not in ("int32", "int64"):
        raise node.error(f"input of {ctx.onnx_dtype(name)} is not supported (float, double, int32, int64 are)")
    return ctx.add(node, "Cast", [ctx.kiln(name)], role="as_float", to="float32")


def rows(ctx: ConvertContext, node: OnnxNode, features: int | None = None) -> str:
    """The node's input as float32 rows [N, F] (a 1-D input is one row, as in onnxruntime)."""
    shape = ctx.shape(node.input(0))
    if len(shape) not in (1, 2):
        raise node.error(f"input of shape {list(shape)}: 1-D or 2-D [N, F] expected")
    if features is not None and shape[-1] != features:
        raise node.error(f"the input has {shape[-1]} features, the coefficients {features}")
    x = as_float(ctx, node, node.input(0))
    return ctx.add(node, "Reshape", [x], role="as_row", shape=(1, shape[0])) if len(shape) == 1 else x


def matrix(node: OnnxNode, name: str, count: int) -> np.ndarray:
    """A float list attribute as `count` rows."""
    data = np.asarray(floats(node, name) or [], np.float32)
    if count < 1 or data.size == 0 or data.size % count:
        raise node.error(f"{name} holds {data.size} values, not a multiple of {count} rows")
    return data.reshape(count, -1)


def output(node: OnnxNode, index: int) -> str:
    """The ONNX name of an output, '' when absent."""
    return node.outputs[index] if index < len(node.outputs) else ""


def transform_name(node: OnnxNode) -> str:
    transform = node.attr("post_transform", "NONE")
    if transform not in TRANSFORMS:
        raise node.error(f"post_transform {transform} is not one of {', '.join(TRANSFORMS)}")
    return transform


def identity(ctx: ConvertContext, node: OnnxNode, value: str, out: str, role: str) -> str:
    """`value` bound to the ONNX output `out` (a Reshape to its own shape: a view)."""
    return ctx.add(node, "Reshape", [value], out=out, role=role, shape=ctx.b.g.values[value].shape)


def transformed_scores(ctx: ConvertContext, node: OnnxNode, raw: str, transform: str, out: str) -> str:
    """onnxruntime's post_transform of [N, K] scores with K >= 2 (batched_update_scores_inplace)."""
    if transform == "NONE":
        return identity(ctx, node, raw, out, "scores")
    if transform == "LOGISTIC":
        return ctx.add(node, "Sigmoid", [raw], out=out, role="logistic")
    if transform == "SOFTMAX":
        return ctx.add(node, "Softmax", [raw], out=out, role="softmax", axis=-1)
    if transform == "PROBIT":
        return probit(ctx, node, raw, out)
    return softmax_zero(ctx, node, raw, out)


def softmax_zero(ctx: ConvertContext, node: OnnxNode, v: str, out: str) -> str:
    """onnxruntime's ComputeSoftmaxZero: scores within 1e-7 of zero stay (nearly) zero and
    are left out of the sum."""
    rank = len(ctx.b.g.values[v].shape)
    top = ctx.add(node, "ReduceMax", [v], role="sz_max", axes=(rank - 1,), keepdims=True)
    nonzero = ctx.add(node, "Greater", [ctx.add(node, "Abs", [v], role="sz_abs"), const(ctx, node, "sz_eps", 1e-7)],
                      role="sz_nonzero")
    e = ctx.add(node, "Exp", [ctx.add(node, "Sub", [v, top], role="sz_shift")], role="sz_exp")
    small = ctx.add(node, "Mul", [v, ctx.add(node, "Exp", [ctx.add(node, "Neg", [top], role="sz_neg")],
                                             role="sz_scale")], role="sz_small")
    picked = ctx.add(node, "Where", [nonzero, e, small], role="sz_pick")
    counted = ctx.add(node, "Where", [nonzero, e, const(ctx, node, "sz_zero", 0.0)], role="sz_counted")
    total = ctx.add(node, "ReduceSum", [counted], role="sz_sum", axes=(rank - 1,), keepdims=True)
    return ctx.add(node, "Div", [picked, total], out=out, role="softmax_zero")


def probit(ctx: ConvertContext, node: OnnxNode, p: str, out: str) -> str:
    """onnxruntime's ComputeProbit: sqrt(2) * ErfInv(2p - 1) with its closed-form ErfInv
    approximation (Winitzki's, a = 0.147), step by step in float32 as its C++ does."""
    def op(kind, *ins, role):
        return ctx.add(node, kind, list(ins), role=f"probit_{role}")

    def c(role, value):
        return const(ctx, node, f"probit_{role}", value)

    one = c("one", 1.0)
    x = op("Sub", op("Mul", p, c("two", 2.0), role="2p"), one, role="x")
    sign = op("Where", op("Less", x, c("zero", 0.0), role="negative"), c("minus_one", -1.0), c("plus_one", 1.0),
              role="sign")
    log = op("Log", op("Mul", op("Sub", one, x, role="1mx"), op("Add", one, x, role="1px"), role="t"), role="log")
    v = op("Add", c("v0", np.float32(2) / (np.float32(3.14159) * np.float32(0.147))),
           op("Mul", c("half", 0.5), log, role="half_log"), role="v")
    v2 = op("Mul", c("v2k", np.float32(1) / np.float32(0.147)), log, role="v2")
    v3 = op("Sub", op("Sqrt", op("Sub", op("Mul", v, v, role="vv"), v2, role="disc"), role="root"), v, role="v3")
    erfinv = op("Mul", sign, op("Sqrt", v3, role="sqrt_v3"), role="erfinv")
    return ctx.add(node, "Mul", [erfinv, c("sqrt2", np.float32(np.sqrt(2.0)))], out=out, role="probit")


def binary_scores(ctx: ConvertContext, node: OnnxNode, s: str, transform: str, out: str, negate: bool) -> str:
    """onnxruntime's two scores [N, 2] from one score s per row: LOGISTIC gives [1 - p, p] with
    p = sigmoid(s); NONE [-s, s] when `negate` (SVMClassifier) else [1 - s, s]; SOFTMAX and
    SOFTMAX_ZERO [1 - s, s] (PROBIT leaves half of them unwritten: the callers refuse it)."""
    if transform == "LOGISTIC":
        s = ctx.add(node, "Sigmoid", [s], role="logistic")
    if transform == "NONE" and negate:
        other = ctx.add(node, "Neg", [s], role="other")
    else:
        other = ctx.add(node, "Sub", [const(ctx, node, "one", 1.0), s], role="other")
    return ctx.add(node, "Concat", [other, s], out=out, role="scores", axis=1)


def int_labels(node: OnnxNode, attr: str = "classlabels_ints") -> list[int]:
    if node.attr("classlabels_strings") is not None:
        raise node.error("string class labels (classlabels_strings) are not supported: Kiln has no string tensors; "
                         "train with integer class labels")
    return ints(node, attr)


def label_of_best(ctx: ConvertContext, node: OnnxNode, scores: str, labels: list[int], out: str) -> str:
    """labels[argmax(scores)] per row (the first of equal maxima, as std::max_element and
    onnxruntime's strict > scan)."""
    best = ctx.add(node, "ArgMax", [scores], role="best", axis=1, keepdims=False, select_last_index=False)
    return ctx.add(node, "Gather", [const(ctx, node, "labels", labels, np.int64), best], out=out, role="label",
                   axis=0)


@converter(f"{DOMAIN}.Scaler")
def convert_scaler(ctx, node):
    """(x - offset) * scale, offset and scale one value or one per feature (last axis)."""
    scale, offset = floats(node, "scale") or [], floats(node, "offset") or []
    shape = ctx.shape(node.input(0))
    if not scale or len(scale) != len(offset) or (len(scale) > 1 and (len(shape) > 2 or len(scale) != shape[-1])):
        raise node.error(f"scale ({len(scale)} values) and offset ({len(offset)}) must both hold 1 value or one "
                         f"per feature of the 1-D or 2-D input {list(shape)}")
    size = () if len(scale) == 1 else (len(scale),)
    shifted = ctx.add(node, "Sub", [as_float(ctx, node, node.input(0)),
                                    const(ctx, node, "offset", np.reshape(offset, size))], role="shift")
    ctx.add(node, "Mul", [shifted, const(ctx, node, "scale", np.reshape(scale, size))], out=node.outputs[0])


@converter(f"{DOMAIN}.Normalizer")
def convert_normalizer(ctx, node):
    """Each row divided by its MAX (largest value), L1 or L2 norm; a row whose divisor is 0
    is copied. L2 is sign(x) * sqrt(x^2 / sum x^2), the order onnxruntime computes it in."""
    norm = node.attr("norm", "MAX")
    shape = ctx.shape(node.input(0))
    if norm not in ("MAX", "L1", "L2") or len(shape) not in (1, 2):
        raise node.error(f"norm {norm} of a {len(shape)}-D input: MAX, L1 or L2 of a 1-D or 2-D input are supported")
    x = as_float(ctx, node, node.input(0))
    axes = (len(shape) - 1,)
    if norm == "MAX":
        divisor = ctx.add(node, "ReduceMax", [x], role="max", axes=axes, keepdims=True)
        scaled = ctx.add(node, "Div", [x, divisor], role="scaled")
    elif norm == "L1":
        divisor = ctx.add(node, "ReduceSum", [ctx.add(node, "Abs", [x], role="abs")], role="l1", axes=axes,
                          keepdims=True)
        scaled = ctx.add(node, "Div", [x, divisor], role="scaled")
    else:
        squares = ctx.add(node, "Mul", [x, x], role="squares")
        divisor = ctx.add(node, "ReduceSum", [squares], role="l2", axes=axes, keepdims=True)
        root = ctx.add(node, "Sqrt", [ctx.add(node, "Div", [squares, divisor], role="share")], role="root")
        negative = ctx.add(node, "Less", [x, const(ctx, node, "zero", 0.0)], role="negative")
        scaled = ctx.add(node, "Where", [negative, ctx.add(node, "Neg", [root], role="minus"), root], role="scaled")
    zero = ctx.add(node, "Equal", [divisor, const(ctx, node, "zero_norm", 0.0)], role="zero_norm")
    ctx.add(node, "Where", [zero, x, scaled], out=node.outputs[0])


@converter(f"{DOMAIN}.Imputer")
def convert_imputer(ctx, node):
    """Values equal to replaced_value_* (any NaN when it is NaN) replaced by imputed_value_*:
    one per feature when there are as many as the last axis holds, else the first one."""
    x = node.input(0)
    float_values, int_values = node.attr("imputed_value_floats"), node.attr("imputed_value_int64s")
    if ctx.dtype(x) == "float32" and float_values:
        values, replaced, dtype = float_values, float(node.attr("replaced_value_float", 0.0)), np.float32
    elif ctx.dtype(x) == "int64" and int_values:
        values, replaced, dtype = int_values, int(node.attr("replaced_value_int64", 0)), np.int64
    else:
        raise node.error(f"{ctx.onnx_dtype(x)} input with imputed_value_floats / imputed_value_int64s: float input "
                         "with floats or int64 input with int64s are supported")
    shape = ctx.shape(x)
    fill = values if len(shape) and len(values) == shape[-1] else values[0]
    if replaced != replaced:
        missing = ctx.add(node, "IsNaN", [ctx.kiln(x)], role="missing")
    else:
        missing = ctx.add(node, "Equal", [ctx.kiln(x), const(ctx, node, "replaced", replaced, dtype)], role="missing")
    ctx.add(node, "Where", [missing, const(ctx, node, "imputed", fill, dtype), ctx.kiln(x)], out=node.outputs[0])


@converter(f"{DOMAIN}.FeatureVectorizer")
def convert_feature_vectorizer(ctx, node):
    """The inputs' rows side by side as float32 [N, sum(inputdimensions)]: each input cut or
    padded with zeros to its inputdimensions entry."""
    dims = ints(node, "inputdimensions")
    inputs = [i for i in node.inputs if i]
    if not inputs or len(dims) != len(inputs) or min(dims) < 1:
        raise node.error(f"{len(inputs)} inputs for inputdimensions {dims}: one positive width per input expected")
    batch = 1 if len(ctx.shape(inputs[0])) == 1 else ctx.shape(inputs[0])[0]
    parts = []
    for k, (name, width) in enumerate(zip(inputs, dims)):
        shape = ctx.shape(name)
        n, size = (1, shape[0]) if len(shape) == 1 else (shape[0], int(np.prod(shape[1:])))
        if n != batch:
            raise node.error(f"input {k} has {n} rows, input 0 {batch}")
        part = ctx.add(node, "Reshape", [as_float(ctx, node, name)], role=f"rows_{k}", shape=(n, size))
        if size > width:
            part = ctx.add(node, "Slice", [part], role=f"cut_{k}", starts=(0, 0), ends=(n, width), steps=(1, 1))
        elif size < width:
            part = ctx.add(node, "Concat", [part, const(ctx, node, f"pad_{k}", np.zeros((n, width - size)))],
                           role=f"padded_{k}", axis=1)
        parts.append(part)
    ctx.add(node, "Concat", parts, out=node.outputs[0], axis=1)


@converter(f"{DOMAIN}.OneHotEncoder")
def convert_one_hot_encoder(ctx, node):
    """x [..] -> float32 [.., len(cats_int64s)]: 1 at the category of each value (floats are
    truncated to int64, as onnxruntime does). An unknown value gives a row of zeros; with
    zeros=0 onnxruntime fails the run instead, which a C function cannot do."""
    if node.attr("cats_strings") is not None:
        raise node.error("string categories (cats_strings) are not supported: Kiln has no string tensors; "
                         "encode the strings as integers before the model")
    cats = ints(node, "cats_int64s")
    if not cats:
        raise node.error("cats_int64s is empty")
    x, shape = ctx.kiln(node.input(0)), ctx.shape(node.input(0))
    if ctx.dtype(node.input(0)) != "int64":
        x = ctx.add(node, "Cast", [x], role="as_int64", to="int64")
    column = ctx.add(node, "Reshape", [x], role="column", shape=(*shape, 1))
    hits = ctx.add(node, "Equal", [column, const(ctx, node, "cats", cats, np.int64)], role="hits")
    last = {c: k for k, c in enumerate(cats)}  # a repeated category: its last position counts
    if len(last) == len(cats):
        ctx.add(node, "Cast", [hits], out=node.outputs[0], to="float32")
        return
    keep = np.array([last[c] == k for k, c in enumerate(cats)], np.float32)
    ones = ctx.add(node, "Cast", [hits], role="ones", to="float32")
    ctx.add(node, "Mul", [ones, const(ctx, node, "keep", keep)], out=node.outputs[0])


@converter(f"{DOMAIN}.LinearRegressor")
def convert_linear_regressor(ctx, node):
    """x [N, F] @ coefficients[targets, F]^T + intercepts -> [N, targets] (intercepts used
    only when there is one per target, as onnxruntime does)."""
    if transform_name(node) != "NONE":
        raise node.error(f"post_transform {node.attr('post_transform')} is not supported (NONE is)")
    targets = int(node.attr("targets", 1))
    weights = matrix(node, "coefficients", targets)
    ins = [rows(ctx, node, weights.shape[1]), const(ctx, node, "weights", weights)]
    intercepts = floats(node, "intercepts") or []
    if len(intercepts) == targets:
        ins.append(const(ctx, node, "intercepts", intercepts))
    ctx.add(node, "FullyConnected", ins, out=node.outputs[0])


@converter(f"{DOMAIN}.LinearClassifier")
def convert_linear_classifier(ctx, node):
    """Scores x @ coefficients^T + intercepts (one row per intercept); label the class of the
    largest raw score. One row (binary): label classlabels[1] (or 1) when the score > 0, else
    classlabels[0] (or 0); with two labels the scores are two columns (binary_scores), else s
    alone (onnxruntime applies no transform but PROBIT to it). multi_class is ignored, as onnxruntime ignores it."""
    labels, transform = int_labels(node), transform_name(node)
    intercepts = floats(node, "intercepts") or []
    weights = matrix(node, "coefficients", len(intercepts))
    raw = ctx.add(node, "FullyConnected", [rows(ctx, node, weights.shape[1]), const(ctx, node, "weights", weights),
                                           const(ctx, node, "intercepts", intercepts)], role="raw")
    labels_out, scores_out = output(node, 0), output(node, 1)
    if len(intercepts) > 1:
        if len(labels) != len(intercepts):
            raise node.error(f"{len(labels)} classlabels_ints for {len(intercepts)} classes")
        label_of_best(ctx, node, raw, labels, labels_out)
        if scores_out:
            transformed_scores(ctx, node, raw, transform, scores_out)
        return
    binary = len(labels) == 2
    if binary and transform == "PROBIT":
        raise node.error("one coefficient row, two labels and PROBIT: onnxruntime leaves half of the scores "
                         "unwritten, so there is nothing to match")
    above = ctx.add(node, "Greater", [raw, const(ctx, node, "threshold", 0.0)], role="above")
    positive, negative = (labels[1], labels[0]) if binary else (1, 0)
    label = ctx.add(node, "Where", [above, const(ctx, node, "positive", positive, np.int64),
                                    const(ctx, node, "negative", negative, np.int64)], role="label_column")
    ctx.add(node, "Reshape", [label], out=labels_out, role="labels", shape=(ctx.b.g.values[raw].shape[0],))
    if not scores_out:
        return
    if binary:
        binary_scores(ctx, node, raw, transform, scores_out, negate=False)
    elif transform == "PROBIT":
        probit(ctx, node, raw, scores_out)
    else:  # onnxruntime applies no other transform to a single score
        identity(ctx, node, raw, scores_out, "scores")


@converter(f"{DOMAIN}.ZipMap")
def convert_zip_map(ctx, node):
    raise node.error("its output is a sequence of maps, which a C function cannot return: export the classifier "
                     "without it, skl2onnx.to_onnx(..., options={id(classifier): {'zipmap': False}}), to get the "
                     "probabilities as a float tensor [N, classes]")
