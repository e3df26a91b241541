"""`--weights blob`: every constant of the model in one binary file, `N.weights.bin`, apart
from the code, so that code image and weights can be flashed and updated independently (OTA).

File format, version 2 (all integers little-endian; runtime_c/kiln_blob.h reads it):

    offset size field
         0    4 magic "KLNB"
         4    4 format version = 2
         8    4 min code ABI  } the range of code ABI versions (CODE_ABI below) that may read
        12    4 max code ABI  } this payload; the code refuses a blob whose range excludes its own
        16   32 model id: SHA-256 of the code's view of the payload (see `model_id`)
        48    4 payload bytes
        52    4 flags: bit 0 = signed; every other bit zero
        56    8 reserved, zero
        64   32 SHA-256 of the payload
        96   64 Ed25519 signature of bytes 0..95 (blob_sign.py), zero when unsigned
       160   28 reserved, zero
       188    4 CRC-32 (zlib's) of bytes 0..187, continued over the payload
       192      payload: each constant at an offset that is a multiple of 16 (zero padding)

The generated code holds no weights. `N_load_weights(blob, size)` checks a blob in place (given
by address, e.g. a flash slot, or by a buffer) and only when every check passes points the
kernels at its payload; otherwise it returns one of the N_ERR_BLOB_* codes and the weights in
use stay as they were. `N_run` returns N_ERR_NO_WEIGHTS until a blob was accepted. Checks, in
order, so a single damaged field gives one known code: fewer than 192 bytes -> TRUNCATED, an
address not 16-byte aligned -> ALIGN, magic -> MAGIC, format version -> VERSION, a reserved
byte or flag bit not zero -> RESERVED, model id -> MODEL, the code's ABI outside [min, max] ->
ABI, declared payload above the bytes given -> TRUNCATED, below them or not the payload size the
code expects -> SIZE, CRC -> CRC (accidents: every other single-bit error), the payload's
SHA-256 -> DIGEST (a payload edited on purpose with the CRC recomputed), then the signature:
a signed blob whose signature does not verify -> SIGNATURE, an unsigned blob where the code
requires signatures (built with --sign-key, or N_REQUIRE_SIGNATURE) -> UNSIGNED.

The CRC and the digest protect against damage and against an edit that forgets the digest;
only the signature protects against someone who can write the slot and recompute both.

The model id hashes what the code assumes about the payload: the layout (name, type, length
and offset of every constant) and every kernel call with its template and its parameters
compiled into the code (quantization multipliers, shapes, activation bounds). Weights that
change only values inside the blob keep the id, so a retrained float model (or an int8 one
with the same quantization constants in code) is an update of the blob alone; a blob of any
other model, or built for other kernels (another target's repacked layout), is refused.

Costs of format 1, measured on the MLPerf Tiny KWS model for Cortex-M4 (arm-none-eabi-gcc -O2):
the code image drops from 41,652 B to 9,344 B of flash (the 33,792 B blob goes to its own slot);
the checks, the CRC and the binding add about 1.3 KiB of code; the parameter structs of calls
that point at constants move from flash to RAM (+816 B of .bss); an inference runs the same
instructions. Format 2 adds SHA-256 of the payload to the checks (and Ed25519 verification in
signed builds); not re-measured on the board yet.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from dataclasses import dataclass

from codegen.emit import ed25519
from codegen.emit.literals import c_float, c_int
from codegen.ir.types import C_TYPES
from codegen.lower.context import LowerContext
from codegen.lower.kernel import ConstArray, KernelCall
from codegen.kernels.select import template_path

MAGIC = b"KLNB"
FORMAT_VERSION = 2
HEADER_SIZE = 192
FLAG_SIGNED = 1
SIGNED_BYTES = 96  # the signature covers header bytes 0..95, digest of the payload included
CRC_OFFSET = 188
ALIGN = 16
# Version of the contract between generated code and payload (how kernels read constants):
# raised when Kiln changes it, so that old blobs are refused by new code and the reverse.
CODE_ABI = 1
_SIGNED_PART = struct.Struct("<4sIII32sII8s32s")  # bytes 0..95
_HEAD = struct.Struct("<4sIII32sII8s32s64s28s")  # everything before the CRC field (188 bytes)

# Error codes of the generated N_load_weights / N_run; the same values as runtime_c/kiln_blob.h.
ERRORS = (
    ("NO_WEIGHTS", 20, "a run before any blob was accepted (load_weights)"),
    ("BLOB_TRUNCATED", 21, "fewer bytes than the header says (or than a header)"),
    ("BLOB_ALIGN", 22, "the blob does not start at a 16-byte boundary"),
    ("BLOB_MAGIC", 23, "not a Kiln weights blob"),
    ("BLOB_VERSION", 24, "a blob format this code does not read"),
    ("BLOB_MODEL", 25, "the weights of another model, or of other kernels"),
    ("BLOB_ABI", 26, "the blob does not accept this code's ABI version"),
    ("BLOB_SIZE", 27, "more bytes than the header says, or a payload of the wrong size"),
    ("BLOB_CRC", 28, "damaged: the CRC-32 does not match"),
    ("BLOB_RESERVED", 29, "a reserved header byte or flag bit is not zero"),
    ("BLOB_DIGEST", 30, "the payload is not the one the header's SHA-256 names"),
    ("BLOB_SIGNATURE", 31, "signed, but the signature does not verify"),
    ("BLOB_UNSIGNED", 32, "not signed, and this code accepts signed blobs only"),
)
ERROR_CODES = {name: code for name, code, _ in ERRORS}


@dataclass(frozen=True)
class BlobConst:
    symbol: str
    ctype: str
    offset: int  # in the payload


@dataclass(frozen=True)
class BlobError:
    name: str  # after the N_ERR_ prefix
    code: int
    meaning: str


@dataclass(frozen=True)
class BlobCtx:
    """What the templates need in blob mode."""

    file: str  # N.weights.bin
    consts: tuple[BlobConst, ...]
    model_id_lines: tuple[str, ...]  # C initializer of the 32 id bytes
    model_id_hex: str
    payload_size: int
    blob_size: int  # header and payload
    code_abi: int
    errors: tuple[BlobError, ...]


@dataclass(frozen=True)
class BlobHeader:
    magic: bytes
    format_version: int
    min_code_abi: int
    max_code_abi: int
    model_id: bytes
    payload_size: int
    flags: int
    reserved: bytes
    digest: bytes
    signature: bytes
    reserved2: bytes
    crc32: int

    @property
    def signed(self) -> bool:
        return bool(self.flags & FLAG_SIGNED)


def blob_file(name: str) -> str:
    return f"{name}.weights.bin"


def payload_offsets(consts: list[ConstArray]) -> tuple[list[int], int]:
    """Offset of each constant in the payload (each at a multiple of ALIGN) and the payload size."""
    offsets, end = [], 0
    for c in consts:
        start = -(-end // ALIGN) * ALIGN
        offsets.append(start)
        end = start + c.nbytes
    return offsets, end


def payload_bytes(consts: list[ConstArray], offsets: list[int], size: int) -> bytes:
    out = bytearray(size)
    for c, off in zip(consts, offsets):
        raw = c.data.astype(c.data.dtype.newbyteorder("<")).tobytes()
        out[off:off + len(raw)] = raw
    return bytes(out)


def _describe(value) -> object:
    if isinstance(value, ConstArray):
        return f"const:{value.name}"
    if isinstance(value, tuple):
        return [int(v) for v in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return c_float(value)
    if isinstance(value, int):
        return c_int(value)
    return "tensor"  # an arena or caller buffer: where it lives does not concern the blob


def _kernel_id(call: KernelCall) -> str:
    """The kernel of a call in the code's view: the template path its name stands for in its
    variant (a generated kernel's stem, without its instance digest; a family member's own
    name), as blob format 2 defines it."""
    return template_path(call.kernel.partition("__")[0], call.variant)


def model_id(ctx: LowerContext, calls: list[KernelCall], offsets: list[int], size: int) -> bytes:
    """SHA-256 of the code's view of the payload: layout, calls, their templates and parameters."""
    g = ctx.g
    view = {
        "format": FORMAT_VERSION, "align": ALIGN, "payload": size,
        "consts": [[c.name, c.dtype, int(c.data.size), off] for c, off in zip(ctx.consts, offsets)],
        "calls": [[call.function, _kernel_id(call),
                   [[k, _describe(v)] for k, v in sorted(call.params.items())],
                   [_describe(a) for a in call.args]] for call in calls],
        "io": [[g.values[n].dtype, list(g.values[n].shape)] for n in g.inputs + g.outputs],
    }
    return hashlib.sha256(json.dumps(view, sort_keys=True).encode()).digest()


