"""In-place reuse: the planners take declared aliases only where they are safe, the validator
accepts exactly those overlaps, and generated code with in-place kernels (depthwise one
channel at a time, elementwise over a dying input) is ASan-clean and bit-exact with the
build without them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.ir import GraphBuilder, Quant, run_graph
from codegen.memory import Alias, Buffer, Plan, PlanError, alias_bound, lower_bound, plan_memory, validate_plan
from codegen.emit.render import render
from codegen.memory.buffers import usable_aliases
from codegen.kernels.inplace import conv_overlap_shift
from codegen.memory.planners import greedy_aliases, place_greedy
from codegen.verify.host import run_generated
from codegen.verify.samples import random_samples
from helpers import build_graph
from inplace_nets import mobilenet_style


@st.composite
def lifetimes_with_aliases(draw, max_buffers=12):
    n = draw(st.integers(1, max_buffers))
    align = draw(st.sampled_from([1, 4, 16]))
    bufs = []
    for i in range(n):
        first = draw(st.integers(0, 10))
        last = draw(st.integers(first, 12))
        bufs.append(Buffer(f"b{i}", draw(st.integers(0, 2000)), first, last, align))
    aliases = []
    for k in range(draw(st.integers(0, 6))):
        o, i = draw(st.sampled_from(bufs)), draw(st.sampled_from(bufs))
        temp = None
        if draw(st.booleans()):
            temp = Buffer(f"tmp{k}", draw(st.integers(1, 300)), o.first, o.first, align)
        aliases.append(Alias(o.name, i.name, temp))  # often unusable: the planner must skip those
    # and a few surely usable ones: an output born where an input dies
    for k, b in enumerate(bufs):
        dying = [c for c in bufs if c.last == b.first and c is not b]
        if dying and draw(st.booleans()):
            inp = draw(st.sampled_from(dying)).name
            if draw(st.booleans()):
                aliases.append(Alias(b.name, inp))  # the same address
            else:  # a partial overlap: the input at least `shift` above the output
                aliases.append(Alias(b.name, inp, shift=draw(st.integers(0, 2500)), exact=False))
    return bufs, aliases


@settings(max_examples=60, deadline=None)
@given(lifetimes_with_aliases())
def test_planners_with_aliases_valid_and_ordered(case):
    bufs, aliases = case
    plans = {p: plan_memory(bufs, p, time_limit=2.0, aliases=aliases) for p in ("cpsat", "greedy", "linear", "auto")}
    usable = {a.pair for a in usable_aliases(bufs, aliases)}
    for plan in plans.values():
        validate_plan(bufs, plan, aliases)
        assert set(plan.aliases) <= usable
        assert plan.proven_bound <= plan.arena_size
    floor = alias_bound(bufs, aliases)
    assert floor <= lower_bound(bufs)
    assert floor <= plans["cpsat"].arena_size <= plans["greedy"].arena_size <= plans["linear"].arena_size
    assert floor <= plans["auto"].arena_size <= plans["greedy"].arena_size
    if plans["cpsat"].status == plans["auto"].status == "OPTIMAL":  # (a loaded machine may stop early)
        assert plans["auto"].arena_size == plans["cpsat"].arena_size
    assert plans["linear"].aliases == ()
    # Without aliases the figures are the no-aliasing ones
    assert plan_memory(bufs, "greedy").arena_size >= lower_bound(bufs)


def _pair():
    a = Buffer("a", 100, 0, 2, 4)
    b = Buffer("b", 100, 2, 4, 4)
    return [a, b], [Alias("b", "a", Buffer("tmp", 8, 2, 2, 4))]


def test_inplace_goes_below_the_no_aliasing_bound():
    bufs, aliases = _pair()
    assert lower_bound(bufs) == 200
    assert alias_bound(bufs, aliases) == 108
    for planner in ("greedy", "cpsat", "auto"):
        plan = plan_memory(bufs, planner, aliases=aliases)
        assert plan.arena_size == 108 and plan.status == "OPTIMAL" and plan.aliases == (("b", "a"),)
        assert plan.offsets["a"] == plan.offsets["b"] and plan.lower_bound == 200
    assert plan_memory(bufs, "linear", aliases=aliases).arena_size == 200


def test_cpsat_takes_an_alias_only_when_it_saves_bytes():
    # b is small and fits beside a anyway: no reason to run an in-place kernel
    bufs = [Buffer("big", 1000, 0, 5, 4), Buffer("a", 100, 0, 2, 4), Buffer("b", 100, 2, 4, 4),
            Buffer("c", 900, 3, 5, 4)]
    plan = plan_memory(bufs, "cpsat", aliases=[Alias("b", "a", Buffer("t", 4, 2, 2, 4))])
    assert plan.arena_size == 2000 and plan.aliases == ()


def test_validator_accepts_only_declared_and_chosen_aliases():
    bufs, aliases = _pair()
    same = {"a": 0, "b": 0, "tmp": 100}
    ok = Plan(same, 108, 200, "x", "OPTIMAL", aliases=(("b", "a"),))
    validate_plan(bufs, ok, aliases)
    with pytest.raises(PlanError, match="live together"):  # chosen-not-recorded overlap
        validate_plan(bufs, Plan(same, 108, 200, "x", "OPTIMAL"), aliases)
    with pytest.raises(PlanError, match="not declared"):
        validate_plan(bufs, ok, [])
    with pytest.raises(PlanError, match="offsets differ"):
        validate_plan(bufs, Plan({"a": 0, "b": 4, "tmp": 104}, 112, 200, "x", "OPTIMAL", aliases=(("b", "a"),)), aliases)
    with pytest.raises(PlanError, match="live together"):  # the temp over the pair
        validate_plan(bufs, Plan({"a": 0, "b": 0, "tmp": 92}, 108, 200, "x", "OPTIMAL", aliases=(("b", "a"),)), aliases)
    with pytest.raises(PlanError, match="no offset"):  # a chosen alias's temp must be placed
        validate_plan(bufs, Plan({"a": 0, "b": 0}, 108, 200, "x", "OPTIMAL", aliases=(("b", "a"),)), aliases)
    late = [bufs[0], Buffer("b", 100, 3, 4, 4)]  # a dies before b is born: not an in-place pair
    with pytest.raises(PlanError, match="dies at step"):
        validate_plan(late, Plan({"a": 0, "b": 0, "tmp": 100}, 108, 200, "x", "OPTIMAL", aliases=(("b", "a"),)), aliases)
    other = bufs + [Buffer("c", 50, 2, 3, 4)]  # a third buffer over the pair: still an error
    with pytest.raises(PlanError, match="live together"):
        validate_plan(other, Plan({"a": 0, "b": 0, "tmp": 100, "c": 52}, 152, 250, "x", "OPTIMAL",
                                  aliases=(("b", "a"),)), aliases)


def _run_all(res, samples):
    return run_generated(res.files, "t", samples, sanitize=True)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_mobilenet_style_in_place_is_asan_clean_and_bit_exact(dtype):
    g = mobilenet_style(dtype)
    inplace = build_graph(g, planner="auto")
    plain = build_graph(g, planner="linear")  # linear never takes an alias: the reference build
    kernel = f"depthwise_conv2d_inplace_{'s8' if dtype == 'int8' else 'f32'}"
    assert kernel in inplace.manifest["kernels"] and kernel not in plain.manifest["kernels"]
    plan = inplace.plan
    assert plan.arena_size < plan.lower_bound and plan.status == "OPTIMAL"
    assert plan.arena_size == plan.alias_bound
    assert {"output": "dw1", "input": "stem"} in inplace.manifest["inplace"]
    md = inplace.files["t.memory.md"]
    assert f"- lower bound with the declared in-place reuse: {plan.alias_bound} B" in md
    assert "dw1 over stem" in md and "| scratch_" in md  # the depthwise temp is in the table
    samples = random_samples(inplace.manifest["inputs"], 3, seed=4)
    got, want = _run_all(inplace, samples), _run_all(plain, samples)
    for s, a, b in zip(samples, got, want):
        ref = run_graph(g, s)
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
            if dtype == "int8":
                np.testing.assert_array_equal(a[name], ref[name], err_msg=name)


# (input NHWC, kernel, attributes): strides, asymmetric pads, dilation, batches
DW_CASES = [((1, 7, 7, 4), (3, 3), {"pads": (1, 1, 1, 1)}),
            ((1, 10, 9, 3), (3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1), "activation": "relu6"}),
            ((2, 9, 8, 5), (3, 2), {"dilations": (2, 3), "pads": (2, 3, 2, 3), "activation": "relu"}),
            ((1, 6, 5, 4), (5, 3), {"strides": (1, 2), "pads": (2, 0, 3, 1)})]


def _dw_graph(dtype: str):
    """Per case: x -> Clip -> DepthwiseConv2D -> Clip -> output, all in one graph (the Clips
    put the depthwise input and output in the arena)."""
    rng = np.random.default_rng(3)
    b = GraphBuilder(f"dw_{dtype}")
    s8 = dtype == "int8"
    outs = []
    for k, (shape, (kh, kw), attrs) in enumerate(DW_CASES):
        q = (lambda s, zp: Quant.of(s, zp)) if s8 else (lambda s, zp: None)
        x = b.input(f"x{k}", dtype, shape, q(0.02, (-128, 7)[k % 2]))
        y = b.node("Clip", [x], name=f"clip{k}", quant=q(0.02, (-128, 7)[k % 2]), min=-1.5, max=1.5)
        c = shape[3]
        if s8:
            ws = rng.uniform(0.002, 0.01, c)
            w = b.const(f"w{k}", rng.integers(-127, 128, (1, kh, kw, c), dtype=np.int8), quant=Quant.of(ws, 0, 3))
            bias = b.const(f"b{k}", rng.integers(-500, 500, c).astype(np.int32), quant=Quant.of(0.02 * ws, 0, 0))
        else:
            w = b.const(f"w{k}", rng.standard_normal((1, kh, kw, c)).astype(np.float32))
            bias = b.const(f"b{k}", rng.standard_normal(c).astype(np.float32))
        y = b.node("DepthwiseConv2D", [y, w, bias], name=f"dw{k}", quant=q(0.03, 2), **attrs)
        outs.append(b.node("Clip", [y], name=f"out{k}", quant=q(0.03, 2), min=-3.0, max=3.0))
    for o in outs:
        b.output(o)
    return b.build()


def _forced(g):
    """The build without in-place reuse, and the same program with every usable alias taken
    (the planners only take those that lower the peak): (plain build, forced files, chosen)."""
    # Fusion off: the planner would merge the residual Add with the Clip after it (one buffer
    # less), and this test is about every kind of in-place reuse of unfused kernels.
    plain = build_graph(g, planner="linear", fusion="off")
    chosen = greedy_aliases(plain.buffers, plain.aliases)
    offsets = place_greedy(plain.buffers, chosen)
    temps = [a.temp for a in chosen if a.temp is not None]
    arena = max(offsets[b.name] + b.size for b in plain.buffers + temps)
    plan = Plan(offsets, arena, plain.plan.lower_bound, "forced", "FEASIBLE", aliases=tuple(a.pair for a in chosen))
    validate_plan(plain.buffers, plan, plain.aliases)
    files = {**plain.files, **render(plain.lowered, plan, name="t", model_file="t.test", model_sha256="0" * 64)}
    return plain, files, chosen


def _assert_same_outputs(plain, files, seed=9):
    samples = random_samples(plain.manifest["inputs"], 2, seed=seed)
    got = run_generated(files, "t", samples, sanitize=True)
    for a, b in zip(got, _run_all(plain, samples)):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_every_alias_forced_on_the_mobilenet_style_net(dtype):
    """Elementwise (Add, Clip, Sigmoid), depthwise and conv reuse all at once."""
    plain, files, chosen = _forced(mobilenet_style(dtype))
    assert {a.out for a in chosen} == {"dw1", "pw1", "dw2", "res", "clip", "dw4", "sig"}
    assert not any(a.exact for a in chosen if a.out == "pw1")  # the conv: partial overlap
    _assert_same_outputs(plain, files)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_depthwise_inplace_kernel_bit_exact_with_the_normal_one(dtype):
    """Every eligible depthwise call forced in place, against the normal kernel."""
    plain, files, chosen = _forced(_dw_graph(dtype))
    # case 2 (dilated, 9x11 output from a 9x8 input) does not fit in its input
    assert sorted(a.out for a in chosen if a.out.startswith("dw")) == ["dw0", "dw1", "dw3"]
    assert files["t.c"].count(f"kiln_depthwise_conv2d_inplace_{'s8' if dtype == 'int8' else 'f32'}(&") == 3
    _assert_same_outputs(plain, files)


# (input NHWC, weights OHWI, attributes)
CONV_CASES = [((1, 6, 7, 4), (8, 3, 3, 4), {"pads": (1, 1, 1, 1)}),
              ((1, 9, 8, 3), (5, 3, 3, 3), {"strides": (2, 2), "pads": (0, 0, 1, 1)}),
              ((1, 5, 5, 4), (12, 1, 1, 4), {}),
              ((2, 8, 7, 6), (2, 3, 2, 6), {"dilations": (2, 1), "pads": (2, 0, 1, 1), "activation": "relu"})]


def _conv_graph(dtype: str):
    """Per case: x -> Clip -> Conv2D -> Clip -> output."""
    rng = np.random.default_rng(5)
    b = GraphBuilder(f"conv_{dtype}")
    s8 = dtype == "int8"
    q = (lambda s, zp: Quant.of(s, zp)) if s8 else (lambda s, zp: None)
    for k, (shape, wshape, attrs) in enumerate(CONV_CASES):
        x = b.input(f"x{k}", dtype, shape, q(0.02, -3))
        y = b.node("Clip", [x], name=f"clip{k}", quant=q(0.02, -3), min=-1.5, max=1.5)
        if s8:
            ws = rng.uniform(0.001, 0.004, wshape[0])
            w = b.const(f"w{k}", rng.integers(-127, 128, wshape, dtype=np.int8), quant=Quant.of(ws, 0, 0))
            bias = b.const(f"b{k}", rng.integers(-500, 500, wshape[0]).astype(np.int32), quant=Quant.of(0.02 * ws, 0, 0))
        else:
            w = b.const(f"w{k}", rng.standard_normal(wshape).astype(np.float32))
            bias = b.const(f"b{k}", rng.standard_normal(wshape[0]).astype(np.float32))
        y = b.node("Conv2D", [y, w, bias], name=f"conv{k}", quant=q(0.05, 1), **attrs)
        b.output(b.node("Clip", [y], name=f"out{k}", quant=q(0.05, 1), min=-3.0, max=3.0))
    return b.build()


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_conv_partial_overlap_bit_exact(dtype):
    plain, files, chosen = _forced(_conv_graph(dtype))
    convs = {a.out: a for a in chosen if a.out.startswith("conv")}
    assert sorted(convs) == [f"conv{k}" for k in range(len(CONV_CASES))]
    # each output really overlaps its input: below it by less than its own size
    offsets = _forced_offsets(plain, chosen)
    for a in convs.values():
        size = next(b.size for b in plain.buffers if b.name == a.out)
        assert 0 < offsets[a.inp] - offsets[a.out] < size
    _assert_same_outputs(plain, files)


def _forced_offsets(plain, chosen):
    return place_greedy(plain.buffers, chosen)


def _simulate_conv(p: dict, shift: int) -> bool:
    """Run the reference conv kernel's read/write order on byte addresses (output at 0,
    input at `shift`, 1-byte elements): True when no read sees an overwritten input byte."""
    clobbered = np.zeros(shift + p["batches"] * p["in_h"] * p["in_w"] * p["in_c"] + 1, bool)
    q = 0
    for n in range(p["batches"]):
        for oy in range(p["out_h"]):
            for ox in range(p["out_w"]):
                lo = q * p["out_c"]
                # output pixel q's channels are written while q's window is still being read
                clobbered[max(lo - shift, 0) + shift:lo + p["out_c"]] = True
                for ky in range(p["k_h"]):
                    iy = oy * p["stride_h"] - p["pad_top"] + ky * p["dilation_h"]
                    for kx in range(p["k_w"]):
                        ix = ox * p["stride_w"] - p["pad_left"] + kx * p["dilation_w"]
                        if 0 <= iy < p["in_h"] and 0 <= ix < p["in_w"]:
                            a = shift + ((n * p["in_h"] + iy) * p["in_w"] + ix) * p["in_c"]
                            if clobbered[a:a + p["in_c"]].any():
                                return False
                q += 1
    return True


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2), st.integers(1, 7), st.integers(1, 7), st.integers(1, 5), st.integers(1, 6),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(1, 2),
       st.integers(0, 2), st.integers(0, 2))
def test_conv_overlap_shift_is_safe_and_tight(batches, in_h, in_w, in_c, out_c, k_h, k_w, sh, sw, dh, pt, pl):
    out_h = (in_h + 2 * pt - dh * (k_h - 1) - 1) // sh + 1
    out_w = (in_w + 2 * pl - (k_w - 1) - 1) // sw + 1
    if out_h < 1 or out_w < 1:
        return
    p = dict(batches=batches, in_h=in_h, in_w=in_w, in_c=in_c, out_c=out_c, k_h=k_h, k_w=k_w, stride_h=sh,
             stride_w=sw, dilation_h=dh, dilation_w=1, pad_top=pt, pad_left=pl, out_h=out_h, out_w=out_w)
    shift = conv_overlap_shift(p, 1)
    assert _simulate_conv(p, shift)
    if shift > 0:
        assert not _simulate_conv(p, shift - 1)


def test_conv_overlap_shift_of_a_pointwise_conv():
    p = dict(batches=1, in_h=48, in_w=48, in_c=8, out_c=16, k_h=1, k_w=1, stride_h=1, stride_w=1,
             dilation_h=1, dilation_w=1, pad_top=0, pad_left=0, out_h=48, out_w=48)
    # VWW's widening pointwise conv: footprint 36,864 + 8 instead of 18,432 + 36,864
    assert conv_overlap_shift(p, 1) == 48 * 48 * 16 - 48 * 48 * 8 + 8
    assert conv_overlap_shift({**p, "in_c": 16, "out_c": 8}, 1) == 8  # narrowing: one output pixel
