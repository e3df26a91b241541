"""The ONNX import driver: graph inputs, one converter call per node, graph outputs.

Nodes whose inputs are all constants are computed at import time with ONNX's own reference
implementation (shape arithmetic of PyTorch exports, transposed or dequantized weights), so
they need no Kiln operator. Every other node goes to the converter registered for its type
(context.CONVERTERS, filled by the ops_* modules, which the package imports first: converters.py).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

from codegen import limits
from codegen.errors import KilnError, UnsupportedOpsError
from codegen.frontends import SourceOp
from codegen.frontends.onnx.context import CONVERTERS, ConvertContext
from codegen.frontends.onnx.empty import (bind_empty_input, bind_empty_outputs, convert_runtime, infer_outputs,
                                          reads_empty)
from codegen.frontends.onnx.reader import DEFAULT_DOMAINS, ELEM_TYPE_NAMES, OnnxModel, OnnxNode, _short
from codegen.frontends.onnx.reader import _node as reader_node
from codegen.ir.builder import GraphBuilder
from codegen.ir.graph import Graph
from codegen.ops.bounded import bounded_values
from codegen.ir.types import compute_dtype, np_dtype

# Never computed at import time: random, or carrying subgraphs evaluated elsewhere.
NO_FOLD = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
           "Bernoulli", "If", "Loop", "Scan"}
# Sequences and optionals are not tensors: their converters (ops_sequence, ops_optional) track them.
NO_FOLD |= {"SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt", "SequenceLength",
            "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional", "OptionalHasElement",
            "OptionalGetElement"}
# Ops whose outputs are constants whatever their inputs (shapes are static in Kiln).
CONST_PRODUCERS = {"Constant", "Shape", "Size"}
# Ops whose output size comes from the values of their inputs, not only from their shapes:
# folding one of them is refused unless ONNX shape inference can size the result first.
SIZED_BY_VALUES = {"ConstantOfShape", "Expand", "Tile", "Range", "OneHot", "Resize", "Upsample", "Pad",
                   "CenterCropPad", "Col2Im", "EyeLike", "RandomNormal", "RandomUniform"}


def _folds(node: OnnxNode, consts: set[str]) -> bool:
    ins = [i for i in node.inputs if i]
    return (node.domain in DEFAULT_DOMAINS and node.op_type not in NO_FOLD and bool(ins)
            and all(i in consts for i in ins))


def classify(model: OnnxModel, specialized: set[str] = frozenset(), bodies: bool = False) -> list[SourceOp]:
    """Every node, marked supported (a converter exists, or it folds to a constant) or not;
    with `bodies`, also the nodes inside If/Loop/Scan subgraphs, named `owner/node` (for
    `kiln inspect`: a build converts only the branches and iterations it compiles)."""
    consts = set(model.initializers) | set(specialized)
    return _classify_nodes(model.nodes, consts, {vi.name for vi in model.inputs}, bodies)


def _classify_nodes(nodes: list[OnnxNode], consts: set[str], graph_inputs: set[str], bodies: bool,
                    owner: str = "") -> list[SourceOp]:
    result = []
    for node in nodes:
        folded = _folds(node, consts)
        known = node.full_type in CONVERTERS  # other domains' converters register as domain.OpType
        if folded or (known and node.op_type in CONST_PRODUCERS):
            consts.update(o for o in node.outputs if o)
        if folded:
            reason = "computed at compile time (constant inputs)"
        elif known:
            reason = ""
        elif node.domain not in DEFAULT_DOMAINS:
            reason = f"custom operator domain '{node.domain}'"
        else:
            reason = f"no Kiln mapping for ONNX {node.op_type}"
            runtime = [i for i in node.inputs if i and i not in consts]
            if runtime and all(i in graph_inputs for i in runtime):  # a constant node once they are fixed
                reason += " (computed at compile time with its inputs fixed: --specialize " + \
                    " --specialize ".join(f"{i}=..." for i in runtime) + ")"
        result.append(SourceOp(node.full_type, owner + node.name, folded or known, reason))
        for body in (node.proto.attribute if bodies and node.proto is not None and not folded else ()):
            for graph in ([body.g] if body.HasField("g") else list(body.graphs)):
                inner = [reader_node(proto, k) for k, proto in enumerate(graph.node)]
                result += _classify_nodes(inner, consts | {t.name for t in graph.initializer}, set(), True,
                                          f"{owner}{node.name}/")
    return result


def build_graph(model: OnnxModel, input_shapes: dict[str, tuple[int, ...]],
                specialized: dict[str, np.ndarray] | None = None) -> Graph:
    """The Kiln graph of `model`; `specialized`: graph inputs whose values the build is fixed to
    (`--specialize`), read as constants by the graph and checked at run time by the C code."""
    specialized = dict(specialized or {})
    unsupported = [(s.op_type, s.node) for s in classify(model, set(specialized)) if not s.supported]
    if unsupported:
        raise UnsupportedOpsError(unsupported)
    if model.checker_finding is not None:  # after the listing above, which says more to the user
        raise model.checker_finding
    b = GraphBuilder(model.name)
    reserved = set(model.initializers) | {vi.name for vi in model.inputs} | \
        {t for n in model.nodes for t in n.outputs if t}
    ctx = ConvertContext(b, model.opset, model.initializers, reserved)
    ctx.fold_left = limits.fold_budget(model.source_bytes)
    ctx.graph_outputs = {vi.name for vi in model.outputs}
    real_inputs = {vi.name for vi in model.inputs}
    for flag, names in (("--input-shape", input_shapes), ("--specialize", specialized)):
        for name in names:
            if name not in real_inputs:
                raise KilnError(f"{flag} names '{name}', which is not a model input "
                                f"(inputs: {', '.join(sorted(real_inputs)) or 'none'})")
    type_only = _type_only_inputs(model)
    for vi in model.inputs:
        dtype = input_dtype(vi)
        if vi.name in type_only and vi.name not in input_shapes:
            ctx.onnx_types[vi.name] = dtype  # read for its dtype only (CastLike): no runtime input
            continue
        if vi.name in specialized:
            specialize_input(ctx, vi, dtype, specialized[vi.name], input_shapes.get(vi.name))
            continue
        given = input_shapes.get(vi.name)
        b.input(vi.name, dtype, input_shape(vi, given), open_dims=open_batch(vi) if given is None else ())
        if bind_empty_input(ctx, vi.name):
            continue
        ctx.bind(vi.name, vi.name)
        if compute_dtype(dtype) != dtype:  # float16, float64, int4...: converted once, on the way in
            ctx.onnx_types[vi.name] = dtype
            ctx.bind(vi.name, ctx.add(OnnxNode("Cast", vi.name, [vi.name], []), "Cast", [vi.name],
                                      role=f"to_{compute_dtype(dtype)}", to=compute_dtype(dtype)))
    used = {i for n in model.nodes for i in n.inputs if i} | {vi.name for vi in model.outputs}
    for node in model.nodes:
        convert_node(ctx, node)
        round_narrow_outputs(ctx, node)
        for out in node.outputs:
            if out and out in used and not ctx.known(out):
                raise node.error(f"output '{out}' is not supported (only the main output is)")
    producer = {o: n.name for n in model.nodes for o in n.outputs if o}
    for vi in model.outputs:
        _bind_output(ctx, vi, producer.get(vi.name, vi.name))
    g = b.build()
    limits.check_graph(g)
    return g


def convert_node(ctx: ConvertContext, node: OnnxNode) -> None:
    consts = {i for i in node.inputs if i and ctx.is_const(i)}
    try:
        if _folds(node, consts):
            fold(ctx, node)
        elif not (reads_empty(ctx, node) and bind_empty_outputs(ctx, node)):
            convert_runtime(ctx, node)
    except KilnError as err:
        if err.node is None:
            err.node = node.name
        raise
    except Exception as err:  # a converter or an op's inference tripped: still one clear line
        raise KilnError(f"{node.op_type}: cannot convert ({_short(err)})", node=node.name) from err


# Storage floats ONNX computes in their own precision: Kiln computes them in float32 and rounds
# each op's result to them, as onnx's reference (numpy) does after every operation.
ROUNDED_EACH_OP = ("float16", "bfloat16")


def round_narrow_outputs(ctx: ConvertContext, node: OnnxNode) -> None:
    """Round the float32 outputs of a node computing on float16 (bfloat16) to that precision,
    and record them as float16 (bfloat16) tensors."""
    if node.op_type in ("Cast", "CastLike") or node.domain not in DEFAULT_DOMAINS:
        return
    narrow = {ctx.onnx_dtype(i) for i in node.inputs if i and ctx.known(i)} & set(ROUNDED_EACH_OP)
    if len(narrow) != 1:
        return
    dtype = narrow.pop()
    for out in node.outputs:
        if not out or not ctx.is_bound(out) or ctx.dtype(out) != "float32" or out in ctx.onnx_types:
            continue
        if ctx.kiln(out) == out:  # the ONNX name goes to the rounded value
            ctx.rename(out, ctx.fresh(f"{out}_float32"))
        stored = ctx.add(node, "Cast", [ctx.kiln(out)], role=f"round_{dtype}", to=dtype)
        ctx.bind(out, ctx.add(node, "Cast", [stored], role=f"{dtype}_value", to="float32"))
        ctx.onnx_types[out] = dtype


def fold(ctx: ConvertContext, node: OnnxNode) -> None:
    """Compute a node with constant inputs now, with ONNX's reference implementation.

    The size of every result is known (by ONNX shape inference) and within the limits of
    `codegen.limits` before anything is computed, so a node asking for 10^12 elements fails
    at once instead of allocating."""
    feeds = {i: ctx.const(i) for i in node.inputs if i}
    if node.op_type == "Range":  # one-element tensors as the scalars ONNX asks for (onnxruntime takes both)
        feeds = {k: v.reshape(()) if v.size == 1 else v for k, v in feeds.items()}
    if node.op_type == "Expand" and node.input(1) in feeds:  # ONNX's Expand multiplies by np.ones(shape)
        shape = [max(int(d), 1) for d in np.asarray(feeds[node.input(1)]).reshape(-1)[:64]]
        limits.check_size(shape, 4, "Expand: the broadcast", node=node.name)
    for shape, itemsize in _folded_sizes(ctx, node, feeds):
        limits.check_size(shape, itemsize, f"{node.op_type}: the folded result", node=node.name)
        _charge(ctx, node, limits.elements(shape) * itemsize, dry_run=True)
    try:
        with _numpy_quiet():
            results = ReferenceEvaluator(node.proto, opsets={"": ctx.opset}).run(None, feeds)
    except Exception as err:
        try:  # a bare node runs the newest kernel of its op; as a model, the one of the model's opset
            with _numpy_quiet():
                results = ReferenceEvaluator(_one_node_model(node.proto, ctx.opset)).run(None, feeds)
        except Exception:
            raise node.error(f"cannot compute this constant node ({_short(err)})") from None
    for out, arr in zip(node.outputs, results):
        arr = np.asarray(arr)
        limits.check_size(arr.shape, arr.itemsize, f"{node.op_type}: the folded result", node=node.name)
        _charge(ctx, node, arr.nbytes)
        ctx.bind_const(out, arr)


@contextlib.contextmanager
def _numpy_quiet():
    """No numpy warnings while folding: log(0) of an empty ReduceLogSum is -inf and the mean of
    nothing NaN, as ONNX defines them (limits.check_graph refuses NaN constants by name)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _one_node_model(proto: onnx.NodeProto, opset: int) -> onnx.ModelProto:
    """The node as a model, so that ReferenceEvaluator picks the kernel of the model's opset
    (opset-11 Unsqueeze with attribute axes fails as a bare node)."""
    def untyped(name: str) -> onnx.ValueInfoProto:
        return helper.make_value_info(name, onnx.TypeProto())
    graph = helper.make_graph([proto], "fold", [untyped(i) for i in dict.fromkeys(proto.input) if i],
                              [untyped(o) for o in proto.output if o])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _folded_sizes(ctx: ConvertContext, node: OnnxNode, feeds: dict[str, np.ndarray]):
    """(shape, itemsize) of each output of a node about to be folded, from ONNX shape inference
    given the constant inputs; outputs inference cannot size are left out, unless the op's
    size depends on input values (then the node is refused)."""
    sized_by_values = node.op_type in SIZED_BY_VALUES
    if node.op_type == "Range" and len(feeds) == 3:  # ONNX infers Range's length for 4 dtypes only
        start, limit, delta = (float(np.asarray(feeds[i], np.float64).reshape(-1)[0]) for i in node.inputs[:3])
        length = max(int(np.ceil((limit - start) / delta)), 0) if delta and np.isfinite([start, limit]).all() else 0
        return [((length,), np.asarray(feeds[node.inputs[0]]).itemsize)]
    try:
        inferred = infer_outputs(ctx, node, {k: (v.dtype, v.shape) for k, v in feeds.items()}, feeds)
    except Exception as err:
        if sized_by_values:
            raise node.error(f"cannot size the constant this node computes ({_short(err)})") from None
        return []
    sizes = []
    for out in node.outputs:
        dims, dtype = inferred.get(out, (None, None))
        if dims is None or dtype is None:
            if sized_by_values and out:
                raise node.error(f"cannot size the constant this node computes (output '{out}')")
            continue
        sizes.append((dims, dtype.itemsize))
    return sizes


