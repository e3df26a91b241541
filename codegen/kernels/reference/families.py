"""The reference kernel families: kernels that differ only in their C types or their op's
expression, each family one spec over one template (templates/kernels/reference/<family>.c.j2).

A member keeps its own kernel name (`add_i16`, and so its C function `kiln_add_i16`); its
template variables come from the C type table of codegen/ir/types.py and the name of the op's
expression in templates/kernels/reference/_elementwise_exprs.c.j2. The float32 elementwise
functions are every FloatUnaryOp of the op registry: a new one needs its op module and its
expression, nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, make_dataclass, replace

from codegen.ir.types import C_SUFFIX, C_TYPES, INTEGER_DTYPES, int_bits, wrap_ctype
from codegen.kernels.reference.mean import ReduceLoops
from codegen.kernels.spec import REFERENCE, KernelFamily, kernel_family, typed_kernels
from codegen.ops.float_unary import FloatUnaryOp
from codegen.ops.fused_elementwise import INT8_BINARY
from codegen.ops.registry import all_ops
from codegen.ops.request import ConstArray
from codegen.quant.params import AddSubParams, MulParams


@dataclass(frozen=True)
class UnaryF32:
    n: int  # elements
    alpha: float  # the op's parameters (FloatUnaryOp.c_params; unused by most ops)
    beta: float


@dataclass(frozen=True)
class BinaryF32:
    dims: tuple[int, ...]  # loop extents, outermost first (coalesced, left-padded with 1)
    a_strides: tuple[int, ...]  # element stride of input a per loop dimension, 0 = broadcast
    b_strides: tuple[int, ...]
    act_min: float  # fused activation clamp
    act_max: float


@dataclass(frozen=True)
class Broadcast2:
    dims: tuple[int, ...]  # loop extents, outermost first (coalesced, left-padded with 1)
    a_strides: tuple[int, ...]  # element stride of input a per loop dimension, 0 = broadcast
    b_strides: tuple[int, ...]


def _c_block(name: str, constants: type) -> type:
    """kiln_quant.h's struct of an int8 binary op's constants: codegen.quant's dataclass of them,
    its activation bounds named as the C struct names them (act_min, act_max)."""
    renamed = {"activation_min": "act_min", "activation_max": "act_max"}
    block = make_dataclass(name, [(renamed.get(f.name, f.name), int) for f in fields(constants)], frozen=True)
    block.__module__ = __name__
    return block


AddQ = _c_block("AddQ", AddSubParams)  # kiln_add_params: TFLM's Add / Sub constants
MulQ = _c_block("MulQ", MulParams)  # kiln_mul_params: TFLM's Mul constants


# The C struct of each int8 binary op's constants -> its block.
QUANT_BLOCKS = {"kiln_add_params": AddQ, "kiln_mul_params": MulQ}


@dataclass(frozen=True)
class BinaryS8(Broadcast2):
    q: AddQ | MulQ  # TFLM's constants, the member's `qtype` (kiln_quant.h), nested by designator


class BinaryS8Family(KernelFamily):
    """The int8 broadcasting binary kernels: the nested `q` block is the member's own C struct."""

    @classmethod
    def prepare(cls, request, ctx):
        block = QUANT_BLOCKS[cls.members[request.kernel]["qtype"]]
        return super().prepare(replace(request, params={**request.params, "q": block(**request.params["q"])}), ctx)


@dataclass(frozen=True)
class TfIdf:
    rows: int  # N (1 for a 1-D input)
    width: int  # tokens per row
    size: int  # output coordinates per row
    mode: int  # 0 TF, 1 IDF, 2 TFIDF
    min_gram: int
    max_gram: int
    max_skip: int
    child_begin: ConstArray  # per trie node + 1: its children are nodes child_begin[i] + 1 ..
    keys: ConstArray  # token of trie node k + 1; each node's children ascending
    slots: ConstArray  # per trie node: output coordinate of its n-gram, -1: none
    weights: ConstArray  # per output coordinate


@dataclass(frozen=True)
class BitShift(Broadcast2):
    left: bool  # toward the high bits (else toward the low bits)


@dataclass(frozen=True)
class AxisRows:
    outer: int  # product of the dimensions before the axis
    depth: int  # the axis
    inner: int  # product of the dimensions after it


@dataclass(frozen=True)
class Cumulative(AxisRows):
    product: bool  # running product (else running sum)
    exclusive: bool  # each result leaves its own element out
    reverse: bool  # run from the end of the axis


@dataclass(frozen=True)
class TopK(AxisRows):
    k: int  # elements kept per row
    largest: bool  # largest first (else smallest first)


@dataclass(frozen=True)
class FloatTest:
    n: int  # elements
    negative: bool  # IsInf: detect -inf, +inf
    positive: bool


FLOAT, INTS, BOOL = ("float32",), INTEGER_DTYPES, ("bool",)
SIGNED = tuple(d for d in INTS if d.startswith("int"))

