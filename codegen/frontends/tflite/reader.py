"""Decode a .tflite flatbuffer into plain, checked Python data: subgraph 0, and the other
subgraphs (CALL_ONCE's initialisation subgraph, control flow bodies) in `ModelInfo.subgraphs`.

The generated `tflite` readers trust the file: an index or offset out of range reads garbage
or raises struct/numpy errors deep inside flatbuffers. Everything is therefore read here,
once, eagerly, under `_reading(...)` which turns any decoding failure into a KilnError
naming what was being read; every vector length is charged to a budget proportional to the
file size, so a crafted file cannot make the import loop or allocate without bound. The
converters (ops.py) only ever see the dataclasses below.
"""

from __future__ import annotations

import inspect
import re
import struct
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Iterator

import flatbuffers
import numpy as np
import tflite

from codegen.errors import KilnError
from codegen.frontends.tflite.sparse import densify, read_sparsity
from codegen.ir.types import Quant

IDENTIFIER = b"TFL3"
MAX_RANK = 8
MAX_ELEMENTS = 2 ** 31 - 1  # generated C indexes tensors with int32_t

# TFLite TensorType -> (Kiln dtype or None when Kiln cannot hold it, numpy dtype of the data).
_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
_DTYPES: dict[str, tuple[str | None, str | None]] = {
    "FLOAT32": ("float32", "<f4"), "INT8": ("int8", "i1"), "UINT8": ("uint8", "u1"),
    "INT16": ("int16", "<i2"), "INT32": ("int32", "<i4"), "INT64": ("int64", "<i8"),
    "BOOL": ("bool", "?"),
    # Readable as constant data only (e.g. float16 weights folded through DEQUANTIZE).
    "FLOAT16": (None, "<f2"), "FLOAT64": (None, "<f8"),
}
_ZERO_POINT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}