def _charge(ctx: ConvertContext, node: OnnxNode, nbytes: int, dry_run: bool = False) -> None:
    if nbytes > ctx.fold_left:
        raise node.error(f"folding this constant node would compute {nbytes} B of constants, more than a "
                         f"model file of this size may ask for (constants computed at import: at most "
                         f"{limits.fold_budget(0)} B or {limits.FOLD_FACTOR} x the file size in all)")
    if not dry_run:
        ctx.fold_left -= nbytes


def _type_only_inputs(model: OnnxModel) -> set[str]:
    """Graph inputs with no elements that no node reads but for their dtype (CastLike's
    second input): the backend tests pass such empty tensors, which Kiln has no use for."""
    data_reads = {name for n in model.nodes for k, name in enumerate(n.inputs)
                  if not (n.op_type == "CastLike" and k == 1)} | {vi.name for vi in model.outputs}
    return {vi.name for vi in model.inputs if vi.name not in data_reads and vi.type.HasField("tensor_type")
            and any(d.HasField("dim_value") and d.dim_value == 0 for d in vi.type.tensor_type.shape.dim)}


def input_dtype(vi: onnx.ValueInfoProto) -> str:
    """Kiln's dtype of a graph input (float16, float64, int4 and the like are stored so in the C
    API and converted to the dtype Kiln computes them in)."""
    from codegen.frontends.onnx.ops_elementwise import ONNX_DTYPES

    elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else None
    if elem not in ONNX_DTYPES:
        raise KilnError(f"graph input is {ELEM_TYPE_NAMES.get(elem, elem)}; Kiln compiles "
                        f"{', '.join(sorted(set(ONNX_DTYPES.values())))} model inputs", node=vi.name)
    return ONNX_DTYPES[elem]


