"""Several compiled graphs in one library: shape variants of one model, or several models.

Each member is compiled on its own by the ordinary pipeline (its own optimised graph, fusion
and memory plan), then rendered again against the library: every member's arena is the one
shared arena (as large as the largest member needs: members run one at a time), and, for
variants, every constant that two members use identically (same dtype and bytes after
repacking) is one symbol in one weights file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from codegen.compiler import BuildResult
from codegen.emit.context import ConstDecl
from codegen.emit.literals import c_array_values
from codegen.emit.render import LibraryLinks, render
from codegen.errors import KilnError
from codegen.ir.types import C_TYPES
from codegen.lower.kernel import ConstArray
from codegen.options import CompileOptions
from codegen.resources import RUNTIME_C
from codegen.variants.kernels import KernelSharing, kernel_code, kernel_files, share_kernels


@dataclass
class Member:
    """One compiled graph of the library: a shape variant, or one of several models."""

    name: str  # C prefix of its entry point and files (N_v0, or the model's name)
    result: BuildResult
    model_file: str
    model_sha256: str
    description: str = ""  # a variant's shapes and values, for the header and manifest


@dataclass
class SharedConstants:
    decls: list[ConstDecl]  # every distinct constant once, in first-use order
    symbols: dict[str, dict[str, str]]  # member name -> constant name -> symbol
    users: dict[str, int]  # symbol -> number of members that use it
    nbytes: dict[str, int]  # symbol -> bytes


def _content_key(c: ConstArray) -> str:
    """Constants are one array when their C arrays are identical: same element type and bytes
    (a repacked layout is in the bytes)."""
    return f"{c.dtype}:{hashlib.sha256(c.data.tobytes()).hexdigest()}"


def share_constants(members: list[Member], library: str) -> SharedConstants:
    """One symbol per distinct constant: `<library>_<name>` after its first user, or the first
    user's own `<member>_<name>` when two different constants carry the same name."""
    by_key: dict[str, str] = {}
    taken: set[str] = set()
    shared = SharedConstants([], {}, {}, {})
    for m in members:
        own = shared.symbols.setdefault(m.name, {})
        for c in m.result.lowered.consts:
            key = _content_key(c)
            if key not in by_key:
                symbol = f"{library}_{c.name}" if f"{library}_{c.name}" not in taken else f"{m.name}_{c.name}"
                taken.add(symbol)
                by_key[key] = symbol
                shared.decls.append(ConstDecl(symbol, C_TYPES[c.dtype], max(c.data.size, 1),
                                              tuple(c_array_values(c.data, c.dtype)) or ("0",)))
                shared.nbytes[symbol] = c.nbytes
            if c.name not in own:
                own[c.name] = by_key[key]
                shared.users[by_key[key]] = shared.users.get(by_key[key], 0) + 1
    return shared


@dataclass
class Library:
    name: str  # C prefix of the library's own files (arena, dispatcher, weights)
    guard: str
    members: list[Member]
    arena_bytes: int
    arena_align: int
    files: dict[str, str | bytes] = field(default_factory=dict)
    shared: SharedConstants | None = None  # variants: the deduplicated constants
    kernels: KernelSharing | None = None  # variants: the kernels defined once (codegen/variants/kernels.py)


def check_library_options(options: CompileOptions, what: str) -> None:
    """What a library build does not combine with: one line naming the option."""
    if options.canaries:
        raise KilnError(f"--debug-canaries guards one arena per model; build the {what} one at a time to debug")
    if options.weights != "const":
        raise KilnError(f"--weights blob holds one model's weights; the {what} share const weights "
                        "(build them one at a time for over-the-air blobs)")


def render_members(lib: Library, options: CompileOptions, *, share: bool,
                   runtime: dict[str, str] | None = None, links: tuple[str, ...] = ()) -> None:
    """Every member rendered against the library: its .c and .h, its manifest (with the library
    files it links with, and `links` more) and memory report; runtime headers once. `runtime`:
    constants that are RAM arrays of the library (codegen/emit/render.py: LibraryLinks)."""
    arena_header = f"{lib.name}_arena.h"
    if share:
        lib.shared = share_constants(lib.members, lib.name)
        lib.kernels = share_kernels(lib.members, kernel_code(options)[0])
    shared_kernels = frozenset(k.kernel for k in lib.kernels.shared) if lib.kernels else frozenset()
    kernels_c = [f"{lib.name}_kernels.c"] if shared_kernels else []
    for m in lib.members:
        library = LibraryLinks(f"{lib.name}_arena", arena_header,
                               lib.shared.symbols[m.name] if lib.shared else None, runtime,
                               shared_kernels, f"{lib.name}_kernels.h")
        files = render(m.result.lowered, m.result.plan, name=m.name, model_file=m.model_file,
                       model_sha256=m.model_sha256, weights=options.weights, library=library)
        for glue in ("kiln.mk", "kiln.cmake"):  # the library's own glue builds every member
            files.pop(glue)
        manifest = dict(m.result.manifest)
        manifest["links_with"] = ([f"{lib.name}_weights.c"] if share else []) + kernels_c + [f"{lib.name}_arena.c",
                                                                                               *links]
        manifest["library"] = lib.name
        if m.description:
            manifest["variant"] = m.description
        files[f"{m.name}.manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
        for report in (f"{m.name}.memory.md", f"{m.name}.memory.svg"):
            files[report] = m.result.files[report]
        lib.files.update(files)
        m.result.manifest = manifest
    if shared_kernels:
        lib.files.update(kernel_files(lib.name, lib.guard, options.target.name, lib.kernels,
                                      _included(lib.files[f"{m.name}.c"] for m in lib.members)))


def _included(sources) -> dict[str, tuple[str, ...]]:
    """The system headers and Kiln runtime headers the members' sources include."""
    text = "".join(sources)
    local = set(re.findall(r'#include "([^"]+)"', text))
    return {"system": tuple(sorted(set(re.findall(r"#include <([^>]+)>", text)) - {"stdint.h", "stddef.h"})),
            "local": tuple(sorted(h for h in local if (RUNTIME_C / h).is_file()))}


def member_view(lib: Library, member: Member) -> BuildResult:
    """A member as a build of its own for `kiln verify / run / profile`: the library's files
    (the member's sources link with the shared arena and weights, as in the product), named
    by the member."""
    r = member.result
    return BuildResult(member.name, r.graph, r.lowered, r.buffers, r.plan, dict(lib.files), r.manifest,
                       r.aliases, fusion=r.fusion)
