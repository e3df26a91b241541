"""The bench's same-run peer measurement (bench/peers/tflm_firmware.py) refuses firmware it cannot
vouch for, and the streaming section (bench/cortex_m_streaming.py) compares what it is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import cortex_m_streaming
from bench.peers import tflm_firmware


def test_peer_elf_is_named_by_target_and_model_stem(tmp_path: Path):
    assert tflm_firmware.peer_elf(tmp_path, "cortex-m7", Path("x/kws_ref_model.tflite")) == \
        tmp_path / "cortex-m7" / "kws_ref_model.elf"


def test_missing_firmware_is_named(tmp_path: Path):
    model = tmp_path / "m.tflite"
    model.write_bytes(b"TFL3 model bytes")
    with pytest.raises(tflm_firmware.PeerFirmwareError, match=r"no peer firmware .*m\.elf"):
        tflm_firmware.measure(tmp_path / "cortex-m4" / "m.elf", model, "cortex-m4", tmp_path / "plugin.so")


def test_firmware_built_from_another_model_is_refused(tmp_path: Path):
    model = tmp_path / "m.tflite"
    model.write_bytes(b"TFL3 the model as it is now")
    elf = tmp_path / "m.elf"
    elf.write_bytes(b"\x7fELF ... TFL3 the model as it was before ...")
    with pytest.raises(tflm_firmware.PeerFirmwareError, match="does not embed m.tflite"):
        tflm_firmware.measure(elf, model, "cortex-m4", tmp_path / "plugin.so")


def test_streaming_section_compares_instructions_and_ram():
    kiln = {"cortex-m4": (10_000, 300, 150), "cortex-m7": (11_000, 300, 150)}
    peers = {"cortex-m4": {cortex_m_streaming.NAME: {"instructions": 40_000, "arena": 2_000, "variable_arena": 100}}}
    lines = cortex_m_streaming.section(kiln, peers)
    m4 = next(line for line in lines if line.startswith("| cortex-m4"))
    assert "| 10,000 | 40,000 | 0.25x |" in m4
    assert "300 + 150 = 450 | 2,000 + 100 = 2,100 | 0.21x |" in m4
    m7 = next(line for line in lines if line.startswith("| cortex-m7"))
    assert "n/a (not measured)" in m7 and "300 + 150 = 450" in m7