def blob_bytes(payload: bytes, ident: bytes, abi_range: tuple[int, int] = (CODE_ABI, CODE_ABI),
               sign_key: bytes | None = None) -> bytes:
    """Header and payload; `abi_range`: the code ABI versions that may read it; `sign_key`: the
    32-byte Ed25519 private key to sign it with (None: unsigned)."""
    signed_part = _SIGNED_PART.pack(MAGIC, FORMAT_VERSION, abi_range[0], abi_range[1], ident, len(payload),
                                    FLAG_SIGNED if sign_key else 0, bytes(8), hashlib.sha256(payload).digest())
    signature = ed25519.sign(sign_key, signed_part) if sign_key else bytes(64)
    head = signed_part + signature + bytes(28)
    crc = zlib.crc32(payload, zlib.crc32(head))
    return head + struct.pack("<I", crc) + payload


def read_header(blob: bytes) -> BlobHeader:
    """The header fields, unchecked (the C code is what checks)."""
    fields = _HEAD.unpack_from(blob, 0)
    (crc,) = struct.unpack_from("<I", blob, CRC_OFFSET)
    return BlobHeader(*fields, crc32=crc)


def build_blob(ctx: LowerContext, calls: list[KernelCall], name: str,
               symbol) -> tuple[BlobCtx, bytes]:
    """The template context and the blob file for a lowered program (`symbol`: C name of a constant)."""
    offsets, size = payload_offsets(ctx.consts)
    ident = model_id(ctx, calls, offsets, size)
    id_bytes = [f"0x{b:02x}" for b in ident]
    blob_ctx = BlobCtx(
        file=blob_file(name),
        consts=tuple(BlobConst(symbol(c), C_TYPES[c.dtype], off) for c, off in zip(ctx.consts, offsets)),
        model_id_lines=tuple(", ".join(id_bytes[i:i + 16]) for i in range(0, len(id_bytes), 16)),
        model_id_hex=ident.hex(), payload_size=size, blob_size=HEADER_SIZE + size, code_abi=CODE_ABI,
        errors=tuple(BlobError(*e) for e in ERRORS))
    return blob_ctx, blob_bytes(payload_bytes(ctx.consts, offsets, size), ident)


def weights_manifest(blob: bytes, name: str, code_bytes_estimate: int) -> dict:
    """The manifest's `weights` section: the blob (its own flash slot) apart from the code image,
    which holds no constant array; its size is codegen.budget's estimate (a firmware build measures it)."""
    head = read_header(blob)
    return {
        "mode": "blob",
        "blob_file": blob_file(name),
        "blob_bytes": len(blob),
        "header_bytes": HEADER_SIZE,
        "payload_bytes": head.payload_size,
        "code_constant_bytes": 0,
        "code_bytes_estimate": code_bytes_estimate,
        "sha256": hashlib.sha256(blob).hexdigest(),
        "crc32": f"0x{head.crc32:08x}",
        "payload_sha256": head.digest.hex(),
        "signed": head.signed,
        "model_id": head.model_id.hex(),
        "format_version": head.format_version,
        "code_abi": CODE_ABI,
        "accepts_code_abi": [head.min_code_abi, head.max_code_abi],
        "alignment": ALIGN,
    }