def input_shape(vi: onnx.ValueInfoProto, given: tuple[int, ...] | None) -> tuple[int, ...]:
    """The static shape of a graph input: from the model, `--input-shape`, or batch 1."""
    name = vi.name
    if not vi.type.HasField("tensor_type"):
        raise KilnError("graph input is not a tensor", node=name)
    tt = vi.type.tensor_type
    # a declared 0 is a real 0 (a tensor with no elements, bound as an empty constant)
    dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
            for d in tt.shape.dim] if tt.HasField("shape") else None
    if given is not None:
        given = tuple(int(d) for d in given)
        if dims is not None and len(given) != len(dims):
            raise KilnError(f"--input-shape gives {len(given)} dimensions, the model input has "
                            f"{len(dims)}", node=name)
        for i, (d, g) in enumerate(zip(dims or [None] * len(given), given)):
            if g < 0 or (d is not None and d != g):
                raise KilnError(f"--input-shape dimension {i} is {g}, the model says "
                                f"{d if d is not None else 'a size of at least 0'}", node=name)
        return given
    hint = f"give its shape with --input-shape {name}=" + ",".join(f"d{i}" for i in range(len(dims or [0, 1])))
    if dims is None:
        raise KilnError(f"graph input has no shape in the model; {hint}", node=name)
    if dims and dims[0] is None:
        dims[0] = 1  # a dynamic batch dimension: compile for one sample
    dynamic = [i for i, d in enumerate(dims) if d is None]
    if dynamic:
        shown = ",".join(d.dim_param or "?" if not (d.HasField("dim_value") and d.dim_value >= 0)
                         else str(d.dim_value) for d in tt.shape.dim)
        raise KilnError(f"graph input has dynamic dimension(s) {', '.join(map(str, dynamic))} "
                        f"(shape [{shown}]); {hint}", node=name)
    return tuple(dims)


