"""Several models of one library in one firmware: a test entry point that runs them one after
another from the shared arena, so that `kiln verify A B` checks every model as it links in the
library (one image, one arena) and compares each with its reference runtime."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from codegen.compiler import BuildResult
from codegen.emit.render import render_template
from codegen.ir.types import C_TYPES
from codegen.variants.library import Library


@dataclass(frozen=True)
class ChainIO:
    cname: str
    ctype: str


@dataclass(frozen=True)
class ChainMember:
    name: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ChainCtx:
    name: str
    guard: str
    library: str
    members: tuple[ChainMember, ...]
    inputs: tuple[ChainIO, ...]
    outputs: tuple[ChainIO, ...]


def _prefixed(k: int, io: dict) -> dict:
    """A member's I/O entry under the chain's names: `m<k>/<name>`, C name `m<k>_<c_name>`."""
    return dict(io, name=f"m{k}/{io['name']}", c_name=f"m{k}_{io['c_name']}")


def chain_build(lib: Library) -> BuildResult:
    """The library with the chain entry point `<library>_all_run`, as one build that the
    verify, run and profile machinery takes (its manifest merges the members' I/O and calls)."""
    name = f"{lib.name}_all"
    manifests = [m.result.manifest for m in lib.members]
    inputs = [_prefixed(k, io) for k, mf in enumerate(manifests) for io in mf["inputs"]]
    outputs = [_prefixed(k, io) for k, mf in enumerate(manifests) for io in mf["outputs"]]
    ctx = ChainCtx(name, name.upper(), lib.name,
                   tuple(ChainMember(m.name, tuple(f"m{k}_{io['c_name']}" for io in mf["inputs"] + mf["outputs"]))
                         for k, (m, mf) in enumerate(zip(lib.members, manifests))),
                   tuple(ChainIO(io["c_name"], C_TYPES[io["dtype"]]) for io in inputs),
                   tuple(ChainIO(io["c_name"], C_TYPES[io["dtype"]]) for io in outputs))
    sources = [src for mf in manifests for src in (f"{mf['name']}.c", f"{mf['name']}_weights.c")
               if src in lib.files] + [f"{lib.name}_weights.c"] * (lib.shared is not None) + [f"{lib.name}_arena.c"]
    manifest = dict(manifests[0], name=name, inputs=inputs, outputs=outputs, links_with=sources,
                    arena_bytes=lib.arena_bytes, weights_bytes=sum(mf["weights_bytes"] for mf in manifests),
                    fusion_groups=[g for mf in manifests for g in mf["fusion_groups"]])
    files = dict(lib.files)
    files[f"{name}.h"] = render_template("harness/models_chain.h.j2", c=ctx)
    files[f"{name}.c"] = render_template("harness/models_chain.c.j2", c=ctx)
    files[f"{name}.manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return replace(lib.members[0].result, name=name, files=files, manifest=manifest)


def chain_samples(lib: Library, per_member: list[list[dict[str, np.ndarray]]]) -> list[dict[str, np.ndarray]]:
    """Samples of every member merged under the chain's input names."""
    return [{f"m{k}/{n}": a for k, sample in enumerate(samples) for n, a in sample.items()}
            for samples in zip(*per_member)]


def split_outputs(lib: Library, got: list[dict[str, np.ndarray]]) -> list[list[dict[str, np.ndarray]]]:
    """The chain's outputs per member, under each model's own output names."""
    return [[{n.split("/", 1)[1]: a for n, a in sample.items() if n.startswith(f"m{k}/")} for sample in got]
            for k in range(len(lib.members))]


def verify_models(models: list[Path], options, *, samples: int, seed: int, sanitize: bool = False,
                  tolerance_lsb: int | None = None):
    """Every model of a several-model library run in one image (one arena) and compared with its
    reference runtime: (chain build, [(model name, VerifyResult)])."""
    from codegen.variants.build import compile_models
    from codegen.verify.run import compare_with_reference, run_on_target
    from codegen.verify.samples import random_samples

    lib = compile_models(models, options)
    per_member = [random_samples(m.result.manifest["inputs"], samples, seed + k) for k, m in enumerate(lib.members)]
    chain = chain_build(lib)
    got = split_outputs(lib, run_on_target(chain, options, chain_samples(lib, per_member), sanitize=sanitize))
    return chain, [(m.name, compare_with_reference(model, m.result.manifest, inputs, outs, tolerance_lsb))
                   for m, model, inputs, outs in zip(lib.members, models, per_member, got)]
