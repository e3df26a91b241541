"""TFLite Micro + CMSIS-NN measured in the bench's own run: prebuilt peer firmware (one ELF per
model and target, built outside the repository as bench/peers/README.md says) run on the same
QEMU board under the same counting plugin as Kiln's firmware.

The folder given to `--peer-firmware DIR` holds `DIR/<target>/<model>.elf`: <target> a Kiln
target (cortex-m4, cortex-m7, cortex-m55), <model> the stem of the `.tflite` file the firmware
embeds. Each firmware runs `Invoke()` twice, each between two profiling markers (0xBF70), and
prints `peer-arena N`, `peer-variable-arena N` (resource variables' allocator; 0 without) and
`kiln-stack-bytes N` through semihosting. The figures kept are those of the second `Invoke()`
(the first runs one-time set-up, and a model's CALL_ONCE initialisation).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

from codegen.targets import load_target
from codegen.verify.firmware import board_of, elf_sizes, tool
from codegen.verify.qemu import qemu_command

RUN_TIMEOUT_S = 900
MARKERS = 4  # two Invoke()s, a marker before and after each


class PeerFirmwareError(RuntimeError):
    pass


def peer_elf(folder: Path, target: str, model: Path) -> Path:
    return folder / target / f"{model.stem}.elf"


def _figure(text: str, label: str, elf: Path) -> int:
    m = re.search(rf"{label} (\d+)", text)
    if m is None:
        raise PeerFirmwareError(f"{elf.name}: the firmware printed no '{label}'")
    return int(m.group(1))


def measure(elf: Path, model: Path, target: str, plugin: Path) -> dict[str, int]:
    """Instructions of the second Invoke(), smallest arena (and resource-variable arena), sizes
    (arm-none-eabi-size -A, as Kiln's firmware is counted) and stack of one peer firmware."""
    if not elf.is_file():
        raise PeerFirmwareError(f"no peer firmware {elf} (expected <folder>/<target>/<model stem>.elf)")
    if model.read_bytes() not in elf.read_bytes():
        raise PeerFirmwareError(f"{elf} does not embed {model.name} as it is now: rebuild it from this model")
    t = load_target(target)
    with tempfile.TemporaryDirectory(prefix="kiln-peer-") as tmp:
        work = Path(tmp)
        marks = work / "marks.txt"
        cmd = qemu_command(board_of(t), elf.resolve(), [str(plugin), f"out={marks}"])
        proc = subprocess.run(cmd, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S)
        text = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise PeerFirmwareError(f"{elf.name} on {target} exited with {proc.returncode}: {text.strip()[-500:]}")
        counts = [int(line) for line in marks.read_text().splitlines() if line.strip().isdigit()]
        sizes = elf_sizes(tool(t, "size"), [elf.resolve()], work)
    if len(counts) != MARKERS:
        raise PeerFirmwareError(f"{elf.name}: the plugin saw {len(counts)} markers, expected {MARKERS}")
    figures = {"instructions": counts[3] - counts[2], "first_invoke": counts[1] - counts[0],
               "arena": _figure(text, "peer-arena", elf), "text": sizes.text, "rodata": sizes.rodata,
               "data": sizes.data, "bss": sizes.bss, "stack": _figure(text, "kiln-stack-bytes", elf)}
    variables = _figure(text, "peer-variable-arena", elf)
    return figures | ({"variable_arena": variables} if variables else {})


def measure_into(peers: dict, folder: Path, models: list[tuple[str, Path]], targets: list[str],
                 plugin: Path) -> set[str]:
    """Update `peers` ({target: {model name: figures}}) with every model measured from `folder`
    on every target that has a folder there; the targets measured."""
    if not folder.is_dir():
        raise PeerFirmwareError(f"no peer firmware folder {folder}")
    measured = set()
    for target in targets:
        if not (folder / target).is_dir():
            print(f"no peer firmware for {target} in {folder}: its figures stay as they were", flush=True)
            continue
        measured.add(target)
        for name, model in models:
            figures = measure(peer_elf(folder, target, model), model, target, plugin)
            peers.setdefault(target, {})[name] = figures
            print(f"{'TFLM + CMSIS-NN':20s} {name:20s} {target:11s} {figures['instructions']:>12,}  "
                  f"arena {figures['arena']:,}", flush=True)
    return measured


def load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def record(path: Path, peers: dict, models: list[tuple[str, Path]], targets: set[str]) -> None:
    """Write the figures of `models` on `targets` into the JSON file, keeping every other entry as
    the file has it now (bench.cortex_m and bench.cortex_m_extra may run side by side)."""
    current = load(path)
    for target in targets:
        for name, _ in models:
            current.setdefault(target, {})[name] = peers[target][name]
    path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
