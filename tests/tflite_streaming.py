"""Streaming TFLite models with resource variables, written as TFLite's converter writes the
Keras streaming wrappers (no TensorFlow), and their runs over consecutive calls.

`streaming_model` is a small keyword-spotter-like stream: each call takes one feature frame,
appends it to the frames of the previous calls held in a variable (CONCATENATION, then
STRIDED_SLICE keeps the newest ones for the next call), classifies the window (a
FULLY_CONNECTED) and adds the scores to a running sum held in a second variable. Subgraph 1
is the CALL_ONCE initialisation subgraph: it assigns both variables their initial values.

`run_tflm_stream` invokes one TFLite Micro interpreter once per frame (its variables carry
over), `run_kiln_stream` builds the generated C once and runs every frame in one process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import tflite
from tflite_cases import Case, Outcome, mismatch
from tflite_models import ModelWriter, TensorSpec, const

FEATURES, HISTORY, CLASSES = 8, 2, 4
QUANT = {"int8": dict(scale=0.05, zero_point=-3), "float32": {}}
SCORES = {"int8": dict(scale=0.08, zero_point=5), "float32": {}}


def streaming_model(dtype: str = "int8", seed: int = 0, zero_init: bool = False) -> bytes:
    """The stream described in the module docstring; random weights and (unless `zero_init`)
    random initial values of the variables."""
    rng = np.random.default_rng(seed)
    q, qs = QUANT[dtype], SCORES[dtype]
    frames_shape, window_shape = (1, HISTORY, FEATURES), (1, HISTORY + 1, FEATURES)
    if dtype == "int8":
        weights = const(rng.integers(-127, 128, (CLASSES, window_shape[1] * FEATURES)), "int8", scale=0.01)
        bias = const(rng.integers(-500, 500, CLASSES), "int32", scale=0.05 * 0.01)
        init_frames = rng.integers(-128, 128, frames_shape)
        init_sum = rng.integers(-128, 128, (1, CLASSES))
    else:
        weights = const(rng.standard_normal((CLASSES, window_shape[1] * FEATURES)) * 0.3, "float32")
        bias = const(rng.standard_normal(CLASSES), "float32")
        init_frames = rng.standard_normal(frames_shape)
        init_sum = rng.standard_normal((1, CLASSES))
    if zero_init:
        init_frames, init_sum = np.zeros_like(init_frames), np.zeros_like(init_sum)

    init = ModelWriter()
    for shared, value, quant in (("frames", init_frames, q), ("score_sum", init_sum, qs)):
        handle = init.tensor(TensorSpec((), "resource", name=f"{shared}_handle"))
        init.op("VAR_HANDLE", [], [handle], {"shared_name": shared})
        init.op("ASSIGN_VARIABLE", [handle, init.tensor(const(value, dtype, **quant))], [])

    w = ModelWriter()
    x = w.tensor(TensorSpec((1, 1, FEATURES), dtype, name="frame", **q))
    w.op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    frames_h = w.tensor(TensorSpec((), "resource", name="frames_handle"))
    sum_h = w.tensor(TensorSpec((), "resource", name="score_sum_handle"))
    w.op("VAR_HANDLE", [], [frames_h], {"shared_name": "frames"})
    w.op("VAR_HANDLE", [], [sum_h], {"shared_name": "score_sum"})
    frames = w.tensor(TensorSpec(frames_shape, dtype, name="frames", **q))
    w.op("READ_VARIABLE", [frames_h], [frames])
    window = w.tensor(TensorSpec(window_shape, dtype, name="window", **q))
    w.op("CONCATENATION", [frames, x], [window], {"axis": 1})
    newest = w.tensor(TensorSpec(frames_shape, dtype, name="newest", **q))
    w.op("STRIDED_SLICE", [window, w.tensor(const(np.array([0, 1, 0], np.int32))),
                           w.tensor(const(np.array([1, HISTORY + 1, FEATURES], np.int32))),
                           w.tensor(const(np.array([1, 1, 1], np.int32)))], [newest])
    w.op("ASSIGN_VARIABLE", [frames_h, newest], [])
    flat = w.tensor(TensorSpec((1, window_shape[1] * FEATURES), dtype, name="flat", **q))
    w.op("RESHAPE", [window, w.tensor(const(np.array(flat_shape := [1, window_shape[1] * FEATURES], np.int32)))],
         [flat], {"new_shape": flat_shape})
    scores = w.tensor(TensorSpec((1, CLASSES), dtype, name="scores", **qs))
    w.op("FULLY_CONNECTED", [flat, w.tensor(weights), w.tensor(bias)], [scores])
    total = w.tensor(TensorSpec((1, CLASSES), dtype, name="score_sum", **qs))
    w.op("READ_VARIABLE", [sum_h], [total])
    new_total = w.tensor(TensorSpec((1, CLASSES), dtype, name="new_score_sum", **qs))
    w.op("ADD", [total, scores], [new_total])
    w.op("ASSIGN_VARIABLE", [sum_h, new_total], [])
    return w.build([x], [scores, new_total], subgraphs=[(init, [], [])])


def frames(dtype: str, count: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if dtype == "int8":
        return [rng.integers(-128, 128, (1, 1, FEATURES)).astype(np.int8) for _ in range(count)]
    return [rng.standard_normal((1, 1, FEATURES)).astype(np.float32) for _ in range(count)]


def run_tflm_stream(model: bytes, inputs: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Every output of each consecutive Invoke() of one TFLite Micro interpreter."""
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_bytes(model, arena_size=256 * 1024)
    n_out = tflite.Model.GetRootAs(model, 0).Subgraphs(0).OutputsLength()
    results = []
    for x in inputs:
        for k, a in enumerate(_feeds(x)):
            interp.set_input(a, k)
        interp.invoke()
        results.append([np.array(interp.get_output(k)) for k in range(n_out)])
    return results


