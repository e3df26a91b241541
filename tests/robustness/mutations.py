"""Broken and hostile variants of valid model files, for the fuzz test and bench/fuzz_campaign.py.

A *seed* is a valid model (the ONNX models of tests/onnx_models.py, the golden models, the
MLPerf Tiny models); a *mutation class* turns a seed into a malformed or hostile file, either
on the bytes (both formats) or on the decoded structure: `onnx.ModelProto` edits for ONNX,
the LiteRT schema's object API (`ModelT`, unpacked and repacked with flatbuffers) for TFLite.
Every mutation takes a `random.Random`, so a case is reproducible from (seed, class, rng seed).
`run_case` compiles one file in-process and classifies the outcome.
"""

from __future__ import annotations

import random
import signal
import struct
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
MLPERF = ROOT.parent / "shared" / "models" / "mlperf_tiny"
GOLDEN = ROOT / "tests" / "golden" / "models"

# Values that break arithmetic: zero, negatives, int32/int64 edges, 10^12 elements.
INTS = [0, 1, -1, -2, 2, 3, 7, 255, 256, 65535, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 32 + 1,
        10 ** 6, 10 ** 12, 2 ** 62, -(10 ** 9)]
FLOATS = [0.0, -0.0, -1.0, 1e-45, 1e-30, 1e30, 3.4e38, float("inf"), float("-inf"), float("nan"), 0.5]


@dataclass(frozen=True)
class Seed:
    name: str
    fmt: str                      # "onnx" or "tflite"
    data: bytes
    input_shapes: dict = field(default_factory=dict)

    @property
    def suffix(self) -> str:
        return ".onnx" if self.fmt == "onnx" else ".tflite"


def onnx_seeds() -> list[Seed]:
    from onnx_models import RUNNABLE, input_shapes_of

    seeds = []
    for name, build in RUNNABLE.items():
        model = build()
        dynamic = {vi.name for vi in model.graph.input
                   if any(not d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)}
        shapes = {k: v for k, v in input_shapes_of(model).items() if k in dynamic}
        seeds.append(Seed(name, "onnx", model.SerializeToString(), shapes))
    seeds.append(Seed("golden_mlp", "onnx", (GOLDEN / "mlp.onnx").read_bytes()))
    return seeds


def tflite_seeds(mlperf: bool = True, only: tuple[str, ...] | None = None) -> list[Seed]:
    seeds = [Seed("golden_tiny_int8", "tflite", (GOLDEN / "tiny_int8.tflite").read_bytes())]
    if mlperf and MLPERF.is_dir():
        for p in sorted(MLPERF.glob("*.tflite")):
            if only is None or p.stem in only:
                seeds.append(Seed(p.stem, "tflite", p.read_bytes()))
    return seeds


# -- byte-level mutations (both formats) --------------------------------------------------------

