"""runtime_c/kiln_sha256.h and kiln_ed25519.h on their own (FIPS 180-4 and RFC 8032 vectors),
and the Python signer codegen/emit/ed25519.py against the same vectors."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np
import pytest

from codegen.emit import ed25519
from codegen.resources import RUNTIME_C
from codegen.verify.toolchain import compile_c

STRICT = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wconversion", "-Wdouble-promotion", "-Wshadow"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]

# FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf")
SHA256_VECTORS = [
    (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    (b"a" * 1_000_000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
]

# RFC 8032, section 7.1: TEST 1, 2, 3 (secret key, public key, message, signature)
ED25519_VECTORS = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]


@pytest.fixture(scope="module")
def crypto(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("crypto")
    exe = work / "crypto"
    compile_c("gcc", [Path(__file__).with_name("crypto_main.c")], exe,
              [*STRICT, "-O1", "-g", "-I", str(RUNTIME_C), *SANITIZE], SANITIZE, work)
    return exe


def ask(exe: Path, lines: list[str]) -> list[str]:
    proc = subprocess.run([str(exe)], input="".join(line + "\n" for line in lines), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_sha256_fips_vectors_and_every_length_around_the_block_size(crypto):
    rng = np.random.default_rng(0)
    messages = [m for m, _ in SHA256_VECTORS] + [rng.integers(0, 256, n, dtype=np.uint8).tobytes()
                                                 for n in list(range(0, 200)) + [1000, 4096, 65537]]
    lines = [f"{op} {m.hex() or '-'}" for m in messages for op in ("s", "c")]
    got = ask(crypto, lines)
    want = [hashlib.sha256(m).hexdigest() for m in messages for _ in ("s", "c")]
    assert got == want
    assert [hashlib.sha256(m).hexdigest() for m, _ in SHA256_VECTORS] == [d for _, d in SHA256_VECTORS]


def test_ed25519_rfc8032_vectors_in_python_and_c(crypto):
    for sk, pk, msg, sig in ED25519_VECTORS:
        assert ed25519.public_key(bytes.fromhex(sk)).hex() == pk
        assert ed25519.sign(bytes.fromhex(sk), bytes.fromhex(msg)).hex() == sig
        assert ed25519.verify(bytes.fromhex(pk), bytes.fromhex(msg), bytes.fromhex(sig))
    assert ask(crypto, [f"v {pk} {msg or '-'} {sig}" for _, pk, msg, sig in ED25519_VECTORS]) == ["1"] * 3


def test_ed25519_refuses_every_altered_signature_message_or_key(crypto):
    rng = np.random.default_rng(1)
    seed = rng.integers(0, 256, 32, dtype=np.uint8).tobytes()
    msg = rng.integers(0, 256, 96, dtype=np.uint8).tobytes()  # a blob header's signed part
    pk, sig = ed25519.public_key(seed), ed25519.sign(seed, msg)
    other = ed25519.public_key(bytes(32))
    order = ed25519.L.to_bytes(32, "little")
    s_plus_l = sig[:32] + (int.from_bytes(sig[32:], "little") + ed25519.L).to_bytes(32, "little")
    cases = [(pk, msg, sig, "1"), (other, msg, sig, "0"), (pk, msg, s_plus_l, "0"),  # S >= L: malleable
             (pk, msg, sig[:32] + order, "0"), (b"\xff" * 32, msg, sig, "0"),  # y >= p: not canonical
             (pk, msg, bytes(64), "0")]
    for bit in rng.choice(64 * 8, 40, replace=False):
        bad = bytearray(sig)
        bad[bit // 8] ^= 1 << (bit % 8)
        cases.append((pk, msg, bytes(bad), "0"))
    for bit in rng.choice(96 * 8, 20, replace=False):
        bad = bytearray(msg)
        bad[bit // 8] ^= 1 << (bit % 8)
        cases.append((pk, bytes(bad), sig, "0"))
    got = ask(crypto, [f"v {k.hex()} {m.hex()} {s.hex()}" for k, m, s, _ in cases])
    assert got == [want for *_, want in cases]
    assert [ed25519.verify(k, m, s) for k, m, s, _ in cases] == [want == "1" for *_, want in cases]
