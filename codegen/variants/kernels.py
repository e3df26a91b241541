"""Kernel code shared by the shape variants of one library.

Every variant is rendered with its own kernels (static functions of its .c). A kernel that two
or more variants use with the same specialisation (the same rendered source: kernel names carry
their template variables' digest, and parameters such as shapes live in each call's parameter
block) is emitted once instead, in `N_kernels.c`, and called from every variant through
`N_kernels.h`, which declares its parameter block and its entry point (renamed `N_kiln_...` so
that two libraries link together). Kernels that stay in a variant's .c, and why, are listed in
the manifest: one used by that variant alone, or specialised differently per variant, or whose
template does not open with its parameter block (what the header needs on its own; a system
header such as <arm_neon.h> may come first, and goes to N_kernels.c with the code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codegen import __version__
from codegen.emit.render import kernel_sources, render_template
from codegen.kernels.select import planned_calls

SPECIALISED = "specialised for this variant"
ALONE = "used by this variant only"
INSEPARABLE = "its parameter block is not separable from its code"
OWN_CODE = "each variant's copy, specialised for its calls (see kernel_code)"
_COMMENTS = re.compile(r"/\*.*?\*/", re.S)
_SYSTEM_INCLUDE = re.compile(r"^#include <[\w./]+>\n", re.M)


@dataclass(frozen=True)
class SharedKernel:
    kernel: str
    function: str  # the C function the calls name (renamed by the header)
    params_block: str  # `typedef struct { ... } <function>_params;`
    prototype: str  # the entry point's declaration, without `static`
    body: str  # the rest of the source, the entry point no longer static


@dataclass(frozen=True)
class KernelSharing:
    shared: tuple[SharedKernel, ...]
    own: dict[str, dict[str, str]]  # member name -> kernel -> why it stays in the member's .c
    used: dict[str, tuple[str, ...]]  # member name -> every kernel it calls

    def shared_by(self, member: str) -> list[str]:
        return [k.kernel for k in self.shared if k.kernel in self.used[member]]


def split_kernel(kernel: str, function: str, source: str) -> SharedKernel | None:
    """The source cut into its parameter block and the rest, or None when it does not open with
    the block (helpers, macros or includes before it) or the entry point is not found once."""
    block = re.search(r"typedef struct \{.*?\} " + re.escape(function) + r"_params;\n", source, re.S)
    if block is None:
        return None
    includes = _SYSTEM_INCLUDE.findall(source[:block.start()])  # <arm_neon.h>: the code's, kept with it
    if _SYSTEM_INCLUDE.sub("", _COMMENTS.sub("", source[:block.start()])).strip():
        return None
    rest = "".join(includes) + source[block.end():]
    entry = list(re.finditer(r"static (void|int) " + re.escape(function) + r"\(([^)]*)\)\s*\{", rest))
    if len(entry) != 1:
        return None
    e = entry[0]
    # without `static `, continuation lines of the signature move left as much
    signature = f"{e.group(1)} {function}({e.group(2)})".replace("\n" + " " * len("static "), "\n")
    return SharedKernel(kernel, function, block.group(0).rstrip("\n"), signature,
                        rest[:e.start()] + signature + "\n{" + rest[e.end():])


def kernel_code(options) -> tuple[bool, str]:
    """Whether the variants share their kernels (--variant-kernels), and why. Sharing trades
    speed for flash: a kernel in another C file is no longer specialised by the compiler for the
    constant parameter block of each call (bench/VARIANTS.md, Cortex-M4 at -O2: +0.2 % instructions
    on KWS int8, +6 % on a small float CNN whose three variants take 1,068 B less flash; twice
    the instructions on the Cortex-A72 at -O3)."""
    if options.variant_kernels == "shared":
        return True, "--variant-kernels shared"
    if options.variant_kernels == "own":
        return False, "--variant-kernels own"
    if options.target.board is not None:
        return True, f"{options.target.name} is a bare-metal target, where flash runs out first"
    return False, f"{options.target.name} is not a bare-metal target: each variant's kernels are specialised for speed"


def share_kernels(members, share: bool = True) -> KernelSharing:
    """Which kernels the members (codegen/variants/library.py's Member) share: used by two or
    more, with the same source in all of them, and separable (none unless `share`)."""
    sources, functions = {}, {}
    for m in members:
        calls = planned_calls(m.result.lowered, m.result.plan)
        functions.update({c.kernel: c.function for c in calls})
        sources[m.name] = {k.kernel: k.source for k in kernel_sources(calls)}
    users: dict[str, list[str]] = {}
    for name, kernels in sources.items():
        for k in kernels:
            users.setdefault(k, []).append(name)
    shared, own = [], {m.name: {} for m in members}
    for kernel in sorted(users):
        texts = {sources[n][kernel] for n in users[kernel]}
        split = split_kernel(kernel, functions[kernel], next(iter(texts))) if len(texts) == 1 else None
        if share and len(users[kernel]) > 1 and split is not None:
            shared.append(split)
            continue
        why = (ALONE if len(users[kernel]) == 1 else SPECIALISED if len(texts) > 1
               else INSEPARABLE if share else OWN_CODE)
        for n in users[kernel]:
            own[n][kernel] = why
    return KernelSharing(tuple(shared), own, {n: tuple(sorted(k)) for n, k in sources.items()})


def kernel_files(library: str, guard: str, target: str, sharing: KernelSharing, headers: dict) -> dict[str, str]:
    """`N_kernels.h` and `N_kernels.c` (none when nothing is shared); `headers`: "system" and
    "local", the headers the variants' sources include (the kernels' own)."""
    if not sharing.shared:
        return {}
    ctx = {"name": library, "guard": guard, "kiln_version": __version__, "target": target,
           "kernels": sharing.shared, "system_headers": headers["system"], "local_headers": headers["local"]}
    return {f"{library}_kernels.h": render_template("variants/kernels.h.j2", k=ctx),
            f"{library}_kernels.c": render_template("variants/kernels.c.j2", k=ctx)}
