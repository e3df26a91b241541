"""A throughput estimate beside `kiln profile`'s exact instruction counts on Cortex-A: the
hot loop of each kernel, as the target's compiler emits it, run through llvm-mca with the
core's scheduling model (`-mcpu=cortex-a53 / a72 / a76`). Instructions are not time on the
out-of-order cores, so the profile also shows the loop's instructions per cycle and the
kernel's count divided by it: estimated cycles, as if the whole call ran at its hot loop's
rate (an estimate; prologues, tails and memory stalls are not modelled).

The hot loop of a kernel: among the innermost loops (a label and the backward branch to it
with no other such loop inside) of the kernel's function, of its non-inlined helpers
(functions named kiln_<kernel>_...) and of its calls' stretches of the model's function (kernels
inlined at each call, one specialised copy per layer: the stretch from the previous call's
profiling marker to this call's), the one with the most vector instructions. Optional: without
llvm-mca (LLVM's package) the profile has no estimate.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from codegen.targets import Target

MCA = "llvm-mca"
ITERATIONS = 100
# GCC's labels, and the numeric local labels of inline assembly ("2:", branched to as "2b")
_LABEL = re.compile(r"^(\.?L[\w.]+):|^\s*(\d+):\s*$")
_CONDITIONS = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le"
_BRANCH = re.compile(rf"^\s+(?:b(?:\.?(?:{_CONDITIONS}))?|cbn?z\s+\w+,|tbn?z\s+\w+,\s*#?\d+,)\s*"
                     rf"(\.?L[\w.]+|\d+b)\s*$")
_VECTOR = re.compile(r"\bv\d+\.|\b[qd]\d+\b")


@dataclass(frozen=True)
class HotLoop:
    function: str
    instructions: int  # per iteration
    cycles: float  # per iteration, llvm-mca's steady state (total cycles / iterations)

    @property
    def ipc(self) -> float:
        return self.instructions / self.cycles if self.cycles else 0.0


def available() -> bool:
    return shutil.which(MCA) is not None


def core(target: Target) -> str | None:
    """The -mcpu of the target's compiler flags (llvm-mca's scheduling model)."""
    return next((f.split("=", 1)[1] for f in target.cflags if f.startswith("-mcpu=")), None)


def functions(asm: str) -> dict[str, list[str]]:
    """The lines of each function of a GCC assembly listing."""
    out: dict[str, list[str]] = {}
    name = None
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_]\w*(?:\.\w+)*):", line)
        if m and not line.startswith(".L"):
            name = m.group(1)
            out[name] = []
        elif name is not None:
            if line.strip().startswith(".size"):
                name = None
            else:
                out[name].append(line)
    return out


def _instructions(lines: list[str]) -> list[str]:
    return [ln.split("//")[0].rstrip() for ln in lines
            if ln.startswith("\t") and not ln.strip().startswith((".", "#")) and ln.strip()
            and not _LABEL.match(ln)]


def _target(lines: list[str], i: int, name: str) -> int | None:
    """The line of the label a branch at line i goes back to: a GCC label, or the nearest
    numeric label `N:` above for `Nb`."""
    for j in range(i - 1, -1, -1):
        m = _LABEL.match(lines[j])
        if m and (m.group(1) == name or (name.endswith("b") and m.group(2) == name[:-1])):
            return j
    return None


def innermost_loops(lines: list[str]) -> list[list[str]]:
    """The instructions of each innermost loop (label ... backward branch to it)."""
    spans = []
    for i, ln in enumerate(lines):
        m = _BRANCH.match(ln)
        start = _target(lines, i, m.group(1)) if m else None
        if start is not None:
            spans.append((start, i))
    inner = [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]
    return [_instructions(lines[a + 1:b + 1]) for a, b in inner]


def hottest(loops: list[list[str]]) -> list[str] | None:
    loops = [lp for lp in loops if lp]
    return max(loops, key=lambda lp: (sum(bool(_VECTOR.search(i)) for i in lp), len(lp)), default=None)


def cycles_per_iteration(body: list[str], cpu: str) -> float | None:
    """llvm-mca's total cycles over ITERATIONS iterations of `body`, per iteration."""
    proc = subprocess.run([MCA, "-mtriple=aarch64", f"-mcpu={cpu}", f"-iterations={ITERATIONS}"],
                          input="\n".join(body) + "\n", capture_output=True, text=True)
    m = re.search(r"^Total Cycles:\s+(\d+)", proc.stdout, re.M)
    return int(m.group(1)) / ITERATIONS if proc.returncode == 0 and m else None


def call_stretches(funcs: dict[str, list[str]], marker: str, calls: int) -> list[list[str]] | None:
    """The lines of the model's function(s) before each call's profiling marker (the marker
    follows each kernel call, its "memory" clobber keeps the call's code on its side), one
    stretch per call in order; None when the markers do not match the calls one to one."""
    stretches: list[list[str]] = []
    for lines in funcs.values():
        start = 0
        for i, line in enumerate(lines):
            if line.strip() == marker:
                stretches.append(lines[start:i])
                start = i + 1
    return stretches if len(stretches) == calls else None


def kernel_hot_loops(c_file: Path, target: Target, calls: list[str], work: Path,
                     marker_flags: list[str] = (), marker: str = "hint #127") -> dict[str, HotLoop]:
    """kernel -> its hot loop's estimate, from `c_file` compiled to assembly with the target's
    flags (empty without llvm-mca or a -mcpu). `calls`: the kernel of each call in order;
    `marker_flags` make the profiling `marker` follow each call (else inlined kernels go
    without an estimate)."""
    cpu = core(target)
    if not available() or cpu is None:
        return {}
    asm = work / (c_file.stem + ".s")
    proc = subprocess.run([target.cc, *target.cflags, *marker_flags, "-S", str(c_file), "-o", str(asm)],
                          cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        return {}
    funcs = functions(asm.read_text())
    stretches = call_stretches(funcs, marker, len(calls)) or []
    out = {}
    for kernel in sorted(set(calls)):
        name = f"kiln_{kernel}"
        owned = [(f, funcs[f]) for f in funcs if f == name or f.startswith(name + "_") or f.startswith(name + ".")]
        owned += [(f"inlined at call {i}", lines) for i, (k, lines) in enumerate(zip(calls, stretches)) if k == kernel]
        best = None
        for f, lines in owned:
            body = hottest(innermost_loops(lines))
            if body and (best is None or _rank(body) > _rank(best[1])):
                best = (f, body)
        if best is None:
            continue
        cycles = cycles_per_iteration(best[1], cpu)
        if cycles:
            out[kernel] = HotLoop(best[0], len(best[1]), cycles)
    return out


def _rank(body: list[str]) -> tuple[int, int]:
    return sum(bool(_VECTOR.search(i)) for i in body), len(body)