def _feeds(x) -> list[np.ndarray]:
    """One call's inputs: an array (one input) or a list of arrays."""
    return list(x) if isinstance(x, (list, tuple)) else [x]


def run_litert_stream(model: bytes, inputs: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Every output of each consecutive invoke() of one LiteRT interpreter (builtin kernels)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_content=model,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interp.allocate_tensors()
    results = []
    for x in inputs:
        for d, a in zip(interp.get_input_details(), _feeds(x)):
            interp.set_tensor(d["index"], a)
        interp.invoke()
        results.append([np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()])
    return results


def build_stream(model: bytes, target: str = "host"):
    """Kiln's build of `model` (greedy arena placement: deterministic)."""
    from codegen.compiler import compile_graph
    from codegen.frontends.tflite import load_bytes
    from codegen.options import CompileOptions
    from codegen.targets import load_target

    g = load_bytes(model, name="stream")
    return compile_graph(g, CompileOptions(load_target(target), planner="greedy"), name="stream",
                         model_file="stream.tflite", model_sha256="0" * 64)


def run_kiln_stream(result, inputs: list[np.ndarray], target: str = "host") -> list[list[np.ndarray]]:
    """Each call's outputs, all calls in one run of the generated code (state carried)."""
    from codegen.targets import load_target
    from codegen.verify import host, qemu

    names = [io["name"] for io in result.manifest["inputs"]]
    feeds = [dict(zip(names, _feeds(x))) for x in inputs]
    outs = host.run_generated(result.files, "stream", feeds) if target == "host" else \
        qemu.run_generated(result.files, "stream", feeds, load_target(target))
    names = [o["name"] for o in result.manifest["outputs"]]
    return [[out[n] for n in names] for out in outs]


@dataclass
class StreamCase(Case):
    """A conformance case whose model keeps state between calls (resource variables, the
    variable tensors of LSTM and SVDF): `make()` gives the model, run for consecutive calls in
    one interpreter and one run of the generated code; against TFLite Micro bit-exact, or
    LiteRT (float32, within tolerance)."""

    make: Callable[[], bytes] | None = None
    reference: str = "tflm"

    def model(self) -> bytes:
        return self.make()

    def run(self, samples: int = 3, seed: int = 0, target: str = "host") -> Outcome:
        from codegen.errors import KilnError

        model = self.model()
        try:
            result = build_stream(model, target)
        except KilnError as err:
            return Outcome("refused", str(err))
        rng = np.random.default_rng(seed + 1)
        inputs = [[_random_input(io, rng) for io in result.manifest["inputs"]] for _ in range(max(samples, 2) * 4)]
        expected = (run_tflm_stream if self.reference == "tflm" else run_litert_stream)(model, inputs)
        for call, (want, got) in enumerate(zip(expected, run_kiln_stream(result, inputs, target))):
            for k, (a, b) in enumerate(zip(want, got)):
                b = b.reshape(a.shape)
                problem = mismatch(a, b) if self.reference == "litert" else \
                    ("" if np.array_equal(a, b) else mismatch(a, b) or "not bit-exact")
                if problem:
                    return Outcome("fail", f"call {call}, output {k}: {problem}", (k,))
        return Outcome("pass")


def _random_input(io: dict, rng: np.random.Generator) -> np.ndarray:
    if io["dtype"] == "float32":
        return rng.standard_normal(io["shape"]).astype(np.float32)
    if io["dtype"] == "bool":
        return rng.integers(0, 2, io["shape"]).astype(bool)
    top = 32768 if io["dtype"] == "int16" else 128  # int16: the whole range
    return rng.integers(-top, top, io["shape"]).astype(io["dtype"])
