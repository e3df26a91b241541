"""Single-operator TFLite cases for every (builtin, type) pair of bench/tflite_builtins.py, and
the runner that compiles one for the host and compares it with the reference.

`cases_for(builtin, dtype)` gives the cases of one pair (edge-case attributes included), each
a model written with tflite_models.py (no TensorFlow). `run_case` imports it with Kiln (a
KilnError is a refusal, with its one-line reason), compiles the graph for the host, builds
and runs the C with gcc, and compares with TFLite Micro (quantized, integer and bool
types: bit-exact) or LiteRT's builtin kernels (float32: within 1e-5 of the largest
|expected|). Used by tests/frontends/test_tflite_builtins.py and by
`python -m bench.tflite_conformance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from tflite_models import ModelWriter, TensorSpec, const, run_litert, run_tflm, single_op_model

RTOL = 1e-5
QUANT = {"int8": dict(scale=0.05, zero_point=-3), "int16": dict(scale=0.002, zero_point=0),
         "uint8": dict(scale=0.05, zero_point=120)}


def t(shape, dtype="float32", **kw) -> TensorSpec:
    """A tensor; quantized types get the default quantization unless given."""
    quant = {} if "scale" in kw else QUANT.get(dtype, {})
    return TensorSpec(tuple(shape), dtype, **{**quant, **kw})


def i32(values) -> TensorSpec:
    return const(np.asarray(values, np.int32))


@dataclass
class Case:
    builtin: str
    dtype: str
    label: str
    inputs: list
    outputs: list
    options: dict = field(default_factory=dict)
    domain: str = "any"  # "positive", "nonzero": what random inputs must avoid
    feeds: list | None = None  # fixed inputs instead of random ones

    @property
    def id(self) -> str:
        return f"{self.builtin.lower()}-{self.dtype}-{self.label}"

    def model(self) -> bytes:
        return single_op_model(self.builtin, self.inputs, self.outputs, self.options)

    def run(self, samples: int = 3, seed: int = 0, target: str = "host") -> "Outcome":
        """See `run_case`."""
        return run_model(self.model(), self.random_inputs, reference_for(self), samples, seed, target)

    def random_inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        if self.feeds is not None:
            return self.feeds
        return [_random(s, rng, self.domain) for s in self.inputs if s is not None and s.data is None]


def _random(spec: TensorSpec, rng: np.random.Generator, domain: str) -> np.ndarray:
    dt = spec.dtype
    if dt == "bool":
        return rng.integers(0, 2, spec.shape).astype(bool)
    if dt == "float32":
        x = rng.standard_normal(spec.shape).astype(np.float32) * 2
        if domain == "positive":
            return np.abs(x) + np.float32(0.1)
        if domain == "nonzero":
            return np.where(np.abs(x) < 0.1, np.float32(0.5), x).astype(np.float32)
        return x
    info = np.iinfo(dt)
    lo, hi = (int(info.min), int(info.max)) if dt in ("int8", "uint8", "int16") else (-100, 100)
    if domain == "positive":
        lo = max(lo, 1)
    x = rng.integers(lo, hi + 1, spec.shape).astype(dt)
    if domain == "nonzero":
        x[x == 0] = 1
    return x


# -- the runner -------------------------------------------------------------------------------------

@dataclass
class Outcome:
    status: str  # pass | fail | refused | unverified (the reference cannot run the case)
    reason: str = ""
    failed_outputs: tuple[int, ...] = ()  # positions of the outputs that differ


def reference_for(case: Case) -> str:
    return "litert" if case.dtype == "float32" else "tflm"


def run_case(case: Case, samples: int = 3, seed: int = 0, target: str = "host") -> Outcome:
    """Import, compile for `target`, build, run (on the host, or in QEMU for a Cortex-M
    target), compare (see the module docstring). A case may run otherwise (a streaming
    model's consecutive calls: tflite_streaming.StreamCase)."""
    return case.run(samples, seed, target)


def run_model(model: bytes, make_inputs, reference: str, samples: int = 3, seed: int = 0, target: str = "host",
              per_output: bool = False) -> Outcome:
    """run_case for model bytes; `make_inputs(rng)` gives one sample's runtime inputs in order."""
    from codegen.compiler import compile_graph
    from codegen.errors import KilnError
    from codegen.frontends.tflite import load_bytes
    from codegen.options import CompileOptions
    from codegen.targets import load_target
    from codegen.verify import host, qemu

    try:
        g = load_bytes(model, name="m")
        # The greedy arena placement: deterministic, where CP-SAT's plan within its time limit
        # depends on the machine's load (and so would which buffers share arena bytes).
        res = compile_graph(g, CompileOptions(load_target(target), planner="greedy"), name="m",
                            model_file="case.tflite", model_sha256="0" * 64)
    except KilnError as err:
        return Outcome("refused", str(err))
    except Exception as err:  # a crash is a failure, never a refusal
        return Outcome("fail", f"compiler crash: {type(err).__name__}: {_first_line(err)}")
    rng = np.random.default_rng(seed)
    feeds = [make_inputs(rng) for _ in range(samples)]
    run_ref = run_litert if reference == "litert" else run_tflm
    try:
        expected = [run_ref(model, *feed) for feed in feeds]
    except Exception as err:
        return Outcome("unverified", f"the reference ({reference}) cannot run it: {_first_line(err)}")
    try:
        named = [dict(zip(g.inputs, f)) for f in feeds]
        got = host.run_generated(res.files, "m", named) if target == "host" else \
            qemu.run_generated(res.files, "m", named, load_target(target))
    except Exception as err:
        return Outcome("fail", f"generated C: {type(err).__name__}: {_first_line(err)}")
    failed: dict[int, str] = {}
    for want_all, out in zip(expected, got):
        for k, (name, want) in enumerate(zip(g.outputs, want_all)):
            problem = mismatch(want, out[name])
            if problem:
                failed.setdefault(k, f"output '{name}': {problem}")
                if not per_output:
                    break
    if failed:
        return Outcome("fail", next(iter(failed.values())), tuple(sorted(failed)))
    return Outcome("pass")


def run_together(cases: list[Case], samples: int = 2, seed: int = 0, target: str = "host") -> dict[str, str]:
    """Cases of one reference side by side in one model (one compile, one reference run):
    each case id -> '' when its outputs match, else what differs (or why nothing ran)."""
    w = ModelWriter()
    inputs, outputs, spans = [], [], []
    for i, c in enumerate(cases):
        ins = [None if s is None else w.tensor(replace(s, name=f"c{i}_in{k}")) for k, s in enumerate(c.inputs)]
        outs = [w.tensor(replace(s, name=f"c{i}_out{k}")) for k, s in enumerate(c.outputs)]
        w.op(c.builtin, ins, outs, c.options)
        inputs += [t for t, s in zip(ins, c.inputs) if s is not None and s.data is None]
        spans.append((len(outputs), len(outputs) + len(outs)))
        outputs += outs
    outcome = run_model(w.build(inputs, outputs), lambda rng: [x for c in cases for x in c.random_inputs(rng)],
                        reference_for(cases[0]), samples, seed, target, per_output=True)
    if outcome.status != "pass" and not outcome.reason.startswith("output "):
        return {c.id: f"{outcome.status}: {outcome.reason}" for c in cases}
    failed = set(outcome.failed_outputs)
    return {c.id: ", ".join(f"output {k - lo}" for k in range(lo, hi) if k in failed)
            for c, (lo, hi) in zip(cases, spans)}


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [""])[0][:200]


def mismatch(expected: np.ndarray, actual: np.ndarray) -> str:
    """'' when `actual` matches: floats within RTOL of the largest |expected|, else exactly."""
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    if expected.dtype == np.float32:
        scale = max(float(np.abs(expected).max(initial=0.0)), 1e-30)
        err = float(np.abs(actual.astype(np.float64) - expected).max(initial=0.0))
        return "" if err <= RTOL * scale else f"max abs error {err:.3g} (largest |expected| {scale:.3g})"
    wrong = np.count_nonzero(actual.astype(expected.dtype) != expected)
    return "" if wrong == 0 else f"{wrong} of {expected.size} values differ"
