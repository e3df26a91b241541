"""Ed25519 signatures (RFC 8032, section 5.1) in plain Python, to sign weights blobs
(`kiln build --weights blob --sign-key KEY`); the C side verifies (runtime_c/kiln_ed25519.h).

Kiln takes no dependency for this: signing one blob is a handful of scalar multiplications on
Python integers (about 10 ms). Not constant-time — it runs on the build machine, which holds
the key anyway, never on a device. Tested with the RFC 8032 test vectors.
"""

from __future__ import annotations

import hashlib

P = 2 ** 255 - 19
L = 2 ** 252 + 27742317777372353535851937790883648493  # order of the base point
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)


def _recover_x(y: int, sign: int) -> int:
    xx = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    x = pow(xx, (P + 3) // 8, P)
    if (x * x - xx) % P:
        x = x * SQRT_M1 % P
    if (x * x - xx) % P:
        raise ValueError("not a curve point")
    return P - x if (x & 1) != sign else x


_BY = 4 * pow(5, P - 2, P) % P
_BX = _recover_x(_BY, 0)
BASE = (_BX, _BY, 1, _BX * _BY % P)  # extended coordinates (X, Y, Z, T)


def _add(p: tuple, q: tuple) -> tuple:
    """RFC 8032, 5.1.4: the unified addition in extended coordinates."""
    a = (p[1] - p[0]) * (q[1] - q[0]) % P
    b = (p[1] + p[0]) * (q[1] + q[0]) % P
    c = 2 * p[3] * q[3] * D % P
    d = 2 * p[2] * q[2] % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _multiply(s: int, p: tuple) -> tuple:
    q = (0, 1, 1, 0)
    while s:
        if s & 1:
            q = _add(q, p)
        p = _add(p, p)
        s >>= 1
    return q


def _encode(p: tuple) -> bytes:
    zi = pow(p[2], P - 2, P)
    x, y = p[0] * zi % P, p[1] * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _secret(seed: bytes) -> tuple[int, bytes]:
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a = (a & ((1 << 254) - 8)) | (1 << 254)  # clamped
    return a, h[32:]


def public_key(seed: bytes) -> bytes:
    """The 32-byte public key of a 32-byte private key (seed)."""
    if len(seed) != 32:
        raise ValueError("an Ed25519 private key is 32 bytes")
    return _encode(_multiply(_secret(seed)[0], BASE))


def sign(seed: bytes, message: bytes) -> bytes:
    """The 64-byte signature R || S of `message` (RFC 8032, 5.1.6)."""
    a, prefix = _secret(seed)
    key = _encode(_multiply(a, BASE))
    r = int.from_bytes(hashlib.sha512(prefix + message).digest(), "little") % L
    big_r = _encode(_multiply(r, BASE))
    k = int.from_bytes(hashlib.sha512(big_r + key + message).digest(), "little") % L
    return big_r + ((r + k * a) % L).to_bytes(32, "little")


def verify(key: bytes, message: bytes, signature: bytes) -> bool:
    """RFC 8032, 5.1.7 (used by tests and `kiln` to check what it signed)."""
    if len(key) != 32 or len(signature) != 64:
        return False
    s = int.from_bytes(signature[32:], "little")
    y = int.from_bytes(key, "little")
    if s >= L or (y & ((1 << 255) - 1)) >= P:
        return False
    try:
        ax = _recover_x(y & ((1 << 255) - 1), y >> 255)
    except ValueError:
        return False
    ay = y & ((1 << 255) - 1)
    a = (ax, ay, 1, ax * ay % P)
    k = int.from_bytes(hashlib.sha512(signature[:32] + key + message).digest(), "little") % L
    try:
        r = _decode(signature[:32])
    except ValueError:
        return False
    return _encode(_multiply(s, BASE)) == _encode(_add(_multiply(k, a), r))


def _decode(data: bytes) -> tuple:
    y = int.from_bytes(data, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    if y >= P:
        raise ValueError("not canonical")
    x = _recover_x(y, sign)
    return (x, y, 1, x * y % P)