def bit_flip(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def byte_subst(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        b[rng.randrange(len(b))] = rng.choice([0x00, 0xFF, 0x7F, 0x80, 0x01, rng.randrange(256)])
    return bytes(b)


def int_subst(rng: random.Random, data: bytes) -> bytes:
    """An aligned 32-bit word replaced by an edge value: flatbuffer offsets, lengths, dims."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(0, max(len(b) - 4, 1), 4)
        b[i:i + 4] = struct.pack("<I", rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFF,
                                                    len(data), len(data) + 4, rng.getrandbits(32)]) & 0xFFFFFFFF)
    return bytes(b)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data))]


def chunk_dup(rng: random.Random, data: bytes) -> bytes:
    i = rng.randrange(len(data))
    n = rng.randint(1, min(256, len(data) - i))
    j = rng.randrange(len(data))
    return data[:j] + data[i:i + n] + data[j:]


def chunk_del(rng: random.Random, data: bytes) -> bytes:
    i = rng.randrange(len(data))
    n = rng.randint(1, min(256, len(data) - i))
    return data[:i] + data[i + n:]


def garbage(rng: random.Random, data: bytes) -> bytes:
    """Random bytes, sometimes behind a valid TFLite header or a plausible protobuf tag."""
    body = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 7, 64, 1000, 5000])))
    head = rng.choice([b"", data[:8], b"\x08\x07", b"\x00\x00\x00\x00TFL3"])
    return head + body


def wrong_magic(rng: random.Random, data: bytes) -> bytes:
    if data[4:8] == b"TFL3":
        return data[:4] + rng.choice([b"TFL2", b"tfl3", b"\0\0\0\0", b"ONNX"]) + data[8:]
    return rng.choice([b"\x89PNG\r\n\x1a\n", b"PK\x03\x04", b"\x7fELF", b"\xff" * 4]) + data


BYTE_MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "bit_flip": bit_flip, "byte_subst": byte_subst, "int_subst": int_subst, "truncate": truncate,
    "chunk_dup": chunk_dup, "chunk_del": chunk_del, "garbage": garbage, "wrong_magic": wrong_magic,
}


# -- ONNX field-level mutations -----------------------------------------------------------------

def _onnx_op_types() -> list[str]:
    from codegen.frontends.onnx.context import CONVERTERS

    return sorted(CONVERTERS) + ["Loop", "If", "Scan", "NonMaxSuppression", "TopK", "Hardmax", "Einsum",
                                 "FooBar", "", "Conv\0", "ConstantOfShape", "Range", "Tile", "Expand"]


def _tensor_names(m: onnx.ModelProto) -> list[str]:
    g = m.graph
    return sorted({t.name for t in g.initializer} | {vi.name for vi in g.input}
                  | {o for n in g.node for o in n.output if o})


def onnx_dims(rng: random.Random, m: onnx.ModelProto) -> None:
    """A dimension of a graph input/output or an initializer set to an absurd value, or a rank change."""
    g = m.graph
    pick = rng.choice(["io", "init"]) if g.initializer else "io"
    if pick == "init":
        t = rng.choice(g.initializer)
        dims = list(t.dims)
        if dims and rng.random() < 0.7:
            dims[rng.randrange(len(dims))] = rng.choice(INTS)
        elif rng.random() < 0.5:
            dims.append(rng.choice(INTS))
        else:
            dims = dims[:-1]
        del t.dims[:]
        t.dims.extend(dims)
        return
    vi = rng.choice(list(g.input) + list(g.output))
    dims = vi.type.tensor_type.shape.dim
    if len(dims) and rng.random() < 0.7:
        d = dims[rng.randrange(len(dims))]
        if rng.random() < 0.2:
            d.dim_param = rng.choice(["N", "batch", ""])
        else:
            d.dim_value = rng.choice(INTS)
    elif rng.random() < 0.5:
        dims.add().dim_value = rng.choice(INTS)
    else:
        vi.type.tensor_type.ClearField("shape")


def onnx_tensor_data(rng: random.Random, m: onnx.ModelProto) -> None:
    """An initializer's data made to disagree with its dims or type, or filled with edge values."""
    if not m.graph.initializer:
        return onnx_dims(rng, m)
    t = rng.choice(m.graph.initializer)
    how = rng.choice(["cut", "extend", "type", "values", "values", "typed_field"])
    if how == "cut" and t.raw_data:
        t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data))]
    elif how == "extend" and t.raw_data:
        t.raw_data = t.raw_data + bytes(rng.randint(1, 64))
    elif how == "type":
        t.data_type = rng.choice([0, 2, 3, 6, 7, 8, 9, 10, 11, 12, 14, 16, 17, 21, 22, 99, -1])
    elif how == "typed_field":
        t.ClearField("raw_data")
        t.float_data.extend([rng.choice(FLOATS) for _ in range(rng.randint(0, 5))])
    else:
        try:
            arr = onnx.numpy_helper.to_array(t).copy()
        except Exception:  # already damaged by an earlier step
            return
        if arr.size:
            flat = arr.reshape(-1)
            for _ in range(rng.randint(1, max(1, min(4, flat.size)))):
                k = rng.randrange(flat.size)
                if np.issubdtype(flat.dtype, np.floating):
                    flat[k] = rng.choice(FLOATS)
                elif np.issubdtype(flat.dtype, np.integer):
                    info = np.iinfo(flat.dtype)
                    flat[k] = min(max(rng.choice(INTS), info.min), info.max)
            t.CopyFrom(onnx.numpy_helper.from_array(arr, t.name))


