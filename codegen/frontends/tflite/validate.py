"""What each TFLite operator accepts: tensor types, shapes and quantization, checked at import
as TFLite Micro's kernels check them in Prepare.

The reader (reader.py) already decodes the flatbuffer eagerly and within bounds, so a file
whose offsets or lengths are wrong never reaches this module. What it cannot see is a well-formed
file whose operators make no sense: one byte turning a CONV_2D filter from INT8 into BOOL keeps
every length right, and the converters would happily read the bytes as weights (LiteRT returns
NaN on such a model, TFLite Micro refuses it in Prepare). Each rule below names the operator,
the tensor, its type and what the operator takes instead.

Operators not listed are checked by their converter alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.errors import KilnError
from codegen.frontends.tflite.reader import ModelInfo, OperatorInfo, TensorInfo

FLOAT = ("FLOAT32",)
QUANTIZED = ("INT8", "INT16")
ACTIVATION = FLOAT + QUANTIZED
NUMERIC = ACTIVATION + ("INT32", "INT64")
ANY = NUMERIC + ("UINT8", "BOOL")
INDEX = ("INT32", "INT64")

# Weighted ops (input 0, filter 1, bias 2): per input type, the filter, bias and output types.
# A FLOAT32 input with a constant INT8 filter is a dynamic-range ("hybrid") model, which LiteRT
# and Kiln run (frontends/tflite/hybrid.py).
_WEIGHTED_TYPES = {
    "FLOAT32": (("FLOAT32", "INT8"), ("FLOAT32",), ("FLOAT32",)),
    "INT8": (("INT8", "INT4"), ("INT32",), ("INT8",)),
    "INT16": (("INT8",), ("INT64", "INT32"), ("INT16",)),
}


@dataclass(frozen=True)
class Weighted:
    """Convolutions and fully connected layers; `channel_axis`: the filter's output channels."""

    channel_axis: int
    filter_rank: tuple[int, ...]


@dataclass(frozen=True)
class Same:
    """Data inputs (`data`) and every output of one type among `types`; `index`: inputs holding
    shapes, axes or paddings (INT32/INT64); `outputs`: output types when they differ from the input."""

    types: tuple[str, ...]
    data: tuple[int, ...] = (0,)
    index: tuple[int, ...] = ()
    quantized: bool = True  # INT8/INT16 data must carry quantization parameters
    outputs: dict[str, tuple[str, ...]] | None = None


RULES: dict[str, Weighted | Same] = {
    "CONV_2D": Weighted(0, (4,)),
    "DEPTHWISE_CONV_2D": Weighted(3, (4,)),
    "FULLY_CONNECTED": Weighted(0, (2,)),
    "BATCH_MATMUL": Same(ACTIVATION, data=(0, 1)),
    "ADD": Same(NUMERIC, data=(0, 1)),
    "SUB": Same(NUMERIC, data=(0, 1)),
    "MUL": Same(NUMERIC, data=(0, 1)),
    "MAXIMUM": Same(NUMERIC, data=(0, 1)),
    "MINIMUM": Same(NUMERIC, data=(0, 1)),
    "AVERAGE_POOL_2D": Same(ACTIVATION),
    "MAX_POOL_2D": Same(ACTIVATION),
    "MEAN": Same(ACTIVATION, index=(1,)),
    "SUM": Same(NUMERIC, index=(1,)),
    "REDUCE_MAX": Same(ACTIVATION, index=(1,)),
    "RELU": Same(ACTIVATION),
    "RELU6": Same(ACTIVATION),
    "RELU_N1_TO_1": Same(ACTIVATION),
    "LEAKY_RELU": Same(ACTIVATION),
    "HARD_SWISH": Same(ACTIVATION),
    "LOGISTIC": Same(ACTIVATION),
    "TANH": Same(ACTIVATION),
    "SOFTMAX": Same(ACTIVATION, outputs={"FLOAT32": FLOAT, "INT8": ("INT8", "INT16"), "INT16": ("INT16",)}),
    "RESHAPE": Same(ANY, index=(1,), quantized=False),
    "SQUEEZE": Same(ANY, quantized=False),
    "EXPAND_DIMS": Same(ANY, index=(1,), quantized=False),
    "TRANSPOSE": Same(ANY, index=(1,), quantized=False),
    "PAD": Same(ANY, index=(1,), quantized=False),
    "PADV2": Same(ANY, data=(0, 2), index=(1,), quantized=False),
    "CONCATENATION": Same(ANY, data=(), quantized=False),  # data: every input
    "QUANTIZE": Same(FLOAT + QUANTIZED + ("UINT8",), quantized=False,
                     outputs={t: ("INT8", "INT16", "UINT8", "INT32") for t in FLOAT + QUANTIZED + ("UINT8",)}),
    "DEQUANTIZE": Same(("INT8", "UINT8", "INT16", "FLOAT16"), outputs={
        t: FLOAT for t in ("INT8", "UINT8", "INT16", "FLOAT16")}),
}


