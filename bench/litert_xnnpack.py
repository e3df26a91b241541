"""The Cortex-A peer: LiteRT with its XNNPACK delegate (what a Raspberry Pi user would otherwise
run), instructions per inference counted under qemu-aarch64 with Kiln's own counting plugin.

How: Debian's arm64 python3.11 and the libraries it needs are unpacked with `dpkg -x` into a
sysroot (nothing arm64 is installed system-wide; `dpkg --add-architecture arm64` and `apt-get
update` only let `apt-get download` fetch them), the `ai-edge-litert`, numpy and flatbuffers
wheels for manylinux_2_27_aarch64 are unzipped onto PYTHONPATH, and
`qemu-aarch64 -L SYSROOT -cpu cortex-aXX -plugin insn_count.so` runs bench/peers/litert_invoke.py,
which brackets each `invoke()` with the A64 profiling marker. qemu-user 7.2 passes the host's x86
/proc/cpuinfo through (LiteRT then crashes while creating the interpreter); with -L it opens
SYSROOT/proc/cpuinfo first, so the sysroot serves an Arm one whose CPU part matches -cpu: XNNPACK
picks its kernels from it. Figure: the median over invokes 3-12 of (marker-to-marker count of
invoke) - (count of an empty marker pair).

Everything fetched lives in bench/.work/litert-aarch64 (gitignored); never commit it.
Measured figures are cached there by (model digest, core, wheel names) so reruns are quick,
and each measured figure is also recorded in bench/cortex_a_peers.json (committed: the
figures alone, with the versions that gave them), which `--peers cached` reads on a machine
without the fetched environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.config import BENCH, WORK

CACHE = WORK / "litert-aarch64"
FIGURES = BENCH / "cortex_a_peers.json"
GUEST_SCRIPT = BENCH / "peers" / "litert_invoke.py"
SYSROOT_PACKAGES = ("libc6", "libgcc-s1", "libstdc++6", "gcc-12-base", "python3.11", "python3.11-minimal",
                    "libpython3.11-minimal", "libpython3.11-stdlib", "libexpat1", "zlib1g", "libffi8", "libssl3",
                    "libbz2-1.0", "liblzma5", "libuuid1", "libncursesw6", "libtinfo6", "libreadline8",
                    "libsqlite3-0", "libcrypt1", "libnsl2", "libtirpc3", "libdb5.3", "libzstd1")
WHEELS = ("ai-edge-litert", "numpy", "flatbuffers")
WHEEL_PLATFORM = "manylinux_2_27_aarch64"
INVOKES = 12
MEASURED = slice(2, 12)  # invokes 3-12: the first ones pay for XNNPACK's lazy set-up
# /proc/cpuinfo per emulated core: the MIDR fields and the features QEMU 7.2's model advertises.
ARMV80_FEATURES = "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid"
ARMV82_FEATURES = ARMV80_FEATURES + " atomics fphp asimdhp asimdrdm lrcpc dcpop asimddp"
CORES = {"cortex-a53": ("0xd03", "0x0", "4", ARMV80_FEATURES),
         "cortex-a72": ("0xd08", "0x0", "3", ARMV80_FEATURES),
         "cortex-a76": ("0xd0b", "0x4", "1", ARMV82_FEATURES)}


class PeerError(RuntimeError):
    pass


@dataclass(frozen=True)
class PeerCount:
    instructions: int  # median over the measured invokes, marker overhead subtracted
    spread: tuple[int, int]  # min and max over the measured invokes
    output: np.ndarray | None  # first output of the last inference (None: from FIGURES)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise PeerError(f"{' '.join(cmd[:3])} ... failed: {(proc.stderr or proc.stdout).strip()[-1500:]}")
    return proc


def _ensure_arm64_architecture() -> None:
    foreign = _run(["dpkg", "--print-foreign-architectures"]).stdout.split()
    if "arm64" in foreign:
        return
    if os.geteuid() != 0:
        raise PeerError("dpkg has no arm64 architecture: run `dpkg --add-architecture arm64 && apt-get update` "
                        "as root (it installs nothing; apt-get download needs it)")
    _run(["dpkg", "--add-architecture", "arm64"])
    _run(["apt-get", "update", "-qq"])


def sysroot() -> Path:
    """SYSROOT with Debian's arm64 python3.11 unpacked into it (made once)."""
    root = CACHE / "sysroot"
    if (root / "usr" / "bin" / "python3.11").is_file():
        return root
    _ensure_arm64_architecture()
    debs = CACHE / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    _run(["apt-get", "download", *(f"{p}:arm64" for p in SYSROOT_PACKAGES)], cwd=debs)
    staging = CACHE / "sysroot.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for deb in sorted(debs.glob("*.deb")):
        _run(["dpkg", "-x", str(deb), str(staging)])
    staging.rename(root)
    return root