def onnx_absurd(rng: random.Random, m: onnx.ModelProto) -> None:
    """A tensor that claims 10^12 elements with little or no data, or a node that would make one."""
    g = m.graph
    huge = rng.choice([[10 ** 6, 10 ** 6], [2 ** 31], [65536, 65536, 16], [0, 10 ** 12], [10 ** 12]])
    how = rng.choice(["init", "input", "const_of_shape", "expand", "tile", "range"])
    if how == "init" and g.initializer:
        t = rng.choice(g.initializer)
        del t.dims[:]
        t.dims.extend(huge)
        return
    if how == "input" and g.input:
        vi = g.input[0]
        vi.type.tensor_type.shape.ClearField("dim")
        for d in huge:
            vi.type.tensor_type.shape.dim.add().dim_value = d
        return
    name = f"fuzz_shape_{rng.randrange(1000)}"
    g.initializer.append(onnx.numpy_helper.from_array(np.array(huge, np.int64), name))
    out = f"{name}_out"
    if how == "const_of_shape" or how in ("init", "input"):
        g.node.insert(0, helper.make_node("ConstantOfShape", [name], [out],
                                          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])))
    elif how == "expand":
        g.initializer.append(onnx.numpy_helper.from_array(np.ones((1,), np.float32), f"{name}_one"))
        g.node.insert(0, helper.make_node("Expand", [f"{name}_one", name], [out]))
    elif how == "tile":
        g.initializer.append(onnx.numpy_helper.from_array(np.ones([1] * len(huge), np.float32), f"{name}_one"))
        g.node.insert(0, helper.make_node("Tile", [f"{name}_one", name], [out]))
    else:
        for k, v in (("s", 0.0), ("l", 1e12), ("d", rng.choice([1.0, 1e-6, 0.0]))):
            g.initializer.append(onnx.numpy_helper.from_array(np.array(v, np.float32), f"{name}_{k}"))
        g.node.insert(0, helper.make_node("Range", [f"{name}_s", f"{name}_l", f"{name}_d"], [out]))
    # Feed it into the graph: replace a node input of the same role where possible.
    users = [n for n in g.node[1:] if n.input]
    if users:
        n = rng.choice(users)
        n.input[rng.randrange(len(n.input))] = out
    else:
        g.output.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))


def onnx_dangling(rng: random.Random, m: onnx.ModelProto) -> None:
    g = m.graph
    where = rng.choice(["node", "node", "output"])
    if where == "output" or not g.node:
        if g.output:
            g.output[rng.randrange(len(g.output))].name = rng.choice(["nowhere", "", "x y"])
        return
    n = rng.choice(g.node)
    if n.input:
        n.input[rng.randrange(len(n.input))] = rng.choice(["missing_tensor", "", " ", "\u00e9\u00e9"])
    else:
        n.input.append("missing_tensor")


def onnx_cycle(rng: random.Random, m: onnx.ModelProto) -> None:
    """A node reads an output of itself or of a later node; or two nodes define one tensor."""
    g = m.graph
    if not g.node:
        return
    i = rng.randrange(len(g.node))
    j = rng.randrange(i, len(g.node))
    if rng.random() < 0.3 and i != j and g.node[j].output:
        g.node[j].output[0] = g.node[i].output[0]  # tensor defined twice
        return
    if g.node[i].input and g.node[j].output:
        g.node[i].input[rng.randrange(len(g.node[i].input))] = g.node[j].output[0]


def onnx_attr(rng: random.Random, m: onnx.ModelProto) -> None:
    """An attribute given an out-of-range value or the wrong type, removed, or invented."""
    g = m.graph
    if not g.node:
        return
    n = rng.choice(g.node)
    how = rng.choice(["value", "value", "value", "type", "drop", "add"])
    if how == "drop" and n.attribute:
        del n.attribute[rng.randrange(len(n.attribute))]
        return
    if how == "add" or not n.attribute:
        key = rng.choice(["axis", "axes", "group", "strides", "pads", "kernel_shape", "dilations", "perm",
                          "to", "alpha", "beta", "transA", "transB", "keepdims", "ceil_mode", "auto_pad",
                          "mode", "epsilon", "value", "count_include_pad", "storage_order", "bogus"])
        value = rng.choice([rng.choice(INTS), [rng.choice(INTS) for _ in range(rng.randint(0, 6))],
                            rng.choice(FLOATS), rng.choice(["SAME_UPPER", "VALID", "NOTSET", "weird", ""])])
        del_same = [k for k, a in enumerate(n.attribute) if a.name == key]
        for k in reversed(del_same):
            del n.attribute[k]
        n.attribute.append(helper.make_attribute(key, value, attr_type=onnx.AttributeProto.INTS)
                           if value == [] else helper.make_attribute(key, value))
        return
    a = rng.choice(n.attribute)
    if how == "type":
        value = rng.choice([rng.choice(INTS), [1.5, 2.5], "text", rng.choice(FLOATS)])
        n.attribute.remove(a)
        n.attribute.append(helper.make_attribute(a.name, value))
        return
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice(INTS)
    elif a.type == onnx.AttributeProto.INTS:
        vals = list(a.ints)
        if vals and rng.random() < 0.7:
            vals[rng.randrange(len(vals))] = rng.choice(INTS)
        else:
            vals = [rng.choice(INTS) for _ in range(rng.randint(0, 8))]
        del a.ints[:]
        a.ints.extend(vals)
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice(FLOATS)
    elif a.type == onnx.AttributeProto.FLOATS:
        vals = [rng.choice(FLOATS) for _ in range(max(1, len(a.floats)))]
        del a.floats[:]
        a.floats.extend(vals)
    elif a.type == onnx.AttributeProto.STRING:
        a.s = rng.choice([b"", b"SAME_LOWER", b"\xff\xfe", b"nonsense"])
    elif a.type == onnx.AttributeProto.TENSOR:
        t = a.t
        if rng.random() < 0.5 and t.raw_data:
            t.raw_data = t.raw_data[:-1]
        else:
            del t.dims[:]
            t.dims.extend([rng.choice(INTS)])


