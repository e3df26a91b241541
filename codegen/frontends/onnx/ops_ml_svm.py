"""SVMRegressor and SVMClassifier of ai.onnx.ml (skl2onnx's SVR, NuSVR, OneClassSVM, SVC, NuSVC),
decomposed into Kiln ops as onnxruntime computes them: the kernel values of a row against every
support vector (FullyConnected for LINEAR, POLY and SIGMOID; SquaredDistance, summed feature by
feature, for RBF), then the pairwise one-vs-one decision values as one more
FullyConnected, the votes as a third one over (decision > 0) and the label of the most votes.

Refused: prob_a / prob_b (SVC(probability=True)): onnxruntime turns the pairwise Platt
probabilities into class probabilities with libsvm's iterative coupling solver (up to 100
passes, a data-dependent stop), which no fixed composition reproduces."""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ml_trees import floats, ints
from codegen.frontends.onnx.ops_ml_linear import (DOMAIN, binary_scores, const, int_labels, label_of_best, matrix,
                                                  output, rows, transform_name, transformed_scores)
from codegen.frontends.onnx.reader import OnnxNode

KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


def kernel_values(ctx: ConvertContext, node: OnnxNode, x: str, vectors: np.ndarray) -> str:
    """k(x_n, v) for every row of x [N, F] and support vector v of `vectors` [V, F] -> [N, V]:
    LINEAR x.v, POLY (gamma x.v + coef0)^degree, SIGMOID tanh(gamma x.v + coef0),
    RBF exp(-gamma |x - v|^2) (kernel_params = [gamma, coef0, degree])."""
    kind = node.attr("kernel_type", "LINEAR")
    if kind not in KERNELS:
        raise node.error(f"kernel_type {kind} is not one of {', '.join(KERNELS)}")
    params = floats(node, "kernel_params") or [0.0, 0.0, 0.0]
    if len(params) < 3:
        raise node.error(f"kernel_params holds {len(params)} values: [gamma, coef0, degree] expected")
    gamma, coef0, degree = params[:3]
    if kind == "RBF":  # summed difference by difference, as onnxruntime does (no |x|^2 - 2x.v + |v|^2 cancellation)
        distance = ctx.add(node, "SquaredDistance", [x, const(ctx, node, "support_vectors", vectors)],
                           role="rbf_distance")
        scaled = ctx.add(node, "Mul", [distance, const(ctx, node, "minus_gamma", -np.float32(gamma))],
                         role="rbf_scaled")
        return ctx.add(node, "Exp", [scaled], role="kernel")
    dot = ctx.add(node, "FullyConnected", [x, const(ctx, node, "support_vectors", vectors)], role="dot")
    if kind == "LINEAR":
        return dot
    t = ctx.add(node, "Mul", [dot, const(ctx, node, "gamma", gamma)], role="gamma_dot")
    if coef0 != 0.0:
        t = ctx.add(node, "Add", [t, const(ctx, node, "coef0", coef0)], role="plus_coef0")
    if kind == "SIGMOID":
        return ctx.add(node, "Tanh", [t], role="kernel")
    if degree in (2.0, 3.0):  # onnxruntime's Eigen square() / cube(): products, not powf
        square = ctx.add(node, "Mul", [t, t], role="square")
        return square if degree == 2.0 else ctx.add(node, "Mul", [square, t], role="kernel")
    return ctx.add(node, "Pow", [t, const(ctx, node, "degree", degree)], role="kernel")


@converter(f"{DOMAIN}.SVMRegressor")
def convert_svm_regressor(ctx, node):
    """[N, F] -> [N, 1]: coefficients . k(x, support vectors) + rho[0], or with n_supports = 0
    coefficients . x + rho[0]; one_class=1 gives the sign (1 or -1) instead."""
    if transform_name(node) != "NONE":
        raise node.error(f"post_transform {node.attr('post_transform')} is not supported (onnxruntime ignores it, "
                         "the ONNX spec applies it; NONE is what skl2onnx writes)")
    count, rho = int(node.attr("n_supports", 0)), floats(node, "rho") or []
    if not rho:
        raise node.error("rho is empty")
    coefficients = matrix(node, "coefficients", 1)
    if count > 0:
        vectors = matrix(node, "support_vectors", count)
        kernel = kernel_values(ctx, node, rows(ctx, node, vectors.shape[1]), vectors)
        if coefficients.shape[1] != count:
            raise node.error(f"{coefficients.shape[1]} coefficients for {count} support vectors")
    else:
        kernel = rows(ctx, node, coefficients.shape[1])
    one_class = bool(node.attr("one_class", 0))
    y = ctx.add(node, "FullyConnected", [kernel, const(ctx, node, "coefficients", coefficients),
                                         const(ctx, node, "rho", rho[:1])],
                out=None if one_class else node.outputs[0], role="decision")
    if one_class:
        above = ctx.add(node, "Greater", [y, const(ctx, node, "zero", 0.0)], role="inlier")
        ctx.add(node, "Where", [above, const(ctx, node, "one", 1.0), const(ctx, node, "minus_one", -1.0)],
                out=node.outputs[0])