def open_batch(vi: onnx.ValueInfoProto) -> tuple[int, ...]:
    """(0,) where the input's first dimension is dynamic (input_shape compiles it as 1)."""
    dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
    return (0,) if dims and not (dims[0].HasField("dim_value") and dims[0].dim_value >= 0) else ()


def specialize_input(ctx: ConvertContext, vi: onnx.ValueInfoProto, dtype: str, values: np.ndarray,
                     given: tuple[int, ...] | None) -> None:
    """A graph input the build is fixed to: it stays an input of the C API (the generated code
    checks that it holds `values`), and the graph reads it as a constant, so whatever depends on
    it (shapes, loop trip counts, window lengths) is computed at compile time."""
    values = np.asarray(values)
    declared = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
    if given is None and any(not (d.HasField("dim_value") and d.dim_value > 0) for d in declared):
        given = values.shape if len(declared) == values.ndim else (values.size,) if len(declared) == 1 else None
    shape = input_shape(vi, given)
    if values.size != int(np.prod(shape, dtype=np.int64)):
        raise KilnError(f"--specialize gives {values.size} value(s), the input has shape {list(shape)}",
                        node=vi.name)
    data = values.astype(np_dtype(dtype)).reshape(shape)
    if not np.array_equal(data.astype(np.float64), values.reshape(shape).astype(np.float64), equal_nan=True):
        raise KilnError(f"--specialize values do not fit the input's type {dtype}", node=vi.name)
    ctx.b.input(vi.name, dtype, shape)
    ctx.b.g.values[vi.name].specialized = data
    ctx.bind_const(vi.name, data)