def onnx_op_type(rng: random.Random, m: onnx.ModelProto) -> None:
    g = m.graph
    if not g.node:
        return
    n = rng.choice(g.node)
    if rng.random() < 0.15:
        n.domain = rng.choice(["com.microsoft", "ai.onnx.ml", "custom", "ai.onnx"])
    else:
        n.op_type = rng.choice(_onnx_op_types())


def onnx_arity(rng: random.Random, m: onnx.ModelProto) -> None:
    """A node with inputs or outputs removed, added (possibly empty names) or reordered."""
    g = m.graph
    if not g.node:
        return
    n = rng.choice(g.node)
    names = _tensor_names(m)
    how = rng.choice(["drop_in", "add_in", "swap_in", "drop_out", "add_out"])
    if how == "drop_in" and n.input:
        del n.input[rng.randrange(len(n.input))]
    elif how == "add_in":
        n.input.append(rng.choice(names + [""]))
    elif how == "swap_in" and len(n.input) > 1:
        a, b = rng.sample(range(len(n.input)), 2)
        n.input[a], n.input[b] = n.input[b], n.input[a]
    elif how == "drop_out" and n.output:
        del n.output[rng.randrange(len(n.output))]
    else:
        n.output.append(rng.choice([f"extra_{rng.randrange(100)}", "", *names[:3]]))


def onnx_graph(rng: random.Random, m: onnx.ModelProto) -> None:
    """Graph-level damage: opset and IR version, inputs/outputs removed, typed wrongly or doubled,
    nodes deleted or duplicated, external data pointing elsewhere, sparse initializers."""
    g = m.graph
    how = rng.choice(["opset", "ir", "drop_io", "io_type", "dup_io", "drop_node", "dup_node",
                      "external", "sparse", "no_graph"])
    if how == "opset":
        m.opset_import[0].version = rng.choice([0, 1, 6, 7, 22, 23, 99, 2 ** 62])
        if rng.random() < 0.3:
            m.opset_import[0].domain = rng.choice(["ai.onnx.ml", "custom"])
    elif how == "ir":
        m.ir_version = rng.choice([0, -1, 1, 99, 2 ** 62])
    elif how == "drop_io":
        seq = rng.choice([g.input, g.output])
        if len(seq):
            del seq[rng.randrange(len(seq))]
    elif how == "io_type" and g.input:
        vi = rng.choice(list(g.input) + list(g.output))
        if rng.random() < 0.3:
            vi.ClearField("type")
        else:
            vi.type.tensor_type.elem_type = rng.choice([0, 2, 6, 7, 9, 10, 11, 16, 99])
    elif how == "dup_io":
        seq = rng.choice([g.input, g.output])
        if len(seq):
            seq.append(seq[rng.randrange(len(seq))])
    elif how == "drop_node" and g.node:
        del g.node[rng.randrange(len(g.node))]
    elif how == "dup_node" and g.node:
        g.node.insert(rng.randrange(len(g.node) + 1), g.node[rng.randrange(len(g.node))])
    elif how == "external" and g.initializer:
        t = rng.choice(g.initializer)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", rng.choice(["/etc/passwd", "../../../../etc/hostname", "missing.bin",
                                               "", "."])),
                     ("offset", str(rng.choice([0, 10 ** 12, -5]))), ("length", str(rng.choice([4, 10 ** 12])))):
            e = t.external_data.add()
            e.key, e.value = k, v
    elif how == "sparse" and g.initializer:
        t = g.initializer[0]
        sp = onnx.SparseTensorProto()
        sp.values.CopyFrom(t)
        sp.dims.extend(t.dims)
        g.sparse_initializer.append(sp)
    elif how == "no_graph":
        m.ClearField("graph")


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def onnx_nesting(rng: random.Random, data: bytes) -> bytes:
    """An `If` node whose then-branch nests graphs 50 to 5000 deep, appended to the model's graph
    as raw protobuf (protobuf merges the repeated field): recursion without end in a naive reader.
    Built as bytes because the protobuf runtime itself refuses to build or copy such messages."""
    graph = b""
    for _ in range(rng.choice([50, 99, 101, 500, 5000])):
        attr = _field(1, b"then_branch") + _varint(20 << 3) + _varint(5) + _field(6, graph)
        node = _field(1, b"c") + _field(2, b"o") + _field(4, b"If") + _field(5, attr)
        graph = _field(1, node)
    return data + _field(7, graph)


