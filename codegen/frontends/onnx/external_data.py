"""ONNX external tensor data, read within budget: every size, offset and length a tensor
declares is checked against the tensor and against the file before a byte is read.

onnx's own loader reads from `offset` to the end of the file when `length` is absent, so a
4.8 KB model pointing at a 2 GiB sparse file beside it allocated 6.3 GB before any error. Here
each tensor reads exactly the bytes its type and dimensions need, from a regular file inside
the model's folder, and only once every check passed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import onnx
from onnx import external_data_helper, helper

from codegen.errors import KilnError

MAX_TENSOR_BYTES = 2 * 2 ** 30  # Kiln's weights are capped at 2 GiB in all (codegen.limits)
_SUB_BYTE_BITS = {getattr(onnx.TensorProto, n): 4 for n in ("INT4", "UINT4", "FLOAT4E2M1")
                  if hasattr(onnx.TensorProto, n)}


def tensor_bytes(t: onnx.TensorProto, where: str) -> int:
    """Bytes of the data that `t`'s type and dimensions call for."""
    if any(d < 0 for d in t.dims):
        raise KilnError(f"negative dimension in {list(t.dims)}", node=where)
    count = 1
    for d in t.dims:
        count *= d
    if t.data_type in _SUB_BYTE_BITS:
        return (count * _SUB_BYTE_BITS[t.data_type] + 7) // 8
    try:
        itemsize = helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    except (KeyError, ValueError, TypeError):
        raise KilnError(f"external data of data type {t.data_type}, which Kiln cannot read", node=where) from None
    if t.data_type == onnx.TensorProto.STRING:
        raise KilnError("string tensor with external data, which Kiln cannot read", node=where)
    return count * itemsize


def _entries(t: onnx.TensorProto, where: str) -> tuple[str, int, int | None]:
    info = {e.key: e.value for e in t.external_data}
    location = info.get("location", "")
    if not location:
        raise KilnError("external data without a location", node=where)
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else None
    except ValueError:
        raise KilnError(f"external data offset '{info.get('offset')}' or length '{info.get('length')}' "
                        "is not a number", node=where) from None
    if offset < 0 or (length is not None and length < 0):
        raise KilnError(f"external data offset {offset} or length {length} is negative", node=where)
    return location, offset, length


def _data_file(base: Path, location: str, where: str) -> tuple[Path, int]:
    """The data file, which must be a regular file inside the model's folder, and its size."""
    path = (base / location).resolve()
    if Path(location).is_absolute() or (path != base and base not in path.parents):
        raise KilnError(f"external data location '{location}' lies outside the model's folder", node=where)
    try:
        st = os.stat(path)
    except OSError as err:
        raise KilnError(f"cannot read external data '{location}': {err.strerror}", node=where) from None
    if not stat.S_ISREG(st.st_mode):
        raise KilnError(f"external data '{location}' is not a regular file", node=where)
    return path, st.st_size


def load_external_data(model: onnx.ModelProto, base: Path) -> None:
    """Read every external tensor's bytes into the model (in place), after checking its size,
    offset and length against its type and dimensions and against the data file."""
    base = base.resolve()
    total = 0
    for t in external_data_helper._get_all_tensors(model):
        if not external_data_helper.uses_external_data(t):
            continue
        where = t.name or "an unnamed tensor"
        need = tensor_bytes(t, where)
        location, offset, length = _entries(t, where)
        if length is not None and length != need:
            raise KilnError(f"external data length {length} bytes, but {list(t.dims)} of data type "
                            f"{t.data_type} takes {need}", node=where)
        total += need
        if need > MAX_TENSOR_BYTES or total > MAX_TENSOR_BYTES:
            raise KilnError(f"external data of {need} bytes ({total} in all so far), more than Kiln compiles "
                            f"({MAX_TENSOR_BYTES})", node=where)
        path, size = _data_file(base, location, where)
        if offset + need > size:
            raise KilnError(f"external data at bytes {offset}..{offset + need} of '{location}', which has "
                            f"only {size}", node=where)
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                raw = f.read(need)
        except OSError as err:
            raise KilnError(f"cannot read external data '{location}': {err.strerror}", node=where) from None
        if len(raw) != need:
            raise KilnError(f"external data '{location}' ended after {len(raw)} of {need} bytes", node=where)
        t.raw_data = raw
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
