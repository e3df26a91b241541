"""Run generated code on an emulated Cortex-M board: build the firmware, run it in
qemu-system-arm with semihosting, read back the outputs it wrote and its exit status.

Exit statuses of the firmware (boards/cortex_m/startup.c, templates/harness/cortex_m_main.c.j2):
0 done, 2 the output file could not be written, 3 the model returned an error, 4 a fault.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codegen import progress
from codegen.errors import KilnError
from codegen.targets import Target
from codegen.targets.boards import Board
from codegen.verify.firmware import (OUTPUT_FILE, Firmware, board_of, build_firmware, harness_context,
                                     read_outputs)

QEMU = "qemu-system-arm"
RUN_TIMEOUT_S = 900
EXIT_MEANINGS = {2: "could not write its outputs", 3: "the model returned an error", 4: "faulted"}


class FirmwareError(RuntimeError):
    """The firmware did not finish normally: a bug in Kiln or in the generated code."""


@dataclass(frozen=True)
class QemuRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stack_bytes(self) -> int | None:
        """The stack high-water mark the harness reports at the end of a run (semihosting
        console text: QEMU 7.2 writes it to stderr)."""
        m = re.search(r"kiln-stack-bytes (\d+)", self.stdout + self.stderr)
        return int(m.group(1)) if m else None


def qemu_command(board: Board, elf: Path, plugin: list[str] | None = None) -> list[str]:
    cmd = [QEMU, "-M", board.qemu_machine, "-cpu", board.qemu_cpu, "-nographic",
           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
    if plugin:
        cmd += ["-plugin", ",".join(plugin)]
    return cmd


def run_firmware(fw: Firmware, work: Path, *, plugin: list[str] | None = None,
                 timeout: float = RUN_TIMEOUT_S) -> QemuRun:
    """Run the firmware to its end in `work` (where it writes its output file)."""
    if shutil.which(QEMU) is None:
        raise KilnError(f"'{QEMU}' not found; install it (Debian: apt-get install qemu-system-arm)")
    cmd = qemu_command(fw.board, fw.elf, plugin)
    try:
        proc = subprocess.run(cmd, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FirmwareError(f"the firmware did not finish within {timeout:g} s on {fw.board.qemu_machine}") from None
    run = QemuRun(proc.returncode, proc.stdout, proc.stderr)
    if run.returncode != 0:
        meaning = EXIT_MEANINGS.get(run.returncode, "failed")
        raise FirmwareError(f"the firmware {meaning} (exit status {run.returncode}) on {fw.board.qemu_machine}: "
                            f"{(run.stdout + run.stderr).strip()[-2000:]}")
    return run


def samples_per_firmware(manifest: dict, board: Board, count: int) -> int:
    """How many samples one firmware image holds: all of them, or what the board's sample
    memory takes (the rest run in further images)."""
    per = harness_context(manifest, board, 1).sample_bytes
    if board.ext is None:
        return count  # the samples share flash with the model: the linker says if they fit
    if per > board.ext.length:
        raise KilnError(f"one sample ({per:,} B) does not fit the sample memory of board '{board.name}' "
                        f"({board.ext.length:,} B)")
    return max(1, min(count, board.ext.length // per))


def run_generated(files: dict[str, str], name: str, samples: list[dict[str, np.ndarray]], target: Target, *,
                  timeout: float = RUN_TIMEOUT_S) -> list[dict[str, np.ndarray]]:
    """Build the generated files into firmware with the samples linked in, run it on the target's
    emulated board, and return the outputs of each sample by graph output name."""
    manifest = json.loads(files[f"{name}.manifest.json"])
    batch = samples_per_firmware(manifest, board_of(target), len(samples))
    results: list[dict[str, np.ndarray]] = []
    for start in range(0, len(samples), batch):
        chunk = samples[start:start + batch]
        with tempfile.TemporaryDirectory(prefix="kiln-qemu-") as tmp:
            work = Path(tmp)
            with progress.step(f"building the firmware ({target.cc})"):
                fw = build_firmware(files, name, target, chunk, work)
            with progress.step(f"running in QEMU ({fw.board.name}): samples {start + 1}-{start + len(chunk)} "
                               f"of {len(samples)}"):
                run_firmware(fw, work, timeout=timeout)
            results += read_outputs((work / OUTPUT_FILE).read_bytes(), fw.harness, len(chunk))
    return results
