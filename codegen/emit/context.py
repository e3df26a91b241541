"""Render contexts: frozen, typed data that the templates only substitute and loop over."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IOSpec:
    name: str  # name in the model file
    cname: str  # C parameter name
    dtype: str
    ctype: str
    shape: tuple[int, ...]
    elements: int
    scale: str | None  # C float literal, or None when not quantized
    zero_point: int | None
    macro: str  # upper-case prefix of its #defines, e.g. KWS_INPUT_0
    # An output whose extent along `length_axis` depends on the data (codegen/ops/bounded.py):
    # `shape` holds the bound there, `length_cname` names the run function's int32_t * out-parameter
    # receiving the actual extent. None for every other tensor.
    length_axis: int | None = None
    length_cname: str | None = None
    expected: tuple[str, ...] = ()  # a specialised input: the only value accepted (C literal lines)
    arena_offset: int | None = None  # --io-in-arena: where the planner put it in the arena


@dataclass(frozen=True)
class ParamInit:
    field: str
    literal: str


@dataclass(frozen=True)
class CallCtx:
    cname: str
    function: str
    params_type: str
    params: tuple[ParamInit, ...]
    args: tuple[str, ...]
    origin: str  # source node names, for the comment
    bound_at_load: bool = False  # blob mode: its params point into the blob, set by N_load_weights


@dataclass(frozen=True)
class ConstDecl:
    symbol: str
    ctype: str
    length: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class StateDecl:
    """One variable of a streaming model in the persistent state region (codegen/lower/state.py)."""

    symbol: str
    ctype: str
    length: int
    variable: str  # the model's name for it, for the comment
    lines: tuple[str, ...]  # initial values (C literal lines); () when all zero
    zero: str  # the C literal of a zero element, for N_reset()


@dataclass(frozen=True)
class KernelSource:
    kernel: str
    source: str


@dataclass(frozen=True)
class ModelCtx:
    name: str
    guard: str  # include guard / macro prefix, upper case
    kiln_version: str
    model_file: str
    model_sha256: str
    target: str
    arena_size: int
    uses_arena: bool  # False when every kernel reads and writes only caller buffers and flash
    arena_align: int
    inputs: tuple[IOSpec, ...]
    outputs: tuple[IOSpec, ...]
    system_headers: tuple[str, ...]
    local_headers: tuple[str, ...]
    kernels: tuple[KernelSource, ...]
    consts: tuple[ConstDecl, ...]
    calls: tuple[CallCtx, ...]
    weights_bytes: int
    canaries: object | None = None  # codegen.canaries.CanaryPlan in debug builds with canaries
    unused_inputs: tuple[str, ...] = ()  # C names of inputs no call reads (cast to void: no warning)
    sources: tuple[str, ...] = ()  # the .c files a build compiles (kiln.mk, kiln.cmake)
    target_cflags: tuple[str, ...] = ()  # the target's compiler flags (core, float ABI, -O level)
    blob: object | None = None  # codegen.emit.weights_blob.BlobCtx with --weights blob
    bounded: tuple[IOSpec, ...] = ()  # the outputs with a data-dependent length (length_axis set)
    run_params: tuple[str, ...] = ()  # C declarations of N_run's parameters, in order
    caller_arena: bool = False  # --arena caller: N_init(arena, size) hands the arena in
    io_in_arena: bool = False  # --io-in-arena: inputs and outputs in the arena, N_input_k() / N_output_k()
    state: tuple[StateDecl, ...] = ()  # a streaming model's variables, kept between calls
    state_bytes: int = 0