def onnx_checker(rng: random.Random, m: onnx.ModelProto) -> None:
    """Damage that only the full ONNX checker sees (issue 17): the model still parses and every
    tensor keeps its size, but a type, dimension, attribute, opset or arity breaks the spec."""
    g = m.graph
    how = rng.choice(["retype", "negative_dim", "foreign_attr", "opset", "extra_input", "attr_type"])
    if how == "retype" and g.initializer:
        t = rng.choice(g.initializer)  # e.g. a float scale read as uint4, its bytes unchanged
        t.data_type = rng.choice([onnx.TensorProto.UINT4, onnx.TensorProto.INT4, onnx.TensorProto.BOOL,
                                  onnx.TensorProto.STRING, onnx.TensorProto.FLOAT16, onnx.TensorProto.INT64])
    elif how == "negative_dim" and g.initializer:
        t = rng.choice(g.initializer)
        if t.dims:
            t.dims[rng.randrange(len(t.dims))] = -rng.choice([1, 2, 7])
    elif how == "foreign_attr" and g.node:
        n = rng.choice(g.node)  # `group` on Mul
        n.attribute.append(helper.make_attribute(rng.choice(["group", "axis", "kernel_shape", "mode"]),
                                                 rng.choice([1, 2, [3, 3], "linear"])))
    elif how == "opset":
        for op in m.opset_import:
            if op.domain in ("", "ai.onnx"):
                op.version = rng.choice([2 ** 40, 10 ** 6, 99, 0])
    elif how == "extra_input" and g.node:
        n = rng.choice(g.node)  # GlobalAveragePool with two inputs
        n.input.append(rng.choice([i for i in n.input if i] or [g.input[0].name]))
    elif g.node:
        n = rng.choice(g.node)
        if n.attribute:
            a = rng.choice(n.attribute)
            a.type = rng.choice([onnx.AttributeProto.FLOAT, onnx.AttributeProto.STRING, onnx.AttributeProto.INTS])


ONNX_BYTE_MUTATIONS = {"onnx_nesting": onnx_nesting}

ONNX_MUTATIONS: dict[str, Callable[[random.Random, onnx.ModelProto], None]] = {
    "onnx_dims": onnx_dims, "onnx_tensor_data": onnx_tensor_data, "onnx_absurd_shape": onnx_absurd,
    "onnx_dangling": onnx_dangling, "onnx_cycle": onnx_cycle, "onnx_attr": onnx_attr,
    "onnx_op_type": onnx_op_type, "onnx_arity": onnx_arity, "onnx_graph": onnx_graph,
    "onnx_checker": onnx_checker,
}


def _serialize_onnx(m: onnx.ModelProto) -> bytes:
    try:
        return m.SerializeToString()
    except Exception:  # e.g. a nested graph past protobuf's own limits: keep the bytes we can
        return m.SerializePartialToString()


# -- TFLite field-level mutations (LiteRT's schema object API) ------------------------------------

def _schema():
    import ai_edge_litert.schema_py_generated as schema

    return schema


def tflite_unpack(data: bytes):
    return _schema().ModelT.InitFromPackedBuf(bytearray(data), 0)


def tflite_pack(model) -> bytes:
    import flatbuffers

    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _int_array(values) -> np.ndarray:
    return np.array([max(min(int(v), 2 ** 31 - 1), -(2 ** 31)) for v in values], np.int32)


def tfl_shape(rng: random.Random, m) -> None:
    sg = m.subgraphs[0]
    t = rng.choice(sg.tensors)
    shape = [int(d) for d in (t.shape if t.shape is not None else [])]
    how = rng.choice(["dim", "dim", "rank_up", "rank_down", "signature", "huge"])
    if how == "dim" and shape:
        shape[rng.randrange(len(shape))] = rng.choice(INTS)
    elif how == "rank_up":
        shape += [rng.choice([1, 2, 3])] * rng.choice([1, 7])
    elif how == "rank_down" and shape:
        shape = shape[:-1]
    elif how == "signature":
        t.shapeSignature = _int_array([rng.choice([-1, -2, 0, 5]) for _ in range(rng.choice([len(shape), 2]))])
    else:
        shape = [65536, 65536, 4] if rng.random() < 0.5 else [2 ** 31 - 1, 2]
    t.shape = _int_array(shape)


