"""`kiln build --weights blob --sign-key KEY`: the blob signed with Ed25519, and the code built
to accept only blobs signed by that key (its public key compiled in, unsigned blobs refused).

The key file holds the 32-byte private key (seed), raw or as 64 hexadecimal digits. A later
blob-only update (same model id) is built with the same key and accepted by the code in the
field; a blob signed by another key, unsigned, or edited after signing is refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from codegen.emit import ed25519
from codegen.emit.weights_blob import HEADER_SIZE, blob_bytes, blob_file, read_header, weights_manifest
from codegen.errors import KilnError
from codegen.lower.context import c_identifier


def read_sign_key(path: Path) -> bytes:
    """The 32-byte private key in `path`; KilnError naming the file otherwise."""
    try:
        if Path(path).stat().st_size > 4096:
            raise KilnError("not an Ed25519 private key: more than 4 KiB", where=str(path))
        data = Path(path).read_bytes()
    except OSError as err:
        raise KilnError(f"cannot read the signing key: {err.strerror}", where=str(path)) from None
    text = data.strip()
    if re.fullmatch(rb"[0-9a-fA-F]{64}", text):
        return bytes.fromhex(text.decode())
    if len(data) == 32:
        return data
    raise KilnError("not an Ed25519 private key: give 32 random bytes or 64 hexadecimal digits "
                    f"({len(data)} bytes found)", where=str(path))


def sign_build(files: dict[str, str | bytes], manifest: dict, name: str, key: bytes) -> dict[str, str | bytes]:
    """The files of a --weights blob build with the blob signed, the public key compiled into
    N.c (which then refuses unsigned blobs) and the manifest's weights section updated."""
    blob = files[blob_file(name)]
    head = read_header(blob)
    signed = blob_bytes(blob[HEADER_SIZE:], head.model_id, (head.min_code_abi, head.max_code_abi), sign_key=key)
    public = ed25519.public_key(key)
    guard = c_identifier(name).upper()
    source = files[f"{name}.c"]
    marker = f"#define {guard}_SIGNED_BUILD 0\n"
    key_line = f"static const uint8_t {name}_blob_public_key[32] = {{0}};\n"
    if source.count(marker) != 1 or source.count(key_line) != 1:
        raise AssertionError(f"{name}.c has no unsigned-build marker to fill in")
    key_bytes = ", ".join(f"0x{b:02x}" for b in public)
    source = source.replace(marker, f"#define {guard}_SIGNED_BUILD 1\n").replace(
        key_line, f"static const uint8_t {name}_blob_public_key[32] = {{{key_bytes}}};\n")
    weights = {**manifest["weights"], **weights_manifest(signed, name, manifest["weights"]["code_bytes_estimate"]),
               "public_key": public.hex()}
    manifest["weights"] = weights
    return {**files, blob_file(name): signed, f"{name}.c": source,
            f"{name}.manifest.json": json.dumps(manifest, indent=2, sort_keys=True) + "\n"}
