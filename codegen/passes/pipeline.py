"""The optimisation pipeline: a plain list of passes, run in order, and the pass manager.

Every pass is a pure Graph -> Graph function (see each module's docstring for what it needs
and keeps). `run_pipeline` can verify the graph after every pass (tests do) and write the IR
text before and after each pass into a folder (`kiln build --dump-ir DIR`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from codegen.errors import KilnError
from codegen.ir.graph import Graph
from codegen.ir.printer import format_graph
from codegen.ir.verifier import verify_graph
from codegen.passes.schedule_for_memory import schedule_for_memory
from codegen.passes.collapse_reshapes import collapse_reshapes
from codegen.passes.cse import eliminate_common_subexpressions
from codegen.passes.dce import eliminate_dead_code
from codegen.passes.fold_affine import fold_channel_affine
from codegen.passes.fold_batchnorm import fold_batchnorm
from codegen.passes.fold_constants import fold_constants
from codegen.passes.fold_pad import fold_pad
from codegen.passes.fold_qdq import fold_qdq
from codegen.passes.fuse_activation import fuse_activations
from codegen.passes.layout import sink_transposes
from codegen.passes.matmul_to_fc import matmul_to_fully_connected

Pass = Callable[[Graph], Graph]

PIPELINE: list[tuple[str, Pass]] = [
    # Compute every node whose inputs are all constants (weights computed in the graph).
    ("fold_constants", fold_constants),
    # Drop no-op nodes and whatever no output depends on.
    ("dce", eliminate_dead_code),
    # One node per distinct computation (e.g. the frontend's repeated input transposes).
    ("cse", eliminate_common_subexpressions),
    # Channels-last: move the ONNX frontend's NCHW<->NHWC transposes down until they cancel.
    ("layout", sink_transposes),
    # Transposes moved onto the same value are now duplicates.
    ("cse_after_layout", eliminate_common_subexpressions),
    # Reshape chains (Flatten, Squeeze, ... and transposes that became reshapes) into one.
    ("collapse_reshapes", collapse_reshapes),
    # MatMul by a constant matrix -> FullyConnected, so bias and activation can fold into it.
    ("matmul_to_fc", matmul_to_fully_connected),
    # BatchNorm after a float conv / FC -> that op's weights and bias.
    ("fold_batchnorm", fold_batchnorm),
    # Mul / Add / Sub by per-channel constants after a float conv / FC -> its weights and bias.
    ("fold_affine", fold_channel_affine),
    # Dequantize -> float op -> Quantize (ONNX QDQ models) -> the int8 op.
    ("fold_qdq", fold_qdq),
    # Reshapes that fold_qdq moved next to each other.
    ("collapse_reshapes_after_qdq", collapse_reshapes),
    # Pad of H/W -> the padding of the conv / max pool that reads it (where exact).
    ("fold_pad", fold_pad),
    # Clip / Relu / Relu6 -> the fused `activation` of the op before it.
    ("fuse_activation", fuse_activations),
    # Last: choose the execution order of branching graphs that needs the least RAM (exact for
    # small graphs, greedy past a bound on the search). Only reorders nodes; chains keep theirs.
    ("schedule", schedule_for_memory),
]


def pipeline_for(numerics: str) -> list[tuple[str, Pass]]:
    """PIPELINE with its QDQ fold in the build's int8 numerics (onnxruntime's folds a Softmax at
    any output quantization, see codegen/passes/fold_qdq.py)."""
    if numerics == "tflite":
        return PIPELINE
    return [(name, partial(fold_qdq, numerics=numerics) if run is fold_qdq else run) for name, run in PIPELINE]


def run_pipeline(g: Graph, verify_each: bool = False, dump_dir: Path | None = None,
                 passes: list[tuple[str, Pass]] | None = None) -> Graph:
    """Run the passes in order; verify after each (`verify_each`); dump the IR (`dump_dir`).

    The dump holds `00_input.ir` and then `NN_<pass>.ir` after each pass, so a diff of two
    consecutive files shows what one pass did.
    """
    steps = PIPELINE if passes is None else passes
    if dump_dir is not None:
        dump_dir = Path(dump_dir)
        try:
            dump_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise KilnError(f"cannot create the --dump-ir folder: {err.strerror or err}",
                            where=str(dump_dir)) from None
        (dump_dir / "00_input.ir").write_text(format_graph(g))
    for k, (name, run) in enumerate(steps, start=1):
        g = run(g)
        if verify_each:
            try:
                verify_graph(g)
            except KilnError as err:
                raise KilnError(f"after pass '{name}': {err.message}", node=err.node) from err
        if dump_dir is not None:
            (dump_dir / f"{k:02d}_{name}.ir").write_text(format_graph(g))
    return g