def tfl_type(rng: random.Random, m) -> None:
    t = rng.choice(m.subgraphs[0].tensors)
    t.type = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 17, 18, 127, -1])


def tfl_op_types(rng: random.Random, m) -> None:
    """One tensor of an operator retyped to another valid TFLite type, lengths unchanged where
    the item size allows (issue 17: a CONV_2D filter from INT8 into BOOL built and ran)."""
    sg = m.subgraphs[0]
    op = rng.choice(sg.operators)
    slots = [int(i) for i in list(op.inputs) + list(op.outputs) if int(i) >= 0]
    t = sg.tensors[rng.choice(slots)]
    same_size = {9: [6, 3], 6: [9, 3], 3: [9, 6], 0: [2, 1], 2: [0], 7: [1, 16], 16: [7]}  # TensorType codes
    t.type = rng.choice(same_size.get(int(t.type), [0, 2, 3, 6, 7, 9]) + [0, 2, 9])


def tfl_buffer(rng: random.Random, m) -> None:
    sg = m.subgraphs[0]
    how = rng.choice(["index", "index", "data_cut", "data_grow", "offset"])
    if how == "index":
        t = rng.choice(sg.tensors)
        t.buffer = rng.choice([len(m.buffers), len(m.buffers) + 100, 2 ** 32 - 1, 0,
                               rng.randrange(max(len(m.buffers), 1))])
        return
    full = [b for b in m.buffers if b.data is not None and len(b.data)]
    if not full:
        return
    buf = rng.choice(full)
    if how == "data_cut":
        buf.data = buf.data[:rng.randrange(len(buf.data))]
    elif how == "data_grow":
        buf.data = np.concatenate([buf.data, np.zeros(rng.randint(1, 64), np.uint8)])
    else:
        buf.data = None
        buf.offset = rng.choice([2, 10 ** 12, 2 ** 63 - 1, 64])
        buf.size = rng.choice([1, 10 ** 12, 2 ** 63 - 1, 16])


def tfl_quant(rng: random.Random, m) -> None:
    schema = _schema()
    sg = m.subgraphs[0]
    quantized = [t for t in sg.tensors if t.quantization is not None and t.quantization.scale is not None
                 and len(t.quantization.scale)]
    t = rng.choice(quantized) if quantized and rng.random() < 0.85 else rng.choice(sg.tensors)
    if t.quantization is None:
        t.quantization = schema.QuantizationParametersT()
    q = t.quantization
    n = len(q.scale) if q.scale is not None else 1
    how = rng.choice(["scale", "scale", "zp", "zp", "per_channel_len", "axis", "drop"])
    if how == "scale":
        scales = np.array(q.scale if q.scale is not None else [1.0], np.float32)
        scales[rng.randrange(len(scales))] = rng.choice(FLOATS)
        q.scale = scales
    elif how == "zp":
        zps = np.array(q.zeroPoint if q.zeroPoint is not None and len(q.zeroPoint) else [0] * n, np.int64)
        zps[rng.randrange(len(zps))] = rng.choice([128, -129, 255, 256, -1, 2 ** 40, -(2 ** 63)])
        q.zeroPoint = zps
    elif how == "per_channel_len":
        k = rng.choice([0, 2, 3, n + 1, max(n - 1, 0)])
        q.scale = np.full(k, 0.05, np.float32)
        q.zeroPoint = np.zeros(rng.choice([k, 1, k + 1]), np.int64)
    elif how == "axis":
        q.quantizedDimension = rng.choice([-1, 1, 3, 4, 9, 2 ** 31 - 1])
        if n == 1:
            q.scale = np.full(3, 0.05, np.float32)
            q.zeroPoint = np.zeros(3, np.int64)
    else:
        t.quantization = None


def tfl_operator_io(rng: random.Random, m) -> None:
    """Operator inputs/outputs pointing out of range, at the wrong tensor (cycles, dangling
    reads, double writes, writes to constants), dropped or added."""
    sg = m.subgraphs[0]
    op = rng.choice(sg.operators)
    n_t = len(sg.tensors)
    pick = [-1, -2, n_t, n_t + 7, 2 ** 31 - 1, rng.randrange(n_t), rng.randrange(n_t)]
    side = rng.choice(["inputs", "inputs", "outputs"])
    vals = [int(v) for v in (getattr(op, side) if getattr(op, side) is not None else [])]
    how = rng.choice(["set", "set", "drop", "add"])
    if how == "set" and vals:
        vals[rng.randrange(len(vals))] = rng.choice(pick)
    elif how == "drop" and vals:
        del vals[rng.randrange(len(vals))]
    else:
        vals.append(rng.choice(pick))
    setattr(op, side, _int_array(vals))


