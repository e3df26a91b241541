"""Attention (opsets 23-25) and LinearAttention as chains of Kiln ops, ONNX's reference
semantics. Attention:

    Q, K, V [B, heads, S, D] (3-D inputs are split into heads and transposed first)
    present_key / present_value = Concat(past, K / V) along the sequence
    logits = (Q * sqrt(scale)) @ (K^T * sqrt(scale)), softcap: tanh(logits / c) * c
    bias   = attn_mask (bool: 0 / -inf, padded with -inf to the key length)
             + causal / sliding-window / key-padding terms (computed at compile time)
    probs  = Softmax(logits + bias), rows whose bias is all -inf set to 0
    Y      = probs @ V (grouped-query heads repeat each K/V head), back to 3-D if needed

The optional fourth output is the logits (mode 0, 1), logits + bias (2) or probs (3).
`nonpad_kv_seqlen` must be a constant; softmax_precision is ignored (float32 throughout).
"""

from __future__ import annotations

import numpy as np

from codegen.frontends.onnx.context import ConvertContext, converter
from codegen.frontends.onnx.ops_flex_attention import repeat_kv_heads
from codegen.frontends.onnx.reader import OnnxNode


def _heads(ctx: ConvertContext, node: OnnxNode, name: str, heads: int, role: str) -> str:
    """A 3-D [B, S, heads * D] input as [B, heads, S, D]; 4-D inputs pass through."""
    shape = ctx.shape(name)
    x = ctx.kiln(name)
    if len(shape) == 4:
        return x
    b, s, hidden = shape
    if not heads or hidden % heads:
        raise node.error(f"hidden size {hidden} of '{name}' does not split into {heads} heads")
    x = ctx.add(node, "Reshape", [x], role=f"{role}_split", shape=(b, s, heads, hidden // heads))
    return ctx.add(node, "Transpose", [x], role=f"{role}_heads", perm=(0, 2, 1, 3))


def static_bias(q_len: int, kv_len: int, causal: bool, left: int, right: int, past: int | None,
                nonpad: np.ndarray | None) -> np.ndarray | None:
    """The additive causal / window / key-padding bias ([q, kv] or [B, 1, q, kv]), or None."""
    i = np.arange(q_len).reshape(-1, 1)
    j = np.arange(kv_len).reshape(1, -1)
    if past is not None:
        offset = np.array(past)
    elif nonpad is not None:
        offset = nonpad.reshape(-1, 1, 1) - q_len
    else:
        offset = np.array(0)
    allowed = np.ones(np.broadcast_shapes(offset.shape, (q_len, kv_len)), bool)
    if causal:
        allowed &= j <= i + offset
    diff = i + offset - j
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    if nonpad is not None:
        allowed = allowed & (j < nonpad.reshape(-1, 1, 1))
    if allowed.all():
        return None
    bias = np.where(allowed, np.float32(0), np.float32(-np.inf))
    return bias.reshape(bias.shape[0], 1, q_len, kv_len) if bias.ndim == 3 else bias


def _mask_bias(ctx: ConvertContext, node: OnnxNode, kv_len: int) -> str | None:
    """attn_mask as an additive float bias padded to the key length (bool: 0 / -inf)."""
    name = node.input(3)
    if not name:
        return None
    shape = ctx.shape(name)
    m = ctx.kiln(name)
    if ctx.dtype(name) == "bool":
        m = ctx.add(node, "Where", [m, ctx.weight(node, "zero", np.array(0.0, np.float32)),
                                    ctx.weight(node, "minus_inf", np.array(-np.inf, np.float32))], role="mask_bias")
    elif ctx.dtype(name) != "float32":
        raise node.error(f"attn_mask of {ctx.dtype(name)} is not supported (bool or float32)")
    if shape[-1] < kv_len:
        pads = [0] * (2 * len(shape))
        pads[2 * len(shape) - 1] = kv_len - shape[-1]
        m = ctx.add(node, "Pad", [m], role="mask_pad", pads=tuple(pads), value=float("-inf"))
    return m


@converter("Attention")
def convert_attention(ctx, node):
    q_name, k_name, v_name = node.input(0), node.input(1), node.input(2)
    rank = len(ctx.shape(q_name))
    if rank not in (3, 4):
        raise node.error(f"Q must be 3-D or 4-D, got {list(ctx.shape(q_name))}")
    q_heads, kv_heads = int(node.attr("q_num_heads", 0)), int(node.attr("kv_num_heads", 0))
    q = _heads(ctx, node, q_name, q_heads, "q")
    k = _heads(ctx, node, k_name, kv_heads, "k")
    v = _heads(ctx, node, v_name, kv_heads, "v")
    g = ctx.b.g.values
    batch, hq, q_len, d = g[q].shape
    scale = node.attr("scale")
    scale = 1 / np.sqrt(d) if scale is None else float(scale)
    root = ctx.weight(node, "sqrt_scale", np.array(np.sqrt(scale), np.float32))
    past = None
    if node.input(4) or node.input(5):
        if not (node.input(4) and node.input(5)):
            raise node.error("past_key and past_value must be given together")
        past = ctx.shape(node.input(4))[2]
        k = ctx.add(node, "Concat", [ctx.kiln(node.input(4)), k], role="present_key", axis=2,
                    out=node.outputs[1] if len(node.outputs) > 1 and node.outputs[1] else None)
        v = ctx.add(node, "Concat", [ctx.kiln(node.input(5)), v], role="present_value", axis=2,
                    out=node.outputs[2] if len(node.outputs) > 2 and node.outputs[2] else None)
    else:
        for index, value in ((1, k), (2, v)):
            if len(node.outputs) > index and node.outputs[index]:
                ctx.add(node, "Reshape", [value], role=f"present{index}", out=node.outputs[index],
                        shape=g[value].shape)
    kv_len = g[k].shape[2]
    k, v = repeat_kv_heads(ctx, node, k, v, hq)
    kt = ctx.add(node, "Mul", [ctx.add(node, "Transpose", [k], role="k_t", perm=(0, 1, 3, 2)), root], role="k_scaled")
    logits = ctx.add(node, "MatMul", [ctx.add(node, "Mul", [q, root], role="q_scaled"), kt], role="logits")
    softcap = float(node.attr("softcap", 0.0))
    if softcap > 0:
        c = ctx.weight(node, "softcap", np.array(softcap, np.float32))
        t = ctx.add(node, "Tanh", [ctx.add(node, "Div", [logits, c], role="softcap_in")], role="softcap_tanh")
        logits = ctx.add(node, "Mul", [t, c], role="softcapped")
    nonpad = ctx.const(node.input(6)) if node.input(6) else None
    if node.input(6) and nonpad is None:
        raise node.error("nonpad_kv_seqlen (input 6) must be a constant")
    const = static_bias(q_len, kv_len, bool(node.attr("is_causal", 0)), int(node.attr("left_window_size", -1)),
                        int(node.attr("right_window_size", -1)), past,
                        None if nonpad is None else np.asarray(nonpad, np.int64))
    bias = _mask_bias(ctx, node, kv_len)
    if const is not None:
        cb = ctx.weight(node, "static_bias", const)
        bias = cb if bias is None else ctx.add(node, "Add", [bias, cb], role="bias")
    scores = ctx.add(node, "Add", [logits, bias], role="scores") if bias is not None else logits
    probs = ctx.add(node, "Softmax", [scores], role="softmax", axis=-1)
    if bias is not None and (const is None or np.isneginf(const.max(axis=-1)).any() or node.input(3)):
        top = ctx.add(node, "ReduceMax", [bias], role="bias_max", axes=(-1,), keepdims=True)
        dead = ctx.add(node, "Equal", [top, ctx.weight(node, "neg_inf", np.array(-np.inf, np.float32))],
                       role="masked_rows")
        probs = ctx.add(node, "Where", [dead, ctx.weight(node, "zero_prob", np.array(0.0, np.float32)), probs],
                        role="probs")
    if len(node.outputs) > 3 and node.outputs[3]:
        mode = int(node.attr("qk_matmul_output_mode", 0))
        chosen = {2: scores, 3: probs}.get(mode, logits)
        ctx.add(node, "Reshape", [chosen], role="qk_out", out=node.outputs[3], shape=g[chosen].shape)
    y = ctx.add(node, "MatMul", [probs, v], role="y4" if rank == 3 else "", out=None if rank == 3 else node.outputs[0])
    if rank == 3:
        t = ctx.add(node, "Transpose", [y], role="y_seq", perm=(0, 2, 1, 3))
        ctx.add(node, "Reshape", [t], out=node.outputs[0], shape=(batch, q_len, hq * g[v].shape[3]))


def _split_heads(ctx: ConvertContext, node: OnnxNode, name: str, heads: int, role: str) -> str:
    """[B, T, heads * d] (or [B, T, heads] for per-head scalars) as [B, heads, T, d]."""
    b, t, hidden = ctx.shape(name)
    x = ctx.add(node, "Reshape", [ctx.kiln(name)], role=f"{role}_split", shape=(b, t, heads, hidden // heads))
    return ctx.add(node, "Transpose", [x], role=f"{role}_heads", perm=(0, 2, 1, 3))


@converter("LinearAttention")
def convert_linear_attention(ctx, node):
    """The recurrence of ONNX's reference unrolled over the (static) sequence length:

        state = state * exp(decay_t)                              (gated rules)
        v_t   = beta_t * (v_t - k_t @ state)                       (delta rules)
        state = state + k_t^T @ v_t
        out_t = scale * q_t @ state (key/value heads repeated for grouped queries)
    """
    rule = node.attr("update_rule", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise node.error(f"update_rule '{rule}' is not linear, gated, delta or gated_delta")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    hq, hkv = int(node.attr("q_num_heads", 0)), int(node.attr("kv_num_heads", 0))
    if not hq or not hkv or hq % hkv:
        raise node.error(f"q_num_heads {hq} must be a positive multiple of kv_num_heads {hkv}")
    b, t, _ = ctx.shape(node.input(0))
    q = _split_heads(ctx, node, node.input(0), hq, "q")
    k = _split_heads(ctx, node, node.input(1), hkv, "k")
    v = _split_heads(ctx, node, node.input(2), hkv, "v")
    g = ctx.b.g.values
    dk, dv = g[k].shape[3], g[v].shape[3]
    scale = float(node.attr("scale", 0.0)) or 1.0 / np.sqrt(dk)
    if node.input(3):
        state = ctx.kiln(node.input(3))
    else:
        state = ctx.weight(node, "state0", np.zeros((b, hkv, dk, dv), np.float32))
    decay = beta = None
    if gating:
        if not node.input(4):
            raise node.error(f"update_rule '{rule}' needs decay (input 4)")
        decay = ctx.add(node, "Exp", [_split_heads(ctx, node, node.input(4), hkv, "decay")], role="decay_exp")
    if delta:
        if not node.input(5):
            raise node.error(f"update_rule '{rule}' needs beta (input 5)")
        beta = _split_heads(ctx, node, node.input(5), ctx.shape(node.input(5))[2], "beta")
    repeat = ctx.weight(node, "head_index", np.repeat(np.arange(hkv, dtype=np.int64), hq // hkv)) if hq != hkv else None
    scale_c = ctx.weight(node, "scale", np.array(scale, np.float32))

    def step_of(x: str, i: int, role: str) -> str:
        shape = g[x].shape
        return ctx.add(node, "Slice", [x], role=f"{role}{i}", starts=(0, 0, i, 0),
                       ends=(shape[0], shape[1], i + 1, shape[3]), steps=(1, 1, 1, 1))

    outs = []
    for i in range(t):
        q_t, k_t, v_t = step_of(q, i, "q_t"), step_of(k, i, "k_t"), step_of(v, i, "v_t")
        k_col = ctx.add(node, "Reshape", [k_t], role=f"k_col{i}", shape=(b, hkv, dk, 1))
        if gating:
            d_t = step_of(decay, i, "decay_t")
            d_col = ctx.add(node, "Reshape", [d_t], role=f"decay_col{i}", shape=(b, hkv, g[d_t].shape[3], 1))
            state = ctx.add(node, "Mul", [state, d_col], role=f"decayed{i}")
        if delta:
            retrieved = ctx.add(node, "MatMul", [k_t, state], role=f"retrieved{i}")
            v_t = ctx.add(node, "Mul", [step_of(beta, i, "beta_t"),
                                        ctx.add(node, "Sub", [v_t, retrieved], role=f"residual{i}")], role=f"v_delta{i}")
        state = ctx.add(node, "Add", [state, ctx.add(node, "MatMul", [k_col, v_t], role=f"outer{i}")],
                        role=f"state{i}", out=node.outputs[1] if i == t - 1 and len(node.outputs) > 1 and node.outputs[1]
                        else None)
        read = ctx.add(node, "Gather", [state, repeat], role=f"groups{i}", axis=1) if repeat else state
        outs.append(ctx.add(node, "Mul", [ctx.add(node, "MatMul", [q_t, read], role=f"read{i}"), scale_c],
                            role=f"out{i}"))
    y = ctx.add(node, "Concat", outs, role="out_seq", axis=2) if len(outs) > 1 else outs[0]
    y = ctx.add(node, "Transpose", [y], role="out_heads", perm=(0, 2, 1, 3))
    ctx.add(node, "Reshape", [y], out=node.outputs[0], shape=(b, t, hq * dv))
