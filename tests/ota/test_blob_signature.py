"""Blobs that can be trusted (issue 17): the payload's SHA-256 in the header, reserved bytes
required zero, and signatures — Ed25519 compiled in by `--sign-key`, or a bootloader's hook —
checked before a blob is used. Every probe runs under ASan and UBSan.

Before, a payload edited with its CRC recomputed was accepted, and reserved bytes could hold
anything. Each kind of damage or tampering now has its own code.
"""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from blob_probe import Probe
from test_blob_faults import CODE, OK, campaign, sampled

from codegen.emit import ed25519
from codegen.emit.weights_blob import CRC_OFFSET, HEADER_SIZE, SIGNED_BYTES, blob_bytes, read_header

KEY = bytes(range(1, 33))
OTHER_KEY = bytes(range(101, 133))
HOOK = r"""
#include "m.h"
#include "kiln_ed25519.h"
/* A bootloader's crypto, as a user would plug it in: here Ed25519 with a key of its own. */
static const uint8_t hook_key[32] = {%s};
int m_verify_signature(const uint8_t *header, const uint8_t *digest)
{
    (void)digest; /* covered by the signed bytes 0..95 */
    return kiln_ed25519_verify(header + 96, header, 96, hook_key) ? 0 : 1;
}
"""


def recrc(blob: bytes) -> bytes:
    crc = zlib.crc32(blob[HEADER_SIZE:], zlib.crc32(blob[:CRC_OFFSET]))
    return blob[:CRC_OFFSET] + struct.pack("<I", crc) + blob[HEADER_SIZE:]


def edited(blob: bytes, *, at: int, value: bytes) -> bytes:
    return blob[:at] + value + blob[at + len(value):]


