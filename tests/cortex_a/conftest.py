"""Fixtures of the Cortex-A tests: skip with the reason when the AArch64 cross compiler or
qemu-aarch64 is missing (`make test` installs them), and build the counting plugin once."""

from __future__ import annotations

import shutil

import pytest

from codegen.targets import load_target
from codegen.verify.qemu_user import missing_tools


@pytest.fixture(scope="session")
def cortex_a() -> None:
    reason = missing_tools(load_target("cortex-a53"))
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def insn_plugin(cortex_a, tmp_path_factory):
    """The counting plugin, built with the host's gcc as a shared object."""
    from codegen.verify.profile import build_plugin

    if shutil.which("gcc") is None:
        pytest.skip("the host gcc (to build the QEMU plugin) not found")
    return build_plugin(tmp_path_factory.mktemp("qemu-plugin"))
