"""Fixtures of the Cortex-M tests: skip with the reason when the Arm toolchain, newlib or
QEMU is missing (`make test` installs them), and build the instruction-counting plugin once."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def missing_tools() -> str | None:
    """Why the Cortex-M tests cannot run here, or None."""
    if shutil.which("arm-none-eabi-gcc") is None:
        return "arm-none-eabi-gcc not found (Debian package gcc-arm-none-eabi)"
    libc = subprocess.run(["arm-none-eabi-gcc", "-mthumb", "-mcpu=cortex-m4", "-print-file-name=libc_nano.a"],
                          capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(libc):
        return "newlib for arm-none-eabi not found (Debian package libnewlib-arm-none-eabi)"
    if shutil.which("qemu-system-arm") is None:
        return "qemu-system-arm not found (Debian package qemu-system-arm)"
    return None


@pytest.fixture(scope="session")
def cortex_m() -> None:
    reason = missing_tools()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def insn_plugin(cortex_m, tmp_path_factory):
    """The counting plugin, built with the host's gcc as a shared object."""
    from codegen.verify.profile import build_plugin

    if shutil.which("gcc") is None:
        pytest.skip("the host gcc (to build the QEMU plugin) not found")
    return build_plugin(tmp_path_factory.mktemp("qemu-plugin"))
