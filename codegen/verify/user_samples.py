"""`kiln verify --inputs DIR_OR_NPZ`: the user's own samples instead of random ones.

Arrays are named by model input: `<input>.npy` files in a folder, or the keys of an `.npz`
(the input's name as in the manifest, or its C identifier). An array holds one sample (the
input's shape) or several stacked on a leading axis: [N, *shape], or [N, *shape[1:]] for an
input whose batch dimension is 1. A model with one input also takes a folder of `.npy` files
with other names: each is one sample, in file name order. Float data for a quantized integer
input is quantized with the input's scale and zero point (as `stm32ai validate` does); other
data must already have the input's type family (integers for integers, floats for floats).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from codegen.errors import KilnError
from codegen.ir.types import np_dtype
from codegen.lower.context import c_identifier
from codegen.verify.npy_file import read_npy


def _npz_arrays(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {key: archive[key] for key in archive.files}
    except (ValueError, OSError, zipfile.BadZipFile) as err:
        raise KilnError(f"not a readable .npz archive of arrays ({err})", where=str(path)) from None


def _find(arrays: dict[str, object], name: str):
    for key in (name, c_identifier(name)):
        if key in arrays:
            return arrays[key]
    return None


def _samples_of(arr: np.ndarray, io: dict, where: str) -> list[np.ndarray]:
    """The samples in one array for input `io` (see the module doc for the shapes accepted)."""
    shape = tuple(int(d) for d in io["shape"])
    if arr.shape == shape:
        return [arr]
    if arr.ndim == len(shape) + 1 and arr.shape[1:] == shape:
        return list(arr)
    if shape and shape[0] == 1 and arr.ndim == len(shape) and arr.shape[1:] == shape[1:]:
        return [a.reshape(shape) for a in arr]
    raise KilnError(f"input '{io['name']}' takes shape {list(shape)} (or N samples stacked: [N, ...]); "
                    f"the array has {list(arr.shape)}", where=where)


def _convert(arr: np.ndarray, io: dict, where: str) -> np.ndarray:
    """The sample in the input's dtype: float data quantized for a quantized integer input."""
    dt = np_dtype(io["dtype"])
    if arr.dtype == dt:
        return arr
    if np.issubdtype(dt, np.integer) and arr.dtype.kind == "f" and io.get("scale"):
        info = np.iinfo(dt)
        q = np.rint(arr.astype(np.float64) / float(io["scale"])) + int(io.get("zero_point", 0))
        return np.clip(q, info.min, info.max).astype(dt)
    if np.issubdtype(dt, np.integer) and arr.dtype.kind in "iu":
        info = np.iinfo(dt)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise KilnError(f"input '{io['name']}' is {io['dtype']}: the data has values outside "
                            f"{info.min}..{info.max}", where=where)
        return arr.astype(dt)
    if dt.kind == "f" and arr.dtype.kind in "fiu":
        return arr.astype(dt)
    if dt == np.bool_ and arr.dtype == np.bool_:
        return arr
    raise KilnError(f"input '{io['name']}' is {io['dtype']}; the data is {arr.dtype}", where=where)


def load_user_samples(path: Path, inputs: list[dict]) -> list[dict[str, np.ndarray]]:
    """Samples for the manifest's `inputs` from a folder of .npy files or an .npz archive."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".npy")
        by_stem = {p.stem: p for p in files}
        named = {io["name"]: _find(by_stem, io["name"]) for io in inputs}
        if len(inputs) == 1 and named[inputs[0]["name"]] is None and files:
            io = inputs[0]  # one input: every .npy file is one sample (or a stack of them)
            return [{io["name"]: _convert(s, io, str(p))} for p in files
                    for s in _samples_of(read_npy(p), io, str(p))]
        arrays = {name: (read_npy(p), str(p)) for name, p in named.items() if p is not None}
    elif path.is_file():
        arrays = {io["name"]: (a, str(path)) for io in inputs
                  if (a := _find(_npz_arrays(path), io["name"])) is not None}
    else:
        raise KilnError("no such folder or .npz file", where=str(path))
    missing = [io["name"] for io in inputs if io["name"] not in arrays]
    if missing:
        raise KilnError(f"no data for input '{missing[0]}' (a file {c_identifier(missing[0])}.npy in the folder, "
                        f"or that key in the .npz)", where=str(path))
    per_input = {io["name"]: [_convert(s, io, arrays[io["name"]][1])
                              for s in _samples_of(arrays[io["name"]][0], io, arrays[io["name"]][1])]
                 for io in inputs}
    counts = {name: len(s) for name, s in per_input.items()}
    if len(set(counts.values())) > 1:
        raise KilnError("the inputs hold different numbers of samples: "
                        + ", ".join(f"{n} {c}" for n, c in counts.items()), where=str(path))
    count = next(iter(counts.values()), 0)
    if count == 0:
        raise KilnError("no samples in the data", where=str(path))
    return [{name: s[k] for name, s in per_input.items()} for k in range(count)]