def validate(model: ModelInfo, names: list[str]) -> None:
    """KilnError for the first operator whose tensors break its rule."""
    for op in model.operators:
        rule = RULES.get(op.code)
        if rule is None or op.custom:
            continue
        tensors = [model.tensors[i] if i >= 0 else None for i in op.inputs]
        outputs = [model.tensors[i] for i in op.outputs]
        label = names[op.outputs[0]] if op.outputs else f"operator_{op.index}"
        check = _weighted if isinstance(rule, Weighted) else _same
        check(op, rule, tensors, outputs, label)


def _refuse(op: OperatorInfo, label: str, what: str, t: TensorInfo, accepted: tuple[str, ...], why: str = ""):
    raise KilnError(f"{op.code}: {what} '{t.name or t.index}' is {t.type_name}, but {op.code}{why} takes "
                    f"{' or '.join(accepted)}", node=label)


def _quantized(op: OperatorInfo, label: str, what: str, t: TensorInfo) -> None:
    if t.type_name in QUANTIZED and t.quant is None:
        raise KilnError(f"{op.code}: {what} '{t.name or t.index}' is {t.type_name} without quantization "
                        "parameters (scale, zero point)", node=label)
    if t.type_name == "INT16" and t.quant is not None and any(int(z) != 0 for z in t.quant.zero_point):
        raise KilnError(f"{op.code}: {what} '{t.name or t.index}' is INT16 with a zero point other than 0 "
                        "(16-bit activations are symmetric)", node=label)


def _weighted(op: OperatorInfo, rule: Weighted, inputs, outputs, label: str) -> None:
    if len(inputs) < 2 or inputs[0] is None or inputs[1] is None or not outputs:
        return  # arity: the converter's check names it
    x, w, out = inputs[0], inputs[1], outputs[0]
    if x.type_name not in _WEIGHTED_TYPES:
        _refuse(op, label, "input", x, tuple(_WEIGHTED_TYPES))
    filters, biases, results = _WEIGHTED_TYPES[x.type_name]
    why = f" with a {x.type_name} input"
    if w.type_name not in filters:
        _refuse(op, label, "filter", w, filters, why)
    hybrid = x.type_name == "FLOAT32" and w.type_name == "INT8"
    if hybrid and w.data is None:
        raise KilnError(f"{op.code}: an INT8 filter with a FLOAT32 input must be constant (a dynamic-range "
                        "model)", node=label)
    bias = inputs[2] if len(inputs) > 2 else None
    if bias is not None and bias.type_name not in biases:
        _refuse(op, label, "bias", bias, biases, why)
    if out.type_name not in results:
        _refuse(op, label, "output", out, results, why)
    if len(w.shape) not in rule.filter_rank:
        raise KilnError(f"{op.code}: filter '{w.name or w.index}' has shape {list(w.shape)}, not rank "
                        f"{rule.filter_rank[0]}", node=label)
    channels = w.shape[rule.channel_axis] if rule.channel_axis < len(w.shape) else None
    if bias is not None and channels is not None and (len(bias.shape) != 1 or bias.shape[0] != channels):
        raise KilnError(f"{op.code}: bias '{bias.name or bias.index}' has shape {list(bias.shape)}, the "
                        f"filter {list(w.shape)} has {channels} output channels", node=label)
    if x.type_name in QUANTIZED:
        for what, t in (("input", x), ("filter", w), ("output", out)):
            _quantized(op, label, what, t)
        if w.type_name == "INT8" and any(int(z) != 0 for z in w.quant.zero_point):
            raise KilnError(f"{op.code}: filter '{w.name or w.index}' has a zero point other than 0 "
                            "(int8 weights are symmetric)", node=label)
    elif hybrid and w.quant is None:
        raise KilnError(f"{op.code}: INT8 filter '{w.name or w.index}' of a FLOAT32 layer has no scale",
                        node=label)


def _same(op: OperatorInfo, rule: Same, inputs, outputs, label: str) -> None:
    data = [t for k, t in enumerate(inputs) if t is not None and (not rule.data or k in rule.data)
            and k not in rule.index]
    if not data:
        return
    first = data[0]
    if first.type_name not in rule.types:
        _refuse(op, label, "input", first, rule.types)
    for t in data[1:]:
        if t.type_name != first.type_name:
            _refuse(op, label, "input", t, (first.type_name,), f" with a {first.type_name} first input")
    accepted = rule.outputs.get(first.type_name, (first.type_name,)) if rule.outputs else (first.type_name,)
    for t in outputs:
        if t.type_name not in accepted:
            _refuse(op, label, "output", t, accepted, f" with a {first.type_name} input")
    for k in rule.index:
        t = inputs[k] if k < len(inputs) else None
        if t is not None and t.type_name not in INDEX:
            _refuse(op, label, f"input {k}", t, INDEX)
    if rule.quantized:
        for t in data + outputs:
            _quantized(op, label, "input" if t in data else "output", t)
