"""The hot-loop throughput estimate of `kiln profile` on Cortex-A (codegen/verify/hot_loops.py):
the listing split into functions, the innermost loops found by their backward branches, and
llvm-mca's cycles for a real kernel's loop as the target's GCC emits it."""

from __future__ import annotations

import pytest

from codegen.targets import load_target
from codegen.verify import hot_loops, qemu_user
from cortex_a_testing import build
from ops.linear_testing import int8_layer

LISTING = """\
\t.text
kiln_k:
.LFB1:
\tmov\tx2, 0
.L3:
\tadd\tx2, x2, 1
.L4:
\tld1\t{v0.16b}, [x0], 16
\tfmla\tv1.4s, v0.4s, v2.4s
\tsubs\tx1, x1, 1
\tbne\t.L4
\tcmp\tx2, 9
\tb.lt\t.L3
\tret
\t.size\tkiln_k, .-kiln_k
kiln_k_helper:
\tret
\t.size\tkiln_k_helper, .-kiln_k_helper
"""


def test_functions_and_their_innermost_loops():
    funcs = hot_loops.functions(LISTING)
    assert set(funcs) == {"kiln_k", "kiln_k_helper"}
    loops = hot_loops.innermost_loops(funcs["kiln_k"])
    assert loops == [["\tld1\t{v0.16b}, [x0], 16", "\tfmla\tv1.4s, v0.4s, v2.4s", "\tsubs\tx1, x1, 1",
                      "\tbne\t.L4"]]  # the outer loop (.L3) holds it, so only the inner one
    assert hot_loops.hottest(loops) == loops[0]
    assert hot_loops.innermost_loops(funcs["kiln_k_helper"]) == []


def test_core_comes_from_the_target_flags():
    assert hot_loops.core(load_target("cortex-a72")) == "cortex-a72"


@pytest.mark.skipif(not hot_loops.available(), reason="llvm-mca not installed")
@pytest.mark.parametrize("target", ["cortex-a53", "cortex-a72", "cortex-a76"])
def test_a_kernel_loop_gets_cycles_per_iteration(cortex_a, target, tmp_path):
    # a fully connected layer: its kernel stays a function (NEON convolutions are inlined at
    # their calls, one specialised copy per layer, so their loops sit in the model's function)
    res = build(int8_layer("FullyConnected", (4, 64), (16, 64), seed=1), target)
    for fname, text in res.files.items():
        (tmp_path / fname).write_text(text)
    loops = hot_loops.kernel_hot_loops(tmp_path / "t.c", load_target(target), ["fully_connected_s8"], tmp_path)
    loop = loops["fully_connected_s8"]
    assert loop.function.startswith("kiln_fully_connected_s8") and loop.instructions > 8
    assert 0.2 < loop.ipc <= 4.0  # no core here issues more than four instructions per cycle


@pytest.mark.skipif(not hot_loops.available(), reason="llvm-mca not installed")
def test_a_kernel_inlined_at_its_call_gets_its_loop_from_the_call_stretch(cortex_a, tmp_path):
    """Before: the NEON convolution, inlined at its call, had only its im2col helper's loop."""
    target = load_target("cortex-a72")
    res = build(int8_layer("Conv2D", (1, 8, 8, 16), (16, 3, 3, 16), seed=3, pads=(1, 1, 1, 1)), "cortex-a72")
    for fname, text in res.files.items():
        (tmp_path / fname).write_text(text)
    loops = hot_loops.kernel_hot_loops(tmp_path / "t.c", target, ["conv2d_s8"], tmp_path, qemu_user.PROFILE_FLAGS)
    loop = loops["conv2d_s8"]
    assert loop.function == "inlined at call 0" and loop.instructions > 8 and 0.2 < loop.ipc <= 4.0
    # without the markers the call cannot be found in the model's function
    bare = hot_loops.kernel_hot_loops(tmp_path / "t.c", target, ["conv2d_s8"], tmp_path)
    assert "conv2d_s8" not in bare or bare["conv2d_s8"].function != "inlined at call 0"


def test_call_stretches_split_the_model_function_at_each_marker():
    funcs = {"m_run": ["\tmov\tx0, 1", "\thint #127", "\tmov\tx0, 2", "\tmov\tx1, 3", "\thint #127"]}
    assert hot_loops.call_stretches(funcs, "hint #127", 2) == [["\tmov\tx0, 1"], ["\tmov\tx0, 2", "\tmov\tx1, 3"]]
    assert hot_loops.call_stretches(funcs, "hint #127", 3) is None


ASM_LISTING = """\
kiln_tile:
#APP
\t1:
\tldp\tx4, x5, [x2], #16
\tcbz\tx3, 3f
\t2:
\tldr\tq0, [x4], #16
\tfmla\tv16.4s, v4.4s, v0.s[0]
\tsubs\tx3, x3, #1
\tb.ne\t2b
\t3:
\tsubs\tx0, x0, #1
\tb.ne\t1b
#NO_APP
\tret
\t.size\tkiln_tile, .-kiln_tile
"""


def test_inline_assembly_loops_are_found_by_their_numeric_labels():
    loops = hot_loops.innermost_loops(hot_loops.functions(ASM_LISTING)["kiln_tile"])
    assert loops == [["\tldr\tq0, [x4], #16", "\tfmla\tv16.4s, v4.4s, v0.s[0]", "\tsubs\tx3, x3, #1",
                      "\tb.ne\t2b"]]  # `3f` goes forward: no loop; `1b` holds the inner one
