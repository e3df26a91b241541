"""The Cortex-A targets load as data (compiler, flags, variants, QEMU CPU, cost table), and
`--kernels` restricts a target's kernel variants."""

from __future__ import annotations

import pytest

from codegen.cli import main
from codegen.errors import KilnError
from codegen.targets import load_target, with_kernels

COST_KEYS = {"int8_macs_per_insn", "f32_macs_per_insn", "simd_bytes", "registers", "call_overhead_insns",
             "load_bytes_per_insn", "dcache_bytes", "flash_wait_states"}


@pytest.mark.parametrize("name, cpu, variants", [
    ("cortex-a53", "cortex-a53", ("neon", "reference")),
    ("cortex-a72", "cortex-a72", ("neon", "reference")),
    ("cortex-a55", "cortex-a76", ("neon_dotprod", "neon", "reference")),  # QEMU 7.2 has no A55 model
    ("cortex-a76", "cortex-a76", ("neon_dotprod", "neon", "reference")),
])
def test_cortex_a_targets_load(name, cpu, variants):
    import tomllib

    from codegen.resources import TARGETS

    t = load_target(name)
    assert (t.cc, t.runner, t.qemu_cpu, t.variants) == ("aarch64-linux-gnu-gcc", "qemu-user", cpu, variants)
    assert f"-mcpu={name}" in t.cflags and "-O3" in t.cflags and "-static" in t.ldflags
    cost = tomllib.loads((TARGETS / f"{name}.toml").read_text())["cost"]
    assert set(cost) == COST_KEYS and all(isinstance(v, int) for v in cost.values())
    assert cost["int8_macs_per_insn"] == (16 if "neon_dotprod" in variants else 8)


def test_with_kernels_keeps_the_named_variants_and_reference():
    a55 = load_target("cortex-a55")
    assert with_kernels(a55, ("neon",)).variants == ("neon", "reference")
    assert with_kernels(a55, ("reference",)).variants == ("reference",)
    assert with_kernels(a55, ("neon", "neon_dotprod")).variants == ("neon_dotprod", "neon", "reference")
    with pytest.raises(KilnError, match="no kernel variant 'mve'"):
        with_kernels(a55, ("mve",))


def test_cli_refuses_an_unknown_kernel_variant(capsys, tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(b"")
    assert main(["build", str(model), "--target", "cortex-a53", "--kernels", "neon_dotprod",
                 "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no kernel variant 'neon_dotprod'" in err


def test_missing_tools_name_the_debian_package(monkeypatch):
    import dataclasses

    from codegen.verify import qemu_user

    a53 = load_target("cortex-a53")
    assert "gcc-aarch64-linux-gnu" in qemu_user.missing_tools(dataclasses.replace(a53, cc="no-such-gcc"))
    monkeypatch.setattr(qemu_user, "QEMU_USER", "no-such-qemu")
    reason = qemu_user.missing_tools(dataclasses.replace(a53, cc="python3"))
    assert "qemu-user" in reason and "no-such-qemu" in reason
