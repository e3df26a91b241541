"""Targets are data: boards/targets/<name>.toml, read into one frozen `Target`."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace

from codegen.errors import KilnError
from codegen.resources import TARGETS


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    cc: str  # C compiler used by `kiln verify` / `kiln run`
    cflags: tuple[str, ...]  # flags for building the generated code on this target
    variants: tuple[str, ...]  # kernel template variants, most specific first; "reference" last
    alignment: int  # byte alignment of arena buffers
    runner: str  # how verification runs the code: "host", "qemu-system", "qemu-user"
    ldflags: tuple[str, ...] = ()  # extra link flags of a firmware / executable for this target
    board: str | None = None  # boards/<board>.toml that `kiln verify` / `run` / `profile` run on
    qemu_cpu: str | None = None  # `qemu-aarch64 -cpu` model of a qemu-user target


def available_targets() -> list[str]:
    return sorted(p.stem for p in TARGETS.glob("*.toml"))


def load_target(name: str) -> Target:
    path = TARGETS / f"{name}.toml"
    if not path.is_file():
        raise KilnError(f"unknown target '{name}' (known: {', '.join(available_targets())})")
    data = tomllib.loads(path.read_text())
    variants = tuple(data.get("variants", [])) + ("reference",)
    return Target(
        name=name,
        description=data["description"],
        cc=data["cc"],
        cflags=tuple(data["cflags"]),
        variants=tuple(dict.fromkeys(variants)),
        alignment=int(data["alignment"]),
        runner=data["runner"],
        ldflags=tuple(data.get("ldflags", [])),
        board=data.get("board"),
        qemu_cpu=data.get("qemu_cpu"),
    )


def with_kernels(target: Target, kernels: tuple[str, ...]) -> Target:
    """`target` using only the kernel variants named (each one of its own, or "reference"),
    in the target's order, "reference" last: `--kernels reference` measures the portable C
    kernels on the same core and flags, `--kernels neon` a dot-product core without SDOT."""
    unknown = [k for k in kernels if k not in target.variants]
    if unknown:
        raise KilnError(f"target '{target.name}' has no kernel variant '{unknown[0]}' "
                        f"(it has: {', '.join(target.variants)})")
    kept = tuple(v for v in target.variants if v in kernels) + ("reference",)
    return replace(target, variants=tuple(dict.fromkeys(kept)))


OPT_LEVELS = ("O0", "O1", "O2", "O3", "Os")
OPT_FLAG = re.compile(r"-O(\d|s|z|g|fast)?")  # a compiler optimisation-level flag


def with_opt_level(target: Target, level: str) -> Target:
    """`target` compiled at `-<level>` instead of its own -O flag (`--opt-level Os`: smaller code;
    the generated C is the same, only the flags of every build of it change)."""
    if level not in OPT_LEVELS:
        raise KilnError(f"unknown optimisation level '{level}' (known: {', '.join(OPT_LEVELS)})")
    kept = tuple(f for f in target.cflags if not OPT_FLAG.fullmatch(f))
    return replace(target, cflags=(*kept, f"-{level}"))