def pair_tables(node: OnnxNode, counts: list[int], coefficients: np.ndarray):
    """For the classes' pairs (i, j), i < j, in onnxruntime's order: the weights [P, V] that
    turn kernel values into the pairwise decision values (coefficients[j-1] over class i's
    support vectors, coefficients[i] over class j's), and the vote tables: votes = (d > 0)
    @ (first - second)^T + second.sum(1), class i winning a pair when d > 0, j otherwise."""
    classes, starts = len(counts), np.concatenate([[0], np.cumsum(counts)]).astype(int)
    pairs = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
    weights = np.zeros((len(pairs), starts[-1]), np.float32)
    first, second = np.zeros((classes, len(pairs)), np.float32), np.zeros((classes, len(pairs)), np.float32)
    for p, (i, j) in enumerate(pairs):
        weights[p, starts[i]:starts[i + 1]] = coefficients[j - 1, starts[i]:starts[i + 1]]
        weights[p, starts[j]:starts[j + 1]] = coefficients[i, starts[j]:starts[j + 1]]
        first[i, p], second[j, p] = 1.0, 1.0
    return weights, first - second, second.sum(axis=1)


@converter(f"{DOMAIN}.SVMClassifier")
def convert_svm_classifier(ctx, node):
    """[N, F] -> labels [N] (int64) and scores. With support vectors (libsvm's one-vs-one):
    the label of the most pairwise votes (the first on a tie), scores the C(C-1)/2 decision
    values post-transformed, or for two classes onnxruntime's two columns (binary_scores).
    Without (liblinear): scores x . coefficients[c] + rho[0], label of the largest, with
    onnxruntime's two-class threshold (0.5 when every coefficient is >= 0, else 0)."""
    labels, transform = int_labels(node), transform_name(node)
    if len(labels) < 2:
        raise node.error(f"{len(labels)} classlabels_ints: two classes or more are needed")
    have_proba = bool(floats(node, "prob_a"))
    counts, rho = ints(node, "vectors_per_class"), floats(node, "rho") or []
    if any(c < 0 for c in counts):
        raise node.error(f"vectors_per_class {counts} has a negative count")
    labels_out, scores_out = output(node, 0), output(node, 1)
    if sum(counts) == 0:
        return _liblinear_classifier(ctx, node, labels, transform, rho, have_proba)
    if have_proba:
        raise node.error("prob_a / prob_b (Platt scaling, SVC(probability=True)) are not supported: onnxruntime "
                         "couples the pairwise probabilities with libsvm's iterative solver; export an SVC with "
                         "probability=False (the label is the same)")
    pairs = len(labels) * (len(labels) - 1) // 2
    if len(counts) != len(labels) or len(rho) < pairs:
        raise node.error(f"{len(counts)} vectors_per_class and {len(rho)} rho for {len(labels)} classes")
    if transform == "PROBIT" and len(labels) == 2:
        raise node.error("two classes with PROBIT: onnxruntime leaves half of the scores unwritten")
    vectors = matrix(node, "support_vectors", sum(counts))
    coefficients = matrix(node, "coefficients", len(labels) - 1)
    if coefficients.shape[1] != sum(counts):
        raise node.error(f"coefficients of {coefficients.shape[1]} columns for {sum(counts)} support vectors")
    weights, vote_weights, vote_base = pair_tables(node, counts, coefficients)
    kernel = kernel_values(ctx, node, rows(ctx, node, vectors.shape[1]), vectors)
    decision = ctx.add(node, "FullyConnected", [kernel, const(ctx, node, "pair_weights", weights),
                                                const(ctx, node, "rho", rho[:pairs])], role="decision")
    won = ctx.add(node, "Cast", [ctx.add(node, "Greater", [decision, const(ctx, node, "zero", 0.0)], role="won")],
                  role="won_float", to="float32")
    votes = ctx.add(node, "FullyConnected", [won, const(ctx, node, "vote_weights", vote_weights),
                                             const(ctx, node, "vote_base", vote_base)], role="votes")
    label_of_best(ctx, node, votes, labels, labels_out)
    if not scores_out:
        return
    if pairs > 1:
        transformed_scores(ctx, node, decision, transform, scores_out)
        return
    binary_scores(ctx, node, decision, transform, scores_out, negate=True)


def _liblinear_classifier(ctx, node, labels: list[int], transform: str, rho: list[float], have_proba: bool) -> None:
    """No support vectors: one coefficient row per class, scored x . w_c + rho[0]."""
    if not rho:
        raise node.error("rho is empty")
    coefficients = matrix(node, "coefficients", len(labels))
    scores = ctx.add(node, "FullyConnected", [rows(ctx, node, coefficients.shape[1]),
                                              const(ctx, node, "coefficients", coefficients),
                                              const(ctx, node, "rho", np.full(len(labels), rho[0]))], role="raw")
    if len(labels) == 2 and not have_proba:
        best = label_of_best(ctx, node, scores, labels, "")
        top = ctx.add(node, "ReduceMax", [scores], role="top", axes=(1,), keepdims=False)
        positive = bool(np.all(coefficients >= 0))
        above = ctx.add(node, "GreaterOrEqual" if positive else "Greater",
                        [top, const(ctx, node, "threshold", 0.5 if positive else 0.0)], role="above")
        ctx.add(node, "Where", [above, const(ctx, node, "label1", labels[1], np.int64), best], out=output(node, 0))
    else:
        label_of_best(ctx, node, scores, labels, output(node, 0))
    if output(node, 1):
        transformed_scores(ctx, node, scores, transform, output(node, 1))