def tfl_opcode(rng: random.Random, m) -> None:
    sg = m.subgraphs[0]
    how = rng.choice(["index", "code", "code", "custom"])
    if how == "index":
        rng.choice(sg.operators).opcodeIndex = rng.choice([len(m.operatorCodes), 2 ** 32 - 1, 0])
        return
    oc = rng.choice(m.operatorCodes)
    if how == "code":
        code = rng.choice([rng.randrange(0, 210), 32, 200, 255, 2 ** 31 - 1, -5])
        oc.builtinCode = code
        oc.deprecatedBuiltinCode = min(max(code, -128), 127) if rng.random() < 0.7 else rng.randrange(128)
    else:
        oc.builtinCode = 32
        oc.deprecatedBuiltinCode = 32
        oc.customCode = rng.choice([b"TFLite_Detection_PostProcess", b"", b"\xff\xfe"])


# Option fields stored as int8/uint8/bool in the schema (enums and flags).
_BYTE_FIELDS = {"padding", "fusedActivationFunction", "weightsFormat", "asymmetricQuantizeInputs",
                "keepNumDims", "keepDims", "adjX", "adjY", "potScaleInt16", "quantizedBiasType",
                "mode", "kernelType", "combinerType", "type", "outType", "outputType", "inDataType",
                "alignCorners", "halfPixelCenters", "mergeOutputs", "timeMajor", "asymmetricQuantizeInputs"}


def tfl_options(rng: random.Random, m) -> None:
    """A builtin option field set to an edge value, or the options table of another type."""
    schema = _schema()
    sg = m.subgraphs[0]
    with_opts = [op for op in sg.operators if op.builtinOptions is not None]
    if not with_opts or rng.random() < 0.15:
        op = rng.choice(sg.operators)
        kind = rng.choice([1, 2, 5, 6, 8, 13, 17, 22, 200])
        op.builtinOptionsType = kind
        name = next((k for k, v in vars(schema.BuiltinOptions).items() if v == kind), None)
        cls = getattr(schema, f"{name}T", None) if name else None
        op.builtinOptions = cls() if cls is not None else None
        return
    op = rng.choice(with_opts)
    fields = [k for k, v in vars(op.builtinOptions).items() if isinstance(v, (int, float, bool, np.ndarray, list))
              or v is None]
    if not fields:
        return
    key = rng.choice(fields)
    old = getattr(op.builtinOptions, key)
    if isinstance(old, bool):
        new = not old
    elif isinstance(old, float):
        new = rng.choice(FLOATS)
    elif isinstance(old, (np.ndarray, list)) or old is None:
        new = _int_array([rng.choice(INTS) for _ in range(rng.randint(0, 5))])
    elif key in _BYTE_FIELDS:  # enums stored as int8: padding, fused activation, ...
        new = rng.choice([2, 3, 4, 5, 6, 9, 127, -1, -128])
    else:
        new = max(min(rng.choice(INTS + [4, 5, 6, 9]), 2 ** 31 - 1), -(2 ** 31))
    setattr(op.builtinOptions, key, new)
    try:  # a field narrower than int32 the list above misses: keep the value in its range
        import flatbuffers

        op.builtinOptions.Pack(flatbuffers.Builder(64))
    except (TypeError, struct.error):
        setattr(op.builtinOptions, key, max(min(int(new), 127), -128))


def tfl_graph(rng: random.Random, m) -> None:
    """Subgraph inputs/outputs out of range, doubled, dropped, or a constant; operators deleted,
    duplicated or swapped; no subgraph at all; extra subgraphs."""
    sg = m.subgraphs[0]
    n_t = len(sg.tensors)
    how = rng.choice(["io", "io", "drop_op", "dup_op", "swap_ops", "no_subgraph", "extra_subgraph"])
    if how == "io":
        side = rng.choice(["inputs", "outputs"])
        vals = [int(v) for v in getattr(sg, side)]
        r = rng.random()
        if r < 0.3 or not vals:
            vals.append(rng.choice([-1, n_t, rng.randrange(n_t)]))
        elif r < 0.6:
            vals[rng.randrange(len(vals))] = rng.choice([-1, n_t, 2 ** 31 - 1, rng.randrange(n_t)])
        else:
            vals = vals[:-1]
        setattr(sg, side, _int_array(vals))
    elif how == "drop_op" and sg.operators:
        del sg.operators[rng.randrange(len(sg.operators))]
    elif how == "dup_op" and sg.operators:
        sg.operators.insert(rng.randrange(len(sg.operators) + 1), rng.choice(sg.operators))
    elif how == "swap_ops" and len(sg.operators) > 1:
        a, b = rng.sample(range(len(sg.operators)), 2)
        sg.operators[a], sg.operators[b] = sg.operators[b], sg.operators[a]
    elif how == "no_subgraph":
        m.subgraphs = []
    else:
        m.subgraphs.append(m.subgraphs[0])


