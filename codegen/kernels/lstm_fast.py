"""What the fast variants of TFLite Micro's int8 LSTM share (kernel lstm_s8 of cortex_m_dsp,
mve, neon, neon_dotprod; reference: templates/kernels/reference/lstm_quantized.c.j2): their
parameter block and its constants.

Only the gates' sums change: each gate's x and h fully connected layers run four rows at a
time over weights repacked for the variant's dot product, per gate (its rows padded to the
variant's block, so a block never spans two gates). The input and hidden offsets are folded
into the sums' starting values at compile time (bias + input offset x the row sums of w;
hidden offset x the row sums of r), as TFLM's Prepare folds them into its effective biases:
the same integers, so every sum, the int16 rescaling of each, the gates and the cell update
(templates/kernels/reference/_lstm_cell.c.j2, shared with the reference) stay TFLM's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from codegen.kernels import repack
from codegen.kernels.op_consts import drop_unread
from codegen.kernels.spec import Prepared
from codegen.ops.request import ConstArray, KernelRequest, ScratchArg


@dataclass(frozen=True)
class LstmS8Fast:
    seq: int
    batch: int
    input: int
    hidden: int
    in_pad: int  # input rounded up to the variant's group of k: the x column's length
    hid_pad: int  # hidden likewise: the h column's length
    rows: int  # hidden rounded up to the variant's block of rows: rows per gate of the packed weights
    w: ConstArray  # per gate, its [hidden][input] rows packed for the variant
    r: ConstArray  # per gate, its [hidden][hidden] rows packed likewise
    bias: ConstArray  # [4][rows] int32: bias + input offset x row sums of w
    rbias: ConstArray  # [4][rows] int32: hidden offset x row sums of r
    sigmoid_table: ConstArray
    steps: ConstArray
    hidden_zero_point: int
    input_multiplier: tuple[int, ...]
    input_shift: tuple[int, ...]
    recurrent_multiplier: tuple[int, ...]
    recurrent_shift: tuple[int, ...]
    forget_multiplier: int
    forget_shift: int
    update_multiplier: int
    update_shift: int
    hidden_multiplier: int
    hidden_shift: int
    tanh_multiplier: int
    tanh_right_shift: int
    cell_clip: int


def folded_sums(w: np.ndarray, bias: np.ndarray, offset: int, rows: int) -> np.ndarray:
    """[4][rows] int32: bias + offset x the row sums of each gate's weights w [4][hidden][k],
    rows past hidden zero."""
    start = np.asarray(bias, np.int64) + offset * w.astype(np.int64).sum(axis=2)
    return np.pad(start, ((0, 0), (0, rows - w.shape[1]))).astype(np.int32)


def lstm_prepared(spec, request: KernelRequest, ctx, pack: Callable[[np.ndarray], np.ndarray], dtype: str,
                  k_multiple: int, row_block: int, scratch_bytes: Callable[[int, int, int], int],
                  **fields) -> Prepared:
    """The call of a fast lstm_s8: each gate's w and r rows packed by `pack` (as `dtype`) one
    gate after the other, the folded starting sums, the x and h columns `k_multiple` long,
    `row_block` rows per block, and scratch_bytes(hidden, in_pad, hid_pad) of scratch (the
    gates, then the variant's columns). The reference's weight and bias arrays, which this
    kernel does not read, leave the flash."""
    params = dict(request.params)
    node = request.node
    inp, hidden = params["input"], params["hidden"]
    w = np.asarray(params.pop("w").data).reshape(4, hidden, inp)
    r = np.asarray(params.pop("r").data).reshape(4, hidden, hidden)
    bias = np.asarray(params.pop("bias").data).reshape(4, hidden)
    for value, old in zip(node.inputs[1:4], (request.params["w"], request.params["r"], request.params["bias"])):
        drop_unread(ctx, node, value, old)
    rows = repack.round_up(hidden, row_block)
    in_offset, hid_offset = params.pop("input_offset"), params.pop("hidden_offset")
    in_pad, hid_pad = repack.round_up(inp, k_multiple), repack.round_up(hidden, k_multiple)
    block = spec.Params(
        **params, in_pad=in_pad, hid_pad=hid_pad, rows=rows,
        w=ctx.constant(node, "w", np.concatenate([pack(w[k]) for k in range(4)]), dtype),
        r=ctx.constant(node, "r", np.concatenate([pack(r[k]) for k in range(4)]), dtype),
        bias=ctx.constant(node, "bias", folded_sums(w, bias, in_offset, rows), "int32"),
        rbias=ctx.constant(node, "rbias", folded_sums(r, np.zeros_like(bias), hid_offset, rows), "int32"),
        **fields)
    args = tuple(a for a in request.args if not isinstance(a, ScratchArg))
    headers = tuple(dict.fromkeys(tuple(request.headers) + spec.headers))
    return Prepared(block, args + (ScratchArg(scratch_bytes(hidden, in_pad, hid_pad)),), headers)