# The broadcasting ops without an activation: op expression -> (input dtypes, result dtype or
# None for the inputs' own). Integer Add / Sub / Mul wrap (their float and int8 kernels are the
# binary_f32 and binary_s8 families).
BROADCAST2 = {
    "equal": (FLOAT + INTS + BOOL, "bool"), "greater": (FLOAT + INTS, "bool"),
    "greater_equal": (FLOAT + INTS, "bool"), "less": (FLOAT + INTS, "bool"), "less_equal": (FLOAT + INTS, "bool"),
    "and": (BOOL, "bool"), "or": (BOOL, "bool"), "xor": (BOOL, "bool"),
    "maximum": (FLOAT + INTS, None), "minimum": (FLOAT + INTS, None),
    "div": (FLOAT, None), "pow": (FLOAT, None), "fmod": (FLOAT, None), "prelu": (FLOAT, None),
    "add": (INTS, None), "sub": (INTS, None), "mul": (INTS, None),
}


def _name(stem: str, dtype: str) -> str:
    return f"{stem}_{C_SUFFIX[dtype]}"


def _float_unary() -> dict:
    ops = [op for op in all_ops().values() if issubclass(op, FloatUnaryOp)]
    return {k: {"stem": k.removesuffix("_f32")} for op in ops for k in op.kernels}


def _broadcast2() -> dict:
    return {_name(op, d): {"function": _name(op, d), "op": op, "ctype": C_TYPES[d], "out_ctype": C_TYPES[out or d],
                           "wide": wrap_ctype(d) if op in ("add", "sub", "mul") else ""}
            for op, (dtypes, out) in BROADCAST2.items() for d in dtypes}


def _per_dtype(stem: str, dtypes: tuple[str, ...], **extra) -> dict:
    """`<stem>_<suffix>` over `dtypes`: its name, element C type `T` and wrap type `A`."""
    return {_name(stem, d): {"function": _name(stem, d), "T": C_TYPES[d],
                             "A": C_TYPES[d] if d == "float32" else wrap_ctype(d), **extra} for d in dtypes}


def _int_mod(stem: str, floor: bool) -> dict:
    return {_name(stem, d): {"function": _name(stem, d), "ctype": C_TYPES[d], "signed": d in SIGNED, "floor": floor}
            for d in INTS}


INT16_BINARY = ("add", "sub", "mul", "squared_difference")  # TFLite Micro's 16-bit broadcasting binary ops
QUANTIZED_ONLY = ("div",)  # int8 binary ops whose float32 kernel is another family's (broadcast2's div_f32)

kernel_family("unary_f32", _float_unary(), params=UnaryF32)
kernel_family("binary_f32", {f"{op}_f32": {"stem": op} for op in INT8_BINARY if op not in QUANTIZED_ONLY},
              params=BinaryF32)
kernel_family("binary_s8", {f"{op}_bcast_{sfx}": {"stem": f"{op}_bcast", "qtype": qtype, "fn": f"kiln_{op}_{sfx}",
                                                   "sfx": sfx, "ctype": C_TYPES[dtype]}
                            for op, qtype in INT8_BINARY.items() for sfx, dtype in (("s8", "int8"), ("s16", "int16"))
                            if sfx == "s8" or op in INT16_BINARY},
              params=BinaryS8, base=BinaryS8Family)
kernel_family("broadcast2", _broadcast2(), params=Broadcast2)
kernel_family("int_div", {_name("div", d): {"function": _name("div", d), "ctype": C_TYPES[d], "wide": wrap_ctype(d),
                                            "signed": d in SIGNED} for d in INTS},
              params=Broadcast2)
kernel_family("int_mod", {**_int_mod("fmod", False), **_int_mod("mod", True)}, params=Broadcast2)
kernel_family("bitwise", {_name(f"bitwise_{op}", d): {"function": _name(f"bitwise_{op}", d), "ctype": C_TYPES[d],
                                                      "op": f"bitwise_{op}"}
                          for op in ("and", "or", "xor") for d in INTS if d.startswith("uint")},
              params=Broadcast2)
kernel_family("bit_shift", {f"bit_shift_{C_SUFFIX[d]}": {
    "suffix": C_SUFFIX[d], "ctype": C_TYPES[d], "utype": C_TYPES[f"uint{int_bits(d)}"], "wide": wrap_ctype(d),
    "bits": int_bits(d), "signed": d in SIGNED} for d in INTS}, params=BitShift)
kernel_family("cumulative", _per_dtype("cumulative", FLOAT + INTS), params=Cumulative)
kernel_family("topk", _per_dtype("topk", FLOAT + INTS), params=TopK)
kernel_family("tfidf_vectorizer", _per_dtype("tfidf_vectorizer", ("int32", "int64")), params=TfIdf)
kernel_family("float_test", {f"{op}_f32": {"stem": op} for op in ("isnan", "isinf")}, params=FloatTest)
kernel_family("reduce_f32", {f"reduce_{op}_f32": {"stem": f"reduce_{op}"} for op in ("max", "min", "prod", "sum")},
              params=ReduceLoops)
typed_kernels(REFERENCE, Broadcast2, "mod_f32")  # numpy's remainder over the broadcast2 loop (its own helper)