def _bind_output(ctx: ConvertContext, vi: onnx.ValueInfoProto, origin: str) -> None:
    """Make the graph output a computed value named as in the model (a copy only if it must)."""
    g, name = ctx.b.g, vi.name
    data = ctx.const(name)
    if data is not None and not ctx.is_bound(name) and data.size == 0:
        _bind_empty_output(ctx, vi, data)
        return
    if data is not None and not ctx.is_bound(name):  # keep the output's name for the copy below
        ctx.bind(name, ctx.new_const(ctx.fresh(f"{name}_data"), data))
    src = ctx.kiln(name)
    declared = _declared_dtype(vi)
    widened = next((n for n in reversed(g.nodes) if src in n.outputs), None)
    if widened is not None and widened.op == "Cast" and g.values[widened.inputs[0]].dtype == declared \
            and declared != g.values[src].dtype:
        if src == name:  # the name goes to the output
            ctx.rename(src, ctx.fresh(f"{name}_{g.values[src].dtype}"))
        src = widened.inputs[0]  # already held as `declared` (rounded to float16, ...): no second conversion
    if declared is not None and declared != g.values[src].dtype and compute_dtype(declared) == g.values[src].dtype:
        if src == name:  # the name goes to the converted output
            ctx.rename(src, ctx.fresh(f"{name}_{compute_dtype(declared)}"))
            src = ctx.kiln(name)
        store = OnnxNode("Cast", origin, [name], [name])
        # not saturating: the infinities of an unsaturated float8 Cast upstream stay infinite
        out = ctx.add(store, "Cast", [src], out=name if name not in g.values else None, role=f"to_{declared}",
                      to=declared, saturate=False)
        g.outputs.append(out)
        _check_declared_shape(g.values[out].shape, vi, bounded_values(g).get(out, (None,))[0])
        return
    plain = src not in g.inputs and src not in g.outputs and not g.values[src].is_const
    if plain and src == name:
        out = src
    elif plain and name not in g.values:
        ctx.rename(src, name)
        out = name
    else:
        if src == name and g.values[src].is_const:  # a folded constant that nodes read too: the name goes
            ctx.rename(src, ctx.fresh(f"{name}_data"))  # to the output (the C API names it)
            src = ctx.kiln(name)
        copy = OnnxNode("Identity", origin, [name], [name])
        out = ctx.add(copy, "Reshape", [src], out=name if name not in g.values else None,
                      role="copy", shape=g.values[src].shape)
    g.outputs.append(out)
    _check_declared_shape(g.values[out].shape, vi, bounded_values(g).get(out, (None,))[0])


def _bind_empty_output(ctx: ConvertContext, vi: onnx.ValueInfoProto, data: np.ndarray) -> None:
    """A graph output with no elements: in the C API (its shape in the manifest) but never
    written, an empty constant that no call reads."""
    if vi.name in ctx.b.g.values:
        raise KilnError("graph output has no elements and is also a graph input (nothing to compute)",
                        node=vi.name)
    out = ctx.new_const(vi.name, data)
    ctx.bind(vi.name, out)
    ctx.b.g.outputs.append(out)
    _check_declared_shape(ctx.b.g.values[out].shape, vi)


def _declared_dtype(vi: onnx.ValueInfoProto) -> str | None:
    """The Kiln dtype a graph output is declared with (None when the model leaves it out)."""
    from codegen.frontends.onnx.ops_elementwise import ONNX_DTYPES

    return ONNX_DTYPES.get(vi.type.tensor_type.elem_type) if vi.type.HasField("tensor_type") else None


def _check_declared_shape(actual: tuple[int, ...], vi: onnx.ValueInfoProto, open_axis: int | None = None) -> None:
    """A static output shape in the model must be what Kiln computes (catches mismatches early);
    on an axis whose length depends on the data (`open_axis`), any length up to Kiln's bound."""
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
        return
    declared = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None for d in tt.shape.dim]
    if len(declared) != len(actual) or any(d is not None and d != a and not (k == open_axis and d <= a)
                                           for k, (d, a) in enumerate(zip(declared, actual))):
        shown = ",".join("?" if d is None else str(d) for d in declared)
        raise KilnError(f"graph output is declared [{shown}] but computes {list(actual)}", node=vi.name)
