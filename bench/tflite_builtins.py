"""The builtin operators TFLite Micro registers, with the tensor types its kernels accept.

Source: tensorflow/tflite-micro at commit 90b983c2b3f1480642e040bbd2ddb37b998f3424
(2026-08-20): the builtins are those `tensorflow/lite/micro/micro_mutable_op_resolver.h`
registers (`AddBuiltin(BuiltinOperator_...)`; the Python interpreter of the `tflite-micro`
package, Kiln's int8 reference, registers the same set in
`python/tflite_micro/python_ops_resolver.cc`), the types are those the Prepare/Eval type
switches of `tensorflow/lite/micro/kernels/<op>.cc` accept for the op's main tensor (the data
input; the output for SHAPE and FILL, the variable for the resource ops). Types Kiln has no
C type for in the API (string, complex) and int4 weights are left out.

The conformance driver (`python -m bench.tflite_conformance`) walks this table; a pair
(builtin, type) is one conformance case.
"""

from __future__ import annotations

TFLM_COMMIT = "90b983c2b3f1480642e040bbd2ddb37b998f3424"

F, I8, I16, I32, I64, B, U8 = "float32", "int8", "int16", "int32", "int64", "bool", "uint8"
NONE = "none"  # control flow and resource handles: the type is that of the values they carry

BUILTINS: dict[str, tuple[str, ...]] = {
    "ABS": (F, I8, I16),
    "ADD": (F, I8, I16, I32),
    "ADD_N": (F, I8),
    "ARG_MAX": (F, I8),
    "ARG_MIN": (F, I8),
    "ASSIGN_VARIABLE": (NONE,),
    "AVERAGE_POOL_2D": (F, I8, I16),
    "BATCH_MATMUL": (F, I8, I16),
    "BATCH_TO_SPACE_ND": (F, I8),
    "BROADCAST_ARGS": (I32, I64),
    "BROADCAST_TO": (F, I8, I16, I32, I64, B),
    "CALL_ONCE": (NONE,),
    "CAST": (F, I8, I16, I32, B),
    "CEIL": (F,),
    "CONCATENATION": (F, I8, I16, I32, I64, B),
    "CONV_2D": (F, I8, I16),
    "COS": (F,),
    "CUMSUM": (F, I8),
    "DEPTH_TO_SPACE": (F, I8),
    "DEPTHWISE_CONV_2D": (F, I8, I16),
    "DEQUANTIZE": (I8, I16, U8),
    "DIV": (F, I8, I32),
    "DYNAMIC_UPDATE_SLICE": (F, I8, I16, I32),
    "ELU": (F, I8),
    "EMBEDDING_LOOKUP": (F, I8),
    "EQUAL": (F, I8, I32, I64, B),
    "EXP": (F,),
    "EXPAND_DIMS": (F, I8, I16),
    "FILL": (F, I8, I32),  # Prepare accepts int16 and int64 too, Eval does not
    "FLOOR": (F,),
    "FLOOR_DIV": (F,),
    "FLOOR_MOD": (F,),
    "FULLY_CONNECTED": (F, I8, I16),
    "GATHER": (F, I8),
    "GATHER_ND": (F, I8),
    "GREATER": (F, I8, I16, I32, I64),
    "GREATER_EQUAL": (F, I8, I32, I64),
    "HARD_SWISH": (F, I8),
    "IF": (NONE,),
    "L2_NORMALIZATION": (F, I8),
    "L2_POOL_2D": (F,),
    "LEAKY_RELU": (F, I8, I16),
    "LESS": (F, I8, I32, I64),
    "LESS_EQUAL": (F, I8, I32, I64),
    "LOG": (F,),
    "LOGICAL_AND": (B,),
    "LOGICAL_NOT": (B,),
    "LOGICAL_OR": (B,),
    "LOGISTIC": (F, I8, I16),
    "LOG_SOFTMAX": (F, I8),
    "MAXIMUM": (F, I8, I16, I32, I64),
    "MAX_POOL_2D": (F, I8, I16),
    "MEAN": (F, I8, I16),
    "MINIMUM": (F, I8, I16, I32, I64),
    "MIRROR_PAD": (F, I8),
    "MUL": (F, I8, I16, I32),
    "NEG": (F,),
    "NOT_EQUAL": (F, I8, I32, I64, B),
    "PACK": (F, I8, I16, I32, I64),
    "PAD": (F, I8, I16, I32),
    "PADV2": (F, I8, I16, I32),
    "PRELU": (F, I8, I16),
    "QUANTIZE": (F, I8, I16, U8),
    "READ_VARIABLE": (NONE,),
    "REDUCE_ALL": (B,),
    "REDUCE_MAX": (F, I8),
    "REDUCE_MIN": (F, I8),
    "RELU": (F, I8, I16),
    "RELU6": (F, I8, I16),
    "RESHAPE": (F, I8, I16, I32, I64, B),
    "RESIZE_BILINEAR": (F, I8),
    "RESIZE_NEAREST_NEIGHBOR": (F, I8, I16),
    "REVERSE_V2": (F, I8, I16, I32, I64, B, U8),
    "ROUND": (F,),
    "RSQRT": (F, I8),
    "SELECT_V2": (F, I8, I16),
    "SHAPE": (I32,),
    "SIN": (F,),
    "SLICE": (F, I8, I16, I32, B),
    "SOFTMAX": (F, I8, I16),
    "SPACE_TO_BATCH_ND": (F, I8),
    "SPACE_TO_DEPTH": (F, I8),
    "SPLIT": (F, I8, I16, I32),
    "SPLIT_V": (F, I8, I16, I32),
    "SQRT": (F,),
    "SQUARE": (F,),
    "SQUARED_DIFFERENCE": (F, I8, I16, I32),
    "SQUEEZE": (F, I8, I16, I32, I64, B),
    "STRIDED_SLICE": (F, I8, I16, I32, B),
    "SUB": (F, I8, I16, I32),
    "SUM": (F, I8, I16),
    "SVDF": (F, I8),
    "TANH": (F, I8, I16),
    "TRANSPOSE": (F, I8, I16),
    "TRANSPOSE_CONV": (F, I8, I16),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (F, I8, I16),
    "UNPACK": (F, I8, I16, I32),
    "VAR_HANDLE": (NONE,),
    "WHILE": (NONE,),
    "ZEROS_LIKE": (F, I8, I32, I64),
}

# Builtins that need a Kiln operator or kernel that does not exist yet (the kernel redesign
# of issue 16 adds them), with what is missing. The frontend has no converter for these.
NEEDS_KERNEL: dict[str, str] = {
}


def pairs() -> list[tuple[str, str]]:
    """Every (builtin, type) pair TFLite Micro supports, in table order."""
    return [(op, t) for op, types in BUILTINS.items() for t in types]
