"""Reading a user's `.npy` data file (`kiln run --input`) without pickle and within its size.

`numpy.load` guesses the format, and on a file that is not an array (a text file, /etc/passwd)
answers that it "cannot load pickled data when allow_pickle=False" — a hint towards an unsafe
workaround. Here the file must be a .npy array: its magic and header are read first, the data
type must be a plain number or boolean type (never an object array, which needs pickle), and
the size the header declares must match the file before anything else is read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from codegen.errors import KilnError

_NPY_MAGIC = b"\x93NUMPY"
_KINDS = "biuf"  # bool, signed and unsigned integers, floats


def _kind_of_file(head: bytes) -> str:
    if head.startswith(b"PK\x03\x04"):
        return "a .npz or zip archive (give each array as its own .npy file)"
    if head.startswith(b"\x80"):
        return "a Python pickle, which Kiln does not load"
    if head and all(32 <= b < 127 or b in (9, 10, 13) for b in head):
        return "a text file"
    return "not a .npy array file"


def read_npy(path: Path) -> np.ndarray:
    """The array in `path`; KilnError (naming the file and what it is instead) otherwise."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_NPY_MAGIC))
            if head != _NPY_MAGIC:
                raise KilnError(f"not a .npy array: {_kind_of_file(head + f.read(64))}", where=str(path))
            f.seek(0)
            try:
                version = np.lib.format.read_magic(f)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(f)
            except (ValueError, SyntaxError, TypeError) as err:
                raise KilnError(f"not a .npy array: its header does not parse ({err})", where=str(path)) from None
            if dtype.hasobject or dtype.kind not in _KINDS:
                raise KilnError(f"a .npy array of type {dtype}, not numbers (object arrays need pickle, "
                                "which Kiln does not load)", where=str(path))
            start = f.tell()
            f.seek(0, 2)
            have = f.tell() - start
            need = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if have != need:
                raise KilnError(f"a .npy array whose header declares {need} bytes of data "
                                f"({dtype}{list(shape)}) but the file holds {have}", where=str(path))
            f.seek(start)
            data = np.frombuffer(f.read(need), dtype=dtype)
    except OSError as err:
        raise KilnError(f"cannot read input: {err.strerror or err}", where=str(path)) from None
    return data.reshape(shape, order="F" if fortran else "C").copy()