def tampered(blob: bytes) -> dict[str, bytes]:
    """The ways someone with write access to the slot might alter a blob, each consistent with
    as many of the checks as they can recompute without the key."""
    head = read_header(blob)
    payload = bytearray(blob[HEADER_SIZE:])
    payload[len(payload) // 2] ^= 0x40
    payload = bytes(payload)
    new_digest = edited(blob, at=64, value=hashlib.sha256(payload).digest())
    return {
        "payload_crc": recrc(blob[:HEADER_SIZE] + payload),
        "payload_digest_crc": recrc(new_digest[:HEADER_SIZE] + payload),
        "reserved_crc": recrc(edited(blob, at=57, value=b"\x01")),
        "reserved2_crc": recrc(edited(blob, at=170, value=b"\x80")),
        "flag_crc": recrc(edited(blob, at=52, value=struct.pack("<I", head.flags | 4))),
        "stripped_crc": recrc(edited(edited(blob, at=52, value=struct.pack("<I", 0)), at=96, value=bytes(64))),
        "signature_bit_crc": recrc(edited(blob, at=100, value=bytes([blob[100] ^ 1]))),
        "other_key": blob_bytes(blob[HEADER_SIZE:], head.model_id, sign_key=OTHER_KEY),
        "unsigned": blob_bytes(blob[HEADER_SIZE:], head.model_id),
        "right_key": blob_bytes(blob[HEADER_SIZE:], head.model_id, sign_key=KEY),
        "format_1": recrc(edited(blob, at=4, value=struct.pack("<I", 1))),
    }


def answers(probe: Probe, blobs: dict[str, bytes], work: Path) -> dict[str, int]:
    """What loading each blob (in a fresh process: an accepted one changes the weights) returns."""
    codes = {}
    for key, data in blobs.items():
        (work / f"{key}.bin").write_bytes(data)
        _, [(code, same)] = probe.run([f"o {work / key}.bin"])
        assert code == OK or same == 1, f"{key}: a refused blob changed the weights in use"
        codes[key] = code
    return codes


@pytest.fixture(scope="module")
def model(models_dir) -> Path:
    return models_dir / "ad01_int8.tflite"


def test_unsigned_build_checks_digest_and_reserved_bytes(model, tmp_path):
    probe = Probe(model, tmp_path / "p", sanitize=True)
    got = answers(probe, tampered(probe.blob.read_bytes()), tmp_path)
    assert got == {
        "payload_crc": CODE["DIGEST"],  # before: accepted
        "payload_digest_crc": OK,  # without a signature nothing stops someone who recomputes both
        "reserved_crc": CODE["RESERVED"], "reserved2_crc": CODE["RESERVED"], "flag_crc": CODE["RESERVED"],
        "stripped_crc": OK, "signature_bit_crc": OK,  # the unsigned blob: its zero signature, edited or not
        "other_key": OK, "right_key": OK,  # no key in this build: a signature is not checked
        "unsigned": OK, "format_1": CODE["VERSION"],
    }


def test_signed_build_refuses_unsigned_and_wrongly_signed_blobs(model, tmp_path):
    probe = Probe(model, tmp_path / "p", sign_key=KEY, sanitize=True)
    blob = probe.blob.read_bytes()
    head = read_header(blob)
    assert head.signed and ed25519.verify(ed25519.public_key(KEY), blob[:SIGNED_BYTES], head.signature)
    got = answers(probe, tampered(blob), tmp_path)
    assert got == {
        "payload_crc": CODE["DIGEST"], "payload_digest_crc": CODE["SIGNATURE"],
        "reserved_crc": CODE["RESERVED"], "reserved2_crc": CODE["RESERVED"], "flag_crc": CODE["RESERVED"],
        "stripped_crc": CODE["UNSIGNED"], "signature_bit_crc": CODE["SIGNATURE"],
        "other_key": CODE["SIGNATURE"], "unsigned": CODE["UNSIGNED"], "right_key": OK,
        "format_1": CODE["VERSION"],
    }


def test_signed_build_bit_flips_cuts_and_foreign_models(model, models_dir, tmp_path):
    """The OTA campaign on a signed build under ASan: every header bit, sampled payload bits and
    cuts, a blob of another model signed with the same key, and a blob of a wrong version."""
    probe = Probe(model, tmp_path / "p", sign_key=KEY, sanitize=True)
    rng = np.random.default_rng(2)
    flips = list(range(HEADER_SIZE * 8)) + sampled(rng, HEADER_SIZE * 8, probe.size * 8, 150)
    cuts = [0, 1, HEADER_SIZE - 1, HEADER_SIZE, probe.size - 1] + sampled(rng, 2, probe.size - 1, 45)
    campaign(probe, flips, cuts)
    other = Probe(models_dir / "kws_ref_model.tflite", tmp_path / "o", sign_key=KEY)
    _, got = probe.run([f"o {other.blob}"])
    assert got == [(CODE["MODEL"], 1)]


def test_a_bootloader_hook_decides_on_signatures(model, tmp_path):
    hook = tmp_path / "hook.c"
    hook.write_text(HOOK % ", ".join(f"0x{b:02x}" for b in ed25519.public_key(KEY)))
    probe = Probe(model, tmp_path / "p", cflags=("-DM_SIGNATURE_HOOK",), sources=(hook,), sanitize=True)
    blob = probe.blob.read_bytes()  # unsigned: a hook means signatures are required
    head = read_header(blob)
    probe.blob.write_bytes(blob_bytes(blob[HEADER_SIZE:], head.model_id, sign_key=KEY))  # the probe's good blob
    got = answers(probe, {"unsigned": blob,
                          "right_key": blob_bytes(blob[HEADER_SIZE:], head.model_id, sign_key=KEY),
                          "other_key": blob_bytes(blob[HEADER_SIZE:], head.model_id, sign_key=OTHER_KEY)}, tmp_path)
    assert got == {"unsigned": CODE["UNSIGNED"], "right_key": OK, "other_key": CODE["SIGNATURE"]}


def kiln(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_kiln_build_sign_key(model, tmp_path):
    key = tmp_path / "blob.key"
    key.write_text(KEY.hex() + "\n")
    out = tmp_path / "gen"
    proc = kiln("build", model, "--target", "host", "--weights", "blob", "--sign-key", key, "-o", out)
    assert proc.returncode == 0 and "signed" in proc.stdout, proc.stderr
    manifest = json.loads((out / "ad01_int8.manifest.json").read_text())["weights"]
    blob = (out / "ad01_int8.weights.bin").read_bytes()
    assert manifest["signed"] and manifest["public_key"] == ed25519.public_key(KEY).hex()
    assert manifest["sha256"] == hashlib.sha256(blob).hexdigest()
    assert read_header(blob).signed and "#define AD01_INT8_SIGNED_BUILD 1" in (out / "ad01_int8.c").read_text()
    for args, words in ((["--sign-key", key], "--sign-key signs a weights blob"),
                        (["--weights", "blob", "--sign-key", tmp_path / "missing.key"], "cannot read the signing key"),
                        (["--weights", "blob", "--sign-key", model], "not an Ed25519 private key")):
        proc = kiln("build", model, "--target", "host", "-o", tmp_path / "x", *args)
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and words in proc.stderr, proc.stderr