TFLITE_MUTATIONS = {
    "tfl_shape": tfl_shape, "tfl_type": tfl_type, "tfl_buffer": tfl_buffer, "tfl_quant": tfl_quant,
    "tfl_operator_io": tfl_operator_io, "tfl_opcode": tfl_opcode, "tfl_options": tfl_options,
    "tfl_graph": tfl_graph, "tfl_op_types": tfl_op_types,
}


def classes_for(fmt: str) -> list[str]:
    """The mutation classes for a format; `<fmt>_mixed` chains several structural ones."""
    if fmt == "onnx":
        return list(BYTE_MUTATIONS) + list(ONNX_MUTATIONS) + list(ONNX_BYTE_MUTATIONS) + ["onnx_mixed"]
    return list(BYTE_MUTATIONS) + list(TFLITE_MUTATIONS) + ["tfl_mixed"]


def mutate(seed: Seed, cls: str, rng: random.Random, steps: int = 1) -> bytes:
    """`seed` damaged by `steps` mutations of class `cls`."""
    data = seed.data
    byte_level = {**BYTE_MUTATIONS, **ONNX_BYTE_MUTATIONS}
    if cls in byte_level:
        for _ in range(steps):
            data = byte_level[cls](rng, data) if data else data
        return data
    if cls in ONNX_MUTATIONS or cls == "onnx_mixed":
        m = onnx.ModelProto()
        m.ParseFromString(data)
        for _ in range(steps + (cls == "onnx_mixed")):
            _step(ONNX_MUTATIONS[cls if cls in ONNX_MUTATIONS else rng.choice(sorted(ONNX_MUTATIONS))], rng, m)
        return _serialize_onnx(m)
    m = tflite_unpack(data)
    for _ in range(steps + (cls == "tfl_mixed")):
        _step(TFLITE_MUTATIONS[cls if cls in TFLITE_MUTATIONS else rng.choice(sorted(TFLITE_MUTATIONS))], rng, m)
    return tflite_pack(m)


def _step(fn, rng: random.Random, model) -> None:
    """One structural mutation; a step that finds nothing to damage (no nodes, no subgraph,
    an earlier step already broke what it reads) leaves the model as it is."""
    try:
        fn(rng, model)
    except (IndexError, ValueError, TypeError, AttributeError):
        pass


# -- running a case ------------------------------------------------------------------------------

class CaseTimeout(Exception):
    """The case went past its time bound (raised from a SIGALRM handler)."""


@dataclass
class Outcome:
    kind: str            # "ok", "kiln_error", "crash" (any other exception), "timeout", or
                         # "bad_message" (a KilnError of several lines or not naming the file)
    seconds: float
    message: str = ""    # the error line, or the traceback of a crash

    @property
    def clean(self) -> bool:
        return self.kind in ("ok", "kiln_error")


def run_case(path: Path, input_shapes: dict | None = None, time_bound: float = 5.0,
             inspect: bool = False, planner: str = "greedy") -> Outcome:
    """Compile `path` in-process (after `kiln inspect`'s analysis when asked) under a SIGALRM
    time bound. Clean outcomes: success, or a one-line KilnError that starts with the file."""
    from codegen.compiler import compile_model
    from codegen.errors import KilnError
    from codegen.inspect import inspect_model
    from codegen.options import CompileOptions
    from codegen.targets import load_target

    def on_alarm(signum, frame):
        raise CaseTimeout(f"still running after {time_bound} s")

    options = CompileOptions(target=load_target("host"), input_shapes=dict(input_shapes or {}),
                             planner=planner, time_limit_s=1.0)
    steps = ([lambda: inspect_model(path, dict(input_shapes or {}))] if inspect else []) + \
        [lambda: compile_model(path, options)]
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_bound)
    start = time.perf_counter()
    kind, message = "ok", ""
    try:
        for step in steps:
            try:
                step()
                kind, message = "ok", ""
            except KilnError as err:
                kind, message = "kiln_error", str(err)
                if "\n" in message or not message.startswith(str(path)):
                    kind = "bad_message"
                    break
    except CaseTimeout as err:
        kind, message = "timeout", str(err)
    except (Exception, RecursionError) as err:  # noqa: B014 - anything else is a finding
        kind, message = "crash", "".join(traceback.format_exception(err))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - start
    if kind != "timeout" and seconds > time_bound:
        kind, message = "timeout", f"took {seconds:.1f} s"
    return Outcome(kind, seconds, message)