def site_packages() -> Path:
    """The aarch64 wheels unzipped into one folder for PYTHONPATH (made once)."""
    site = CACHE / "site"
    if (site / "ai_edge_litert").is_dir():
        return site
    wheels = CACHE / "wheels"
    _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
          "--platform", WHEEL_PLATFORM, "--python-version", "3.11", "-d", str(wheels), *WHEELS])
    staging = CACHE / "site.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as z:
            z.extractall(staging)
    staging.rename(site)
    return site


def litert_version() -> str:
    """The fetched wheels' names and versions, else those FIGURES were measured with."""
    names = sorted(p.name for p in (CACHE / "wheels").glob("*.whl"))
    if not names:
        return ", ".join(sorted({f["litert"] for f in _figures()["figures"]}))
    return ", ".join(n.split("-")[0] + " " + n.split("-")[1] for n in names)


def _serve_cpuinfo(root: Path, core: str) -> None:
    part, variant, revision, features = CORES[core]
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc" / "cpuinfo").write_text(
        f"processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: {features}\nCPU implementer\t: 0x41\n"
        f"CPU architecture: 8\nCPU variant\t: {variant}\nCPU part\t: {part}\nCPU revision\t: {revision}\n\n")


def _marks(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().splitlines() if line.strip().isdigit()]


def _digest(model: Path) -> str:
    return hashlib.sha256(model.read_bytes()).hexdigest()[:16]


def _cache_key(model: Path, core: str) -> str:
    digest = _digest(model)
    return hashlib.sha256(f"{digest} {core} {litert_version()} {GUEST_SCRIPT.read_text()}".encode()).hexdigest()[:20]


def measure(model: Path, core: str, plugin: Path) -> PeerCount:
    """LiteRT + XNNPACK's instructions per inference of `model` on the emulated `core`."""
    root, site = sysroot(), site_packages()
    key = _cache_key(model, core)
    done = CACHE / "counts" / key
    if not (done / "result.json").is_file():
        work = CACHE / "counts" / (key + ".partial")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        _serve_cpuinfo(root, core)
        cmd = ["qemu-aarch64", "-L", str(root), "-cpu", core, "-plugin", f"{plugin},out={work / 'marks.txt'}",
               str(root / "usr" / "bin" / "python3.11"), str(GUEST_SCRIPT), str(model), str(INVOKES),
               str(work / "output.npy")]
        _run(cmd, env={**os.environ, "PYTHONPATH": str(site)})
        marks = _marks(work / "marks.txt")
        if len(marks) != 4 * INVOKES:
            raise PeerError(f"{model.name} on {core}: expected {4 * INVOKES} marker counts, got {len(marks)}")
        counts = [(marks[4 * i + 3] - marks[4 * i + 2]) - (marks[4 * i + 1] - marks[4 * i])
                  for i in range(INVOKES)]
        (work / "result.json").write_text(json.dumps({"counts": counts}))
        shutil.rmtree(done, ignore_errors=True)
        work.rename(done)
    count = _load(done)
    _record(model, core, count)
    return count


def _figures() -> dict:
    return json.loads(FIGURES.read_text()) if FIGURES.is_file() else {"figures": []}


def _record(model: Path, core: str, count: PeerCount) -> None:
    """Keep the figure in FIGURES (one entry per model digest and core, one line each, sorted)."""
    data = _figures()
    entry = {"model": model.name, "sha256_16": _digest(model), "core": core, "litert": litert_version(),
             "instructions": count.instructions, "spread": list(count.spread)}
    rows = [f for f in data["figures"] if (f["sha256_16"], f["core"]) != (entry["sha256_16"], core)] + [entry]
    rows.sort(key=lambda f: (f["model"], f["core"]))
    FIGURES.write_text('{"figures": [\n' + ",\n".join(json.dumps(f) for f in rows) + "\n]}\n")


def _load(done: Path) -> PeerCount:
    counts = json.loads((done / "result.json").read_text())["counts"][MEASURED]
    return PeerCount(int(statistics.median(counts)), (min(counts), max(counts)), np.load(done / "output.npy"))


def cached(model: Path, core: str) -> PeerCount | None:
    """The figure an earlier run measured for `model` on `core` (this machine's cache, else
    the committed FIGURES), or None; nothing is run."""
    if (CACHE / "wheels").is_dir():
        done = CACHE / "counts" / _cache_key(model, core)
        if (done / "result.json").is_file():
            return _load(done)
    digest = _digest(model)
    for f in _figures()["figures"]:
        if (f["sha256_16"], f["core"]) == (digest, core):
            return PeerCount(f["instructions"], tuple(f["spread"]), None)
    return None
