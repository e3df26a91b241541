"""runtime_c/kiln_blob.h on its own: its CRC-32 is zlib's, for every length and when chained."""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import numpy as np

from codegen.resources import RUNTIME_C
from codegen.verify.toolchain import compile_c


def test_kiln_crc32_is_zlibs_crc32_for_every_prefix(tmp_path):
    exe = tmp_path / "crc"
    compile_c("gcc", [Path(__file__).with_name("crc_main.c")], exe, ["-O2", "-I", str(RUNTIME_C)], [], tmp_path)
    data = np.random.default_rng(0).integers(0, 256, 300, dtype=np.uint8).tobytes() + bytes(20) + b"\xff" * 20
    out = subprocess.run([str(exe)], input=data, capture_output=True, check=True, timeout=60).stdout.split()
    want = [zlib.crc32(data[:k]) for k in range(len(data) + 1)] + [zlib.crc32(data)]
    assert [int(v, 16) for v in out] == want
