"""Write small TFLite models in memory, and run them in TFLite Micro or LiteRT.

Tests describe tensors with `TensorSpec` (shape, dtype, quantization, optional constant data)
and operators by their builtin name with snake_case options as in schema.fbs; the writer uses
the `tflite` package's generated builder functions on a `flatbuffers.Builder`:

    x = TensorSpec((1, 8, 8, 4), "int8", scale=0.1, zero_point=-3)
    y = TensorSpec((1, 4, 4, 4), "int8", scale=0.1, zero_point=-3)
    model = single_op_model("MAX_POOL_2D", [x], [y], {"padding": "VALID", "stride_w": 2,
                            "stride_h": 2, "filter_width": 2, "filter_height": 2})
    out = run_tflm(model, np.zeros((1, 8, 8, 4), np.int8))[0]

Multi-operator models use `ModelWriter` directly (tensor(), op(), build()).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import flatbuffers
import numpy as np
import tflite

_TYPES = {"float32": "FLOAT32", "float16": "FLOAT16", "int8": "INT8", "uint8": "UINT8", "int16": "INT16",
          "int32": "INT32", "int64": "INT64", "bool": "BOOL", "resource": "RESOURCE"}
_NUMPY = {"float32": "<f4", "float16": "<f2", "int8": "i1", "uint8": "u1", "int16": "<i2",
          "int32": "<i4", "int64": "<i8", "bool": "?"}

# Builtin -> its options table (ops missing here take none).
OPTIONS_TABLE = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions", "MEAN": "ReducerOptions", "ADD": "AddOptions",
    "SUB": "SubOptions", "MUL": "MulOptions", "RESHAPE": "ReshapeOptions",
    "SOFTMAX": "SoftmaxOptions", "CONCATENATION": "ConcatenationOptions",
    "TRANSPOSE": "TransposeOptions", "PAD": "PadOptions", "PADV2": "PadV2Options",
    "SQUEEZE": "SqueezeOptions", "EXPAND_DIMS": "ExpandDimsOptions",
    "BATCH_MATMUL": "BatchMatMulOptions", "QUANTIZE": "QuantizeOptions",
    "DEQUANTIZE": "DequantizeOptions", "ADD_N": "AddNOptions", "ARG_MAX": "ArgMaxOptions",
    "ARG_MIN": "ArgMinOptions", "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions", "BROADCAST_TO": "BroadcastToOptions",
    "CAST": "CastOptions", "CUMSUM": "CumsumOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions", "DIV": "DivOptions", "EXP": "ExpOptions", "FILL": "FillOptions",
    "FLOOR_DIV": "FloorDivOptions", "FLOOR_MOD": "FloorModOptions", "GATHER": "GatherOptions",
    "GATHER_ND": "GatherNdOptions", "HARD_SWISH": "HardSwishOptions", "L2_NORMALIZATION": "L2NormOptions",
    "LEAKY_RELU": "LeakyReluOptions", "LOG_SOFTMAX": "LogSoftmaxOptions", "LOGICAL_AND": "LogicalAndOptions",
    "LOGICAL_OR": "LogicalOrOptions", "LOGICAL_NOT": "LogicalNotOptions", "EQUAL": "EqualOptions",
    "NOT_EQUAL": "NotEqualOptions", "LESS": "LessOptions", "LESS_EQUAL": "LessEqualOptions",
    "GREATER": "GreaterOptions", "GREATER_EQUAL": "GreaterEqualOptions", "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions", "MIRROR_PAD": "MirrorPadOptions", "NEG": "NegOptions",
    "PACK": "PackOptions", "UNPACK": "UnpackOptions", "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions", "SUM": "ReducerOptions", "REDUCE_ALL": "ReducerOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "REVERSE_V2": "ReverseV2Options", "SQUARE": "SquareOptions", "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "SELECT_V2": "SelectV2Options", "SHAPE": "ShapeOptions", "SLICE": "SliceOptions",
    "STRIDED_SLICE": "StridedSliceOptions", "SPLIT": "SplitOptions", "SPLIT_V": "SplitVOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions", "ZEROS_LIKE": "ZerosLikeOptions", "L2_POOL_2D": "Pool2DOptions",
    "DENSIFY": "DensifyOptions", "VAR_HANDLE": "VarHandleOptions", "CALL_ONCE": "CallOnceOptions",
    "READ_VARIABLE": "ReadVariableOptions", "ASSIGN_VARIABLE": "AssignVariableOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions", "SVDF": "SVDFOptions",
    "IF": "IfOptions", "WHILE": "WhileOptions",
}
# Builtins whose first version LiteRT no longer registers.
_VERSIONS = {"BROADCAST_TO": 2}
# Option fields given by name rather than number.
_ENUMS = {"padding": tflite.Padding, "fused_activation_function": tflite.ActivationFunctionType,
          "weights_format": tflite.FullyConnectedOptionsWeightsFormat, "in_data_type": tflite.TensorType,
          "out_data_type": tflite.TensorType, "out_type": tflite.TensorType, "output_type": tflite.TensorType}


@dataclass(frozen=True)
class TensorSpec:
    """A tensor: shape and dtype, optional quantization (per-channel when `scale` is a list),
    optional constant `data`, optional name and shape_signature (-1 for dynamic dims)."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    scale: float | Sequence[float] | None = None
    zero_point: int | Sequence[int] = 0
    quantized_dimension: int = 0
    data: np.ndarray | None = None
    name: str = ""
    shape_signature: tuple[int, ...] | None = None
    # TFLite sparsity parameters: {"traversal_order", "block_map", "dim_metadata": [{"format":
    # "DENSE", "dense_size"} or {"format": "SPARSE_CSR", "segments", "indices"}]}; `data` then
    # holds only the stored values (see sparse_const).
    sparsity: dict | None = None
    is_variable: bool = False  # state an operator keeps between calls (LSTM, SVDF)