BUILTIN_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
_OPTION_NAMES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
_DECODE_ERRORS = (struct.error, IndexError, ValueError, TypeError, OverflowError)


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of subgraph 0. `shape` has the -1 (dynamic) dimensions already set to 1."""

    index: int
    name: str
    type_name: str                      # TFLite name: "INT8", "FLOAT32", ...
    dtype: str | None                   # Kiln dtype, None when Kiln has no such type
    shape: tuple[int, ...]
    signature: tuple[int, ...] | None   # shape_signature as stored (-1 = dynamic)
    quant: Quant | None
    data: np.ndarray | None = field(default=None, repr=False)  # constant contents
    sparse: bool = False
    variable: bool = False  # is_variable: state an operator keeps between calls (LSTM, SVDF)

    @property
    def dynamic_dims(self) -> tuple[int, ...]:
        """Dimensions the converter left open (-1 in the shape signature)."""
        sig = self.signature or ()
        return tuple(i for i, d in enumerate(sig) if d < 0) if len(sig) == len(self.shape) else ()


@dataclass(frozen=True)
class OperatorInfo:
    """One operator of subgraph 0: its code, tensor indices (-1 = absent) and options."""

    index: int
    code: str                 # builtin name ("CONV_2D") or the custom code
    custom: bool
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options_type: str         # "Conv2DOptions", or "NONE"
    options: dict[str, Any]   # the options table's fields by accessor name ("StrideW": 2)


@dataclass(frozen=True)
class ModelInfo:
    version: int
    description: str
    tensors: tuple[TensorInfo, ...]
    operators: tuple[OperatorInfo, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    # Every subgraph by index (entry 0: this one), or the KilnError that reading it gave.
    subgraphs: tuple["ModelInfo | KilnError", ...] = field(default=(), repr=False)


class _Budget:
    """Counts elements decoded; honest files need far fewer than a few times their size."""

    def __init__(self, file_size: int):
        self.left = 4 * file_size + 4096

    def charge(self, n: int, what: str) -> None:
        if n < 0 or n > self.left:
            raise KilnError(f"malformed TFLite flatbuffer: {what} claims {n} elements, more than "
                            "the file can hold")
        self.left -= n


@contextmanager
def _reading(what: str) -> Iterator[None]:
    try:
        yield
    except _DECODE_ERRORS as err:
        if isinstance(err, (struct.error, IndexError)) or "buffer is smaller" in str(err):
            detail = "an offset or length points outside the file (truncated or corrupt?)"
        elif isinstance(err, (TypeError, OverflowError)):
            detail = "a field holds a value out of its type's range"
        else:
            detail = f"{type(err).__name__}: {err}"
        raise KilnError(f"malformed TFLite flatbuffer while reading {what}: {detail}") from None


def read_model(data: bytes) -> ModelInfo:
    """Decode and check the model; KilnError for anything malformed."""
    if len(data) < 8:
        raise KilnError(f"not a TFLite model: the file has only {len(data)} bytes")
    if data[4:8] != IDENTIFIER:
        raise KilnError(f"not a TFLite model: file identifier is {bytes(data[4:8])!r}, expected {IDENTIFIER!r}")
    budget = _Budget(len(data))
    with _reading("the model table"):
        model = tflite.Model.GetRootAs(data, 0)
        version = model.Version()
        description = _text(model.Description())
        n_subgraphs = _length(model.SubgraphsLength(), budget, "the subgraph list")
        n_buffers = _length(model.BuffersLength(), budget, "the buffer list")
        n_codes = _length(model.OperatorCodesLength(), budget, "the operator-code list")
    if n_subgraphs < 1:
        raise KilnError("the TFLite model has no subgraph")
    codes = [_read_opcode(model, i) for i in range(n_codes)]
    buffers = _BufferReader(model, data, n_buffers, budget)
    main = ModelInfo(version, description, *_read_subgraph(model, 0, codes, buffers, budget))
    others = []
    for k in range(1, n_subgraphs):
        # Only an operator that runs subgraph k needs it: a subgraph Kiln cannot read is an
        # error of that operator (codegen/frontends/tflite/ops_state.py), not of the model.
        try:
            others.append(ModelInfo(version, description, *_read_subgraph(model, k, codes, buffers, budget)))
        except KilnError as err:
            others.append(err)
    return replace(main, subgraphs=(main, *others))


def _read_subgraph(model, k: int, codes, buffers: "_BufferReader", budget: _Budget):
    """Tensors, operators, inputs and outputs of subgraph `k`, checked."""
    with _reading(f"subgraph {k}"):
        sg = model.Subgraphs(k)
        n_tensors = _length(sg.TensorsLength(), budget, "the tensor list")
        n_ops = _length(sg.OperatorsLength(), budget, "the operator list")
        inputs = _int_vector(sg.InputsAsNumpy, sg.InputsLength(), budget, "the subgraph inputs")
        outputs = _int_vector(sg.OutputsAsNumpy, sg.OutputsLength(), budget, "the subgraph outputs")
    tensors = tuple(_read_tensor(sg, i, buffers, budget) for i in range(n_tensors))
    operators = tuple(_read_operator(sg, i, codes, n_tensors, budget) for i in range(n_ops))
    where = "subgraph" if k == 0 else f"subgraph {k}"
    for kind, indices in (("input", inputs), ("output", outputs)):
        for t in indices:
            if not 0 <= t < n_tensors:
                raise KilnError(f"{where} {kind} refers to tensor {t}, but there are only {n_tensors} tensors")
    return tensors, operators, inputs, outputs


def _text(raw: bytes | None) -> str:
    """A name or description as one line of text: control characters (a newline in a tensor
    name) are written as escapes, since names go into one-line messages and C comments."""
    text = raw.decode("utf-8", "replace") if raw else ""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def _length(n: int, budget: _Budget, what: str) -> int:
    budget.charge(n, what)
    return n


def _int_vector(as_numpy, length: int, budget: _Budget, what: str) -> tuple[int, ...]:
    budget.charge(length, what)
    if length == 0:
        return ()
    return tuple(int(v) for v in as_numpy())


def _read_opcode(model, i: int) -> tuple[str, bool]:
    with _reading(f"operator code {i}"):
        oc = model.OperatorCodes(i)
        # TFLite's GetBuiltinCode: the larger of builtin_code and deprecated_builtin_code (old
        # files fill only the latter). The raw field is read directly because the `tflite`
        # package's BuiltinCode() returns the deprecated field for every code below 127.
        slot = oc._tab.Offset(10)
        builtin = int(oc._tab.Get(flatbuffers.number_types.Int32Flags, oc._tab.Pos + slot)) if slot else 0
        code = max(builtin, int(oc.DeprecatedBuiltinCode()))
        if code == tflite.BuiltinOperator.CUSTOM:
            return (_text(oc.CustomCode()) or "CUSTOM"), True
        return BUILTIN_NAMES.get(code, f"BUILTIN_{code}"), False


class _BufferReader:
    """Buffer contents by index, inline in the flatbuffer or at an offset in the file (>2 GB models)."""

    def __init__(self, model, data: bytes, count: int, budget: _Budget):
        self.model, self.data, self.count, self.budget = model, data, count, budget
        self.cache: dict[int, bytes] = {}

    def get(self, index: int, tensor: str) -> bytes:
        if not 0 <= index < self.count:
            raise KilnError(f"refers to buffer {index}, but the model has {self.count} buffers", node=tensor)
        if index not in self.cache:
            with _reading(f"buffer {index} of tensor '{tensor}'"):
                buf = self.model.Buffers(index)
                offset, size = int(buf.Offset()), int(buf.Size())
                # Data past the flatbuffer (models over 2 GB): offset from the start of the file.
                # Offsets 0 and 1 are the converter's "none" placeholders.
                if buf.DataLength() == 0 and offset > 1 and size > 0:
                    if offset + size > len(self.data):
                        raise KilnError(f"buffer {index} lies at bytes {offset}..{offset + size}, beyond "
                                        f"the end of the file ({len(self.data)} bytes)", node=tensor)
                    raw = self.data[offset:offset + size]
                else:
                    n = buf.DataLength()
                    if n > len(self.data):
                        raise KilnError(f"buffer {index} claims {n} bytes, more than the file holds",
                                        node=tensor)
                    raw = buf.DataAsNumpy().tobytes() if n else b""
            self.cache[index] = raw
        return self.cache[index]


def _read_tensor(sg, i: int, buffers: _BufferReader, budget: _Budget) -> TensorInfo:
    with _reading(f"tensor {i}"):
        t = sg.Tensors(i)
        name = _text(t.Name())
    label = (name if len(name) <= 120 else name[:117] + "...") or f"tensor {i}"  # for messages
    with _reading(f"tensor '{label}'"):
        type_code = int(t.Type())
        raw_shape = _int_vector(t.ShapeAsNumpy, t.ShapeLength(), budget, f"the shape of tensor '{label}'")
        signature = (_int_vector(t.ShapeSignatureAsNumpy, t.ShapeSignatureLength(), budget,
                                 f"the shape signature of tensor '{label}'")
                     if not t.ShapeSignatureIsNone() else None)
        buffer_index = int(t.Buffer())
        is_variable = bool(t.IsVariable())
        sparsity = t.Sparsity()
        sparsity = read_sparsity(sparsity, budget.charge, label) if sparsity is not None else None
        qp = t.Quantization()
        quant_fields = _read_quant_fields(qp, budget, label) if qp is not None else None
    type_name = _TYPE_NAMES.get(type_code, f"TYPE_{type_code}")
    dtype, np_type = _DTYPES.get(type_name, (None, None))
    if len(raw_shape) > MAX_RANK:
        raise KilnError(f"rank {len(raw_shape)} is more than Kiln supports ({MAX_RANK})", node=label)
    if any(d < -1 for d in raw_shape):
        raise KilnError(f"negative dimension in shape {list(raw_shape)}", node=label)
    shape = tuple(1 if d == -1 else d for d in raw_shape)
    count = int(np.prod(shape, dtype=object)) if shape else 1
    if count > MAX_ELEMENTS:
        raise KilnError(f"shape {list(shape)} has {count} elements, more than int32 indexing allows",
                        node=label)
    quant = _make_quant(quant_fields, shape, dtype, label) if quant_fields else None
    raw = buffers.get(buffer_index, label)
    data = None
    if raw:
        budget.charge(len(raw) // 4, f"the data of tensor '{label}'")  # shared buffers are copied per tensor
        if np_type is None:
            raise KilnError(f"constant of type {type_name}, which Kiln cannot read", node=label)
        itemsize = np.dtype(np_type).itemsize
        if sparsity is not None:  # only the stored values: densified now (sparse.py)
            if len(raw) % itemsize:
                raise KilnError(f"buffer {buffer_index} holds {len(raw)} bytes, not a whole number of "
                                f"{type_name} values", node=label)
            budget.charge(count // 16, f"the dense form of sparse tensor '{label}'")
            values = np.frombuffer(raw, dtype=np_type).astype(np.dtype(np_type).newbyteorder("="))
            data = densify(sparsity, values, shape, label)
        elif len(raw) != count * itemsize:
            raise KilnError(f"buffer {buffer_index} holds {len(raw)} bytes, but {type_name}"
                            f"{list(shape)} needs {count * itemsize}", node=label)
        else:
            data = np.frombuffer(raw, dtype=np_type).reshape(shape).astype(np.dtype(np_type).newbyteorder("="))
    return TensorInfo(i, name, type_name, dtype, shape, signature, quant, data, sparsity is not None and data is None,
                      is_variable)


def _read_quant_fields(qp, budget: _Budget, label: str):
    if qp.DetailsType() != 0:
        raise KilnError("custom quantization details are not supported", node=label)
    n_scale, n_zp = qp.ScaleLength(), qp.ZeroPointLength()
    budget.charge(n_scale + n_zp, f"the quantization of tensor '{label}'")
    if n_scale == 0:
        return None  # float tensors often carry an empty quantization table
    scales = qp.ScaleAsNumpy().astype(np.float64)
    zps = qp.ZeroPointAsNumpy().astype(np.int64) if n_zp else np.zeros(1, np.int64)
    return scales, zps, int(qp.QuantizedDimension())


def _make_quant(fields, shape: tuple[int, ...], dtype: str | None, label: str) -> Quant | None:
    scales, zps, axis = fields
    if dtype == "float32":
        return None  # stale min/max/scale left on float tensors by the converter
    if not np.all(np.isfinite(scales)) or np.any(scales <= 0):
        bad = next(float(s) for s in scales if not (np.isfinite(s) and s > 0))
        raise KilnError(f"quantization scale {bad} is not a positive number", node=label)
    if len(zps) not in (1, len(scales)):
        raise KilnError(f"{len(scales)} quantization scales but {len(zps)} zero points", node=label)
    lo, hi = _ZERO_POINT_RANGE.get(dtype or "", (-(2 ** 31), 2 ** 31 - 1))
    if np.any(zps < lo) or np.any(zps > hi):
        raise KilnError(f"zero point {int(zps[(zps < lo) | (zps > hi)][0])} is out of range for {dtype}",
                        node=label)
    if len(scales) > 1:
        if not 0 <= axis < len(shape):
            raise KilnError(f"per-channel quantized_dimension {axis} is outside the tensor's rank "
                            f"{len(shape)}", node=label)
        if shape[axis] != len(scales):
            raise KilnError(f"{len(scales)} per-channel scales but dimension {axis} of "
                            f"{list(shape)} has {shape[axis]} channels", node=label)
    return Quant.of(scales, zps, axis)


def _read_operator(sg, i: int, codes: list[tuple[str, bool]], n_tensors: int, budget: _Budget) -> OperatorInfo:
    with _reading(f"operator {i}"):
        op = sg.Operators(i)
        opcode_index = int(op.OpcodeIndex())
        inputs = _int_vector(op.InputsAsNumpy, op.InputsLength(), budget, f"the inputs of operator {i}")
        outputs = _int_vector(op.OutputsAsNumpy, op.OutputsLength(), budget, f"the outputs of operator {i}")
    if not 0 <= opcode_index < len(codes):
        raise KilnError(f"operator {i} uses operator code {opcode_index}, but the model defines {len(codes)}")
    code, custom = codes[opcode_index]
    for kind, indices in (("input", inputs), ("output", outputs)):
        for t in indices:
            if not (0 <= t < n_tensors or (kind == "input" and t == -1)):
                raise KilnError(f"operator {i} ({code}) has {kind} tensor {t}, but the subgraph has "
                                f"{n_tensors} tensors")
    with _reading(f"the options of operator {i} ({code})"):
        options_type = _OPTION_NAMES.get(int(op.BuiltinOptionsType()), "UNKNOWN")
        table = op.BuiltinOptions() if options_type not in ("NONE", "UNKNOWN") else None
        options = _read_options(options_type, table, budget, f"the options of operator {i}") if table else {}
    return OperatorInfo(i, code, custom, inputs, outputs, options_type, options)


@lru_cache(maxsize=None)
def _option_fields(options_type: str) -> tuple[tuple[str, bool], ...]:
    """(accessor, is_vector) of every scalar or numeric-vector field of an options table."""
    cls = getattr(tflite, options_type, None)
    if cls is None:
        return ()
    fields = []
    for name, fn in vars(cls).items():
        if not name[:1].isupper() or not callable(fn) or name == "Init" or name.startswith("GetRootAs") \
                or name.endswith(("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")):
            continue
        params = len(inspect.signature(fn).parameters)
        if params == 1:
            fields.append((name, False))
        elif params == 2 and hasattr(cls, name + "AsNumpy"):
            fields.append((name, True))
    return tuple(fields)


def _read_options(options_type: str, table, budget: _Budget, what: str) -> dict[str, Any]:
    cls = getattr(tflite, options_type, None)
    if cls is None:
        return {}
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for name, is_vector in _option_fields(options_type):
        if is_vector:
            n = getattr(obj, name + "Length")()
            budget.charge(n, what)
            out[name] = tuple(v.item() for v in getattr(obj, name + "AsNumpy")()) if n else ()
        else:
            value = getattr(obj, name)()
            if isinstance(value, (bool, int, float)):
                out[name] = value
            elif isinstance(value, bytes):  # a string field (VAR_HANDLE's shared_name)
                out[name] = _text(value)
    return out


def empty_options(options_type: str) -> dict[str, Any]:
    """The schema defaults of an options table, for operators stored without one."""
    fields = _option_fields(options_type)
    if not fields:
        return {}
    b = flatbuffers.Builder(16)
    b.StartObject(0)
    b.Finish(b.EndObject())
    buf = bytes(b.Output())
    table = flatbuffers.table.Table(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))
    return _read_options(options_type, table, _Budget(1 << 20), "default options")


def fold_densify(model: ModelInfo) -> ModelInfo:
    """`model` without its DENSIFY operators of constants: their outputs hold the dense data."""
    tensors = list(model.tensors)
    kept = []
    for op in model.operators:
        source = tensors[op.inputs[0]] if op.code == "DENSIFY" and len(op.inputs) == 1 and op.inputs[0] >= 0 else None
        if source is None or source.data is None or len(op.outputs) != 1:
            kept.append(op)
            continue
        out = tensors[op.outputs[0]]
        if out.shape != source.shape or out.type_name != source.type_name:
            raise KilnError(f"DENSIFY gives {out.type_name.lower()}{list(out.shape)} for "
                            f"{source.type_name.lower()}{list(source.shape)}", node=out.name)
        tensors[op.outputs[0]] = replace(out, data=source.data, quant=out.quant or source.quant)
    if len(kept) == len(model.operators):
        return model
    return replace(model, tensors=tuple(tensors), operators=tuple(replace(op, index=k) for k, op in enumerate(kept)))
