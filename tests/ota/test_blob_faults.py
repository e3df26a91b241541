"""Fault injection on weights blobs (--weights blob): every damaged, truncated or foreign blob
is refused with the code its damage calls for, and the weights in use stay in use.

One probe (probe.c.j2) is built per model and answers many load attempts in one process.
The default run samples (every header bit, 200 payload bits, 100 truncations); the `slow`
run tries 1,000 payload bits and 1,000 truncation points on two MLPerf Tiny models.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import onnx
import pytest
from blob_probe import Probe
from onnx_models import cnn

from codegen.emit.weights_blob import CODE_ABI, ERROR_CODES, HEADER_SIZE, blob_bytes, read_header

OK = 0
CODE = {k.removeprefix("BLOB_"): v for k, v in ERROR_CODES.items()}


def expected_for_flip(blob: bytes, bit: int) -> int:
    """The code a single flipped bit must give, from the field it lands in (kiln_blob.h's order)."""
    byte = bit // 8
    flipped = bytearray(blob)
    flipped[byte] ^= 1 << (bit % 8)
    head = read_header(bytes(flipped))
    if byte < 4:
        return CODE["MAGIC"]
    if byte < 8:
        return CODE["VERSION"]
    if byte < 16:  # the accepted ABI range: refused only when it no longer holds this code's ABI
        return CODE["CRC"] if head.min_code_abi <= CODE_ABI <= head.max_code_abi else CODE["ABI"]
    if byte < 48:
        return CODE["MODEL"]
    if byte < 52:  # the declared payload size: above the bytes given reads as a truncation
        return CODE["TRUNCATED"] if head.payload_size > len(blob) - HEADER_SIZE else CODE["SIZE"]
    if byte < 56:  # flags: the signed bit is covered by the CRC, the others must be zero
        return CODE["CRC"] if bit == 52 * 8 else CODE["RESERVED"]
    if byte < 64 or 160 <= byte < 188:
        return CODE["RESERVED"]
    return CODE["CRC"]  # digest, signature, the CRC field, the payload


def campaign(probe: Probe, flips: list[int], cuts: list[int]) -> None:
    blob = probe.blob.read_bytes()
    commands = [f"f {b}" for b in flips] + [f"t {n}" for n in cuts] + ["k"]
    head, answers = probe.run(commands)
    assert head["noweights"] == str(CODE["NO_WEIGHTS"])
    assert head["load"] == str(OK)
    assert int(head["crc"], 16) == zlib.crc32(blob)
    wrong = [(cmd, code, expected_for_flip(blob, int(cmd[2:])) if cmd[0] == "f" else CODE["TRUNCATED"])
             for cmd, (code, _) in zip(commands[:-1], answers)]
    wrong = [w for w in wrong if w[1] != w[2]]
    assert not wrong, f"{len(wrong)} attempts gave another code (command, got, expected): {wrong[:10]}"
    assert all(same == 1 for _, same in answers), "a refused blob changed the weights in use"
    assert answers[-1] == (OK, 1), "an intact copy of the blob was refused"


def sampled(rng: np.random.Generator, start: int, stop: int, count: int) -> list[int]:
    return sorted(int(v) for v in rng.choice(np.arange(start, stop), size=min(count, stop - start), replace=False))


@pytest.fixture(scope="module")
def ad01(models_dir, tmp_path_factory) -> Probe:
    return Probe(models_dir / "ad01_int8.tflite", tmp_path_factory.mktemp("ad01"))


def test_every_header_bit_and_sampled_payload_bits_and_cuts_are_refused(ad01):
    rng = np.random.default_rng(0)
    flips = list(range(HEADER_SIZE * 8)) + sampled(rng, HEADER_SIZE * 8, ad01.size * 8, 200)
    cuts = [0, 1, HEADER_SIZE - 1, HEADER_SIZE, ad01.size - 1] + sampled(rng, 2, ad01.size - 1, 95)
    campaign(ad01, flips, cuts)


def test_foreign_misaligned_and_out_of_range_blobs_are_refused(ad01, tmp_path):
    model = tmp_path / "cnn.onnx"
    onnx.save(cnn(), model)
    other = Probe(model, tmp_path / "cnn", name="m")  # same C name, another model
    blob = ad01.blob.read_bytes()
    head = read_header(blob)
    payload = blob[HEADER_SIZE:]
    variants = {
        "abi_newer": (blob_bytes(payload, head.model_id, (CODE_ABI + 1, CODE_ABI + 2)), CODE["ABI"]),
        "abi_older": (blob_bytes(payload, head.model_id, (0, CODE_ABI - 1)), CODE["ABI"]),
        "abi_wide": (blob_bytes(payload, head.model_id, (0, 7)), OK),
        "short_payload": (blob_bytes(payload[:-16], head.model_id), CODE["SIZE"]),
        "trailing_bytes": (blob + bytes(16), CODE["SIZE"]),
        "format_1": (blob[:4] + struct.pack("<I", 1) + blob[8:], CODE["VERSION"]),
    }
    for key, (data, _) in variants.items():
        (tmp_path / f"{key}.bin").write_bytes(data)
    commands = [f"o {other.blob}", "a"] + [f"o {tmp_path / key}.bin" for key in variants]
    _, answers = ad01.run(commands)
    assert answers[0] == (CODE["MODEL"], 1)
    assert answers[1] == (CODE["ALIGN"], 1)
    assert [code for code, _ in answers[2:]] == [want for _, want in variants.values()]
    assert all(same == 1 for _, same in answers)
    _, back = other.run([f"o {ad01.blob}"])
    assert back == [(CODE["MODEL"], 1)]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["ad01_int8", "kws_ref_model"])
def test_thousand_payload_flips_and_thousand_cuts(models_dir, tmp_path, model):
    probe = Probe(models_dir / f"{model}.tflite", tmp_path)
    rng = np.random.default_rng(1)
    flips = list(range(HEADER_SIZE * 8)) + sampled(rng, HEADER_SIZE * 8, probe.size * 8, 1000)
    campaign(probe, flips, sampled(rng, 0, probe.size, 1000))