def sparse_const(dense: np.ndarray, dtype: str, traversal_order: Sequence[int], formats: Sequence[str],
                 block_map: Sequence[int] = (), block_size: Sequence[int] = (), **quant: Any) -> TensorSpec:
    """A constant stored as the TFLite converter stores sparse weights: the levels (original
    dimensions, cut into blocks of `block_size` along `block_map`, then the block dimensions)
    walked in `traversal_order`, each DENSE or SPARSE_CSR (positions whose sub-block is all
    zeros are left out)."""
    n = dense.ndim
    blocked, axes = [], {}
    for d in range(n):  # [.., outer_d, (block_d), ..]: the block dimension right after its own
        axes[d] = len(blocked)
        if d in block_map:
            j = list(block_map).index(d)
            blocked += [dense.shape[d] // block_size[j], block_size[j]]
            axes[n + j] = len(blocked) - 1
        else:
            blocked.append(dense.shape[d])
    levels = dense.reshape(blocked).transpose([axes[d] for d in traversal_order])
    meta = [{"format": f, "dense_size": levels.shape[k], "segments": [0], "indices": []} for k, f in enumerate(formats)]
    values: list = []

    def walk(k: int, sub: np.ndarray) -> None:
        if k == len(formats):
            values.append(sub.item())
            return
        for i in range(sub.shape[0]):
            if formats[k] == "DENSE":
                walk(k + 1, sub[i])
            elif np.any(sub[i] != 0):
                meta[k]["indices"].append(i)
                walk(k + 1, sub[i])
        if formats[k] == "SPARSE_CSR":
            meta[k]["segments"].append(len(meta[k]["indices"]))

    walk(0, levels)
    arr = np.array(values, dtype=np.dtype(_NUMPY[dtype]).newbyteorder("="))
    sparsity = {"traversal_order": list(traversal_order), "block_map": list(block_map), "dim_metadata": meta}
    return TensorSpec(tuple(dense.shape), dtype, data=arr, sparsity=sparsity, **quant)


def const(data: Any, dtype: str | None = None, **quant: Any) -> TensorSpec:
    """A constant tensor holding `data` (dtype taken from the array unless given)."""
    arr = np.asarray(data)
    dtype = dtype or str(arr.dtype)
    arr = arr.astype(np.dtype(_NUMPY[dtype]).newbyteorder("="))
    return TensorSpec(tuple(arr.shape), dtype, data=arr, **quant)


class ModelWriter:
    """Collects tensors and operators of one subgraph, then serialises the model."""

    def __init__(self) -> None:
        self.tensors: list[TensorSpec] = []
        self.ops: list[tuple[str, list[int], list[int], dict[str, Any], str | None]] = []

    def tensor(self, spec: TensorSpec) -> int:
        self.tensors.append(spec)
        return len(self.tensors) - 1

    def op(self, op: str, inputs: Sequence[int | None], outputs: Sequence[int],
           options: dict[str, Any] | None = None, custom_code: str | None = None) -> None:
        """Add operator `op` (a builtin name, or "CUSTOM" with `custom_code`); None = absent input."""
        self.ops.append((op, [-1 if i is None else i for i in inputs], list(outputs),
                         dict(options or {}), custom_code))

    def build(self, inputs: Sequence[int], outputs: Sequence[int], external_buffers: bool = False,
              subgraphs: Sequence[tuple["ModelWriter", Sequence[int], Sequence[int]]] = ()) -> bytes:
        """The .tflite bytes: this writer's subgraph first, then `subgraphs` (writer, inputs,
        outputs: CALL_ONCE's initialisation subgraph, ...). With `external_buffers`, constant
        data follows the flatbuffer and buffers point at it with offset/size, as converters do
        for models above 2 GB."""
        graphs = [(self, inputs, outputs), *subgraphs]
        if not external_buffers:
            return self._serialise(graphs, None)
        blobs = [_raw(t) for w, _, _ in graphs for t in w.tensors if t.data is not None]
        head = self._serialise(graphs, [(2, max(len(b), 1)) for b in blobs])
        place, pos = [], _align(len(head), 16)
        for b in blobs:
            place.append((pos, len(b)))
            pos = _align(pos + len(b), 16)
        model = bytearray(self._serialise(graphs, place))
        assert len(model) == len(head), "buffer offsets changed the flatbuffer size"
        for (offset, _), b in zip(place, blobs):
            model.extend(b"\0" * (offset - len(model)))
            model.extend(b)
        return bytes(model)

    @staticmethod
    def _serialise(graphs, places) -> bytes:
        b = flatbuffers.Builder(4096)
        # Buffers: 0 is the empty sentinel, then one per constant tensor.
        buffer_of, buffers = {}, [_table(b, tflite.BufferStart, tflite.BufferEnd)]
        for g, (w, _, _) in enumerate(graphs):
            for k, t in enumerate(w.tensors):
                if t.data is None:
                    continue
                place = places[len(buffer_of)] if places is not None else None
                if place is None:
                    vec = _bytes_vector(b, _raw(t))
                    buffers.append(_table(b, tflite.BufferStart, tflite.BufferEnd, (tflite.BufferAddData, vec)))
                else:
                    buffers.append(_table(b, tflite.BufferStart, tflite.BufferEnd,
                                          (tflite.BufferAddOffset, place[0]), (tflite.BufferAddSize, place[1])))
                buffer_of[g, k] = len(buffers) - 1
        codes: list[tuple[str, str | None]] = []
        subgraph_tables = []
        for g, (w, inputs, outputs) in enumerate(graphs):
            tensors = [w._tensor(b, t, k, buffer_of.get((g, k), 0)) for k, t in enumerate(w.tensors)]
            ops = []
            for name, ins, outs, options, custom in w.ops:
                key = (name, custom)
                if key not in codes:
                    codes.append(key)
                ops.append(w._operator(b, codes.index(key), name, ins, outs, options))
            sg_tensors = _table_vector(b, tflite.SubGraphStartTensorsVector, tensors)
            sg_inputs = _int_vector(b, tflite.SubGraphStartInputsVector, inputs)
            sg_outputs = _int_vector(b, tflite.SubGraphStartOutputsVector, outputs)
            sg_ops = _table_vector(b, tflite.SubGraphStartOperatorsVector, ops)
            sg_name = b.CreateString("main" if g == 0 else f"subgraph_{g}")
            subgraph_tables.append(_table(b, tflite.SubGraphStart, tflite.SubGraphEnd,
                                          (tflite.SubGraphAddTensors, sg_tensors),
                                          (tflite.SubGraphAddInputs, sg_inputs),
                                          (tflite.SubGraphAddOutputs, sg_outputs),
                                          (tflite.SubGraphAddOperators, sg_ops), (tflite.SubGraphAddName, sg_name)))
        code_tables = [ModelWriter._opcode(b, name, custom) for name, custom in codes]
        subgraphs = _table_vector(b, tflite.ModelStartSubgraphsVector, subgraph_tables)
        code_vec = _table_vector(b, tflite.ModelStartOperatorCodesVector, code_tables)
        buffer_vec = _table_vector(b, tflite.ModelStartBuffersVector, buffers)
        desc = b.CreateString("kiln test model")
        model = _table(b, tflite.ModelStart, tflite.ModelEnd, (tflite.ModelAddVersion, 3),
                       (tflite.ModelAddOperatorCodes, code_vec), (tflite.ModelAddSubgraphs, subgraphs),
                       (tflite.ModelAddDescription, desc), (tflite.ModelAddBuffers, buffer_vec))
        b.Finish(model, file_identifier=b"TFL3")
        return bytes(b.Output())

    @staticmethod
    def _tensor(b: flatbuffers.Builder, t: TensorSpec, index: int, buffer: int) -> int:
        name = b.CreateString(t.name or f"t{index}")
        shape = _int_vector(b, tflite.TensorStartShapeVector, t.shape)
        sig = (_int_vector(b, tflite.TensorStartShapeSignatureVector, t.shape_signature)
               if t.shape_signature is not None else None)
        quant = None
        if t.scale is not None:
            scales = np.atleast_1d(np.asarray(t.scale, np.float32))
            zps = np.atleast_1d(np.asarray(t.zero_point, np.int64))
            if zps.size == 1 and scales.size > 1:
                zps = np.repeat(zps, scales.size)
            sv = b.CreateNumpyVector(scales.astype("<f4"))
            zv = b.CreateNumpyVector(zps.astype("<i8"))
            quant = _table(b, tflite.QuantizationParametersStart, tflite.QuantizationParametersEnd,
                           (tflite.QuantizationParametersAddScale, sv),
                           (tflite.QuantizationParametersAddZeroPoint, zv),
                           (tflite.QuantizationParametersAddQuantizedDimension, t.quantized_dimension))
        fields = [(tflite.TensorAddShape, shape), (tflite.TensorAddType, getattr(tflite.TensorType, _TYPES[t.dtype])),
                  (tflite.TensorAddBuffer, buffer), (tflite.TensorAddName, name)]
        if quant is not None:
            fields.append((tflite.TensorAddQuantization, quant))
        if sig is not None:
            fields.append((tflite.TensorAddShapeSignature, sig))
        if t.sparsity is not None:
            fields.append((tflite.TensorAddSparsity, _sparsity(b, t.sparsity)))
        if t.is_variable:
            fields.append((tflite.TensorAddIsVariable, True))
        return _table(b, tflite.TensorStart, tflite.TensorEnd, *fields)

    @staticmethod
    def _opcode(b: flatbuffers.Builder, name: str, custom: str | None) -> int:
        code = getattr(tflite.BuiltinOperator, name)
        fields = [(tflite.OperatorCodeAddBuiltinCode, code),
                  (tflite.OperatorCodeAddDeprecatedBuiltinCode, min(code, 127)),
                  (tflite.OperatorCodeAddVersion, _VERSIONS.get(name, 1))]
        if custom is not None:
            fields.append((tflite.OperatorCodeAddCustomCode, b.CreateString(custom)))
        return _table(b, tflite.OperatorCodeStart, tflite.OperatorCodeEnd, *fields)

    @staticmethod
    def _operator(b: flatbuffers.Builder, opcode: int, name: str, ins, outs, options) -> int:
        options = dict(options)
        table = options.pop("_table", OPTIONS_TABLE.get(name))
        opts = _options(b, table, options) if table else None
        iv = _int_vector(b, tflite.OperatorStartInputsVector, ins)
        ov = _int_vector(b, tflite.OperatorStartOutputsVector, outs)
        fields = [(tflite.OperatorAddOpcodeIndex, opcode), (tflite.OperatorAddInputs, iv),
                  (tflite.OperatorAddOutputs, ov)]
        if opts is not None:
            fields += [(tflite.OperatorAddBuiltinOptionsType, getattr(tflite.BuiltinOptions, table)),
                       (tflite.OperatorAddBuiltinOptions, opts)]
        return _table(b, tflite.OperatorStart, tflite.OperatorEnd, *fields)


def single_op_model(op: str, inputs: Sequence[TensorSpec | None], outputs: Sequence[TensorSpec],
                    options: dict[str, Any] | None = None, custom_code: str | None = None) -> bytes:
    """A model with one operator: non-constant inputs become the graph inputs (in order)."""
    w = ModelWriter()
    ins = [None if s is None else w.tensor(replace(s, name=s.name or f"in{k}")) for k, s in enumerate(inputs)]
    outs = [w.tensor(replace(s, name=s.name or f"out{k}")) for k, s in enumerate(outputs)]
    w.op(op, ins, outs, options, custom_code)
    graph_ins = [i for i, s in zip(ins, inputs) if s is not None and s.data is None]
    return w.build(graph_ins, outs)


# -- runners ---------------------------------------------------------------------------------------

def run_tflm(model: bytes, *arrays: np.ndarray) -> list[np.ndarray]:
    """Invoke `model` once in the TFLite Micro interpreter (reference kernels); all outputs."""
    from tflite_micro.python.tflite_micro import runtime

    arena = 256 * 1024 + 16 * sum(a.nbytes for a in arrays)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena)
    for i, a in enumerate(arrays):
        interp.set_input(a, i)
    interp.invoke()
    n_out = tflite.Model.GetRootAs(model, 0).Subgraphs(0).OutputsLength()
    return [np.array(interp.get_output(k)) for k in range(n_out)]


