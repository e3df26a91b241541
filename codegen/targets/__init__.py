"""Targets are data: boards/targets/<name>.toml, read into one frozen `Target`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

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
    )