def run_litert(model: bytes, *arrays: np.ndarray) -> list[np.ndarray]:
    """Invoke `model` once in LiteRT's builtin kernels (for float and hybrid models); all
    outputs. Without the default XNNPACK delegate, which runs hybrid convolutions with its
    own input quantization (see codegen/verify/reference.py)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_content=model,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    for d, a in zip(interp.get_input_details(), arrays):
        if tuple(d["shape"]) != a.shape:
            interp.resize_tensor_input(d["index"], a.shape)
    interp.allocate_tensors()
    for d, a in zip(interp.get_input_details(), arrays):
        interp.set_tensor(d["index"], a)
    interp.invoke()
    return [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]


# -- flatbuffer helpers ----------------------------------------------------------------------------

def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _raw(t: TensorSpec) -> bytes:
    return np.ascontiguousarray(t.data, dtype=np.dtype(_NUMPY[t.dtype])).tobytes()


def _table(b: flatbuffers.Builder, start, end, *fields) -> int:
    start(b)
    for add, value in fields:
        add(b, value)
    return end(b)


def _bytes_vector(b: flatbuffers.Builder, data: bytes) -> int:
    """A ubyte vector aligned to 16 bytes (kernels read weights in place)."""
    b.StartVector(1, len(data), 16)
    b.head = b.head - len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    b.vectorNumElems = len(data)
    return b.EndVector()


def _int_vector(b: flatbuffers.Builder, start, values: Sequence[int]) -> int:
    start(b, len(values))
    for v in reversed(list(values)):
        b.PrependInt32(int(v))
    return b.EndVector()


def _table_vector(b: flatbuffers.Builder, start, offsets: Sequence[int]) -> int:
    start(b, len(offsets))
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _sparsity(b: flatbuffers.Builder, sp: dict) -> int:
    dims = []
    for m in sp["dim_metadata"]:
        fields = [(tflite.DimensionMetadataAddFormat, getattr(tflite.DimensionType, m["format"])),
                  (tflite.DimensionMetadataAddDenseSize, m["dense_size"])]
        if m["format"] == "SPARSE_CSR":
            for what, add, add_type in (("segments", tflite.DimensionMetadataAddArraySegments,
                                         tflite.DimensionMetadataAddArraySegmentsType),
                                        ("indices", tflite.DimensionMetadataAddArrayIndices,
                                         tflite.DimensionMetadataAddArrayIndicesType)):
                vec = _int_vector(b, tflite.Int32VectorStartValuesVector, m[what])
                table = _table(b, tflite.Int32VectorStart, tflite.Int32VectorEnd, (tflite.Int32VectorAddValues, vec))
                fields += [(add_type, tflite.SparseIndexVector.Int32Vector), (add, table)]
        dims.append(_table(b, tflite.DimensionMetadataStart, tflite.DimensionMetadataEnd, *fields))
    order = _int_vector(b, tflite.SparsityParametersStartTraversalOrderVector, sp["traversal_order"])
    block_map = _int_vector(b, tflite.SparsityParametersStartBlockMapVector, sp["block_map"])
    dim_vec = _table_vector(b, tflite.SparsityParametersStartDimMetadataVector, dims)
    return _table(b, tflite.SparsityParametersStart, tflite.SparsityParametersEnd,
                  (tflite.SparsityParametersAddTraversalOrder, order),
                  (tflite.SparsityParametersAddBlockMap, block_map),
                  (tflite.SparsityParametersAddDimMetadata, dim_vec))


def _camel(key: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in key.split("_"))


def _options(b: flatbuffers.Builder, table: str, options: dict[str, Any]) -> int:
    """An options table from snake_case fields; enum fields may be given by name."""
    values = {}
    for key, value in options.items():
        if key in _ENUMS and isinstance(value, str):
            value = getattr(_ENUMS[key], value)
        elif isinstance(value, str):  # a string field (VAR_HANDLE's shared_name)
            value = b.CreateString(value)
        if isinstance(value, (list, tuple)):
            value = _int_vector(b, getattr(tflite, f"{table}Start{_camel(key)}Vector"), value)
        values[key] = value
    fields = []
    for key, value in values.items():
        add = getattr(tflite, f"{table}Add{_camel(key)}", None)
        if add is None:
            raise ValueError(f"{table} has no field '{key}'")
        fields.append((add, value))
    return _table(b, getattr(tflite, f"{table}Start"), getattr(tflite, f"{table}End"), *fields)
